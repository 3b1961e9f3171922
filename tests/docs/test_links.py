"""Every relative link of README.md and docs/*.md that names an anchor
(`file.md#section`, `#section`) points to a heading that exists, spelt as
GitHub makes heading anchors.  (test_doc_examples.py checks that the
files exist.)"""
import pathlib
import re

import pytest

SRC = pathlib.Path(__file__).resolve().parents[2]
LINK = re.compile(r"\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}[ \t]+(.*?)[ \t]*#*[ \t]*$", re.M)


def documents():
    return [SRC / "README.md"] + sorted((SRC / "docs").glob("*.md"))


def prose(text):
    """The text without fenced code blocks (where `#` is no heading and
    `](` no link) and without inline code spans."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return re.sub(r"`[^`\n]*`", "", text)


def slug(heading):
    """GitHub's anchor of a heading: lower case, punctuation other than
    `-` and `_` dropped, spaces made hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(text):
    found, seen = set(), {}
    for h in HEADING.findall(re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)):
        s = slug(h)
        n = seen.get(s, 0)
        seen[s] = n + 1
        found.add(s if n == 0 else f"{s}-{n}")
    found.update(re.findall(r'<a (?:name|id)="([^"]+)"', text))
    return found


def broken_anchors(doc):
    bad = []
    for target in LINK.findall(prose(doc.read_text())):
        if re.match(r"[a-z]+:", target) or "#" not in target:
            continue
        path, frag = target.split("#", 1)
        dest = (doc.parent / path) if path else doc
        if dest.suffix != ".md" or not dest.exists():
            continue  # other files: test_doc_examples.py::test_relative_links_resolve
        if frag not in anchors(dest.read_text()):
            bad.append(target)
    return bad


@pytest.mark.parametrize("doc", documents(), ids=lambda d: str(d.relative_to(SRC)))
def test_link_anchors_match_headings(doc):
    bad = broken_anchors(doc)
    assert not bad, f"{doc.name}: links to headings that do not exist: {bad}"


def test_checker_finds_a_broken_anchor(tmp_path):
    (tmp_path / "b.md").write_text("# B\n\n## The `--mpi` mode (MPI, Dask)\n\n## Again\n\n## Again\n")
    doc = tmp_path / "a.md"
    doc.write_text("# A\n\n[ok](b.md#the---mpi-mode-mpi-dask) [ok](b.md#again-1) [ok](#a)\n"
                   "[bad](b.md#the-mpi-mode) [bad](#nowhere) [bad](b.md#again-2)\n"
                   "`[code](#not-checked)`\n\n```sh\n# not a heading\n```\n")
    assert broken_anchors(doc) == ["b.md#the-mpi-mode", "#nowhere", "b.md#again-2"]
