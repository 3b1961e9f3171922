"""Shared fixtures of the Python binding tests.

CTest runs these with the chosen interpreter and PYTHONPATH=<build>/bindings/python,
so `import testdata` is the freshly built package.  The plugin is named
here explicitly too (it is also registered through its entry point; both
ways together must not clash).  cli, run and source_dir are the ones the
CLI tests use (tests/td_fixtures.py).
"""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).parents[1]))
from td_fixtures import cli, run, source_dir  # noqa: E402,F401

pytest_plugins = ["pytester", "testdata.pytest_plugin"]
