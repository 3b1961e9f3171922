"""`testdata profile --dump`: -o writes the profile to a file (it was
ignored: the JSON went to stdout and no file appeared), and the options that
only apply to building a profile are refused with it, not ignored."""
import json


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
                  ("--check", "html"), ("--threads", "2"), ("--model", "lz")):
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


def test_threads(run, tmp_path):
    """--threads 2 measures the compressors while the sample is parsed: the
    same model and ratios (the timings are measurements); a bad value is a
    usage error naming the option."""
    sample = tmp_path / "sample"
    run("gen", "like", "1500K", "--profile", "html", "--seed", 5, "-o", sample, check=True)
    outs = []
    for t in ("1", "2", "0"):
        out = tmp_path / f"p{t}.json"
        run("profile", sample, "--threads", t, "-o", out, check=True)
        p = json.loads(out.read_text())
        outs.append((p["model"], {c: v["ratio"] for c, v in p["fingerprint"].items() if isinstance(v, dict)}))
    assert outs[0] == outs[1] == outs[2]
    assert set(outs[0][1]) == {"gzip", "zstd", "lz4", "xz"}
    r = run("profile", sample, "--threads", "two", "-o", tmp_path / "bad.json")
    assert r.returncode == 2 and b"--threads" in r.stderr and b"whole number" in r.stderr, r.stderr
    assert not (tmp_path / "bad.json").exists()


def test_bad_sample_size_is_a_usage_error(run, tmp_path):
    """--sample is judged by the library (td_profile_options_check) before
    any sample is read, in the words Python raises."""
    out = tmp_path / "p.json"
    for size in ("0", "inf"):
        r = run("profile", "-", "--sample", size, "-o", out, input=b"abc" * 1000)
        assert r.returncode == 2, r.stderr
        assert f"bad sample size {size}: 1 byte to 2^64-2".encode() in r.stderr, r.stderr
        assert r.stdout == b"" and not out.exists()


def test_check_refuses_build_options(run, tmp_path):
    """--check builds no profile (td_profile_compare_fd measures each FILE's
    first MiB), so the options that shape one are refused, not ignored:
    --sample and --no-fingerprint were accepted and did nothing."""
    for extra in (("-o", tmp_path / "x.json"), ("--name", "x"), ("--sample", "1M"), ("--no-fingerprint",),
                  ("--threads", "2"), ("--model", "lz")):
        r = run("profile", "--check", "html", "-", *extra, input=b"abc" * 1000)
        assert r.returncode == 2 and b"--check takes none of" in r.stderr, (extra, r.stderr)
        assert r.stdout == b""
    assert not (tmp_path / "x.json").exists()


def test_check_reads_stdin_and_reports_bad_files(run, tmp_path):
    """stdin and files alike; an empty or missing FILE is an error of its
    own (exit 1) and the others are still measured."""
    sample = tmp_path / "s"
    run("gen", "like", "3M", "--profile", "html", "--seed", 2, "-o", sample, check=True)
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    r = run("profile", "--check", "html", "-", empty, tmp_path / "missing", sample,
            input=sample.read_bytes())
    assert r.returncode == 1, r.stderr
    assert b"'" + bytes(empty) + b"': empty" in r.stderr, r.stderr
    assert b"cannot open '" + bytes(tmp_path / "missing") + b"'" in r.stderr, r.stderr
    out = r.stdout.decode()
    assert "\nstdin\n" in out and f"\n{sample}\n" in out, out
    rows = [ln.split() for ln in out.splitlines() if ln.split()[:1] == ["gzip"]]
    # the built-in's own line, then stdin and the file: the same bytes, the same ratio
    assert len(rows) == 3 and rows[1][2] == rows[2][2], out


