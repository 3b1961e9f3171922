/*
 * In-process generation speed: td_fill into a 1 MiB buffer, one thread,
 * 256 MiB per pass, best of 5 passes, GB per CPU second.
 *   bench_compressible_gen KIND [key=value ...]      e.g.  bench_compressible_gen compressible ratio=3
 * Built and run by bench_compressible.py.
 */
#include <testdata.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
    int kind;
    double best = 1e9;

    if (argc < 2 || !b || td_kind_from_name(argv[1], &kind) != TD_OK) {
        fprintf(stderr, "usage: bench_compressible_gen KIND [key=value ...]\n");
        return 2;
    }
    td_options_init(&o);
    for (int i = 2; i < argc; i++) {
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
    printf("%.2f\n", 256.0 * (double)n / best / 1e9);
    free(b);
    return 0;
}
