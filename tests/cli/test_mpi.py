"""`mpiexec -n N testdata gen|verify ... --mpi` against the single-process result.

Run by CTest as cli.mpi when the program was built with MPI; skipped
otherwise (TESTDATA_MPIEXEC unset or mpiexec missing).
"""
import os
import re
import shutil
import subprocess

import pytest

MPIEXEC = os.environ.get("TESTDATA_MPIEXEC") or ""
pytestmark = pytest.mark.skipif(not MPIEXEC or not shutil.which(MPIEXEC),
                                reason="testdata built without MPI, or no mpiexec")

SIZE = 5 * (1 << 20) + 12345   # not a multiple of the ranks' 1 MiB alignment
THROUGHPUT = re.compile(rb"with (\d+) ranks? in [0-9.]+ s: [0-9.]+ GB/s aggregate")


@pytest.fixture
def mpirun(cli):
    """mpirun(n, *args) -> CompletedProcess of `mpiexec -n n testdata *args`."""
    # MPICH leaks a few allocations of a module it dlopens and closes again
    # (unknown to LeakSanitizer, so no suppression can name it): in
    # sanitizer builds, leak checking is left to the C tests here.
    env = dict(os.environ)
    env["ASAN_OPTIONS"] = ":".join(filter(None, [env.get("ASAN_OPTIONS"), "detect_leaks=0"]))

    def _run(n, *args):
        return subprocess.run([MPIEXEC, "-n", str(n), cli, *map(str, args)], capture_output=True,
                              timeout=120, env=env)
    return _run


def single(run, tmp_path, *args):
    path = tmp_path / "single.bin"
    r = run("gen", *args, "-o", path)
    assert r.returncode == 0, r.stderr
    return path.read_bytes()


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("args", [("random", SIZE, "--seed", 7),
                                  ("random", SIZE, "--algorithm", "fast", "--offset", 999),
                                  ("zero", 3000)])
def test_shared_file_is_byte_identical(mpirun, run, tmp_path, n, args):
    want = single(run, tmp_path, *args)
    out = tmp_path / "mpi.bin"
    out.write_bytes(b"old contents that are longer than nothing" * 100000)  # truncated
    r = mpirun(n, "gen", *args, "-o", out, "--mpi")
    assert r.returncode == 0, r.stderr
    assert out.read_bytes() == want
    # Rank 0 alone prints the aggregate throughput.
    lines = THROUGHPUT.findall(r.stderr)
    assert lines == [str(n).encode()], r.stderr


