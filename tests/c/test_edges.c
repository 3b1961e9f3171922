/*
 * Edge cases of the public contract, for every kind the library has: sizes
 * 0, 1 and 2^64-1, offsets near 2^64, seeks to and past the end, reads
 * after the end, huge caps, extreme thread counts and seeds, and extreme or
 * invalid option values.  Kinds are enumerated (0 .. TD_KIND_COUNT-1, named
 * ones), and kind options are probed with td_options_set(), so kinds added
 * later are covered without changes here.
 *
 * TD_TEST_SMALL=1 (set by the valgrind CI step) shrinks the big buffers.
 */
#include "td_test_util.h"

#include <float.h>
#include <math.h>

#define KIB 1024u
#define MIB (1024u * 1024u)

/* One configuration to sweep: a kind plus, where the kind has one, an
 * algorithm. */
typedef struct variant {
    int kind;
    const char *algorithm; /* NULL: the kind takes no algorithm */
    char label[48];
} variant;

static size_t variants(variant out[], size_t max)
{
    static const char *const algs[] = {"chacha20", "fast"};
    size_t n = 0;
    for (int k = 0; k < TD_KIND_COUNT; k++) {
        if (!td_kind_name(k))
            continue;
        td_options o;
        td_options_init(&o);
        if (td_options_set(&o, k, "algorithm", "chacha20") == TD_EOPTION) {
            cr_assert_lt(n, max);
            out[n] = (variant){k, NULL, ""};
            snprintf(out[n].label, sizeof out[n].label, "%s", td_kind_name(k));
            n++;
            continue;
        }
        for (size_t a = 0; a < sizeof algs / sizeof algs[0]; a++) {
            cr_assert_lt(n, max);
            out[n] = (variant){k, algs[a], ""};
            snprintf(out[n].label, sizeof out[n].label, "%s/%s", td_kind_name(k), algs[a]);
            n++;
        }
    }
    cr_assert_gt(n, 0);
    return n;
}

