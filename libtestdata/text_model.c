/*
 * Text models: parse and check a model file, compile it into sampling
 * tables, save it, and the built-in English model.  The file format is in
 * docs/format.md ("Text models"); every check below is one stated there.
 *
 * A model is immutable once made and reference-counted, so a generator can
 * keep the model a caller passed in td_options without copying its tables.
 */
#include "text_model.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- UTF-8 ------------------------------------------------------------- */

/* Decode one code point at p (n bytes available); returns its length, or 0
 * when the bytes are not well-formed UTF-8 (overlong, surrogate, > U+10FFFF,
 * truncated). */
unsigned td__utf8_decode(const uint8_t *p, size_t n, uint32_t *cp)
{
    uint32_t c = p[0];
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    if (c < 0xC2 || c > 0xF4)
        return 0;
    unsigned len = c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    if (n < len)
        return 0;
    c &= 0x3F >> (len - 1);
    for (unsigned i = 1; i < len; i++) {
        if ((p[i] & 0xC0) != 0x80)
            return 0;
        c = (c << 6) | (p[i] & 0x3F);
    }
    if ((len == 3 && c < 0x800) || (len == 4 && (c < 0x10000 || c > 0x10FFFF)) ||
        (c >= 0xD800 && c <= 0xDFFF))
        return 0;
    *cp = c;
    return len;
}

unsigned td__utf8_encode(uint32_t c, uint8_t *out)
{
    if (c < 0x80) {
        out[0] = (uint8_t)c;
        return 1;
    }
    if (c < 0x800) {
        out[0] = (uint8_t)(0xC0 | (c >> 6));
        out[1] = (uint8_t)(0x80 | (c & 0x3F));
        return 2;
    }
    if (c < 0x10000) {
        out[0] = (uint8_t)(0xE0 | (c >> 12));
        out[1] = (uint8_t)(0x80 | ((c >> 6) & 0x3F));
        out[2] = (uint8_t)(0x80 | (c & 0x3F));
        return 3;
    }
    out[0] = (uint8_t)(0xF0 | (c >> 18));
    out[1] = (uint8_t)(0x80 | ((c >> 12) & 0x3F));
    out[2] = (uint8_t)(0x80 | ((c >> 6) & 0x3F));
    out[3] = (uint8_t)(0x80 | (c & 0x3F));
    return 4;
}

/* Code points of p[0..n), or -1 if not UTF-8 or it holds a control
 * character (below U+0020 other than tab, or U+007F). */
static int utf8_cols(const uint8_t *p, size_t n, int allow_tab)
{
    int cols = 0;
    for (size_t i = 0; i < n;) {
        uint32_t c;
        unsigned l = td__utf8_decode(p + i, n - i, &c);
        if (!l || (c < 0x20 && !(allow_tab && c == '\t')) || c == 0x7F)
            return -1;
        i += l;
        cols++;
    }
    return cols;
}

/* ---- alias tables ------------------------------------------------------- */

/* All alias tables of a model go into one array, each made as its
 * distribution is read, with scratch shared by all (one allocation per
 * model, not four per distribution). */
typedef struct tabs {
    tm_alias *ent;
    size_t n, cap;
    uint32_t *v;      /* one distribution: values, weights */
    uint64_t *w, *q;  /* ... and the scaled weights */
    uint32_t *small, *large, *al;
    uint32_t room;    /* values the scratch has room for */
} tabs;

static void tabs_free(tabs *T)
{
    free(T->ent);
    free(T->v);
    free(T->w);
    free(T->q);
    free(T->small);
    free(T->large);
    free(T->al);
    memset(T, 0, sizeof *T);
}

/* Room for a distribution of n values. */
static int tabs_room(tabs *T, uint32_t n)
{
    if (n <= T->room)
        return TD_OK;
    size_t c = TD_MAX((size_t)n, 2 * (size_t)T->room);
    uint32_t *v = realloc(T->v, c * sizeof *v);
    if (v)
        T->v = v;
    uint64_t *w = realloc(T->w, c * sizeof *w);
    if (w)
        T->w = w;
    uint64_t *q = realloc(T->q, c * sizeof *q);
    if (q)
        T->q = q;
    uint32_t *sm = realloc(T->small, c * sizeof *sm);
    if (sm)
        T->small = sm;
    uint32_t *lg = realloc(T->large, c * sizeof *lg);
    if (lg)
        T->large = lg;
    uint32_t *al = realloc(T->al, c * sizeof *al);
    if (al)
        T->al = al;
    if (!v || !w || !q || !sm || !lg || !al)
        return TD_ENOMEM;
    T->room = (uint32_t)c;
    return TD_OK;
}

/* Alias slots out[0..n) for the values T->v[0..n) with weights T->w[0..n)
 * (tabs_room(T, n) done): integer Vose, specified in docs/format.md. */
static void alias_build(tabs *T, tm_alias *out, uint32_t n)
{
    const uint32_t *v = T->v;
    const uint64_t *w = T->w;
    if (n == 1) { /* what the general case gives: threshold 65535, its own alias */
        out[0] = (tm_alias){(v[0] & TM_NIL) | 0xFFu << 24, (v[0] & TM_NIL) | 0xFFu << 24};
        return;
    }
    uint64_t *q = T->q, S = 0;
    uint32_t *small = T->small, *large = T->large, *al = T->al;
    for (uint32_t i = 0; i < n; i++) {
        q[i] = w[i];
        S += w[i];
    }
    /* weights are halved (keeping at least 1) until their total is below 2^31 */
    while (S > TM_COUNT_MAX) {
        S = 0;
        for (uint32_t i = 0; i < n; i++) {
            q[i] = q[i] > 1 ? q[i] >> 1 : 1;
            S += q[i];
        }
    }
    uint32_t ns = 0, nl = 0;
    for (uint32_t i = 0; i < n; i++) {
        q[i] *= n;
        al[i] = i;
        if (q[i] < S)
            small[ns++] = i;
        else
            large[nl++] = i;
    }
    while (ns && nl) {
        uint32_t l = small[--ns], g = large[--nl];
        al[l] = g;
        q[g] -= S - q[l];
        if (q[g] < S)
            small[ns++] = g;
        else
            large[nl++] = g;
    }
    while (ns)
        q[small[--ns]] = S;
    while (nl)
        q[large[--nl]] = S;
    for (uint32_t i = 0; i < n; i++) {
        /* threshold floor(65536 q / S); q == S (then the alias is the slot itself) gives 65535 */
        uint32_t t = (uint32_t)((q[i] << 16) / S);
        if (t > 0xFFFF)
            t = 0xFFFF;
        out[i] = (tm_alias){(v[i] & TM_NIL) | (t & 0xFF) << 24, (v[al[i]] & TM_NIL) | (t >> 8) << 24};
    }
}

/* ---- reading ------------------------------------------------------------ */

typedef struct rd {
    const uint8_t *p, *end;
    int bad;
} rd;

static uint32_t rd_var(rd *r)
{
    uint32_t v = 0;
    for (unsigned sh = 0; sh < 35; sh += 7) {
        if (r->p >= r->end) {
            r->bad = 1;
            return 0;
        }
        uint8_t b = *r->p++;
        if (sh == 28 && b > 0x0F) {
            r->bad = 1;
            return 0;
        }
        v |= (uint32_t)(b & 0x7F) << sh;
        if (!(b & 0x80)) {
            /* minimal encoding only: one content, one file */
            if (sh && b == 0)
                r->bad = 1;
            return v;
        }
    }
    r->bad = 1;
    return 0;
}

static uint32_t rd_var_max(rd *r, uint32_t lo, uint32_t hi)
{
    uint32_t v = rd_var(r);
    if (v < lo || v > hi)
        r->bad = 1;
    return r->bad ? lo : v;
}

static const uint8_t *rd_bytes(rd *r, size_t n)
{
    if ((size_t)(r->end - r->p) < n) {
        r->bad = 1;
        return NULL;
    }
    const uint8_t *q = r->p;
    r->p += n;
    return q;
}

/* A count list: n, then n (delta, count) pairs with ids strictly increasing
 * and below lim, counts >= 1, total below 2^31.  Appends to ids/cnt. */
typedef struct lists {
    uint32_t *id;
    uint64_t *cnt;
    size_t n, cap;
} lists;

static int lists_push(lists *L, uint32_t id, uint64_t c)
{
    if (L->n == L->cap) {
        size_t cap = L->cap ? 2 * L->cap : 4096;
        uint32_t *a = td__realloc_large(L->id, L->cap * sizeof *a, cap * sizeof *a);
        if (!a)
            return TD_ENOMEM;
        L->id = a;
        uint64_t *nc = td__realloc_large(L->cnt, L->cap * sizeof *nc, cap * sizeof *nc);
        if (!nc)
            return TD_ENOMEM;
        L->cnt = nc;
        L->cap = cap;
    }
    L->id[L->n] = id;
    L->cnt[L->n++] = c;
    return TD_OK;
}

