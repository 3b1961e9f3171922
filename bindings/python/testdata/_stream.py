"""The pleasant API over testdata.capi.

Only argument, error and I/O translation happens here: sizes, kinds,
options, verification and analysis are the C library's (td_parse_size,
td_kind_from_name, td_options_set, td_verify, td_analysis_json ...), so the
CLI and Python agree byte for byte and on what they accept.  Python types
are checked here, so that an error names the argument at fault, never a
SWIG wrapper.
"""
from __future__ import annotations

import io
import json
import numbers
import operator
import os
import pathlib
import sys
import threading
from typing import (IO, TYPE_CHECKING, Any, Dict, List, NoReturn, Optional, Tuple, TypeVar, Union,
                    cast)

from . import capi
from ._profile import _cstr
from ._types import AnalysisDict, Kind, Seed, Size, StreamOptions, StrPath

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer, WriteableBuffer

    if sys.version_info >= (3, 11):
        from typing import Unpack
    else:
        from typing_extensions import Unpack

__all__ = ["Stream", "generate", "fill", "write", "verify", "analyze", "Error", "MismatchError",
           "parse_size", "kinds", "options", "split_range", "shard_name", "UNBOUNDED",
           "FORMAT_VERSION"]

UNBOUNDED: int = capi.TD_SIZE_UNBOUNDED
FORMAT_VERSION: int = capi.TD_FORMAT_VERSION
_MAX_U64 = (1 << 64) - 1
# Chunk size of verify() on file objects.
_CHUNK = 1 << 20


def _hide_mismatch(excinfo: Any) -> bool:
    """pytest's __tracebackhide__: hide this package's frames when the
    error is a MismatchError (the test's own line is what matters), never
    for other errors (which may be bugs here)."""
    return bool(excinfo.errisinstance(MismatchError))


class Error(Exception):
    """Base class of the exceptions testdata defines."""


class MismatchError(Error, AssertionError):
    """Data differs from the stream it should be.

    .offset is the absolute stream offset where the data goes wrong: the first
    differing byte, or for input that is too short its end, or too long the
    stream part's end; .reason says which ("differs", "short", "long").  The
    library's counts are there too: .mismatches (differing bytes), .compared,
    .first_mismatch (position in the data), .missing, .extra.  str() is the
    library's message, as the CLI prints it.
    """

    def __init__(self, message: str, offset: int, reason: str = "differs", *,
                 mismatches: int = 0, compared: int = 0, first_mismatch: Optional[int] = None,
                 missing: int = 0, extra: int = 0) -> None:
        super().__init__(message)
        self.offset = offset
        self.reason = reason
        self.mismatches = mismatches
        self.compared = compared
        self.first_mismatch = first_mismatch
        self.missing = missing
        self.extra = extra

    @classmethod
    def _from_result(cls, r: capi.td_verify_result, name: str) -> MismatchError:
        """From a capi.td_verify_result (td_verifier_finish, td_verify_file)."""
        message = capi.td_py_verify_message(r, name)[1]
        if r.mismatches:
            reason, offset = "differs", r.offset + r.first_mismatch
        elif r.missing:
            reason, offset = "short", r.offset + r.received
        else:
            reason, offset = "long", r.offset + r.received - r.extra
        return cls(message, offset, reason, mismatches=r.mismatches, compared=r.compared,
                   first_mismatch=r.first_mismatch if r.mismatches else None,
                   missing=r.missing, extra=r.extra)


def _raise_for(err: BaseException, what: str) -> NoReturn:
    """Re-raise a ValueError from capi with context (the argument at fault)."""
    raise ValueError(f"{what}: {err}") from None


def _int(value: object, what: str) -> int:
    """An int argument (bools and floats refused, as by range())."""
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise TypeError(f"{what} must be an int, not {type(value).__name__}")
    return operator.index(cast(Any, value))


def _size(size: object, what: str) -> int:
    if isinstance(size, bool) or not isinstance(size, (int, str)):
        raise TypeError(f"{what} must be an int or a str, not {type(size).__name__}")
    if isinstance(size, int):
        if size < 0 or size > _MAX_U64:
            raise ValueError(f"{what} {size} is out of range (0 .. 2**64-1)")
        return size
    _cstr(size, what)
    try:
        return int(capi.td_py_parse_size(size)[1])
    except ValueError as e:
        _raise_for(e, f"bad {what} {size!r}")


