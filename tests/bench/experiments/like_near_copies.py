#!/usr/bin/python3
"""Experiment (docs/benchmarks.md, "like", "Experiment of 2026-12-07 (stop
52): near repeats among a context model's copies"): ratio and block errors
of `like` data over 23 samples for one testdata binary, which both profiles
and generates (a build with like_near_copies.patch, whose builder also
keeps, under TD_EXP_NEAR=LEN,DIST, the sample's repeats of LEN bytes or
more that lie less than DIST bytes back among a context model's copies;
without the variable it is main's builder).

For each sample (the 13 files of ../shared/realdata, the 5 of
../shared/corpus, 5 Debian files): `profile --no-fingerprint`, `gen like 4M
--seed 1`, the ratio error under like_metrics.py's ten codecs (median,
worst and its codec) and the ratio error of independent blocks (zstd -3 at
4 and 16 KiB, lz4 at 4 KiB).  Last line: the median of the per-sample
medians, the samples with median <= 5% and worst <= 10%, and the median of
each sample's worst block error.

usage: like_near_copies.py BINARY TAG   (work files in /tmp/near_TAG_*)
"""
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import like_metrics as lm  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
SHARED = os.path.join(ROOT, "..", "shared")
DEBIAN = ["/usr/share/common-licenses/GPL-3", "/usr/lib/python3.11/argparse.py",
          "/usr/share/doc/python3/python-policy.html", "/var/log/dpkg.log",
          "/usr/share/lintian/data/fonts.json"]


def main():
    cli, tag = sys.argv[1], sys.argv[2]
    samples = [os.path.join(SHARED, "realdata", f) for f in sorted(os.listdir(os.path.join(SHARED, "realdata")))
               if not f.endswith(".md")]
    samples += [os.path.join(SHARED, "corpus", f) for f in sorted(os.listdir(os.path.join(SHARED, "corpus")))]
    samples += [p for p in DEBIAN if os.path.exists(p)]
    meds, worst_blocks, ok = [], [], 0
    for s in samples:
        n = os.path.basename(s)
        p, g = "/tmp/near_%s_%s.json" % (tag, n), "/tmp/near_%s_%s.bin" % (tag, n)
        subprocess.run([cli, "profile", "--no-fingerprint", s, "-o", p], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        subprocess.run([cli, "gen", "like", "4M", "--profile", p, "--seed", "1", "-o", g], check=True)
        a, b = open(s, "rb").read(), open(g, "rb").read()
        ra, rb = lm.ratios(a), lm.ratios(b)
        e = {c: rb[c] / ra[c] - 1 for c in ra}
        ae = sorted(abs(x) for x in e.values())
        be = {"%s/%dK" % (c, bs >> 10): lm.block_ratio(c, b, bs) / lm.block_ratio(c, a, bs) - 1
              for c, bs in (("zstd-3", 4096), ("zstd-3", 16384), ("lz4", 4096))}
        kind = "ctx" if '"ctx":{' in open(p).read() else "lz"
        med = statistics.median(ae)
        meds.append(med)
        worst_blocks.append(max(abs(x) for x in be.values()))
        ok += med <= 0.05 and ae[-1] <= 0.10
        print("%-22s %-3s med %5.1f worst %5.1f (%s) | %s"
              % (n[:22], kind, 100 * med, 100 * ae[-1], max(e, key=lambda c: abs(e[c])),
                 " ".join("%s %+.1f" % (k, 100 * v) for k, v in be.items())), flush=True)
    print("%s: median of medians %.1f, samples meeting ratio target %d/%d, median of worst block error %.1f"
          % (tag, 100 * statistics.median(meds), ok, len(meds), 100 * statistics.median(worst_blocks)))


if __name__ == "__main__":
    main()
