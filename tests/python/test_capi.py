"""The SWIG module testdata.capi: typemaps, None handling, errors, the GIL."""
import threading
import time

import pytest

from testdata import capi


def opts(**kw):
    o = capi.td_options()
    for k, v in kw.items():
        capi.td_options_set(o, capi.TD_RANDOM, k, str(v))
    return o


def test_options_struct_defaults():
    o = capi.td_options()
    assert (o.seed, o.threads, o.algorithm, o.dedup_block) == (0, 1, capi.TD_ALG_CHACHA20, 4096)
    assert capi.td_options_check(capi.TD_RANDOM, o) == capi.TD_OK


def test_outputs_follow_status():
    assert capi.td_parse_size("1K") == [capi.TD_OK, 1024]
    assert capi.td_kind_from_name("random") == [capi.TD_OK, capi.TD_RANDOM]
    assert capi.td_kind_name(capi.TD_ZERO) == "zero"
    assert capi.td_kind_name(99) is None
    assert capi.td_strerror(capi.TD_EKIND) == "unknown kind"


@pytest.mark.parametrize("call", [
    lambda: capi.td_kind_from_name(None),
    lambda: capi.td_parse_size(None),
    lambda: capi.td_options_set(None, 1, "seed", "1"),
    lambda: capi.td_options_set(capi.td_options(), 1, None, "1"),
    lambda: capi.td_options_set(capi.td_options(), 1, "seed", None),
    lambda: capi.td_options_check(1, None) if False else capi.td_options_init(None),
    lambda: capi.td_stream_read(None, bytearray(1)),
    lambda: capi.td_stream_read_bytes(None, 1),
    lambda: capi.td_stream_next(None),
    lambda: capi.td_stream_seek(None, 0),
    lambda: capi.td_stream_tell(None),
    lambda: capi.td_stream_size(None),
    lambda: capi.td_write_file(None, 0, 1, None),
    lambda: capi.td_fill(1, None, 0, None),
    lambda: capi.td_verify(1, None, 0, None),
    lambda: capi.td_fill_bytes(1, None, 0, None),
    # wrong types
    lambda: capi.td_stream_read(capi.td_options(), bytearray(1)),
    lambda: capi.td_stream_tell(42),
    lambda: capi.td_fill("random", None, 0, bytearray(1)),
    lambda: capi.td_fill(1, "opts", 0, bytearray(1)),
    lambda: capi.td_fill(1, None, 0, b"readonly"),
    lambda: capi.td_kind_from_name(b"random"),
])
def test_none_and_wrong_types_raise_type_error(call):
    with pytest.raises(TypeError):
        call()


def test_none_options_mean_defaults():
    b = bytearray(64)
    capi.td_fill(capi.TD_RANDOM, None, 0, b)
    assert capi.td_fill_bytes(capi.TD_RANDOM, opts(), 0, 64)[1] == bytes(b)
    assert capi.td_verify(capi.TD_RANDOM, None, 0, bytes(b)) == [capi.TD_OK, 0]


def test_status_exceptions():
    with pytest.raises(ValueError) as e:
        capi.td_parse_size("1Q")
    assert e.value.td_status == capi.TD_ESYNTAX
    with pytest.raises(ValueError) as e:
        capi.td_fill(77, None, 0, bytearray(1))
    assert e.value.td_status == capi.TD_EKIND
    with pytest.raises(ValueError) as e:
        capi.td_options_set(capi.td_options(), capi.TD_ZERO, "algorithm", "fast")
    assert e.value.td_status == capi.TD_EOPTION
    with pytest.raises(ValueError) as e:
        capi.td_fill(1, None, 2**64 - 1, bytearray(2))
    assert e.value.td_status == capi.TD_ERANGE
    with pytest.raises(OverflowError):
        capi.td_fill(1, None, -1, bytearray(2))
    with pytest.raises(OverflowError):
        capi.td_fill(1, None, 2**64, bytearray(2))


def test_verify_returns_mismatch():
    good = capi.td_fill_bytes(1, None, 100, 1000)[1]
    rc, first = capi.td_verify(1, None, 100, good)
    assert rc == capi.TD_OK
    bad = bytearray(good)
    bad[500] ^= 0xFF
    rc, first = capi.td_verify(1, None, 100, bad)
    assert (rc, first) == (capi.TD_EMISMATCH, 600)
    bad[900] ^= 1
    assert capi.td_verify_count(1, None, 100, bad) == [capi.TD_EMISMATCH, 600, 2]


