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

/* TD_TEST_TSAN: built with ThreadSanitizer, which makes the tests 5-15x
 * slower and looks for races, not for values.  There, loops that repeat
 * one single-threaded check with new random values run a tenth as often
 * (TD_TEST_REPS), and a few long ranges are shortened: CI's TSan step was
 * held up by them.  TD_TEST_ASAN: built with AddressSanitizer, which looks
 * for bad memory accesses; the same loops run a quarter as often there (each
 * pass takes the same code paths; the plain build runs them all). */
#if defined(__SANITIZE_THREAD__)
#define TD_TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TD_TEST_TSAN 1
#endif
#endif
#ifndef TD_TEST_TSAN
#define TD_TEST_TSAN 0
#endif
#if defined(__SANITIZE_ADDRESS__)
#define TD_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TD_TEST_ASAN 1
#endif
#endif
#ifndef TD_TEST_ASAN
#define TD_TEST_ASAN 0
#endif
#define TD_TEST_REPS(n)                                                                            \
    (TD_TEST_TSAN && (n) >= 10 ? (n) / 10 : TD_TEST_ASAN && (n) >= 4 ? (n) / 4 : (n))

/* Test attribute for a test that starts no thread, as in
 *   Test(suite, name, TD_ONE_THREAD) { ... }
 * ThreadSanitizer runs skip such a test: a race detector finds nothing in one
 * thread, and the plain, ASan and valgrind runs still run it.  Those runs
 * also hold the mark to its word: td_test_threads.c aborts a marked test
 * that starts a thread. */
extern int td_test_threads_forbidden;
static inline void td_test_forbid_threads(void)
{
    td_test_threads_forbidden = 1;
}
#define TD_ONE_THREAD .init = td_test_forbid_threads, .disabled = TD_TEST_TSAN

/* The one invariance check every kind's tests run: bytes [base, base+n) of
 * (kind, *o) are the same
 *   - from one td_fill, and from td_fill with threads 0, 1, 2, 3, 7, 1024;
 *   - from a stream with those threads, seeked to base and read in random
 *     chunks (td_stream_read and td_stream_next mixed) of at most 1, 17,
 *     4096, 300000 and 4 MiB bytes (1- and 17-byte chunks over a prefix);
 *   - from odd-sized consecutive td_fill pieces, and from 200 random
 *     sub-ranges, and 300 random seeks + reads of one stream (20 and 30
 *     under ThreadSanitizer, 50 and 75 under AddressSanitizer: TD_TEST_REPS);
 * and td_verify accepts them, and finds a flipped byte where it is. */
static inline void td_test_check_invariance(int kind, const td_options *o, uint64_t base,
                                            size_t n)
{
    static const uint32_t threads[] = {0, 1, 2, 3, 7, 1024};
    static const size_t max_chunks[] = {1, 17, 4096, 300000, 4u << 20};
    unsigned char *ref = malloc(n), *b = malloc(n);
    uint64_t rng = base ^ n ^ (uint64_t)kind;
    td_stream *s;
    cr_assert(ref && b);
    cr_assert_eq(td_fill(kind, o, base, ref, n), TD_OK);
    for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
        td_options ot = *o;
        ot.threads = threads[t];
        memset(b, 0x55, n);
        cr_assert_eq(td_fill(kind, &ot, base, b, n), TD_OK);
        cr_assert(memcmp(b, ref, n) == 0, "kind %d: td_fill threads=%u differs", kind, threads[t]);
        cr_assert_eq(td_stream_open(&s, kind, base + n, &ot), TD_OK);
        cr_assert_eq(td_stream_seek(s, base), TD_OK);
        memset(b, 0x55, n);
        td_test_read_chunked(s, b, n, 8u << 20, rng + t);
        cr_assert(memcmp(b, ref, n) == 0, "kind %d: stream threads=%u differs", kind, threads[t]);
        td_stream_free(s);
    }
    for (size_t m = 0; m < sizeof max_chunks / sizeof max_chunks[0]; m++) {
        size_t len = max_chunks[m] < 64 && n > 300000 ? 300000 : n;
        cr_assert_eq(td_stream_open(&s, kind, base + len, o), TD_OK);
        cr_assert_eq(td_stream_seek(s, base), TD_OK);
        memset(b, 0xAA, len);
        td_test_read_chunked(s, b, len, max_chunks[m], rng + 100 + m);
        cr_assert(memcmp(b, ref, len) == 0, "kind %d: chunks of at most %zu differ", kind,
                  max_chunks[m]);
        td_stream_free(s);
    }
    memset(b, 0, n);
    for (size_t done = 0, step = 1; done < n; step = step * 7 % 40009 + 1) {
        size_t k = n - done < step ? n - done : step;
        cr_assert_eq(td_fill(kind, o, base + done, b + done, k), TD_OK);
        done += k;
    }
    cr_assert(memcmp(b, ref, n) == 0, "kind %d: odd td_fill pieces differ", kind);
    for (int i = 0; i < TD_TEST_REPS(200); i++) {
        size_t off = (size_t)(td_test_rand(&rng) % n), len = 1 + (size_t)(td_test_rand(&rng) % (n - off));
        if (i % 2)
            len = 1 + len % 200;
        if (len > n - off)
            len = n - off;
        cr_assert_eq(td_fill(kind, o, base + off, b, len), TD_OK);
        cr_assert(memcmp(b, ref + off, len) == 0, "kind %d: fill at +%zu, %zu bytes", kind, off, len);
    }
    cr_assert_eq(td_stream_open(&s, kind, base + n, o), TD_OK);
    for (int i = 0; i < TD_TEST_REPS(300); i++) {
        size_t off = (size_t)(td_test_rand(&rng) % n), len = 1 + (size_t)(td_test_rand(&rng) % 70000), got;
        if (len > n - off)
            len = n - off;
        cr_assert_eq(td_stream_seek(s, base + off), TD_OK);
        cr_assert_eq(td_stream_read(s, b, len, &got), TD_OK);
        cr_assert_eq(got, len);
        cr_assert(memcmp(b, ref + off, len) == 0, "kind %d: seek to +%zu, %zu bytes", kind, off, len);
    }
    size_t extra;
    cr_assert_eq(td_stream_seek(s, base + n), TD_OK);
    cr_assert_eq(td_stream_read(s, b, 1, &extra), TD_DONE);
    td_stream_free(s);
    uint64_t first = 0;
    cr_assert_eq(td_verify(kind, o, base, ref, n, NULL), TD_OK);
    size_t flip = (size_t)(td_test_rand(&rng) % n);
    ref[flip] ^= 0x40;
    cr_assert_eq(td_verify(kind, o, base, ref, n, &first), TD_EMISMATCH);
    cr_assert_eq(first, base + flip);
    free(ref);
    free(b);
}

#endif
