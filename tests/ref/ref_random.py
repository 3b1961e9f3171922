"""Independent reference implementation of libtestdata's byte format.

Written from docs/format.md using only Python's standard library, so that the
C library's output can be checked against a second implementation.  Slow
(pure Python): meant for a few KiB at chosen offsets.

    python3 tests/ref/ref_random.py random 0 64 --seed 1 --algorithm chacha20 | xxd
    python3 tests/ref/ref_random.py --check path/to/testdata

--check compares ranges of zero and random (both algorithms, with dedup)
with the C implementation through the CLI (CTest ref.random).
"""
import argparse
import hashlib
import struct
import sys

MASK32 = 0xFFFFFFFF
MASK64 = 0xFFFFFFFFFFFFFFFF


def derive_key(domain: str, seed: int) -> bytes:
    """BLAKE2b-256 (no key) of the ASCII domain string then the seed as u64 LE."""
    return hashlib.blake2b(domain.encode() + struct.pack("<Q", seed), digest_size=32).digest()


def _rotl(v, n):
    return ((v << n) & MASK32) | (v >> (32 - n))


def chacha20_block(key: bytes, counter: int, nonce: bytes = b"\0" * 8) -> bytes:
    """Original ChaCha20 (Bernstein): 64-bit block counter in words 12-13,
    64-bit nonce in words 14-15."""
    c = [0x61707865, 0x3320646E, 0x79622D32, 0x6B206574]
    k = list(struct.unpack("<8I", key))
    n = list(struct.unpack("<2I", nonce))
    state = c + k + [counter & MASK32, counter >> 32] + n
    x = state[:]

    def qr(a, b, c_, d):
        x[a] = (x[a] + x[b]) & MASK32; x[d] = _rotl(x[d] ^ x[a], 16)
        x[c_] = (x[c_] + x[d]) & MASK32; x[b] = _rotl(x[b] ^ x[c_], 12)
        x[a] = (x[a] + x[b]) & MASK32; x[d] = _rotl(x[d] ^ x[a], 8)
        x[c_] = (x[c_] + x[d]) & MASK32; x[b] = _rotl(x[b] ^ x[c_], 7)

    for _ in range(10):
        qr(0, 4, 8, 12); qr(1, 5, 9, 13); qr(2, 6, 10, 14); qr(3, 7, 11, 15)
        qr(0, 5, 10, 15); qr(1, 6, 11, 12); qr(2, 7, 8, 13); qr(3, 4, 9, 14)
    return struct.pack("<16I", *[(x[i] + state[i]) & MASK32 for i in range(16)])


def random_chacha20(seed: int, offset: int, length: int) -> bytes:
    key = derive_key("libtestdata/random/chacha20/1", seed)
    first, last = offset // 64, (offset + length - 1) // 64
    data = b"".join(chacha20_block(key, b) for b in range(first, last + 1))
    return data[offset - first * 64:offset - first * 64 + length]


def random_fast(seed: int, offset: int, length: int) -> bytes:
    key = struct.unpack("<Q", derive_key("libtestdata/random/fast/1", seed)[:8])[0]
    out = bytearray()
    first, last = offset // 8, (offset + length - 1) // 8
    for i in range(first, last + 1):
        z = (key + (i + 1) * 0x9E3779B97F4A7C15) & MASK64          # SplitMix64
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        out += struct.pack("<Q", z ^ (z >> 31))
    return bytes(out[offset - first * 8:offset - first * 8 + length])


def generate(kind: str, seed: int, offset: int, length: int, algorithm: str = "chacha20") -> bytes:
    if length == 0:
        return b""
    if kind == "zero":
        return bytes(length)
    if kind == "random":
        return (random_fast if algorithm == "fast" else random_chacha20)(seed, offset, length)
    raise ValueError(f"the reference does not implement kind {kind!r}")


CASES = [("chacha20", 0, 0), ("chacha20", 1, 7), ("chacha20", 2**64 - 1, 2**38 - 64),
         ("chacha20", 3, 2**64 - 600), ("fast", 0, 0), ("fast", 2**64 - 1, 2**40 + 3),
         ("fast", 5, 2**64 - 600)]


def check(cli):
    import subprocess
    bad = 0
    for alg, seed, off in CASES:
        for kind in ("zero", "random"):
            args = [cli, "gen", kind, "500", "--seed", str(seed), "--offset", str(off)]
            if kind == "random":
                args += ["--algorithm", alg]
            got = subprocess.run(args, capture_output=True, check=True).stdout
            ok = got == generate(kind, seed, off, 500, alg)
            bad += not ok
            print(f"{kind} {alg} seed {seed} offset {off}: {'match' if ok else 'DIFFER'}")
    return 1 if bad else 0


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        sys.exit(check(sys.argv[2]))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kind")
    ap.add_argument("offset", type=int)
    ap.add_argument("length", type=int)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--algorithm", default="chacha20")
    a = ap.parse_args()
    sys.stdout.buffer.write(generate(a.kind, a.seed, a.offset, a.length, a.algorithm))


if __name__ == "__main__":
    main()
