"""testdata.analyze(): the library's analysis as a dict with the keys of
`testdata analyze --json`, for files and for data in memory."""
import array
import json
import os
import subprocess

import pytest

import testdata


def test_file_equals_cli_json(cli, tmp_path):
    p = testdata.write(tmp_path / "c.bin", "compressible", "3M", seed=2, dedup=2)
    cli_doc = json.loads(subprocess.run([cli, "analyze", "--json", str(p)], capture_output=True,
                                        check=True).stdout)[0]
    assert testdata.analyze(p) == cli_doc
    assert testdata.analyze(str(p)) == cli_doc
    assert testdata.analyze(p.read_bytes()) == dict(cli_doc, file=None)  # bytes are data
    assert cli_doc["dedup"]["ratio"] == 2 and cli_doc["file"] == str(p)
    sampled = json.loads(subprocess.run([cli, "analyze", "--json", "--sample", "1M", str(p)],
                                        capture_output=True, check=True).stdout)[0]
    assert testdata.analyze(p, sample="1M", threads=2) == sampled
    assert sampled["sampled"] is True and sampled["sampled_bytes"] == 1 << 20


def test_buffer(tmp_path):
    data = testdata.generate("random", "1M", seed=3, dedup=4)
    a = testdata.analyze(data)
    assert a["file"] is None and a["size"] == 1 << 20
    assert a["dedup"] == {"block": 4096, "blocks": 256, "unique": 64, "ratio": 4,
                          "estimated": False}
    assert a["verdict"].startswith("compresses") or a["verdict"].startswith("incompressible")
    # any buffer, any layout of the same bytes
    assert testdata.analyze(bytearray(data)) == a
    assert testdata.analyze(memoryview(data)) == a
    assert testdata.analyze(array.array("I", data)) == a
    # the file gives the same numbers
    p = testdata.write(tmp_path / "f", "random", "1M", seed=3, dedup=4)
    assert dict(testdata.analyze(p), file=None) == a
    z = testdata.analyze(b"\0" * 100000)
    assert z["entropy"] == 0 and z["ratios"]["gzip"] > 100 and z["dedup"]["ratio"] == 24
    assert testdata.analyze(b"")["verdict"].startswith("empty")


def test_non_utf8_name(tmp_path):
    name = os.fsdecode(b"\xff\xfe.bin")
    p = tmp_path / name
    p.write_bytes(b"abc")
    assert testdata.analyze(p)["file"] == str(p)


def test_errors():
    with pytest.raises(FileNotFoundError):
        testdata.analyze("/nonexistent/file")
    with pytest.raises(TypeError):
        testdata.analyze(12)
    with pytest.raises(ValueError, match="bad sample"):
        testdata.analyze(b"x", sample=0)