def parse_size(size: Size) -> int:
    """An int, or a string with the CLI's suffixes ("100M", "1KB", "1m", "8b", "inf"), as
    bytes: the suffixes of GNU head -c, with the same meaning (td_parse_size)."""
    return _size(size, "size")


def kinds() -> List[str]:
    """Names of the kinds the library knows, in kind-number order."""
    return [n for n in map(capi.td_kind_name, range(capi.TD_KIND_COUNT)) if n is not None]


def options() -> List[Dict[str, Any]]:
    """The library's option table, one dict per option: key, type ("uint",
    "size", "real", "choice" or "text": a file name, or for profile a built-in name too),
    values (of a choice; the suggested values of a text option: profile's built-ins), range and default (as
    written), kinds (the kind names it applies to) and help.  The keyword
    options of generate(), Stream() ... are these keys (seed is a parameter)."""
    types = {capi.TD_OPTION_UINT: "uint", capi.TD_OPTION_SIZE: "size",
             capi.TD_OPTION_REAL: "real", capi.TD_OPTION_CHOICE: "choice",
             capi.TD_OPTION_TEXT: "text"}
    names = kinds()
    rows = []
    for i in range(capi.td_option_count()):
        o = capi.td_option_get(i)
        values = capi.td_py_option_values(i)[1]
        rows.append({"key": o.key, "type": types[o.type],
                     "values": values.split("\n") if values else [],
                     "range": o.range, "default": o.default_value,
                     "kinds": [n for k, n in enumerate(names) if o.kinds >> k & 1],
                     "help": o.help})
    return rows


def _kind(kind: object) -> int:
    if not isinstance(kind, str):
        raise TypeError(f"kind must be a str, not {type(kind).__name__}")
    return int(capi.td_py_kind_from_name(_cstr(kind, "kind"))[1])


_TEXT_KEYS: Optional[frozenset[str]] = None


def _is_text_option(key: str) -> bool:
    """Whether the option table types key as text (a file name), '-' or '_' alike."""
    global _TEXT_KEYS
    if _TEXT_KEYS is None:
        _TEXT_KEYS = frozenset(capi.td_option_get(i).key for i in range(capi.td_option_count())
                               if capi.td_option_get(i).type == capi.TD_OPTION_TEXT)
    return key.replace("-", "_") in _TEXT_KEYS


def _options(kind_num: int, seed: object, options: Dict[str, Any]) -> capi.td_options:
    """A capi.td_options from seed and **options, each set by the library
    (which words any error: the option, its valid values, did-you-mean)."""
    o = capi.td_options()
    for key, value in [("seed", seed)] + list(options.items()):
        if key == "profile" and kind_num == capi.TD_LIKE:
            _set_profile(o, value)
            continue
        if _is_text_option(key):  # a file name (model=): str, bytes or a path only
            if isinstance(value, bool) or not isinstance(value, (str, bytes, os.PathLike)):
                raise TypeError(f"option {key}: expected a path (str, bytes or os.PathLike), "
                                f"not {type(value).__name__}")
            value = os.fsdecode(value)
        if isinstance(value, str):
            text = _cstr(value, f"option {key}:")
        elif isinstance(value, bool) or value is None:
            raise TypeError(f"option {key}: expected int, float or str, not {type(value).__name__}")
        elif hasattr(value, "__index__"):
            text = str(operator.index(value))
        elif isinstance(value, numbers.Real):
            text = repr(float(value))
        else:
            raise TypeError(f"option {key}: expected int, float or str, not {type(value).__name__}")
        capi.td_py_options_set(o, kind_num, _cstr(key, "option"), text)
    return o


def _set_profile(o: capi.td_options, value: object) -> None:
    """profile=: a Profile, a built-in name or a profile file (td_profile_open).
    The C options borrow the profile, so o keeps its owner alive."""
    from ._profile import Profile
    if not isinstance(value, Profile):
        if isinstance(value, bool) or not isinstance(value, (str, bytes, os.PathLike)):
            raise TypeError("option profile: expected a testdata.Profile, a built-in profile "
                            f"name or a path, not {type(value).__name__}")
        value = Profile.load(value)
    capi.td_py_options_set_profile(o, value._p)
    setattr(o, "_td_profile", value)


def _args(kind: object, size: object, seed: object,
          options: Dict[str, Any]) -> Tuple[int, int, capi.td_options]:
    k = _kind(kind)
    return k, _size(size, "size"), _options(k, seed, options)


