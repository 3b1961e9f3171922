"""The CLI under faults, beyond test_io.py (gen's full disks, EFBIG, signals
and closed pipes): unreadable inputs for verify and analyze (permission
denied, EISDIR, an I/O error), a writer that dies in the middle, analyze
writing to a full disk or a closed pipe, SIGINT/SIGHUP in the middle.

Every case: the documented exit status (docs/reliability.md, docs/testdata.1),
one clear line on stderr, and no corrupt output left behind.
"""
import json
import os
import pathlib
import shutil
import signal
import subprocess
import tempfile
import time

import pytest

from td_fixtures import stderr_after_exit

# Reading /proc/self/mem at offset 0 (never mapped) fails with EIO, even for
# root: an I/O error source that needs no broken disk.
EIO_PATH = "/proc/self/mem"


def one_line(err):
    return err.count(b"\n") == 1


# --- unreadable input ------------------------------------------------------------

@pytest.fixture
def unreadable(tmp_path):
    """(path, preexec_fn): a mode-000 file, and how to run the CLI so that it
    really cannot read it (root can: run as nobody then)."""
    if os.geteuid() != 0:
        path = tmp_path / "secret"
        path.write_bytes(b"x" * 100)
        path.chmod(0)
        yield path, None
        path.chmod(0o600)
        return
    d = pathlib.Path(tempfile.mkdtemp(prefix="td-faults-"))
    d.chmod(0o755)
    path = d / "secret"
    path.write_bytes(b"x" * 100)
    path.chmod(0)

    def as_nobody():
        os.setgid(65534)
        os.setuid(65534)
    yield path, as_nobody
    shutil.rmtree(d)


@pytest.mark.parametrize("cmd", [["verify", "random", "100"], ["analyze"]])
def test_mode_000_input(cli, unreadable, cmd):
    path, pre = unreadable
    if pre:
        # nobody may not reach the build tree (a 0700 checkout): run a copy
        # from the world-readable scratch directory.
        copy = path.parent / "testdata"
        shutil.copy(cli, copy)
        copy.chmod(0o755)
        cli = str(copy)
    try:
        r = subprocess.run([cli, *cmd, str(path)], capture_output=True, preexec_fn=pre)
    except PermissionError as e:  # nobody cannot even run the program here
        pytest.skip(f"cannot run the CLI as nobody here: {e}")
    if r.returncode != 1 and b"ermission denied" not in r.stderr and pre:
        pytest.skip(f"cannot run the CLI as nobody here: {r.stderr!r}")
    assert r.returncode == 1, r.stderr
    assert f"cannot open '{path}': Permission denied".encode() in r.stderr
    assert one_line(r.stderr), r.stderr
    assert r.stdout == b""


@pytest.mark.parametrize("cmd", [["verify", "random", "1K"], ["analyze"]])
def test_io_error_input(run, cmd):
    r = run(*cmd, EIO_PATH)
    assert r.returncode == 1
    assert f"read error on '{EIO_PATH}'".encode() in r.stderr
    assert b"Input/output error" in r.stderr
    assert one_line(r.stderr), r.stderr
    assert r.stdout == b""  # no report on a half-read input


@pytest.mark.parametrize("cmd", [["verify", "random", "1K"], ["analyze"]])
def test_directory_input(run, tmp_path, cmd):
    r = run(*cmd, tmp_path)
    assert r.returncode == 1
    assert b"read error" in r.stderr and b"Is a directory" in r.stderr
    assert one_line(r.stderr), r.stderr
    assert r.stdout == b""


def test_analyze_json_stays_valid_after_errors(run, tmp_path):
    good = tmp_path / "good.txt"
    good.write_bytes(b"hello " * 1000)
    r = run("analyze", "--json", EIO_PATH, tmp_path, good)
    assert r.returncode == 1
    doc = json.loads(r.stdout)  # well-formed, one entry per argument
    assert [d["file"] for d in doc] == [EIO_PATH, str(tmp_path), str(good)]
    assert doc[0]["error"] == "Input/output error"
    assert doc[1]["error"] == "Is a directory"
    assert doc[2]["size"] == 6000
    assert r.stderr.count(b"\n") == 2


def test_verify_writer_dies_in_the_middle(cli):
    """The writer of the pipe is killed: verify reports a short input."""
    g = subprocess.Popen([cli, "gen", "random", "inf", "--algorithm", "fast"],
                         stdout=subprocess.PIPE)
    v = subprocess.Popen([cli, "verify", "random", "100G", "--algorithm", "fast"],
                         stdin=g.stdout, stderr=subprocess.PIPE)
    g.stdout.close()
    time.sleep(0.3)
    g.kill()
    _, err = v.communicate(timeout=30)
    g.wait(timeout=10)
    assert v.returncode == 1, err
    assert b"is short:" in err and b"differ" not in err
    assert one_line(err), err


# --- analyze: full disk, closed pipe ---------------------------------------------

@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_analyze_stdout_full(cli, tmp_path, json_flag):
    f = tmp_path / "f"
    f.write_bytes(b"abc" * 1000)
    with open("/dev/full", "wb") as full:
        r = subprocess.run([cli, "analyze", *json_flag, str(f), str(f)], stdout=full,
                           stderr=subprocess.PIPE)
    assert r.returncode == 1
    assert r.stderr == b"testdata: write error on stdout: No space left on device\n"


