"""The like kind from Python: profiles built, saved, loaded, built-ins; the
same bytes as the CLI; the pytest fixtures with profile=."""
import bz2
import subprocess
import zlib

import pytest

import testdata


def test_builtins_and_generate():
    names = testdata.builtin_profiles()
    assert len(names) >= 6 and "html" in names
    assert "like" in testdata.kinds()
    a = testdata.generate("like", "200K", profile="html", seed=3)
    b = testdata.generate("like", "200K", profile=testdata.Profile.builtin("html"), seed=3)
    assert a == b and len(a) == 200 * 1024
    assert a != testdata.generate("like", "200K", profile="json", seed=3)
    assert testdata.Profile.builtin("html").name == "html"
    assert testdata.Profile.builtin("html") == testdata.Profile.load("html")
    fp = testdata.Profile.builtin("html").fingerprint()  # built-ins: ratios, no timings
    assert set(fp) == {"gzip", "zstd", "lz4", "xz"} and all(ns == 0 for _, ns in fp.values())
    with pytest.raises(ValueError, match="is not a built-in profile"):
        testdata.Profile.builtin("no-such")
    with pytest.raises(ValueError, match="did you mean 'html'"):
        testdata.Profile.builtin("htlm")
    with pytest.raises(TypeError, match="name must be a str, not bytes"):
        testdata.Profile.builtin(b"html")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="contains a NUL"):  # not cut to "html"
        testdata.Profile.builtin("html\0x")
    with pytest.raises(FileNotFoundError, match="neither a built-in profile"):
        testdata.generate("like", "1K", profile="no-such-profile-or-file")
    with pytest.raises(TypeError, match="option profile"):
        testdata.generate("like", "1K", profile=3)
    with pytest.raises(ValueError, match="does not apply"):
        testdata.generate("random", "1K", profile="html")


def test_profile_save_load_round_trip(tmp_path, cli):
    sample = tmp_path / "sample.txt"
    sample.write_bytes(testdata.generate("text", "100K", seed=5))
    p = testdata.profile([sample], name="mine")
    assert p.name == "mine" and "mine" in repr(p)
    fp = p.fingerprint()
    assert set(fp) == {"gzip", "zstd", "lz4", "xz"} and all(r > 1.5 for r, _ in fp.values())
    assert p == testdata.profile(sample.read_bytes(), name="mine")  # bytes: the same model
    path = tmp_path / "p.json"
    p.save(path)
    q = testdata.Profile.load(path)
    assert q == p and q.digest == p.digest and len(q.digest) == 64
    x = testdata.generate("like", "300K", profile=q, seed=1)
    assert x == testdata.generate("like", "300K", profile=p, seed=1)
    # the builder's measure of its model: gzip -6 and bzip2 -9 as zlib and bz2
    # compute them; not saved, so a loaded or built-in profile has none
    fid = p.fidelity()
    assert list(fid) == ["lz4 -1", "gzip -6", "lz4 -9", "bzip2 -9"]
    g, smp = testdata.generate("like", "256K", profile=p, seed=0), sample.read_bytes()
    for c, comp in (("gzip -6", lambda d: zlib.compress(d, 6)), ("bzip2 -9", lambda d: bz2.compress(d, 9))):
        want = (len(g) / len(comp(g))) / (len(smp) / len(comp(smp))) - 1
        assert fid[c] == pytest.approx(want, abs=1e-12), c
    assert q.fidelity() == {} and testdata.Profile.builtin("html").fidelity() == {}
    assert x == testdata.generate("like", "300K", profile=str(path), seed=1)
    assert x == testdata.generate("like", "300K", profile=path, seed=1)
    assert testdata.generate("like", "300K", profile=testdata.Profile.loads(p.dumps()), seed=1) == x
    import pickle
    assert testdata.generate("like", "300K", profile=pickle.loads(pickle.dumps(p)), seed=1) == x
    out = subprocess.run([cli, "gen", "like", "300K", "--profile", str(path), "--seed", "1"],
                         stdout=subprocess.PIPE, check=True).stdout
    assert out == x
    with testdata.Stream("like", "1M", profile=str(path), seed=1) as f:
        f.seek(1000)
        assert f.read(5000) == testdata.generate("like", "1M", profile=q, seed=1)[1000:6000]
    testdata.verify(x, "like", "300K", profile=q, seed=1)
    with pytest.raises(testdata.MismatchError):
        testdata.verify(x, "like", "300K", profile="english", seed=1)


