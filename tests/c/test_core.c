/* Core contract: golden vectors, chunking/seek/thread invariance, errors. */
#include "td_test_util.h"

#include <errno.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define MIB (1024u * 1024u)
#define TIB40 (UINT64_C(1) << 40)

typedef struct golden {
    int kind;
    uint32_t algorithm;
    uint64_t seed;
    uint64_t offset;
    const char *sha256;
} golden;

/* Format version 1 (unchanged in 2).  Cross-checked against tests/ref/ref_random.py, an
 * independent pure-Python implementation of docs/format.md. */
static const golden goldens[] = {
    {TD_ZERO, 0, 0, 0, "30e14955ebf1352266dc2ff8067e68104607e750abb9d3b36582b8af909fcb58"},
    {TD_ZERO, 0, 1, TIB40, "30e14955ebf1352266dc2ff8067e68104607e750abb9d3b36582b8af909fcb58"},
    {TD_ZERO, 0, UINT64_MAX, TIB40, "30e14955ebf1352266dc2ff8067e68104607e750abb9d3b36582b8af909fcb58"},
    {TD_RANDOM, TD_ALG_CHACHA20, 0, 0, "163f84efa4eb786a4a211ca8fb2db0aa8f29c6f84d1837251692fb2f45a59f73"},
    {TD_RANDOM, TD_ALG_CHACHA20, 0, TIB40, "3b620323e5e495949c5f3dcf96fb7fecc03ae81dcab52687f98c40065fc61da3"},
    {TD_RANDOM, TD_ALG_CHACHA20, 1, 0, "f99bc56c731e0300363d41ca3b30f1ef62564941474b15d03a504dea39a7a470"},
    {TD_RANDOM, TD_ALG_CHACHA20, 1, TIB40, "22d0b14503f44c7b917f58741c2e8c7b502614975b667737f983aeb2b67497bc"},
    {TD_RANDOM, TD_ALG_CHACHA20, UINT64_MAX, 0, "79e9457ea5c5223b0abb6a19cca6aa4f45973ef6a5f209239a21ab9ff4a93dee"},
    {TD_RANDOM, TD_ALG_CHACHA20, UINT64_MAX, TIB40, "771a75728cfe7d533896fae203e8b2f2e00401de3747931fbf0beadb872abc0a"},
    {TD_RANDOM, TD_ALG_FAST, 0, 0, "e55a6fc0d141dfe74e5db69eebe9bfe0b94d7b1368df356d412723088a70115e"},
    {TD_RANDOM, TD_ALG_FAST, 0, TIB40, "c834d407a683b8b53bdf6050d7743d27c195abe1ec44d41288eece9e65bb3e5e"},
    {TD_RANDOM, TD_ALG_FAST, 1, 0, "41a5b5dadf7d666a0f9cafd11992ac8fcad67f45aad988670650ef45f69f5fa5"},
    {TD_RANDOM, TD_ALG_FAST, 1, TIB40, "774774b267ff9f7255a7c626c3cfa1d57808529330f01454da6234d06a3c87bd"},
    {TD_RANDOM, TD_ALG_FAST, UINT64_MAX, 0, "e00bd023822365509047d781b2d71dc524435bf9fa6a8a11b84d5d7c99dac1e6"},
    {TD_RANDOM, TD_ALG_FAST, UINT64_MAX, TIB40, "28ed25dfdc4adcae98adf568c7eb8ee74e082b051daea593202c2a31ae2dd232"},
};

static td_options opts(uint32_t algorithm, uint64_t seed)
{
    td_options o;
    td_options_init(&o);
    o.algorithm = algorithm;
    o.seed = seed;
    return o;
}

Test(golden, first_mib_and_mib_at_2_40, TD_ONE_THREAD)
{
    for (size_t i = 0; i < sizeof goldens / sizeof goldens[0]; i++) {
        const golden *g = &goldens[i];
        td_options o = opts(g->algorithm, g->seed);
        char hex[65];
        td_test_digest(g->kind, &o, g->offset, MIB, hex);
        cr_expect_str_eq(hex, g->sha256, "kind %d alg %u seed %llu offset %llu", g->kind,
                         g->algorithm, (unsigned long long)g->seed,
                         (unsigned long long)g->offset);
    }
}

