#!/bin/sh
# Is `testdata verify` ever the bottleneck?  Times, for each generator,
#   gen SIZE > /dev/null             (generation alone)
#   gen SIZE | cat > /dev/null       (generation through a pipe)
#   gen SIZE | verify SIZE           (the end-to-end link test, minus the link)
# and prints GB/s (10^9 bytes per second).
#   sh tests/bench/bench_cli.sh                 # 4G, ./build/programs/testdata
#   TESTDATA=path SIZE=1G THREADS=2 sh tests/bench/bench_cli.sh
set -eu
cd "$(dirname "$0")/../.."
TD=${TESTDATA:-build/programs/testdata}
[ -x "$TD" ] || TD=$(command -v testdata) || { echo "bench_cli: no testdata (set TESTDATA)" >&2; exit 1; }
SIZE=${SIZE:-4G}
THREADS=${THREADS:-1}
bytes=$("$TD" gen zero "$SIZE" --quiet | wc -c)

now() { date +%s.%N; }
rate() { awk -v b="$bytes" -v s="$1" -v e="$2" 'BEGIN { t = e - s; printf "%6.2f s  %6.2f GB/s", t, b / t / 1e9 }'; }

echo "testdata $("$TD" --version | cut -d' ' -f2), SIZE=$SIZE ($bytes bytes), threads=$THREADS, $(nproc) cores"
for alg in chacha20 fast; do
  o="--algorithm $alg --threads $THREADS --quiet"
  s=$(now); "$TD" gen random "$SIZE" $o > /dev/null; e=$(now)
  printf '%-9s gen > /dev/null          %s\n' "$alg" "$(rate "$s" "$e")"
  s=$(now); "$TD" gen random "$SIZE" $o | cat > /dev/null; e=$(now)
  printf '%-9s gen | cat                %s\n' "$alg" "$(rate "$s" "$e")"
  s=$(now); "$TD" gen random "$SIZE" $o --seed 7 | "$TD" verify random "$SIZE" $o --seed 7; e=$(now)
  printf '%-9s gen | verify             %s\n' "$alg" "$(rate "$s" "$e")"
done