def test_compare_against_a_profile(tmp_path, cli):
    """Profile.compare is `profile --check --json` (td_profile_compare and
    the library's JSON): the sample against its own profile has its ratios
    (to the JSON's 6 digits), a file and its bytes agree, the CLI prints the
    same ratios; bad input raises."""
    sample = tmp_path / "sample.txt"
    sample.write_bytes(testdata.generate("text", "2M", seed=5))
    p = testdata.profile(sample, model="lz")
    fp = p.fingerprint()
    own = p.compare(sample)
    assert set(own) == {"gzip", "zstd", "lz4", "xz"}
    for c, row in own.items():
        assert isinstance(row, testdata.ProfileComparison)
        assert row.ratio == row.profile_ratio == pytest.approx(fp[c][0], rel=1e-5) and row.error == 0.0
        assert row.profile_ns_per_byte == pytest.approx(fp[c][1], rel=1e-5)
        assert row.ns_per_byte > 0 and row.cost is not None and row.cost > 0
    other = testdata.generate("random", "100K", seed=1)
    mem = p.compare(other)
    assert mem["gzip"].ratio < 1.01 and mem["gzip"].error < -0.5
    f = tmp_path / "r"
    f.write_bytes(other)
    assert [r.ratio for r in p.compare(f).values()] == [r.ratio for r in mem.values()]
    out = subprocess.run([cli, "profile", "--check", "html", str(f)], stdout=subprocess.PIPE,
                         check=True).stdout.decode()
    html = testdata.Profile.builtin("html").compare(bytearray(other))
    assert html["xz"].profile_ns_per_byte is None and html["xz"].cost is None
    assert html["xz"].error == pytest.approx(html["xz"].ratio / html["xz"].profile_ratio - 1, abs=1e-5)
    row = [ln.split() for ln in out.splitlines() if ln.startswith("  xz -6")][-1]
    assert row[2] == "%.3f" % html["xz"].ratio and row[3] == "%.3f" % html["xz"].profile_ratio
    with pytest.raises(ValueError, match="empty"):
        p.compare(b"")
    with pytest.raises(FileNotFoundError):
        p.compare(tmp_path / "missing")
    with pytest.raises(IsADirectoryError):
        p.compare(tmp_path)
    with pytest.raises(TypeError):
        p.compare(3)  # type: ignore[arg-type]


def test_bad_profile_input(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "libtestdata-profile", "version": 1,}')
    with pytest.raises(ValueError, match="bad.json"):
        testdata.Profile.load(bad)
    with pytest.raises(ValueError):
        testdata.Profile.loads(b"[1, 2]")
    with pytest.raises(ValueError, match="profile name"):
        testdata.profile(b"abc" * 1000, name="x" * 100)
    with pytest.raises(TypeError):
        testdata.Profile.loads(3)  # type: ignore[arg-type]
    # sample_bytes: a size as --sample takes it, judged by the library.
    for size in (0, "0", "inf"):
        with pytest.raises(ValueError, match="bad sample size .*: 1 byte to 2\\^64-2"):
            testdata.profile(b"abc" * 1000, sample_bytes=size)
    with pytest.raises(TypeError):
        testdata.profile(b"abc" * 1000, sample_bytes=True)
    sample = testdata.generate("like", "3M", profile="html", seed=1)
    one = testdata.profile(sample, sample_bytes="1M", fingerprint=False)
    assert one == testdata.profile(sample, sample_bytes=1 << 20, fingerprint=False)
    assert one == testdata.profile(sample, sample_bytes=1, fingerprint=False)  # whole MiB
    assert one != testdata.profile(sample, sample_bytes="2M", fingerprint=False)
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    for nothing in ([], b"", empty, [empty, b""]):
        with pytest.raises(ValueError, match="at least one byte"):
            testdata.profile(nothing)  # type: ignore[arg-type]


def test_profile_model():
    """model= chooses how the sample is modelled, as --model: auto keeps
    one of the two; bad values raise."""
    sample = testdata.generate("text", "300K", seed=4)
    lz = testdata.profile(sample, model="lz", fingerprint=False)
    ctx = testdata.profile(sample, model="context", fingerprint=False)
    auto = testdata.profile(sample, fingerprint=False)
    assert (lz.model, ctx.model) == ("lz", "context") and lz != ctx
    assert auto in (lz, ctx)
    assert testdata.Profile.builtin("english").model == "context"
    assert testdata.Profile.builtin("jpeg").model == "lz"
    x = testdata.generate("like", "2M", profile=ctx, seed=9)
    assert testdata.Profile.loads(ctx.dumps()) == ctx and '"version": 2' in ctx.dumps()
    with testdata.Stream("like", "2M", profile=ctx, seed=9) as f:
        f.seek(1500000)
        assert f.read(100000) == x[1500000:1600000]
    with pytest.raises(ValueError, match="bad model 'ctx': auto, lz or context"):
        testdata.profile(sample, model="ctx")
    with pytest.raises(TypeError, match="model must be a str"):
        testdata.profile(sample, model=2)  # type: ignore[arg-type]


