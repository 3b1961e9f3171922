"""testdata.analyze(): the library's analysis as a dict with the keys of
`testdata analyze --json`, for files and for data in memory."""
import array
import json
import os
import subprocess

import pytest

import testdata


def untimed(doc):
    """The analysis without the CPU-time speeds, which vary from run to run."""
    return {k: v for k, v in doc.items() if k != "mb_per_s"}


def test_file_equals_cli_json(cli, tmp_path):
    p = testdata.write(tmp_path / "c.bin", "compressible", "3M", seed=2, dedup=2)
    cli_doc = json.loads(subprocess.run([cli, "analyze", "--json", str(p)], capture_output=True,
                                        check=True).stdout)[0]
    assert untimed(testdata.analyze(p)) == untimed(cli_doc)
    assert untimed(testdata.analyze(str(p))) == untimed(cli_doc)
    # bytes are data
    assert untimed(testdata.analyze(p.read_bytes())) == dict(untimed(cli_doc), file=None)
    assert cli_doc["dedup"]["ratio"] == 2 and cli_doc["file"] == str(p)
    sampled = json.loads(subprocess.run([cli, "analyze", "--json", "--sample", "1M", str(p)],
                                        capture_output=True, check=True).stdout)[0]
    assert untimed(testdata.analyze(p, sample="1M", threads=2)) == untimed(sampled)
    assert sampled["sampled"] is True and sampled["sampled_bytes"] == 1 << 20


def test_buffer(tmp_path):
    data = testdata.generate("random", "1M", seed=3, dedup=4)
    a = untimed(testdata.analyze(data))
    assert a["file"] is None and a["size"] == 1 << 20
    assert a["dedup"] == {"block": 4096, "blocks": 256, "unique": 64, "ratio": 4,
                          "estimated": False}
    assert a["verdict"].startswith("compresses") or a["verdict"].startswith("incompressible")
    # any buffer, any layout of the same bytes
    assert untimed(testdata.analyze(bytearray(data))) == untimed(a)
    assert untimed(testdata.analyze(memoryview(data))) == untimed(a)
    assert untimed(testdata.analyze(array.array("I", data))) == untimed(a)
    # the file gives the same numbers
    p = testdata.write(tmp_path / "f", "random", "1M", seed=3, dedup=4)
    assert dict(untimed(testdata.analyze(p)), file=None) == untimed(a)
    z = untimed(testdata.analyze(b"\0" * 100000))
    assert z["entropy"] == 0 and z["ratios"]["gzip"] > 100 and z["dedup"]["ratio"] == 24
    assert untimed(testdata.analyze(b""))["verdict"].startswith("empty")


def test_non_utf8_name(tmp_path):
    name = os.fsdecode(b"\xff\xfe.bin")
    p = tmp_path / name
    p.write_bytes(b"abc")
    assert untimed(testdata.analyze(p))["file"] == str(p)


def test_errors():
    with pytest.raises(FileNotFoundError):
        untimed(testdata.analyze("/nonexistent/file"))
    with pytest.raises(TypeError):
        untimed(testdata.analyze(12))
    with pytest.raises(ValueError, match="bad sample size 0: 1 byte to"):
        untimed(testdata.analyze(b"x", sample=0))
    with pytest.raises(ValueError, match="bad sample size inf"):
        untimed(testdata.analyze(b"x", sample="inf"))


def test_speed_and_synthetic():
    a = testdata.analyze(testdata.generate("compressible", "2M", ratio=4))
    b = testdata.analyze(testdata.generate("text", "2M"))
    assert a["synthetic"] and not b["synthetic"]
    assert "like synthetic data" in a["verdict"]
    assert a["mb_per_s"]["lz4"] > a["mb_per_s"]["xz"] > 0
