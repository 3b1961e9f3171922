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
