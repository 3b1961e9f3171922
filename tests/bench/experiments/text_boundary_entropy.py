#!/usr/bin/env python3
"""Where generated text is less predictable than its corpus, byte by byte.

usage: text_boundary_entropy.py CORPUS GENERATED [--orders 1-8] [--max 1500000]

Prints, for each order k, the empirical conditional entropy of a byte given
the k bytes before it (bits per byte, in-sample), for the corpus and the
generated text, and splits it into positions whose context and byte stay
inside a word (no space or newline among them) and the rest (contexts that
cross a word boundary).  Both files are cut to --max bytes.  Then bzip2 -9
and xz -6 sizes of both, also with every newline made a space (is the line
layout what differs?).

A block-sorting coder (bzip2) lives on contexts of 2-6 bytes; LZ coders do
not see them.  So text that matches its corpus under gzip, zstd and xz but
not under bzip2 differs here: docs/benchmarks.md, text, 2026-12-05 stop 41.
"""
import argparse
import bz2
import collections
import lzma
import math


def split_entropy(b, k):
    """(H, H inside words, H across boundaries), each in bits per byte of b."""
    ctx = collections.Counter()
    pair = collections.Counter()
    for i in range(k, len(b)):
        c = b[i - k:i]
        ctx[c] += 1
        pair[(c, b[i])] += 1
    n = len(b) - k
    tot = {"in": 0.0, "bd": 0.0}
    for (c, x), v in pair.items():
        cls = "bd" if (b" " in c or b"\n" in c or x in (32, 10)) else "in"
        tot[cls] -= v * math.log2(v / ctx[c])
    return (tot["in"] + tot["bd"]) / n, tot["in"] / n, tot["bd"] / n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus")
    ap.add_argument("generated")
    ap.add_argument("--orders", default="1-8")
    ap.add_argument("--max", type=int, default=1500000)
    a = ap.parse_args()
    lo, hi = (int(x) for x in a.orders.split("-"))
    c = open(a.corpus, "rb").read()[:a.max]
    g = open(a.generated, "rb").read()[:a.max]
    print("order  H corpus  H gen   err   | in words: corpus  gen   | across: corpus  gen   err")
    for k in range(lo, hi + 1):
        hc, ic, bc = split_entropy(c, k)
        hg, ig, bg = split_entropy(g, k)
        print("%5d  %7.3f %7.3f %+5.1f%% |           %6.3f %6.3f |        %6.3f %6.3f %+5.1f%%"
              % (k, hc, hg, 100 * (hg / hc - 1), ic, ig, bc, bg, 100 * (bg / bc - 1)))
    for name, f in (("bzip2 -9", lambda d: bz2.compress(d, 9)),
                    ("xz -6", lambda d: lzma.compress(d, preset=6))):
        for nl in (False, True):
            x, y = (c.replace(b"\n", b" "), g.replace(b"\n", b" ")) if nl else (c, g)
            rc, rg = len(x) / len(f(x)), len(y) / len(f(y))
            print("%-8s %-22s corpus %.3f generated %.3f error %+.1f%%"
                  % (name, "(newlines as spaces)" if nl else "", rc, rg, 100 * (rg / rc - 1)))


if __name__ == "__main__":
    main()
