"""The CLI behaves as coreutils, zstd and pv users expect: head -c sizes, "did you
mean", `help CMD`, binary output refused on a terminal, one progress meter
with pv, verify without SIZE, the dedup ratio of analyze.  Terminals are real
pseudo-terminals from script(1)."""
import json
import shutil
import subprocess

import pytest

HEAD = shutil.which("head")
GNU_HEAD = HEAD and b"GNU coreutils" in subprocess.run([HEAD, "--version"],
                                                       capture_output=True).stdout


def sh(cmd, **kw):
    return subprocess.run(cmd, shell=True, capture_output=True, **kw)


# --- sizes: every suffix of head -c, the same meaning -----------------------------

SMALL = ["0", "7", "1b", "3b", "1k", "1K", "2kB", "1KB", "1kD", "1KiB", "1kiB", "1m", "1M",
         "1mB", "1MB", "1MD", "1MiB", "1miB"]
ZERO = [f"0{u}{s}" for u in "KMGTPEZY" for s in ("", "B", "iB", "D")]
BIG = ["1G", "1GB", "1GiB", "1T", "1P", "1E", "15E", "15EiB", "18EB", "1EB"]
BAD = ["1B", "1bB", "1g", "1t", "1c", "1w", "1KIB", "1Ki", "1kBx", "x", "1.5K", "0x10", "1e3",
       "1Z", "1Y", "16E", "19EB", "1ZB", "18446744073709551616"]


@pytest.mark.skipif(not GNU_HEAD, reason="needs GNU head")
@pytest.mark.parametrize("size", SMALL + ZERO)
def test_size_counts_as_head(cli, size):
    want = sh(f"head -c '{size}' /dev/zero | wc -c")
    got = sh(f"'{cli}' gen zero '{size}' | wc -c")
    assert want.stdout.strip() and got.stdout.strip() == want.stdout.strip(), size


@pytest.mark.skipif(not GNU_HEAD, reason="needs GNU head")
@pytest.mark.parametrize("size", BIG)
def test_big_size_accepted_as_head(cli, size):
    assert sh(f"head -c '{size}' /dev/zero | head -c 1 | wc -c").stdout.strip() == b"1"
    r = sh(f"'{cli}' gen zero '{size}' | head -c 1 | wc -c")
    assert r.stdout.strip() == b"1" and b"bad size" not in r.stderr, size


@pytest.mark.skipif(not GNU_HEAD, reason="needs GNU head")
@pytest.mark.parametrize("size", BAD)
def test_size_refused_as_head(run, size):
    assert subprocess.run([HEAD, "-c", size, "/dev/null"], capture_output=True).returncode != 0
    r = run("gen", "zero", size)
    assert r.returncode == 2 and r.stderr.startswith(f"testdata: bad size '{size}'".encode())


# --- did you mean ------------------------------------------------------------------

@pytest.mark.parametrize("args,line", [
    (["gne"], "unknown command 'gne'; did you mean 'gen'?"),
    (["verfy"], "unknown command 'verfy'; did you mean 'verify'?"),
    (["hlep"], "unknown command 'hlep'; did you mean 'help'?"),
    (["completon", "bash"], "unknown command 'completon'; did you mean 'completion'?"),
    (["gen", "randm", "1K"], "unknown kind 'randm'; did you mean 'random'?"),
    (["verify", "tetx", "1K"], "unknown kind 'tetx'; did you mean 'text'?"),
    (["gen", "random", "1K", "--sed", "1"], "unknown option '--sed'; did you mean '--seed'?"),
    (["gen", "random", "1K", "--dedup-blok", "4K"], "did you mean '--dedup-block'?"),
    (["gen", "random", "1K", "--ouput", "x"], "unknown option '--ouput'; did you mean '--output'?"),
    (["analyze", "--jsn", "-"], "unknown option '--jsn'; did you mean '--json'?"),
    (["gen", "random", "1K", "--algorithm", "fats"],
     "bad value 'fats' for --algorithm: one of chacha20, fast; did you mean 'fast'?"),
    (["gen", "compressible", "1K", "--ratio", "0.5"], "--ratio: out of range (valid: 1 to 1000)"),
    (["gen", "zero", "1K", "--ratio", "2"], "does not apply to kind zero"),
    (["completion", "bsh"], "unknown shell 'bsh'; did you mean 'bash'?"),
    (["help", "gn"], "unknown command 'gn'; did you mean 'gen'?"),
])
def test_did_you_mean(run, args, line):
    r = run(*args, input=b"")
    assert r.returncode == 2
    assert line.encode() in r.stderr, r.stderr
    assert r.stderr.count(b"\n") == 1 and r.stdout == b""


def test_help_cmd_equals_cmd_help(run):
    names = [line.split()[0] for line in
             run("--help").stdout.decode().split("commands:\n")[1].split("\n\n")[0].splitlines()]
    assert {"gen", "verify", "analyze", "completion", "help"} <= set(names)
    for name in names:
        if name == "help":
            continue
        a, b = run("help", name), run(name, "--help")
        assert a.returncode == b.returncode == 0
        assert a.stdout == b.stdout and a.stdout.startswith(f"usage: testdata {name} ".encode())
    assert run("help").stdout == run("--help").stdout


