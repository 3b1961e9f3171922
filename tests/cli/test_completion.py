"""`testdata completion bash|zsh|fish`: scripts generated from the program's
option specs and the library's option table and kinds; each shell is made
to complete real command lines (bash: the completion function with
COMP_WORDS; zsh: an interactive zsh in a pseudo-terminal; fish: complete -C)."""
import os
import pathlib
import re
import shutil
import subprocess

import pytest

HERE = pathlib.Path(__file__).parent
KINDS = {"zero", "random", "text", "compressible"}


def help_options(run, *cmd):
    text = run(*cmd, "--help").stdout.decode()
    return set(re.findall(r"^  (?:-\w, )?--([a-z][a-z-]*)", text, re.M))


def subcommands(run, cmd):
    """The subcommand words `testdata CMD --help` lists ("gen" of "tree gen ...")."""
    text = run(cmd, "--help").stdout.decode().split("\ncommands:\n", 1)[1].split("\n\n")[0]
    return {line.split()[1] for line in text.splitlines()}


@pytest.fixture(scope="module")
def scripts(cli, tmp_path_factory):
    d = tmp_path_factory.mktemp("completions")
    names = {"bash": "testdata.bash", "zsh": "_testdata", "fish": "testdata.fish"}
    for shell, name in names.items():
        r = subprocess.run([cli, "completion", shell], capture_output=True, check=True)
        assert r.stderr == b""
        (d / name).write_bytes(r.stdout)
    (d / "files").mkdir()
    for f in ("alpha.bin", "beta.txt"):
        (d / "files" / f).write_bytes(b"")
    (d / "fixture.bin").write_bytes(b"")  # not a directory
    return d


def test_scripts_parse(scripts):
    for shell, name in (("bash", "testdata.bash"), ("zsh", "_testdata"), ("fish", "testdata.fish")):
        if shutil.which(shell):
            r = subprocess.run([shell, "-n", str(scripts / name)], capture_output=True)
            assert r.returncode == 0, (shell, r.stderr)


def test_bad_shell(run):
    assert run("completion").returncode == 2
    r = run("completion", "tcsh")
    assert r.returncode == 2 and b"unknown shell 'tcsh'" in r.stderr


# Each case: the words typed (the last one is being completed), what must be
# offered, and what must not.
def cases(run):
    gen_opts = {"--" + o for o in help_options(run, "gen")}
    analyze_opts = {"--" + o for o in help_options(run, "analyze")}
    tree_subs = subcommands(run, "tree")
    assert tree_subs == {"gen", "list", "verify", "like"}
    tree_opts = {sub: {"--" + o for o in help_options(run, "tree", sub)} for sub in tree_subs}
    assert {"--files", "--sizes", "--kind", "--like", "--seed", "--dedup-block"} <= tree_opts["gen"]
    return [
        (["testdata", ""], {"gen", "verify", "analyze", "tree", "completion", "help"}, set()),
        (["testdata", "ve"], {"verify"}, {"gen"}),
        (["testdata", "gen", ""], KINDS, {"--seed"}),
        (["testdata", "gen", "ra"], {"random"}, {"zero"}),
        (["testdata", "verify", ""], KINDS, set()),
        (["testdata", "gen", "--seed", "5", ""], KINDS, set()),
        (["testdata", "gen", "random", "1M", "--"], gen_opts, {"--json"}),
        (["testdata", "gen", "random", "1M", "--de"], {"--dedup", "--dedup-block"}, {"--seed"}),
        (["testdata", "gen", "random", "1M", "--algorithm", ""], {"chacha20", "fast"}, KINDS),
        (["testdata", "verify", "random", "1M", "--algorithm", "f"], {"fast"}, {"chacha20"}),
        (["testdata", "analyze", "--"], analyze_opts, {"--seed"}),
        (["testdata", "gen", "random", "1M", "-o", "files/"], {"files/alpha.bin", "files/beta.txt"}, set()),
        (["testdata", "verify", "random", "1M", "files/a"], {"files/alpha.bin"}, set()),
        (["testdata", "analyze", "files/b"], {"files/beta.txt"}, set()),
        (["testdata", "completion", ""], {"bash", "zsh", "fish"}, set()),
        (["testdata", "help", ""], {"gen", "verify", "analyze", "tree", "completion"}, set()),
        # subcommands (cli_cmd.subs), then each one's own, tree and stream options
        (["testdata", "tree", ""], tree_subs, KINDS | {"--seed", "--help", "files"}),
        (["testdata", "tree", "v"], {"verify"}, {"gen", "list", "like"}),
        (["testdata", "tree", "-"], {"--help"}, tree_subs | {"--seed"}),
        (["testdata", "tree", "gen", "--"], tree_opts["gen"], {"--json", "--output"}),
        (["testdata", "tree", "list", "--"], tree_opts["list"], {"--resume", "--mpi"}),
        (["testdata", "tree", "verify", "out", "--"], tree_opts["verify"], {"--resume"}),
        (["testdata", "tree", "like", "--"], tree_opts["like"], {"--seed", "--files"}),
        (["testdata", "tree", "gen", "--fa"], {"--fanout"}, {"--files"}),
        (["testdata", "tree", "gen", "out", "--kind", ""], KINDS, {"files"}),
        (["testdata", "tree", "verify", "--kind", "co"], {"compressible"}, {"random"}),
        (["testdata", "tree", "list", "--algorithm", ""], {"chacha20", "fast"}, KINDS),
        (["testdata", "tree", "gen", "--like", "files/"], {"files/alpha.bin"}, set()),
        (["testdata", "tree", "like", "out", "-o", "files/a"], {"files/alpha.bin"}, set()),
        (["testdata", "tree", "gen", "--seed", "5", "fi"], {"files"}, {"fixture.bin"}),
        (["testdata", "tree", "verify", ""], {"files"}, {"fixture.bin", "gen"}),
        (["testdata", "help", "tree", ""], tree_subs, {"analyze", "completion"}),
        (["testdata", "help", "gen", ""], set(), tree_subs),
    ]


