#!/usr/bin/python3
"""Would a byte context model give `like` data bzip2's ratio?  (experiment)

`like` data compresses 25-65% less than its sample under bzip2 -9 while the
LZ codecs match (docs/benchmarks.md, "like", notes).  This script tests two
generators in Python, outside the library, against each sample under the
ten codecs of tests/bench/like_variants.py:

  --pure:   bytes drawn from an order-K Markov model of the sample itself
            (the longest context of at most K bytes seen at least twice,
            backing off to shorter ones), optionally pruned as a profile
            would have to be: the most frequent contexts of order >= 2 that
            fit BUDGET bytes (a context costs its length + 1 + 3 per
            entry), each keeping its E most frequent next bytes.
  --mixed:  the Markov model of --pure, plus copies of the sample's long
            repeats: a greedy parse of the sample (most recent earlier
            occurrence of each 4 bytes) lists its matches of at least
            --long bytes; generating, each byte drawn from the model is
            instead, with the rate of such matches per byte of the sample
            outside them, a copy of a (length, distance) pair drawn from
            that list (when the distance reaches back into the output).
  --calibrate: as a builder would: of every --set with every --rates
            value (--mixed's copies; 0: none), the setting whose data is
            closest to the sample under gzip -6 and bzip2 -9 alone (the
            least of the larger |error|), then that setting's ten errors.
  --hybrid: the library's own generator (tests/ref/ref_like.py, the Python
            reference, edited at load time) with its fresh literals drawn
            from that Markov model instead of the profile's order-1 groups:
            the LZ skeleton kept, the literals given context.

Both read the sample when generating (an oracle: what a profile could hold
at best).  Prints, per sample and setting, the signed ratio error of
generated data of the sample's size (at most --cap bytes) in %, the worst,
and how many 16/32/64-byte windows of it occur in the sample (not counting
windows of one repeated byte; issue 14 allows none of 32).

  /usr/bin/python3 tests/bench/experiments/like_markov_oracle.py --pure \\
      --set 4:0:256 --set 4:60000:8 ../shared/corpus/alice29.txt
  /usr/bin/python3 tests/bench/experiments/like_markov_oracle.py --hybrid \\
      --set 4:0:256 ../shared/corpus/alice29.txt

A --set is K:BUDGET:E (BUDGET 0: unpruned).  --hybrid needs the CLI
(--cli, default build/programs/testdata) to profile the sample.
"""
import argparse
import bz2
import collections
import importlib.util
import lzma
import math
import os
import random
import subprocess
import sys
import tempfile
import zlib

import brotli
import lz4.frame
import snappy
import zstandard

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
NAMES = 'gzip-1 gzip-6 zstd-3 zstd-19 lz4-1 lz4-9 xz-6 bzip2-9 brotli-5 snappy'.split()


def ratios(b):
    n = len(b)
    z = [len(zlib.compress(b, 1)), len(zlib.compress(b, 6)),
         len(zstandard.ZstdCompressor(level=3).compress(b)),
         len(zstandard.ZstdCompressor(level=19).compress(b)),
         len(lz4.frame.compress(b)), len(lz4.frame.compress(b, compression_level=9)),
         len(lzma.compress(b, preset=6)), len(bz2.compress(b, 9)),
         len(brotli.compress(b, quality=5)), len(snappy.compress(b))]
    return [n / x for x in z]


