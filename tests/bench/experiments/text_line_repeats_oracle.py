#!/usr/bin/env python3
"""Would repeated lines make `text` compress like manual pages?  (experiment)

Models of Debian's French, Japanese and Korean manual pages miss their
corpus by 16-49% (docs/benchmarks.md, text): gzip and lz4 find the text more
repetitive than the pages, zstd, xz and brotli less.  The pages repeat whole
lines far apart (the same boilerplate in many files), which the model's
continuation cache of recent phrases does not make.  This script measures
that in the corpus and tests, outside the library, whether adding it to the
generated text would close the gap:

  1. the corpus: lines of at least --min bytes that repeat an earlier line
     exactly; the share of bytes in them, and runs of such lines (consecutive
     lines whose earlier copies are consecutive too: one copy for an LZ
     codec), by distance (log2 buckets) and length;
  2. text of the corpus's size from a model of it (`text_tool build`, with
     the continuation rates given by --mu, or calibrated), seed 1;
  3. the same text with runs copied in: at a line start, with the corpus's
     rate of runs per byte of unrepeated text, a run of the corpus's length
     (drawn from its runs) is copied from the output's line nearest to a
     distance drawn from the corpus's runs; the inserted bytes make the
     output longer, so it is cut at the corpus's size.

An oracle: the runs' lengths and distances are the corpus's own (a model
file would hold their histograms).  Prints the corpus statistics, then the
ratio error against the corpus under ten codec CLIs for each text (+: the
text compresses better), for each --mu and, with --fit N, for N steps of a
bisection of the rate that centres lz4 -1 and zstd -3 with the runs in
place (as `model build` centres them without); --seeds draws of the copies
per text.

  /usr/bin/python3 tests/bench/experiments/text_line_repeats_oracle.py \\
      --glob '/usr/share/man/fr/man*/*.gz' --mu cal --fit 5 --seeds 2
"""
import argparse
import bisect
import glob
import gzip
import os
import random
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
CODECS = [("gzip-1", ["gzip", "-1", "-c"]), ("gzip-6", ["gzip", "-6", "-c"]),
          ("zstd-3", ["zstd", "-3", "-q", "-c"]), ("zstd-19", ["zstd", "-19", "-q", "-c"]),
          ("lz4-1", ["lz4", "-1", "-c"]), ("lz4-9", ["lz4", "-9", "-c"]),
          ("xz-6", ["xz", "-6", "-c"]), ("bzip2-9", ["bzip2", "-9", "-c"]),
          ("brotli-5", ["brotli", "-q", "5", "-c"]), ("snappy", None)]


def csize(name, cmd, data):
    if cmd is None:
        import snappy
        return len(snappy.compress(data))
    return len(subprocess.run(cmd, input=data, stdout=subprocess.PIPE, check=True).stdout)


def read_docs(pattern):
    docs = []
    for f in sorted(glob.glob(pattern)):
        with (gzip.open(f, "rb") if f.endswith(".gz") else open(f, "rb")) as g:
            docs.append(g.read())
    return docs


def line_runs(data, minlen):
    """Runs of repeated lines: list of (distance, length in bytes).  A run
    starts at a line of at least minlen bytes seen before, and goes on over
    the lines (of any length) that equal those at the same distance."""
    last, runs, pos = {}, [], 0
    cur = None  # [distance, length, end of the run's source]
    for ln in data.split(b"\n"):
        n = len(ln) + 1
        if cur and data[pos - cur[0]:pos - cur[0] + n] == data[pos:pos + n]:
            cur[1] += n  # a line of any length continues a run at its distance
            if len(ln) >= minlen:
                last[ln] = pos
            pos += n
            continue
        prev = last.get(ln) if len(ln) >= minlen else None
        if prev is not None:
            d = pos - prev
            if cur and cur[0] == d:
                cur[1] += n
            else:
                if cur:
                    runs.append((cur[0], cur[1]))
                cur = [d, n]
        elif cur:
            runs.append((cur[0], cur[1]))
            cur = None
        if len(ln) >= minlen:
            last[ln] = pos
        pos += n
    if cur:
        runs.append((cur[0], cur[1]))
    return runs


def as_histograms(runs):
    """runs as a model would keep them: (distance, length) pairs drawn from
    two independent log2 histograms, uniformly within a bucket (a draw
    function)."""
    def hist(values):
        h = {}
        for v in values:
            b = max(0, v - 1).bit_length()
            h[b] = h.get(b, 0) + 1
        keys = sorted(h)
        return keys, [h[k] for k in keys]

    dk, dw = hist([d for d, _ in runs])
    lk, lw = hist([n for _, n in runs])

    def draw(rnd):
        b = rnd.choices(dk, dw)[0]
        c = rnd.choices(lk, lw)[0]
        return (rnd.randint((1 << b >> 1) + 1, 1 << b) if b else 1,
                rnd.randint((1 << c >> 1) + 1, 1 << c) if c else 1)
    return draw


