#!/usr/bin/python3
"""What the 32-byte windows that `like` data shares with its sample are.

usage: tests/bench/experiments/like_shared_windows.py --cli BUILD/programs/testdata
           [--mib 32] [--seed 1] [--work DIR] [--only NAME,...]

For each sample of bench_like (../shared/realdata, ../shared/corpus) and the
hold-outs of like_variants.py: profile it, generate --mib MiB with --seed,
and count the windows of the generated data that occur in the sample, by
kind (like_metrics.shared_windows): one repeated byte (allowed by issue 14),
"runs" (at most 8 bytes outside runs of 4 or more equal bytes, the edges of
runs, or a pattern of 2-4 bytes repeated, a table) and "content" (the
rest); "loose" is the most bytes outside runs in a "runs" window.  Prints
one line per sample (and its content windows, hex) and the totals.
"""
import argparse
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import like_metrics as lm  # noqa: E402
import like_variants as lv  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--mib", type=int, default=32)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--work")
    ap.add_argument("--only", help="comma-separated sample names (H:NAME for a hold-out)")
    a = ap.parse_args()
    work = a.work or tempfile.mkdtemp(prefix="td-sw-")
    tot = {"all": 0, "const": 0, "runs": 0, "content": 0}
    print("%-26s %9s %9s %7s %5s %8s" % ("sample", "shared", "one-byte", "runs", "loose", "content"))
    for name, path in lv.samples().items():
        if a.only and name not in a.only.split(","):
            continue
        prof = os.path.join(work, name.replace(":", "_") + ".json")
        gen = os.path.join(work, "gen.bin")
        subprocess.run([a.cli, "profile", path, "-o", prof, "--no-fingerprint"], check=True,
                       stderr=subprocess.DEVNULL)
        subprocess.run([a.cli, "gen", "like", "%dM" % a.mib, "--profile", prof, "--seed", str(a.seed),
                        "-q", "-o", gen], check=True)
        with open(path, "rb") as f:
            sample = f.read()
        with open(gen, "rb") as f:
            data = f.read()
        s = lm.shared_windows(sample, data)
        for k in tot:
            tot[k] += s[k]
        print("%-26s %9d %9d %7d %5d %8d" % (name, s["all"], s["const"], s["runs"], s["loose_max"],
                                          s["content"]))
        for win in s["content_examples"]:
            print("    content: " + win.hex(" "))
        sys.stdout.flush()
    print("%-26s %9d %9d %7d %5s %8d" % ("total", tot["all"], tot["const"], tot["runs"], "", tot["content"]))


if __name__ == "__main__":
    main()