#define MAXV 32
#define FOR_EACH_VARIANT(v)                                                                    \
    variant v##_all[MAXV];                                                                     \
    size_t v##_n = variants(v##_all, MAXV);                                                    \
    for (const variant *v = v##_all; v < v##_all + v##_n; v++)

static td_options vopts(const variant *v, uint64_t seed, uint32_t threads)
{
    td_options o;
    td_options_init(&o);
    o.seed = seed;
    o.threads = threads;
    if (v->algorithm)
        cr_assert_eq(td_options_set(&o, v->kind, "algorithm", v->algorithm), TD_OK);
    return o;
}

static int small_mode(void)
{
    const char *e = getenv("TD_TEST_SMALL");
    return e && *e && strcmp(e, "0") != 0;
}

static td_stream *open_ok(const variant *v, uint64_t size, const td_options *o)
{
    td_stream *s = NULL;
    int rc = td_stream_open(&s, v->kind, size, o);
    cr_assert_eq(rc, TD_OK, "%s: open: %s", v->label, td_strerror(rc));
    cr_assert_not_null(s);
    return s;
}

/* Read exactly len bytes at the stream's position with td_stream_read and
 * compare them with td_fill at the same offset. */
static void expect_read_matches(const variant *v, td_stream *s, const td_options *o, size_t len)
{
    uint64_t at = td_stream_tell(s);
    unsigned char *got = malloc(len ? len : 1), *want = malloc(len ? len : 1);
    size_t n = 0;
    cr_assert(got && want);
    cr_assert_eq(td_stream_read(s, got, len, &n), TD_OK, "%s", v->label);
    cr_assert_eq(n, len, "%s: short read %zu of %zu", v->label, n, len);
    cr_assert_eq(td_fill(v->kind, o, at, want, len), TD_OK);
    cr_assert(memcmp(got, want, len) == 0, "%s: bytes at %llu differ", v->label,
              (unsigned long long)at);
    cr_assert_eq(td_stream_tell(s), at + len);
    free(got);
    free(want);
}

static void expect_done(const variant *v, td_stream *s)
{
    unsigned char b[8];
    const void *chunk = b;
    size_t n = 77;
    uint64_t pos = td_stream_tell(s);
    cr_assert_eq(td_stream_read(s, b, sizeof b, &n), TD_DONE, "%s", v->label);
    cr_assert_eq(n, 0);
    n = 77;
    cr_assert_eq(td_stream_read(s, b, 0, &n), TD_DONE, "%s: cap 0 at the end", v->label);
    cr_assert_eq(n, 0);
    n = 77;
    cr_assert_eq(td_stream_read(s, NULL, 0, &n), TD_DONE, "%s", v->label);
    cr_assert_eq(n, 0);
    n = 77;
    cr_assert_eq(td_stream_next(s, &chunk, &n), TD_DONE, "%s", v->label);
    cr_assert_null(chunk);
    cr_assert_eq(n, 0);
    cr_assert_eq(td_stream_tell(s), pos, "%s: DONE moved the position", v->label);
}

/* ------------------------------------------------------------------------ */

Test(sizes, zero, TD_ONE_THREAD)
{
    FOR_EACH_VARIANT(v)
    {
        td_options o = vopts(v, 1, 1);
        td_stream *s = open_ok(v, 0, &o);
        cr_assert_eq(td_stream_size(s), 0);
        expect_done(v, s);
        expect_done(v, s); /* and again: DONE is sticky */
        cr_assert_eq(td_stream_seek(s, 0), TD_OK);
        cr_assert_eq(td_stream_seek(s, 1), TD_ERANGE);
        cr_assert_eq(td_stream_seek(s, UINT64_MAX), TD_ERANGE);
        cr_assert_eq(td_stream_tell(s), 0);
        expect_done(v, s);
        td_stream_free(s);
        /* td_fill/td_verify of nothing, anywhere, with or without a buffer. */
        cr_assert_eq(td_fill(v->kind, &o, 0, NULL, 0), TD_OK);
        cr_assert_eq(td_fill(v->kind, &o, UINT64_MAX, NULL, 0), TD_OK);
        cr_assert_eq(td_verify(v->kind, &o, UINT64_MAX, NULL, 0, NULL), TD_OK);
    }
}

Test(sizes, one, TD_ONE_THREAD)
{
    FOR_EACH_VARIANT(v)
    {
        td_options o = vopts(v, 2, 1);
        unsigned char b[16], want;
        size_t n = 0;
        td_stream *s = open_ok(v, 1, &o);
        cr_assert_eq(td_fill(v->kind, &o, 0, &want, 1), TD_OK);
        memset(b, 0xA5, sizeof b);
        cr_assert_eq(td_stream_read(s, b, sizeof b, &n), TD_OK);
        cr_assert_eq(n, 1);
        cr_assert_eq(b[0], want, "%s", v->label);
        cr_assert_eq(b[1], 0xA5, "%s: wrote past what it reported", v->label);
        expect_done(v, s);
        /* td_stream_next gives the same single byte. */
        const void *chunk;
        cr_assert_eq(td_stream_seek(s, 0), TD_OK);
        cr_assert_eq(td_stream_next(s, &chunk, &n), TD_OK);
        cr_assert_eq(n, 1);
        cr_assert_eq(*(const unsigned char *)chunk, want);
        expect_done(v, s);
        td_stream_free(s);
    }
}

Test(sizes, max_2_64_minus_1, TD_ONE_THREAD)
{
    /* UINT64_MAX is both the largest size and TD_SIZE_UNBOUNDED: the last
     * byte of such a stream is at offset 2^64-2. */
    FOR_EACH_VARIANT(v)
    {
        td_options o = vopts(v, 3, 1);
        td_stream *s = open_ok(v, UINT64_MAX, &o);
        cr_assert_eq(td_stream_size(s), UINT64_MAX);
        expect_read_matches(v, s, &o, 1000); /* the start works */
        cr_assert_eq(td_stream_seek(s, UINT64_MAX - 1000), TD_OK);
        expect_read_matches(v, s, &o, 1000);
        expect_done(v, s);
        /* One window below the end, a read crossing into the last bytes. */
        cr_assert_eq(td_stream_seek(s, UINT64_MAX - 300 * KIB - 5), TD_OK);
        expect_read_matches(v, s, &o, 300 * KIB + 5);
        expect_done(v, s);
        td_stream_free(s);
    }
}

Test(offsets, near_2_64_fill_and_verify, TD_ONE_THREAD)
{
    FOR_EACH_VARIANT(v)
    {
        td_options o = vopts(v, 4, 1);
        unsigned char a[256], b[256];
        uint64_t bad = 0;
        cr_assert_eq(td_fill(v->kind, &o, UINT64_MAX - 256, a, 256), TD_OK, "%s", v->label);
        cr_assert_eq(td_fill(v->kind, &o, UINT64_MAX - 200, b, 200), TD_OK);
        cr_assert(memcmp(a + 56, b, 200) == 0, "%s: sub-range differs", v->label);
        cr_assert_eq(td_fill(v->kind, &o, UINT64_MAX - 1, b, 1), TD_OK);
        cr_assert_eq(b[0], a[255]);
        cr_assert_eq(td_fill(v->kind, &o, UINT64_MAX - 256, a, 257), TD_ERANGE);
        cr_assert_eq(td_fill(v->kind, &o, UINT64_MAX, a, 1), TD_ERANGE);
        cr_assert_eq(td_fill(v->kind, &o, UINT64_MAX, a, SIZE_MAX), TD_ERANGE);
        cr_assert_eq(td_fill(v->kind, &o, 1, a, SIZE_MAX), TD_ERANGE);
        cr_assert_eq(td_verify(v->kind, &o, UINT64_MAX - 256, a, 256, &bad), TD_OK);
        cr_assert_eq(td_verify(v->kind, &o, UINT64_MAX - 256, a, 257, &bad), TD_ERANGE);
        cr_assert_eq(td_verify(v->kind, &o, 2, a, SIZE_MAX, &bad), TD_ERANGE);
    }
}

Test(offsets, near_2_64_with_threads)
{
    /* The thread split must not overflow when the range ends at 2^64-1. */
    const size_t len = small_mode() ? 600 * KIB : 3 * MIB + 123;
    unsigned char *a = malloc(len), *b = malloc(len);
    cr_assert(a && b);
    FOR_EACH_VARIANT(v)
    {
        td_options o1 = vopts(v, 5, 1), o4 = vopts(v, 5, 4);
        uint64_t off = UINT64_MAX - len;
        cr_assert_eq(td_fill(v->kind, &o1, off, a, len), TD_OK);
        cr_assert_eq(td_fill(v->kind, &o4, off, b, len), TD_OK);
        cr_assert(memcmp(a, b, len) == 0, "%s", v->label);
        /* The same through a threaded stream that ends there. */
        td_stream *s = open_ok(v, UINT64_MAX, &o4);
        cr_assert_eq(td_stream_seek(s, off), TD_OK);
        memset(b, 0, len);
        td_test_read_chunked(s, b, len, 2 * MIB, 9);
        cr_assert(memcmp(a, b, len) == 0, "%s (stream)", v->label);
        td_stream_free(s);
    }
    free(a);
    free(b);
}

Test(seek, to_end_and_beyond, TD_ONE_THREAD)
{
    FOR_EACH_VARIANT(v)
    {
        td_options o = vopts(v, 6, 1);
        static const uint64_t sizes[] = {1, 63, 64, 65, 4096, 256 * KIB + 1, UINT64_MAX - 1};
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
            uint64_t size = sizes[i];
            td_stream *s = open_ok(v, size, &o);
            cr_assert_eq(td_stream_seek(s, size), TD_OK);
            cr_assert_eq(td_stream_tell(s), size);
            expect_done(v, s);
            cr_assert_eq(td_stream_seek(s, size + 1), TD_ERANGE, "%s size %llu", v->label,
                         (unsigned long long)size);
            cr_assert_eq(td_stream_tell(s), size, "failed seek moved the position");
            cr_assert_eq(td_stream_seek(s, UINT64_MAX), size == UINT64_MAX ? TD_OK : TD_ERANGE);
            cr_assert_eq(td_stream_tell(s), size);
            /* Back from the end: the last byte is readable again. */
            cr_assert_eq(td_stream_seek(s, size - 1), TD_OK);
            expect_read_matches(v, s, &o, 1);
            expect_done(v, s);
            td_stream_free(s);
        }
    }
}

