#!/bin/sh
# Aggregate throughput of `mpiexec -n N testdata gen ... --mpi` for N = 1, 2, 4,
# and its ratio to one rank.  Not run by CTest.
#   tests/bench/bench_mpi.sh [BUILD_DIR]     (default: build)
# Modes (MODES, default "null shared files"):
#   null    -o /dev/null: generation alone (no file system)
#   shared  -o $DIR/one.bin: every rank pwrites its range of one shared file
#   files   -o $DIR/ --files 4: four shard files (the same four for every N)
# Environment: SIZE (default 1G), KIND (random), ALG (chacha20|fast),
#   DIR (default /dev/shm: files in memory, so no disk is measured; point it
#   at the shared file system to measure that), RANKS ("1 2 4"), REPS (3; the
#   best run counts), VERIFY=1 to time `verify --mpi` of shared and files too.
set -eu
BUILD=${1:-build}
TD=$BUILD/programs/testdata
SIZE=${SIZE:-1G}
KIND=${KIND:-random}
ALG=${ALG:-chacha20}
DIR=${DIR:-/dev/shm}/td-bench-mpi.$$
MODES=${MODES:-null shared files}
RANKS=${RANKS:-1 2 4}
REPS=${REPS:-3}
MPIEXEC=${MPIEXEC:-mpiexec}
[ -x "$TD" ] || { echo "bench_mpi: no $TD (build first)" >&2; exit 1; }
command -v "$MPIEXEC" >/dev/null || { echo "bench_mpi: no $MPIEXEC" >&2; exit 1; }
ALGOPT=""
[ "$KIND" = random ] && ALGOPT="--algorithm $ALG"
mkdir -p "$DIR"
trap 'rm -rf "$DIR"' EXIT INT TERM

# Best aggregate GB/s over REPS runs, from rank 0's summary line.
best() { # n testdata-args...
    n=$1; shift
    b=0
    for _ in $(seq "$REPS"); do
        g=$("$MPIEXEC" -n "$n" "$TD" "$@" --mpi 2>&1 >/dev/null |
            sed -n 's/.* s: \([0-9.]*\) GB\/s aggregate.*/\1/p')
        [ -n "$g" ] || { echo "bench_mpi: no throughput line from: $*" >&2; exit 1; }
        b=$(echo "$g $b" | awk '{print ($1 > $2) ? $1 : $2}')
    done
    echo "$b"
}

row() { # label n base gbps
    printf '%-14s ranks=%-2s %6s GB/s   x%s vs 1 rank\n' "$1" "$2" "$4" \
        "$(echo "$4 $3" | awk '{printf "%.2f", $1 / $2}')"
}

echo "testdata gen|verify $KIND $SIZE $ALGOPT --mpi; $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg), best of $REPS"
for mode in $MODES; do
    for verb in gen $( [ "${VERIFY:-0}" = 1 ] && [ "$mode" != null ] && echo verify ); do
        base=""
        for n in $RANKS; do
            case $mode in
            null) set -- -o /dev/null ;;
            shared) if [ "$verb" = gen ]; then set -- -o "$DIR/one.bin"; else set -- "$DIR/one.bin"; fi ;;
            files) if [ "$verb" = gen ]; then set -- -o "$DIR/ds/" --files 4; else set -- "$DIR/ds/" --files 4; fi ;;
            esac
            g=$(best "$n" "$verb" "$KIND" "$SIZE" $ALGOPT "$@")
            [ -n "$base" ] || base=$g
            row "$verb $mode" "$n" "$base" "$g"
        done
    done
done
