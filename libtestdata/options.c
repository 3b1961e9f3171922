/*
 * Options: one declarative table (one row per option: key, type, range,
 * default, the kinds it applies to, a line of help) from which defaults,
 * parsing from strings, validation, messages and the front ends' help are
 * all derived.  A new option is one row here plus its td_options field.
 */
#include "kind.h"
#include "like.h"
#include "text_model.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>

#define ALL_KINDS ((1u << TD_KIND_COUNT) - 1u)
#define K(kind) (1u << (kind))
#define DEDUP_KINDS (K(TD_RANDOM) | K(TD_TEXT) | K(TD_COMPRESSIBLE) | K(TD_LIKE))

/* How a value is stored in td_options. */
enum { ST_U64, ST_U32, ST_DOUBLE, ST_MODEL, ST_PROFILE /* a const td_profile * */ };

/* Row flags. */
enum {
    CHECK_ALWAYS = 1, /* range-checked whatever the kind (a shared field) */
    STRICT = 2,       /* a non-default value on a kind it does not apply to is
                         an error: silently ignoring it would be a lie */
    HEX = 4,          /* TD_OPTION_UINT that also takes 0x... */
    POW2 = 8,         /* a power of two within [min, max] */
    UNSET0 = 16,      /* 0 is also valid: "not set" (the default) */
};

typedef struct opt_row {
    td_option_info info;
    size_t field;      /* offsetof(td_options, ...) */
    int store;         /* ST_* */
    unsigned flags;
    double min, max;   /* numeric range (integers are exact below 2^53) */
    double def;        /* default, numerically */
} opt_row;

static const opt_row rows[] = {
    {{"seed", TD_OPTION_UINT, "N", "stream seed", NULL, "0 to 2^64-1, decimal or 0x hex", "0",
      ALL_KINDS, 0},
     offsetof(td_options, seed), ST_U64, HEX, 0, 18446744073709551615.0, 0},
    {{"threads", TD_OPTION_UINT, "N", "generator threads; the bytes do not change",
      NULL, "0 to 4294967295, 0 meaning all cores; at most 256 are used", "1", ALL_KINDS, 0},
     offsetof(td_options, threads), ST_U32, 0, 0, 4294967295.0, 1},
    {{"algorithm", TD_OPTION_CHOICE, "NAME",
      "generator: chacha20 is cryptographic, fast much faster but not",
      td__algorithm_names, "chacha20 or fast", "chacha20", K(TD_RANDOM), 0},
     offsetof(td_options, algorithm), ST_U32, 0, 0, 1, TD_ALG_CHACHA20},
    {{"ratio", TD_OPTION_REAL, "R", "target compression ratio", NULL, "1 to 1000", "3",
      K(TD_COMPRESSIBLE), 0},
     offsetof(td_options, ratio), ST_DOUBLE, 0, 1, 1000, 3},
    {{"compress_block", TD_OPTION_SIZE, "SIZE",
      "the ratio holds when independent, aligned SIZE-byte pieces are compressed", NULL,
      "a power of two from 512 to 1M, or 0 (not set: tuned for whole streams)", "0",
      K(TD_COMPRESSIBLE), 0},
     offsetof(td_options, compress_block), ST_U32, CHECK_ALWAYS | STRICT | POW2 | UNSET0,
     TD_COMPRESS_BLOCK_MIN, TD_COMPRESS_BLOCK_MAX, 0},
    {{"dedup", TD_OPTION_REAL, "D",
      "a fixed-block deduplicator finds D times fewer unique blocks than blocks", NULL,
      "1 to 1048576", "1", DEDUP_KINDS, 0},
     offsetof(td_options, dedup), ST_DOUBLE, CHECK_ALWAYS | STRICT, 1, TD_DEDUP_MAX_RATIO, 1},
    {{"dedup_block", TD_OPTION_SIZE, "SIZE", "block size of the deduplicator", NULL,
      "a power of two from 512 to 1G", "4096", DEDUP_KINDS, 0},
     offsetof(td_options, dedup_block), ST_U32, CHECK_ALWAYS | POW2, TD_DEDUP_BLOCK_MIN,
     TD_DEDUP_BLOCK_MAX, 4096},
    /* A file name: set loads the model (the options own it); numerically
     * 1 when a model is given, so STRICT refuses it for other kinds. */
    {{"model", TD_OPTION_TEXT, "FILE", "text model to generate from (testdata model build)",
      NULL, "a text model file", "built-in English", K(TD_TEXT), 0},
     offsetof(td_options, model), ST_MODEL, CHECK_ALWAYS | STRICT, 0, 1, 0},
    /* A pointer, not a number: td_options_set takes the name of a built-in
     * profile, or a profile file, which it loads (td_profile_open) for the
     * options to own, as "model" does. */
    {{"profile", TD_OPTION_TEXT, "PROFILE",
      "statistics of a sample to generate data like (testdata profile)",
      td__like_builtin_names, "a built-in profile (english, html, source, ...) or a profile file",
      "english", K(TD_LIKE), 0},
     offsetof(td_options, profile), ST_PROFILE, 0, 0, 0, 0},
};

