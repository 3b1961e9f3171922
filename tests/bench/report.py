#!/usr/bin/python3
"""Benchmark report: run every benchmark, plot it, write docs/benchmarks.md.

    /usr/bin/python3 tests/bench/report.py --quick     # small sizes, ~1-2 minutes
    /usr/bin/python3 tests/bench/report.py             # full sizes (a quiet machine)

Runs, for the kinds the build has (absent kinds are reported as such):
  1. throughput of each kind and algorithm in process (bench_gen: td_fill into
     a reused buffer, one thread and all cores) next to memset, os.urandom,
     random.randbytes and fio's buffer filler, and of whole commands
     (`testdata gen` next to `openssl rand` and `dd if=/dev/urandom`):
     tests/bench/bench_core.py --json;
  2. the Python bindings against the C library and the stdlib:
     tests/bench/bench_python.py --json (needs -DTD_BUILD_PYTHON=ON);
  3. `compressible`: achieved ratio of gzip -6, zstd -3, lz4 -1 and xz -6
     for each target ratio, next to fio's buffer_compress_percentage data;
  4. `text`: its fingerprint against the corpus it was derived from
     (compression ratios, byte entropy, word lengths, rank-frequency,
     8-word sequences copied verbatim from the corpus);
  5. (full mode) the kinds' own bench scripts (tests/bench/bench_compressible.py,
     bench_text.*, bench_cli.sh), raw output in an appendix.
Writes docs/img/*.png and docs/benchmarks.md (with the machine: CPU model,
cores, kernel, library version, date).  Needs matplotlib (python3-matplotlib),
a built tree (--build), and optionally fio, openssl, zstd, lz4, xz.
"""
import argparse
import collections
import datetime
import importlib.util
import json
import lzma
import math
import os
import pathlib
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zlib

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
HERE = pathlib.Path(__file__).resolve().parent
MiB = 1 << 20


def log(*a):
    print("report:", *a, file=sys.stderr, flush=True)


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, check=True, **kw).stdout


# --- machine ---------------------------------------------------------------

def machine(td):
    cpu = platform.processor() or platform.machine()
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        load = "%.2f %.2f %.2f" % os.getloadavg()
    except OSError:
        load = "?"
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "kernel": f"{platform.system()} {platform.release()}",
        "os": (platform.freedesktop_os_release().get("PRETTY_NAME", "")
               if hasattr(platform, "freedesktop_os_release") else ""),
        "library": run([td, "--version"]).strip(),
        "commit": subprocess.run(["git", "-C", str(ROOT), "describe", "--always", "--dirty"],
                                 capture_output=True, text=True).stdout.strip(),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "load": load,
    }


def kinds(td):
    """Kind names from `testdata gen --help` ("KIND   zero | random | ...")."""
    out = subprocess.run([td, "gen", "--help"], capture_output=True, text=True).stdout
    for line in out.splitlines():
        m = re.match(r"\s*KIND\s+(.*)", line)
        if m:
            return [k.strip() for k in m.group(1).split("|")]
    return ["zero", "random"]


# --- 1, 2: throughput ------------------------------------------------------

def bench_kinds(bench_gen, have, quick):
    """In-process GB/s of every kind and algorithm (bench_gen), 1 thread and all cores."""
    specs = ["memset", "zero", "random:algorithm=chacha20", "random:algorithm=fast"]
    if "text" in have:
        specs.append("text")
    if "compressible" in have:
        specs += ["compressible:ratio=2", "compressible:ratio=3", "compressible:ratio=10",
                  "compressible:ratio=3,dedup=2"]
    specs += [k for k in have if k not in ("zero", "random", "text", "compressible")]
    secs = "0.3" if quick else "2"
    res = {}
    for threads in ("1", "0"):
        for spec in specs:  # one at a time: a kind that fails is only missing, not fatal
            p = subprocess.run([bench_gen, "--seconds", secs, "--threads", threads,
                                "--buf", str(MiB if threads == "1" else 8 * MiB), spec],
                               capture_output=True, text=True)
            if p.returncode != 0 or not p.stdout.strip():
                log(f"bench_gen {spec}: {p.stderr.strip()}")
                continue
            name, gbs = p.stdout.split()[:2]
            res.setdefault(name, {})[f"t={threads}"] = float(gbs)
    return res


