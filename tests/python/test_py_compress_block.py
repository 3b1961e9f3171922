"""compress_block through Python: generate, verify, streams, errors, and the
same bytes as the CLI."""
import zlib

import pytest

import testdata
from testdata import MismatchError


def test_same_bytes_as_cli(run):
    b = testdata.generate("compressible", "1M", ratio=3, compress_block="4K", seed=5)
    assert b == run("gen", "compressible", "1M", "--ratio", "3", "--compress-block", "4K",
                    "--seed", "5", check=True).stdout
    assert b == testdata.generate("compressible", 1 << 20, ratio=3, compress_block=4096, seed=5)
    assert b != testdata.generate("compressible", "1M", ratio=3, seed=5)


def test_ratio_per_piece_and_verify():
    b = testdata.generate("compressible", "2M", ratio=5, compress_block=4096, seed=1)
    out = 0
    for i in range(0, len(b), 4096):
        c = zlib.compressobj(6, zlib.DEFLATED, -15)
        out += len(c.compress(b[i:i + 4096]) + c.flush())
    assert len(b) / out == pytest.approx(5, rel=0.05)
    testdata.verify(b, "compressible", len(b), ratio=5, compress_block=4096, seed=1)
    with pytest.raises(MismatchError):
        testdata.verify(b, "compressible", len(b), ratio=5, seed=1)


def test_dedup_and_offset():
    whole = testdata.generate("compressible", "256K", ratio=2, compress_block="1K", dedup=2)
    part = testdata.generate("compressible", 5000, ratio=2, compress_block="1K", dedup=2,
                             offset=70001)
    assert part == whole[70001:75001]


@pytest.mark.parametrize("bad", [3000, "3000", 256, "2M", 1 << 21])
def test_bad_values(bad):
    with pytest.raises(ValueError, match="compress.block"):
        testdata.generate("compressible", 10, compress_block=bad)


def test_other_kinds_refuse():
    with pytest.raises(ValueError, match="does not apply"):
        testdata.generate("random", 10, compress_block=4096)


def test_plugin_fixtures(testdata_file, testdata_stream):
    p = testdata_file("compressible", "64K", ratio=4, compress_block="2K", seed=8)
    want = testdata.generate("compressible", "64K", ratio=4, compress_block=2048, seed=8)
    assert p.read_bytes() == want
    with testdata_stream("compressible", "64K", ratio=4, compress_block="2K", seed=8) as s:
        assert s.read() == want