def _path(path: object, what: str = "path") -> Union[str, bytes]:
    if path is None or not isinstance(path, (str, bytes, os.PathLike)):
        raise TypeError(f"{what} must be a str, bytes or os.PathLike, not {type(path).__name__}")
    p = os.fspath(path)
    if not p:
        raise ValueError(f"{what} is empty")
    if (b"\0" if isinstance(p, bytes) else "\0") in p:
        raise ValueError(f"{what} {p!r} contains a NUL character")
    return p


def _check_end(offset: int, size: int) -> None:
    """ValueError unless [offset, offset+size) is within the stream (2**64-1 bytes)."""
    if size != UNBOUNDED and size > _MAX_U64 - offset:
        raise ValueError(f"offset {offset} + size {size} is past the end of the stream "
                         f"(2**64-1 bytes)")


def _buffer(buf: object, what: str, writable: bool) -> memoryview:
    """A flat byte view of buf, or TypeError naming the argument."""
    try:
        view = memoryview(cast(Any, buf))
    except TypeError:
        raise TypeError(f"{what} must be a {'writable ' if writable else ''}bytes-like object "
                        f"(bytes, bytearray, memoryview, array, mmap ...), "
                        f"not {type(buf).__name__}") from None
    if writable and view.readonly:
        raise TypeError(f"{what} must be writable, not a read-only {type(buf).__name__}")
    if not view.c_contiguous:
        raise TypeError(f"{what} must be a C-contiguous buffer")
    return view.cast("B") if view.ndim != 1 or view.format != "B" else view


def shard_name(index: int) -> str:
    """Name of shard file `index` of a data set cut into files ("part-000042"),
    as `testdata gen --mpi --files` and testdata.dask name them."""
    index = _int(index, "index")
    if not 0 <= index <= _MAX_U64:
        raise ValueError(f"index {index} is out of range (0 .. 2**64-1)")
    return str(capi.td_py_shard_name(index)[1])