def bench_core(build, quick, tmp):
    out = tmp / "core.json"
    cmd = [sys.executable, str(HERE / "bench_core.py"), "--build", str(build), "--json", str(out)]
    if quick:
        cmd += ["--quick", "--size", str(256 * MiB)]
    log("bench_core.py", " ".join(cmd[2:]))
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return json.loads(out.read_text())


def bench_python(build, td, quick, tmp):
    pydir = build / "bindings" / "python"
    if not (pydir / "testdata").is_dir():
        log("no Python bindings in the build: skipping bench_python.py")
        return None
    out = tmp / "python.json"
    cmd = [sys.executable, str(HERE / "bench_python.py"), "--json", str(out)]
    if quick:
        cmd += ["--size", "256M", "--repeat", "1"]
    env = dict(os.environ, PYTHONPATH=str(pydir), TESTDATA_CLI=str(td))
    log("bench_python.py", " ".join(cmd[2:]))
    p = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0 or not out.exists():
        log("bench_python.py failed:", p.stderr[-500:])
        return None
    return json.loads(out.read_text())


# --- 3: compressible ratio accuracy -----------------------------------------

def _cli_len(cmd, data):
    return len(subprocess.run(cmd, input=data, stdout=subprocess.PIPE, check=True).stdout)


def compressors():
    c = [("gzip -6", lambda d: len(zlib.compress(d, 6)))]
    if shutil.which("zstd"):
        c.append(("zstd -3", lambda d: _cli_len(["zstd", "-3", "-c", "-q"], d)))
    if shutil.which("lz4"):
        c.append(("lz4 -1", lambda d: _cli_len(["lz4", "-1", "-c", "-q"], d)))
    c.append(("xz -6", lambda d: len(lzma.compress(d, preset=6))))
    return c


def fio_data(path, size, ratio):
    """fio's compressible buffers for a target ratio (as fio users ask for one)."""
    pct = round(100 * (1 - 1 / ratio))
    subprocess.run(["fio", "--name=x", "--ioengine=sync", "--rw=write", "--bs=64k",
                    f"--filename={path}", f"--size={size}", f"--buffer_compress_percentage={pct}",
                    "--refill_buffers", "--buffer_compress_chunk=4k",
                    f"--output={path}.log"], check=True, stdout=subprocess.DEVNULL)
    data = pathlib.Path(path).read_bytes()
    os.unlink(path)
    return data


def bench_compressible(td, quick, tmp):
    ratios = [1.5, 2, 3, 5, 10] if quick else [1.25, 1.5, 2, 3, 4, 6, 10]
    size = (4 if quick else 32) * MiB
    comps = compressors()
    have_fio = shutil.which("fio") is not None
    rows = []
    for r in ratios:
        log(f"compressible --ratio {r}")
        ours = subprocess.run([td, "gen", "compressible", str(size), "--ratio", str(r), "--seed", "1"],
                              stdout=subprocess.PIPE, check=True).stdout
        fio = fio_data(tmp / "fio.bin", size, r) if have_fio else None
        for name, f in comps:
            rows.append({"target": r, "compressor": name, "ours": size / f(ours),
                         "fio": size / f(fio) if fio is not None else None})
    return {"size": size, "rows": rows, "fio": have_fio}


# --- 4: text fingerprint ------------------------------------------------------

def find_corpus(arg):
    cands = [arg, os.environ.get("TD_CORPUS"), ROOT.parent / "shared" / "corpus",
             ROOT.parent.parent / "shared" / "corpus", "/work/shared/corpus"]
    for c in cands:
        if c and pathlib.Path(c).is_dir() and list(pathlib.Path(c).glob("*.txt")):
            return pathlib.Path(c)
    return None


WORD = re.compile(rb"[A-Za-z']+")


def fingerprint(data):
    n = len(data)
    counts = collections.Counter(data)
    entropy = -sum(c / n * math.log2(c / n) for c in counts.values())
    words = [w.lower() for w in WORD.findall(data)]
    freq = collections.Counter(words)
    lens = collections.Counter(min(len(w), 15) for w in words)
    sentences = max(1, len(re.findall(rb"[.!?](\s|$)", data)))
    return {
        "bytes": n, "entropy": entropy, "words": len(words), "vocabulary": len(freq),
        "mean_word_len": sum(len(w) for w in words) / max(1, len(words)),
        "words_per_sentence": len(words) / sentences,
        "gzip -6": n / len(zlib.compress(data, 6)),
        "zstd -3": n / _cli_len(["zstd", "-3", "-c", "-q"], data) if shutil.which("zstd") else None,
        "xz -6": n / len(lzma.compress(data, preset=6)),
        "rank_freq": [c / max(1, len(words)) for _, c in freq.most_common(2000)],
        "len_hist": {k: v / max(1, len(words)) for k, v in sorted(lens.items())},
        "top": [w.decode() for w, _ in freq.most_common(12)],
        "_words": words,
    }