class Markov:
    """Order-K byte model of src, pruned to budget bytes (0: not), E
    entries per context; draw() takes the longest context of the output's
    last bytes seen at least twice."""

    def __init__(self, src, K, budget, E, seed=1, run=0, bits=0.0):
        t = {}
        for i in range(len(src)):
            for k in range(K + 1):
                if i >= k:
                    t.setdefault(bytes(src[i - k:i]), collections.Counter())[src[i]] += 1
        if budget:
            keep, cost = {}, 0
            for c, cnt in sorted(t.items(), key=lambda kv: (len(kv[0]) > 1, -sum(kv[1].values()))):
                ents = cnt.most_common(E)
                cst = len(c) + 1 + 3 * len(ents)
                if len(c) > 1 and cost + cst > budget:
                    continue
                keep[c] = collections.Counter(dict(ents))
                cost += cst
            t = keep
        self.t, self.K, self.run, self.deep = t, K, run, 0
        self.bits, self.hist = bits, collections.deque([8.0] * 16, maxlen=16)
        self.ent = {}
        self.cache = {}
        self.rnd = random.Random(seed)

    def draw(self, out, pos):
        top = min(self.K, pos)
        if self.run and self.deep >= self.run:  # a long run of full-order draws: back off once
            top = min(top, 2)
            self.deep = 0
        if self.bits and sum(self.hist) < self.bits:  # too little entropy lately: order 1
            top = min(top, 1)
        for k in range(top, -1, -1):
            ctx = bytes(out[pos - k:pos])
            c = self.t.get(ctx)
            if c and sum(c.values()) >= 2:
                break
        self.deep = self.deep + 1 if k == self.K else 0
        if ctx not in self.cache:
            self.cache[ctx] = (list(c.keys()), list(c.values()))
            tot = sum(c.values())
            self.ent[ctx] = -sum(x / tot * math.log2(x / tot) for x in c.values())
        self.hist.append(self.ent[ctx])
        v, w = self.cache[ctx]
        return self.rnd.choices(v, w)[0]


def shared(src, g):
    out = []
    for L in (16, 32, 64):
        s = set(src[i:i + L] for i in range(len(src) - L + 1))
        out.append(sum(1 for i in range(len(g) - L + 1)
                       if g[i:i + L] in s and g[i:i + L] != g[i:i + 1] * L))
    return out


def long_matches(src, least):
    last, out, covered, i, n = {}, [], 0, 0, len(src)
    while i + 4 <= n:
        key = src[i:i + 4]
        j = last.get(key)
        last[key] = i
        m = 0
        if j is not None:
            while i + m + 64 <= n and src[i + m:i + m + 64] == src[j + m:j + m + 64]:
                m += 64
            while i + m < n and src[i + m] == src[j + m]:
                m += 1
        if m >= least:
            out.append((m, i - j))
            for k in range(i + 1, min(i + m, n - 3)):
                last[src[k:k + 4]] = k
            covered += m
            i += m
        else:
            i += 1
    return out, len(out) / max(1, n - covered)


def mixed(src, m, least, scale, seed=2):
    reps, rate = long_matches(src, least)
    rate *= scale
    rnd, gen = random.Random(seed), bytearray()
    while len(gen) < len(src):
        if reps and rnd.random() < rate:
            ml, d = reps[rnd.randrange(len(reps))]
            if d <= len(gen):
                for _ in range(min(ml, len(src) - len(gen))):
                    gen.append(gen[-d])
                continue
        gen.append(m.draw(gen, len(gen)))
    return bytes(gen)


