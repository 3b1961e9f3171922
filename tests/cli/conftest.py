"""Fixtures of the command-line tests: cli, run, source_dir (tests/td_fixtures.py)."""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).parents[1]))
from td_fixtures import cli, run, source_dir  # noqa: E402,F401
