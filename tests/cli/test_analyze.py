"""`testdata analyze`: entropy, ratios, sampling, verdict, --json, errors."""
import json

import pytest


@pytest.fixture
def files(run, tmp_path):
    rnd, zero = tmp_path / "random.bin", tmp_path / "zero.bin"
    assert run("gen", "random", "2M", "--seed", 1, "-o", rnd).returncode == 0
    assert run("gen", "zero", "2M", "-o", zero).returncode == 0
    return rnd, zero


def test_text_report(run, files):
    rnd, zero = files
    r = run("analyze", rnd, zero)
    assert r.returncode == 0, r.stderr
    out = r.stdout.decode()
    first, second = out.split("\n\n")
    assert first.startswith(str(rnd))
    assert "size        2097152 bytes (2.0 MiB)" in first
    assert "entropy     8.000 bits/byte" in first
    for label in ("gzip -6", "zstd -3", "lz4", "xz -6"):
        assert label in first and label in second
    assert "verdict     incompressible: transfer speed reflects the raw link" in first
    assert "entropy     0.000 bits/byte" in second
    assert "verdict     compresses " in second and "scp -C" in second and "faster" in second
    assert "sampled" not in out  # 2 MiB is below the sample budget
    assert r.stderr == b""


def test_json(run, files):
    rnd, zero = files
    r = run("analyze", "--json", rnd, zero)
    assert r.returncode == 0
    doc = json.loads(r.stdout)
    assert [d["file"] for d in doc] == [str(rnd), str(zero)]
    a, b = doc
    assert a["size"] == b["size"] == 2 << 20
    assert a["entropy"] > 7.99 and b["entropy"] == 0
    assert set(a["ratios"]) == {"gzip", "zstd", "lz4", "xz"}
    for codec, ratio in a["ratios"].items():
        assert 0.98 < ratio < 1.01, codec
        assert a["compressed"][codec] > 2_000_000
    assert b["ratios"]["gzip"] > 500 and b["ratios"]["zstd"] > 5000
    assert a["sampled"] is False and a["sampled_bytes"] == a["size"]
    assert a["verdict"].startswith("incompressible")
    assert b["verdict"].startswith("compresses")


def test_stdin(run):
    r = run("analyze", "--json", "-", input=b"ab" * 50000)
    doc = json.loads(r.stdout)
    assert doc[0]["file"] == "-" and doc[0]["size"] == 100000
    assert abs(doc[0]["entropy"] - 1.0) < 1e-9
    r = run("analyze", "-", input=b"")
    assert r.returncode == 0 and b"stdin" in r.stdout and b"verdict     empty" in r.stdout


def test_large_input_is_sampled(run, tmp_path):
    big = tmp_path / "big.bin"
    assert run("gen", "random", "12M", "-o", big).returncode == 0
    r = run("analyze", "--sample", "4M", big)
    assert r.returncode == 0
    assert b"sampled     ratios from 4.0 MiB of 12.0 MiB" in r.stdout
    doc = json.loads(run("analyze", "--json", "--sample", "4M", big).stdout)[0]
    assert doc["sampled"] is True and doc["sampled_bytes"] == 4 << 20 and doc["size"] == 12 << 20
    # the default budget (8 MiB) samples too; stdin (unknown size) as well
    assert json.loads(run("analyze", "--json", big).stdout)[0]["sampled"] is True
    doc = json.loads(run("analyze", "--json", "--sample", "4M", "-",
                         input=big.read_bytes()).stdout)[0]
    assert doc["sampled"] is True and doc["sampled_bytes"] <= 4 << 20


def test_compressible_text_verdict(run, tmp_path):
    f = tmp_path / "t.txt"
    f.write_bytes(b"the quick brown fox jumps over the lazy dog\n" * 20000)
    doc = json.loads(run("analyze", "--json", f).stdout)[0]
    assert doc["ratios"]["gzip"] > 50
    assert doc["verdict"].startswith("compresses")


