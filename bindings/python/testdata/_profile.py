"""Profiles of the `like` kind: build one from samples, load, save, built-ins.

Only translation happens here: building, parsing, checking and writing
profiles are the C library's (td_profile_builder_*, td_profile_open,
td_profile_load_msg, td_profile_save_file), so a profile means the same to
the CLI and to Python.
"""
from __future__ import annotations

import json
import os
from typing import Any, Dict, Iterable, List, NamedTuple, Optional, Tuple, Union

from . import capi

# A path as open() takes it (testdata.StrPath; _types imports this module).
StrPath = Union[str, "os.PathLike[str]"]

__all__ = ["Profile", "ProfileComparison", "profile", "builtin_profiles"]

# Fingerprint codecs, in td_codec order (gzip -6, zstd -3, lz4, xz -6).
_CODECS = ("gzip", "zstd", "lz4", "xz")
_CHUNK = 1 << 20


def _cstr(text: str, what: str) -> str:
    """text for a C string argument: a NUL would silently cut it short.
    (Here, the module _stream and _tree import, so that it is written once.)"""
    if "\0" in text:
        raise ValueError(f"{what} {text!r} contains a NUL character")
    return text


def _fspath(path: object, what: str) -> str:
    if isinstance(path, bool) or not isinstance(path, (str, bytes, os.PathLike)):
        raise TypeError(f"{what} must be a str, bytes or os.PathLike, not {type(path).__name__}")
    p = os.fspath(path)
    if not p:
        raise ValueError(f"{what} is empty")
    return _cstr(os.fsdecode(p) if isinstance(p, bytes) else p, what)


class ProfileComparison(NamedTuple):
    """One codec's row of Profile.compare(), as `testdata profile --check
    --json` gives it: the data's ratio and compressor CPU ns per byte, the
    profile's, and error (ratio / profile_ratio - 1: 0.05, the data
    compresses 5% more) and cost (ns_per_byte / profile_ns_per_byte).  None
    where the profile has no figure: built-ins keep ratios only, a profile
    made without a fingerprint neither."""
    ratio: float
    ns_per_byte: float
    profile_ratio: Optional[float]
    profile_ns_per_byte: Optional[float]
    error: Optional[float]
    cost: Optional[float]


class Profile:
    """The statistics of a sample from which kind "like" generates data that
    compresses like it, in ratio and in speed (docs/format.md, "like").  It
    holds counts, never the sample's content.

        p = testdata.profile(["sample.db"])            # build from files
        p.save("sample.json")
        p = testdata.Profile.load("sample.json")
        data = testdata.generate("like", "64M", profile=p)
        testdata.generate("like", "1M", profile="html")  # a built-in, by name

    Immutable; safe to share between threads and streams.
    """

    def __init__(self, handle: capi.td_profile) -> None:
        """Wraps a capi handle; use load(), loads(), builtin() or profile()."""
        if not isinstance(handle, capi.td_profile):
            raise TypeError("use testdata.profile(), Profile.load(), loads() or builtin()")
        self._p = handle

    @classmethod
    def load(cls, path: Union[StrPath, bytes]) -> Profile:
        """A profile file, or a built-in profile by name (what --profile takes).
        OSError if the file cannot be read, ValueError if it is not a profile."""
        p = _fspath(path, "path")
        try:
            return cls(capi.td_py_profile_open(p)[1])
        except OSError as e:  # FileNotFoundError when neither a built-in nor a file
            if e.errno is None:
                raise
            raise type(e)(e.errno, e.strerror, p) from None
        except ValueError as e:
            raise ValueError(f"{p}: {e}") from None

    @classmethod
    def loads(cls, data: Union[bytes, bytearray, memoryview, str]) -> Profile:
        """A profile from its JSON form (ValueError with the reason if invalid)."""
        if isinstance(data, str):
            data = data.encode("utf-8")
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"data must be bytes or str, not {type(data).__name__}")
        return cls(capi.td_py_profile_loads(data)[1])

    @classmethod
    def builtin(cls, name: str) -> Profile:
        """A built-in profile by name (ValueError if there is none)."""
        if not isinstance(name, str):
            raise TypeError(f"name must be a str, not {type(name).__name__}")
        return cls(capi.td_py_profile_builtin(_cstr(name, "name"))[1])

    def save(self, path: StrPath) -> None:
        """Write the JSON form to path (atomically: a regular file is replaced
        only once complete)."""
        capi.td_py_profile_save_file(self._p, _fspath(path, "path"))

    def dumps(self) -> str:
        """The JSON form, as `testdata profile --dump` prints it."""
        return str(capi.td_py_profile_save(self._p)[1])

    @property
    def name(self) -> str:
        """The profile's name ("" if it has none; a built-in's name)."""
        return str(capi.td_profile_name(self._p) or "")

    @property
    def model(self) -> str:
        """How the profile models its sample: "lz" (matches and literals) or
        "context" (byte contexts; byte format 8)."""
        return str(capi.td_py_profile_model(self._p))

    @property
    def digest(self) -> str:
        """Hex BLAKE2b-256 of the model: two profiles with different digests
        never give the same bytes."""
        return str(capi.td_py_profile_digest(self._p)[1])

    def fingerprint(self) -> Dict[str, Tuple[float, float]]:
        """{codec: (ratio, CPU ns per byte)} of the sample, as measured when
        profiling; {} when not measured (built-ins, --no-fingerprint)."""
        out: Dict[str, Tuple[float, float]] = {}
        for i, c in enumerate(_CODECS):
            try:
                _, ratio, ns = capi.td_py_profile_fingerprint(self._p, i)
            except ValueError:
                return {}
            out[c] = (float(ratio), float(ns))
        return out

    def fidelity(self) -> Dict[str, float]:
        """{codec: error} as measured when this profile was built: how
        closely 256 KiB of its data (seed 0) compressed like the sample's
        first region (at most 1 MiB), as ratio / sample's ratio - 1, under
        "lz4 -1", "gzip -6", "lz4 -9" and "bzip2 -9" (the codecs by which
        the builder chose its model; `testdata profile` prints them).  {}
        when not measured: a profile loaded from a file or built in, or
        built with model="lz" and fingerprint=False."""
        out: Dict[str, float] = {}
        for i in range(capi.TD_PROFILE_FIDELITY_CODECS):
            try:
                _, err, _, label = capi.td_py_profile_fidelity(self._p, i)
            except ValueError:
                return {}
            out[str(label)] = float(err)
        return out

    def compare(self, source: Union[StrPath, bytes, bytearray, memoryview]) -> Dict[str, ProfileComparison]:
        """How closely data compresses like this profile's sample, codec by
        codec, as `testdata profile --check PROFILE FILE` prints it:
        {codec: ProfileComparison}.  source is a path or a bytes-like object; its
        first MiB is measured as a fingerprint is (in pieces of the sample's
        size when the sample was under a MiB), and no profile is built.
        Ratios are exact; ns_per_byte is a measurement.  OSError if the file
        cannot be read, ValueError if the data is empty."""
        if isinstance(source, (bytes, bytearray, memoryview)):
            _, text = capi.td_py_profile_compare_buffer(self._p, source)
        else:
            _, text = capi.td_py_profile_compare_file(self._p, _fspath(source, "source"))
        codecs = json.loads(text)["codecs"]
        return {c: ProfileComparison(**codecs[c]) for c in _CODECS}

    def __reduce__(self) -> Tuple[Any, Tuple[str]]:
        """Pickled as its JSON form (Dask and multiprocessing send profiles
        to workers); the model, so the bytes, are the same after loading."""
        return (Profile.loads, (self.dumps(),))

    def __repr__(self) -> str:
        return f"<testdata.Profile {self.name or '(unnamed)'} {self.digest[:16]}>"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Profile) and other.digest == self.digest

    def __hash__(self) -> int:
        return hash(self.digest)


