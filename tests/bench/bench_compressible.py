#!/usr/bin/python3
"""Benchmark of the compressible kind (format 2) and the dedup layer.

Prints, in one run (all compressors in process, CPU time, this machine):
  1. whole streams: the ratio R x codec table (gzip -1/-6/-9, zstd -1/-3/-19,
     lz4 -1/-9, xz -6, bzip2 -9, brotli -5/-11, snappy) of
     `testdata gen compressible --ratio R`, next to fio 3.33's
     buffer_compress_percentage data for the same targets;
  2. pieces: data made with --compress-block B, cut into B-aligned B-byte
     pieces compressed one by one as a file system does (zstd -3 frame without
     checksum, LZ4 block API, raw deflate -6), for B = 4K, 16K, 64K, 128K; the
     same bytes compressed whole; fio with buffer_compress_chunk=B;
  3. compressor cost: CPU time per byte on English text (the corpus in
     /work/shared/corpus, rotated per copy) divided by CPU time per byte on
     our data and on fio's, at R = 3 (> 1: compresses faster than English);
     also a real-data hold-out (the regular files of Debian's coreutils);
  4. generation speed in process (one thread) next to lz4 -1's compression
     speed on the same bytes;
  5. each codec's ceiling: the ratio at --ratio 1000 and 100;
  6. dedup accuracy: unique 4 KiB blocks counted by hashing.

Usage: tests/bench/bench_compressible.py [--cli build/programs/testdata]
       [--mib 32] [--quick] [--no-fio] [--plot docs/img/compressible_codecs.png]
       tests/bench/bench_compressible.py --markdown SAVED_OUTPUT [--plot PNG]
--markdown: a saved run's tables as Markdown (and its plot), without measuring.
--quick: 4 MiB samples, fewer ratios, no zstd -19 / brotli -11: a few minutes.
"""
import argparse
import hashlib
import importlib.util
import math
import os
import shutil
import string
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CORPUS = "/work/shared/corpus"

_spec = importlib.util.spec_from_file_location(
    "calib", os.path.join(ROOT, "tools", "calibrate_compressible.py"))
calib = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(calib)
CODECS, PIECE, MAIN = calib.CODECS, calib.PIECE, calib.MAIN
ALL = ["gzip-1", "gzip-6", "gzip-9", "zstd-1", "zstd-3", "zstd-19", "lz4-1", "lz4-9", "xz-6",
       "bzip2-9", "brotli-5", "brotli-11", "snappy"]
SLOW = ("zstd-19", "brotli-11")  # measured on at most 8 MiB
TOL = {c: 3 if c in MAIN else 5 for c in ALL}


def gen(cli, size, r, seed=1, cb=0):
    args = [cli, "gen", "compressible", str(size), "--ratio", str(r), "--seed", str(seed)]
    if cb:
        args += ["--compress-block", str(cb)]
    return subprocess.run(args, check=True, stdout=subprocess.PIPE).stdout


def fio_data(tmp, size, r, chunk=4096):
    path = os.path.join(tmp, "fio.dat")
    pct = int(round(100 * (1 - 1 / r)))
    subprocess.run(["fio", "--name=x", "--ioengine=sync", "--rw=write", "--bs=64k",
                    "--filename=" + path, "--size=%d" % size,
                    "--buffer_compress_percentage=%d" % pct, "--refill_buffers",
                    "--buffer_compress_chunk=%d" % chunk,
                    "--output=" + os.path.join(tmp, "fio.log")],
                   check=True, stdout=subprocess.DEVNULL)
    with open(path, "rb") as f:
        d = f.read()
    os.remove(path)
    return d


def ratio(name, d):
    if name in SLOW:
        d = d[:8 << 20]
    return len(d) / len(CODECS[name](d))


def piece_ratio(name, d, B):
    f = PIECE[name]
    return len(d) / sum(len(f(d[i:i + B])) for i in range(0, len(d), B))


