"""File trees over the library's td_tree (docs/format.md, "Trees").

Only argument, error and I/O translation happens here: options, sizes,
names, writing, verifying and the findings' wording are the C library's,
so `testdata tree` and testdata.Tree agree file for file.
"""
from __future__ import annotations

import errno as _errno
import json
import operator
import os
import pathlib
import sys
from typing import (TYPE_CHECKING, Iterator, List, Literal, NamedTuple, NoReturn, Optional,
                    Protocol, Tuple, Union, cast)

from . import capi
from ._profile import _cstr
from ._stream import MismatchError, _int, _path
from ._types import Kind, Seed, StrPath, TreeOptions, TreeProfile

if TYPE_CHECKING:
    if sys.version_info >= (3, 11):
        from typing import Unpack
    else:
        from typing_extensions import Unpack

__all__ = ["Tree", "TreeFile", "TreeMismatchError", "tree", "verify_tree", "tree_profile"]

_ALL = (1 << 64) - 1


class TreeFile(NamedTuple):
    """One file of a tree: its relative path, size in bytes, kind, the stream
    offset of its first byte (testdata.generate(kind, size, offset=offset,
    seed=..., **options) makes it alone) and its index."""
    path: str
    size: int
    kind: Kind
    offset: int
    index: int  # type: ignore[assignment]  # the field shadows tuple.index, as intended


class _TreeCounts(Protocol):
    """The counts of a tree verification (capi.td_tree_result, or the sums
    over the parts of testdata.dask.verify_tree)."""

    @property
    def ok(self) -> int: ...
    @property
    def missing(self) -> int: ...
    @property
    def wrong_size(self) -> int: ...
    @property
    def changed(self) -> int: ...
    @property
    def extra(self) -> int: ...
    @property
    def unreadable(self) -> int: ...


class TreeMismatchError(MismatchError):
    """A tree differs from its spec.  .findings holds the library's lines
    ("missing: d1/f03.bin (4096 bytes)", "changed: ... first difference at
    byte 17 ..."), in file order, then the extra entries; the counts are
    .missing_files, .wrong_size, .changed, .extra_entries, .unreadable and
    .ok.  .offset is None (a tree is many streams)."""

    offset: Optional[int]  # type: ignore[assignment]  # None: a tree is many streams

    def __init__(self, message: str, result: _TreeCounts, findings: List[str]) -> None:
        super().__init__(message, 0, "tree")
        self.offset = None
        self.findings = findings
        self.ok = result.ok
        self.missing_files = result.missing
        self.wrong_size = result.wrong_size
        self.changed = result.changed
        self.extra_entries = result.extra
        self.unreadable = result.unreadable


def _text(key: str, value: object) -> str:
    if isinstance(value, str):
        return _cstr(value, f"option {key}:")
    if isinstance(value, os.PathLike):
        return _cstr(os.fsdecode(value), f"option {key}:")
    if isinstance(value, bool) or value is None:
        raise TypeError(f"option {key}: expected int, float or str, not {type(value).__name__}")
    if hasattr(value, "__index__"):
        return str(operator.index(cast(int, value)))
    if isinstance(value, float):
        return repr(value)
    raise TypeError(f"option {key}: expected int, float or str, not {type(value).__name__}")


def _lib_error(e: ValueError) -> NoReturn:
    """A library message raised as ValueError: an unreadable file is an OSError."""
    if getattr(e, "td_status", None) == capi.TD_EIO:
        raise OSError(str(e)) from None
    raise e


def _uint(value: object, what: str, bits: int) -> int:
    """An int argument from 0 to 2**bits-1 (SWIG's own OverflowError names its C types)."""
    n = _int(value, what)
    if not 0 <= n < 1 << bits:
        raise ValueError(f"{what} {n} is out of range (0 .. 2**{bits}-1)")
    return n


def _dir(directory: StrPath) -> pathlib.Path:
    # Checked before pathlib, which reads "" as "." (the current directory).
    return pathlib.Path(os.fsdecode(_path(directory, "directory")))