class Stream(io.RawIOBase):
    """A readable, seekable file object over the (kind, seed, options) stream.

    Stream("random", "100M", seed=7, algorithm="fast").  With offset=N the
    file object holds bytes [N, N+size) of the stream (its position 0 is
    stream byte N), as generate(), write() and verify() take them.  Reads
    never depend on how the stream is chunked, so it can be handed to anything taking a
    binary file object (shutil.copyfileobj, hashlib.file_digest, uploads).
    Safe to share between threads (calls are serialised); the GIL is
    released while bytes are generated.
    """

    def __init__(self, kind: Kind, size: Size, *, seed: Seed = 0, offset: Size = 0,
                 **options: Unpack[StreamOptions]) -> None:
        super().__init__()
        self._s: Optional[capi.td_stream] = None
        self._lock = threading.Lock()
        knum, self._size, opts = _args(kind, size, seed, dict(options))
        self._base = _size(offset, "offset")
        _check_end(self._base, self._size)
        self._kind = kind
        self._seed = seed
        self._opts: Dict[str, Any] = dict(options)
        end = UNBOUNDED if self._size == UNBOUNDED else self._base + self._size
        self._copts = opts  # it may hold the profile the stream was made from
        s = capi.td_stream_open(knum, end, opts)[1]
        capi.td_stream_seek(s, self._base)
        self._s = s

    # --- properties -----------------------------------------------------
    @property
    def kind(self) -> Kind:
        """The kind name given at creation ("random", "zero", ...)."""
        return self._kind

    @property
    def seed(self) -> Seed:
        """The stream's seed."""
        return self._seed

    @property
    def size(self) -> int:
        """Size in bytes (testdata.UNBOUNDED for an endless stream)."""
        return self._size

    @property
    def offset(self) -> int:
        """The stream offset of the file object's position 0."""
        return self._base

    @property
    def name(self) -> str:
        """A description such as "<testdata random 1048576 seed=7>" (file objects have a name)."""
        return f"<testdata {self._kind} {self._size} seed={self._seed}>"

    def __repr__(self) -> str:
        opts = "".join(f", {k}={v!r}" for k, v in self._opts.items())
        if self._base:
            opts = f", offset={self._base}" + opts
        state = ", closed" if self.closed else ""
        return f"testdata.Stream({self._kind!r}, {self._size}, seed={self._seed!r}{opts}{state})"

    def __len__(self) -> int:
        if self._size == UNBOUNDED:
            raise TypeError("an unbounded stream has no len()")
        return self._size

    # --- io.RawIOBase ---------------------------------------------------
    def readable(self) -> bool:
        self._checkClosed()
        return True

    def seekable(self) -> bool:
        self._checkClosed()
        return True

    def writable(self) -> bool:
        self._checkClosed()
        return False

    def write(self, b: ReadableBuffer) -> int:
        """Not supported: a stream is read-only (io.UnsupportedOperation)."""
        raise io.UnsupportedOperation("write: a testdata.Stream is read-only")

    def _handle(self) -> capi.td_stream:
        s = self._s
        if s is None:
            raise ValueError("I/O operation on closed stream")
        return s

    def readinto(self, b: WriteableBuffer) -> int:
        """Generate straight into the writable buffer b; return the count (0 at the end)."""
        s = self._handle()
        view = _buffer(b, "the buffer", writable=True)
        with self._lock:
            return int(capi.td_stream_read(s, view)[1])

    def read(self, size: Optional[int] = -1) -> bytes:
        """Read up to size bytes (all that is left if size is negative or None) as bytes."""
        if size is None:
            return self.readall()
        size = _int(size, "size")
        if size < 0:
            return self.readall()
        s = self._handle()
        with self._lock:
            # Never allocate more than is left (read(2**40) on a small stream).
            size = min(size, self._size - (capi.td_stream_tell(s) - self._base))
            return bytes(capi.td_stream_read_bytes(s, size)[1])

    def readall(self) -> bytes:
        """All that is left, as bytes (not for an unbounded stream)."""
        s = self._handle()
        with self._lock:
            left = self._size - (capi.td_stream_tell(s) - self._base)
            if left > 1 << 62:
                raise OverflowError("cannot read all of an unbounded stream")
            return bytes(capi.td_stream_read_bytes(s, left)[1])

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        """Move to offset (relative to whence: os.SEEK_SET, SEEK_CUR or SEEK_END); return
        the new position."""
        s = self._handle()
        offset = _int(offset, "offset")
        with self._lock:
            if whence == os.SEEK_SET:
                pos = offset
            elif whence == os.SEEK_CUR:
                pos = capi.td_stream_tell(s) - self._base + offset
            elif whence == os.SEEK_END:
                if self._size == UNBOUNDED:
                    raise ValueError("cannot seek relative to the end of an unbounded stream")
                pos = self._size + offset
            else:
                raise ValueError(f"invalid whence ({whence!r}, should be 0, 1 or 2)")
            if pos < 0:
                raise ValueError(f"negative seek position {pos}")
            if pos > self._size:
                raise ValueError(f"seek position {pos} is past the end of the stream ({self._size})")
            capi.td_stream_seek(s, self._base + pos)
            return pos

    def tell(self) -> int:
        """The position, from the file object's start."""
        s = self._handle()
        with self._lock:
            return int(capi.td_stream_tell(s)) - self._base

    def close(self) -> None:
        """Release the stream; reads raise ValueError afterwards."""
        if self._s is not None:
            with self._lock:
                # Dropping the owning object frees the C stream (exactly once).
                self._s = None
        super().close()

    def readline(self, size: Optional[int] = -1) -> bytes:
        """Bytes up to and including the next b"\\n" (at most size bytes if size >= 0)."""
        if size is not None:
            size = _int(size, "size")
        return super().readline(size)

    def readlines(self, hint: Optional[int] = -1) -> List[bytes]:
        """The lines left (stopping once hint bytes were read, if hint > 0)."""
        if hint is not None:
            hint = _int(hint, "hint")
        # IOBase.readlines iterates, and iteration yields chunks here, not lines.
        lines: List[bytes] = []
        total = 0
        while True:
            line = self.readline()
            if not line:
                return lines
            lines.append(line)
            total += len(line)
            if hint is not None and 0 < hint <= total:
                return lines

    def __iter__(self) -> Stream:
        self._checkClosed()
        return self

    def __next__(self) -> bytes:
        """The next chunk of the stream as bytes (chunk sizes are the library's)."""
        s = self._handle()
        with self._lock:
            rc, chunk = capi.td_stream_next(s)
        if rc == capi.TD_DONE:
            raise StopIteration
        return bytes(chunk)

    def __getstate__(self) -> NoReturn:
        raise TypeError("testdata.Stream cannot be pickled; pickle its arguments instead")


