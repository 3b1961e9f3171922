# Type stub of testdata.capi, the SWIG module over include/testdata.h
# (bindings/python/testdata.i).  tests/python/test_typing.py checks that it
# names exactly what the built module exports.
#
# Functions with pointer outputs return the status first and the outputs
# after it: rc, value = td_parse_size("1K").  At run time that sequence is a
# list; it is typed as a tuple here so each position keeps its type.
# Negative status codes raise (ValueError, OSError, MemoryError) with the
# code as .td_status; the td_verify family returns TD_EMISMATCH instead.
from typing import Optional, Tuple, Union
import os

from _typeshed import ReadableBuffer, WriteableBuffer

_Path = Union[str, bytes, os.PathLike[str], os.PathLike[bytes]]

TD_VERSION_MAJOR: int
TD_VERSION_MINOR: int
TD_VERSION_PATCH: int
TD_VERSION_STRING: str
TD_FORMAT_VERSION: int
TD_SIZE_UNBOUNDED: int
TD_PROFILE_FIDELITY_CODECS: int
TD_MODEL_FIDELITY_CODECS: int
TD_FIDELITY_NOTE_OFF: float

TD_OK: int
TD_DONE: int
TD_EINVAL: int
TD_ENOMEM: int
TD_EKIND: int
TD_EOPTION: int
TD_ERANGE: int
TD_EIO: int
TD_EMISMATCH: int
TD_ESYNTAX: int
TD_ECANCELED: int
TD_EUTF8: int
TD_ECORPUS: int
TD_EMODEL: int
TD_EMODELVERSION: int

TD_ZERO: int
TD_RANDOM: int
TD_TEXT: int
TD_COMPRESSIBLE: int
TD_KIND_COUNT: int
TD_ALG_CHACHA20: int
TD_ALG_FAST: int
TD_DEDUP_BLOCK_MIN: int
TD_DEDUP_BLOCK_MAX: int
TD_COMPRESS_BLOCK_MIN: int
TD_COMPRESS_BLOCK_MAX: int
TD_DEDUP_MAX_RATIO: float
TD_OPTION_UINT: int
TD_OPTION_SIZE: int
TD_OPTION_REAL: int
TD_OPTION_CHOICE: int
TD_OPTION_TEXT: int
TD_IO_IN_PLACE: int
TD_IO_NAMED_TEMP: int
TD_CODEC_GZIP: int
TD_CODEC_ZSTD: int
TD_CODEC_LZ4: int
TD_CODEC_XZ: int
TD_CODEC_COUNT: int
TD_ANALYZE_DEFAULT_SAMPLE: int
TD_ANALYZE_BLOCK: int
TD_ANALYZE_DEDUP_BLOCK: int
TD_TREE_MAX_DEPTH: int
TD_TREE_MAX_FANOUT: int
TD_TREE_PATH_MAX: int
TD_TREE_PROFILE_VERSION: int
TD_TREE_MISSING: int
TD_TREE_WRONG_SIZE: int
TD_TREE_CHANGED: int
TD_TREE_EXTRA: int
TD_TREE_UNREADABLE: int
TD_TREE_RESUME: int
TD_TREE_NO_EXTRA: int
TD_TREE_EXTRA_ONLY: int

class td_options:
    seed: int
    threads: int
    algorithm: int
    ratio: float
    dedup: float
    dedup_block: int
    compress_block: int
    thisown: bool
    def __init__(self) -> None: ...

class td_option_info:
    key: str
    type: int
    value_name: str
    help: str
    values: object
    range: str
    default_value: str
    kinds: int
    reserved: int
    thisown: bool

class td_verify_result:
    offset: int
    expected: int
    received: int
    compared: int
    mismatches: int
    first_mismatch: int
    missing: int
    extra: int
    extra_is_lower_bound: int
    status: int
    sampled: int
    sampled_agree: int
    chance: int
    thisown: bool

class td_io_options:
    flags: int
    reserved32: int
    progress: object
    ctx: object
    reserved: object
    thisown: bool
    def __init__(self) -> None: ...

class td_analyze_options:
    size_hint: int
    sample_bytes: int
    threads: int
    reserved32: int
    reserved: object
    thisown: bool
    def __init__(self) -> None: ...