static int rd_list(rd *r, lists *L, uint32_t lim, uint32_t *first, uint32_t *count)
{
    uint32_t n = rd_var(r);
    uint64_t total = 0;
    uint64_t prev = 0;
    if (r->bad || n > lim || n > (size_t)(r->end - r->p) / 2) {
        r->bad = 1;
        return TD_OK;
    }
    *first = (uint32_t)L->n;
    *count = n;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t id = prev + rd_var(r) + (i ? 1 : 0);
        uint32_t c = rd_var(r);
        if (r->bad || id >= lim || c == 0) {
            r->bad = 1;
            return TD_OK;
        }
        total += c;
        if (total > TM_COUNT_MAX) {
            r->bad = 1;
            return TD_OK;
        }
        if (lists_push(L, (uint32_t)id, c) != TD_OK)
            return TD_ENOMEM;
        prev = id;
    }
    return TD_OK;
}

static int rd_section(rd *r, const char *tag, rd *sec)
{
    const uint8_t *t = rd_bytes(r, 4);
    const uint8_t *l = rd_bytes(r, 4);
    if (!t || !l || memcmp(t, tag, 4) != 0)
        return r->bad = 1, 0;
    uint32_t len = (uint32_t)l[0] | (uint32_t)l[1] << 8 | (uint32_t)l[2] << 16 |
                   (uint32_t)l[3] << 24;
    const uint8_t *p = rd_bytes(r, len);
    if (!p)
        return 0;
    sec->p = p;
    sec->end = p + len;
    sec->bad = 0;
    return 1;
}

/* RUNS: the rate, the share, then TM_RUN_NB^2 counts by (length, distance)
 * bucket, kept cumulative; 0 if malformed. */
static int rd_runs(rd *r, tm_runs *u)
{
    rd s;
    if (!rd_section(r, "RUNS", &s))
        return 0;
    u->rate = rd_var_max(&s, 1, 1u << TM_RUN_RATE_BITS);
    u->share = rd_var_max(&s, 1, 65536);
    uint64_t t = 0;
    for (unsigned k = 0; k < TM_RUN_NB * TM_RUN_NB; k++) {
        t += rd_var_max(&s, 0, TM_COUNT_MAX);
        u->cum[k] = (uint32_t)TD_MIN(t, (uint64_t)TM_COUNT_MAX + 1);
    }
    if (!t || t > TM_COUNT_MAX || s.bad || s.p != s.end)
        return 0;
    unsigned k = 0;
    for (unsigned j = 0; j < 1u << TM_RUN_IDX_BITS; j++) {
        uint64_t x = (uint64_t)j * t >> TM_RUN_IDX_BITS;
        while (u->cum[k] <= x)
            k++;
        u->start[j] = (uint16_t)k;
    }
    return 1;
}

/* ---- compiling ---------------------------------------------------------- */

/* Split separator s at its last run of spaces and tabs. */
static void sep_split(tm_str *s, const uint8_t *p)
{
    int e = -1, b = -1;
    for (int i = s->len - 1; i >= 0; i--) {
        if (p[i] == ' ' || p[i] == '\t') {
            if (e < 0)
                e = i + 1;
            b = i;
        } else if (e >= 0) {
            break;
        }
    }
    unsigned cls = 0;
    for (unsigned i = 0; i < s->len;) {
        uint32_t c = 0;
        unsigned l = td__utf8_decode(p + i, s->len - i, &c);
        if (c == '.' || c == '!' || c == '?' || c == 0x2026 || c == 0x3002 || c == 0xFF01 ||
            c == 0xFF1F || c == 0x061F || c == 0x0964)
            cls = 1;
        i += l;
    }
    s->cls = (uint8_t)cls;
    if (e < 0) { /* no space: a line may break just before it */
        s->head_len = s->head_cols = 0;
        s->gap_len = s->gap_cols = 0;
        s->tail_len = s->len;
        s->tail_cols = s->cols;
        return;
    }
    s->head_len = (uint8_t)b;
    s->head_cols = (uint8_t)utf8_cols(p, (size_t)b, 1);
    s->gap_len = s->gap_cols = (uint8_t)(e - b);
    s->tail_len = (uint8_t)(s->len - e);
    s->tail_cols = (uint8_t)(s->cols - s->head_cols - s->gap_cols);
}

/* LSD radix sort of 64-bit keys.  Only the bits that differ between keys
 * are sorted on, in as few passes of at most 11 bits as they need, split
 * evenly: small histograms and a scatter that stays in cache (wider ones
 * page-faulted and missed more than the passes they saved); all histograms
 * come from one pass. */
int td__tm_radix_sort(uint64_t *k, size_t n, uint64_t *tmp)
{
    enum { MAXW = 11 };
    if (n < 2)
        return TD_OK;
    uint64_t all_or = 0, all_and = ~(uint64_t)0;
    for (size_t i = 0; i < n; i++) {
        all_or |= k[i];
        all_and &= k[i];
    }
    uint64_t diff = all_or ^ all_and;
    if (!diff)
        return TD_OK;
    unsigned lo = (unsigned)__builtin_ctzll(diff), hi = 64u - (unsigned)__builtin_clzll(diff);
    unsigned passes = (hi - lo + MAXW - 1) / MAXW, width = (hi - lo + passes - 1) / passes;
    size_t nb = (size_t)1 << width;
    uint64_t *tk = tmp ? tmp : malloc(n * sizeof *tk);
    size_t *cnt = calloc(passes * nb, sizeof *cnt);
    if (!tk || !cnt) {
        if (!tmp)
            free(tk);
        free(cnt);
        return TD_ENOMEM;
    }
    const uint64_t mask = nb - 1;
    for (size_t i = 0; i < n; i++)
        for (unsigned d = 0; d < passes; d++)
            cnt[d * nb + ((k[i] >> (lo + d * width)) & mask)]++;
    uint64_t *sk = k, *dk = tk;
    for (unsigned d = 0; d < passes; d++) {
        unsigned sh = lo + d * width;
        size_t sum = 0, *c = cnt + d * nb;
        for (size_t b = 0; b < nb; b++) {
            size_t t = c[b];
            c[b] = sum;
            sum += t;
        }
        for (size_t i = 0; i < n; i++)
            dk[c[(sk[i] >> sh) & mask]++] = sk[i];
        uint64_t *t = sk;
        sk = dk;
        dk = t;
    }
    if (sk != k)
        memcpy(k, sk, n * sizeof *k);
    if (!tmp)
        free(tk);
    free(cnt);
    return TD_OK;
}

/* The character model is compiled through a trie of contexts read
 * backwards: node c of depth k is a context of k code points; its child by
 * symbol s is the context with s prepended (one code point older).  Edges
 * live in an open-addressing map (parent << 22 | symbol) -> child. */
typedef struct emap {
    uint64_t *k; /* key + 1; 0 is empty */
    uint32_t *v;
    size_t mask, n;
} emap;

static int emap_init(emap *m, size_t want)
{
    size_t cap = 1024;
    while (3 * cap < 4 * want)
        cap *= 2;
    m->k = td__calloc_large(cap * sizeof *m->k);
    m->v = td__alloc_large(cap * sizeof *m->v);
    m->mask = cap - 1;
    m->n = 0;
    return m->k && m->v ? TD_OK : TD_ENOMEM;
}

static void emap_free(emap *m)
{
    free(m->k);
    free(m->v);
}

/* Where a key's probe starts. */
static inline size_t emap_home(const emap *m, uint64_t key)
{
    return (size_t)((key * 0x9E3779B97F4A7C15u) >> 20) & m->mask;
}

static inline size_t emap_slot(const emap *m, uint64_t key)
{
    size_t i = emap_home(m, key);
    while (m->k[i] && m->k[i] != key)
        i = (i + 1) & m->mask;
    return i;
}

static int emap_grow(emap *m)
{
    emap n;
    if (emap_init(&n, m->mask + 1) != TD_OK) {
        emap_free(&n);
        return TD_ENOMEM;
    }
    for (size_t i = 0; i <= m->mask; i++)
        if (m->k[i]) {
            size_t j = emap_slot(&n, m->k[i]);
            n.k[j] = m->k[i];
            n.v[j] = m->v[i];
        }
    n.n = m->n;
    emap_free(m);
    *m = n;
    return TD_OK;
}

/* The value stored under key (a key + 1: 0 is empty), or TM_END. */
static inline uint32_t emap_find(const emap *m, uint64_t key)
{
    size_t i = emap_slot(m, key);
    return m->k[i] ? m->v[i] : TM_END;
}