class Tree:
    """A file tree fixed by its options: the CLI's `tree` options as keywords
    (files=, total=, sizes=, depth=, fanout=, kind=, like=) and the kind's
    stream options (seed=, ratio=, algorithm= ...; threads= is the number of
    files written or checked at once).  Sizes are ints or the CLI's strings.

        t = testdata.Tree(files=1000, sizes="lognormal:median=16K,sigma=1.5", seed=7)
        len(t), t.total, t[3].path
        t.write("out")             # every file complete or absent
        t.verify("out")            # or TreeMismatchError naming each bad file

    Iterating yields TreeFile entries one at a time (no list is built)."""

    def __init__(self, *, seed: Seed = 0, **options: Unpack[TreeOptions]) -> None:
        self._t: capi.td_tree
        rc, self._t = capi.td_py_tree_new()
        items: List[Tuple[str, object]] = [("seed", seed), *options.items()]
        try:
            for key, value in items:
                if value is None:
                    continue
                capi.td_py_tree_set(self._t, _cstr(key, "option"), _text(key, value))
            capi.td_py_tree_prepare(self._t)
        except ValueError as e:
            _lib_error(e)
        self._kind = cast(Kind, capi.td_kind_name(capi.td_tree_kind(self._t)))
        self._n = capi.td_tree_count(self._t)

    def __len__(self) -> int:
        return self._n

    @property
    def total(self) -> int:
        """Bytes of all files together."""
        return capi.td_tree_total(self._t)

    @property
    def kind(self) -> Kind:
        """The kind of every file's bytes."""
        return self._kind

    def __getitem__(self, index: int) -> TreeFile:
        i = operator.index(index)
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError(f"tree file {index} out of range ({self._n} files)")
        e = capi.td_py_tree_file(self._t, i)[1]
        return TreeFile(e.path, e.size, self._kind, e.offset, i)

    def __iter__(self) -> Iterator[TreeFile]:
        for i in range(self._n):
            yield self[i]

    def __repr__(self) -> str:
        return f"<testdata.Tree {self._n} files, {self.total} bytes, kind {self._kind}>"

    def _range(self, first: int, count: Optional[int]) -> Tuple[int, int]:
        first = _uint(first, "first", 64)
        count = _ALL if count is None else _uint(count, "count", 64)
        return first, count

    def write(self, directory: StrPath, *, resume: bool = False, threads: int = 0, first: int = 0,
              count: Optional[int] = None) -> pathlib.Path:
        """Write the files (or files [first, first+count)) under directory,
        made if missing; resume=True keeps files already right.  Returns the
        directory as a pathlib.Path; raises OSError naming the file at fault."""
        d = _dir(directory)
        first, count = self._range(first, count)
        rc, res, where = capi.td_py_tree_write(self._t, d, capi.TD_TREE_RESUME if resume else 0,
                                               _uint(threads, "threads", 32), first, count)
        if rc == capi.TD_EIO:
            path = d / where if where and where != str(d) else d
            raise OSError(res.error, os.strerror(res.error), str(path))
        if rc < 0:
            raise ValueError(capi.td_strerror(rc)) if rc != capi.TD_ENOMEM else MemoryError()
        return d

    def verify(self, directory: StrPath, *, threads: int = 0,
               extra: Union[bool, Literal["only"]] = True, first: int = 0,
               count: Optional[int] = None) -> None:
        """Check every file (or files [first, first+count)) under directory
        and, for the whole tree with extra=True, that nothing else is there
        (extra="only": that alone, no files, for callers that check the
        files in parts).  Returns None, or raises TreeMismatchError."""
        d = _dir(directory)
        first, count = self._range(first, count)
        if extra == "only":
            flags = capi.TD_TREE_EXTRA_ONLY
        elif isinstance(extra, bool):
            flags = 0 if extra else capi.TD_TREE_NO_EXTRA
        else:
            raise ValueError(f"extra must be True, False or 'only', not {extra!r}")
        rc, res, text = capi.td_py_tree_verify(self._t, d, flags, _uint(threads, "threads", 32),
                                               first, count)
        if rc == capi.TD_EIO:
            e = res.error or _errno.ENOENT
            raise OSError(e, os.strerror(e), str(d))
        if rc == capi.TD_EMISMATCH:
            findings = text.splitlines()
            bad = res.missing + res.wrong_size + res.changed + res.unreadable
            raise TreeMismatchError(
                f"{d}: {bad} of {res.files} files wrong ({res.missing} missing, "
                f"{res.wrong_size} wrong size, {res.changed} changed, {res.unreadable} "
                f"unreadable), {res.extra} extra entries; first: {findings[0] if findings else ''}",
                res, findings)
        if rc < 0:
            raise ValueError(capi.td_strerror(rc)) if rc != capi.TD_ENOMEM else MemoryError()
        return None


def tree(directory: StrPath, *, resume: bool = False, seed: Seed = 0,
         **options: Unpack[TreeOptions]) -> pathlib.Path:
    """Write the tree of **options (see Tree) under directory; returns its Path."""
    return Tree(seed=seed, **options).write(directory, resume=resume)


def verify_tree(directory: StrPath, *, seed: Seed = 0, **options: Unpack[TreeOptions]) -> None:
    """Check the tree of **options under directory: None, or TreeMismatchError."""
    return Tree(seed=seed, **options).verify(directory)


def tree_profile(directory: StrPath) -> TreeProfile:
    """The tree profile of directory (sizes, depth, fan-out; never contents)
    as a dict, as `testdata tree like DIR` writes it; Tree(like=path) of its
    JSON reproduces the tree's shape."""
    d = _dir(directory)
    rc, text = capi.td_py_tree_scan(d)
    if rc == capi.TD_EIO:
        raise OSError(_errno.ENOENT if not d.exists() else _errno.EIO,
                      "cannot scan the tree", str(d))
    if rc < 0:
        raise ValueError(capi.td_strerror(rc))
    profile: TreeProfile = json.loads(text)
    return profile
