/*
 * Differential fuzz target: a td_stream against td_fill.
 *
 * The input picks a kind (any kind the library has: 0 .. TD_KIND_COUNT-1
 * with a name, so new kinds are covered without changes here), options
 * (seed, threads 0..4, and any kind options, set through td_options_set()
 * or, sometimes, as raw struct values), a stream size, and then a sequence
 * of td_stream_read / td_stream_next / td_stream_seek / td_stream_tell /
 * td_fill / td_verify calls, and of td_stream_free + td_stream_open with a
 * new seed, thread count and size.  A model of the position checks every return
 * code, and every byte a stream hands out is compared with td_fill at the
 * same offset.  td_fill itself is checked against td_fill of two pieces
 * with threads = 1.  Read buffers are malloc'd at exactly the requested
 * size, so a sanitizer catches any write past what was asked for.
 */
#include <testdata.h>

#include "fuzz_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


#define KIB 1024u
#define MIB (1024u * 1024u)
#define MAX_READ (9u * MIB) /* bigger than any stream buffer (8 MiB) */
#define MAX_OPS 48

typedef struct input {
    const uint8_t *p;
    size_t n;
} input;

/* Little-endian integer of up to 8 bytes; 0 once the input is used up. */
static uint64_t take(input *in, unsigned bytes)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < bytes && in->n; i++, in->p++, in->n--)
        v |= (uint64_t)in->p[0] << (8 * i);
    return v;
}