/* Child of node p by symbol s, or TM_END. */
static inline uint32_t emap_get(const emap *m, uint32_t p, uint32_t s)
{
    return emap_find(m, ((uint64_t)p << 22 | s) + 1);
}

#define TM_BOS 0x110000u   /* one past the last code point */
#define TM_ENDSYM 0x3FFFFFu /* the end of a word, as a counted symbol */

typedef struct cnode {
    uint32_t parent, sym; /* sym: the oldest code point of the context */
    uint32_t depth, total;
    uint32_t state; /* state index, or TM_END when not a state */
} cnode;

/* The character model by sorting, the way compile_chars_hash below counts
 * it through a trie of hashed edges, with the same states, tables and
 * values (state numbers aside, which are internal).  Each position (a code
 * point or the END of a word) is one 64-bit key: the K code points before
 * it, newest first, then its symbol, each as a b-bit rank in the
 * corpus's alphabet (0 BOS, 1..A the code points ascending, A + 1 END).
 * Sorted, every context is a run of keys (the keys that share its prefix),
 * so a context's total is its run's length and its table counts the
 * symbols in the run: one sort and linear scans instead of a hash lookup
 * per position and depth.  Loading the built-in model (most of a short
 * `testdata gen text`) takes a third less time.  Needs (K + 1) b <= 64
 * bits: alphabets of up to 4094 code points at the default order 4;
 * otherwise CC_FALLBACK. */
#define CC_FALLBACK 1

typedef struct cc_state {
    size_t start, end; /* its run of keys */
    uint64_t ctx;      /* its code points: the top depth fields of K */
    uint32_t depth;
} cc_state;

/* The states of sorted keys (see compile_chars_sorted): the root, then
 * each run of a context closed (children before parents) that has depth 1
 * or at least char_min keys, into out (if not NULL); their number. */
static size_t cc_runs(const uint64_t *keys, size_t n, unsigned K, unsigned b, uint32_t char_min,
                      cc_state *out)
{
    const unsigned CB = K * b;
    size_t nst = 0, open[TM_MAX_ORDER + 1] = {0};
    if (out)
        out[0] = (cc_state){0, n, 0, 0};
    nst++;
    for (size_t i = 1; i <= n; i++) {
        unsigned d = 0; /* depth shared with the key before */
        if (i < n) {
            uint64_t x = (keys[i] ^ keys[i - 1]) >> b;
            d = x ? ((unsigned)__builtin_clzll(x) - (64u - CB)) / b : K;
        }
        for (unsigned k = K; k > d; k--) {
            if (k > 1 && i - open[k] < char_min)
                continue;
            if (out) {
                uint64_t c = keys[open[k]] >> b;
                out[nst] = (cc_state){open[k], i, c & ~(((uint64_t)1 << (CB - k * b)) - 1), k};
            }
            nst++;
        }
        for (unsigned k = d + 1; k <= K; k++)
            open[k] = i;
    }
    return nst;
}

static int compile_chars_sorted(td_model *m, tabs *T)
{
    const unsigned K = m->p.char_order;
    uint32_t maxcp = 0;
    size_t npos = 0;
    for (uint32_t w = 0; w < m->V; w++) {
        const tm_word *s = &m->words[w];
        const uint8_t *p = m->pool + s->off;
        for (unsigned i = 0; i < s->len; npos++) {
            uint32_t c;
            i += td__utf8_decode(p + i, s->len - i, &c);
            maxcp = c > maxcp ? c : maxcp;
        }
        npos++; /* END */
    }
    /* the alphabet: a bitmap of the code points seen, and each 64-bit
     * word's rank, so a code point's rank is a popcount */
    size_t nw = (size_t)maxcp / 64 + 1;
    uint64_t *bits = calloc(nw, sizeof *bits);
    uint32_t *rk = malloc(nw * sizeof *rk);
    uint64_t *keys = NULL, *tmp = NULL;
    uint32_t *cpof = NULL, *cnt = NULL, *touch = NULL, *ps = NULL, *pc = NULL;
    cc_state *sts = NULL;
    emap h = {0}; /* (context << 3 | depth) + 1 -> state */
    int rc = TD_ENOMEM;
    if (!bits || !rk)
        goto out;
    for (uint32_t w = 0; w < m->V; w++) {
        const tm_word *s = &m->words[w];
        const uint8_t *p = m->pool + s->off;
        for (unsigned i = 0; i < s->len;) {
            uint32_t c;
            i += td__utf8_decode(p + i, s->len - i, &c);
            bits[c >> 6] |= (uint64_t)1 << (c & 63);
        }
    }
    uint32_t A = 0;
    for (size_t i = 0; i < nw; i++) {
        rk[i] = A;
        A += (uint32_t)__builtin_popcountll(bits[i]);
    }
    const uint32_t END = A + 1, nsym = A + 2;
    unsigned b = 64u - (unsigned)__builtin_clzll(END);
    b = b < 3 ? 3 : b; /* room for the depth in a map key */
    if ((K + 1) * b > 64) {
        rc = CC_FALLBACK;
        goto out;
    }
    const unsigned CB = K * b, top = CB - b;
    const uint64_t smask = ((uint64_t)1 << b) - 1;
    cpof = malloc((size_t)nsym * sizeof *cpof);
    keys = td__alloc_large(npos * sizeof *keys);
    tmp = td__alloc_large(npos * sizeof *tmp);
    if (!cpof || !keys || !tmp)
        goto out;
    cpof[0] = 0;
    for (size_t i = 0, r = 1; i < nw; i++)
        for (uint64_t x = bits[i]; x; x &= x - 1)
            cpof[r++] = (uint32_t)(i * 64 + (unsigned)__builtin_ctzll(x));
    size_t n = 0;
    for (uint32_t w = 0; w < m->V; w++) {
        const tm_word *s = &m->words[w];
        const uint8_t *p = m->pool + s->off;
        uint64_t ctx = 0; /* K BOS */
        for (unsigned i = 0; i < s->len;) {
            uint32_t c;
            i += td__utf8_decode(p + i, s->len - i, &c);
            uint64_t id = rk[c >> 6] + 1 +
                          (uint64_t)__builtin_popcountll(bits[c >> 6] & (((uint64_t)1 << (c & 63)) - 1));
            keys[n++] = ctx << b | id;
            ctx = ctx >> b | id << top;
        }
        keys[n++] = ctx << b | END;
    }
    if (td__tm_radix_sort(keys, n, tmp) != TD_OK)
        goto out;
    free(tmp);
    tmp = NULL;

    /* States: the root, then each run closed (children before parents) that
     * has depth 1 or at least char_min keys; counted first, then made. */
    size_t nst = cc_runs(keys, n, K, b, m->p.char_min, NULL);
    if (nst >= TM_NIL) {
        rc = TD_EMODEL;
        goto out;
    }
    if (!(sts = td__alloc_large(nst * sizeof *sts)))
        goto out;
    (void)cc_runs(keys, n, K, b, m->p.char_min, sts);
    if (emap_init(&h, nst) != TD_OK)
        goto out;
    for (size_t s = 0; s < nst; s++) {
        uint64_t key = (sts[s].ctx << 3 | sts[s].depth) + 1;
        size_t i = emap_slot(&h, key);
        h.k[i] = key;
        h.v[i] = (uint32_t)s;
    }

    /* Each state's table: its run's symbols counted, END first, then code
     * points ascending. */
    /* at least TD_LARGE: on huge pages (a fault per 4 KiB costs more) */
    size_t np = 0, pcap = TD_MAX(2 * nst + 64, TD_LARGE / sizeof *ps);
    cnt = calloc(nsym, sizeof *cnt);
    touch = malloc((size_t)nsym * sizeof *touch);
    ps = td__alloc_large(pcap * sizeof *ps);
    pc = td__alloc_large(pcap * sizeof *pc);
    m->cst = td__calloc_large(nst * sizeof *m->cst);
    if (!cnt || !touch || !ps || !pc || !m->cst)
        goto out;
    for (size_t s = 0; s < nst; s++) {
        uint32_t nt = 0;
        for (size_t i = sts[s].start; i < sts[s].end; i++) {
            uint32_t y = (uint32_t)(keys[i] & smask);
            if (!cnt[y]++)
                touch[nt++] = y;
        }
        if (np + nt > pcap) {
            size_t c2 = TD_MAX(2 * pcap, np + nt);
            uint32_t *a = td__realloc_large(ps, pcap * sizeof *ps, c2 * sizeof *ps);
            if (a)
                ps = a;
            uint32_t *q = td__realloc_large(pc, pcap * sizeof *pc, c2 * sizeof *pc);
            if (q)
                pc = q;
            if (!a || !q)
                goto out;
            pcap = c2;
        }
        tm_cstate *st = &m->cst[s];
        st->off = (uint32_t)np;
        st->n = nt;
        if (cnt[END]) {
            ps[np] = END;
            pc[np++] = cnt[END];
            cnt[END] = 0;
        }
        if (nt <= 32) { /* few: sort them */
            for (uint32_t a = 1; a < nt; a++)
                for (uint32_t j = a; j && touch[j - 1] > touch[j]; j--) {
                    uint32_t t = touch[j];
                    touch[j] = touch[j - 1];
                    touch[j - 1] = t;
                }
            for (uint32_t j = 0; j < nt; j++)
                if (cnt[touch[j]]) {
                    ps[np] = touch[j];
                    pc[np++] = cnt[touch[j]];
                    cnt[touch[j]] = 0;
                }
        } else { /* many: in order of rank */
            for (uint32_t y = 1; y < END; y++)
                if (cnt[y]) {
                    ps[np] = y;
                    pc[np++] = cnt[y];
                    cnt[y] = 0;
                }
        }
        uint32_t last = sts[s].depth ? (uint32_t)(sts[s].ctx >> top) : 0;
        st->cp = cpof[last];
        st->cplen = last ? (uint8_t)td__utf8_encode(st->cp, st->utf8) : 0;
    }
    m->ncstates = (uint32_t)nst;
    m->cent = td__alloc_large((np ? np : 1) * sizeof *m->cent);
    if (!m->cent)
        goto out;
    /* a symbol's value: the longest state among the symbol followed by the
     * context's code points, newest first (states are prefix-closed: a
     * longer context is never seen more often than its prefix) */
    for (size_t s = 0; s < nst; s++) {
        const tm_cstate *st = &m->cst[s];
        uint32_t ne = st->n, maxlen = sts[s].depth + 1 > K ? K : sts[s].depth + 1;
        if (tabs_room(T, ne) != TD_OK)
            goto out;
        for (uint32_t j = 0; j < ne; j++) {
            uint32_t y = ps[st->off + j], next = TM_END;
            if (y != END) {
                uint64_t c = (uint64_t)y << top | sts[s].ctx >> b;
                for (unsigned len = 1; len <= maxlen; len++) {
                    uint64_t pre = c & ~(((uint64_t)1 << (CB - len * b)) - 1);
                    uint32_t v = emap_find(&h, (pre << 3 | len) + 1);
                    if (v == TM_END)
                        break;
                    next = v;
                }
            }
            T->v[j] = next;
            T->w[j] = pc[st->off + j];
        }
        alias_build(T, m->cent + st->off, ne);
    }
    /* Start: the longest state of K BOS. */
    m->cstart = TM_END;
    for (unsigned len = 1; len <= K; len++) {
        uint32_t v = emap_find(&h, (uint64_t)len + 1);
        if (v == TM_END)
            break;
        m->cstart = v;
    }
    rc = m->cstart == TM_END ? TD_EMODEL : TD_OK;
out:
    free(bits);
    free(rk);
    free(cpof);
    free(keys);
    free(tmp);
    free(cnt);
    free(touch);
    free(ps);
    free(pc);
    free(sts);
    emap_free(&h);
    return rc;
}

