"""The pleasant API over testdata.capi.

Only argument, error and I/O translation happens here: sizes, kinds,
options and verification are the C library's (td_parse_size,
td_kind_from_name, td_options_set, td_verify ...), so the CLI and Python
agree byte for byte and on what they accept.
"""
import io
import numbers
import operator
import os
import pathlib
import sys
import threading

from . import capi

__all__ = ["Stream", "generate", "fill", "write", "verify", "Error", "MismatchError", "parse_size",
           "kinds", "split_range", "shard_name", "UNBOUNDED", "FORMAT_VERSION"]

UNBOUNDED = capi.TD_SIZE_UNBOUNDED
FORMAT_VERSION = capi.TD_FORMAT_VERSION
_MAX_U64 = (1 << 64) - 1
# Chunk size of verify() on file objects.
_CHUNK = 1 << 20


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

    def __init__(self, message, offset, reason="differs", *, mismatches=0, compared=0,
                 first_mismatch=None, missing=0, extra=0):
        super().__init__(message)
        self.offset = offset
        self.reason = reason
        self.mismatches = mismatches
        self.compared = compared
        self.first_mismatch = first_mismatch
        self.missing = missing
        self.extra = extra

    @classmethod
    def _from_result(cls, r, name):
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


def _cstr(text, what):
    """text for a C string argument: a NUL would silently cut it short."""
    if "\0" in text:
        raise ValueError(f"{what} {text!r} contains a NUL character")
    return text


def _raise_for(err, what):
    """Re-raise a ValueError from capi with context (the argument at fault)."""
    raise ValueError(f"{what}: {err}") from None


def parse_size(size):
    """An int, or a string with the CLI's suffixes ("100M", "1KB", "inf"), as bytes."""
    if isinstance(size, bool) or not isinstance(size, (int, str)):
        raise TypeError(f"size must be an int or a str, not {type(size).__name__}")
    if isinstance(size, int):
        if size < 0 or size > _MAX_U64:
            raise ValueError(f"size {size} is out of range (0 .. 2**64-1)")
        return size
    try:
        return capi.td_parse_size(_cstr(size, "size"))[1]
    except ValueError as e:
        _raise_for(e, f"bad size {size!r}")


def kinds():
    """Names of the kinds the library knows, in kind-number order."""
    return [n for n in map(capi.td_kind_name, range(capi.TD_KIND_COUNT)) if n is not None]


def _kind(kind):
    if not isinstance(kind, str):
        raise TypeError(f"kind must be a str, not {type(kind).__name__}")
    return capi.td_py_kind_from_name(_cstr(kind, "kind"))[1]


def _options(kind_num, seed, options):
    """A capi.td_options from seed and **options, each set by the library
    (which words any error: the option, its valid values, did-you-mean)."""
    o = capi.td_options()
    for key, value in [("seed", seed)] + list(options.items()):
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


def _args(kind, size, seed, options):
    k = _kind(kind)
    return k, parse_size(size), _options(k, seed, options)


