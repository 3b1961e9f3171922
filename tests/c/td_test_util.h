/* Helpers shared by the Criterion test files. */
#ifndef TD_TEST_UTIL_H
#define TD_TEST_UTIL_H

#ifdef TD_MINI_CRITERION
#include "mini_criterion.h" /* ThreadSanitizer builds: see there */
#else
#include <criterion/criterion.h>
#endif
#include <sodium.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <testdata.h>

/* Hex SHA-256 of buf into out[65]. */
static inline void td_test_sha256_hex(const void *buf, size_t len, char out[65])
{
    unsigned char d[crypto_hash_sha256_BYTES];
    crypto_hash_sha256(d, buf, len);
    for (int i = 0; i < 32; i++)
        snprintf(out + 2 * i, 3, "%02x", d[i]);
}

/* SHA-256 of bytes [offset, offset+len) of a stream, via td_fill. */
static inline void td_test_digest(int kind, const td_options *o, uint64_t offset, size_t len,
                                  char out[65])
{
    unsigned char *buf = malloc(len);
    cr_assert_not_null(buf);
    cr_assert_eq(td_fill(kind, o, offset, buf, len), TD_OK);
    td_test_sha256_hex(buf, len, out);
    free(buf);
}

/* xorshift64*, for test-side randomness (chunk sizes, offsets). */
static inline uint64_t td_test_rand(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * UINT64_C(2685821657736338717);
}

/* Read a whole stream of `total` bytes with random chunk sizes in [1, max_chunk],
 * mixing td_stream_read and td_stream_next, into out. */
static inline void td_test_read_chunked(td_stream *s, unsigned char *out, size_t total,
                                        size_t max_chunk, uint64_t rng)
{
    size_t done = 0;
    for (;;) {
        size_t len = 0;
        int rc;
        if (td_test_rand(&rng) & 1) {
            size_t want = 1 + (size_t)(td_test_rand(&rng) % max_chunk);
            if (want > total - done)
                want = total - done + (td_test_rand(&rng) & 1); /* sometimes ask past the end */
            rc = td_stream_read(s, out + done, want, &len);
        } else {
            const void *chunk;
            rc = td_stream_next(s, &chunk, &len);
            if (rc == TD_OK) {
                cr_assert_leq(len, total - done);
                memcpy(out + done, chunk, len);
            }
        }
        if (rc == TD_DONE) {
            cr_assert_eq(len, 0);
            break;
        }
        cr_assert_eq(rc, TD_OK, "rc=%d (%s)", rc, td_strerror(rc));
        done += len;
    }
    cr_assert_eq(done, total);
}

/* Bytes [base, base+n) of (kind, *o) are the same from one td_fill, from
 * td_fill with threads 0..4, from odd-sized td_fill pieces, and from a
 * 2-thread stream read in odd pieces after a seek; td_verify accepts them. */
static inline void td_test_check_invariance(int kind, const td_options *o, uint64_t base,
                                            size_t n)
{
    unsigned char *ref = malloc(n), *b = malloc(n);
    cr_assert(ref && b);
    cr_assert_eq(td_fill(kind, o, base, ref, n), TD_OK);
    for (uint32_t t = 0; t <= 4; t++) {
        td_options ot = *o;
        ot.threads = t;
        memset(b, 0, n);
        cr_assert_eq(td_fill(kind, &ot, base, b, n), TD_OK);
        cr_assert(memcmp(b, ref, n) == 0, "kind %d: threads=%u differs", kind, t);
    }
    memset(b, 0, n);
    for (size_t done = 0, step = 1; done < n; step = step * 7 % 40009 + 1) {
        size_t k = n - done < step ? n - done : step;
        cr_assert_eq(td_fill(kind, o, base + done, b + done, k), TD_OK);
        done += k;
    }
    cr_assert(memcmp(b, ref, n) == 0, "kind %d: odd td_fill pieces differ", kind);
    td_options o2 = *o;
    o2.threads = 2;
    td_stream *s;
    cr_assert_eq(td_stream_open(&s, kind, base + n, &o2), TD_OK);
    cr_assert_eq(td_stream_seek(s, base), TD_OK);
    memset(b, 0, n);
    for (size_t done = 0, step = 3; done < n; step = step * 13 % 300007 + 1) {
        size_t got = 0, k = n - done < step ? n - done : step;
        cr_assert_eq(td_stream_read(s, b + done, k, &got), TD_OK);
        done += got;
    }
    cr_assert(memcmp(b, ref, n) == 0, "kind %d: stream read in pieces differs", kind);
    size_t extra;
    cr_assert_eq(td_stream_read(s, b, 1, &extra), TD_DONE);
    td_stream_free(s);
    cr_assert_eq(td_verify(kind, o, base, ref, n, NULL), TD_OK);
    free(ref);
    free(b);
}

#endif
