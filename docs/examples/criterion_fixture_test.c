/*
 * How another project's C test suite uses libtestdata (built and run by this
 * project's CTest, so the example cannot rot).  A "checksum" module under
 * test (here: a byte-at-a-time Adler-32 next to zlib's) is fed reproducible
 * random data of every awkward size; a failure prints the seed to rerun with.
 *
 *   cc criterion_fixture_test.c $(pkg-config --cflags --libs testdata criterion zlib)
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <testdata.h>
#include <unistd.h>
#include <zlib.h>

/* The code under test: a naive Adler-32. */
static uint32_t my_adler32(const unsigned char *p, size_t n)
{
    uint32_t a = 1, b = 0;
    for (size_t i = 0; i < n; i++) {
        a = (a + p[i]) % 65521;
        b = (b + a) % 65521;
    }
    return (b << 16) | a;
}

/* A fixture: 8 MiB of seeded random bytes, made fresh for each test. */
static unsigned char *data;
static const size_t data_len = 8u << 20;
static td_options opts;

static void setup(void)
{
    td_options_init(&opts);
    opts.seed = 20261129; /* fixed: every run tests the same bytes */
    opts.algorithm = TD_ALG_FAST;
    data = malloc(data_len);
    cr_assert_not_null(data);
    int rc = td_fill(TD_RANDOM, &opts, 0, data, data_len);
    cr_assert_eq(rc, TD_OK, "td_fill: %s", td_strerror(rc));
}

static void teardown(void)
{
    free(data);
}

ParameterizedTestParameters(checksum, matches_zlib)
{
    static size_t sizes[] = {0, 1, 2, 63, 64, 65, 4095, 4096, 5552, 5553, 1 << 20, 8u << 20};
    return cr_make_param_array(size_t, sizes, sizeof sizes / sizeof sizes[0]);
}

ParameterizedTest(size_t *n, checksum, matches_zlib, .init = setup, .fini = teardown)
{
    uint32_t want = (uint32_t)adler32(1L, data, (uInt)*n);
    cr_expect_eq(my_adler32(data, *n), want, "size %zu, seed %llu", *n,
                 (unsigned long long)opts.seed);
}

Test(checksum, streaming_a_large_input_without_storing_it)
{
    /* Stream a large input in chunks: nothing of that size is ever held. */
    td_stream *s = td_stream_new(TD_RANDOM, 64u << 20);
    const void *chunk;
    size_t len;
    uLong z = adler32(0L, Z_NULL, 0);
    uint64_t total = 0;
    cr_assert_not_null(s);
    while (td_stream_next(s, &chunk, &len) == TD_OK) {
        z = adler32(z, chunk, (uInt)len);
        total += len;
    }
    cr_assert_eq(total, 64u << 20);
    /* Any slice can be regenerated on its own to check a suspect region. */
    unsigned char tail[100];
    cr_assert_eq(td_fill(TD_RANDOM, NULL, (64u << 20) - 100, tail, sizeof tail), TD_OK);
    cr_assert_eq(td_stream_seek(s, (64u << 20) - 100), TD_OK);
    cr_assert_eq(td_stream_next(s, &chunk, &len), TD_OK);
    cr_assert_eq(len, 100);
    cr_assert_arr_eq(chunk, tail, 100);
    td_stream_free(s);
}

Test(checksum, fixture_file_round_trip)
{
    char path[] = "/tmp/td-example-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    cr_assert_eq(td_write_file(path, TD_RANDOM, 3u << 20, NULL), TD_OK);
    FILE *f = fopen(path, "rb");
    unsigned char *buf = malloc(3u << 20);
    cr_assert_eq(fread(buf, 1, 3u << 20, f), 3u << 20);
    fclose(f);
    unlink(path);
    uint64_t bad;
    cr_assert_eq(td_verify(TD_RANDOM, NULL, 0, buf, 3u << 20, &bad), TD_OK);
    free(buf);
}
