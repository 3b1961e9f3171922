"""pip install ./bindings/python: build the bindings with CMake, offline.

Everything is built by the project's CMake (the same targets as
-DTD_BUILD_PYTHON=ON), for the interpreter running pip; setuptools only
packages the result.  Needs cmake, a C compiler, swig, libsodium-dev and
the interpreter's headers, and no network: there is deliberately no
pyproject.toml, so pip uses the installed setuptools instead of fetching
build requirements into an isolated environment.
"""
import os
import pathlib
import re
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def project_version():
    text = (ROOT / "CMakeLists.txt").read_text()
    return re.search(r"project\(testdata\s+VERSION\s+([0-9.]+)", text).group(1)


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        cmake = os.environ.get("CMAKE", "cmake")
        build = pathlib.Path(self.build_temp).resolve() / "cmake"
        subprocess.check_call([
            cmake, "-S", str(ROOT), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
            "-DTD_BUILD_PYTHON=ON", "-DTD_BUILD_TESTS=OFF", "-DTD_BUILD_PROGRAMS=OFF",
            f"-DPython3_EXECUTABLE={sys.executable}"])
        subprocess.check_call([cmake, "--build", str(build), "--target", "testdata_python",
                               "-j", os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", "2")])
        built = build / "bindings" / "python" / "testdata"
        dest = pathlib.Path(self.get_ext_fullpath(ext.name))
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built / "_capi.so", dest)
        shutil.copyfile(built / "capi.py", dest.parent / "capi.py")


setup(
    name="testdata",
    version=project_version(),
    description="Test data with known, controlled properties (Python bindings of libtestdata)",
    packages=["testdata"],
    ext_modules=[Extension("testdata._capi", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    entry_points={"pytest11": ["testdata.pytest_plugin = testdata.pytest_plugin"]},
    python_requires=">=3.8",
    zip_safe=False,
)
