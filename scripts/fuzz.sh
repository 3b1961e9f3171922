#!/bin/sh
# Build the libFuzzer targets of tests/fuzz (clang, ASan+UBSan) and fuzz each
# for a bounded time, starting from tests/fuzz/corpus/<target>/ and
# tests/fuzz/regressions/<target>/.
#   scripts/fuzz.sh                    # every target, $TD_FUZZ_SECONDS (60) each
#   TD_FUZZ_SECONDS=10 scripts/fuzz.sh fuzz_parse
#   TD_FUZZ_JOBS=1 scripts/fuzz.sh     # one target at a time
# New corpus entries go to $BUILD/fuzz-corpus/<target>/ (the checked-in corpus
# is never written).  A failure leaves its input in
# $BUILD/fuzz-artifacts/<target>/; once fixed, copy it into
# tests/fuzz/regressions/<target>/ so that CTest replays it forever.
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build-fuzz}
SECONDS_EACH=${TD_FUZZ_SECONDS:-60}
PY=${TD_PYTHON:-/usr/bin/python3}
cmake -S . -B "$BUILD" -DCMAKE_C_COMPILER=clang -DTD_BUILD_FUZZ=ON -DTD_WERROR=ON \
  -DTD_SANITIZE=address,undefined -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DTD_BUILD_PROGRAMS=OFF -DPython3_EXECUTABLE="$PY" >/dev/null
targets=${*:-$(cd tests/fuzz && ls fuzz_*.c | sed 's/\.c$//')}
cmake --build "$BUILD" -j2 --target $targets
# Targets run $TD_FUZZ_JOBS at a time (default 2, the cores here), each
# for the full time: the step takes a third less with five targets.
JOBS=${TD_FUZZ_JOBS:-2}
fuzz_one() {
  t=$1
  corpus="$BUILD/fuzz-corpus/$t"
  artifacts="$BUILD/fuzz-artifacts/$t"
  mkdir -p "$corpus" "$artifacts" "tests/fuzz/regressions/$t"
  if "$BUILD/tests/fuzz/$t" -max_total_time="$SECONDS_EACH" -max_len=1024 -timeout=300 \
      -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$artifacts/" \
      "$corpus" "tests/fuzz/corpus/$t" "tests/fuzz/regressions/$t" >"$BUILD/fuzz-$t.log" 2>&1; then
    echo 0 >"$BUILD/fuzz-$t.rc"
  else
    echo 1 >"$BUILD/fuzz-$t.rc"
  fi
}
status=0
set -- $targets
while [ $# -gt 0 ]; do
  batch=""
  n=0
  while [ $# -gt 0 ] && [ $n -lt "$JOBS" ]; do
    echo "== fuzzing $1 for ${SECONDS_EACH}s"
    rm -f "$BUILD/fuzz-$1.rc"
    fuzz_one "$1" &
    batch="$batch $1"
    n=$((n + 1))
    shift
  done
  wait
  for t in $batch; do
    if [ "$(cat "$BUILD/fuzz-$t.rc" 2>/dev/null)" != 0 ]; then
      tail -n 60 "$BUILD/fuzz-$t.log"
      echo "fuzz.sh: $t FAILED; input in $BUILD/fuzz-artifacts/$t/ (add it to tests/fuzz/regressions/$t/ once fixed)" >&2
      status=1
    else
      echo "-- $t"
      grep -E '^(Done|stat::number_of_executed_units|stat::peak_rss_mb)' "$BUILD/fuzz-$t.log" || true
    fi
  done
done
exit $status