def bench_text(td, quick, corpus_dir):
    corpus = b"".join(p.read_bytes() for p in sorted(corpus_dir.glob("*.txt")))
    size = (4 if quick else 32) * MiB
    log("text", size)
    t0 = time.perf_counter()
    gen = subprocess.run([td, "gen", "text", str(size), "--seed", "1"],
                         stdout=subprocess.PIPE, check=True).stdout
    secs = time.perf_counter() - t0
    # Compare like with like: compress the same amount of each (corpus: all of it).
    sample = gen[:len(corpus)]
    fc, fg = fingerprint(corpus), fingerprint(sample)
    # Regurgitation: share of the generated 8-word sequences found verbatim in the corpus.
    k = 8
    cw = fc.pop("_words")
    gw = fg.pop("_words")
    grams = {tuple(cw[i:i + k]) for i in range(len(cw) - k + 1)}
    g = [tuple(gw[i:i + k]) for i in range(0, len(gw) - k + 1)]
    copied = sum(x in grams for x in g) / max(1, len(g))
    return {"corpus": fc, "text": fg, "copied_8grams": copied, "gen_gbps": size / secs / 1e9,
            "corpus_dir": str(corpus_dir), "size": size}


# --- 5: the kinds' own bench scripts ---------------------------------------------

def branch_scripts(td, build, quick):
    out = []
    env = dict(os.environ, TESTDATA_CLI=str(td), TESTDATA=str(td),
               PYTHONPATH=str(build / "bindings" / "python"), TD_BUILD_DIR=str(build))
    for p in sorted(HERE.iterdir()):
        if p.name in ("bench_core.py", "bench_python.py", "bench_tree.py", "bench_like.py",
                      "report.py") or \
                not p.name.startswith("bench_"):
            continue
        if p.suffix == ".py":
            cmd = [sys.executable, str(p)]
        elif p.suffix == ".sh":
            cmd = ["sh", str(p)]
        else:
            continue
        if p.name == "bench_compressible.py":
            cmd += ["--cli", str(td), "--plot", str(ROOT / "docs" / "img" / "compressible_codecs.png")]
            cmd += ["--quick"] if quick else []
        elif p.name == "bench_text.py":
            cmd += ["--build", str(build)]
        elif p.name == "bench_mpi.sh":
            if not shutil.which("mpiexec"):
                out.append((p.name, "(not run: no mpiexec)"))
                continue
            cmd += [str(build)]
        elif p.name == "bench_dask.py":   # needs dask.distributed; see docs/scale-out.md
            try:
                import distributed  # noqa: F401
            except ImportError:
                out.append((p.name, "(not run: no dask.distributed)"))
                continue
        log("running", p.name)
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800,
                               cwd=ROOT)
            text = r.stdout + (f"\n(exit {r.returncode})\n{r.stderr[-2000:]}" if r.returncode else "")
        except subprocess.TimeoutExpired:
            text = "(timed out after 30 min)"
        out.append((p.name, text.strip()))
    return out


# --- plots ----------------------------------------------------------------------

