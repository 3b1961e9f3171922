"""Sharded data sets with Dask: one stream, written or verified as files in parallel.

    import testdata.dask as tdd
    from distributed import Client, LocalCluster
    with Client(LocalCluster(n_workers=2)):
        paths = tdd.write_shards("/shared/ds", "random", "100G", "1G", seed=7)
        tdd.verify_shards("/shared/ds", "random", "100G", "1G", seed=7)

Shard i is the file DIR/part-{i:06d} holding bytes [i*shard_size,
min((i+1)*shard_size, total_size)) of the (kind, seed, options) stream, so the
shards concatenated in order are byte for byte the single stream
(`testdata gen KIND TOTAL`), and any one shard can be checked alone:
`testdata verify KIND LEN --offset i*shard_size DIR/part-{i:06d}` or
testdata.verify(path, kind, LEN, offset=i*shard_size).

Ranges come from the library (td_split_range); each task is one
testdata.write / testdata.verify call (td_write_file_at / td_verify), which
releases the GIL, so threaded and process workers both run in parallel.
Tasks are built with dask.delayed and computed with dask.compute: on the
active distributed.Client if there is one, else on Dask's default scheduler
(pass scheduler=... to choose).  Needs the dask package (and distributed for
a cluster); `import testdata` does not import this module.

File trees (docs/format.md, "Trees") are cut the same way: write_tree and
verify_tree run one task per part of the files (td_tree_io first/count),
each a testdata.Tree.write / .verify call on its files, the same files and
bytes as `testdata tree gen DIR` writes alone.
"""
from __future__ import annotations

import pathlib
import sys
import uuid
from typing import (TYPE_CHECKING, Any, Callable, Dict, List, Literal, NamedTuple, Optional, Tuple,
                    Union)

import dask.base
from dask.delayed import Delayed, delayed

from . import _stream
from ._stream import MismatchError, parse_size, shard_name, split_range
from ._tree import Tree, TreeMismatchError, _dir
from ._types import Kind, Seed, Size, StreamOptions, StrPath, TreeOptions

if TYPE_CHECKING:
    if sys.version_info >= (3, 11):
        from typing import Unpack
    else:
        from typing_extensions import Unpack

# (stream offset, reason, message) of a shard's first problem.
_Problem = Tuple[int, str, str]
# (order, findings, (missing, wrong size, changed, extra, unreadable)) of a
# tree part's problems; order is the part's first file, inf for extra entries.
_TreeProblem = Tuple[float, List[str], Tuple[int, int, int, int, int]]
# dask.compute, typed (dask leaves it untyped).
_compute: Callable[..., Tuple[Any, ...]] = dask.base.compute

__all__ = ["shard_ranges", "shard_path", "write_shards", "verify_shards", "write_tree",
           "verify_tree"]


