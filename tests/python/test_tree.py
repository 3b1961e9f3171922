"""testdata.Tree / tree() / verify_tree() / tree_profile(), the tree fixtures
(also under pytest-xdist), and testdata.dask.write_tree / verify_tree."""
import hashlib
import os
import subprocess

import pytest

import testdata

SPEC = dict(files=400, total="4M", seed=11)
CONFTEST = 'pytest_plugins = ["testdata.pytest_plugin"]\n'


def tree_hash(root):
    h = hashlib.sha256()
    for dirpath, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files):
            p = os.path.join(dirpath, name)
            h.update(os.path.relpath(p, root).encode() + b"\0" + open(p, "rb").read())
    return h.hexdigest()


def test_tree_object_is_stateless_and_exact():
    t = testdata.Tree(**SPEC)
    assert len(t) == 400 and t.total == 4 << 20
    assert sum(f.size for f in t) == t.total
    f = t[123]
    assert f == testdata.Tree(**SPEC)[123] and t[-1].index == 399
    assert f.offset == 123 << 36 and f.kind == "random" and f.path.endswith("f123.bin")
    with pytest.raises(IndexError):
        t[400]
    assert [x.size for x in testdata.Tree(files=7, total=1000003)] and \
        sum(x.size for x in testdata.Tree(files=7, total=1000003)) == 1000003


def test_write_verify_and_same_bytes_as_generate(tmp_path):
    d = testdata.tree(tmp_path / "t", **SPEC)
    assert testdata.verify_tree(d, **SPEC) is None
    t = testdata.Tree(**SPEC)
    for f in list(t)[::50]:
        assert (d / f.path).read_bytes() == testdata.generate(f.kind, f.size, offset=f.offset,
                                                              seed=11)
    # threads change nothing
    d2 = testdata.Tree(**SPEC, threads=3).write(tmp_path / "t2")
    assert tree_hash(d) == tree_hash(d2)


def test_same_as_cli(tmp_path):
    cli = os.environ.get("TESTDATA_CLI")
    if not cli:
        pytest.skip("no CLI")
    d = testdata.tree(tmp_path / "py", **SPEC, kind="text")
    subprocess.run([cli, "tree", "gen", str(tmp_path / "cli"), "--files", "400", "--total", "4M",
                    "--seed", "11", "--kind", "text", "-q"], check=True)
    assert tree_hash(d) == tree_hash(tmp_path / "cli")


def test_verify_findings(tmp_path):
    d = testdata.tree(tmp_path / "t", **SPEC)
    t = testdata.Tree(**SPEC)
    big = [f for f in t if f.size > 100]
    with open(d / big[0].path, "r+b") as fh:
        fh.seek(50)
        fh.write(b"\0\0")
    os.unlink(d / big[1].path)
    os.truncate(d / big[2].path, 10)
    (d / "stray").write_text("x")
    with pytest.raises(testdata.TreeMismatchError) as ei:
        testdata.verify_tree(d, **SPEC)
    e = ei.value
    assert isinstance(e, testdata.MismatchError) and isinstance(e, AssertionError)
    assert (e.changed, e.missing_files, e.wrong_size, e.extra_entries) == (1, 1, 1, 1)
    assert e.ok == 397
    assert e.findings[0].startswith(f"changed: {big[0].path} differs")
    assert e.findings[1] == f"missing: {big[1].path} ({big[1].size} bytes)"
    assert e.findings[2].startswith(f"wrong size: {big[2].path} is 10 bytes")
    assert e.findings[3].startswith("extra: stray")
    with pytest.raises(testdata.TreeMismatchError):
        t.verify(d, extra=False)
    t.write(d, resume=True)
    t.verify(d, extra=False)
    with pytest.raises(testdata.TreeMismatchError, match="extra"):
        t.verify(d, extra="only")


def test_errors():
    with pytest.raises(ValueError, match="unknown distribution"):
        testdata.Tree(sizes="weird:1")
    with pytest.raises(ValueError, match="did you mean 'files'"):
        testdata.Tree(filez=3)
    with pytest.raises(ValueError, match="0 to 16"):
        testdata.Tree(depth=99)
    with pytest.raises(OSError, match="cannot read"):
        testdata.Tree(sizes="empirical:/nonexistent")
    with pytest.raises(TypeError):
        testdata.Tree(files=[1])
    with pytest.raises(ValueError, match="extra"):
        testdata.Tree(files=1).verify("/", extra="maybe")


def test_write_errors_name_the_path(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(OSError) as ei:
        testdata.tree(tmp_path / "f", files=3)
    assert "f" in str(ei.value.filename)
    with pytest.raises(OSError):
        testdata.verify_tree(tmp_path / "none", files=3)


def test_write_never_replaces_its_model(tmp_path, cli):
    """A text model in the directory under a file's name: FileExistsError
    naming it, and the model is intact (the CLI's test_tree.py has more)."""
    d = tmp_path / "t"
    spec = dict(files=3, sizes="fixed:1K", kind="text")
    testdata.tree(d, **spec)
    name = sorted(os.listdir(d))[0]
    subprocess.run([cli, "model", "export", "-o", str(d / name)], check=True)
    before = (d / name).read_bytes()
    with pytest.raises(FileExistsError) as ei:
        testdata.tree(d, model=d / name, **spec)
    assert name in str(ei.value.filename)
    assert (d / name).read_bytes() == before


def test_profile_round_trip(tmp_path):
    d = testdata.tree(tmp_path / "t", files=500, sizes="lognormal:median=2K,sigma=1", depth=2,
                      fanout=3)
    prof = testdata.tree_profile(d)
    assert prof["files"] == 500 and prof["depth"] == 2 and prof["fanout"] == 3
    p = tmp_path / "p.json"
    import json
    p.write_text(json.dumps(prof))
    t = testdata.Tree(like=p)
    assert len(t) == 500 and t.total == prof["total"]


def test_fixture_testdata_tree(pytester):
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile("""
        import testdata

        def test_a(testdata_tree, testdata_seed):
            d = testdata_tree(files=20, total="100K")
            assert sum(p.stat().st_size for p in d.rglob("*") if p.is_file()) == 100 * 1024
            testdata.verify_tree(d, files=20, total="100K", seed=testdata_seed)
            assert testdata_tree(files=3) != d
    """)
    pytester.runpytest().assert_outcomes(passed=1)


def test_shared_tree_written_once_under_xdist(pytester):
    pytest.importorskip("xdist")
    pytester.makeconftest(CONFTEST)
    out = pytester.mkdir("out")
    pytester.makepyfile(test_s="\n".join(f"""
def test_{i}(testdata_shared_tree):
    import os, testdata
    d = testdata_shared_tree(files=300, total="2M", seed=5)
    testdata.verify_tree(d, files=300, total="2M", seed=5)
    first = d / testdata.Tree(files=300, total="2M", seed=5)[0].path
    with open(os.path.join({str(out)!r}, "{i}"), "w") as f:
        f.write(f"{{d}} {{os.getpid()}} {{os.stat(first).st_ino}}")
""" for i in range(6)))
    r = pytester.runpytest_subprocess("-n", "2")
    r.assert_outcomes(passed=6)
    rows = [(out / str(i)).read_text().split() for i in range(6)]
    assert len({pid for _, pid, _ in rows}) == 2        # two workers ...
    assert len({d for d, _, _ in rows}) == 1            # ... one tree
    assert len({ino for _, _, ino in rows}) == 1
    d = rows[0][0]
    assert len([n for n in os.listdir(os.path.dirname(d)) if n.endswith(".done")]) == 1
