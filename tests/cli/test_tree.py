"""`testdata tree gen|list|verify|like`: determinism, exact totals, size
quantiles, every verify finding, interrupted-and-resumed runs, atomic
files, bad input, profiles, and bounded memory for 10 million files."""
import hashlib
import json
import math
import os
import signal
import statistics
import subprocess
import sys
import time

import pytest

SPEC = ["--files", "300", "--total", "3M", "--seed", "5"]


def tree_hash(root):
    """sha256 over every file's relative path, size and bytes, in path order."""
    h = hashlib.sha256()
    for dirpath, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files):
            p = os.path.join(dirpath, name)
            rel = os.path.relpath(p, root)
            data = open(p, "rb").read()
            h.update(f"{rel}\0{len(data)}\0".encode())
            h.update(data)
    return h.hexdigest()


def manifest(run, *args):
    r = run("tree", "list", *args)
    assert r.returncode == 0, r.stderr
    return [line.split("\t") for line in r.stdout.decode().splitlines()]


def test_list_is_deterministic_and_total_is_exact(run):
    a = run("tree", "list", *SPEC).stdout
    b = run("tree", "list", *SPEC).stdout
    assert a == b and a
    m = manifest(run, *SPEC)
    assert len(m) == 300
    assert sum(int(s) for _, s, _, _ in m) == 3 << 20
    assert run("tree", "list", *SPEC[:-1], "6").stdout != a  # the seed matters


@pytest.mark.parametrize("args,total", [
    (["--files", "7", "--total", "1000003"], 1000003),
    (["--files", "7", "--total", "1000003", "--sizes", "fixed:4K"], 1000003),
    (["--files", "1000", "--total", "999"], 999),           # most files empty
    (["--files", "3", "--total", "0"], 0),
    (["--files", "5", "--total", "5", "--sizes", "fixed:0"], 5),  # nothing to scale
    (["--total", "10M", "--sizes", "uniform:1K,3K"], 10 << 20),  # files from the mean
    (["--files", "13", "--total", "100G", "--sizes", "pareto:min=1K,alpha=3"], 100 << 30),
    (["--files", "20", "--total", "1T", "--sizes", "fixed:1"], 1 << 40),
])
def test_total_exact_awkward(run, args, total):
    m = manifest(run, *args)
    assert sum(int(s) for _, s, _, _ in m) == total
    assert len(set(p for p, *_ in m)) == len(m)


def percentile(sorted_vals, p):
    return sorted_vals[min(len(sorted_vals) - 1, int(p * len(sorted_vals)))]


@pytest.mark.parametrize("dist,q", [
    ("lognormal:median=16K,sigma=1.5",
     lambda p: 16384 * math.exp(1.5 * statistics.NormalDist().inv_cdf(p))),
    ("pareto:min=4K,alpha=1.5", lambda p: 4096 * (1 - p) ** (-1 / 1.5)),
    ("uniform:1000,100000", lambda p: 1000 + p * 99000),
    ("default", lambda p: math.exp(9.48 + 2.46 * statistics.NormalDist().inv_cdf(p / 0.99994))),
])
def test_quantiles_within_5_percent(run, dist, q):
    """N = 10,000 (the draws are stratified: within a stratum, not 5%)."""
    for seed in ("1", "2", "3"):
        sizes = sorted(int(s) for _, s, _, _ in manifest(
            run, "--files", "10000", "--sizes", dist, "--seed", seed))
        for p in (0.10, 0.50, 0.90, 0.99):
            want, got = q(p), percentile(sizes, p)
            assert abs(got - want) <= 0.05 * want, (dist, seed, p, got, want)
            assert abs(got - want) <= 0.02 * want, (dist, seed, p, got, want)  # in fact


def test_empirical_histogram_reproduced(run, tmp_path):
    hist = tmp_path / "sizes.txt"
    hist.write_text("# find . -type f -printf '%s\\n'\n0\n100\n100\n4096 5\n1M 2\n\n")
    sizes = sorted(int(s) for _, s, _, _ in manifest(
        run, "--files", "20000", "--sizes", f"empirical:{hist}"))
    share = lambda v: sizes.count(v) / len(sizes)  # noqa: E731
    assert abs(share(0) - 0.1) < 0.01 and abs(share(100) - 0.2) < 0.01
    assert abs(share(4096) - 0.5) < 0.01 and abs(share(1 << 20) - 0.2) < 0.01


