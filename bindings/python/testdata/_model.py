"""Text models: testdata.build_model(), the library's model builder
(td_model_builder_*) over corpus files.  Generate from a model with
generate("text", size, model=path)."""
from __future__ import annotations

import os
import pathlib
from typing import Iterable, Union

from . import capi
from ._stream import _options
from ._types import StrPath

__all__ = ["build_model"]


def _path(p: object, what: str) -> str:
    if not isinstance(p, (str, os.PathLike)):
        raise TypeError(f"{what} must be a str or os.PathLike, not {type(p).__name__}")
    s = os.fspath(p)
    if not isinstance(s, str):
        raise TypeError(f"{what} must be a str path, not {type(s).__name__}")
    if "\0" in s:
        raise ValueError(f"{what} contains a NUL character")
    return s


def build_model(corpus: Union[StrPath, Iterable[StrPath]], output: StrPath, *,
                threads: Union[int, str] = 1) -> pathlib.Path:
    """Learn a text model from corpus files (UTF-8 text in any language;
    each file one document) and write it to output, replaced only once
    complete: what `testdata model build CORPUS... -o OUTPUT` does.
    threads: as `--threads` (0: all cores; at most 2 are used, from 512
    KiB of corpus; the model does not depend on it).  The GIL is released.
    Returns output as a pathlib.Path, for generate("text", n, model=...).
    Raises ValueError (not UTF-8, empty, under 10 KiB, or output naming
    one of the corpus files, which is never replaced), OSError (a file
    that cannot be read or written), TypeError."""
    if isinstance(corpus, (str, os.PathLike)):
        files = [_path(corpus, "corpus")]
    else:
        files = [_path(c, "corpus file") for c in corpus]
    out = _path(output, "output")
    if not files:
        raise ValueError("build_model needs at least one corpus file")
    t = _options(capi.TD_ZERO, 0, {"threads": threads}).threads
    b = capi.td_py_model_builder_new(t)[1]
    for f in files:
        capi.td_py_model_builder_add_file(b, f)
    capi.td_py_model_builder_save(b, out)
    return pathlib.Path(out)
