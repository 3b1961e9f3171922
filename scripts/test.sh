#!/bin/sh
# Build everything (library, CLI, Python bindings) with warnings as errors and
# run every test suite through CTest: Criterion (C), pytest (CLI, Python).
#   scripts/test.sh            # into ./build
#   BUILD=dir scripts/test.sh  # elsewhere; extra cmake flags in $CMAKE_FLAGS
set -eu
cd "$(dirname "$0")/.."
sh scripts/deps.sh
BUILD=${BUILD:-build}
# Debian's interpreter: the one python3-pytest and python3-hypothesis belong to.
PY=${TD_PYTHON:-/usr/bin/python3}
cmake -S . -B "$BUILD" -DTD_WERROR=ON -DTD_BUILD_PYTHON=ON -DPython3_EXECUTABLE="$PY" ${CMAKE_FLAGS:-}
cmake --build "$BUILD" -j"$(nproc)"
ctest --test-dir "$BUILD" --output-on-failure -j2
