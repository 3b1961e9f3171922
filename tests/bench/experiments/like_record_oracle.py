#!/usr/bin/python3
"""Oracle experiment (docs/benchmarks.md, "Experiment of 2026-12-06 (stop
49)"): would a model of records, each the one before with some bytes
changed, bring `like` data of record-structured samples closer?

Stop 47's oracle (like_stride_oracle.py) drew every byte from a context
that held the byte one record back, and broke the long exact repeats that
give such data its ratio.  Here a byte is a copy of the byte one record
back (stride S) unless a draw says it changes; the draw's probability is
counted per (phase = position mod S, whether the byte before was a copy)
and, with --no-phase, per the second alone; a changed byte is drawn from
(phase, the byte one record back) -> (the byte one record back) -> (last
byte) -> order 0 (backing off while a context was seen fewer than twice).
The first S bytes are drawn from the order-1 table.  Full (unpruned)
tables: an upper bound for such a model, no budget, no permutation.

Prints the ratio of the sample and of the output (the sample's length,
seed 1) under like_metrics.py's ten codecs, and the 32-byte windows of the output (every 8th) found in
the sample that are not one repeated byte.

usage: like_record_oracle.py [--no-phase] SAMPLE [STRIDE]   (first MiB)
"""
import collections
import os
import random
import sys

import numpy

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import like_metrics as lm  # noqa: E402


def draw(rng, tabs, cache, keys):
    for c in keys:
        t = tabs.get(c)
        if t and sum(t.values()) >= 2:
            break
    k = cache.get(c)
    if k is None:
        k = cache[c] = (list(t.keys()), list(t.values()))
    return rng.choices(k[0], k[1])[0]


def main():
    args = [a for a in sys.argv[1:] if a != "--no-phase"]
    phased = "--no-phase" not in sys.argv
    data = open(args[0], "rb").read()[:1 << 20]
    n = len(data)
    v = numpy.frombuffer(data, dtype=numpy.uint8)
    if len(args) > 1:
        S = int(args[1])
    else:
        S = max(range(1, min(4097, n)), key=lambda d: int((v[d:] == v[:-d]).sum()))
    same = int((v[S:] == v[:-S]).sum())
    print("stride %d: %.1f%% of bytes equal the byte %d before; %s" %
          (S, 100 * same / (n - S), S, "phase counted" if phased else "no phase"))

    def ph(p):
        return p % S if phased else 0

    eq = collections.defaultdict(lambda: [0, 0])  # (phase, prev copied) -> [changed, copied]
    vals = collections.defaultdict(collections.Counter)
    for p in range(n):
        if p < S:
            vals[(None, data[p - 1] if p else -1)][data[p]] += 1
            vals[()][data[p]] += 1
            continue
        prev = p > S and data[p - 1] == data[p - 1 - S]
        e = data[p] == data[p - S]
        eq[(ph(p), prev)][e] += 1
        if not e:
            b = data[p - S]
            for c in (("p", ph(p), b), ("b", b), (None, data[p - 1]), ()):
                vals[c][data[p]] += 1
    rng = random.Random(1)
    out = bytearray()
    cache = {}
    prev = False
    for p in range(n):
        if p < S:
            out.append(draw(rng, vals, cache, ((None, out[p - 1] if p else -1), ())))
            continue
        ch, cp = eq.get((ph(p), prev), (1, 0))
        if rng.random() * (ch + cp) < cp:
            out.append(out[p - S])
            prev = True
            continue
        b = out[p - S]
        x = draw(rng, vals, cache, (("p", ph(p), b), ("b", b), (None, out[p - 1]), ()))
        out.append(x)
        prev = x == b
    out = bytes(out)
    a, g = lm.ratios(data), lm.ratios(out)
    errs = []
    for k in a:
        e = 100 * (g[k] / a[k] - 1)
        errs.append(abs(e))
        print("%-8s sample %7.3f  oracle %7.3f  error %+6.1f%%" % (k, a[k], g[k], e))
    errs.sort()
    print("median |error| %.1f%%, worst %.1f%%" % (errs[len(errs) // 2], errs[-1]))
    w = set(data[i:i + 32] for i in range(n - 32))
    sh = sum(1 for i in range(0, n - 32, 8) if out[i:i + 32] in w and len(set(out[i:i + 32])) > 1)
    print("32-byte windows of the output (every 8th) found in the sample, not one byte:", sh)


if __name__ == "__main__":
    main()
