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
import threading

from . import capi

__all__ = ["Stream", "generate", "fill", "write", "verify", "MismatchError", "parse_size", "kinds",
           "split_range", "UNBOUNDED", "FORMAT_VERSION"]

UNBOUNDED = capi.TD_SIZE_UNBOUNDED
FORMAT_VERSION = capi.TD_FORMAT_VERSION
_MAX_U64 = (1 << 64) - 1
# Chunk size of verify().
_CHUNK = 1 << 20


class MismatchError(AssertionError):
    """Data differs from the stream it should be.

    .offset is the absolute stream offset of the first differing byte (for
    input that is too short: its length; too long: the stream's size);
    .reason says which ("differs", "short", "long").
    """

    def __init__(self, message, offset, reason="differs"):
        super().__init__(message)
        self.offset = offset
        self.reason = reason


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
    try:
        return capi.td_kind_from_name(_cstr(kind, "kind"))[1]
    except ValueError:
        raise ValueError(f"unknown kind {kind!r} (known: {', '.join(kinds())})") from None


def _options(kind_num, kind, seed, options):
    """A capi.td_options from seed and **options, each set by td_options_set."""
    o = capi.td_options()
    items = [("seed", seed)] + list(options.items())
    for key, value in items:
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
        ckey = _cstr(key, "option").replace("-", "_")
        try:
            capi.td_options_set(o, kind_num, ckey, text)
        except ValueError as e:
            if getattr(e, "td_status", None) == capi.TD_EOPTION:
                raise ValueError(f"option {key!r} does not apply to kind {kind!r}") from None
            _raise_for(e, f"bad value {value!r} for option {key!r}")
    return o


def _args(kind, size, seed, options):
    k = _kind(kind)
    return k, parse_size(size), _options(k, kind, seed, options)


class Stream(io.RawIOBase):
    """A readable, seekable file object over the (kind, seed, options) stream.

    Stream("random", "100M", seed=7, algorithm="fast").  Reads never depend
    on how the stream is chunked, so it can be handed to anything taking a
    binary file object (shutil.copyfileobj, hashlib.file_digest, uploads).
    Safe to share between threads (calls are serialised); the GIL is
    released while bytes are generated.
    """

    def __init__(self, kind, size, *, seed=0, **options):
        super().__init__()
        self._s = None
        self._lock = threading.Lock()
        knum, self._size, opts = _args(kind, size, seed, options)
        self._kind = kind
        self._seed = seed
        self._opts = dict(options)
        self._s = capi.td_stream_open(knum, self._size, opts)[1]

    # --- properties -----------------------------------------------------
    @property
    def kind(self):
        return self._kind

    @property
    def seed(self):
        return self._seed

    @property
    def size(self):
        """Size in bytes (testdata.UNBOUNDED for an endless stream)."""
        return self._size

    @property
    def name(self):
        return f"<testdata {self._kind} {self._size} seed={self._seed}>"

    def __repr__(self):
        opts = "".join(f", {k}={v!r}" for k, v in self._opts.items())
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
        if size is None or size < 0:
            return self.readall()
        s = self._handle()
        with self._lock:
            # Never allocate more than is left (read(2**40) on a small stream).
            size = min(size, self._size - capi.td_stream_tell(s))
            return capi.td_stream_read_bytes(s, size)[1]

    def readall(self):
        s = self._handle()
        with self._lock:
            left = self._size - capi.td_stream_tell(s)
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
                pos = capi.td_stream_tell(s) + offset
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
            capi.td_stream_seek(s, pos)
            return pos

    def tell(self):
        s = self._handle()
        with self._lock:
            return capi.td_stream_tell(s)

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
    """Bytes [offset, offset+size) of the stream, as one bytes object."""
    k, n, o = _args(kind, size, seed, options)
    if n == UNBOUNDED:
        raise ValueError("generate() needs a bounded size")
    offset = parse_size(offset)
    if n > _MAX_U64 - offset:
        raise ValueError("offset + size is past the end of the stream")
    return capi.td_fill_bytes(k, o, offset, n)[1]


def fill(buf, kind, *, seed=0, offset=0, **options):
    """Fill the writable buffer buf with bytes [offset, offset+len) of the stream."""
    k = _kind(kind)
    o = _options(k, kind, seed, options)
    capi.td_fill(k, o, parse_size(offset), buf)
    return buf


def write(path, kind, size, *, seed=0, offset=0, **options):
    """Write bytes [offset, offset+size) of the stream to a new file at path; return it as a Path.

    The file appears only when complete (td_write_file_at)."""
    k, n, o = _args(kind, size, seed, options)
    offset = parse_size(offset)
    if path is None:
        raise TypeError("path must be a str, bytes or os.PathLike, not None")
    p = pathlib.Path(os.fsdecode(os.fspath(path)))
    try:
        capi.td_write_file_at(str(p), k, offset, n, o)
    except ValueError as e:
        if getattr(e, "td_status", None) == capi.TD_ERANGE:
            raise ValueError(f"bad size {size!r} at offset {offset}: {e}") from None
        raise
    return p


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
    """Check that source (a path or a binary file object) holds exactly the
    stream's bytes [offset, offset+size).  Returns None or raises MismatchError.
    For data in memory pass io.BytesIO(data)."""
    k, n, o = _args(kind, size, seed, options)
    offset = parse_size(offset)
    if isinstance(source, (str, bytes, os.PathLike)):
        with open(source, "rb") as f:
            return _verify_file(f, k, n, o, offset)
    if not hasattr(source, "read") and not hasattr(source, "readinto"):
        raise TypeError(f"source must be a path or a binary file object, not {type(source).__name__}")
    return _verify_file(source, k, n, o, offset)


def _verify_file(f, k, n, o, offset):
    buf = bytearray(_CHUNK)
    view = memoryview(buf)
    done = 0
    readinto = getattr(f, "readinto", None)
    while True:
        want = min(_CHUNK, n - done) if n != UNBOUNDED else _CHUNK
        if want == 0:
            # Any further byte makes the input too long.
            extra = f.read(1)
            if extra:
                raise MismatchError(f"input is longer than {n} bytes", offset + n, "long")
            return None
        if readinto is not None:
            got = readinto(view[:want])
        else:
            data = f.read(want)
            got = len(data)
            view[:got] = data
        if got is None:
            raise BlockingIOError("non-blocking file object had no data")
        if got == 0:
            if n == UNBOUNDED:
                return None
            raise MismatchError(f"input is shorter than {n} bytes: {done}", offset + done, "short")
        rc, first = capi.td_verify(k, o, offset + done, view[:got])
        if rc == capi.TD_EMISMATCH:
            raise MismatchError(f"data differs from the stream at offset {first}", first)
        done += got
