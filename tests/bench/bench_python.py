#!/usr/bin/env python3
"""Speed of the Python bindings, measured side by side with their references.

    PYTHONPATH=build/bindings/python /usr/bin/python3 tests/bench/bench_python.py [--size 1G] [--check]

1. Stream.readinto with 1 MiB chunks vs the C library's own throughput
   (td_fill into one big, pre-faulted buffer through testdata.capi: one call,
   GIL released, so no Python in the loop).  Target: >= 0.9x.  If the
   `testdata` program is found, its pure-C stream loop (`testdata gen` to
   /dev/null) is shown as a second reference.
2. testdata.generate("random", SIZE) vs os.urandom(SIZE) (target >= 5x) and
   vs random.randbytes (target >= 8x; in chunks, since a single
   randbytes(n) call is limited to n < 256 MiB).

Defaults: algorithm chacha20, threads 1 (the library's defaults); fast and
threads=0 (all cores) are reported too.  Every figure is the best of a few
runs, without the time to free the result.  generate() asks the kernel for
transparent huge pages for its result (madvise), which makes the first touch
of 1 GiB much cheaper than 4 KiB page faults.  --check exits 1 if a target is missed.
"""
import argparse
import os
import pathlib
import random
import shutil
import subprocess
import sys
import time

import testdata
from testdata import capi

MiB = 1 << 20


def find_cli():
    """The `testdata` program: $TESTDATA_CLI, the build tree the package came from, or PATH."""
    cand = [os.environ.get("TESTDATA_CLI"),
            pathlib.Path(testdata.__file__).resolve().parents[3] / "programs" / "testdata",
            shutil.which("testdata")]
    for c in cand:
        if c and os.access(c, os.X_OK) and os.path.isfile(c):
            return str(c)
    return None


def best(fn, repeat):
    """Shortest of `repeat` timings of fn(); freeing its result is not timed."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t)
        del result
    return min(times)


def gbps(n, secs):
    return n / secs / 1e9


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", default="1G", help="bytes per measurement (default 1G)")
    ap.add_argument("--repeat", type=int, default=3, help="best of N for the fast runs")
    ap.add_argument("--check", action="store_true", help="exit 1 if a target ratio is missed")
    args = ap.parse_args()
    n = testdata.parse_size(args.size)
    rep = args.repeat
    ok = True

    def report(label, secs, ref_secs=None, target=None, ref_name=""):
        nonlocal ok
        line = f"  {label:<52} {secs:8.3f} s  {gbps(n, secs):7.2f} GB/s"
        if ref_secs is not None:
            ratio = ref_secs / secs
            line += f"   {ratio:6.2f}x {ref_name}"
            if target is not None:
                met = ratio >= target
                ok &= met
                line += f"  (target >= {target}x: {'ok' if met else 'MISSED'})"
        print(line, flush=True)

    print(f"testdata {testdata.__version__}, Python {sys.version.split()[0]}, "
          f"{os.cpu_count()} CPUs, {n} bytes per run\n")

    # --- 1. readinto vs C ----------------------------------------------------
    cli = find_cli()
    print("Stream.readinto(1 MiB buffer) vs the C library (td_fill, one buffer)")
    for label, opts in [("chacha20", {}), ("fast", {"algorithm": "fast"})]:
        o = capi.td_options()
        for k, v in opts.items():
            capi.td_options_set(o, capi.TD_RANDOM, k, v)
        big = bytearray(n)
        capi.td_fill(capi.TD_RANDOM, o, 0, big)  # fault the pages in
        c_secs = best(lambda: capi.td_fill(capi.TD_RANDOM, o, 0, big), rep)
        del big
        buf = bytearray(MiB)

        def stream_readinto():
            with testdata.Stream("random", n, **opts) as s:
                readinto = s.readinto
                while readinto(buf):
                    pass

        py_secs = best(stream_readinto, rep)
        report(f"C td_fill {label}", c_secs)
        report(f"Stream.readinto {label}", py_secs, c_secs, 0.9 if label == "chacha20" else None,
               "of C td_fill")
        if cli:
            argv = [cli, "gen", "random", str(n)] + [f"--{k}={v}" for k, v in opts.items()]
            cli_secs = best(lambda: subprocess.run(argv, stdout=subprocess.DEVNULL, check=True), rep)
            report(f"C stream loop (testdata gen > /dev/null) {label}", cli_secs)
            report("", py_secs, cli_secs, None, "of C stream loop")

    # --- 2. generate vs os.urandom / random.randbytes --------------------------
    print("\ngenerate('random', SIZE) vs os.urandom and random.randbytes")
    # Warm-up: the first touch of fresh memory can be much slower (e.g. in a VM).
    testdata.generate("random", n)
    urandom_secs = best(lambda: os.urandom(n), 2)
    rng = random.Random(0)
    # One randbytes(n) call where Python allows it; Python 3.11 needs
    # n < 256 MiB, so then the largest power-of-two chunks that fit.
    chunk = n

    def randbytes_all():
        nonlocal chunk
        if chunk >= n:
            try:
                return rng.randbytes(n)
            except OverflowError:  # raised before any work is done
                chunk = 128 * MiB
        return b"".join(rng.randbytes(min(chunk, n - i)) for i in range(0, n, chunk))

    randbytes_secs = best(randbytes_all, 1)
    report("os.urandom", urandom_secs)
    report("random.randbytes" + (f" ({chunk // MiB} MiB calls)" if chunk < n else ""),
           randbytes_secs)
    for label, opts, targets in [
            ("generate chacha20", {}, (5, 8)),
            ("generate fast", {"algorithm": "fast"}, (None, None)),
            ("generate chacha20 threads=0", {"threads": 0}, (None, None)),
            ("generate fast threads=0", {"algorithm": "fast", "threads": 0}, (None, None))]:
        secs = best(lambda: testdata.generate("random", n, **opts), rep)
        report(label, secs, urandom_secs, targets[0], "os.urandom")
        report("", secs, randbytes_secs, targets[1], "random.randbytes")
    print("\nall targets met" if ok else "\nSOME TARGETS MISSED")
    return 0 if ok or not args.check else 1


if __name__ == "__main__":
    sys.exit(main())
