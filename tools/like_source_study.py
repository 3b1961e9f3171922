#!/usr/bin/python3
"""Why `like` data compresses worse than its sample under bzip2 (issue 14).

A study, not part of the build.  It LZ-parses a sample (greedy, hash
chains, matches of >= 4 bytes, extended backwards into literals), rebuilds
the sample from the parse with one ingredient changed at a time, and prints
the ratio of bzip2 -9, xz -6 and gzip -6 for each rebuild:

  rebuilt            the parse replayed as it is (must equal the sample)
  order-1 literals   literals drawn from the sample's order-1 literal
                     statistics; match sources as in the sample
  random sources     each match source drawn uniformly in the distance's
                     half-octave bucket (what gen_like.c does before its
                     junction and 4-byte snaps); literals as in the sample
  + real first bytes random sources, but of 256 candidates the first one
                     whose first 3 bytes are the sample's own there
  + phrase starts    random sources, snapped to an earlier match start of
                     the bucket as often as the sample's sources are
  + popular 4-grams  random sources, of 16 candidates the one whose 4-gram
                     count so far is nearest a target drawn from the
                     sample's distribution of that count
  + order-2 junction random sources, of 64 candidates one drawn with weight
                     P(first 3 copied bytes | the 2 bytes before) under the
                     sample's order-2 statistics (gen_like.c weighs 4
                     candidates by order 1)
  half real sources  every second match keeps its real source

Only the sample's real sources give bzip2 its ratio: the source models
above leave it 20-45% short while gzip and xz lose 0-18%.  Copying half the
sources right barely helps (a wrong copy is copied on).  The order-2
junction recovers most of it on samples of up to ~700 KB of few
repeats (cp.html, urls.10K, grammar.lsp) but runs away on long texts
(alice29, lcet10: +27-99% for every codec), because content-aware choice
feeds on its own output; gen_like.c's source choices that were tried
(phrase-start snaps, more candidates weighed over 3 bytes, with and
without the 4-byte snap) show the same trade: bzip2 closer, LZ codecs
overshooting.  The crude order-1 literal row is meaningless for samples
whose literals are mostly one byte (kennedy.xls).

Usage: tools/like_source_study.py FILE... [--seed N]
"""
import argparse
import bz2
import collections
import lzma
import math
import os
import random
import sys
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "ref"))
from ref_like import vbase, vcode, vspan  # noqa: E402  (the format's length codes, once)


def parse(data, chain=16):
    """Greedy parse: [(literal run, match length, distance)], the last with length 0."""
    heads = collections.defaultdict(list)
    seqs, i, anchor, ins, n = [], 0, 0, 0, len(data)
    while i + 4 <= n:
        while ins < i:
            heads[data[ins:ins + 4]].append(ins)
            ins += 1
        best, bd = 0, 0
        for c in reversed(heads.get(data[i:i + 4], [])[-chain:]):
            k = 0
            while i + k < n and data[c + k] == data[i + k]:
                k += 1
            if k > best:
                best, bd = k, i - c
        if best < 4:
            i += 1
            continue
        while i > anchor and i > bd and data[i - 1] == data[i - 1 - bd]:
            i -= 1
            best += 1
        seqs.append((i - anchor, best, bd))
        i += best
        anchor = i
    seqs.append((n - anchor, 0, 0))
    return seqs


def rebuild(data, seqs, rng, lit1=None, source=None):
    out, pos, st = bytearray(), 0, {}
    for k, (ll, ml, of) in enumerate(seqs):
        for j in range(ll):
            if lit1 is not None:
                c = lit1.get(out[-1] if out else 0)
                out.append(rng.choice(c) if c else data[pos + j])
            else:
                out.append(data[pos + j])
        pos += ll
        if ml:
            d = source(out, of, pos, k, st) if source else of
            for _ in range(ml):
                out.append(out[len(out) - d])
            st.setdefault("starts", []).append(len(out) - ml)
            pos += ml
    return bytes(out)


def bucket(out, of, rng):
    c = vcode(of)
    lo, hi = max(vbase(c), 1), min(vbase(c) + vspan(c), len(out) + 1)
    return (lo, hi) if hi > lo else None


def ratios(b):
    return (len(b) / len(bz2.compress(b, 9)), len(b) / len(lzma.compress(b, preset=6)),
            len(b) / len(zlib.compress(b, 6)))


