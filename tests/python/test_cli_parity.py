"""Python and the `testdata` CLI give the same bytes for the same arguments."""
import subprocess

import pytest

import testdata

CASES = [
    ("random", "1M", {}),
    ("random", "100000", {"seed": 7}),
    ("random", "3M", {"seed": "0xdeadbeef", "algorithm": "fast"}),
    ("random", "5M", {"seed": 3, "threads": 2}),
    ("random", "1KB", {"seed": 2**64 - 1, "algorithm": "chacha20"}),
    ("zero", "100K", {}),
    ("zero", "0", {}),
]


def cli_args(kind, size, options):
    args = ["gen", kind, size]
    for k, v in options.items():
        args += [f"--{k.replace('_', '-')}", str(v)]
    return args


@pytest.mark.parametrize("kind,size,options", CASES)
def test_generate_equals_cli(run, kind, size, options):
    r = run(*cli_args(kind, size, options))
    assert r.returncode == 0, r.stderr
    opts = dict(options)
    seed = opts.pop("seed", 0)
    assert testdata.generate(kind, size, seed=seed, **opts) == r.stdout
    with testdata.Stream(kind, size, seed=seed, **opts) as s:
        assert s.read() == r.stdout


@pytest.mark.parametrize("kind", testdata.kinds())
def test_every_kind_equals_cli(run, kind):
    """Every kind the library knows (new ones too) with its default options."""
    r = run(*["gen", kind, "300K", "--seed", "3", "--offset", "12345"])
    assert r.returncode == 0, r.stderr
    assert testdata.generate(kind, "300K", seed=3, offset=12345) == r.stdout


@pytest.mark.parametrize("kind,size,options", CASES[:4])
def test_write_equals_cli_output_file(run, tmp_path, kind, size, options):
    out = tmp_path / "cli.bin"
    assert run(*cli_args(kind, size, options), "-o", out).returncode == 0
    opts = dict(options)
    seed = opts.pop("seed", 0)
    p = testdata.write(tmp_path / "py.bin", kind, size, seed=seed, **opts)
    assert p.read_bytes() == out.read_bytes()
    testdata.verify(out, kind, size, seed=seed, **opts)


def test_offset_equals_cli(run):
    r = run(*["gen", "random", "10000", "--seed", "5", "--offset", "1G"])
    assert testdata.generate("random", 10000, seed=5, offset="1G") == r.stdout
    with testdata.Stream("random", "inf", seed=5) as s:
        s.seek(1 << 30)
        assert s.read(10000) == r.stdout


@pytest.mark.parametrize("args,options", [
    (["gen", "random", "1K", "--algorithm", "md5"], {"algorithm": "md5"}),
    (["gen", "zero", "1K", "--algorithm", "fast"], {"algorithm": "fast"}),
    (["gen", "random", "1K", "--seed", "x"], {"seed": "x"}),
    (["gen", "random", "1K", "--threads", "-1"], {"threads": -1}),
])
def test_rejected_by_both(run, args, options):
    assert run(*args).returncode == 2
    with pytest.raises(ValueError):
        testdata.generate(args[1], args[2], **options)


@pytest.mark.parametrize("size", ["10Q", "-5", "", "18446744073709551616", "1.5K"])
def test_sizes_rejected_by_both(run, size):
    assert run(*["gen", "zero", size]).returncode == 2
    with pytest.raises(ValueError):
        testdata.generate("zero", size)
