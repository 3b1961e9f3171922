"""Text models: testdata.build_model(), the library's model builder
(td_model_builder_*) over corpus files.  Generate from a model with
generate("text", size, model=path)."""
from __future__ import annotations

import os
import pathlib
import warnings
from typing import Dict, Iterable, Optional, Union

from . import capi
from ._stream import _options
from ._types import StrPath

__all__ = ["build_model", "FidelityWarning"]


class FidelityWarning(UserWarning):
    """build_model() made a model whose text compresses more than 10%
    (capi.TD_FIDELITY_NOTE_OFF) off its corpus under lz4 -1 or zstd -3 (the
    calibration's measure; str() is the note `testdata model build` prints).  .errors is {codec: error},
    error = text's ratio / corpus's ratio - 1."""

    def __init__(self, message: str, errors: Optional[Dict[str, float]] = None) -> None:
        super().__init__(message)  # args: (message,), so that it pickles
        self.errors: Dict[str, float] = dict(errors or {})


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
    Warns with FidelityWarning when the model's text compresses more than
    10% off its corpus under lz4 -1 or zstd -3 (as the CLI's note).
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
    note = capi.td_model_builder_note(b)
    if note:
        errors = {}
        for i in range(capi.TD_MODEL_FIDELITY_CODECS):
            _, err, _, label = capi.td_py_model_builder_fidelity(b, i)
            errors[str(label)] = float(err)
        warnings.warn(FidelityWarning(note, errors), stacklevel=2)
    return pathlib.Path(out)
