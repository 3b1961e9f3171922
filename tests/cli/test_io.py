"""gen/verify I/O behaviour: errors (ENOSPC, EFBIG), partial files, signals,
closed pipes, progress and quiet, --seed random, help, bounded memory."""
import os
import pathlib
import pty
import re
import resource
import shutil
import signal
import stat
import subprocess
import tempfile
import time

import pytest

from td_fixtures import stderr_after_exit


def limit_fsize(n):
    def pre():
        resource.setrlimit(resource.RLIMIT_FSIZE, (n, n))
    return pre


# --- errors: exit 1 with one clear line; -o FILE is replaced only when complete -----

def test_enospc_dev_full_output(run, tmp_path):
    full = tmp_path / "full"  # a copy of /dev/full: a regression harms only the copy
    try:
        os.mknod(full, 0o666 | stat.S_IFCHR, os.makedev(1, 7))
    except PermissionError:
        full = pathlib.Path("/dev/full")
    r = run("gen", "zero", "1M", "-o", full)
    assert r.returncode == 1
    assert f"write error on '{full}'".encode() in r.stderr and b"No space left on device" in r.stderr
    assert stat.S_ISCHR(os.lstat(full).st_mode)  # never replaced: not a regular file
    assert b"removed" not in r.stderr


def test_enospc_dev_full_stdout(cli):
    with open("/dev/full", "wb") as full:
        p = subprocess.run([cli, "gen", "random", "1M"], stdout=full, stderr=subprocess.PIPE)
    assert p.returncode == 1
    assert b"write error on 'stdout'" in p.stderr and b"No space left on device" in p.stderr
    assert p.stderr.count(b"\n") == 1


def test_efbig_leaves_nothing(cli, tmp_path):
    out = tmp_path / "big.bin"
    p = subprocess.run([cli, "gen", "random", "4M", "-o", out], capture_output=True,
                       preexec_fn=limit_fsize(1 << 20))
    assert p.returncode == 1, p.stderr
    assert b"File too large" in p.stderr
    assert b"is unchanged" in p.stderr
    assert not out.exists()
    assert os.listdir(tmp_path) == []  # no temporary either


def test_efbig_keep_partial(cli, run, tmp_path):
    out = tmp_path / "big.bin"
    p = subprocess.run([cli, "gen", "random", "4M", "--seed", "2", "-o", out, "--keep-partial"],
                       capture_output=True, preexec_fn=limit_fsize(1 << 20))
    assert p.returncode == 1
    assert b"File too large" in p.stderr and b"kept the incomplete" in p.stderr
    assert out.stat().st_size == 1 << 20
    # what was kept is a correct prefix: verify reports it as short, not different
    r = run("verify", "random", "4M", "--seed", 2, out)
    assert r.returncode == 1 and b"is short: 1048576 of 4194304" in r.stderr
    assert b"differ" not in r.stderr


def test_enospc_small_tmpfs(cli):
    d = tempfile.mkdtemp()
    try:
        if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", d],
                          capture_output=True).returncode != 0:
            pytest.skip("cannot mount a tmpfs here")
        try:
            out = pathlib.Path(d) / "f"
            p = subprocess.run([cli, "gen", "random", "4M", "-o", out], capture_output=True)
            assert p.returncode == 1
            assert b"No space left on device" in p.stderr
            assert not out.exists()
            assert os.listdir(d) == []
        finally:
            subprocess.run(["umount", d])
    finally:
        os.rmdir(d)


def test_replacement_keeps_acl_and_xattrs(run, tmp_path):
    """gen -o and tree gen replace a file by a new one: its mode, POSIX ACL
    and user attributes stay (as with sed -i), so sharing survives."""
    f = tmp_path / "shared.bin"
    f.write_bytes(b"old")
    try:
        os.setxattr(f, "user.owner_note", b"keep me")
    except OSError as e:
        pytest.skip(f"no user xattrs here: {e}")
    # version 2; user::rw- user:4321:r-- group::r-- mask::r-- other::---
    acl = (2).to_bytes(4, "little") + b"".join(
        tag.to_bytes(2, "little") + perm.to_bytes(2, "little") + uid.to_bytes(4, "little")
        for tag, perm, uid in [(1, 6, 0xFFFFFFFF), (2, 4, 4321), (4, 4, 0xFFFFFFFF),
                               (0x10, 4, 0xFFFFFFFF), (0x20, 0, 0xFFFFFFFF)])
    try:
        os.setxattr(f, "system.posix_acl_access", acl)
    except OSError:
        acl = None
    mode = os.stat(f).st_mode
    r = run("gen", "random", "4K", "-o", f)
    assert r.returncode == 0, r.stderr
    assert f.stat().st_size == 4096
    assert os.getxattr(f, "user.owner_note") == b"keep me"
    if acl:
        assert os.getxattr(f, "system.posix_acl_access") == acl
    assert os.stat(f).st_mode == mode
    # a tree file replaced by a new run
    d = tmp_path / "tree"
    assert run("tree", "gen", d, "--files", "3", "--seed", "1", "-q").returncode == 0
    name = sorted(p for p in d.rglob("*") if p.is_file())[0]
    name.write_bytes(b"changed")
    os.setxattr(name, "user.owner_note", b"tree")
    assert run("tree", "gen", d, "--files", "3", "--seed", "1", "-q").returncode == 0
    assert name.stat().st_size != 7 and os.getxattr(name, "user.owner_note") == b"tree"


