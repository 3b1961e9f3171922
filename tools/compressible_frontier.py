#!/usr/bin/python3
"""The codec trade-off of the compressible generator, measured (docs/format.md,
"What each codec sees").

For explicit shapes R:LIT:JBITS:SUCC (literal-run mean, how far back copies
reach, literal-chain step set; see docs/format.md), solve the match mean so
that the log-centre of gzip -6, zstd -3, lz4 -1 and xz -6 is R (as
tools/calibrate_compressible.py does), then print every codec's deviation from
R.  The rows show how far snappy and bzip2 -9 can be moved by the generator's
parameters and what that costs the main four.

Usage (from the source tree, after building `build`):
    /usr/bin/python3 tools/compressible_frontier.py [--mib 2] [R:LIT:JBITS:SUCC ...]
Without shapes it runs the set published in docs/format.md.
"""
import argparse
import importlib.util
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_spec = importlib.util.spec_from_file_location(
    "calib", os.path.join(ROOT, "tools", "calibrate_compressible.py"))
calib = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(calib)

NAMES = ["gzip-6", "zstd-3", "lz4-1", "xz-6", "gzip-1", "gzip-9", "zstd-1", "lz4-9",
         "bzip2-9", "brotli-5", "snappy"]
PUBLISHED = [
    # R = 3: the format-2 row (48, 9, 40), shorter literal runs (shorter copies:
    # snappy's 64-byte copy limit), a smaller step set (bzip2)
    "3:48:9:40", "3:24:9:40", "3:14:9:40", "3:8:9:40", "3:48:9:24", "3:24:9:24",
    "3:48:9:16",
    # R = 6 and 10
    "6:34:9:32", "6:34:9:16", "10:28:9:32", "10:14:9:32", "10:8:9:32", "10:3:9:32",
    "10:28:9:16", "10:14:9:16",
    # R = 100: the format-2 row (18, 3), short distances (jbits 0), short literal runs
    "100:18:3:256", "100:18:0:256", "100:8:0:256", "100:1:0:256", "100:2:9:256",
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--mib", type=int, default=2)
    ap.add_argument("shapes", nargs="*", default=PUBLISHED)
    a = ap.parse_args()
    gen = calib.Gen(ROOT, a.build)
    size = a.mib << 20
    print("%-5s %4s %2s %4s %7s | " % ("R", "lit", "jb", "succ", "mm16") +
          " ".join("%8s" % c for c in NAMES) + " | worst main / others")
    for shape in a.shapes:
        f = shape.split(":")
        r, ml, jb, succ = float(f[0]), int(f[1]), int(f[2]), int(f[3])
        tol = {c: 0.03 for c in calib.MAIN}
        mm16, _, _ = calib.solve(gen, "stream", r, ml, jb, succ, size, tol)
        rs = calib.measure(gen(16384, ml, mm16, jb, succ, size), NAMES, 0)
        d = {c: 100 * (v / r - 1) for c, v in rs.items()}
        wm = max(abs(d[c]) for c in calib.MAIN)
        wo = max(abs(d[c]) for c in NAMES if c not in calib.MAIN)
        print("%-5g %4d %2d %4d %7d | " % (r, ml, jb, succ, mm16) +
              " ".join("%+7.1f%%" % d[c] for c in NAMES) + " | %4.1f%% / %4.1f%%" % (wm, wo),
              flush=True)


if __name__ == "__main__":
    main()
