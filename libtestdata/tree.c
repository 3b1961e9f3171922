/*
 * File trees, the spec (docs/format.md, "Trees"): the tree option table,
 * size distributions as integer quantile tables, exact totals, and the
 * stateless mapping from a file index to its directory, name and size.
 * Writing, verifying and scanning trees is tree_io.c.
 *
 * Platform independence: every size comes from integer arithmetic on a
 * quantile table of 2^16 + 1 points.  The table itself is computed in
 * IEEE-754 double with + - * / and sqrt only (correctly rounded
 * everywhere; this file is built with -ffp-contract=off) through the
 * series below, never through libm's exp/log, whose last bits differ
 * between C libraries.
 */
#include "tree.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>

#ifndef __SIZEOF_INT128__
#error "tree.c needs a 128-bit integer type (unsigned __int128)"
#endif
typedef unsigned __int128 u128;

#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

#define DEFAULT_FILES 100u
#define DEFAULT_FANOUT 8u
#define AUTO_FILES_PER_DIR 32u
#define MAX_DIRS (UINT64_C(1) << 40)

/* ---- the option table ---------------------------------------------------- */

#define ALL_KINDS ((1u << TD_KIND_COUNT) - 1u)

enum { T_FILES, T_TOTAL, T_SIZES, T_DEPTH, T_FANOUT, T_KIND, T_LIKE, T_COUNT };

static const td_option_info tree_rows[T_COUNT] = {
    [T_FILES] = {"files", TD_OPTION_UINT, "N", "number of files", NULL, "0 to 268435456",
                 "100, or --total divided by the mean size", ALL_KINDS, 0},
    [T_TOTAL] = {"total", TD_OPTION_SIZE, "SIZE",
                 "total bytes of all files, hit exactly (sizes are scaled to it)", NULL,
                 "0 to 2^64-2", "the sum of the sizes drawn", ALL_KINDS, 0},
    [T_SIZES] = {"sizes", TD_OPTION_TEXT, "DIST",
                 "file sizes: default, fixed:SIZE, uniform:MIN,MAX, "
                 "lognormal:median=SIZE,sigma=S, pareto:min=SIZE,alpha=A, empirical:FILE "
                 "(lognormal, pareto and default also take ,max=SIZE)",
                 NULL, "a distribution (docs/format.md, Trees)", "default", ALL_KINDS, 0},
    [T_DEPTH] = {"depth", TD_OPTION_UINT, "D", "directory levels below the top", NULL, "0 to 16",
                 "the least giving at most 32 files per directory", ALL_KINDS, 0},
    [T_FANOUT] = {"fanout", TD_OPTION_UINT, "F", "subdirectories of each directory", NULL,
                  "1 to 65536", "8", ALL_KINDS, 0},
    [T_KIND] = {"kind", TD_OPTION_TEXT, "KIND", "the kind of the files' bytes", NULL,
                "a kind, as for gen", "random", ALL_KINDS, 0},
    [T_LIKE] = {"like", TD_OPTION_TEXT, "PROFILE",
                "reproduce a tree profile (testdata tree like DIR): its files, total, sizes, "
                "depth and fan-out, unless given", NULL, "a profile file", "none", ALL_KINDS, 0},
};

size_t td_tree_option_count(void)
{
    return T_COUNT;
}

const td_option_info *td_tree_option_get(size_t index)
{
    return index < T_COUNT ? &tree_rows[index] : NULL;
}

static int row_of(const char *key)
{
    if (key[0] == '-' && key[1] == '-')
        key += 2;
    for (int i = 0; i < T_COUNT; i++)
        if (td__key_eq(key, tree_rows[i].key))
            return i;
    return -1;
}

const td_option_info *td_tree_option_find(const char *key)
{
    int r = key ? row_of(key) : -1;
    return r < 0 ? NULL : &tree_rows[r];
}

/* ---- the object ---------------------------------------------------------- */

int td_tree_new(td_tree **out)
{
    td_tree *t;
    if (!out)
        return TD_EINVAL;
    *out = NULL;
    t = calloc(1, sizeof *t);
    if (!t)
        return TD_ENOMEM;
    t->kind = TD_RANDOM;
    t->fanout = DEFAULT_FANOUT;
    td_options_init(&t->opt);
    *out = t;
    return TD_OK;
}

void td_tree_free(td_tree *t)
{
    if (!t)
        return;
    free(t->sizes);
    free(t->like);
    free(t->q);
    td_options_release(&t->opt); /* the files its "model" and "profile" loaded */
    for (int i = 0; i < t->nsopt; i++) {
        free(t->skey[i]);
        free(t->sval[i]);
    }
    free(t);
}

static int set_u64(const char *key, const char *value, int size, uint64_t max, uint64_t *out,
                   char *msg, size_t cap)
{
    char sp[80], why[256];
    uint64_t v;
    int rc = size ? td_parse_size_msg(value, &v, why, sizeof why) : td__parse_u64(value, &v, 0);
    if (rc == TD_OK && v > max)
        rc = TD_ERANGE;
    if (rc != TD_OK) {
        const td_option_info *r = td_tree_option_find(key);
        const char *range = r ? r->range : "out of range";
        td__opt_spelled(key, sp, sizeof sp);
        if (rc == TD_ESYNTAX) /* what a size is, as for a SIZE argument */
            td__msg(msg, cap, "bad value '%s' for %s: %s (valid: %s)", value, sp,
                    size ? why : "not a whole number", range);
        else
            td__msg(msg, cap, "bad value '%s' for %s: %s", value, sp, range);
        return rc;
    }
    *out = v;
    return TD_OK;
}

static int set_str(char **dst, const char *value)
{
    char *s = strdup(value);
    if (!s)
        return TD_ENOMEM;
    free(*dst);
    *dst = s;
    return TD_OK;
}