def test_stream_lifecycle():
    rc, s = capi.td_stream_open(capi.TD_RANDOM, 1000, opts(seed=3))
    assert rc == capi.TD_OK and capi.td_stream_size(s) == 1000
    b = bytearray(600)
    assert capi.td_stream_read(s, b) == [capi.TD_OK, 600]
    assert capi.td_stream_read_bytes(s, 600) == [capi.TD_OK, capi.td_fill_bytes(1, opts(seed=3), 600, 400)[1]]
    assert capi.td_stream_read_bytes(s, 10) == [capi.TD_DONE, b""]
    assert capi.td_stream_next(s) == [capi.TD_DONE, b""]
    assert capi.td_stream_read(s, b) == [capi.TD_DONE, 0]
    capi.td_stream_seek(s, 990)
    assert capi.td_stream_next(s)[1] == capi.td_fill_bytes(1, opts(seed=3), 990, 10)[1]
    with pytest.raises(ValueError):
        capi.td_stream_seek(s, 1001)
    assert not hasattr(capi, "td_stream_free")  # only the owning object frees
    del s


def test_stream_open_errors():
    with pytest.raises(ValueError):
        capi.td_stream_open(99, 10, None)
    bad = capi.td_options()
    bad.dedup_block = 3
    with pytest.raises(ValueError):
        capi.td_stream_open(capi.TD_RANDOM, 10, bad)


def test_buffer_released_after_call():
    ba = bytearray(100)
    capi.td_fill(1, None, 0, ba)
    ba.extend(b"x")  # would raise BufferError if still exported
    with pytest.raises(ValueError):
        capi.td_fill(99, None, 0, ba)
    ba.extend(b"x")  # released on the error path too
    ro = bytes(10)
    capi.td_verify(0, None, 0, ro)
    mv = memoryview(bytearray(10))
    capi.td_fill(1, None, 0, mv)
    mv.release()


def _run_while(fn, probe):
    """Run fn() in a thread; call probe() in this one until it finishes. Return probe count."""
    done = threading.Event()
    err = []

    def target():
        try:
            fn()
        except BaseException as e:  # pragma: no cover
            err.append(e)
        finally:
            done.set()

    t = threading.Thread(target=target)
    t.start()
    n = 0
    while not done.is_set():
        probe()
        n += 1
    t.join()
    assert not err
    return n


def test_gil_released_while_generating():
    # The generating thread holds no GIL, so this thread keeps running.  (With
    # the GIL held for the whole call the probe would run about once.)  A few
    # attempts, since a loaded machine may not schedule this thread at all.
    buf = bytearray(512 << 20)
    counts = []
    for _ in range(5):
        counts.append(_run_while(lambda: capi.td_fill(1, None, 0, buf), lambda: time.sleep(0)))
        if counts[-1] > 20:
            break
    assert max(counts) > 20, counts


def test_buffer_held_during_call():
    # While the C call runs without the GIL, the buffer stays exported: a
    # resize from another thread must fail instead of freeing it under the call.
    buf = bytearray(512 << 20)
    refused = []

    def probe():
        try:
            buf.append(0)
            buf.pop()
        except BufferError:
            refused.append(1)

    for _ in range(5):
        _run_while(lambda: capi.td_fill(1, None, 0, buf), probe)
        if refused:
            break
    assert refused
    assert len(buf) == 512 << 20


def test_no_stream_constructor():
    with pytest.raises((TypeError, AttributeError)):  # SWIG: "No constructor defined"
        capi.td_stream()


def test_error_objects_do_not_leak():
    import gc
    import sys
    gc.collect()
    before = sys.gettotalrefcount() if hasattr(sys, "gettotalrefcount") else None
    for _ in range(10_000):
        try:
            capi.td_parse_size("x")
        except ValueError:
            pass
    if before is not None:  # debug builds of Python only
        assert sys.gettotalrefcount() - before < 1000


def test_close_while_other_thread_reads():
    import testdata
    outcomes = []

    def reader(st):
        try:
            for _ in range(8):
                st.readinto(bytearray(1 << 20))
            outcomes.append("read")
        except ValueError:
            outcomes.append("closed")

    for _ in range(20):
        st = testdata.Stream("random", "64M", threads=2)
        t = threading.Thread(target=reader, args=(st,))
        t.start()
        st.close()
        t.join()
    assert len(outcomes) == 20