def cpu_per_byte(name, d, reps=3):
    f = CODECS[name]
    best = 1e9
    for _ in range(reps):
        t = time.process_time()
        f(d)
        best = min(best, time.process_time() - t)
    return best / len(d)


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


def holdout(size):
    """Real data never used for design: Debian's coreutils package files, in
    dpkg -L order (ELF binaries, man pages, locale files)."""
    try:
        files = subprocess.run(["dpkg", "-L", "coreutils"], check=True, stdout=subprocess.PIPE,
                               text=True).stdout.split("\n")
    except (OSError, subprocess.CalledProcessError):
        return None
    out = bytearray()
    for f in files:
        if os.path.isfile(f) and not os.path.islink(f):
            with open(f, "rb") as fh:
                out += fh.read()
        if len(out) >= size:
            break
    return bytes(out[:size]) if len(out) >= size else None


def dev(got, r):
    return 100 * (got / r - 1)


def section_whole(cli, tmp, size, ratios, codecs, use_fio, res):
    print("== 1. whole streams: achieved ratio (deviation from R) on %d MiB; fio's data below"
          % (size >> 20))
    print("(%s: first 8 MiB only)" % ", ".join(c for c in SLOW if c in codecs))
    print("%-6s " % "R" + " ".join("%9s" % c for c in codecs) + "   worst main / others")
    res["whole"] = {}
    for r in ratios:
        d = gen(cli, size, r)
        rs = {c: ratio(c, d) for c in codecs}
        fr = {}
        if use_fio:
            f = fio_data(tmp, size, r)
            fr = {c: ratio(c, f) for c in codecs if c in MAIN or r <= 10}
        res["whole"][r] = {"ours": rs, "fio": fr}
        wm = max(abs(dev(v, r)) for c, v in rs.items() if c in MAIN)
        wo = max([abs(dev(v, r)) for c, v in rs.items() if c not in MAIN] or [0])
        print("%-6g " % r + " ".join("%+8.1f%%" % dev(rs[c], r) for c in codecs) +
              "   %4.1f%% / %4.1f%%" % (wm, wo))
        if fr:
            print("%-6s " % " fio" + " ".join(("%+8.1f%%" % dev(fr[c], r)) if c in fr else
                                             "%9s" % "-" for c in codecs))
    print("(fio: --buffer_compress_percentage=round(100*(1-1/R)) --buffer_compress_chunk=4k"
          " --refill_buffers)")
    print("targets: R <= 10: gzip-6, zstd-3, lz4-1, xz-6 within 3%%, the others within 5%%;"
          " R <= 100: the four within 5%%")
    print("absolute ratios, ours:")
    for r in ratios:
        print("  R=%-6g " % r + " ".join("%s %.3g" % (c, v) for c, v in
                                       res["whole"][r]["ours"].items()))


def section_pieces(cli, tmp, size, ratios, blocks, use_fio, res):
    print("\n== 2. pieces: --compress-block B data, compressed in independent B-byte pieces"
          " (%d MiB)" % (size >> 20))
    print("   per piece: zstd -3 = one frame per piece (content size, no checksum), "
          "lz4 -1 = LZ4_compress_default, gzip -6 = raw deflate (wbits -15)")
    print("%-6s %-6s %26s | %36s | %20s" % ("R", "B", "pieces zstd/lz4/deflate",
                                            "same bytes whole: gz6/zs3/lz4/xz6",
                                            "fio chunk=B pieces"))
    res["pieces"] = {}
    for B in blocks:
        for r in ratios:
            d = gen(cli, size, r, seed=2, cb=B)
            p = {c: piece_ratio(c, d, B) for c in PIECE}
            w = {c: ratio(c, d) for c in MAIN}
            fp = {}
            if use_fio:
                f = fio_data(tmp, size, r, chunk=B)
                fp = {c: piece_ratio(c, f, B) for c in PIECE}
            res["pieces"][(B, r)] = {"pieces": p, "whole": w, "fio": fp}
            print("%-6g %-6s %26s | %36s | %20s" % (
                r, "%dK" % (B >> 10), " ".join("%+6.1f%%" % dev(v, r) for v in p.values()),
                " ".join("%+7.1f%%" % dev(v, r) for v in w.values()),
                " ".join("%+6.1f%%" % dev(v, r) for v in fp.values()) if fp else "-"))


