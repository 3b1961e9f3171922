"""Shared fixtures of the Python binding tests.

CTest runs these with the chosen interpreter and PYTHONPATH=<build>/bindings/python,
so `import testdata` is the freshly built package.  The plugin is named
here explicitly too (it is also registered through its entry point; both
ways together must not clash).
"""
import os
import pathlib
import shutil

import pytest

pytest_plugins = ["pytester", "testdata.pytest_plugin"]


@pytest.fixture(scope="session")
def cli():
    """Path of the `testdata` program built in the same tree (set by CTest)."""
    path = os.environ.get("TESTDATA_CLI") or shutil.which("testdata")
    if not path:
        pytest.skip("TESTDATA_CLI is not set and no testdata on PATH")
    return path


@pytest.fixture(scope="session")
def source_dir():
    return pathlib.Path(os.environ.get("TD_SOURCE_DIR", pathlib.Path(__file__).parents[2]))