class td_analysis:
    size: int
    sampled: int
    is_sampled: int
    reserved_int: int
    entropy: float
    ratio: object
    compressed: object
    verdict: str
    dedup_blocks: int
    dedup_unique: int
    dedup_ratio: float
    dedup_is_estimate: int
    synthetic: int
    cpu_ns: object
    mb_per_s: object
    reserved: object
    thisown: bool
    def __init__(self) -> None: ...

class td_stream:
    thisown: bool

class td_model_builder:
    thisown: bool

class td_verifier:
    thisown: bool

class td_tree:
    thisown: bool

class td_tree_entry:
    index: int
    size: int
    offset: int
    dir: int
    kind: int
    path: str
    thisown: bool

class td_tree_result:
    files: int
    bytes: int
    written: int
    skipped: int
    ok: int
    missing: int
    wrong_size: int
    changed: int
    extra: int
    unreadable: int
    error: int
    thisown: bool

def td_strerror(rc: int) -> str: ...
def td_version() -> str: ...
def td_options_init(o: td_options) -> None: ...
def td_options_set(o: td_options, kind: int, key: str, value: str) -> int: ...
def td_options_check(kind: int, o: Optional[td_options]) -> int: ...
def td_kind_from_name(name: str) -> Tuple[int, int]: ...
def td_kind_name(kind: int) -> Optional[str]: ...
def td_kind_is_text(kind: int) -> int: ...
def td_option_count() -> int: ...
def td_option_get(index: int) -> td_option_info: ...
def td_parse_size(text: str) -> Tuple[int, int]: ...
def td_stream_open(kind: int, size: int, o: Optional[td_options]) -> Tuple[int, td_stream]: ...
def td_stream_read(s: td_stream, buf: WriteableBuffer) -> Tuple[int, int]: ...
def td_stream_next(s: td_stream) -> Tuple[int, bytes]: ...
def td_stream_seek(s: td_stream, offset: int) -> int: ...
def td_stream_tell(s: td_stream) -> int: ...
def td_stream_size(s: td_stream) -> int: ...
def td_fill(kind: int, o: Optional[td_options], offset: int, buf: WriteableBuffer) -> int: ...
def td_verify(kind: int, o: Optional[td_options], offset: int,
              buf: ReadableBuffer) -> Tuple[int, int]: ...
def td_verify_count(kind: int, o: Optional[td_options], offset: int,
                    buf: ReadableBuffer) -> Tuple[int, int, int]: ...
def td_split_range(size: int, parts: int, align: int,
                   index: int) -> Tuple[int, int, int]: ...
def td_write_file_at(path: _Path, kind: int, offset: int, size: int,
                     o: Optional[td_options]) -> int: ...
def td_write_file(path: _Path, kind: int, size: int, o: Optional[td_options]) -> int: ...
def td_verifier_new(kind: int, o: Optional[td_options], offset: int,
                    expected_size: int) -> Tuple[int, td_verifier]: ...
def td_verifier_update(v: td_verifier, buf: ReadableBuffer) -> int: ...
def td_verifier_finish(v: td_verifier) -> Tuple[int, td_verify_result]: ...
def td_tree_count(t: td_tree) -> int: ...
def td_tree_total(t: td_tree) -> int: ...
def td_tree_kind(t: td_tree) -> int: ...
def td_tree_option_count() -> int: ...
def td_tree_option_get(index: int) -> td_option_info: ...

# Helpers of testdata.i (td_py_*), for the pure-Python package.
def td_fill_bytes(kind: int, o: Optional[td_options], offset: int,
                  length: int) -> Tuple[int, bytes]: ...
def td_stream_read_bytes(s: td_stream, length: int) -> Tuple[int, bytes]: ...
def td_py_fill(kind: int, o: Optional[td_options], offset: int, buf: WriteableBuffer) -> int: ...
def td_py_write_file(path: _Path, kind: int, offset: int, size: int,
                     o: Optional[td_options]) -> int: ...
def td_py_verify_file(path: _Path, kind: int, offset: int, size: int,
                      o: Optional[td_options]) -> Tuple[int, td_verify_result]: ...
