#!/usr/bin/env python3
"""File trees: `testdata tree gen|verify` against GNU tar, side by side in one run.

    /usr/bin/python3 tests/bench/bench_tree.py [--testdata build/programs/testdata]
        [--dir /dev/shm/...] [--files 100000] [--total 2G] [--repeat 3] [--threads 1,2]
        [--only verify|gen] [--trees small,default] [--baseline OTHER/testdata]

Two trees: FILES files of 4 KiB (fixed:4K) and a tree of the default size
distribution (Impressions) of TOTAL bytes.  For each, in the same run and on
the same file system (--dir; default a new directory under /tmp):

  creation      `testdata tree gen` (per --threads) vs GNU tar extracting the
                same tree from an uncompressed archive held in the page cache
                (made once with `tar -cf`, read once before timing);
                target <= 1.5x tar's time;
  verification  `testdata tree verify` (per --threads) vs `tar -cf /dev/null
                DIR` (GNU tar then only stats the files and reads directories:
                it knows /dev/null discards the data) and vs `tar -cf - DIR |
                cat > /dev/null` (reads every byte); target <= 1.5x
                `tar -cf /dev/null`.

Every figure is the best of --repeat runs (wall clock, and CPU time of the
process and its children); the tree written by the previous run is removed
(not timed) and `sync` runs before each timed command, so each starts from
the same state.  The verification commands take turns (one run of each,
--repeat times), so that a change in the machine's load meets them all.
Ratios are testdata / tar, of wall time and of CPU time: below 1 is faster
than tar.  --only skips the other part (the tree is still made, untimed),
--trees picks the trees, --baseline OTHER also times verify by another
testdata program (e.g. a build of the main branch) in the same turns.
--json FILE writes the figures.
"""
import argparse
import json
import os
import pathlib
import resource
import shutil
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent


def find_testdata(given):
    for c in (given, os.environ.get("TESTDATA_CLI"), HERE.parents[1] / "build" / "programs" / "testdata",
              shutil.which("testdata")):
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return str(c)
    sys.exit("bench_tree: no testdata program (give --testdata)")


def timed(cmd, shell=False):
    """(wall seconds, CPU seconds of the children) of one run of cmd."""
    subprocess.run(["sync"])
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, shell=shell, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def best(fn, repeat, cleanup=None):
    runs = []
    for _ in range(repeat):
        if cleanup:
            cleanup()
        runs.append(fn())
    return min(r[0] for r in runs), min(r[1] for r in runs)


def rmtree(p):
    shutil.rmtree(p, ignore_errors=True)


def interleaved(cmds, repeat):
    """{name: (best wall, best CPU)} of cmds {name: fn}, run in turns."""
    runs = {k: [] for k in cmds}
    for _ in range(repeat):
        for k, fn in cmds.items():
            runs[k].append(fn())
    return {k: (min(r[0] for r in v), min(r[1] for r in v)) for k, v in runs.items()}


def bench_tree(td, base, name, spec, repeat, threads_list, only=None, baseline=None):
    root = base / name
    root.mkdir()
    tree = root / "tree"
    ex = root / "extracted"
    archive = root / "tree.tar"
    rows = {}

    def gen(threads):
        return timed([td, "tree", "gen", str(tree), *spec, "--threads", str(threads), "-q"])

    # creation
    if only != "verify":
        for t in threads_list:
            rows[f"gen threads={t}"] = best(lambda: gen(t), repeat, lambda: rmtree(tree))
    if not tree.exists():
        gen(1)
    files = sum(len(f) for _, _, f in os.walk(tree))
    nbytes = sum(os.path.getsize(os.path.join(d, n)) for d, _, fs in os.walk(tree) for n in fs)
    if only != "verify":
        subprocess.run(["tar", "-cf", str(archive), "-C", str(tree), "."], check=True)
        with open(archive, "rb") as f:  # into the page cache
            while f.read(1 << 24):
                pass

        def untar():
            ex.mkdir()
            return timed(["tar", "-xf", str(archive), "-C", str(ex)])
        rows["tar -xf"] = best(untar, repeat, lambda: rmtree(ex))
        rmtree(ex)

    # verification (the tree is in the page cache: it was just written)
    if only != "gen":
        def verify(prog, t):
            return lambda: timed([prog, "tree", "verify", str(tree), *spec, "--threads", str(t),
                                  "-q"])
        cmds = {f"verify threads={t}": verify(td, t) for t in threads_list}
        if baseline:
            cmds.update({f"baseline verify threads={t}": verify(baseline, t)
                         for t in threads_list})
        cmds["tar -cf /dev/null"] = lambda: timed(["tar", "-cf", "/dev/null", "-C", str(root),
                                                   "tree"])
        cmds["tar -cf - | cat"] = lambda: timed(f"tar -cf - -C '{root}' tree | cat > /dev/null",
                                                shell=True)
        rows.update(interleaved(cmds, repeat))
    rmtree(root)
    return {"files": files, "bytes": nbytes, "spec": spec, "rows": rows}