Test(golden, known_answer_first_bytes, TD_ONE_THREAD)
{
    /* The first 16 bytes, spelled out, so a format change shows in a diff. */
    static const unsigned char chacha_seed0[16] = {0x55, 0x6b, 0x05, 0xca, 0xef, 0x0f, 0x96, 0x08,
                                                   0x90, 0x5b, 0xe7, 0x7e, 0x1a, 0x4a, 0x86, 0x3c};
    unsigned char buf[16];
    td_options o = opts(TD_ALG_CHACHA20, 0);
    cr_assert_eq(td_fill(TD_RANDOM, &o, 0, buf, sizeof buf), TD_OK);
    cr_expect_arr_eq(buf, chacha_seed0, 16);
}

/* Every kind/algorithm combination these tests sweep. */
static const struct {
    int kind;
    uint32_t algorithm;
} combos[] = {{TD_ZERO, 0}, {TD_RANDOM, TD_ALG_CHACHA20}, {TD_RANDOM, TD_ALG_FAST}};
#define NCOMBOS (sizeof combos / sizeof combos[0])

Test(invariance, every_combination)
{
    for (size_t c = 0; c < NCOMBOS; c++) {
        td_options o = opts(combos[c].algorithm, 42 + c);
        td_test_check_invariance(combos[c].kind, &o, 77, 9 * MIB + 12345);
        td_test_check_invariance(combos[c].kind, &o, TIB40 - 5, 3 * MIB + 3);
    }
}

Test(stream, seek_tell_size, TD_ONE_THREAD)
{
    const uint64_t size = 10 * MIB;
    td_options o = opts(TD_ALG_CHACHA20, 1);
    td_stream *s = td_stream_new_with(TD_RANDOM, size, &o);
    unsigned char buf[1000], want[1000];
    size_t n;
    uint64_t rng = 99;

    cr_assert_eq(td_stream_size(s), size);
    cr_assert_eq(td_stream_tell(s), 0);
    for (int i = 0; i < 300; i++) {
        uint64_t off = td_test_rand(&rng) % size;
        cr_assert_eq(td_stream_seek(s, off), TD_OK);
        cr_assert_eq(td_stream_tell(s), off);
        cr_assert_eq(td_stream_read(s, buf, sizeof buf, &n), TD_OK);
        size_t expect = size - off < sizeof buf ? (size_t)(size - off) : sizeof buf;
        cr_assert_eq(n, expect);
        cr_assert_eq(td_stream_tell(s), off + n);
        cr_assert_eq(td_fill(TD_RANDOM, &o, off, want, n), TD_OK);
        cr_assert(memcmp(buf, want, n) == 0);
    }
    /* Seek to the end: reads report TD_DONE; past the end: TD_ERANGE. */
    cr_assert_eq(td_stream_seek(s, size), TD_OK);
    cr_assert_eq(td_stream_read(s, buf, sizeof buf, &n), TD_DONE);
    cr_assert_eq(n, 0);
    const void *chunk = buf;
    cr_assert_eq(td_stream_next(s, &chunk, &n), TD_DONE);
    cr_assert_null(chunk);
    cr_assert_eq(n, 0);
    cr_assert_eq(td_stream_seek(s, size + 1), TD_ERANGE);
    cr_assert_eq(td_stream_tell(s), size);
    td_stream_free(s);
}

/* Random access and sequential reads mixed, on every kind (those whose
 * ranges cost only their bytes read straight into the caller's memory after
 * a seek; the others through the buffer): the bytes are td_fill's. */
