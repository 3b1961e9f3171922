#!/usr/bin/env python3
"""Ratio error of text against its corpus under ten codec CLIs, for a model
built with given parameters (docs/benchmarks.md, text, "The calibration's
target").

usage: text_mu_sweep.py CORPUS [NAME=VALUE ...]

Builds a model of CORPUS (one file) with `build/tests/c/text_tool build -p
NAME=VALUE ...` ($TEXT_TOOL instead, when set; runs=0: without runs)
(e.g. cache_mu=31457 copy_mu=31457: both continuation
rates 0.48; setting them skips the calibration), generates text of the
corpus's size at seed 1 ($TEXT_SIZE bytes when set), compresses both with gzip -1/-6, zstd -3/-19,
lz4 -1/-9, xz -6, bzip2 -9 and brotli -5/-11, and prints the error of the
text's ratio against the corpus's for each codec (+: the text compresses
better) and the largest.
"""
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
TOOL = os.environ.get("TEXT_TOOL") or os.path.join(ROOT, "build", "tests", "c", "text_tool")
CODECS = [("gzip-1", ["gzip", "-1", "-c"]), ("gzip-6", ["gzip", "-6", "-c"]),
          ("zstd-3", ["zstd", "-3", "-q", "-c"]), ("zstd-19", ["zstd", "-19", "-q", "-c"]),
          ("lz4-1", ["lz4", "-1", "-c"]), ("lz4-9", ["lz4", "-9", "-c"]),
          ("xz-6", ["xz", "-6", "-c"]), ("bzip2-9", ["bzip2", "-9", "-c"]),
          ("brotli-5", ["brotli", "-q", "5", "-c"]), ("brotli-11", ["brotli", "-q", "11", "-c"])]


def csize(cmd, data):
    return len(subprocess.run(cmd, input=data, stdout=subprocess.PIPE, check=True).stdout)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    corpus, params = sys.argv[1], sys.argv[2:]
    with open(corpus, "rb") as f:
        d = f.read()
    args = []
    for p in params:
        args += ["-p", p]
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "m.tdm")
        subprocess.run([TOOL, "build"] + args + ["-o", model, corpus], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        size = int(os.environ.get("TEXT_SIZE") or len(d))
        g = subprocess.run([TOOL, "gen", model, "1", "0", str(size)], check=True,
                           stdout=subprocess.PIPE).stdout
    out, worst = [], 0.0
    for name, cmd in CODECS:
        e = 100 * ((len(g) / csize(cmd, g)) / (len(d) / csize(cmd, d)) - 1)
        worst = max(worst, abs(e))
        out.append("%s %+.1f" % (name, e))
    print("%s | worst %.1f | %s" % (" ".join(params) or "calibrated", worst, ", ".join(out)))


if __name__ == "__main__":
    main()
