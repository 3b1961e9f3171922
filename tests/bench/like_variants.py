#!/usr/bin/python3
"""Ratio errors of `like` data under ten codecs, for variants of a build.

The experiments of docs/benchmarks.md ("like", notes) compare builds of
the generator, or one build under environment switches of a throwaway
patch (tests/bench/experiments/), on 27 samples: the 17 files of
../shared and 10 files of Debian packages the profiles were never tuned
on.  Profiles are made once by --profiler (the main build), so every
variant reads the same profiles; ratios of the samples are cached.

    /usr/bin/python3 tests/bench/like_variants.py --cli BUILD/programs/testdata \
        "" "LK_JW=8" "LK_C2=30,LK_WALK=64"

Each argument is one variant: comma-separated NAME=VALUE pairs put in the
generator's environment ("" for none); "{sample}" in a value becomes the
sample's path.  Prints, per sample and codec, the
signed error of generated data against the sample in %, then the medians
and how many samples have a median |error| <= 5% (and, of those, no error
but bzip2's beyond 10%) and the spread of every error (sample x codec), of
all samples and of the hold-outs; after the first variant, which samples each later
one moves (across 5%, or by 1.5 points or more).  --entropy prints the empirical conditional
entropies H0..H6 of each sample and of its generated data instead, and
--ngrams how its repetition is spread over phrases: distinct 4-grams per
byte, 8-grams seen at least 8 times, and the share of 8-gram positions taken
by the most frequent 1% of distinct 8-grams (generated data of the sample's
own size, one document when the sample is at most 1 MiB).
"""
import argparse
import collections
import json
import math
import os
import statistics
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import like_metrics as lm  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHARED = os.path.join(ROOT, '..', 'shared')
HOLDOUTS = ['/usr/share/common-licenses/GPL-3', '/usr/lib/python3.11/argparse.py', '/usr/bin/ls',
            '/usr/lib/x86_64-linux-gnu/libcrypto.so.3', '/usr/share/mime/packages/freedesktop.org.xml',
            '/usr/share/doc/python3/python-policy.html', '/usr/lib/locale/C.utf8/LC_CTYPE',
            '/usr/share/lintian/data/fonts.json', '/usr/share/doc/git/RelNotes/2.20.0.txt',
            '/var/log/dpkg.log']


def samples():
    out = {}
    for d in ('realdata', 'corpus'):
        base = os.path.join(SHARED, d)
        for f in sorted(os.listdir(base)):
            if not f.endswith('.md'):
                out[f] = os.path.join(base, f)
    for p in HOLDOUTS:
        if os.path.exists(p):
            out['H:' + os.path.basename(p)] = p
    return out


def hk(d, k):
    """Empirical entropy of a byte given the k before it, bits per byte."""
    c = collections.Counter(d[i - k:i + 1] for i in range(k, len(d)))
    cc = collections.Counter()
    for key, v in c.items():
        cc[key[:-1]] += v
    return -sum(v * math.log2(v / cc[key[:-1]]) for key, v in c.items()) / (len(d) - k)