Test(stream, seeks_and_reads_mixed)
{
    static const struct {
        int kind;
        const char *key, *value;
        double dedup;
    } cases[] = {
        {TD_ZERO, NULL, NULL, 1.0},          {TD_RANDOM, "algorithm", "fast", 1.0},
        {TD_RANDOM, NULL, NULL, 3.0},        {TD_LIKE, "profile", "html", 1.0},
        {TD_LIKE, "profile", "json", 2.5},   {TD_TEXT, NULL, NULL, 1.0},
        {TD_TEXT, NULL, NULL, 2.0},          {TD_COMPRESSIBLE, "ratio", "3", 1.0},
    };
    const uint64_t size = (UINT64_C(1) << 40) + 12345;
    unsigned char *buf = malloc(MIB), *want = malloc(MIB);
    cr_assert(buf && want);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        td_options o;
        td_options_init(&o);
        o.seed = 5;
        o.dedup = cases[c].dedup;
        o.threads = 1 + (uint32_t)(c % 2); /* a buffer of 2 MiB, filled by two threads */
        if (TD_TEST_TSAN && o.threads == 1)
            continue; /* the race detector has nothing to find in one thread */
        if (cases[c].key)
            cr_assert_eq(td_options_set(&o, cases[c].kind, cases[c].key, cases[c].value), TD_OK);
        td_stream *s = NULL;
        cr_assert_eq(td_stream_open(&s, cases[c].kind, size, &o), TD_OK);
        uint64_t rng = 7 + c;
        for (int i = 0; i < 60; i++) {
            uint64_t r = td_test_rand(&rng), off;
            switch (r % 4) {
            case 0: /* anywhere */
                off = td_test_rand(&rng) % size;
                break;
            case 1: /* near the last position: maybe inside the buffer */
                off = td_stream_tell(s) + td_test_rand(&rng) % 300000;
                off = off > size ? size - 1 : off;
                break;
            case 2: /* near the end */
                off = size - 1 - td_test_rand(&rng) % 70000;
                break;
            default: /* no seek: sequential */
                off = td_stream_tell(s);
            }
            if (off >= size)
                off = 0;
            cr_assert_eq(td_stream_seek(s, off), TD_OK);
            for (int k = 0; k < 3 && off < size; k++) { /* then sequential reads */
                size_t len = 1 + (size_t)(td_test_rand(&rng) % (k == 2 ? MIB : 9000)), n = 0;
                const void *chunk = NULL;
                if (k == 1 && (r & 16)) {
                    cr_assert_eq(td_stream_next(s, &chunk, &n), TD_OK);
                    cr_assert_gt(n, 0);
                    n = n > MIB ? MIB : n;
                    memcpy(buf, chunk, n);
                    cr_assert_eq(td_stream_seek(s, off + n), TD_OK); /* next() took all */
                } else {
                    cr_assert_eq(td_stream_read(s, buf, len, &n), TD_OK);
                    cr_assert_eq(n, size - off < len ? (size_t)(size - off) : len);
                }
                cr_assert_eq(td_fill(cases[c].kind, &o, off, want, n), TD_OK);
                cr_assert(memcmp(buf, want, n) == 0, "case %zu: %zu bytes at %llu", c, n,
                          (unsigned long long)off);
                off += n;
            }
        }
        td_stream_free(s);
    }
    free(buf);
    free(want);
}

Test(stream, default_constructor_is_seed_0, TD_ONE_THREAD)
{
    unsigned char a[4096], b[4096];
    size_t n;
    td_stream *s = td_stream_new(TD_RANDOM, sizeof a);
    cr_assert_eq(td_stream_read(s, a, sizeof a, &n), TD_OK);
    cr_assert_eq(n, sizeof a);
    cr_assert_eq(td_fill(TD_RANDOM, NULL, 0, b, sizeof b), TD_OK);
    cr_assert(memcmp(a, b, sizeof a) == 0);
    td_stream_free(s);
}

Test(stream, size_zero_and_one, TD_ONE_THREAD)
{
    unsigned char b[4];
    size_t n = 9;
    td_stream *s = td_stream_new(TD_RANDOM, 0);
    cr_assert_not_null(s);
    cr_assert_eq(td_stream_read(s, b, sizeof b, &n), TD_DONE);
    cr_assert_eq(n, 0);
    td_stream_free(s);
    s = td_stream_new(TD_ZERO, 1);
    b[0] = 1;
    cr_assert_eq(td_stream_read(s, b, sizeof b, &n), TD_OK);
    cr_assert_eq(n, 1);
    cr_assert_eq(b[0], 0);
    cr_assert_eq(td_stream_read(s, b, sizeof b, &n), TD_DONE);
    td_stream_free(s);
}

