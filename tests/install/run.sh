#!/bin/sh
# Install the build into a scratch prefix, then build a consumer with
# find_package(testdata) and another with pkg-config, and run both.
#   run.sh BUILD_DIR SOURCE_DIR
set -eu
build=$1 src=$(cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" > /dev/null
want="556b05caef0f9608 $(sed -n 's/#define TD_VERSION_STRING "\(.*\)"/\1/p' "$src/include/testdata.h")"

cmake -S "$src/tests/install" -B "$tmp/cm" -DCMAKE_PREFIX_PATH="$tmp/prefix" > /dev/null
cmake --build "$tmp/cm" > /dev/null
for exe in consumer_shared consumer_static; do
  got=$(LD_LIBRARY_PATH="$tmp/prefix/lib" "$tmp/cm/$exe")
  [ "$got" = "$want" ] || { echo "find_package $exe: got '$got', want '$want'"; exit 1; }
done

export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig"
cc -o "$tmp/pc" "$src/tests/install/consumer.c" $(pkg-config --cflags --libs testdata)
got=$(LD_LIBRARY_PATH="$tmp/prefix/lib" "$tmp/pc")
[ "$got" = "$want" ] || { echo "pkg-config: got '$got', want '$want'"; exit 1; }
cc -static-libgcc -o "$tmp/pcs" "$src/tests/install/consumer.c" -I"$tmp/prefix/include" \
  "$tmp/prefix/lib/libtestdata.a" $(pkg-config --libs --static testdata | sed 's/-ltestdata//')
got=$("$tmp/pcs")
[ "$got" = "$want" ] || { echo "pkg-config static: got '$got', want '$want'"; exit 1; }
[ -f "$tmp/prefix/include/testdata.h" ] || { echo "header not installed"; exit 1; }
# The shell completions, as the program generates them, where each shell looks.
if [ -x "$tmp/prefix/bin/testdata" ]; then
  for f in bash:share/bash-completion/completions/testdata zsh:share/zsh/site-functions/_testdata \
           fish:share/fish/vendor_completions.d/testdata.fish; do
    "$tmp/prefix/bin/testdata" completion "${f%%:*}" | cmp -s - "$tmp/prefix/${f#*:}" ||
      { echo "completion ${f%%:*}: $tmp/prefix/${f#*:} missing or stale"; exit 1; }
  done
  [ -f "$tmp/prefix/share/man/man1/testdata.1" ] || { echo "man page not installed"; exit 1; }
fi
# The C API reference (when Doxygen built it): man(3) pages and HTML.
if [ -f "$build/docs/api/html/index.html" ]; then
  for f in share/man/man3/testdata.h.3 share/man/man3/td_fill.3 share/man/man3/td_options.3 \
           share/doc/testdata/html/index.html share/doc/testdata/html/testdata_8h.html; do
    [ -s "$tmp/prefix/$f" ] || { echo "API reference: $f not installed"; exit 1; }
  done
  MANPATH="$tmp/prefix/share/man" man -w td_verify_message > /dev/null 2>&1 ||
    [ ! -x /usr/bin/man ] || { echo "man td_verify_message: no page"; exit 1; }
fi

# find_package(testdata) of the shared library needs none of the private
# libraries' pkg-config files (PKG_CONFIG_PATH pointing nowhere proves it).
cmake -S "$src/tests/install/shared_only" -B "$tmp/so" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
  -DPKG_CONFIG_EXECUTABLE=/bin/false --no-warn-unused-cli > /dev/null
cmake --build "$tmp/so" > /dev/null
got=$(LD_LIBRARY_PATH="$tmp/prefix/lib" "$tmp/so/consumer_shared_only")
[ "$got" = "$want" ] || { echo "shared-only find_package: got '$got', want '$want'"; exit 1; }

# add_subdirectory(): no test or doc targets of libtestdata appear.
cmake -S "$src/tests/install/vendored" -B "$tmp/vendored" -DTD_SOURCE_DIR="$src" \
  -DTD_WITH_MPI=OFF > /dev/null
cmake --build "$tmp/vendored" --target consumer_vendored -j2 > /dev/null
got=$(LD_LIBRARY_PATH="$tmp/vendored/libtestdata/libtestdata" "$tmp/vendored/consumer_vendored")
[ "$got" = "$want" ] || { echo "add_subdirectory: got '$got', want '$want'"; exit 1; }
echo "install: find_package (shared, static, shared without -dev packages), pkg-config (shared, static) and add_subdirectory consumers OK"
