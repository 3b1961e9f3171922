/*
 * What fitting the ecosystem added to the C API: TD_OPTIONS_INIT, sizes
 * with every suffix of coreutils' head -c, td_kind_is_text, the analyzer's
 * 4 KiB dedup ratio (exact, and the bounded-memory estimate), and the
 * analysis as JSON.
 */
#include "td_test_util.h"

#include "../../libtestdata/blockcount.h"

#include <math.h>
#include <string.h>

#define MIB (1024u * 1024u)

/* Usable where a constant expression is needed. */
static const td_options static_defaults = TD_OPTIONS_INIT;

Test(ecosystem, options_init_macro_equals_function, TD_ONE_THREAD)
{
    td_options f, m = TD_OPTIONS_INIT;
    memset(&f, 0xa5, sizeof f); /* td_options_init must set every byte */
    td_options_init(&f);
    cr_expect_eq(memcmp(&f, &m, sizeof f), 0, "TD_OPTIONS_INIT differs from td_options_init");
    cr_expect_eq(memcmp(&f, &static_defaults, sizeof f), 0);
    for (int k = 0; k < TD_KIND_COUNT; k++)
        if (td_kind_name(k))
            cr_expect_eq(td_options_check(k, &m), TD_OK, "kind %d", k);
}

Test(ecosystem, sizes_take_every_head_suffix, TD_ONE_THREAD)
{
    static const struct {
        const char *text;
        int rc;
        uint64_t value;
    } cases[] = {
        {"1b", TD_OK, 512},
        {"3b", TD_OK, 1536},
        {"1k", TD_OK, 1024},
        {"1kB", TD_OK, 1000},
        {"1kD", TD_OK, 1000},
        {"1kiB", TD_OK, 1024},
        {"1m", TD_OK, 1u << 20},
        {"1mB", TD_OK, 1000000},
        {"1miB", TD_OK, 1u << 20},
        {"2MD", TD_OK, 2000000},
        {"1EB", TD_OK, 1000000000000000000ull},
        {"18EB", TD_OK, 18000000000000000000ull},
        {"19EB", TD_ERANGE, 0},
        {"0Z", TD_OK, 0},
        {"0YiB", TD_OK, 0},
        {"1Z", TD_ERANGE, 0},
        {"1Y", TD_ERANGE, 0},
        {"1ZB", TD_ERANGE, 0},
        {"36028797018963967b", TD_OK, 36028797018963967ull * 512},
        {"36028797018963968b", TD_ERANGE, 0},
        /* what head -c refuses */
        {"1B", TD_ESYNTAX, 0},
        {"1bB", TD_ESYNTAX, 0},
        {"1g", TD_ESYNTAX, 0},
        {"1t", TD_ESYNTAX, 0},
        {"1c", TD_ESYNTAX, 0},
        {"1w", TD_ESYNTAX, 0},
        {"1KIB", TD_ESYNTAX, 0},
        {"1Q", TD_ESYNTAX, 0},
        {"1R", TD_ESYNTAX, 0},
        {"1kBx", TD_ESYNTAX, 0},
        {"1Mi", TD_ESYNTAX, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint64_t v = 4242;
        int rc = td_parse_size(cases[i].text, &v);
        cr_expect_eq(rc, cases[i].rc, "'%s': rc %d", cases[i].text, rc);
        if (rc == TD_OK)
            cr_expect_eq(v, cases[i].value, "'%s': %llu", cases[i].text, (unsigned long long)v);
        else
            cr_expect_eq(v, 4242, "'%s' changed the output on failure", cases[i].text);
    }
}

Test(ecosystem, kind_is_text, TD_ONE_THREAD)
{
    cr_expect_eq(td_kind_is_text(TD_TEXT), 1);
    cr_expect_eq(td_kind_is_text(TD_ZERO), 0);
    cr_expect_eq(td_kind_is_text(TD_RANDOM), 0);
    cr_expect_eq(td_kind_is_text(TD_COMPRESSIBLE), 0);
    cr_expect_eq(td_kind_is_text(-1), TD_EKIND);
    cr_expect_eq(td_kind_is_text(TD_KIND_COUNT), TD_EKIND);
    for (int k = 0; k < TD_KIND_COUNT; k++) {
        int t = td_kind_is_text(k);
        if (!td_kind_name(k)) {
            cr_expect_eq(t, TD_EKIND);
            continue;
        }
        cr_expect(t == 0 || t == 1, "kind %s: %d", td_kind_name(k), t);
        if (t != 1)
            continue;
        /* A text kind must be what a terminal shows: no control
         * characters but tab, CR and LF (UTF-8 is checked by test_text). */
        td_options o;
        unsigned char buf[65536];
        td_options_init(&o);
        cr_assert_eq(td_fill(k, &o, 0, buf, sizeof buf), TD_OK);
        for (size_t i = 0; i < sizeof buf; i++)
            cr_assert((buf[i] >= 0x20 && buf[i] != 0x7f) || buf[i] == '\n' || buf[i] == '\t' ||
                          buf[i] == '\r',
                      "kind %s byte %zu is 0x%02x", td_kind_name(k), i, buf[i]);
    }
}

static unsigned char *stream(int kind, size_t len, uint64_t seed, double dedup)
{
    td_options o;
    unsigned char *buf = malloc(len ? len : 1);
    cr_assert_not_null(buf);
    td_options_init(&o);
    o.seed = seed;
    o.dedup = dedup;
    cr_assert_eq(td_fill(kind, &o, 0, buf, len), TD_OK);
    return buf;
}

/* Every byte counts for dedup, whatever the compression sample: a
 * one-block sample keeps these tests quick (also under valgrind). */
static td_analyze_options small_sample(void)
{
    td_analyze_options ao;
    td_analyze_options_init(&ao);
    ao.sample_bytes = TD_ANALYZE_BLOCK;
    return ao;
}

Test(ecosystem, dedup_ratio_is_the_streams, TD_ONE_THREAD)
{
    static const double targets[] = {1, 1.5, 2, 4, 10};
    const size_t len = 4 * MIB;
    td_analyze_options ao = small_sample();
    for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++) {
        unsigned char *buf = stream(TD_RANDOM, len, 7, targets[i]);
        td_analysis r;
        cr_assert_eq(td_analyze_buffer(buf, len, &ao, &r), TD_OK);
        cr_expect_eq(r.dedup_blocks, len / 4096);
        cr_expect_eq(r.dedup_is_estimate, 0);
        /* The dedup layer's U(n) = ceil(n / D): the ratio is exact. */
        uint64_t want = (uint64_t)ceil((double)r.dedup_blocks / targets[i]);
        cr_expect_eq(r.dedup_unique, want, "D=%g: %llu unique, want %llu", targets[i],
                     (unsigned long long)r.dedup_unique, (unsigned long long)want);
        cr_expect(fabs(r.dedup_ratio - targets[i]) < 0.01 * targets[i], "D=%g: ratio %g",
                  targets[i], r.dedup_ratio);
        free(buf);
    }
}