Test(stream, unbounded_and_near_2_64, TD_ONE_THREAD)
{
    unsigned char buf[256], want[256];
    size_t n;
    td_stream *s = td_stream_new(TD_RANDOM, TD_SIZE_UNBOUNDED);
    cr_assert_eq(td_stream_size(s), TD_SIZE_UNBOUNDED);
    cr_assert_eq(td_stream_seek(s, UINT64_MAX - 100), TD_OK);
    cr_assert_eq(td_stream_read(s, buf, sizeof buf, &n), TD_OK);
    cr_assert_eq(n, 100);
    cr_assert_eq(td_fill(TD_RANDOM, NULL, UINT64_MAX - 100, want, 100), TD_OK);
    cr_assert(memcmp(buf, want, 100) == 0);
    cr_assert_eq(td_stream_read(s, buf, sizeof buf, &n), TD_DONE);
    td_stream_free(s);
    /* The last byte of the 2^64-1 byte stream can be filled; one more cannot. */
    cr_assert_eq(td_fill(TD_RANDOM, NULL, UINT64_MAX - 1, buf, 1), TD_OK);
    cr_assert_eq(td_fill(TD_RANDOM, NULL, UINT64_MAX - 1, buf, 2), TD_ERANGE);
    cr_assert_eq(td_fill(TD_RANDOM, NULL, UINT64_MAX, buf, 1), TD_ERANGE);
}

Test(properties, random_does_not_compress, TD_ONE_THREAD)
{
    const size_t len = 4 * MIB;
    unsigned char *buf = malloc(len);
    uLongf clen = compressBound(len);
    unsigned char *z = malloc(clen);
    for (uint32_t alg = 0; alg < 2; alg++) {
        td_options o = opts(alg, 5);
        cr_assert_eq(td_fill(TD_RANDOM, &o, 0, buf, len), TD_OK);
        uLongf zl = clen;
        cr_assert_eq(compress2(z, &zl, buf, len, 9), Z_OK);
        cr_expect_geq(zl, len, "algorithm %u compressed to %lu of %zu", alg, zl, len);
    }
    free(buf);
    free(z);
}

Test(properties, seeds_differ, TD_ONE_THREAD)
{
    unsigned char a[64], b[64];
    for (uint32_t alg = 0; alg < 2; alg++) {
        td_options o = opts(alg, 0);
        td_fill(TD_RANDOM, &o, 0, a, sizeof a);
        o.seed = 1;
        td_fill(TD_RANDOM, &o, 0, b, sizeof b);
        cr_expect(memcmp(a, b, sizeof a) != 0);
    }
}

Test(verify, match_and_mismatch, TD_ONE_THREAD)
{
    const size_t len = 3 * MIB;
    unsigned char *buf = malloc(len);
    uint64_t first = 0, count = 0;
    td_options o = opts(TD_ALG_FAST, 11);
    cr_assert_eq(td_fill(TD_RANDOM, &o, 4096, buf, len), TD_OK);
    cr_assert_eq(td_verify(TD_RANDOM, &o, 4096, buf, len, &first), TD_OK);
    cr_assert_eq(td_verify_count(TD_RANDOM, &o, 4096, buf, len, &first, &count), TD_OK);
    cr_assert_eq(count, 0);
    buf[2 * MIB + 3] ^= 1;
    buf[len - 1] ^= 0x80;
    cr_assert_eq(td_verify(TD_RANDOM, &o, 4096, buf, len, &first), TD_EMISMATCH);
    cr_assert_eq(first, 4096 + 2 * MIB + 3);
    cr_assert_eq(td_verify_count(TD_RANDOM, &o, 4096, buf, len, &first, &count), TD_EMISMATCH);
    cr_assert_eq(first, 4096 + 2 * MIB + 3);
    cr_assert_eq(count, 2);
    /* Wrong offset or seed: mismatch at the first byte (almost surely). */
    cr_assert_eq(td_verify(TD_RANDOM, &o, 0, buf, len, &first), TD_EMISMATCH);
    cr_assert_eq(first, 0);
    free(buf);
}