def generate(kind: Kind, size: Size, *, seed: Seed = 0, offset: Size = 0,
             **options: Unpack[StreamOptions]) -> bytes:
    """Bytes [offset, offset+size) of the stream, as one bytes object.
    Ctrl-C stops it within milliseconds (KeyboardInterrupt)."""
    k, n, o = _args(kind, size, seed, dict(options))
    if n == UNBOUNDED:
        raise ValueError("generate() needs a bounded size")
    off = _size(offset, "offset")
    _check_end(off, n)
    if n > sys.maxsize:
        raise ValueError(f"size {n} does not fit in memory: use testdata.Stream or write()")
    return bytes(capi.td_fill_bytes(k, o, off, n)[1])


# fill() returns the buffer it was given, with its type.
_B = TypeVar("_B")


def fill(buf: _B, kind: Kind, *, seed: Seed = 0, offset: Size = 0,
         **options: Unpack[StreamOptions]) -> _B:
    """Fill the writable buffer buf with bytes [offset, offset+len) of the stream; return buf."""
    view = _buffer(buf, "buf", writable=True)
    k = _kind(kind)
    o = _options(k, seed, dict(options))
    off = _size(offset, "offset")
    _check_end(off, len(view))
    capi.td_py_fill(k, o, off, view)
    return buf


def write(path: Union[StrPath, bytes], kind: Kind, size: Size, *, seed: Seed = 0,
          offset: Size = 0, **options: Unpack[StreamOptions]) -> pathlib.Path:
    """Write bytes [offset, offset+size) of the stream to path; return it as a Path.

    path is a str, bytes or os.PathLike.  A regular file (or a new path) is
    replaced only once the new file is complete, so a failure or Ctrl-C
    leaves the old file as it was and no temporary behind; a symlink is
    followed; a device or FIFO is written into, never replaced (the
    library's td_write_file_ex).  The model or profile file the stream is
    generated from is never replaced either (ValueError)."""
    p = _path(path)
    k, n, o = _args(kind, size, seed, dict(options))
    off = _size(offset, "offset")
    _check_end(off, n)
    capi.td_py_options_check_output(o, p)  # never in place of its model or profile file
    try:
        capi.td_py_write_file(p, k, off, n, o)
    except ValueError as e:
        if n == UNBOUNDED and getattr(e, "td_status", None) == capi.TD_ERANGE:
            raise ValueError(f"an endless stream (size {size!r}) can never replace "
                             f"{os.fsdecode(p)!r} (it is never complete): give a bounded "
                             f"size") from None
        raise
    return pathlib.Path(os.fsdecode(p))


def split_range(size: Size, parts: int, index: int, *, align: Size = 1) -> Tuple[int, int]:
    """(offset, length) of piece index of [0, size) cut into parts pieces whose
    starts are multiples of align (td_split_range): all pieces but the last
    non-empty one have the same length, pieces may be empty at the end, and
    pieces 0..parts-1 concatenate to [0, size)."""
    total = parse_size(size)
    parts = _int(parts, "parts")
    index = _int(index, "index")
    if isinstance(align, bool) or not isinstance(align, (int, str)):
        raise TypeError(f"align must be an int or a str, not {type(align).__name__}")
    al = _size(align, "align") if isinstance(align, str) or align >= 0 else align
    if parts < 1 or al < 1 or not 0 <= index < parts or max(parts, al) > _MAX_U64:
        raise ValueError(f"need parts >= 1, align >= 1 and 0 <= index < parts "
                         f"(parts={parts}, align={align}, index={index})")
    try:
        _, off, n = capi.td_split_range(total, parts, al, index)
    except ValueError as e:
        _raise_for(e, f"cannot split size {total}")
    return int(off), int(n)


