"""Shared fixtures for the command-line tests."""
import os
import pathlib
import shutil
import subprocess

import pytest


@pytest.fixture(scope="session")
def cli():
    """Path of the `testdata` program under test (set by CTest)."""
    path = os.environ.get("TESTDATA_CLI") or shutil.which("testdata")
    if not path:
        pytest.fail("TESTDATA_CLI is not set and no testdata on PATH")
    return path


@pytest.fixture
def run(cli):
    """run(*args, input=None) -> CompletedProcess with bytes stdout/stderr."""
    def _run(*args, input=None, check=False, **kw):
        return subprocess.run([cli, *map(str, args)], input=input, capture_output=True,
                              check=check, **kw)
    return _run


@pytest.fixture(scope="session")
def source_dir():
    return pathlib.Path(os.environ.get("TD_SOURCE_DIR", pathlib.Path(__file__).parents[2]))