def with_runs(text, runs, rate, size, seed, distance=0, draw=None):
    """text with runs copied in at line starts (rate: runs per byte of text);
    with distance, every run from that far back instead of its own; with
    draw, (distance, length) from draw(rnd) instead of the corpus's pairs."""
    rnd = random.Random(seed)
    out = bytearray()
    starts = []  # line starts in out
    for ln in text.split(b"\n"):
        if rnd.random() < rate * (len(ln) + 1) and starts:
            d, n = draw(rnd) if draw else runs[rnd.randrange(len(runs))]
            d = distance or d
            i = bisect.bisect_left(starts, len(out) - d)
            if i < len(starts) and starts[i] < len(out):
                src = starts[i]
                end = min(src + n, len(out))
                piece = bytes(out[src:end])
                k = piece.rfind(b"\n")
                if k >= 0:
                    piece = piece[:k + 1]
                    for j, c in enumerate(piece):
                        if c == 10 and j + 1 < len(piece):
                            starts.append(len(out) + j + 1)
                    starts.insert(bisect.bisect_right(starts, len(out)), len(out))
                    out += piece
        starts.append(len(out))
        out += ln + b"\n"
        if len(out) >= size:
            break
    return bytes(out[:size])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--glob", required=True, help="corpus files (.gz read with gzip)")
    ap.add_argument("--min", type=int, default=20, help="shortest line counted as a repeat")
    ap.add_argument("--mu", action="append", default=[],
                    help="continuation rates of the model (0-1; 'cal': calibrated); repeatable")
    ap.add_argument("--fit", type=int, default=0,
                    help="bisect the rate to centre lz4 -1 and zstd -3 with runs, N steps")
    ap.add_argument("--seeds", type=int, default=1, help="draws of the copies per text")
    ap.add_argument("--hist", action="store_true",
                    help="draw distances and lengths from two log2 histograms of the corpus's runs")
    ap.add_argument("--distance", type=int, default=0,
                    help="copy every run from this many bytes back (0: the corpus's distances)")
    ap.add_argument("--tool", default=os.path.join(ROOT, "build", "tests", "c", "text_tool"))
    a = ap.parse_args()
    docs = read_docs(a.glob)
    corpus = b"".join(docs)
    n = len(corpus)
    runs = line_runs(corpus, a.min)
    rep = sum(r[1] for r in runs)
    print("corpus: %d files, %d bytes; %d runs of repeated lines (>= %d bytes), %.1f%% of the bytes,"
          " mean run %.0f bytes" % (len(docs), n, len(runs), a.min, 100.0 * rep / n,
                                     rep / max(1, len(runs))))
    hist = {}
    for d, m in runs:
        b = max(0, d - 1).bit_length()
        hist[b] = hist.get(b, 0) + m
    print("  bytes by distance: " + ", ".join("<=2^%d %.1f%%" % (b, 100.0 * hist[b] / n)
                                             for b in sorted(hist)))
    # runs per byte of the rest, so that the copies make the corpus's share
    rate = len(runs) / max(1, n - rep)
    ref = {name: n / csize(name, cmd, corpus) for name, cmd in CODECS}
    print("corpus ratios: " + ", ".join("%s %.3f" % (k, v) for k, v in ref.items()))
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for i, d in enumerate(docs):
            p = os.path.join(tmp, "d%05d.txt" % i)
            with open(p, "wb") as f:
                f.write(d)
            paths.append(p)
        def measure(mu, runs_too):
            params = [] if mu == "cal" else ["-p", "cache_mu=%d" % round(float(mu) * 65536),
                                             "-p", "copy_mu=%d" % round(float(mu) * 65536)]
            model = os.path.join(tmp, "m.tdm")
            subprocess.run([a.tool, "build"] + params + ["-o", model] + paths, check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            g = subprocess.run([a.tool, "gen", model, "1", "0", str(2 * n)], check=True,
                               stdout=subprocess.PIPE).stdout
            out = [("text", g[:n])]
            if runs_too:
                draw = as_histograms(runs) if a.hist else None
                out += [("text + runs", with_runs(g, runs, rate, n, s, a.distance, draw))
                        for s in range(a.seeds)]
            res = []
            for label, data in out:
                errs = [100 * ((len(data) / csize(k, c, data)) / ref[k] - 1) for k, c in CODECS]
                print("mu %-5s %-12s worst %5.1f | %s" % (
                    mu, label, max(abs(e) for e in errs),
                    " ".join("%s %+.1f" % (k, e) for (k, _), e in zip(CODECS, errs))))
                sys.stdout.flush()
                res.append(errs)
            return res

        for mu in a.mu:
            measure(mu, True)
        if a.fit:
            # the builder's rule (text_build.c, calibrate): the mean of the
            # lz4 -1 and zstd -3 errors towards 0, here by bisection over the
            # builder's range 0.25-0.85, on the first copy seed
            lo, hi = 0.25, 0.85
            il, iz = [k for k, _ in CODECS].index("lz4-1"), [k for k, _ in CODECS].index("zstd-3")
            for _ in range(a.fit):
                mu = round((lo + hi) / 2, 3)
                errs = measure(mu, True)[1]
                if (errs[il] + errs[iz]) / 2 > 0:
                    hi = mu
                else:
                    lo = mu


if __name__ == "__main__":
    main()
