"""The pytest plugin, driven through pytester."""
import re
import sys

import pytest

import testdata
from testdata.pytest_plugin import derive_seed

CONFTEST = 'pytest_plugins = ["testdata.pytest_plugin"]\n'


@pytest.fixture
def pt(pytester):
    pytester.makeconftest(CONFTEST)
    return pytester


def header_seed(result):
    for line in result.outlines:
        m = re.match(r"testdata: seed (\d+)", line)
        if m:
            return int(m.group(1))
    raise AssertionError("no testdata header in:\n" + "\n".join(result.outlines))


def test_derive_seed_is_stable():
    # Pinned: BLAKE2b, not hash(), so every process and run agrees.
    assert derive_seed(0, "test_x.py::test_a") == derive_seed(0, "test_x.py::test_a")
    assert derive_seed(0, "test_x.py::test_a") != derive_seed(1, "test_x.py::test_a")
    assert derive_seed(0, "test_x.py::test_a") != derive_seed(0, "test_x.py::test_b")
    assert 0 <= derive_seed(2**64 - 1, "x") < 2**64


def test_header_default_seed_0(pt):
    pt.makepyfile("def test_ok(): pass")
    r = pt.runpytest()
    r.assert_outcomes(passed=1)
    assert header_seed(r) == 0
    r.stdout.fnmatch_lines(["testdata: seed 0*--testdata-seed=0*"])


def test_seed_option_and_per_test_seeds(pt):
    a = derive_seed(123, "test_seeds.py::test_a")
    b = derive_seed(123, "test_seeds.py::test_b[1]")
    pt.makepyfile(test_seeds=f"""
        import pytest

        def test_a(testdata_seed):
            assert testdata_seed == {a}

        @pytest.mark.parametrize("x", [1])
        def test_b(testdata_seed, x):
            assert testdata_seed == {b}
    """)
    r = pt.runpytest("--testdata-seed=123")
    r.assert_outcomes(passed=2)
    assert header_seed(r) == 123
    # Stable under test selection and order.
    pt.runpytest("--testdata-seed=123", "-k", "test_b").assert_outcomes(passed=1)
    pt.runpytest("--testdata-seed=123", "-p", "no:randomly", "test_seeds.py::test_a").assert_outcomes(passed=1)
    # Another session seed gives other test seeds.
    pt.runpytest("--testdata-seed=124").assert_outcomes(failed=2)


def test_hex_seed_and_ini(pt):
    pt.makeini("[pytest]\ntestdata_seed = 77\n")
    pt.makepyfile("def test_ok(): pass")
    assert header_seed(pt.runpytest()) == 77
    assert header_seed(pt.runpytest("--testdata-seed=0x10")) == 16


def test_random_then_last(pt):
    pt.makepyfile("def test_ok(testdata_seed): pass")
    seeds = {header_seed(pt.runpytest("--testdata-seed=random")) for _ in range(3)}
    assert len(seeds) > 1  # 32 random bits: a repeat is (almost) impossible
    r1 = pt.runpytest("--testdata-seed=random")
    r2 = pt.runpytest("--testdata-seed=last")
    assert header_seed(r2) == header_seed(r1)
    r3 = pt.runpytest("--testdata-seed=last")
    assert header_seed(r3) == header_seed(r1)


def test_last_without_previous_run(pt):
    pt.makepyfile("def test_ok(): pass")
    r = pt.runpytest("--testdata-seed=last")
    assert header_seed(r) == 0
    r.stdout.fnmatch_lines(["*no previous run*"])


def test_last_without_cache_is_usage_error(pt):
    pt.makepyfile("def test_ok(): pass")
    r = pt.runpytest("-p", "no:cacheprovider", "--testdata-seed=last")
    assert r.ret == pytest.ExitCode.USAGE_ERROR
    r.stderr.fnmatch_lines(["*cache*"])


@pytest.mark.parametrize("bad", ["abc", "-1", str(2**64), "1.5"])
def test_bad_seed_is_usage_error(pt, bad):
    pt.makepyfile("def test_ok(): pass")
    r = pt.runpytest(f"--testdata-seed={bad}")
    assert r.ret == pytest.ExitCode.USAGE_ERROR
    r.stderr.fnmatch_lines(["*--testdata-seed*"])


def test_failed_test_report_shows_seed(pt):
    own = derive_seed(42, "test_fail.py::test_uses")
    pt.makepyfile(test_fail="""
        def test_uses(testdata_file):
            p = testdata_file("random", 100)
            assert p.read_bytes() == b"nope"

        def test_plain():
            assert False

        def test_passes(testdata_seed):
            pass
    """)
    r = pt.runpytest("--testdata-seed=42")
    r.assert_outcomes(passed=1, failed=2)
    out = r.stdout.str()
    assert out.count("--testdata-seed=42") == 2  # header + the one failed test using it
    r.stdout.fnmatch_lines([f"*session seed 42, this test's seed {own}*--testdata-seed=42*"])
    r.stdout.fnmatch_lines(["*_ test_plain _*"])
    plain = out[out.index("_ test_plain _"):]
    assert "this test's seed" not in plain.split("short test summary")[0]


