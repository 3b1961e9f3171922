/* td_split_range and td_write_file_at: the pieces of a scaled-out run. */
#include "td_test_util.h"

#include <sys/stat.h>
#include <unistd.h>

/* Ranges of every index tile [0, size) in order, start aligned, equal but the last. */
static void check_split(uint64_t size, uint64_t parts, uint64_t align)
{
    uint64_t next = 0, first_len = 0;
    int seen_short = 0;
    for (uint64_t i = 0; i < parts; i++) {
        uint64_t off = 7, len = 7;
        cr_assert_eq(td_split_range(size, parts, align, i, &off, &len), TD_OK);
        cr_assert_eq(off, next, "size %llu parts %llu align %llu index %llu",
                     (unsigned long long)size, (unsigned long long)parts,
                     (unsigned long long)align, (unsigned long long)i);
        cr_assert(off == size || off % align == 0);
        if (i == 0)
            first_len = len;
        if (len != first_len) {
            cr_assert(len < first_len);
            cr_assert(!seen_short || len == 0, "only one short non-empty range");
            seen_short = len > 0 || seen_short;
        }
        next = off + len;
    }
    cr_assert_eq(next, size);
}

Test(split_range, tiles_exactly, TD_ONE_THREAD)
{
    static const uint64_t sizes[] = {0, 1, 2, 3, 10, 4095, 4096, 4097, 1 << 20, (1 << 20) + 1,
                                     10 * 1000 * 1000 + 7};
    static const uint64_t parts[] = {1, 2, 3, 4, 7, 16};
    static const uint64_t aligns[] = {1, 3, 4096, 1 << 20};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
        for (size_t p = 0; p < sizeof parts / sizeof *parts; p++)
            for (size_t a = 0; a < sizeof aligns / sizeof *aligns; a++)
                check_split(sizes[s], parts[p], aligns[a]);
}

Test(split_range, documented_values, TD_ONE_THREAD)
{
    uint64_t off, len;
    /* 10 MiB + 1 over 3 parts, 1 MiB aligned: P = 4 MiB. */
    cr_assert_eq(td_split_range((10 << 20) + 1, 3, 1 << 20, 2, &off, &len), TD_OK);
    cr_assert_eq(off, 8 << 20);
    cr_assert_eq(len, (2 << 20) + 1);
    /* Fixed-size shards: parts = ceil(size/S), align = S. */
    cr_assert_eq(td_split_range(1000, 4, 300, 3, &off, &len), TD_OK);
    cr_assert_eq(off, 900);
    cr_assert_eq(len, 100);
    cr_assert_eq(td_split_range(1000, 4, 300, 1, &off, &len), TD_OK);
    cr_assert_eq(off, 300);
    cr_assert_eq(len, 300);
    /* Trailing empty ranges. */
    cr_assert_eq(td_split_range(10, 4, 16, 3, &off, &len), TD_OK);
    cr_assert_eq(off, 10);
    cr_assert_eq(len, 0);
}

Test(split_range, extremes_and_errors, TD_ONE_THREAD)
{
    uint64_t off = 5, len = 5;
    const uint64_t big = UINT64_MAX - 1;
    check_split(big, 3, 1);
    check_split(big, 5, (uint64_t)1 << 62);
    cr_assert_eq(td_split_range(big, UINT64_MAX, 1, UINT64_MAX - 1, &off, &len), TD_OK);
    cr_assert_eq(off + len, big);
    cr_assert_eq(td_split_range((uint64_t)1 << 63, (uint64_t)1 << 62, (uint64_t)1 << 62,
                                ((uint64_t)1 << 62) - 1, &off, &len), TD_OK);
    cr_assert_eq(off, (uint64_t)1 << 63);
    cr_assert_eq(len, 0);
    off = len = 5;
    cr_assert_eq(td_split_range(10, 0, 1, 0, &off, &len), TD_EINVAL);
    cr_assert_eq(td_split_range(10, 2, 0, 0, &off, &len), TD_EINVAL);
    cr_assert_eq(td_split_range(10, 2, 1, 2, &off, &len), TD_EINVAL);
    cr_assert_eq(td_split_range(10, 2, 1, 0, NULL, &len), TD_EINVAL);
    cr_assert_eq(td_split_range(10, 2, 1, 0, &off, NULL), TD_EINVAL);
    cr_assert_eq(td_split_range(TD_SIZE_UNBOUNDED, 2, 1, 0, &off, &len), TD_ERANGE);
    cr_assert_eq(off, 5);
    cr_assert_eq(len, 5);
}

Test(write_file_at, shards_concatenate_to_the_stream, TD_ONE_THREAD)
{
    const uint64_t total = 3 * 1024 * 1024 + 11, shard = 1024 * 1024 + 3;
    const uint64_t n = (total + shard - 1) / shard;
    td_options o;
    td_options_init(&o);
    o.seed = 9;
    unsigned char *whole = malloc(total), *got = malloc(total);
    cr_assert_eq(td_fill(TD_RANDOM, &o, 0, whole, total), TD_OK);
    uint64_t pos = 0;
    for (uint64_t i = 0; i < n; i++) {
        char path[256];
        uint64_t off, len;
        struct stat st;
        cr_assert_eq(td_split_range(total, n, shard, i, &off, &len), TD_OK);
        snprintf(path, sizeof path, "/tmp/td-scale-%d-%llu", (int)getpid(), (unsigned long long)i);
        cr_assert_eq(td_write_file_at(path, TD_RANDOM, off, len, &o), TD_OK);
        cr_assert_eq(stat(path, &st), 0);
        cr_assert_eq((uint64_t)st.st_size, len);
        FILE *f = fopen(path, "rb");
        cr_assert_eq(fread(got + pos, 1, len, f), len);
        fclose(f);
        unlink(path);
        pos += len;
    }
    cr_assert_eq(pos, total);
    cr_assert_eq(memcmp(got, whole, total), 0);
    free(whole);
    free(got);
    cr_assert_eq(td_write_file_at("/tmp/td-never", TD_ZERO, UINT64_MAX, 2, NULL), TD_ERANGE);
    cr_assert_eq(access("/tmp/td-never", F_OK), -1);
}