def test_profile_threads():
    """threads=2 measures the fingerprint while the model is built: the same
    profile; bad values raise as for any threads option."""
    sample = testdata.generate("like", "1500K", profile="html", seed=5)
    one = testdata.profile(sample)
    assert testdata.profile(sample, threads=2) == one == testdata.profile(sample, threads=0)
    assert testdata.profile(sample, threads=2).fingerprint()["xz"][0] > 1
    with pytest.raises(ValueError, match="threads"):
        testdata.profile(sample, threads="two")
    with pytest.raises(TypeError):
        testdata.profile(sample, threads=None)  # type: ignore[arg-type]


def test_zero_pages_come_back():
    """A sample's one-byte 4 KiB blocks are counted by the builder and put
    back by the generator at about the same share (model.const)."""
    sample = bytearray(testdata.generate("like", "1M", profile="source", seed=2))
    for i in range(0, 256, 4):  # 64 of 256 blocks
        sample[i * 4096:(i + 1) * 4096] = bytes(4096)
    p = testdata.profile(bytes(sample), fingerprint=False)
    data = testdata.generate("like", "8M", profile=p, seed=1)
    blocks = [data[i:i + 4096] for i in range(0, len(data), 4096)]
    zero = sum(b == bytes(4096) for b in blocks) / len(blocks)
    assert abs(zero - 0.25) < 0.03, zero


def test_fixtures_take_profile(testdata_file, testdata_stream, testdata_shared_file):
    p = testdata_file("like", "64K", profile="json", seed=2)
    assert p.read_bytes() == testdata.generate("like", "64K", profile="json", seed=2)
    prof = testdata.Profile.builtin("source")
    with testdata_stream("like", "10K", profile=prof, seed=2) as s:
        assert s.read() == testdata.generate("like", "10K", profile="source", seed=2)
    a = testdata_shared_file("like", "32K", profile="html", seed=4)
    b = testdata_shared_file("like", "32K", profile="json", seed=4)
    assert a != b and a.read_bytes() != b.read_bytes()


def test_tree_of_like_files(tmp_path):
    t = testdata.tree(tmp_path / "t", files=5, sizes="fixed:8K", kind="like", profile="html",
                      seed=1)
    testdata.verify_tree(t, files=5, sizes="fixed:8K", kind="like", profile="html", seed=1)
    with pytest.raises(testdata.TreeMismatchError):
        testdata.verify_tree(t, files=5, sizes="fixed:8K", kind="like", profile="json", seed=1)


def _loose_bytes(win, run_min=4):
    """Bytes of win outside its maximal runs of run_min or more equal bytes."""
    loose, i = 0, 0
    while i < len(win):
        j = i
        while j < len(win) and win[j] == win[i]:
            j += 1
        loose += j - i if j - i < run_min else 0
        i = j
    return loose


def _shared_content(sample, data, w=32, loose_max=8):
    """The w-byte windows of data found in sample that are more than the
    edges of runs (over loose_max bytes outside runs of 4 equal bytes)."""
    seen = {sample[i:i + w] for i in range(len(sample) - w + 1)}
    return [data[i:i + w] for i in range(len(data) - w + 1)
            if data[i:i + w] in seen and _loose_bytes(data[i:i + w]) > loose_max]


@pytest.mark.parametrize("sample", ["text", "/usr/share/common-licenses/GPL-3", "/usr/bin/ls"])
def test_like_data_shares_no_content_with_its_sample(sample):
    """A profile holds statistics, never content, so data made from it shares
    no 32-byte string with the sample (issue 14, property 6), but for runs of
    equal bytes and the few bytes at their edges ("\\r\\n" and 30 spaces:
    docs/benchmarks.md, like, "Content")."""
    if sample == "text":
        data = testdata.generate("text", "256K", seed=11)
    else:
        try:
            with open(sample, "rb") as f:
                data = f.read(1 << 20)
        except OSError:
            pytest.skip(sample + " is not readable here")
    gen = testdata.generate("like", "1M", profile=testdata.profile(data, fingerprint=False), seed=1)
    assert _shared_content(data, gen) == []
    # the check finds a string of the sample put into the data
    at = next(i for i in range(0, len(data) - 40, 64) if _loose_bytes(data[i:i + 32]) > 8)
    planted = gen[:4096] + data[at:at + 40] + gen[4096:8192]
    assert _shared_content(data, planted) != []
