"""Text models from Python: testdata.build_model() and model= (a row of the
option table) in generate, Stream, write, verify and the pytest fixtures;
the errors of bad corpora and model files; the CLI builds the same model."""
import hashlib
import pathlib
import subprocess

import pytest

import testdata

# The corpus below is prose and one short paragraph 400 times, whose model's
# text compresses about twice as well as the corpus: build_model() rightly
# warns about it (test_fidelity_warning checks the warning itself).
pytestmark = pytest.mark.filterwarnings("ignore::testdata.FidelityWarning")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    d = tmp_path_factory.mktemp("corpus")
    a, b = d / "a.txt", d / "b.txt"
    a.write_bytes(testdata.generate("text", 30000, seed=99))
    b.write_bytes("Grüße aus Köln.  Straße, Äpfel und Bären.\n\n".encode() * 400)
    return [a, b]


def test_build_generate_verify(corpus, tmp_path):
    m = testdata.build_model(corpus, tmp_path / "m.tdm")
    assert isinstance(m, pathlib.Path) and m.read_bytes()[:8] == b"TDTXTMOD"
    data = testdata.generate("text", "300K", seed=4, model=m)
    assert data == testdata.generate("text", "300K", seed=4, model=str(m))
    assert data != testdata.generate("text", "300K", seed=4)  # the model is in the key
    data.decode("utf-8")
    assert "ß".encode() in data or "ä".encode() in data  # learnt from b.txt
    with testdata.Stream("text", "300K", seed=4, model=m) as f:
        f.seek(100000)
        assert f.read(5000) == data[100000:105000]
    p = testdata.write(tmp_path / "x.txt", "text", "300K", seed=4, model=m)
    testdata.verify(p, "text", "300K", seed=4, model=m)
    with pytest.raises(testdata.MismatchError):
        testdata.verify(p, "text", "300K", seed=4)


def test_same_model_as_the_cli(corpus, tmp_path, cli):
    m = testdata.build_model(corpus, tmp_path / "py.tdm")
    subprocess.run([cli, "model", "build", *map(str, corpus), "-o", str(tmp_path / "cli.tdm")],
                   check=True)
    assert m.read_bytes() == (tmp_path / "cli.tdm").read_bytes()
    one = testdata.build_model(corpus[0], tmp_path / "one.tdm")  # a single path
    assert one.read_bytes() != m.read_bytes()
    # threads= (the CLI's --threads): the same model
    for t in (2, 0, "2"):
        assert testdata.build_model(corpus, tmp_path / "t.tdm", threads=t).read_bytes() == \
            m.read_bytes(), t
    for bad in (-1, "x", 1.5):
        with pytest.raises(ValueError, match="option 'threads'"):
            testdata.build_model(corpus, tmp_path / "bad.tdm", threads=bad)
    assert not (tmp_path / "bad.tdm").exists()


def test_default_is_the_builtin_model(tmp_path, cli):
    b = tmp_path / "builtin.tdm"
    subprocess.run([cli, "model", "export", "-o", str(b)], check=True)
    assert testdata.generate("text", 100000, seed=1, model=b) == \
        testdata.generate("text", 100000, seed=1)
    opt = {o["key"]: o for o in testdata.options()}["model"]
    assert opt["type"] == "text" and opt["kinds"] == ["text"]


def test_bad_corpora(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"hello \xff\xfe world" * 2000)
    with pytest.raises(ValueError, match="not valid UTF-8"):
        testdata.build_model(bad, tmp_path / "m.tdm")
    small = tmp_path / "small.txt"
    small.write_text("a few words. " * 100)
    with pytest.raises(ValueError, match="too small"):
        testdata.build_model([small], tmp_path / "m.tdm")
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    with pytest.raises(ValueError, match="empty"):
        testdata.build_model([empty], tmp_path / "m.tdm")
    with pytest.raises(OSError, match="No such file"):
        testdata.build_model([tmp_path / "missing.txt"], tmp_path / "m.tdm")
    with pytest.raises(ValueError):
        testdata.build_model([], tmp_path / "m.tdm")
    with pytest.raises(TypeError):
        testdata.build_model([3], tmp_path / "m.tdm")
    assert not (tmp_path / "m.tdm").exists()


