#!/usr/bin/python3
"""Experiment (docs/benchmarks.md, text notes, 2026-12-04): would `text` keep
its ratios if, like `like` in format 6, one base block of generated text were
reused for every block with its words permuted?

Generates N MiB of `text` (built-in model, seed 3), takes its first MiB as the
base, and makes N MiB from it, each MiB with its own permutation of the
words among words of the same length and frequency band (log2 of the rank
in the base); "rare" also spells the words seen once in the base with a
per-block permutation of the small letters (new words keep appearing).
Prints the ratio error against ../shared/corpus under ten codecs and the
distinct words in the first 1 and 8 MiB.  A post-transform in Python: it
measures the data, not the speed.

    /usr/bin/python3 tests/bench/experiments/text_word_permutation.py [N] [--cli BUILD/programs/testdata]
"""
import collections
import os
import random
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import like_metrics as lm  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
T = sys.argv[sys.argv.index('--cli') + 1] if '--cli' in sys.argv else os.path.join(ROOT, 'build', 'programs', 'testdata')
MB = 1 << 20
n = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 8
g = subprocess.run([T, 'gen', 'text', '%dM' % n, '--seed', '3'], capture_output=True, check=True).stdout
corpus = b''.join(open(os.path.join(ROOT, '..', 'shared', 'corpus', f), 'rb').read() for f in ('alice29.txt', 'asyoulik.txt', 'lcet10.txt', 'plrabn12.txt'))
WORD = re.compile(rb'[A-Za-z]+')
def perm_text(base, rng, mode):
    toks = WORD.split(base); words = WORD.findall(base)
    cnt = collections.Counter(w.lower() for w in words)
    rank = {w: i for i, (w, _) in enumerate(cnt.most_common())}
    classes = collections.defaultdict(list)
    for w in cnt:
        band = max(0, rank[w].bit_length() - 2)
        classes[(len(w), band)].append(w)
    out = []
    for blk in range(n):
        m = {}
        for k, ws in classes.items():
            s = ws[:]; rng.shuffle(s); m.update(zip(ws, s))
        letters = list(b'abcdefghijklmnopqrstuvwxyz'); rng.shuffle(letters); lt = bytes.maketrans(b'abcdefghijklmnopqrstuvwxyz', bytes(letters))
        res = []
        for i, w in enumerate(words):
            lw = w.lower(); nw = m[lw]
            if mode == 'rare' and cnt[lw] == 1:
                nw = lw.translate(lt)
            if w[:1].isupper(): nw = nw[:1].upper() + nw[1:]
            if w.isupper() and len(w) > 1: nw = nw.upper()
            res.append(toks[i]); res.append(nw)
        res.append(toks[-1])
        out.append(b''.join(res))
    return b''.join(out)
def heaps(d):
    seen = set(); r = []
    for lim in (1, 8):
        for w in WORD.findall(d[:lim * MB] if lim == 1 else d[MB:lim * MB]): seen.add(w.lower())
        r.append(len(seen))
    return r
base = g[:MB]
cut = base.rfind(b' ')
base = base[:cut + 1]
rs = lm.ratios(corpus)
rows = {'text': g}
for mode in ('band', 'rare'):
    rows['perm-' + mode] = perm_text(base, random.Random(5), mode)[:len(g)]
print('%-10s' % '' + ''.join('%8s' % c[:7] for c in lm.RATIO_CODECS) + '  words 1M/8M')
for k, d in rows.items():
    r = lm.ratios(d)
    print('%-10s' % k + ''.join('%+8.1f' % (100 * (r[c] / rs[c] - 1)) for c in lm.RATIO_CODECS), heaps(d))
