#!/usr/bin/python3
"""How well `testdata profile`'s own measure predicts the fidelity of `like` data.

`testdata profile` ends with the builder's measure of the model it chose
(td_profile_fidelity): 256 KiB of the profile's data at seed 0 against the
sample's first region (at most 1 MiB) under lz4 -1, gzip -6, lz4 -9 and
bzip2 -9.  For each sample this script profiles it with --cli, reads that
line, then generates 4 MiB at seed 1 and measures it against the whole
sample (its first 8 MiB) under the ten codecs of like_metrics.py, as
like_variants.py does.  It prints, per sample, the estimate and the errors
at scale for the four codecs, the median and worst of the ten, and at the
end how far the estimate is from the error at scale (|estimate - error|,
in points, over samples x four codecs), for samples of at most 1 MiB and
for larger ones.

Samples: the 17 files of ../shared (realdata, corpus), the 10 hold-outs of
like_variants.py, and 11 files of kinds the project had not profiled
before (stop 54): dpkg's status file, debconf's templates, file(1)'s
magic database, libstdc++, an ISO 639-3 JSON array, a TrueType font, a
static library, a Python bytecode file, Perl's Unicode name table, X11's
Compose table and a German message catalogue.  Some of these depend on
the packages installed (dpkg status, debconf templates): this machine's.

    /usr/bin/python3 tests/bench/experiments/like_fidelity_estimate.py --cli BUILD/programs/testdata
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import like_metrics as lm  # noqa: E402
import like_variants as lv  # noqa: E402

NEW = [("dpkg-status", "/var/lib/dpkg/status"),
       ("templates.dat", "/var/cache/debconf/templates.dat"),
       ("magic.mgc", "/usr/share/misc/magic.mgc"),
       ("libstdc++.so.6", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"),
       ("iso_639-3.json", "/usr/share/iso-codes/json/iso_639-3.json"),
       ("DejaVuSans.ttf", "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"),
       ("libsodium.a", "/usr/lib/x86_64-linux-gnu/libsodium.a"),
       ("typing.pyc", "/usr/lib/python3.11/__pycache__/typing.cpython-311.pyc"),
       ("Name.pl", "/usr/share/perl/5.36/unicore/Name.pl"),
       ("Compose", "/usr/share/X11/locale/en_US.UTF-8/Compose"),
       ("coreutils.mo (de)", "/usr/share/locale/de/LC_MESSAGES/coreutils.mo")]
C4 = ["lz4-1", "gzip-6", "lz4-9", "bzip2-9"]
LINE = re.compile(rb"like data \(256 KiB at seed 0\) against the sample's first \d+ KiB: "
                  rb"lz4 -1 ([-+][\d.]+)%, gzip -6 ([-+][\d.]+)%, lz4 -9 ([-+][\d.]+)%, bzip2 -9 ([-+][\d.]+)%")


def one(args):
    cli, name, path = args
    d = open(path, "rb").read()[:8 << 20]
    with tempfile.TemporaryDirectory() as t:
        sp, pp = os.path.join(t, "s"), os.path.join(t, "p.json")
        with open(sp, "wb") as f:
            f.write(d)
        r = subprocess.run([cli, "profile", "--no-fingerprint", sp, "-o", pp], check=True,
                           capture_output=True)
        m = LINE.search(r.stderr)
        g = subprocess.run([cli, "gen", "like", "4M", "--profile", pp, "--seed", "1"], check=True,
                           capture_output=True).stdout
    est = dict(zip(C4, (float(x) for x in m.groups()))) if m else None
    rs, rg = lm.ratios(d), lm.ratios(g)
    act = {c: 100 * (rg[c] / rs[c] - 1) for c in rs}
    return name, len(d), est, act


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", required=True)
    a = ap.parse_args()
    todo = [(a.cli, n, p) for n, p in lv.samples().items()]
    todo += [(a.cli, n, p) for n, p in NEW if os.path.exists(p)]
    print("sample              bytes | estimate: lz4-1 gzip-6 lz4-9 bzip2-9 | at scale: lz4-1 gzip-6 "
          "lz4-9 bzip2-9 | ten codecs: median worst")
    diffs = {"<= 1 MiB": [], "> 1 MiB": []}
    with ProcessPoolExecutor(2) as ex:
        for name, n, est, act in ex.map(one, todo):
            a10 = [abs(v) for v in act.values()]
            e = " ".join("%+6.1f" % est[c] for c in C4) if est else "  (none)" + " " * 20
            print("%-18s %8d | %s | %s | %5.1f %5.1f" % (
                name[:18], n, e, " ".join("%+6.1f" % act[c] for c in C4), statistics.median(a10),
                max(a10)), flush=True)
            if est:
                diffs["<= 1 MiB" if n <= 1 << 20 else "> 1 MiB"] += [abs(est[c] - act[c]) for c in C4]
    for k, v in diffs.items():
        if v:
            v.sort()
            print("|estimate - error at scale|, samples %s: %d pairs, median %.1f, p90 %.1f, max %.1f points" % (
                k, len(v), statistics.median(v), v[int(0.9 * (len(v) - 1))], v[-1]))


if __name__ == "__main__":
    main()