def barh(path, title, items, xlabel="GB/s", log_x=True, highlight=("testdata", "lib ", "zero",
                                                                    "random", "text", "compressible")):
    items = [(k, v) for k, v in items if v]
    if not items:
        return False
    fig, ax = plt.subplots(figsize=(8, 0.32 * len(items) + 1.3))
    labels = [k for k, _ in items][::-1]
    vals = [v for _, v in items][::-1]
    colors = ["#1f77b4" if any(h in k for h in highlight) and not k.startswith(("python ", "fio", "memset",
              "cmd openssl", "cmd dd", "os.", "random.randbytes")) else "#aaaaaa" for k in labels]
    ax.barh(labels, vals, color=colors)
    for y, v in enumerate(vals):
        ax.text(v, y, f" {v:.2f}", va="center", fontsize=8)
    if log_x:
        ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_title(title, fontsize=10)
    ax.tick_params(axis="y", labelsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def plot_compressible(path, comp):
    """Deviation of the achieved ratio from the target, per compressor."""
    names = list(dict.fromkeys(r["compressor"] for r in comp["rows"]))
    fig, axes = plt.subplots(1, len(names), figsize=(3.2 * len(names), 3.4), sharey=True)
    for ax, name in zip(axes, names):
        rows = [r for r in comp["rows"] if r["compressor"] == name]
        t = [r["target"] for r in rows]
        ax.axhspan(-5, 5, color="#eeeeee", label="within 5%")
        ax.axhline(0, color="#999999", lw=1)
        ax.plot(t, [100 * (r["ours"] / r["target"] - 1) for r in rows], "o-",
                label="testdata compressible")
        if comp["fio"]:
            ax.plot(t, [100 * (r["fio"] / r["target"] - 1) for r in rows], "s--", color="#d62728",
                    label="fio buffer_compress_percentage")
        ax.set_xscale("log")
        ax.set_xticks(t, [f"{x:g}" for x in t])
        ax.minorticks_off()
        ax.set_title(name, fontsize=10)
        ax.set_xlabel("target ratio")
    axes[0].set_ylabel("achieved / target - 1 (%)")
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_text(path, tx):
    fig, (a1, a2, a3) = plt.subplots(1, 3, figsize=(11, 3.4))
    for key, label, style in (("corpus", "corpus", "-"), ("text", "testdata text", "--")):
        rf = tx[key]["rank_freq"]
        a1.loglog(range(1, len(rf) + 1), rf, style, label=label)
        lh = tx[key]["len_hist"]
        a2.plot(list(lh.keys()), list(lh.values()), style + "o", ms=3, label=label)
    a1.set_title("word rank-frequency", fontsize=10)
    a1.set_xlabel("rank")
    a1.legend(fontsize=8)
    a2.set_title("word length (letters)", fontsize=10)
    comps = [c for c in ("gzip -6", "zstd -3", "xz -6") if tx["corpus"].get(c)]
    x = range(len(comps))
    a3.bar([i - 0.2 for i in x], [tx["corpus"][c] for c in comps], 0.4, label="corpus")
    a3.bar([i + 0.2 for i in x], [tx["text"][c] for c in comps], 0.4, label="testdata text")
    a3.set_xticks(list(x), comps)
    a3.set_title("compression ratio (same size)", fontsize=10)
    a3.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# --- markdown ---------------------------------------------------------------------

def cell(text):
    """Table cell text: a | would end the cell, even inside backticks."""
    return str(text).replace("|", "\\|")


def tree_rows_md(w, name, r):
    rows = r["rows"]
    w(f"**{name}**: {r['files']:,} files, {r['bytes']:,} bytes (`{' '.join(r['spec'])}`)\n")
    w("| command | wall s | CPU s | files/s | testdata / tar |\n|---|---:|---:|---:|---:|")
    for k, (wall, cpu) in rows.items():
        ref = rows["tar -xf"] if k.startswith("gen") else (
            rows["tar -cf /dev/null"] if k.startswith("verify") else None)
        ratio = f"{wall / ref[0]:.2f}x" if ref else ""
        label = f"testdata tree {k}" if k.startswith(("gen", "verify")) else k
        label = label.replace("|", "\\|")  # a pipe inside a table cell
        w(f"| `{label}` | {wall:.3f} | {cpu:.3f} | {r['files'] / wall:,.0f} | {ratio} |")
    cat = rows.get("tar -cf - | cat")
    if cat:
        w("\nAgainst `tar -cf - DIR | cat > /dev/null`, which reads the bytes as verify does: " +
          ", ".join(f"verify {k.split()[1]} {rows[k][0] / cat[0]:.2f}x" for k in rows
                    if k.startswith("verify")) + ".")
    w("")


def write_trees(w, trees):
    w("## File trees against GNU tar\n")
    w(f"`tests/bench/bench_tree.py` on {trees['where']}: `testdata tree gen` against `tar -xf` "
      "of the same tree from an uncompressed archive in the page cache, `testdata tree verify` "
      "against `tar -cf /dev/null` (which only stats: GNU tar does not read files it would "
      "write to /dev/null) and `tar -cf - | cat` (reads every byte). Best of "
      f"{trees['repeat']}; targets: gen and verify at most 1.5x tar.\n")
    tree_rows_md(w, "4 KiB files", trees["small"])
    tree_rows_md(w, "default (Impressions) distribution", trees["default"])


def bench_trees(td, quick, tmp):
    """bench_tree.py's figures (small trees in quick mode)."""
    out = tmp / "trees.json"
    repeat = 1 if quick else 3
    cmd = [sys.executable, str(HERE / "bench_tree.py"), "--testdata", str(td), "--json", str(out),
           "--repeat", str(repeat)] + (["--files", "20000", "--total", "256M"] if quick else [])
    log("bench_tree.py", " ".join(cmd[2:]))
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        log("bench_tree.py failed:", p.stderr[-500:])
        return None
    r = json.loads(out.read_text())
    r["repeat"] = repeat
    r["where"] = p.stdout.split("\n")[0].split("; ")[-1]
    return r


def compressible_tables(text):
    """bench_compressible.py's output as Markdown tables (its markdown())."""
    spec = importlib.util.spec_from_file_location("bench_compressible",
                                                  HERE / "bench_compressible.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.markdown(text)


NOTES = re.compile(r"<!-- notes: (\S+) -->\n(.*?)<!-- /notes -->\n?", re.S)


def kept_notes(path):
    """{section: text} of the hand-written blocks of an existing report:
    figures measured by other commands (bench scripts run on their own), which
    a rewrite keeps, each at the end of its section, until someone removes
    them."""
    try:
        return {k: v for k, v in NOTES.findall(path.read_text())}
    except FileNotFoundError:
        return {}


def md_compressible(comp, imgs, scripts):
    """The lines of the compressible section, without its notes block."""
    L = []
    w = L.append
    w("## `compressible`: ratio accuracy against fio\n")
    if comp:
        w(f"`testdata gen compressible {comp['size'] // MiB}M --ratio R` compressed whole by each "
          "compressor, next to fio's data for the same target "
          "(`--buffer_compress_percentage=round(100*(1-1/R)) --buffer_compress_chunk=4k "
          "--refill_buffers`).\n")
        if "compressible.png" in imgs:
            w("![compressible accuracy](img/compressible.png)\n")
        if (ROOT / "docs" / "img" / "compressible_codecs.png").exists():
            w("Every codec, whole streams and `--compress-block` pieces "
              "(`tests/bench/bench_compressible.py`; its tables below, raw output in the appendix):\n")
            w("![compressible, all codecs and block sizes](img/compressible_codecs.png)\n")
        bc = dict(scripts or []).get("bench_compressible.py", "")
        if "== 1." in bc:
            w(compressible_tables(bc))
        names = list(dict.fromkeys(r["compressor"] for r in comp["rows"]))
        w("| target | " + " | ".join(f"{n} (testdata / fio)" for n in names) + " |")
        w("|---:|" + "---:|" * len(names))
        for t in dict.fromkeys(r["target"] for r in comp["rows"]):
            cells = []
            for n in names:
                r = next(x for x in comp["rows"] if x["target"] == t and x["compressor"] == n)
                fio = f"{r['fio']:.2f}" if r["fio"] else "–"
                cells.append(f"{r['ours']:.2f} ({100 * (r['ours'] / t - 1):+.1f}%) / {fio}")
            w(f"| {t:g} | " + " | ".join(cells) + " |")
        worst = max(abs(r["ours"] / r["target"] - 1) for r in comp["rows"])
        line = f"\nWorst deviation from the target: testdata {100 * worst:.1f}%"
        if comp["fio"]:
            fworst = max(abs(r["fio"] / r["target"] - 1) for r in comp["rows"])
            line += f", fio {100 * fworst:.1f}%"
        w(line + ".\n")
    else:
        w("Not measured: this build has no `compressible` kind.\n")
    return L


def md_text(tx, imgs):
    """The lines of the text section, without its notes block."""
    L = []
    w = L.append
    w("## `text`: fingerprint against the corpus\n")
    if tx:
        w(f"{tx['size'] // MiB} MiB of `testdata gen text --seed 1` (generated at "
          f"{tx['gen_gbps']:.2f} GB/s, one thread, into a pipe), its first "
          f"{tx['corpus']['bytes']} bytes compared with the corpus it was derived from "
          f"(`{tx['corpus_dir']}`, {tx['corpus']['bytes']} bytes).\n")
        if "text.png" in imgs:
            w("![text fingerprint](img/text.png)\n")
        w("| | corpus | testdata text |\n|---|---:|---:|")
        for k, fmt in (("entropy", "{:.3f} bits/byte"), ("gzip -6", "{:.2f}x"), ("zstd -3", "{:.2f}x"),
                       ("xz -6", "{:.2f}x"), ("mean_word_len", "{:.2f}"),
                       ("words_per_sentence", "{:.1f}"), ("vocabulary", "{}")):
            a, b = tx["corpus"].get(k), tx["text"].get(k)
            if a is not None and b is not None:
                w(f"| {k.replace('_', ' ')} | {fmt.format(a)} | {fmt.format(b)} |")
        w(f"| most frequent words | {' '.join(tx['corpus']['top'])} | {' '.join(tx['text']['top'])} |")
        w(f"\n8-word sequences of the generated text found verbatim in the corpus: "
          f"{100 * tx['copied_8grams']:.2f}%.\n")
    else:
        w("Not measured: this build has no `text` kind (or the corpus was not found).\n")
    return L


def write_markdown(out, m, quick, kind_list, kres, core, py, comp, tx, scripts, imgs, secs,
                   trees=None):
    L = []
    notes = kept_notes(out)
    w = L.append

    def keep(section):
        if section in notes:
            w(f"<!-- notes: {section} -->\n{notes.pop(section)}<!-- /notes -->\n")

    w("# Benchmarks\n")
    w("<!-- Generated by tests/bench/report.py; edit only inside notes blocks "
      "(<!-- notes: SECTION --> ... <!-- /notes -->), which a rewrite keeps. -->\n")
    mode = ("quick mode: small sizes, one repeat, on a shared machine; indicative only"
            if quick else "full mode")
    w(f"Measured with `/usr/bin/python3 tests/bench/report.py{' --quick' if quick else ''}` "
      f"({mode}) in {secs:.0f} s.\n")
    w("| machine | |\n|---|---|")
    for k, label in (("cpu", "CPU"), ("cores", "cores"), ("kernel", "kernel"), ("os", "OS"),
                     ("library", "library"), ("commit", "commit"), ("date", "date"),
                     ("load", "load average at start")):
        w(f"| {label} | {m.get(k, '')} |")
    w("")
    w(f"Kinds in this build: {', '.join('`%s`' % k for k in kind_list)}.\n")
    w("Reproduce: build (`cmake -S . -B build -DTD_BUILD_PYTHON=ON && cmake --build build`), then "
      "`/usr/bin/python3 tests/bench/report.py [--quick] [--build build]`. It rewrites this file "
      "and `docs/img/*.png`.\n")

    w("## Throughput of each kind (in process)\n")
    w("`td_fill` into a reused buffer (bench_gen): 1 MiB with one thread, 8 MiB with all cores "
      "(`threads=0`). Peers: `memset` (the ceiling), Python's `os.urandom` and `random.randbytes`, "
      "fio's buffer filler (`ioengine=null`, `refill_buffers`).\n")
    if "throughput.png" in imgs:
        w("![in-process throughput](img/throughput.png)\n")
    w("| generator | GB/s, 1 thread | GB/s, all cores |\n|---|---:|---:|")
    for name, v in kres.items():
        w(f"| {name} | {v.get('t=1', float('nan')):.2f} | {v.get('t=0', float('nan')):.2f} |")
    for k in ("python os.urandom", "python random.randbytes", "fio refill_buffers (null engine)"):
        if k in core["gbps"]:
            w(f"| {k} (peer) | {core['gbps'][k]:.2f} | |")
    w("")
    keep("throughput")
    w("## Whole commands\n")
    w(f"Each command writes {core['bytes_per_command'] / 2**20:.0f} MiB to `/dev/null` or into a pipe "
      f"(`| cat > /dev/null`), best of {core['repeat']}.\n")
    if "commands.png" in imgs:
        w("![command throughput](img/commands.png)\n")
    w("| command | GB/s |\n|---|---:|")
    for k, v in core["gbps"].items():
        if k.startswith("cmd "):
            w(f"| {cell('`' + k[4:] + '`')} | {v:.2f} |")
    w("")
    w("| ratio | measured | target | |\n|---|---:|---:|---|")
    for r in core["ratios"]:
        w(f"| {r['label']} | {r['ratio']:.2f}x | >= {r['target']}x | {'met' if r['met'] else 'MISSED'} |")
    w("")

    w("## Python bindings\n")
    if py:
        if "python.png" in imgs:
            w("![python throughput](img/python.png)\n")
        w(f"{py['bytes'] / 2**20:.0f} MiB per run, best of {py['repeat']}.\n")
        w("| measurement | GB/s | ratio | target |\n|---|---:|---:|---|")
        for r in py["rows"]:
            ratio = f"{r['ratio']:.2f}x {r['vs']}" if r["ratio"] else ""
            tgt = f">= {r['target']}x" if r["target"] else ""
            w(f"| {r['label'] or '″'} | {r['gbps']:.2f} | {ratio} | {tgt} |")
        w("")
    else:
        w("Not measured: the build has no Python bindings (`-DTD_BUILD_PYTHON=ON`).\n")

    L += md_compressible(comp, imgs, scripts)
    keep("compressible")

    L += md_text(tx, imgs)
    keep("text")

    like_results = HERE / "results_like.txt"
    if like_results.exists():
        # Measured separately (tests/bench/bench_like.py takes tens of
        # minutes): the committed summary and plot of its last full run.
        w("## `like`: data like a sample\n")
        w("For each file of ../shared/realdata and ../shared/corpus: `testdata profile FILE`, then "
          "`testdata gen like` from the profile, compared with the file under each codec "
          "(ratio, compressor CPU time per byte, independent 4/16/128 KiB blocks, 64 KiB-chunk "
          "quantiles, dedup, shared runs), next to `compressible --ratio R` and fio's "
          "`buffer_compress_percentage` at the sample's gzip -6 ratio. Reproduce: "
          "`/usr/bin/python3 tests/bench/bench_like.py --cli build/programs/testdata "
          "--tsv results_like.tsv` (32 MiB per sample, fio's data too when fio is installed; "
          "add `--holdout --no-fio` for the hold-out files), plot with "
          "`tests/bench/plot_like.py results_like.tsv docs/img/like.png`.\n")
        if (ROOT / "docs" / "img" / "like.png").exists():
            w("![like fidelity](img/like.png)\n")
        text = like_results.read_text()
        if "== summary" in text:  # the per-sample tables stay in the file
            text = text[text.index("== summary"):]
        w("Summary of `tests/bench/results_like.txt` (per-sample tables there):\n")
        w("```text\n" + text.strip() + "\n```\n")
    keep("like")

    if trees:
        write_trees(w, trees)
    keep("trees")
    for section in list(notes):  # a section this run did not write
        keep(section)

    if scripts:
        w("## Appendix: the kinds' own benchmark scripts\n")
        for name, text in scripts:
            w(f"<details><summary><code>tests/bench/{name}</code></summary>\n\n```text\n{text}\n```\n</details>\n")
    elif quick:
        w("The kinds' own bench scripts (`tests/bench/bench_*`) run in full mode only.\n")
    out.write_text("\n".join(L).rstrip() + "\n")


SECTIONS = {"compressible": "## `compressible`: ratio accuracy against fio\n",
            "text": "## `text`: fingerprint against the corpus\n"}


def refresh_section(name, out, td, m, quick, t_start, corpus=None):
    """--only NAME: that section of an existing report, re-measured, the
    rest of the file (and the section's notes block) as it was."""
    text = out.read_text()
    head = SECTIONS[name]
    a = text.index(head)
    b = text.find("\n## ", a + len(head))
    b = len(text) if b < 0 else b + 1
    old = text[a:b]
    notes = NOTES.search(old)
    if name == "compressible":
        with tempfile.TemporaryDirectory(prefix="tdreport-") as t:
            comp = bench_compressible(str(td), quick, pathlib.Path(t))
        plot_compressible(out.parent / "img" / "compressible.png", comp)
        L = md_compressible(comp, {"compressible.png"}, None)
    else:
        if corpus is None:
            sys.exit("report.py: --only text needs the corpus (--corpus DIR)")
        tx = bench_text(td, quick, corpus)
        plot_text(out.parent / "img" / "text.png", tx)
        L = md_text(tx, {"text.png"})
    L.insert(1, f"Refreshed on its own with `/usr/bin/python3 tests/bench/report.py --only "
                f"{name}{' --quick' if quick else ''}` on {m.get('date', '')}, "
                f"{m.get('library', '')}, commit {m.get('commit', '')}, load average at start "
                f"{m.get('load', '')} (ratios do not depend on load).\n")
    if notes:
        L.append(notes.group(0) + "\n")
    out.write_text(text[:a] + "\n".join(L).rstrip() + "\n\n" + text[b:])
    log(f"rewrote the {name} section of {out} in {time.perf_counter() - t_start:.0f} s")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes, one repeat (~1-2 minutes)")
    ap.add_argument("--build", default=str(ROOT / "build"), help="build tree (default ./build)")
    ap.add_argument("--docs", default=str(ROOT / "docs"), help="where benchmarks.md and img/ go")
    ap.add_argument("--corpus", help="corpus of the text kind (default ../shared/corpus)")
    ap.add_argument("--json", help="also write every figure here")
    ap.add_argument("--only", choices=sorted(SECTIONS),
                    help="measure one section and replace only it in an existing benchmarks.md "
                         "(it then states its own date, commit and load)")
    a = ap.parse_args()
    t_start = time.perf_counter()
    build = pathlib.Path(a.build).resolve()
    td = build / "programs" / "testdata"
    bench_gen = build / "tests" / "bench" / "bench_gen"
    for p in (td, bench_gen):
        if not p.exists():
            sys.exit(f"report.py: {p} not found: build first (cmake --build {build})")
    docs = pathlib.Path(a.docs)
    img = docs / "img"
    img.mkdir(parents=True, exist_ok=True)

    m = machine(td)
    have = kinds(td)
    log("kinds:", have)
    if a.only:
        return refresh_section(a.only, docs / "benchmarks.md", td, m, a.quick, t_start,
                               find_corpus(a.corpus))
    with tempfile.TemporaryDirectory(prefix="tdreport-") as t:
        tmp = pathlib.Path(t)
        kres = bench_kinds(bench_gen, have, a.quick)
        core = bench_core(build, a.quick, tmp)
        py = bench_python(build, td, a.quick, tmp)
        comp = bench_compressible(td, a.quick, tmp) if "compressible" in have else None
        corpus = find_corpus(a.corpus)
        tx = bench_text(td, a.quick, corpus) if "text" in have and corpus else None
        scripts = [] if a.quick else branch_scripts(td, build, a.quick)
        trees = bench_trees(td, a.quick, tmp)

    imgs = set()
    items = [(f"{k} (1 thread)", v.get("t=1")) for k, v in kres.items()]
    items += [(f"{k} (all cores)", v.get("t=0")) for k, v in kres.items() if k != "memset"]
    items += [(k, v) for k, v in core["gbps"].items()
              if k.startswith(("python ", "fio"))]
    if barh(img / "throughput.png", f"In-process generation ({m['cores']} cores)", items):
        imgs.add("throughput.png")
    items = [(k[4:], v) for k, v in core["gbps"].items() if k.startswith("cmd ")]
    if barh(img / "commands.png", "Commands writing to /dev/null or a pipe", items,
            highlight=("gen",)):
        imgs.add("commands.png")
    if py:
        items, last = [], ""
        for r in py["rows"]:
            if r["label"]:
                last = r["label"]
                items.append((last, r["gbps"]))
        if barh(img / "python.png", "Python bindings", items,
                highlight=("generate", "Stream", "C ")):
            imgs.add("python.png")
    if comp:
        plot_compressible(img / "compressible.png", comp)
        imgs.add("compressible.png")
    if tx:
        plot_text(img / "text.png", tx)
        imgs.add("text.png")
    # Stale plots of kinds that were not measured this time would mislead.
    for p in img.glob("*.png"):
        if p.name in ("throughput.png", "commands.png", "python.png", "compressible.png",
                      "text.png") and p.name not in imgs:
            p.unlink()
    secs = time.perf_counter() - t_start
    write_markdown(docs / "benchmarks.md", m, a.quick, have, kres, core, py, comp, tx, scripts,
                   imgs, secs, trees=trees)
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps(
            {"machine": m, "quick": a.quick, "kinds": have, "in_process": kres, "core": core,
             "python": py, "compressible": comp, "text": tx}, indent=1, default=str))
    log(f"wrote {docs / 'benchmarks.md'} and {len(imgs)} plots in {secs:.0f} s")


if __name__ == "__main__":
    main()
