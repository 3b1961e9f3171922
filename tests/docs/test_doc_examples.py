"""Every example in README.md and docs/*.md is run, so the docs cannot rot.

Fenced blocks are collected by language:
  ```sh      run with `sh -eu` in a scratch directory (one per document, shared
             by its blocks in order), the built `testdata` first on PATH;
  ```python  run with the tests' interpreter (PYTHONPATH: the build tree);
             a block that defines `def test_...` is run with pytest and the
             testdata plugin instead;
  ```c       compiled against the built library and run: a block without
             main() is wrapped in one (its #include lines kept on top).
A block is skipped when the line before its fence is `<!-- norun -->`
(examples that need ssh, several hosts, special file systems, or are
illustrative), or `<!-- needs: X -->` and X is missing: a kind of the built
program, `mpi` (a --mpi build and mpiexec), or a Python module such as
`dask`; and
`<!-- include: PATH -->` (relative to the document) asserts that the block
is that file verbatim (the file itself is built by CTest, or copied into
the document's scratch directory before its first block runs).

Environment (set by CTest): TESTDATA_CLI (the program), TD_SOURCE_DIR,
TD_BUILD_DIR, PYTHONPATH.
    TESTDATA_CLI=build/programs/testdata TD_BUILD_DIR=build \
    PYTHONPATH=build/bindings/python python3 -m pytest tests/docs
"""
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

import pytest

SRC = pathlib.Path(os.environ.get("TD_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
BUILD = pathlib.Path(os.environ.get("TD_BUILD_DIR", SRC / "build")).resolve()
CLI = pathlib.Path(os.environ.get("TESTDATA_CLI", BUILD / "programs" / "testdata")).resolve()
LANGS = {"sh": "sh", "shell": "sh", "bash": "sh", "python": "python", "c": "c"}
FENCE = re.compile(r"^```(\w*)\s*$")
MARK = re.compile(r"^<!--\s*(norun|include:\s*(\S+)|needs:\s*(\S+))\s*-->\s*$")


def documents():
    return [SRC / "README.md"] + sorted((SRC / "docs").glob("*.md"))


def blocks(path):
    """(line, lang, code, marker, include) for each fenced block of a document."""
    out = []
    lines = path.read_text().splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        lang, start = m.group(1), i
        prev = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        mm = MARK.match(prev.strip())
        i += 1
        body = []
        while i < len(lines) and not lines[i].startswith("```"):
            body.append(lines[i])
            i += 1
        i += 1
        if lang in LANGS or (mm and mm.group(2)):
            marker = None
            if mm and mm.group(1) == "norun":
                marker = "norun"
            elif mm and mm.group(3):
                marker = "needs:" + mm.group(3)
            out.append((start + 1, LANGS.get(lang, lang), "\n".join(body) + "\n", marker,
                        mm.group(2) if mm and mm.group(2) else None))
    return out


def available(what):
    """`<!-- needs: X -->`: X is a kind of the built program, `mpi` (the program has
    --mpi and mpiexec is on PATH) or a Python module (e.g. `dask`)."""
    if what == "mpi":
        help_text = subprocess.run([str(CLI), "gen", "--help"], capture_output=True, text=True).stdout
        return "--mpi" in help_text and shutil.which("mpiexec") is not None
    if what in cli_kinds():
        return True
    return subprocess.run([sys.executable, "-c", f"import {what}"], env=env(),
                          capture_output=True).returncode == 0


def cli_kinds():
    """Kinds of the built program (`testdata gen --help`: "KIND   zero | random ...")."""
    out = subprocess.run([str(CLI), "gen", "--help"], capture_output=True, text=True).stdout
    m = re.search(r"^\s*KIND\s+(.*)$", out, re.M)
    return {k.strip() for k in m.group(1).split("|")} if m else set()


ALL = [(doc, *b) for doc in documents() for b in blocks(doc)]
RUN = [pytest.param(*x, id=f"{x[0].relative_to(SRC)}:{x[1]}:{x[2]}") for x in ALL if x[4] != "norun"]
SKIPPED = [x for x in ALL if x[4] == "norun"]

_scratch = {}
_prefix = []


def scratch(doc):
    """One scratch directory per document, shared by its blocks in order."""
    if doc not in _scratch:
        d = _scratch[doc] = pathlib.Path(tempfile.mkdtemp(prefix="tddoc-"))
        # Included files (e.g. link.py) are there from the start, as for a reader
        # who saved them: a block may use one before the document shows it.
        for *_, include in blocks(doc):
            if include:
                shutil.copy(doc.parent / include, d / pathlib.PurePath(include).name)
    return _scratch[doc]


@pytest.fixture(scope="session", autouse=True)
def _install():
    """The build installed into a scratch prefix, as a reader's `cmake --install`
    would: pkg-config and find_package(testdata) examples find it there."""
    prefix = pathlib.Path(tempfile.mkdtemp(prefix="tddoc-prefix-"))
    cmake = os.environ.get("CMAKE_COMMAND", "cmake")
    subprocess.run([cmake, "--install", str(BUILD), "--prefix", str(prefix)], check=True,
                   stdout=subprocess.DEVNULL)
    _prefix.append(prefix)
    yield
    shutil.rmtree(prefix, ignore_errors=True)
    for d in _scratch.values():
        shutil.rmtree(d, ignore_errors=True)
    for d in _scratch.values():
        shutil.rmtree(d, ignore_errors=True)


def env():
    e = dict(os.environ)
    bindir = pathlib.Path(tempfile.gettempdir()) / f"tddoc-bin-{os.getpid()}"
    bindir.mkdir(exist_ok=True)
    link = bindir / "testdata"
    if not link.exists():
        link.symlink_to(CLI)
    e["PATH"] = f"{bindir}{os.pathsep}{e.get('PATH', '')}"
    e["PYTHONPATH"] = os.pathsep.join(
        p for p in [str(BUILD / "bindings" / "python"), e.get("PYTHONPATH", "")] if p)
    if _prefix:
        lib = next(d for d in (_prefix[0] / "lib").iterdir() if d.is_dir() and
                   (d / "pkgconfig").is_dir()) if not (_prefix[0] / "lib" / "pkgconfig").is_dir() \
            else _prefix[0] / "lib"
        e["LD_LIBRARY_PATH"] = os.pathsep.join(p for p in [str(lib), e.get("LD_LIBRARY_PATH", "")] if p)
        e["PKG_CONFIG_PATH"] = os.pathsep.join(
            p for p in [str(lib / "pkgconfig"), e.get("PKG_CONFIG_PATH", "")] if p)
        e["CMAKE_PREFIX_PATH"] = str(_prefix[0])
    e["TD_SOURCE_DIR"] = str(SRC)
    e["TD_BUILD_DIR"] = str(BUILD)
    return e


def run(cmd, cwd, **kw):
    r = subprocess.run(cmd, cwd=cwd, env=env(), capture_output=True, timeout=600, **kw)
    out, err = (x[-4000:].decode("utf-8", "replace") for x in (r.stdout, r.stderr))
    assert r.returncode == 0, f"exit {r.returncode}\n--- stdout\n{out}\n--- stderr\n{err}"
    return r


def run_sh(code, cwd):
    # stdout is discarded by the caller's redirection inside the block, or here
    # (a block may write a GiB to stdout, as a shell user would see it).
    r = subprocess.run(["sh", "-eu", "-c", code], cwd=cwd, env=env(), stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True, timeout=600)
    assert r.returncode == 0, f"exit {r.returncode}\n--- stderr\n{r.stderr[-4000:]}"


def run_python(code, cwd):
    if re.search(r"^def test_", code, re.M):
        (cwd / "test_doc_block.py").write_text(code)
        run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
             "-p", "testdata.pytest_plugin", "test_doc_block.py"], cwd)
    else:
        run([sys.executable, "-c", code], cwd)


