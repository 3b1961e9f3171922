"""testdata.generate / fill / write / verify, sizes, kinds, options and errors."""
import array
import hashlib
import io
import os
import pathlib

import pytest

import testdata
from testdata import MismatchError

GOLDEN_RANDOM_1M = "163f84efa4eb786a4a211ca8fb2db0aa8f29c6f84d1837251692fb2f45a59f73"


def sha(b):
    return hashlib.sha256(b).hexdigest()


def test_golden_vector():
    # Shared with tests/c/test_core.c and tests/cli/test_gen.py.
    assert sha(testdata.generate("random", "1M")) == GOLDEN_RANDOM_1M
    assert sha(testdata.generate("random", 1 << 20, seed=0, algorithm="chacha20")) == GOLDEN_RANDOM_1M


def test_generate_returns_bytes():
    b = testdata.generate("random", 1000, seed=3)
    assert type(b) is bytes and len(b) == 1000
    assert testdata.generate("zero", "4K") == bytes(4096)
    assert testdata.generate("random", 0) == b""


def test_generate_offset_and_prefix():
    whole = testdata.generate("random", 300_000, seed=5)
    assert testdata.generate("random", 1000, seed=5, offset=299_000) == whole[299_000:]
    assert testdata.generate("random", 5000, seed=5) == whole[:5000]
    assert testdata.generate("random", 10, seed=5, offset="1K") == whole[1024:1034]


def test_seed_and_options_change_bytes():
    a = testdata.generate("random", 4096, seed=1)
    assert a != testdata.generate("random", 4096, seed=2)
    assert a != testdata.generate("random", 4096, seed=1, algorithm="fast")
    assert testdata.generate("random", 4096, seed="0x10") == testdata.generate("random", 4096, seed=16)


def test_threads_do_not_change_bytes():
    base = testdata.generate("random", "9M", seed=3)
    for t in (0, 2, "5"):
        assert testdata.generate("random", "9M", seed=3, threads=t) == base


@pytest.mark.parametrize("size,n", [(0, 0), (1, 1), ("1K", 1024), ("1KiB", 1024), ("1KB", 1000),
                                    ("2MB", 2_000_000), ("1M", 1 << 20), ("inf", 2**64 - 1),
                                    (2**64 - 1, 2**64 - 1)])
def test_parse_size(size, n):
    assert testdata.parse_size(size) == n


@pytest.mark.parametrize("size", ["10Q", "-5", "", "1.5K", "18446744073709551616", -1, 2**64])
def test_bad_size_is_value_error(size):
    with pytest.raises(ValueError):
        testdata.parse_size(size)
    with pytest.raises(ValueError):
        testdata.generate("zero", size)


@pytest.mark.parametrize("size", [None, 1.0, True, b"1K", [1]])
def test_size_of_wrong_type_is_type_error(size):
    with pytest.raises(TypeError):
        testdata.generate("zero", size)
    with pytest.raises(TypeError):
        testdata.Stream("zero", size)


def test_kinds():
    assert {"zero", "random"} <= set(testdata.kinds())
    with pytest.raises(ValueError, match="unknown kind 'nosuch'"):
        testdata.generate("nosuch", 1)
    for bad in (None, 1, b"random"):
        with pytest.raises(TypeError):
            testdata.generate(bad, 1)
        with pytest.raises(TypeError):
            testdata.Stream(bad, 1)


@pytest.mark.parametrize("options,exc,needle", [
    ({"algorithm": "md5"}, ValueError, "algorithm"),
    ({"bogus": 1}, ValueError, "bogus"),
    ({"threads": -1}, ValueError, "threads"),
    ({"threads": 2**40}, ValueError, "threads"),
    ({"seed": "x"}, ValueError, "seed"),
    ({"seed": -1}, ValueError, "seed"),
    ({"algorithm": None}, TypeError, "algorithm"),
    ({"threads": True}, TypeError, "threads"),
    ({"threads": [1]}, TypeError, "threads"),
])
def test_bad_options(options, exc, needle):
    with pytest.raises(exc, match=needle):
        testdata.generate("random", 10, **options)
    with pytest.raises(exc, match=needle):
        testdata.Stream("random", 10, **options)