Test(read, after_end_repeatedly, TD_ONE_THREAD)
{
    FOR_EACH_VARIANT(v)
    {
        td_options o = vopts(v, 7, 1);
        td_stream *s = open_ok(v, 1000, &o);
        expect_read_matches(v, s, &o, 1000);
        for (int i = 0; i < 3; i++)
            expect_done(v, s);
        /* A read that asks for more than is left gets what is left. */
        cr_assert_eq(td_stream_seek(s, 990), TD_OK);
        unsigned char b[64];
        size_t n = 0;
        cr_assert_eq(td_stream_read(s, b, sizeof b, &n), TD_OK);
        cr_assert_eq(n, 10);
        expect_done(v, s);
        td_stream_free(s);
    }
}

Test(read, huge_cap_is_clipped_to_what_is_left, TD_ONE_THREAD)
{
    /* cap is clipped to the bytes left in the stream: with a buffer of
     * exactly that size, ASan/valgrind would catch any write beyond it. */
    FOR_EACH_VARIANT(v)
    {
        td_options o = vopts(v, 8, 1);
        static const uint64_t sizes[] = {1, 100, 300 * KIB + 7};
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
            size_t size = (size_t)sizes[i];
            unsigned char *buf = malloc(size), *want = malloc(size);
            size_t n = 0;
            cr_assert(buf && want);
            cr_assert_eq(td_fill(v->kind, &o, 0, want, size), TD_OK);
            td_stream *s = open_ok(v, size, &o);
            cr_assert_eq(td_stream_read(s, buf, SIZE_MAX, &n), TD_OK);
            cr_assert_eq(n, size, "%s", v->label);
            cr_assert(memcmp(buf, want, size) == 0, "%s", v->label);
            expect_done(v, s);
            /* From the middle, after small reads primed the buffer. */
            if (size > 1) {
                cr_assert_eq(td_stream_seek(s, size / 2), TD_OK);
                cr_assert_eq(td_stream_read(s, buf, 1, &n), TD_OK);
                cr_assert_eq(td_stream_read(s, buf, SIZE_MAX, &n), TD_OK);
                cr_assert_eq(n, size - size / 2 - 1, "%s", v->label);
                cr_assert(memcmp(buf, want + size / 2 + 1, n) == 0);
                expect_done(v, s);
            }
            td_stream_free(s);
            free(buf);
            free(want);
        }
    }
}