@pytest.mark.parametrize("n,m", [(2, 4), (3, 4), (3, 2), (2, 5)])
def test_files_concatenate_and_verify_alone(mpirun, run, tmp_path, n, m):
    want = single(run, tmp_path, "random", SIZE, "--seed", 4)
    d = tmp_path / "ds"
    r = mpirun(n, "gen", "random", SIZE, "--seed", 4, "-o", f"{d}/", "--files", m, "--mpi")
    assert r.returncode == 0, r.stderr
    names = sorted(p.name for p in d.iterdir())
    assert names == [f"part-{i:06d}" for i in range(m)]
    assert b"".join((d / x).read_bytes() for x in names) == want
    # The documented rule: P = ceil(SIZE/M); file i = bytes [i*P, min((i+1)*P, SIZE)).
    per = -(-SIZE // m)
    for i in range(m):
        assert (d / names[i]).read_bytes() == want[i * per:(i + 1) * per]


def test_files_with_offset(mpirun, run, tmp_path):
    want = single(run, tmp_path, "random", 1000, "--offset", 5000, "--seed", 2)
    d = tmp_path / "ds"
    r = mpirun(3, "gen", "random", 1000, "--offset", 5000, "--seed", 2, "-o", d, "--files", 3,
               "--mpi")
    assert r.returncode == 0, r.stderr
    assert b"".join((d / f"part-{i:06d}").read_bytes() for i in range(3)) == want


def test_usage_errors(mpirun, run, tmp_path):
    r = mpirun(2, "gen", "zero", 10, "--mpi")
    assert r.returncode != 0 and b"needs -o FILE" in r.stderr
    assert r.stderr.count(b"needs -o FILE") == 1        # rank 0 only
    r = mpirun(2, "gen", "zero", "inf", "--mpi", "-o", tmp_path / "x")
    assert r.returncode != 0 and b"bounded SIZE" in r.stderr
    r = run("gen", "zero", 10, "--files", 2, "-o", tmp_path / "d")
    assert r.returncode == 2 and b"--files needs --mpi" in r.stderr


@pytest.mark.parametrize("args,needle", [
    (("gen", "random", "1M", "--seed", "x", "-o", "{d}/x"), b"bad value 'x' for --seed"),
    (("gen", "randm", "1M", "-o", "{d}/x"), b"unknown kind 'randm'"),
    (("gen", "random", "1Q", "-o", "{d}/x"), b"bad size '1Q'"),
    (("gen", "random", "1M", "--bogus", "-o", "{d}/x"), b"unknown option '--bogus'"),
    (("verify", "random", "1M", "--ratio", "3", "{d}/x"), b"--ratio"),
    (("tree", "gen", "{d}/t", "--files", "3", "--sizes", "fixd:1"), b"fixd"),
])
def test_usage_errors_found_before_mpi_starts_print_once(mpirun, tmp_path, args, needle):
    """Every rank parses the same argv before MPI starts, and each printed
    the usage error: once per rank.  Now rank 0 alone does (the rank the
    launcher gives), and every rank still exits 2."""
    r = mpirun(3, *(a.replace("{d}", str(tmp_path)) for a in args), "--mpi")
    assert r.returncode == 2, r.stderr
    assert r.stderr.count(needle) == 1, r.stderr
    assert r.stderr.count(b"(try 'testdata") == 1, r.stderr
    assert os.listdir(tmp_path) == []


def test_failure_on_every_rank_leaves_no_file(mpirun, tmp_path):
    r = mpirun(2, "gen", "zero", 10, "--mpi", "-o", tmp_path / "no" / "such" / "file")
    assert r.returncode != 0
    assert b"cannot write" in r.stderr


# ---- verify --mpi (needs the CLI's verify command) -------------------------

FIRST = re.compile(rb"first difference at byte (\d+)")


def flip(path, *positions):
    with open(path, "r+b") as f:
        for pos in positions:
            f.seek(pos)
            b = f.read(1)
            f.seek(pos)
            f.write(bytes([b[0] ^ 0x40]))


@pytest.mark.parametrize("n", [2, 3])
def test_verify_matches_single_process(mpirun, run, tmp_path, n):
    path = tmp_path / "f.bin"
    assert run("gen", "random", SIZE, "--seed", 5, "-o", path).returncode == 0
    r = mpirun(n, "verify", "random", SIZE, "--seed", 5, path, "--mpi")
    assert r.returncode == 0, r.stderr
    assert THROUGHPUT.findall(r.stderr) == [str(n).encode()]
    # Flipped bytes in the last and the middle ranks' parts: the lowest wins,
    # as in a single-process verify.
    flip(path, SIZE - 3, (2 << 20) + 17, (4 << 20) + 1)
    r = mpirun(n, "verify", "random", SIZE, "--seed", 5, path, "--mpi")
    one = run("verify", "random", SIZE, "--seed", 5, path)
    assert r.returncode == 1 and one.returncode == 1
    assert FIRST.findall(r.stderr) == [str((2 << 20) + 17).encode()], r.stderr
    assert FIRST.findall(one.stderr) == FIRST.findall(r.stderr)
    assert b"3 differing bytes" in r.stderr and b"3 differing bytes" in one.stderr


# The ranks' chance counts are summed: sparse data with a wrong seed gets
# the hint over MPI as in one process, and damaged data does not.
def test_verify_hint_sums_over_ranks(mpirun, run, tmp_path, sparse_profile):
    path = tmp_path / "f.bin"
    like = ["like", SIZE, "--profile", sparse_profile]
    assert run("gen", *like, "--seed", 1, "-o", path).returncode == 0
    r = mpirun(3, "verify", *like, "--seed", 2, path, "--mpi")
    one = run("verify", *like, "--seed", 2, path)
    assert r.returncode == 1 and one.returncode == 1
    assert b"nearly every byte differs" in r.stderr and b"nearly every byte differs" in one.stderr
    flip(path, *range(0, SIZE, 97))
    r = mpirun(3, "verify", *like, "--seed", 1, path, "--mpi")
    assert r.returncode == 1 and b"differing bytes" in r.stderr and b"nearly" not in r.stderr


def test_verify_short_long_and_offset(mpirun, run, tmp_path):
    path = tmp_path / "f.bin"
    assert run("gen", "random", SIZE, "--offset", "1G", "-o", path).returncode == 0
    r = mpirun(3, "verify", "random", SIZE, "--offset", "1G", path, "--mpi", "-q")
    assert r.returncode == 0 and r.stderr == b"", r.stderr
    r = mpirun(3, "verify", "random", SIZE, path, "--mpi")       # wrong offset
    assert r.returncode == 1 and FIRST.findall(r.stderr) == [b"0"]
    with open(path, "ab") as f:
        f.write(b"x")
    r = mpirun(2, "verify", "random", SIZE, "--offset", "1G", path, "--mpi")
    assert r.returncode == 1 and b"is long" in r.stderr
    os.truncate(path, SIZE - 10)
    r = mpirun(2, "verify", "random", SIZE, "--offset", "1G", path, "--mpi")
    assert r.returncode == 1 and b"is short" in r.stderr and b"10 missing" in r.stderr
    r = mpirun(2, "verify", "random", SIZE, "--mpi")             # stdin
    assert r.returncode == 2 and r.stderr.count(b"not stdin") == 1


def test_verify_files_and_one_file_alone(mpirun, run, tmp_path):
    d = tmp_path / "ds"
    m, per = 4, -(-SIZE // 4)
    r = mpirun(3, "gen", "random", SIZE, "--seed", 6, "-o", d, "--files", m, "--mpi")
    assert r.returncode == 0, r.stderr
    r = mpirun(2, "verify", "random", SIZE, "--seed", 6, d, "--files", m, "--mpi")
    assert r.returncode == 0, r.stderr
    # The documented single-file check of file i.
    for i in range(m):
        n = min(per, SIZE - i * per)
        r = run("verify", "random", n, "--offset", i * per, "--seed", 6, d / f"part-{i:06d}")
        assert r.returncode == 0, r.stderr
    flip(d / "part-000003", 5)
    flip(d / "part-000001", 1000)
    r = mpirun(3, "verify", "random", SIZE, "--seed", 6, d, "--files", m, "--mpi")
    assert r.returncode == 1
    assert FIRST.findall(r.stderr) == [str(per + 1000).encode()], r.stderr
    assert b"part-000001' at byte 1000" in r.stderr
    (d / "part-000002").unlink()
    r = mpirun(2, "verify", "random", SIZE, "--seed", 6, d, "--files", m, "--mpi")
    assert r.returncode == 1 and b"1 file missing" in r.stderr


def test_seed_random_is_refused(mpirun, tmp_path):
    r = mpirun(2, "gen", "random", 10, "--seed", "random", "-o", tmp_path / "x", "--mpi")
    assert r.returncode == 2 and b"same seed" in r.stderr


@pytest.mark.parametrize("files", [False, True])
def test_sigint_leaves_the_old_file_and_no_temporary(cli, tmp_path, files):
    """SIGINT to mpiexec (forwarded to the ranks) in the middle of a run: the
    shared file keeps its old contents and no temporary (shared or per part)
    is left; complete parts may stay, incomplete ones never appear."""
    import signal
    import time
    out = tmp_path / ("d" if files else "f")
    if not files:
        out.write_bytes(b"precious")
    args = ["gen", "random", "40G", "--algorithm", "fast", "--mpi", "-o", out]
    if files:
        args += ["--files", "10"]
    p = subprocess.Popen([MPIEXEC, "-n", "2", cli, *map(str, args)], stderr=subprocess.PIPE)
    time.sleep(1.0)
    p.send_signal(signal.SIGINT)
    try:
        err = p.communicate(timeout=60)[1]
    except subprocess.TimeoutExpired:
        p.kill()
        raise
    # Each rank exits 130; what mpiexec (MPICH's hydra) itself returns after
    # forwarding a Ctrl-C varies (0 or 130 seen), so the files are the test,
    # and the message: the one every command prints, by rank 0 alone.
    assert err.count(b"testdata: interrupted by SIGINT\n") == 1, err
    if files:
        left = sorted(os.listdir(out))
        assert all(n.startswith("part-") and "tdtmp" not in n for n in left), left
        for n in left:  # whatever is there is complete
            i = int(n[5:])
            r = subprocess.run([cli, "verify", "random", str(4 << 30), "--algorithm", "fast",
                                "--offset", str(i * (4 << 30)), out / n], capture_output=True)
            assert r.returncode == 0, (n, r.stderr)
    else:
        assert out.read_bytes() == b"precious"
        assert os.listdir(tmp_path) == ["f"]


TREE = ["--files", "500", "--total", "3M", "--seed", "4", "--depth", "2"]


def tree_bytes(root):
    out = {}
    for dirpath, _, files in os.walk(root):
        for name in files:
            p = os.path.join(dirpath, name)
            out[os.path.relpath(p, root)] = open(p, "rb").read()
    return out


@pytest.mark.parametrize("n", [1, 2, 3])
def test_tree_ranks_write_the_single_tree(mpirun, run, tmp_path, n):
    assert run("tree", "gen", tmp_path / "one", *TREE, "-q").returncode == 0
    r = mpirun(n, "tree", "gen", tmp_path / "mpi", *TREE, "--mpi")
    assert r.returncode == 0, r.stderr
    assert tree_bytes(tmp_path / "mpi") == tree_bytes(tmp_path / "one")
    assert re.search(rb"wrote 500 files, 3145728 bytes with %d ranks?" % n, r.stderr), r.stderr
    r = mpirun(n, "tree", "verify", tmp_path / "mpi", *TREE, "--mpi")
    assert r.returncode == 0, r.stderr


def test_tree_verify_mpi_findings_in_order(mpirun, run, tmp_path):
    d = tmp_path / "t"
    assert run("tree", "gen", d, *TREE, "-q").returncode == 0
    m = [ln.split("\t") for ln in run("tree", "list", *TREE).stdout.decode().splitlines()]
    os.unlink(d / m[10][0])
    os.truncate(d / m[400][0], 0)
    (d / "extra").write_text("x")
    single = run("tree", "verify", d, *TREE)
    r = mpirun(3, "tree", "verify", d, *TREE, "--mpi")
    assert r.returncode == 1
    lines = [ln for ln in r.stderr.decode().splitlines() if ln.startswith("testdata: ")]
    assert lines == single.stderr.decode().splitlines(), r.stderr


def test_mpi_is_loaded_only_for_mpi(cli, tmp_path):
    """libmpich comes with the module, on the first --mpi: no other command
    pays for loading it.  A program without its module says so and writes
    nothing."""
    env = {**os.environ, "LD_DEBUG": "libs"}
    r = subprocess.run([cli, "gen", "zero", "1K", "-o", tmp_path / "a"], capture_output=True,
                       env=env, timeout=60)
    assert r.returncode == 0 and b"libmpich" not in r.stderr, r.stderr[-2000:]
    alone = tmp_path / "testdata"
    shutil.copy(cli, alone)
    r = subprocess.run([alone, "gen", "zero", "1M", "--mpi", "-o", tmp_path / "b"],
                       capture_output=True, timeout=60)
    if r.returncode == 0:
        pytest.skip("an installed module was found in TD_MPI_MODULE_DIR")
    assert r.returncode == 1, r.stderr
    assert b"--mpi: cannot load its module" in r.stderr and b"testdata-mpi.so" in r.stderr
    assert not (tmp_path / "b").exists()