def test_unwritable_output(run):
    r = run("gen", "zero", "1K", "-o", "/nonexistent-dir/x")
    assert r.returncode == 1
    assert b"cannot write '/nonexistent-dir/x': No such file or directory" in r.stderr


def test_output_is_a_directory(run, tmp_path):
    r = run("gen", "zero", "1K", "-o", tmp_path)
    assert r.returncode == 1 and b"Is a directory" in r.stderr
    assert tmp_path.is_dir()


# --- signals -------------------------------------------------------------------

def wait_for_writes(proc, n=4 << 20, timeout=10):
    """Until proc has written n bytes (the output is an unnamed temporary,
    so there is no file to watch)."""
    end = time.time() + timeout
    while time.time() < end:
        try:
            io = dict(line.split(": ") for line in
                      pathlib.Path(f"/proc/{proc.pid}/io").read_text().splitlines())
            if int(io["wchar"]) >= n:
                return
        except (OSError, KeyError, ValueError):
            pass
        if proc.poll() is not None:
            break
        time.sleep(0.01)
    pytest.fail("the process wrote nothing")


@pytest.mark.parametrize("sig,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_signal_leaves_old_file(cli, tmp_path, sig, code):
    out = tmp_path / "f.bin"
    out.write_bytes(b"precious")
    p = subprocess.Popen([cli, "gen", "random", "100G", "--algorithm", "fast", "-o", out],
                         stderr=subprocess.PIPE)
    wait_for_writes(p)
    p.send_signal(sig)
    _, err = p.communicate(timeout=10)
    assert p.returncode == code
    assert out.read_bytes() == b"precious"
    assert sorted(os.listdir(tmp_path)) == ["f.bin"]


def test_signal_keep_partial(cli, tmp_path):
    out = tmp_path / "f.bin"
    p = subprocess.Popen([cli, "gen", "random", "inf", "-o", out, "--keep-partial"],
                         stderr=subprocess.PIPE)
    wait_for_writes(p)
    p.send_signal(signal.SIGINT)
    p.communicate(timeout=10)
    assert p.returncode == 130
    assert out.exists()


def test_sigint_verify_exits_130(cli):
    p = subprocess.Popen([cli, "verify", "random", "1G"], stdin=subprocess.PIPE)
    time.sleep(0.2)
    p.send_signal(signal.SIGINT)
    p.wait(timeout=10)
    p.stdin.close()
    assert p.returncode == 130


# Every long-running command, interrupted: the same one line, 128+N, and no
# output file or temporary left.  Those reading stdin get a pipe kept open.
INTERRUPTED = {
    "gen -o": (["gen", "random", "100G", "--algorithm", "fast", "-o", "out"], False),
    "model build": (["model", "build", "-", "-o", "out"], True),
    "profile": (["profile", "-", "-o", "out"], True),
    "verify": (["verify", "random", "1G"], True),
    "analyze": (["analyze", "-"], True),
    "tree gen": (["tree", "gen", "out", "--files", "1000000", "--sizes", "fixed:1", "-q"], False),
}


@pytest.mark.parametrize("sig,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
@pytest.mark.parametrize("name", sorted(INTERRUPTED))
def test_interrupted_commands_say_the_same(cli, tmp_path, name, sig, code):
    args, reads_stdin = INTERRUPTED[name]
    p = subprocess.Popen([cli, *args], cwd=tmp_path, stdin=subprocess.PIPE,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if reads_stdin:
        p.stdin.write(b"Words of a corpus, and more of them.\n" * 3000)
        p.stdin.flush()
        time.sleep(0.3)
    elif name == "tree gen":
        time.sleep(0.5)
    else:
        wait_for_writes(p)
    p.send_signal(sig)
    try:
        _, err = p.communicate(timeout=30)  # closes stdin too
    except subprocess.TimeoutExpired:
        p.kill()
        _, err = p.communicate()
        raise AssertionError(f"{name}: still running 30 s after {sig!r}: {err!r}") from None
    assert p.returncode == code, (name, err)
    lines = err.decode().splitlines()
    assert lines[-1] == f"testdata: interrupted by {signal.Signals(sig).name}", (name, err)
    if name == "tree gen":  # the files present are complete; maybe a hint how to finish
        assert all("'tree gen --resume' completes the tree" in x for x in lines[:-1]), err
    else:
        assert len(lines) == 1, (name, err)
        assert os.listdir(tmp_path) == [], (name, os.listdir(tmp_path))


# --- closed pipes ----------------------------------------------------------------

def test_closed_pipe_is_quiet(cli):
    p = subprocess.run(f"'{cli}' gen random 1G | head -c 10 | wc -c", shell=True,
                       capture_output=True)
    assert p.stdout.strip() == b"10"
    assert p.stderr == b""


def test_closed_pipe_with_sigpipe_ignored_is_quiet(cli):
    def ignore_sigpipe():
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    p = subprocess.Popen([cli, "gen", "random", "1G", "--progress"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, preexec_fn=ignore_sigpipe)
    p.stdout.read(10)
    p.stdout.close()
    err = stderr_after_exit(p)
    assert p.returncode == 141
    assert b"error" not in err.lower()


# --- progress, summary, quiet ----------------------------------------------------

def test_silent_when_not_a_terminal(run):
    r = run("gen", "random", "2M")
    assert r.returncode == 0 and r.stderr == b""


def test_progress_forced(run, tmp_path):
    r = run("gen", "random", "3M", "--progress", "-o", tmp_path / "f")
    assert r.returncode == 0
    err = r.stderr.decode()
    assert re.search(r"gen 3\.0 MiB / 3\.0 MiB \(100%\), .*/s, ETA \d+:\d\d:\d\d\n", err), err
    assert re.search(r"wrote 3145728 bytes \(3\.0 MiB\) in [0-9.]+ s, .*/s \([0-9.]+ GB/s\)\n",
                     err), err
    assert "\r" not in err  # plain lines when stderr is not a terminal


def test_progress_unbounded_size(cli):
    p = subprocess.run(f"'{cli}' gen zero inf --progress | head -c 3000000 > /dev/null",
                       shell=True, capture_output=True)
    assert p.stderr == b"" or b"ETA" not in p.stderr


@pytest.mark.parametrize("flags", [["--quiet"], ["-q"], ["--progress", "--quiet"],
                                   ["--quiet", "--progress"]])
def test_quiet(run, flags):
    r = run("gen", "random", "1M", *flags)
    assert r.returncode == 0 and len(r.stdout) == 1 << 20 and r.stderr == b""


def run_on_tty(args):
    """Run with stderr on a pseudo-terminal; returns (returncode, stderr text)."""
    master, slave = pty.openpty()
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    chunks = []
    while True:
        try:
            b = os.read(master, 4096)
        except OSError:
            break
        if not b:
            break
        chunks.append(b)
    os.close(master)
    return p.wait(timeout=30), b"".join(chunks).decode()


def test_progress_automatic_on_terminal(cli):
    code, err = run_on_tty([cli, "gen", "random", "4M"])
    assert code == 0
    assert "\r" in err and "(100%)" in err and "wrote 4194304 bytes" in err
    code, err = run_on_tty([cli, "gen", "random", "4M", "--quiet"])
    assert code == 0 and err == ""


# --- --seed random ---------------------------------------------------------------

def test_seed_random_is_printed_and_reproducible(run):
    r = run("gen", "random", "1K", "--seed", "random")
    assert r.returncode == 0
    m = re.fullmatch(rb"testdata: seed (\d+) \(reproduce with --seed \1\)\n", r.stderr)
    assert m, r.stderr
    assert run("gen", "random", "1K", "--seed", m.group(1).decode()).stdout == r.stdout
    r2 = run("gen", "random", "1K", "--seed", "random")
    assert r2.stdout != r.stdout


# --- options, usage errors, help --------------------------------------------------

@pytest.mark.parametrize("cmd", ["gen", "verify"])
@pytest.mark.parametrize("args,needle", [
    (["random", "10Q"], b"bad size '10Q'"),
    (["random", "-5"], b"bad size '-5'"),
    (["random", ""], b"bad size ''"),
    (["random", "18446744073709551616"], b"out of range"),
    (["random", "99999999999E"], b"out of range"),
    (["nosuch", "1K"], b"unknown kind 'nosuch'"),
    (["random"], b"needs KIND and SIZE"),
    (["random", "1K", "--bogus", "1"], b"unknown option '--bogus'"),
    (["random", "1K", "--bogus"], b"unknown option '--bogus'"),
    (["random", "1K", "--see", "1"], b"unknown option '--see'"),
    (["random", "1K", "-x"], b"unknown option '-x'"),
    (["random", "1K", "--seed"], b"option '--seed' needs a value"),
    (["random", "1K", "--seed", "x"], b"bad value 'x' for --seed"),
    (["random", "1K", "--seed=-1"], b"bad value '-1' for --seed"),
    (["random", "1K", "--threads", "99999999999"], b"--threads"),
    (["random", "1K", "--algorithm", "md5"], b"bad value 'md5' for --algorithm"),
    (["zero", "1K", "--algorithm", "fast"], b"does not apply to kind zero"),
    (["random", "1K", "--offset", "x"], b"bad --offset 'x'"),
    (["random", "1K", "--offset", "18446744073709551615"], b"past the end"),
    (["random", "1K", "--keep-partial=1"], b"takes no value"),
])
def test_usage_errors_exit_2(run, cmd, args, needle):
    if cmd == "verify" and b"takes no value" in needle:  # --keep-partial is gen-only
        needle = b"unknown option"
    if cmd == "verify" and needle == b"needs KIND and SIZE":  # SIZE only from a regular file
        needle = b"SIZE is needed: stdin is not a regular file"
    r = run(cmd, *args, input=b"")
    assert r.returncode == 2, r.stderr
    assert r.stdout == b""
    assert needle in r.stderr, r.stderr
    assert r.stderr.count(b"\n") == 1, r.stderr


def test_verify_rejects_gen_only_options(run):
    for opt in (["-o", "x"], ["--output", "x"], ["--keep-partial"]):
        r = run("verify", "zero", "1", *opt, input=b"\0")
        assert r.returncode == 2 and b"unknown option" in r.stderr


def test_option_forms(run):
    a = run("gen", "random", "1K", "--seed=5", "--algorithm=fast").stdout
    b = run("gen", "--seed", "5", "random", "--algorithm", "fast", "1K").stdout
    c = run("gen", "random", "1K", "--seed", "5", "--algorithm", "fast", "--", ).stdout
    assert a == b == c and len(a) == 1024


def test_output_forms(run, tmp_path):
    for args in (["-o", tmp_path / "a"], [f"-o{tmp_path / 'b'}"], ["--output", tmp_path / "c"],
                 [f"--output={tmp_path / 'd'}"]):
        assert run("gen", "zero", "1K", *args).returncode == 0
    assert all((tmp_path / n).stat().st_size == 1024 for n in "abcd")


@pytest.mark.parametrize("cmd,needle", [("gen", b"--keep-partial"), ("verify", b"FILE|-"),
                                        ("analyze", b"--json")])
def test_help(run, cmd, needle):
    for flag in ("--help", "-h"):
        r = run(cmd, flag)
        assert r.returncode == 0 and needle in r.stdout and r.stdout.startswith(b"usage:")
    assert b"zero | random" in run("gen", "--help").stdout or cmd != "gen"


def test_main_help_and_version(run):
    r = run("--help")
    assert r.returncode == 0
    for c in (b"gen", b"verify", b"analyze"):
        assert c in r.stdout
    assert run().returncode == 2
    v = run("--version")
    assert v.returncode == 0 and re.fullmatch(rb"testdata \d+\.\d+\.\d+ \(format \d+\)\n", v.stdout)
    assert run("gen", "--version").stdout == v.stdout


def test_man_page_exists(source_dir):
    man = (source_dir / "docs" / "testdata.1").read_text().replace("\\-", "-")
    for word in ("gen", "verify", "analyze", "--keep-partial", "--json", "EXIT STATUS"):
        assert word in man


# --- bounded memory ---------------------------------------------------------------

@pytest.mark.skipif(not os.path.exists("/usr/bin/time"), reason="needs GNU time")
@pytest.mark.parametrize("threads", ["1", "2"])
def test_memory_is_bounded(cli, tmp_path, threads):
    """Peak RSS of gen and verify stays at a few MiB for 1 GiB."""
    if b"__asan_init" in pathlib.Path(cli).read_bytes():
        pytest.skip("AddressSanitizer's quarantine keeps freed memory")
    g, v = tmp_path / "gen.rss", tmp_path / "verify.rss"
    opts = f"--algorithm fast --threads {threads}"
    p = subprocess.run(f"/usr/bin/time -f %M -o '{g}' '{cli}' gen random 1G {opts} | "
                       f"/usr/bin/time -f %M -o '{v}' '{cli}' verify random 1G {opts}",
                       shell=True, capture_output=True)
    assert p.returncode == 0, p.stderr
    gen_kb, ver_kb = int(g.read_text().split()[-1]), int(v.read_text().split()[-1])
    assert gen_kb < 24 * 1024 and ver_kb < 24 * 1024, (gen_kb, ver_kb)