def verify(source: Union[StrPath, ReadableBuffer, IO[bytes], io.RawIOBase, io.BufferedIOBase],
           kind: Kind, size: Size, *, seed: Seed = 0, offset: Size = 0,
           **options: Unpack[StreamOptions]) -> None:
    """Check that source holds exactly the stream's bytes [offset, offset+size).

    source is a path (str or os.PathLike), a binary file object, or data in
    memory (bytes, bytearray, memoryview or any buffer; so a path given as
    bytes must be wrapped: pathlib.Path(os.fsdecode(b))).  Returns None or
    raises MismatchError, which carries the library's counts and message."""
    __tracebackhide__ = _hide_mismatch
    k, n, o = _args(kind, size, seed, dict(options))
    off = _size(offset, "offset")
    _check_end(off, n)
    if isinstance(source, (str, os.PathLike)):
        p = _path(source, "source")
        rc, r = capi.td_py_verify_file(p, k, off, n, o)
        if rc != capi.TD_OK:
            raise MismatchError._from_result(r, os.fsdecode(p))
        return None
    try:
        view: Optional[memoryview] = memoryview(cast(Any, source))
    except TypeError:
        view = None
    if view is None and not (hasattr(source, "read") or hasattr(source, "readinto")):
        raise TypeError("source must be a path, a binary file object or a bytes-like object, "
                        f"not {type(source).__name__}")
    v = capi.td_verifier_new(k, o, off, n)[1]
    if view is not None:
        capi.td_verifier_update(v, _buffer(view, "source", writable=False))
        name = "data"
    else:
        _feed(v, source, n)
        fname = getattr(source, "name", None)
        name = fname if isinstance(fname, str) else "input"
    rc, r = capi.td_verifier_finish(v)
    if rc != capi.TD_OK:
        raise MismatchError._from_result(r, name)
    return None


def _feed(v: capi.td_verifier, f: Any, n: int) -> None:
    """Read f in chunks into the verifier: up to n bytes plus one to tell
    "long" (all of it for an unbounded n)."""
    __tracebackhide__ = _hide_mismatch
    buf = bytearray(_CHUNK)
    view = memoryview(buf)
    done = 0
    readinto = getattr(f, "readinto", None)
    while True:
        want = _CHUNK if n == UNBOUNDED else min(_CHUNK, n - done)
        if want == 0:
            want = 1  # one byte past the end makes the input long
        data: Union[memoryview, bytes]
        if readinto is not None:
            got = readinto(view[:want])
            if got is None:
                raise BlockingIOError("non-blocking file object had no data")
            if not isinstance(got, int) or not 0 <= got <= want:
                raise OSError(f"{type(f).__name__}.readinto() returned {got!r} "
                              f"(should have been between 0 and {want})")
            data = view[:got]
        else:
            chunk = f.read(want)
            if chunk is None:
                raise BlockingIOError("non-blocking file object had no data")
            try:
                data = _buffer(chunk, f"{type(f).__name__}.read()", writable=False)
            except TypeError:
                raise TypeError(f"{type(f).__name__}.read() returned {type(chunk).__name__}, "
                                "not bytes (open the file in binary mode)") from None
            if len(data) > want:
                raise OSError(f"{type(f).__name__}.read({want}) returned {len(data)} bytes")
        if len(data) == 0:
            return
        capi.td_verifier_update(v, data)
        done += len(data)
        if n != UNBOUNDED and done > n:
            return


def analyze(source: Union[StrPath, ReadableBuffer], *, sample: Size = "8M",
            threads: Union[int, str] = 1) -> AnalysisDict:
    """Entropy, compression ratios, 4 KiB dedup ratio and verdict of a file or of
    data in memory, as a dict with the keys of `testdata analyze --json` (file,
    size, entropy, sampled, sampled_bytes, ratios, compressed, dedup, verdict;
    file is None for data in memory).

    source is a path (str or os.PathLike) or a bytes-like object.  sample is
    the most bytes compressed (in 1 MiB blocks spread over the input),
    threads the compressors running at once (0: all cores; the result does
    not depend on it).  The GIL is released; Ctrl-C stops it."""
    n = _size(sample, "sample")
    t = _options(capi.TD_ZERO, 0, {"threads": threads}).threads
    capi.td_py_analyze_options_check(n, t)  # ValueError in the library's words
    if isinstance(source, (str, os.PathLike)):
        p = _path(source, "source")
        result = json.loads(capi.td_py_analyze_file(p, n, t)[1])
    elif _is_buffer(source):
        view = _buffer(source, "source", writable=False)
        result = json.loads(capi.td_py_analyze_buffer(view, n, t)[1])
    else:
        raise TypeError("source must be a path or a bytes-like object, "
                        f"not {type(source).__name__}")
    return cast(AnalysisDict, result)


def _is_buffer(obj: object) -> bool:
    try:
        memoryview(cast(Any, obj)).release()
        return True
    except TypeError:
        return False