#define NROWS (sizeof rows / sizeof rows[0])

size_t td_option_count(void)
{
    return NROWS;
}

const td_option_info *td_option_get(size_t index)
{
    return index < NROWS ? &rows[index].info : NULL;
}

static const opt_row *find_row(const char *key)
{
    for (size_t i = 0; i < NROWS; i++)
        if (td__key_eq(rows[i].info.key, key))
            return &rows[i];
    return NULL;
}

const td_option_info *td_option_find(const char *key)
{
    const opt_row *r = key ? find_row(key) : NULL;
    return r ? &r->info : NULL;
}

int td_option_applies(const td_option_info *opt, int kind)
{
    return opt && td__kind_get(kind) && (opt->kinds & K(kind)) != 0;
}

static double get_value(const opt_row *r, const td_options *o)
{
    const char *p = (const char *)o + r->field;
    uint64_t u64;
    uint32_t u32;
    double d;
    switch (r->store) {
    case ST_U64: memcpy(&u64, p, sizeof u64); return (double)u64;
    case ST_U32: memcpy(&u32, p, sizeof u32); return u32;
    case ST_MODEL: return o->model != NULL;
    case ST_PROFILE: return 0; /* any pointer (NULL: the default profile) */
    default: memcpy(&d, p, sizeof d); return d;
    }
}

void td_options_init(td_options *o)
{
    if (!o)
        return;
    memset(o, 0, sizeof *o);
    for (size_t i = 0; i < NROWS; i++) {
        const opt_row *r = &rows[i];
        char *p = (char *)o + r->field;
        uint32_t u32 = (uint32_t)r->def;
        uint64_t u64 = (uint64_t)r->def;
        switch (r->store) {
        case ST_U64: memcpy(p, &u64, sizeof u64); break;
        case ST_U32: memcpy(p, &u32, sizeof u32); break;
        case ST_MODEL: o->model = NULL; break;
        case ST_PROFILE: break; /* NULL, from the memset */
        default: memcpy(p, &r->def, sizeof r->def); break;
        }
    }
}

/* Is value v acceptable for row r?  (NaN is never.) */
static int in_range(const opt_row *r, double v)
{
    if ((r->flags & UNSET0) && v == 0)
        return 1;
    if (!(v >= r->min && v <= r->max))
        return 0;
    if (r->flags & POW2)
        return td__is_pow2((uint64_t)v);
    if (r->info.type == TD_OPTION_CHOICE)
        return v == floor(v);
    return 1;
}

/* Why v is refused by row r: a size inside the bounds that is not a power
 * of two is not "out of range" to its reader (--compress-block 3000). */
static const char *range_word(const opt_row *r, double v)
{
    return (r->flags & POW2) && v >= r->min && v <= r->max ? "not a power of two"
                                                           : "out of range";
}

