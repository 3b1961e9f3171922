"""Every shell example in README.md and docs/ (those the suite runs and the
`<!-- norun -->` ones alike) and in the man page's EXAMPLES is safe to paste
into a terminal: no `testdata gen` of a binary kind writes to the terminal
(its stdout is redirected, piped, captured, or `-o` is given).  gen itself
refuses that without --force (tests/cli/test_ecosystem.py); this keeps the
documentation from showing a command that would be refused."""
import pathlib
import re
import shlex

import pytest

from test_doc_examples import SRC, blocks, documents

SEPARATORS = {"|", "||", "&&", ";", "&", "|&"}


def commands(code):
    """(text, gen_tokens, stdout_taken) for each `testdata gen` in a shell snippet."""
    code = re.sub(r"\\\n", " ", code)
    for line in code.splitlines():
        lex = shlex.shlex(line, posix=True, punctuation_chars=True)
        lex.commenters = "#"
        lex.whitespace_split = True
        try:
            toks = list(lex)
        except ValueError:  # an unbalanced quote in an illustrative line
            continue
        for i, t in enumerate(toks):
            if t != "testdata" or toks[i + 1:i + 2] != ["gen"]:
                continue
            j = i + 2
            while j < len(toks) and toks[j] not in SEPARATORS and toks[j] != ")":
                j += 1
            seg = toks[i:j]
            taken = (j < len(toks) and toks[j] in ("|", "|&", ")")) or \
                (i > 0 and toks[i - 1].endswith("(")) or \
                any(x in (">", ">>", "-o", "--output", "--force", "-f", "--help", "-h") or
                    x.startswith(("-o", "--output=")) for x in seg[2:])
            yield line.strip(), seg, taken


def shell_examples():
    for doc in documents():
        for line, lang, code, marker, include in blocks(doc):
            if lang == "sh":
                yield f"{doc.relative_to(SRC)}:{line}", code
    man = (SRC / "docs" / "testdata.1").read_text()
    ex = man.split(".SH EXAMPLES", 1)[1].split(".SH ", 1)[0].replace("\\-", "-")
    yield "docs/testdata.1:EXAMPLES", "\n".join(ln for ln in ex.splitlines() if not ln.startswith("."))


def test_the_checker_sees_the_danger():
    bad = "testdata gen random 1G --seed 7\ntestdata gen zero 1M --quiet && echo x\n"
    ok = ("testdata gen random 1G > f\ntestdata gen random 1G | wc -c\ntestdata gen text 1M\n"
          "testdata gen zero 1M -o f\nx=$(testdata gen zero 10)\ncmp <(testdata gen zero 1) f\n"
          "testdata gen random 1M --force\n")
    assert [s[0] for s in commands(bad) if not s[2] and s[1][2] != "text"] == \
        ["testdata gen random 1G --seed 7", "testdata gen zero 1M --quiet && echo x"]
    assert [s for s in commands(ok) if not s[2] and s[1][2] != "text"] == []


@pytest.mark.parametrize("where,code", list(shell_examples()), ids=lambda x: x if ":" in str(x) else "")
def test_no_binary_to_the_terminal(where, code):
    bad = [text for text, seg, taken in commands(code)
           if not taken and len(seg) > 2 and seg[2] != "text"]
    assert not bad, f"{where}: would write binary data to the terminal: {bad}"
