"""testdata.Stream as a file object."""
import array
import hashlib
import io
import mmap
import os
import pickle
import shutil
import threading

import pytest

import testdata

N = 3_000_000


@pytest.fixture
def ref():
    return testdata.generate("random", N, seed=11)


@pytest.fixture
def s():
    with testdata.Stream("random", N, seed=11) as st:
        yield st


def test_is_raw_io(s):
    assert isinstance(s, io.RawIOBase) and isinstance(s, io.IOBase)
    assert s.readable() and s.seekable() and not s.writable()
    assert len(s) == N and s.size == N and s.kind == "random" and s.seed == 11
    assert "random" in repr(s)


def test_read_all(s, ref):
    assert s.read() == ref
    assert s.read() == b"" and s.read(10) == b""
    assert s.tell() == N


def test_read_sizes(s, ref):
    assert s.read(0) == b""
    assert s.read(1) == ref[:1]
    assert s.read(1_000_000) == ref[1:1_000_001]
    s.seek(N - 5)
    assert s.read(100) == ref[-5:]
    assert s.read(100) == b""
    s.seek(0)
    assert s.readall() == ref
    s.seek(10)
    assert s.read(None) == ref[10:]


def test_readinto_buffers(s, ref):
    ba = bytearray(1000)
    assert s.readinto(ba) == 1000 and ba == ref[:1000]
    mv = memoryview(bytearray(3000))
    assert s.readinto(mv[1000:2000]) == 1000 and mv[1000:2000] == ref[1000:2000]
    arr = array.array("d", bytes(800))
    assert s.readinto(arr) == 800 and arr.tobytes() == ref[2000:2800]
    m = mmap.mmap(-1, 4096)
    assert s.readinto(m) == 4096 and m[:] == ref[2800:6896]
    m.close()
    s.seek(N - 10)
    assert s.readinto(bytearray(100)) == 10
    assert s.readinto(bytearray(100)) == 0
    assert s.readinto(bytearray(0)) == 0


def test_readinto_rejects_readonly_and_none(s):
    for bad in (b"abc", memoryview(b"abc"), "abc", None, 5, memoryview(bytearray(10))[::2]):
        with pytest.raises(TypeError):
            s.readinto(bad)
    assert s.tell() == 0


def test_seek_tell(s, ref):
    assert s.seek(100) == 100 and s.tell() == 100
    assert s.seek(50, os.SEEK_CUR) == 150
    assert s.read(10) == ref[150:160]
    assert s.seek(-10, os.SEEK_CUR) == 150
    assert s.seek(-100, os.SEEK_END) == N - 100
    assert s.read() == ref[-100:]
    assert s.seek(0, os.SEEK_END) == N and s.read(1) == b""
    assert s.seek(0) == 0 and s.read(5) == ref[:5]
    with pytest.raises(ValueError):
        s.seek(-1)
    with pytest.raises(ValueError):
        s.seek(N + 1)
    with pytest.raises(ValueError):
        s.seek(1, os.SEEK_END)
    with pytest.raises(ValueError):
        s.seek(0, 3)
    with pytest.raises(TypeError):
        s.seek("1")
    with pytest.raises(TypeError):
        s.seek(None)
    assert s.tell() == 5


def test_iteration_yields_bytes(s, ref):
    chunks = list(s)
    assert all(type(c) is bytes and c for c in chunks)
    assert b"".join(chunks) == ref
    s.seek(N - 7)
    assert list(s) == [ref[-7:]]


def test_context_manager_and_close():
    with testdata.Stream("zero", 10) as st:
        assert st.read(3) == bytes(3)
    assert st.closed
    st.close()  # twice is fine
    for op in (st.read, st.tell, lambda: st.seek(0), lambda: st.readinto(bytearray(1)),
               lambda: next(iter(st)), st.readable, st.seekable):
        with pytest.raises(ValueError):
            op()