/* The character model of rare words: contexts of up to char_order code
 * points over the distinct head words, each word once (docs/format.md). */
static int compile_chars_hash(td_model *m, tabs *T)
{
    const unsigned K = m->p.char_order;
    size_t npos = 0;
    for (uint32_t w = 0; w < m->V; w++)
        npos += (size_t)m->words[w].cols + 1;
    /* em: the trie's edges; cm: (context node, next symbol) -> count.  Both
     * start small (a corpus's words share most of their contexts: about
     * npos / 4 nodes and npos / 2 pairs on prose) and grow if need be. */
    emap em = {0}, cm = {0};
    cnode *nd = NULL;
    uint64_t *keys = NULL, *tmp = NULL, *pk = NULL;
    uint32_t *kc = NULL, *pc = NULL;
    size_t nn = 1, ncap = npos / 4 + 64;
    int rc = TD_ENOMEM;

    if (emap_init(&em, npos / 4 + 64) || emap_init(&cm, npos / 2 + 64))
        goto out;
    nd = td__alloc_large(ncap * sizeof *nd);
    if (!nd)
        goto out;
    nd[0] = (cnode){TM_END, 0, 0, 0, 0};

    uint32_t hist[TM_MAX_ORDER + TM_WORD_MAX + 1];
    for (uint32_t w = 0; w < m->V; w++) {
        const tm_word *s = &m->words[w];
        const uint8_t *p = m->pool + s->off;
        unsigned L = 0;
        for (unsigned i = 0; i < K; i++)
            hist[L++] = TM_BOS;
        for (unsigned i = 0; i < s->len;) {
            uint32_t c;
            i += td__utf8_decode(p + i, s->len - i, &c);
            hist[L++] = c;
        }
        /* The positions of a word (each code point and the END) walk the
         * trie one depth at a time, all positions together: their edge
         * lookups are independent, so their cache misses overlap (the
         * prefetches).  Node numbers are internal: the order in which
         * nodes are made changes no table's content. */
        unsigned npw = L - K + 1;
        uint32_t cur[TM_WORD_MAX + 1], sym[TM_WORD_MAX + 1];
        size_t slot[TM_WORD_MAX + 1];
        for (unsigned q = 0; q < npw; q++) {
            unsigned j = K + q;
            sym[q] = j < L ? hist[j] : TM_ENDSYM;
            cur[q] = 0;
        }
        for (unsigned k = 1; k <= K; k++) {
            while (4 * (em.n + npw + 1) > 3 * em.mask)
                if (emap_grow(&em) != TD_OK)
                    goto out;
            for (unsigned q = 0; q < npw; q++) {
                uint64_t key = ((uint64_t)cur[q] << 22 | hist[K + q - k]) + 1;
                slot[q] = emap_home(&em, key);
                __builtin_prefetch(&em.k[slot[q]]);
                __builtin_prefetch(&em.v[slot[q]]);
            }
            for (unsigned q = 0; q < npw; q++) {
                uint32_t c = cur[q], x = hist[K + q - k];
                uint64_t key = ((uint64_t)c << 22 | x) + 1;
                size_t i = slot[q];
                while (em.k[i] && em.k[i] != key)
                    i = (i + 1) & em.mask;
                if (!em.k[i]) {
                    if (nn == ncap) {
                        cnode *nq = td__realloc_large(nd, ncap * sizeof *nd, 2 * ncap * sizeof *nd);
                        if (!nq)
                            goto out;
                        nd = nq;
                        ncap *= 2;
                    }
                    em.k[i] = key;
                    em.v[i] = (uint32_t)nn;
                    em.n++;
                    nd[nn] = (cnode){c, x, k, 0, 0};
                    nn++;
                }
                cur[q] = em.v[i];
                __builtin_prefetch(&nd[cur[q]]);
            }
        }
        /* count each position and its symbol after its longest context (the
         * shorter ones are summed below) */
        while (4 * (cm.n + npw + 1) > 3 * cm.mask)
            if (emap_grow(&cm) != TD_OK)
                goto out;
        for (unsigned q = 0; q < npw; q++) {
            slot[q] = emap_home(&cm, ((uint64_t)cur[q] << 22 | sym[q]) + 1);
            __builtin_prefetch(&cm.k[slot[q]]);
            __builtin_prefetch(&cm.v[slot[q]]);
        }
        for (unsigned q = 0; q < npw; q++) {
            uint64_t key = ((uint64_t)cur[q] << 22 | sym[q]) + 1;
            size_t i = slot[q];
            while (cm.k[i] && cm.k[i] != key)
                i = (i + 1) & cm.mask;
            if (!cm.k[i]) {
                cm.k[i] = key;
                cm.v[i] = 0;
                cm.n++;
            }
            cm.v[i]++;
            nd[cur[q]].total++;
        }
    }
    /* Every position has a context of each length up to K, so a shorter
     * context's total and (context, symbol) counts are the sums of its
     * children's: summed from depth K up (a child is made after its parent),
     * a lookup per pair instead of one per position and depth. */
    for (size_t i = nn; i-- > 1;)
        nd[nd[i].parent].total += nd[i].total;
    {
        size_t na = 0;
        pk = td__alloc_large((cm.n ? cm.n : 1) * 2 * sizeof *pk);
        pc = td__alloc_large((cm.n ? cm.n : 1) * sizeof *pc);
        if (!pk || !pc)
            goto out;
        uint64_t *nk = pk + cm.n; /* pairs new at the next depth */
        for (size_t i = 0; i <= cm.mask; i++)
            if (cm.k[i]) {
                pk[na] = cm.k[i];
                pc[na++] = cm.v[i];
            }
        for (unsigned d = K; d >= 1; d--) {
            size_t nb = 0;
            while (4 * (cm.n + na + 1) > 3 * cm.mask)
                if (emap_grow(&cm) != TD_OK)
                    goto out;
            for (size_t j = 0; j < na; j++) {
                uint64_t key = pk[j] - 1;
                uint64_t up = ((uint64_t)nd[key >> 22].parent << 22 | (key & 0x3FFFFF)) + 1;
                size_t i = emap_slot(&cm, up);
                if (!cm.k[i]) {
                    cm.k[i] = up;
                    cm.v[i] = 0;
                    cm.n++;
                    nk[nb++] = up;
                }
                cm.v[i] += pc[j];
            }
            for (size_t j = 0; j < nb; j++) { /* complete now */
                pk[j] = nk[j];
                pc[j] = cm.v[emap_slot(&cm, nk[j])];
            }
            na = nb;
        }
    }
    /* States: contexts of length <= 1, or seen at least char_min times. */
    uint32_t nst = 0;
    for (size_t i = 0; i < nn; i++)
        nd[i].state = (nd[i].depth <= 1 || nd[i].total >= m->p.char_min) ? nst++ : TM_END;
    if (nst >= TM_NIL) {
        rc = TD_EMODEL;
        goto out;
    }
    /* The (node, symbol) pairs of states, sorted by node then symbol, with
     * their counts.  END is the largest symbol: rotated to the front below. */
    size_t np = 0;
    keys = td__alloc_large((cm.n ? cm.n : 1) * sizeof *keys);
    tmp = td__alloc_large((cm.n ? cm.n : 1) * sizeof *tmp);
    if (!keys || !tmp)
        goto out;
    for (size_t i = 0; i <= cm.mask; i++)
        if (cm.k[i] && nd[(cm.k[i] - 1) >> 22].state != TM_END)
            keys[np++] = cm.k[i] - 1;
    if (td__tm_radix_sort(keys, np, tmp) != TD_OK)
        goto out;
    free(tmp);
    tmp = NULL;
    kc = td__alloc_large((np ? np : 1) * sizeof *kc);
    m->cst = td__calloc_large((nst ? nst : 1) * sizeof *m->cst);
    m->cent = td__alloc_large((np ? np : 1) * sizeof *m->cent);
    if (!kc || !m->cst || !m->cent)
        goto out;
    for (size_t i = 0; i < np; i++)
        kc[i] = cm.v[emap_slot(&cm, keys[i] + 1)];
    emap_free(&cm);
    memset(&cm, 0, sizeof cm);
    m->ncstates = nst;
    for (size_t i = 0; i < nn; i++) {
        if (nd[i].state == TM_END)
            continue;
        tm_cstate *st = &m->cst[nd[i].state];
        /* the newest code point: the symbol of the depth-1 ancestor */
        uint32_t c = (uint32_t)i, last = TM_BOS;
        while (c && nd[c].depth > 1)
            c = nd[c].parent;
        if (c)
            last = nd[c].sym;
        st->cp = last == TM_BOS ? 0 : last;
        st->cplen = last == TM_BOS ? 0 : (uint8_t)td__utf8_encode(last, st->utf8);
    }
    size_t e = 0;
    for (size_t i = 0; i < np;) {
        uint32_t ci = (uint32_t)(keys[i] >> 22);
        size_t j = i;
        while (j < np && (keys[j] >> 22) == ci)
            j++;
        if (tabs_room(T, (uint32_t)(j - i)) != TD_OK)
            goto out;
        /* the context's code points, newest first */
        uint32_t ctx[TM_MAX_ORDER];
        unsigned k = 0;
        for (uint32_t c = ci; c; c = nd[c].parent)
            ctx[k++] = nd[c].sym; /* oldest first */
        uint32_t ne = 0;
        /* END (the largest symbol, last) goes first */
        for (size_t t = (keys[j - 1] & 0x3FFFFF) == TM_ENDSYM ? j - 1 : i, u = 0; u < j - i;
             u++, t = t + 1 < j ? t + 1 : i) {
            uint32_t sy = (uint32_t)(keys[t] & 0x3FFFFF), next = TM_END;
            if (sy != TM_ENDSYM) {
                /* longest suffix of context + sym that is a state:
                 * walk sym, then the context's code points newest first */
                uint32_t c = emap_get(&em, 0, sy);
                unsigned len = 1, maxlen = k + 1 > K ? K : k + 1;
                while (c != TM_END && nd[c].state != TM_END) {
                    next = nd[c].state;
                    if (len == maxlen)
                        break;
                    c = emap_get(&em, c, ctx[k - len]);
                    len++;
                }
            }
            T->v[ne] = next;
            T->w[ne++] = kc[t];
        }
        tm_cstate *st = &m->cst[nd[ci].state];
        st->off = (uint32_t)e;
        st->n = ne;
        alias_build(T, m->cent + e, ne);
        e += ne;
        i = j;
    }
    /* Start: the longest state suffix of BOS^K. */
    {
        uint32_t c = 0;
        m->cstart = TM_END;
        for (unsigned len = 1; len <= K; len++) {
            c = emap_get(&em, c, TM_BOS);
            if (c == TM_END || nd[c].state == TM_END)
                break;
            m->cstart = nd[c].state;
        }
    }
    rc = m->cstart == TM_END ? TD_EMODEL : TD_OK;
out:
    emap_free(&em);
    emap_free(&cm);
    free(nd);
    free(keys);
    free(tmp);
    free(kc);
    free(pk);
    free(pc);
    return rc;
}

