"""`testdata verify`: identical, differing, short and long inputs; options; errors."""
import re
import subprocess

import pytest


@pytest.fixture
def data(run, tmp_path):
    """A 3 MiB random file (seed 7) and its bytes."""
    path = tmp_path / "d.bin"
    assert run("gen", "random", "3M", "--seed", 7, "-o", path).returncode == 0
    return path, path.read_bytes()


def test_identical_file_and_stdin(run, data):
    path, blob = data
    for args, inp in [((path,), None), (("-",), blob), ((), blob)]:
        r = run("verify", "random", "3M", "--seed", 7, *args, input=inp)
        assert r.returncode == 0, r.stderr
        assert r.stdout == b"" and r.stderr == b""  # silent when stderr is not a terminal


def test_flipped_byte(run, data, tmp_path):
    path, blob = data
    bad = bytearray(blob)
    bad[123457] ^= 0x01
    f = tmp_path / "bad.bin"
    f.write_bytes(bad)
    r = run("verify", "random", "3M", "--seed", 7, f)
    assert r.returncode == 1
    msg = r.stderr.decode()
    assert "first difference at byte 123457" in msg
    assert "1 differing byte " in msg
    assert "short" not in msg and "long" not in msg
    assert str(f) in msg


def test_several_differences_counted_across_chunks(run, data):
    _, blob = data
    bad = bytearray(blob)
    for off in (5, 6, 1 << 20, 3 * (1 << 20) - 1):
        bad[off] ^= 0xFF
    r = run("verify", "random", "3M", "--seed", 7, input=bytes(bad))
    assert r.returncode == 1
    assert b"first difference at byte 5," in r.stderr
    assert b"4 differing bytes in 3145728 compared" in r.stderr


def test_wrong_seed_differs(run, data):
    path, _ = data
    r = run("verify", "random", "3M", "--seed", 8, path)
    assert r.returncode == 1
    assert b"first difference at byte 0" in r.stderr


def test_short_input(run, data):
    _, blob = data
    r = run("verify", "random", "3M", "--seed", 7, input=blob[:1000])
    assert r.returncode == 1
    assert b"is short: 1000 of 3145728 bytes, 3144728 missing" in r.stderr
    assert b"differ" not in r.stderr


def test_short_input_with_difference(run, data):
    _, blob = data
    bad = bytearray(blob[:5000])
    bad[10] ^= 1
    r = run("verify", "random", "3M", "--seed", 7, input=bytes(bad))
    assert r.returncode == 1
    assert b"first difference at byte 10" in r.stderr
    assert b"is short: 5000 of" in r.stderr


def test_long_input_file_is_exact(run, data):
    path, _ = data
    r = run("verify", "random", "2M", "--seed", 7, path)
    assert r.returncode == 1
    assert b"is long: more than 2097152 bytes (1048576 extra)" in r.stderr
    assert b"differ" not in r.stderr


def test_long_input_pipe(run, data):
    _, blob = data
    r = run("verify", "random", "1M", "--seed", 7, input=blob)
    assert r.returncode == 1
    assert b"is long: more than 1048576 bytes (at least" in r.stderr


def test_empty_input(run):
    assert run("verify", "zero", "0", input=b"").returncode == 0
    r = run("verify", "zero", "10", input=b"")
    assert r.returncode == 1 and b"is short: 0 of 10 bytes" in r.stderr


def test_offset(run, data):
    _, blob = data
    part = blob[1000:1000 + 70000]
    assert run("verify", "random", 70000, "--seed", 7, "--offset", 1000, input=part).returncode == 0
    bad = bytearray(part)
    bad[99] ^= 4
    r = run("verify", "random", 70000, "--seed", 7, "--offset", 1000, input=bytes(bad))
    assert r.returncode == 1
    assert b"first difference at byte 99 (stream offset 1099)" in r.stderr


@pytest.mark.parametrize("extra", [[], ["--threads", "2"], ["--threads", "0"],
                                   ["--algorithm", "fast"], ["--algorithm", "fast", "--threads", "3"]])
def test_pipeline_gen_verify(cli, extra):
    opts = " ".join(extra)
    p = subprocess.run(f"'{cli}' gen random 20M --seed 3 {opts} | '{cli}' verify random 20M --seed 3 {opts}",
                       shell=True, capture_output=True)
    assert p.returncode == 0, p.stderr
    assert p.stderr == b""


def test_zero_kind_and_unbounded_size(cli):
    p = subprocess.run(f"'{cli}' gen zero 5M | '{cli}' verify zero inf", shell=True,
                       capture_output=True)
    assert p.returncode == 0, p.stderr
    p = subprocess.run(f"'{cli}' gen random 5M | '{cli}' verify zero inf", shell=True,
                       capture_output=True)
    assert p.returncode == 1 and b"first difference at byte 0" in p.stderr


def test_seed_random_cannot_be_verified(run):
    r = run("verify", "random", "1K", "--seed", "random", input=b"")
    assert r.returncode == 2
    assert b"--seed random" in r.stderr
    assert r.stderr.count(b"\n") == 1


def test_missing_file_exit_1(run, tmp_path):
    r = run("verify", "random", "1K", tmp_path / "nope")
    assert r.returncode == 1
    assert b"cannot open" in r.stderr and b"No such file" in r.stderr
    assert r.stderr.count(b"\n") == 1


def test_read_error_exit_1(run, tmp_path):
    r = run("verify", "random", "1K", tmp_path)  # a directory: read() fails with EISDIR
    assert r.returncode == 1
    assert b"read error" in r.stderr and b"Is a directory" in r.stderr


def test_too_many_arguments(run, data):
    path, _ = data
    r = run("verify", "random", "3M", path, path)
    assert r.returncode == 2 and b"unexpected argument" in r.stderr


def test_progress_and_summary(run, data):
    path, _ = data
    r = run("verify", "random", "3M", "--seed", 7, "--progress", path)
    assert r.returncode == 0
    err = r.stderr.decode()
    assert re.search(r"verify 3\.0 MiB / 3\.0 MiB \(100%\)", err), err
    assert re.search(r"verified 3145728 bytes \(3\.0 MiB\) in [0-9.]+ s, .*GB/s", err), err
    r = run("verify", "random", "3M", "--seed", 7, "--progress", "--quiet", path)
    assert r.returncode == 0 and r.stderr == b""