def section_cost(cli, tmp, size, use_fio, res):
    print("\n== 3. compressor cost at R=3: (CPU time per byte on English) / (on this data),"
          " %d MiB, best of 3" % (size >> 20))
    print("   > 1: the compressor runs that many times faster than on English text of the"
          " corpus; goal <= 2")
    names = ["gzip-6", "zstd-3", "lz4-1", "xz-6", "gzip-1", "zstd-1", "snappy", "brotli-5",
             "bzip2-9"]
    e = english(size)
    refs = {"ours R=3": gen(cli, size, 3)}
    if use_fio:
        refs["fio R=3"] = fio_data(tmp, size, 3)
    h = holdout(size)
    if h:
        refs["coreutils (hold-out)"] = h
    refs["ours R=2"] = gen(cli, size, 2)
    refs["ours R=5"] = gen(cli, size, 5)
    ce = {c: cpu_per_byte(c, e) for c in names}
    print("%-22s " % "" + " ".join("%9s" % c for c in names))
    print("%-22s " % "English MB/s" + " ".join("%9.1f" % (1e-6 / ce[c]) for c in names))
    print("%-22s " % "English ratio" + " ".join("%9.2f" % (len(e) / len(CODECS[c](e)))
                                                  for c in names))
    res["cost"] = {}
    for k, d in refs.items():
        cd = {c: cpu_per_byte(c, d) for c in names}
        res["cost"][k] = {c: ce[c] / cd[c] for c in names}
        print("%-22s " % (k + " gap") + " ".join("%9.2f" % (ce[c] / cd[c]) for c in names))
        print("%-22s " % (k + " ratio") + " ".join("%9.2f" % (len(d) / len(CODECS[c](d)))
                                                   for c in names))


def section_speed(cli, tmp, res):
    print("\n== 4. generation in process (td_fill, 1 MiB buffers, one thread) vs lz4 -1"
          " compressing the same bytes (LZ4_compress_default, 1 MiB at a time), GB per CPU s")
    build = os.path.dirname(os.path.dirname(cli))
    lib = os.path.join(build, "libtestdata", "libtestdata.a")
    exe = os.path.join(tmp, "bench_compressible_gen")
    built = False
    for extra in (["-lcrypto"], []):
        if not built and shutil.which("cc") and os.path.exists(lib):
            built = subprocess.run(
                ["cc", "-O2", "-DTD_BENCH_LZ4", "-I", os.path.join(ROOT, "include"),
                 os.path.join(HERE, "bench_compressible_gen.c"), lib, "-llz4", "-lsodium"] +
                extra + ["-lzstd", "-llzma", "-lbz2", "-lz", "-lpthread", "-lm", "-o", exe],
                stderr=subprocess.DEVNULL).returncode == 0
    if not built:
        print("(not built: needs cc, liblz4-dev and the static library)")
        return
    rnd = float(subprocess.run([exe, "random"], stdout=subprocess.PIPE,
                               check=True).stdout.split()[0])
    print("  random (chacha20)             %6.2f" % rnd)
    res["speed"] = {}
    for args in (["ratio=1.25"], ["ratio=2"], ["ratio=3"], ["ratio=5"], ["ratio=10"],
                 ["ratio=100"], ["ratio=3", "compress_block=4K"], ["ratio=3", "dedup=2"]):
        g, l = (float(x) for x in subprocess.run([exe, "--lz4", "compressible"] + args,
                                                 stdout=subprocess.PIPE, check=True).stdout.split())
        res["speed"][" ".join(args)] = (g, l)
        print("  compressible %-22s %6.2f   lz4 -1 on it %5.2f   gen/lz4 %5.2f  (goal >= 2)"
              % (" ".join(args), g, l, g / l))