def test_names_kinds_and_offsets(run):
    m = manifest(run, "--files", "50", "--kind", "text", "--depth", "2", "--fanout", "3")
    assert all(p.endswith(".txt") and k == "text" for p, _, k, _ in m)
    assert all(int(o) == i << 36 for i, (_, _, _, o) in enumerate(m))
    assert max(p.count("/") for p, *_ in m) == 2
    assert manifest(run, "--files", "2")[0][0].endswith(".bin")


def test_any_file_alone_is_gen_at_its_offset(run, tmp_path):
    d = tmp_path / "t"
    args = ["--files", "20", "--total", "200K", "--kind", "compressible", "--ratio", "2"]
    assert run("tree", "gen", d, *args, "-q").returncode == 0
    for path, size, kind, off in manifest(run, *args)[::7]:
        r = run("gen", kind, size, "--offset", off, "--ratio", "2")
        assert r.stdout == (d / path).read_bytes()


def test_gen_twice_and_across_threads_identical(run, tmp_path):
    hashes = set()
    for threads in ("1", "2", "3"):
        d = tmp_path / f"t{threads}"
        r = run("tree", "gen", d, *SPEC, "--threads", threads, "-q")
        assert r.returncode == 0, r.stderr
        hashes.add(tree_hash(d))
    assert len(hashes) == 1
    assert run("tree", "verify", tmp_path / "t1", *SPEC).returncode == 0


def test_verify_quiet_on_success(run, tmp_path):
    d = tmp_path / "t"
    run("tree", "gen", d, *SPEC, "-q", check=True)
    r = run("tree", "verify", d, *SPEC)
    assert r.returncode == 0 and r.stdout == b"" and r.stderr == b""


def test_verify_names_every_failure_kind(run, tmp_path):
    d = tmp_path / "t"
    run("tree", "gen", d, *SPEC, "-q", check=True)
    m = [e for e in manifest(run, *SPEC) if int(e[1]) > 10]
    changed, missing, short, long_, dirfile = (m[i][0] for i in (3, 40, 80, 120, 160))
    with open(d / changed, "r+b") as f:
        f.seek(7)
        b = f.read(1)
        f.seek(7)
        f.write(bytes([b[0] ^ 1]))
    os.unlink(d / missing)
    os.truncate(d / short, 5)
    with open(d / long_, "ab") as f:
        f.write(b"more")
    os.unlink(d / dirfile)
    os.mkdir(d / dirfile)
    (d / "notes.txt").write_text("mine")
    r = run("tree", "verify", d, *SPEC)
    assert r.returncode == 1
    err = r.stderr.decode()
    lines = err.splitlines()
    assert f"changed: {changed} differs from the stream: first difference at byte 7, 1 " in err
    assert f"missing: {missing} (" in err
    assert f"wrong size: {short} is 5 bytes, not {dict((p, s) for p, s, *_ in m)[short]}" in err
    assert f"wrong size: {long_} is " in err
    assert f"first bad byte at {dict((p, s) for p, s, *_ in m)[long_]}" in err
    assert f"missing: {dirfile} (" in err
    assert "extra: notes.txt" in err
    assert "5 of 300 files wrong (2 missing, 2 wrong size, 1 changed, 0 unreadable), 1 extra" \
        in lines[-1]
    # file order, then the extra entries
    order = [changed, missing, short, long_, dirfile]
    at = [next(i for i, ln in enumerate(lines) if p in ln) for p in order]
    assert at == sorted(at) and at[-1] < next(i for i, ln in enumerate(lines) if "extra" in ln)
    # the same with threads
    r2 = run("tree", "verify", d, *SPEC, "--threads", "3")
    assert r2.stderr == r.stderr and r2.returncode == 1


def test_verify_other_tree_fails(run, tmp_path):
    d = tmp_path / "t"
    run("tree", "gen", d, *SPEC, "-q", check=True)
    r = run("tree", "verify", d, *SPEC[:-1], "6")
    assert r.returncode == 1 and b"changed" in r.stderr


