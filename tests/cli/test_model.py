"""`testdata model build|info|export` and `gen/verify text --model`: the
round trip through files, stdin, help, and the errors (exit 2 with one line
naming the problem, never a half-written model)."""
import re


def corpus(run, tmp_path, n=40000, seed=99):
    p = tmp_path / f"c{seed}.txt"
    p.write_bytes(run("gen", "text", n, "--seed", seed, check=True).stdout)
    return p


def test_build_gen_verify(run, tmp_path):
    c1, c2 = corpus(run, tmp_path, seed=1), corpus(run, tmp_path, seed=2)
    m = tmp_path / "m.tdm"
    r = run("model", "build", c1, c2, "-o", m)
    assert r.returncode == 0 and r.stdout == b"" and r.stderr == b"", r.stderr
    a = run("gen", "text", "200K", "--model", m, "--seed", 5, check=True).stdout
    assert len(a) == 200 * 1024 and a != run("gen", "text", "200K", "--seed", 5).stdout
    (tmp_path / "a.txt").write_bytes(a)
    assert run("verify", "text", "200K", "--model", m, "--seed", 5, tmp_path / "a.txt").returncode == 0
    assert run("verify", "text", "200K", "--seed", 5, tmp_path / "a.txt").returncode == 1
    # the same corpus through stdin (one document) gives a model of its own
    s = tmp_path / "s.tdm"
    assert run("model", "build", "-", "-o", s, input=c1.read_bytes()).returncode == 0
    assert run("model", "build", c1, "-o", tmp_path / "f.tdm").returncode == 0
    assert s.read_bytes() == (tmp_path / "f.tdm").read_bytes()


