/*
 * In-process generation throughput: td_fill into a reused buffer (the way a
 * benchmark harness would use the library), for each kind and algorithm,
 * next to memset as the ceiling.
 *
 *   bench_gen [--seconds S] [--buf BYTES] [--threads N] [--stream 1] [--seek R]
 *             [--per-call 1] [--offset O] [SPEC...]
 *   SPEC: memset | KIND[:key=value[,key=value...]]   e.g. random:algorithm=fast
 * Prints one line per spec: "name GB/s".  With --stream 1, each spec is read
 * through one td_stream instead (a kind's state made once, as a long run
 * makes it: text with a dedup ratio, like); with --seek R as well, the
 * stream seeks to a pseudo-random offset below 2^40 before every R reads
 * (random access), and the line also gives microseconds per seek.
 * --offset O starts the reads (or the stream) at O.  With --per-call 1 (and
 * no --stream), every call fills the same bytes, [O, O+BYTES), and the line
 * also gives microseconds per td_fill call: the cost of a small one-shot
 * fill (each call makes the kind's state anew).
 */
#include <testdata.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int setup(const char *spec, int *kind, td_options *o, uint32_t threads)
{
    char name[64], *opts;
    snprintf(name, sizeof name, "%s", spec);
    opts = strchr(name, ':');
    if (opts)
        *opts++ = '\0';
    td_options_init(o);
    o->threads = threads;
    if (td_kind_from_name(name, kind) != TD_OK)
        return -1;
    while (opts && *opts) {
        char *next = strchr(opts, ',');
        if (next)
            *next++ = '\0';
        char *eq = strchr(opts, '=');
        if (!eq)
            return -1;
        *eq = '\0';
        if (td_options_set(o, *kind, opts, eq + 1) != TD_OK)
            return -1;
        opts = next;
    }
    return 0;
}

int main(int argc, char **argv)
{
    double seconds = 1.0;
    size_t bufsize = 1 << 20;
    uint32_t threads = 1;
    int stream = 0, seek = 0, per_call = 0, i = 1;
    uint64_t start = 0;
    for (; i < argc && strncmp(argv[i], "--", 2) == 0; i += 2) {
        if (i + 1 >= argc)
            return 2;
        if (strcmp(argv[i], "--seconds") == 0)
            seconds = atof(argv[i + 1]);
        else if (strcmp(argv[i], "--buf") == 0)
            bufsize = (size_t)atol(argv[i + 1]);
        else if (strcmp(argv[i], "--threads") == 0)
            threads = (uint32_t)atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--stream") == 0)
            stream = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--seek") == 0)
            seek = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--per-call") == 0)
            per_call = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--offset") == 0)
            start = strtoull(argv[i + 1], NULL, 0);
        else
            return 2;
    }
    unsigned char *buf = malloc(bufsize);
    if (!buf)
        return 1;
    for (; i < argc; i++) {
        int kind = 0;
        td_options o;
        int is_memset = strcmp(argv[i], "memset") == 0;
        if (!is_memset && setup(argv[i], &kind, &o, threads) != 0) {
            fprintf(stderr, "bench_gen: bad spec '%s'\n", argv[i]);
            return 2;
        }
        uint64_t bytes = 0, offset = start, rng = 88172645463325252u, seeks = 0;
        td_stream *s = NULL;
        double t0 = now(), t;
        if (stream && !is_memset &&
            (td_stream_open(&s, kind, UINT64_C(1) << 50, &o) != TD_OK ||
             td_stream_seek(s, start) != TD_OK))
            return 1;
        do {
            for (int r = 0; r < 8; r++) {
                size_t got;
                if (s && seek > 0 && bytes / bufsize % (uint64_t)seek == 0) {
                    rng ^= rng << 13;
                    rng ^= rng >> 7;
                    rng ^= rng << 17;
                    if (td_stream_seek(s, rng % ((UINT64_C(1) << 40) - bufsize)) != TD_OK)
                        return 1;
                    seeks++;
                }
                if (is_memset)
                    memset(buf, (int)(offset & 1), bufsize);
                else if (s ? td_stream_read(s, buf, bufsize, &got) != TD_OK || got != bufsize
                           : td_fill(kind, &o, offset, buf, bufsize) != TD_OK)
                    return 1;
                offset += per_call ? 0 : bufsize;
                bytes += bufsize;
            }
            __asm__ volatile("" : : "r"(buf) : "memory");
            t = now() - t0;
        } while (t < seconds);
        td_stream_free(s);
        if (seeks)
            printf("%s %.3f GB/s, %.1f us per seek\n", argv[i], (double)bytes / t / 1e9,
                   t / (double)seeks * 1e6);
        else if (per_call && !s)
            printf("%s %.3f GB/s, %.1f us per call\n", argv[i], (double)bytes / t / 1e9,
                   t / (double)(bytes / bufsize) * 1e6);
        else
            printf("%s %.3f\n", argv[i], (double)bytes / t / 1e9);
        fflush(stdout);
    }
    free(buf);
    return 0;
}
