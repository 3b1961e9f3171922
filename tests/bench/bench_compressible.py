#!/usr/bin/python3
"""Benchmark of the compressible kind and the dedup layer (stdlib only).

Prints, in one run:
  1. accuracy: ratio of gzip -6, zstd -3, lz4 -1 and xz -6 on 32 MiB of
     `testdata gen compressible --ratio R`, next to fio 3.33's
     buffer_compress_percentage data for the same targets;
  2. granularity: 64 KiB pieces compressed one by one with zstd -3;
  3. realism at R = 3: compressor throughput on our data, on fio's data
     and on English text (the corpus in /work/shared/corpus), as ratios;
  4. generation speed (GB/s, one thread, written to /dev/null by the CLI)
     next to the chacha20 `random` stream;
  5. dedup accuracy: unique 4 KiB blocks counted by hashing.

Usage: tests/bench/bench_compressible.py [--cli build-comp/programs/testdata]
       [--mib 32] [--ratios 1.25,1.5,2,3,4,6,10] [--no-fio] [--quick]
       [--datagen PATH]
"""
import argparse
import hashlib
import os
import resource
import shutil
import string
import subprocess
import sys
import tempfile

COMPRESSORS = [
    ("gzip -6", ["gzip", "-6", "-c"]),
    ("zstd -3", ["zstd", "-3", "-c", "-q"]),
    ("lz4 -1", ["lz4", "-1", "-c", "-q"]),
    ("xz -6", ["xz", "-6", "-T1", "-c"]),
]
CORPUS = "/work/shared/corpus"


def compress_len(cmd, path):
    with open(path, "rb") as f:
        out = subprocess.run(cmd, stdin=f, stdout=subprocess.PIPE, check=True).stdout
    return len(out)


def gen(cli, path, size, *args):
    subprocess.run([cli, "gen", "compressible", str(size), "-o", path] + list(args), check=True)


def fio_file(path, size, pct):
    d = os.path.dirname(path)
    subprocess.run(["fio", "--name=x", "--ioengine=sync", "--rw=write", "--bs=64k",
                    "--filename=" + path, "--size=%d" % size,
                    "--buffer_compress_percentage=%d" % pct, "--refill_buffers",
                    "--buffer_compress_chunk=4k", "--output=" + os.path.join(d, "fio.log")],
                   check=True, stdout=subprocess.DEVNULL)