def report(name, r):
    rows = r["rows"]
    print(f"\n== {name}: {r['files']} files, {r['bytes']} bytes ({' '.join(r['spec'])})")
    print(f"  {'command':<31} {'wall s':>8} {'cpu s':>8} {'files/s':>10} {'ratio':>8} "
          f"{'cpu ratio':>9}")
    for k, (wall, cpu) in rows.items():
        ref = rows.get("tar -xf") if k.startswith("gen") else rows.get("tar -cf /dev/null") \
            if "verify" in k else None
        ratio = f"{wall / ref[0]:.2f}x" if ref else ""
        cratio = f"{cpu / ref[1]:.2f}x" if ref and ref[1] > 0 else ""
        print(f"  {k:<31} {wall:8.3f} {cpu:8.3f} {r['files'] / wall:10.0f} {ratio:>8} "
              f"{cratio:>9}")
    for k in rows:
        if "verify" in k:
            w = rows[k][0]
            print(f"  {k} / tar -cf - | cat: {w / rows['tar -cf - | cat'][0]:.2f}x")
    print(f"  targets: gen <= 1.5x tar -xf, verify <= 1.5x tar -cf /dev/null "
          f"(load average now {os.getloadavg()[0]:.2f})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--testdata")
    ap.add_argument("--dir", help="file system to measure on (default: a new directory in /tmp)")
    ap.add_argument("--files", default="100000")
    ap.add_argument("--total", default="2G")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--only", choices=("gen", "verify"),
                    help="time only creation or only verification")
    ap.add_argument("--trees", default="small,default",
                    help="which trees: small (FILES x 4 KiB), default (TOTAL)")
    ap.add_argument("--baseline", help="another testdata program whose verify is timed too")
    ap.add_argument("--json")
    a = ap.parse_args()
    trees = set(a.trees.split(","))
    if not trees or trees - {"small", "default"}:
        ap.error("--trees takes small, default or both")
    td = find_testdata(a.testdata)
    tar = subprocess.run(["tar", "--version"], capture_output=True, text=True).stdout.split("\n")[0]
    base = pathlib.Path(tempfile.mkdtemp(prefix="bench-tree-", dir=a.dir))
    threads = [int(t) for t in a.threads.split(",")]
    fs = subprocess.run(["df", "-T", str(base)], capture_output=True, text=True).stdout.split("\n")
    print(f"bench_tree: {td}; {tar}; {os.cpu_count()} cores; {base} "
          f"({fs[1].split()[1] if len(fs) > 1 else '?'})")
    load = os.getloadavg()[0]
    print(f"  load average at start: {load:.2f}" + (f"; baseline {a.baseline}" if a.baseline
                                                     else ""))
    out = {}
    try:
        if "small" in trees:
            out["small"] = bench_tree(td, base, "small", ["--files", a.files, "--sizes",
                                                          "fixed:4K", "--seed", "1"],
                                      a.repeat, threads, a.only, a.baseline)
            report(f"{a.files} files of 4 KiB", out["small"])
        if "default" in trees:
            out["default"] = bench_tree(td, base, "default", ["--total", a.total, "--seed", "1"],
                                        a.repeat, threads, a.only, a.baseline)
            report(f"default distribution, {a.total}", out["default"])
    finally:
        rmtree(base)
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