def ngrams(d):
    """Distinct 4-grams per byte, 8-grams seen >= 8 times, top-1% 8-gram share."""
    c4 = len(set(d[i:i + 4] for i in range(len(d) - 3)))
    c8 = collections.Counter(d[i:i + 8] for i in range(len(d) - 7))
    tot = sum(c8.values())
    top = sum(v for _, v in c8.most_common(len(c8) // 100 + 1))
    return c4 / len(d), sum(v >= 8 for v in c8.values()), top / tot


def one(job):
    a, name, path, env = job
    tag = name.replace(':', '_')
    prof = os.path.join(a.work, tag + '.json')
    if not os.path.exists(prof):
        subprocess.run([a.profiler, 'profile', path, '-o', prof, '--no-fingerprint'], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    sample = open(path, 'rb').read()
    size = str(len(sample)) if a.entropy or a.ngrams else a.size
    out = os.path.join(a.work, '%s.%d.bin' % (tag, os.getpid()))
    e = dict(os.environ)
    e.update({k: v.replace('{sample}', path) for k, v in env.items()})
    subprocess.run([a.cli, 'gen', 'like', size, '--profile', prof, '--seed', str(a.seed), '-o', out,
                    '-q'], check=True, env=e)
    g = open(out, 'rb').read()
    os.remove(out)
    if a.entropy:
        return name, [hk(sample, k) for k in range(7)], [hk(g, k) for k in range(7)]
    if a.ngrams:
        return name, ngrams(sample), ngrams(g)
    cache = os.path.join(a.work, tag + '.ratios.json')
    if os.path.exists(cache):
        rs = json.load(open(cache))
    else:
        rs = lm.ratios(sample)
        json.dump(rs, open(cache, 'w'))
    rg = lm.ratios(g)
    return name, {c: rg[c] / rs[c] - 1 for c in lm.RATIO_CODECS}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--cli', required=True, help='testdata binary that generates')
    ap.add_argument('--profiler', default=os.path.join(ROOT, 'build', 'programs', 'testdata'),
                    help='testdata binary that makes the profiles (default: build/programs/testdata)')
    ap.add_argument('--size', default='4M')
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--only', help='comma-separated sample names')
    ap.add_argument('--work', default='/tmp/like_variants')
    ap.add_argument('--entropy', action='store_true',
                    help='H0..H6 of sample and generated data (of the sample\'s size)')
    ap.add_argument('--ngrams', action='store_true',
                    help='how repetition is spread over phrases, sample and generated data')
    ap.add_argument('variants', nargs='*')
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    ss = samples()
    if a.only:
        ss = {k: v for k, v in ss.items() if k in a.only.split(',')}
    first = None  # the first variant's per-sample median |error|, to compare the others with
    for v in a.variants or ['']:
        env = dict(x.split('=', 1) for x in v.split(',') if x)
        with ProcessPoolExecutor(2) as ex:
            res = list(ex.map(one, [(a, n, p, env) for n, p in ss.items()]))
        print('== variant', env)
        if a.entropy:
            print('%-14s %s' % ('', ' '.join('   H%d' % k for k in range(7))))
            for n, hs, hg in res:
                print('%-14s %s' % (n[:14], ' '.join('%5.2f' % x for x in hs)))
                print('%-14s %s' % ('  like', ' '.join('%5.2f' % x for x in hg)))
            continue
        if a.ngrams:
            print('%-14s %10s %8s %8s' % ('', '4-grams/B', '8g>=8', 'top1%'))
            for n, ns, ng in res:
                print('%-14s %10.3f %8d %8.3f' % ((n[:14],) + ns))
                print('%-14s %10.3f %8d %8.3f' % (('  like',) + ng))
            continue
        cs = lm.RATIO_CODECS
        print('%-12s' % '' + ''.join('%8s' % c[:7] for c in cs) + '   med   max')
        meds, ok = [], 0
        for n, e in res:
            ae = sorted(abs(x) for x in e.values())
            med = statistics.median(ae)
            meds.append(med)
            ok += med <= 0.05 and max(abs(x) for c, x in e.items() if c != 'bzip2-9') <= 0.10
            print('%-12s' % n[:12] + ''.join('%+8.1f' % (100 * e[c]) for c in cs)
                  + '  %5.1f %5.1f' % (100 * med, 100 * ae[-1]))
        print('%-12s' % 'median' + ''.join('%+8.1f' % (100 * statistics.median([e[c] for _, e in res]))
                                         for c in cs))
        print('%-12s' % 'med |err|' + ''.join('%8.1f' % (100 * statistics.median([abs(e[c]) for _, e in res]))
                                            for c in cs))
        print('samples with median |error| <= 5%%: %d/%d; also no error but bzip2 -9 beyond 10%%: %d'
              % (sum(m <= 0.05 for m in meds), len(meds), ok))
        for what, rows in (('all', res), ('hold-outs', [r for r in res if r[0].startswith('H:')])):
            every = sorted(abs(x) for _, e in rows for x in e.values())
            if every:
                print('%s, every |error| (sample x codec, %d): median %.1f%%, p75 %.1f%%, within 5%%: %d, '
                      'within 10%%: %d' % (what, len(every), 100 * statistics.median(every),
                                          100 * every[(3 * len(every)) // 4], sum(x <= 0.05 for x in every),
                                          sum(x <= 0.10 for x in every)))
        cur = {n: m for (n, _), m in zip(res, meds)}
        if first is None:
            first = cur
            continue
        # Which samples this variant moves, so that a count that changes by
        # one is seen to be a 0.1-point flip or a real move.
        moved = [n for n in cur if n in first and ((cur[n] <= 0.05) != (first[n] <= 0.05)
                                                   or abs(cur[n] - first[n]) >= 0.015)]
        print('against the first variant (median |error|, crossing 5%% or moving 1.5 points): %s'
              % (', '.join('%s %.2f -> %.2f' % (n, 100 * first[n], 100 * cur[n]) for n in moved)
                 or 'none'))


if __name__ == '__main__':
    main()
