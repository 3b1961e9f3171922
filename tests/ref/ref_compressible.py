#!/usr/bin/python3
"""Reference implementation of the compressible kind (format 4) and the dedup
layer, written from docs/format.md only (slow, for cross-checking the C
library).

    tests/ref/ref_compressible.py SEED RATIO OFFSET LEN [DEDUP [DEDUP_BLOCK [COMPRESS_BLOCK]]]
writes the bytes to stdout;
    tests/ref/ref_compressible.py --check path/to/testdata
compares a set of cases (with and without dedup and compress_block) with
the C implementation through the CLI and exits non-zero on a difference
(CTest ref.compressible).  Compare with
    testdata gen compressible LEN --seed SEED --ratio RATIO --offset OFFSET \\
        [--dedup D --dedup-block N] [--compress-block B]
"""
import hashlib
import os
import re
import sys

M64 = (1 << 64) - 1
P0 = 0xa0761d6478bd642f
P1 = 0xe7037ed1a0b428db
MIN_MATCH, MIN_DIST, MAX_RUNS = 8, 16, 4096


def wymix(a, b):
    t = a * b
    return ((t >> 64) ^ t) & M64


class Wy:
    def __init__(self, s):
        self.s = s

    def next(self):
        self.s = (self.s + P0) & M64
        return wymix(self.s, self.s ^ P1)


def derive(domain, seed):
    h = hashlib.blake2b(domain.encode() + seed.to_bytes(8, "little"), digest_size=32).digest()
    return int.from_bytes(h[:8], "little")


def tables():
    """piece -> (G, rows) from libtestdata/compressible_table.h"""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "libtestdata",
                        "compressible_table.h")
    text = open(path).read()
    rows = {}
    for m in re.finditer(r"td__comp_row td__comp_rows_(\w+)\[\] = \{(.*?)\};", text, re.S):
        rows[m.group(1)] = [tuple(int(x) for x in r.groups())
                            for r in re.finditer(r"\{(\d+), (\d+), (\d+), (\d+), (\d+)\}",
                                                 m.group(2))]
    out = {}
    for m in re.finditer(r"\{(\d+), \{(\d+), sizeof td__comp_rows_(\w+)", text):
        out[int(m.group(1))] = (int(m.group(2)), rows[m.group(3)])
    return out


