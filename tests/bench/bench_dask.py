#!/usr/bin/env python3
"""Shard write (and verify) throughput of testdata.dask on a LocalCluster.

    PYTHONPATH=build/bindings/python /usr/bin/python3 tests/bench/bench_dask.py \
        [--size 1G] [--shard 64M] [--workers 1 2 4] [--processes] [--dir /dev/shm]

For each worker count: write_shards then verify_shards of SIZE bytes in
SHARD-byte shards (random, chacha20), best of --reps runs, in GB/s (1e9),
with the ratio to the first worker count and to one `testdata.write` of
the whole stream in this process (the single-stream reference).  Shards go
to --dir (default /dev/shm: memory, so no disk is measured).
"""
import argparse
import pathlib
import shutil
import tempfile
import time

import distributed

import testdata
import testdata.dask as tdd


def best(reps, fn):
    t = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        t = min(t, time.perf_counter() - t0)
    return t


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="1G")
    ap.add_argument("--shard", default="64M")
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--processes", action="store_true", help="worker processes (default threads)")
    ap.add_argument("--dir", default="/dev/shm")
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    size = testdata.parse_size(a.size)
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="td-bench-dask.", dir=a.dir))
    try:
        ref = best(a.reps, lambda: testdata.write(tmp / "single.bin", "random", size))
        (tmp / "single.bin").unlink()
        print(f"testdata.write {a.size} (1 process, reference): {size / ref / 1e9:.2f} GB/s")
        base = None
        for n in a.workers:
            with distributed.LocalCluster(n_workers=n, threads_per_worker=1,
                                          processes=a.processes, dashboard_address=":0") as c, \
                    distributed.Client(c):
                d = tmp / f"ds{n}"
                tw = best(a.reps, lambda: tdd.write_shards(d, "random", size, a.shard))
                tv = best(a.reps, lambda: tdd.verify_shards(d, "random", size, a.shard))
                shutil.rmtree(d)
            w, v = size / tw / 1e9, size / tv / 1e9
            base = base or w
            print(f"dask workers={n} ({'processes' if a.processes else 'threads'}), "
                  f"{a.shard} shards: write {w:.2f} GB/s (x{w / base:.2f} vs {a.workers[0]} "
                  f"worker, x{w * ref * 1e9 / size:.2f} vs single), verify {v:.2f} GB/s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
