#!/usr/bin/env python3
"""Fidelity and speed of the multi-word-unit prototype (build/tests/c/text_units).

usage: tools/text_units_frontier.py [--build build] [--corpus en,de,it]
                                    [--sizes same,8M] [--long] [--speed]
                                    CONFIG...

CONFIG is UNIT:T:R (UNIT 0 = lines, n = runs of n words; T table bytes per
region of R output bytes; see tools/text_units.c), or "real" for the `text`
kind itself (format 4).  For each corpus and config prints the worst error
of the compression ratio against the corpus over the codecs of
tests/bench/bench_text.py (gzip -1/-6, zstd -3/-19, lz4 -1/-9, xz -6,
bzip2 -9, brotli -5/-11) at each size ("same" = the corpus's size), the codec
with the worst error, the Heaps exponent over 1 and 8 MiB, the share of word
8-grams of 1 MiB found in the corpus, and with --speed the speed line of
`text_units speed` (MB/s vs lz4 -1 on its own output, CPU time, in turns);
with --long, `zstd -19 --long=27 -T1` on 256 MiB against 8 MiB (English).
Models for de/it are built like bench_text.py builds them.
"""
import argparse
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "bench"))
import bench_text as bt  # noqa: E402


def corpora(names):
    out = []
    for n in names:
        if n == "en":
            import glob
            files = sorted(glob.glob("/work/shared/corpus/*.txt"))
            for c in (os.path.join(ROOT, "..", "shared", "corpus"),
                      os.path.join(ROOT, "..", "..", "shared", "corpus")):
                if glob.glob(os.path.join(c, "*.txt")):
                    files = sorted(glob.glob(os.path.join(c, "*.txt")))
            out.append((n, files))
        elif n == "de":
            out.append((n, bt.fortune_files(bt.FORTUNES_DE)))
        elif n == "it":
            out.append((n, bt.fortune_files(bt.FORTUNES_IT)))
    return out


def gen(a, model, cfg, size, seed=1):
    if cfg == "real":
        return bt.gen(a.tool, model, size, seed=seed)
    u, t, r = cfg.split(":")
    return bt.run([a.units, "gen", model, str(seed), str(size), u, t, r])


def heaps(data_1m, data_8m):
    import math
    pts = []
    for d in (data_1m, data_8m):
        w = bt.WORD.findall(d)
        pts.append((len(w), len(set(w))))
    return math.log(pts[1][1] / pts[0][1]) / math.log(pts[1][0] / pts[0][0])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--corpus", default="en")
    ap.add_argument("--sizes", default="same,8M")
    ap.add_argument("--long", action="store_true")
    ap.add_argument("--speed", action="store_true")
    ap.add_argument("configs", nargs="+")
    a = ap.parse_args()
    a.tool = os.path.join(a.build, "tests", "c", "text_tool")
    a.units = os.path.join(a.build, "tests", "c", "text_units")
    with tempfile.TemporaryDirectory() as tmp:
        for name, files in corpora(a.corpus.split(",")):
            corpus, docs = bt.read_corpus(name, files)
            if name == "en":
                model = os.path.join(tmp, "builtin.tdm")
                bt.run([a.tool, "save-builtin", model])
            else:
                model, err, _ = bt.build_model(a.tool, docs, tmp, name)
                if model is None:
                    sys.exit(err)
            rc = bt.measure(corpus)
            print("\n== %s (corpus %d bytes)" % (name, len(corpus)), flush=True)
            for cfg in a.configs:
                row = [cfg]
                for s in a.sizes.split(","):
                    size = len(corpus) if s == "same" else bt.parse_size(s)
                    g = gen(a, model, cfg, size)
                    rg = bt.measure(g)
                    errs = {c: 100 * (rg[c][0] / rc[c][0] - 1) for c, _ in bt.CODECS}
                    w = max(errs, key=lambda c: abs(errs[c]))
                    row.append("%s: worst %+.1f%% (%s) [%s]" % (
                        s, errs[w], w, " ".join("%+.0f" % errs[c] for c, _ in bt.CODECS)))
                    if s == "8M":
                        row.append("heaps %.3f" % heaps(g[:1 << 20], g))
                        row.append("8-grams copied %.2f%%" % bt.regurgitation(corpus, g))
                if a.speed and cfg != "real":
                    u, t, r = cfg.split(":")
                    row.append(bt.run([a.units, "speed", model, u, t, r, "32"]).decode().strip())
                if a.long and name == "en":
                    res = []
                    for size in (8 << 20, 256 << 20):
                        p = os.path.join(tmp, "long.txt")
                        with open(p, "wb") as f:
                            f.write(gen(a, model, cfg, size))
                        out = bt.run(["zstd", "-19", "--long=27", "-T1", "-q", "-c", p])
                        res.append(size / len(out))
                        os.unlink(p)
                    row.append("--long=27 256M vs 8M %+.1f%%" % (100 * (res[1] / res[0] - 1)))
                print(" | ".join(row), flush=True)


if __name__ == "__main__":
    main()
