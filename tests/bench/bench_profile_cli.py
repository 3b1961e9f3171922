#!/usr/bin/python3
"""CPU time of `testdata profile` (issue 14, target 8: at least 100 MB/s), as a
user runs it, for two builds in turns.

usage: tests/bench/bench_profile_cli.py [--cli build/programs/testdata]
           [--compare OTHER_TESTDATA] [--fingerprint] [--reps 5] [FILE...]

For each input, runs `testdata profile FILE -o P` (with --no-fingerprint
unless --fingerprint) --reps times with each binary, in turns, and prints a
Markdown row: bytes, the best CPU time (user + system of the child) of
--compare and of --cli in ms, and MB/s of each.  Without FILEs, the inputs
are every file of ../shared/realdata, their concatenation with the files of
../shared/corpus, and 8 MiB of `text`, 20 MiB of `like --profile database`,
64 MiB of `text` and 256 MiB of `like --profile english`, made with --cli
into a temporary directory.
"""
import argparse
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_like import child_cpu  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHARED = next((d for d in (os.path.join(ROOT, "..", "shared"), "/work/shared")
               if os.path.isdir(d)), None)


def cpu_ms(cli, path, out, fingerprint):
    cmd = [cli, "profile", path, "-o", out] + ([] if fingerprint else ["--no-fingerprint"])
    return child_cpu(cmd, check=True, stderr=subprocess.DEVNULL)[1] * 1e3


def default_inputs(cli, tmp):
    files = []
    if SHARED:
        real = os.path.join(SHARED, "realdata")
        files = sorted(os.path.join(real, f) for f in os.listdir(real))
        concat = os.path.join(tmp, "concat")
        with open(concat, "wb") as o:
            for d in ("realdata", "corpus"):
                for f in sorted(os.listdir(os.path.join(SHARED, d))):
                    with open(os.path.join(SHARED, d, f), "rb") as i:
                        o.write(i.read())
        files.append(concat)
    made = (("text-8M", ["text", "8M"]),
            ("like-database-20M", ["like", "20M", "--profile", "database"]),
            ("text-64M", ["text", "64M"]),
            ("like-english-256M", ["like", "256M", "--profile", "english"]))
    for name, args in made:
        p = os.path.join(tmp, name)
        subprocess.run([cli, "gen"] + args + ["-o", p], check=True)
        files.append(p)
    return files


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "programs", "testdata"))
    ap.add_argument("--compare", help="another testdata binary (e.g. a build of an earlier commit)")
    ap.add_argument("--fingerprint", action="store_true",
                    help="time the default run (with the fingerprint)")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("files", nargs="*")
    a = ap.parse_args()
    clis = [c for c in (a.compare, a.cli) if c]
    with tempfile.TemporaryDirectory() as tmp:
        files = a.files or default_inputs(a.cli, tmp)
        out = os.path.join(tmp, "p.json")
        print("| input | bytes | %s | MB/s |" % ("before → after (ms)" if len(clis) == 2 else "ms"))
        print("|---|---:|---:|---:|")
        for f in files:
            n = os.path.getsize(f)
            best = [float("inf")] * len(clis)
            for _ in range(a.reps):
                for k, c in enumerate(clis):
                    best[k] = min(best[k], cpu_ms(c, f, out, a.fingerprint))
            print("| %s | %d | %s | %s |" % (os.path.basename(f), n,
                                            " → ".join("%.1f" % b for b in best),
                                            " → ".join("%.0f" % (n / b / 1e3) for b in best)))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