static int compile_chars(td_model *m, tabs *T, int flags)
{
    if (!(flags & TM_LOAD_HASH_CHARS)) {
        int rc = compile_chars_sorted(m, T);
        if (rc != CC_FALLBACK)
            return rc;
    }
    return compile_chars_hash(m, T);
}

/* A walk of the character model spelling one rare word (tail_spell). */
typedef struct ts_walk {
    uint64_t s, r;
    uint32_t st;
    unsigned len, n, half;
} ts_walk;

static inline void ts_start(const td_model *m, uint32_t rank, ts_walk *w)
{
    w->s = td__wymix(m->tk[0] ^ rank, m->tk[1] ^ TD_WY_P1) ^ m->tk[1];
    w->r = 0;
    w->st = m->cstart;
    w->len = w->n = w->half = 0;
}

/* One draw of walk w, its code point appended at out; 1 once the word is
 * complete (out[0, w->len), w->n code points). */
static inline int ts_step(const td_model *m, ts_walk *w, uint8_t *out)
{
    const tm_cstate *c = &m->cst[w->st];
    if (!w->half)
        w->r = td__wyrand(&w->s);
    uint32_t h = w->half ? (uint32_t)(w->r >> 32) : (uint32_t)w->r;
    w->half ^= 1;
    uint32_t next = tm_sample32(m->cent + c->off, c->n, h);
    if (next == TM_NIL)
        return w->n != 0; /* (the start state never ends a word: words are not empty) */
    const tm_cstate *d = &m->cst[next];
    if (w->n == TM_TAIL_CPS || w->len + d->cplen > TM_WORD_MAX)
        return 1;
    memcpy(out + w->len, d->utf8, 4);
    w->len += d->cplen;
    w->n++;
    w->st = next;
    return 0;
}

static unsigned tail_spell(const td_model *m, uint32_t rank, uint8_t *out, unsigned *cols)
{
    ts_walk w;
    ts_start(m, rank, &w);
    while (!ts_step(m, &w, out))
        ;
    *cols = w.n;
    return w.len;
}

/* Cache entry e of a spelling (td__tm_tail_cache's layout). */
static void tc_entry(uint8_t *e, const uint8_t *word, unsigned len, unsigned cols)
{
    memset(e, 0, 32);
    if (len <= 30) {
        memcpy(e, word, len);
        e[30] = (uint8_t)len;
        e[31] = (uint8_t)cols;
    } else {
        e[30] = TM_TCACHE_NONE;
    }
}

/* Every entry of the cache c, TC_LANES words spelled at once.  Each step
 * of a walk waits on the one before (state, alias entry, next state);
 * interleaved walks overlap those chains: four at a time spell the
 * built-in model's 65536 words in 4.3 ms instead of 7.0 (more lanes spill
 * registers and run slower). */
#define TC_LANES 4
static void tc_fill(const td_model *m, uint8_t *c)
{
    ts_walk w[TC_LANES];
    uint8_t tw[TC_LANES][TM_WORD_MAX + 8];
    uint32_t rank[TC_LANES], next = 0;
    unsigned live = 0;
    for (; live < TC_LANES && next < TM_TCACHE_N; live++) {
        rank[live] = next++;
        ts_start(m, rank[live], &w[live]);
    }
    while (live) {
        for (unsigned i = 0; i < live;) {
            if (!ts_step(m, &w[i], tw[i])) {
                i++;
                continue;
            }
            tc_entry(c + (size_t)rank[i] * 32, tw[i], w[i].len, w[i].n);
            if (next < TM_TCACHE_N) {
                rank[i] = next++;
                ts_start(m, rank[i], &w[i]);
                i++;
            } else { /* the last lane takes this one's place */
                live--;
                w[i] = w[live];
                rank[i] = rank[live];
                memcpy(tw[i], tw[live], sizeof tw[i]);
            }
        }
    }
}

