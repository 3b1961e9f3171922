#!/usr/bin/env python3
"""Models with and without runs against their corpora (docs/benchmarks.md,
text, "Runs"): the ratio error of text of the corpus's size (seed 1) under
ten codec settings, for a model built by each of two builds' text_tool (or
one build with `-p runs=0` for the second), per corpus.

usage: text_runs_compare.py [--old BUILD | --runs0] [--new BUILD] [--only a,b] [--size N]
       text_runs_compare.py --write DIR [--only a,b]

--size N: text of N bytes (ratio against the corpus's ratio) instead of the
corpus's size.  --write DIR: only write each corpus to DIR/NAME.txt (for
other measurements, e.g. docs/benchmarks.md, text, "--dedup with runs").

Corpora, each made one file from files this machine has (Debian 12):
  en        ../shared/corpus/* (the built-in model's corpus)
  de, it    fortunes-de, fortunes-it, "%" lines blank (as bench_text.py)
  legal     8 of /usr/share/common-licenses (bench_text.py's hold-out)
  perldiag  perldiag.pod
  man-fr, man-ja, man-ko   the manual pages of /usr/share/man/{fr,ja,ko}, sorted
  comments  the /* */ comments (over 40 bytes) of /usr/include/**/*.h, sorted,
            first 2,000,000 bytes
  changelog changelog.Debian.gz of /usr/share/doc/*, sorted, first 2,000,000 bytes
  readme    README* and *.md of /usr/share/doc/* (not compressed), sorted,
            first 2,000,000 bytes

Prints, per corpus, its share of repeated lines (as `model info` of the new
build's model says) and the error line of text_mu_sweep.py for each build.
"""
import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.dirname(HERE))
import bench_text as bt  # noqa: E402  (its corpora: fortunes, hold-outs, reading)

LIMIT = 2000000


def corpus(name, files, limit=None):
    data = bt.read_corpus(name, files)[0]
    return data[:limit] if limit else data


def comments():
    out = []
    for p in sorted(glob.glob("/usr/include/**/*.h", recursive=True)):
        try:
            s = open(p, encoding="utf-8").read()
        except (OSError, UnicodeDecodeError):
            continue
        for m in re.finditer(r"/\*(.*?)\*/", s, re.S):
            lines = [re.sub(r"^\s*\*? ?", "", ln).rstrip() for ln in m.group(1).split("\n")]
            t = "\n".join(lines).strip()
            if len(t) > 40:
                out.append(t + "\n\n")
    return "".join(out).encode()[:LIMIT]


CORPORA = {
    "en": lambda: corpus("en", sorted(glob.glob(os.path.join(ROOT, "..", "shared", "corpus", "*")))),
    "de": lambda: corpus("de", bt.fortune_files(bt.FORTUNES_DE)),
    "it": lambda: corpus("it", bt.fortune_files(bt.FORTUNES_IT)),
    "legal": lambda: corpus("legal", bt.HOLDOUT["legal"]),
    "perldiag": lambda: corpus("perldiag", bt.HOLDOUT["perldiag"]),
    "man-fr": lambda: corpus("man-fr", bt.HOLDOUT["man-fr"]),
    "man-ja": lambda: corpus("man-ja", sorted(glob.glob("/usr/share/man/ja/man*/*.gz"))),
    "man-ko": lambda: corpus("man-ko", sorted(glob.glob("/usr/share/man/ko/man*/*.gz"))),
    "comments": comments,
    "changelog": lambda: corpus("changelog", sorted(glob.glob("/usr/share/doc/*/changelog.Debian.gz")),
                                LIMIT),
    "readme": lambda: corpus("readme", sorted(p for p in glob.glob("/usr/share/doc/*/README*") +
                                          glob.glob("/usr/share/doc/*/*.md")
                                          if not p.endswith(".gz") and os.path.isfile(p)), LIMIT),
}


def sweep(tool, corpus, params=(), size=None):
    env = dict(os.environ, TEXT_TOOL=tool, TEXT_SIZE=str(size or ""))
    r = subprocess.run([sys.executable, os.path.join(HERE, "text_mu_sweep.py"), corpus] +
                       list(params), stdout=subprocess.PIPE, check=True, env=env)
    return r.stdout.decode().strip().splitlines()[-1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--new", default=os.path.join(ROOT, "build"))
    ap.add_argument("--old", help="a build of the library before runs")
    ap.add_argument("--runs0", action="store_true", help="compare with -p runs=0 of --new")
    ap.add_argument("--only")
    ap.add_argument("--size", type=int)
    ap.add_argument("--write", metavar="DIR", help="write the corpora to DIR and stop")
    a = ap.parse_args()
    names = a.only.split(",") if a.only else list(CORPORA)
    if a.write:
        os.makedirs(a.write, exist_ok=True)
        for name in names:
            with open(os.path.join(a.write, name + ".txt"), "wb") as f:
                f.write(CORPORA[name]())
        return
    new = os.path.join(a.new, "tests", "c", "text_tool")
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            data = CORPORA[name]()
            if not data:
                print("%-10s (no files)" % name)
                continue
            path = os.path.join(tmp, name + ".txt")
            with open(path, "wb") as f:
                f.write(data)
            model = os.path.join(tmp, name + ".tdm")
            subprocess.run([new, "build", "-o", model, path], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            info = subprocess.run([os.path.join(a.new, "programs", "testdata"), "model", "info",
                                   model], stdout=subprocess.PIPE, check=True).stdout.decode()
            runs = re.search(r"^runs +(.*)$", info, re.M).group(1).split(" of ")[0]
            print("%-10s %d bytes, runs %s" % (name, len(data), runs))
            if a.old:
                print("  old   %s" % sweep(os.path.join(a.old, "tests", "c", "text_tool"), path,
                                         size=a.size))
            elif a.runs0:
                print("  runs0 %s" % sweep(new, path, ["runs=0"], size=a.size))
            print("  new   %s" % sweep(new, path, size=a.size))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