def hybrid_module():
    """tests/ref/ref_like.py with its fresh literals drawn from MK (a Markov,
    set by the caller) where MK is set."""
    path = os.path.join(ROOT, 'tests', 'ref', 'ref_like.py')
    src = open(path).read()
    old = """                else:
                    g = M["lit"][bn]["map"][out[pos - 1] if pos else 0]"""
    new = """                elif MK is not None:
                    byte = MK.draw(out, pos)
                    if first and byte == out[pos - lastd]:
                        byte = MK.draw(out, pos)
                    if first and byte == out[pos - lastd]:
                        byte ^= 1
                else:
                    g = M["lit"][bn]["map"][out[pos - 1] if pos else 0]"""
    if old not in src:
        sys.exit('tests/ref/ref_like.py changed: update hybrid_module()')
    spec = importlib.util.spec_from_loader('ref_like_hybrid', loader=None)
    mod = importlib.util.module_from_spec(spec)
    mod.MK = None
    exec(compile(src.replace(old, new, 1), path, 'exec'), mod.__dict__)
    return mod


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument('--pure', action='store_true')
    g.add_argument('--hybrid', action='store_true')
    g.add_argument('--mixed', action='store_true')
    g.add_argument('--calibrate', action='store_true')
    ap.add_argument('--rates', default='0,0.5,1', help='--calibrate: copy rates tried')
    ap.add_argument('--long', type=int, default=16, help='--mixed: least length of a copied repeat')
    ap.add_argument('--rate', type=float, default=1.0, help='--mixed: scale of the copy rate')
    ap.add_argument('--set', action='append', default=[], help='K:BUDGET:E (repeatable)')
    ap.add_argument('--run', type=int, default=0,
                    help='after this many draws in a row from full-order contexts, one from order 2 (0: never)')
    ap.add_argument('--bits', type=float, default=0.0,
                    help='draw from order 1 while the last 16 draws had less entropy than this (0: never)')
    ap.add_argument('--cap', type=int, default=300000, help='bytes of each sample used')
    ap.add_argument('--cli', default=os.path.join(ROOT, 'build', 'programs', 'testdata'))
    ap.add_argument('samples', nargs='+')
    a = ap.parse_args()
    sets = [tuple(int(x) for x in s.split(':')) for s in (a.set or ['4:0:256'])]
    ref = hybrid_module() if a.hybrid else None
    print('sample / setting      ' + ' '.join(f'{n:>8s}' for n in NAMES) + '   worst  shared 16/32/64')
    for path in a.samples:
        src = open(path, 'rb').read()[:a.cap]
        rs = ratios(src)
        print(f'{os.path.basename(path)} ({len(src)} bytes)  ' + ' '.join(f'{r:8.2f}' for r in rs),
              flush=True)
        prof = None
        if a.hybrid:
            fd, prof = tempfile.mkstemp(suffix='.json')
            os.close(fd)
            with tempfile.NamedTemporaryFile() as f:
                f.write(src)
                f.flush()
                subprocess.run([a.cli, 'profile', '--no-fingerprint', f.name, '-o', prof],
                               check=True, stdout=subprocess.DEVNULL)
        if a.calibrate:
            best = None
            for K, budget, E in sets:
                for rate in (float(x) for x in a.rates.split(',')):
                    m = Markov(src, K, budget, E, run=a.run, bits=a.bits)
                    gen = mixed(src, m, a.long, rate)
                    n = len(gen)
                    e6 = 100 * (n / len(zlib.compress(gen, 6)) / rs[1] - 1)
                    eb = 100 * (n / len(bz2.compress(gen, 9)) / rs[7] - 1)
                    if best is None or max(abs(e6), abs(eb)) < best[0]:
                        best = (max(abs(e6), abs(eb)), K, budget, E, rate, gen)
            _, K, budget, E, rate, gen = best
            err = [100 * (x / y - 1) for x, y in zip(ratios(gen), rs)]
            print(f'  K={K} budget={budget} E={E} rate={rate} ' + ' '.join(f'{e:+8.1f}' for e in err) +
                  f'  {max(abs(e) for e in err):6.1f}  ' + ' '.join(map(str, shared(src, gen))),
                  flush=True)
            continue
        for K, budget, E in [(0, 0, 0)] * bool(a.hybrid) + sets:
            if a.pure:
                m = Markov(src, K, budget, E, run=a.run, bits=a.bits)
                gen = bytearray()
                for i in range(len(src)):
                    gen.append(m.draw(gen, i))
                gen = bytes(gen)
            elif a.mixed:
                gen = mixed(src, Markov(src, K, budget, E, run=a.run, bits=a.bits), a.long, a.rate)
            else:
                ref.MK = Markov(src, K, budget, E) if K else None
                gen = ref.Like(open(prof, 'rb').read(), 1).range(0, len(src))
            err = [100 * (x / y - 1) for x, y in zip(ratios(gen), rs)]
            what = f'K={K} budget={budget} E={E}' if K else 'library (no model)'
            print(f'  {what:20s} ' + ' '.join(f'{e:+8.1f}' for e in err) +
                  f'  {max(abs(e) for e in err):6.1f}  ' + ' '.join(map(str, shared(src, gen))),
                  flush=True)
        if prof:
            os.unlink(prof)


if __name__ == '__main__':
    main()