def test_missing_file_others_still_reported(run, files, tmp_path):
    rnd, _ = files
    r = run("analyze", tmp_path / "nope", rnd)
    assert r.returncode == 1
    assert b"cannot open" in r.stderr and b"nope" in r.stderr
    assert b"incompressible" in r.stdout
    r = run("analyze", "--json", tmp_path / "nope", rnd)
    assert r.returncode == 1
    doc = json.loads(r.stdout)
    assert doc[0]["error"] == "No such file or directory"
    assert doc[1]["verdict"].startswith("incompressible")


def test_read_error(run, tmp_path):
    r = run("analyze", tmp_path)
    assert r.returncode == 1 and b"Is a directory" in r.stderr


@pytest.mark.parametrize("args,needle", [
    (["analyze"], b"needs FILE"),
    (["analyze", "--sample", "0", "-"], b"bad sample size 0: 1 byte to 2^64-2"),
    (["analyze", "--sample", "inf", "-"], b"bad sample size inf"),
    (["analyze", "--sample", "1Q", "-"], b"bad --sample"),
    (["analyze", "--bogus", "-"], b"unknown option '--bogus'"),
    (["analyze", "--json=1", "-"], b"takes no value"),
    (["analyze", "-o", "x", "-"], b"unknown option '-o'"),
])
def test_usage_errors(run, args, needle):
    r = run(*args, input=b"")
    assert r.returncode == 2
    assert needle in r.stderr
    assert r.stderr.count(b"\n") == 1


def test_threads_do_not_change_output(run, tmp_path):
    big = tmp_path / "big.bin"
    assert run("gen", "random", "6M", "-o", big).returncode == 0
    outs = {json.dumps([{k: v for k, v in d.items() if k != "mb_per_s"}
                        for d in json.loads(run("analyze", "--json", "--sample", "3M", "--threads",
                                                t, big, "-", input=b"x" * 5_000_000).stdout)])
            for t in ("1", "2", "0")}
    assert len(outs) == 1
    for bad in ("x", "-1", "", "99999999999"):
        r = run("analyze", "--threads", bad, "-", input=b"")
        assert r.returncode == 2 and b"--threads" in r.stderr


def test_speed_and_synthetic_verdict(run):
    """Each codec's MB/s is shown; data with a flat codec fingerprint (lz4 as
    good as gzip) is called synthetic, English-like text is not."""
    comp = run("gen", "compressible", "4M", "--ratio", "3").stdout
    text = run("gen", "text", "4M").stdout
    out = run("analyze", "-", input=comp).stdout.decode()
    assert "like synthetic data" in out and "too good" in out
    for label in ("gzip -6", "zstd -3", "lz4", "xz -6"):
        [line] = [ln for ln in out.splitlines() if ln.strip().startswith(label + " ")]
        assert "MB/s" in line
    a = json.loads(run("analyze", "--json", "-", input=comp).stdout)[0]
    b = json.loads(run("analyze", "--json", "-", input=text).stdout)[0]
    assert a["synthetic"] is True and b["synthetic"] is False
    assert "synthetic" not in b["verdict"]
    for doc in (a, b):
        assert set(doc["mb_per_s"]) == {"gzip", "zstd", "lz4", "xz"}
        assert all(v > 0 for v in doc["mb_per_s"].values())
        # lz4 is the fastest and xz the slowest compressor, on any data
        assert doc["mb_per_s"]["lz4"] > doc["mb_per_s"]["gzip"] > doc["mb_per_s"]["xz"]
    # random data is incompressible, not synthetic-compressible
    rnd = json.loads(run("analyze", "--json", "-", input=run("gen", "random", "2M").stdout)
                     .stdout)[0]
    assert rnd["synthetic"] is False


def test_help_says_what_is_reported(run):
    """--help named the ratios only, though every codec line has its MB/s and
    the verdict warns about synthetic data (as the man page says)."""
    h = run("analyze", "--help", check=True).stdout.decode()
    out = run("analyze", "-", input=bytes(1 << 16), check=True).stdout.decode()
    assert "MB/s" in out and "MB/s" in h and "synthetic" in h