def shard_name(index):
    """Name of shard file `index` of a data set cut into files ("part-000042"),
    as `testdata gen --mpi --files` and testdata.dask name them."""
    if isinstance(index, bool) or not isinstance(index, int):
        raise TypeError(f"index must be an int, not {type(index).__name__}")
    if not 0 <= index <= _MAX_U64:
        raise ValueError(f"index {index} is out of range (0 .. 2**64-1)")
    return capi.td_py_shard_name(index)[1]


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

    def __init__(self, kind, size, *, seed=0, offset=0, **options):
        super().__init__()
        self._s = None
        self._lock = threading.Lock()
        knum, self._size, opts = _args(kind, size, seed, options)
        self._base = parse_size(offset)
        if self._size != UNBOUNDED and self._size > _MAX_U64 - self._base:
            raise ValueError("offset + size is past the end of the stream")
        self._kind = kind
        self._seed = seed
        self._opts = dict(options)
        end = UNBOUNDED if self._size == UNBOUNDED else self._base + self._size
        s = capi.td_stream_open(knum, end, opts)[1]
        capi.td_stream_seek(s, self._base)
        self._s = s

    # --- properties -----------------------------------------------------
    @property
    def kind(self):
        """The kind name given at creation ("random", "zero", ...)."""
        return self._kind

    @property
    def seed(self):
        """The stream's seed."""
        return self._seed

    @property
    def size(self):
        """Size in bytes (testdata.UNBOUNDED for an endless stream)."""
        return self._size

    @property
    def offset(self):
        """The stream offset of the file object's position 0."""
        return self._base

    @property
    def name(self):
        """A description such as "<testdata random 1048576 seed=7>" (file objects have a name)."""
        return f"<testdata {self._kind} {self._size} seed={self._seed}>"

    def __repr__(self):
        opts = "".join(f", {k}={v!r}" for k, v in self._opts.items())
        if self._base:
            opts = f", offset={self._base}" + opts
        state = ", closed" if self.closed else ""
        return f"testdata.Stream({self._kind!r}, {self._size}, seed={self._seed!r}{opts}{state})"

    def __len__(self):
        if self._size == UNBOUNDED:
            raise TypeError("an unbounded stream has no len()")
        return self._size

    # --- io.RawIOBase ---------------------------------------------------
    def readable(self):
        self._checkClosed()
        return True

    def seekable(self):
        self._checkClosed()
        return True

    def writable(self):
        self._checkClosed()
        return False

    def _handle(self):
        s = self._s
        if s is None:
            raise ValueError("I/O operation on closed stream")
        return s

    def readinto(self, b):
        """Generate straight into the writable buffer b; return the count (0 at the end)."""
        s = self._handle()
        with self._lock:
            return capi.td_stream_read(s, b)[1]

    def read(self, size=-1):
        """Read up to size bytes (all that is left if size is negative or None) as bytes."""
        if size is None or size < 0:
            return self.readall()
        s = self._handle()
        with self._lock:
            # Never allocate more than is left (read(2**40) on a small stream).
            size = min(size, self._size - (capi.td_stream_tell(s) - self._base))
            return capi.td_stream_read_bytes(s, size)[1]

    def readall(self):
        s = self._handle()
        with self._lock:
            left = self._size - (capi.td_stream_tell(s) - self._base)
            if left > 1 << 62:
                raise OverflowError("cannot read all of an unbounded stream")
            return capi.td_stream_read_bytes(s, left)[1]

    def seek(self, offset, whence=os.SEEK_SET):
        s = self._handle()
        if not isinstance(offset, int):
            raise TypeError(f"offset must be an int, not {type(offset).__name__}")
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

    def tell(self):
        s = self._handle()
        with self._lock:
            return capi.td_stream_tell(s) - self._base

    def close(self):
        if self._s is not None:
            with self._lock:
                # Dropping the owning object frees the C stream (exactly once).
                self._s = None
        super().close()

    def readlines(self, hint=-1):
        # IOBase.readlines iterates, and iteration yields chunks here, not lines.
        lines, total = [], 0
        while True:
            line = self.readline()
            if not line:
                return lines
            lines.append(line)
            total += len(line)
            if hint is not None and 0 < hint <= total:
                return lines

    def __iter__(self):
        self._checkClosed()
        return self

    def __next__(self):
        """The next chunk of the stream as bytes (chunk sizes are the library's)."""
        s = self._handle()
        with self._lock:
            rc, chunk = capi.td_stream_next(s)
        if rc == capi.TD_DONE:
            raise StopIteration
        return chunk

    def __getstate__(self):
        raise TypeError("testdata.Stream cannot be pickled; pickle its arguments instead")


def generate(kind, size, *, seed=0, offset=0, **options):
    """Bytes [offset, offset+size) of the stream, as one bytes object.
    Ctrl-C stops it within milliseconds (KeyboardInterrupt)."""
    k, n, o = _args(kind, size, seed, options)
    if n == UNBOUNDED:
        raise ValueError("generate() needs a bounded size")
    offset = parse_size(offset)
    if n > _MAX_U64 - offset:
        raise ValueError("offset + size is past the end of the stream")
    if n > sys.maxsize:
        raise ValueError(f"size {n} does not fit in memory: use testdata.Stream or write()")
    return capi.td_fill_bytes(k, o, offset, n)[1]


def fill(buf, kind, *, seed=0, offset=0, **options):
    """Fill the writable buffer buf with bytes [offset, offset+len) of the stream."""
    k = _kind(kind)
    o = _options(k, seed, options)
    capi.td_py_fill(k, o, parse_size(offset), buf)
    return buf