Test(ecosystem, dedup_of_zeros_partial_blocks_and_chunking, TD_ONE_THREAD)
{
    td_analysis r, parts;
    td_analyzer *a;
    const size_t len = 3 * 4096 + 100;
    unsigned char *buf = stream(TD_ZERO, len, 0, 1);
    cr_assert_eq(td_analyze_buffer(buf, len, NULL, &r), TD_OK);
    cr_expect_eq(r.dedup_blocks, 3); /* the 100-byte tail is not a block */
    cr_expect_eq(r.dedup_unique, 1);
    cr_expect_eq(r.dedup_ratio, 3.0);
    cr_assert_eq(td_analyze_buffer(buf, 4095, NULL, &r), TD_OK);
    cr_expect_eq(r.dedup_blocks, 0);
    cr_expect_eq(r.dedup_ratio, 0.0);
    free(buf);

    /* Any chunking gives the same counts: blocks cut by chunk boundaries
     * are put together. */
    const size_t n = 2 * MIB;
    td_analyze_options ao = small_sample();
    buf = stream(TD_COMPRESSIBLE, n, 3, 2.5);
    cr_assert_eq(td_analyze_buffer(buf, n, &ao, &r), TD_OK);
    cr_assert_eq(td_analyzer_new(&a, &ao), TD_OK);
    uint64_t s = 99;
    for (size_t at = 0; at < n;) {
        size_t c = (size_t)(td_test_rand(&s) % 9000);
        if (c > n - at)
            c = n - at;
        cr_assert_eq(td_analyzer_update(a, buf + at, c), TD_OK);
        at += c;
    }
    cr_assert_eq(td_analyzer_finish(a, &parts), TD_OK);
    td_analyzer_free(a);
    cr_expect_eq(parts.dedup_blocks, r.dedup_blocks);
    cr_expect_eq(parts.dedup_unique, r.dedup_unique);
    cr_expect(fabs(r.dedup_ratio - 2.5) < 0.01, "ratio %g", r.dedup_ratio);
    free(buf);
}

/* Past TD__BLOCKCOUNT_EXACT distinct blocks the count is an estimate, in
 * bounded memory; hashes stand in for blocks (the analyzer hashes each). */
Test(ecosystem, dedup_estimate_beyond_the_exact_range, TD_ONE_THREAD)
{
    static const struct {
        uint64_t distinct, copies;
    } cases[] = {{TD__BLOCKCOUNT_EXACT, 1}, {300000, 4}, {1500000, 1}, {500000, 2}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        td_blockcount *b;
        uint64_t blocks, unique;
        int est;
        cr_assert_eq(td__blockcount_new(&b), TD_OK);
        for (uint64_t k = 0; k < cases[c].copies; k++) {
            uint64_t s = 12345 + c; /* the same hashes each round */
            for (uint64_t i = 0; i < cases[c].distinct; i++)
                cr_assert_eq(td__blockcount_add(b, td__wyrand(&s)), TD_OK);
        }
        td__blockcount_result(b, &blocks, &unique, &est);
        td__blockcount_free(b);
        cr_expect_eq(blocks, cases[c].distinct * cases[c].copies);
        if (cases[c].distinct <= TD__BLOCKCOUNT_EXACT) {
            cr_expect_eq(est, 0);
            cr_expect_eq(unique, cases[c].distinct);
        } else {
            double err = fabs((double)unique / (double)cases[c].distinct - 1);
            cr_expect_eq(est, 1);
            cr_expect(err < 0.02, "%llu distinct estimated as %llu (%.2f%% off)",
                      (unsigned long long)cases[c].distinct, (unsigned long long)unique,
                      100 * err);
        }
    }
}

