/*
 * Context models of `like` (format 8; docs/format.md, "like", "Context
 * models"): a profile may hold, instead of LZ statistics, the sample's byte
 * contexts of orders 0..4 (the most frequent, closed under dropping their
 * newest byte) with their most frequent next bytes, and the lengths and
 * distances of some of the sample's long repeats.  A document is drawn a
 * byte at a time from the longest context that ends the output, with copies
 * of the repeats' shape at a calibrated rate.
 *
 * Why: LZ statistics give every LZ codec its ratio, but bzip2 and the
 * order-1+ coders of xz and brotli see the bytes' contexts, which an
 * order-1 literal model cannot give (issue 14; the experiment of stop 44 in
 * docs/benchmarks.md).  The builder keeps whichever model comes closer to
 * the sample (like_profile.c).
 *
 * Everything a document depends on is integers: alias tables built by
 * integer arithmetic, entropies stored in the profile, so the reference
 * implementation (tests/ref/ref_like.py) gives the same bytes.
 */
#include "like.h"
#include "text_model.h" /* td__tm_radix_sort */

#include <math.h>
#include <sodium.h>

/* ---- records ---- */

/* A record parsed: order k, context (newest byte lowest), entropy (1/16
 * bit), entries [off, off + n) of the entry arrays. */
typedef struct crec {
    uint32_t key;
    uint8_t k, h;
    uint16_t n;
    uint32_t off;
    uint32_t total;
} crec;

typedef struct parsed {
    crec *c;
    uint32_t nc;
    uint8_t *eb;  /* entry bytes */
    uint16_t *ew; /* entry counts */
    uint32_t ne;
    uint32_t first[TD_LIKE_CTX_MAXK + 2]; /* records of order k: [first[k], first[k + 1]) */
} parsed;

static void parsed_free(parsed *p)
{
    free(p->c);
    free(p->eb);
    free(p->ew);
    p->c = NULL; /* freed twice (an error path, then the owner) is harmless */
    p->eb = NULL;
    p->ew = NULL;
}

