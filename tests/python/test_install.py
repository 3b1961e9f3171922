"""Installing the Python distribution: `cmake --install`, and pip (offline,
--no-build-isolation, in a venv on Debian's setuptools and wheel) with
`pip wheel .` and `pip install .` at the repository root.  Each installed
package must import, carry its metadata (name libtestdata, the header's
version), the pytest11 entry point and its typing files; the source tree
must be left exactly as it was.  CTest runs this file as python.install."""
import os
import re
import subprocess
import sys
import zipfile

import pytest

GOLDEN_1M = "163f84efa4eb786a4a211ca8fb2db0aa8f29c6f84d1837251692fb2f45a59f73"

CHECK = """
import hashlib, importlib.metadata as m, os, sys, testdata
want_prefix, version = sys.argv[1], sys.argv[2]
assert testdata.__file__.startswith(want_prefix), testdata.__file__
dist = m.distribution("libtestdata")
assert dist.version == version == testdata.__version__, (dist.version, version)
eps = [e for e in dist.entry_points if e.group == "pytest11"]
assert [e.value for e in eps] == ["testdata.pytest_plugin"], eps
assert eps[0].load().__name__ == "testdata.pytest_plugin"
here = os.path.dirname(testdata.__file__)
for f in ("py.typed", "capi.pyi", "_types.py", "hypothesis.py", "capi.py"):
    assert os.path.isfile(os.path.join(here, f)), f
print(hashlib.sha256(testdata.generate("random", "1M")).hexdigest())
"""


def header_version(source_dir):
    text = (source_dir / "include" / "testdata.h").read_text()
    return re.search(r'#define TD_VERSION_STRING "([^"]+)"', text).group(1)


def clean_env():
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def check_import(python, prefix, version, cwd):
    r = subprocess.run([str(python), "-c", CHECK, str(prefix), version], env=clean_env(),
                       capture_output=True, text=True, cwd=cwd)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == [GOLDEN_1M]


def test_cmake_install(tmp_path, source_dir):
    build = os.environ.get("TD_BUILD_DIR")
    site = os.environ.get("TD_PYTHON_INSTALL_DIR")
    if not build or not site:
        pytest.skip("TD_BUILD_DIR / TD_PYTHON_INSTALL_DIR not set (run through CTest)")
    cmake = os.environ.get("CMAKE_COMMAND", "cmake")
    prefix = tmp_path / "prefix"
    env = dict(os.environ, DESTDIR=str(tmp_path / "destdir"))
    subprocess.run([cmake, "--install", build, "--component", "python", "--prefix", str(prefix)],
                   env=env, check=True, capture_output=True)
    # Relative destinations go under the prefix (never straight into the
    # system's site-packages); absolute ones are staged under DESTDIR.
    if os.path.isabs(site):
        staged = str(tmp_path / "destdir") + site
    else:
        staged = str(tmp_path / "destdir") + str(prefix / site)
    assert os.path.isfile(os.path.join(staged, "testdata", "__init__.py"))
    # The metadata is setuptools' (from pyproject.toml), not hand-written.
    dist_info = os.path.join(staged, f"libtestdata-{header_version(source_dir)}.dist-info")
    assert "Name: libtestdata" in open(os.path.join(dist_info, "METADATA")).read()
    env = clean_env()
    env["PYTHONPATH"] = staged
    r = subprocess.run([sys.executable, "-c", CHECK, staged, header_version(source_dir)],
                       env=env, capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == [GOLDEN_1M]


def snapshot(root):
    """Every path under root with its size and mtime, but for .git, build
    directories (build*/ and TD_BUILD_DIR) and bytecode caches, which other
    tests may write meanwhile."""
    skip = {os.path.realpath(os.environ["TD_BUILD_DIR"])} if os.environ.get("TD_BUILD_DIR") else set()
    out = {}
    for d, dirs, files in os.walk(root):
        dirs[:] = [x for x in dirs
                   if x not in (".git", "__pycache__", ".pytest_cache", ".hypothesis", ".mypy_cache")
                   and not (d == root and x.startswith("build"))
                   and os.path.realpath(os.path.join(d, x)) not in skip]
        for name in dirs + files:
            p = os.path.join(d, name)
            st = os.lstat(p)
            out[os.path.relpath(p, root)] = (st.st_size, st.st_mtime_ns) if name in files else None
    return out


def test_pip_wheel_and_install_offline(tmp_path, source_dir):
    """pip wheel . and pip install . at the repository root, offline, with
    --no-build-isolation in a venv over Debian's setuptools and wheel."""
    before = snapshot(str(source_dir))
    venv = tmp_path / "venv"
    # --without-pip: the venv sees Debian's pip, setuptools and wheel through
    # --system-site-packages (ensurepip would take longer than the build).
    subprocess.run(["/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable,
                    "-m", "venv", "--system-site-packages", "--without-pip", str(venv)],
                   check=True)
    py = venv / "bin" / "python"
    pip = [str(py), "-m", "pip", "--disable-pip-version-check", "--no-input"]
    env = clean_env()
    # One CMake build shared by both pip runs: the second is incremental.
    env["TD_CMAKE_BUILD_DIR"] = str(tmp_path / "cmake-build")
    wheels = tmp_path / "wheels"
    r = subprocess.run(pip + ["wheel", "--no-build-isolation", "--no-deps", "--no-index",
                              "-w", str(wheels), str(source_dir)],
                       capture_output=True, text=True, cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    [whl] = list(wheels.iterdir())
    version = header_version(source_dir)
    assert whl.name.startswith(f"libtestdata-{version}-")
    with zipfile.ZipFile(whl) as z:
        names = set(z.namelist())
        assert {"testdata/py.typed", "testdata/capi.pyi", "testdata/capi.py",
                f"libtestdata-{version}.dist-info/entry_points.txt"} <= names
        assert any(re.fullmatch(r"testdata/_capi\..*\.so", n) for n in names), names
        assert not any("egg-info" in n for n in names)
    r = subprocess.run(pip + ["install", "--no-build-isolation", "--no-deps", "--no-index",
                              str(source_dir)],
                       capture_output=True, text=True, cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "setup.py install" not in r.stdout + r.stderr  # the PEP 517 path, not the legacy one
    check_import(py, venv, version, tmp_path)
    # pip uninstall works from the RECORD pip wrote, and the wheel installs too.
    r = subprocess.run(pip + ["uninstall", "-y", "libtestdata"], capture_output=True, text=True,
                       env=env)
    assert r.returncode == 0, r.stderr
    r = subprocess.run(pip + ["install", "--no-deps", "--no-index", str(whl)],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    check_import(py, venv, version, tmp_path)
    # Nothing was written into the source tree (no egg-info, no build/).
    after = snapshot(str(source_dir))
    assert after == before, {k for k in set(after) ^ set(before)} or \
        {k for k in after if after[k] != before.get(k)}


def test_setup_py_install_is_refused(source_dir, tmp_path):
    r = subprocess.run([sys.executable, str(source_dir / "setup.py"), "install"],
                       capture_output=True, text=True, cwd=tmp_path, env=clean_env())
    assert r.returncode != 0 and "use `pip install .`" in r.stderr
