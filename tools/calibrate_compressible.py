#!/usr/bin/python3
"""Calibrate the compressible kind: write libtestdata/compressible_table.h.

The generator (libtestdata/gen_compressible.c) has four shape parameters per
ratio: the literal-run mean, the match-length mean, jbits (how far back copies
reach) and succ (the step-set size of the literal chain; 256 = uniform).  For
every block class and every ratio R of the schedule this script tries a small
grid of (literal mean, jbits, succ), solves the match mean for each so that
the codecs' centre is R, and keeps the candidate whose worst codec is best:

    score = (max(1, worst main-four |log(ratio_c / R)| / log(1 + tol_c)),
             worst codec |log(ratio_c / R)| / log(1 + tol_c))

Codecs and tolerances (all in process, see CODECS below):
  stream class (compress_block not set, or >= 32 KiB):
      gzip -6, zstd -3, lz4 -1, xz -6 (tol 3%); gzip -1, gzip -9, zstd -1,
      lz4 -9, bzip2 -9, brotli -5, snappy (tol 5%) for R <= 10;
      gzip -6, zstd -3, lz4 -1, xz -6 (tol 5%) above 10.
  piece classes B = 512 .. 16 KiB: the data cut into B-aligned B-byte pieces,
      each compressed on its own as a file system does: zstd -3 (one frame per
      piece, no checksum), lz4 -1 (LZ4 block API), gzip -6 as raw deflate
      (tol 5% each; a missed main-four stream target is not scored).
Candidates are ranked lexicographically: first by how far the worst of the
main four is outside its tolerance (1.00 = inside), then by the worst codec
in units of its tolerance (<= 1: every codec inside).  The match mean is
solved so that the best centre for that ranking sits at R.

Usage (from the source tree, after building `build`):
    /usr/bin/python3 tools/calibrate_compressible.py [--build build] [--mib 2]
        [--classes stream,512,...] [--ratios 3,10] [--probe] [--out FILE]
        [--replace-hand-set]
    /usr/bin/python3 tools/calibrate_compressible.py --check [--mib 32]
        [--classes stream] [--ratios 2,3] [--out FILE]
Re-running it with the same arguments gives the same table (fixed seeds).

Hand-set rows.  Some entries of the committed table were not written by this
script but set by hand from 32 MiB measurements (HAND_SET below: format 4's
succ values of the stream rows 2 .. 10, and their match means at 2, 4, 6 and
10).  A calibration run keeps those rows as they are, unless
--replace-hand-set is given, and the table's header lists them.

--check measures the committed table instead of writing one: every selected
row, with its own parameters, on --mib MiB (default 32: xz -6 needs long
streams, its 8 MiB window finds more of the chain the more it holds), under
the codecs of the row's targets, whole-stream as bench_compressible.py
section 1 measures them (and xz -6 also after its first 8 MiB, as a
calibration run scores it).  It prints each codec's error against R, the
row's verdict (MAIN-MISS when one of the main four is outside its
tolerance, else how many others are), and exits 1 when a hand-set row has a
MAIN-MISS.  The stream class at 32 MiB takes 5-10 minutes of one core (the
hand-set rows about 2.5); it is not run by CI.
Needs cc, libsodium (and libcrypto when built with OpenSSL), and the Python
modules zstandard, lz4, brotli, snappy (Debian: python3-zstandard python3-lz4
python3-brotli python3-snappy); zlib, bz2 and lzma are in the standard library.
"""
import argparse
import bz2
import lzma
import math
import os
import subprocess
import sys
import tempfile
import time
import zlib

import brotli
import lz4.block
import lz4.frame
import snappy
import zstandard

SEED = 777  # sample seed (benchmark and tests use other seeds)

# Ratios of the tables (ratio 1 and 1000 are the ends).
SCHEDULE = [1.0, 1.1, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 15.0, 20.0,
            30.0, 50.0, 100.0, 200.0, 500.0, 1000.0]
CLASSES = ["stream", "512", "1024", "2048", "4096", "8192", "16384"]

