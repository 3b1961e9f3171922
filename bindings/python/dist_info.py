"""dist_info.py SOURCE_DIR SCRATCH_DIR DIST_INFO_DIR "FILE;FILE..."

The distribution's .dist-info as pip would make it, for the build tree and
`cmake --install` (bindings/python/CMakeLists.txt): setuptools' own
prepare_metadata_for_build_wheel on pyproject.toml (so the metadata has one
source), run from SOURCE_DIR with its output in SCRATCH_DIR; then INSTALLER
and a RECORD listing the package's FILEs are added, as an installer does.
"""
import os
import pathlib
import shutil
import sys
import warnings

from setuptools import build_meta

# setuptools 66 calls its [tool.setuptools] support beta: true, and not news in a build log.
warnings.filterwarnings("ignore", module="setuptools")


def main():
    src, scratch, dest, files = sys.argv[1], pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3]), \
        sys.argv[4].split(";")
    scratch.mkdir(parents=True, exist_ok=True)
    os.chdir(src)
    # setup.py's progress output would be noise in a build log.
    with open(os.devnull, "w") as null:
        out, sys.stdout = sys.stdout, null
        try:
            name = build_meta.prepare_metadata_for_build_wheel(str(scratch))
        finally:
            sys.stdout = out
    if dest.exists():
        shutil.rmtree(dest)
    shutil.move(str(scratch / name), str(dest))
    shutil.rmtree(scratch, ignore_errors=True)
    (dest / "INSTALLER").write_text("cmake\n")
    record = [f"testdata/{f},," for f in files]
    record += [f"{dest.name}/{f.name},," for f in sorted(dest.iterdir())] + [f"{dest.name}/RECORD,,"]
    (dest / "RECORD").write_text("\n".join(record) + "\n")


if __name__ == "__main__":
    main()
