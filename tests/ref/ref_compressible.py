#!/usr/bin/python3
"""Reference implementation of the compressible kind and the dedup layer,
written from docs/format.md only (slow, for cross-checking the C library).

    tests/ref/ref_compressible.py SEED RATIO OFFSET LEN [DEDUP [DEDUP_BLOCK]]
writes the bytes to stdout.  Compare with
    testdata gen compressible LEN --seed SEED --ratio RATIO --offset OFFSET
    tests/ref/ref_compressible.py --check path/to/testdata
compares a few ranges (with and without dedup) with the C implementation
through the CLI and exits non-zero on a difference (CTest ref.compressible).
"""
import hashlib
import re
import sys
import os

M64 = (1 << 64) - 1
P0 = 0xa0761d6478bd642f
P1 = 0xe7037ed1a0b428db
B = 16384
MIN_MATCH, MIN_DIST, MAX_RUNS = 8, 16, 4096


def wymix(a, b):
    t = a * b
    return ((t >> 64) ^ t) & M64


def derive(domain, seed):
    h = hashlib.blake2b(domain.encode() + seed.to_bytes(8, "little"), digest_size=32).digest()
    return int.from_bytes(h[:8], "little")


def table():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "libtestdata",
                        "compressible_table.h")
    return [tuple(int(x) for x in m.groups())
            for m in re.finditer(r"\{(\d+), (\d+), (\d+), (\d+)\}", open(path).read())]


def params(ratio):
    rq = int(ratio * 1024 + 0.5)  # llround for positive values
    t = table()
    if rq <= t[0][0]:
        return t[0][1:]
    k = next((i for i in range(1, len(t)) if rq <= t[i][0]), len(t) - 1)
    if rq >= t[k][0]:
        return t[k][1:]
    a, b = t[k - 1], t[k]
    num, den = rq - a[0], b[0] - a[0]
    return ((a[1] * (den - num) + b[1] * num) // den,
            (a[2] * (den - num) + b[2] * num) // den,
            a[3] if 2 * num < den else b[3])


def block(key, prm, bi):
    lit_mean, mm16, jbits = prm
    ml = max(lit_mean, 1)
    min16 = 16 * MIN_MATCH
    a16 = 3 * (mm16 - min16) if mm16 > min16 else 0
    s = wymix(key ^ ((bi * P1) & M64), (bi + P0) & M64)
    out = bytearray(B + 16)
    runs = []
    pos = 0

    def nxt():
        nonlocal s
        s = (s + P0) & M64
        return wymix(s, s ^ P1)

    while pos < B:
        r = nxt()
        lit = 1 + (((r & 0xffff) * ml) >> 16) + ((((r >> 16) & 0xffff) * ml) >> 16)
        lit = min(lit, B - pos)
        for k in range(0, lit, 8):
            out[pos + k:pos + k + 8] = nxt().to_bytes(8, "little")
        if len(runs) < MAX_RUNS:
            runs.append((pos, lit))
        pos += lit
        if pos >= B:
            break
        x = (r >> 32) & 0xffff
        if mm16 > min16:
            ln = MIN_MATCH + ((a16 * x * x) >> 36)
        else:
            if ((r >> 48) % min16) >= mm16:
                continue
            ln = MIN_MATCH
        r2 = nxt()
        nb = ((r2 & 0xff) * (jbits + 1)) >> 8
        j = ((r2 >> 8) & 0xffffffff) & ((1 << nb) - 1)
        n = len(runs)
        if j >= n:
            j %= n
        idx = n - 1 - j
        src = runs[idx][0] + (((r2 >> 32) * ((runs[idx][1] + 1) // 2)) >> 32)
        while pos - src < MIN_DIST and idx > 0:
            idx -= 1
            src = runs[idx][0]
        if pos - src < MIN_DIST:
            continue
        ln = min(ln, B - pos)
        for t in range(ln):
            out[pos + t] = out[src + t]
        pos += ln
    return bytes(out[:B])


def comp_bytes(key, prm, off, n):
    res = bytearray()
    while n:
        bi, at = divmod(off, B)
        k = min(B - at, n)
        res += block(key, prm, bi)[at:at + k]
        off += k
        n -= k
    return bytes(res)


def generate(seed, ratio, off, n, dedup=1.0, D=4096):
    """Bytes [off, off+n) of compressible (seed, ratio) with dedup (dedup, D)."""
    key = derive("libtestdata/compressible/1", seed)
    prm = params(ratio)
    if dedup == 1.0:
        return comp_bytes(key, prm, off, n)
    dq = int(dedup * 65536 + 0.5)
    dkey = derive("libtestdata/dedup/1", seed)

    def U(m):
        return (m // dq) * 65536 + ((m % dq) * 65536 + dq - 1) // dq

    # Kind blocks of B bytes hold m dedup blocks; a duplicate repeats the
    # first dedup block of an earlier kind block (format 2).
    m = B // D if B > D else 1
    res = bytearray()
    while n:
        i, at = divmod(off, D)
        k = min(D - at, n)
        if U(i + 1) > U(i):
            src = U(i)
        else:
            started = -(-U(i) // m)
            src = m * (wymix(dkey ^ i, (((i + 1) * P0) & M64) ^ P1) % started)
        res += comp_bytes(key, prm, src * D + at, k)
        off += k
        n -= k
    return bytes(res)


CASES = [  # seed, ratio, offset, length, dedup, dedup_block
    (0, 3.0, 0, 70000, 1.0, 4096),
    (7, 1.5, (1 << 40) + 12345, 40000, 1.0, 4096),
    (2**64 - 1, 10.0, 16384 * 5 - 3, 20000, 1.0, 4096),
    (3, 2.0, 1000, 50000, 2.5, 4096),
    (5, 3.0, 12345, 40000, 4.0, 512),
    (9, 1.25, 0, 40000, 3.0, 32768),
]


def check(cli):
    import subprocess
    bad = 0
    for seed, ratio, off, n, dedup, d in CASES:
        args = [cli, "gen", "compressible", str(n), "--seed", str(seed), "--ratio", str(ratio),
                "--offset", str(off), "--dedup", str(dedup), "--dedup-block", str(d)]
        got = subprocess.run(args, capture_output=True, check=True).stdout
        want = generate(seed, ratio, off, n, dedup, d)
        ok = got == want
        bad += not ok
        print(f"seed {seed} ratio {ratio} offset {off} len {n} dedup {dedup}/{d}: "
              f"{'match' if ok else 'DIFFER'}")
    return 1 if bad else 0


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        sys.exit(check(sys.argv[2]))
    seed, ratio, off, n = int(sys.argv[1], 0), float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    dedup = float(sys.argv[5]) if len(sys.argv) > 5 else 1.0
    D = int(sys.argv[6]) if len(sys.argv) > 6 else 4096
    sys.stdout.buffer.write(generate(seed, ratio, off, n, dedup, D))


if __name__ == "__main__":
    main()
