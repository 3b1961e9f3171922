/*
 * Fuzz target: the string parsers, td_parse_size(), td_options_set() with
 * arbitrary keys and values, td_kind_from_name() and td_strerror().
 *
 * Input: byte 0 picks the kind (as a signed byte, so invalid kinds are
 * tried too); the rest is split at NUL bytes into strings s0, s1, s2, ...
 * Every string is parsed as a size and as a kind name; pairs (s0,s1),
 * (s2,s3), ... are applied with td_options_set() in turn.  Besides "no
 * crash", each result is checked against an independent model of the
 * documented grammar.
 */
#include <testdata.h>

#include "fuzz_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* Model of td_parse_size, as GNU head -c reads sizes: digits, then nothing;
 * "b" (512); or one of k K m M G T P E Z Y, optionally followed by "iB"
 * (1024), "B" or "D" (1000).  Returns the status. */
static int model_size(const char *t, uint64_t *out)
{
    unsigned __int128 v = 0;
    const char *p = t;
    if (strcmp(t, "inf") == 0 || strcmp(t, "unbounded") == 0) {
        *out = UINT64_MAX;
        return TD_OK;
    }
    if (!(*p >= '0' && *p <= '9'))
        return TD_ESYNTAX;
    for (; *p >= '0' && *p <= '9'; p++) {
        v = v * 10 + (unsigned)(*p - '0');
        if (v > UINT64_MAX)
            return TD_ERANGE; /* even if junk follows */
    }
    if (*p == 'b' && !p[1]) {
        v *= 512;
    } else if (*p) {
        static const char units[] = "KMGTPEZY";
        char c = *p == 'k' ? 'K' : *p == 'm' ? 'M' : *p;
        const char *u = strchr(units, c);
        if (!c || !u)
            return TD_ESYNTAX;
        p++;
        unsigned base = 1024;
        if (strcmp(p, "B") == 0 || strcmp(p, "D") == 0)
            base = 1000;
        else if (*p && strcmp(p, "iB") != 0)
            return TD_ESYNTAX;
        for (int i = 0; i <= (int)(u - units) && v <= UINT64_MAX; i++)
            v *= base; /* v <= 2^64 before each step: no 128-bit overflow */
    }
    if (v > UINT64_MAX)
        return TD_ERANGE;
    *out = (uint64_t)v;
    return TD_OK;
}

/* Model of the integer grammar: decimal digits, or (hex_ok) 0x/0X + hex. */
static int model_uint(const char *s, int hex_ok, uint64_t *out)
{
    unsigned __int128 v = 0;
    unsigned base = 10;
    int overflow = 0;
    if (hex_ok && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s += 2;
    }
    if (!*s)
        return TD_ESYNTAX;
    for (; *s; s++) {
        int d;
        if (*s >= '0' && *s <= '9')
            d = *s - '0';
        else if (base == 16 && *s >= 'a' && *s <= 'f')
            d = *s - 'a' + 10;
        else if (base == 16 && *s >= 'A' && *s <= 'F')
            d = *s - 'A' + 10;
        else
            return TD_ESYNTAX;
        v = v * base + (unsigned)d;
        if (v > UINT64_MAX) {
            overflow = 1;
            v = 0;
        }
    }
    if (overflow)
        return TD_ERANGE;
    *out = (uint64_t)v;
    return TD_OK;
}

static int is_known_status(int rc)
{
    return rc >= TD_ESYNTAX && rc <= TD_DONE;
}

static void check_size(const char *s)
{
    uint64_t got = 4242, want = 4242;
    int rc = td_parse_size(s, &got);
    int mrc = model_size(s, &want);
    CHECK(rc == mrc);
    CHECK(got == want); /* on failure both left untouched */
}

static void check_kind_name(const char *s)
{
    int k = -7;
    int rc = td_kind_from_name(s, &k);
    CHECK(rc == TD_OK || rc == TD_EKIND);
    if (rc == TD_OK) {
        CHECK(td_kind_name(k) != NULL);
        CHECK(strcmp(td_kind_name(k), s) == 0);
    } else {
        CHECK(k == -7);
    }
}

