#!/bin/sh
# Install the build into a scratch prefix, then build a consumer with
# find_package(testdata) and another with pkg-config, and run both.
#   run.sh BUILD_DIR SOURCE_DIR
set -eu
build=$1 src=$2
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
echo "install: find_package (shared, static) and pkg-config (shared, static) consumers OK"
