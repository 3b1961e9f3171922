"""`testdata profile --dump`: -o writes the profile to a file (it was
ignored: the JSON went to stdout and no file appeared), and the options that
only apply to building a profile are refused with it, not ignored."""


def test_dump_to_a_file(run, tmp_path):
    out = tmp_path / "html.json"
    r = run("profile", "--dump", "html", "-o", out)
    assert r.returncode == 0 and r.stdout == b"", r.stderr
    assert out.read_bytes() == run("profile", "--dump", "html", check=True).stdout
    again = tmp_path / "again.json"
    run("profile", "--dump", out, "-o", again, check=True)
    assert again.read_bytes() == out.read_bytes()
    a = run("gen", "like", "100K", "--profile", out, "--seed", 3, check=True).stdout
    assert a == run("gen", "like", "100K", "--profile", "html", "--seed", 3, check=True).stdout


def test_dump_refuses_build_options(run, tmp_path):
    for extra in (("--name", "x"), ("--sample", "1M"), ("--no-fingerprint",),
                  ("--check", "html")):
        r = run("profile", "--dump", "html", *extra)
        assert r.returncode == 2 and b"--dump takes none of" in r.stderr, (extra, r.stderr)
        assert r.stdout == b""


def test_empty_sample_is_refused(run, tmp_path):
    """An empty sample (say, a failed command piped in) has no statistics: it
    was profiled without complaint, and `gen like` then made data like
    nothing in particular."""
    out = tmp_path / "p.json"
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    for args, stdin in ((("-",), b""), ((empty,), None), ((empty, empty), None)):
        r = run("profile", *args, "-o", out, input=stdin)
        assert r.returncode == 2 and b"empty" in r.stderr, (args, r.stderr)
        assert not out.exists()
    r = run("profile", "-", "-o", out, input=b"x")
    assert r.returncode == 0, r.stderr
