"""Types of the API, for annotations (mypy, pyright, IDEs).

The kinds, the option keys and the values of choice options are the C
library's (its kind registry and option table); they are spelled out here
so that a type checker can flag ``generate("randm", 10)`` or
``algorithm="fats"``.  tests/python/test_typing.py compares every name with
the library, so a kind or option added there fails the tests until it is
added here too.
"""
from __future__ import annotations

import os
from typing import List, Literal, TypedDict, Union

from ._profile import Profile

__all__ = ["Kind", "Algorithm", "Size", "Seed", "StreamOptions", "TreeOptions", "StrPath",
           "AnalysisDict", "TreeProfile"]

#: A kind name (td_kind_name): what the bytes look like.
Kind = Literal["zero", "random", "text", "compressible", "like"]

#: The values of the ``algorithm`` option (td_algorithm), for kind random.
Algorithm = Literal["chacha20", "fast"]

#: A byte count: an int, or a string with the CLI's suffixes ("100M", "1KB", "inf").
Size = Union[int, str]

#: A seed: an int from 0 to 2**64-1, or its decimal or 0x-hex string.
Seed = Union[int, str]

#: A path as open() takes it.
StrPath = Union[str, "os.PathLike[str]"]


class StreamOptions(TypedDict, total=False):
    """The stream options of the library's option table, as keyword
    arguments (``dedup_block`` is the CLI's ``--dedup-block``).  Each
    applies to the kinds the table names; the library checks values and
    ranges."""

    threads: Union[int, str]
    algorithm: Algorithm
    ratio: Union[float, str]
    compress_block: Union[int, str]
    dedup: Union[float, str]
    dedup_block: Union[int, str]
    model: StrPath
    #: kind like: a testdata.Profile, a built-in profile name or a profile file.
    profile: Union[str, "os.PathLike[str]", Profile]


class TreeOptions(StreamOptions, total=False):
    """The options of a file tree (testdata.Tree, testdata.tree ...): the
    library's tree option table (td_tree_option_get; the CLI's `tree`
    options) and the stream options of the files' bytes (``threads`` is
    the number of files written or checked at once).  The library checks
    values and ranges."""

    files: Union[int, str]
    total: Size
    #: "default", "fixed:SIZE", "uniform:MIN,MAX", "lognormal:median=SIZE,sigma=S",
    #: "pareto:min=SIZE,alpha=A", "empirical:FILE" (docs/format.md, Trees)
    sizes: str
    depth: Union[int, str]
    fanout: Union[int, str]
    kind: Kind
    #: a tree profile file (testdata tree like, testdata.tree_profile)
    like: StrPath


# One float per codec: the ratios, and the speeds (MB/s).
class _Ratios(TypedDict):
    gzip: float
    zstd: float
    lz4: float
    xz: float


class _Compressed(TypedDict):
    gzip: int
    zstd: int
    lz4: int
    xz: int


class _Dedup(TypedDict):
    block: int
    blocks: int
    unique: int
    ratio: float
    estimated: bool


#: What testdata.analyze() returns: the keys of `testdata analyze --json`
#: (td_analysis_json); file is None for data in memory.
AnalysisDict = TypedDict("AnalysisDict", {
    "file": Union[str, None],
    "size": int,
    "entropy": float,
    "sampled": bool,
    "sampled_bytes": int,
    "ratios": _Ratios,
    "compressed": _Compressed,
    "dedup": _Dedup,
    "mb_per_s": _Ratios,
    "synthetic": bool,
    "verdict": str,
})


#: What testdata.tree_profile() returns: the tree profile JSON of
#: td_tree_scan (`testdata tree like`; docs/format.md, "Tree profiles");
#: sizes holds [smallest, largest, count] histogram bins.
TreeProfile = TypedDict("TreeProfile", {
    "format": str,
    "version": int,
    "files": int,
    "total": int,
    "dirs": int,
    "depth": int,
    "fanout": int,
    "sizes": List[List[int]],
})