def cpu_seconds(cmd, data=None, stdout=subprocess.DEVNULL):
    """Run cmd; return the CPU time (user + system) it used.  CPU time, not
    wall time: the benchmark machine is shared, and waiting for a core is
    not the program's cost."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, input=data, stdout=stdout, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def throughput(cmd, data, reps=3):
    best = min(cpu_seconds(cmd, data) for _ in range(reps))
    return len(data) / best / 1e6


def english(size):
    """The corpus, repeated with each copy's letters rotated (ROT-k) so that
    a compressor window never spans an exact earlier copy."""
    text = b"".join(open(os.path.join(CORPUS, f), "rb").read()
                    for f in sorted(os.listdir(CORPUS)) if f.endswith(".txt"))
    lo, up = string.ascii_lowercase, string.ascii_uppercase
    out = bytearray()
    k = 0
    while len(out) < size:
        tr = bytes.maketrans((lo + up).encode(), (lo[k:] + lo[:k] + up[k:] + up[:k]).encode())
        out += text.translate(tr)
        k = (k + 1) % 26
    return bytes(out[:size])


def gen_speed(cli, size, args, reps=5):
    best = min(cpu_seconds([cli, "gen"] + args + [str(size)]) for _ in range(reps))
    return size / best / 1e9


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", default="build-comp/programs/testdata")
    ap.add_argument("--mib", type=int, default=32)
    ap.add_argument("--ratios", default="1.25,1.5,2,3,4,6,10")
    ap.add_argument("--no-fio", action="store_true")
    ap.add_argument("--quick", action="store_true", help="skip xz and granularity")
    ap.add_argument("--datagen", help="zstd's datagen program (SIZE [PROBA] -> stdout),"
                    " timed next to ours when given")
    a = ap.parse_args()
    cli = os.path.abspath(a.cli)
    ratios = [float(r) for r in a.ratios.split(",")]
    size = a.mib << 20
    tmp = tempfile.mkdtemp(prefix="bench_comp.")
    comps = [c for c in COMPRESSORS if not (a.quick and c[0].startswith("xz"))]
    use_fio = not a.no_fio and shutil.which("fio")
    try:
        # 1. accuracy
        print("== 1. accuracy: achieved ratio on %d MiB (ours | fio buffer_compress_percentage)"
              % a.mib)
        hdr = "%-6s" % "R" + "".join("%-24s" % n for n, _ in comps) + "worst"
        print(hdr)
        worst_all = 0.0
        for r in ratios:
            ours = os.path.join(tmp, "ours")
            gen(cli, ours, size, "--ratio", str(r))
            fio = os.path.join(tmp, "fio")
            if use_fio:
                pct = int(round(100 * (1 - 1 / r)))
                fio_file(fio, size, pct)
            line = "%-6g" % r
            worst = 0.0
            for name, cmd in comps:
                got = size / compress_len(cmd, ours)
                err = got / r - 1
                worst = max(worst, abs(err))
                f = "%.2f" % (os.path.getsize(fio) / compress_len(cmd, fio)) if use_fio else "-"
                line += "%-24s" % ("%6.3f %+5.1f%% | %-6s" % (got, 100 * err, f))
            worst_all = max(worst_all, worst)
            print(line + "%.1f%%" % (100 * worst))
        print("worst deviation over all: %.1f%%  (target 5%%, aim 3%%)" % (100 * worst_all))
        if use_fio:
            print("(fio: --buffer_compress_percentage=round(100*(1-1/R)) --buffer_compress_chunk=4k"
                  " --refill_buffers)")

        # 2. granularity
        if not a.quick:
            print("\n== 2. granularity: 64 KiB pieces one by one, zstd -3, mean ratio (16 MiB)")
            for r in ratios:
                ours = os.path.join(tmp, "ours")
                gen(cli, ours, 16 << 20, "--ratio", str(r), "--seed", "7")
                data = open(ours, "rb").read()
                rs = []
                for at in range(0, len(data), 65536):
                    piece = data[at:at + 65536]
                    c = subprocess.run(["zstd", "-3", "-c", "-q"], input=piece,
                                       stdout=subprocess.PIPE, check=True).stdout
                    rs.append(len(piece) / len(c))
                m = sum(rs) / len(rs)
                print("R=%-6g mean %.3f (%+.1f%%)  min %.3f max %.3f" %
                      (r, m, 100 * (m / r - 1), min(rs), max(rs)))

        # 3. realism at R = 3
        print("\n== 3. realism at R=3: compressor MB/s of CPU time on 16 MiB (best of 3)")
        ours = os.path.join(tmp, "ours")
        gen(cli, ours, 16 << 20, "--ratio", "3")
        od = open(ours, "rb").read()
        ed = english(16 << 20)
        fd = None
        if use_fio:
            fio = os.path.join(tmp, "fio")
            fio_file(fio, 16 << 20, 67)
            fd = open(fio, "rb").read()
        print("%-9s %10s %10s %10s %12s %12s" % ("", "ours", "english", "fio", "ours/english",
                                                 "fio/english"))
        for name, cmd in COMPRESSORS[:3]:
            o = throughput(cmd, od)
            e = throughput(cmd, ed)
            f = throughput(cmd, fd) if fd else float("nan")
            print("%-9s %10.1f %10.1f %10.1f %12.2f %12.2f" % (name, o, e, f, o / e, f / e))
        hist = [0] * 256
        for b in od[:4 << 20]:
            hist[b] += 1
        print("byte histogram (4 MiB): min %d max %d per value (uniform %d): not bimodal"
              % (min(hist), max(hist), (4 << 20) // 256))
        print("English text for comparison: the corpus repeated with letters rotated per copy"
              " (no cross-copy matches)")

        # 4. generation speed
        print("\n== 4. generation, one thread, CLI to /dev/null, GB per CPU second (best of 5, 1 GiB)")
        g = 1 << 30
        rnd = gen_speed(cli, g, ["random"])
        print("random (chacha20)          %.2f GB/s" % rnd)
        if a.datagen:
            best = min(cpu_seconds([a.datagen, str(g), "0.5"]) for _ in range(5))
            print("zstd datagen (P=0.5)       %.2f GB/s" % (g / best / 1e9))
        for r in (1.25, 2, 3, 4, 10):
            s = gen_speed(cli, g, ["compressible", "--ratio", str(r)])
            print("compressible --ratio %-5g  %.2f GB/s  (%.2fx chacha20)" % (r, s, s / rnd))
        s = gen_speed(cli, g, ["compressible", "--ratio", "3", "--dedup", "2"])
        print("compressible --ratio 3 --dedup 2  %.2f GB/s" % s)
        s = gen_speed(cli, g, ["random", "--dedup", "2"])
        print("random --dedup 2           %.2f GB/s" % s)

        # 4b. the same in process (no pipe, no stream buffer)
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        lib = os.path.join(os.path.dirname(os.path.dirname(cli)), "libtestdata", "libtestdata.a")
        exe = os.path.join(tmp, "bench_compressible_gen")
        built = False
        for extra in (["-lcrypto"], []):  # libcrypto when built with TD_WITH_OPENSSL
            if not built and shutil.which("cc") and os.path.exists(lib):
                built = subprocess.run(
                    ["cc", "-O2", "-I", os.path.join(root, "include"),
                     os.path.join(root, "tests", "bench", "bench_compressible_gen.c"), lib,
                     "-lsodium"] + extra + ["-lpthread", "-lm", "-o", exe],
                    stderr=subprocess.DEVNULL).returncode == 0
        if built:
            print("in process (td_fill, 1 MiB buffers, one thread, GB per CPU second, best of 5 x 256 MiB):")
            rnd = float(subprocess.run([exe, "random"], stdout=subprocess.PIPE,
                                       check=True).stdout)
            print("  random (chacha20)          %.2f GB/s" % rnd)
            for args in (["ratio=1.25"], ["ratio=2"], ["ratio=3"], ["ratio=4"], ["ratio=10"],
                         ["ratio=3", "dedup=2"]):
                s = float(subprocess.run([exe, "compressible"] + args, stdout=subprocess.PIPE,
                                         check=True).stdout)
                print("  compressible %-18s %.2f GB/s  (%.2fx chacha20)"
                      % (" ".join(args), s, s / rnd))

        # 5. dedup accuracy
        print("\n== 5. dedup: 4 KiB blocks, unique counted by SHA-1 (20,000 blocks)")
        nb = 20000
        for kind, extra in (("random", []), ("compressible", ["--ratio", "3"])):
            for d in (1.5, 2, 4.2):
                out = subprocess.run([cli, "gen", kind, str(nb * 4096), "--dedup", str(d),
                                      "--seed", "3"] + extra,
                                     stdout=subprocess.PIPE, check=True).stdout
                seen = set(hashlib.sha1(out[i:i + 4096]).digest()
                           for i in range(0, len(out), 4096))
                got = nb / len(seen)
                print("%-13s dedup %-4g -> %.4f (%+.2f%%)" % (kind, d, got, 100 * (got / d - 1)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