def test_nul_characters_are_rejected():
    for call in (lambda: testdata.generate("random\0x", 1), lambda: testdata.generate("zero", "1\0K"),
                 lambda: testdata.generate("random", 1, algorithm="fast\0"),
                 lambda: testdata.generate("random", 1, **{"algorithm\0x": "fast"})):
        with pytest.raises(ValueError):
            call()


def test_numeric_option_types():
    from fractions import Fraction

    class Index:  # like numpy.uint64
        def __index__(self):
            return 7

    assert testdata.generate("random", 64, seed=Index()) == testdata.generate("random", 64, seed=7)
    with pytest.raises(ValueError):  # ratio does not apply to random; the value still converts
        testdata.generate("random", 1, ratio=Fraction(3, 2))
    with pytest.raises(TypeError):
        testdata.generate("random", 1, seed=b"7")


def test_option_not_for_kind():
    with pytest.raises(ValueError, match=r"option 'algorithm' does not apply to kind zero \(it applies to: random\)"):
        testdata.generate("zero", 10, algorithm="fast")


def test_unbounded_generate_is_value_error():
    with pytest.raises(ValueError):
        testdata.generate("zero", "inf")
    with pytest.raises(ValueError):
        testdata.generate("zero", 10, offset=2**64 - 5)


def test_fill_any_writable_buffer():
    ref = testdata.generate("random", 4096, seed=9)
    ba = bytearray(4096)
    assert testdata.fill(ba, "random", seed=9) is ba and ba == ref
    ba2 = bytearray(100)
    testdata.fill(memoryview(ba2)[10:20], "random", seed=9, offset=10)
    assert ba2[10:20] == ref[10:20] and ba2[:10] == bytes(10)
    arr = array.array("I", bytes(64))
    testdata.fill(arr, "random", seed=9)
    assert arr.tobytes() == ref[:64]
    with pytest.raises(TypeError):
        testdata.fill(b"immutable", "random")
    with pytest.raises(TypeError):
        testdata.fill(memoryview(bytearray(10))[::2], "random")  # not contiguous
    with pytest.raises(TypeError):
        testdata.fill(None, "random")


def test_write(tmp_path):
    p = testdata.write(tmp_path / "f.bin", "random", "3M", seed=9)
    assert isinstance(p, pathlib.Path) and p == tmp_path / "f.bin"
    assert p.read_bytes() == testdata.generate("random", "3M", seed=9)
    q = testdata.write(str(tmp_path / "g.bin"), "zero", 10)
    assert isinstance(q, pathlib.Path) and q.read_bytes() == bytes(10)
    assert testdata.write(tmp_path / "e.bin", "zero", 0).read_bytes() == b""
    b = testdata.write(os.fsencode(tmp_path / "b.bin"), "zero", 3)
    assert b == tmp_path / "b.bin" and b.read_bytes() == bytes(3)


def test_write_errors(tmp_path):
    with pytest.raises(FileNotFoundError) as e:
        testdata.write(tmp_path / "missing" / "f.bin", "zero", 10)
    assert "missing" in str(e.value.filename)
    with pytest.raises(OSError):
        testdata.write(tmp_path, "zero", 10)  # a directory
    with pytest.raises(ValueError):
        testdata.write(tmp_path / "x", "zero", "inf")
    with pytest.raises(TypeError):
        testdata.write(None, "zero", 10)
    assert list(tmp_path.iterdir()) == []  # nothing half-written left behind


def test_verify_path_and_fileobj(tmp_path):
    p = testdata.write(tmp_path / "f.bin", "random", "2500K", seed=4)
    assert testdata.verify(p, "random", "2500K", seed=4) is None
    assert testdata.verify(str(p), "random", "2500K", seed=4) is None
    with open(p, "rb") as f:
        assert testdata.verify(f, "random", "2500K", seed=4) is None
    data = p.read_bytes()
    assert testdata.verify(io.BytesIO(data), "random", len(data), seed=4) is None
    with testdata.Stream("random", 5000, seed=4) as s:
        assert testdata.verify(s, "random", 5000, seed=4) is None
    tail = data[-1000:]
    assert testdata.verify(io.BytesIO(tail), "random", 1000, seed=4, offset=len(data) - 1000) is None


