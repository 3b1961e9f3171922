/* TD_COMPRESSIBLE: golden vectors, invariance, achieved ratios, bad options. */
#include "td_test_util.h"

#include <math.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <zlib.h>
#include <zstd.h>

#define MIB (1024u * 1024u)

static td_options opts(uint64_t seed, double ratio)
{
    td_options o;
    td_options_init(&o);
    o.seed = seed;
    o.ratio = ratio;
    return o;
}

static uint8_t *gen(const td_options *o, uint64_t off, size_t n)
{
    uint8_t *b = malloc(n);
    cr_assert_not_null(b);
    cr_assert_eq(td_fill(TD_COMPRESSIBLE, o, off, b, n), TD_OK);
    return b;
}

/* ---- golden vectors (format version 1; computed once and pinned) ---- */

typedef struct golden {
    uint64_t seed;
    double ratio;
    uint64_t offset;
    const char *sha;
} golden;

static const golden goldens[] = {
#include "golden_compressible.inc"
};

Test(compressible, golden_vectors)
{
    for (size_t i = 0; i < sizeof goldens / sizeof goldens[0]; i++) {
        const golden *g = &goldens[i];
        td_options o = opts(g->seed, g->ratio);
        uint8_t *b = gen(&o, g->offset, MIB);
        char hex[65];
        td_test_sha256_hex(b, MIB, hex);
        cr_expect_str_eq(hex, g->sha, "seed %llu ratio %g offset %llu",
                         (unsigned long long)g->seed, g->ratio, (unsigned long long)g->offset);
        free(b);
    }
}

Test(compressible, kind_registered)
{
    int k = -1;
    cr_assert_eq(td_kind_from_name("compressible", &k), TD_OK);
    cr_assert_eq(k, TD_COMPRESSIBLE);
    cr_assert_eq(k, 3);
    cr_assert_str_eq(td_kind_name(TD_COMPRESSIBLE), "compressible");
}

/* ---- invariance under chunking, seeking and threads ---- */

Test(compressible, chunking_seek_threads)
{
    td_options o = opts(7, 2.5);
    td_test_check_invariance(TD_COMPRESSIBLE, &o, (UINT64_C(1) << 40) - 777, 3 * MIB + 12345);
}

Test(compressible, seeds_and_ratios_differ)
{
    td_options a = opts(0, 3.0), b = opts(1, 3.0), c = opts(0, 3.5);
    uint8_t *x = gen(&a, 0, 65536), *y = gen(&b, 0, 65536), *z = gen(&c, 0, 65536);
    cr_assert(memcmp(x, y, 65536) != 0);
    cr_assert(memcmp(x, z, 65536) != 0);
    free(x);
    free(y);
    free(z);
}

/* ---- achieved compression ratios, in process ---- */

static double zlib_ratio(const uint8_t *p, size_t n)
{
    uLongf cap = compressBound(n);
    uint8_t *c = malloc(cap);
    cr_assert_eq(compress2(c, &cap, p, n, 6), Z_OK);
    free(c);
    return (double)n / (double)cap;
}

static double zstd_ratio(const uint8_t *p, size_t n)
{
    size_t cap = ZSTD_compressBound(n);
    uint8_t *c = malloc(cap);
    size_t r = ZSTD_compress(c, cap, p, n, 3);
    cr_assert(!ZSTD_isError(r));
    free(c);
    return (double)n / (double)r;
}

Test(compressible, ratio_zlib_zstd, .timeout = 120)
{
    static const double rs[] = {1.25, 1.5, 2, 3, 4, 6, 10};
    const size_t n = 4 * MIB;
    for (size_t i = 0; i < sizeof rs / sizeof rs[0]; i++) {
        td_options o = opts(42, rs[i]);
        uint8_t *b = gen(&o, 0, n);
        double z = zlib_ratio(b, n), s = zstd_ratio(b, n);
        cr_expect(fabs(z / rs[i] - 1) <= 0.05, "R=%g: zlib -6 gives %.3f", rs[i], z);
        cr_expect(fabs(s / rs[i] - 1) <= 0.05, "R=%g: zstd -3 gives %.3f", rs[i], s);
        /* granularity: 64 KiB pieces one by one */
        double sum = 0;
        for (size_t at = 0; at < n; at += 65536)
            sum += zstd_ratio(b + at, 65536);
        sum /= (double)(n / 65536);
        cr_expect(fabs(sum / rs[i] - 1) <= 0.10, "R=%g: 64 KiB zstd pieces give %.3f", rs[i], sum);
        free(b);
    }
}