Test(threads, zero_one_and_1024)
{
    const size_t len = small_mode() ? 700 * KIB : 5 * MIB + 77;
    unsigned char *want = malloc(len), *got = malloc(len);
    cr_assert(want && got);
    FOR_EACH_VARIANT(v)
    {
        td_options o1 = vopts(v, 9, 1);
        cr_assert_eq(td_fill(v->kind, &o1, 12345, want, len), TD_OK);
        static const uint32_t counts[] = {0, 1, 2, 3, 1024, UINT32_MAX};
        for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
            td_options o = vopts(v, 9, counts[i]);
            cr_assert_eq(td_options_check(v->kind, &o), TD_OK);
            memset(got, 0, len);
            cr_assert_eq(td_fill(v->kind, &o, 12345, got, len), TD_OK);
            cr_assert(memcmp(got, want, len) == 0, "%s threads %u (fill)", v->label, counts[i]);
            if (counts[i] >= 1024 && small_mode()) /* 255 workers: slow under valgrind */
                continue;
            td_stream *s = open_ok(v, 12345 + (uint64_t)len, &o);
            cr_assert_eq(td_stream_seek(s, 12345), TD_OK);
            memset(got, 0, len);
            td_test_read_chunked(s, got, len, 3 * MIB, counts[i] + 1);
            cr_assert(memcmp(got, want, len) == 0, "%s threads %u (stream)", v->label,
                      counts[i]);
            td_stream_free(s);
        }
    }
    free(want);
    free(got);
}

