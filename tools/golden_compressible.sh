#!/bin/sh
# Regenerate tests/c/golden_compressible.inc and golden_dedup.inc with the
# built CLI ({seed, ratio, compress_block, offset, sha256} and dedup
# vectors of random, text, compressible and like) (only when the byte format changes on purpose: bump
# TD_FORMAT_VERSION).  Usage: tools/golden_compressible.sh build-comp/programs/testdata
set -e
T=${1:-build-comp/programs/testdata}
D=$(dirname "$0")/../tests/c
{
for seed in 0 1 18446744073709551615; do
  for ratio in 3 1.5 10 100; do
    for cb in 0 4096; do
      for off in 0 1099511627776; do
        h=$("$T" gen compressible 1M --seed $seed --ratio $ratio --compress-block $cb --offset $off | sha256sum | cut -d' ' -f1)
        echo "    {UINT64_C($seed), $ratio, $cb, UINT64_C($off), \"$h\"},"
      done
    done
  done
done
for cb in 512 1024 2048 8192 16384 65536 1048576; do
  h=$("$T" gen compressible 1M --seed 5 --ratio 4 --compress-block $cb | sha256sum | cut -d' ' -f1)
  echo "    {UINT64_C(5), 4, $cb, UINT64_C(0), \"$h\"},"
done
} > "$D/golden_compressible.inc"
{
for kind in random text compressible like; do
  K=$(echo $kind | tr a-z A-Z)
  for seed in 0 18446744073709551615; do
    for off in 0 1099511627776; do
      h=$("$T" gen $kind 1M --seed $seed --dedup 2 --offset $off | sha256sum | cut -d' ' -f1)
      echo "        {TD_$K, UINT64_C($seed), 2.0, UINT64_C($off), \"$h\"},"
    done
  done
done
} > "$D/golden_dedup.inc"