def test_gen_never_touches_other_files_and_replaces_wrong_ones(run, tmp_path):
    d = tmp_path / "t"
    run("tree", "gen", d, *SPEC, "-q", check=True)
    (d / "mine.txt").write_text("keep me")
    (d / "d0" / "mine2").write_text("keep me too")
    victim = manifest(run, *SPEC)[9][0]
    (d / victim).write_bytes(b"garbage")
    before = os.stat(d / "mine.txt")
    r = run("tree", "gen", d, *SPEC, "--resume", "--progress")
    assert r.returncode == 0, r.stderr
    assert b"(299 already right)" in r.stderr
    assert (d / "mine.txt").read_text() == "keep me"
    assert (d / "d0" / "mine2").read_text() == "keep me too"
    assert os.stat(d / "mine.txt").st_mtime_ns == before.st_mtime_ns
    r = run("tree", "verify", d, *SPEC)
    assert r.returncode == 1
    assert r.stderr.decode().count("extra:") == 2 and "wrong" not in r.stderr.decode().split("\n")[0]


def test_symlinks_in_the_tree_are_never_followed(run, tmp_path):
    """A symlink where a file or a directory of the tree should be is not
    followed out of DIR: gen refuses it, verify reports it, the files it
    points to are untouched.  gen used to replace the file a link named and
    write a whole directory of the tree through a link to another one."""
    spec = ["--files", "40", "--seed", "1"]
    m = [p for p, *_ in manifest(run, *spec)]
    top = next(p for p in m if "/" not in p)
    sub = next(p for p in m if "/" in p).split("/")[0]
    outside, d = tmp_path / "outside", tmp_path / "t"
    outside.mkdir()
    (outside / "precious").write_text("precious")
    d.mkdir()
    os.symlink(outside / "precious", d / top)
    r = run("tree", "gen", d, *spec, "-q")
    assert r.returncode == 1 and top.encode() in r.stderr, r.stderr
    assert b"not a file of the tree is there (a symlink" in r.stderr, r.stderr
    assert (outside / "precious").read_text() == "precious"
    assert os.path.islink(d / top)
    os.unlink(d / top)
    os.symlink(outside, d / sub)
    for extra in ([], ["--resume"]):
        r = run("tree", "gen", d, *spec, "-q", *extra)
        assert r.returncode == 1 and b"not a directory is there (a symlink" in r.stderr, \
            r.stderr
        assert os.listdir(outside) == ["precious"]
    os.unlink(d / sub)
    run("tree", "gen", d, *spec, "-q", check=True)
    os.rename(d / top, tmp_path / "moved")
    os.symlink(tmp_path / "moved", d / top)  # the right bytes, through a link
    r = run("tree", "verify", d, *spec)
    assert r.returncode == 1 and f"missing: {top}".encode() in r.stderr, r.stderr
    r = run("tree", "gen", d, *spec, "--resume", "-q")
    assert r.returncode == 1 and os.path.islink(d / top)


def test_tree_never_replaces_its_model(run, tmp_path):
    """A text model kept in DIR under the name of one of the tree's files is
    the data's input: tree gen refuses to replace it (exit 1, the file named),
    with and without --resume.  It used to be overwritten by text made from it."""
    d = tmp_path / "t"
    spec = ["--files", "3", "--sizes", "fixed:1K", "--kind", "text"]
    run("tree", "gen", d, *spec, "-q", check=True)
    name = sorted(os.listdir(d))[0]
    model = d / name
    run("model", "export", "-o", model, check=True)
    before = model.read_bytes()
    for extra in ([], ["--resume"]):
        r = run("tree", "gen", d, *spec, "--model", model, "-q", *extra)
        assert r.returncode == 1 and name.encode() in r.stderr, r.stderr
        assert b"the text model or profile the data comes from" in r.stderr, r.stderr
        assert model.read_bytes() == before
    # elsewhere, the same model is fine
    run("model", "export", "-o", tmp_path / "m.tdm", check=True)
    run("tree", "gen", d, *spec, "--model", tmp_path / "m.tdm", "-q", check=True)