static int is_cap(uint32_t c);

unsigned td__tm_respell(const td_model *m, uint64_t s, const uint8_t *orig, unsigned len,
                        uint8_t *out)
{
    uint32_t st = m->cstart;
    unsigned pos = 0, half = 0;
    uint64_t r = 0;
    while (pos < len) {
        uint32_t c;
        unsigned need = td__utf8_decode(orig + pos, len - pos, &c), tries = 0;
        if (!need) /* not UTF-8 (a model's words are): kept */
            return 0;
        for (;;) {
            if (!half)
                r = td__wyrand(&s);
            uint32_t h = half ? (uint32_t)(r >> 32) : (uint32_t)r;
            half ^= 1;
            uint32_t next = tm_sample32(m->cent + m->cst[st].off, m->cst[st].n, h);
            if (next != TM_NIL && m->cst[next].cplen == need) {
                memcpy(out + pos, m->cst[next].utf8, 4);
                pos += need;
                st = next;
                break;
            }
            if (++tries == TM_RESPELL_TRIES)
                return 0;
            if (tries == TM_RESPELL_TRIES / 2) /* a context that would end the word */
                st = m->cstart;
        }
    }
    return len;
}

int td__tm_is_cap(const uint8_t *w, unsigned len)
{
    uint32_t c = 0;
    td__utf8_decode(w, len, &c);
    return is_cap(c);
}

void td__tm_cap(uint8_t *out, unsigned len)
{
    /* Capitalise the first letter: ASCII, Latin-1, Greek, Cyrillic. */
    uint32_t c = 0;
    td__utf8_decode(out, len, &c);
    uint32_t u = c;
    if (c >= 'a' && c <= 'z')
        u = c - 32;
    else if ((c >= 0xE0 && c <= 0xFE && c != 0xF7) || (c >= 0x3B1 && c <= 0x3C9 && c != 0x3C2) ||
             (c >= 0x430 && c <= 0x44F))
        u = c - 32;
    else if (c >= 0x450 && c <= 0x45F)
        u = c - 80;
    if (u != c)
        td__utf8_encode(u, out); /* same length in these ranges */
}

unsigned td__tm_tail_word(const td_model *m, uint32_t rank, int cap, uint8_t *out, unsigned *cols)
{
    unsigned len = tail_spell(m, rank, out, cols);
    if (cap)
        td__tm_cap(out, len);
    return len;
}

const uint8_t *td__tm_tail_cache(const td_model *m)
{
    /* The model is immutable but for this cache, which is a pure function of
     * it: whoever builds it first publishes it, the others free theirs. */
    td_model *mm = (td_model *)m;
    uint8_t *c = __atomic_load_n(&mm->tcache, __ATOMIC_ACQUIRE);
    if (c)
        return c;
    c = td__alloc_large((size_t)TM_TCACHE_N * 32); /* 2 MiB, all written: one fault, not 512 */
    if (!c)
        return NULL;
    tc_fill(m, c);
    uint8_t *expect = NULL;
    if (!__atomic_compare_exchange_n(&mm->tcache, &expect, c, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        free(c);
        c = expect;
    }
    return c;
}

/* Whether code point c is a capital that td__tm_cap makes (the inverse of
 * its map). */
static int is_cap(uint32_t c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 0xC0 && c <= 0xDE && c != 0xD7) ||
           (c >= 0x391 && c <= 0x3A9 && c != 0x3A2) || (c >= 0x400 && c <= 0x42F);
}

const tm_rot *td__tm_rot(const td_model *m)
{
    td_model *mm = (td_model *)m;
    tm_rot *r = __atomic_load_n(&mm->rot, __ATOMIC_ACQUIRE);
    if (r)
        return r;
    const uint32_t V = m->V;
    uint16_t *id = calloc(TM_ROT_MAXC, sizeof *id); /* key -> class + 1 */
    r = td__alloc_large(sizeof *r + sizeof(uint32_t) * ((size_t)TM_ROT_MAXC + 1 + 2 * (size_t)V) +
                        sizeof(uint16_t) * (size_t)V);
    if (!id || !r) {
        free(id);
        free(r);
        return NULL;
    }
    r->start = (uint32_t *)(r + 1);
    r->mem_off = r->start + TM_ROT_MAXC + 1;
    r->gidx = r->mem_off + V;
    r->cls = (uint16_t *)(r->gidx + V);
    r->nc = 0;
    for (uint32_t w = 0; w < V; w++) {
        const tm_word *wd = &m->words[w];
        uint32_t c = 0, band = 0;
        td__utf8_decode(m->pool + wd->off, wd->len, &c);
        while ((uint64_t)(w + 1) >> band > 1)
            band++;
        /* the 511 most frequent words share band 0: fewer classes of one,
         * fewer phrases that every round repeats */
        band = band > 8 ? band - 8 : 0;
        uint32_t shape = c >= '0' && c <= '9' ? 2u : (uint32_t)is_cap(c);
        uint32_t key = ((band * 33u + wd->len) * 33u + wd->cols) * 3u + shape;
        if (!id[key]) {
            id[key] = (uint16_t)++r->nc;
            r->start[r->nc] = 0;
        }
        r->cls[w] = (uint16_t)(id[key] - 1);
        r->start[id[key]]++; /* sizes, shifted by one */
    }
    r->start[0] = 0;
    for (uint32_t q = 1; q <= r->nc; q++)
        r->start[q] += r->start[q - 1];
    for (uint32_t w = 0; w < V; w++) { /* start[q] runs ahead as q fills, then is restored */
        uint32_t g = r->start[r->cls[w]]++;
        r->gidx[w] = g;
        r->mem_off[g] = m->words[w].off;
    }
    for (uint32_t q = r->nc; q > 0; q--)
        r->start[q] = r->start[q - 1];
    r->start[0] = 0;
    free(id);
    tm_rot *expect = NULL;
    if (!__atomic_compare_exchange_n(&mm->rot, &expect, r, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        free(r);
        r = expect;
    }
    return r;
}

static void model_free(td_model *m)
{
    if (!m)
        return;
    free(m->rot);
    free(m->data);
    free(m->pool);
    free(m->words);
    free(m->seps);
    free(m->ent);
    free(m->styles);
    free(m->cst);
    free(m->cent);
    free(m->tcache);
    free(m);
}

/* Room for k more alias entries at the end of T->ent, and scratch for
 * building k of them. */
static int tabs_reserve(tabs *T, uint32_t k)
{
    if (T->n + k > T->cap) {
        size_t cap = TD_MAX(T->n + k, 2 * T->cap);
        tm_alias *e = td__realloc_large(T->ent, T->cap * sizeof *e, cap * sizeof *e);
        if (!e)
            return TD_ENOMEM;
        T->ent = e;
        T->cap = cap;
    }
    return tabs_room(T, k);
}

/* A distribution over v[] with weights c[], its alias table made at the end
 * of T->ent; with wb != NO_BACKOFF the weights are 256 c and one more slot,
 * TM_BACKOFF, weighs wb * n (Witten-Bell: back off in proportion to the
 * number of distinct values). */
#define NO_BACKOFF UINT32_MAX
static int add_dist(tabs *T, tm_dist *d, const uint32_t *v, const uint64_t *c, uint32_t n,
                    uint32_t wb)
{
    d->off = (uint32_t)T->n;
    d->n = 0;
    if (!n)
        return TD_OK;
    uint32_t k = n + (wb != NO_BACKOFF && wb);
    if (tabs_reserve(T, k) != TD_OK)
        return TD_ENOMEM;
    for (uint32_t i = 0; i < n; i++) {
        T->v[i] = v[i];
        T->w[i] = wb == NO_BACKOFF ? c[i] : 256 * c[i];
    }
    if (k > n) {
        T->v[n] = TM_BACKOFF;
        T->w[n] = (uint64_t)wb * n;
    }
    alias_build(T, T->ent + T->n, k);
    T->n += k;
    d->n = k;
    return TD_OK;
}

/* A count list read straight into its distribution (rd_list then
 * add_dist, without the copy); with sum, each count is also added to
 * sum[id], whose totals must stay below 2^31 (else r->bad).  TD_OK (r->bad
 * for a bad list), TD_ENOMEM. */
static int rd_dist(rd *r, tabs *T, tm_dist *d, uint32_t lim, uint32_t wb, uint64_t *sum)
{
    uint32_t n = rd_var(r);
    d->off = (uint32_t)T->n;
    d->n = 0;
    if (r->bad || n > lim || n > (size_t)(r->end - r->p) / 2) {
        r->bad = 1;
        return TD_OK;
    }
    if (!n)
        return TD_OK;
    uint32_t k = n + (wb != NO_BACKOFF && wb);
    if (tabs_reserve(T, k) != TD_OK)
        return TD_ENOMEM;
    uint64_t total = 0, prev = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t id = prev + rd_var(r) + (i ? 1 : 0);
        uint32_t c = rd_var(r);
        total += c;
        if (r->bad || id >= lim || c == 0 || total > TM_COUNT_MAX ||
            (sum && sum[id] + c > TM_COUNT_MAX)) {
            r->bad = 1;
            return TD_OK;
        }
        if (sum)
            sum[id] += c;
        T->v[i] = (uint32_t)id;
        T->w[i] = wb == NO_BACKOFF ? c : 256 * (uint64_t)c;
        prev = id;
    }
    if (k > n) {
        T->v[n] = TM_BACKOFF;
        T->w[n] = (uint64_t)wb * n;
    }
    alias_build(T, T->ent + T->n, k);
    T->n += k;
    d->n = k;
    return TD_OK;
}

