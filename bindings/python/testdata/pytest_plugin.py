"""pytest plugin: seeded, reproducible test data as fixtures.

Registered through the ``pytest11`` entry point when the package is
installed; otherwise enable it with ``pytest_plugins = ["testdata.pytest_plugin"]``
in a conftest.py or ``-p testdata.pytest_plugin``.

``--testdata-seed=N|random|last`` sets the session seed (default 0, or the
``testdata_seed`` ini option).  ``last`` reuses the previous run's seed
(from pytest's cache).  The session seed is printed in the report header and
in the report of every failed test that used a testdata fixture.

Each test's seed is derived from the session seed and the test's node id
with BLAKE2b (``derive_seed``), so it does not depend on which tests run, in
which order, or on which xdist worker.

Fixtures
    testdata_seed          the test's seed (int)
    testdata_file          factory (kind, size, *, name=None, seed=None, **options)
                           -> pathlib.Path of a new file under tmp_path
    testdata_stream        factory (kind, size, *, seed=None, **options)
                           -> testdata.Stream, closed at teardown
    testdata_shared_file   session-scoped factory like testdata_file: each
                           distinct (kind, size, seed, options) is written once
                           per session (read-only) and shared by all tests;
                           its default seed derives from the session seed only.
    testdata_tree          factory (*, name=None, seed=None, **tree options)
                           -> pathlib.Path of a new file tree under tmp_path
                           (testdata.Tree's options: files=, total=, sizes= ...)
    testdata_shared_tree   session-scoped factory like testdata_tree: each
                           distinct tree is written once per session, also
                           under pytest-xdist (one worker writes it, under a
                           file lock; the others wait and share it).
"""
import fcntl
import hashlib
import itertools
import os
import random
import stat

import pytest

import testdata

__all__ = ["derive_seed", "session_seed"]

_CACHE_KEY = "testdata/seed"
_MAX_SEED = (1 << 64) - 1
_FIXTURES = frozenset({"testdata_seed", "testdata_file", "testdata_stream", "testdata_shared_file",
                       "testdata_tree", "testdata_shared_tree"})
_session_seed_key = pytest.StashKey[int]()
_seed_note_key = pytest.StashKey[str]()


def derive_seed(session_seed, name):
    """The 64-bit seed of a test (or anything named): BLAKE2b of its name keyed by the session seed."""
    h = hashlib.blake2b(name.encode("utf-8"), digest_size=8,
                        key=int(session_seed).to_bytes(8, "little"))
    return int.from_bytes(h.digest(), "little")


def pytest_addoption(parser):
    group = parser.getgroup("testdata", "seeded test data (libtestdata)")
    group.addoption("--testdata-seed", action="store", default=None, metavar="N|random|last",
                    help="session seed of the testdata fixtures: an integer (default 0), "
                         "'random', or 'last' (reuse the previous run's seed)")
    parser.addini("testdata_seed", "default for --testdata-seed (N, random or last)", default="0")


def _choose_seed(config):
    """(seed, note) from the command line / ini option / previous run."""
    value = config.getoption("testdata_seed")
    if value is None:
        value = config.getini("testdata_seed") or "0"
    value = str(value).strip()
    if value == "random":
        return random.SystemRandom().randrange(1 << 32), "random"
    if value == "last":
        cache = getattr(config, "cache", None)
        if cache is None:
            raise pytest.UsageError("--testdata-seed=last needs pytest's cache "
                                    "(it is disabled with -p no:cacheprovider)")
        last = cache.get(_CACHE_KEY, None)
        if isinstance(last, int) and 0 <= last <= _MAX_SEED:
            return last, "last run's"
        return 0, "no previous run recorded: default"
    try:
        seed = int(value, 0)
    except ValueError:
        raise pytest.UsageError(f"--testdata-seed: expected an integer, 'random' or 'last', "
                                f"not {value!r}") from None
    if not 0 <= seed <= _MAX_SEED:
        raise pytest.UsageError(f"--testdata-seed: {seed} is out of range (0 .. 2**64-1)")
    return seed, ""


def pytest_configure(config):
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None and "testdata_seed" in workerinput:
        # An xdist worker: the controller chose the seed.
        seed, note = int(workerinput["testdata_seed"]), ""
    else:
        seed, note = _choose_seed(config)
        cache = getattr(config, "cache", None)
        if cache is not None:
            cache.set(_CACHE_KEY, seed)
    config.stash[_session_seed_key] = seed
    config.stash[_seed_note_key] = note


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    """xdist: hand the controller's session seed to every worker."""
    node.workerinput["testdata_seed"] = node.config.stash[_session_seed_key]


def session_seed(config):
    """The session seed of a pytest config (as printed in the report header)."""
    return config.stash[_session_seed_key]


def pytest_report_header(config):
    seed = session_seed(config)
    note = config.stash.get(_seed_note_key, "")
    note = f" ({note})" if note else ""
    return (f"testdata: seed {seed}{note}; reproduce with --testdata-seed={seed} "
            f"(libtestdata {testdata.__version__}, format {testdata.FORMAT_VERSION})")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if rep.failed and _FIXTURES.intersection(getattr(item, "fixturenames", ())):
        seed = session_seed(item.config)
        rep.sections.append((
            "testdata",
            f"testdata: session seed {seed}, this test's seed "
            f"{derive_seed(seed, item.nodeid)}; reproduce with --testdata-seed={seed}"))


