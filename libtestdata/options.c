/* Options: defaults, validation, and parsing from strings (sizes, k=v). */
#define _GNU_SOURCE /* strtod_l, newlocale */
#include "internal.h"

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdlib.h>
#if defined(__APPLE__) || defined(__FreeBSD__)
#include <xlocale.h>
#endif

void td_options_init(td_options *o)
{
    if (!o)
        return;
    memset(o, 0, sizeof *o);
    o->seed = 0;
    o->threads = 1;
    o->algorithm = TD_ALG_CHACHA20;
    o->ratio = 3.0;
    o->dedup = 1.0;
    o->dedup_block = 4096;
}

static int is_pow2(uint64_t v)
{
    return v && !(v & (v - 1));
}

static int kind_accepts(const td_kind_vtbl *vt, const char *key)
{
    if (strcmp(key, "seed") == 0 || strcmp(key, "threads") == 0)
        return 1;
    for (const char *const *k = vt->options; *k; k++)
        if (strcmp(*k, key) == 0)
            return 1;
    return 0;
}

int td_options_check(int kind, const td_options *o)
{
    const td_kind_vtbl *vt = td__kind_get(kind);
    if (!vt)
        return TD_EKIND;
    if (!o)
        return TD_EINVAL;
    if (!(o->dedup >= 1.0) || !isfinite(o->dedup))
        return TD_ERANGE;
    /* Below a sector, a "block" is not what any deduplicator uses, and the
     * per-block work would make generation crawl. */
    if (!is_pow2(o->dedup_block) || o->dedup_block < TD_DEDUP_BLOCK_MIN ||
        o->dedup_block > TD_DEDUP_BLOCK_MAX)
        return TD_ERANGE;
    /* A dedup target on a kind that cannot honour it would be a silent lie. */
    if (o->dedup != 1.0 && !kind_accepts(vt, "dedup"))
        return TD_EOPTION;
    if (o->dedup > TD_DEDUP_MAX)
        return TD_ERANGE;
    return vt->check ? vt->check(o) : TD_OK;
}

/* Suffix multipliers: K M G T P E. */
static int suffix_power(char c)
{
    static const char units[] = "KMGTPE";
    const char *p = strchr(units, c == 'k' ? 'K' : c);
    return (c && p) ? (int)(p - units) + 1 : -1;
}

int td_parse_size(const char *text, uint64_t *size)
{
    uint64_t v = 0, base = 1024, mul = 1;
    const char *p = text;
    int power;

    if (!text || !size)
        return TD_EINVAL;
    if (strcmp(text, "inf") == 0 || strcmp(text, "unbounded") == 0) {
        *size = TD_SIZE_UNBOUNDED;
        return TD_OK;
    }
    if (*p < '0' || *p > '9')
        return TD_ESYNTAX;
    for (; *p >= '0' && *p <= '9'; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - d) / 10)
            return TD_ERANGE;
        v = v * 10 + d;
    }
    if (*p) {
        power = suffix_power(*p);
        if (power < 0)
            return TD_ESYNTAX;
        p++;
        if (strcmp(p, "B") == 0)
            base = 1000;
        else if (strcmp(p, "iB") != 0 && *p)
            return TD_ESYNTAX;
        while (power--) {
            if (mul > UINT64_MAX / base)
                return TD_ERANGE;
            mul *= base;
        }
        if (v && mul > UINT64_MAX / v)
            return TD_ERANGE;
    } else if (p == text) {
        return TD_ESYNTAX;
    }
    *size = v * mul;
    return TD_OK;
}

/* Decimal digits only, or 0x/0X and hex digits when allow_hex.  (strtoull()
 * would also take white space, a sign that negates the value, and octal.) */
static int parse_u64(const char *s, uint64_t *out, int allow_hex)
{
    unsigned base = 10;
    uint64_t v = 0;
    int overflow = 0;

    if (allow_hex && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s += 2;
    }
    if (!*s)
        return TD_ESYNTAX;
    for (; *s; s++) {
        unsigned d;
        if (*s >= '0' && *s <= '9')
            d = (unsigned)(*s - '0');
        else if (base == 16 && *s >= 'a' && *s <= 'f')
            d = (unsigned)(*s - 'a' + 10);
        else if (base == 16 && *s >= 'A' && *s <= 'F')
            d = (unsigned)(*s - 'A' + 10);
        else
            return TD_ESYNTAX;
        if (v > (UINT64_MAX - d) / base)
            overflow = 1;
        v = v * base + d;
    }
    if (overflow)
        return TD_ERANGE;
    *out = v;
    return TD_OK;
}

/* A decimal number as C writes it ("1.5", "2e3"), whatever the process's
 * locale: strtod() would follow LC_NUMERIC (under de_DE, "1.5" is rejected
 * and "1,5" accepted).  strtod_l() with the "C" locale does not; the locale
 * object is made per call, so there is no global state (glibc and musl hand
 * out a static object for "C" without allocating). */
int td__parse_double(const char *s, double *out)
{
    char *end;
    double v;
    int e;

    if (!*s || strchr(" \t\n\v\f\r", *s))
        return TD_ESYNTAX;
    locale_t c = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    if (c == (locale_t)0)
        return TD_ENOMEM;
    errno = 0;
    v = strtod_l(s, &end, c);
    e = errno;
    freelocale(c);
    if (*end)
        return TD_ESYNTAX;
    if (e == ERANGE || !isfinite(v))
        return TD_ERANGE;
    *out = v;
    return TD_OK;
}

int td_options_set(td_options *o, int kind, const char *key, const char *value)
{
    const td_kind_vtbl *vt = td__kind_get(kind);
    td_options n;
    uint64_t u;
    int rc;

    if (!o || !key || !value)
        return TD_EINVAL;
    if (!vt)
        return TD_EKIND;
    if (!kind_accepts(vt, key))
        return TD_EOPTION;
    n = *o;
    if (strcmp(key, "seed") == 0) {
        rc = parse_u64(value, &n.seed, 1);
    } else if (strcmp(key, "threads") == 0) {
        rc = parse_u64(value, &u, 0);
        if (rc == TD_OK && u > UINT32_MAX)
            rc = TD_ERANGE;
        n.threads = (uint32_t)u;
    } else if (strcmp(key, "algorithm") == 0) {
        rc = TD_OK;
        if (strcmp(value, "chacha20") == 0)
            n.algorithm = TD_ALG_CHACHA20;
        else if (strcmp(value, "fast") == 0)
            n.algorithm = TD_ALG_FAST;
        else
            rc = TD_ESYNTAX;
    } else if (strcmp(key, "ratio") == 0) {
        rc = td__parse_double(value, &n.ratio);
    } else if (strcmp(key, "dedup") == 0) {
        rc = td__parse_double(value, &n.dedup);
    } else if (strcmp(key, "dedup_block") == 0) {
        rc = td_parse_size(value, &u);
        if (rc == TD_OK && u > UINT32_MAX)
            rc = TD_ERANGE;
        n.dedup_block = (uint32_t)u;
    } else {
        rc = TD_EOPTION;
    }
    if (rc == TD_OK)
        rc = td_options_check(kind, &n);
    if (rc == TD_OK)
        *o = n;
    return rc;
}