# Entries set by hand (format 4, from 32 MiB measurements; docs/format.md,
# "Changes from version 3"): class -> {ratio * 1024: fields}.  The succ values
# are not in succ_candidates, so a calibration run could not find them.
HAND_SET = {
    "stream": {2048: ("match_mean16", "succ"), 2560: ("succ",), 3072: ("succ",),
               4096: ("match_mean16", "succ"), 5120: ("succ",),
               6144: ("match_mean16", "succ"), 8192: ("succ",),
               10240: ("match_mean16", "succ")},
}
CHECK_COMMAND = "/usr/bin/python3 tools/calibrate_compressible.py --check"


def _gz(level, wbits):
    def f(d):
        c = zlib.compressobj(level, zlib.DEFLATED, wbits)
        return c.compress(d) + c.flush()
    return f


_ZC = {lv: zstandard.ZstdCompressor(level=lv, write_checksum=False) for lv in (1, 3, 19)}

CODECS = {
    "gzip-1": _gz(1, 31), "gzip-6": _gz(6, 31), "gzip-9": _gz(9, 31),
    "zstd-1": _ZC[1].compress, "zstd-3": _ZC[3].compress, "zstd-19": _ZC[19].compress,
    "lz4-1": lambda d: lz4.frame.compress(d, compression_level=0, block_linked=False,
                                          block_size=lz4.frame.BLOCKSIZE_MAX4MB),
    "lz4-9": lambda d: lz4.frame.compress(d, compression_level=9, block_linked=False,
                                          block_size=lz4.frame.BLOCKSIZE_MAX4MB),
    "xz-6": lambda d: lzma.compress(d, preset=6),
    "bzip2-9": lambda d: bz2.compress(d, 9),
    "brotli-5": lambda d: brotli.compress(d, quality=5),
    "brotli-11": lambda d: brotli.compress(d, quality=11),
    "snappy": snappy.compress,
}
# Per-piece compressors, as file systems call them.
PIECE = {
    "zstd-3": _ZC[3].compress,
    "lz4-1": lambda d: lz4.block.compress(d, mode="default", store_size=False),
    "gzip-6": _gz(6, -15),
}
MAIN = ["gzip-6", "zstd-3", "lz4-1", "xz-6"]
OTHERS = ["gzip-1", "gzip-9", "zstd-1", "lz4-9", "bzip2-9", "brotli-5", "snappy"]


def targets(cls, r):
    """codec -> tolerance for class cls at ratio r (names 'p:...' are per piece)"""
    if cls != "stream":
        return {"p:" + c: 0.05 for c in PIECE}
    if r <= 10:
        t = {c: 0.03 for c in MAIN}
        t.update({c: 0.05 for c in OTHERS})
        return t
    return {c: 0.05 for c in MAIN}


XZ_WARM = 8 << 20  # xz -6's dictionary


def measure(data, names, piece):
    out = {}
    for n in names:
        if n == "xz-6" and len(data) > XZ_WARM:
            # xz's steady state: the bytes after its dictionary has filled
            # (long files), not a cold start.  The literal chain makes
            # 2-3-byte matches a little likelier, and xz finds more of them
            # the more history its 8 MiB window holds.
            a = len(CODECS[n](data[:XZ_WARM]))
            out[n] = (len(data) - XZ_WARM) / (len(CODECS[n](data)) - a)
        elif n.startswith("p:"):
            f = PIECE[n[2:]]
            tot = sum(len(f(data[i:i + piece])) for i in range(0, len(data), piece))
            out[n] = len(data) / tot
        else:
            out[n] = len(data) / len(CODECS[n](data))
    return out


def score_at(rs, tol, c, hard=MAIN):
    """Lexicographic badness at log centre c: (how far the worst hard
    (main-four) codec is beyond its tolerance, the worst codec in units of
    its tolerance).  The main four are kept inside first; the others are
    then as close as they can be."""
    main = max([abs(math.log(r) - c) / math.log(1 + tol[k]) for k, r in rs.items() if k in hard]
               or [0.0])
    worst = max(abs(math.log(r) - c) / math.log(1 + tol[k]) for k, r in rs.items())
    return (round(max(main, 1.0), 2), worst)