def test_help_help_and_help_of_a_subcommand(run):
    """`help help` said "unknown command 'help'; did you mean 'help'?" (exit
    2), and `tree help gen` printed tree's list instead of tree gen's help."""
    r = run("help", "help")
    assert r.returncode == 0 and r.stdout == run("--help").stdout, r.stderr
    for cmd, sub in (("tree", "gen"), ("tree", "verify"), ("model", "build")):
        a, b = run(cmd, "help", sub), run(cmd, sub, "--help")
        assert a.returncode == b.returncode == 0 and a.stdout == b.stdout, a.stderr
        assert a.stdout.startswith(f"usage: testdata {cmd} {sub} ".encode())
    r = run("tree", "help", "gne")
    assert r.returncode == 2 and b"did you mean 'tree gen'?" in r.stderr


def test_dash_o_dash_is_stdout(run, tmp_path):
    r = run("gen", "random", "1K", "-o", "-", cwd=tmp_path)
    assert r.returncode == 0 and r.stdout == run("gen", "random", "1K").stdout
    assert list(tmp_path.iterdir()) == []


# like with a wrong seed or offset agrees on up to a quarter of its bytes
# (source, json, pdf), and sparse data on most: the hint compares the
# agreement with chance, not the share of differing bytes.
@pytest.mark.parametrize("kind", ["random", "text", "compressible", "like --profile source",
                                  "like --profile json", "like --profile pdf",
                                  "like --profile sparse.json"])
def test_wrong_seed_says_so(run, tmp_path, sparse_profile, kind):
    f = tmp_path / "f"
    kind, *opts = kind.split()
    opts = [str(sparse_profile) if o == "sparse.json" else o for o in opts]
    assert run("gen", kind, "256K", *opts, "--seed", "1", "-o", f).returncode == 0
    for wrong in (["--seed", "2"], ["--seed", "1", "--offset", "1"]):
        r = run("verify", kind, "256K", *opts, *wrong, f)
        assert r.returncode == 1
        assert b"(nearly every byte differs: wrong seed, kind, options or offset?)" in r.stderr
    r = run("verify", "zero", "256K", f)
    assert b"nearly every byte differs" in r.stderr
    # A few flipped bytes are a transfer problem, not a wrong seed.
    data = bytearray(f.read_bytes())
    data[1000] ^= 1
    f.write_bytes(data)
    r = run("verify", kind, "256K", *opts, "--seed", "1", f)
    assert r.returncode == 1 and b"1 differing byte" in r.stderr and b"nearly" not in r.stderr


# --- verify without SIZE -----------------------------------------------------------

def test_verify_size_from_regular_file(run, tmp_path):
    f = tmp_path / "f.bin"
    assert run("gen", "random", "3M", "--seed", "5", "-o", f).returncode == 0
    r = run("verify", "random", f, "--seed", "5", "-q")
    assert r.returncode == 0 and r.stderr == b""
    assert run("verify", "random", "--seed", "5", f).returncode == 0
    assert run("verify", "random", "--seed", "6", f).returncode == 1
    # the rest of stdin, when it is a regular file
    with open(f, "rb") as fh:
        assert run("verify", "random", "-", "--seed", "5", stdin=fh).returncode == 0
    with open(f, "rb") as fh:
        assert run("verify", "random", "--seed", "5", stdin=fh).returncode == 0
    with open(f, "rb") as fh:
        fh.seek(1000)
        assert run("verify", "random", "-", "--seed", "5", "--offset", "1000",
                   stdin=fh).returncode == 0
    # with --offset: the file holds bytes [offset, offset + its size)
    g = tmp_path / "g.bin"
    assert run("gen", "random", "1M", "--seed", "5", "--offset", "2M", "-o", g).returncode == 0
    assert run("verify", "random", g, "--seed", "5", "--offset", "2M").returncode == 0
    # SIZE given still checks the length
    r = run("verify", "random", "4M", "--seed", "5", f)
    assert r.returncode == 1 and b"is short" in r.stderr
    # a truncated file passes without SIZE (documented: give SIZE to check the length)
    with open(f, "r+b") as fh:
        fh.truncate(1 << 20)
    assert run("verify", "random", f, "--seed", "5").returncode == 0


def test_verify_size_needed_for_pipes(cli, run, tmp_path):
    r = sh(f"'{cli}' gen random 1M | '{cli}' verify random")
    assert r.returncode == 2 and b"SIZE is needed: stdin is not a regular file" in r.stderr
    r = sh(f"'{cli}' gen random 1M | '{cli}' verify random -")
    assert r.returncode == 2 and b"SIZE is needed" in r.stderr
    r = run("verify", "random", "/dev/stdin", input=b"x")
    assert r.returncode == 2 and b"SIZE is needed: '/dev/stdin' is not a regular file" in r.stderr
    r = run("verify", "random", tmp_path / "nope")
    assert r.returncode == 2 and b"bad size" in r.stderr and b"no FILE of that name" in r.stderr
    r = run("verify", "random", tmp_path)
    assert r.returncode == 2 and b"is not a regular file" in r.stderr
    # the old forms are unchanged: KIND SIZE reads stdin
    r = sh(f"'{cli}' gen random 1M | '{cli}' verify random 1M")
    assert r.returncode == 0


