/*
 * bench_gen: single-thread generation speed of kinds, measured in one run.
 *
 * usage: bench_gen [SIZE [REPEATS]] [KIND...]
 *   SIZE     bytes generated per repeat (default 1G, size suffixes accepted)
 *   REPEATS  best of this many repeats is reported (default 3)
 *   KIND     kinds to time (default: random text)
 * Prints one line per kind: "KIND GB/s", then "ratio KIND/random" lines.
 * The random kind uses ChaCha20 (its default algorithm).
 */
#define _POSIX_C_SOURCE 200809L
#include <testdata.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHUNK (1u << 20)

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double rate(int kind, uint64_t size, int repeats, unsigned char *buf)
{
    double best = 0;
    for (int r = 0; r < repeats; r++) {
        td_stream *s = td_stream_new((td_kind)kind, TD_SIZE_UNBOUNDED);
        size_t got;
        if (!s) {
            fprintf(stderr, "bench_gen: cannot open kind %d\n", kind);
            exit(1);
        }
        double t0 = now();
        for (uint64_t done = 0; done < size; done += CHUNK)
            if (td_stream_read(s, buf, CHUNK, &got) != TD_OK || got != CHUNK) {
                fprintf(stderr, "bench_gen: read failed\n");
                exit(1);
            }
        double gbs = (double)size / (now() - t0) / 1e9;
        if (gbs > best)
            best = gbs;
        td_stream_free(s);
    }
    return best;
}

int main(int argc, char **argv)
{
    uint64_t size = 1u << 30;
    int repeats = 3, nk = 0, kinds[16];
    double gbs[16];
    int a = 1;
    unsigned char *buf = malloc(CHUNK);

    if (a < argc && td_parse_size(argv[a], &size) == TD_OK)
        a++;
    if (a < argc && atoi(argv[a]) > 0)
        repeats = atoi(argv[a++]);
    for (; a < argc && nk < 16; a++)
        if (td_kind_from_name(argv[a], &kinds[nk]) == TD_OK)
            nk++;
        else {
            fprintf(stderr, "bench_gen: unknown kind %s\n", argv[a]);
            return 2;
        }
    if (!nk) {
        kinds[nk++] = TD_RANDOM;
        kinds[nk++] = TD_TEXT;
    }
    if (!buf)
        return 1;
    size -= size % CHUNK;
    if (!size)
        size = CHUNK;
    /* Interleave kinds over the repeats so machine noise hits all alike. */
    memset(gbs, 0, sizeof gbs);
    for (int r = 0; r < repeats; r++)
        for (int k = 0; k < nk; k++) {
            double g = rate(kinds[k], size, 1, buf);
            if (g > gbs[k])
                gbs[k] = g;
        }
    double rnd = 0;
    for (int k = 0; k < nk; k++) {
        printf("%-8s %.3f GB/s\n", td_kind_name(kinds[k]), gbs[k]);
        if (kinds[k] == TD_RANDOM)
            rnd = gbs[k];
    }
    for (int k = 0; k < nk; k++)
        if (rnd > 0 && kinds[k] != TD_RANDOM)
            printf("ratio %s/random %.3f\n", td_kind_name(kinds[k]), gbs[k] / rnd);
    free(buf);
    return 0;
}