def params(ratio, cb):
    t = tables()
    G, rows = t[cb] if cb in t else t[0]
    rq = int(ratio * 1024 + 0.5)  # llround for positive values
    if rq <= rows[0][0]:
        return G, rows[0][1:]
    k = next((i for i in range(1, len(rows)) if rq <= rows[i][0]), len(rows) - 1)
    if rq >= rows[k][0]:
        return G, rows[k][1:]
    a, b = rows[k - 1], rows[k]
    num, den = rq - a[0], b[0] - a[0]
    lerp = [(a[i] * (den - num) + b[i] * num) // den for i in range(5)]
    return G, (lerp[1], lerp[2], a[3] if 2 * num < den else b[3], lerp[4])


def gmap(i):
    c = i & 7
    return (c << 5) | ((13 * (i >> 3) + 7 * c) & 31)


EPOCH = 1 << 21  # bytes of stream per step set


def block(key, lkey, G, prm, bi):
    lit_mean, mm16, jbits, succ = prm
    e = bi * G // EPOCH
    mask = wymix(lkey ^ ((e * P0) & M64), (e + P1) & M64) & 0xff
    step = [gmap((u * succ) >> 8) ^ mask for u in range(256)]
    sset = [gmap(i) ^ mask for i in range(succ)]
    inset = set(sset)
    ml = max(lit_mean, 1)
    min16 = 16 * MIN_MATCH
    a16 = 3 * (mm16 - min16) if mm16 > min16 else 0
    tok = Wy(wymix(key ^ ((bi * P1) & M64), (bi + P0) & M64))
    lw = Wy(wymix(lkey ^ ((bi * P1) & M64), (bi + P0) & M64))
    pool = bytearray()
    prev = 0

    def pool_to(n):
        nonlocal prev
        while len(pool) < n:
            w = lw.next()
            for k in range(8):
                u = (w >> (8 * k)) & 0xff
                if succ >= 256:
                    pool.append(u)
                else:
                    prev ^= step[u]
                    pool.append(prev)

    out = bytearray(G)
    runs = []
    pos = pp = 0
    while pos < G:
        r = tok.next()
        lit = 1 + (((r & 0xffff) * ml) >> 16) + ((((r >> 16) & 0xffff) * ml) >> 16)
        lit = min(lit, G - pos)
        pool_to(pp + lit)
        # the chain goes on from the byte before the run (a copy's end)
        m = out[pos - 1] ^ (pool[pp - 1] if pp else 0) if pos > 0 and succ < 256 else 0
        out[pos:pos + lit] = bytes(b ^ m for b in pool[pp:pp + lit])
        pp += lit
        if len(runs) < MAX_RUNS:
            runs.append((pos, lit))
        pos += lit
        if pos >= G:
            break
        x = (r >> 32) & 0xffff
        if mm16 > min16:
            ln = MIN_MATCH + ((a16 * x * x) >> 36)
        else:
            if ((r >> 48) % min16) >= mm16:
                continue
            ln = MIN_MATCH
        r2 = tok.next()
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
        if succ < 256 and pos >= 2:
            # the run's last byte: a step from both its neighbours
            d = out[pos - 2] ^ out[src]
            for st in sset:
                if st ^ d in inset:
                    out[pos - 1] = out[pos - 2] ^ st
                    break
        ln = min(ln, G - pos)
        for t in range(ln):
            out[pos + t] = out[src + t]
        pos += ln
    return bytes(out)


# The kind block of the stream layer (and of dedup): G-byte generator
# blocks are grouped into 16 KiB kind blocks whatever compress_block is.
KIND_BLOCK = 16384


def comp_bytes(seed, ratio, cb, off, n):
    G, prm = params(ratio, cb)
    succ = min(max(prm[3], 8), 256)
    prm = prm[:3] + (succ,)
    key = derive("libtestdata/compressible/2", seed)
    lkey = derive("libtestdata/compressible/2/literals", seed)
    res = bytearray()
    cache = {}
    while n:
        bi, at = divmod(off, G)
        k = min(G - at, n)
        if bi not in cache:
            cache.clear()
            cache[bi] = block(key, lkey, G, prm, bi)
        res += cache[bi][at:at + k]
        off += k
        n -= k
    return bytes(res)


def check(cli):
    """Compare with the C library through its CLI; exit status 1 on a mismatch."""
    import subprocess
    cases = []
    for seed in (0, 18446744073709551615):
        for ratio in (1, 1.1, 2.5, 3, 10, 100, 1000):
            for off in (0, (1 << 40) + 12345):
                for cb in (0, 512, 4096, 65536):
                    cases.append((seed, ratio, off, 40000, 1.0, 4096, cb))
    cases += [(7, 3, 5000, 60000, 2.0, 4096, 0), (7, 4, 123, 50000, 3.0, 1024, 2048),
              (3, 2.0, 1000, 50000, 2.5, 4096, 0), (5, 3.0, 12345, 40000, 4.0, 512, 1024),
              (9, 1.25, 0, 40000, 3.0, 32768, 0), (9, 5, 70000, 70000, 3.0, 32768, 8192)]
    bad = 0
    for seed, ratio, off, n, dd, D, cb in cases:
        args = [cli, "gen", "compressible", str(n), "--seed", str(seed), "--ratio", str(ratio),
                "--offset", str(off)]
        if dd != 1.0:
            args += ["--dedup", str(dd), "--dedup-block", str(D)]
        if cb:
            args += ["--compress-block", str(cb)]
        got = subprocess.run(args, check=True, stdout=subprocess.PIPE).stdout
        if dd == 1.0:
            want = comp_bytes(seed, ratio, cb, off, n)
        else:
            want = dedup_bytes(seed, ratio, cb, off, n, dd, D)
        if got != want:
            bad += 1
            print("MISMATCH", args, file=sys.stderr)
    print("%d of %d cases match" % (len(cases) - bad, len(cases)))
    sys.exit(1 if bad else 0)


def dedup_bytes(seed, ratio, cb, off, n, dedup, D):
    dq = int(dedup * 65536 + 0.5)
    dkey = derive("libtestdata/dedup/1", seed)

    def U(m):
        return (m // dq) * 65536 + ((m % dq) * 65536 + dq - 1) // dq

    # Kind blocks of KIND_BLOCK bytes hold m dedup blocks; a duplicate
    # repeats the first dedup block of an earlier kind block (format 2).
    m = KIND_BLOCK // D if KIND_BLOCK > D else 1
    res = bytearray()
    while n:
        i, at = divmod(off, D)
        k = min(D - at, n)
        if U(i + 1) > U(i):
            src = U(i)
        else:
            started = -(-U(i) // m)
            src = m * (wymix(dkey ^ i, (((i + 1) * P0) & M64) ^ P1) % started)
        res += comp_bytes(seed, ratio, cb, src * D + at, k)
        off += k
        n -= k
    return bytes(res)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        check(sys.argv[2])
    seed, ratio, off, n = int(sys.argv[1], 0), float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    dedup = float(sys.argv[5]) if len(sys.argv) > 5 else 1.0
    D = int(sys.argv[6]) if len(sys.argv) > 6 else 4096
    cb = int(sys.argv[7]) if len(sys.argv) > 7 else 0
    if dedup == 1.0:
        sys.stdout.buffer.write(comp_bytes(seed, ratio, cb, off, n))
    else:
        sys.stdout.buffer.write(dedup_bytes(seed, ratio, cb, off, n, dedup, D))


if __name__ == "__main__":
    main()