static const char *kinds_of(const opt_row *r, char *buf, size_t cap)
{
    buf[0] = '\0';
    for (int k = 0; k < TD_KIND_COUNT; k++)
        if ((r->info.kinds & K(k)) && td_kind_name(k))
            (void)td__msg(buf + strlen(buf), cap - strlen(buf), "%s%s", buf[0] ? ", " : "",
                          td_kind_name(k));
    return buf;
}

int td_options_check_msg(int kind, const td_options *o, char *msg, size_t cap)
{
    const td_kind_vtbl *vt = td__kind_get(kind);
    char kinds[128];
    int rc;

    if (!vt)
        return msg ? (td__msg(msg, cap, "unknown kind %d", kind), TD_EKIND) : TD_EKIND;
    if (!o)
        return msg ? (td__msg(msg, cap, "no options given"), TD_EINVAL) : TD_EINVAL;
    for (size_t i = 0; i < NROWS; i++) {
        const opt_row *r = &rows[i];
        int applies = (r->info.kinds & K(kind)) != 0;
        double v = get_value(r, o);
        if (!applies && !(r->flags & CHECK_ALWAYS))
            continue;
        if (!applies && (r->flags & STRICT) && v != r->def && v >= r->min) {
            if (msg)
                td__msg(msg, cap, "option '%s' does not apply to kind %s (it applies to: %s)",
                        r->info.key, vt->name, kinds_of(r, kinds, sizeof kinds));
            return TD_EOPTION;
        }
        if (!in_range(r, v)) {
            if (msg)
                td__msg(msg, cap, "option '%s' is %.17g: %s (%s)", r->info.key, v,
                        range_word(r, v), r->info.range);
            return TD_ERANGE;
        }
    }
    rc = vt->check ? vt->check(o) : TD_OK;
    if (rc != TD_OK && msg)
        td__msg(msg, cap, "options do not fit kind %s: %s", vt->name, td_strerror(rc));
    return rc;
}

int td_options_check(int kind, const td_options *o)
{
    return td_options_check_msg(kind, o, NULL, 0);
}

int td__options_inputs(const td_options *o, td__file_id in[2], const char *what[2])
{
    int n = 0;
    if (o && o->model && o->model->src.set) {
        if (what)
            what[n] = "text model";
        in[n++] = o->model->src;
    }
    if (o && o->profile && o->profile->src.set) {
        if (what)
            what[n] = "profile";
        in[n++] = o->profile->src;
    }
    return n;
}

int td_options_check_output(const td_options *o, const char *path, char *msg, size_t cap)
{
    if (!path)
        return TD_EINVAL;
    td__file_id out = td__file_id_path(path), in[2];
    const char *what[2];
    int n = td__options_inputs(o, in, what);
    for (int i = 0; i < n; i++)
        if (td__file_id_eq(in[i], out)) {
            if (msg && cap)
                snprintf(msg, cap, "'%s' is the %s the data is generated from: it would be "
                         "replaced (choose another output)", path, what[i]);
            return TD_EINVAL;
        }
    return TD_OK;
}

/* Parse text for row r into *v; TD_OK, TD_ESYNTAX, TD_ERANGE or TD_ENOMEM. */
static int parse_value(const opt_row *r, const char *text, double *v, uint64_t *u)
{
    int rc;
    switch (r->info.type) {
    case TD_OPTION_UINT:
        rc = td__parse_u64(text, u, (r->flags & HEX) != 0);
        *v = (double)*u;
        if (rc == TD_OK && r->store == ST_U32 && *u > UINT32_MAX)
            rc = TD_ERANGE;
        return rc;
    case TD_OPTION_SIZE:
        rc = td_parse_size(text, u);
        *v = (double)*u;
        return rc;
    case TD_OPTION_REAL:
        return td__parse_double(text, v);
    case TD_OPTION_TEXT:
        if (r->store == ST_PROFILE) { /* a built-in name, else (0) a file */
            *v = 0;
            *u = (uintptr_t)td_profile_builtin(text);
            return *text ? TD_OK : TD_ESYNTAX;
        }
        *v = 1; /* a model file: loaded by td_options_set_msg */
        return *text ? TD_OK : TD_ESYNTAX;
    default: /* TD_OPTION_CHOICE */
        for (uint32_t i = 0; r->info.values[i]; i++)
            if (strcmp(r->info.values[i], text) == 0) {
                *u = i;
                *v = i;
                return TD_OK;
            }
        return TD_ESYNTAX;
    }
}

