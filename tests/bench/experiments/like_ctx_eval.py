#!/usr/bin/python3
"""Measure like_ctx_proto.c's data against each sample, as bench_like.py does (experiment).

For every sample of bench_like.py (../shared/realdata, ../shared/corpus and
their concatenation; --holdout: its hold-outs), runs the prototype (--proto,
built from tests/bench/experiments/like_ctx_proto.c) to write --mib MiB, and
prints per sample: the signed ratio error under the ten codecs in %, the
median and worst |error|; the same two for format 7 from
tests/bench/results_like.tsv where the sample is there; the errors of the
independent-block ratios (zstd -3 and lz4 at 4, 16 and 128 KiB, worst) and
of the per-64 KiB-chunk zstd -3 quantiles (p10/p50/p90, worst); and the
32-byte windows shared with the sample that are not one repeated byte.
Then the prototype's own line (its choice and its speeds).  With --fmt7
CLI, format 7's figures come from that testdata binary instead (`profile`,
then `gen like` of as many MiB at seed 1, measured the same way): needed
for samples not in results_like.tsv, such as the hold-outs.  Last, what a
builder choosing per sample between the two would get: the one with the
lesser max(|gzip -6 error|, |bzip2 -9 error|).

  cc -O2 -march=native -o /tmp/ctxp tests/bench/experiments/like_ctx_proto.c -lz -lbz2 -llz4 -llzma -lzstd -lm
  /usr/bin/python3 tests/bench/experiments/like_ctx_eval.py --proto /tmp/ctxp [--only a,b] [--jobs 2] \
      [--holdout --fmt7 build/programs/testdata] [-- PROTOTYPE OPTIONS]
"""
import argparse
import concurrent.futures
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import bench_like  # noqa: E402
import like_metrics as lm  # noqa: E402


def format7():
    out = {}
    with open(os.path.join(os.path.dirname(HERE), 'results_like.tsv')) as f:
        for line in f:
            name, what, codec, s, g = line.rstrip('\n').split('\t')
            if what == 'ratio':
                out.setdefault(name, []).append(100 * (float(g) / float(s) - 1))
    return out


def one(job):
    name, data, proto, mib, extra, cli = job
    f7 = None
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, 'sample')
        with open(src, 'wb') as f:
            f.write(data)
        out = os.path.join(tmp, 'out')
        p = subprocess.run([proto, '--mib', str(mib)] + extra + [src, out], capture_output=True, text=True)
        if p.returncode:
            return name, None, p.stderr, None
        gen = open(out, 'rb').read()
        if cli:
            prof = os.path.join(tmp, 'p.json')
            subprocess.run([cli, 'profile', '--no-fingerprint', src, '-o', prof], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            g7 = subprocess.run([cli, 'gen', 'like', f'{mib}M', '--profile', prof, '--seed', '1'],
                                check=True, stdout=subprocess.PIPE).stdout
    rs, rg = lm.ratios(data), lm.ratios(gen)
    err = [100 * (rg[c] / rs[c] - 1) for c in lm.RATIO_CODECS]
    if cli:
        r7 = lm.ratios(g7)
        f7 = [100 * (r7[c] / rs[c] - 1) for c in lm.RATIO_CODECS]
    blk = []
    for codec in ('zstd-3', 'lz4'):
        for bs in (4096, 16384, 131072):
            blk.append(100 * (lm.block_ratio(codec, gen, bs) / lm.block_ratio(codec, data, bs) - 1))
    qs, qg = lm.chunk_quantiles(data), lm.chunk_quantiles(gen)
    het = [100 * (b / a - 1) for a, b in zip(qs, qg)]
    sh = lm.shared_runs(data, gen[:8 << 20])[1]
    return name, (err, blk, het, sh), p.stderr.strip().splitlines()[-3:], f7


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--proto', default='/tmp/ctxp')
    ap.add_argument('--mib', type=int, default=32)
    ap.add_argument('--only')
    ap.add_argument('--holdout', action='store_true')
    ap.add_argument('--jobs', type=int, default=2)
    ap.add_argument('--fmt7', metavar='CLI', help='testdata binary for format 7 figures')
    ap.add_argument('extra', nargs='*', help='more options for the prototype (after --)')
    a = ap.parse_args()
    f7 = format7()
    with tempfile.TemporaryDirectory() as tmp:
        ss = bench_like.samples(a.holdout, tmp)
    if a.only:
        keep = a.only.split(',')
        ss = [s for s in ss if s[0] in keep]
    print('sample            ' + ' '.join(f'{c:>8s}' for c in lm.RATIO_CODECS) +
          '   med worst | fmt7 med worst | blocks worst | p10/50/90 worst | shared32')
    meds, worsts, both = [], [], []
    with concurrent.futures.ProcessPoolExecutor(a.jobs) as ex:
        for name, r, log, e7 in ex.map(one, [(n, d, a.proto, a.mib, a.extra, a.fmt7) for n, d in ss]):
            if r is None:
                print(f'{name}: prototype failed: {log}')
                continue
            err, blk, het, sh = r
            ab = [abs(e) for e in err]
            med, worst = statistics.median(ab), max(ab)
            meds.append(med)
            worsts.append(worst)
            o = e7 or f7.get(name)
            if o:
                sel = lambda e: max(abs(e[1]), abs(e[7]))  # gzip-6, bzip2-9
                both.append(max(abs(x) for x in (err if sel(err) < sel(o) else o)))
                both[-1] = (statistics.median(abs(x) for x in (err if sel(err) < sel(o) else o)), both[-1],
                            'ctx' if sel(err) < sel(o) else 'fmt7')
            f7s = (f'{statistics.median([abs(e) for e in o]):5.1f} {max(abs(e) for e in o):5.1f}'
                   if o else '    -     -')
            print(f'{name[:17]:17s} ' + ' '.join(f'{e:+8.1f}' for e in err) +
                  f' {med:5.1f} {worst:5.1f} |     {f7s} |   {max(abs(x) for x in blk):6.1f}     |'
                  f'   {max(abs(x) for x in het):6.1f}        | {sh}', flush=True)
            for line in log:
                print('    ' + line)
    n5 = sum(1 for m, w in zip(meds, worsts) if m <= 5 and w <= 10)
    print(f'samples with median <= 5% and worst <= 10%: {n5} of {len(meds)}')
    if both:
        nb = sum(1 for m, w, _ in both if m <= 5 and w <= 10)
        print(f'choosing per sample by gzip -6 and bzip2 -9: {nb} of {len(both)} '
              f'(context model chosen for {sum(1 for b in both if b[2] == "ctx")}); median of the worst '
              f'errors {statistics.median(b[1] for b in both):.1f}%')


if __name__ == '__main__':
    main()
