#!/usr/bin/env python3
"""File trees: `testdata tree gen|verify` against GNU tar, side by side in one run.

    /usr/bin/python3 tests/bench/bench_tree.py [--testdata build/programs/testdata]
        [--dir /dev/shm/...] [--files 100000] [--total 2G] [--repeat 3] [--threads 1,2]

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
the same state.  Ratios are testdata / tar: below 1 is faster than tar.
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


def bench_tree(td, base, name, spec, repeat, threads_list):
    root = base / name
    root.mkdir()
    tree = root / "tree"
    ex = root / "extracted"
    archive = root / "tree.tar"
    rows = {}

    def gen(threads):
        return timed([td, "tree", "gen", str(tree), *spec, "--threads", str(threads), "-q"])

    # creation
    for t in threads_list:
        rows[f"gen threads={t}"] = best(lambda: gen(t), repeat, lambda: rmtree(tree))
    if not tree.exists():
        gen(1)
    files = sum(len(f) for _, _, f in os.walk(tree))
    nbytes = sum(os.path.getsize(os.path.join(d, n)) for d, _, fs in os.walk(tree) for n in fs)
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
    for t in threads_list:
        rows[f"verify threads={t}"] = best(
            lambda: timed([td, "tree", "verify", str(tree), *spec, "--threads", str(t), "-q"]),
            repeat)
    rows["tar -cf /dev/null"] = best(lambda: timed(["tar", "-cf", "/dev/null", "-C", str(root),
                                                    "tree"]), repeat)
    rows["tar -cf - | cat"] = best(lambda: timed(f"tar -cf - -C '{root}' tree | cat > /dev/null",
                                                 shell=True), repeat)
    rmtree(root)
    return {"files": files, "bytes": nbytes, "spec": spec, "rows": rows}


def report(name, r):
    rows = r["rows"]
    print(f"\n== {name}: {r['files']} files, {r['bytes']} bytes ({' '.join(r['spec'])})")
    print(f"  {'command':<22} {'wall s':>8} {'cpu s':>8} {'files/s':>10} {'ratio':>8}")
    for k, (wall, cpu) in rows.items():
        ref = rows["tar -xf"] if k.startswith("gen") else rows["tar -cf /dev/null"] \
            if k.startswith("verify") else None
        ratio = f"{wall / ref[0]:.2f}x" if ref else ""
        print(f"  {k:<22} {wall:8.3f} {cpu:8.3f} {r['files'] / wall:10.0f} {ratio:>8}")
    for k in rows:
        if k.startswith("verify"):
            w = rows[k][0]
            print(f"  {k} / tar -cf - | cat: {w / rows['tar -cf - | cat'][0]:.2f}x")
    print("  targets: gen <= 1.5x tar -xf, verify <= 1.5x tar -cf /dev/null")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--testdata")
    ap.add_argument("--dir", help="file system to measure on (default: a new directory in /tmp)")
    ap.add_argument("--files", default="100000")
    ap.add_argument("--total", default="2G")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--json")
    a = ap.parse_args()
    td = find_testdata(a.testdata)
    tar = subprocess.run(["tar", "--version"], capture_output=True, text=True).stdout.split("\n")[0]
    base = pathlib.Path(tempfile.mkdtemp(prefix="bench-tree-", dir=a.dir))
    threads = [int(t) for t in a.threads.split(",")]
    fs = subprocess.run(["df", "-T", str(base)], capture_output=True, text=True).stdout.split("\n")
    print(f"bench_tree: {td}; {tar}; {os.cpu_count()} cores; {base} "
          f"({fs[1].split()[1] if len(fs) > 1 else '?'})")
    out = {}
    try:
        out["small"] = bench_tree(td, base, "small", ["--files", a.files, "--sizes", "fixed:4K",
                                                      "--seed", "1"], a.repeat, threads)
        report(f"{a.files} files of 4 KiB", out["small"])
        out["default"] = bench_tree(td, base, "default", ["--total", a.total, "--seed", "1"],
                                    a.repeat, threads)
        report(f"default distribution, {a.total}", out["default"])
    finally:
        rmtree(base)
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
