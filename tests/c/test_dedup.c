/* The generic dedup layer: achieved dedup ratio, spread, invariance, options. */
#include "td_test_util.h"

#include <math.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB (1024u * 1024u)

static td_options dd_opts(uint64_t seed, double dedup, uint32_t block)
{
    td_options o;
    td_options_init(&o);
    o.seed = seed;
    o.dedup = dedup;
    o.dedup_block = block;
    return o;
}

/* 64-bit digest of a block (first 8 bytes of BLAKE2b). */
static uint64_t block_hash(const uint8_t *p, size_t n)
{
    uint64_t h;
    crypto_generichash((unsigned char *)&h, sizeof h, p, n, NULL, 0);
    return h;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Count distinct blocks among the first nblocks blocks of a stream, as a
 * fixed-block deduplicator would; also count how many of the duplicates sit
 * in the second half of the stream. */
static void count_unique(td_kind kind, const td_options *o, uint64_t nblocks, uint64_t *uniq,
                         uint64_t *dups_second_half)
{
    const size_t bs = o->dedup_block, chunk = 4 * MIB;
    uint64_t *h = malloc(nblocks * sizeof *h), *sorted = malloc(nblocks * sizeof *h);
    uint8_t *buf = malloc(chunk);
    cr_assert(h && sorted && buf);
    for (uint64_t b = 0; b < nblocks;) {
        uint64_t k = (chunk / bs < nblocks - b) ? chunk / bs : nblocks - b;
        cr_assert_eq(td_fill(kind, o, b * bs, buf, (size_t)(k * bs)), TD_OK);
        for (uint64_t i = 0; i < k; i++)
            h[b + i] = block_hash(buf + i * bs, bs);
        b += k;
    }
    memcpy(sorted, h, nblocks * sizeof *h);
    qsort(sorted, nblocks, sizeof *sorted, cmp_u64);
    *uniq = 0;
    for (uint64_t i = 0; i < nblocks; i++)
        if (i == 0 || sorted[i] != sorted[i - 1])
            (*uniq)++;
    /* duplicates in the second half: blocks whose hash appeared before */
    if (dups_second_half) {
        uint64_t uniq_first = 0, half = nblocks / 2;
        memcpy(sorted, h, half * sizeof *h);
        qsort(sorted, half, sizeof *sorted, cmp_u64);
        for (uint64_t i = 0; i < half; i++)
            if (i == 0 || sorted[i] != sorted[i - 1])
                uniq_first++;
        /* dups in first half = half - uniq_first; the rest are in the second */
        *dups_second_half = (nblocks - *uniq) - (half - uniq_first);
    }
    free(h);
    free(sorted);
    free(buf);
}

static void check_ratio(td_kind kind, double dedup, uint32_t bs, uint64_t nblocks)
{
    td_options o = dd_opts(11, dedup, bs);
    uint64_t u, second;
    count_unique(kind, &o, nblocks, &u, &second);
    double got = (double)nblocks / (double)u;
    cr_expect(fabs(got / dedup - 1) <= 0.01, "%s dedup %g block %u: got %.4f (%llu unique of %llu)",
              td_kind_name(kind), dedup, bs, got, (unsigned long long)u,
              (unsigned long long)nblocks);
    /* duplicates are spread: the second half holds a fair share of them */
    uint64_t dups = nblocks - u;
    if (dups > 100)
        cr_expect(second > dups * 4 / 10 && second < dups * 6 / 10, "%llu of %llu dups late",
                  (unsigned long long)second, (unsigned long long)dups);
}

Test(dedup, ratio_random, .timeout = 120, TD_ONE_THREAD)
{
    check_ratio(TD_RANDOM, 2.0, 4096, 10000);
    check_ratio(TD_RANDOM, 1.5, 4096, 12000);
    check_ratio(TD_RANDOM, 3.7, 512, 20000);
    check_ratio(TD_RANDOM, 1.0, 4096, 10000);
}

Test(dedup, ratio_random_fast, TD_ONE_THREAD)
{
    td_options o = dd_opts(3, 5.0, 1024);
    uint64_t u;
    o.algorithm = TD_ALG_FAST;
    count_unique(TD_RANDOM, &o, 10000, &u, NULL);
    cr_expect(fabs(10000.0 / (double)u / 5.0 - 1) <= 0.01, "got %llu unique",
              (unsigned long long)u);
}

Test(dedup, ratio_compressible, .timeout = 120, TD_ONE_THREAD)
{
    check_ratio(TD_COMPRESSIBLE, 2.0, 4096, 10000);
    check_ratio(TD_COMPRESSIBLE, 4.0, 8192, 10000);
    check_ratio(TD_COMPRESSIBLE, 1.3, 65536, 10000);
}

Test(dedup, text_ratio, TD_ONE_THREAD)
{
    check_ratio(TD_TEXT, 2.0, 4096, 10000);
    check_ratio(TD_TEXT, 3.3, 4096, 10000);
}

Test(dedup, combines_with_ratio, TD_ONE_THREAD)
{
    /* dedup 2 over ratio 3: every block is still ratio-3 data */
    td_options o = dd_opts(1, 2.0, 4096);
    o.ratio = 3.0;
    uint8_t *a = malloc(MIB), *b = malloc(MIB);
    td_options plain = o;
    plain.dedup = 1.0;
    cr_assert_eq(td_fill(TD_COMPRESSIBLE, &o, 0, a, MIB), TD_OK);
    cr_assert_eq(td_fill(TD_COMPRESSIBLE, &plain, 0, b, MIB), TD_OK);
    /* the first block is the first block of the plain stream */
    cr_assert(memcmp(a, b, 4096) == 0);
    cr_assert(memcmp(a, b, MIB) != 0);
    free(a);
    free(b);
}

static void invariance(td_kind kind, td_options o)
{
    td_test_check_invariance(kind, &o, (UINT64_C(1) << 41) + 123, 5 * MIB + 999);
}

Test(dedup, invariance_random)
{
    invariance(TD_RANDOM, dd_opts(9, 2.5, 4096));
    invariance(TD_RANDOM, dd_opts(9, 1.7, 512));
}

Test(dedup, invariance_compressible)
{
    invariance(TD_COMPRESSIBLE, dd_opts(9, 2.5, 4096));
    invariance(TD_COMPRESSIBLE, dd_opts(UINT64_MAX, 3.0, 1u << 20));
}

/* Text's blocks (64 KiB) hold 16 dedup blocks and may be written past their
 * end: a duplicate made in place in a large read must give the bytes a
 * small read makes through the block cache. */
Test(dedup, invariance_text, .timeout = 120)
{
    invariance(TD_TEXT, dd_opts(9, 2.5, 4096));
}

Test(dedup, golden_vectors, TD_ONE_THREAD)
{
    static const struct {
        td_kind kind;
        uint64_t seed;
        double dedup;
        uint64_t offset;
        const char *sha;
    } g[] = {
#include "golden_dedup.inc"
    };
    uint8_t *b = malloc(MIB);
    for (size_t i = 0; i < sizeof g / sizeof g[0]; i++) {
        td_options o = dd_opts(g[i].seed, g[i].dedup, 4096);
        unsigned char h[32];
        char hex[65];
        cr_assert_eq(td_fill(g[i].kind, &o, g[i].offset, b, MIB), TD_OK);
        crypto_hash_sha256(h, b, MIB);
        for (int k = 0; k < 32; k++)
            sprintf(hex + 2 * k, "%02x", h[k]);
        cr_expect_str_eq(hex, g[i].sha, "row %zu", i);
    }
    free(b);
}

Test(dedup, bad_values, TD_ONE_THREAD)
{
    td_options o;
    td_options_init(&o);
    cr_assert_eq(td_options_set(&o, TD_RANDOM, "dedup", "0.5"), TD_ERANGE);
    cr_assert_eq(td_options_set(&o, TD_RANDOM, "dedup", "0"), TD_ERANGE);
    cr_assert_eq(td_options_set(&o, TD_RANDOM, "dedup", "nan"), TD_ERANGE);
    cr_assert_eq(td_options_set(&o, TD_RANDOM, "dedup", "inf"), TD_ERANGE);
    cr_assert_eq(td_options_set(&o, TD_RANDOM, "dedup", "1e300"), TD_ERANGE);
    cr_assert_eq(td_options_set(&o, TD_RANDOM, "dedup", "two"), TD_ESYNTAX);
    cr_assert_eq(td_options_set(&o, TD_COMPRESSIBLE, "dedup", "0.99"), TD_ERANGE);
    cr_assert_eq(td_options_set(&o, TD_RANDOM, "dedup_block", "0"), TD_ERANGE);
    cr_assert_eq(td_options_set(&o, TD_RANDOM, "dedup_block", "3"), TD_ERANGE);
    cr_assert_eq(td_options_set(&o, TD_COMPRESSIBLE, "dedup_block", "4097"), TD_ERANGE);
    cr_assert_eq(td_options_set(&o, TD_COMPRESSIBLE, "dedup_block", "6K"), TD_ERANGE);
    cr_assert_eq(td_options_set(&o, TD_COMPRESSIBLE, "dedup_block", "4Q"), TD_ESYNTAX);
    cr_assert_eq(o.dedup, 1.0);
    cr_assert_eq(o.dedup_block, 4096u);
    cr_assert_eq(td_options_set(&o, TD_COMPRESSIBLE, "dedup", "2"), TD_OK);
    cr_assert_eq(td_options_set(&o, TD_COMPRESSIBLE, "dedup_block", "256"), TD_ERANGE);
    cr_assert_eq(td_options_set(&o, TD_COMPRESSIBLE, "dedup_block", "2G"), TD_ERANGE);
    cr_assert_eq(td_options_set(&o, TD_COMPRESSIBLE, "dedup_block", "512"), TD_OK);
    cr_assert_eq(td_options_set(&o, TD_COMPRESSIBLE, "dedup_block", "1G"), TD_OK);
    cr_assert_eq(td_options_set(&o, TD_COMPRESSIBLE, "dedup_block", "8K"), TD_OK);
    cr_assert_eq(o.dedup_block, 8192u);
    /* zero keeps rejecting dedup */
    td_options z;
    td_options_init(&z);
    cr_assert_eq(td_options_set(&z, TD_ZERO, "dedup", "2"), TD_EOPTION);
    z.dedup = 2;
    cr_assert_eq(td_options_check(TD_ZERO, &z), TD_EOPTION);

    const double bad[] = {0.5, 0.0, -2, NAN, INFINITY, 1e300};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        td_options b = dd_opts(0, bad[i], 4096);
        td_stream *s = (td_stream *)1;
        cr_expect_eq(td_options_check(TD_RANDOM, &b), TD_ERANGE, "dedup %g", bad[i]);
        cr_expect_eq(td_stream_open(&s, TD_COMPRESSIBLE, 10, &b), TD_ERANGE, "dedup %g", bad[i]);
        cr_expect(s == NULL);
    }
    const uint32_t badbs[] = {0, 3, 4095, 4097, 12288};
    for (size_t i = 0; i < sizeof badbs / sizeof badbs[0]; i++) {
        td_options b = dd_opts(0, 2.0, badbs[i]);
        td_stream *s = (td_stream *)1;
        cr_expect_eq(td_options_check(TD_COMPRESSIBLE, &b), TD_ERANGE, "block %u", badbs[i]);
        cr_expect_eq(td_stream_open(&s, TD_RANDOM, 10, &b), TD_ERANGE, "block %u", badbs[i]);
        cr_expect(s == NULL);
    }
}
