"""Hypothesis strategies: seeds, sizes, offsets, kinds and whole streams.

    from hypothesis import given
    import testdata.hypothesis as tdh

    @given(tdh.streams(kinds=["random", "text"], max_size="64K"))
    def test_roundtrip(spec):
        data = spec.generate()
        assert decode(encode(data)) == data

A failure shrinks to the smallest size, seed and offset (and the first kind
listed), and Hypothesis prints the spec and how to reproduce it:

    Falsifying example: test_roundtrip(spec=StreamSpec('random', 101, seed=0))
    reproduce: testdata gen random 101 --seed 0 > data.bin
           or: testdata.generate('random', 101, seed=0)

The strategies draw plain ints, so @given(seed=tdh.seeds(), size=tdh.sizes())
shrinks the same way.  Function-scoped fixtures (testdata_file,
testdata_stream, tmp_path) are made once per test function, not once per
example: Hypothesis's health check HealthCheck.function_scoped_fixture
fails such a test.  Make the data inside the test from the drawn spec
(spec.generate(), spec.write(path), spec.stream()), take a session-scoped
fixture (testdata_shared_file), or, when the examples may share the
fixture, @settings(suppress_health_check=[HealthCheck.function_scoped_fixture]).
Needs the hypothesis package; `import testdata` does not import this module.
"""
from __future__ import annotations

import dataclasses
import pathlib
import shlex
import sys
from typing import Any, Dict, Mapping, Optional, Sequence, Union

from hypothesis import note
from hypothesis import strategies as st

from . import _stream
from ._types import Kind, Size, StrPath

__all__ = ["seeds", "sizes", "offsets", "kinds", "streams", "StreamSpec"]

_MAX = (1 << 64) - 1


def seeds() -> st.SearchStrategy[int]:
    """Any 64-bit seed; shrinks towards 0."""
    return st.integers(min_value=0, max_value=_MAX)


def sizes(min_size: Size = 0, max_size: Size = "1M") -> st.SearchStrategy[int]:
    """Byte counts from min_size to max_size (ints or the CLI's strings); shrinks
    towards min_size."""
    lo, hi = _stream.parse_size(min_size), _stream.parse_size(max_size)
    if hi == _stream.UNBOUNDED or lo > hi:
        raise ValueError(f"need min_size <= max_size < 2**64-1, not {min_size!r}, {max_size!r}")
    return st.integers(min_value=lo, max_value=hi)


def offsets(max_offset: Size = "1T") -> st.SearchStrategy[int]:
    """Stream offsets from 0 to max_offset; shrinks towards 0."""
    hi = _stream.parse_size(max_offset)
    return st.integers(min_value=0, max_value=hi)


def kinds(allowed: Optional[Sequence[str]] = None) -> st.SearchStrategy[str]:
    """Kind names (all the library's, or those in allowed); shrinks towards the
    first."""
    names = list(_stream.kinds()) if allowed is None else list(allowed)
    for k in names:
        _stream._kind(k)  # an unknown kind fails here, with the library's message
    if not names:
        raise ValueError("kinds: allowed is empty")
    return st.sampled_from(names)


@dataclasses.dataclass(frozen=True)
class StreamSpec:
    """What a stream is: kind, size, seed, offset and options, as drawn by
    streams().  Its repr is the call that makes it; cli() and python() are
    the command and the expression that reproduce the bytes."""

    kind: Kind
    size: int
    seed: int = 0
    offset: int = 0
    options: Mapping[str, Union[int, float, str]] = dataclasses.field(default_factory=dict)

    def __repr__(self) -> str:
        extra = f", offset={self.offset}" if self.offset else ""
        extra += "".join(f", {k}={v!r}" for k, v in self.options.items())
        return f"StreamSpec({self.kind!r}, {self.size}, seed={self.seed}{extra})"

    def _kwargs(self) -> Dict[str, Any]:
        return dict(self.options, seed=self.seed, offset=self.offset)

    def generate(self) -> bytes:
        """The bytes, as testdata.generate() gives them."""
        return _stream.generate(self.kind, self.size, **self._kwargs())

    def stream(self) -> _stream.Stream:
        """A testdata.Stream of the bytes (close it, or use it in a with block)."""
        return _stream.Stream(self.kind, self.size, **self._kwargs())

    def write(self, path: StrPath) -> pathlib.Path:
        """Write the bytes to path (testdata.write)."""
        return _stream.write(path, self.kind, self.size, **self._kwargs())

    def verify(self, source: Any) -> None:
        """testdata.verify(source, ...) against this spec."""
        __tracebackhide__ = _stream._hide_mismatch
        _stream.verify(source, self.kind, self.size, **self._kwargs())

    def cli(self, verb: str = "gen") -> str:
        """The command line: "testdata gen random 101 --seed 0" (or verb="verify")."""
        args = ["testdata", verb, self.kind, str(self.size), "--seed", str(self.seed)]
        if self.offset:
            args += ["--offset", str(self.offset)]
        for k, v in self.options.items():
            args += ["--" + k.replace("_", "-"), str(v)]
        return " ".join(shlex.quote(a) for a in args)

    def python(self) -> str:
        """The Python call: "testdata.generate('random', 101, seed=0)"."""
        extra = f", offset={self.offset}" if self.offset else ""
        extra += "".join(f", {k}={v!r}" for k, v in self.options.items())
        return f"testdata.generate({self.kind!r}, {self.size}, seed={self.seed}{extra})"


@st.composite
def _streams(draw: Any, kind_names: Optional[Sequence[str]], min_size: int, max_size: int,
             max_offset: int, options: Dict[str, Any]) -> StreamSpec:
    kind = draw(kinds(kind_names))
    size = draw(st.integers(min_value=min_size, max_value=max_size))
    seed = draw(seeds())
    offset = draw(st.integers(min_value=0, max_value=min(max_offset, _MAX - size)))
    opts = {k: draw(v) if isinstance(v, st.SearchStrategy) else v for k, v in options.items()}
    spec = StreamSpec(kind, size, seed, offset, opts)
    note(f"reproduce: {spec.cli()} > data.bin\n       or: {spec.python()}")
    return spec


def streams(kinds: Optional[Sequence[str]] = None, *, min_size: Size = 0,
            max_size: Size = "64K", max_offset: Size = 0,
            **options: Any) -> st.SearchStrategy[StreamSpec]:
    """StreamSpecs of the given kinds (default all), sizes from min_size to
    max_size and offsets from 0 to max_offset (default 0: the stream's
    start).  options are fixed stream options (algorithm="fast") or
    strategies drawing them (ratio=st.floats(1, 10)); they must suit every
    kind drawn.  Each drawn spec is noted, so the failing example prints how
    to reproduce it."""
    lo, hi = _stream.parse_size(min_size), _stream.parse_size(max_size)
    if hi == _stream.UNBOUNDED or lo > hi or hi > sys.maxsize:
        raise ValueError(f"need min_size <= max_size, both bounded, not {min_size!r}, {max_size!r}")
    names = list(_stream.kinds()) if kinds is None else list(kinds)
    fixed = {k: v for k, v in options.items() if not isinstance(v, st.SearchStrategy)}
    for k in names:  # bad kinds and fixed options fail now, not in every example
        _stream._args(k, 0, 0, fixed)
    return _streams(names, lo, hi, _stream.parse_size(max_offset), dict(options))
