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
        elif o["type"] == "text" and key == "profile":  # a name, a path or a testdata.Profile
            assert str in typing.get_args(hint), (key, hint)
        elif o["type"] == "text":  # a file name
            assert set(typing.get_args(hint)) == {str, os.PathLike[str]}, (key, hint)
        else:
            want = float if o["type"] == "real" else int
            assert set(typing.get_args(hint)) == {want, str}, (key, hint)


def tree_option_table():
    rows = (capi.td_tree_option_get(i) for i in range(capi.td_tree_option_count()))
    return {o.key: o for o in rows}


def test_tree_options_are_the_tree_option_table():
    """TreeOptions: every row of td_tree_option_get, typed by its kind of
    value, and the stream options (the files' bytes) exactly as StreamOptions."""
    table = tree_option_table()
    assert {"files", "total", "sizes", "depth", "fanout", "kind", "like"} <= set(table)
    hints = typing.get_type_hints(_types.TreeOptions)
    stream = typing.get_type_hints(_types.StreamOptions)
    assert _types.TreeOptions.__total__ is False
    assert not set(table) & set(stream)
    assert set(hints) == set(table) | set(stream)
    for key, hint in stream.items():
        assert hints[key] == hint, key
    for key, o in table.items():
        hint = hints[key]
        if o.type in (capi.TD_OPTION_UINT, capi.TD_OPTION_SIZE):
            assert set(typing.get_args(hint)) == {int, str}, (key, hint)
        elif o.type == capi.TD_OPTION_TEXT and o.value_name == "KIND":
            assert literal_values(hint) == testdata.kinds(), key
        elif o.type == capi.TD_OPTION_TEXT:
            assert hint is str or str in typing.get_args(hint), (key, hint)
        else:
            pytest.fail(f"tree option {key}: no check for its type {o.type} yet")


def test_tree_profile_keys_are_the_librarys(tmp_path):
    d = testdata.tree(tmp_path / "t", files=20, depth=1, fanout=2, seed=1)
    got = testdata.tree_profile(d)
    assert set(typing.get_type_hints(testdata.TreeProfile)) == set(got)
    assert got["files"] == 20 and all(len(b) == 3 for b in got["sizes"])


def test_tree_file_kind_is_a_kind():
    t = testdata.Tree(files=2, kind="text")
    assert t.kind == t[1].kind == "text" and t[1].kind in literal_values(testdata.Kind)


def test_algorithm_literal_is_the_choice():
    [algo] = [o for o in testdata.options() if o["key"] == "algorithm"]
    assert literal_values(testdata.Algorithm) == algo["values"]


def test_analysis_dict_keys_are_the_librarys():
    got = testdata.analyze(b"x" * 10000)
    hints = typing.get_type_hints(testdata.AnalysisDict)
    assert set(hints) == set(got)
    for key, sub in (("ratios", _types._Ratios), ("compressed", _types._Compressed),
                     ("dedup", _types._Dedup), ("mb_per_s", _types._Ratios)):
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
from typing import List, Optional
import testdata
import testdata.dask
from testdata.pytest_plugin import (FileFactory, SharedFileFactory, SharedTreeFactory,
                                    StreamFactory, TreeFactory)

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


def test_t(tmp_path: pathlib.Path, testdata_tree: TreeFactory,
           testdata_shared_tree: SharedTreeFactory) -> None:
    d: pathlib.Path = testdata.tree(tmp_path / "t", files=10, total="1M", sizes="fixed:1K",
                                    seed=3, kind="compressible", ratio=2, resume=True)
    testdata.verify_tree(d, files=10, total="1M", sizes="fixed:1K", seed="3",
                         kind="compressible", ratio=2.0)
    t = testdata.Tree(files="3", depth=1, fanout=2, like=tmp_path / "p.json", threads=2)
    f: testdata.TreeFile = t[0]
    k: testdata.Kind = f.kind
    n: int = len(t) + t.total + f.size + f.offset + f.index
    for g in t:
        path: str = g.path
    t.write(d, first=1, count=None)
    t.verify(d, extra="only")
    prof: testdata.TreeProfile = testdata.tree_profile(d)
    bins: List[List[int]] = prof["sizes"]
    p2: pathlib.Path = testdata_tree(files=4, name="x", seed=1)
    p3: pathlib.Path = testdata_shared_tree(total="10K", algorithm="fast")
    testdata.dask.verify_tree(d, parts=2, files=10, seed=3)
    try:
        t.verify(p2)
    except testdata.TreeMismatchError as e:
        findings: List[str] = e.findings
        bad: int = e.missing_files + e.changed + e.extra_entries
        where: Optional[int] = e.offset
'''

BAD = '''
import testdata
from testdata.pytest_plugin import FileFactory, TreeFactory

def test_y(testdata_file: FileFactory, testdata_tree: TreeFactory) -> None:
    testdata.generate("randm", 10)                      # line 6
    testdata.generate("random", 10, algorithm="fats")   # line 7
    testdata.generate("random", 10, sed=1)              # line 8
    testdata_file("zer0", 10)                           # line 9
    testdata.Stream("random", 10, ratio=[3])            # line 10
    x: str = testdata.generate("zero", 1)               # line 11
    kind: str = "random"
    testdata.write("f", kind, 10)                       # line 13
    testdata.tree("d", file=10)                         # line 14
    testdata.Tree(kind="randm")                         # line 15
    testdata.verify_tree("d", fanout=[2])               # line 16
    testdata.Tree().verify("d", extra="all")            # line 17
    y: str = testdata.tree_profile("d")["files"]        # line 18
    testdata_tree(sizes=3)                              # line 19
    testdata.Tree(algorithm="fats")                     # line 20
'''


def test_mypy_flags_misuse(tmp_path):
    (tmp_path / "good.py").write_text(GOOD)
    (tmp_path / "bad.py").write_text(BAD)
    r = mypy("--strict", "good.py", "bad.py", cwd=tmp_path)
    lines = [ln for ln in r.stdout.splitlines() if ": error:" in ln]
    assert not [ln for ln in lines if ln.startswith("good.py")], r.stdout
    flagged = {int(ln.split(":")[1]) for ln in lines if ln.startswith("bad.py")}
    assert flagged == {6, 7, 8, 9, 10, 11, 13, 14, 15, 16, 17, 18, 19, 20}, r.stdout
    assert "Literal['zero', 'random', 'text', 'compressible', 'like']" in r.stdout
    assert "Literal['chacha20', 'fast']" in r.stdout
    assert 'Unexpected keyword argument "sed"' in r.stdout
    assert 'Unexpected keyword argument "file"' in r.stdout