def test_output_naming_a_corpus_file_is_refused(corpus, tmp_path):
    c = tmp_path / "c.txt"
    c.write_bytes(corpus[0].read_bytes())
    with pytest.raises(ValueError, match="is a corpus file: the model would replace it"):
        testdata.build_model([corpus[1], c], c)
    assert c.read_bytes() == corpus[0].read_bytes()
    assert testdata.build_model([c], tmp_path / "m.tdm").exists()
    # nor does write() replace the model (or profile) the stream comes from
    m = tmp_path / "m.tdm"
    keep = m.read_bytes()
    with pytest.raises(ValueError, match="is the text model the data is generated from"):
        testdata.write(m, "text", "1M", model=m)
    p = tmp_path / "p.json"
    testdata.Profile.builtin("json").save(p)
    pk = p.read_bytes()
    with pytest.raises(ValueError, match="is the profile the data is generated from"):
        testdata.write(p, "like", "1M", profile=testdata.Profile.load(p))
    with pytest.raises(ValueError, match="is the profile the data is generated from"):
        testdata.write(p, "like", "1M", profile=str(p))
    assert m.read_bytes() == keep and p.read_bytes() == pk
    assert testdata.write(tmp_path / "x.bin", "like", "1M", profile=str(p)).stat().st_size == 1 << 20


def test_bad_model_files(corpus, tmp_path):
    m = testdata.build_model(corpus, tmp_path / "m.tdm")
    raw = m.read_bytes()
    cut = tmp_path / "cut.tdm"
    cut.write_bytes(raw[: len(raw) // 2])
    with pytest.raises(ValueError, match="not a valid text model"):
        testdata.generate("text", 10, model=cut)
    other = tmp_path / "v9.tdm"
    other.write_bytes(raw[:8] + b"\x09" + raw[9:])
    with pytest.raises(ValueError, match="unsupported format version"):
        testdata.generate("text", 10, model=other)
    with pytest.raises(OSError, match="No such file"):
        testdata.generate("text", 10, model=tmp_path / "none.tdm")
    with pytest.raises(ValueError, match="does not apply to kind random"):
        testdata.generate("random", 10, model=m)


def test_fixture_takes_the_model(pytester, corpus, tmp_path):
    m = testdata.build_model(corpus, tmp_path / "m.tdm")
    want = hashlib.sha256(testdata.generate("text", 50000, seed=2, model=m)).hexdigest()
    pytester.makepyfile(f"""
import hashlib
def test_x(testdata_file):
    p = testdata_file("text", 50000, seed=2, model={str(m)!r})
    assert hashlib.sha256(p.read_bytes()).hexdigest() == {want!r}
""")
    pytester.runpytest("-p", "testdata.pytest_plugin").assert_outcomes(passed=1)


def test_model_option_types(corpus, tmp_path):
    """model= is a path: str, bytes or os.PathLike (bytes was refused); any
    other type is a TypeError (an int was looked up as a file name)."""
    m = testdata.build_model(corpus, tmp_path / "m.tdm")
    data = testdata.generate("text", 1000, seed=2, model=m)
    assert testdata.generate("text", 1000, seed=2, model=bytes(m)) == data
    for bad in (3, 3.5, True, None, [str(m)]):
        with pytest.raises(TypeError, match="option model: expected a path"):
            testdata.generate("text", 10, model=bad)


@pytest.mark.filterwarnings("error")
def test_fidelity_warning(tmp_path, cli):
    """build_model() warns when the calibration measured the model's text
    more than 10% off its corpus, with the CLI's note as its text and the
    errors by codec; prose builds without a warning."""
    t = testdata.generate("text", "256K", seed=7)
    prose, twice = tmp_path / "prose.txt", tmp_path / "twice.txt"
    prose.write_bytes(t)
    twice.write_bytes(t + t)  # zstd -3 sees the copy 256 KiB back, lz4 does not
    testdata.build_model(prose, tmp_path / "p.tdm")  # no warning ("error" above)
    with pytest.warns(testdata.FidelityWarning) as w:
        m = testdata.build_model(twice, tmp_path / "t.tdm")
    assert len(w) == 1
    e = w[0].message
    assert set(e.errors) == {"lz4 -1", "zstd -3"}
    assert e.errors["lz4 -1"] > 0.10 and e.errors["zstd -3"] < -0.10, e.errors
    r = subprocess.run([cli, "model", "build", str(twice), "-o", str(tmp_path / "c.tdm")],
                       stderr=subprocess.PIPE, check=True)
    assert r.stderr.decode() == "testdata: note: %s\n" % e
    assert (tmp_path / "c.tdm").read_bytes() == m.read_bytes()
    import pickle
    assert str(pickle.loads(pickle.dumps(e))) == str(e)
