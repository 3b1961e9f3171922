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

Fixtures (typed: annotate with FileFactory, StreamFactory, SharedFileFactory,
TreeFactory, SharedTreeFactory)
    testdata_seed          the test's seed (int)
    testdata_file          factory (kind, size, *, name=None, seed=None, offset=0, **options)
                           -> pathlib.Path of a new file under tmp_path
    testdata_stream        factory (kind, size, *, seed=None, offset=0, **options)
                           -> testdata.Stream, closed at teardown
    testdata_shared_file   session-scoped factory like testdata_file: each
                           distinct (kind, size, seed, options) is written once
                           per run (read-only) and shared by all tests, under
                           pytest-xdist by all workers too (a file lock in the
                           run's base temporary directory); its default seed
                           derives from the session seed only.
    testdata_tree          factory (*, name=None, seed=None, **tree options)
                           -> pathlib.Path of a new file tree under tmp_path
                           (testdata.Tree's options: files=, total=, sizes= ...)
    testdata_shared_tree   session-scoped factory like testdata_tree: each
                           distinct tree is written once per run, shared like
                           testdata_shared_file (also under pytest-xdist).

A failing testdata.verify() in a test shows the test's own line: the
package's frames are hidden from MismatchError tracebacks
(``__tracebackhide__``).  With Hypothesis, see testdata.hypothesis.
"""
from __future__ import annotations

import fcntl
import hashlib
import itertools
import os
import pathlib
import random
import stat
import sys
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, List, Optional, Protocol, Tuple

import pytest

import testdata
from testdata._stream import _hide_mismatch
from testdata._types import Kind, Seed, Size, StreamOptions, TreeOptions

if TYPE_CHECKING:
    if sys.version_info >= (3, 11):
        from typing import Unpack
    else:
        from typing_extensions import Unpack

__all__ = ["derive_seed", "session_seed", "FileFactory", "StreamFactory", "SharedFileFactory",
           "TreeFactory", "SharedTreeFactory"]

_CACHE_KEY = "testdata/seed"
_MAX_SEED = (1 << 64) - 1
_FIXTURES = frozenset({"testdata_seed", "testdata_file", "testdata_stream", "testdata_shared_file",
                       "testdata_tree", "testdata_shared_tree"})
_session_seed_key = pytest.StashKey[int]()
_seed_note_key = pytest.StashKey[str]()


class FileFactory(Protocol):
    """The type of the testdata_file fixture:
    ``def test_x(testdata_file: FileFactory) -> None``."""

    def __call__(self, kind: Kind, size: Size, *, name: Optional[str] = None,
                 seed: Optional[Seed] = None, offset: Size = 0,
                 **options: Unpack[StreamOptions]) -> pathlib.Path: ...


class StreamFactory(Protocol):
    """The type of the testdata_stream fixture."""

    def __call__(self, kind: Kind, size: Size, *, seed: Optional[Seed] = None,
                 offset: Size = 0, **options: Unpack[StreamOptions]) -> testdata.Stream: ...


class SharedFileFactory(Protocol):
    """The type of the testdata_shared_file fixture."""

    def __call__(self, kind: Kind, size: Size, *, seed: Optional[Seed] = None,
                 offset: Size = 0, **options: Unpack[StreamOptions]) -> pathlib.Path: ...


class TreeFactory(Protocol):
    """The type of the testdata_tree fixture."""

    def __call__(self, *, name: Optional[str] = None, seed: Optional[Seed] = None,
                 **options: Unpack[TreeOptions]) -> pathlib.Path: ...


class SharedTreeFactory(Protocol):
    """The type of the testdata_shared_tree fixture."""

    def __call__(self, *, seed: Optional[Seed] = None,
                 **options: Unpack[TreeOptions]) -> pathlib.Path: ...


def derive_seed(session_seed: int, name: str) -> int:
    """The 64-bit seed of a test (or anything named): BLAKE2b of its name keyed by the session seed."""
    if isinstance(session_seed, bool) or not isinstance(session_seed, int):
        raise TypeError(f"session_seed must be an int, not {type(session_seed).__name__}")
    if not 0 <= session_seed <= _MAX_SEED:
        raise ValueError(f"session_seed {session_seed} is out of range (0 .. 2**64-1)")
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, not {type(name).__name__}")
    h = hashlib.blake2b(name.encode("utf-8", "surrogatepass"), digest_size=8,
                        key=session_seed.to_bytes(8, "little"))
    return int.from_bytes(h.digest(), "little")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("testdata", "seeded test data (libtestdata)")
    group.addoption("--testdata-seed", action="store", default=None, metavar="N|random|last",
                    help="session seed of the testdata fixtures: an integer (default 0), "
                         "'random', or 'last' (reuse the previous run's seed)")
    parser.addini("testdata_seed", "default for --testdata-seed (N, random or last)", default="0")


def _choose_seed(config: pytest.Config) -> Tuple[int, str]:
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


def pytest_configure(config: pytest.Config) -> None:
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
def pytest_configure_node(node: Any) -> None:
    """xdist: hand the controller's session seed to every worker."""
    node.workerinput["testdata_seed"] = node.config.stash[_session_seed_key]


def session_seed(config: pytest.Config) -> int:
    """The session seed of a pytest config (as printed in the report header)."""
    return config.stash[_session_seed_key]


def pytest_report_header(config: pytest.Config) -> str:
    seed = session_seed(config)
    note = config.stash.get(_seed_note_key, "")
    note = f" ({note})" if note else ""
    return (f"testdata: seed {seed}{note}; reproduce with --testdata-seed={seed} "
            f"(libtestdata {testdata.__version__}, format {testdata.FORMAT_VERSION})")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    rep = outcome.get_result()  # type: ignore[attr-defined]
    if rep.failed and _FIXTURES.intersection(getattr(item, "fixturenames", ())):
        seed = session_seed(item.config)
        rep.sections.append((
            "testdata",
            f"testdata: session seed {seed}, this test's seed "
            f"{derive_seed(seed, item.nodeid)}; reproduce with --testdata-seed={seed}"))


@pytest.fixture
def testdata_seed(request: pytest.FixtureRequest) -> int:
    """This test's seed: derived from the session seed and the test's node id."""
    return derive_seed(session_seed(request.config), request.node.nodeid)


def _write_under(base: pathlib.Path, name: str, kind: Kind, size: Size, seed: Seed,
                 offset: Size, options: Dict[str, Any]) -> pathlib.Path:
    __tracebackhide__ = _hide_mismatch
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, not {type(name).__name__}")
    path = base / name
    if os.path.isabs(name) or ".." in path.relative_to(base).parts or path == base:
        raise ValueError(f"name must be a relative path of a file inside {base}, not {name!r}")
    if path.parent != base:
        path.parent.mkdir(parents=True, exist_ok=True)
    return testdata.write(path, kind, size, seed=seed, offset=offset, **options)


@pytest.fixture
def testdata_file(testdata_seed: int, tmp_path: pathlib.Path) -> FileFactory:
    """Factory: testdata_file(kind, size, *, name=None, seed=None, offset=0, **options) -> Path.

    Writes the stream to a new file under tmp_path.  The seed defaults to
    testdata_seed (so two calls with the same arguments give the same bytes;
    pass seed= to differ)."""
    counter = itertools.count()

    def make(kind: Kind, size: Size, *, name: Optional[str] = None, seed: Optional[Seed] = None,
             offset: Size = 0, **options: Unpack[StreamOptions]) -> pathlib.Path:
        __tracebackhide__ = _hide_mismatch
        if name is None:
            name = f"testdata-{next(counter)}-{kind}.bin"
        return _write_under(tmp_path, name, kind, size,
                            testdata_seed if seed is None else seed, offset, dict(options))

    return make


@pytest.fixture
def testdata_stream(testdata_seed: int) -> Iterator[StreamFactory]:
    """Factory: testdata_stream(kind, size, *, seed=None, offset=0, **options) -> testdata.Stream.

    Streams are closed at teardown.  The seed defaults to testdata_seed."""
    streams: List[testdata.Stream] = []

    def make(kind: Kind, size: Size, *, seed: Optional[Seed] = None, offset: Size = 0,
             **options: Unpack[StreamOptions]) -> testdata.Stream:
        s = testdata.Stream(kind, size, seed=testdata_seed if seed is None else seed,
                            offset=offset, **options)
        streams.append(s)
        return s

    yield make
    for s in streams:
        s.close()


def _shared_dir(config: pytest.Config, tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    """Where shared files live: the base temporary directory of the run.  An
    xdist worker's base temp is popen-gwN inside the run's, so its parent is
    what all workers of the run share (and nothing else does)."""
    base = tmp_path_factory.getbasetemp()
    if getattr(config, "workerinput", None) is not None:
        base = base.parent
    d = base / "testdata-shared"
    d.mkdir(exist_ok=True)
    return d


def _once(d: pathlib.Path, name: str, done: pathlib.Path, make: Callable[[], None]) -> None:
    """Run make() unless done exists, under d/name.lock: the first process of
    the run to take the lock makes it, the others wait and find it made."""
    with open(d / (name + ".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if not done.exists():
                make()
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _write_shared(d: pathlib.Path, name: str, kind: Kind, n: int, seed: Seed, offset: Size,
                  options: Dict[str, Any]) -> pathlib.Path:
    """Write d/name once (atomically: testdata.write replaces only once
    complete); read-only once written."""
    path = d / name

    def make() -> None:
        _write_under(d, name, kind, n, seed, offset, options)
        os.chmod(path, stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)

    _once(d, name, path, make)
    return path


@pytest.fixture(scope="session")
def testdata_shared_file(request: pytest.FixtureRequest,
                         tmp_path_factory: pytest.TempPathFactory) -> SharedFileFactory:
    """Session-scoped factory like testdata_file, for large files: every
    distinct (kind, size, seed, offset, options) is generated once per run and the
    same read-only path is returned to every test, also across pytest-xdist
    workers (under a file lock in the run's base temporary directory).  The
    seed defaults to one derived from the session seed alone (tests share
    the file)."""
    files: Dict[Tuple[Any, ...], pathlib.Path] = {}
    default_seed = derive_seed(session_seed(request.config), "testdata_shared_file")

    def get(kind: Kind, size: Size, *, seed: Optional[Seed] = None, offset: Size = 0,
            **options: Unpack[StreamOptions]) -> pathlib.Path:
        n = testdata.parse_size(size)
        s = default_seed if seed is None else seed
        # Validated before the name is made from them.
        testdata.Stream(kind, 0, seed=s, offset=offset, **options).close()
        key = (kind, n, str(s), str(offset), tuple(sorted((k, str(v)) for k, v in options.items())))
        path = files.get(key)
        if path is None:
            # The library's version is part of the name: a file from another
            # version (--basetemp reused) is never taken for this one's.
            tag = hashlib.blake2b(repr((key, testdata.__version__, testdata.FORMAT_VERSION))
                                  .encode(), digest_size=6).hexdigest()
            path = _write_shared(_shared_dir(request.config, tmp_path_factory),
                                 f"{kind}-{n}-{tag}.bin", kind, n, s, offset, dict(options))
            files[key] = path
        return path

    return get


@pytest.fixture
def testdata_tree(testdata_seed: int, tmp_path: pathlib.Path) -> TreeFactory:
    """Factory: testdata_tree(*, name=None, seed=None, **options) -> Path.

    Writes the file tree of **options (testdata.Tree: files=, total=,
    sizes=, depth=, fanout=, kind= and the kind's options) into a new
    directory under tmp_path.  The seed defaults to testdata_seed."""
    counter = itertools.count()

    def make(*, name: Optional[str] = None, seed: Optional[Seed] = None,
             **options: Unpack[TreeOptions]) -> pathlib.Path:
        if name is None:
            name = f"testdata-tree-{next(counter)}"
        path = tmp_path / name
        if os.path.isabs(name) or ".." in path.relative_to(tmp_path).parts:
            raise ValueError(f"name must be a relative path inside {tmp_path}, not {name!r}")
        return testdata.tree(path, seed=testdata_seed if seed is None else seed, **options)

    return make


@pytest.fixture(scope="session")
def testdata_shared_tree(request: pytest.FixtureRequest,
                         tmp_path_factory: pytest.TempPathFactory) -> SharedTreeFactory:
    """Session-scoped factory like testdata_tree: each distinct tree is
    written once per run and the same path returned to every test, also
    across pytest-xdist workers (as testdata_shared_file; a crashed writer's
    partial tree is completed by the next, with resume).  The seed defaults
    to one derived from the session seed alone."""
    default_seed = derive_seed(session_seed(request.config), "testdata_shared_tree")
    trees: Dict[Tuple[Any, ...], pathlib.Path] = {}

    def get(*, seed: Optional[Seed] = None, **options: Unpack[TreeOptions]) -> pathlib.Path:
        s = default_seed if seed is None else seed
        key = (str(s), tuple(sorted((k, str(v)) for k, v in options.items())))
        path = trees.get(key)
        if path is None:
            tag = hashlib.blake2b(repr((key, testdata.__version__, testdata.FORMAT_VERSION))
                                  .encode(), digest_size=6).hexdigest()
            d = _shared_dir(request.config, tmp_path_factory)
            name = f"tree-{tag}"
            target = path = d / name
            done = d / (name + ".done")

            def make() -> None:
                testdata.tree(target, resume=True, seed=s, **options)
                done.touch()

            _once(d, name, done, make)
            trees[key] = path
        return path

    return get