Test(seeds, extreme_seeds, TD_ONE_THREAD)
{
    static const uint64_t seeds[] = {0, 1, 2, UINT64_C(1) << 32, UINT64_C(1) << 63,
                                     UINT64_MAX - 1, UINT64_MAX};
    FOR_EACH_VARIANT(v)
    {
        unsigned char first[sizeof seeds / sizeof seeds[0]][64];
        for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++) {
            td_options o = vopts(v, seeds[i], 1);
            td_stream *s = open_ok(v, 4096, &o);
            expect_read_matches(v, s, &o, 4096);
            td_stream_free(s);
            cr_assert_eq(td_fill(v->kind, &o, 0, first[i], 64), TD_OK);
            /* Reproducible: the same seed gives the same bytes again. */
            unsigned char again[64];
            cr_assert_eq(td_fill(v->kind, &o, 0, again, 64), TD_OK);
            cr_assert(memcmp(first[i], again, 64) == 0);
        }
        if (v->kind == TD_ZERO)
            continue;
        /* Kinds with randomness: distinct seeds give distinct bytes. */
        for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++)
            for (size_t j = i + 1; j < sizeof seeds / sizeof seeds[0]; j++)
                cr_expect(memcmp(first[i], first[j], 64) != 0, "%s: seeds %zu and %zu collide",
                          v->label, i, j);
    }
}

/* ------------------------------------------------------------------------ */
/* Options                                                                   */

static int accepts(int kind, const char *key)
{
    td_options o;
    td_options_init(&o);
    /* A value that is surely valid for every key that takes a number. */
    const char *val = strcmp(key, "algorithm") == 0 ? "chacha20"
                      : strcmp(key, "dedup_block") == 0 ? "4096"
                      : strcmp(key, "ratio") == 0 ? "3"
                                                    : "1";
    return td_options_set(&o, kind, key, val) != TD_EOPTION;
}

/* If o is accepted, the kind must work with it: a stream read equals td_fill. */
static void expect_usable_if_accepted(int kind, const td_options *o, const char *what)
{
    int rc = td_options_check(kind, o);
    cr_assert(rc == TD_OK || rc == TD_ERANGE || rc == TD_EOPTION || rc == TD_EINVAL,
              "%s: check gave %d", what, rc);
    td_stream *s = NULL;
    int orc = td_stream_open(&s, kind, 8192, o);
    cr_assert_eq(orc, rc, "%s: td_stream_open (%d) disagrees with td_options_check (%d)", what,
                 orc, rc);
    unsigned char a[100], b[100];
    int frc = td_fill(kind, o, 5000, a, sizeof a);
    cr_assert_eq(frc, rc, "%s: td_fill (%d) disagrees with td_options_check (%d)", what, frc, rc);
    if (rc != TD_OK) {
        cr_assert_null(s);
        return;
    }
    size_t n;
    cr_assert_eq(td_stream_seek(s, 5000), TD_OK);
    cr_assert_eq(td_stream_read(s, b, sizeof b, &n), TD_OK);
    cr_assert_eq(n, sizeof b);
    cr_assert(memcmp(a, b, sizeof a) == 0, "%s", what);
    td_stream_free(s);
}

