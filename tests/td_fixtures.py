"""The pytest fixtures the CLI and Python suites share (imported by
tests/cli/conftest.py and tests/python/conftest.py), so each is defined once.

    cli         path of the `testdata` program under test (CTest sets
                TESTDATA_CLI; else `testdata` on PATH); fails when there is
                none, or skips when TD_NO_CLI is set (a build without the CLI)
    run         run(*args, input=None) -> CompletedProcess of `testdata *args`
    source_dir  the source tree (TD_SOURCE_DIR, or this checkout)
"""
import os
import pathlib
import shutil
import subprocess

import pytest


@pytest.fixture(scope="session")
def cli():
    path = os.environ.get("TESTDATA_CLI") or shutil.which("testdata")
    if not path:
        if os.environ.get("TD_NO_CLI"):
            pytest.skip("built without the testdata program")
        pytest.fail("TESTDATA_CLI is not set and no testdata on PATH")
    return path


@pytest.fixture
def run(cli):
    def _run(*args, input=None, check=False, **kw):
        return subprocess.run([cli, *map(str, args)], input=input, capture_output=True,
                              check=check, **kw)
    return _run


@pytest.fixture(scope="session")
def source_dir():
    return pathlib.Path(os.environ.get("TD_SOURCE_DIR", pathlib.Path(__file__).parents[1]))


def stderr_after_exit(p, timeout=30):
    """The whole stderr of Popen p once it has exited; fails, killing it, if
    it still runs after timeout seconds (a bare read would hang the suite).
    For commands that write little there: p is not read while it runs."""
    try:
        p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        raise AssertionError(f"still running after {timeout} s: {p.args}") from None
    return p.stderr.read()