def study(path, seed):
    data = open(path, "rb").read()
    seqs = parse(data)
    rng = random.Random(seed)
    lit1, pos = collections.defaultdict(list), 0
    starts, phr_n, phr_d, pop = set(), 0, 0, collections.Counter()
    cnt, done = collections.Counter(), 0
    for ll, ml, of in seqs:
        for j in range(ll):
            lit1[data[pos + j - 1] if pos + j else 0].append(data[pos + j])
        pos += ll
        if ml:
            while done + 4 <= pos:
                cnt[data[done:done + 4]] += 1
                done += 1
            if of >= 16:
                phr_d += 1
                phr_n += (pos - of) in starts
                pop[cnt[data[pos - of:pos - of + 4]].bit_length()] += 1
            starts.add(pos)
            pos += ml
    p_phrase = phr_n / phr_d if phr_d else 0.0
    pk, pw = sorted(pop), [pop[k] for k in sorted(pop)]

    def random_src(out, of, pos, k, st):
        b = bucket(out, of, rng)
        return rng.randrange(*b) if b and of >= 16 else of

    def first_bytes(out, of, pos, k, st):
        b = bucket(out, of, rng)
        if not b or of >= len(out) or of < 16:
            return of
        want, L = data[pos:pos + 3], len(out)
        cands = [rng.randrange(*b) for _ in range(256)]
        good = [x for x in cands if out[L - x:L - x + 3] == want]
        return good[0] if good else cands[0]

    def phrase(out, of, pos, k, st):
        b = bucket(out, of, rng)
        if not b or of < 16:
            return of
        L = len(out)
        if rng.random() < p_phrase:
            inb = [s for s in st.get("starts", [])[-4096:] if b[0] <= L - s < b[1]]
            if inb:
                return L - rng.choice(inb)
        return rng.randrange(*b)

    def popular(out, of, pos, k, st):
        b = bucket(out, of, rng)
        L = len(out)
        if not b or of < 16 or L < 8:
            return of
        c = st.setdefault("cnt", collections.Counter())
        while st.get("done", 0) + 4 <= L:
            x = st.get("done", 0)
            c[bytes(out[x:x + 4])] += 1
            st["done"] = x + 1
        tgt = rng.choices(pk, weights=pw)[0]
        cands = [x for x in (rng.randrange(*b) for _ in range(16)) if x >= 4] or [of]
        return min(cands, key=lambda x: abs(c[bytes(out[L - x:L - x + 4])].bit_length() - tgt))

    o2, o2n = collections.Counter(), collections.Counter()
    for i in range(2, len(data)):
        o2[data[i - 2:i + 1]] += 1
        o2n[data[i - 2:i]] += 1

    def order2(out, of, pos, k, st):
        b = bucket(out, of, rng)
        L = len(out)
        if not b or of < 16 or L < 3:
            return of
        cands = [x for x in (rng.randrange(*b) for _ in range(64)) if x >= 3] or [of]
        ws = []
        for x in cands:
            q = bytes(out[L - 2:L]) + bytes(out[L - x:L - x + 3])
            ws.append(math.exp(sum(math.log((o2[q[j:j + 3]] + 0.01) / (o2n[q[j:j + 2]] + 2.56))
                                   for j in range(3))))
        return rng.choices(cands, weights=ws)[0]

    def half(out, of, pos, k, st):
        return of if k % 2 else random_src(out, of, pos, k, st)

    rows = [("sample", data), ("rebuilt", rebuild(data, seqs, rng)),
            ("order-1 literals", rebuild(data, seqs, rng, lit1=lit1)),
            ("random sources", rebuild(data, seqs, rng, source=random_src)),
            ("+ real first bytes", rebuild(data, seqs, rng, source=first_bytes)),
            ("+ phrase starts", rebuild(data, seqs, rng, source=phrase)),
            ("+ popular 4-grams", rebuild(data, seqs, rng, source=popular)),
            ("+ order-2 junction", rebuild(data, seqs, rng, source=order2)),
            ("half real sources", rebuild(data, seqs, rng, source=half))]
    print("== %s (%d bytes, %d sequences, %.0f%% of bucket sources at an earlier match start)"
          % (path, len(data), len(seqs), 100 * p_phrase))
    print("%-20s %8s %8s %8s" % ("", "bzip2-9", "xz-6", "gzip-6"))
    base = ratios(data)
    for name, b in rows:
        r = ratios(b)
        print("%-20s " % name + " ".join("%8.3f" % x for x in r) + "   "
              + " ".join("%+6.1f%%" % (100 * (x / y - 1)) for x, y in zip(r, base)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    for f in a.files:
        study(f, a.seed)


if __name__ == "__main__":
    main()