@pytest.fixture
def testdata_seed(request):
    """This test's seed: derived from the session seed and the test's node id."""
    return derive_seed(session_seed(request.config), request.node.nodeid)


def _write_under(base, name, kind, size, seed, options):
    path = base / name
    if os.path.isabs(name) or ".." in path.relative_to(base).parts:
        raise ValueError(f"name must be a relative path inside {base}, not {name!r}")
    if path.parent != base:
        path.parent.mkdir(parents=True, exist_ok=True)
    return testdata.write(path, kind, size, seed=seed, **options)


@pytest.fixture
def testdata_file(testdata_seed, tmp_path):
    """Factory: testdata_file(kind, size, *, name=None, seed=None, **options) -> Path.

    Writes the stream to a new file under tmp_path.  The seed defaults to
    testdata_seed (so two calls with the same arguments give the same bytes;
    pass seed= to differ)."""
    counter = itertools.count()

    def make(kind, size, *, name=None, seed=None, **options):
        if name is None:
            name = f"testdata-{next(counter)}-{kind}.bin"
        return _write_under(tmp_path, name, kind, size,
                            testdata_seed if seed is None else seed, options)

    return make


@pytest.fixture
def testdata_stream(testdata_seed):
    """Factory: testdata_stream(kind, size, *, seed=None, **options) -> testdata.Stream.

    Streams are closed at teardown.  The seed defaults to testdata_seed."""
    streams = []

    def make(kind, size, *, seed=None, **options):
        s = testdata.Stream(kind, size, seed=testdata_seed if seed is None else seed, **options)
        streams.append(s)
        return s

    yield make
    for s in streams:
        s.close()


@pytest.fixture(scope="session")
def testdata_shared_file(request, tmp_path_factory):
    """Session-scoped factory like testdata_file, for large files: every
    distinct (kind, size, seed, options) is generated once per session and the
    same read-only path is returned to every test.  The seed defaults to one
    derived from the session seed alone (tests share the file)."""
    files = {}
    base = None
    default_seed = derive_seed(session_seed(request.config), "testdata_shared_file")

    def get(kind, size, *, seed=None, **options):
        nonlocal base
        n = testdata.parse_size(size)
        seed = default_seed if seed is None else seed
        key = (kind, n, str(seed), tuple(sorted((k, str(v)) for k, v in options.items())))
        path = files.get(key)
        if path is None:
            if base is None:
                base = tmp_path_factory.mktemp("testdata-shared")
            tag = hashlib.blake2b(repr(key).encode(), digest_size=6).hexdigest()
            path = _write_under(base, f"{kind}-{n}-{tag}.bin", kind, n, seed, options)
            os.chmod(path, stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
            files[key] = path
        return path

    return get


@pytest.fixture
def testdata_tree(testdata_seed, tmp_path):
    """Factory: testdata_tree(*, name=None, seed=None, **options) -> Path.

    Writes the file tree of **options (testdata.Tree: files=, total=,
    sizes=, depth=, fanout=, kind= and the kind's options) into a new
    directory under tmp_path.  The seed defaults to testdata_seed."""
    counter = itertools.count()

    def make(*, name=None, seed=None, **options):
        if name is None:
            name = f"testdata-tree-{next(counter)}"
        path = tmp_path / name
        if os.path.isabs(name) or ".." in path.relative_to(tmp_path).parts:
            raise ValueError(f"name must be a relative path inside {tmp_path}, not {name!r}")
        return testdata.tree(path, seed=testdata_seed if seed is None else seed, **options)

    return make


@pytest.fixture(scope="session")
def testdata_shared_tree(request, tmp_path_factory):
    """Session-scoped factory like testdata_tree: each distinct tree is
    written once per session and the same path returned to every test.
    Under pytest-xdist the workers share one copy: it lives in the parent
    of the workers' base temporary directories, and the first worker to
    need it writes it under a file lock (a crashed writer's partial tree is
    completed by the next, with resume); the others wait for it.  The seed
    defaults to one derived from the session seed alone."""
    default_seed = derive_seed(session_seed(request.config), "testdata_shared_tree")
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # shared by this session's workers
    trees = {}

    def get(*, seed=None, **options):
        seed = default_seed if seed is None else seed
        key = (str(seed), tuple(sorted((k, str(v)) for k, v in options.items())))
        path = trees.get(key)
        if path is None:
            tag = hashlib.blake2b(repr(key).encode(), digest_size=8).hexdigest()
            path = base / f"testdata-shared-tree-{tag}"
            done = base / f"testdata-shared-tree-{tag}.done"
            with open(base / f"testdata-shared-tree-{tag}.lock", "w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                if not done.exists():
                    testdata.tree(path, resume=True, seed=seed, **options)
                    done.touch()
            trees[key] = path
        return path

    return get