static double take_double(input *in)
{
    uint64_t bits = take(in, 8);
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

/* Kind options and values to try; keys a kind does not take give
 * TD_EOPTION and are skipped, so this covers kinds added later too. */
static const struct {
    const char *key;
    const char *values[8];
} kind_options[] = {
    {"algorithm", {"chacha20", "fast", "chacha20", "fast"}},
    {"ratio", {"1", "1.5", "2", "3", "10", "100", "0.5", "1e6"}},
    {"dedup", {"1", "1.5", "2", "4", "100", "1.01", "0.9", "3"}},
    {"dedup_block", {"512", "4096", "64K", "1M", "1", "64", "4096", "16M"}},
    {"profile", {"english", "html", "source", "database", "jpeg", "no-such", "json", "bitmap"}},
};

typedef struct ctx {
    int kind;
    td_options o;
    uint64_t size;
    uint64_t pos; /* model of the stream's position */
} ctx;

/* td_fill(c->o) of [off, off+len) must equal the two pieces
 * [off, off+cut) and [off+cut, off+len) filled single-threaded. */
static void expect_bytes(const ctx *c, uint64_t off, const uint8_t *got, size_t len)
{
    uint8_t *want = malloc(len ? len : 1);
    CHECK(want);
    CHECK(td_fill((td_kind)c->kind, &c->o, off, want, len) == TD_OK);
    if (memcmp(got, want, len) != 0) {
        size_t i = 0;
        while (got[i] == want[i])
            i++;
        fprintf(stderr, "kind %d seed %llu threads %u: byte %llu differs (%02x, td_fill %02x)\n",
                c->kind, (unsigned long long)c->o.seed, c->o.threads,
                (unsigned long long)(off + i), got[i], want[i]);
        CHECK(!"stream bytes differ from td_fill");
    }
    free(want);
}

static void op_read(ctx *c, td_stream *s, input *in)
{
    uint64_t left = c->pos < c->size ? c->size - c->pos : 0;
    size_t cap, alloc;
    switch (take(in, 1) % 5) {
    case 0: cap = (size_t)take(in, 1); break;
    case 1: cap = (size_t)take(in, 2); break;
    case 2: cap = (size_t)(take(in, 3) % MAX_READ); break;
    case 3: cap = (size_t)(take(in, 1) * 64 * KIB + take(in, 1)); break; /* window edges */
    default: cap = left <= MIB ? SIZE_MAX : (size_t)take(in, 2); break;
    }
    /* What the read may produce; a buffer of exactly that size. */
    alloc = (uint64_t)cap < left ? cap : (size_t)left;
    uint8_t *buf = malloc(alloc ? alloc : 1);
    CHECK(buf);
    size_t n = 12345;
    /* buf may be NULL exactly when cap is 0. */
    int rc = td_stream_read(s, cap ? buf : NULL, cap, &n);
    if (left == 0) {
        CHECK(rc == TD_DONE && n == 0);
    } else {
        CHECK(rc == TD_OK);
        CHECK(n <= alloc);
        CHECK(cap == 0 ? n == 0 : n > 0);
        expect_bytes(c, c->pos, buf, n);
        c->pos += n;
    }
    free(buf);
    CHECK(td_stream_tell(s) == c->pos);
}

static void op_next(ctx *c, td_stream *s)
{
    const void *chunk = &chunk;
    size_t n = 12345;
    int rc = td_stream_next(s, &chunk, &n);
    if (c->pos >= c->size) {
        CHECK(rc == TD_DONE && n == 0 && chunk == NULL);
    } else {
        CHECK(rc == TD_OK && n > 0 && chunk != NULL);
        CHECK(n <= c->size - c->pos);
        expect_bytes(c, c->pos, chunk, n);
        c->pos += n;
    }
    CHECK(td_stream_tell(s) == c->pos);
}

static void op_seek(ctx *c, td_stream *s, input *in)
{
    uint64_t to;
    switch (take(in, 1) % 6) {
    case 0: to = c->size == UINT64_MAX ? take(in, 8) : take(in, 8) % (c->size + 1); break;
    case 1: to = c->size; break;
    case 2: to = c->size + 1 + take(in, 2); break; /* past the end (may wrap: fine) */
    case 3: to = c->pos + take(in, 3); break;
    case 4: to = c->pos - take(in, 2); break;
    default: to = c->size - take(in, 3); break;
    }
    int rc = td_stream_seek(s, to);
    if (to <= c->size) {
        CHECK(rc == TD_OK);
        c->pos = to;
    } else {
        CHECK(rc == TD_ERANGE);
    }
    CHECK(td_stream_tell(s) == c->pos);
}

/* td_fill and td_verify on their own, at any offset. */
static void op_fill(ctx *c, input *in)
{
    uint64_t off = take(in, 1) & 1 ? UINT64_MAX - take(in, 3) : take(in, 6);
    size_t len = (size_t)(take(in, 3) % (3 * MIB));
    size_t cut = len ? (size_t)(take(in, 3) % len) : 0;
    uint8_t *buf = malloc(len ? len : 1);
    CHECK(buf);
    int rc = td_fill((td_kind)c->kind, &c->o, off, buf, len);
    if (len && len > UINT64_MAX - off) {
        CHECK(rc == TD_ERANGE);
        free(buf);
        return;
    }
    CHECK(rc == TD_OK);
    if (len) {
        td_options one = c->o;
        one.threads = 1;
        uint8_t *want = malloc(len);
        CHECK(want);
        CHECK(td_fill((td_kind)c->kind, &one, off, want, cut) == TD_OK);
        CHECK(td_fill((td_kind)c->kind, &one, off + cut, want + cut, len - cut) == TD_OK);
        CHECK(memcmp(buf, want, len) == 0);
        free(want);
        uint64_t first = 0, count = 0;
        CHECK(td_verify((td_kind)c->kind, &c->o, off, buf, len, &first) == TD_OK);
        buf[cut] ^= 0x40;
        CHECK(td_verify((td_kind)c->kind, &c->o, off, buf, len, &first) == TD_EMISMATCH);
        CHECK(first == off + cut);
        CHECK(td_verify_count((td_kind)c->kind, &c->o, off, buf, len, &first, &count) ==
              TD_EMISMATCH);
        CHECK(first == off + cut && count == 1);
    }
    free(buf);
}

/* Free the stream and open another over the same kind: new seed, threads
 * and size (same kind options). */
static void op_reopen(ctx *c, td_stream **s, input *in)
{
    td_stream_free(*s);
    *s = NULL;
    c->o.seed = take(in, 8);
    c->o.threads = (uint32_t)(take(in, 1) % 5);
    c->size = take(in, 1) & 1 ? take(in, 3) : UINT64_MAX - take(in, 3);
    c->pos = 0;
    int rc = td_stream_open(s, c->kind, c->size, &c->o);
    CHECK(rc == TD_OK && *s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    input in = {data, size};
    int kinds[TD_KIND_COUNT], nkinds = 0;
    ctx c;

    for (int k = 0; k < TD_KIND_COUNT; k++)
        if (td_kind_name(k))
            kinds[nkinds++] = k;
    CHECK(nkinds > 0);
    memset(&c, 0, sizeof c);
    c.kind = kinds[take(&in, 1) % (uint64_t)nkinds];
    td_options_init(&c.o);
    c.o.seed = take(&in, 8);
    c.o.threads = (uint32_t)(take(&in, 1) % 5);
    uint64_t how = take(&in, 1);
    for (size_t i = 0; i < sizeof kind_options / sizeof kind_options[0]; i++) {
        if (how & (1u << i)) {
            unsigned v = (unsigned)(take(&in, 1) % 8);
            if (kind_options[i].values[v])
                (void)td_options_set(&c.o, c.kind, kind_options[i].key, kind_options[i].values[v]);
        }
    }
    if (how & 0x80) {
        /* Raw struct values, valid or not: every entry point must agree. */
        c.o.ratio = take_double(&in);
        c.o.dedup = take(&in, 1) & 1 ? take_double(&in) : c.o.dedup;
        c.o.dedup_block = (uint32_t)take(&in, 4);
        c.o.algorithm = (uint32_t)take(&in, 1) % 4;
    }
    switch (take(&in, 1) % 4) {
    case 0: c.size = take(&in, 3); break;
    case 1: c.size = UINT64_MAX - take(&in, 3); break;
    case 2: c.size = (UINT64_C(1) << 40) + take(&in, 3); break;
    default: c.size = take(&in, 8); break;
    }

    int check = td_options_check(c.kind, &c.o);
    td_stream *s = NULL;
    int rc = td_stream_open(&s, c.kind, c.size, &c.o);
    CHECK(rc == check);
    uint8_t one;
    CHECK(td_fill((td_kind)c.kind, &c.o, 0, &one, 1) == check);
    if (rc != TD_OK) {
        CHECK(s == NULL);
        CHECK(rc == TD_ERANGE || rc == TD_EOPTION || rc == TD_EINVAL);
        return 0;
    }
    CHECK(s && td_stream_size(s) == c.size && td_stream_tell(s) == 0);

    for (int ops = 0; ops < MAX_OPS && in.n; ops++) {
        switch (take(&in, 1) % 9) {
        case 0:
        case 1:
        case 2: op_read(&c, s, &in); break;
        case 3:
        case 4: op_next(&c, s); break;
        case 5:
        case 6: op_seek(&c, s, &in); break;
        case 7: op_fill(&c, &in); break;
        default: op_reopen(&c, &s, &in); break;
        }
    }
    td_stream_free(s);
    return 0;
}
