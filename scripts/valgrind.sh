#!/bin/sh
# valgrind memcheck over the C tests and the fuzz regression inputs of an
# existing build (default ./build, as made by scripts/test.sh).
#   BUILD=dir scripts/valgrind.sh
# TD_TEST_SMALL=1 makes test_edges and test_concurrency use smaller buffers.
# Criterion runs each test in a child process and ignores valgrind's exit
# status there, so every process logs to its own file and any non-empty log
# (with -q, valgrind writes only errors and leaks) fails the step.
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
LOGS="$BUILD/valgrind-logs"
rm -rf "$LOGS"
mkdir -p "$LOGS"
export TD_TEST_SMALL=1
VG="valgrind -q --trace-children=yes --leak-check=full --show-leak-kinds=definite,indirect
    --errors-for-leak-kinds=definite,indirect --error-exitcode=99"

run() { # name command...
  name=$1
  shift
  start=$(date +%s)
  if ! $VG --log-file="$LOGS/$name.%p.log" "$@" >"$LOGS/$name.out" 2>&1; then
    echo "valgrind.sh: $name exited with an error" >&2
    tail -n 40 "$LOGS/$name.out" >&2
    return 1
  fi
  echo "  $name: $(($(date +%s) - start)) s"
}

# Two lanes for two cores: test_core alone is about as long as the rest.
( run test_core "$BUILD/tests/c/test_core" --jobs 1 ) &
lane1=$!
status=0
for t in test_edges test_concurrency fault_alloc; do
  run "$t" "$BUILD/tests/c/$t" --jobs 1 || status=1
done
for t in $(cd tests/fuzz && ls fuzz_*.c | sed "s/\\.c$//"); do
  dirs=""
  for d in "tests/fuzz/corpus/$t" "tests/fuzz/regressions/$t"; do
    [ -d "$d" ] && dirs="$dirs $d"
  done
  # shellcheck disable=SC2086 # the directories have no spaces
  run "$t" "$BUILD/tests/fuzz/$t" $dirs || status=1
done
wait $lane1 || status=1
for f in "$LOGS"/*.log; do
  if [ -s "$f" ]; then
    echo "== valgrind found problems: $f" >&2
    cat "$f" >&2
    status=1
  fi
done
[ $status = 0 ] && echo "valgrind.sh: no errors, no leaks"
exit $status
