#!/usr/bin/env python3
"""Throughput of zero and random against their peers, side by side in one run.

    python3 tests/bench/bench_core.py [--build build] [--quick]

In-process (library calls into a reused 1 MiB buffer): testdata's kinds next
to memset, Python's os.urandom and random.randbytes.  Whole commands writing
to /dev/null and into a pipe (`| cat > /dev/null`): `testdata gen` next to
`openssl rand`, `dd if=/dev/urandom` and fio's buffer filler
(ioengine=null, refill_buffers).  Prints GB/s and the ratios the targets are
stated in.  Stdlib only; needs the built tree, openssl, fio.
"""
import argparse
import json
import os
import pathlib
import platform
import shutil
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]


def sh_time(cmd, nbytes, repeat):
    """Best wall time of a shell command over `repeat` runs -> GB/s."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run(cmd, shell=True, check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        best = min(best, time.perf_counter() - t0)
    return nbytes / best / 1e9


def in_process_python(nbytes):
    """os.urandom and random.randbytes in 1 MiB calls, in a child interpreter."""
    code = f"""
import os, random, time
n = {nbytes}; c = 1 << 20
for name, f in (("os.urandom", os.urandom), ("random.randbytes", random.Random(1).randbytes)):
    t0 = time.perf_counter()
    for _ in range(n // c):
        f(c)
    print(name, n / (time.perf_counter() - t0) / 1e9)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    return {line.split()[0]: float(line.split()[1]) for line in out.splitlines()}


def fio_fill(nbytes):
    """fio's own buffer filler: the null engine with refill_buffers."""
    if not shutil.which("fio"):
        return None
    out = subprocess.run(
        ["fio", "--name=fill", "--ioengine=null", "--rw=write", "--bs=1m",
         f"--size={nbytes}", "--refill_buffers", "--output-format=json"],
        capture_output=True, text=True, check=True).stdout
    job = json.loads(out[out.index("{"):])["jobs"][0]
    return job["write"]["bw_bytes"] / 1e9


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=str(ROOT / "build"))
    ap.add_argument("--quick", action="store_true", help="smaller sizes, one repeat")
    a = ap.parse_args()
    build = pathlib.Path(a.build)
    td = build / "programs" / "testdata"
    bench = build / "tests" / "bench" / "bench_gen"
    secs = "0.5" if a.quick else "2"
    big = (1 << 30) if a.quick else (4 << 30)
    rep = 1 if a.quick else 3
    r = {}

    print(f"# machine: {platform.machine()}, {os.cpu_count()} cores, "
          f"{platform.processor() or 'cpu'}; libtestdata {subprocess.run([td, '--version'], capture_output=True, text=True).stdout.strip()}")
    specs = ["memset", "zero", "random:algorithm=chacha20", "random:algorithm=fast"]
    for threads in ("1", "0"):
        out = subprocess.run([bench, "--seconds", secs, "--threads", threads,
                              "--buf", str(1 << 20 if threads == "1" else 8 << 20)] + specs,
                             capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            name, gbs = line.split()
            r[f"lib {name} t={threads}"] = float(gbs)
    r.update({f"python {k}": v for k, v in in_process_python(256 << 20).items()})
    fio = fio_fill(big)
    if fio:
        r["fio refill_buffers (null engine)"] = fio

    for label, args in [("zero", "zero"), ("chacha20", "random"),
                        ("fast", "random --algorithm fast")]:
        r[f"cmd gen {label} >/dev/null"] = sh_time(f"{td} gen {args} {big} > /dev/null", big, rep)
        r[f"cmd gen {label} | cat"] = sh_time(f"{td} gen {args} {big} | cat > /dev/null", big, rep)
    r["cmd gen chacha20 --threads 0 >/dev/null"] = sh_time(
        f"{td} gen random {big} --threads 0 > /dev/null", big, rep)
    r["cmd gen chacha20 --threads 0 | cat"] = sh_time(
        f"{td} gen random {big} --threads 0 | cat > /dev/null", big, rep)
    n_ssl = min(big, 2_000_000_000)
    r["cmd openssl rand >/dev/null"] = sh_time(f"openssl rand {n_ssl} > /dev/null", n_ssl, rep)
    r["cmd openssl rand | cat"] = sh_time(f"openssl rand {n_ssl} | cat > /dev/null", n_ssl, rep)
    n_ur = 1 << 30
    r["cmd dd if=/dev/urandom"] = sh_time(
        f"dd if=/dev/urandom of=/dev/null bs=1M count={n_ur >> 20}", n_ur, 1)

    print(f"\n{'measurement':45s} {'GB/s':>8s}")
    for k, v in r.items():
        print(f"{k:45s} {v:8.2f}")

    def ratio(label, num, den, target):
        if num not in r or den not in r:
            return
        x = r[num] / r[den]
        ok = "meets" if x >= target else "MISSES"
        print(f"{label:60s} {x:6.2f}x  (target >= {target}x: {ok})")

    print("\nratios")
    ratio("chacha20 (1 thread) / openssl rand, to /dev/null", "cmd gen chacha20 >/dev/null",
          "cmd openssl rand >/dev/null", 1.1)
    ratio("chacha20 (1 thread) / openssl rand, into a pipe", "cmd gen chacha20 | cat",
          "cmd openssl rand | cat", 1.1)
    ratio("fast / fio's generator (in-process)", "lib random:algorithm=fast t=1",
          "fio refill_buffers (null engine)", 2.0)
    ratio("fast / chacha20 (in-process, 1 thread)", "lib random:algorithm=fast t=1",
          "lib random:algorithm=chacha20 t=1", 3.0)
    ratio("zero / memset (in-process)", "lib zero t=1", "lib memset t=1", 0.5)
    ratio("chacha20 --threads 0 / 1 thread (in-process)", "lib random:algorithm=chacha20 t=0",
          "lib random:algorithm=chacha20 t=1", 1.0)
    ratio("chacha20 --threads 0 / 1 thread (command)", "cmd gen chacha20 --threads 0 >/dev/null",
          "cmd gen chacha20 >/dev/null", 1.0)
    ratio("chacha20 / os.urandom (in-process)", "lib random:algorithm=chacha20 t=1",
          "python os.urandom", 1.0)
    ratio("chacha20 / dd if=/dev/urandom (command)", "cmd gen chacha20 >/dev/null",
          "cmd dd if=/dev/urandom", 1.0)


if __name__ == "__main__":
    main()