def centre_score(rs, tol):
    """(log centre, score): the centre minimising score_at (dense scan)."""
    xs = [math.log(r) for r in rs.values()]
    lo, hi = min(xs), max(xs)
    if hi - lo < 1e-9:
        return lo, score_at(rs, tol, lo)
    best = None
    for i in range(801):
        c = lo + (hi - lo) * i / 800
        s = score_at(rs, tol, c)
        if best is None or s < best[1]:
            best = (c, s)
    return best


class Gen:
    def __init__(self, root, build):
        self.tmp = tempfile.mkdtemp()
        self.exe = os.path.join(self.tmp, "comp_calgen")
        for extra in (["-lcrypto"], []):  # libcrypto when built with TD_WITH_OPENSSL
            rc = subprocess.run(["cc", "-O2", "-I", os.path.join(root, "include"),
                                 "-I", os.path.join(root, "libtestdata"),
                                 os.path.join(root, "tools", "comp_calgen.c"),
                                 os.path.join(root, build, "libtestdata", "libtestdata.a"),
                                 "-lsodium"] + extra +
                                ["-lzstd", "-llz4", "-llzma", "-lz", "-lpthread", "-lm", "-o", self.exe],
                                stderr=subprocess.DEVNULL).returncode
            if rc == 0:
                break
        else:
            sys.exit("cannot build comp_calgen (build the library first: --build)")

    def __call__(self, G, ml, mm16, jb, succ, size, seed=SEED):
        return subprocess.run([self.exe, str(G), str(ml), str(mm16), str(jb), str(succ),
                               str(size), str(seed)], check=True, stdout=subprocess.PIPE).stdout


def class_block(cls):
    return 16384 if cls == "stream" else min(int(cls), 16384)