def complete_files_only(run, d, spec):
    """Every file present is complete and right; no temporaries are left."""
    m = {p: int(s) for p, s, *_ in manifest(run, *spec)}
    for dirpath, _, files in os.walk(d):
        for name in files:
            rel = os.path.relpath(os.path.join(dirpath, name), d)
            assert rel in m, f"stray {rel}"
            assert os.path.getsize(os.path.join(d, rel)) == m[rel]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL])
def test_interrupted_then_resumed_completes(cli, run, tmp_path, sig):
    spec = ["--files", "20000", "--sizes", "fixed:8K", "--seed", "3"]
    d = tmp_path / "t"
    p = subprocess.Popen([cli, "tree", "gen", str(d), *spec, "-q"], stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and p.poll() is None:
        n = sum(len(f) for _, _, f in os.walk(d)) if d.exists() else 0
        if n > 500:
            break
        time.sleep(0.01)
    p.send_signal(sig)
    err = p.communicate(timeout=60)[1]
    if p.returncode == 0:
        pytest.skip("finished before the signal")
    assert p.returncode == (130 if sig == signal.SIGINT else -9), err
    if sig == signal.SIGINT:
        assert b"--resume" in err
    complete_files_only(run, d, spec)
    assert run("tree", "verify", d, *spec, "-q").returncode == 1
    r = run("tree", "gen", d, *spec, "--resume", "--progress")
    assert r.returncode == 0, r.stderr
    assert b"already right" in r.stderr
    assert run("tree", "verify", d, *spec).returncode == 0


@pytest.mark.parametrize("args,needle", [
    (["--sizes", "lognorm:median=4K,sigma=1"], b"did you mean 'lognormal'"),
    (["--sizes", "lognormal:median=4K"], b"missing 'sigma'"),
    (["--sizes", "lognormal:median=4K,sigma=-1"], b"sigma is a number from 0 to 10"),
    (["--sizes", "lognormal:median=0,sigma=1"], b"median is a size from 1 to 64G"),
    (["--sizes", "pareto:min=4K,alpha=1,foo=2"], b"unknown parameter 'foo=2'"),
    (["--sizes", "uniform:9,3"], b"MIN at most MAX"),
    (["--sizes", "fixed:100T"], b"sizes from 0 to 64G"),
    (["--sizes", "fixed:4Q"], b"fixed:SIZE"),
    (["--sizes", "empirical:/nonexistent/sizes.txt"], b"cannot read '/nonexistent/sizes.txt'"),
    (["--files", "-3"], b"--files"),
    (["--files", "x"], b"bad value 'x' for --files: not a whole number (valid: 0 to 268435456)"),
    (["--total", "18446744073709551615"], b"for --total: 0 to 2^64-2"),
    (["--files", "300000000"], b"0 to 268435456"),
    (["--depth", "17"], b"0 to 16"),
    (["--fanout", "0"], b"1 to 65536"),
    (["--fanout", "65536", "--depth", "16"], b"more than 2^40 directories"),
    (["--files", "1", "--total", "100G"], b"more than the 64 GiB"),
    (["--files", "0", "--total", "1"], b"needs at least one file"),
    (["--kind", "randm"], b"did you mean 'random'"),
    (["--ratio", "2"], b"does not apply to kind random"),
    (["--filez", "3"], b"did you mean '--files'"),
    (["--like", "/nonexistent.json"], b"cannot read tree profile"),
])
def test_bad_input_exit_2(run, args, needle):
    r = run("tree", "list", *args)
    assert r.returncode == 2, r.stderr
    assert needle in r.stderr, r.stderr
    assert b"try 'testdata tree list --help'" in r.stderr


def test_bad_paths(run, tmp_path):
    (tmp_path / "file").write_text("x")
    r = run("tree", "gen", tmp_path / "file", "--files", "3")
    assert r.returncode == 1 and b"cannot write" in r.stderr
    assert run("tree", "gen", "--files", "3").returncode == 2
    assert run("tree", "verify", tmp_path / "nothing", "--files", "3").returncode == 1
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "other"}')
    r = run("tree", "list", "--like", bad)
    assert r.returncode == 2 and b"is not a tree profile" in r.stderr
    bad.write_text('{"format": "testdata-tree-profile", "version": 99}')
    assert b"version 99" in run("tree", "list", "--like", bad).stderr
    assert run("tree", "frob").returncode == 2
    assert b"did you mean 'tree gen'" in run("tree", "gne").stderr


