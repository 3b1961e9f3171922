#!/usr/bin/python3
"""Cost of a repeated sample (docs/benchmarks.md, "Cost of a repeated
sample"): does a compressor spend less per byte on a small sample
compressed many times in a row than on as many distinct files of its kind?

bench_like.py measures a sample shorter than 1 MiB by compressing it
R = ceil(1 MiB / size) times in a row.  For each sample below, with real
files of the same kind from Debian (never used to design `like`) of about
the sample's size, this prints CPU ns per byte under the cost codecs of
issue 14 for:

  sample xR     the sample, R times in a row (bench_like.py before stop 47)
  file xR       one Debian file of the kind, R times in a row
  R files       R distinct Debian files of the kind (what a user's many
                files cost: the regime the sample stands for)
  like R        R distinct pieces of `like` data of the sample's profile
                (bench_like.py's `like` before stop 47)
  like runs     k pieces of `like` data, each R // k times in a row
                (bench_like.py's `like` since stop 47, same_regime)

and the ratios like R / R files (`like` against real files, both
distinct) and like runs / sample xR (the bench's figure now).

Usage: cost_repetition.py [--cli build/programs/testdata] [--reps 5]
"""
import argparse
import glob
import gzip
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import like_metrics as lm  # noqa: E402

SHARED = "/work/shared/realdata"
# sample, the Debian files of its kind (glob, decompress?), size window
KINDS = [
    ("xargs.1", "/usr/share/man/man1/*.1.gz", True),
    ("fields.c", "/usr/include/**/*.h", False),
    ("cp.html", "/usr/share/doc/**/*.html", False),
]


def family(pattern, unzip, lo, hi, n):
    out = []
    for p in sorted(glob.glob(pattern, recursive=True)):
        if os.path.islink(p) or not os.path.isfile(p):
            continue
        try:
            d = gzip.open(p).read() if unzip else open(p, "rb").read()
        except OSError:
            continue
        if lo <= len(d) <= hi:
            out.append(d)
        if len(out) >= n:
            break
    return out


def _ns(f, work, reps):
    """CPU ns per byte of f over the pieces of work, as bench_like.py
    measures (like_metrics.cost_ns_many)."""
    best = [float("inf"), float("inf")]
    for _ in range(reps):
        t = lm.time_pieces(f, work)
        best = [min(best[0], t[0]), min(best[1], t[1])]
    return lm.ns_per_byte(best, sum(map(len, work)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", default="build/programs/testdata")
    ap.add_argument("--reps", type=int, default=5)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp()
    for name, pattern, unzip in KINDS:
        s = open(os.path.join(SHARED, name), "rb").read()
        n = len(s)
        r = -(-(1 << 20) // n)
        fam = family(pattern, unzip, int(n * 0.8), int(n * 1.25), r)
        if len(fam) < r:
            print("%s: only %d files of its kind, skipped" % (name, len(fam)))
            continue
        prof = os.path.join(tmp, name + ".json")
        gen = os.path.join(tmp, name + ".like")
        subprocess.run([a.cli, "profile", "--no-fingerprint", os.path.join(SHARED, name), "-o", prof],
                       check=True, stdout=subprocess.DEVNULL)
        subprocess.run([a.cli, "gen", "like", str(n * r * 2), "--profile", prof, "--seed", "1",
                        "-o", gen], check=True)
        g = open(gen, "rb").read()
        pieces = [g[i * n:(i + 1) * n] for i in range(r)]
        k = min(8, max(1, r // 8))
        runs = [p for p in pieces[:k] for _ in range(r // k)]
        print("%s (%d bytes, R = %d; %d Debian files of %d..%d bytes from %s; like k = %d)"
              % (name, n, r, len(fam), min(map(len, fam)), max(map(len, fam)), pattern, k))
        print("%-9s %9s %9s %9s %9s %9s | %9s %9s %9s" % (
            "ns/byte", "sample xR", "file xR", "R files", "like R", "like runs",
            "files/fxR", "likeR/fil", "runs/smp"))
        for c in lm.COST_CODECS:
            f = lm.CODECS[c]
            v = [_ns(f, w, a.reps) for w in ([s] * r, [fam[0]] * r, fam, pieces, runs)]
            print("%-9s %9.2f %9.2f %9.2f %9.2f %9.2f | %8.2fx %8.2fx %8.2fx" % (
                c, *v, v[2] / v[1], v[3] / v[2], v[4] / v[0]))
        print()


if __name__ == "__main__":
    main()