def write(path, kind, size, *, seed=0, offset=0, **options):
    """Write bytes [offset, offset+size) of the stream to path; return it as a Path.

    path is a str, bytes or os.PathLike.  A regular file (or a new path) is
    replaced only once the new file is complete, so a failure or Ctrl-C
    leaves the old file as it was and no temporary behind; a symlink is
    followed; a device or FIFO is written into, never replaced (the
    library's td_write_file_ex)."""
    k, n, o = _args(kind, size, seed, options)
    offset = parse_size(offset)
    if path is None:
        raise TypeError("path must be a str, bytes or os.PathLike, not None")
    p = os.fspath(path)
    try:
        capi.td_py_write_file(p, k, offset, n, o)
    except ValueError as e:
        if getattr(e, "td_status", None) == capi.TD_ERANGE:
            raise ValueError(f"bad size {size!r} at offset {offset}: {e}") from None
        raise
    return pathlib.Path(os.fsdecode(p))


def split_range(size, parts, index, *, align=1):
    """(offset, length) of piece index of [0, size) cut into parts pieces whose
    starts are multiples of align (td_split_range): all pieces but the last
    non-empty one have the same length, pieces may be empty at the end, and
    pieces 0..parts-1 concatenate to [0, size)."""
    size = parse_size(size)
    for name, v in (("parts", parts), ("index", index), ("align", align)):
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError(f"{name} must be an int, not {type(v).__name__}")
    if parts < 1 or align < 1 or not 0 <= index < parts or max(parts, align) > _MAX_U64:
        raise ValueError(f"need parts >= 1, align >= 1 and 0 <= index < parts "
                         f"(parts={parts}, align={align}, index={index})")
    try:
        _, off, n = capi.td_split_range(size, parts, parse_size(align), index)
    except ValueError as e:
        _raise_for(e, f"cannot split size {size}")
    return off, n


def verify(source, kind, size, *, seed=0, offset=0, **options):
    """Check that source holds exactly the stream's bytes [offset, offset+size).

    source is a path (str or os.PathLike), a binary file object, or data in
    memory (bytes, bytearray, memoryview or any buffer; so a path given as
    bytes must be wrapped: pathlib.Path(os.fsdecode(b))).  Returns None or
    raises MismatchError, which carries the library's counts and message."""
    k, n, o = _args(kind, size, seed, options)
    offset = parse_size(offset)
    if isinstance(source, (str, os.PathLike)):
        rc, r = capi.td_py_verify_file(os.fspath(source), k, offset, n, o)
        if rc != capi.TD_OK:
            raise MismatchError._from_result(r, os.fsdecode(os.fspath(source)))
        return None
    try:
        view = memoryview(source)
    except TypeError:
        view = None
    v = capi.td_verifier_new(k, o, offset, n)[1]
    if view is not None:
        capi.td_verifier_update(v, view.cast("B") if view.ndim != 1 or view.format != "B" else view)
        name = "data"
    elif hasattr(source, "read") or hasattr(source, "readinto"):
        _feed(v, source, n)
        name = getattr(source, "name", None)
        name = name if isinstance(name, str) else "input"
    else:
        raise TypeError("source must be a path, a binary file object or a bytes-like object, "
                        f"not {type(source).__name__}")
    rc, r = capi.td_verifier_finish(v)
    if rc != capi.TD_OK:
        raise MismatchError._from_result(r, name)
    return None


def _feed(v, f, n):
    """Read f in chunks into the verifier: up to n bytes plus one to tell
    "long" (all of it for an unbounded n)."""
    buf = bytearray(_CHUNK)
    view = memoryview(buf)
    done = 0
    readinto = getattr(f, "readinto", None)
    while True:
        want = _CHUNK if n == UNBOUNDED else min(_CHUNK, n - done)
        if want == 0:
            want = 1  # one byte past the end makes the input long
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
            if len(chunk) > want:
                raise OSError(f"{type(f).__name__}.read({want}) returned {len(chunk)} bytes")
            data = chunk
        if len(data) == 0:
            return
        capi.td_verifier_update(v, data)
        done += len(data)
        if n != UNBOUNDED and done > n:
            return
