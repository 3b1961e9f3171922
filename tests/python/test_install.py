"""`cmake --install` puts an importable package with the pytest11 entry point."""
import os
import subprocess
import sys

import pytest


def test_cmake_install(tmp_path):
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
    code = (
        "import importlib.metadata as m, testdata, hashlib\n"
        "eps = [e for e in m.entry_points(group='pytest11') if e.value == 'testdata.pytest_plugin']\n"
        "assert eps, 'no pytest11 entry point'\n"
        "assert eps[0].load().__name__ == 'testdata.pytest_plugin'\n"
        "assert m.version('testdata') == testdata.__version__\n"
        "print(testdata.__file__)\n"
        "print(hashlib.sha256(testdata.generate('random', '1M')).hexdigest())\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = staged
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.split()
    assert lines[0].startswith(staged)
    assert lines[1] == "163f84efa4eb786a4a211ca8fb2db0aa8f29c6f84d1837251692fb2f45a59f73"


@pytest.mark.skipif(os.environ.get("TD_TEST_PIP") != "1", reason="slow; set TD_TEST_PIP=1")
def test_pip_install_offline(tmp_path, source_dir):
    """pip install ./bindings/python into a venv, without any index."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    py = venv / "bin" / "python"
    r = subprocess.run([py, "-m", "pip", "install", "--no-index", str(source_dir / "bindings" / "python")],
                       capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    code = ("import importlib.metadata as m, testdata\n"
            "assert testdata.__file__.startswith(%r)\n"
            "assert any(e.value == 'testdata.pytest_plugin' for e in m.entry_points(group='pytest11'))\n"
            "assert testdata.generate('zero', 3) == bytes(3)\n") % str(venv)
    r = subprocess.run([py, "-c", code], env=env, capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