static void check_set(td_options *o, int kind, const char *key_given, const char *val)
{
    td_options before = *o, o2 = *o;
    char msg[24], key[256];
    int rc = td_options_set(o, kind, key_given, val);
    CHECK(is_known_status(rc) && rc <= 0);
    CHECK(td_strerror(rc) != NULL);
    /* The message variant agrees, and its message is a NUL-terminated line
     * even in a buffer too small for it. */
    memset(msg, 'x', sizeof msg);
    CHECK(td_options_set_msg(&o2, kind, key_given, val, msg, sizeof msg) == rc);
    CHECK(memchr(msg, '\0', sizeof msg) != NULL || rc == TD_OK);
    CHECK(memcmp(o, &o2, sizeof *o) == 0);
    if (rc != TD_OK) {
        CHECK(memcmp(o, &before, sizeof *o) == 0);
        return;
    }
    /* The documented key grammar: an optional leading "--", and '-' and
     * '_' alike. */
    const char *k = strncmp(key_given, "--", 2) == 0 ? key_given + 2 : key_given;
    size_t kl = strlen(k) < sizeof key - 1 ? strlen(k) : sizeof key - 1;
    for (size_t i = 0; i < kl; i++)
        key[i] = k[i] == '-' ? '_' : k[i];
    key[kl] = '\0';
    CHECK(td_kind_name(kind) != NULL);
    CHECK(td_options_check(kind, o) == TD_OK);
    uint64_t u = 0;
    if (strcmp(key, "seed") == 0) {
        CHECK(model_uint(val, 1, &u) == TD_OK);
        CHECK(o->seed == u);
    } else if (strcmp(key, "threads") == 0) {
        CHECK(model_uint(val, 0, &u) == TD_OK);
        CHECK(u <= UINT32_MAX && o->threads == u);
    } else if (strcmp(key, "algorithm") == 0) {
        CHECK(strcmp(val, "chacha20") == 0 || strcmp(val, "fast") == 0);
    } else if (strcmp(key, "dedup_block") == 0) {
        CHECK(model_size(val, &u) == TD_OK && u == o->dedup_block);
    } else if (strcmp(key, "ratio") == 0) {
        CHECK(isfinite(o->ratio));
    } else if (strcmp(key, "dedup") == 0) {
        CHECK(isfinite(o->dedup) && o->dedup >= 1.0);
    } else {
        CHECK(!"td_options_set accepted an undocumented key");
    }
    /* Whatever was accepted must generate: a small stream equals td_fill.
     * (threads may be huge; 100 bytes never start a thread.) */
    unsigned char a[100], b[100];
    size_t n = 0;
    td_stream *s = NULL;
    CHECK(td_fill((td_kind)kind, o, 12345, a, sizeof a) == TD_OK);
    CHECK(td_stream_open(&s, kind, 20000, o) == TD_OK);
    CHECK(td_stream_seek(s, 12345) == TD_OK);
    CHECK(td_stream_read(s, b, sizeof b, &n) == TD_OK && n == sizeof b);
    CHECK(memcmp(a, b, sizeof a) == 0);
    td_stream_free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 4096)
        return 0;
    int kind = (int)(signed char)data[0];
    /* Mostly valid kinds, so that the option parsers are reached. */
    if (kind >= 0)
        kind %= TD_KIND_COUNT + 1;
    char *text = malloc(size); /* data[1..] plus a final NUL */
    if (!text)
        return 0;
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';

    const char *strs[64];
    size_t nstr = 0;
    for (size_t i = 0; i < size && nstr < 64;) {
        strs[nstr++] = text + i;
        i += strlen(text + i) + 1;
    }
    CHECK(td_strerror(kind) != NULL);

    td_options o;
    td_options_init(&o);
    for (size_t i = 0; i < nstr; i++) {
        check_size(strs[i]);
        check_kind_name(strs[i]);
    }
    for (size_t i = 0; i + 1 < nstr; i += 2)
        check_set(&o, kind, strs[i], strs[i + 1]);
    free(text);
    return 0;
}