/* The index of the record (k, key), or UINT32_MAX. */
static uint32_t find_rec(const parsed *p, unsigned k, uint32_t key)
{
    uint32_t lo = p->first[k], hi = p->first[k + 1];
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (p->c[mid].key < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < p->first[k + 1] && p->c[lo].key == key ? lo : UINT32_MAX;
}

/* Parses and checks the records of c. */
static int parse(const td__like_ctxspec *c, parsed *p, char *msg, size_t cap)
{
    const uint8_t *r = c->rec, *end = c->rec + c->len;
    memset(p, 0, sizeof *p);
    /* a record takes at least 5 bytes (k, h, n - 1, one entry) */
    p->c = malloc((c->len / 5 + 1) * sizeof *p->c);
    p->eb = malloc(c->len / 3 + 1);
    p->ew = malloc((c->len / 3 + 1) * sizeof *p->ew);
    if (!p->c || !p->eb || !p->ew) {
        parsed_free(p);
        return TD_ENOMEM;
    }
    int prevk = -1;
    uint32_t prevkey = 0;
    while (r < end) {
        unsigned k = r[0];
        if (k > c->order)
            goto bad_order;
        if ((size_t)(end - r) < 1u + k + 2u)
            goto trunc;
        uint32_t key = 0;
        for (unsigned q = 0; q < k; q++)
            key = key << 8 | r[1 + q]; /* oldest first: the newest ends lowest */
        unsigned h = r[1 + k], n = r[2 + k] + 1u;
        r += 3 + k;
        if ((size_t)(end - r) < 3u * n)
            goto trunc;
        if (h > 128)
            return parsed_free(p), td__json_fail(msg, cap,
                "model.ctx.contexts: an entropy above 128 (8 bits)");
        if ((int)k < prevk || ((int)k == prevk && key <= prevkey))
            return parsed_free(p), td__json_fail(msg, cap,
                "model.ctx.contexts: records must increase by (order, context)");
        if (prevk < 0 && k != 0)
            return parsed_free(p), td__json_fail(msg, cap,
                "model.ctx.contexts: the first record must be of order 0");
        while (prevk < (int)k)
            p->first[++prevk] = p->nc;
        prevkey = key;
        crec *x = &p->c[p->nc];
        *x = (crec){key, (uint8_t)k, (uint8_t)h, (uint16_t)n, p->ne, 0};
        int last = -1;
        for (unsigned q = 0; q < n; q++, r += 3) {
            uint16_t w = (uint16_t)(r[1] | r[2] << 8);
            if ((int)r[0] <= last || !w)
                return parsed_free(p), td__json_fail(msg, cap,
                    "model.ctx.contexts: entries need increasing bytes and counts of 1 .. 65535");
            last = r[0];
            p->eb[p->ne] = r[0];
            p->ew[p->ne++] = w;
            x->total += w;
        }
        /* the context without its newest byte must be there too (k >= 2;
         * the one of order 0 is the first record) */
        if (k >= 2 && find_rec(p, k - 1, key >> 8) == UINT32_MAX)
            return parsed_free(p), td__json_fail(msg, cap,
                "model.ctx.contexts: a context without its newest byte is missing");
        p->nc++;
    }
    if (!p->nc)
        return parsed_free(p), td__json_fail(msg, cap, "model.ctx.contexts: no record");
    while (prevk <= TD_LIKE_CTX_MAXK)
        p->first[++prevk] = p->nc;
    return TD_OK;
bad_order:
    parsed_free(p);
    return td__json_fail(msg, cap, "model.ctx.contexts: a record of an order above model.ctx.order");
trunc:
    parsed_free(p);
    return td__json_fail(msg, cap, "model.ctx.contexts: a record is cut short");
}

int td__like_ctx_check(const td__like_ctxspec *c, char *msg, size_t cap)
{
    if (c->order > TD_LIKE_CTX_MAXK)
        return td__json_fail(msg, cap, "model.ctx.order must be 0 .. 4");
    if (c->floor > TD_LIKE_CTX_MAXFLOOR)
        return td__json_fail(msg, cap, "model.ctx.floor must be 0 .. 2048");
    if (c->gap > TD_LIKE_CTX_MAXGAP || (c->gap == 0) != (c->ncopies == 0))
        return td__json_fail(msg, cap,
            "model.ctx: gap 1 .. 1048576 with 1 .. 256 copies, or gap 0 and no copies");
    for (uint32_t i = 0; i < c->ncopies; i++)
        if (c->copy[i][0] < 1 || c->copy[i][0] > TD_LIKE_DOC_MAX || c->copy[i][1] < 1 ||
            c->copy[i][1] >= TD_LIKE_DOC_MAX)
            return td__json_fail(msg, cap, "model.ctx.copies: [length 1 .. 1048576, distance 1 .. 1048575]");
    parsed p;
    int rc = parse(c, &p, msg, cap);
    if (rc == TD_OK)
        parsed_free(&p);
    return rc;
}

/* ---- JSON ---- */

void td__like_ctx_json(const td__like_ctxspec *c, td__json_out *o)
{
    td__json_raw(o, "\"ctx\":{\"order\":");
    td__json_int(o, c->order);
    td__json_raw(o, ",\"floor\":");
    td__json_int(o, c->floor);
    td__json_raw(o, ",\"gap\":");
    td__json_int(o, c->gap);
    td__json_raw(o, ",\"copies\":[");
    for (uint32_t i = 0; i < c->ncopies; i++) {
        td__json_raw(o, i ? ",[" : "[");
        td__json_int(o, c->copy[i][0]);
        td__json_raw(o, ",");
        td__json_int(o, c->copy[i][1]);
        td__json_raw(o, "]");
    }
    td__json_raw(o, "],\"contexts\":\"");
    size_t n = sodium_base64_encoded_len(c->len, sodium_base64_VARIANT_ORIGINAL);
    char *q = td__json_room(o, n);
    if (!q)
        return;
    sodium_bin2base64(q, n, c->rec, c->len, sodium_base64_VARIANT_ORIGINAL);
    td__json_done(o, q + n - 1);
    td__json_raw(o, "\"}");
}

int td__like_ctx_read(const td__json_doc *d, const td__json_node *n, td__like_ctxspec *c, char *msg,
                      size_t cap)
{
    static const char *const keys[] = {"order", "floor", "gap", "copies", "contexts"};
    if (!n || n->type != TD_JSON_OBJ)
        return td__json_fail(msg, cap, "model.ctx: expected an object");
    int rc = td__json_known_keys(d, n, keys, sizeof keys / sizeof keys[0], msg, cap, "model.ctx");
    if (rc != TD_OK)
        return rc;
    memset(c, 0, sizeof *c);
    if ((rc = td__json_get_u32(td__json_get(d, n, "order"), 0, TD_LIKE_CTX_MAXK, &c->order, msg, cap,
                               "model.ctx.order")) != TD_OK ||
        (rc = td__json_get_u32(td__json_get(d, n, "floor"), 0, TD_LIKE_CTX_MAXFLOOR, &c->floor, msg, cap,
                               "model.ctx.floor")) != TD_OK ||
        (rc = td__json_get_u32(td__json_get(d, n, "gap"), 0, TD_LIKE_CTX_MAXGAP, &c->gap, msg, cap,
                               "model.ctx.gap")) != TD_OK)
        return rc;
    const td__json_node *cp = td__json_get(d, n, "copies");
    if (!cp || cp->type != TD_JSON_ARR || cp->count > TD_LIKE_CTX_NCOPY)
        return td__json_fail(msg, cap,
            "model.ctx.copies: expected an array of at most 256 [length, distance] pairs");
    for (const td__json_node *e = td__json_child(d, cp); e; e = td__json_next(d, e), c->ncopies++) {
        const td__json_node *x = td__json_child(d, e);
        uint32_t *pair = c->copy[c->ncopies];
        if (e->type != TD_JSON_ARR || e->count != 2 ||
            td__json_get_u32(x, 1, TD_LIKE_DOC_MAX, &pair[0], NULL, 0, "") ||
            td__json_get_u32(td__json_next(d, x), 1, TD_LIKE_DOC_MAX - 1, &pair[1], NULL, 0, ""))
            return td__json_fail(msg, cap, "model.ctx.copies: [length 1 .. 1048576, distance 1 .. 1048575]");
    }
    const td__json_node *s = td__json_get(d, n, "contexts");
    const char *b64 = s ? td__json_str(d, s) : NULL;
    size_t len = 0;
    if (!b64 || sodium_base642bin(c->rec, sizeof c->rec, b64, s->count, NULL, &len, NULL,
                                  sodium_base64_VARIANT_ORIGINAL) != 0)
        return td__json_fail(msg, cap,
            "model.ctx.contexts: expected base64 (RFC 4648, padded) of at most 49152 bytes");
    c->len = (uint32_t)len;
    return td__like_ctx_check(c, msg, cap);
}

/* ---- compiled tables and generation ---- */

struct td__like_ctxtab {
    parsed p;
    uint32_t K, floor, gap, ncopies;
    uint32_t copy[TD_LIKE_CTX_NCOPY][2];
    uint32_t *thr;   /* per entry: keep the entry when u < thr (else its alias) */
    uint8_t *alias;  /* per entry: the entry (index within its record) taken otherwise */
    uint32_t *next;  /* per entry: the state after its byte */
    uint32_t o1[256];/* the longest context of order <= 1 ending in each byte */
};

/* The longest context of at most top bytes that ends ctx (newest lowest). */
static uint32_t longest(const parsed *p, uint32_t ctx, unsigned top)
{
    for (unsigned k = top; k > 0; k--) {
        uint32_t i = find_rec(p, k, k == 4 ? ctx : ctx & ((1u << (8 * k)) - 1));
        if (i != UINT32_MAX)
            return i;
    }
    return 0;
}

void td__like_ctx_free(td__like_ctxtab *t)
{
    if (!t)
        return;
    parsed_free(&t->p);
    free(t->thr);
    free(t->alias);
    free(t->next);
    free(t);
}

int td__like_ctx_compile(const td__like_ctxspec *c, td__like_ctxtab **out)
{
    td__like_ctxtab *t = calloc(1, sizeof *t);
    if (!t)
        return TD_ENOMEM;
    int rc = parse(c, &t->p, NULL, 0);
    if (rc != TD_OK) {
        free(t);
        return rc;
    }
    const parsed *p = &t->p;
    t->K = c->order;
    t->floor = c->floor;
    t->gap = c->gap;
    t->ncopies = c->ncopies;
    memcpy(t->copy, c->copy, sizeof t->copy);
    t->thr = malloc((p->ne ? p->ne : 1) * sizeof *t->thr);
    t->alias = malloc(p->ne ? p->ne : 1);
    t->next = malloc((p->ne ? p->ne : 1) * sizeof *t->next);
    if (!t->thr || !t->alias || !t->next) {
        td__like_ctx_free(t);
        return TD_ENOMEM;
    }
    for (unsigned b = 0; b < 256; b++)
        t->o1[b] = longest(p, b, 1);
    for (uint32_t i = 0; i < p->nc; i++) {
        const crec *x = &p->c[i];
        const unsigned n = x->n;
        const uint64_t T = x->total;
        uint64_t pr[256];
        unsigned sm[256], lg[256], ns = 0, nl = 0;
        /* Vose's alias method in integers: entry q weighs w_q * n against
         * a bucket of T */
        for (unsigned q = 0; q < n; q++) {
            pr[q] = (uint64_t)p->ew[x->off + q] * n;
            t->thr[x->off + q] = (uint32_t)T;
            t->alias[x->off + q] = (uint8_t)q;
            if (pr[q] < T)
                sm[ns++] = q;
            else
                lg[nl++] = q;
        }
        while (ns && nl) {
            unsigned a = sm[--ns], g = lg[--nl];
            t->thr[x->off + a] = (uint32_t)pr[a];
            t->alias[x->off + a] = (uint8_t)g;
            pr[g] -= T - pr[a];
            if (pr[g] < T)
                sm[ns++] = g;
            else
                lg[nl++] = g;
        }
        for (unsigned q = 0; q < n; q++)
            t->next[x->off + q] = longest(p, x->key << 8 | p->eb[x->off + q], TD_MIN(x->k + 1u, t->K));
    }
    *out = t;
    return TD_OK;
}

void td__like_ctx_doc(const td__like_ctxtab *t, uint64_t s, uint8_t *out, uint32_t end, uint32_t lim)
{
    const parsed *p = &t->p;
    const crec *c = p->c;
    uint32_t pos = 0, st = 0, ctx = 0, nextc = UINT32_MAX;
    uint32_t hist[16], hsum = 16 * 128, hi = 0;
    for (int i = 0; i < 16; i++)
        hist[i] = 128;
    if (t->gap) {
        uint64_t r = td__wyrand(&s);
        nextc = (uint32_t)(((r & 0xFFFFFFFFu) * (2ull * t->gap)) >> 32);
    }
    while (pos < end) {
        if (pos >= nextc) {
            uint64_t r = td__wyrand(&s);
            const uint32_t *cp = t->copy[((r >> 32) * t->ncopies) >> 32];
            uint64_t nx = pos + (((r & 0xFFFFFFFFu) * (2ull * t->gap)) >> 32);
            nextc = nx > UINT32_MAX ? UINT32_MAX : (uint32_t)nx;
            if (cp[1] <= pos) {
                uint32_t l = TD_MIN(cp[0], lim - pos);
                for (uint32_t q = 0; q < l; q++, pos++)
                    out[pos] = out[pos - cp[1]];
                ctx = 0;
                for (unsigned q = 1; q <= 4 && q <= pos; q++)
                    ctx |= (uint32_t)out[pos - q] << (8 * (q - 1));
                st = longest(p, ctx, TD_MIN(t->K, pos));
                continue;
            }
        }
        uint32_t cur = st;
        if (t->floor && hsum < t->floor && c[st].k > 1)
            cur = t->o1[ctx & 255];
        hsum += c[cur].h - hist[hi];
        hist[hi] = c[cur].h;
        hi = (hi + 1) & 15;
        uint64_t r = td__wyrand(&s);
        uint32_t q = (uint32_t)(((r >> 32) * c[cur].n) >> 32);
        uint32_t u = (uint32_t)(((r & 0xFFFFFFFFu) * (uint64_t)c[cur].total) >> 32);
        uint32_t e = c[cur].off + q;
        if (u >= t->thr[e])
            e = c[cur].off + t->alias[e];
        uint8_t b = p->eb[e];
        out[pos++] = b;
        ctx = ctx << 8 | b;
        st = cur == st ? t->next[e] : longest(p, ctx, TD_MIN(t->K, pos));
    }
}

/* ---- the builder's statistics ---- */

/* All contexts of orders 0..4 of the sample, each with all its next bytes
 * (most frequent first), most frequent context first. */
typedef struct sctx {
    uint32_t key, raw; /* context, its occurrences */
    uint32_t off;      /* entries */
    uint16_t n;
    uint8_t k;
} sctx;

struct td__like_ctxstats {
    sctx *c;
    size_t nc;
    uint8_t *eb;
    uint32_t *ew;
    size_t ne;
    uint32_t copy[TD_LIKE_CTX_NCOPY][2];
    uint32_t ncopies;
    double rate; /* long repeats per byte outside them */
};

void td__like_ctx_stats_free(td__like_ctxstats *s)
{
    if (!s)
        return;
    free(s->c);
    free(s->eb);
    free(s->ew);
    free(s);
}

static int by_raw_desc(const void *x, const void *y)
{
    const sctx *a = x, *b = y;
    if (a->raw != b->raw)
        return a->raw < b->raw ? 1 : -1;
    if (a->k != b->k)
        return a->k < b->k ? -1 : 1;
    return a->key < b->key ? -1 : a->key > b->key;
}

/* The sample's repeats of at least 16 bytes by a greedy parse (the most
 * recent earlier occurrence of each 4 bytes), up to 256 of them spread
 * evenly, and their rate per byte outside them. */
#define LONG_LEAST 16u
#define LONG_HB 20u
static int long_repeats(td__like_ctxstats *s, const uint8_t *const *buf, const uint32_t *len, size_t nb)
{
    uint32_t *last = malloc(sizeof(uint32_t) << LONG_HB);
    size_t cap = 1024, nn = 0;
    uint32_t(*all)[2] = malloc(cap * sizeof *all);
    uint64_t outside = 0;
    if (!last || !all) {
        free(last);
        free(all);
        return TD_ENOMEM;
    }
    for (size_t r = 0; r < nb; r++) {
        const uint8_t *p = buf[r];
        const uint32_t n = len[r];
        memset(last, 0, sizeof(uint32_t) << LONG_HB);
#define H4(x) ((td__load32le(x) * 2654435761u) >> (32 - LONG_HB))
        uint32_t i = 0;
        while (i + 4 <= n) {
            uint32_t h = H4(p + i), j = last[h];
            last[h] = i + 1;
            uint32_t m = 0;
            if (j && memcmp(p + j - 1, p + i, 4) == 0)
                while (i + m < n && p[i + m] == p[j - 1 + m])
                    m++;
            if (m >= LONG_LEAST) {
                if (nn == cap) {
                    void *x = realloc(all, (cap *= 2) * sizeof *all);
                    if (!x) {
                        free(last);
                        free(all);
                        return TD_ENOMEM;
                    }
                    all = x;
                }
                all[nn][0] = m;
                all[nn++][1] = i - (j - 1);
                for (uint32_t k = i + 1; k < i + m && k + 4 <= n; k++)
                    last[H4(p + k)] = k + 1;
                i += m;
            } else {
                i++;
                outside++;
            }
        }
        outside += n - i;
#undef H4
    }
    s->ncopies = (uint32_t)TD_MIN(nn, (size_t)TD_LIKE_CTX_NCOPY);
    for (uint32_t q = 0; q < s->ncopies; q++) {
        const uint32_t *a = all[(size_t)q * nn / s->ncopies];
        s->copy[q][0] = TD_MIN(a[0], TD_LIKE_DOC_MAX);
        s->copy[q][1] = TD_MIN(a[1], TD_LIKE_DOC_MAX - 1);
    }
    s->rate = (double)nn / (double)(outside ? outside : 1);
    free(last);
    free(all);
    return TD_OK;
}

int td__like_ctx_stats(const uint8_t *const *buf, const uint32_t *len, size_t nb, td__like_ctxstats **out)
{
    td__like_ctxstats *s = calloc(1, sizeof *s);
    size_t total = 0, cap = 1024, ecap = 1u << 16;
    uint64_t *keys = NULL, *tmp = NULL;
    int rc = TD_ENOMEM;
    if (!s)
        return TD_ENOMEM;
    for (size_t r = 0; r < nb; r++)
        total += len[r];
    s->c = malloc(cap * sizeof *s->c);
    s->eb = malloc(ecap);
    s->ew = malloc(ecap * sizeof *s->ew);
    keys = td__alloc_large((total ? total : 1) * sizeof *keys);
    tmp = td__alloc_large((total ? total : 1) * sizeof *tmp);
    if (!s->c || !s->eb || !s->ew || !keys || !tmp)
        goto out;
    /* one order at a time: (context << 8 | next byte), sorted */
    for (unsigned k = 0; k <= TD_LIKE_CTX_MAXK; k++) {
        size_t nk = 0;
        for (size_t r = 0; r < nb; r++) {
            const uint8_t *p = buf[r];
            uint32_t ctx = 0;
            for (uint32_t i = 0; i < len[r]; i++) {
                if (i >= k)
                    keys[nk++] = (uint64_t)(k == 4 ? ctx : ctx & ((1u << (8 * k)) - 1)) << 8 | p[i];
                ctx = ctx << 8 | p[i];
            }
        }
        if (td__tm_radix_sort(keys, nk, tmp) != TD_OK)
            goto out;
        const uint64_t *sorted = keys;
        for (size_t i = 0; i < nk;) {
            uint64_t ck = sorted[i] >> 8;
            uint32_t cnt[256] = {0};
            size_t e = i;
            while (e < nk && sorted[e] >> 8 == ck)
                cnt[sorted[e++] & 255]++;
            uint32_t raw = (uint32_t)(e - i);
            i = e;
            uint8_t ob[256];
            unsigned no = 0;
            for (unsigned b = 0; b < 256; b++)
                if (cnt[b])
                    ob[no++] = (uint8_t)b;
            /* most frequent first, ties to the lower byte (stable) */
            for (unsigned a = 1; a < no; a++)
                for (unsigned q = a; q && cnt[ob[q - 1]] < cnt[ob[q]]; q--) {
                    uint8_t x = ob[q];
                    ob[q] = ob[q - 1];
                    ob[q - 1] = x;
                }
            if (s->nc == cap) {
                void *x = realloc(s->c, (cap *= 2) * sizeof *s->c);
                if (!x)
                    goto out;
                s->c = x;
            }
            while (s->ne + no > ecap) {
                ecap *= 2;
                void *x = realloc(s->eb, ecap), *y = x ? realloc(s->ew, ecap * sizeof *s->ew) : NULL;
                if (x)
                    s->eb = x;
                if (!y)
                    goto out;
                s->ew = y;
            }
            for (unsigned q = 0; q < no; q++) {
                s->eb[s->ne + q] = ob[q];
                s->ew[s->ne + q] = cnt[ob[q]];
            }
            s->c[s->nc++] = (sctx){(uint32_t)ck, raw, (uint32_t)s->ne, (uint16_t)no, (uint8_t)k};
            s->ne += no;
        }
    }
    qsort(s->c, s->nc, sizeof *s->c, by_raw_desc);
    rc = long_repeats(s, buf, len, nb);
out:
    free(keys);
    free(tmp);
    if (rc != TD_OK) {
        td__like_ctx_stats_free(s);
        return rc;
    }
    *out = s;
    return TD_OK;
}

/* A kept context: (k, key) and where its record's entries come from. */
typedef struct kept {
    uint32_t key;
    uint8_t k;
    uint16_t n;      /* entries kept (<= E) */
    uint32_t src;    /* index into the stats */
} kept;

static int by_order_key(const void *x, const void *y)
{
    const kept *a = x, *b = y;
    if (a->k != b->k)
        return a->k < b->k ? -1 : 1;
    return a->key < b->key ? -1 : a->key > b->key;
}

/* Open addressing over (k, key) + 1. */
static size_t kslot(const uint64_t *h, size_t mask, uint64_t v)
{
    size_t i = (size_t)((v * 0x9E3779B97F4A7C15ull) >> 24) & mask;
    while (h[i] && h[i] != v)
        i = (i + 1) & mask;
    return i;
}

int td__like_ctx_make(const td__like_ctxstats *s, unsigned K, size_t budget, unsigned E, double copy_rate,
                      td__like_model *m)
{
    td__like_ctxspec *c = &m->ctx;
    size_t hc = 1024;
    while (hc < 2 * s->nc)
        hc *= 2;
    uint64_t *h = calloc(hc, sizeof *h);
    kept *kp = malloc((s->nc ? s->nc : 1) * sizeof *kp);
    if (!h || !kp) {
        free(h);
        free(kp);
        return TD_ENOMEM;
    }
    if (budget > TD_LIKE_CTX_MAXREC)
        budget = TD_LIKE_CTX_MAXREC;
    if (E > 256)
        E = 256;
    if (K > TD_LIKE_CTX_MAXK)
        K = TD_LIKE_CTX_MAXK;
    size_t cost = 0, nk = 0;
    /* Orders 0 and 1 always (what a small budget cannot do without); then
     * the most frequent contexts of order >= 2 that fit, each only if the
     * context without its newest byte is kept, so that the state after a
     * byte is known from the state before it.  A context of order >= 1 whose
     * kept entries count less than 2 in all says nothing: it is left out. */
    for (size_t i = 0; i < s->nc; i++) {
        const sctx *x = &s->c[i];
        if (x->k > K)
            continue;
        unsigned n = TD_MIN(x->n, E);
        uint32_t tot = 0;
        for (unsigned q = 0; q < n; q++)
            tot += s->ew[x->off + q];
        if (x->k >= 1 && tot < 2)
            continue;
        size_t rc = 3u + x->k + 3u * n;
        if (x->k >= 2) {
            if (cost + rc > budget)
                continue;
            if (!h[kslot(h, hc - 1, ((uint64_t)(x->k - 1) << 32 | x->key >> 8) + 1)])
                continue;
        } else if (cost + rc > TD_LIKE_CTX_MAXREC) {
            continue;
        }
        cost += rc;
        h[kslot(h, hc - 1, ((uint64_t)x->k << 32 | x->key) + 1)] = ((uint64_t)x->k << 32 | x->key) + 1;
        kp[nk++] = (kept){x->key, x->k, (uint16_t)n, (uint32_t)i};
    }
    qsort(kp, nk, sizeof *kp, by_order_key);
    uint8_t *w = c->rec;
    for (size_t i = 0; i < nk; i++) {
        const sctx *x = &s->c[kp[i].src];
        unsigned n = kp[i].n;
        uint64_t cnt[256] = {0};
        uint64_t tot = 0;
        for (unsigned q = 0; q < n; q++)
            tot += s->ew[x->off + q];
        /* counts scaled to a total of at most 65535, none below 1 */
        for (unsigned q = 0; q < n; q++) {
            uint64_t v = s->ew[x->off + q];
            if (tot > 65535)
                v = v * 65535 / tot;
            cnt[s->eb[x->off + q]] = v ? v : 1;
        }
        long hq = lround(td__entropy0(cnt) * 16);
        *w++ = x->k;
        for (int q = (int)x->k - 1; q >= 0; q--)
            *w++ = (uint8_t)(x->key >> (8 * q));
        *w++ = (uint8_t)(hq < 0 ? 0 : hq > 128 ? 128 : hq);
        *w++ = (uint8_t)(n - 1);
        for (unsigned b = 0; b < 256; b++)
            if (cnt[b]) {
                *w++ = (uint8_t)b;
                *w++ = (uint8_t)cnt[b];
                *w++ = (uint8_t)(cnt[b] >> 8);
            }
    }
    c->len = (uint32_t)(w - c->rec);
    c->order = K;
    c->floor = 256; /* 16 bits over the last 16 draws */
    c->ncopies = 0;
    c->gap = 0;
    if (copy_rate > 0 && s->rate > 0 && s->ncopies) {
        double g = 1.0 / (copy_rate * s->rate);
        c->gap = g >= TD_LIKE_CTX_MAXGAP ? TD_LIKE_CTX_MAXGAP : g < 1 ? 1 : (uint32_t)lround(g);
        c->ncopies = s->ncopies;
        memcpy(c->copy, s->copy, sizeof c->copy);
    }
    m->has_ctx = 1;
    free(h);
    free(kp);
    return TD_OK;
}
