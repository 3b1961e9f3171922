"""`testdata gen`: output, ranges, size parsing and usage errors."""
import hashlib
import os
import subprocess

import pytest


def sha(b):
    return hashlib.sha256(b).hexdigest()


def test_gen_random_default_is_chacha20_seed0(run):
    r = run("gen", "random", "1M")
    assert r.returncode == 0, r.stderr
    assert len(r.stdout) == 1 << 20
    # Golden vector shared with tests/c/test_core.c.
    assert sha(r.stdout) == "163f84efa4eb786a4a211ca8fb2db0aa8f29c6f84d1837251692fb2f45a59f73"
    assert r.stderr == b""


def test_gen_zero(run):
    r = run("gen", "zero", "100K")
    assert r.returncode == 0
    assert r.stdout == bytes(100 * 1024)


@pytest.mark.parametrize("size,n", [("0", 0), ("1", 1), ("1K", 1024), ("1KiB", 1024),
                                    ("1KB", 1000), ("2MB", 2_000_000), ("1M", 1 << 20)])
def test_size_suffixes(run, size, n):
    r = run("gen", "zero", size)
    assert r.returncode == 0, r.stderr
    assert len(r.stdout) == n


def test_offset_ranges_concatenate(run):
    whole = run("gen", "random", "300000", "--seed", 5).stdout
    parts = b"".join(run("gen", "random", n, "--seed", 5, "--offset", off).stdout
                     for off, n in [(0, 1000), (1000, 99000), (100000, 200000)])
    assert parts == whole


def test_prefix_does_not_depend_on_size(run):
    a = run("gen", "random", "5000", "--algorithm", "fast").stdout
    b = run("gen", "random", "1M", "--algorithm", "fast").stdout
    assert b[:5000] == a


def test_threads_do_not_change_bytes(run):
    base = run("gen", "random", "9M", "--seed", 3).stdout
    for t in ("0", "2", "5"):
        assert run("gen", "random", "9M", "--seed", 3, "--threads", t).stdout == base


def test_output_file(run, tmp_path):
    out = tmp_path / "f.bin"
    r = run("gen", "random", "3M", "--seed", "9", "-o", out)
    assert r.returncode == 0 and r.stdout == b""
    assert out.read_bytes() == run("gen", "random", "3M", "--seed", "9").stdout


@pytest.mark.parametrize("args,needle", [
    (["gen", "random", "10Q"], b"bad size '10Q'"),
    (["gen", "random", "-5"], b"bad size"),
    (["gen", "random", ""], b"bad size"),
    (["gen", "random", "18446744073709551616"], b"out of range"),
    (["gen", "nosuch", "1K"], b"unknown kind 'nosuch'"),
    (["gen", "random"], b"needs KIND and SIZE"),
    (["gen", "random", "1K", "--bogus", "1"], b"bogus"),
    (["gen", "random", "1K", "--seed", "x"], b"--seed"),
    (["gen", "random", "1K", "--algorithm", "md5"], b"--algorithm"),
    (["gen", "zero", "1K", "--algorithm", "fast"], b"does not apply"),
    (["gen", "random", "1K", "--offset", "18446744073709551615"], b"past the end"),
    (["frobnicate"], b"unknown command"),
])
def test_usage_errors_exit_2(run, args, needle):
    r = run(*args)
    assert r.returncode == 2
    assert r.stdout == b""
    assert needle in r.stderr
    assert r.stderr.count(b"\n") == 1, r.stderr


def test_help_and_version(run):
    assert run("--help").returncode == 0
    assert b"gen" in run("gen", "--help").stdout
    v = run("--version")
    assert v.returncode == 0 and v.stdout.startswith(b"testdata ")


def test_libcrypto_only_for_chacha20(run):
    """libcrypto (ChaCha20 for random) is opened once the process has made
    1 MiB of chacha20 with libsodium, not at start-up, which it would slow
    by some 3 ms, nor for small outputs, which opening it would slow by
    some 7 ms; its bytes are libsodium's.  (TD_HAVE_OPENSSL: set by CTest
    when the build uses it.)"""
    env = dict(os.environ, LD_DEBUG="files")
    for args in (["--version"], ["gen", "zero", "1K"], ["gen", "random", "1K", "--algorithm", "fast"],
                 ["gen", "random", "1K"], ["gen", "random", "1000K"]):
        r = run(*args, env=env)
        assert r.returncode == 0 and b"libcrypto" not in r.stderr, args
    r = run("gen", "random", "3M", env=env)
    assert r.returncode == 0
    assert (b"libcrypto.so.3" in r.stderr) == bool(os.environ.get("TD_HAVE_OPENSSL"))
    for size, digest in (("1M", "d248f49d9d804cc861c1554b72f1d971e93b26a2387351d657a98f23560897c3"),
                         ("3M", None)):
        out = run("gen", "random", size, "--seed", "3").stdout
        if digest:
            assert hashlib.sha256(out).hexdigest() == digest
        else:  # libsodium's first MiB, then libcrypto's: one keystream
            assert out[:1 << 20] == run("gen", "random", "1M", "--seed", "3").stdout
            assert out[2 << 20:] == run("gen", "random", "1M", "--seed", "3", "--offset", "2M").stdout


def test_unwritable_output_exit_1(run):
    r = run("gen", "zero", "1K", "-o", "/nonexistent-dir/x")
    assert r.returncode == 1
    assert b"/nonexistent-dir/x" in r.stderr


def test_closed_pipe_is_quiet(cli):
    p = subprocess.run(f"'{cli}' gen random 1G | head -c 10 | wc -c", shell=True,
                       capture_output=True)
    assert p.stdout.strip() == b"10"
    assert p.stderr == b""




def test_bad_size_lists_the_valid_forms(run):
    """A size the parser refuses is named with the forms it takes (it said
    only "malformed size or value")."""
    for size in ("1.5G", "10Q", "1K5"):
        r = run("gen", "zero", size)
        assert r.returncode == 2 and r.stdout == b"", r.stderr
        assert f"bad size '{size}': not a size: a whole number of bytes".encode() in r.stderr
        assert b"KB MB GB" in r.stderr and b"KiB" in r.stderr, r.stderr
    r = run("gen", "zero", "99999999999999999999")
    assert r.returncode == 2 and b"more than 2^64-1 bytes" in r.stderr, r.stderr


def test_bad_size_option_lists_the_valid_forms(run, tmp_path):
    """A size option's value that is not a size gets the same explanation
    as a SIZE argument, then the option's range, whole (it said only "not
    a size"; the CLI's 256-byte buffer would have cut the longer line)."""
    r = run("gen", "compressible", "1M", "--compress-block", "x")
    assert r.returncode == 2 and r.stdout == b"", r.stderr
    assert (b"bad value 'x' for --compress-block: not a size: a whole number of bytes, with an "
            b"optional suffix K M G T P E (powers of 1024; also KiB MiB ...), KB MB GB TB PB EB "
            b"(powers of 1000) or b (512), or inf (valid: a power of two from 512 to 1M, or 0 "
            b"(not set: tuned for whole streams))") in r.stderr, r.stderr
    r = run("tree", "gen", tmp_path / "t", "--total", "1.5G")
    assert r.returncode == 2 and b"bad value '1.5G' for --total: not a size: a whole number" in r.stderr
    assert b"or inf (valid: 0 to 2^64-2)" in r.stderr, r.stderr