def test_like_profile_reproduces_shape(run, tmp_path):
    src = tmp_path / "src"
    run("tree", "gen", src, "--files", "2000", "--sizes", "lognormal:median=8K,sigma=1.2",
        "--depth", "2", "--fanout", "5", "-q", check=True)
    (src / "d1" / "odd.dat").write_bytes(b"x" * 12345)
    prof = tmp_path / "p.json"
    assert run("tree", "like", src, "-o", prof).returncode == 0
    doc = json.loads(prof.read_text())
    assert doc["format"] == "testdata-tree-profile" and doc["version"] == 1
    real = [os.path.getsize(os.path.join(dp, f)) for dp, _, fs in os.walk(src) for f in fs]
    assert doc["files"] == len(real) == 2001 and doc["total"] == sum(real)
    assert doc["depth"] == 2 and doc["fanout"] == 5
    assert sum(c for _, _, c in doc["sizes"]) == 2001
    m = manifest(run, "--like", prof, "--seed", "9")
    sizes = sorted(int(s) for _, s, *_ in m)
    assert len(m) == 2001 and sum(sizes) == sum(real)
    assert max(p.count("/") for p, *_ in m) == 2
    real.sort()
    for p in (0.1, 0.5, 0.9):
        assert abs(percentile(sizes, p) - percentile(real, p)) <= 0.05 * percentile(real, p)
    # options given win over the profile's
    assert len(manifest(run, "--like", prof, "--files", "10")) == 10
    assert run("tree", "like", tmp_path / "none").returncode == 1


def test_help_lists_tree_options(run):
    out = run("tree", "gen", "--help").stdout.decode()
    for opt in ("--files N", "--total SIZE", "--sizes DIST", "--depth D", "--fanout F",
                "--kind KIND", "--like PROFILE", "--resume", "--seed N"):
        assert opt in out
    assert run("tree", "--help").returncode == 0
    assert b"tree" in run("--help").stdout


def test_tree_usage_line_is_the_subcommands(run):
    """The usage line's gen|list|... is made from the table of subcommands,
    so it names exactly the commands listed below it (and by testdata --help)."""
    out = run("tree", "--help").stdout.decode().splitlines()
    assert out[0].startswith("usage: testdata tree ") and out[0].endswith(" ...")
    words = out[0][len("usage: testdata tree "):-len(" ...")].split("|")
    listed = [ln.split()[1] for ln in out[out.index("commands:") + 1:] if ln.startswith("  tree ")]
    assert words == listed and set(words) == {"gen", "list", "verify", "like"}
    top = run("--help").stdout.decode()
    assert f"tree {'|'.join(words)} ..." in top
    for w in words:
        assert run("tree", w, "--help").returncode == 0


def test_list_ten_million_files_in_bounded_memory(cli):
    """10 million files, streamed: the manifest is never held in memory.  A
    child Python runs `tree list`, counts the lines as they come and reports
    the largest resident set of its only child."""
    script = ("import resource, subprocess, sys\n"
              "p = subprocess.Popen([sys.argv[1], 'tree', 'list', '--files', '10000000', "
              "'--total', '10T'], stdout=subprocess.PIPE)\n"
              "n = 0\n"
              "while True:\n"
              "    b = p.stdout.read(1 << 20)\n"
              "    if not b:\n"
              "        break\n"
              "    n += b.count(b'\\n')\n"
              "assert p.wait() == 0\n"
              "print(n, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")
    # ASan builds: no quarantine, which would keep freed memory resident.
    env = {**os.environ, "ASAN_OPTIONS": "detect_leaks=0:quarantine_size_mb=0"}
    out = subprocess.run([sys.executable, "-c", script, cli], capture_output=True, check=True,
                         env=env)
    lines, rss_kib = map(int, out.stdout.split())
    assert lines == 10_000_000
    assert rss_kib < 64 * 1024, f"max RSS {rss_kib} KiB"
