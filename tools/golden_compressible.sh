#!/bin/sh
# Regenerate tests/c/golden_compressible.inc and golden_dedup.inc with the
# built CLI (only when the byte format changes on purpose: bump
# TD_FORMAT_VERSION).  Usage: tools/golden_compressible.sh build-comp/programs/testdata
set -e
T=${1:-build-comp/programs/testdata}
D=$(dirname "$0")/../tests/c
{
for seed in 0 1 18446744073709551615; do
  for ratio in 3 1.5 10; do
    for off in 0 1099511627776; do
      h=$("$T" gen compressible 1M --seed $seed --ratio $ratio --offset $off | sha256sum | cut -d' ' -f1)
      echo "    {UINT64_C($seed), $ratio, UINT64_C($off), \"$h\"},"
    done
  done
done
} > "$D/golden_compressible.inc"
{
for kind in random text compressible; do
  K=$(echo $kind | tr a-z A-Z)
  for seed in 0 18446744073709551615; do
    for off in 0 1099511627776; do
      h=$("$T" gen $kind 1M --seed $seed --dedup 2 --offset $off | sha256sum | cut -d' ' -f1)
      echo "        {TD_$K, UINT64_C($seed), 2.0, UINT64_C($off), \"$h\"},"
    done
  done
done
} > "$D/golden_dedup.inc"