static void store_value(const opt_row *r, td_options *o, double v, uint64_t u)
{
    char *p = (char *)o + r->field;
    uint32_t u32 = (uint32_t)u;
    switch (r->store) {
    case ST_U64: memcpy(p, &u, sizeof u); break;
    case ST_U32: memcpy(p, &u32, sizeof u32); break;
    case ST_PROFILE: {
        const td_profile *pf = (const td_profile *)(uintptr_t)u;
        memcpy(p, &pf, sizeof pf);
        break;
    }
    default: memcpy(p, &v, sizeof v); break;
    }
}

/* Edit distance with adjacent transpositions counting one (optimal string
 * alignment): "fats" is one step from "fast".  '-' and '_' are alike when
 * comparing keys. */
static unsigned osa_distance(const char *a, size_t al, const char *b, size_t bl, int is_key)
{
    unsigned d[64][64];
    for (size_t i = 0; i <= al; i++)
        d[i][0] = (unsigned)i;
    for (size_t j = 0; j <= bl; j++)
        d[0][j] = (unsigned)j;
    for (size_t i = 1; i <= al; i++) {
        for (size_t j = 1; j <= bl; j++) {
            char x = a[i - 1], y = b[j - 1];
            if (is_key) {
                x = x == '-' ? '_' : x;
                y = y == '-' ? '_' : y;
            }
            unsigned v = TD_MIN(d[i - 1][j] + 1, d[i][j - 1] + 1);
            v = TD_MIN(v, d[i - 1][j - 1] + (x != y));
            if (i > 1 && j > 1 && x == b[j - 2] && a[i - 2] == y)
                v = TD_MIN(v, d[i - 2][j - 2] + 1);
            d[i][j] = v;
        }
    }
    return d[al][bl];
}

/* The closest of `n` candidates to `word` (edit distance at most a third of
 * its length, at least 1), or NULL. */
static const char *closest(const char *word, const char *const *cand, size_t n, int is_key)
{
    const char *best = NULL;
    size_t wl = strlen(word);
    unsigned best_d = wl / 3 > 0 ? (unsigned)(wl / 3) : 1;
    if (wl >= 63)
        return NULL;
    for (size_t c = 0; c < n; c++) {
        size_t sl = strlen(cand[c]);
        if (sl >= 63)
            continue;
        unsigned dist = osa_distance(word, wl, cand[c], sl, is_key);
        if (dist <= best_d && (!best || dist < best_d)) {
            best = cand[c];
            best_d = dist;
        }
    }
    return best;
}

const char *td_suggest(const char *word, const char *const *candidates)
{
    size_t n = 0;
    if (!word || !candidates)
        return NULL;
    while (candidates[n])
        n++;
    return closest(word, candidates, n, 0);
}

static void unknown_key_msg(const char *key, int kind, char *msg, size_t cap)
{
    const char *keys[NROWS];
    size_t n = 0;
    for (size_t i = 0; i < NROWS; i++)
        if (rows[i].info.kinds & K(kind))
            keys[n++] = rows[i].info.key;
    int dashed = key[0] == '-' && key[1] == '-';
    const char *bare = dashed ? key + 2 : key;
    const char *s = closest(bare, keys, n, 1);
    if (!s) { /* maybe an option of another kind */
        n = 0;
        for (size_t i = 0; i < NROWS; i++)
            keys[n++] = rows[i].info.key;
        s = closest(bare, keys, n, 1);
    }
    if (s && dashed) {
        char d[64];
        (void)td__msg(d, sizeof d, "%s", s);
        for (char *p = d; *p; p++)
            *p = *p == '_' ? '-' : *p;
        td__msg(msg, cap, "unknown option '%s'; did you mean '--%s'?", key, d);
    } else if (s) {
        td__msg(msg, cap, "unknown option '%s'; did you mean '%s'?", key, s);
    } else {
        td__msg(msg, cap, "unknown option '%s'", key);
    }
}

