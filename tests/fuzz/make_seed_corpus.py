#!/usr/bin/env python3
"""Write the hand-made seed inputs of tests/fuzz/corpus/ (run from anywhere).

The layouts follow the input formats described at the top of fuzz_parse.c,
fuzz_stream.c and fuzz_analyze.c.  Inputs found by fuzzing go into corpus/ as well
(minimised: `fuzz_X -merge=1 corpus/fuzz_X NEW_DIR`), failures that were
fixed into regressions/.
"""
import hashlib
import pathlib
import struct

HERE = pathlib.Path(__file__).resolve().parent


def write(target, name, data):
    d = HERE / "corpus" / target
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_bytes(data)


def strs(kind, *items):
    return bytes([kind & 0xFF]) + b"\0".join(s.encode() for s in items)


PARSE = {
    "seed_dec": strs(1, "seed", "42"),
    "seed_hex": strs(1, "seed", "0xdeadBEEF", "seed", "18446744073709551615"),
    "alg_threads": strs(1, "algorithm", "fast", "threads", "4"),
    "dedup": strs(1, "dedup_block", "64K", "dedup", "1.5"),
    "ratio": strs(2, "ratio", "3", "ratio", "nan"),
    "sizes": strs(0, "4KiB", "1EB", "inf", "16E", "1kB"),
    "kinds": strs(1, "random", "zero", "unbounded"),
    "bad_kind": strs(-1, "seed", "1"),
    "junk": strs(3, " 1", "\t-1", "010", "0x", "1e309"),
}

U8 = lambda v: struct.pack("<B", v & 0xFF)
U16 = lambda v: struct.pack("<H", v)
U24 = lambda v: struct.pack("<I", v)[:3]
U64 = lambda v: struct.pack("<Q", v)

# Operations: byte % 9 -> 0-2 read, 3-4 next, 5-6 seek, 7 fill, 8 reopen.
READ_SMALL = lambda n: U8(0) + U8(0) + U8(n)
READ_MID = lambda n: U8(0) + U8(1) + U16(n)
READ_BIG = lambda n: U8(0) + U8(2) + U24(n)
READ_HUGE = U8(0) + U8(4)  # SIZE_MAX cap when <= 1 MiB is left
NEXT = U8(3)
SEEK_REL = lambda n: U8(5) + U8(3) + U24(n)
SEEK_END = U8(5) + U8(1)
SEEK_PAST = U8(5) + U8(2) + U16(1)
SEEK_NEAR_END = lambda n: U8(5) + U8(5) + U24(n)
FILL = lambda off, n, cut: U8(7) + U8(0) + struct.pack("<Q", off)[:6] + U24(n) + U24(cut)


def header(kind, seed, threads, options=(), size_mode=0, size=b""):
    how = 0
    vals = b""
    for idx, v in options:  # (index into kind_options, value index)
        how |= 1 << idx
    for idx, v in sorted(options):
        vals += U8(v)
    return U8(kind) + U64(seed) + U8(threads) + U8(how) + vals + U8(size_mode) + size


STREAM = {
    "zero_small": header(0, 1, 1, size_mode=0, size=U24(5000))
    + READ_SMALL(100) + NEXT + SEEK_END + NEXT + READ_SMALL(1),
    "random_chacha_mixed": header(1, 7, 1, [(0, 0)], 0, U24(3 << 20))
    + READ_MID(4000) + NEXT + SEEK_REL(12345) + READ_BIG(600000) + NEXT + READ_HUGE,
    "random_fast_threads": header(1, 9, 4, [(0, 1)], 0, U24(0xFFFFFF))
    + READ_BIG(0x8FFFF0) + NEXT + NEXT + SEEK_PAST + READ_MID(60000),
    "random_near_2_64": header(1, 2**64 - 1, 2, [(0, 0)], 1, U24(1000))
    + SEEK_NEAR_END(300000) + READ_BIG(400000) + NEXT + READ_SMALL(3),
    "random_threads0_2_40": header(1, 3, 0, [(0, 1)], 2, U24(77))
    + SEEK_REL(9 << 20) + READ_BIG(2 << 20) + FILL(2**40 - 5, 1 << 20, 777),
    "fill_only": header(1, 5, 3, [], 0, U24(0)) + FILL(123, 700000, 333) + READ_SMALL(1),
    "raw_options": U8(1) + U64(1) + U8(1) + U8(0x80) + struct.pack("<d", float("nan"))
    + U8(1) + struct.pack("<d", 0.5) + struct.pack("<I", 3) + U8(7) + U8(0) + U24(10),
}



def analyze(flags, split_seed=0, expand=0, budget=0, payload=b""):
    return bytes([flags, split_seed & 0xFF, split_seed >> 8, expand, budget]) + payload


def prng(n, seed):
    out = b""
    while len(out) < n:
        out += hashlib.sha256(seed + len(out).to_bytes(8, "little")).digest()
    return out[:n]


TEXT = b"the quick brown fox jumps over the lazy dog\n"
ANALYZE = {
    "empty": b"",
    "header_only": analyze(0),
    "one_byte": analyze(0, 1, payload=b"x"),
    "two_values": analyze(1, 2, payload=b"ab" * 200),
    "text": analyze(2, 3, payload=TEXT * 20),
    "all_values": analyze(0x13, 4, payload=bytes(range(256)) * 3),
    "random": analyze(0x51, 5, payload=prng(1000, b"r")),
    "small_budget": analyze(0x08, 6, budget=0, payload=prng(700, b"s")),
    # expanded: several 1 MiB blocks, sampled (budget 1 or 2 blocks)
    "expand_sampled": analyze(0x0C, 7, expand=17, budget=0, payload=TEXT * 3),
    "expand_threads": analyze(0x0D, 8, expand=23, budget=1, payload=prng(333, b"e")),
    "expand_fits": analyze(0x0E, 9, expand=15, budget=1, payload=bytes([0, 1, 2, 3]) * 9),
}

for name, data in ANALYZE.items():
    write("fuzz_analyze", name, data)
for name, data in PARSE.items():
    write("fuzz_parse", name, data)
for name, data in STREAM.items():
    write("fuzz_stream", name, data)
