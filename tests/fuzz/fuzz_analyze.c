/*
 * Fuzz target: the analyzer on arbitrary bytes.  td_analyze_buffer (one
 * shot) against td_analyzer_new/update/finish fed in pieces whose sizes come
 * from the input, with a different thread count, told the size or not, and
 * (when sampling) an analyzer not told the size; invariants of every result.
 *
 * Input: a 5-byte header, then the payload.
 *   byte 0  flags: bits 0-1 threads of the incremental run (1, 2, 0 = all
 *           cores, 1); bits 2-3: 3 = expand the payload (below), 2 = a
 *           small sample budget; bits 4-7 feed the split-point generator
 *   byte 1-2  seed of the split points (with bits 4-7 of byte 0)
 *   byte 3  expand: the data is the payload repeated up to (b3 % 24 + 1)
 *           * 64 KiB bytes (so that several TD_ANALYZE_BLOCK blocks and
 *           sampling are reached with small inputs); the budget is then 1
 *           or 2 blocks (b4 bit 0), to keep each run fast.  (Compressing a
 *           block costs far more than anything else: an analyzer sets up
 *           an xz -6 encoder even for 1 byte, so runs are slow, a few dozen
 *           per second under ASan.)
 *   byte 4  small budget: sample_bytes = b4 * 8 KiB + 1 (1 .. 3 blocks)
 * Missing header bytes read as 0.
 *
 * Checked: every call returns TD_OK; one-shot and incremental results are
 * byte-for-byte identical (whatever the pieces and threads); size is the
 * input's; entropy in [0, 8], equal to an independent computation, 0 exactly
 * when at most one byte value occurs; sampled <= size, == size when it fits
 * the budget, within the budget otherwise, is_sampled == (sampled < size);
 * for non-empty input every compressed size > 0 and every ratio > 0, finite,
 * = sampled / compressed; empty input: all 0; reserved fields 0; the verdict
 * NUL-terminated, non-empty, equal to td_analysis_verdict(), which also
 * truncates correctly into any smaller buffer; update/finish after finish
 * give TD_EINVAL.  Each piece is fed from a buffer of exactly its size, so a
 * sanitizer sees any read past it.
 */
#include <testdata.h>

#include "fuzz_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


#define KIB 1024u
#define BLOCK TD_ANALYZE_BLOCK
#define HEADER 5

static uint64_t next_rand(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * UINT64_C(2685821657736338717);
}

/* Feed data in pieces (sizes from *rng) to a new analyzer made with o. */
static void analyze_pieces(const uint8_t *data, size_t len, const td_analyze_options *o,
                           uint64_t *rng, size_t max_piece, td_analysis *r)
{
    td_analyzer *a = NULL;
    CHECK(td_analyzer_new(&a, o) == TD_OK && a);
    size_t done = 0;
    while (done < len) {
        uint64_t x = next_rand(rng);
        size_t n;
        switch (x & 3) {
        case 0: n = 0; break;                                           /* empty update */
        case 1: n = 1 + (size_t)((x >> 2) % 16); break;                 /* tiny */
        case 2: n = (size_t)((x >> 2) % (max_piece + 1)); break;        /* anything */
        default: n = BLOCK - (size_t)((done + (x >> 2) % 3) % BLOCK); break; /* near an edge */
        }
        if (n > len - done)
            n = len - done;
        if (n == 0) {
            CHECK(td_analyzer_update(a, NULL, 0) == TD_OK);
            continue;
        }
        uint8_t *piece = malloc(n);
        CHECK(piece);
        memcpy(piece, data + done, n);
        CHECK(td_analyzer_update(a, piece, n) == TD_OK);
        free(piece);
        done += n;
    }
    CHECK(td_analyzer_finish(a, r) == TD_OK);
    CHECK(td_analyzer_finish(a, r) == TD_EINVAL);
    CHECK(td_analyzer_update(a, "x", 1) == TD_EINVAL);
    td_analyzer_free(a);
}