def test_seed_shown_for_setup_failure(pt):
    pt.makepyfile(test_setup="""
        import pytest

        @pytest.fixture
        def broken(testdata_file):
            return testdata_file("nosuch", 10)

        def test_x(broken):
            pass
    """)
    r = pt.runpytest("--testdata-seed=5")
    r.assert_outcomes(errors=1)
    r.stdout.fnmatch_lines(["*session seed 5, this test's seed*", "*unknown kind 'nosuch'*"])


def test_fixtures(pt):
    pt.makepyfile(test_fx="""
        import io, pathlib, pytest
        import testdata

        streams = []

        def test_file(testdata_file, testdata_seed, tmp_path):
            p = testdata_file("random", "10K")
            assert isinstance(p, pathlib.Path) and p.parent == tmp_path
            assert p.read_bytes() == testdata.generate("random", 10240, seed=testdata_seed)
            q = testdata_file("random", 100, algorithm="fast", seed=3, name="sub/q.bin")
            assert q == tmp_path / "sub" / "q.bin"
            assert q.read_bytes() == testdata.generate("random", 100, seed=3, algorithm="fast")
            assert testdata_file("zero", 5) != p
            for bad in ("/etc/x", "../x", "a/../../x", "", "."):
                with pytest.raises(ValueError):
                    testdata_file("zero", 1, name=bad)
            testdata.verify(p, "random", "10K", seed=testdata_seed)

        def test_stream(testdata_stream, testdata_seed):
            s = testdata_stream("random", 1000)
            assert isinstance(s, io.RawIOBase)
            assert s.read() == testdata.generate("random", 1000, seed=testdata_seed)
            streams.append(s)

        def test_stream_closed_after_teardown():
            assert streams and streams[0].closed
    """)
    pt.runpytest("-p", "no:randomly").assert_outcomes(passed=3)


def test_shared_file_generated_once(pt):
    pt.makepyfile(test_shared="""
        import os, stat
        import testdata
        from testdata import pytest_plugin

        seen = []

        def test_one(testdata_shared_file, request):
            p = testdata_shared_file("random", "1M", algorithm="fast")
            seen.append((p, os.stat(p).st_ino, os.stat(p).st_mtime_ns))
            assert pytest_plugin.session_seed(request.config) == 9
            seed = pytest_plugin.derive_seed(9, "testdata_shared_file")
            testdata.verify(p, "random", "1M", algorithm="fast", seed=seed)
            assert not os.stat(p).st_mode & stat.S_IWUSR

        def test_two(testdata_shared_file):
            p = testdata_shared_file("random", 1 << 20, algorithm="fast")
            assert (p, os.stat(p).st_ino, os.stat(p).st_mtime_ns) == seen[0]
            assert testdata_shared_file("random", "1M") != p
            assert testdata_shared_file("random", "1M", algorithm="fast", seed=1) != p
    """)
    pt.runpytest("--testdata-seed=9", "-p", "no:randomly").assert_outcomes(passed=2)


def test_plugin_via_entry_point(pytester):
    """Without any conftest the plugin comes from the pytest11 entry point."""
    pytester.makepyfile("def test_ok(testdata_seed): assert testdata_seed >= 0")
    r = pytester.runpytest_subprocess("--testdata-seed=3")
    r.assert_outcomes(passed=1)
    assert header_seed(r) == 3


def test_plugin_via_pytest_plugins_without_autoload(pytester, monkeypatch):
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    pytester.makepyfile("def test_ok(testdata_seed): pass")
    pytester.runpytest_subprocess().assert_outcomes(errors=1)  # fixture not found
    pytester.makeconftest(CONFTEST)
    r = pytester.runpytest_subprocess("--testdata-seed=4")
    r.assert_outcomes(passed=1)
    assert header_seed(r) == 4


def test_plugin_with_dash_p(pytester, monkeypatch):
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    pytester.makepyfile("def test_ok(testdata_seed): pass")
    pytester.runpytest_subprocess("-p", "testdata.pytest_plugin").assert_outcomes(passed=1)


def test_xdist_workers_share_the_seed(pt):
    pytest.importorskip("xdist")
    expected = {f"test_x.py::test_{i}": derive_seed(8, f"test_x.py::test_{i}") for i in range(4)}
    pt.makepyfile(test_x="\n".join(
        f"def test_{i}(testdata_seed): assert testdata_seed == {expected[f'test_x.py::test_{i}']}"
        for i in range(4)))
    pt.runpytest_subprocess("-n", "2", "--testdata-seed=8").assert_outcomes(passed=4)
    # A random session seed is chosen once, by the controller, for all workers.
    out = pt.mkdir("out")
    pt.makepyfile(test_y="\n".join(
        f"""def test_{i}(testdata_seed, request):
    import os
    from testdata.pytest_plugin import session_seed
    with open(os.path.join({str(out)!r}, "{i}"), "w") as f:
        f.write(f"{{session_seed(request.config)}} {{testdata_seed}} {{os.getpid()}}")
""" for i in range(6)))
    r = pt.runpytest_subprocess("-n", "2", "--testdata-seed=random", "test_y.py")
    r.assert_outcomes(passed=6)
    seed = header_seed(r)
    rows = [(i, (out / str(i)).read_text().split()) for i in range(6)]
    assert len({pid for _, (_, _, pid) in rows}) == 2  # really two workers
    for i, (sess, own, _) in rows:
        assert int(sess) == seed
        assert int(own) == derive_seed(seed, f"test_y.py::test_{i}")