/* One verifier's result over [0, n) of buf, from stream offset off + pos. */
static td_verify_result verify_piece(const td_options *o, const unsigned char *buf, size_t pos, size_t n)
{
    td_verifier *v;
    td_verify_result r;
    cr_assert_eq(td_verifier_new(&v, TD_RANDOM, o, 4096 + pos, n), TD_OK);
    cr_assert_eq(td_verifier_update(v, buf + pos, n), TD_OK);
    (void)td_verifier_finish(v, &r);
    td_verifier_free(v);
    return r;
}

/* Pieces verified apart (MPI ranks) and merged in any order count as the
 * whole verified at once: every count, the first mismatch, the status. */
Test(verify, results_of_pieces_merge, TD_ONE_THREAD)
{
    const size_t len = 3 * MIB, cut[4] = {0, 700000, 2 * MIB + 1, len};
    unsigned char *buf = malloc(len);
    td_options o = opts(TD_ALG_FAST, 11);
    cr_assert_eq(td_fill(TD_RANDOM, &o, 4096, buf, len), TD_OK);
    buf[2 * MIB + 3] ^= 1;
    buf[800000] ^= 4;
    buf[len - 1] ^= 0x80;
    td_verify_result whole = verify_piece(&o, buf, 0, len), part[3];
    for (int i = 0; i < 3; i++)
        part[i] = verify_piece(&o, buf, cut[i], cut[i + 1] - cut[i]);
    cr_assert_eq(part[0].status, TD_OK);
    static const int orders[3][3] = {{0, 1, 2}, {2, 1, 0}, {1, 2, 0}};
    for (int k = 0; k < 3; k++) {
        td_verify_result sum;
        memset(&sum, 0, sizeof sum);
        for (int i = 0; i < 3; i++) {
            int j = orders[k][i];
            cr_assert_eq(td_verify_result_merge(&sum, &part[j], cut[j]), TD_OK);
        }
        cr_assert_eq(sum.status, TD_EMISMATCH);
        cr_assert_eq(sum.mismatches, 3);
        cr_assert_eq(sum.first_mismatch, 800000);
        cr_assert_eq(sum.compared, whole.compared);
        cr_assert_eq(sum.received, whole.received);
        cr_assert_eq(sum.sampled, whole.sampled);
        cr_assert_eq(sum.sampled_agree, whole.sampled_agree);
        /* each piece's chance (its own histograms): close to the whole's */
        cr_assert(sum.chance + 8 >= whole.chance && sum.chance <= whole.chance + 8, "%llu vs %llu",
                  (unsigned long long)sum.chance, (unsigned long long)whole.chance);
    }
    td_verify_result sum;
    memset(&sum, 0, sizeof sum);
    cr_assert_eq(td_verify_result_merge(&sum, &part[2], UINT64_MAX - 1), TD_ERANGE);
    cr_assert_eq(sum.mismatches, 0, "nothing changed");
    cr_assert_eq(td_verify_result_merge(NULL, &part[2], 0), TD_EINVAL);
    cr_assert_eq(td_verify_result_merge(&sum, NULL, 0), TD_EINVAL);
    free(buf);
}

static char *tmp_path(const char *name)
{
    static char path[4096];
    const char *dir = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/td-test-%d-%s", dir ? dir : "/tmp", (int)getpid(), name);
    return path;
}

Test(write_file, writes_stream_bytes, TD_ONE_THREAD)
{
    char *path = tmp_path("fixture.bin");
    const uint64_t size = 5 * MIB + 3;
    td_options o = opts(TD_ALG_CHACHA20, 77);
    struct stat st;
    cr_assert_eq(td_write_file(path, TD_RANDOM, size, &o), TD_OK);
    cr_assert_eq(stat(path, &st), 0);
    cr_assert_eq((uint64_t)st.st_size, size);
    FILE *f = fopen(path, "rb");
    unsigned char *buf = malloc(size);
    cr_assert_eq(fread(buf, 1, size, f), size);
    fclose(f);
    cr_assert_eq(td_verify(TD_RANDOM, &o, 0, buf, size, NULL), TD_OK);
    free(buf);
    unlink(path);
    /* Size 0 makes an empty file. */
    cr_assert_eq(td_write_file(path, TD_ZERO, 0, NULL), TD_OK);
    cr_assert_eq(stat(path, &st), 0);
    cr_assert_eq(st.st_size, 0);
    unlink(path);
}