int td__tm_load(td_model **out, const void *buf, size_t len, int flags)
{
    const uint8_t *b = buf;
    td_model *m = NULL;
    lists L = {0};
    tabs T = {0};
    int rc = TD_EMODEL;
    uint32_t *tmpv = NULL;
    uint64_t *tmpc = NULL;

    *out = NULL;
    if (!buf || len < TM_HEADER || memcmp(b, TM_MAGIC, 8) != 0)
        return TD_EMODEL;
    uint32_t ver = (uint32_t)b[8] | (uint32_t)b[9] << 8 | (uint32_t)b[10] << 16 |
                   (uint32_t)b[11] << 24;
    if (ver != TM_VERSION && ver != TM_VERSION_RUNS)
        return TD_EMODELVERSION;
    uint64_t plen = td__load64le(b + 16);
    if (td__load64le(b + 8) >> 32 != 0 || plen != len - TM_HEADER)
        return TD_EMODEL;
    rc = td__sodium_ready();
    if (rc != TD_OK)
        return rc;
    uint8_t h[32];
    if (flags & TM_LOAD_TRUSTED) {
        memcpy(h, b + 24, 32);
    } else {
        crypto_generichash(h, 32, b + TM_HEADER, (unsigned long long)plen, NULL, 0);
        if (memcmp(h, b + 24, 32) != 0)
            return TD_EMODEL;
    }

    rc = TD_ENOMEM;
    m = calloc(1, sizeof *m);
    if (!m)
        return TD_ENOMEM;
    m->refs = 1;
    m->builtin = (flags & TM_LOAD_BUILTIN) != 0;
    if (flags & (TM_LOAD_OWN | TM_LOAD_BUILTIN)) {
        m->data = (uint8_t *)(uintptr_t)buf;
    } else {
        m->data = malloc(len);
        if (!m->data)
            goto fail;
        memcpy(m->data, buf, len);
    }
    m->size = len;
    memcpy(m->hash, h, 32);
    m->tk[0] = td__load64le(h);
    m->tk[1] = td__load64le(h + 8);

    rd r = {m->data + TM_HEADER, m->data + len, 0}, s;
    rc = TD_EMODEL;

    /* PARM */
    if (!rd_section(&r, "PARM", &s))
        goto fail;
    m->p.eol = rd_var_max(&s, 0, 1);
    m->p.cache_mu = rd_var_max(&s, 0, 65536);
    m->p.copy_mu = rd_var_max(&s, 0, 65536);
    m->p.recent_mu = rd_var_max(&s, 0, 65536);
    m->p.recent_n = rd_var_max(&s, 1, 8192);
    m->p.wb_word = rd_var_max(&s, 0, 65535);
    m->p.wb_sep = rd_var_max(&s, 0, 65535);
    m->p.tail_r = rd_var_max(&s, 1, 1u << 24);
    m->p.char_order = rd_var_max(&s, 1, TM_MAX_ORDER);
    m->p.char_min = rd_var_max(&s, 1, 1u << 20);
    m->p.max_tokens = rd_var_max(&s, 1, 65535);
    if (s.bad || s.p != s.end)
        goto fail;

    /* WORD, SEPS: strings into one pool */
    rd sw, ss;
    if (!rd_section(&r, "WORD", &sw) || !rd_section(&r, "SEPS", &ss))
        goto fail;
    size_t poolsz = (size_t)(sw.end - sw.p) + (size_t)(ss.end - ss.p) + 64;
    m->pool = calloc(1, poolsz);
    if (!m->pool) {
        rc = TD_ENOMEM;
        goto fail;
    }
    size_t pp = 0;
    m->V = rd_var_max(&sw, 1, (1u << 24) - 16);
    if (sw.bad || m->V > (size_t)(sw.end - sw.p) / 2)
        goto fail;
    m->words = td__calloc_large(((size_t)m->V + 1) * sizeof *m->words);
    if (!m->words) {
        rc = TD_ENOMEM;
        goto fail;
    }
    for (uint32_t i = 0; i < m->V; i++) {
        uint32_t l = rd_var_max(&sw, 1, TM_WORD_MAX);
        const uint8_t *p = rd_bytes(&sw, l);
        if (sw.bad || !p)
            goto fail;
        int cols = utf8_cols(p, l, 0);
        if (cols < 0 || memchr(p, ' ', l))
            goto fail;
        memcpy(m->pool + pp, p, l);
        m->words[i] = (tm_word){.off = (uint32_t)pp, .len = (uint8_t)l, .cols = (uint8_t)cols};
        pp += l;
    }
    if (sw.p != sw.end)
        goto fail;
    m->NS = rd_var_max(&ss, 1, 1u << 22);
    if (ss.bad || m->NS > (size_t)(ss.end - ss.p))
        goto fail;
    m->seps = calloc(m->NS, sizeof *m->seps);
    if (!m->seps) {
        rc = TD_ENOMEM;
        goto fail;
    }
    for (uint32_t i = 0; i < m->NS; i++) {
        uint32_t l = rd_var_max(&ss, 0, TM_SEP_MAX);
        const uint8_t *p = rd_bytes(&ss, l);
        if (ss.bad || (l && !p))
            goto fail;
        int cols = utf8_cols(p, l, 1);
        if (cols < 0 || cols > (int)TM_SEP_COLS)
            goto fail;
        if (l)
            memcpy(m->pool + pp, p, l);
        m->seps[i] = (tm_str){.off = (uint32_t)pp, .len = (uint8_t)l, .cols = (uint8_t)cols};
        sep_split(&m->seps[i], m->pool + pp);
        pp += l;
    }
    if (ss.p != ss.end)
        goto fail;

    const uint32_t V1 = m->V + 1;
    uint32_t f, n;
    /* Room for every alias slot: a list's pair takes 2 bytes of the file at
     * least; then the backoff slots, the borrowed unigrams and SEPG.  Pages
     * not used are never touched. */
    T.cap = (size_t)(r.end - r.p) / 2 + 5 * (size_t)V1 + 2 * (size_t)m->NS + 8;
    if (!(T.ent = td__alloc_large(T.cap * sizeof *T.ent)))
        goto nomem;
    /* UNIG */
    if (!rd_section(&r, "UNIG", &s))
        goto fail;
    uint32_t uf[TM_CLASSES], un[TM_CLASSES];
    for (unsigned c = 0; c < TM_CLASSES; c++)
        if (rd_list(&s, &L, V1, &uf[c], &un[c]) != TD_OK)
            goto nomem;
    if (s.bad || s.p != s.end || un[2] == 0)
        goto fail;
    for (unsigned c = 0; c < TM_CLASSES; c++) {
        unsigned cc = un[c] ? c : 2; /* an empty class borrows paragraph starts */
        if (add_dist(&T, &m->uni[c], L.id + uf[cc], L.cnt + uf[cc], un[cc], NO_BACKOFF))
            goto nomem;
    }
    /* BIGR: contexts prev * 2 + class */
    if (!rd_section(&r, "BIGR", &s))
        goto fail;
    for (uint32_t k = 0; k < 2 * V1; k++) {
        if (rd_dist(&s, &T, &m->words[k >> 1].big[k & 1], V1, m->p.wb_word, NULL) != TD_OK)
            goto nomem;
        if (s.bad)
            goto fail;
    }
    if (s.p != s.end)
        goto fail;
    /* SEPW, and their sum */
    if (!rd_section(&r, "SEPW", &s))
        goto fail;
    tmpc = calloc((size_t)2 * m->NS, sizeof *tmpc);
    tmpv = malloc((size_t)2 * m->NS * sizeof *tmpv);
    if (!tmpc || !tmpv)
        goto nomem;
    for (uint32_t w = 0; w < V1; w++) {
        if (rd_dist(&s, &T, &m->words[w].sep, 2 * m->NS, m->p.wb_sep, tmpc) != TD_OK)
            goto nomem;
        if (s.bad)
            goto fail;
    }
    if (s.p != s.end)
        goto fail;
    {
        uint32_t k = 0, best = 0;
        uint64_t total = 0, bestc = 0;
        for (uint32_t i = 0; i < 2 * m->NS; i++) {
            if (!tmpc[i])
                continue;
            total += tmpc[i];
            if ((i & 1) && tmpc[i] > bestc) {
                bestc = tmpc[i];
                best = i;
            }
            tmpv[k] = i;
            tmpc[k++] = tmpc[i];
        }
        if (!bestc || total > TM_COUNT_MAX)
            goto fail;
        m->final_sep = best;
        if (add_dist(&T, &m->sepg, tmpv, tmpc, k, NO_BACKOFF))
            goto nomem;
    }
    /* LEAD */
    if (!rd_section(&r, "LEAD", &s))
        goto fail;
    L.n = 0;
    if (rd_list(&s, &L, m->NS, &f, &n) != TD_OK)
        goto nomem;
    if (s.bad || s.p != s.end || n == 0)
        goto fail;
    if (add_dist(&T, &m->lead, L.id, L.cnt, n, NO_BACKOFF))
        goto nomem;
    /* STYL */
    if (!rd_section(&r, "STYL", &s))
        goto fail;
    m->nstyles = rd_var_max(&s, 1, 4096);
    if (s.bad)
        goto fail;
    m->styles = calloc(m->nstyles, sizeof *m->styles);
    if (!m->styles)
        goto nomem;
    L.n = 0;
    {
        uint64_t total = 0;
        for (uint32_t i = 0; i < m->nstyles; i++) {
            tm_style *st = &m->styles[i];
            for (int j = 0; j < 2; j++) {
                uint32_t l = rd_var_max(&s, 0, TM_IND_MAX);
                const uint8_t *p = rd_bytes(&s, l);
                if (s.bad)
                    goto fail;
                for (uint32_t t = 0; t < l; t++)
                    if (p[t] != ' ' && p[t] != '\t')
                        goto fail;
                memcpy(j ? st->ind2 : st->ind1, p, l);
                if (j)
                    st->ind2_len = (uint8_t)l;
                else
                    st->ind1_len = (uint8_t)l;
            }
            st->trail = (uint8_t)rd_var_max(&s, 0, 1);
            uint32_t c = rd_var_max(&s, 1, TM_COUNT_MAX);
            total += c;
            if (s.bad || total > TM_COUNT_MAX)
                goto fail;
            if (lists_push(&L, i, c) != TD_OK)
                goto nomem;
        }
    }
    if (s.p != s.end)
        goto fail;
    if (add_dist(&T, &m->style, L.id, L.cnt, m->nstyles, NO_BACKOFF))
        goto nomem;
    /* WIDT */
    if (!rd_section(&r, "WIDT", &s))
        goto fail;
    L.n = 0;
    if (rd_list(&s, &L, TM_WIDTH + 1, &f, &n) != TD_OK)
        goto nomem;
    if (s.bad || s.p != s.end || (n && L.id[0] < TM_WIDTH_MIN))
        goto fail;
    if (!n) {
        uint32_t w = TM_WIDTH;
        uint64_t c = 1;
        if (add_dist(&T, &m->width, &w, &c, 1, NO_BACKOFF))
            goto nomem;
    } else if (add_dist(&T, &m->width, L.id, L.cnt, n, NO_BACKOFF)) {
        goto nomem;
    }
    m->version = ver;
    if (ver == TM_VERSION_RUNS && !rd_runs(&r, &m->runs))
        goto fail;
    if (r.p != r.end)
        goto fail;

    rc = compile_chars(m, &T, flags);
    if (rc != TD_OK)
        goto fail;
    m->ent = T.ent;
    T.ent = NULL;
    tabs_free(&T);
    free(L.id);
    free(L.cnt);
    free(tmpv);
    free(tmpc);
    *out = m;
    return TD_OK;
nomem:
    rc = TD_ENOMEM;
fail:
    tabs_free(&T);
    free(L.id);
    free(L.cnt);
    free(tmpv);
    free(tmpc);
    if (m && (flags & (TM_LOAD_OWN | TM_LOAD_BUILTIN)))
        m->data = NULL; /* still the caller's */
    model_free(m);
    return rc;
}

