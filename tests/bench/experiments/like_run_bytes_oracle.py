#!/usr/bin/env python3
"""Oracle: what would `like` gain if its runs had the sample's run bytes?

usage: tests/bench/experiments/like_run_bytes_oracle.py --cli BUILD/programs/testdata
                                                         [--mib 8] [--seed 1] [--min-run 4] FILE...

An LZ profile makes a run of one byte as a literal followed by a match at
distance 1, and draws that literal from the literal statistics, so the
sample's run bytes are lost: ptt5 is 87% zero bytes, its `like` data 14%
(docs/benchmarks.md, stop 47).  Before a byte-format change that keeps them
(the builder counting the byte before each distance-1 match, the generator
drawing a run's literal from those counts), this measures the gain with a
post-processing oracle: every maximal run of at least --min-run equal bytes
of the generated data gets one byte drawn from the sample's runs (counted
per run, as the generator would draw once per run), the run's length kept.
Printed per FILE: the share of zero bytes and of bytes in runs, and the ratio
error of the ten codecs of bench_like.py against the sample for the data as
generated and after the oracle.  The oracle only moves bytes already in
runs, so what it cannot show is the effect of the generator's RNG stream
changing (a format change moves every later byte too, at the same
statistics).
"""
import argparse
import os
import subprocess
import sys
import tempfile
import zlib

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from like_metrics import RATIO_CODECS, ratios  # noqa: E402


def runs(a, min_run):
    """(start, length) arrays of the maximal runs of at least min_run equal bytes."""
    change = np.flatnonzero(np.diff(a) != 0) + 1
    starts = np.concatenate(([0], change))
    lens = np.diff(np.concatenate((starts, [len(a)])))
    keep = lens >= min_run
    return starts[keep], lens[keep]


def oracle(sample, data, min_run, seed):
    s = np.frombuffer(sample, dtype=np.uint8)
    st, _ = runs(s, min_run)
    hist = np.bincount(s[st], minlength=256).astype(np.float64)
    if hist.sum() == 0:
        return data
    g = np.frombuffer(data, dtype=np.uint8).copy()
    gs, gl = runs(g, min_run)
    # A run's byte is a function of the run's length and the 16 bytes before
    # it, so that a copy of the run (a match over it) keeps agreeing with
    # its source; independent draws would break those matches.
    cdf = np.cumsum(hist / hist.sum())
    vals = np.empty(len(gs), dtype=np.uint8)
    for i, (st0, ln) in enumerate(zip(gs, gl)):
        key = zlib.crc32(g[max(0, st0 - 16):st0].tobytes(), zlib.crc32(b"%d %d" % (ln, seed)))
        vals[i] = min(255, int(np.searchsorted(cdf, key / 2**32, side="right")))
    # each run's bytes set to its drawn value: a run-length "paint"
    idx = np.repeat(np.arange(len(gs)), gl)
    pos = np.repeat(gs, gl) + (np.arange(gl.sum()) - np.repeat(np.cumsum(gl) - gl, gl))
    g[pos] = vals[idx]
    return g.tobytes()


def shares(b, min_run):
    a = np.frombuffer(b, dtype=np.uint8)
    _, ln = runs(a, min_run)
    return 100.0 * np.count_nonzero(a == 0) / len(a), 100.0 * ln.sum() / len(a)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--mib", type=int, default=8)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--min-run", type=int, default=4)
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for f in a.files:
            sample = open(f, "rb").read()
            prof = os.path.join(tmp, "p.json")
            subprocess.run([a.cli, "profile", "--no-fingerprint", f, "-o", prof], check=True,
                           stderr=subprocess.DEVNULL)
            model = "context" if '"ctx"' in open(prof).read() else "lz"
            data = subprocess.run([a.cli, "gen", "like", f"{a.mib}M", "--profile", prof,
                                   "--seed", str(a.seed)], check=True, stdout=subprocess.PIPE).stdout
            fixed = oracle(sample, data, a.min_run, a.seed)
            rs, rg, ro = ratios(sample), ratios(data), ratios(fixed)
            print(f"== {os.path.basename(f)} ({len(sample)} bytes, {model} model)")
            for name, b in (("sample", sample), ("like", data), ("oracle", fixed)):
                z, r = shares(b, a.min_run)
                print(f"  {name:7s} zero bytes {z:5.1f}%  in runs of >= {a.min_run}: {r:5.1f}%")
            print("  codec        sample    like   error |  oracle   error")
            el, eo = [], []
            for c in RATIO_CODECS:
                e1, e2 = 100 * (rg[c] / rs[c] - 1), 100 * (ro[c] / rs[c] - 1)
                el.append(abs(e1))
                eo.append(abs(e2))
                print(f"  {c:10s} {rs[c]:8.3f} {rg[c]:8.3f} {e1:+6.1f}% | {ro[c]:7.3f} {e2:+6.1f}%")
            print(f"  median |error|: like {np.median(el):.1f}%, oracle {np.median(eo):.1f}%; "
                  f"worst: like {max(el):.1f}%, oracle {max(eo):.1f}%", flush=True)


if __name__ == "__main__":
    main()
