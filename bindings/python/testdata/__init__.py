"""testdata: seeded, reproducible, seekable test data (bindings of libtestdata).

    import testdata
    data = testdata.generate("random", "1M", seed=7)          # bytes
    with testdata.Stream("random", "10G", algorithm="fast") as f:
        shutil.copyfileobj(f, sink)                           # file object
    path = testdata.write(tmp / "x.bin", "zero", 4096)        # pathlib.Path
    testdata.verify(path, "zero", 4096)                       # or MismatchError
    testdata.analyze(path)["ratios"]["gzip"]                  # as `analyze --json`
    testdata.tree(tmp / "t", files=1000, total="100M", seed=7)  # a file tree
    testdata.verify_tree(tmp / "t", files=1000, total="100M", seed=7)
    m = testdata.build_model(["de.txt"], tmp / "de.tdm")      # a text model
    testdata.generate("text", "1M", model=m)                  # text like de.txt
    p = testdata.profile(["sample.db"])                       # data like yours:
    testdata.generate("like", "64M", profile=p)               # ... or profile="html"

Sizes take an int or the CLI's strings ("100M", "1KB"); kind names and
options are the CLI's (algorithm="fast", threads=2, dedup_block="64K" ...).
The package is typed (py.typed): testdata.Kind, testdata.Algorithm,
testdata.StreamOptions and testdata.TreeOptions let a type checker catch a
misspelt kind, option or value.
Sharded data sets with Dask: testdata.dask; Hypothesis strategies:
testdata.hypothesis (both imported on demand).  The pytest plugin is
testdata.pytest_plugin.  The low-level SWIG module over the C API is
testdata.capi.
"""
from . import capi
from ._stream import (FORMAT_VERSION, UNBOUNDED, Error, MismatchError, Stream, analyze, fill,
                      generate, kinds, options, parse_size, shard_name, split_range, verify, write)
from ._model import FidelityWarning, build_model
from ._profile import Profile, ProfileComparison, builtin_profiles, profile
from ._tree import Tree, TreeFile, TreeMismatchError, tree, tree_profile, verify_tree
from ._types import (Algorithm, AnalysisDict, Kind, Seed, Size, StreamOptions, TreeOptions,
                     TreeProfile)

__version__: str = capi.td_version()

__all__ = ["Stream", "generate", "fill", "write", "verify", "analyze", "Error", "MismatchError",
           "parse_size", "kinds", "options", "split_range", "shard_name", "Kind", "Algorithm",
           "Size", "Seed", "StreamOptions", "AnalysisDict", "UNBOUNDED", "FORMAT_VERSION", "capi",
           "Tree", "TreeFile", "TreeMismatchError", "tree", "verify_tree", "tree_profile",
           "TreeOptions", "TreeProfile",
           "build_model", "FidelityWarning", "Profile", "ProfileComparison", "profile", "builtin_profiles"]
