#!/usr/bin/python3
"""Which of the generator's copies zstd -3 codes as a new offset, and why.

Joins the generator's own copies (LK_TRACE of like_rep_structure.patch)
with zstd -3's parse of the same bytes (ZS_DUMP of zstd_sequences.c) and
counts zstd's sequences by (zstd: repeat or new offset; the generator's
copy at that position: repeat or new distance; same distance or another;
at the copy's start or inside it).  Then, for the sample and for the
generated data, the most used offsets and how long zstd keeps one offset.

    LK_TRACE=gen.txt testdata gen like 1M --profile k.json --seed 1 -o like.bin
    ZS_DUMP=zs.txt ./zstd_sequences like.bin; ZS_DUMP=zs_s.txt ./zstd_sequences SAMPLE
    like_trace_vs_zstd.py gen.txt zs.txt zs_s.txt DOC_BYTES
"""
import bisect
import collections
import sys


def rows(path):
    return [tuple(map(int, line.split())) for line in open(path)]


def offsets(name, z):
    n = len(z)
    c = collections.Counter((r != 0, o) for p, m, o, r, ll in z)
    print(f"{name}: {n} sequences; top (repeat?, offset):",
          [(k, round(100 * v / n, 1)) for k, v in c.most_common(6)])
    runs, cur, k = [], None, 0
    for p, m, o, r, ll in z:
        if o == cur:
            k += 1
        else:
            if cur is not None:
                runs.append(k)
            cur, k = o, 1
    runs.append(k)
    print(f"  runs of one offset: mean {sum(runs) / len(runs):.1f}, p90 {sorted(runs)[len(runs) * 9 // 10]}")


def main():
    gen, zs, zs_sample, doc = rows(sys.argv[1]), rows(sys.argv[2]), rows(sys.argv[3]), int(sys.argv[4])
    starts = [g[0] for g in gen]
    c = collections.Counter()
    for pos, ml, off, rep, ll in zs:
        if pos >= doc:
            break
        i = bisect.bisect_right(starts, pos) - 1
        g = gen[i] if i >= 0 and gen[i][0] <= pos < gen[i][0] + gen[i][1] else None
        kind = 'repeat' if rep else 'new'
        if g is None:
            c[(kind, 'in generated literals')] += 1
            continue
        c[(kind, 'gen repeat' if g[3] >= 0 else 'gen new',
           'same distance' if g[2] == off else 'other distance',
           'at start' if g[0] == pos else 'inside')] += 1
    tot = sum(c.values())
    for k, v in c.most_common():
        print(f"{v:7d} {100 * v / tot:5.1f}%  {' / '.join(k)}")
    print("generator: repeat-offset copies with no literal before them:",
          sum(1 for g in gen if g[3] == 0 and g[4] == 0), "of", len(gen))
    offsets('sample', zs_sample)
    offsets('generated', zs)


if __name__ == '__main__':
    main()