void td__tm_set_cache(td_model *m, const uint8_t *data, uint32_t mu)
{
    if (m->data != data)
        memcpy(m->data, data, m->size);
    memcpy(m->hash, data + 24, 32);
    m->tk[0] = td__load64le(m->hash);
    m->tk[1] = td__load64le(m->hash + 8);
    m->p.cache_mu = m->p.copy_mu = mu;
    free(m->tcache); /* spellings depend on the hash */
    m->tcache = NULL;
}

/* ---- public ------------------------------------------------------------- */

void td__tm_ref(const td_model *m)
{
    if (m && !m->builtin)
        __atomic_add_fetch(&((td_model *)m)->refs, 1, __ATOMIC_RELAXED);
}

void td__tm_unref(const td_model *m)
{
    if (m && !m->builtin && __atomic_sub_fetch(&((td_model *)m)->refs, 1, __ATOMIC_ACQ_REL) == 0)
        model_free((td_model *)m);
}

int td_model_load(td_model **out, const void *buf, size_t len)
{
    if (!out)
        return TD_EINVAL;
    *out = NULL;
    if (!buf && len)
        return TD_EINVAL;
    return td__tm_load(out, buf, len, 0);
}

int td_model_load_file(td_model **out, const char *path)
{
    if (!out || !path)
        return TD_EINVAL;
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return TD_EIO;
    struct stat st;
    if (fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
        /* fstat succeeding leaves errno as it was: name the directory. */
        int e = S_ISDIR(st.st_mode) ? EISDIR : errno;
        close(fd);
        errno = e;
        return TD_EIO;
    }
    /* Anything but a directory is read to its end (a FIFO, /dev/stdin, a
     * process substitution), up to 4 GiB, so a model can come from a pipe
     * as a profile can; a regular file larger than that is refused unread. */
    const size_t cap = (size_t)1 << 32;
    if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > cap) {
        close(fd);
        return TD_EMODEL;
    }
    char *b;
    size_t got;
    int rc = td__read_fd(fd, cap, S_ISREG(st.st_mode) ? (size_t)st.st_size : 0, &b, &got);
    int e = errno;
    close(fd);
    if (rc == TD_OK)
        rc = got > cap ? TD_EMODEL : td__tm_load(out, (const uint8_t *)b, got, 0);
    if (rc == TD_OK && S_ISREG(st.st_mode))
        (*out)->src = (td__file_id){(uint64_t)st.st_dev, (uint64_t)st.st_ino, 1};
    free(b);
    if (rc == TD_EIO)
        errno = e;
    return rc;
}

int td_model_data(const td_model *m, const void **buf, size_t *len)
{
    if (!m || !buf || !len)
        return TD_EINVAL;
    *buf = m->data;
    *len = m->size;
    return TD_OK;
}

int td_model_save(const td_model *m, const char *path)
{
    if (!m || !path || !*path)
        return TD_EINVAL;
    return td__output_put(path, m->data, m->size);
}

int td_model_describe(const td_model *m, td_model_info *info)
{
    if (!m || !info)
        return TD_EINVAL;
    memset(info, 0, sizeof *info);
    info->format_version = m->version;
    info->size = m->size;
    info->words = m->V;
    info->separators = m->NS;
    info->char_states = m->ncstates;
    memcpy(info->hash, m->hash, 32);
    info->cache_mu = m->p.cache_mu;
    info->copy_mu = m->p.copy_mu;
    info->run_share = m->runs.share;
    return TD_OK;
}

void td_model_free(td_model *m)
{
    td__tm_unref(m);
}

static td_model *builtin_model;

const td_model *td_model_builtin(void)
{
    td_model *m = __atomic_load_n(&builtin_model, __ATOMIC_ACQUIRE);
    if (m)
        return m;
    /* linked in: its hash is trusted (test_text checks it) */
    if (td__tm_load(&m, td__tm_builtin_data, td__tm_builtin_size,
                    TM_LOAD_BUILTIN | TM_LOAD_TRUSTED) != TD_OK)
        return NULL;
    td_model *expect = NULL;
    if (!__atomic_compare_exchange_n(&builtin_model, &expect, m, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
        m->builtin = 0; /* another thread won: free ours, not the array */
        m->data = NULL;
        model_free(m);
        return expect;
    }
    return m;
}
