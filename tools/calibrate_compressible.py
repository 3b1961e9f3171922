#!/usr/bin/python3
"""Calibrate the compressible kind: write libtestdata/compressible_table.h.

For each ratio R of the grid, the literal-run mean and jbits are fixed by a
schedule below and the mean match length is searched (regula falsi on a log
scale) until the compressors agree with R in the sense

    sqrt(min(ratios) * max(ratios)) == R

over gzip -6, zstd -3, lz4 -1 and xz -6 (for R <= 20).  Above 20 the
compressors with a match-length cap (gzip 258, lz4, xz 273) saturate, so only
zstd -3 and xz -6 (R <= 50) or zstd -3 alone (R > 50) are used.

Usage (from the source tree, after building build-comp):
    /usr/bin/python3 tools/calibrate_compressible.py [--build build-comp] [--mib 8]
        [--refine libtestdata/compressible_table.h --rows 1.25,1.5,...]
The committed table: a full run with --mib 8, then the rows up to 20 refined
with --mib 32 --refine (larger samples, less sampling noise).
Needs cc, libsodium, gzip, zstd, lz4, xz.  Stdlib only.
"""
import argparse
import math
import os
import subprocess
import sys
import tempfile

# (R, literal-run mean, jbits)
SCHEDULE = [
    (1.0, 192, 6), (1.1, 192, 6), (1.25, 96, 6), (1.5, 64, 6), (1.75, 48, 6),
    (2.0, 48, 6), (2.5, 48, 6), (3.0, 48, 6), (4.0, 44, 6), (5.0, 40, 6),
    (6.0, 36, 6), (8.0, 34, 6), (10.0, 32, 6), (15.0, 28, 6), (20.0, 24, 6),
    (30.0, 20, 6), (50.0, 16, 6), (100.0, 8, 6), (200.0, 4, 6), (500.0, 2, 6),
    (1000.0, 1, 6),
]

COMPRESSORS = {
    "gzip": ["gzip", "-6", "-c"],
    "zstd": ["zstd", "-3", "-c", "-q"],
    "lz4": ["lz4", "-1", "-c", "-q"],
    "xz": ["xz", "-6", "-T1", "-c"],
}


def which(r):
    if r <= 20:
        return ["gzip", "zstd", "lz4", "xz"]
    if r <= 50:
        return ["zstd", "xz"]
    return ["zstd"]


SEED = 777  # sample seed (the benchmark and tests use other seeds)


def ratios(gen, ml, mm16, jb, size, names):
    data = subprocess.run([gen, str(ml), str(mm16), str(jb), str(size), str(SEED)],
                          check=True, stdout=subprocess.PIPE).stdout
    out = {}
    for n in names:
        c = subprocess.run(COMPRESSORS[n], input=data, check=True,
                           stdout=subprocess.PIPE).stdout
        out[n] = len(data) / len(c)
    return out


def score(rs):
    return math.sqrt(min(rs.values()) * max(rs.values()))


def calibrate(gen, r, ml, jb, size):
    names = which(r)
    if r == 1.0:
        return 0, ratios(gen, ml, 0, jb, size, names)
    guess = ((r - 1) * (ml + 3) + 3) * 16
    lo, hi = 0.0, None
    flo, fhi = math.log(score(ratios(gen, ml, 0, jb, size, names)) / r), None
    x = guess
    best = None
    for _ in range(14):
        xi = max(1, int(round(x)))
        rs = ratios(gen, ml, xi, jb, size, names)
        f = math.log(score(rs) / r)
        if best is None or abs(f) < abs(best[2]):
            best = (xi, rs, f)
        if abs(f) < 0.002:
            break
        if f < 0:
            lo, flo = x, f
        else:
            hi, fhi = x, f
        if hi is None:
            x = x * 2 if f < -0.3 else x * (1 - f * 1.5)
            if x > 16 * 16384 * 3:
                break
            continue
        x = lo + (hi - lo) * (-flo) / (fhi - flo)
        if hi - lo < 1:
            break
    return best[0], best[1]