Test(write_file, failure_leaves_nothing, TD_ONE_THREAD)
{
    cr_assert_eq(td_write_file("/nonexistent-dir/x.bin", TD_ZERO, 10, NULL), TD_EIO);
    cr_assert_eq(errno, ENOENT);
    cr_assert_eq(td_write_file(tmp_path("inf"), TD_ZERO, TD_SIZE_UNBOUNDED, NULL), TD_ERANGE);
    cr_assert_eq(td_write_file(NULL, TD_ZERO, 10, NULL), TD_EINVAL);
    cr_assert_eq(td_write_file("", TD_ZERO, 10, NULL), TD_EINVAL);
    cr_assert_eq(td_write_file(tmp_path("bad"), (td_kind)99, 10, NULL), TD_EKIND);
    cr_assert_eq(access(tmp_path("bad"), F_OK), -1);
}

Test(errors, null_pointers_and_bad_kinds, TD_ONE_THREAD)
{
    unsigned char buf[16];
    size_t n;
    const void *chunk;
    td_stream *s = NULL;

    cr_assert_null(td_stream_new((td_kind)99, 10));
    cr_assert_null(td_stream_new((td_kind)-1, 10));
    cr_assert_eq(td_stream_open(&s, 99, 10, NULL), TD_EKIND);
    cr_assert_null(s);
    cr_assert_eq(td_stream_open(NULL, TD_ZERO, 10, NULL), TD_EINVAL);
    cr_assert_eq(td_stream_read(NULL, buf, 1, &n), TD_EINVAL);
    cr_assert_eq(td_stream_next(NULL, &chunk, &n), TD_EINVAL);
    cr_assert_eq(td_stream_seek(NULL, 0), TD_EINVAL);
    cr_assert_eq(td_stream_tell(NULL), 0);
    cr_assert_eq(td_stream_size(NULL), 0);
    td_stream_free(NULL);

    s = td_stream_new(TD_RANDOM, 100);
    cr_assert_eq(td_stream_read(s, NULL, 1, &n), TD_EINVAL);
    cr_assert_eq(td_stream_read(s, buf, 1, NULL), TD_EINVAL);
    cr_assert_eq(td_stream_next(s, NULL, &n), TD_EINVAL);
    cr_assert_eq(td_stream_next(s, &chunk, NULL), TD_EINVAL);
    cr_assert_eq(td_stream_read(s, buf, 0, &n), TD_OK);
    cr_assert_eq(n, 0);
    td_stream_free(s);

    cr_assert_eq(td_fill((td_kind)99, NULL, 0, buf, 1), TD_EKIND);
    cr_assert_eq(td_fill(TD_RANDOM, NULL, 0, NULL, 1), TD_EINVAL);
    cr_assert_eq(td_fill(TD_RANDOM, NULL, 0, NULL, 0), TD_OK);
    cr_assert_eq(td_verify((td_kind)99, NULL, 0, buf, 1, NULL), TD_EKIND);
    cr_assert_eq(td_verify(TD_RANDOM, NULL, 0, NULL, 1, NULL), TD_EINVAL);
}

Test(errors, bad_options, TD_ONE_THREAD)
{
    td_options o;
    unsigned char buf[16];
    td_options_init(&o);
    o.algorithm = 7;
    cr_assert_eq(td_fill(TD_RANDOM, &o, 0, buf, 16), TD_ERANGE);
    cr_assert_null(td_stream_new_with(TD_RANDOM, 10, &o));
    td_options_init(&o);
    o.dedup = 2.0; /* zero cannot honour a dedup target */
    cr_assert_eq(td_fill(TD_ZERO, &o, 0, buf, 16), TD_EOPTION);
    o.dedup = NAN;
    cr_assert_eq(td_options_check(TD_ZERO, &o), TD_ERANGE);
    o.dedup = 0.5;
    cr_assert_eq(td_options_check(TD_ZERO, &o), TD_ERANGE);
    td_options_init(&o);
    o.dedup_block = 1000;
    cr_assert_eq(td_options_check(TD_RANDOM, &o), TD_ERANGE);
    cr_assert_eq(td_options_check(TD_RANDOM, NULL), TD_EINVAL);
    cr_assert_eq(td_options_check(99, &o), TD_EKIND);
}

