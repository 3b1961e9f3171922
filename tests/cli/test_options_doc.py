"""The option table is the one source of the stream options: `gen --help`
and `verify --help` print it (generated), and the man page must list exactly
the same options, with each command's own options too."""
import re


def help_sections(run, cmd):
    text = run(cmd, "--help").stdout.decode()
    own, stream = text.split("\noptions:\n", 1)[1], ""
    if "\nstream options" in own:
        own, stream = own.split("\nstream options", 1)
    flags = lambda t: set(re.findall(r"^  (?:-\w, )?--([a-z][a-z-]*)", t, re.M))  # noqa: E731
    return flags(own) - {"help"}, flags(stream)


def tags(source_dir, title):
    man = (source_dir / "docs" / "testdata.1").read_text()
    part = re.split(r"\n\.S[SH] ", man.split(f".SS {title}\n", 1)[1], 1)[0]
    out = set()
    for t in re.findall(r"^\.TP\n(.*)$", part, re.M):
        out |= {m.replace("\\-", "-") for m in re.findall(r"\\-\\-((?:[a-z]|\\-)+)(?![A-Za-z])", t)}
    return out


def test_stream_options_agree(run, source_dir):
    _, gen_stream = help_sections(run, "gen")
    _, verify_stream = help_sections(run, "verify")
    assert gen_stream == verify_stream
    assert {"seed", "threads", "dedup-block"} <= gen_stream
    assert tags(source_dir, "Stream options (gen, verify)") == gen_stream


def test_command_options_documented(run, source_dir):
    gen_own, _ = help_sections(run, "gen")
    verify_own, _ = help_sections(run, "verify")
    analyze_own, _ = help_sections(run, "analyze")
    both = tags(source_dir, "gen, verify")
    assert gen_own == both | tags(source_dir, "gen")
    assert verify_own == both
    assert analyze_own == tags(source_dir, "analyze")
    profile_own, _ = help_sections(run, "profile")
    assert profile_own == tags(source_dir, "profile")


def tree_help_sections(run, sub):
    """(own, tree, stream) option names of `testdata tree SUB --help`."""
    text = run("tree", sub, "--help").stdout.decode()
    rest = text.split("\noptions:\n", 1)[1]
    own, tree, stream = rest, "", ""
    if "\nstream options" in own:
        own, stream = own.split("\nstream options", 1)
    if "\ntree options:\n" in own:
        own, tree = own.split("\ntree options:\n", 1)
    flags = lambda t: set(re.findall(r"^  (?:-\w, )?--([a-z][a-z-]*)", t, re.M))  # noqa: E731
    return flags(own) - {"help"}, flags(tree), flags(stream)


def test_tree_options_agree(run, source_dir):
    """The tree option table is printed by tree gen/list/verify --help and
    listed in the man page; each tree command's own options are documented."""
    g_own, g_tree, g_stream = tree_help_sections(run, "gen")
    l_own, l_tree, l_stream = tree_help_sections(run, "list")
    v_own, v_tree, v_stream = tree_help_sections(run, "verify")
    k_own, k_tree, _ = tree_help_sections(run, "like")
    assert g_tree == l_tree == v_tree
    assert {"files", "total", "sizes", "depth", "fanout", "kind", "like"} == g_tree
    assert tags(source_dir, "Tree options (tree gen, list, verify)") == g_tree
    _, gen_stream = help_sections(run, "gen")
    assert g_stream == l_stream == v_stream == gen_stream
    both = tags(source_dir, "tree gen, tree verify")
    assert g_own == both | tags(source_dir, "tree gen")
    assert v_own == both
    assert l_own == set()
    assert k_own == tags(source_dir, "tree like") and k_tree == set()


def test_profile_sample_rounds_to_whole_mib(run, tmp_path):
    """--sample 1K parsed 1 MiB while the help said 'at most SIZE bytes': the
    regions are whole MiB, and the help and man page say so."""
    f = tmp_path / "s.txt"
    run("gen", "text", "3M", "-o", f, check=True)
    r = run("profile", f, "--sample", "1K", "--no-fingerprint", "-o", tmp_path / "p.json")
    assert r.returncode == 0 and b"(1048576 parsed" in r.stderr, r.stderr
    h = run("profile", "--help", check=True).stdout.decode()
    assert "rounded up to whole MiB" in " ".join(h.split())
