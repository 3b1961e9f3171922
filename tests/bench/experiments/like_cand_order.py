#!/usr/bin/python3
"""Would the profile builder spend less codec time taking its candidates
best-first? (experiment, stop 50; no profile changes).

The builder (like_profile.c, choose_model) measures the LZ model and then
its 24 context-model candidates in order, each against the least sum of
errors so far: lz4 -1, gzip -6, lz4 -9, bzip2 -9 on 256 KiB, the codecs
after the sum reaches that bound skipped.  Built with
like_cand_order.patch and run with TD_CANDLOG=FILE, `testdata profile
--threads 1` writes every candidate's four errors and CPU ms (all of them,
whatever the bound; the profile is the same).  This script replays those
logs under three rules and prints the codec ms each would spend:

- A: as shipped (in order, bound = least sum so far);
- B: lz4 -1 on every candidate first, then in increasing order of that
  error, stopping once it reaches the bound;
- C: as B, ordered and bounded by lz4 -1 + gzip -6.

  for f in SAMPLES; do TD_CANDLOG=log_$(basename $f).txt B/programs/testdata \\
      profile --no-fingerprint --threads 1 $f -o /dev/null; done
  /usr/bin/python3 tests/bench/experiments/like_cand_order.py log_*.txt

(Ties and the builder's check of shared 32-byte windows are left out: the
choice printed is the least sum's.)
"""
import sys


def replay(lz, cands, first):
    """Codec ms and choice when candidates are ordered and bounded by the
    sum of their first `first` codecs (0: in order, as shipped)."""
    best, chosen = sum(e for e, _ in lz), -1
    if first == 0:
        spent, order = 0.0, range(len(cands))
    else:
        spent = sum(t for r in cands for _, t in r[:first])
        order = sorted(range(len(cands)), key=lambda c: (sum(e for e, _ in cands[c][:first]), c))
    for c in order:
        r = cands[c]
        s = sum(e for e, _ in r[:first])
        if first and s >= best:
            break
        for e, t in r[first:]:
            if s >= best:
                break
            s += e
            spent += t
        if s < best:
            best, chosen = s, c
    return spent, chosen


def main():
    tot = [0.0, 0.0, 0.0, 0.0]
    for path in sys.argv[1:]:
        rows = []
        with open(path) as f:
            for line in f:
                x = line.split()[1:]
                rows.append([(float(x[2 * i]), float(x[2 * i + 1])) for i in range(4)])
        lz, cands = rows[0], rows[1:]
        every = sum(t for r in cands for _, t in r)
        res = [replay(lz, cands, k) for k in (0, 1, 2)]
        print("%-28s A %7.1f ms (%2d)  B %7.1f (%2d)  C %7.1f (%2d)  every codec %7.1f" %
              (path, res[0][0], res[0][1], res[1][0], res[1][1], res[2][0], res[2][1], every))
        for i, (t, _) in enumerate(res):
            tot[i] += t
        tot[3] += every
    print("total: A %.0f ms, B %.0f, C %.0f, every codec %.0f" % tuple(tot))


if __name__ == "__main__":
    main()
