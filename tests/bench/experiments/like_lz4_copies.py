#!/usr/bin/python3
"""What lz4 -1 makes of the copies of `like` data (experiment, stop 50).

For each SAMPLE: its profile (made by --profiler), then for each variant (a
set of environment variables for the generator of
like_greedy_sources.patch), 4 MiB of `like` data at seed 1 on one thread,
with the generator's copies of document 0 traced (TD_DBG).  Prints:
- the ratio error of the data against the sample under like_metrics.py's
  ten codecs;
- lz4 -1's own parse (lz4.block, default mode) of the first --bytes of the
  sample and of the data: sequences, mean match length, literals;
- for an LZ model, of the generator's copies of 16 bytes or more in those bytes, the share
  that lz4 -1 codes as one match starting at the copy ("whole"), and how
  the others go: a match starting at the copy that ends early ("short"),
  a match of lz4's that began earlier and runs into the copy ("inside"),
  or none at its start ("late"); by kind of copy (new distance, phrase,
  repeat offset).

  git apply tests/bench/experiments/like_greedy_sources.patch   (throwaway tree)
  cmake ... && cmake --build B --target testdata_cli
  tests/bench/experiments/like_lz4_copies.py --gen B/programs/testdata \\
      --profiler testdata SAMPLE... [--variant "TD_EXP_SNAPPH=1" ...]

Without any TD_EXP_ variable the patched generator writes the same bytes
as the unpatched one.
"""
import argparse
import bisect
import collections
import os
import subprocess
import sys
import tempfile

import lz4.block

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import like_metrics as lm  # noqa: E402


def _length(c, i, n):
    """An lz4 length whose 4-bit field is n: 15 continues in bytes of 255."""
    if n == 15:
        while True:
            n += c[i]
            i += 1
            if c[i - 1] != 255:
                break
    return n, i


def lz4_seqs(d):
    """(start, match length, offset, literal run) of lz4 -1's block."""
    c = lz4.block.compress(d, mode="default", store_size=False)
    i = pos = 0
    out = []
    while i < len(c):
        t = c[i]
        ll, i = _length(c, i + 1, t >> 4)
        i += ll
        pos += ll
        if i >= len(c):
            break
        off = c[i] | c[i + 1] << 8
        ml, i = _length(c, i + 2, t & 15)
        ml += 4
        out.append((pos, ml, off, ll))
        pos += ml
    return out


def parse_stats(d):
    s = lz4_seqs(d)
    n = max(len(s), 1)
    return "%d sequences, mean match %.1f, %d literals" % (len(s), sum(x[1] for x in s) / n,
                                                           sum(x[3] for x in s))


def classify(d, trace):
    gm = lz4_seqs(d)
    starts = [g[0] for g in gm]
    kinds = collections.Counter()
    for pos, dist, ml, rp, ph, _ in trace:
        if ml < 16 or pos + ml > len(d):
            continue
        a = bisect.bisect_right(starts, pos) - 1
        g = gm[a] if a >= 0 else None
        t = "rep" if rp >= 0 else "phrase" if ph else "new"
        if g and g[0] == pos and g[0] + g[1] >= pos + ml:
            how = "whole"
        elif g and g[0] <= pos < g[0] + g[1]:
            how = "short" if g[0] == pos else "inside"
        else:
            how = "late"
        kinds[(t, how)] += 1
        kinds[("all", how)] += 1
    tot = sum(v for (t, _), v in kinds.items() if t == "all") or 1
    parts = []
    for t in ("all", "new", "phrase", "rep"):
        n = sum(v for (k, _), v in kinds.items() if k == t)
        if n:
            parts.append("%s %d: %s" % (t, n, " ".join("%s %.0f%%" % (h, 100 * kinds[(t, h)] / n)
                                                         for h in ("whole", "short", "inside", "late"))))
    return "copies >= 16 bytes (%d): " % tot + "; ".join(parts)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gen", required=True, help="testdata built with like_greedy_sources.patch")
    ap.add_argument("--profiler", default="testdata")
    ap.add_argument("--bytes", type=int, default=300000, help="lz4 parse over this many bytes")
    ap.add_argument("--variant", action="append", default=[],
                    help='e.g. "TD_EXP_SNAPPH=1 TD_EXP_NOEXT=1"; the unchanged generator always runs first')
    ap.add_argument("samples", nargs="+")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for sample in a.samples:
            with open(sample, "rb") as f:
                s = f.read()[:4 << 20]
            prof = os.path.join(tmp, "p.json")
            subprocess.run([a.profiler, "profile", "--no-fingerprint", sample, "-o", prof], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            rs = lm.ratios(s)
            print("== %s: lz4 -1 on the sample: %s" % (sample, parse_stats(s[:a.bytes])))
            for v in [""] + a.variant:
                env = dict(os.environ)
                env.update(kv.split("=", 1) for kv in v.split())
                gen, tr = os.path.join(tmp, "g"), os.path.join(tmp, "t")
                env["TD_DBG"] = tr
                if os.path.exists(tr):
                    os.unlink(tr)
                subprocess.run([a.gen, "gen", "like", "4M", "--profile", prof, "--seed", "1",
                                "--threads", "1", "-o", gen], check=True, env=env)
                with open(gen, "rb") as f:
                    g = f.read()
                trace = []
                if os.path.exists(tr):  # none for a context model: it makes no copies
                    with open(tr) as f:
                        trace = [tuple(map(int, line.split())) for line in f]
                rg = lm.ratios(g)
                errs = {c: 100 * (rg[c] / rs[c] - 1) for c in lm.RATIO_CODECS}
                print("-- %s" % (v or "unchanged"))
                print("   errors %: " + " ".join("%s %+.1f" % (c, e) for c, e in errs.items()))
                print("   lz4 -1: %s" % parse_stats(g[:a.bytes]))
                if trace:
                    print("   " + classify(g[:a.bytes], trace))


if __name__ == "__main__":
    main()