def section_ceiling(cli, size, codecs, res):
    print("\n== 5. ceilings: what each codec reaches at --ratio 100 and 1000 (%d MiB)"
          % (size >> 20))
    res["ceiling"] = {}
    for r in (100, 1000):
        d = gen(cli, size, r)
        rs = {c: ratio(c, d) for c in codecs}
        res["ceiling"][r] = rs
        print("  --ratio %-5g " % r + " ".join("%s %.0f" % (c, v) for c, v in rs.items()))


def section_dedup(cli):
    print("\n== 6. dedup: 4 KiB blocks, unique counted by SHA-1 (20,000 blocks)")
    nb = 20000
    for kind, extra in (("random", []), ("compressible", ["--ratio", "3"]),
                        ("compressible", ["--ratio", "3", "--compress-block", "4K"])):
        for dd in (1.5, 2, 4.2):
            out = subprocess.run([cli, "gen", kind, str(nb * 4096), "--dedup", str(dd),
                                  "--seed", "3"] + extra, stdout=subprocess.PIPE,
                                 check=True).stdout
            seen = set(hashlib.sha1(out[i:i + 4096]).digest() for i in range(0, len(out), 4096))
            got = nb / len(seen)
            print("%-13s %-22s dedup %-4g -> %.4f (%+.2f%%)" % (kind, " ".join(extra), dd, got,
                                                                 100 * (got / dd - 1)))


def plot(path, res, codecs):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(1, 2, figsize=(13, 4.8))
    rs = sorted(res["whole"])
    cmap = plt.get_cmap("tab10")
    # the main four in strong colours, the others dashed in the rest of tab10, then Dark2
    pal = [cmap(i) for i in range(4, 10)] + [plt.get_cmap("Dark2")(i) for i in (0, 1)] + ["k"]
    others = [c for c in codecs if c not in MAIN]
    for c in codecs:
        ys = [dev(res["whole"][r]["ours"][c], r) for r in rs]
        col = cmap(MAIN.index(c)) if c in MAIN else pal[others.index(c) % len(pal)]
        ax[0].plot(rs, ys, marker="o", ms=3, lw=2.2 if c in MAIN else 1, color=col,
                   ls="-" if c in MAIN else "--", label=c)
    ax[0].axhspan(-3, 3, color="g", alpha=0.08)
    ax[0].axhspan(-5, 5, color="g", alpha=0.05)
    ax[0].set_xscale("log")
    ax[0].set_xlabel("target ratio R")
    ax[0].set_ylabel("achieved / R - 1 (%)")
    ax[0].set_title("whole stream, per codec (solid: the main four)")
    ax[0].set_ylim(-85, 30)
    ax[0].legend(fontsize=7, ncol=2)
    ax[0].grid(alpha=0.3)
    if res.get("pieces"):
        keys = sorted(res["pieces"])
        blocks = sorted(set(B for B, _ in keys))
        styles = ["-", "--", "-.", (0, (1, 1))]
        for k, B in enumerate(blocks):
            rr = sorted(r for b, r in keys if b == B)
            for i, c in enumerate(PIECE):
                ax[1].plot(rr, [dev(res["pieces"][(B, r)]["pieces"][c], r) for r in rr],
                           marker="o", ms=3, color=cmap(2 * i), ls=styles[k % 4],
                           label="%s %dK" % (c, B >> 10))
            if res["pieces"][(B, rr[0])]["fio"]:
                ax[1].plot(rr, [dev(res["pieces"][(B, r)]["fio"]["zstd-3"], r) for r in rr],
                           ls=":", color="gray", label="fio zstd-3 %dK" % (B >> 10))
        ax[1].axhspan(-5, 5, color="g", alpha=0.08)
        ax[1].set_xscale("log")
        ax[1].set_xlabel("target ratio R")
        ax[1].set_title("--compress-block B: independent B-byte pieces")
        ax[1].legend(fontsize=6, ncol=2)
        ax[1].grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print("\nplot written to %s" % path)