def td_py_options_set(o: td_options, kind: int, key: str, value: str) -> Tuple[int, str]: ...
def td_py_options_check_output(o: td_options, path: _Path) -> Tuple[int, str]: ...
def td_py_kind_from_name(name: str) -> Tuple[int, int, str]: ...
def td_py_parse_size(text: str) -> Tuple[int, int, str]: ...
def td_py_verify_message(r: td_verify_result, name: str) -> Tuple[int, str]: ...
def td_py_shard_name(index: int) -> Tuple[int, str]: ...
def td_py_option_values(index: int) -> Tuple[int, str]: ...
def td_py_model_builder_new(threads: int) -> Tuple[int, td_model_builder]: ...
def td_py_model_builder_add_file(b: td_model_builder, path: _Path) -> Tuple[int, str]: ...
def td_py_model_builder_save(b: td_model_builder, path: _Path) -> Tuple[int, str]: ...
def td_py_model_builder_fidelity(b: td_model_builder, i: int) -> Tuple[int, float, float, str]: ...
def td_model_builder_note(b: td_model_builder) -> str: ...
def td_py_analyze_file(path: _Path, sample: int, threads: int) -> Tuple[int, str]: ...
def td_py_analyze_buffer(buf: ReadableBuffer, sample: int, threads: int) -> Tuple[int, str]: ...
def td_py_analyze_options_check(sample: int, threads: int) -> Tuple[int, str]: ...
# File trees: td_tree_set/prepare raise ValueError with the library's
# message; write, verify and scan return the status (TD_EIO, TD_EMISMATCH
# ...) with the result and the text (the path at fault, the findings one a
# line, the profile's JSON).
def td_py_tree_new() -> Tuple[int, td_tree]: ...
def td_py_tree_set(t: td_tree, key: str, value: str) -> Tuple[int, str]: ...
def td_py_tree_prepare(t: td_tree) -> Tuple[int, str]: ...
def td_py_tree_file(t: td_tree, index: int) -> Tuple[int, td_tree_entry]: ...
def td_py_tree_write(t: td_tree, path: _Path, flags: int, threads: int, first: int,
                     count: int) -> Tuple[int, td_tree_result, str]: ...
def td_py_tree_verify(t: td_tree, path: _Path, flags: int, threads: int, first: int,
                      count: int) -> Tuple[int, td_tree_result, str]: ...
def td_py_tree_scan(path: _Path) -> Tuple[int, str]: ...

# Profiles of kind like (testdata._profile).
TD_LIKE: int
TD_PROFILE_DEFAULT_SAMPLE: int
TD_PROFILE_MAX_JSON: int
TD_PROFILE_MODEL_AUTO: int
TD_PROFILE_MODEL_LZ: int
TD_PROFILE_MODEL_CONTEXT: int
TD_PROFILE_MODEL_COUNT: int

def td_profile_builtin_name(i: int) -> Optional[str]: ...
def td_profile_name(p: td_profile) -> Optional[str]: ...
def td_profile_builder_update(b: td_profile_builder, buf: ReadableBuffer) -> int: ...
def td_profile_builder_finish(b: td_profile_builder) -> Tuple[int, td_profile]: ...
def td_py_profile_open(name_or_path: str) -> Tuple[int, td_profile, str]: ...
def td_py_profile_builtin(name: str) -> Tuple[int, td_profile, str]: ...
def td_py_profile_loads(buf: ReadableBuffer) -> Tuple[int, td_profile, str]: ...
def td_py_profile_builder_new(size_hint: int, sample_given: int, sample: int, fingerprint: int,
                              threads: int, name: str, model: str) -> Tuple[int, td_profile_builder, str]: ...
def td_py_profile_save(p: td_profile) -> Tuple[int, str]: ...
def td_py_profile_save_file(p: td_profile, path: str) -> int: ...
def td_py_profile_fingerprint(p: td_profile, codec: int) -> Tuple[int, float, float]: ...
def td_py_profile_fidelity(p: td_profile, i: int) -> Tuple[int, float, float, str]: ...
def td_py_profile_compare_file(p: td_profile, path: str) -> Tuple[int, str]: ...
def td_py_profile_compare_buffer(p: td_profile, buf: ReadableBuffer) -> Tuple[int, str]: ...
def td_py_profile_digest(p: td_profile) -> Tuple[int, str]: ...
def td_py_profile_model(p: td_profile) -> str: ...
def td_py_options_set_profile(o: td_options, p: Optional[td_profile]) -> None: ...

class td_profile:
    thisown: bool

class td_profile_builder:
    thisown: bool