Test(options, extreme_values_in_the_struct, TD_ONE_THREAD)
{
    const double bad[] = {NAN, -NAN, INFINITY, -INFINITY, -1.0, 0.0, -0.0, 0.5, 1e-300};
    const double odd[] = {1.0, 1.0000001, 2.0, 1e6, 1e300, DBL_MAX};
    for (int k = 0; k < TD_KIND_COUNT; k++) {
        if (!td_kind_name(k))
            continue;
        char what[96];
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            td_options o;
            /* dedup below 1 or not finite is invalid for every kind. */
            td_options_init(&o);
            o.dedup = bad[i];
            cr_assert_neq(td_options_check(k, &o), TD_OK, "%s dedup %g", td_kind_name(k), bad[i]);
            snprintf(what, sizeof what, "%s dedup %g", td_kind_name(k), bad[i]);
            expect_usable_if_accepted(k, &o, what);
            /* ratio: invalid where the kind takes one, ignored elsewhere. */
            td_options_init(&o);
            o.ratio = bad[i];
            snprintf(what, sizeof what, "%s ratio %g", td_kind_name(k), bad[i]);
            if (accepts(k, "ratio") && !(bad[i] >= 1.0))
                cr_assert_neq(td_options_check(k, &o), TD_OK, "%s", what);
            else if (!accepts(k, "ratio"))
                cr_assert_eq(td_options_check(k, &o), TD_OK, "%s: not its option", what);
            expect_usable_if_accepted(k, &o, what);
        }
        for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++) {
            td_options o;
            td_options_init(&o);
            o.dedup = odd[i];
            snprintf(what, sizeof what, "%s dedup %g", td_kind_name(k), odd[i]);
            if (!accepts(k, "dedup"))
                cr_assert_eq(td_options_check(k, &o), odd[i] == 1.0 ? TD_OK : TD_EOPTION, "%s",
                             what);
            expect_usable_if_accepted(k, &o, what);
            td_options_init(&o);
            o.ratio = odd[i];
            snprintf(what, sizeof what, "%s ratio %g", td_kind_name(k), odd[i]);
            if (!accepts(k, "ratio"))
                cr_assert_eq(td_options_check(k, &o), TD_OK, "%s", what);
            expect_usable_if_accepted(k, &o, what);
        }
        static const uint32_t blocks[] = {0, 1, 2, 3, 256, 512, 4095, 4096, 4097, 1u << 20, 1u << 30, 1u << 31,
                                          UINT32_MAX};
        for (size_t i = 0; i < sizeof blocks / sizeof blocks[0]; i++) {
            td_options o;
            td_options_init(&o);
            o.dedup_block = blocks[i];
            snprintf(what, sizeof what, "%s dedup_block %u", td_kind_name(k), blocks[i]);
            uint32_t b = blocks[i];
            if (!b || (b & (b - 1)) || b < TD_DEDUP_BLOCK_MIN || b > TD_DEDUP_BLOCK_MAX)
                cr_assert_eq(td_options_check(k, &o), TD_ERANGE,
                             "%s: not a power of two from 512 to 2^30", what);
            expect_usable_if_accepted(k, &o, what);
        }
        /* Algorithms beyond the known ones. */
        static const uint32_t algs[] = {2, 255, UINT32_MAX};
        for (size_t i = 0; i < sizeof algs / sizeof algs[0]; i++) {
            td_options o;
            td_options_init(&o);
            o.algorithm = algs[i];
            snprintf(what, sizeof what, "%s algorithm %u", td_kind_name(k), algs[i]);
            if (accepts(k, "algorithm"))
                cr_assert_eq(td_options_check(k, &o), TD_ERANGE, "%s", what);
            expect_usable_if_accepted(k, &o, what);
        }
    }
}

Test(options, extreme_values_as_strings, TD_ONE_THREAD)
{
    static const char *const keys[] = {"seed", "threads", "algorithm", "ratio", "dedup",
                                       "dedup_block", "", "SEED", "seed ", "nonsense"};
    static const char *const vals[] = {
        "", " ", "0", "1", "-1", "+1", " 1", "1 ", "\t1", "\t-1", "\n1", "010", "0x10", "0X1f",
        "0x", "0x0x10", "0b1", "1e3", "3.5", "-3.5", "1,5", "nan", "NaN", "-nan", "inf",
        "-inf", "infinity", "1e309", "-1e309", "1e-400", "0.5", "0.999999", "1.0",
        "4294967295", "4294967296", "18446744073709551615", "18446744073709551616",
        "99999999999999999999999999", "4K", "4KiB", "4KB", "1E", "16E", "0x1p3", "fast",
        "chacha20", "FAST", "chacha20 ", "unbounded", "inf"};
    for (int k = -1; k <= TD_KIND_COUNT + 1; k++) {
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
            for (size_t j = 0; j < sizeof vals / sizeof vals[0]; j++) {
                td_options o, before;
                td_options_init(&o);
                o.seed = 77;
                before = o;
                int rc = td_options_set(&o, k, keys[i], vals[j]);
                char what[128];
                snprintf(what, sizeof what, "kind %d %s='%s' -> %d", k, keys[i], vals[j], rc);
                cr_assert(rc == TD_OK || rc == TD_EKIND || rc == TD_EOPTION || rc == TD_ESYNTAX ||
                              rc == TD_ERANGE,
                          "%s", what);
                if (!td_kind_name(k)) {
                    cr_assert_eq(rc, TD_EKIND, "%s", what);
                    continue;
                }
                if (rc != TD_OK) {
                    cr_assert(memcmp(&o, &before, sizeof o) == 0, "%s: changed *o", what);
                    continue;
                }
                cr_assert_eq(td_options_check(k, &o), TD_OK, "%s: set but invalid", what);
                if (strcmp(keys[i], "ratio") == 0)
                    cr_assert(isfinite(o.ratio) && o.ratio > 0, "%s", what);
                if (strcmp(keys[i], "dedup") == 0)
                    cr_assert(isfinite(o.dedup) && o.dedup >= 1, "%s", what);
                expect_usable_if_accepted(k, &o, what);
            }
        }
    }
}