int td_tree_set(td_tree *t, const char *key, const char *value, char *msg, size_t cap)
{
    char dummy[1], sp[80];
    uint64_t v;
    int rc, r;

    if (!msg) {
        msg = dummy;
        cap = sizeof dummy;
    }
    if (!t || !key || !value) {
        td__msg(msg, cap, "invalid argument (NULL)");
        return TD_EINVAL;
    }
    if (t->prepared) {
        td__msg(msg, cap, "the tree is prepared already: options cannot change");
        return TD_EINVAL;
    }
    r = row_of(key);
    if (key[0] == '-' && key[1] == '-')
        t->dashed = 1;
    switch (r) {
    case T_FILES:
        rc = set_u64(key, value, 0, TD_TREE_MAX_FILES, &v, msg, cap);
        if (rc == TD_OK) {
            t->files = v;
            t->have_files = 1;
        }
        return rc;
    case T_TOTAL:
        rc = set_u64(key, value, 1, UINT64_MAX - 1, &v, msg, cap);
        if (rc == TD_OK) {
            t->total = v;
            t->have_total = 1;
        }
        return rc;
    case T_DEPTH:
        rc = set_u64(key, value, 0, TD_TREE_MAX_DEPTH, &v, msg, cap);
        if (rc == TD_OK) {
            t->depth = (uint32_t)v;
            t->have_depth = 1;
        }
        return rc;
    case T_FANOUT:
        rc = set_u64(key, value, 0, TD_TREE_MAX_FANOUT, &v, msg, cap);
        if (rc == TD_OK && v == 0) {
            td__msg(msg, cap, "bad value '%s' for %s: 1 to 65536", value,
                    td__opt_spelled(key, sp, sizeof sp));
            return TD_ERANGE;
        }
        if (rc == TD_OK) {
            t->fanout = (uint32_t)v;
            t->have_fanout = 1;
        }
        return rc;
    case T_KIND:
        return td_kind_from_name_msg(value, &t->kind, msg, cap);
    case T_SIZES:
        rc = set_str(&t->sizes, value);
        t->have_sizes = rc == TD_OK;
        return rc;
    case T_LIKE:
        return set_str(&t->like, value);
    default:
        break;
    }
    /* A stream option: kept until td_tree_prepare knows the kind. */
    const char *bare = key[0] == '-' && key[1] == '-' ? key + 2 : key;
    if (!td_option_find(bare)) {
        const char *cand[64];
        size_t n = 0;
        for (int i = 0; i < T_COUNT; i++)
            cand[n++] = tree_rows[i].key;
        for (size_t i = 0; i < td_option_count() && n < 63; i++)
            cand[n++] = td_option_get(i)->key;
        cand[n] = NULL;
        const char *s = td_suggest(bare, (const char *const *)cand);
        if (s)
            td__msg(msg, cap, "unknown option '%s'; did you mean '%s%s'?", key,
                    bare != key ? "--" : "", s);
        else
            td__msg(msg, cap, "unknown option '%s'", key);
        return TD_EOPTION;
    }
    if (t->nsopt >= TD__TREE_MAX_SOPTS) {
        td__msg(msg, cap, "too many options");
        return TD_ERANGE;
    }
    char *k = strdup(key), *val = strdup(value);
    if (!k || !val) {
        free(k);
        free(val);
        return TD_ENOMEM;
    }
    t->skey[t->nsopt] = k;
    t->sval[t->nsopt++] = val;
    return TD_OK;
}

/* ---- deterministic elementary functions ---------------------------------- */

#define LN2 0.69314718055994530942

/* ln x for x > 0: x = m 2^e with m in [sqrt(1/2), sqrt(2)), then
 * ln m = 2 atanh((m-1)/(m+1)) by its series (a fixed number of terms). */
static double d_log(double x)
{
    int e;
    double m = frexp(x, &e);
    if (m < 0.70710678118654752440) {
        m *= 2;
        e--;
    }
    double z = (m - 1) / (m + 1), z2 = z * z, term = z, sum = 0;
    for (int k = 1; k < 60; k += 2) {
        sum += term / k;
        term *= z2;
    }
    return 2 * sum + (double)e * LN2;
}

/* e^x: x = k ln2 + r, |r| <= ln2/2, Taylor series of e^r, times 2^k. */
static double d_exp(double x)
{
    if (x > 700)
        return HUGE_VAL;
    if (x < -700)
        return 0;
    double kf = floor(x / LN2 + 0.5);
    double r = x - kf * LN2, term = 1, sum = 1;
    for (int n = 1; n < 30; n++) {
        term = term * r / n;
        sum += term;
    }
    return ldexp(sum, (int)kf);
}

/* The standard normal quantile (P. J. Acklam's rational approximation,
 * relative error below 1.2e-9). */
