"""`--compress-block` of compressible end to end through the CLI: gen,
verify, with --dedup, seeking, help, and clear errors."""
import zlib

import pytest


def pieces_ratio(data, block):
    """Raw deflate -6 per independent block-byte piece, as a file system does."""
    out = 0
    for i in range(0, len(data), block):
        c = zlib.compressobj(6, zlib.DEFLATED, -15)
        out += len(c.compress(data[i:i + block]) + c.flush())
    return len(data) / out


def test_gen_verify_and_ratio_per_piece(run, tmp_path):
    f = tmp_path / "r3"
    run("gen", "compressible", "2M", "--ratio", "3", "--compress-block", "4K", "--seed", "9",
        "-o", f, check=True)
    data = f.read_bytes()
    assert len(data) == 2 << 20
    # Calibrated for 4 KiB pieces (docs/format.md, "Pieces"); the stream table
    # misses there (it is made for long windows).
    assert abs(pieces_ratio(data, 4096) / 3 - 1) < 0.05
    plain = run("gen", "compressible", "2M", "--ratio", "3", "--seed", "9", check=True).stdout
    assert plain != data
    assert pieces_ratio(plain, 4096) < 3 * 0.9
    run("verify", "compressible", "2M", "--ratio", "3", "--compress-block", "4K", "--seed", "9",
        f, check=True)
    r = run("verify", "compressible", "2M", "--ratio", "3", "--seed", "9", f)
    assert r.returncode == 1


@pytest.mark.parametrize("cb", ["512", "2K", "16K", "64K", "1M"])
def test_seek_and_dedup(run, cb):
    args = ["compressible", "--ratio", "4", "--compress-block", cb, "--seed", "3"]
    whole = run("gen", args[0], "300K", *args[1:], check=True).stdout
    part = run("gen", args[0], "100000", *args[1:], "--offset", "12345", check=True).stdout
    assert part == whole[12345:112345]
    d = run("gen", args[0], "256K", *args[1:], "--dedup", "4", check=True).stdout
    blocks = [d[i:i + 4096] for i in range(0, len(d), 4096)]
    assert len(blocks) / len(set(blocks)) == pytest.approx(4, rel=0.02)
    run("verify", args[0], "256K", *args[1:], "--dedup", "4", input=d, check=True)


@pytest.mark.parametrize("value", ["3000", "256", "2M", "4G", "12K", "x"])
def test_bad_values(run, value):
    r = run("gen", "compressible", "1K", "--compress-block", value)
    assert r.returncode == 2
    err = r.stderr.decode()
    assert "--compress-block" in err and value in err
    assert "a power of two from 512 to 1M" in err
    # 3000 and 12K are inside the bounds: "out of range" misled
    assert ("not a power of two" in err) == (value in ("3000", "12K")), err
    assert r.stdout == b""


def test_other_kinds_refuse(run):
    for kind in ("random", "text", "zero"):
        r = run("gen", kind, "1K", "--compress-block", "4K")
        assert r.returncode == 2
        assert "does not apply to kind %s" % kind in r.stderr.decode()


def test_help_lists_it(run):
    out = run("gen", "--help", check=True).stdout.decode()
    assert "--compress-block" in out
