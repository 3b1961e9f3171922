"""The build behind pyproject.toml: `pip install .` and `pip wheel .`.

The metadata is pyproject.toml's; this file adds what it cannot say: the
version, read from include/testdata.h (the project's one version source),
and the extension testdata._capi, built by the project's own CMake (the
targets of -DTD_BUILD_PYTHON=ON) for the interpreter running the build.
Needs cmake, a C compiler, swig, the -dev packages of the library's
dependencies and the interpreter's headers; no network.

Nothing is written into the source tree: setuptools' build and egg-info
directories and the CMake build go to a temporary directory.  The legacy
`setup.py install` / `develop` paths are refused: use pip.
"""
import atexit
import os
import pathlib
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent

if len(sys.argv) > 1 and sys.argv[1] in ("install", "develop", "easy_install", "bdist_egg"):
    sys.exit(f"setup.py {sys.argv[1]} is not supported: use `pip install .` "
             "(offline: pip install --no-build-isolation .)")


def version():
    text = (ROOT / "include" / "testdata.h").read_text()
    return re.search(r'^#define TD_VERSION_STRING "([^"]+)"', text, re.M).group(1)


SCRATCH = tempfile.mkdtemp(prefix="libtestdata-setup-")
atexit.register(shutil.rmtree, SCRATCH, ignore_errors=True)


class CMakeBuild(build_ext):
    """testdata._capi (and the SWIG module testdata/capi.py) from CMake."""

    def build_extension(self, ext):
        cmake = os.environ.get("CMAKE", "cmake")
        build = pathlib.Path(os.environ.get("TD_CMAKE_BUILD_DIR") or
                             pathlib.Path(SCRATCH) / "cmake").resolve()
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 2)
        subprocess.check_call([
            cmake, "-S", str(ROOT), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
            "-DTD_BUILD_PYTHON=ON", "-DTD_BUILD_TESTS=OFF", "-DTD_BUILD_PROGRAMS=OFF",
            "-DTD_BUILD_DOCS=OFF", "-DTD_WITH_MPI=OFF", "-DTD_PYTHON_DIST_INFO=OFF",
            f"-DPython3_EXECUTABLE={sys.executable}"], stdout=sys.stderr)
        subprocess.check_call([cmake, "--build", str(build), "--target", "testdata_python",
                               "-j", jobs], stdout=sys.stderr)
        built = build / "bindings" / "python" / "testdata"
        dest = pathlib.Path(self.get_ext_fullpath(ext.name))
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built / ("_capi" + sysconfig.get_config_var("SHLIB_SUFFIX")), dest)
        shutil.copyfile(built / "capi.py", dest.parent / "capi.py")


setup(
    version=version(),
    ext_modules=[Extension("testdata._capi", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    options={"build": {"build_base": os.path.join(SCRATCH, "build")},
             "egg_info": {"egg_base": SCRATCH}},
)
