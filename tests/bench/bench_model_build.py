#!/usr/bin/env python3
"""Speed of `testdata model build`, on one thread and with --threads 2.

usage: tests/bench/bench_model_build.py [--build build] [--reps 11]
                                        [--compare BINARY [--compare-threads N]]
                                        [--only en,de,...]

Builds a model from each corpus with `--threads 1` and `--threads 2` (and
with --compare, another testdata binary, e.g. a build of an earlier commit,
without --threads, i.e. one thread, or with --compare-threads N), in turns,
--reps rounds, and prints the best wall time and the best CPU time (user +
system of the child) of each, as ms and MB/s of corpus, and whether every
build wrote the same model file with 1 and 2 threads (it must; the
--compare build's model may differ, when its builder does, and is only
reported).

Corpora: en = ../shared/corpus/* (the 4 texts of the built-in model and the
README, concatenated as one file); de, it = Debian's fortunes-de and
fortunes-it, one document per fortune file with the "%" lines made blank
(as bench_text.py reads them); perldiag = perldiag.pod; copyright = the first
25,000,000 bytes of /usr/share/doc/*/copyright concatenated.  A corpus whose
files are missing is skipped.  Target (issue 16): at least 20 MB/s.
"""
import argparse
import glob
import os
import re
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def corpora(tmp):
    out = {}
    shared = next((d for d in (os.path.join(ROOT, "..", "shared", "corpus"), "/work/shared/corpus")
                   if os.path.isdir(d)), None)
    if shared:
        p = os.path.join(tmp, "en.txt")
        with open(p, "wb") as f:
            for name in sorted(os.listdir(shared)):
                with open(os.path.join(shared, name), "rb") as g:
                    f.write(g.read())
        out["en"] = [p]
    for lang in ("de", "it"):
        d = "/usr/share/games/fortunes/" + lang
        if not os.path.isdir(d):
            continue
        files = []
        for i, name in enumerate(sorted(os.listdir(d))):
            src = os.path.join(d, name)
            if name.endswith((".dat", ".u8")) or not os.path.isfile(src) or os.path.islink(src):
                continue
            dst = os.path.join(tmp, "%s%03d.txt" % (lang, i))
            with open(src, "rb") as g, open(dst, "wb") as f:
                f.write(re.sub(rb"(?m)^%$", b"", g.read()))
            files.append(dst)
        out[lang] = files
    pod = "/usr/share/perl/5.36/pod/perldiag.pod"
    if os.path.exists(pod):
        out["perldiag"] = [pod]
    cr = sorted(glob.glob("/usr/share/doc/*/copyright"))
    if cr:
        p, left = os.path.join(tmp, "copyright.txt"), 25_000_000
        with open(p, "wb") as f:
            for c in cr:
                if left <= 0:
                    break
                try:
                    with open(c, "rb") as g:
                        b = g.read(left)
                except OSError:
                    continue
                f.write(b)
                left -= len(b)
        out["copyright"] = [p]
    return out


def timed(cmd):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    w0 = time.perf_counter()
    subprocess.run(cmd, check=True)
    w = time.perf_counter() - w0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return w, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--reps", type=int, default=11)
    ap.add_argument("--compare", help="another testdata binary, run without --threads (the "
                    "CLI's default: one thread)")
    ap.add_argument("--compare-threads", type=int, help="run --compare with --threads N")
    ap.add_argument("--only", help="comma-separated corpus names")
    a = ap.parse_args()
    cli = os.path.join(a.build, "programs", "testdata")
    with tempfile.TemporaryDirectory() as tmp:
        runs = [("1 thread", [cli, "model", "build", "--threads", "1"]),
                ("2 threads", [cli, "model", "build", "--threads", "2"])]
        if a.compare:
            extra = [] if a.compare_threads is None else ["--threads", str(a.compare_threads)]
            runs.insert(0, ("compare", [a.compare, "model", "build"] + extra))
        print("corpus       bytes  " + "  ".join("%-26s" % r for r, _ in runs) + "  same model")
        for name, files in corpora(tmp).items():
            if a.only and name not in a.only.split(","):
                continue
            size = sum(os.path.getsize(f) for f in files)
            best = {r: [float("inf"), float("inf")] for r, _ in runs}
            for _ in range(a.reps):
                for r, cmd in runs:
                    w, c = timed(cmd + files + ["-o", os.path.join(tmp, r + ".tdm")])
                    best[r] = [min(best[r][0], w), min(best[r][1], c)]
            model = {r: open(os.path.join(tmp, r + ".tdm"), "rb").read() for r, _ in runs}
            same = model["1 thread"] == model["2 threads"]
            cells = ["wall %5.1f MB/s, CPU %5.1f" % (size / best[r][0] / 1e6, size / best[r][1] / 1e6)
                     for r, _ in runs]
            other = ""
            if "compare" in model:
                other = " (compare: %s)" % ("same" if model["compare"] == model["1 thread"] else "another model")
            print("%-9s %9d  %s  %s%s" % (name, size, "  ".join(cells), same, other))
            print("%-9s %9s  %s" % ("", "(ms)", "  ".join(
                "wall %6.1f, CPU %6.1f    " % (best[r][0] * 1e3, best[r][1] * 1e3) for r, _ in runs)))
            sys.stdout.flush()
            if not same:
                sys.exit("%s: 1 and 2 threads wrote different models" % name)


if __name__ == "__main__":
    main()