@pytest.mark.parametrize("ignore", [False, True])
def test_analyze_closed_pipe_is_quiet(cli, ignore):
    """The reader of stdout is gone before analyze writes: killed by SIGPIPE,
    or, with SIGPIPE ignored, exit 141 (as gen); nothing on stderr."""
    def pre():
        if ignore:
            signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    p = subprocess.Popen([cli, "analyze", "-"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, preexec_fn=pre)
    p.stdout.close()
    p.stdin.write(b"abc" * 10000)
    p.stdin.close()
    err = stderr_after_exit(p)
    assert p.returncode == (141 if ignore else -signal.SIGPIPE)
    assert err == b""


# --- signals in the middle ---------------------------------------------------------

def test_sigint_analyze_exits_130(cli):
    p = subprocess.Popen([cli, "analyze", "-"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    p.stdin.write(b"x" * (3 << 20))
    p.stdin.flush()
    time.sleep(0.2)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=10)
    assert p.returncode == 130
    assert out == b""  # no report of a partial input


def test_sighup_leaves_nothing(cli, tmp_path):
    out = tmp_path / "f.bin"
    p = subprocess.Popen([cli, "gen", "random", "100G", "--algorithm", "fast", "-o", out],
                         stderr=subprocess.PIPE)
    time.sleep(0.3)
    p.send_signal(signal.SIGHUP)
    p.communicate(timeout=10)
    assert p.returncode == 129
    assert not out.exists()
    assert os.listdir(tmp_path) == []


def test_full_tmpfs_leaves_nothing(cli):
    """A full filesystem (1 MiB tmpfs): a clear message, exit 1, and neither
    the partial output nor any temporary file remains."""
    d = tempfile.mkdtemp()
    try:
        if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", d],
                          capture_output=True).returncode != 0:
            pytest.skip("cannot mount a tmpfs here")
        try:
            out = pathlib.Path(d) / "f"
            p = subprocess.run([cli, "gen", "random", "4M", "-o", out], capture_output=True)
            assert p.returncode == 1
            assert b"write error on" in p.stderr and b"No space left on device" in p.stderr
            assert b"is unchanged" in p.stderr
            assert not out.exists()
            assert os.listdir(d) == []  # no temporary file either
        finally:
            subprocess.run(["umount", d])
    finally:
        os.rmdir(d)


# --- close() fails (NFS, quotas): an LD_PRELOAD shim --------------------------------

CLOSE_SHIM = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
/* close() of a descriptor whose path starts with $TD_TEST_FAIL_CLOSE closes
 * it and then reports EIO, as NFS does for a write it could not flush. */
int close(int fd)
{
    static int (*real)(int);
    const char *want = getenv("TD_TEST_FAIL_CLOSE");
    char p[64], path[PATH_MAX];
    ssize_t n;
    if (!real)
        real = (int (*)(int))dlsym(RTLD_NEXT, "close");
    snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
    if (want && (n = readlink(p, path, sizeof path - 1)) > 0) {
        path[n] = 0;
        if (strncmp(path, want, strlen(want)) == 0) {
            real(fd);
            errno = EIO;
            return -1;
        }
    }
    return real(fd);
}
"""


@pytest.fixture(scope="module")
def close_shim(tmp_path_factory):
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler for the shim")
    d = tmp_path_factory.mktemp("shim")
    (d / "shim.c").write_text(CLOSE_SHIM)
    subprocess.run([cc, "-shared", "-fPIC", "-o", d / "shim.so", d / "shim.c", "-ldl"], check=True)
    return d / "shim.so"


def test_close_error_keeps_the_old_file(cli, tmp_path, close_shim):
    """close() of the output failing after every write succeeded: exit 1,
    no new file left under the name (it may lack data), an old file
    unchanged, no temporary.  The new file used to stay, linked in before
    close(), and a replaced file was already gone."""
    d = tmp_path / "out"
    d.mkdir()
    env = dict(os.environ, TD_TEST_FAIL_CLOSE=str(d) + "/",
               LD_PRELOAD=" ".join(filter(None, [os.environ.get("LD_PRELOAD"), str(close_shim)])),
               ASAN_OPTIONS=":".join(filter(None, [os.environ.get("ASAN_OPTIONS"),
                                                   "verify_asan_link_order=0"])))
    new, old = d / "new.bin", d / "old.bin"
    old.write_bytes(b"precious")
    for out, before in ((new, None), (old, b"precious")):
        r = subprocess.run([cli, "gen", "random", "1M", "-o", out], capture_output=True, env=env)
        assert r.returncode == 1 and one_line(r.stderr), r.stderr
        assert b"Input/output error" in r.stderr, r.stderr
        if before is None:
            assert not out.exists(), "a file whose close() failed was left in place"
        else:
            assert out.read_bytes() == before, "the old file was replaced"
        assert sorted(os.listdir(d)) == ["old.bin"], os.listdir(d)
    # the shim itself: without the failure the same command writes the file
    env.pop("TD_TEST_FAIL_CLOSE")
    subprocess.run([cli, "gen", "random", "1M", "-o", new], check=True, env=env)
    assert new.stat().st_size == 1 << 20


# --- the documented exit statuses agree ------------------------------------------

def test_exit_statuses_documented(source_dir):
    import re
    man = (source_dir / "docs" / "testdata.1").read_text().replace("\\-", "-")
    section = man.split(".SH EXIT STATUS", 1)[1].split("\n.SH ", 1)[0]
    in_man = {int(n) for line in section.splitlines() if line.startswith((".B ", ".BR "))
              for n in re.findall(r"\b(\d+)\b", line)}
    rel = (source_dir / "docs" / "reliability.md").read_text()
    table = rel.split("### The CLI under faults", 1)[1].split("###", 1)[0]
    in_rel = {int(n) for row in re.findall(r"^\| ([\d, ]+) \|", table, re.M)
              for n in row.split(",")}
    assert in_man == in_rel == {0, 1, 2, 129, 130, 141, 143}, (in_man, in_rel)
