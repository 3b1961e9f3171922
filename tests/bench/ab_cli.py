#!/usr/bin/env python3
"""CPU time and page faults of one CLI command under two builds, in turns.

usage: tests/bench/ab_cli.py --base OLD/programs/testdata [--new build/programs/testdata]
                             [--reps 11] [--cd DIR] -- ARG... [';' ARG...]...

Runs `BINARY ARG...` --reps times with each binary, alternating (so that
the machine's drift hits both alike), and prints per command the minimum
and median CPU time (user + system of the child, ms), the minimum wall time
(ms) and the median page faults (minor + major) of each.  The kernel here
counts CPU time in 4 ms ticks, so for commands of a few tens of ms the wall
time, exact, is the finer measure (of one thread's work).  Several commands are separated by a lone
';' argument (quote it in the shell).  Arguments are not globbed: pass the
file names.  Output goes to /dev/null unless the command says -o.  On a VM
a first touch of a 4 KiB page can cost 10 us, so faults explain much of a
short command's time; the two counts together tell CPU work from memory
set-up.  Example (docs/benchmarks.md, "First touches, round two"):

  tests/bench/ab_cli.py --base /tmp/old/programs/testdata -- gen text 1M -o /dev/null \\
      ';' profile ../shared/realdata/kennedy.xls -o /tmp/p.json
"""
import argparse
import os
import time
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_like import child_usage  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(cmd, cwd):
    t0 = time.perf_counter()
    _, cpu, faults = child_usage(cmd, cwd=cwd, check=True, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
    return cpu * 1e3, faults, (time.perf_counter() - t0) * 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base", required=True, help="the testdata binary to compare against")
    ap.add_argument("--new", default=os.path.join(ROOT, "build", "programs", "testdata"))
    ap.add_argument("--reps", type=int, default=11)
    ap.add_argument("--cd", default=None, help="directory to run the commands in")
    ap.add_argument("args", nargs="+")
    a = ap.parse_args()
    if a.reps < 1:
        sys.exit("--reps must be at least 1")
    cmds, cur = [], []
    for x in a.args:
        if x == ";":
            if cur:
                cmds.append(cur)
            cur = []
        else:
            cur.append(x)
    if cur:
        cmds.append(cur)
    bins = [("base", os.path.abspath(a.base)), ("new", os.path.abspath(a.new))]
    print("| command | base: min, median ms | new: min, median ms | wall min ms | page faults (medians) |")
    print("|---|---:|---:|---:|---:|")
    for args in cmds:
        t = {k: [] for k, _ in bins}
        f = {k: [] for k, _ in bins}
        w = {k: [] for k, _ in bins}
        for _ in range(a.reps):
            for k, b in bins:
                ms, n, wall = run([b] + args, a.cd)
                t[k].append(ms)
                f[k].append(n)
                w[k].append(wall)
        cells = ["%.1f, %.1f" % (min(t[k]), statistics.median(t[k])) for k, _ in bins]
        print("| `%s` | %s | %s | %.1f → %.1f | %d → %d |" % (
            " ".join(args), cells[0], cells[1], min(w["base"]), min(w["new"]),
            statistics.median(f["base"]), statistics.median(f["new"])))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
