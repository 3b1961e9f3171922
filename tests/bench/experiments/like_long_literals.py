#!/usr/bin/python3
"""The long literal runs that an LZ profile's sampling table dropped.

The generator draws (offset class, literal-length code) from a table of
4096 slots (docs/format.md, "Sampling tables"), so a pair that the sample
has less than once in 4096 sequences gets no slot.  Long literal runs (the
compressed members of an archive, a PNG inside a tar) are such pairs, and
they can hold much of a sample's literal bytes.  Since stop 53 the builder
puts back the bytes of the incompressible ones (like_profile.c,
keep_incompressible).  For each sample this prints the literal bytes per
sequence that the --base build's profile gives by its counts and that its
table draws (uniform in each length bucket, as the generator draws), then,
where the two builds' profiles differ, the ratio errors of `like` data made
from each: 4 MiB at seeds 1, 2 and 3, the mean over seeds of the median
and worst |error| of the ten codecs of like_metrics.py, and the mean signed
error per codec of the --cli build's data.

    /usr/bin/python3 tests/bench/experiments/like_long_literals.py \\
        --base OLD/programs/testdata --cli NEW/programs/testdata [--only NAME,...]

OLD, NEW: Release builds (`--target testdata_cli` is enough) of the commit
before and of this one.  Samples: the 27 of like_variants.py and six
archives made here with GNU tar (sorted names, mtime 0, owner 0), from
files of a Debian 12 machine: ../shared (realdata and corpus), the first
150 entries of /usr/share/doc (as two 6 MB slices), /etc, four packages of
/usr/lib/python3.11 and the first 8 MB of /usr/share/icons.  /etc and the
doc and icon directories depend on the packages installed, so those
samples are this machine's.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import like_metrics as lm  # noqa: E402
import like_variants as lv  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "ref"))
import ref_like  # noqa: E402  (the generator's tables, in Python)

SEEDS = (1, 2, 3)


def tar(out, cwd, names, head=None, skip=0):
    cmd = ["tar", "--sort=name", "--mtime=@0", "--owner=0", "--group=0", "--numeric-owner",
           "-cf", "-", "-C", cwd] + names
    data = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout
    data = data[skip:]
    if head:
        data = data[:head]
    with open(out, "wb") as f:
        f.write(data)
    return out


def archives(tmp):
    shared = lv.SHARED
    doc = sorted(os.listdir("/usr/share/doc"))[:150]
    return {
        "A:shared.tar": tar(os.path.join(tmp, "shared.tar"), shared, ["realdata", "corpus"]),
        "A:doc-1.tar": tar(os.path.join(tmp, "doc-1.tar"), "/usr/share/doc", doc, head=6000000),
        "A:doc-2.tar": tar(os.path.join(tmp, "doc-2.tar"), "/usr/share/doc", doc, head=6000000,
                           skip=6000000),
        "A:etc.tar": tar(os.path.join(tmp, "etc.tar"), "/", ["etc"]),
        "A:python.tar": tar(os.path.join(tmp, "python.tar"), "/usr/lib/python3.11",
                            ["email", "json", "http", "logging"]),
        "A:icons.tar": tar(os.path.join(tmp, "icons.tar"), "/usr/share", ["icons"], head=8000000),
    }


def code_mean(c):
    """Mean value of code c as the generator draws it (uniform in its bucket)."""
    return ref_like.vbase(c) + (ref_like.vspan(c) - 1) / 2


def slots(counts):
    """Slots per entry of the generator's largest-remainder table."""
    q = [0] * len(counts)
    for i in ref_like.slots(counts):
        q[i] += 1
    return q


def literal_bytes(prof):
    """Literal bytes per sequence by the counts and by the table (LZ
    models; None for a context model)."""
    m = prof["model"]
    if "seq" not in m:
        return None
    c = [x for _, _, x in m["seq"]]
    q = slots(c)
    lens = [code_mean(lc) for _, lc, _ in m["seq"]]
    return (sum(x * n for x, n in zip(c, lens)) / sum(c), sum(x * n for x, n in zip(q, lens)) / 4096)


def run(cli, sample, prof):
    subprocess.run([cli, "profile", "--no-fingerprint", sample, "-o", prof], check=True,
                   stderr=subprocess.DEVNULL)
    return open(prof, "rb").read()


def errors(cli, prof, sample):
    data = open(sample, "rb").read()
    rs = lm.ratios(data)
    out = []
    for seed in SEEDS:
        g = subprocess.run([cli, "gen", "like", "4M", "--profile", prof, "--seed", str(seed)],
                           check=True, stdout=subprocess.PIPE).stdout
        rg = lm.ratios(g)
        out.append([rg[c] / rs[c] - 1 for c in lm.RATIO_CODECS])
    return out


def one(args):
    name, path, base, cli, tmp = args
    p0 = os.path.join(tmp, name.replace(":", "_") + ".0.json")
    p1 = os.path.join(tmp, name.replace(":", "_") + ".1.json")
    j0 = run(base, path, p0)
    j1 = run(cli, path, p1)
    lb = literal_bytes(json.loads(j0))
    if j0 == j1:
        return name, lb, None, None
    return name, lb, errors(base, p0, path), errors(cli, p1, path)


def summary(errs):
    meds, worsts = [], []
    for e in errs:
        a = sorted(abs(x) for x in e)
        meds.append((a[4] + a[5]) / 2)
        worsts.append(a[-1])
    per = [sum(e[i] for e in errs) / len(errs) for i in range(len(lm.RATIO_CODECS))]
    return 100 * sum(meds) / len(meds), 100 * sum(worsts) / len(worsts), per


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base", required=True, help="testdata of the commit before")
    ap.add_argument("--cli", required=True, help="testdata of this commit")
    ap.add_argument("--only")
    a = ap.parse_args()
    cli, base = os.path.abspath(a.cli), os.path.abspath(a.base)
    with tempfile.TemporaryDirectory(prefix="like_long_literals.") as tmp:
        samples = dict(lv.samples())
        samples.update(archives(tmp))
        if a.only:
            keep = set(a.only.split(","))
            samples = {k: v for k, v in samples.items() if k in keep}
        with ProcessPoolExecutor(2) as ex:
            res = list(ex.map(one, [(n, p, base, cli, tmp) for n, p in samples.items()]))
    print("base %s, new %s; 4 MiB at seeds %s; codecs %s" % (base, cli, SEEDS, " ".join(lm.RATIO_CODECS)))
    print("%-24s %30s | %s" % ("sample", "literal B/seq, base: counts, table",
                               "median / worst |error| base -> new; mean signed error per codec, new"))
    for name, lb, e0, e1 in res:
        lbs = ("%9.2f %9.2f (%+5.1f%%)" % (lb[0], lb[1], 100 * (lb[1] / lb[0] - 1)) if lb and lb[0]
               else "%30s" % "context model")
        if e0 is None:
            print("%-24s %s | same profile" % (name[:24], lbs))
            continue
        m0, w0, _ = summary(e0)
        m1, w1, p1 = summary(e1)
        print("%-24s %s | %5.1f / %5.1f -> %5.1f / %5.1f; %s" % (
            name[:24], lbs, m0, w0, m1, w1, " ".join("%+.0f" % (100 * x) for x in p1)))


if __name__ == "__main__":
    main()
