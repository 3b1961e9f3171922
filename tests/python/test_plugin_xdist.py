"""The pytest plugin with pytest-xdist (-n 2) and Hypothesis: shared files
written once per run under a file lock, MismatchError tracebacks that point
at the test, and testdata.hypothesis strategies that shrink and say how to
reproduce."""
import pytest

CONFTEST = 'pytest_plugins = ["testdata.pytest_plugin"]\n'


@pytest.fixture
def pt(pytester):
    pytester.makeconftest(CONFTEST)
    return pytester


def test_shared_file_written_once_per_run_under_xdist(pt):
    pytest.importorskip("xdist")
    out = pt.mkdir("out")
    # Eight tests on two workers ask for the same two files; each records
    # the path, inode and mtime it got, and its worker.
    pt.makepyfile(test_shared="\n".join(f"""
def test_{i}(testdata_shared_file, worker_id):
    import os, time
    p = testdata_shared_file("random", "8M", algorithm="fast")
    q = testdata_shared_file("text", "1M", seed={i % 2})
    time.sleep(0.2)  # keep both workers busy, so both take tests
    st = os.stat(p)
    with open(os.path.join({str(out)!r}, "{i}"), "w") as f:
        f.write(f"{{p}} {{st.st_ino}} {{st.st_mtime_ns}} {{worker_id}} {{q}} {{os.stat(q).st_ino}}")
""" for i in range(8)))
    r = pt.runpytest_subprocess("-n", "2", "-p", "no:randomly")
    r.assert_outcomes(passed=8)
    rows = [(out / str(i)).read_text().split() for i in range(8)]
    assert {row[3] for row in rows} == {"gw0", "gw1"}  # really two workers
    assert len({tuple(row[:3]) for row in rows}) == 1  # one file, never rewritten
    assert len({tuple(row[4:]) for row in rows}) == 2  # seed 0 and seed 1
    # It lives in the run's base temp (the workers' common parent), not in a
    # worker's own popen-gwN directory, and there is exactly one of it.
    path = rows[0][0]
    assert "popen-gw" not in path and "/testdata-shared/" in path
    root = path.split("/testdata-shared/")[0]
    import glob
    assert len(glob.glob(f"{root}/**/random-8388608-*.bin", recursive=True)) == 1


def test_shared_file_without_xdist_stays_in_the_runs_temp(pt):
    pt.makepyfile(test_solo="""
        def test_a(testdata_shared_file, tmp_path_factory):
            p = testdata_shared_file("zero", 10)
            assert p.parent.parent == tmp_path_factory.getbasetemp()
    """)
    pt.runpytest().assert_outcomes(passed=1)


def test_mismatch_traceback_shows_the_test_not_the_package(pt):
    pt.makepyfile(test_tb="""
        import testdata

        def test_verify(testdata_file):
            p = testdata_file("random", "64K")
            testdata.verify(p, "random", "64K", seed=12345)

        def test_verify_bytes():
            testdata.verify(b"x" * 100, "zero", 100)
    """)
    r = pt.runpytest("--tb=long", "-p", "no:randomly")
    r.assert_outcomes(failed=2)
    out = r.stdout.str()
    assert out.count("testdata.MismatchError" if "testdata.MismatchError" in out
                     else "MismatchError") >= 2
    assert "nearly every byte differs" in out
    # the frames shown are the tests' own; none of the package's
    assert "_stream.py" not in out and "pytest_plugin.py" not in out
    assert 'testdata.verify(p, "random", "64K", seed=12345)' in out
    # other errors keep the package's frames (they may be bugs there)
    pt.makepyfile(test_other="""
        import testdata

        def test_bad_kind():
            testdata.verify(b"", "nosuch", 1)
    """)
    r = pt.runpytest("--tb=long", "test_other.py")
    assert "_stream.py" in r.stdout.str() and "unknown kind 'nosuch'" in r.stdout.str()


def test_hypothesis_shrinks_and_says_how_to_reproduce(pt):
    pytest.importorskip("hypothesis")
    pt.makepyfile(test_hyp="""
        from hypothesis import given, settings
        import testdata.hypothesis as tdh

        @settings(database=None, derandomize=True, max_examples=200)
        @given(tdh.streams(kinds=["random", "text"], max_size="4K"))
        def test_spec(spec):
            data = spec.generate()
            assert len(data) == spec.size
            spec.verify(data)
            assert spec.size <= 100   # fails from 101 bytes on

        @settings(database=None, derandomize=True)
        @given(seed=tdh.seeds(), size=tdh.sizes(max_size="1K"))
        def test_plain(seed, size):
            assert seed < 1000 or size < 10
    """)
    r = pt.runpytest("-p", "no:randomly", "-p", "no:cacheprovider")
    r.assert_outcomes(failed=2)
    out = r.stdout.str()
    # shrunk to the smallest failing size, seed 0 and the first kind
    assert "spec=StreamSpec('random', 101, seed=0)" in out, out
    assert "reproduce: testdata gen random 101 --seed 0 > data.bin" in out
    assert "or: testdata.generate('random', 101, seed=0)" in out
    assert "seed=1000" in out and "size=10" in out


def test_hypothesis_strategies_check_their_arguments():
    tdh = pytest.importorskip("testdata.hypothesis")
    with pytest.raises(ValueError, match="unknown kind 'randm'; did you mean 'random'"):
        tdh.streams(kinds=["randm"])
    with pytest.raises(ValueError, match="did you mean 'fast'"):
        tdh.streams(kinds=["random"], algorithm="fats")
    with pytest.raises(ValueError, match="min_size <= max_size"):
        tdh.sizes(min_size=10, max_size=5)
    spec = tdh.StreamSpec("random", 5, 7, 3, {"algorithm": "fast"})
    assert spec.cli() == "testdata gen random 5 --seed 7 --offset 3 --algorithm fast"
    assert spec.cli("verify").startswith("testdata verify random 5")
    import testdata
    assert spec.generate() == testdata.generate("random", 5, seed=7, offset=3, algorithm="fast")
    assert eval(spec.python(), {"testdata": testdata}) == spec.generate()
    assert repr(spec) == "StreamSpec('random', 5, seed=7, offset=3, algorithm='fast')"


def test_function_scoped_fixture_health_check_is_as_documented(pt):
    """What the docs say happens with testdata_file inside @given."""
    pytest.importorskip("hypothesis")
    pt.makepyfile(test_hc="""
        from hypothesis import given, settings, HealthCheck, strategies as st

        @given(st.integers(0, 3))
        def test_uses_fixture(testdata_file, n):
            testdata_file("zero", n)

        @settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=5)
        @given(st.integers(0, 3))
        def test_suppressed(testdata_file, n):
            assert testdata_file("zero", n).stat().st_size == n
    """)
    r = pt.runpytest("-p", "no:cacheprovider")
    r.assert_outcomes(failed=1, passed=1)
    assert "function_scoped_fixture" in r.stdout.str()
