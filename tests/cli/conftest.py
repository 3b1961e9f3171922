"""Fixtures of the command-line tests: cli, run, source_dir (tests/td_fixtures.py),
sparse_profile."""
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).parents[1]))
from td_fixtures import cli, run, source_dir  # noqa: E402,F401


@pytest.fixture
def sparse_profile(tmp_path):
    """Path of a profile whose data is 95% zero bytes (a context model of
    order 0): unrelated streams of it agree on most bytes by chance."""
    p = tmp_path / "sparse.json"
    p.write_text('{"format":"libtestdata-profile","version":2,"model":{"doc":1048576,'
                 '"dedup":65536,"ctx":{"order":0,"floor":0,"gap":0,"copies":[],'
                 '"contexts":"AAUBAF8AAQUA"}}}')
    return p
