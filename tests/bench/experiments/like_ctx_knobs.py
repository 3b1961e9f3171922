#!/usr/bin/python3
"""Which builder knobs narrow the context model's fast/strong codec spread (experiment, stop 46).

With a context model, greedy single-probe parsers (lz4 -1, snappy, gzip -1)
find less in `like` data than in the sample and chain-searching ones (lz4 -9,
zstd -19, xz -6) more.  This measures whether the builder alone (no new
bytes: the generator is unchanged) can narrow that by offering other
candidates or by calibrating on other codecs.

Build testdata with like_ctx_knobs.patch applied (it reads the knobs from
the environment; without them the profiles are byte-identical to the
project's), then run this once per setting:

  git worktree add /tmp/exp ac3da19 && cd /tmp/exp && \\
      git apply tests/bench/experiments/like_ctx_knobs.patch && \\
      cmake -S . -B build -DTD_BUILD_TESTS=OFF -DTD_BUILD_PYTHON=OFF && \\
      cmake --build build -j2 --target testdata_cli
  /usr/bin/python3 tests/bench/experiments/like_ctx_knobs.py --cli /tmp/exp/build/programs/testdata \\
      TAG [TD_EXP_RATES=0,0.5,1,2,3] [TD_EXP_CAL=gbl] [TD_EXP_FLOORS=0,256,512,1024] [TD_EXP_LEAST=8]

TD_EXP_RATES: copy rates tried (times the sample's; default 0,0.5,1);
TD_EXP_CAL: calibration codecs, g gzip -6, b bzip2 -9, l lz4 -1, h lz4 -9,
s gzip -1 (default gb); TD_EXP_FLOORS: entropy floors tried (default 256);
TD_EXP_LEAST: the shortest sample repeat copied (default 16).

For every file of ../shared/realdata and ../shared/corpus: profile, `gen
like` of --mib MiB at seed 1, and the signed ratio error of each of the ten
codecs; then per sample the median and worst |error|, and over the samples
the median of both and how many meet issue 14's target.
"""
import argparse
import concurrent.futures
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import like_metrics as lm  # noqa: E402

SHARED = "/work/shared"


def samples():
    out = []
    for sub, keep in (("realdata", lambda f: f != "README.md"), ("corpus", lambda f: f.endswith(".txt"))):
        d = os.path.join(SHARED, sub)
        out += [os.path.join(d, f) for f in sorted(os.listdir(d)) if keep(f)]
    return out


def one(cli, path, env, mib, tmp):
    b = os.path.basename(path)
    pj, g = os.path.join(tmp, b + ".json"), os.path.join(tmp, b + ".gen")
    e = dict(os.environ, **env)
    subprocess.run([cli, "profile", "--no-fingerprint", path, "-o", pj], env=e, check=True,
                   stderr=subprocess.DEVNULL)
    subprocess.run([cli, "gen", "like", "%dM" % mib, "--profile", pj, "--seed", "1", "-o", g], check=True)
    with open(g, "rb") as f:
        gen = f.read()
    with open(path, "rb") as f:
        sample = f.read()
    with open(pj) as f:
        model = "ctx" if '"ctx"' in f.read() else "lz"
    rg, rs = lm.ratios(gen), lm.ratios(sample)
    return b, model, {c: 100 * (rg[c] / rs[c] - 1) for c in rg}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", required=True)
    ap.add_argument("--mib", type=int, default=8)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("tag")
    ap.add_argument("knobs", nargs="*", help="NAME=VALUE environment settings")
    a = ap.parse_args()
    env = dict(k.split("=", 1) for k in a.knobs)
    with tempfile.TemporaryDirectory() as tmp, concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
        res = list(ex.map(lambda p: one(a.cli, p, env, a.mib, tmp), samples()))
    codecs = list(res[0][2])
    print(a.tag, env)
    print("%-15s %3s " % ("sample", "mdl") + " ".join("%7s" % c for c in codecs) + "    med  worst")
    meds, worsts, meet, spread = [], [], 0, []
    for b, model, err in res:
        v = [abs(x) for x in err.values()]
        md, w = statistics.median(v), max(v)
        meds.append(md)
        worsts.append(w)
        meet += md <= 5 and w <= 10
        if model == "ctx":
            spread.append(err["lz4-9"] - err["lz4-1"])
        print("%-15s %3s " % (b[:15], model) + " ".join("%+7.1f" % err[c] for c in codecs)
              + "  %5.1f %6.1f" % (md, w))
    print("median of medians %.1f, median worst %.1f, meet %d/%d; lz4 -9 minus lz4 -1 error, median "
          "over context models: %.1f points" % (statistics.median(meds), statistics.median(worsts), meet,
                                                 len(res), statistics.median(spread) if spread else 0))


if __name__ == "__main__":
    main()