Test(ecosystem, block_hash_separates_near_blocks, TD_ONE_THREAD)
{
    unsigned char a[4096], b[4096];
    memset(a, 0, sizeof a);
    memcpy(b, a, sizeof b);
    uint64_t h0 = td__block_hash(a, sizeof a);
    for (size_t i = 0; i < sizeof b; i += 511) {
        b[i] ^= 1;
        cr_expect_neq(td__block_hash(b, sizeof b), h0, "one bit at byte %zu", i);
        b[i] ^= 1;
    }
    /* swapping the two halves of a 16-byte word changes the hash */
    for (size_t i = 0; i < 16; i++)
        b[i] = (unsigned char)i;
    memcpy(a, b, sizeof a);
    memcpy(b, a + 8, 8);
    memcpy(b + 8, a, 8);
    cr_expect_neq(td__block_hash(a, sizeof a), td__block_hash(b, sizeof b));
}

Test(ecosystem, analysis_json, TD_ONE_THREAD)
{
    td_analysis r;
    char buf[8192];
    unsigned char *data = stream(TD_RANDOM, 64 * 1024, 1, 4);
    cr_assert_eq(td_analyze_buffer(data, 64 * 1024, NULL, &r), TD_OK);
    free(data);
    cr_assert_eq(td_analysis_json(&r, "a \"b\"\\\xff\n.bin", buf, sizeof buf), TD_OK);
    static const char head[] = "{\"file\": \"a \\\"b\\\"\\\\\\udcff\\u000a.bin\", \"size\": 65536, ";
    cr_expect(strncmp(buf, head, strlen(head)) == 0, "%s", buf);
    static const char *const keys[] = {"\"entropy\": ", "\"sampled\": false",
                                       "\"sampled_bytes\": 65536", "\"ratios\": {\"gzip\": ",
                                       "\"compressed\": {\"gzip\": ",
                                       "\"dedup\": {\"block\": 4096, \"blocks\": 16, "
                                       "\"unique\": 4, \"ratio\": 4, \"estimated\": false}",
                                       "\"verdict\": \"compresses"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        cr_expect(strstr(buf, keys[i]), "no %s in %s", keys[i], buf);
    cr_expect_eq(buf[strlen(buf) - 1], '}');
    cr_expect_null(strchr(buf, '\n'));
    /* no name: null */
    cr_assert_eq(td_analysis_json(&r, NULL, buf, sizeof buf), TD_OK);
    cr_expect(strncmp(buf, "{\"file\": null, ", 15) == 0, "%s", buf);
    /* truncated: TD_ERANGE, still a string */
    cr_expect_eq(td_analysis_json(&r, "x", buf, 40), TD_ERANGE);
    cr_expect_eq(strlen(buf), 39);
    cr_expect_eq(td_analysis_json(NULL, "x", buf, sizeof buf), TD_EINVAL);
    cr_expect_eq(td_analysis_json(&r, "x", NULL, 10), TD_EINVAL);
    /* numbers JSON cannot hold, in a caller-built analysis: null */
    r.ratio[TD_CODEC_XZ] = INFINITY;
    r.dedup_ratio = NAN;
    cr_assert_eq(td_analysis_json(&r, "x", buf, sizeof buf), TD_OK);
    cr_expect(strstr(buf, "\"xz\": null}") && strstr(buf, "\"ratio\": null"), "%s", buf);
    /* errors */
    cr_assert_eq(td_analysis_json_error("n\"o", "No such file or directory", buf, sizeof buf),
                 TD_OK);
    cr_expect_str_eq(buf, "{\"file\": \"n\\\"o\", \"error\": \"No such file or directory\"}");
    cr_expect_eq(td_analysis_json_error("x", NULL, buf, sizeof buf), TD_EINVAL);
    /* the bound holds for the worst name */
    char name[300];
    memset(name, 0xff, sizeof name - 1);
    name[sizeof name - 1] = '\0';
    size_t cap = TD_ANALYSIS_JSON_MAX(strlen(name));
    char *big = malloc(cap);
    cr_assert_not_null(big);
    memset(r.verdict, 0x01, sizeof r.verdict); /* not even NUL-terminated */
    cr_expect_eq(td_analysis_json(&r, name, big, cap), TD_OK);
    cr_expect_eq(td_analysis_json_error(name, "e", big, cap), TD_OK);
    free(big);
}
