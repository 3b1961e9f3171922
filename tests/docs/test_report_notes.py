"""docs/benchmarks.md is written by tests/bench/report.py, and figures
measured by other commands live in its notes blocks: a rewrite must keep
every block, each in its section, and drop nothing else by accident."""
import importlib.util
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def report():
    pytest.importorskip("matplotlib")
    spec = importlib.util.spec_from_file_location("report", ROOT / "tests" / "bench" / "report.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_committed_report_has_its_notes():
    notes = report().kept_notes(ROOT / "docs" / "benchmarks.md")
    assert {"compressible", "text", "trees"} <= set(notes)


def test_rewrite_keeps_notes_in_their_sections(tmp_path):
    r = report()
    out = tmp_path / "benchmarks.md"
    out.write_text("# old\n<!-- notes: text -->\nmodel build: 34 MB/s\n<!-- /notes -->\n"
                   "<!-- notes: gone -->\na section this run does not write\n<!-- /notes -->\n")
    core = {"gbps": {}, "bytes_per_command": 1 << 20, "repeat": 1, "ratios": []}
    r.write_markdown(out, {}, True, ["zero"], {}, core, None, None, None, None, [], 1.0)
    text = out.read_text()
    text_section = text.split("## `text`", 1)[1].split("\n## ", 1)[0]
    assert "<!-- notes: text -->\nmodel build: 34 MB/s\n<!-- /notes -->" in text_section
    assert "a section this run does not write" in text
    assert r.kept_notes(out) == {"text": "model build: 34 MB/s\n",
                                 "gone": "a section this run does not write\n"}
    assert "# old" not in text


def one_section_file(tmp_path, before, section, notes, after):
    """benchmarks.md with `section` (its heading and old body) and its notes
    block between the kept texts `before` and `after`, and docs/img."""
    out = tmp_path / "benchmarks.md"
    (tmp_path / "img").mkdir()
    name = section.split("`")[1]
    out.write_text(f"{before}{section}\n\n<!-- notes: {name} -->\n{notes}<!-- /notes -->\n\n{after}")
    return out


def test_only_one_section_is_replaced(tmp_path, monkeypatch):
    r = report()
    before = "# Benchmarks\n\n## Whole commands\n\nkept 1\n\n"
    after = "## `text`: fingerprint against the corpus\n\nkept 2\n"
    out = one_section_file(tmp_path, before, "## `compressible`: ratio accuracy against fio\n\nold table",
                           "format 4: +1.8%\n", after)
    rows = [{"target": 3, "compressor": "gzip -6", "ours": 3.3, "fio": None}]
    monkeypatch.setattr(r, "bench_compressible", lambda td, quick, tmp: {
        "size": 1 << 22, "rows": rows, "fio": False})
    monkeypatch.setattr(r, "plot_compressible", lambda path, comp: None)
    r.refresh_section("compressible", out, "testdata", {"date": "D", "commit": "C"}, True, 0.0)
    text = out.read_text()
    assert text.startswith(before) and text.endswith(after)
    sec = text[len(before):-len(after)]
    assert "old table" not in sec and "| 3 | 3.30 (+10.0%) / – |" in sec
    assert "--only compressible --quick` on D" in sec and "commit C" in sec
    assert sec.rstrip().endswith("<!-- notes: compressible -->\nformat 4: +1.8%\n<!-- /notes -->")


def test_only_text_replaces_the_text_section(tmp_path, monkeypatch):
    r = report()
    before = "# Benchmarks\n\n## `compressible`: ratio accuracy against fio\n\nkept 1\n\n"
    after = "## `like`: data like a sample\n\nkept 2\n"
    out = one_section_file(tmp_path, before, "## `text`: fingerprint against the corpus\n\n"
                           "| vocabulary | 15068 | 6818 |", "model build: 34 MB/s\n", after)
    fp = {"bytes": 100, "entropy": 4.5, "gzip -6": 2.7, "zstd -3": 2.7, "xz -6": 3.2,
          "mean_word_len": 4.6, "words_per_sentence": 30.0, "top": ["the", "and"]}
    seen = {}
    monkeypatch.setattr(r, "bench_text", lambda td, quick, corpus: seen.setdefault("corpus", corpus) and {
        "corpus": dict(fp, vocabulary=15068), "text": dict(fp, vocabulary=14000), "copied_8grams": 0.0,
        "gen_gbps": 0.1, "corpus_dir": str(corpus), "size": 4 << 20})
    monkeypatch.setattr(r, "plot_text", lambda path, tx: None)
    r.refresh_section("text", out, "testdata", {"date": "D", "commit": "C"}, True, 0.0, corpus="CORPUS")
    text = out.read_text()
    assert seen["corpus"] == "CORPUS"
    assert text.startswith(before) and text.endswith(after)
    sec = text[len(before):-len(after)]
    assert "6818" not in sec and "| vocabulary | 15068 | 14000 |" in sec
    assert "--only text --quick` on D" in sec
    assert sec.rstrip().endswith("<!-- notes: text -->\nmodel build: 34 MB/s\n<!-- /notes -->")


def test_throughput_notes_stay_under_the_throughput_table(tmp_path):
    r = report()
    out = tmp_path / "benchmarks.md"
    out.write_text("<!-- notes: throughput -->\nformat 2 rows\n<!-- /notes -->\n")
    core = {"gbps": {}, "bytes_per_command": 1 << 20, "repeat": 1, "ratios": []}
    r.write_markdown(out, {}, True, ["zero"], {}, core, None, None, None, None, [], 1.0)
    section = out.read_text().split("## Throughput of each kind", 1)[1].split("\n## ", 1)[0]
    assert "<!-- notes: throughput -->\nformat 2 rows\n<!-- /notes -->" in section