def test_bad_name_is_a_usage_error(run, tmp_path):
    """The message is the library's (td_profile_builder_new_msg), as Python's."""
    out = tmp_path / "p.json"
    for name in ("x" * 64, "tab\there"):
        r = run("profile", "-", "--name", name, "-o", out, input=b"abc" * 1000)
        assert r.returncode == 2, r.stderr
        assert b"bad profile name" in r.stderr and b"printable ASCII of at most 63 bytes" in r.stderr
        assert not out.exists()
    run("profile", "-", "--name", "x" * 63, "-o", out, input=b"abc" * 1000, check=True)


def test_model(run, tmp_path):
    """--model lz|context|auto: the two models differ, auto is one of them,
    a context model is a version 2 profile that generates and verifies; a
    bad name is a usage error naming the valid ones."""
    sample = tmp_path / "s.txt"
    run("gen", "text", "300K", "--seed", 2, "-o", sample, check=True)
    got = {}
    for m in ("lz", "context", "auto"):
        out = tmp_path / f"{m}.json"
        r = run("profile", "--no-fingerprint", "--model", m, sample, "-o", out, check=True)
        got[m] = json.loads(out.read_bytes())
        kept = "context" if "ctx" in got[m]["model"] else "lz"
        assert f", {kept} model\n".encode() in r.stderr, r.stderr  # what auto chose is said
    assert "ctx" in got["context"]["model"] and got["context"]["version"] == 2
    assert "ctx" not in got["lz"]["model"] and got["lz"]["version"] == 1
    assert got["auto"]["model"] in (got["lz"]["model"], got["context"]["model"])
    data = run("gen", "like", "3M", "--profile", tmp_path / "context.json", "--seed", 4, check=True).stdout
    f = tmp_path / "d"
    f.write_bytes(data)
    r = run("verify", "like", "3M", "--profile", tmp_path / "context.json", "--seed", 4, f)
    assert r.returncode == 0, r.stderr
    r = run("profile", "--model", "ctx", sample, "-o", tmp_path / "x.json")
    assert r.returncode == 2 and b"bad model 'ctx': auto, lz or context" in r.stderr, r.stderr
    assert not (tmp_path / "x.json").exists()


def test_check_times_like_a_small_sample(run, tmp_path):
    """A sample under a MiB was timed whole, so --check times each file in
    pieces of the sample's size; the sample checked against its own profile
    has the same ratios (timings are not asserted: they are CPU times)."""
    sample, prof = tmp_path / "s.txt", tmp_path / "s.json"
    run("gen", "text", "6000", "--seed", 3, "-o", sample, check=True)
    run("profile", sample, "-o", prof, check=True)
    longer = tmp_path / "l.txt"
    run("gen", "text", "100K", "--seed", 4, "-o", longer, check=True)
    out = run("profile", "--check", prof, longer, check=True).stdout.decode()
    assert "(cost timed in pieces of 6000 bytes, as the profile's sample was)" in out
    out = run("profile", "--check", prof, sample, check=True).stdout.decode()
    assert "pieces" not in out  # no longer than the sample: timed whole, as it was
    rows = [ln.split() for ln in out.splitlines() if ln.split()[:1] in (["gzip"], ["zstd"], ["lz4"], ["xz"])]
    checked = [r for r in rows if len(r) > 5 and r[-1].endswith("x")]
    assert len(checked) == 4, out
    for r in checked:
        assert r[-5] in ("+0.0%", "-0.0%"), out
    big = run("profile", "--check", "html", sample, check=True).stdout.decode()
    assert "pieces" not in big