def test_build_note(run, tmp_path):
    """A model whose text the calibration measures more than 10% off its
    corpus gets one note on stderr (the build still succeeds, the model is
    written): a corpus that is one text twice, 256 KiB apart, which zstd -3
    finds and lz4 (64 KiB back) does not.  zstd, lz4 and Python's own
    measure of text of the model agree with the note's signs."""
    t = run("gen", "text", "256K", "--seed", 7, check=True).stdout
    c = tmp_path / "twice.txt"
    c.write_bytes(t + t)
    m = tmp_path / "m.tdm"
    for out in (m, "-"):
        r = run("model", "build", c, "-o", out, cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        lines = r.stderr.decode().splitlines()
        assert len(lines) == 1 and lines[0].startswith("testdata: note: text of this model "
                                                      "compresses +"), r.stderr
        assert "under zstd -3 against its corpus (first 512 KiB, seed 0): the corpus likely " \
               "repeats whole lines or pages beyond lz4's 64 KiB window" in lines[0], lines[0]
    assert r.stdout == m.read_bytes()
    import zlib
    g = run("gen", "text", len(t) * 2, "--model", m, check=True).stdout
    # deflate's 32 KiB window sees what lz4's does: the text compresses
    # more than the corpus under it, as the note says lz4 -1 does
    assert len(zlib.compress(g, 6)) < len(zlib.compress(t + t, 6))


def test_model_to_stdout(run, tmp_path):
    """`-o -` writes the model to stdout (not a file named '-'): the same
    bytes as the file; errors are still one line and exit 2."""
    c = corpus(run, tmp_path, seed=3)
    f = tmp_path / "f.tdm"
    run("model", "build", c, "-o", f, check=True)
    r = run("model", "build", c, "-o", "-", cwd=tmp_path)
    assert r.returncode == 0 and r.stdout == f.read_bytes() and r.stderr == b"", r.stderr
    e = tmp_path / "e.tdm"
    run("model", "export", "-o", e, check=True)
    assert run("model", "export", "-o", "-", cwd=tmp_path, check=True).stdout == e.read_bytes()
    assert not (tmp_path / "-").exists()
    small = tmp_path / "small.txt"
    small.write_bytes(b"too small\n")
    r = run("model", "build", small, "-o", "-")
    assert r.returncode == 2 and r.stdout == b"" and b"too small" in r.stderr, r.stderr


def test_info_and_export(run, tmp_path):
    r = run("model", "info", check=True).stdout.decode()
    assert "built-in English" in r and re.search(r"^hash +[0-9a-f]{64}$", r, re.M)
    assert re.search(r"^repetition +0\.400, copying on 0\.400 ", r, re.M), r
    assert re.search(r"^runs +none \(repeated lines under 10% of the corpus\)$", r, re.M), r
    assert re.search(r"^format +1$", r, re.M), r
    b = tmp_path / "b.tdm"
    assert run("model", "export", "-o", b).returncode == 0
    i = run("model", "info", b, check=True).stdout.decode()
    assert i.split("\n")[1:] == r.split("\n")[1:]  # all but the name line
    assert run("gen", "text", "100K", "--model", b).stdout == run("gen", "text", "100K").stdout


def test_build_fits_repetition_to_the_corpus(run, tmp_path):
    """A corpus that repeats its own lines (a 512-byte run of lines from 12 KiB
    back after every 4 KiB: 11% of it) gets a model with runs (format 2),
    whose text repeats lines as the corpus does, at 8-12 KiB, so the
    continuation rate need not rise above the default 0.4 to make up for
    them; the built-in model's corpus has none (test_info_and_export)."""
    base = run("gen", "text", "256K", "--seed", 7, check=True).stdout
    out = bytearray()
    for i in range(0, len(base), 4096):
        out += base[i:i + 4096]
        if len(out) > 4 * 4096:
            s = out.index(b"\n", len(out) - 3 * 4096) + 1
            out += out[s:out.index(b"\n", s + 512) + 1]
    c, m = tmp_path / "rep.txt", tmp_path / "rep.tdm"
    c.write_bytes(bytes(out))
    run("model", "build", c, "-o", m, check=True)
    r = run("model", "info", m, check=True).stdout.decode()
    mu = float(re.search(r"^repetition +([0-9.]+),", r, re.M).group(1))
    share = float(re.search(r"^runs +([0-9.]+)% of the corpus in repeated lines", r, re.M).group(1))
    assert re.search(r"^format +2$", r, re.M) and 9 < share < 13 and mu <= 0.42, r
    t = run("gen", "text", "512K", "--model", m, check=True).stdout
    far = [ln for i, ln in enumerate(t.split(b"\n")) if len(ln) >= 20]
    assert len(far) - len(set(far)) > 0.05 * len(far), "its text repeats lines"
    # --threads: the calibration on two threads (from 512 KiB of corpus)
    # fits the same model
    big = tmp_path / "big.txt"
    big.write_bytes(bytes(out) + run("gen", "text", "400K", "--seed", 8, check=True).stdout)
    run("model", "build", big, "-o", m, check=True)
    for t in ("2", "0"):
        m2 = tmp_path / f"big{t}.tdm"
        run("model", "build", "--threads", t, big, "-o", m2, check=True)
        assert m2.read_bytes() == m.read_bytes(), t


def test_bad_threads(run, tmp_path):
    c, m = corpus(run, tmp_path), tmp_path / "m.tdm"
    for bad in ("-1", "x", "1.5", ""):
        r = run("model", "build", "--threads", bad, c, "-o", m)
        assert r.returncode == 2 and b"for --threads" in r.stderr and b"valid: 0 to" in r.stderr, \
            (bad, r.stderr)
    assert not m.exists()
    r = run("model", "export", "--threads", "2", "-o", m)
    assert r.returncode == 2 and b"unknown option '--threads'" in r.stderr


def test_errors(run, tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"x" * 20000 + b"\xc3(" + b"y" * 100)
    m = tmp_path / "m.tdm"
    r = run("model", "build", bad, "-o", m)
    assert r.returncode == 2 and b"not valid UTF-8 (byte 20000)" in r.stderr, r.stderr
    small = tmp_path / "small.txt"
    small.write_text("tiny. " * 100)
    r = run("model", "build", small, "-o", m)
    assert r.returncode == 2 and b"too small" in r.stderr
    r = run("model", "build", tmp_path / "missing.txt", "-o", m)
    assert r.returncode == 1 and b"No such file" in r.stderr
    assert run("model", "build", small).returncode == 2  # no -o
    assert run("model", "build", "-o", m).returncode == 2  # no corpus
    assert not m.exists()
    trunc = tmp_path / "t.tdm"
    run("model", "export", "-o", trunc, check=True)
    trunc.write_bytes(trunc.read_bytes()[:1000])
    for args in (("model", "info", trunc), ("gen", "text", "10", "--model", trunc)):
        r = run(*args)
        assert r.returncode == 2 and b"not a valid text model" in r.stderr, (args, r.stderr)
    r = run("gen", "random", "10", "--model", trunc)
    assert r.returncode == 2 and b"--model does not apply to kind random" in r.stderr
    r = run("model", "buidl")
    assert r.returncode == 2 and b"did you mean 'model build'" in r.stderr


def test_help(run):
    r = run("model", "--help", check=True).stdout.decode()
    assert "model build CORPUS... -o MODEL" in r and "model info" in r and "model export" in r
    assert run("help", "model", "build", check=True).stdout == run("model", "build", "--help").stdout
    assert "--model FILE" in run("gen", "--help", check=True).stdout.decode()
    assert "model" in run("--help", check=True).stdout.decode()


def test_tree_of_text_from_a_model(run, tmp_path):
    """Tree files take the stream options, --model too (td_tree owns the
    model it loads)."""
    m = tmp_path / "m.tdm"
    run("model", "build", corpus(run, tmp_path), "-o", m, check=True)
    spec = ["--files", 5, "--total", "200K", "--kind", "text", "--model", m, "--seed", 3]
    assert run("tree", "gen", tmp_path / "t", *spec, "-q").returncode == 0
    assert run("tree", "verify", tmp_path / "t", *spec).returncode == 0
    line = run("tree", "list", *spec, check=True).stdout.decode().split("\n")[0]
    path, size, kind, offset = line.split("\t")
    want = run("gen", "text", size, "--model", m, "--seed", 3, "--offset", offset, check=True).stdout
    assert (tmp_path / "t" / path).read_bytes() == want
    assert run("tree", "verify", tmp_path / "t", *spec[:-4], "--seed", 3).returncode == 1


def test_model_not_a_regular_file(run, tmp_path):
    """A directory is named as one (it said "Invalid argument"); a model
    through a pipe (/dev/stdin, <(...)) is read as a stream."""
    for args in (("gen", "text", "10", "--model", tmp_path), ("model", "info", tmp_path)):
        r = run(*args)
        assert r.returncode in (1, 2) and b"Is a directory" in r.stderr, (args, r.stderr)
    b = tmp_path / "b.tdm"
    run("model", "export", "-o", b, check=True)
    r = run("gen", "text", "100K", "--model", "/dev/stdin", input=b.read_bytes())
    assert r.returncode == 0, r.stderr
    assert r.stdout == run("gen", "text", "100K", "--model", b).stdout