static double d_probit(double p)
{
    static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,
                               -2.759285104469687e+02, 1.383577518672690e+02,
                               -3.066479806614716e+01, 2.506628277459239e+00};
    static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02,
                               -1.556989798598866e+02, 6.680131188771972e+01,
                               -1.328068155288572e+01};
    static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01,
                               -2.400758277161838e+00, -2.549732539343734e+00,
                               4.374664141464968e+00, 2.938163982698783e+00};
    static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01,
                               2.445134137142996e+00, 3.754408661907416e+00};
    double q, r;
    if (p < 0.02425) {
        q = sqrt(-2 * d_log(p));
        return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
               ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
    }
    if (p > 1 - 0.02425) {
        q = sqrt(-2 * d_log(1 - p));
        return -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
               ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
    }
    q = p - 0.5;
    r = q * q;
    return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
           (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

/* ---- distributions ------------------------------------------------------- */

/* Probability of table point k: k / 2^16, the two ends pulled in to
 * 2^-20 and 1 - 2^-20 (the extreme quantiles of the unbounded
 * distributions are infinite). */
static double point_u(uint32_t k)
{
    if (k == 0)
        return 1.0 / 1048576.0;
    if (k == TD_TREE_QN)
        return 1.0 - 1.0 / 1048576.0;
    return (double)k / TD_TREE_QN;
}

static uint64_t to_size(double x, uint64_t max)
{
    if (!(x > 0))
        return 0;
    x += 0.5;
    if (x >= (double)max)
        return max;
    return (uint64_t)x;
}

typedef struct dist_params {
    int type; /* 0 lognormal, 1 pareto, 2 default (Impressions) */
    double median, sigma, xm, alpha;
    uint64_t max;
} dist_params;

/* Impressions (Agrawal, Arpaci-Dusseau and Arpaci-Dusseau, FAST'09,
 * Table 2, from the five-year metadata study of FAST'07): file sizes by
 * count are a hybrid of a lognormal body (weight 0.99994, mu 9.48, sigma
 * 2.46 in ln bytes) and a Pareto tail (k 0.91, Xm 512 MiB). */
#define IMP_WEIGHT 0.99994
#define IMP_MU 9.48
#define IMP_SIGMA 2.46
#define IMP_K 0.91
#define IMP_XM 536870912.0

static double clamp_u(double u)
{
    const double lo = 1.0 / 1048576.0, hi = 1.0 - 1.0 / 1048576.0;
    return u < lo ? lo : u > hi ? hi : u;
}

static double quantile(const dist_params *p, double u)
{
    switch (p->type) {
    case 0:
        return p->median * d_exp(p->sigma * d_probit(u));
    case 1:
        return p->xm * d_exp(-d_log(1 - u) / p->alpha);
    default:
        /* One uniform picks the part (u < weight) and the point in it, as
         * Impressions draws a part and then a size. */
        if (u < IMP_WEIGHT)
            return d_exp(IMP_MU + IMP_SIGMA * d_probit(clamp_u(u / IMP_WEIGHT)));
        return IMP_XM * d_exp(-d_log(1 - clamp_u((u - IMP_WEIGHT) / (1 - IMP_WEIGHT))) / IMP_K);
    }
}

static int alloc_table(td_tree *t)
{
    free(t->q);
    t->q = malloc((TD_TREE_QN + 1) * sizeof *t->q);
    if (!t->q)
        return TD_ENOMEM;
    t->dist = TD__DIST_TABLE;
    return TD_OK;
}

static int table_from_params(td_tree *t, const dist_params *p)
{
    int rc = alloc_table(t);
    if (rc != TD_OK)
        return rc;
    for (uint32_t k = 0; k <= TD_TREE_QN; k++)
        t->q[k] = to_size(quantile(p, point_u(k)), p->max);
    return TD_OK;
}

unsigned td__hist_bin(uint64_t s)
{
    if (s < 256)
        return (unsigned)s;
    unsigned e = 63u - (unsigned)__builtin_clzll(s);
    return 256u + (e - 8u) * 64u + (unsigned)((s >> (e - 6u)) & 63u);
}

void td__hist_add(td__hist *h, uint64_t size, uint64_t count)
{
    unsigned b = td__hist_bin(size);
    if (!count)
        return;
    if (!h->count[b] || size < h->min[b])
        h->min[b] = size;
    if (!h->count[b] || size > h->max[b])
        h->max[b] = size;
    h->count[b] += count;
    h->files += count;
    h->total += size * count;
}

/* Quantile table of a histogram: point k is at position k/2^16 of the
 * files sorted by size, inside its bin interpolated linearly from the
 * bin's smallest to its largest size. */
static int table_from_hist(td_tree *t, const td__hist *h)
{
    int rc = alloc_table(t);
    if (rc != TD_OK)
        return rc;
    const u128 C = h->files;
    unsigned b = 0;
    uint64_t before = 0; /* files in the bins below b */
    while (!h->count[b])
        b++;
    for (uint32_t k = 0; k <= TD_TREE_QN; k++) {
        u128 pos = C * k; /* in units of 1/2^16 file */
        while ((u128)(before + h->count[b]) << TD_TREE_QBITS <= pos && k < TD_TREE_QN) {
            unsigned nb = b + 1;
            while (nb < TD_TREE_HBINS && !h->count[nb])
                nb++;
            if (nb >= TD_TREE_HBINS)
                break;
            before += h->count[b];
            b = nb;
        }
        if (k == TD_TREE_QN) { /* the largest size of all */
            unsigned last = TD_TREE_HBINS - 1;
            while (!h->count[last])
                last--;
            b = last;
            before = h->files - h->count[b];
        }
        u128 in = pos - ((u128)before << TD_TREE_QBITS);
        u128 width = (u128)h->count[b] << TD_TREE_QBITS;
        if (in > width)
            in = width;
        t->q[k] = h->min[b] + (uint64_t)((u128)(h->max[b] - h->min[b]) * in / width);
    }
    return TD_OK;
}

/* Read an empirical:FILE histogram: lines "SIZE" or "SIZE COUNT"; blank
 * lines and lines starting with '#' are skipped. */
static int read_hist_file(const char *path, td__hist *h, char *msg, size_t cap)
{
    FILE *f = fopen(path, "r");
    char line[256];
    unsigned long lineno = 0;
    if (!f) {
        int e = errno;
        td__msg(msg, cap, "cannot read '%s': %s", path, strerror(e));
        errno = e;
        return TD_EIO;
    }
    while (fgets(line, sizeof line, f)) {
        char *p = line, *sz, *cnt, *end;
        uint64_t s, c = 1;
        lineno++;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '#' || *p == '\n' || *p == '\r' || !*p)
            continue;
        sz = p;
        while (*p && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r')
            p++;
        end = p;
        while (*p == ' ' || *p == '\t')
            p++;
        cnt = p;
        while (*p && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r')
            p++;
        char save = *end;
        *end = '\0';
        int rc = td_parse_size(sz, &s);
        *end = save;
        if (rc == TD_OK && p > cnt) {
            *p = '\0';
            rc = td__parse_u64(cnt, &c, 0);
        }
        if (rc == TD_OK && s > TD_TREE_MAX_FILE_SIZE)
            rc = TD_ERANGE;
        if (rc == TD_OK && h->files + c < h->files)
            rc = TD_ERANGE;
        if (rc != TD_OK) {
            td__msg(msg, cap,
                    "%s:%lu: not 'SIZE' or 'SIZE COUNT' (a size up to 64 GiB, as `find -type f "
                    "-printf '%%s\\n'` prints)", path, lineno);
            fclose(f);
            return rc;
        }
        td__hist_add(h, s, c);
    }
    fclose(f);
    if (!h->files) {
        td__msg(msg, cap, "%s: no sizes in it", path);
        return TD_ESYNTAX;
    }
    return TD_OK;
}

static const char *const dist_names[] = {"default", "fixed", "uniform", "lognormal",
                                         "pareto", "empirical", NULL};

#define DIST_SYNTAX                                                                          \
    "default[:max=SIZE], fixed:SIZE, uniform:MIN,MAX, lognormal:median=SIZE,sigma=S[,max=SIZE], " \
    "pareto:min=SIZE,alpha=A[,max=SIZE] or empirical:FILE"

/* One "name=value" of a parameter list. */
static int dist_param(const char *item, size_t n, const char *key, char *val, size_t vcap)
{
    size_t kl = strlen(key);
    if (n <= kl || strncmp(item, key, kl) != 0 || item[kl] != '=')
        return 0;
    if (n - kl - 1 >= vcap)
        return -1;
    memcpy(val, item + kl + 1, n - kl - 1);
    val[n - kl - 1] = '\0';
    return 1;
}

static int parse_dist(td_tree *t, const char *key, const char *text, char *msg, size_t cap)
{
    char sp[80], name[32], val[64];
    const char *colon = strchr(text, ':'), *params = colon ? colon + 1 : "";
    size_t nl = colon ? (size_t)(colon - text) : strlen(text);
    int which = -1;
    dist_params p = {0};
    uint64_t a = 0, b = 0;
    int rc;

    td__opt_spelled(key, sp, sizeof sp);
    if (nl < sizeof name) {
        memcpy(name, text, nl);
        name[nl] = '\0';
        for (int i = 0; dist_names[i]; i++)
            if (strcmp(name, dist_names[i]) == 0)
                which = i;
    }
    if (which < 0) {
        const char *s = nl < sizeof name ? td_suggest(name, dist_names) : NULL;
        td__msg(msg, cap, "bad value '%s' for %s: unknown distribution%s%s%s; one of " DIST_SYNTAX,
                text, sp, s ? " (did you mean '" : "", s ? s : "", s ? "'?)" : "");
        return TD_ESYNTAX;
    }
    if (which == 5) { /* empirical:FILE */
        td__hist *h;
        if (!*params) {
            td__msg(msg, cap, "bad value '%s' for %s: empirical needs a file (empirical:FILE)",
                    text, sp);
            return TD_ESYNTAX;
        }
        h = calloc(1, sizeof *h);
        if (!h)
            return TD_ENOMEM;
        rc = read_hist_file(params, h, msg, cap);
        if (rc == TD_OK)
            rc = table_from_hist(t, h);
        free(h);
        return rc;
    }
    if (which == 1 || which == 2) { /* fixed:SIZE, uniform:MIN,MAX */
        const char *comma = strchr(params, ',');
        char first[64];
        size_t fl = comma ? (size_t)(comma - params) : strlen(params);
        int ok = fl < sizeof first && (which == 1 ? !comma : comma != NULL);
        if (ok) {
            memcpy(first, params, fl);
            first[fl] = '\0';
            ok = td_parse_size(first, &a) == TD_OK &&
                 (which == 1 || td_parse_size(comma + 1, &b) == TD_OK);
        }
        if (!ok) {
            td__msg(msg, cap, "bad value '%s' for %s: %s", text, sp,
                    which == 1 ? "fixed:SIZE, e.g. fixed:4K" : "uniform:MIN,MAX, e.g. uniform:0,1M");
            return TD_ESYNTAX;
        }
        if (which == 1)
            b = a;
        if (b < a || b > TD_TREE_MAX_FILE_SIZE) {
            td__msg(msg, cap, "bad value '%s' for %s: sizes from 0 to 64G%s", text, sp,
                    which == 2 ? ", MIN at most MAX" : "");
            return TD_ERANGE;
        }
        t->dist = which == 1 ? TD__DIST_FIXED : TD__DIST_UNIFORM;
        t->dmin = a;
        t->dmax = b;
        return TD_OK;
    }
    /* default, lognormal, pareto: name=value parameters */
    int have_a = 0, have_b = 0;
    const char *need = which == 3 ? "lognormal:median=SIZE,sigma=S[,max=SIZE]"
                       : which == 4 ? "pareto:min=SIZE,alpha=A[,max=SIZE]"
                                    : "default[:max=SIZE]";
    p.type = which == 3 ? 0 : which == 4 ? 1 : 2;
    p.max = which == 0 ? (UINT64_C(1) << 30) : TD_TREE_MAX_FILE_SIZE;
    for (const char *it = params; *it;) {
        size_t n = strcspn(it, ",");
        int got = 0;
        double d;
        uint64_t u;
        if ((got = dist_param(it, n, "max", val, sizeof val)) > 0) {
            rc = td_parse_size(val, &u);
            if (rc != TD_OK || u > TD_TREE_MAX_FILE_SIZE) {
                td__msg(msg, cap, "bad value '%s' for %s: max is a size up to 64G (%s)", text, sp,
                        need);
                return rc != TD_OK ? rc : TD_ERANGE;
            }
            p.max = u;
        } else if (which == 3 && (got = dist_param(it, n, "median", val, sizeof val)) > 0) {
            rc = td_parse_size(val, &u);
            if (rc != TD_OK || u == 0 || u > TD_TREE_MAX_FILE_SIZE) {
                td__msg(msg, cap, "bad value '%s' for %s: median is a size from 1 to 64G (%s)",
                        text, sp, need);
                return rc != TD_OK ? rc : TD_ERANGE;
            }
            p.median = (double)u;
            have_a = 1;
        } else if (which == 4 && (got = dist_param(it, n, "min", val, sizeof val)) > 0) {
            rc = td_parse_size(val, &u);
            if (rc != TD_OK || u == 0 || u > TD_TREE_MAX_FILE_SIZE) {
                td__msg(msg, cap, "bad value '%s' for %s: min is a size from 1 to 64G (%s)",
                        text, sp, need);
                return rc != TD_OK ? rc : TD_ERANGE;
            }
            p.xm = (double)u;
            have_a = 1;
        } else if ((which == 3 && (got = dist_param(it, n, "sigma", val, sizeof val)) > 0) ||
                   (which == 4 && (got = dist_param(it, n, "alpha", val, sizeof val)) > 0)) {
            double lo = which == 3 ? 0 : 0.1, hi = which == 3 ? 10 : 100;
            rc = td__parse_double(val, &d);
            if (rc != TD_OK || d < lo || d > hi) {
                td__msg(msg, cap, "bad value '%s' for %s: %s is a number from %g to %g (%s)", text,
                        sp, which == 3 ? "sigma" : "alpha", lo, hi, need);
                return rc != TD_OK ? rc : TD_ERANGE;
            }
            if (which == 3)
                p.sigma = d;
            else
                p.alpha = d;
            have_b = 1;
        }
        if (got <= 0) {
            td__msg(msg, cap, "bad value '%s' for %s: unknown parameter '%.*s' (%s)", text, sp,
                    (int)n, it, need);
            return TD_ESYNTAX;
        }
        it += n + (it[n] == ',');
    }
    if (which != 0 && (!have_a || !have_b)) {
        td__msg(msg, cap, "bad value '%s' for %s: missing '%s' (%s)", text, sp,
                !have_a ? (which == 3 ? "median" : "min") : (which == 3 ? "sigma" : "alpha"), need);
        return TD_ESYNTAX;
    }
    if (which == 4 && p.xm > (double)p.max) {
        td__msg(msg, cap, "bad value '%s' for %s: min is above max", text, sp);
        return TD_ERANGE;
    }
    return table_from_params(t, &p);
}

/* ---- tree profiles: reading ---------------------------------------------- */

typedef struct jp {
    const char *p, *end;
} jp;

static void jws(jp *j)
{
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\n' || *j->p == '\t' || *j->p == '\r'))
        j->p++;
}

static int jch(jp *j, char c)
{
    jws(j);
    if (j->p < j->end && *j->p == c) {
        j->p++;
        return 1;
    }
    return 0;
}

static int jstr(jp *j, char *buf, size_t cap)
{
    size_t n = 0;
    if (!jch(j, '"'))
        return 0;
    while (j->p < j->end && *j->p != '"') {
        if (*j->p == '\\' && j->p + 1 < j->end)
            j->p++;
        if (n + 1 < cap)
            buf[n++] = *j->p;
        j->p++;
    }
    buf[n] = '\0';
    return jch(j, '"') || (j->p < j->end && 0);
}

static int jnum(jp *j, uint64_t *v)
{
    uint64_t x = 0;
    int any = 0;
    jws(j);
    while (j->p < j->end && *j->p >= '0' && *j->p <= '9') {
        uint64_t d = (uint64_t)(*j->p - '0');
        if (x > (UINT64_MAX - d) / 10)
            return 0;
        x = x * 10 + d;
        j->p++;
        any = 1;
    }
    *v = x;
    return any;
}

/* Skip any JSON value (for keys a later version may add). */
static int jskip(jp *j, int depth)
{
    char tmp[8];
    uint64_t v;
    jws(j);
    if (depth > 32 || j->p >= j->end)
        return 0;
    if (*j->p == '"')
        return jstr(j, tmp, sizeof tmp);
    if (*j->p == '[' || *j->p == '{') {
        char close = *j->p == '[' ? ']' : '}';
        int obj = *j->p == '{';
        j->p++;
        if (jch(j, close))
            return 1;
        do {
            if (obj && (!jstr(j, tmp, sizeof tmp) || !jch(j, ':')))
                return 0;
            if (!jskip(j, depth + 1))
                return 0;
        } while (jch(j, ','));
        return jch(j, close);
    }
    if (*j->p == '-' || (*j->p >= '0' && *j->p <= '9')) {
        while (j->p < j->end && strchr("+-.eE0123456789", *j->p))
            j->p++;
        return 1;
    }
    for (const char *w = "true\0false\0null\0"; *w; w += strlen(w) + 1)
        if ((size_t)(j->end - j->p) >= strlen(w) && strncmp(j->p, w, strlen(w)) == 0) {
            j->p += strlen(w);
            return 1;
        }
    (void)v;
    return 0;
}

typedef struct profile {
    uint64_t version, files, total, depth, fanout;
    int have_files, have_total, have_depth, have_fanout;
    td__hist *hist;
} profile;

static int parse_profile(jp *j, profile *pr)
{
    char key[32], fmt[64] = "";
    if (!jch(j, '{'))
        return 0;
    if (jch(j, '}'))
        return 0;
    do {
        uint64_t v;
        if (!jstr(j, key, sizeof key) || !jch(j, ':'))
            return 0;
        if (strcmp(key, "format") == 0) {
            if (!jstr(j, fmt, sizeof fmt))
                return 0;
        } else if (strcmp(key, "sizes") == 0) {
            if (!jch(j, '['))
                return 0;
            if (!jch(j, ']')) {
                do {
                    uint64_t mn, mx, c;
                    if (!jch(j, '[') || !jnum(j, &mn) || !jch(j, ',') || !jnum(j, &mx) ||
                        !jch(j, ',') || !jnum(j, &c) || !jch(j, ']'))
                        return 0;
                    if (mn > mx || mx > TD_TREE_MAX_FILE_SIZE || td__hist_bin(mn) != td__hist_bin(mx))
                        return 0;
                    td__hist_add(pr->hist, mn, c ? 1 : 0);
                    if (c > 1)
                        td__hist_add(pr->hist, mx, c - 1);
                } while (jch(j, ','));
                if (!jch(j, ']'))
                    return 0;
            }
        } else if (strcmp(key, "version") == 0 || strcmp(key, "files") == 0 ||
                   strcmp(key, "total") == 0 || strcmp(key, "depth") == 0 ||
                   strcmp(key, "fanout") == 0) {
            if (!jnum(j, &v))
                return 0;
            if (key[0] == 'v')
                pr->version = v;
            else if (key[0] == 'f' && key[1] == 'i')
                pr->files = v, pr->have_files = 1;
            else if (key[0] == 't')
                pr->total = v, pr->have_total = 1;
            else if (key[0] == 'd')
                pr->depth = v, pr->have_depth = 1;
            else
                pr->fanout = v, pr->have_fanout = 1;
        } else if (!jskip(j, 0)) {
            return 0;
        }
    } while (jch(j, ','));
    return jch(j, '}') && strcmp(fmt, "testdata-tree-profile") == 0;
}

static int read_profile(td_tree *t, td__hist *h, char *msg, size_t cap)
{
    FILE *f = fopen(t->like, "r");
    char *buf;
    size_t n;
    profile pr = {0};
    jp j;
    if (!f) {
        int e = errno;
        td__msg(msg, cap, "cannot read tree profile '%s': %s", t->like, strerror(e));
        errno = e;
        return TD_EIO;
    }
    buf = malloc(1u << 20);
    if (!buf) {
        fclose(f);
        return TD_ENOMEM;
    }
    n = fread(buf, 1, 1u << 20, f);
    fclose(f);
    pr.hist = h;
    j.p = buf;
    j.end = buf + n;
    int ok = n < (1u << 20) && parse_profile(&j, &pr);
    free(buf);
    if (!ok) {
        td__msg(msg, cap, "'%s' is not a tree profile (the JSON of `testdata tree like DIR`, "
                "docs/format.md)", t->like);
        return TD_ESYNTAX;
    }
    if (pr.version != TD_TREE_PROFILE_VERSION) {
        td__msg(msg, cap, "tree profile '%s' has version %llu; this testdata reads version %d",
                t->like, (unsigned long long)pr.version, TD_TREE_PROFILE_VERSION);
        return TD_ESYNTAX;
    }
    if ((pr.have_files && pr.files > TD_TREE_MAX_FILES) ||
        (pr.have_depth && pr.depth > TD_TREE_MAX_DEPTH) ||
        (pr.have_fanout && (pr.fanout < 1 || pr.fanout > TD_TREE_MAX_FANOUT))) {
        td__msg(msg, cap, "tree profile '%s': files, depth or fanout out of range", t->like);
        return TD_ERANGE;
    }
    if (pr.have_files && !t->have_files)
        t->files = pr.files, t->have_files = 1;
    if (pr.have_total && !t->have_total)
        t->total = pr.total, t->have_total = 1;
    if (pr.have_depth && !t->have_depth)
        t->depth = (uint32_t)pr.depth, t->have_depth = 1;
    if (pr.have_fanout && !t->have_fanout)
        t->fanout = (uint32_t)pr.fanout, t->have_fanout = 1;
    return TD_OK;
}

/* ---- sizes --------------------------------------------------------------- */

static uint64_t splitmix(uint64_t z)
{
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* A keyed permutation of [0, n): a 4-round Feistel network on 2h bits
 * (4^h >= n), walking the cycle until the value is below n. */
static uint64_t permute(const td_tree *t, uint64_t i)
{
    const unsigned h = t->half_bits;
    const uint64_t mask = (UINT64_C(1) << h) - 1;
    uint64_t x = i;
    do {
        uint64_t l = x >> h, r = x & mask;
        for (unsigned k = 0; k < 4; k++) {
            uint64_t f = splitmix(r ^ t->rk[k]) & mask;
            uint64_t nl = r;
            r = l ^ f;
            l = nl;
        }
        x = (l << h) | r;
    } while (x >= t->n);
    return x;
}

/* The draw of file i (docs/format.md, "Draws"): a point in [0, 2^64) of
 * the stratum permute(i) of n equal strata, placed in it by a SplitMix64
 * value, so that the n points cover the distribution evenly (quantiles
 * are right to a stratum) while each file's size is still random. */
static uint64_t draw(const td_tree *t, uint64_t i)
{
    uint64_t j = splitmix(t->k0 + (i + 1) * UINT64_C(0x9e3779b97f4a7c15)) ^ t->k1;
    return (uint64_t)((((u128)permute(t, i)) << 64 | j) / t->n);
}

static uint64_t raw_size(const td_tree *t, uint64_t i)
{
    if (t->dist == TD__DIST_FIXED)
        return t->dmin; /* no draw: it would not change the size */
    uint64_t r = draw(t, i);
    switch (t->dist) {
    case TD__DIST_UNIFORM:
        return t->dmin + (uint64_t)(((u128)r * (t->dmax - t->dmin + 1)) >> 64);
    default: {
        uint32_t k = (uint32_t)(r >> 48);
        uint64_t f = (r >> 16) & 0xffffffffu, a = t->q[k], b = t->q[k + 1];
        return b >= a ? a + (uint64_t)(((u128)(b - a) * f) >> 32)
                      : a - (uint64_t)(((u128)(a - b) * f) >> 32);
    }
    }
}

uint64_t td__tree_size(const td_tree *t, uint64_t i)
{
    uint64_t raw = raw_size(t, i);
    if (!t->scale)
        return raw;
    u128 sum = ((u128)t->sum_raw_hi << 64) | t->sum_raw_lo;
    if (sum == 0)
        return t->target / t->n + (i < t->target % t->n);
    return (uint64_t)((u128)raw * t->target / sum) + (i < t->remainder);
}

/* ---- directories and names ----------------------------------------------- */

static int digits(uint64_t v)
{
    int d = 1;
    while (v >= 10) {
        v /= 10;
        d++;
    }
    return d;
}

void td__tree_dir_files(const td_tree *t, uint64_t j, uint64_t *first, uint64_t *end)
{
    *first = (uint64_t)((u128)j * t->n / t->ndirs);
    *end = (uint64_t)((u128)(j + 1) * t->n / t->ndirs);
}

uint64_t td__tree_file_dir(const td_tree *t, uint64_t i)
{
    /* The largest j with floor(j n / M) <= i. */
    uint64_t j = (uint64_t)(((u128)(i + 1) * t->ndirs + t->n - 1) / t->n) - 1, a, b;
    for (;;) {
        td__tree_dir_files(t, j, &a, &b);
        if (a > i)
            j--;
        else if (b <= i)
            j++;
        else
            return j;
    }
}

size_t td__tree_dir_path(const td_tree *t, uint64_t j, char *buf, size_t cap)
{
    uint32_t dig[TD_TREE_MAX_DEPTH];
    unsigned level = 0;
    size_t n = 0;
    while (level <= t->depth && t->level_first[level + 1] <= j)
        level++;
    uint64_t off = j - t->level_first[level];
    for (unsigned l = level; l > 0; l--) {
        dig[l - 1] = (uint32_t)(off % t->fanout);
        off /= t->fanout;
    }
    buf[0] = '\0';
    for (unsigned l = 0; l < level; l++) {
        if (n + (size_t)t->dir_width + 3 >= cap)
            break;
        if (l)
            buf[n++] = '/';
        buf[n++] = 'd';
        n = (size_t)(td__put_dec(buf + n, dig[l], t->dir_width) - buf);
    }
    buf[n] = '\0';
    return n;
}

size_t td__tree_file_name(const td_tree *t, uint64_t i, char *buf, size_t cap)
{
    size_t el = strlen(t->ext);
    if (cap < (size_t)t->file_width + el + 24) {
        int w = snprintf(buf, cap, "f%0*llu%s", t->file_width, (unsigned long long)i, t->ext);
        return w < 0 ? 0 : (size_t)w;
    }
    size_t n = 0;
    buf[n++] = 'f';
    n = (size_t)(td__put_dec(buf + n, i, t->file_width) - buf);
    memcpy(buf + n, t->ext, el + 1);
    return n + el;
}

uint64_t td__tree_name_index(const td_tree *t, uint64_t j, const char *name)
{
    uint64_t v = 0, a, b;
    int i;
    if (name[0] != 'f')
        return UINT64_MAX;
    for (i = 0; i < t->file_width; i++) {
        char c = name[1 + i];
        if (c < '0' || c > '9')
            return UINT64_MAX;
        v = v * 10 + (uint64_t)(c - '0');
    }
    if (strcmp(name + 1 + t->file_width, t->ext) != 0)
        return UINT64_MAX;
    td__tree_dir_files(t, j, &a, &b);
    return v >= a && v < b ? v : UINT64_MAX;
}

/* ---- prepare ------------------------------------------------------------- */

static uint64_t mean_size(const td_tree *t)
{
    if (t->dist == TD__DIST_FIXED)
        return t->dmin;
    if (t->dist == TD__DIST_UNIFORM)
        return t->dmin + (t->dmax - t->dmin) / 2;
    u128 s = 0;
    for (uint32_t k = 0; k < TD_TREE_QN; k++)
        s += (u128)t->q[k] + t->q[k + 1];
    return (uint64_t)(s / (2 * (u128)TD_TREE_QN));
}

/* An option's name in a message, as the caller spells options. */
#define NAME(k) (t->dashed ? "--" k : "option '" k "'")

int td_tree_prepare(td_tree *t, char *msg, size_t cap)
{
    char dummy[1];
    td__hist *h = NULL;
    uint8_t key[32];
    int rc = TD_OK;

    if (!msg) {
        msg = dummy;
        cap = sizeof dummy;
    }
    if (!t)
        return TD_EINVAL;
    if (t->prepared)
        return TD_OK;
    rc = td__sodium_ready();
    if (rc != TD_OK)
        return rc;
    /* From a failed prepare.  The options own the files "model" and
     * "profile" load; given twice, the last wins and the first is freed. */
    td_options_release(&t->opt);
    for (int i = 0; i < t->nsopt; i++) {
        rc = td_options_set_msg(&t->opt, t->kind, t->skey[i], t->sval[i], msg, cap);
        if (rc != TD_OK)
            return rc;
    }
    rc = td_options_check_msg(t->kind, &t->opt, msg, cap);
    if (rc != TD_OK)
        return rc;
    if (t->like) {
        h = calloc(1, sizeof *h);
        if (!h)
            return TD_ENOMEM;
        rc = read_profile(t, h, msg, cap);
        if (rc == TD_OK && !t->have_sizes && h->files)
            rc = table_from_hist(t, h);
        else if (rc == TD_OK && !t->have_sizes && !t->have_total) {
            t->dist = TD__DIST_FIXED; /* a profile of empty files (or none) */
            t->dmin = t->dmax = 0;
        }
        free(h);
        if (rc != TD_OK)
            return rc;
        if (!t->have_sizes && !t->q && t->have_total && t->total) {
            t->dist = TD__DIST_FIXED;
            t->dmin = t->dmax = 1;
        }
    }
    if (t->have_sizes)
        rc = parse_dist(t, t->dashed ? "--sizes" : "sizes", t->sizes, msg, cap);
    else if (!t->like)
        rc = parse_dist(t, "sizes", "default", msg, cap);
    if (rc != TD_OK)
        return rc;

    uint64_t mean = mean_size(t);
    if (t->have_files)
        t->n = t->files;
    else if (t->have_total)
        t->n = !t->total ? 0 : TD_MAX(1, mean ? (t->total + mean / 2) / mean : 1);
    else
        t->n = DEFAULT_FILES;
    if (t->n > TD_TREE_MAX_FILES) {
        td__msg(msg, cap, "%s %llu makes %llu files of the mean size %llu: more than the "
                "268435456 a tree may have (give the number of files, or larger sizes)",
                NAME("total"), (unsigned long long)t->total, (unsigned long long)t->n, (unsigned long long)mean);
        return TD_ERANGE;
    }
    if (t->have_total && t->total && !t->n) {
        td__msg(msg, cap, "%s %llu needs at least one file (%s is 0)", NAME("total"),
                (unsigned long long)t->total, NAME("files"));
        return TD_ERANGE;
    }
    td__derive_key("libtestdata tree v1", t->opt.seed, key);
    t->k0 = td__load64le(key);
    t->k1 = td__load64le(key + 8);
    for (unsigned k = 0; k < 4; k++)
        t->rk[k] = splitmix(td__load64le(key + 16) + k * td__load64le(key + 24));
    t->half_bits = 1;
    while (t->half_bits < 32 && (UINT64_C(1) << (2 * t->half_bits)) < t->n)
        t->half_bits++;

    /* Sizes: a first pass for their sum; with --total a second for the
     * bytes the scaling rounds away, which files 0 .. remainder-1 get. */
    u128 sum = 0;
    for (uint64_t i = 0; i < t->n; i++)
        sum += raw_size(t, i);
    if (t->have_total) {
        t->scale = 1;
        t->target = t->total;
        t->sum_raw_lo = (uint64_t)sum;
        t->sum_raw_hi = (uint64_t)(sum >> 64);
        uint64_t biggest = 0;
        if (sum) {
            u128 got = 0;
            for (uint64_t i = 0; i < t->n; i++) {
                uint64_t s = (uint64_t)((u128)raw_size(t, i) * t->target / sum);
                got += s;
                biggest = TD_MAX(biggest, s);
            }
            t->remainder = t->target - (uint64_t)got;
            biggest += t->remainder > 0;
        } else if (t->n) {
            biggest = t->target / t->n + (t->target % t->n != 0);
        }
        if (biggest > TD_TREE_MAX_FILE_SIZE) {
            td__msg(msg, cap, "%s %llu over %llu files makes a file of %llu bytes: more than "
                    "the 64 GiB a tree file may have (give more files)",
                    NAME("total"), (unsigned long long)t->total, (unsigned long long)t->n,
                    (unsigned long long)biggest);
            return TD_ERANGE;
        }
        t->bytes = t->target;
    } else {
        if (sum > UINT64_MAX) {
            td__msg(msg, cap, "the sizes add up to more than 2^64 bytes");
            return TD_ERANGE;
        }
        t->bytes = (uint64_t)sum;
    }

    /* Directories. */
    uint64_t F = t->fanout;
    unsigned D = 0;
    if (t->have_depth) {
        D = t->depth;
    } else {
        uint64_t dirs = 1, level = 1;
        while (D < TD_TREE_MAX_DEPTH && dirs * AUTO_FILES_PER_DIR < t->n && dirs < MAX_DIRS / F) {
            level *= F;
            dirs += level;
            D++;
        }
    }
    uint64_t level = 1, first = 0;
    for (unsigned l = 0; l <= D; l++) {
        t->level_first[l] = first;
        if (first + level > MAX_DIRS) {
            td__msg(msg, cap, "%s %u with %s %u makes more than 2^40 directories",
                    NAME("depth"), D, NAME("fanout"), t->fanout);
            return TD_ERANGE;
        }
        first += level;
        if (l < D) {
            if (level > MAX_DIRS / F) {
                td__msg(msg, cap, "%s %u with %s %u makes more than 2^40 directories",
                        NAME("depth"), D, NAME("fanout"), t->fanout);
                return TD_ERANGE;
            }
            level *= F;
        }
    }
    t->level_first[D + 1] = first;
    t->ndirs = first;
    t->depth = D;
    t->dir_width = digits(F - 1);
    t->file_width = digits(t->n ? t->n - 1 : 0);
    t->ext = t->kind == TD_TEXT ? ".txt" : ".bin";
    t->prepared = 1;
    return TD_OK;
}

/* ---- access -------------------------------------------------------------- */

uint64_t td_tree_count(const td_tree *t)
{
    return t && t->prepared ? t->n : 0;
}

uint64_t td_tree_total(const td_tree *t)
{
    return t && t->prepared ? t->bytes : 0;
}

int td_tree_kind(const td_tree *t)
{
    return t ? t->kind : TD_RANDOM;
}

int td_tree_options(const td_tree *t, td_options *o)
{
    if (!t || !o || !t->prepared)
        return TD_EINVAL;
    *o = t->opt;
    return TD_OK;
}

int td_tree_shape(const td_tree *t, uint32_t *depth, uint32_t *fanout)
{
    if (!t || !t->prepared)
        return TD_EINVAL;
    if (depth)
        *depth = t->depth;
    if (fanout)
        *fanout = t->fanout;
    return TD_OK;
}

int td_tree_file(const td_tree *t, uint64_t index, td_tree_entry *e)
{
    size_t n;
    if (!t || !e || !t->prepared)
        return TD_EINVAL;
    if (index >= t->n)
        return TD_ERANGE;
    memset(e, 0, sizeof *e);
    e->index = index;
    e->size = td__tree_size(t, index);
    e->offset = index * TD_TREE_STRIDE;
    e->dir = td__tree_file_dir(t, index);
    e->kind = t->kind;
    n = td__tree_dir_path(t, e->dir, e->path, sizeof e->path);
    if (n)
        e->path[n++] = '/';
    td__tree_file_name(t, index, e->path + n, sizeof e->path - n);
    return TD_OK;
}

int td_tree_finding_message(const td_tree_finding *f, char *buf, size_t cap)
{
    const char *p;
    if (!f || !buf || !cap)
        return TD_EINVAL;
    p = f->path ? f->path : "?";
    switch (f->what) {
    case TD_TREE_MISSING:
        return td__msg(buf, cap, "missing: %s (%llu bytes)", p, (unsigned long long)f->expected);
    case TD_TREE_WRONG_SIZE:
        return td__msg(buf, cap, "wrong size: %s is %llu bytes, not %llu; first bad byte at %llu",
                       p, (unsigned long long)f->actual, (unsigned long long)f->expected,
                       (unsigned long long)f->first_bad);
    case TD_TREE_CHANGED:
        return td__msg(buf, cap,
                       "changed: %s differs from the stream: first difference at byte %llu, "
                       "%llu differing bytes of %llu",
                       p, (unsigned long long)f->first_bad, (unsigned long long)f->mismatches,
                       (unsigned long long)f->expected);
    case TD_TREE_EXTRA:
        return td__msg(buf, cap, "extra: %s (not a file of the tree)", p);
    case TD_TREE_UNREADABLE:
        return td__msg(buf, cap, "unreadable: %s: %s", p, strerror(f->error));
    default:
        return td__msg(buf, cap, "unknown finding %d: %s", f->what, p);
    }
}

void td_tree_io_init(td_tree_io *io)
{
    if (!io)
        return;
    memset(io, 0, sizeof *io);
    io->count = UINT64_MAX;
}