def test_buffered_reader(ref):
    with io.BufferedReader(testdata.Stream("random", N, seed=11), buffer_size=10_000) as f:
        assert f.read(7) == ref[:7]
        assert f.peek(1)[:1] == ref[7:8]
        assert f.read(123_456) == ref[7:123_463]
        f.seek(-1000, os.SEEK_END)
        assert f.read() == ref[-1000:]
        f.seek(0)
        assert f.readline(100) == ref[:ref.index(b"\n") + 1][:100]


def test_copyfileobj_and_hashlib(ref):
    out = io.BytesIO()
    with testdata.Stream("random", N, seed=11) as st:
        shutil.copyfileobj(st, out, 65536)
    assert out.getvalue() == ref
    with testdata.Stream("random", N, seed=11) as st:
        if hasattr(hashlib, "file_digest"):
            assert hashlib.file_digest(st, "sha256").hexdigest() == hashlib.sha256(ref).hexdigest()
    with testdata.Stream("random", N, seed=11) as st:
        h = hashlib.sha256()
        for chunk in st:
            h.update(chunk)
        assert h.digest() == hashlib.sha256(ref).digest()


def test_lines():
    with testdata.Stream("random", 100_000, seed=1) as st:
        lines = st.readlines()
    assert b"".join(lines) == testdata.generate("random", 100_000, seed=1)
    assert all(line.endswith(b"\n") for line in lines[:-1]) and len(lines) > 100
    with testdata.Stream("random", 100_000, seed=1) as st:
        assert st.readline() == lines[0]
        assert st.readlines(1) == [lines[1]]


def test_huge_read_is_clamped_or_memory_error():
    with testdata.Stream("zero", 10) as st:
        assert st.read(1 << 60) == bytes(10)
    with testdata.Stream("zero", "inf") as st:
        with pytest.raises(MemoryError):
            st.read(1 << 60)
    with pytest.raises(MemoryError):
        testdata.generate("zero", "1E")


def test_read_wrong_types():
    with testdata.Stream("zero", 10) as st:
        with pytest.raises(TypeError):
            st.read(1.5)
        with pytest.raises(TypeError):
            st.read("1")


def test_unbounded():
    with testdata.Stream("random", "inf", seed=2) as st:
        assert st.size == testdata.UNBOUNDED
        with pytest.raises(TypeError):
            len(st)
        assert st.read(100) == testdata.generate("random", 100, seed=2)
        st.seek(2**63)
        assert st.read(10) == testdata.generate("random", 10, seed=2, offset=2**63)
        with pytest.raises(ValueError):
            st.seek(0, os.SEEK_END)
        with pytest.raises(OverflowError):
            st.read()


def test_empty_stream():
    with testdata.Stream("random", 0) as st:
        assert st.read() == b"" and list(st) == [] and st.readinto(bytearray(4)) == 0


def test_stream_options_and_errors():
    with testdata.Stream("random", 5000, seed=3, algorithm="fast", threads=2) as st:
        assert st.read() == testdata.generate("random", 5000, seed=3, algorithm="fast")
    with pytest.raises(ValueError):
        testdata.Stream("random", 10, algorithm="md5")
    with pytest.raises(ValueError):
        testdata.Stream("random", "10Q")


def test_not_picklable():
    with testdata.Stream("zero", 1) as st:
        with pytest.raises(TypeError):
            pickle.dumps(st)


def test_shared_between_threads():
    size = 8 << 20
    got = []
    with testdata.Stream("random", size, seed=5) as st:
        def worker():
            while True:
                b = bytearray(12345)
                n = st.readinto(b)
                if not n:
                    return
                got.append(n)
        threads = [threading.Thread(target=worker) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert sum(got) == size


def test_gc_frees_stream():
    # Dropping an unclosed stream must free the C stream without a crash.
    for _ in range(100):
        st = testdata.Stream("random", "1M", threads=2)
        st.read(10)
        del st
