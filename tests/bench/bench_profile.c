/*
 * In-process profiling speed: td_profile_builder_new/update/finish and
 * td_profile_save on each FILE held in memory, best of N runs (default 5),
 * MB per CPU second of the calling thread.  Process start-up and file reads
 * are not counted, so this is the library's own cost; `perf stat -e
 * task-clock testdata profile --no-fingerprint FILE -o P` counts both.
 *   bench_profile [--fp] [--runs N] FILE...
 * prints "FILE BYTES MS MB/s" per file.  Built as build/tests/bench/bench_profile
 * (target bench_profile), or on its own:
 *   cc -O2 -I include tests/bench/bench_profile.c build/libtestdata/libtestdata.a \
 *      -lsodium -lcrypto -lzstd -llz4 -llzma -lz -lpthread -lm -o bench_profile
 */
#include <testdata.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); /* CPU time: the machine may be shared */
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    int fp = 0, runs = 5, a = 1;
    for (; a < argc && argv[a][0] == '-'; a++) {
        if (strcmp(argv[a], "--fp") == 0)
            fp = 1;
        else if (strcmp(argv[a], "--runs") == 0 && a + 1 < argc)
            runs = atoi(argv[++a]);
        else
            break;
    }
    if (a >= argc || runs < 1) {
        fprintf(stderr, "usage: bench_profile [--fp] [--runs N] FILE...\n");
        return 2;
    }
    for (; a < argc; a++) {
        FILE *f = fopen(argv[a], "rb");
        long n;
        unsigned char *buf;
        double best = 1e9;
        if (!f || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
            fprintf(stderr, "cannot read %s\n", argv[a]);
            return 1;
        }
        buf = malloc((size_t)n + 1);
        if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n)
            return 1;
        fclose(f);
        for (int r = 0; r < runs; r++) {
            td_profile_options o;
            td_profile_builder *b;
            td_profile *p;
            char *j;
            size_t len = 0;
            double t = now();
            td_profile_options_init(&o);
            o.size_hint = (uint64_t)n;
            o.fingerprint = (uint32_t)fp;
            if (td_profile_builder_new(&b, &o) != TD_OK || td_profile_builder_update(b, buf, (size_t)n) != TD_OK ||
                td_profile_builder_finish(b, &p) != TD_OK)
                return 1;
            td_profile_builder_free(b);
            (void)td_profile_save(p, NULL, 0, &len);
            j = malloc(len);
            if (!j || td_profile_save(p, j, len, &len) != TD_OK)
                return 1;
            free(j);
            td_profile_free(p);
            t = now() - t;
            if (t < best)
                best = t;
        }
        printf("%-40s %9ld %8.3f %8.1f\n", argv[a], n, best * 1e3, (double)n / best / 1e6);
        free(buf);
    }
    return 0;
}
