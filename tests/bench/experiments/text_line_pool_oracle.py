#!/usr/bin/python3
"""Oracle experiment (docs/benchmarks.md, text, "Experiment of 2026-12-07
(stop 52): lines repeated from afar"): would text that repeats whole lines
across the stream, as manual pages repeat their boilerplate, bring a model
of French manual pages (gzip -6 +17%, zstd -3 -15% against the pages) within
reach?

Builds a model of CORPUS (one file) with `text_tool build` (the calibrated
continuation rates, or both set to MU), generates text of the corpus's size
at seed 1, and then replaces each line of 16 bytes or more, with
probability F, by a line of a pool: the first K distinct such lines of 4 MiB
generated at seed 2, picked with weight 1 / (rank + 1)^Z.  The replaced
text repeats lines at any distance, as the corpus does (its lines of 16
bytes or more repeated from within 32 KiB hold 18.7% of its bytes, from
further back 19.3%).  Prints the error of the result's ratio against the
corpus's under nine codecs (+: the text compresses better).

With F written pP (e.g. p0.05), phrases instead of lines: after each
space of the text, with probability P, one of K strings of 20-40 bytes (cut
at spaces from the other text) is inserted, so that the text gains strings
that recur across the stream rather than losing its own; the result is cut
to the corpus's size.

usage: text_line_pool_oracle.py --tool build/tests/c/text_tool CORPUS MU|cal F|pP K Z ...
       (each further group of four arguments is another variant)
"""
import argparse
import os
import random
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import like_metrics as lm  # noqa: E402

# short name -> like_metrics codec
CODECS = {"gz1": "gzip-1", "gz6": "gzip-6", "zs3": "zstd-3", "zs19": "zstd-19", "lz4": "lz4-1",
          "lz49": "lz4-9", "xz": "xz-6", "bz2": "bzip2-9", "br5": "brotli-5"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tool", required=True)
    ap.add_argument("corpus")
    ap.add_argument("variants", nargs="+")
    a = ap.parse_args()
    corpus = open(a.corpus, "rb").read()
    ref = {k: lm.ratio(c, corpus) for k, c in CODECS.items()}
    models = {}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(0, len(a.variants) - 3, 4):
            mu, fs, k, z = a.variants[i], a.variants[i + 1], int(a.variants[i + 2]), \
                float(a.variants[i + 3])
            phrases = fs.startswith("p")
            f = float(fs[1:] if phrases else fs)
            if mu not in models:
                m = os.path.join(tmp, "m%d.tdm" % len(models))
                args = [] if mu == "cal" else ["-p", "cache_mu=" + mu, "-p", "copy_mu=" + mu]
                subprocess.run([a.tool, "build"] + args + ["-o", m, a.corpus], check=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                models[mu] = m
            gen = subprocess.run([a.tool, "gen", models[mu], "1", "0", str(len(corpus))], check=True,
                                 stdout=subprocess.PIPE).stdout
            src = subprocess.run([a.tool, "gen", models[mu], "2", "0", str(4 << 20)], check=True,
                                 stdout=subprocess.PIPE).stdout
            pool, seen = [], set()
            rnd = random.Random(7)
            if phrases:
                # k strings of 20-40 bytes of the other text, cut at spaces
                words = src.replace(b"\n", b" ").split(b" ")
                while len(pool) < k:
                    j = rnd.randrange(len(words) - 12)
                    ph = b""
                    for wd in words[j:j + 12]:
                        if len(ph) >= 20:
                            break
                        ph += (b" " if ph else b"") + wd
                    if 20 <= len(ph) <= 40 and ph not in seen:
                        pool.append(ph)
                        seen.add(ph)
            else:
                for line in src.split(b"\n"):
                    if len(line) >= 16 and line not in seen:
                        pool.append(line)
                        seen.add(line)
                    if len(pool) >= k:
                        break
            w = [1 / (r + 1) ** z for r in range(len(pool))]
            if phrases:
                # after each space, with probability F, a string of the store
                parts = gen.split(b" ")
                out = []
                for wd in parts:
                    out.append(wd)
                    if rnd.random() < f:
                        out.append(rnd.choices(pool, w)[0])
                g = b" ".join(out)[:len(corpus)]
            else:
                out = [rnd.choices(pool, w)[0] if len(line) >= 16 and f > 0 and rnd.random() < f else line
                       for line in gen.split(b"\n")]
                g = b"\n".join(out)
            err = {n: 100 * (lm.ratio(c, g) / ref[n] - 1) for n, c in CODECS.items()}
            print("mu=%s %s=%.2f K=%d Z=%.1f | worst %.1f | %s"
                  % (mu, "P" if phrases else "F", f, k, z, max(abs(e) for e in err.values()),
                     " ".join("%s %+.1f" % kv for kv in err.items())), flush=True)


if __name__ == "__main__":
    main()