Test(compressible, ratio_one_is_incompressible)
{
    td_options o = opts(5, 1.0);
    uint8_t *b = gen(&o, 0, MIB);
    cr_expect(zlib_ratio(b, MIB) < 1.01);
    free(b);
}

Test(compressible, byte_histogram_not_bimodal)
{
    td_options o = opts(3, 3.0);
    uint8_t *b = gen(&o, 0, 4 * MIB);
    uint64_t h[256] = {0}, mx = 0, mn = UINT64_MAX;
    for (size_t i = 0; i < 4 * MIB; i++)
        h[b[i]]++;
    for (int i = 0; i < 256; i++) {
        mx = h[i] > mx ? h[i] : mx;
        mn = h[i] < mn ? h[i] : mn;
    }
    /* no byte value dominates, none is missing */
    cr_expect(mn > 0 && (double)mx / (double)mn < 1.5, "min %llu max %llu",
              (unsigned long long)mn, (unsigned long long)mx);
    free(b);
}

/* ---- bad values ---- */

Test(compressible, bad_ratio_values)
{
    td_options o;
    td_options_init(&o);
    cr_assert_eq(td_options_set(&o, TD_COMPRESSIBLE, "ratio", "0.5"), TD_ERANGE);
    cr_assert_eq(td_options_set(&o, TD_COMPRESSIBLE, "ratio", "0.999"), TD_ERANGE);
    cr_assert_eq(td_options_set(&o, TD_COMPRESSIBLE, "ratio", "1000.5"), TD_ERANGE);
    cr_assert_eq(td_options_set(&o, TD_COMPRESSIBLE, "ratio", "nan"), TD_ERANGE);
    cr_assert_eq(td_options_set(&o, TD_COMPRESSIBLE, "ratio", "inf"), TD_ERANGE);
    cr_assert_eq(td_options_set(&o, TD_COMPRESSIBLE, "ratio", "-inf"), TD_ERANGE);
    cr_assert_eq(td_options_set(&o, TD_COMPRESSIBLE, "ratio", "3x"), TD_ESYNTAX);
    cr_assert_eq(td_options_set(&o, TD_COMPRESSIBLE, "ratio", ""), TD_ESYNTAX);
    cr_assert_eq(o.ratio, 3.0); /* unchanged on failure */
    cr_assert_eq(td_options_set(&o, TD_COMPRESSIBLE, "ratio", "1"), TD_OK);
    cr_assert_eq(td_options_set(&o, TD_COMPRESSIBLE, "ratio", "1000"), TD_OK);
    cr_assert_eq(td_options_set(&o, TD_COMPRESSIBLE, "ratio", "2.5"), TD_OK);
    cr_assert_eq(o.ratio, 2.5);
    cr_assert_eq(td_options_set(&o, TD_COMPRESSIBLE, "algorithm", "fast"), TD_EOPTION);
    cr_assert_eq(td_options_set(&o, TD_RANDOM, "ratio", "2"), TD_EOPTION);

    const double bad[] = {0.5, 0.0, -1.0, 1000.001, NAN, INFINITY, -INFINITY};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        td_options b;
        td_stream *s = (td_stream *)1;
        uint8_t x[16];
        td_options_init(&b);
        b.ratio = bad[i];
        cr_expect_eq(td_options_check(TD_COMPRESSIBLE, &b), TD_ERANGE, "ratio %g", bad[i]);
        cr_expect_eq(td_stream_open(&s, TD_COMPRESSIBLE, 100, &b), TD_ERANGE, "ratio %g", bad[i]);
        cr_expect(s == NULL);
        cr_expect_eq(td_fill(TD_COMPRESSIBLE, &b, 0, x, sizeof x), TD_ERANGE);
    }
}

#ifdef TD_CLI
Test(compressible, cli_rejects_bad_ratio)
{
    char cmd[1024], msg[512] = {0};
    const char *err = "cli_bad_ratio.err";
    snprintf(cmd, sizeof cmd, "'%s' gen compressible 1M --ratio 0.5 >/dev/null 2>%s", TD_CLI, err);
    int st = system(cmd);
    cr_assert(WIFEXITED(st));
    cr_assert_eq(WEXITSTATUS(st), 2);
    FILE *f = fopen(err, "r");
    cr_assert_not_null(f);
    size_t n = fread(msg, 1, sizeof msg - 1, f);
    fclose(f);
    remove(err);
    cr_assert(n > 0);
    cr_expect(strstr(msg, "--ratio") && strstr(msg, "0.5") && strstr(msg, "range"), "message: %s",
              msg);
    snprintf(cmd, sizeof cmd, "'%s' gen compressible 1M --ratio 2 >/dev/null", TD_CLI);
    st = system(cmd);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}
#endif
