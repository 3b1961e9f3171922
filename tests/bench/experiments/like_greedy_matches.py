#!/usr/bin/python3
"""How long are the greedy matches: a sample against `like` data made from its profile (experiment, stop 46).

For each FILE, over its first --bytes bytes:
- a greedy parse like lz4 -1's: at each position, the most recent earlier
  occurrence of its 4 bytes within 64 KiB, taken when found (4 bytes or
  more, extended as far as it goes), else one literal; it reports the
  share of bytes covered, the number of matches, their mean length, and the
  50th/90th/99th percentiles of the literal runs between matches;
- the match length from the most recent earlier occurrence of each
  position's 4 bytes against the best of its last 32 occurrences (any
  distance), both averaged over the positions whose 4 bytes occurred before.

  testdata profile SAMPLE -o P && testdata gen like 1M --profile P --seed 1 -o GEN
  /usr/bin/python3 tests/bench/experiments/like_greedy_matches.py SAMPLE GEN

docs/benchmarks.md ("Experiment of 2026-12-06 (stop 46)") gives the figures
for alice29.txt, geo.protodata and cp.html (pure Python: about a minute a file).
"""
import argparse
import collections


def greedy(b, win=65535):
    last, i, run, lits, matches, cov = {}, 0, 0, [], 0, 0
    while i < len(b) - 4:
        g = b[i:i + 4]
        j = last.get(g)
        last[g] = i
        if j is not None and i - j <= win:
            m = 4
            while i + m < len(b) and b[j + m] == b[i + m]:
                m += 1
            for k in range(i + 1, min(i + m, len(b) - 4)):
                last[b[k:k + 4]] = k
            lits.append(run)
            run, cov, i, matches = 0, cov + m, i + m, matches + 1
        else:
            run, i = run + 1, i + 1
    lits.sort()
    q = (lambda p: lits[int(p * (len(lits) - 1))]) if lits else (lambda p: 0)
    return cov / len(b), matches, cov / max(matches, 1), q(0.5), q(0.9), q(0.99)


def recent_vs_best(b, k=32):
    occ = collections.defaultdict(list)
    tot_r = tot_b = n = 0
    for i in range(len(b) - 4):
        seen = occ[b[i:i + 4]]
        if seen:
            def ml(j):
                m = 0
                while i + m < len(b) and b[j + m] == b[i + m] and m < 255:
                    m += 1
                return m
            tot_r += ml(seen[-1])
            tot_b += max(ml(j) for j in seen[-k:])
            n += 1
        seen.append(i)
    return tot_r / max(n, 1), tot_b / max(n, 1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bytes", type=int, default=400000, help="greedy parse over this many bytes")
    ap.add_argument("--recent-bytes", type=int, default=200000, help="recent/best over this many bytes")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    for f in a.files:
        with open(f, "rb") as fh:
            d = fh.read()
        c, m, ml, p50, p90, p99 = greedy(d[:a.bytes])
        r, b = recent_vs_best(d[:a.recent_bytes])
        print("%s: greedy covers %.2f, %d matches of mean length %.1f, literal runs p50/p90/p99 %d/%d/%d; "
              "match from the most recent occurrence %.2f bytes, best of the last 32 %.2f" %
              (f, c, m, ml, p50, p90, p99, r, b))


if __name__ == "__main__":
    main()