def test_check_json(run, tmp_path):
    """--check --json: one array, an object per FILE in the library's words
    (td_profile_comparison_json), the error object for a FILE that cannot be
    read; the ratios are the text's; --json without --check is refused."""
    sample = tmp_path / "s"
    run("gen", "like", "200K", "--profile", "html", "--seed", 2, "-o", sample, check=True)
    r = run("profile", "--check", "html", "--json", sample, tmp_path / "missing")
    assert r.returncode == 1 and b"cannot open" in r.stderr, r.stderr
    got = json.loads(r.stdout)
    assert len(got) == 2 and got[1] == {"file": str(tmp_path / "missing"),
                                        "error": "No such file or directory"}
    one = got[0]
    assert one["file"] == str(sample) and one["bytes"] == 200 * 1024 and one["piece"] == 0
    assert set(one["codecs"]) == {"gzip", "zstd", "lz4", "xz"}
    text = run("profile", "--check", "html", sample, check=True).stdout.decode()
    for c, label in (("gzip", "gzip -6"), ("xz", "xz -6")):
        row = [ln.split() for ln in text.splitlines() if ln.startswith("  " + label) and "|" in ln][-1]
        v = one["codecs"][c]
        assert "%.3f" % v["ratio"] == row[2] and "%.3f" % v["profile_ratio"] == row[3], (v, row)
        assert v["profile_ns_per_byte"] is None and v["cost"] is None  # a built-in: no timings
        assert abs(v["error"] - (v["ratio"] / v["profile_ratio"] - 1)) < 1e-5
    r = run("profile", "--json", sample, "-o", tmp_path / "p.json")
    assert r.returncode == 2 and b"--json goes with --check" in r.stderr, r.stderr
    assert not (tmp_path / "p.json").exists()


def test_fidelity_line(run, tmp_path):
    """`testdata profile` prints how closely its data compressed like the
    sample when the builder chose the model (td_profile_fidelity): errors
    that Python's zlib and bz2 reproduce on 256 KiB of the profile's data
    at seed 0 against the sample, and the codecs more than 10% off named.
    `--check` (a profile loaded from a file) prints none, nor does
    `--model lz --no-fingerprint` (nothing to choose, nothing asked)."""
    import bz2
    import re
    import zlib
    sample = tmp_path / "sample"
    run("gen", "like", "300K", "--profile", "json", "--seed", 5, "-o", sample, check=True)
    prof = tmp_path / "p.json"
    for model in ("auto", "lz"):
        r = run("profile", sample, "--model", model, *(("--no-fingerprint",) if model == "auto" else ()),
                "-o", prof, check=True)
        m = re.search(rb"like data \(256 KiB at seed 0\) against the sample's first 300 KiB: "
                      rb"lz4 -1 ([-+][\d.]+)%, gzip -6 ([-+][\d.]+)%, lz4 -9 ([-+][\d.]+)%, "
                      rb"bzip2 -9 ([-+][\d.]+)%\n", r.stderr)
        assert m, r.stderr
        errs = [float(x) for x in m.groups()]
        gen = run("gen", "like", "256K", "--profile", prof, "--seed", 0, check=True).stdout
        s = sample.read_bytes()
        for got, comp in ((errs[1], lambda d: zlib.compress(d, 6)), (errs[3], lambda d: bz2.compress(d, 9))):
            want = 100 * ((len(gen) / len(comp(gen))) / (len(s) / len(comp(s))) - 1)
            assert abs(got - want) < 0.051, (model, got, want)
        off = [c for c, e in zip(("lz4 -1", "gzip -6", "lz4 -9", "bzip2 -9"), errs) if abs(e) > 10]
        note = re.search(rb"more than 10% off under ([^:;]+)[:;]", r.stderr)
        assert (note.group(1).decode().split(", ") if note else []) == off, r.stderr
        if note and model == "lz":  # with a fingerprint: the command that measures a MiB of its data
            assert f"testdata gen like 1M --profile {prof} | testdata profile --check {prof} -".encode() in r.stderr
    r = run("profile", "--check", prof, sample, check=True)
    assert b"like data" not in r.stdout + r.stderr
    # --model lz has nothing to choose: --no-fingerprint skips the measure
    r = run("profile", sample, "--model", "lz", "--no-fingerprint", "-o", prof, check=True)
    assert b"like data" not in r.stderr
