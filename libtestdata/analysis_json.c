/*
 * td_analysis as JSON: the one rendering behind `testdata analyze --json`
 * and Python's testdata.analyze(), so the keys are written once; and
 * td_profile_comparison, behind `testdata profile --check --json`.
 */
#define _GNU_SOURCE /* newlocale, uselocale */
#include "common.h"

#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#if defined(__APPLE__) || defined(__FreeBSD__)
#include <xlocale.h>
#endif

typedef struct out {
    char *buf;
    size_t cap, len; /* len may pass cap: then the text was truncated */
    int err;
} out;

static void put(out *o, const char *s, size_t n)
{
    if (o->len < o->cap) {
        size_t room = o->cap - 1 - o->len;
        memcpy(o->buf + o->len, s, n < room ? n : room);
    }
    o->len += n;
}

/* printf under the "C" locale, so that a program that set LC_NUMERIC
 * (de_DE: "1,5") still gets JSON numbers; uselocale() is per thread. */
static void putf(out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(out *o, const char *fmt, ...)
{
    char tmp[400]; /* %.6f of DBL_MAX is 316 characters */
    va_list ap;
    locale_t c = newlocale(LC_ALL_MASK, "C", (locale_t)0), old = (locale_t)0;
    if (c != (locale_t)0)
        old = uselocale(c);
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (c != (locale_t)0) {
        uselocale(old);
        freelocale(c);
    } else {
        o->err = TD_ENOMEM;
    }
    if (n < 0 || (size_t)n >= sizeof tmp)
        o->err = TD_EINVAL;
    else
        put(o, tmp, (size_t)n);
}

/* A JSON string.  Bytes that are not UTF-8 (file names can be anything)
 * become \udcXX, the convention of Python's surrogateescape, so the output
 * stays valid JSON and os.fsencode() gives the name back. */
static void put_string(out *o, const char *s, size_t max)
{
    const unsigned char *p = (const unsigned char *)s, *end;
    char esc[8];
    if (!s) {
        put(o, "null", 4);
        return;
    }
    end = p + strnlen(s, max);
    put(o, "\"", 1);
    while (p < end) {
        unsigned c = *p;
        size_t n = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3
                                : (c & 0xF8) == 0xF0 ? 4 : 0;
        int ok = n > 0;
        ok = ok && n <= (size_t)(end - p);
        for (size_t i = 1; ok && i < n; i++)
            ok = (p[i] & 0xC0) == 0x80;
        if (ok && n == 2)
            ok = c >= 0xC2; /* no overlong forms */
        if (ok && n == 3) {
            unsigned v = ((c & 0x0F) << 12) | ((p[1] & 0x3Fu) << 6) | (p[2] & 0x3Fu);
            ok = v >= 0x800 && !(v >= 0xD800 && v <= 0xDFFF);
        }
        if (ok && n == 4) {
            unsigned v = ((c & 0x07) << 18) | ((p[1] & 0x3Fu) << 12) | ((p[2] & 0x3Fu) << 6) |
                         (p[3] & 0x3Fu);
            ok = v >= 0x10000 && v <= 0x10FFFF;
        }
        if (!ok) {
            snprintf(esc, sizeof esc, "\\udc%02x", c);
            put(o, esc, 6);
            p++;
            continue;
        }
        if (c == '"' || c == '\\') {
            esc[0] = '\\';
            esc[1] = (char)c;
            put(o, esc, 2);
        } else if (c < 0x20 || c == 0x7f) {
            snprintf(esc, sizeof esc, "\\u%04x", c);
            put(o, esc, 6);
        } else {
            put(o, (const char *)p, n);
        }
        p += n;
    }
    put(o, "\"", 1);
}

/* A ratio or speed: JSON has no inf or nan (only a caller-built td_analysis has them). */
static void put_ratio(out *o, const char *sep, const char *key, double v)
{
    if (isfinite(v))
        putf(o, "%s\"%s\": %.6g", sep, key, v);
    else
        putf(o, "%s\"%s\": null", sep, key);
}

static int finish(out *o)
{
    if (o->cap)
        o->buf[o->len < o->cap ? o->len : o->cap - 1] = '\0';
    if (o->err)
        return o->err;
    return o->len < o->cap ? TD_OK : TD_ERANGE;
}

int td_analysis_json(const td_analysis *r, const char *file, char *buf, size_t cap)
{
    out o = {buf, cap, 0, 0};
    if (!r || !buf || cap == 0)
        return TD_EINVAL;
    put(&o, "{\"file\": ", 9);
    put_string(&o, file, SIZE_MAX);
    putf(&o, ", \"size\": %llu", (unsigned long long)r->size);
    if (isfinite(r->entropy))
        putf(&o, ", \"entropy\": %.6f", r->entropy);
    else
        put(&o, ", \"entropy\": null", 17);
    putf(&o, ", \"sampled\": %s, \"sampled_bytes\": %llu", r->is_sampled ? "true" : "false",
         (unsigned long long)r->sampled);
    put(&o, ", \"ratios\": {", 13);
    for (int c = 0; c < TD_CODEC_COUNT; c++)
        put_ratio(&o, c ? ", " : "", td_codec_name(c), r->ratio[c]);
    put(&o, "}, \"compressed\": {", 18);
    for (int c = 0; c < TD_CODEC_COUNT; c++)
        putf(&o, "%s\"%s\": %llu", c ? ", " : "", td_codec_name(c),
             (unsigned long long)r->compressed[c]);
    putf(&o, "}, \"dedup\": {\"block\": %u, \"blocks\": %llu, \"unique\": %llu",
         TD_ANALYZE_DEDUP_BLOCK, (unsigned long long)r->dedup_blocks,
         (unsigned long long)r->dedup_unique);
    put_ratio(&o, ", ", "ratio", r->dedup_ratio);
    putf(&o, ", \"estimated\": %s}, \"mb_per_s\": {", r->dedup_is_estimate ? "true" : "false");
    for (int c = 0; c < TD_CODEC_COUNT; c++)
        put_ratio(&o, c ? ", " : "", td_codec_name(c), r->mb_per_s[c]);
    putf(&o, "}, \"synthetic\": %s, \"verdict\": ", r->synthetic ? "true" : "false");
    put_string(&o, r->verdict, sizeof r->verdict);
    put(&o, "}", 1);
    return finish(&o);
}

int td_analysis_json_error(const char *file, const char *error, char *buf, size_t cap)
{
    out o = {buf, cap, 0, 0};
    if (!error || !buf || cap == 0)
        return TD_EINVAL;
    put(&o, "{\"file\": ", 9);
    put_string(&o, file, SIZE_MAX);
    put(&o, ", \"error\": ", 11);
    put_string(&o, error, SIZE_MAX);
    put(&o, "}", 1);
    return finish(&o);
}

/* ", KEY: v", or null where the profile has no figure (have == 0). */
static void put_opt(out *o, const char *key, int have, double v)
{
    if (have)
        put_ratio(o, ", ", key, v);
    else
        putf(o, ", \"%s\": null", key);
}

int td_profile_comparison_json(const td_profile_comparison *c, const char *file, char *buf,
                               size_t cap)
{
    out o = {buf, cap, 0, 0};
    if (!c || !buf || cap == 0)
        return TD_EINVAL;
    put(&o, "{\"file\": ", 9);
    put_string(&o, file, SIZE_MAX);
    putf(&o, ", \"bytes\": %llu, \"piece\": %llu, \"codecs\": {", (unsigned long long)c->bytes,
         (unsigned long long)c->piece);
    for (int k = 0; k < TD_CODEC_COUNT; k++) {
        putf(&o, "%s\"%s\": {", k ? ", " : "", td_codec_name(k));
        put_ratio(&o, "", "ratio", c->ratio[k]);
        put_ratio(&o, ", ", "ns_per_byte", c->ns_per_byte[k]);
        int hr = c->ref_ratio[k] > 0, hn = c->ref_ns_per_byte[k] > 0;
        put_opt(&o, "profile_ratio", hr, c->ref_ratio[k]);
        put_opt(&o, "profile_ns_per_byte", hn, c->ref_ns_per_byte[k]);
        put_opt(&o, "error", hr, hr ? c->ratio[k] / c->ref_ratio[k] - 1 : 0);
        put_opt(&o, "cost", hn, hn ? c->ns_per_byte[k] / c->ref_ns_per_byte[k] : 0);
        put(&o, "}", 1);
    }
    put(&o, "}}", 2);
    return finish(&o);
}
