/*
 * In-process generation speed: td_fill into a 1 MiB buffer, one thread,
 * 256 MiB per pass, best of 5 passes, GB per CPU second.  With --lz4, also
 * the speed of LZ4_compress_default (lz4 -1) on the same bytes (1 MiB at a
 * time, one thread), so that the two can be compared in one process.
 *   bench_compressible_gen [--lz4] KIND [key=value ...]
 * prints "GEN_GBPS" or "GEN_GBPS LZ4_GBPS".  Built and run by
 * bench_compressible.py (cc ... -llz4 when --lz4 is wanted).
 */
#include <testdata.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef TD_BENCH_LZ4
#include <lz4.h>
#endif

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t); /* CPU time: the machine may be shared */
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    const size_t n = 1u << 20;
    unsigned char *b = malloc(n);
    td_options o;
    int kind, with_lz4 = 0, a = 1;
    double best = 1e9;

    if (argc > 1 && strcmp(argv[1], "--lz4") == 0) {
        with_lz4 = 1;
        a = 2;
    }
    if (argc <= a || !b || td_kind_from_name(argv[a], &kind) != TD_OK) {
        fprintf(stderr, "usage: bench_compressible_gen [--lz4] KIND [key=value ...]\n");
        return 2;
    }
    td_options_init(&o);
    for (int i = a + 1; i < argc; i++) {
        char key[64];
        const char *eq = strchr(argv[i], '=');
        if (!eq || (size_t)(eq - argv[i]) >= sizeof key)
            return 2;
        memcpy(key, argv[i], (size_t)(eq - argv[i]));
        key[eq - argv[i]] = 0;
        if (td_options_set(&o, kind, key, eq + 1) != TD_OK) {
            fprintf(stderr, "bad option %s\n", argv[i]);
            return 2;
        }
    }
    for (int rep = 0; rep < 5; rep++) {
        double t = now();
        for (uint64_t i = 0; i < 256; i++)
            if (td_fill((td_kind)kind, &o, i * n, b, n) != TD_OK)
                return 1;
        t = now() - t;
        if (t < best)
            best = t;
    }
    printf("%.3f", 256.0 * (double)n / best / 1e9);
#ifdef TD_BENCH_LZ4
    if (with_lz4) {
        /* The same 64 MiB of the stream, compressed 1 MiB at a time. */
        const int cap = LZ4_compressBound((int)n);
        char *c = malloc((size_t)cap);
        unsigned char *all = malloc(64 * n);
        double lbest = 1e9;
        if (!c || !all)
            return 1;
        for (uint64_t i = 0; i < 64; i++)
            if (td_fill((td_kind)kind, &o, i * n, all + i * n, n) != TD_OK)
                return 1;
        for (int rep = 0; rep < 5; rep++) {
            double t = now();
            for (uint64_t i = 0; i < 64; i++)
                if (LZ4_compress_default((const char *)all + i * n, c, (int)n, cap) <= 0)
                    return 1;
            t = now() - t;
            if (t < lbest)
                lbest = t;
        }
        printf(" %.3f", 64.0 * (double)n / lbest / 1e9);
        free(c);
        free(all);
    }
#else
    (void)with_lz4;
#endif
    printf("\n");
    free(b);
    return 0;
}
