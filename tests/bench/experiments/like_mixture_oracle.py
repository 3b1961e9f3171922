#!/usr/bin/python3
"""Oracle: would a profile made of parts (a mixture) fit heterogeneous samples?

`like` makes data from one model per profile, so its 64 KiB chunks all
compress alike (issue 14's target 4: the sample's p10/p50/p90 per-chunk
ratio), and a sample made of unlike parts (an archive of text, images and
compressed files) gets one model of their average.  This tries the other
way as a post-process, with the CLI as it is: cut the sample into S-byte
segments, cluster them in k groups by zstd -3 ratio (1-D k-means on its
log), profile each group's segments (concatenated) with `testdata profile`,
and lay out the generated data as the sample's segments are laid out
(tiled), each segment the next S bytes of its group's own `like` stream
(seed 1 + group).  k = 1 is `like` as it is.  Prints, per sample and k, the
median and worst |error| of the ten codecs of like_metrics.py on MIB MiB,
the signed errors, the worst error of the independent-block ratios (zstd -3
and lz4 at 4, 16 and 128 KiB) and the per-64 KiB-chunk quantiles.

    /usr/bin/python3 tests/bench/experiments/like_mixture_oracle.py \\
        --cli B/programs/testdata [--seg 65536] [--k 1,2,3] [--mib 16] [--only NAME,...]

Samples: the archives of like_long_literals.py, the four texts of
../shared/corpus as one file, ptt5 and kennedy.xls.
"""
import argparse
import math
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
import like_metrics as lm  # noqa: E402
import like_long_literals as ll  # noqa: E402
import like_variants as lv  # noqa: E402


def kmeans1(x, k, iters=50):
    c = np.quantile(x, [(i + 0.5) / k for i in range(k)])
    for _ in range(iters):
        lab = np.argmin(np.abs(x[:, None] - c[None, :]), axis=1)
        nc = np.array([x[lab == j].mean() if (lab == j).any() else c[j] for j in range(k)])
        if np.allclose(nc, c):
            break
        c = nc
    return lab, c


def gen_like(cli, tmp, sample, size, seed, tag):
    sp = os.path.join(tmp, tag + ".sample")
    with open(sp, "wb") as f:
        f.write(sample)
    pp = os.path.join(tmp, tag + ".json")
    subprocess.run([cli, "profile", "--no-fingerprint", sp, "-o", pp], check=True, stderr=subprocess.DEVNULL)
    out = subprocess.run([cli, "gen", "like", str(size), "--profile", pp, "--seed", str(seed)],
                         check=True, stdout=subprocess.PIPE).stdout
    return out, os.path.getsize(pp)


def report(label, data, g):
    rs, rg = lm.ratios(data), lm.ratios(g)
    errs = [rg[c] / rs[c] - 1 for c in lm.RATIO_CODECS]
    ae = sorted(abs(e) for e in errs)
    bl = [lm.block_ratio(c, g[:8 << 20], bs) / lm.block_ratio(c, data[:8 << 20], bs) - 1
          for c in ("zstd-3", "lz4") for bs in (4096, 16384, 131072)]
    qs, qg = lm.chunk_quantiles(data), lm.chunk_quantiles(g)
    print("  %-22s median %5.1f%% worst %5.1f%% | %s | blocks %5.1f%% | chunks %s like %s" % (
        label, 100 * (ae[4] + ae[5]) / 2, 100 * ae[-1], " ".join("%+4.0f" % (100 * e) for e in errs),
        100 * max(abs(b) for b in bl), "/".join("%.2f" % q for q in qs), "/".join("%.2f" % q for q in qg)))
    sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", required=True)
    ap.add_argument("--seg", type=int, default=65536)
    ap.add_argument("--k", default="1,2,3")
    ap.add_argument("--mib", type=int, default=16)
    ap.add_argument("--only")
    a = ap.parse_args()
    cli = os.path.abspath(a.cli)
    with tempfile.TemporaryDirectory(prefix="like_mixture.") as tmp:
        samples = ll.archives(tmp)
        corpus = os.path.join(tmp, "corpus.txt")
        with open(corpus, "wb") as f:
            for n in ("alice29.txt", "asyoulik.txt", "lcet10.txt", "plrabn12.txt"):
                with open(os.path.join(lv.SHARED, "corpus", n), "rb") as g:
                    f.write(g.read())
        samples["corpus (4 texts)"] = corpus
        samples["ptt5"] = os.path.join(lv.SHARED, "realdata", "ptt5")
        samples["kennedy.xls"] = os.path.join(lv.SHARED, "realdata", "kennedy.xls")
        if a.only:
            samples = {k: v for k, v in samples.items() if k in a.only.split(",")}
        print("segments of %d bytes, %d MiB generated; codecs %s" % (a.seg, a.mib, " ".join(lm.RATIO_CODECS)))
        for name, path in samples.items():
            data = open(path, "rb").read()
            S, N = a.seg, a.mib << 20
            m = len(data) // S
            segs = [data[i * S:(i + 1) * S] for i in range(m)]
            r = np.array([math.log(lm.ratio("zstd-3", x)) for x in segs])
            print("== %s (%d bytes, %d segments; zstd -3 per segment %.2f..%.2f)" % (
                name, len(data), m, math.exp(r.min()), math.exp(r.max())))
            for k in [int(x) for x in a.k.split(",")]:
                if k == 1:
                    g, size = gen_like(cli, tmp, data, N, 1, "k1")
                    report("k=1 (one profile)", data, g)
                    continue
                if k > m:
                    continue
                lab, cen = kmeans1(r, k)
                nseg = N // S
                need = np.bincount(np.array([lab[i % m] for i in range(nseg)]), minlength=k)
                streams, sizes = {}, []
                for j in range(k):
                    if need[j]:
                        part = b"".join(segs[i] for i in range(m) if lab[i] == j)
                        streams[j], sz = gen_like(cli, tmp, part, int(need[j]) * S, 1 + j, "k%d_%d" % (k, j))
                        sizes.append(sz)
                pos = {j: 0 for j in streams}
                out = bytearray()
                for i in range(nseg):
                    j = lab[i % m]
                    out += streams[j][pos[j]:pos[j] + S]
                    pos[j] += S
                report("k=%d (%s)" % (k, ",".join("%.1f" % math.exp(c) for c in cen)), data, bytes(out))
                print("      %s segments; profiles %d bytes in all" % (
                    "+".join(str(int((lab == j).sum())) for j in range(k)), sum(sizes)))


if __name__ == "__main__":
    main()
