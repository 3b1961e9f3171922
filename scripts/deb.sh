#!/bin/sh
# Build the Debian packages (dpkg-buildpackage -us -uc -b) from the files git
# knows (tracked or not ignored) in a scratch copy, check them with lintian (no errors),
# install them, build and run the C consumers (tests/install) and a Python
# import and pytest run against the installed packages, then remove them.
#   scripts/deb.sh                 # as root, on Debian 12
#   TD_DEB_KEEP=DIR scripts/deb.sh # also copy the .deb files to DIR
# The packages are removed again even when a step fails.
set -eu
cd "$(dirname "$0")/.."
src=$(pwd)
[ "$(id -u)" = 0 ] || { echo "deb.sh: run as root (it installs the packages)" >&2; exit 1; }
PKGS="python3-libtestdata testdata libtestdata-dev libtestdata0"
for p in $PKGS; do
  if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
    echo "deb.sh: $p is installed already; remove it first (dpkg --purge $PKGS)" >&2
    exit 1
  fi
done
tmp=$(mktemp -d)
installed=0
cleanup() {
  if [ "$installed" = 1 ]; then
    echo "-- removing the packages"
    dpkg --purge $PKGS > /dev/null || true
    installed=0
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'cleanup; exit 130' INT
trap 'cleanup; exit 143' TERM
t0=$(date +%s)

echo "-- dpkg-buildpackage -us -uc -b (a copy of the source, in $tmp/src)"
mkdir "$tmp/src"
git ls-files -z -co --exclude-standard | (cd "$src" && xargs -0 tar -cf -) | tar -xf - -C "$tmp/src"
(cd "$tmp/src" && dpkg-buildpackage -us -uc -b > "$tmp/build.log" 2>&1) ||
  { tail -50 "$tmp/build.log"; echo "deb.sh: dpkg-buildpackage failed" >&2; exit 1; }
ls "$tmp"/*.deb | sed 's|.*/|   |'
t1=$(date +%s)

echo "-- lintian (warnings are listed; an error fails)"
rc=0
lintian --fail-on error "$tmp"/*.changes > "$tmp/lintian.log" 2>&1 || rc=$?
grep -v "running with root privileges" "$tmp/lintian.log" | sed 's/^/   /' || true
[ "$rc" = 0 ] || { echo "deb.sh: lintian reports errors" >&2; exit 1; }
t2=$(date +%s)

echo "-- install"
installed=1
debs=""
for p in $PKGS; do debs="$debs $tmp/${p}_"*"_$(dpkg --print-architecture).deb"; done
# apt resolves the runtime dependencies (already there when the build deps are).
DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $debs > "$tmp/apt.log" 2>&1 ||
  { cat "$tmp/apt.log"; exit 1; }

echo "-- the installed files work"
[ "$(command -v testdata)" = /usr/bin/testdata ] || { echo "testdata is not /usr/bin/testdata" >&2; exit 1; }
/usr/bin/testdata --version
for f in /usr/share/bash-completion/completions/testdata /usr/share/zsh/vendor-completions/_testdata \
         /usr/share/fish/vendor_completions.d/testdata.fish /usr/share/man/man1/testdata.1.gz \
         /usr/share/man/man3/td_fill.3.gz /usr/share/doc/libtestdata-dev/html/index.html; do
  [ -s "$f" ] || { echo "deb.sh: $f is missing" >&2; exit 1; }
done
man -w td_verify_message > /dev/null
want="556b05caef0f9608 $(sed -n 's/#define TD_VERSION_STRING "\(.*\)"/\1/p' include/testdata.h)"
# find_package(testdata): the shared and the static library.
cmake -S tests/install -B "$tmp/cm" > /dev/null
cmake --build "$tmp/cm" > /dev/null
for exe in consumer_shared consumer_static; do
  got=$("$tmp/cm/$exe")
  [ "$got" = "$want" ] || { echo "find_package $exe: got '$got', want '$want'" >&2; exit 1; }
done
ldd "$tmp/cm/consumer_shared" | grep -Eq "libtestdata.so.0 => (/usr)?/lib/" ||
  { echo "consumer_shared does not use the installed libtestdata.so.0" >&2; exit 1; }
# pkg-config, shared.
cc -o "$tmp/pc" tests/install/consumer.c $(pkg-config --cflags --libs testdata)
got=$("$tmp/pc")
[ "$got" = "$want" ] || { echo "pkg-config: got '$got', want '$want'" >&2; exit 1; }
# Python: the installed module, its metadata and the pytest plugin's entry point.
mkdir "$tmp/py"
cat > "$tmp/py/test_installed.py" <<'EOF'
import importlib.metadata as m
import testdata

def test_installed(testdata_file, testdata_seed):
    assert testdata.__file__.startswith("/usr/lib/python3/dist-packages/testdata/")
    assert m.version("libtestdata") == testdata.__version__
    p = testdata_file("random", "1M", seed=0)
    testdata.verify(p, "random", "1M")
    assert testdata.analyze(p)["dedup"]["ratio"] == 1
EOF
(cd "$tmp/py" && env -u PYTHONPATH /usr/bin/python3 -m pytest -q -p no:cacheprovider test_installed.py) ||
  { echo "deb.sh: the installed Python package fails" >&2; exit 1; }
t3=$(date +%s)
if [ -n "${TD_DEB_KEEP:-}" ]; then
  mkdir -p "$TD_DEB_KEEP" && cp "$tmp"/*.deb "$TD_DEB_KEEP"/
fi
echo "deb.sh: packages built in $((t1 - t0)) s, lintian $((t2 - t1)) s, install and tests $((t3 - t2)) s: OK"
