#!/bin/sh
# One command on a fresh Debian 12 machine (as root): install the packages,
# build and install libtestdata, then run the main job: the scp -C mystery,
# reproduced with a random file and a zero file of the same size.
set -eu
cd "$(dirname "$0")/.."
sh scripts/deps.sh
cmake -S . -B build -DTD_BUILD_PYTHON=ON -DPython3_EXECUTABLE=/usr/bin/python3
cmake --build build -j"$(nproc)"
cmake --install build
ldconfig
/usr/bin/python3 -c "import testdata; print(\"python: import testdata\", testdata.__version__, \"OK\")"
sh scripts/mystery.sh