def markdown(text):
    """Markdown tables from this script's printed output (used by report.py for
    docs/benchmarks.md, and by --markdown FILE)."""
    lines = text.splitlines()
    out = []
    w = out.append
    sec = None
    codecs = []
    cost_names = []
    head = False
    for ln in lines:
        if ln.startswith("== "):
            sec = ln.split(".")[0][3:]
            if sec == "1":
                size = ln.split(" on ")[-1].split(";")[0]
                w("**Whole streams** (%s per R): deviation of the achieved ratio from R; bold: "
                  "outside ±5%%; `fio` rows: fio's `buffer_compress_percentage` data for the "
                  "same R (`-`: not measured).\n" % size)
            elif sec == "2":
                w("\n**Pieces**: data made with `--compress-block B`, each B-aligned B-byte "
                  "piece compressed on its own (zstd -3 frame, LZ4 block, raw deflate -6), "
                  "the same bytes compressed whole, and fio's data (`buffer_compress_chunk=B`) "
                  "in the same pieces:\n")
                w("| R | B | zstd-3 pieces | lz4-1 pieces | deflate-6 pieces | whole gzip-6 "
                  "| whole zstd-3 | whole lz4-1 | whole xz-6 | fio zstd-3 / lz4-1 / deflate-6 "
                  "pieces |")
                w("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
            elif sec == "3":
                w("\n**Compressor cost** at R = 3 and others: " + ln.split(":", 1)[1].strip()
                  + " (> 1: that many times faster per byte than on English text; goal <= 2):\n")
            elif sec == "4":
                w("\n**Generation speed**: " + ln.split(" ", 2)[2].strip() + "\n")
                head = True
            elif sec == "5":
                w("\n**Ceilings** (" + ln.split("(")[-1].rstrip(")") + "):\n")
            continue
        t = ln.split()
        if not t:
            continue
        if sec == "1":
            if t[0] == "R" and "worst" in t:
                codecs = t[1:t.index("worst")]
                w("| R | " + " | ".join(codecs) + " | worst main / others |")
                w("|---|" + "---:|" * len(codecs) + "---|")
            elif codecs and t[0] == "fio" and len(t) == len(codecs) + 1:
                w("| fio | " + " | ".join(t[1:]) + " | |")
            elif codecs and len(t) == len(codecs) + 4 and t[-2] == "/":
                w("| %s | " % t[0] + " | ".join("**%s**" % x if abs(float(x.rstrip("%"))) > 5
                                                else x for x in t[1:1 + len(codecs)]) +
                  " | %s / %s |" % (t[-3], t[-1]))
        elif sec == "2":
            if "|" in ln and t[0][0].isdigit():
                parts = [x.split() for x in ln.split("|")]
                r, b = parts[0][0], parts[0][1]
                w("| %s | %s | " % (r, b) + " | ".join(parts[0][2:] + parts[1]) +
                  " | %s |" % " / ".join(parts[2]))
        elif sec == "3":
            if not cost_names and t[0] == "gzip-6":
                cost_names = t
                w("| | " + " | ".join(cost_names) + " |")
                w("|---|" + "---:|" * len(cost_names))
            elif cost_names and len(t) > len(cost_names) and not ln.startswith("   "):
                label = " ".join(t[:len(t) - len(cost_names)])
                w("| %s | " % label + " | ".join(t[-len(cost_names):]) + " |")
        elif sec == "4":
            if head and not ln.startswith("(not built"):
                w("| stream | generation | lz4 -1 on it | generation / lz4 -1 |")
                w("|---|---:|---:|---:|")
                head = False
            if t[0] == "random":
                w("| random (chacha20) | %s | | |" % t[-1])
            elif t[0] == "compressible" and "gen/lz4" in t:
                i = t.index("lz4")
                w("| %s | %s | %s | %sx |" % (" ".join(t[:i - 1]), t[i - 1], t[i + 4],
                                               t[t.index("gen/lz4") + 1]))
            elif ln.startswith("(not built"):
                w(ln.strip())
        elif sec == "5":
            if t[0] == "--ratio":
                w("- `--ratio %s`: " % t[1] + ", ".join("%s %s" % (t[k], t[k + 1])
                                                     for k in range(2, len(t) - 1, 2)))
    return "\n".join(out) + "\n"


def results(text):
    """The whole-stream and piece results of a saved run's output (for --plot)."""
    res = {"whole": {}, "pieces": {}}
    sec, codecs = None, []
    for ln in text.splitlines():
        if ln.startswith("== "):
            sec = ln.split(".")[0][3:]
            continue
        t = ln.split()
        if sec == "1" and t and t[0] == "R" and "worst" in t:
            codecs = t[1:t.index("worst")]
        elif sec == "1" and codecs and len(t) == len(codecs) + 4 and t[-2] == "/":
            r = float(t[0])
            res["whole"][r] = {"ours": {c: r * (1 + float(x.rstrip("%")) / 100)
                                        for c, x in zip(codecs, t[1:])}, "fio": {}}
        elif sec == "2" and "|" in ln and t[0][0].isdigit():
            parts = [x.split() for x in ln.split("|")]
            r, B = float(parts[0][0]), int(parts[0][1].rstrip("K")) << 10
            pc = {c: r * (1 + float(x.rstrip("%")) / 100) for c, x in zip(PIECE, parts[0][2:])}
            fp = {c: r * (1 + float(x.rstrip("%")) / 100) for c, x in zip(PIECE, parts[2])
                  if x != "-"}
            res["pieces"][(B, r)] = {"pieces": pc, "fio": fp}
    return res, codecs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", default="build/programs/testdata")
    ap.add_argument("--mib", type=int, default=32)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--no-fio", action="store_true")
    ap.add_argument("--plot", help="write a PNG (matplotlib)")
    ap.add_argument("--markdown", metavar="OUTPUT",
                    help="print the tables of a saved run's output as Markdown (and with "
                    "--plot, plot it), and exit")
    a = ap.parse_args()
    if a.markdown:
        with open(a.markdown) as f:
            text = f.read()
        sys.stdout.write(markdown(text))
        if a.plot:  # re-plot a saved run
            res, codecs = results(text)
            plot(a.plot, res, codecs)
        return 0
    cli = os.path.abspath(a.cli)
    size = (4 if a.quick else a.mib) << 20
    use_fio = not a.no_fio and shutil.which("fio")
    codecs = [c for c in ALL if not (a.quick and c in SLOW)]
    ratios = [1.25, 2, 3, 6, 10, 30, 100] if a.quick else [1.25, 1.5, 2, 3, 4, 6, 10, 20, 50,
                                                           100]
    pratios = [3, 5, 10] if a.quick else [1.5, 2, 3, 5, 10, 20]
    res = {}
    tmp = tempfile.mkdtemp(prefix="bench_comp.")
    t0 = time.time()
    try:
        section_whole(cli, tmp, size, ratios, codecs, use_fio, res)
        section_pieces(cli, tmp, size, pratios, [4096, 16384, 65536, 131072], use_fio, res)
        section_cost(cli, tmp, min(size, 8 << 20), use_fio, res)
        section_speed(cli, tmp, res)
        section_ceiling(cli, min(size, 8 << 20), [c for c in codecs if c not in SLOW], res)
        section_dedup(cli)
        if a.plot:
            plot(a.plot, res, codecs)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("\n(%.0f s)" % (time.time() - t0))


if __name__ == "__main__":
    sys.exit(main())
