#!/bin/sh
# Install the Debian 12 packages needed to build, test and benchmark libtestdata.
set -eu
PKGS="build-essential cmake pkg-config libsodium-dev libssl-dev libcriterion-dev swig python3-dev
python3-pytest python3-hypothesis zlib1g-dev libzstd-dev liblz4-dev liblzma-dev libbz2-dev
gzip zstd lz4 xz-utils bzip2 pigz fio openssl hyperfine valgrind clang time doxygen strace
mpich libmpich-dev python3-dask python3-distributed python3-matplotlib
python3-setuptools python3-wheel python3-pip python3-venv python3-mypy python3-pytest-xdist
bash-completion zsh fish pv bsdutils dpkg-dev debhelper dh-python fakeroot lintian
python3-zstandard python3-lz4 python3-brotli python3-snappy python3-numpy brotli"
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  [ "$(id -u)" = 0 ] || { echo "deps.sh: run as root to install:$missing" >&2; exit 1; }
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing
fi
