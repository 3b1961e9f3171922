#!/usr/bin/env python3
"""Benchmark of the `text` kind against the corpus its model comes from.

usage: tests/bench/bench_text.py [--build build] [--corpus DIR] [--size 32M]
                                 [--seed N] [--gen-size 1G]

Prints
  1. the compression fingerprint: ratio under gzip -6, zstd -3, zstd -19,
     xz -6, bzip2 -9 and lz4 -1 for SIZE bytes of output and for the corpus
     (all *.txt concatenated), and where the output falls in the band that
     real English spans;
  2. compressor speed on text relative to the corpus (gzip -6, zstd -3,
     lz4 -1), on inputs of the corpus's size, best of several runs;
  3. single-core generation speed of text and of random (ChaCha20) in the
     same run (tests/bench/bench_gen), and their ratio;
  4. the share of word 8-grams of 1 MiB of output found verbatim in the corpus.
Standard library only; needs the compressors on PATH.
"""
import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

BANDS = [  # name, command, low, high
    ("gzip -6", ["gzip", "-6", "-c"], 2.4, 3.4),
    ("zstd -3", ["zstd", "-3", "-c", "-q", "-T1"], 2.5, 3.4),
    ("zstd -19", ["zstd", "-19", "-c", "-q", "-T1"], 2.9, 4.4),
    ("xz -6", ["xz", "-6", "-c", "-T1"], 2.9, 4.5),
    ("bzip2 -9", ["bzip2", "-9", "-c"], 3.1, 4.7),
    ("lz4 -1", ["lz4", "-1", "-c", "-q"], 1.45, 2.05),
]
SPEED = ["gzip -6", "zstd -3", "lz4 -1"]
SPEED_BAND = (0.7, 1.4)


def parse_size(s):
    m = re.fullmatch(r"(\d+)([KMG]?)", s)
    if not m:
        sys.exit("bad size %s" % s)
    return int(m.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30}[m.group(2)]


def compressed_size(cmd, path):
    with open(path, "rb") as f:
        out = subprocess.run(cmd, stdin=f, stdout=subprocess.PIPE, check=True).stdout
    return len(out)


def run_time(cmd, path):
    with open(path, "rb") as f:
        t0 = time.perf_counter()
        subprocess.run(cmd, stdin=f, stdout=subprocess.DEVNULL, check=True)
        return time.perf_counter() - t0


def words(text):
    return re.findall(r"[a-z]+(?:'[a-z]+)*", text.lower())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build-text"))
    ap.add_argument("--corpus", default=None)
    ap.add_argument("--size", default="32M")
    ap.add_argument("--seed", default="1")
    ap.add_argument("--gen-size", default="1G")
    ap.add_argument("--repeats", type=int, default=5)
    a = ap.parse_args()

    corpus_dir = a.corpus
    if not corpus_dir:
        for c in (os.path.join(ROOT, "..", "shared", "corpus"),
                  os.path.join(ROOT, "..", "..", "shared", "corpus")):
            if glob.glob(os.path.join(c, "*.txt")):
                corpus_dir = c
                break
    files = sorted(glob.glob(os.path.join(corpus_dir or "", "*.txt")))
    if not files:
        sys.exit("corpus not found; pass --corpus DIR")
    cli = os.path.join(a.build, "programs", "testdata")
    bench_gen = os.path.join(a.build, "tests", "bench", "bench_gen")
    size = parse_size(a.size)

    with tempfile.TemporaryDirectory() as tmp:
        text = os.path.join(tmp, "text.txt")
        corpus = os.path.join(tmp, "corpus.txt")
        with open(text, "wb") as f:
            subprocess.run([cli, "gen", "text", str(size), "--seed", a.seed], stdout=f,
                           check=True)
        with open(corpus, "wb") as f:
            for p in files:
                with open(p, "rb") as g:
                    f.write(g.read())
        csize = os.path.getsize(corpus)

        # 1. fingerprint
        print("== compression ratio: %s of text (seed %s) vs corpus (%d bytes)"
              % (a.size, a.seed, csize))
        print("%-9s %7s %7s  %-11s %s" % ("", "text", "corpus", "band", "text in band"))
        for name, cmd, lo, hi in BANDS:
            rt = size / compressed_size(cmd, text)
            rc = csize / compressed_size(cmd, corpus)
            pos = (rt - lo) / (hi - lo)
            verdict = "yes (%.0f%% of the way up)" % (100 * pos) if lo <= rt <= hi else "NO"
            print("%-9s %7.3f %7.3f  %4.2f-%-5.2f  %s" % (name, rt, rc, lo, hi, verdict))

        # 2. compressor speed on equal-sized inputs, interleaved, best of N
        piece = os.path.join(tmp, "piece.txt")
        with open(text, "rb") as f:
            f.seek(size // 3)
            data = f.read(csize)
        with open(piece, "wb") as f:
            f.write(data)
        print("\n== compressor speed, text vs corpus (%d-byte inputs, best of %d)"
              % (csize, a.repeats))
        print("%-9s %9s %9s %7s  %s" % ("", "text MB/s", "corp MB/s", "ratio",
                                        "in %.1f-%.1f" % SPEED_BAND))
        for name, cmd, _, _ in BANDS:
            if name not in SPEED:
                continue
            tt = min(run_time(cmd, piece) for _ in range(a.repeats))
            tc = min(run_time(cmd, corpus) for _ in range(a.repeats))
            for _ in range(a.repeats):  # second pass, interleaved, to even out noise
                tt = min(tt, run_time(cmd, piece))
                tc = min(tc, run_time(cmd, corpus))
            r = tc / tt
            ok = "yes" if SPEED_BAND[0] <= r <= SPEED_BAND[1] else "NO"
            print("%-9s %9.1f %9.1f %7.2f  %s" % (name, csize / tt / 1e6, csize / tc / 1e6, r,
                                                  ok))

        # 3. generation speed
        print("\n== generation speed, one core, same run (td_fill into a 1 MiB buffer, 2 s each)")
        if os.path.exists(bench_gen):
            out = subprocess.run([bench_gen, "--seconds", "2", "random", "random:algorithm=fast",
                                  "text"],
                                 stdout=subprocess.PIPE, check=True, text=True).stdout
            gbs = dict(line.split() for line in out.splitlines())
            for k, v in gbs.items():
                print("%-24s %6.3f GB/s" % (k, float(v)))
            print("ratio text/random(chacha20) %.3f" % (float(gbs["text"]) / float(gbs["random"])))
        else:
            print("(%s not built)" % bench_gen)

        # 4. regurgitation
        grams = set()
        for p in files:
            with open(p, "rb") as g:
                w = words(g.read().decode("latin-1"))
            grams.update(tuple(w[i:i + 8]) for i in range(len(w) - 7))
        with open(text, "rb") as f:
            w = words(f.read(1 << 20).decode("ascii"))
        n = len(w) - 7
        hits = sum(1 for i in range(n) if tuple(w[i:i + 8]) in grams)
        print("\n== regurgitation: %d of %d word 8-grams of 1 MiB in the corpus (%.3f%%, "
              "limit 5%%)" % (hits, n, 100.0 * hits / n))


if __name__ == "__main__":
    main()
