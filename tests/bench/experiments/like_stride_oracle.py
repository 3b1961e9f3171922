#!/usr/bin/python3
"""Oracle experiment (docs/benchmarks.md, "Experiment of 2026-12-06 (stop
47)"): would a context of the byte one record back bring `like` data of
record-structured samples (kennedy.xls: records of 13 bytes) closer?

Finds the stride S (1 .. 4096) at which most bytes equal the byte S
before, counts full (unpruned) tables of the sample for the contexts
(byte S back, last byte, byte before it) -> (byte S back, last byte) ->
(last byte) -> order 0, draws the sample's length of bytes from them
(backing off while a context was seen fewer than twice; seed 1), and
prints the ratio of both under gzip -6, zstd -3/-19, lz4 -1/-9, xz -6,
bzip2 -9, and the 32-byte windows of the output (every 8th) found in the
sample.  An upper bound for such a model: no budget, no permutation.

usage: like_stride_oracle.py SAMPLE [STRIDE]   (first MiB of SAMPLE)
"""
import bz2
import collections
import lzma
import random
import sys
import zlib

import lz4.block
import numpy
import zstandard

from like_record_oracle import draw  # the same backing-off draw


def sizes(b):
    return {"gzip-6": len(zlib.compress(b, 6)),
            "zstd-3": len(zstandard.ZstdCompressor(level=3).compress(b)),
            "zstd-19": len(zstandard.ZstdCompressor(level=19).compress(b)),
            "lz4-1": len(lz4.block.compress(b)),
            "lz4-9": len(lz4.block.compress(b, mode="high_compression", compression=9)),
            "xz-6": len(lzma.compress(b, preset=6)),
            "bzip2-9": len(bz2.compress(b, 9))}


def main():
    data = open(sys.argv[1], "rb").read()[:1 << 20]
    n = len(data)
    v = numpy.frombuffer(data, dtype=numpy.uint8)
    if len(sys.argv) > 2:
        S = int(sys.argv[2])
    else:
        S = max(range(1, min(4097, n)), key=lambda d: int((v[d:] == v[:-d]).sum()))
    same = int((v[S:] == v[:-S]).sum())
    print("stride %d: %.1f%% of bytes equal the byte %d before" % (S, 100 * same / (n - S), S))

    def ctxs(buf, p):
        s, a, b = (buf[p - S] if p >= S else -1), (buf[p - 1] if p else -1), (buf[p - 2] if p > 1 else -1)
        return [(s, a, b), (s, a), (None, a), ()]

    tabs = collections.defaultdict(collections.Counter)
    for p in range(n):
        for c in ctxs(data, p):
            tabs[c][data[p]] += 1
    rng = random.Random(1)
    out = bytearray()
    cache = {}
    for p in range(n):
        out.append(draw(rng, tabs, cache, ctxs(out, p)))
    out = bytes(out)
    a, g = sizes(data), sizes(out)
    for k in a:
        print("%-8s sample %7.3f  oracle %7.3f  error %+6.1f%%" % (k, n / a[k], n / g[k], 100 * (a[k] / g[k] - 1)))
    w = set(data[i:i + 32] for i in range(n - 32))
    sh = sum(1 for i in range(0, n - 32, 8) if out[i:i + 32] in w and len(set(out[i:i + 32])) > 1)
    print("32-byte windows of the output (every 8th) found in the sample, not one byte:", sh)


if __name__ == "__main__":
    main()