def test_verify_mismatch_offset():
    data = bytearray(testdata.generate("random", 3_000_000, seed=4))
    data[2_345_678] ^= 1
    data[2_900_000] ^= 1
    with pytest.raises(MismatchError) as e:
        testdata.verify(io.BytesIO(data), "random", len(data), seed=4)
    assert e.value.offset == 2_345_678 and e.value.reason == "differs"
    with pytest.raises(MismatchError) as e:
        testdata.verify(io.BytesIO(data[2_000_000:]), "random", 1_000_000, seed=4, offset=2_000_000)
    assert e.value.offset == 2_345_678
    with pytest.raises(MismatchError):
        testdata.verify(io.BytesIO(bytes(10)), "random", 10, seed=4)
    # Wrong seed: mismatch at 0 (almost surely).
    with pytest.raises(MismatchError) as e:
        testdata.verify(io.BytesIO(bytes(data[:100])), "random", 100, seed=5)
    assert e.value.offset == 0


def test_verify_short_and_long():
    data = testdata.generate("zero", 5000)
    with pytest.raises(MismatchError) as e:
        testdata.verify(io.BytesIO(data[:4000]), "zero", 5000)
    assert (e.value.offset, e.value.reason) == (4000, "short")
    with pytest.raises(MismatchError) as e:
        testdata.verify(io.BytesIO(data + b"\0"), "zero", 5000)
    assert (e.value.offset, e.value.reason) == (5000, "long")
    with pytest.raises(MismatchError) as e:
        testdata.verify(io.BytesIO(b""), "zero", 1, offset=7)
    assert e.value.offset == 7


def test_verify_file_object_without_readinto():
    class Reader:
        def __init__(self, data):
            self.f = io.BytesIO(data)

        def read(self, n=-1):
            return self.f.read(min(n, 777) if n > 0 else n)

    data = testdata.generate("random", 100_000, seed=1)
    assert testdata.verify(Reader(data), "random", 100_000, seed=1) is None
    with pytest.raises(MismatchError):
        testdata.verify(Reader(data[:-1] + b"x"), "random", 100_000, seed=1)


def test_verify_errors(tmp_path):
    with pytest.raises(FileNotFoundError):
        testdata.verify(tmp_path / "nope", "zero", 1)
    with pytest.raises(TypeError):
        testdata.verify(None, "zero", 1)
    with pytest.raises(TypeError):
        testdata.verify(42, "zero", 1)
    with pytest.raises(ValueError):
        testdata.verify(io.BytesIO(b""), "nosuch", 1)


def test_mismatch_error_is_assertion_error():
    assert issubclass(MismatchError, AssertionError)
    assert testdata.MismatchError("m", 3).offset == 3


def test_version():
    assert testdata.__version__.count(".") == 2
    assert testdata.FORMAT_VERSION >= 1
    assert testdata.UNBOUNDED == 2**64 - 1
    assert os.path.basename(testdata.__file__) == "__init__.py"


def test_bad_size_message_lists_the_valid_forms():
    with pytest.raises(ValueError, match=r"bad size '1\.5G': not a size: a whole number of bytes.*KiB"):
        testdata.generate("zero", "1.5G")
    with pytest.raises(ValueError, match=r"bad size '18446744073709551616': out of range: "
                                         r"more than 2\^64-1 bytes"):
        testdata.parse_size("18446744073709551616")
    # a size option: the same forms, then its range, not cut at 256 bytes
    with pytest.raises(ValueError, match=r"bad value 'x' for option 'compress_block': not a size: "
                                         r"a whole number of bytes.*KiB.*or inf \(valid: a power "
                                         r"of two from 512 to 1M, or 0 \(not set: tuned for whole "
                                         r"streams\)\)$"):
        testdata.generate("compressible", 4096, compress_block="x")
