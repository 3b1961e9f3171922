#!/usr/bin/python3
"""Experiment (docs/benchmarks.md, "like", "Experiment of 2026-12-07 (stop
52): kennedy.xls's counters"): how much of a record-structured sample's
ratio comes from counters, bytes that are the byte one record back plus
one?

Finds the stride S (1 .. 4096) at which most bytes equal the byte S before
(or takes it from the command line), counts the bytes by their difference
from the byte S back (0: a copy, +1, -1, +2, other), and compresses the
sample as it is and with every +1 byte replaced by a random byte (seed 1),
under gzip -6, zstd -3, zstd -19, lz4 -1, xz -6 and bzip2 -9.  If the
second set of ratios falls to what `like` data of the sample reaches, the
counters are the structure its profile misses.

usage: like_counters.py SAMPLE [STRIDE]   (first MiB of SAMPLE)
"""
import os
import random
import sys

import numpy

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import like_metrics as lm  # noqa: E402

CODECS = ["gzip-6", "zstd-3", "zstd-19", "lz4-1", "xz-6", "bzip2-9"]


def main():
    d = open(sys.argv[1], "rb").read()[:1 << 20]
    v = numpy.frombuffer(d, dtype=numpy.uint8).astype(numpy.int16)
    if len(sys.argv) > 2:
        S = int(sys.argv[2])
    else:
        S = max(range(1, min(4097, len(d))), key=lambda s: int((v[s:] == v[:-s]).sum()))
    diff = (v[S:] - v[:-S]) % 256
    n = len(diff)
    cnt = numpy.bincount(diff, minlength=256)
    print("stride %d: copies %.1f%%, +1 %.1f%%, -1 %.1f%%, +2 %.1f%%, other %.1f%%"
          % (S, 100 * cnt[0] / n, 100 * cnt[1] / n, 100 * cnt[255] / n, 100 * cnt[2] / n,
             100 * (1 - (cnt[0] + cnt[1] + cnt[255] + cnt[2]) / n)))
    m = bytearray(d)
    r = random.Random(1)
    for i in numpy.nonzero(diff == 1)[0] + S:
        m[i] = r.randrange(256)
    m = bytes(m)
    for k in CODECS:
        print("%-8s sample %7.3f   +1 bytes random %7.3f" % (k, lm.ratio(k, d), lm.ratio(k, m)))


if __name__ == "__main__":
    main()