def lit_candidates(cls, r):
    G = class_block(cls)
    if r < 1.2:
        lits = [24, 32, 64, 128, 192]
    elif r < 1.4:
        lits = [24, 32, 48, 96]
    elif r < 1.6:
        lits = [24, 32, 48, 64]
    elif r < 3.5:
        lits = [32, 48, 72]
    else:
        base = (40 if r < 5.5 else 34 if r < 9 else 28 if r < 18 else 20 if r < 40 else 12
                if r < 150 else 4 if r < 300 else 2 if r < 700 else 1)
        lits = sorted(set(max(1, int(round(base * f))) for f in (0.67, 1.0, 1.5)))
    return [l for l in lits if l * 8 <= G] or [max(1, G // 16)]


def succ_candidates(cls, r):
    if cls != "stream" or r > 10:
        return [256]
    return ([256, 192, 160, 128, 96] if r < 1.6 else [256, 128, 96, 64, 48] if r < 2.5
            else [256, 64, 48, 40, 32] if r < 4.5 else [256, 48, 40, 32, 24])


def jbits_candidates(cls, r):
    return ([3, 6, 9] if r > 10 else [6, 9]) if class_block(cls) >= 4096 else [4, 6]


def solve(gen, cls, r, ml, jb, succ, size, tol, x0=None, it=7):
    """Secant on log(centre / r) over log(match_mean16 - 128); returns the best point."""
    G = class_block(cls)
    piece = int(cls) if cls != "stream" else 0
    names = list(tol)
    pts = []

    def f(x):
        mm16 = 128 + max(0, int(round(math.exp(x))))
        rs = measure(gen(G, ml, mm16, jb, succ, size), names, piece)
        c, s = centre_score(rs, tol)
        pts.append((c - math.log(r), mm16, rs, s))
        return c - math.log(r)

    if r <= 1.0:
        rs = measure(gen(G, ml, 0, jb, succ, size), names, piece)
        return 0, rs, centre_score(rs, tol)[1]
    if x0 is None:
        x0 = max(1.0, ((r - 1) * (ml + 3) + 3) * 16 - 128)
    xa = math.log(x0)
    fa = f(xa)
    xb = xa - fa * 1.2
    fb = f(xb)
    for _ in range(it):
        if abs(pts[-1][0]) < 0.002 or fa == fb:
            break
        xn = xb - fb * (xb - xa) / (fb - fa)
        xn = max(min(xn, math.log(16 * 16384 * 3)), 0.0)
        if abs(xn - xb) < 1e-4:
            break
        xa, fa, xb = xb, fb, xn
        fb = f(xb)
    return min(pts, key=lambda t: abs(t[0]))[1:]


def short(rs, r):
    return " ".join("%s%+.1f" % (c.replace("gzip", "gz").replace("zstd", "zs").replace("brotli", "br")
                                  .replace("snappy", "sn").replace("bzip2", "bz").replace("-", ""),
                                  100 * (v / r - 1)) for c, v in rs.items())


def calibrate(gen, cls, r, size, probe=False, prev=None):
    """Stage 1 (size/2 samples): (literal mean, jbits) with a middle succ.
    Stage 2 (stream class, R <= 10): every succ for the two best shapes, on
    samples of XZ_WARM + 2 MiB (xz measured at its steady state); the best
    wins.  Without a succ choice: re-solve the two best on 2 * size and keep
    the better."""
    tol = targets(cls, r)
    if r <= 1.0:
        mm16, rs, _ = solve(gen, cls, r, 192, 6, 256, size, tol)
        return score_at(rs, tol, 0.0), (192, 0, 6, 256), rs

    def run(ml, jb, succ, n, x0=None):
        t = time.time()
        mm16, rs, _ = solve(gen, cls, r, ml, jb, succ, n, tol,
                            x0=None if not x0 else max(1, x0 - 128))
        score = score_at(rs, tol, math.log(r))
        if probe:
            print("  %-6s R=%-6g lit=%-4d jb=%d succ=%-3d mm16=%-7d score %.2f/%.2f | %s (%.0fs, %d KiB)"
                  % (cls, r, ml, jb, succ, mm16, score[0], score[1], short(rs, r), time.time() - t,
                     n >> 10),
                  file=sys.stderr, flush=True)
        return score, (ml, mm16, jb, succ), rs

    succs = succ_candidates(cls, r)
    mid = succs[len(succs) // 2]
    small = max(size // 2, 256 << 10)
    # With a literal chain, succ is chosen on samples long enough for xz's
    # steady state (XZ_WARM + 2 MiB); stage 1 (shape) uses the short ones.
    large = max(2 * size, XZ_WARM + (2 << 20)) if len(succs) > 1 else 2 * size
    st1 = [run(ml, jb, mid, small) for ml in lit_candidates(cls, r)
           for jb in jbits_candidates(cls, r)]
    if len(succs) > 1:
        # succ mostly moves bzip2: rank stage 1 without it, then sweep succ
        # for the three best shapes.
        def nobz(t):
            rs = {c: v for c, v in t[2].items() if c != "bzip2-9"}
            return score_at(rs, tol, math.log(r))
        st1.sort(key=nobz)
        st2 = []
        for _, (ml, mm, jb, _), _ in st1[:2]:
            st2 += [run(ml, jb, sc, large, mm) for sc in succs]
    else:
        st1.sort(key=lambda t: t[0])
        st2 = list(st1[:2])
    st2.sort(key=lambda t: t[0])
    if len(succs) > 1:
        return st2[0]
    final = [run(ml, jb, sc, large, mm) for _, (ml, mm, jb, sc), _ in st2[:2]]
    return min(final, key=lambda t: t[0])


def read_rows(path):
    return open(path).read() if os.path.exists(path) else ""


def write_table(path, tables, note):
    names = {"stream": "stream", "512": "b512", "1024": "b1k", "2048": "b2k", "4096": "b4k",
             "8192": "b8k", "16384": "b16k"}
    with open(path, "w") as f:
        f.write("/* Generated by tools/calibrate_compressible.py (%s); do not edit.\n" % note)
        hand = [(cls, rq, fields) for cls in CLASSES for rq, fields in
                sorted(HAND_SET.get(cls, {}).items())
                if any(row[0] == rq for row in tables[cls])]
        if hand:
            f.write(" * Set by hand for format 4 from 32 MiB measurements, not by the script\n"
                    " * (HAND_SET; docs/format.md, \"Changes from version 3\"; a calibration\n"
                    " * run keeps these rows unless --replace-hand-set):\n")
            for cls, rq, fields in hand:
                f.write(" *   %s R = %g: %s\n" % (cls, rq / 1024, ", ".join(fields)))
            ratios = sorted(set(rq / 1024 for _, rq, _ in hand))
            f.write(" * Verify them at 32 MiB (one core, 10-40 s a row; not in CI):\n"
                    " *   %s --ratios %s\n"
                    " * and every stream row: the same without --ratios.\n"
                    % (CHECK_COMMAND, ",".join("%g" % r for r in ratios)))
        f.write(" * Rows: {ratio * 1024, literal-run mean, match-length mean * 16, jbits, succ};\n"
                " * one table per block class (piece = compress_block, 0: streams). */\n")
        f.write("typedef struct td__comp_class_t {\n    uint32_t piece;\n    td__comp_table_t t;\n"
                "} td__comp_class_t;\n")
        for cls in CLASSES:
            f.write("static const td__comp_row td__comp_rows_%s[] = {\n" % names[cls])
            for row in tables[cls]:
                f.write("    {%d, %d, %d, %d, %d},\n" % row)
            f.write("};\n")
        f.write("#define TD_COMP_NCLASSES %du\n" % len(CLASSES))
        f.write("static const td__comp_class_t td__comp_classes[TD_COMP_NCLASSES] = {\n")
        for cls in CLASSES:
            n = names[cls]
            f.write("    {%d, {%d, sizeof td__comp_rows_%s / sizeof td__comp_rows_%s[0],"
                    " td__comp_rows_%s}},\n" % (0 if cls == "stream" else int(cls),
                                                 class_block(cls), n, n, n))
        f.write("};\n")


def parse_table(path):
    """class -> {rq: row} from an existing table (to keep rows not recalibrated)."""
    import re
    out = {c: {} for c in CLASSES}
    names = {"stream": "stream", "b512": "512", "b1k": "1024", "b2k": "2048", "b4k": "4096",
             "b8k": "8192", "b16k": "16384"}
    cur = None
    for line in open(path):
        m = re.match(r"static const td__comp_row td__comp_rows_(\w+)\[\]", line)
        if m:
            cur = names[m.group(1)]
            continue
        m = re.match(r"\s*\{(\d+), (\d+), (\d+), (\d+), (\d+)\},", line)
        if m and cur:
            v = tuple(int(x) for x in m.groups())
            out[cur][v[0]] = v
    return out


def pct(v, r):
    return 100 * (v / r - 1)


def check(gen, tables, classes, only, size):
    """Measure the committed rows (see the module docstring); returns the
    number of hand-set rows where one of the main four misses."""
    bad_hand = 0
    for cls in classes:
        G = class_block(cls)
        piece = int(cls) if cls != "stream" else 0
        for rq, row in sorted(tables.get(cls, {}).items()):
            r = rq / 1024
            if only is not None and r not in only:
                continue
            _, ml, mm16, jb, succ = row
            tol = targets(cls, r)
            t = time.time()
            data = gen(G, ml, mm16, jb, succ, size)
            rs, xz_full = {}, None
            for n in tol:
                if n.startswith("p:"):
                    f = PIECE[n[2:]]
                    rs[n] = len(data) / sum(len(f(data[i:i + piece]))
                                            for i in range(0, len(data), piece))
                else:
                    c = len(CODECS[n](data))
                    rs[n] = len(data) / c
                    if n == "xz-6":
                        xz_full = c
            steady = ""
            if xz_full is not None and len(data) > XZ_WARM:
                a = len(CODECS["xz-6"](data[:XZ_WARM]))
                steady = " | xz6 after 8 MiB %+.1f" % pct((len(data) - XZ_WARM) / (xz_full - a), r)
            main_miss = [k for k, v in rs.items()
                         if (k in MAIN or cls != "stream") and abs(v / r - 1) > tol[k] + 1e-9]
            other_miss = [k for k, v in rs.items()
                          if k not in main_miss and abs(v / r - 1) > tol[k] + 1e-9]
            hand = HAND_SET.get(cls, {}).get(rq)
            verdict = ("MAIN-MISS (%s)" % " ".join(main_miss) if main_miss else
                       "ok, %d other%s outside" % (len(other_miss), "" if len(other_miss) == 1
                                                   else "s") if other_miss else "ok")
            if hand and main_miss:
                bad_hand += 1
            print("%-6s R=%-6g lit=%-3d mm16=%-7d jb=%d succ=%-3d%s | %s%s | %s (%.0fs)"
                  % (cls, r, ml, mm16, jb, succ, " [hand: %s]" % ",".join(hand) if hand else "",
                     short(rs, r), steady, verdict, time.time() - t), flush=True)
    return bad_hand


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--mib", type=int, help="sample size (default 2; with --check 32)")
    ap.add_argument("--classes", help="default: all (with --check: stream)")
    ap.add_argument("--ratios", help="only these ratios (others kept from --out)")
    ap.add_argument("--probe", action="store_true", help="print every candidate")
    ap.add_argument("--out", default="libtestdata/compressible_table.h")
    ap.add_argument("--check", action="store_true",
                    help="measure the table in --out instead of writing one")
    ap.add_argument("--replace-hand-set", action="store_true",
                    help="recalibrate the HAND_SET rows too")
    a = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    gen = Gen(root, a.build)
    out = os.path.join(root, a.out)
    old = parse_table(out) if os.path.exists(out) else {c: {} for c in CLASSES}
    only = set(float(x) for x in a.ratios.split(",")) if a.ratios else None
    classes = (a.classes or ("stream" if a.check else ",".join(CLASSES))).split(",")
    size = (a.mib or (32 if a.check else 2)) << 20
    if a.check:
        print("# %s, %d MiB per row, seed %d: error against R in %%, whole stream"
              % (a.out, size >> 20, SEED), flush=True)
        sys.exit(1 if check(gen, old, classes, only, size) else 0)
    tables = {}
    for cls in CLASSES:
        rows = []
        prev = None
        for r in SCHEDULE:
            rq = int(round(r * 1024))
            hand = rq in HAND_SET.get(cls, {}) and not a.replace_hand_set
            if cls not in classes or (only is not None and r not in only) or hand:
                if rq in old.get(cls, {}):
                    if hand and cls in classes and (only is None or r in only):
                        print("%-6s R=%-6g kept (hand-set: %s; --replace-hand-set recalibrates)"
                              % (cls, r, ",".join(HAND_SET[cls][rq])), file=sys.stderr)
                    rows.append(old[cls][rq])
                    continue
                if only is not None or cls not in classes:
                    continue
            score, (ml, mm16, jb, succ), rs = calibrate(gen, cls, r, size, a.probe, prev)
            prev = mm16 if mm16 else None
            rows.append((rq, ml, mm16, jb, succ))
            HAND_SET.get(cls, {}).pop(rq, None)  # written by the script now
            print("%-6s R=%-6g lit=%-4d mm16=%-7d jb=%d succ=%-3d score %.2f/%.2f | %s" %
                  (cls, r, ml, mm16, jb, succ, score[0], score[1], short(rs, r)), file=sys.stderr,
                  flush=True)
        tables[cls] = sorted(rows)
    write_table(out, tables, "%d MiB samples, seed %d" % (size >> 20, SEED))


if __name__ == "__main__":
    main()