def norm(words):
    """What a shell shows may carry a trailing '=' (--seed=) or '/' or ' '."""
    return {w.strip().rstrip("=").rstrip("/") for w in words if w.strip()}


def check(shell, words, got, want, unwanted):
    got = norm(got)
    assert want <= got, f"{shell} {' '.join(words)!r}: missing {want - got} in {sorted(got)}"
    assert not (unwanted & got), f"{shell} {' '.join(words)!r}: offered {unwanted & got}"


@pytest.mark.skipif(not shutil.which("bash"), reason="needs bash")
def test_bash(run, scripts):
    for words, want, unwanted in cases(run):
        arr = " ".join("'" + w + "'" for w in words)
        prog = (f"source '{scripts / 'testdata.bash'}'\n"
                f"COMP_WORDS=({arr}); COMP_CWORD={len(words) - 1}; COMPREPLY=()\n"
                "_testdata 2>/dev/null\n"
                "printf '%s\\n' \"${COMPREPLY[@]}\"\n")
        r = subprocess.run(["bash", "-c", prog], capture_output=True, text=True,
                           cwd=scripts)
        check("bash", words, r.stdout.splitlines(), want, unwanted)
    # registered for the command
    r = subprocess.run(["bash", "-c", f"source '{scripts / 'testdata.bash'}'; complete -p testdata"],
                       capture_output=True, text=True)
    assert "-F _testdata" in r.stdout


@pytest.mark.skipif(not shutil.which("fish"), reason="needs fish")
def test_fish(run, scripts):
    for words, want, unwanted in cases(run):
        line = " ".join(words)
        r = subprocess.run(["fish", "--no-config", "-c",
                            f"source '{scripts / 'testdata.fish'}'; complete -C '{line}'"],
                           capture_output=True, text=True, cwd=scripts)
        # fish prints the whole token after an option's '=' too; keep the value
        check("fish", words, [w.split("\t")[0] for w in r.stdout.splitlines()], want, unwanted)


@pytest.mark.skipif(not shutil.which("zsh"), reason="needs zsh")
def test_zsh(run, scripts, tmp_path):
    # one compinit dump for all the cases (the first run writes it)
    env = dict(os.environ, TD_ZDUMP=str(tmp_path / "zcompdump"))
    for words, want, unwanted in cases(run):
        line = " ".join(words)
        r = subprocess.run(["zsh", "-f", str(HERE / "zsh_complete.zsh"), str(scripts), line],
                           capture_output=True, text=True, cwd=scripts, timeout=60, env=env)
        got = r.stdout.splitlines()
        # zsh completes file names within their directory
        if words[-1].startswith("files/"):
            got = ["files/" + g if not g.startswith("files/") else g for g in got]
        check("zsh", words, got, want, unwanted)
