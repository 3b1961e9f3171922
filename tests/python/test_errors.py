"""Every public function, given wrong types or values, raises TypeError,
ValueError or OSError with a message that names the argument in Python's
terms (or is the library's own message, with its "did you mean"), and never
shows SWIG internals ("in method 'td_fill', argument 4", C type names)."""
import io
import os
import re

import pytest

import testdata
from testdata.pytest_plugin import derive_seed

SWIG_SMELL = re.compile(r"in method|argument \d|\bSWIG|Swig|\btd_[a-z]|\bcapi\b|size_t|uint64_t|"
                        r"uint32_t|\bint \*|const char|td_options|td_stream|PyObject")


def stream():
    return testdata.Stream("random", 100)


def closed():
    s = stream()
    s.close()
    return s


NONCONTIG = memoryview(bytearray(10))[::2]

CALLS = {
    # sizes, kinds, options
    "parse_size(None)": lambda: testdata.parse_size(None),
    "parse_size(1.5)": lambda: testdata.parse_size(1.5),
    "parse_size(b'1K')": lambda: testdata.parse_size(b"1K"),
    "parse_size(-1)": lambda: testdata.parse_size(-1),
    "parse_size(2**64)": lambda: testdata.parse_size(2**64),
    "parse_size('1\\0')": lambda: testdata.parse_size("1\0"),
    "parse_size('10Q')": lambda: testdata.parse_size("10Q"),
    "generate(None, 1)": lambda: testdata.generate(None, 1),
    "generate(1, 1)": lambda: testdata.generate(1, 1),
    "generate(b'random', 1)": lambda: testdata.generate(b"random", 1),
    "generate('randm', 1)": lambda: testdata.generate("randm", 1),
    "generate('random', None)": lambda: testdata.generate("random", None),
    "generate('random', [])": lambda: testdata.generate("random", []),
    "generate('random', 'inf')": lambda: testdata.generate("random", "inf"),
    "generate(seed=None)": lambda: testdata.generate("random", 1, seed=None),
    "generate(seed=[])": lambda: testdata.generate("random", 1, seed=[]),
    "generate(seed=-1)": lambda: testdata.generate("random", 1, seed=-1),
    "generate(seed=2**64)": lambda: testdata.generate("random", 1, seed=2**64),
    "generate(seed=1.5)": lambda: testdata.generate("random", 1, seed=1.5),
    "generate(offset=None)": lambda: testdata.generate("random", 1, offset=None),
    "generate(offset=1.5)": lambda: testdata.generate("random", 1, offset=1.5),
    "generate(offset=-1)": lambda: testdata.generate("random", 1, offset=-1),
    "generate(offset=2**64-1)": lambda: testdata.generate("random", 2, offset=2**64 - 1),
    "generate(threads=None)": lambda: testdata.generate("random", 1, threads=None),
    "generate(threads=-1)": lambda: testdata.generate("random", 1, threads=-1),
    "generate(threads=2**40)": lambda: testdata.generate("random", 1, threads=2**40),
    "generate(algorithm=1)": lambda: testdata.generate("random", 1, algorithm=1),
    "generate(algorithm='fats')": lambda: testdata.generate("random", 1, algorithm="fats"),
    "generate(algorithm=b'fast')": lambda: testdata.generate("random", 1, algorithm=b"fast"),
    "generate(sed=1)": lambda: testdata.generate("random", 1, sed=1),
    "generate(ratio='x')": lambda: testdata.generate("compressible", 1, ratio="x"),
    "generate(ratio=2 on zero)": lambda: testdata.generate("zero", 1, ratio=2),
    "generate(dedup_block=3.5)": lambda: testdata.generate("random", 1, dedup_block=3.5),
    "generate(dedup_block=1000)": lambda: testdata.generate("random", 1, dedup_block=1000),
    # fill
    "fill(None)": lambda: testdata.fill(None, "random"),
    "fill(bytes)": lambda: testdata.fill(b"abc", "random"),
    "fill(str)": lambda: testdata.fill("abc", "random"),
    "fill(5)": lambda: testdata.fill(5, "random"),
    "fill(non-contiguous)": lambda: testdata.fill(NONCONTIG, "random"),
    "fill(kind=None)": lambda: testdata.fill(bytearray(1), None),
    "fill(offset='x')": lambda: testdata.fill(bytearray(1), "random", offset="x"),
    # write
    "write(None)": lambda: testdata.write(None, "random", 1),
    "write(5)": lambda: testdata.write(5, "random", 1),
    "write([])": lambda: testdata.write([], "random", 1),
    "write('a\\0b')": lambda: testdata.write("a\0b", "random", 1),
    "write(b'a\\0b')": lambda: testdata.write(b"a\0b", "random", 1),
    "write(dir)": lambda: testdata.write("/", "random", 1),
    "write(inf)": lambda: testdata.write(os.devnull + "-no/such/dir/x", "random", "inf"),
    "write(size=1.5)": lambda: testdata.write("x", "random", 1.5),
    # verify
    "verify(None)": lambda: testdata.verify(None, "random", 1),
    "verify(5)": lambda: testdata.verify(5, "random", 1),
    "verify(object())": lambda: testdata.verify(object(), "random", 1),
    "verify(StringIO)": lambda: testdata.verify(io.StringIO("abc"), "random", 3),
    "verify(missing file)": lambda: testdata.verify("/nonexistent/x", "random", 1),
    "verify(kind=5)": lambda: testdata.verify(b"", 5, 0),
    "verify(size=None)": lambda: testdata.verify(b"", "random", None),
    # analyze
    "analyze(None)": lambda: testdata.analyze(None),
    "analyze(5)": lambda: testdata.analyze(5),
    "analyze(missing file)": lambda: testdata.analyze("/nonexistent/x"),
    "analyze(dir)": lambda: testdata.analyze("/"),
    "analyze(sample=None)": lambda: testdata.analyze(b"x", sample=None),
    "analyze(sample=0)": lambda: testdata.analyze(b"x", sample=0),
    "analyze(sample=1.5)": lambda: testdata.analyze(b"x", sample=1.5),
    "analyze(threads=-1)": lambda: testdata.analyze(b"x", threads=-1),
    "analyze(threads=None)": lambda: testdata.analyze(b"x", threads=None),
    "analyze(threads=2**40)": lambda: testdata.analyze(b"x", threads=2**40),
    # split_range, shard_name
    "split_range(None, 1, 0)": lambda: testdata.split_range(None, 1, 0),
    "split_range(10, 1.5, 0)": lambda: testdata.split_range(10, 1.5, 0),
    "split_range(10, '2', 0)": lambda: testdata.split_range(10, "2", 0),
    "split_range(10, True, 0)": lambda: testdata.split_range(10, True, 0),
    "split_range(10, 2, None)": lambda: testdata.split_range(10, 2, None),
    "split_range(10, 2, 5)": lambda: testdata.split_range(10, 2, 5),
    "split_range(10, 2**64, 0)": lambda: testdata.split_range(10, 2**64, 0),
    "split_range(align=None)": lambda: testdata.split_range(10, 2, 0, align=None),
    "split_range(align=1.5)": lambda: testdata.split_range(10, 2, 0, align=1.5),
    "split_range(align=-1)": lambda: testdata.split_range(10, 2, 0, align=-1),
    "split_range('inf', 2, 0)": lambda: testdata.split_range("inf", 2, 0),
    "shard_name(None)": lambda: testdata.shard_name(None),
    "shard_name(1.5)": lambda: testdata.shard_name(1.5),
    "shard_name('1')": lambda: testdata.shard_name("1"),
    "shard_name(-1)": lambda: testdata.shard_name(-1),
    "shard_name(2**64)": lambda: testdata.shard_name(2**64),
    # Stream and its methods
    "Stream(None, 1)": lambda: testdata.Stream(None, 1),
    "Stream('random', None)": lambda: testdata.Stream("random", None),
    "Stream(offset=None)": lambda: testdata.Stream("random", 1, offset=None),
    "Stream(offset=2**64-1)": lambda: testdata.Stream("random", 2, offset=2**64 - 1),
    "Stream(seed=b'1')": lambda: testdata.Stream("random", 1, seed=b"1"),
    "Stream(bogus=1)": lambda: testdata.Stream("random", 1, bogus=1),
    "read('x')": lambda: stream().read("x"),
    "read(1.5)": lambda: stream().read(1.5),
    "readinto(None)": lambda: stream().readinto(None),
    "readinto(bytes)": lambda: stream().readinto(b"abc"),
    "readinto(5)": lambda: stream().readinto(5),
    "readinto(non-contiguous)": lambda: stream().readinto(NONCONTIG),
    "seek('x')": lambda: stream().seek("x"),
    "seek(1.5)": lambda: stream().seek(1.5),
    "seek(None)": lambda: stream().seek(None),
    "seek(0, 'x')": lambda: stream().seek(0, "x"),
    "seek(0, 7)": lambda: stream().seek(0, 7),
    "seek(2**70)": lambda: stream().seek(2**70),
    "seek(-1)": lambda: stream().seek(-1),
    "readline('x')": lambda: stream().readline("x"),
    "readlines('x')": lambda: stream().readlines("x"),
    "read() closed": lambda: closed().read(1),
    "readinto() closed": lambda: closed().readinto(bytearray(1)),
    "seek() closed": lambda: closed().seek(0),
    "tell() closed": lambda: closed().tell(),
    "next() closed": lambda: next(closed()),
    "write() on Stream": lambda: stream().write(b"x"),
    "fileno() on Stream": lambda: stream().fileno(),
    "len(unbounded)": lambda: len(testdata.Stream("random", "inf")),
    "readall(unbounded)": lambda: testdata.Stream("random", "inf").read(),
    # Tree.write and Tree.verify: SWIG's "argument 4 of type 'uint32_t'" before
    "Tree.write(threads=-1)": lambda: testdata.Tree(files=1).write(os.devnull, threads=-1),
    "Tree.write(threads=2**40)": lambda: testdata.Tree(files=1).write(os.devnull, threads=2**40),
    "Tree.write(first=2**70)": lambda: testdata.Tree(files=1).write(os.devnull, first=2**70),
    "Tree.verify(count=2**70)": lambda: testdata.Tree(files=1).verify(os.devnull, count=2**70),
    "Tree.verify(threads='2')": lambda: testdata.Tree(files=1).verify(os.devnull, threads="2"),
    # plugin helpers
    "derive_seed(None, 'x')": lambda: derive_seed(None, "x"),
    "derive_seed(-1, 'x')": lambda: derive_seed(-1, "x"),
    "derive_seed(1, 5)": lambda: derive_seed(1, 5),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_no_swig_internals(name):
    with pytest.raises((TypeError, ValueError, OSError, OverflowError)) as e:
        CALLS[name]()
    msg = str(e.value)
    assert msg, name
    assert not SWIG_SMELL.search(msg), f"{name}: {type(e.value).__name__}: {msg}"


def test_messages_name_the_argument_and_the_fix():
    cases = [
        (lambda: testdata.generate("randm", 1),
         ValueError, "unknown kind 'randm'; did you mean 'random'? (kinds: zero, random, text"),
        (lambda: testdata.generate("random", 1, sed=1),
         ValueError, "unknown option 'sed'; did you mean 'seed'?"),
        (lambda: testdata.generate("random", 1, dedup_blok="4K"),
         ValueError, "unknown option 'dedup_blok'; did you mean 'dedup_block'?"),
        (lambda: testdata.generate("random", 1, algorithm="fats"),
         ValueError, "bad value 'fats' for option 'algorithm': one of chacha20, fast; "
                     "did you mean 'fast'?"),
        (lambda: testdata.generate("zero", 1, algorithm="fast"),
         ValueError, "option 'algorithm' does not apply to kind zero (it applies to: random)"),
        (lambda: testdata.fill(b"abc", "random"), TypeError, "buf must be writable"),
        (lambda: testdata.fill(5, "random"), TypeError, "buf must be a writable bytes-like object"),
        (lambda: stream().readinto(b"x"), TypeError, "the buffer must be writable"),
        (lambda: stream().read(1.5), TypeError, "size must be an int, not float"),
        (lambda: testdata.generate("random", 1, offset=-1), ValueError, "offset -1 is out of range"),
        (lambda: testdata.write(5, "random", 1), TypeError, "path must be a str, bytes or os.PathLike"),
        (lambda: testdata.verify(io.StringIO("x"), "random", 1), TypeError, "binary mode"),
        (lambda: testdata.analyze(5), TypeError, "source must be a path or a bytes-like object"),
        (lambda: testdata.shard_name(1.5), TypeError, "index must be an int, not float"),
        (lambda: testdata.Tree(files=1).write(os.devnull, threads=-1), ValueError,
         "threads -1 is out of range (0 .. 2**32-1)"),
        (lambda: testdata.Tree(files=1).verify(os.devnull, first=2**64), ValueError,
         "first 18446744073709551616 is out of range (0 .. 2**64-1)"),
        # these said only "value out of range", or called the size bad
        (lambda: testdata.fill(bytearray(10), "zero", offset=2**64 - 5), ValueError,
         "offset 18446744073709551611 + size 10 is past the end of the stream (2**64-1 bytes)"),
        (lambda: testdata.verify(bytes(10), "zero", 10, offset=2**64 - 5), ValueError,
         "offset 18446744073709551611 + size 10 is past the end of the stream"),
        (lambda: testdata.write(os.devnull + "-no/such/dir/x", "zero", 10, offset=2**64 - 5),
         ValueError, "offset 18446744073709551611 + size 10 is past the end of the stream"),
    ]
    for call, exc, text in cases:
        with pytest.raises(exc) as e:
            call()
        assert text in str(e.value), (text, str(e.value))
    with pytest.raises(OSError) as e:
        testdata.analyze("/nonexistent/x")
    assert e.value.errno == 2 and e.value.filename == "/nonexistent/x"


def test_empty_paths_are_refused(tmp_path, monkeypatch):
    """"" names no file: ValueError naming the argument, and nothing written.
    pathlib reads "" as ".", so testdata.tree("") used to write the tree into
    the current directory (`testdata tree gen ''` refuses it), and write("")
    said only "invalid argument"."""
    monkeypatch.chdir(tmp_path)
    calls = {
        "tree": lambda p: testdata.tree(p, files=3),
        "Tree.write": lambda p: testdata.Tree(files=3).write(p),
        "verify_tree": lambda p: testdata.verify_tree(p, files=3),
        "Tree.verify": lambda p: testdata.Tree(files=3).verify(p),
        "tree_profile": lambda p: testdata.tree_profile(p),
        "write": lambda p: testdata.write(p, "zero", 1),
        "verify": lambda p: testdata.verify(p, "zero", 0),
        "analyze": lambda p: testdata.analyze(p),
        "Profile.load": lambda p: testdata.Profile.load(p),
        "Profile.save": lambda p: testdata.Profile.builtin("html").save(p),
    }
    try:
        import testdata.dask as tdd
        calls["dask.write_tree"] = lambda p: tdd.write_tree(p, files=3)
        calls["dask.write_shards"] = lambda p: tdd.write_shards(p, "zero", 10, 5)
    except ImportError:
        pass
    for name, call in calls.items():
        # verify and analyze take bytes as data in memory
        for empty in ("",) if name in ("verify", "analyze") else ("", b""):
            with pytest.raises(ValueError, match="is empty") as e:
                call(empty)
            assert not SWIG_SMELL.search(str(e.value)), (name, str(e.value))
            assert os.listdir(tmp_path) == [], (name, os.listdir(tmp_path))


def test_endless_write_says_why(tmp_path):
    """As the CLI says it; it was "bad size 'inf' at offset 0: value out of range"."""
    with pytest.raises(ValueError, match=r"an endless stream \(size 'inf'\) can never replace "
                                         r"'.*/x' \(it is never complete\): give a bounded size"):
        testdata.write(tmp_path / "x", "zero", "inf")
    assert os.listdir(tmp_path) == []