def builtin_profiles() -> List[str]:
    """Names of the built-in profiles."""
    out: List[str] = []
    while True:
        n = capi.td_profile_builtin_name(len(out))
        if n is None:
            return out
        out.append(n)


def profile(paths: Union[StrPath, bytes, Iterable[Union[StrPath, bytes]]], *,
            sample_bytes: Optional[Union[int, str]] = None, fingerprint: bool = True,
            name: Optional[str] = None, threads: Union[int, str] = 1,
            model: str = "auto") -> Profile:
    """Build a Profile from samples: files (their bytes one after the other,
    as `testdata profile FILE...`), or bytes-like objects.  Memory stays
    bounded whatever their size; sample_bytes (an int, or a size such as
    "64M", as --sample) caps what is parsed (default 8 MiB, in 1 MiB regions
    spread over the input; rounded up to whole MiB).  threads: as
    `--threads` (0: all cores; at most 2 are used: the fingerprint is
    measured while the sample is parsed, then the candidate models two at a
    time; the profile does not depend on it).  model: "auto" (whichever of
    the two generates data closer to the sample), "lz" (matches and
    literals) or "context" (byte contexts), as `--model`."""
    items: List[object]
    if isinstance(paths, (str, bytes, bytearray, memoryview, os.PathLike)):
        items = [paths]
    else:
        items = list(paths)
    hint = 0
    for it in items:
        if isinstance(it, (bytes, bytearray, memoryview)):
            hint += memoryview(it).nbytes
        else:
            hint += os.path.getsize(_fspath(it, "path"))
    if name is not None and not isinstance(name, str):
        raise TypeError(f"name must be a str, not {type(name).__name__}")
    if not isinstance(model, str):
        raise TypeError(f"model must be a str, not {type(model).__name__}")
    from ._stream import _options, _size  # _stream imports this module
    sample = 0 if sample_bytes is None else _size(sample_bytes, "sample_bytes")
    t = _options(capi.TD_ZERO, 0, {"threads": threads}).threads
    b = capi.td_py_profile_builder_new(hint, sample_bytes is not None, sample,
                                       1 if fingerprint else 0, t, _cstr(name or "", "name:"),
                                       _cstr(model, "model:"))[1]
    for it in items:
        if isinstance(it, (bytes, bytearray, memoryview)):
            capi.td_profile_builder_update(b, it)
            continue
        with open(_fspath(it, "path"), "rb") as f:
            while True:
                chunk = f.read(_CHUNK)
                if not chunk:
                    break
                capi.td_profile_builder_update(b, chunk)
    return Profile(capi.td_profile_builder_finish(b)[1])