def refine(gen, r, ml, jb, size, x0):
    """Secant search started from a previous table value."""
    names = which(r)
    rs0 = ratios(gen, ml, x0, jb, size, names)
    f0 = math.log(score(rs0) / r)
    best = (x0, rs0, f0)
    x1 = max(1, int(round(x0 * math.exp(-f0 / 0.8)))) if abs(f0) >= 0.002 else x0
    for _ in range(5):
        if abs(best[2]) < 0.002 or x1 == x0:
            break
        rs1 = ratios(gen, ml, x1, jb, size, names)
        f1 = math.log(score(rs1) / r)
        if abs(f1) < abs(best[2]):
            best = (x1, rs1, f1)
        if f1 == f0:
            break
        x2 = max(1, int(round(x1 - f1 * (x1 - x0) / (f1 - f0))))
        x0, f0, x1 = x1, f1, x2
    return best[0], best[1]


def read_table(path):
    rows = {}
    for line in open(path):
        line = line.strip()
        if line.startswith("{") and line.endswith("},"):
            v = [int(t) for t in line[1:-2].split(",")]
            rows[v[0]] = v
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build-comp")
    ap.add_argument("--mib", type=int, default=4)
    ap.add_argument("--out", default="libtestdata/compressible_table.h")
    ap.add_argument("--refine", metavar="TABLE_H",
                    help="start from this table's values (same schedule) and refine by secant")
    ap.add_argument("--rows", help="comma-separated ratios to (re)calibrate; others are"
                    " copied from --refine")
    a = ap.parse_args()
    old = read_table(a.refine) if a.refine else {}
    only = set(float(x) for x in a.rows.split(",")) if a.rows else None
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    tmp = tempfile.mkdtemp()
    gen = os.path.join(tmp, "comp_calgen")
    for extra in (["-lcrypto"], []):  # libcrypto when built with TD_WITH_OPENSSL
        rc = subprocess.run(["cc", "-O2", "-I", os.path.join(root, "include"),
                             "-I", os.path.join(root, "libtestdata"),
                             os.path.join(root, "tools", "comp_calgen.c"),
                             os.path.join(root, a.build, "libtestdata", "libtestdata.a"),
                             "-lsodium"] + extra + ["-lpthread", "-lm", "-o", gen]).returncode
        if rc == 0:
            break
    else:
        sys.exit("cannot build comp_calgen")
    size = a.mib << 20
    rows = []
    for r, ml, jb in SCHEDULE:
        prev = old.get(int(round(r * 1024)))
        if only is not None and r not in only and prev:
            rows.append(tuple(prev))
            continue
        if prev and prev[2] > 0:
            # A new literal-run mean scales the match mean about as (ml + 3).
            x0 = int(round(prev[2] * (ml + 3) / (prev[1] + 3)))
            mm16, rs = refine(gen, r, ml, jb, size, x0)
        else:
            mm16, rs = calibrate(gen, r, ml, jb, size)
        rows.append((int(round(r * 1024)), ml, mm16, jb))
        print("R=%-7g ml=%-4d mm16=%-7d " % (r, ml, mm16) +
              " ".join("%s=%.3f" % kv for kv in rs.items()), file=sys.stderr, flush=True)
    with open(os.path.join(root, a.out), "w") as f:
        f.write("/* Generated by tools/calibrate_compressible.py (%d MiB samples); do not edit.\n"
                " * Rows: {ratio * 1024, literal-run mean, match-length mean * 16, jbits}. */\n"
                % a.mib)
        f.write("#define TD_COMP_TABLE_ROWS %du\n" % len(rows))
        f.write("static const td__comp_row td__comp_table[TD_COMP_TABLE_ROWS] = {\n")
        for row in rows:
            f.write("    {%d, %d, %d, %d},\n" % row)
        f.write("};\n")


if __name__ == "__main__":
    main()