Test(errors, strerror_never_null, TD_ONE_THREAD)
{
    for (int rc = -100; rc <= 100; rc++) {
        const char *m = td_strerror(rc);
        cr_assert_not_null(m);
        cr_assert_gt(strlen(m), 0);
    }
    cr_assert_str_eq(td_strerror(12345), "unknown error");
    cr_assert_str_eq(td_version(), TD_VERSION_STRING);
}

Test(parse, sizes, TD_ONE_THREAD)
{
    static const struct {
        const char *text;
        int rc;
        uint64_t value;
    } cases[] = {
        {"0", TD_OK, 0},
        {"123", TD_OK, 123},
        {"1K", TD_OK, 1024},
        {"1k", TD_OK, 1024},
        {"1KiB", TD_OK, 1024},
        {"1KB", TD_OK, 1000},
        {"100M", TD_OK, 100ull << 20},
        {"100MB", TD_OK, 100000000ull},
        {"2G", TD_OK, 2ull << 30},
        {"3T", TD_OK, 3ull << 40},
        {"1P", TD_OK, 1ull << 50},
        {"15E", TD_OK, 15ull << 60},
        {"16E", TD_ERANGE, 0},
        {"18446744073709551615", TD_OK, UINT64_MAX},
        {"18446744073709551616", TD_ERANGE, 0},
        {"99999999999999999999999", TD_ERANGE, 0},
        {"inf", TD_OK, TD_SIZE_UNBOUNDED},
        {"", TD_ESYNTAX, 0},
        {"-5", TD_ESYNTAX, 0},
        {"+5", TD_ESYNTAX, 0},
        {" 5", TD_ESYNTAX, 0},
        {"5 ", TD_ESYNTAX, 0},
        {"10Q", TD_ESYNTAX, 0},
        {"1.5G", TD_ESYNTAX, 0},
        {"1Ki", TD_ESYNTAX, 0},
        {"1KiBx", TD_ESYNTAX, 0},
        {"M", TD_ESYNTAX, 0},
        {"0x10", TD_ESYNTAX, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint64_t v = 424242;
        int rc = td_parse_size(cases[i].text, &v);
        cr_expect_eq(rc, cases[i].rc, "'%s': rc %d", cases[i].text, rc);
        if (rc == TD_OK)
            cr_expect_eq(v, cases[i].value, "'%s'", cases[i].text);
        else
            cr_expect_eq(v, 424242, "'%s' changed the output on failure", cases[i].text);
    }
    cr_assert_eq(td_parse_size(NULL, NULL), TD_EINVAL);
}

Test(parse, size_messages, TD_ONE_THREAD)
{
    char msg[256] = "untouched";
    uint64_t v = 7;
    cr_assert_eq(td_parse_size_msg("4KiB", &v, msg, sizeof msg), TD_OK);
    cr_assert_eq(v, 4096);
    cr_assert_str_eq(msg, "untouched", "no message on success");
    cr_assert_eq(td_parse_size_msg("1.5G", &v, msg, sizeof msg), TD_ESYNTAX);
    cr_assert(strstr(msg, "not a size: a whole number of bytes") && strstr(msg, "KB MB GB"), "%s", msg);
    cr_assert_eq(td_parse_size_msg("18446744073709551616", &v, msg, sizeof msg), TD_ERANGE);
    cr_assert_str_eq(msg, "out of range: more than 2^64-1 bytes");
    cr_assert_eq(td_parse_size_msg("x", &v, NULL, 0), TD_ESYNTAX, "msg may be NULL");
    cr_assert_eq(td_parse_size_msg("1.5G", &v, msg, 8), TD_ESYNTAX);
    cr_assert_eq(strlen(msg), 7, "truncated to the buffer");
    cr_assert_eq(td_parse_size_msg(NULL, &v, msg, sizeof msg), TD_EINVAL);
}

Test(parse, options_set, TD_ONE_THREAD)
{
    td_options o, before;
    td_options_init(&o);
    cr_assert_eq(td_options_set(&o, TD_RANDOM, "seed", "18446744073709551615"), TD_OK);
    cr_assert_eq(o.seed, UINT64_MAX);
    cr_assert_eq(td_options_set(&o, TD_RANDOM, "seed", "0x10"), TD_OK);
    cr_assert_eq(o.seed, 16);
    cr_assert_eq(td_options_set(&o, TD_RANDOM, "algorithm", "fast"), TD_OK);
    cr_assert_eq(o.algorithm, TD_ALG_FAST);
    cr_assert_eq(td_options_set(&o, TD_RANDOM, "threads", "0"), TD_OK);
    cr_assert_eq(o.threads, 0);
    before = o;
    cr_assert_eq(td_options_set(&o, TD_RANDOM, "seed", "-1"), TD_ESYNTAX);
    cr_assert_eq(td_options_set(&o, TD_RANDOM, "seed", "18446744073709551616"), TD_ERANGE);
    cr_assert_eq(td_options_set(&o, TD_RANDOM, "seed", ""), TD_ESYNTAX);
    cr_assert_eq(td_options_set(&o, TD_RANDOM, "threads", "4294967296"), TD_ERANGE);
    cr_assert_eq(td_options_set(&o, TD_RANDOM, "algorithm", "md5"), TD_ESYNTAX);
    cr_assert_eq(td_options_set(&o, TD_RANDOM, "colour", "red"), TD_EOPTION);
    cr_assert_eq(td_options_set(&o, TD_ZERO, "algorithm", "fast"), TD_EOPTION);
    cr_assert_eq(td_options_set(&o, 99, "seed", "1"), TD_EKIND);
    cr_assert_eq(td_options_set(NULL, TD_RANDOM, "seed", "1"), TD_EINVAL);
    cr_assert_eq(td_options_set(&o, TD_RANDOM, NULL, "1"), TD_EINVAL);
    cr_assert_eq(td_options_set(&o, TD_RANDOM, "seed", NULL), TD_EINVAL);
    cr_assert(memcmp(&o, &before, sizeof o) == 0, "failed sets must not change the options");
}

Test(parse, kind_names, TD_ONE_THREAD)
{
    int k = -1;
    cr_assert_eq(td_kind_from_name("zero", &k), TD_OK);
    cr_assert_eq(k, TD_ZERO);
    cr_assert_eq(td_kind_from_name("random", &k), TD_OK);
    cr_assert_eq(k, TD_RANDOM);
    cr_assert_eq(td_kind_from_name("Random", &k), TD_EKIND);
    cr_assert_eq(td_kind_from_name(NULL, &k), TD_EINVAL);
    cr_assert_str_eq(td_kind_name(TD_RANDOM), "random");
    cr_assert_null(td_kind_name(-1));
    cr_assert_null(td_kind_name(1000));
}

Test(golden, chacha20_backends_agree_across_counter_word_carry, TD_ONE_THREAD)
{
    /* Bytes around keystream block 2^32, where the low counter word carries:
     * the library (OpenSSL or libsodium backend) against libsodium itself. */
    const uint64_t start = (UINT64_C(1) << 38) - 3 * MIB - 5;
    const size_t len = 6 * MIB + 77;
    unsigned char *got = malloc(len), *want = malloc(len + 64), *zeros = calloc(1, len + 64);
    unsigned char key[32], nonce[8] = {0};
    uint64_t seed = 12345, ic = start / 64;
    unsigned char msg[64];

    cr_assert_eq(td_fill(TD_RANDOM, NULL, 0, got, 1), TD_OK); /* initialises libsodium */
    memcpy(msg, "libtestdata/random/chacha20/1", 29);
    for (int i = 0; i < 8; i++)
        msg[29 + i] = (unsigned char)(seed >> (8 * i));
    crypto_generichash(key, 32, msg, 37, NULL, 0);
    crypto_stream_chacha20_xor_ic(want, zeros, len + 64, nonce, ic, key);

    td_options o = opts(TD_ALG_CHACHA20, seed);
    cr_assert_eq(td_fill(TD_RANDOM, &o, start, got, len), TD_OK);
    cr_assert(memcmp(got, want + start % 64, len) == 0);
    free(got);
    free(want);
    free(zeros);
}
