"""Data safety from Python (docs/reliability.md): write() never replaces
what is not a regular file and leaves nothing on failure or Ctrl-C; paths
with NUL are refused and bytes paths work; streams survive fork() and
multiprocessing; long calls answer Ctrl-C; misbehaving file objects and
huge sizes give clear errors."""
import multiprocessing
import os
import signal
import stat
import subprocess
import sys
import textwrap

import pytest

import testdata

PY = sys.executable


def device_copy(tmp_path, name, minor):
    """A node of the memory device 1:minor in tmp_path (full: 7, null: 3): a
    regression can then only ever replace the copy, never /dev/full."""
    node = tmp_path / name
    try:
        os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, minor))
    except PermissionError:
        pytest.skip("mknod needs root")
    return node


def test_dev_full_stays_a_device(tmp_path):
    full = device_copy(tmp_path, "full", 7)
    with pytest.raises(OSError) as e:
        testdata.write(full, "zero", 10)
    assert e.value.errno == 28  # ENOSPC
    assert stat.S_ISCHR(os.lstat(full).st_mode)
    assert os.listdir(tmp_path) == ["full"]


def test_fifo_and_device_copy(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE)
    testdata.write(fifo, "random", 100_000, seed=3)
    assert reader.communicate(timeout=20)[0] == testdata.generate("random", 100_000, seed=3)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    node = device_copy(tmp_path, "null", 3)
    testdata.write(node, "random", 1 << 20)
    assert stat.S_ISCHR(os.lstat(node).st_mode)


def test_symlink_is_followed(tmp_path):
    (tmp_path / "target").write_bytes(b"old")
    os.symlink("target", tmp_path / "link")
    testdata.write(tmp_path / "link", "zero", 5)
    assert os.path.islink(tmp_path / "link")
    assert (tmp_path / "target").read_bytes() == bytes(5)


def test_nul_in_path_is_refused(tmp_path):
    victim = tmp_path / "victim"
    victim.write_bytes(b"precious")
    for p in (str(victim) + "\0.bak", os.fsencode(victim) + b"\0.bak"):
        with pytest.raises(ValueError):
            testdata.write(p, "zero", 10)
        with pytest.raises(ValueError):
            testdata.verify(str(p) if isinstance(p, str) else os.fsdecode(p), "zero", 10)
    assert victim.read_bytes() == b"precious"


def test_bytes_and_pathlike_paths(tmp_path):
    raw = os.fsencode(tmp_path) + b"/caf\xe9\xff.bin"  # not UTF-8
    got = testdata.write(raw, "random", 1000, seed=2)
    assert os.path.exists(raw) and os.fsencode(got) == raw
    testdata.verify(got, "random", 1000, seed=2)

    class P:
        def __fspath__(self):
            return str(tmp_path / "pl.bin")
    testdata.write(P(), "zero", 3)
    testdata.verify(P(), "zero", 3)


def test_long_file_name(tmp_path):
    p = testdata.write(tmp_path / ("n" * 250), "random", 1000)
    testdata.verify(p, "random", 1000)
    assert os.listdir(tmp_path) == ["n" * 250]


def test_huge_sizes_are_value_errors(tmp_path):
    with pytest.raises(ValueError):
        testdata.generate("random", 2**63)
    with pytest.raises(ValueError):
        testdata.generate("random", 2**64)
    with pytest.raises(ValueError):
        testdata.write(tmp_path / "f", "random", 2**64)
    with pytest.raises(ValueError):
        testdata.write(tmp_path / "f", "zero", "inf")
    assert os.listdir(tmp_path) == []


class Liar:
    """A file object whose readinto() breaks its contract."""

    def __init__(self, result):
        self.result = result

    def readinto(self, b):
        return self.result


@pytest.mark.parametrize("result", [-1, 1 << 30, "x"])
def test_bad_readinto_is_an_error_not_a_hang(result):
    with pytest.raises(OSError, match="readinto"):
        testdata.verify(Liar(result), "zero", 100)


def test_error_hierarchy():
    assert issubclass(testdata.MismatchError, testdata.Error)
    assert issubclass(testdata.MismatchError, AssertionError)
    with pytest.raises(testdata.Error) as e:
        testdata.verify(b"\1" + bytes(99), "zero", 100)
    assert e.value.mismatches == 1 and e.value.compared == 100 and e.value.offset == 0
    assert "1 differing byte in 100 compared" in str(e.value)


# --- fork --------------------------------------------------------------------------

def _child(code):
    """Run code in a forked child with a 20 s alarm; its exit status."""
    pid = os.fork()
    if pid == 0:
        signal.alarm(20)
        try:
            code()
            os._exit(0)
        except BaseException:
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    return status


def test_fork_after_a_threaded_stream():
    want = testdata.generate("random", 8 << 20, seed=1)
    s = testdata.Stream("random", 16 << 20, seed=1, threads=4)
    s.read(4 << 20)  # workers are running

    def read_in_child():
        s.seek(0)
        assert s.read(8 << 20) == want
        s.close()
    assert _child(read_in_child) == 0
    assert _child(lambda: None) == 0  # a child that only exits (frees at exit)
    s.seek(0)
    assert s.read(8 << 20) == want


_shared = None


def _digest(offset):
    _shared.seek(offset)
    return _shared.read(1 << 20)


def test_multiprocessing_fork_pool():
    global _shared
    _shared = testdata.Stream("random", 64 << 20, seed=5, threads=4)
    _shared.read(1 << 20)
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(2) as pool:
        # A hang (workers without threads) fails instead of blocking the suite.
        got = pool.map_async(_digest, [0, 8 << 20, 32 << 20], chunksize=1).get(timeout=60)
    assert got == [testdata.generate("random", 1 << 20, seed=5, offset=o)
                   for o in (0, 8 << 20, 32 << 20)]
    _shared.close()


# --- Ctrl-C --------------------------------------------------------------------------

def _interrupted(tmp_path, body):
    """Run body in a child Python; SIGINT once it says 'go'.  The child prints
    'interrupted' if KeyboardInterrupt reached it, 'completed' otherwise."""
    script = textwrap.dedent(f"""
        import sys, testdata
        try:
            print("go", flush=True)
            {body}
            print("completed", flush=True)
        except KeyboardInterrupt:
            print("interrupted", flush=True)
    """)
    p = subprocess.Popen([PY, "-c", script], stdout=subprocess.PIPE, cwd=tmp_path,
                         env=dict(os.environ))
    assert p.stdout.readline() == b"go\n"
    import time
    time.sleep(0.2)
    p.send_signal(signal.SIGINT)
    out = p.communicate(timeout=30)[0]
    return out.decode()


def test_ctrl_c_during_write_leaves_nothing(tmp_path):
    (tmp_path / "f").write_bytes(b"precious")
    out = _interrupted(tmp_path, 'testdata.write("f", "random", "200G", algorithm="fast")')
    assert out.strip() == "interrupted"
    assert (tmp_path / "f").read_bytes() == b"precious"
    assert os.listdir(tmp_path) == ["f"]


def test_ctrl_c_during_generate_and_verify(tmp_path):
    out = _interrupted(tmp_path, 'b = bytearray(1 << 30); testdata.fill(b, "text", threads=1)')
    assert out.strip() == "interrupted"
    testdata.write(tmp_path / "big", "zero", "1G")
    out = _interrupted(tmp_path, 'testdata.verify("big", "text", "1G")')
    assert out.strip() in ("interrupted",), out