/* What a size is: td_parse_size_msg's words, which size options repeat so
 * that --dedup-block x is explained as a SIZE argument is. */
static const char size_forms[] =
    "not a size: a whole number of bytes, with an optional suffix K M G T P E (powers of 1024; "
    "also KiB MiB ...), KB MB GB TB PB EB (powers of 1000) or b (512), or inf";

static void bad_value_msg(const opt_row *r, const char *given, const char *value, double v,
                          int rc, char *msg, size_t cap)
{
    static const char *const not_a[] = {[TD_OPTION_UINT] = "not a whole number",
                                         [TD_OPTION_SIZE] = size_forms,
                                         [TD_OPTION_REAL] = "not a number",
                                         [TD_OPTION_CHOICE] = "",
                                         [TD_OPTION_TEXT] = "empty"};
    char name[80];
    td__opt_spelled(given, name, sizeof name);
    if (r->info.values) {
        char list[192];
        size_t n = 0;
        while (r->info.values[n])
            n++;
        td__join(list, sizeof list, r->info.values);
        const char *s = closest(value, r->info.values, n, 0);
        if (r->info.type == TD_OPTION_TEXT) { /* profile */
            char why[384];
            td__msg(msg, cap, "bad value '%s' for %s: %s", value, name,
                    td__profile_unknown_msg(why, sizeof why, value, 1));
        }
        else if (s)
            td__msg(msg, cap, "bad value '%s' for %s: one of %s; did you mean '%s'?", value, name,
                    list, s);
        else
            td__msg(msg, cap, "bad value '%s' for %s: one of %s", value, name, list);
    } else {
        td__msg(msg, cap, "bad value '%s' for %s: %s (valid: %s)", value, name,
                rc == TD_ERANGE ? range_word(r, v) : not_a[r->info.type], r->info.range);
    }
}