Test(options, integers_are_plain_decimal_or_hex_seed, TD_ONE_THREAD)
{
    /* Regression: strtoull() let white space, signs and octal through, so
     * seed "\t-1" silently became 2^64-1 and "010" became 8. */
    td_options o;
    static const char *const rejected[] = {" 5", "\t5", "\n5", "\t-1", " -1", "+5", "-0",
                                           "0x", "0x0x10", "0x-1", "0x 1", "5 ", "1_000"};
    for (size_t i = 0; i < sizeof rejected / sizeof rejected[0]; i++) {
        td_options_init(&o);
        cr_expect_eq(td_options_set(&o, TD_RANDOM, "seed", rejected[i]), TD_ESYNTAX,
                     "seed '%s'", rejected[i]);
        cr_expect_eq(td_options_set(&o, TD_RANDOM, "threads", rejected[i]), TD_ESYNTAX,
                     "threads '%s'", rejected[i]);
        cr_expect_eq(o.seed, 0);
        cr_expect_eq(o.threads, 1);
    }
    td_options_init(&o);
    cr_assert_eq(td_options_set(&o, TD_RANDOM, "seed", "010"), TD_OK);
    cr_assert_eq(o.seed, 10, "seeds are decimal, not octal");
    cr_assert_eq(td_options_set(&o, TD_RANDOM, "seed", "0XfF"), TD_OK);
    cr_assert_eq(o.seed, 255);
    cr_assert_eq(td_options_set(&o, TD_RANDOM, "seed", "0xffffffffffffffff"), TD_OK);
    cr_assert_eq(o.seed, UINT64_MAX);
    cr_assert_eq(td_options_set(&o, TD_RANDOM, "seed", "0x10000000000000000"), TD_ERANGE);
    cr_assert_eq(td_options_set(&o, TD_RANDOM, "threads", "010"), TD_OK);
    cr_assert_eq(o.threads, 10);
    cr_assert_eq(td_options_set(&o, TD_RANDOM, "threads", "0x10"), TD_ESYNTAX,
                 "threads are decimal");
}

/* ------------------------------------------------------------------------ */
/* Internals: the thread split of td__gen_fill (libtestdata/gen.c)          */

#include "../../libtestdata/gen.h"

/* A kind with a huge block whose bytes are the low byte of their offset. */
static int bigblock_fill(const void *state, uint64_t offset, uint8_t *buf, size_t len)
{
    (void)state;
    if (len > UINT64_MAX - offset || len > 64 * MIB)
        return TD_ERANGE; /* a broken split; writing would overrun */
    for (size_t i = 0; i < len; i++)
        buf[i] = (uint8_t)(offset + i);
    return TD_OK;
}

static const td_kind_vtbl bigblock = {.name = "bigblock", .block = 1u << 30, .fill = bigblock_fill};

Test(internal, thread_split_does_not_wrap_near_2_64)
{
    /* Regression: the end of each piece was computed as offset+done+per,
     * which wraps past 2^64 when the kind's block is larger than what is
     * left, giving a piece of ~2^64 bytes. */
    const size_t len = 3 * MIB + 5;
    uint8_t *buf = malloc(len);
    cr_assert_not_null(buf);
    for (unsigned threads = 2; threads <= 4; threads++) {
        td_gen g;
        memset(&g, 0, sizeof g);
        g.vt = &bigblock;
        g.align = bigblock.block;
        g.nthreads = threads;
        uint64_t off = UINT64_MAX - len;
        memset(buf, 0, len);
        cr_assert_eq(td__gen_fill(&g, off, buf, len), TD_OK, "threads %u", threads);
        for (size_t i = 0; i < len; i++)
            cr_assert_eq(buf[i], (uint8_t)(off + i), "threads %u byte %zu", threads, i);
    }
    free(buf);
}

/* A size inside the bounds of a power-of-two option that is not a power of
 * two was called "out of range" (--compress-block 3000); it is named for
 * what it is, and a size outside the bounds is still out of range. */
