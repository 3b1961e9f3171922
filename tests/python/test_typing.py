"""Typing: the stubs and Literal types agree with the library (so a new kind,
option or choice value cannot be forgotten), `mypy --strict` passes on the
package, and mypy flags misuse in user code (a misspelt kind, option or
algorithm; a fixture factory called wrongly).  CTest runs this file as
python.typing, with Debian's mypy."""
import ast
import os
import pathlib
import subprocess
import sys
import typing

import pytest

import testdata
from testdata import _types, capi

PKG = pathlib.Path(testdata.__file__).parent


def literal_values(t):
    assert typing.get_origin(t) is typing.Literal, t
    return list(typing.get_args(t))


def test_kind_literal_is_the_registry():
    assert literal_values(testdata.Kind) == testdata.kinds()


def test_stream_options_are_the_option_table():
    table = {o["key"]: o for o in testdata.options()}
    hints = typing.get_type_hints(_types.StreamOptions)
    assert set(hints) == set(table) - {"seed"}  # seed is a parameter of its own
    assert _types.StreamOptions.__total__ is False
    for key, o in table.items():
        if key == "seed":
            continue
        hint = hints[key]
        if o["type"] == "choice":
            assert literal_values(hint) == o["values"], key
        elif o["type"] == "text":  # profile: a name, a path or a testdata.Profile
            assert str in typing.get_args(hint), (key, hint)
        else:
            want = float if o["type"] == "real" else int
            assert set(typing.get_args(hint)) == {want, str}, (key, hint)


def test_algorithm_literal_is_the_choice():
    [algo] = [o for o in testdata.options() if o["key"] == "algorithm"]
    assert literal_values(testdata.Algorithm) == algo["values"]


def test_analysis_dict_keys_are_the_librarys():
    got = testdata.analyze(b"x" * 10000)
    hints = typing.get_type_hints(testdata.AnalysisDict)
    assert set(hints) == set(got)
    for key, sub in (("ratios", _types._Ratios), ("compressed", _types._Compressed),
                     ("dedup", _types._Dedup)):
        assert set(typing.get_type_hints(sub)) == set(got[key]), key


def stub_names():
    tree = ast.parse((PKG / "capi.pyi").read_text())
    names, classes = set(), {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        if isinstance(node, ast.ClassDef):
            classes[node.name] = {n.target.id for n in node.body if isinstance(n, ast.AnnAssign)}
        if isinstance(node, ast.AnnAssign):
            names.add(node.target.id)
        if isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets}
    return names - {"_Path"}, classes


def test_capi_stub_names_the_module():
    names, classes = stub_names()
    public = {n for n in dir(capi) if n[0] not in "_@" and not n.startswith("SWIG")}
    assert names == public, {"not in the stub": public - names, "not in capi": names - public}
    for cls, attrs in classes.items():
        real = {a for a in dir(getattr(capi, cls)) if not a.startswith("_")}
        assert attrs == real, (cls, attrs ^ real)


def test_capi_stub_constants_have_their_types():
    tree = ast.parse((PKG / "capi.pyi").read_text())
    for node in tree.body:
        if isinstance(node, ast.AnnAssign):
            want = {"int": int, "str": str, "float": float}[node.annotation.id]
            assert isinstance(getattr(capi, node.target.id), want), node.target.id


# --- mypy --------------------------------------------------------------------

def mypy(*args, cwd):
    try:
        import mypy  # noqa: F401
    except ImportError:
        pytest.skip("needs mypy (Debian: python3-mypy)")
    source = pathlib.Path(os.environ.get("TD_SOURCE_DIR", pathlib.Path(__file__).parents[2]))
    cache = os.environ.get("TD_MYPY_CACHE") or str(cwd / ".mypy_cache")
    env = dict(os.environ, MYPYPATH=str(PKG.parent))
    return subprocess.run([sys.executable, "-m", "mypy", "--config-file",
                           str(source / "pyproject.toml"), "--cache-dir", cache,
                           "--no-error-summary", *args],
                          capture_output=True, text=True, cwd=cwd, env=env)


def test_mypy_strict_package(tmp_path):
    r = mypy("-p", "testdata", cwd=PKG.parent)
    assert r.returncode == 0, r.stdout + r.stderr


GOOD = '''
import pathlib
import testdata
from testdata.pytest_plugin import FileFactory, SharedFileFactory, StreamFactory

def test_x(testdata_file: FileFactory, testdata_stream: StreamFactory,
           testdata_shared_file: SharedFileFactory) -> None:
    p: pathlib.Path = testdata_file("random", "1M", algorithm="fast", name="a.bin")
    s: testdata.Stream = testdata_stream("text", 100, seed=3, offset="1K")
    q: pathlib.Path = testdata_shared_file("compressible", "10M", ratio=2.5, dedup=4)
    data: bytes = testdata.generate("random", 10, seed="0x10", threads=2)
    testdata.verify(data, "random", 10, seed=16)
    testdata.verify(p, "random", "1M", algorithm="fast")
    a: testdata.AnalysisDict = testdata.analyze(q)
    ratio: float = a["dedup"]["ratio"]
    kind: testdata.Kind = "zero"
    buf = testdata.fill(bytearray(10), kind)
    buf.append(1)
    n: int = s.readinto(buf)
'''

BAD = '''
import testdata
from testdata.pytest_plugin import FileFactory

def test_y(testdata_file: FileFactory) -> None:
    testdata.generate("randm", 10)                      # line 6
    testdata.generate("random", 10, algorithm="fats")   # line 7
    testdata.generate("random", 10, sed=1)              # line 8
    testdata_file("zer0", 10)                           # line 9
    testdata.Stream("random", 10, ratio=[3])            # line 10
    x: str = testdata.generate("zero", 1)               # line 11
    kind: str = "random"
    testdata.write("f", kind, 10)                       # line 13
'''


def test_mypy_flags_misuse(tmp_path):
    (tmp_path / "good.py").write_text(GOOD)
    (tmp_path / "bad.py").write_text(BAD)
    r = mypy("--strict", "good.py", "bad.py", cwd=tmp_path)
    lines = [ln for ln in r.stdout.splitlines() if ": error:" in ln]
    assert not [ln for ln in lines if ln.startswith("good.py")], r.stdout
    flagged = {int(ln.split(":")[1]) for ln in lines if ln.startswith("bad.py")}
    assert flagged == {6, 7, 8, 9, 10, 11, 13}, r.stdout
    assert "Literal['zero', 'random', 'text', 'compressible', 'like']" in r.stdout
    assert "Literal['chacha20', 'fast']" in r.stdout
    assert 'Unexpected keyword argument "sed"' in r.stdout