def shard_ranges(total_size: Size, shard_size: Size) -> List[Tuple[int, int]]:
    """[(offset, length), ...] of every shard: ceil(total/shard) ranges of
    shard_size bytes, the last one shorter (none for total_size 0)."""
    total, shard = parse_size(total_size), parse_size(shard_size)
    if total == _stream.UNBOUNDED:
        raise ValueError("a sharded data set needs a bounded total_size")
    if shard == 0 or shard == _stream.UNBOUNDED:
        raise ValueError(f"shard_size must be between 1 and 2**64-2 bytes, not {shard_size!r}")
    n = -(-total // shard)
    return [split_range(total, n, i, align=shard) for i in range(n)]


def shard_path(directory: StrPath, index: int) -> pathlib.Path:
    """Path of shard index in directory (named by the library, as `testdata gen
    --mpi --files` names it)."""
    return _dir(directory) / shard_name(index)


def _write_one(path: str, kind: Kind, offset: int, length: int, seed: Seed,
               options: Dict[str, Any]) -> str:
    _stream.write(path, kind, length, seed=seed, offset=offset, **options)
    return str(path)


def _verify_one(path: str, kind: Kind, offset: int, length: int, seed: Seed,
                options: Dict[str, Any]) -> Optional[_Problem]:
    """None, or (stream offset, reason, message) of the shard's first problem.

    Returns instead of raising: MismatchError does not survive pickling
    between processes, and every shard's answer is wanted, not the first
    exception Dask happens to see."""
    try:
        _stream.verify(path, kind, length, seed=seed, offset=offset, **options)
    except MismatchError as e:
        return (e.offset, e.reason, f"{path}: {e}")
    except FileNotFoundError:
        return (offset, "missing", f"{path}: shard is missing")
    return None


def _check(kind: Kind, seed: Seed, options: Dict[str, Any]) -> None:
    """Validate kind, seed and options here, before any task is sent anywhere."""
    _stream._args(kind, 0, seed, options)


def write_shards(directory: StrPath, kind: Kind, total_size: Size, shard_size: Size, *,
                 seed: Seed = 0, compute: bool = True, scheduler: Any = None,
                 **options: Unpack[StreamOptions]) -> Union[List[pathlib.Path], List[Delayed]]:
    """Write the stream's first total_size bytes as shards of shard_size bytes
    into directory (created if needed) with one dask.delayed task per shard.

    Returns the shards' paths in order; with compute=False, the list of
    delayed tasks instead (each computes to its path), for the caller to
    compute or combine.  Each shard file appears only when complete."""
    _check(kind, seed, dict(options))
    ranges = shard_ranges(total_size, shard_size)
    d = _dir(directory)
    d.mkdir(parents=True, exist_ok=True)
    opts = dict(options)
    # Keys unique per call: a scheduler must never hand back an earlier call's result.
    run = uuid.uuid4().hex
    tasks: List[Delayed] = [
        delayed(_write_one, pure=False)(str(shard_path(d, i)), kind, off, n, seed, opts,
                                        dask_key_name=f"testdata-write-{i}-{run}")
        for i, (off, n) in enumerate(ranges)]
    if not compute:
        return tasks
    done = _compute(*tasks, scheduler=scheduler)
    return [pathlib.Path(p) for p in done]


def verify_shards(directory: StrPath, kind: Kind, total_size: Size, shard_size: Size, *,
                  seed: Seed = 0, scheduler: Any = None,
                  **options: Unpack[StreamOptions]) -> None:
    """Check every shard in parallel (one dask.delayed task per shard).

    Returns None, or raises MismatchError for the lowest stream offset at
    which the data set differs (.offset is that absolute stream offset,
    .reason "differs", "short", "long" or "missing"; the message names the
    shard and how many shards are bad).  A shard file beyond the last
    expected one makes the data set "long" at total_size."""
    __tracebackhide__ = _stream._hide_mismatch
    _check(kind, seed, dict(options))
    ranges = shard_ranges(total_size, shard_size)
    d = _dir(directory)
    if not d.is_dir():
        raise FileNotFoundError(f"no such directory: {str(d)!r}")
    opts = dict(options)
    # Keys unique per call: a scheduler must never hand back an earlier call's result.
    run = uuid.uuid4().hex
    tasks = [delayed(_verify_one, pure=False)(str(shard_path(d, i)), kind, off, n, seed, opts,
                                              dask_key_name=f"testdata-verify-{i}-{run}")
             for i, (off, n) in enumerate(ranges)]
    problems: List[_Problem] = [p for p in _compute(*tasks, scheduler=scheduler)
                                 if p is not None]
    if shard_path(d, len(ranges)).exists():
        total = ranges[-1][0] + ranges[-1][1] if ranges else 0
        problems.append((total, "long", f"{shard_path(d, len(ranges))}: unexpected shard "
                                        f"beyond the {len(ranges)} of the data set"))
    if problems:
        offset, reason, message = min(problems, key=lambda p: p[0])
        more = f" ({len(problems)} bad shards)" if len(problems) > 1 else ""
        raise MismatchError(f"{message}{more}", offset, reason)
    return None


class _TreeSums(NamedTuple):
    """The counts of all parts of a tree verification together."""
    ok: int
    missing: int
    wrong_size: int
    changed: int
    extra: int
    unreadable: int


def _tree_parts(tree: Tree, parts: Optional[int]) -> List[Tuple[int, int]]:
    n = len(tree)
    if parts is None:
        parts = max(1, min(64, -(-n // 4096)))
    if isinstance(parts, bool) or not isinstance(parts, int) or parts < 1:
        raise ValueError(f"parts must be a positive int, not {parts!r}")
    return [split_range(n, parts, i) for i in range(parts)] if n else []


def _write_tree_part(directory: str, first: int, count: int, options: Dict[str, Any]) -> int:
    Tree(**options).write(directory, first=first, count=count)
    return count


def _verify_tree_part(directory: str, first: int, count: int, options: Dict[str, Any],
                      extra: Union[bool, Literal["only"]]) -> Optional[_TreeProblem]:
    """None, or (first index, findings, counts) of the part's problems;
    returned rather than raised (see _verify_one)."""
    try:
        Tree(**options).verify(directory, first=first, count=count, extra=extra)
    except TreeMismatchError as e:
        order = first if extra != "only" else float("inf")  # extra entries come last
        return (order, e.findings, (e.missing_files, e.wrong_size, e.changed, e.extra_entries,
                                    e.unreadable))
    return None


def write_tree(directory: StrPath, *, parts: Optional[int] = None, compute: bool = True,
               scheduler: Any = None, seed: Seed = 0,
               **options: Unpack[TreeOptions]) -> Union[pathlib.Path, List[Delayed]]:
    """Write the file tree of **options (testdata.Tree's: files=, total=,
    sizes=, seed= ...) under directory in parallel: one dask.delayed task
    per part of the files (parts: default one per 4096 files, at most 64).
    Returns the directory; with compute=False the delayed tasks."""
    tree = Tree(seed=seed, **options)  # checks the options here, before any task is sent
    d = _dir(directory)
    tree.write(d, count=0)  # the top directory
    opts: Dict[str, Any] = dict(options, seed=seed)
    run = uuid.uuid4().hex
    tasks: List[Delayed] = [
        delayed(_write_tree_part, pure=False)(str(d), first, count, opts,
                                              dask_key_name=f"testdata-tree-{i}-{run}")
        for i, (first, count) in enumerate(_tree_parts(tree, parts))]
    if not compute:
        return tasks
    _compute(*tasks, scheduler=scheduler)
    return d


def verify_tree(directory: StrPath, *, parts: Optional[int] = None, scheduler: Any = None,
                seed: Seed = 0, **options: Unpack[TreeOptions]) -> None:
    """Check the file tree of **options under directory in parallel (and,
    in one more task, that nothing else is there).  Returns None, or raises
    TreeMismatchError with every part's findings in file order."""
    tree = Tree(seed=seed, **options)
    d = _dir(directory)
    if not d.is_dir():
        raise FileNotFoundError(f"no such directory: {str(d)!r}")
    opts: Dict[str, Any] = dict(options, seed=seed)
    run = uuid.uuid4().hex
    ranges = _tree_parts(tree, parts)
    tasks: List[Delayed] = [
        delayed(_verify_tree_part, pure=False)(str(d), first, count, opts, False,
                                               dask_key_name=f"testdata-vtree-{i}-{run}")
        for i, (first, count) in enumerate(ranges)]
    # extra entries: the whole tree with no files to check
    tasks.append(delayed(_verify_tree_part, pure=False)(
        str(d), 0, 0, opts, "only", dask_key_name=f"testdata-vtree-x-{run}"))
    found: List[Optional[_TreeProblem]] = list(_compute(*tasks, scheduler=scheduler))
    problems = sorted(p for p in found if p is not None)
    if not problems:
        return None
    findings = [f for p in problems for f in p[1]]
    sums = [sum(p[2][k] for p in problems) for k in range(5)]
    bad = sums[0] + sums[1] + sums[2] + sums[4]
    msg = (f"{d}: {bad} of {len(tree)} files wrong ({sums[0]} missing, {sums[1]} wrong size, "
           f"{sums[2]} changed, {sums[4]} unreadable), {sums[3]} extra entries; first: "
           f"{findings[0] if findings else ''}")
    counts = _TreeSums(ok=len(tree) - bad, missing=sums[0], wrong_size=sums[1],
                         changed=sums[2], extra=sums[3], unreadable=sums[4])
    raise TreeMismatchError(msg, counts, findings)