int td_options_set_msg(td_options *o, int kind, const char *key, const char *value, char *msg,
                       size_t cap)
{
    const td_kind_vtbl *vt = td__kind_get(kind);
    const opt_row *r;
    char kinds[128], dummy[1];
    td_options n;
    double v = 0;
    uint64_t u = 0;
    int rc;

    if (!msg) {
        msg = dummy;
        cap = sizeof dummy;
    }
    if (!o || !key || !value) {
        td__msg(msg, cap, "invalid argument (NULL)");
        return TD_EINVAL;
    }
    if (!vt) {
        td__msg(msg, cap, "unknown kind %d", kind);
        return TD_EKIND;
    }
    r = find_row(key[0] == '-' && key[1] == '-' ? key + 2 : key);
    if (!r) {
        unknown_key_msg(key, kind, msg, cap);
        return TD_EOPTION;
    }
    if (!(r->info.kinds & K(kind))) {
        char name[80];
        td__msg(msg, cap, "%s does not apply to kind %s (it applies to: %s)",
                td__opt_spelled(key, name, sizeof name), vt->name, kinds_of(r, kinds, sizeof kinds));
        return TD_EOPTION;
    }
    rc = parse_value(r, value, &v, &u);
    if (rc == TD_OK && !in_range(r, v))
        rc = TD_ERANGE;
    if (rc != TD_OK) {
        bad_value_msg(r, key, value, v, rc, msg, cap);
        return rc;
    }
    n = *o;
    if (r->store == ST_MODEL) {
        td_model *m = NULL;
        char name[80];
        rc = td_model_load_file(&m, value);
        if (rc != TD_OK) {
            td__msg(msg, cap, "bad value '%s' for %s: %s", value, td__opt_spelled(key, name, sizeof name),
                    rc == TD_EIO ? strerror(errno) : td_strerror(rc));
            return rc;
        }
        n.model = m;
    } else if (r->store == ST_PROFILE && !u) {
        td_profile *p = NULL;
        char why[384] = "", name[80];
        rc = td_profile_open(&p, value, why, sizeof why);
        if (rc == TD_EIO && errno == ENOENT) /* most likely a misspelt name */
            bad_value_msg(r, key, value, 0, TD_ERANGE, msg, cap);
        else if (rc != TD_OK)
            td__msg(msg, cap, "bad value '%s' for %s: %s", value, td__opt_spelled(key, name, sizeof name),
                    why);
        if (rc != TD_OK)
            return rc;
        n.profile = p;
    } else {
        store_value(r, &n, v, u);
    }
    rc = td_options_check_msg(kind, &n, msg, cap);
    if (rc != TD_OK) {
        if (n.model != o->model)
            td_model_free((td_model *)n.model);
        if (n.profile != o->profile)
            td_profile_free((td_profile *)n.profile);
        return rc;
    }
    /* The options own what they loaded (testdata.h, "Who owns a model or
     * profile"): a new value for the key frees the file it loaded before,
     * never a pointer the caller stored. */
    if (r->store == ST_MODEL) {
        td_model_free((td_model *)(uintptr_t)o->owned_[0]);
        n.owned_[0] = (uintptr_t)n.model;
    } else if (r->store == ST_PROFILE) {
        td_profile_free((td_profile *)(uintptr_t)o->owned_[1]);
        n.owned_[1] = u ? 0 : (uintptr_t)n.profile;
    }
    *o = n;
    return TD_OK;
}

void td_options_release(td_options *o)
{
    if (!o)
        return;
    td_model_free((td_model *)(uintptr_t)o->owned_[0]);
    td_profile_free((td_profile *)(uintptr_t)o->owned_[1]);
    td_options_init(o);
}

int td_options_set(td_options *o, int kind, const char *key, const char *value)
{
    return td_options_set_msg(o, kind, key, value, NULL, 0);
}

/* Size suffixes as GNU coreutils' head -c takes them (xstrtoumax with the
 * suffixes "bkKmMGTPEZY0"): b is 512; k K m M G T P E Z Y are powers of
 * 1024, or of 1000 with a second suffix B (or the obsolescent D), and iB
 * spells the 1024 form out.  Z and Y only fit 64 bits for 0. */
static int suffix_power(char c)
{
    static const char units[] = "KMGTPEZY";
    const char *p = strchr(units, c == 'k' ? 'K' : c == 'm' ? 'M' : c);
    return (c && p) ? (int)(p - units) + 1 : -1;
}

int td_parse_size_msg(const char *text, uint64_t *size, char *msg, size_t cap)
{
    int rc = td_parse_size(text, size);
    if (rc == TD_ESYNTAX)
        td__msg(msg, cap, "%s", size_forms);
    else if (rc == TD_ERANGE)
        td__msg(msg, cap, "out of range: more than 2^64-1 bytes");
    else if (rc != TD_OK)
        td__msg(msg, cap, "%s", td_strerror(rc));
    return rc;
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
    if (*p == 'b') {
        if (p[1])
            return TD_ESYNTAX;
        mul = 512;
    } else if (*p) {
        power = suffix_power(*p);
        if (power < 0)
            return TD_ESYNTAX;
        p++;
        if (strcmp(p, "B") == 0 || strcmp(p, "D") == 0)
            base = 1000;
        else if (strcmp(p, "iB") != 0 && *p)
            return TD_ESYNTAX;
        while (power-- && v) {
            if (mul > UINT64_MAX / base)
                return TD_ERANGE;
            mul *= base;
        }
    }
    if (v && mul > UINT64_MAX / v)
        return TD_ERANGE;
    *size = v * mul;
    return TD_OK;
}