# --- analyze: 4 KiB dedup ratio ----------------------------------------------------

def test_analyze_reports_dedup(run, tmp_path):
    d4, z = tmp_path / "d4", tmp_path / "z"
    assert run("gen", "random", "8M", "--dedup", "4", "-o", d4).returncode == 0
    assert run("gen", "zero", "1M", "-o", z).returncode == 0
    r = run("analyze", d4, z)
    assert r.returncode == 0
    first, second = r.stdout.decode().split("\n\n")
    assert "  dedup 4K    4.00x  (2048 blocks of 4 KiB, 512 unique)" in first
    assert "  dedup 4K    256x  (256 blocks of 4 KiB, 1 unique)" in second
    doc = json.loads(run("analyze", "--json", d4).stdout)[0]
    assert doc["dedup"] == {"block": 4096, "blocks": 2048, "unique": 512, "ratio": 4,
                            "estimated": False}
    r = run("analyze", "-", input=b"x" * 4095)
    assert b"dedup 4K" not in r.stdout  # no complete block
    assert json.loads(run("analyze", "--json", "-", input=b"").stdout)[0]["dedup"]["ratio"] == 0


# --- on a terminal (script(1)) -----------------------------------------------------

SCRIPT = shutil.which("script")
needs_script = pytest.mark.skipif(not SCRIPT, reason="needs script(1) (util-linux)")


def on_tty(command, timeout=60):
    """Run a shell command with stdin, stdout and stderr on a pseudo-terminal
    (script -qec); returns (exit status, what the terminal showed)."""
    r = subprocess.run([SCRIPT, "-qefc", command, "/dev/null"], capture_output=True,
                       stdin=subprocess.DEVNULL, timeout=timeout)
    return r.returncode, r.stdout.decode("utf-8", "replace")


@needs_script
@pytest.mark.parametrize("kind", ["zero", "random", "compressible"])
def test_binary_to_terminal_refused(cli, kind):
    code, out = on_tty(f"'{cli}' gen {kind} 100M")
    assert code == 2
    assert out.strip() == (f"testdata: not writing binary data (kind {kind}) to a terminal: "
                           "redirect it (> FILE, | cmd), use -o FILE, or --force")
    code, out = on_tty(f"'{cli}' gen {kind} 100M -o /dev/tty")
    assert code == 2 and "not writing binary data" in out and len(out) < 200


@needs_script
def test_binary_to_terminal_with_force_and_text(cli, tmp_path):
    code, out = on_tty(f"'{cli}' gen random 3 --force --quiet; echo; echo done")
    assert code == 0 and out.rstrip().endswith("done") and "not writing" not in out
    code, out = on_tty(f"'{cli}' gen text 300 --seed 3 --quiet")
    assert code == 0 and len(out.strip()) > 250 and "not writing" not in out
    # not a terminal: no refusal
    code, out = on_tty(f"'{cli}' gen random 1M | wc -c; '{cli}' gen random 1K > {tmp_path / 'f'}")
    assert code == 0 and "1048576" in out and (tmp_path / "f").stat().st_size == 1024


needs_pv = pytest.mark.skipif(not shutil.which("pv"), reason="needs pv")


@needs_script
@needs_pv
def test_one_progress_meter_with_pv(cli, tmp_path):
    """Piped into pv, testdata leaves the terminal to pv's line; piped into
    anything else, it draws its own."""
    code, out = on_tty(f"'{cli}' gen random 16M | pv -f -L 16M > /dev/null")
    assert code == 0
    assert "MiB" in out and "testdata" not in out, out  # pv's line only
    code, out = on_tty(f"'{cli}' gen random 16M | (sleep 1; cat) > /dev/null")
    assert code == 0 and "testdata: gen" in out and "testdata: wrote 16777216 bytes" in out
    # verify, reading from pv
    f = tmp_path / "f"
    assert subprocess.run([cli, "gen", "random", "16M", "-o", f]).returncode == 0
    code, out = on_tty(f"pv -f -L 16M '{f}' | '{cli}' verify random 16M")
    assert code == 0 and "MiB" in out and "testdata" not in out, out
    code, out = on_tty(f"(sleep 1; cat '{f}') | '{cli}' verify random 16M")
    assert code == 0 and "testdata: verified 16777216 bytes" in out
    # --progress is obeyed even with pv
    code, out = on_tty(f"'{cli}' gen random 16M --progress | pv -q -L 16M > /dev/null")
    assert code == 0 and "testdata: wrote 16777216 bytes" in out
