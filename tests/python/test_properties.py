"""Property tests (Hypothesis): bytes never depend on chunking, seeking or the read API."""
import io
import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import testdata

SIZE = 300_000
settings.register_profile("testdata", deadline=None, max_examples=60,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("testdata")

# Every kind the library knows with its defaults (kinds added later are
# covered without changes here), plus some options.
kinds_opts = st.sampled_from([(k, {}) for k in testdata.kinds()] +
                             [("random", {"algorithm": "fast"}), ("random", {"threads": 2})])
seeds = st.integers(0, 2**64 - 1)
_cache = {}


def ref(kind, seed, opts):
    key = (kind, seed, tuple(sorted(opts.items())))
    if key not in _cache:
        if len(_cache) > 32:
            _cache.clear()
        _cache[key] = testdata.generate(kind, SIZE, seed=seed, **opts)
    return _cache[key]


@given(kinds_opts, seeds, st.lists(st.integers(0, 70_000), max_size=30))
def test_readinto_chunking_invariance(ko, seed, chunks):
    kind, opts = ko
    want = ref(kind, seed, opts)
    out = bytearray()
    with testdata.Stream(kind, SIZE, seed=seed, **opts) as s:
        for n in chunks:
            buf = bytearray(n)
            got = s.readinto(buf)
            assert got == min(n, SIZE - len(out))
            out += buf[:got]
        out += s.read()
    assert out == want


@given(kinds_opts, seeds, st.lists(st.one_of(st.none(), st.integers(0, 100_000)), max_size=20))
def test_read_mixed_with_iteration(ko, seed, steps):
    kind, opts = ko
    want = ref(kind, seed, opts)
    out = bytearray()
    with testdata.Stream(kind, SIZE, seed=seed, **opts) as s:
        for n in steps:
            if n is None:
                out += next(s, b"")
            else:
                out += s.read(n)
        for chunk in s:
            out += chunk
    assert out == want


@given(kinds_opts, seeds,
       st.lists(st.tuples(st.integers(-SIZE, SIZE + 10), st.sampled_from([0, 1, 2]),
                          st.integers(0, 50_000)), min_size=1, max_size=20))
def test_seek_read_invariance(ko, seed, ops):
    kind, opts = ko
    want = ref(kind, seed, opts)
    with testdata.Stream(kind, SIZE, seed=seed, **opts) as s:
        pos = 0
        for off, whence, n in ops:
            target = {0: off, 1: pos + off, 2: SIZE + off}[whence]
            if 0 <= target <= SIZE:
                assert s.seek(off, whence) == target
                pos = target
            else:
                try:
                    s.seek(off, whence)
                except ValueError:
                    pass
                else:
                    raise AssertionError("seek out of range accepted")
                assert s.tell() == pos
            data = s.read(n)
            assert data == want[pos:pos + n]
            pos += len(data)
            assert s.tell() == pos


@given(kinds_opts, seeds, st.integers(0, SIZE), st.integers(0, SIZE))
def test_generate_offset_equals_slice(ko, seed, a, b):
    kind, opts = ko
    lo, hi = min(a, b), max(a, b)
    assert testdata.generate(kind, hi - lo, seed=seed, offset=lo, **opts) == ref(kind, seed, opts)[lo:hi]
    buf = bytearray(hi - lo)
    testdata.fill(buf, kind, seed=seed, offset=lo, **opts)
    assert buf == ref(kind, seed, opts)[lo:hi]


@given(kinds_opts, seeds, st.integers(1, 100_000), st.lists(st.integers(0, 40_000), max_size=10))
def test_buffered_reader_invariance(ko, seed, bufsize, reads):
    kind, opts = ko
    want = ref(kind, seed, opts)
    out = bytearray()
    with io.BufferedReader(testdata.Stream(kind, SIZE, seed=seed, **opts), buffer_size=bufsize) as f:
        for n in reads:
            out += f.read(n)
        out += f.read()
    assert out == want


@given(seeds, st.integers(0, SIZE - 1), st.integers(0, 7))
def test_verify_finds_flipped_bit(seed, at, bit):
    data = bytearray(ref("random", seed, {}))
    data[at] ^= 1 << bit
    try:
        testdata.verify(io.BytesIO(data), "random", SIZE, seed=seed)
    except testdata.MismatchError as e:
        assert e.offset == at
    else:
        raise AssertionError("mismatch not found")
    assert testdata.verify(io.BytesIO(bytes(want := ref("random", seed, {}))), "random",
                           len(want), seed=seed) is None