Test(options, not_a_power_of_two_is_named, TD_ONE_THREAD)
{
    static const struct {
        int kind;
        const char *key, *value, *why;
    } cases[] = {
        {TD_COMPRESSIBLE, "compress_block", "3000", "not a power of two"},
        {TD_COMPRESSIBLE, "--compress-block", "12K", "not a power of two"},
        {TD_RANDOM, "dedup_block", "5000", "not a power of two"},
        {TD_COMPRESSIBLE, "compress_block", "256", "out of range"},
        {TD_COMPRESSIBLE, "compress_block", "2M", "out of range"},
        {TD_RANDOM, "dedup_block", "2G", "out of range"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        td_options o;
        char msg[512] = "";
        td_options_init(&o);
        cr_expect_eq(td_options_set_msg(&o, cases[i].kind, cases[i].key, cases[i].value, msg,
                                        sizeof msg),
                     TD_ERANGE, "%s", cases[i].value);
        cr_expect(strstr(msg, cases[i].why) != NULL && strstr(msg, "a power of two from") != NULL,
                  "%s %s: %s", cases[i].key, cases[i].value, msg);
    }
    td_options o;
    char msg[512] = "";
    td_options_init(&o);
    o.compress_block = 3000;
    cr_expect_eq(td_options_check_msg(TD_COMPRESSIBLE, &o, msg, sizeof msg), TD_ERANGE);
    cr_expect(strstr(msg, "not a power of two") != NULL, "%s", msg);
}

/* A size option's value that is not a size is explained as a SIZE argument
 * is, from td_parse_size_msg's words (it said only "not a size"), followed
 * by the option's own range; a tree's --total too. */
Test(options, bad_size_value_lists_the_valid_forms, TD_ONE_THREAD)
{
    static const struct {
        int kind;
        const char *key, *value, *name, *range;
    } cases[] = {
        {TD_COMPRESSIBLE, "--compress-block", "x", "--compress-block",
         "a power of two from 512 to 1M, or 0 (not set: tuned for whole streams)"},
        {TD_COMPRESSIBLE, "compress_block", "4KQ", "option 'compress_block'",
         "a power of two from 512 to 1M, or 0 (not set: tuned for whole streams)"},
        {TD_RANDOM, "dedup_block", "1.5K", "option 'dedup_block'", "a power of two from 512 to 1G"},
        {TD_LIKE, "--dedup-block", "", "--dedup-block", "a power of two from 512 to 1G"},
    };
    char forms[256], want[1024], msg[1024];
    uint64_t u;
    cr_assert_eq(td_parse_size_msg("x", &u, forms, sizeof forms), TD_ESYNTAX);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        td_options o;
        td_options_init(&o);
        snprintf(want, sizeof want, "bad value '%s' for %s: %s (valid: %s)", cases[i].value,
                 cases[i].name, forms, cases[i].range);
        cr_expect_eq(td_options_set_msg(&o, cases[i].kind, cases[i].key, cases[i].value, msg,
                                        sizeof msg),
                     TD_ESYNTAX, "%s %s", cases[i].key, cases[i].value);
        cr_expect_str_eq(msg, want);
    }
    /* every size option of the table is one of the above */
    for (size_t i = 0; i < td_option_count(); i++)
        if (td_option_get(i)->type == TD_OPTION_SIZE)
            cr_expect(!strcmp(td_option_get(i)->key, "compress_block") ||
                          !strcmp(td_option_get(i)->key, "dedup_block"),
                      "a size option without a case here: %s", td_option_get(i)->key);
    td_tree *t;
    cr_assert_eq(td_tree_new(&t), TD_OK);
    cr_expect_eq(td_tree_set(t, "--total", "1.5G", msg, sizeof msg), TD_ESYNTAX);
    snprintf(want, sizeof want, "bad value '1.5G' for --total: %s (valid: 0 to 2^64-2)", forms);
    cr_expect_str_eq(msg, want);
    td_tree_free(t);
}

/* An empty --model is refused as empty; the message table had no entry for
 * text options, so it printed whatever string followed the table ("seed"). */
Test(options, empty_model_is_named, TD_ONE_THREAD)
{
    td_options o;
    char msg[512] = "";
    td_options_init(&o);
    cr_expect_eq(td_options_set_msg(&o, TD_TEXT, "--model", "", msg, sizeof msg), TD_ESYNTAX);
    cr_expect_str_eq(msg, "bad value '' for --model: empty (valid: a text model file)");
}