static int cmp_block(const void *a, const void *b)
{
    return memcmp(*(const uint8_t *const *)a, *(const uint8_t *const *)b, TD_ANALYZE_DEDUP_BLOCK);
}

/* Distinct complete 4 KiB blocks, by sorting them: the exact count the
 * analyzer must give below its estimation threshold. */
static uint64_t distinct_blocks(const uint8_t *data, size_t len)
{
    size_t n = len / TD_ANALYZE_DEDUP_BLOCK, u = 0;
    const uint8_t **b = malloc((n ? n : 1) * sizeof *b);
    CHECK(b);
    for (size_t i = 0; i < n; i++)
        b[i] = data + i * TD_ANALYZE_DEDUP_BLOCK;
    qsort(b, n, sizeof *b, cmp_block);
    for (size_t i = 0; i < n; i++)
        u += i == 0 || cmp_block(&b[i - 1], &b[i]) != 0;
    free(b);
    return u;
}

/* CPU times differ from run to run; everything else must not. */
static void untimed(td_analysis *r)
{
    memset(r->cpu_ns, 0, sizeof r->cpu_ns);
    memset(r->mb_per_s, 0, sizeof r->mb_per_s);
}

static void check_result(const td_analysis *r, const uint8_t *data, size_t len,
                         uint64_t budget_blocks)
{
    uint64_t counts[256] = {0};
    int distinct = 0;
    double h = 0;

    CHECK(r->size == len);
    for (size_t i = 0; i < len; i++)
        counts[data[i]]++;
    for (int v = 0; v < 256; v++) {
        if (counts[v]) {
            double p = (double)counts[v] / (double)len;
            h -= p * log2(p);
            distinct++;
        }
    }
    CHECK(r->entropy >= 0.0 && r->entropy <= 8.0);
    CHECK(fabs(r->entropy - h) < 1e-9);
    CHECK((r->entropy == 0.0) == (distinct <= 1));

    CHECK(r->sampled <= r->size);
    CHECK(r->is_sampled == (r->sampled < r->size));
    if (r->size <= budget_blocks * BLOCK)
        CHECK(r->sampled == r->size);
    else
        CHECK(r->sampled <= budget_blocks * BLOCK);
    CHECK((r->sampled > 0) == (r->size > 0));
    for (int c = 0; c < TD_CODEC_COUNT; c++) {
        if (r->size == 0) {
            CHECK(r->compressed[c] == 0 && r->ratio[c] == 0.0);
        } else {
            CHECK(r->compressed[c] > 0);
            CHECK(isfinite(r->ratio[c]) && r->ratio[c] > 0.0);
            CHECK(r->ratio[c] == (double)r->sampled / (double)r->compressed[c]);
        }
    }
    /* dedup: every complete block counts, exactly (inputs here are far
     * below the estimation threshold) */
    CHECK(r->dedup_blocks == len / TD_ANALYZE_DEDUP_BLOCK);
    CHECK(r->dedup_unique == distinct_blocks(data, len));
    CHECK(r->dedup_is_estimate == 0);
    if (r->dedup_blocks)
        CHECK(r->dedup_ratio == (double)r->dedup_blocks / (double)r->dedup_unique);
    else
        CHECK(r->dedup_ratio == 0.0 && r->dedup_unique == 0);
    char json[TD_ANALYSIS_JSON_MAX(4)];
    CHECK(td_analysis_json(r, "f", json, sizeof json) == TD_OK);
    CHECK(json[0] == '{' && json[strlen(json) - 1] == '}');
    CHECK(r->reserved_int == 0);
    /* synthetic is the fingerprint rule, and the verdict says so */
    CHECK(r->synthetic == (r->size > 0 && r->ratio[TD_CODEC_GZIP] >= 1.5 &&
                           r->ratio[TD_CODEC_LZ4] >= 0.9 * r->ratio[TD_CODEC_GZIP]));
    CHECK(!r->synthetic || strstr(r->verdict, "like synthetic data") != NULL);
    for (int c = 0; c < TD_CODEC_COUNT; c++)
        CHECK(r->sampled ? r->mb_per_s[c] > 0 : r->mb_per_s[c] == 0);
    for (size_t i = 0; i < sizeof r->reserved / sizeof r->reserved[0]; i++)
        CHECK(r->reserved[i] == 0);

    const char *nul = memchr(r->verdict, '\0', sizeof r->verdict);
    CHECK(nul && nul > r->verdict);
    char line[sizeof r->verdict];
    CHECK(td_analysis_verdict(r, line, sizeof line) == TD_OK);
    CHECK(strcmp(line, r->verdict) == 0);
    size_t full = strlen(line);
    /* Any smaller buffer: a NUL-terminated prefix, TD_ERANGE when cut. */
    for (size_t cap = 1; cap <= full + 1; cap += 1 + cap / 3) {
        char *small = malloc(cap);
        CHECK(small);
        int rc = td_analysis_verdict(r, small, cap);
        CHECK(rc == (full >= cap ? TD_ERANGE : TD_OK));
        CHECK(strlen(small) == (full < cap ? full : cap - 1));
        CHECK(memcmp(small, line, strlen(small)) == 0);
        free(small);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t h[HEADER] = {0};
    memcpy(h, data, size < HEADER ? size : HEADER);
    const uint8_t *payload = size > HEADER ? data + HEADER : data + size;
    size_t plen = size > HEADER ? size - HEADER : 0;
    static const uint32_t thread_choice[4] = {1, 2, 0, 1};
    uint64_t seed = (uint64_t)h[1] | (uint64_t)h[2] << 8 | (uint64_t)(h[0] >> 4) << 16;
    uint64_t rng = seed * UINT64_C(0x9E3779B97F4A7C15) + 1;

    td_analyze_options o;
    td_analyze_options_init(&o);
    const uint8_t *buf = payload;
    uint8_t *expanded = NULL;
    size_t len = plen, max_piece = 4096;
    if ((h[0] & 12) == 12) {
        /* The payload repeated, up to 1.5 MiB; a budget of 1 or 2 blocks. */
        len = plen ? (size_t)(h[3] % 24 + 1) * 64 * KIB : 0;
        expanded = malloc(len ? len : 1);
        CHECK(expanded);
        for (size_t i = 0; i < len; i += plen)
            memcpy(expanded + i, payload, len - i < plen ? len - i : plen);
        buf = expanded;
        o.sample_bytes = (h[4] & 1) ? BLOCK + 1 : BLOCK / 3;
        max_piece = 3 * BLOCK / 2;
    } else if ((h[0] & 12) == 8) {
        o.sample_bytes = (uint64_t)h[4] * 8 * KIB + 1;
    }
    uint64_t budget_blocks = o.sample_bytes / BLOCK + (o.sample_bytes % BLOCK != 0);

    /* One shot (threads 1). */
    td_analysis one;
    memset(&one, 0xA5, sizeof one);
    CHECK(td_analyze_buffer(len ? buf : NULL, len, &o, &one) == TD_OK);
    check_result(&one, buf, len, budget_blocks);

    /* In pieces, other threads, told the size (when it fits the budget,
     * the size changes nothing, so a pipe's unknown size is tried instead
     * every other time, saving a run): the very same result. */
    int fits = len <= budget_blocks * BLOCK;
    td_analyze_options oi = o;
    oi.size_hint = fits && (seed & 1) ? TD_SIZE_UNBOUNDED : len;
    oi.threads = thread_choice[h[0] & 3];
    td_analysis inc;
    memset(&inc, 0x5A, sizeof inc);
    analyze_pieces(buf, len, &oi, &rng, max_piece, &inc);
    untimed(&one);
    untimed(&inc);
    CHECK(memcmp(&one, &inc, sizeof one) == 0);

    if (!fits) {
        /* In pieces, size unknown: other samples may be picked. */
        td_analysis unk;
        analyze_pieces(buf, len, &o, &rng, max_piece, &unk);
        check_result(&unk, buf, len, budget_blocks);
        CHECK(unk.entropy == one.entropy);
    }

    free(expanded);
    return 0;
}