def run_c(code, cwd):
    if not re.search(r"\bint\s+main\s*\(", code):
        inc = [ln for ln in code.splitlines() if ln.startswith("#include")]
        body = [ln for ln in code.splitlines() if not ln.startswith("#include")]
        code = ("\n".join(["#include <stdio.h>", "#include <stdlib.h>", "#include <stdint.h>"] + inc)
                + "\nint main(void)\n{\n" + "\n".join("    " + ln for ln in body)
                + "\n    return 0;\n}\n")
    (cwd / "doc_block.c").write_text(code)
    cc = os.environ.get("CC", "cc")
    run([cc, "-std=c11", "-Wall", "-Werror", "-Wno-unused-variable", "-o", "doc_block", "doc_block.c",
         f"-I{SRC / 'include'}", f"-L{BUILD / 'libtestdata'}", f"-Wl,-rpath,{BUILD / 'libtestdata'}",
         "-ltestdata"], cwd)
    run([str(cwd / "doc_block")], cwd, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("doc,line,lang,code,marker,include", RUN)
def test_example(doc, line, lang, code, marker, include):
    if marker and marker.startswith("needs:"):
        what = marker.split(":", 1)[1]
        if not available(what):
            pytest.skip(f"needs {what}, which this build or machine lacks")
    if include:
        want = (doc.parent / include).read_text()
        assert code == want, f"{doc.name}:{line}: block differs from {include}"
        return
    cwd = scratch(doc)
    {"sh": run_sh, "python": run_python, "c": run_c}[lang](code, cwd)


def test_few_norun_blocks():
    """Skipped blocks stay the exception (at most a quarter of all examples)."""
    assert len(SKIPPED) * 4 <= len(ALL), [f"{d.name}:{ln}" for d, ln, *_ in SKIPPED]


def test_every_document_is_covered():
    """README.md and docs/*.md are all scanned, and there are examples to run."""
    assert len(RUN) >= 10


LINK = re.compile(r"\]\(([^)\s]+)\)")


@pytest.mark.parametrize("doc", documents(), ids=lambda d: str(d.relative_to(SRC)))
def test_relative_links_resolve(doc):
    """Every relative link (and image) of a document points to a file that exists."""
    text = re.sub(r"```.*?```", "", doc.read_text(), flags=re.S)
    bad = []
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        path = target.split("#", 1)[0]
        if not (doc.parent / path).exists():
            bad.append(target)
    assert not bad, f"{doc.name}: broken links {bad}"
