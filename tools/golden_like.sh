#!/bin/sh
# Regenerate tests/c/golden_like.inc with the built CLI (only when the like
# byte format or a built-in profile changes on purpose).  pdf and jpeg are LZ
# models, the others context models (formats 8 and 9).
# Usage: tools/golden_like.sh build/programs/testdata
set -e
T=${1:-build/programs/testdata}
D=$(dirname "$0")/../tests/c
{
for prof in english html executable database pdf jpeg; do
  for seed in 0 1 18446744073709551615; do
    for off in 0 1099511627776; do
      h=$("$T" gen like 1M --profile $prof --seed $seed --offset $off | sha256sum | cut -d' ' -f1)
      echo "    {\"$prof\", UINT64_C($seed), UINT64_C($off), \"$h\"},"
    done
  done
done
} > "$D/golden_like.inc"
