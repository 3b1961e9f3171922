#!/bin/sh
# run_corpus.sh TARGET DIR...: run a fuzz target once over every file in the
# DIRs, without fuzzing.  Works for libFuzzer builds (file arguments are run,
# not fuzzed) and for standalone_main.c builds.
set -eu
bin=$1
shift
files=$(for d in "$@"; do [ -d "$d" ] && find "$d" -type f ! -name '.*'; done | sort)
if [ -z "$files" ]; then
  echo "run_corpus.sh: no inputs in $*" >&2
  exit 0  # libFuzzer without inputs would start fuzzing
fi
# shellcheck disable=SC2086  # file names in the corpus have no blanks
exec "$bin" $files
