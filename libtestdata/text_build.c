/*
 * The text-model builder: UTF-8 text in, a model file out (docs/format.md,
 * "Text models", "Building a model").  One pass over the input, counting
 * into hash tables keyed by temporary ids; finish() renumbers, writes the
 * file, calibrates its continuation cache on the corpus (which sits above
 * the engine and codec.c: it generates and compresses), and compiles it
 * with the loader, so a built model and a loaded one are the same thing.
 */
#include "codec.h"
#include "kind.h"
#include "pool.h"
#include "text_model.h"

#include <sodium.h>
#include <stdarg.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#define TB_MIN_BYTES 10240u      /* smallest corpus that can be modelled */
#define TB_MIN_WORDS 16u         /* distinct words seen at least twice */
#define TB_PARA_MAX (1u << 22)   /* a paragraph is cut after this many bytes */
#define TB_STYLES 4096u
#define TB_RUN_MAX 8u            /* longest run of spaces kept in a separator */
#define TB_CAL_MAX (4u << 20)    /* corpus bytes kept for calibration */
#define TB_CAL_SLACK 8u           /* ... and readable bytes after them (find_runs) */

/* ---- interned strings ------------------------------------------------------- */

/* Strings (words, separators: at most 40 bytes) -> ids in order of first
 * appearance, with a count per id; an open-addressing table of ids found
 * by a 32-bit hash of the bytes, kept per id for probing and growing.
 * Strings are read 8 bytes at a time: the pool and every caller's buffer
 * have 7 readable bytes past a string's end (their value does not matter). */
typedef struct st_ent {
    uint32_t off;    /* in the pool */
    uint32_t hash;
    uint32_t cnt[4]; /* total, then per class (words); for separators: total,
                      * class of the next word, count as a lead */
    uint8_t len;
} st_ent;

typedef struct strtab {
    uint32_t *slot; /* id + 1; 0 is empty */
    size_t mask;
    uint8_t *pool;
    size_t pool_n, pool_cap;
    st_ent *e;
    size_t n, cap;
} strtab;

#define ST_SLACK 8u

/* Bytes p[0..min(n, 8)) as a little-endian number (reading 8). */
static inline uint64_t load_part(const uint8_t *p, size_t n)
{
    uint64_t v = td__load64le(p);
    return n >= 8 ? v : v & (((uint64_t)1 << (8 * n)) - 1);
}

static inline uint32_t str_hash(const uint8_t *p, size_t n)
{
    uint64_t h = 0x9E3779B97F4A7C15u ^ n;
    for (size_t i = 0; i < n; i += 8) {
        h = (h ^ load_part(p + i, n - i)) * 0xff51afd7ed558ccdu;
        h ^= h >> 32;
    }
    return (uint32_t)h;
}

static inline int str_eq(const uint8_t *a, const uint8_t *b, size_t n)
{
    for (size_t i = 0; i < n; i += 8)
        if (load_part(a + i, n - i) != load_part(b + i, n - i))
            return 0;
    return 1;
}

static int st_init(strtab *t, size_t slots)
{
    memset(t, 0, sizeof *t);
    t->mask = slots - 1;
    t->slot = td__calloc_large(slots * sizeof *t->slot);
    return t->slot ? TD_OK : TD_ENOMEM;
}

static void st_free(strtab *t)
{
    free(t->slot);
    free(t->pool);
    free(t->e);
    memset(t, 0, sizeof *t);
}

static int st_grow(strtab *t)
{
    size_t mask = 2 * t->mask + 1;
    uint32_t *slot = td__calloc_large((mask + 1) * sizeof *slot);
    if (!slot)
        return TD_ENOMEM;
    for (size_t id = 0; id < t->n; id++) {
        size_t i = t->e[id].hash & mask;
        while (slot[i])
            i = (i + 1) & mask;
        slot[i] = (uint32_t)id + 1;
    }
    free(t->slot);
    t->slot = slot;
    t->mask = mask;
    return TD_OK;
}

/* Add string p[0..n) (hash h) at the free slot i; its id, or UINT32_MAX
 * on ENOMEM. */
static __attribute__((noinline)) uint32_t st_add(strtab *t, const uint8_t *p, size_t n, uint32_t h,
                                                  size_t i)
{
    if (2 * (t->n + 1) > t->mask) {
        if (st_grow(t) != TD_OK)
            return UINT32_MAX;
        for (i = h & t->mask; t->slot[i]; i = (i + 1) & t->mask)
            ;
    }
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : (t->mask + 1) / 2;
        st_ent *e = td__realloc_large(t->e, t->cap * sizeof *e, cap * sizeof *e);
        if (!e)
            return UINT32_MAX;
        t->e = e;
        t->cap = cap;
    }
    if (t->pool_n + n + ST_SLACK > t->pool_cap) {
        size_t cap = t->pool_cap ? 2 * t->pool_cap : 65536;
        while (cap < t->pool_n + n + ST_SLACK)
            cap *= 2;
        uint8_t *q = td__realloc_large(t->pool, t->pool_cap, cap);
        if (!q)
            return UINT32_MAX;
        t->pool = q;
        t->pool_cap = cap;
    }
    uint32_t id = (uint32_t)t->n++;
    if (n)
        memcpy(t->pool + t->pool_n, p, n);
    t->e[id] = (st_ent){.off = (uint32_t)t->pool_n, .hash = h, .len = (uint8_t)n};
    t->pool_n += n;
    t->slot[i] = id + 1;
    return id;
}

/* Id of string p[0..n), added if new; UINT32_MAX on ENOMEM. */
static inline uint32_t st_intern(strtab *t, const uint8_t *p, size_t n)
{
    const uint32_t h = str_hash(p, n);
    size_t i = h & t->mask;
    for (uint32_t k; (k = t->slot[i]) != 0; i = (i + 1) & t->mask) {
        uint32_t id = k - 1;
        const st_ent *e = &t->e[id];
        if (e->hash == h && e->len == n && str_eq(t->pool + e->off, p, n))
            return id;
    }
    return st_add(t, p, n, h, i);
}

/* ---- the builder ------------------------------------------------------------ */

typedef struct tb_style {
    uint8_t ind1[TM_IND_MAX], ind2[TM_IND_MAX];
    uint8_t l1, l2, trail;
    uint32_t count;
} tb_style;

struct td_model_builder {
    int failed; /* sticky error code, 0 if none */
    char msg[200];
    uint64_t bytes;    /* input bytes seen */
    uint64_t utf8_off; /* offset of the first byte of carry[] */
    uint8_t carry[4];  /* an incomplete code point at the end of the last update */
    unsigned ncarry;
    int at_doc_start;  /* a BOM may follow */
    int cr;            /* the last byte was '\r' */
    uint64_t crlf, lf; /* line ends seen */

    uint8_t *para;     /* the lines of the current paragraph, each ending in '\n',
                        * then the current line from line_at */
    size_t para_n, para_cap, line_at;
    uint32_t para_lines;
    uint8_t *tok;      /* scratch for one paragraph's content */
    size_t tok_cap;

    strtab words, seps;
    uint32_t space; /* id of the separator " ", UINT32_MAX until seen */
    /* Every word of the corpus with the separator after it, counted at the
     * end, so that the hot loop only appends; bigrams are consecutive words
     * of a paragraph, the class of the first one's separator between them.
     * 32 bits each (word << 12 | sep << 1 | final) while the ids fit, else
     * 64 (word << 32 | sep << 1 | final; ids < 2^30): ws_wide. */
    void *ws;
    size_t ws_n, ws_cap;
    int ws_wide;
    tb_style *styles;
    uint32_t nstyles;
    uint32_t widths[TM_WIDTH + 1];
    uint64_t ntokens;
    tm_params p;
    int p_set;       /* cache_mu or copy_mu set by td__tm_builder_param: no calibration */
    int no_runs;     /* td__tm_builder_param runs=0: no RUNS section (experiments) */
    uint8_t *cal;    /* the first TB_CAL_MAX bytes of the corpus (room for all of
                      * them from the start: pages are touched as they fill) */
    size_t cal_n;
    uint8_t *file;   /* the finished model file (save may be retried) */
    size_t file_n;
    td__file_id *inputs; /* the regular files read */
    size_t ninputs;
    int soft;        /* msg holds a refusal that left the builder usable */
    unsigned threads; /* td_model_builder_set_threads (0: all cores) */
    /* td_model_builder_fidelity(): the calibration's sizes at the rate it
     * kept, of the corpus (cal_cs) and of the text (cal_z), cal_bytes each */
    int have_fid;
    uint64_t cal_cs[2], cal_z[2], cal_bytes;
    char note[512]; /* td_model_builder_note(): at most about 330 bytes */
};

__attribute__((format(printf, 3, 4))) static int fail(td_model_builder *b, int rc,
                                                       const char *fmt, ...)
{
    if (!b->failed) {
        va_list ap;
        va_start(ap, fmt);
        b->failed = rc;
        vsnprintf(b->msg, sizeof b->msg, fmt, ap);
        va_end(ap);
    }
    return rc;
}

static int nomem(td_model_builder *b)
{
    return fail(b, TD_ENOMEM, "out of memory");
}

int td_model_builder_new(td_model_builder **out)
{
    if (!out)
        return TD_EINVAL;
    *out = NULL;
    td_model_builder *b = calloc(1, sizeof *b);
    if (!b)
        return TD_ENOMEM;
    b->at_doc_start = 1;
    b->space = UINT32_MAX;
    b->threads = 1;
    b->p = (tm_params){.eol = 0,
                       .cache_mu = 26214, /* 0.4 */
                       .copy_mu = 26214,
                       .recent_mu = 16384, /* 0.25 */
                       .recent_n = 2048,
                       /* a word backs off from its bigram list at a quarter
                        * of Witten-Bell's weight: at 256, text was short of
                        * its corpus under bzip2 -9 by 3.5-5.7% (English,
                        * German, Italian; docs/benchmarks.md, "text",
                        * format 10) */
                       .wb_word = 64,
                       .wb_sep = 256,
                       .tail_r = 0, /* 0: the number of head words */
                       .char_order = 4,
                       .char_min = 3,
                       .max_tokens = 2000};
    if (st_init(&b->words, 1u << 12) || st_init(&b->seps, 1u << 10)) {
        td_model_builder_free(b);
        return TD_ENOMEM;
    }
    *out = b;
    return TD_OK;
}

int td_model_builder_set_threads(td_model_builder *b, unsigned threads)
{
    if (!b || b->file)
        return TD_EINVAL;
    b->threads = threads;
    return TD_OK;
}

void td__tm_builder_param(td_model_builder *b, const char *name, uint32_t v)
{
    if (!b || !name)
        return;
    if (!strcmp(name, "cache_mu") || !strcmp(name, "copy_mu"))
        b->p_set = 1;
    if (!strcmp(name, "cache_mu"))
        b->p.cache_mu = v;
    else if (!strcmp(name, "copy_mu"))
        b->p.copy_mu = v;
    else if (!strcmp(name, "recent_mu"))
        b->p.recent_mu = v;
    else if (!strcmp(name, "recent_n"))
        b->p.recent_n = v;
    else if (!strcmp(name, "wb_word"))
        b->p.wb_word = v;
    else if (!strcmp(name, "wb_sep"))
        b->p.wb_sep = v;
    else if (!strcmp(name, "tail_r"))
        b->p.tail_r = v;
    else if (!strcmp(name, "char_order"))
        b->p.char_order = v;
    else if (!strcmp(name, "char_min"))
        b->p.char_min = v;
    else if (!strcmp(name, "max_tokens"))
        b->p.max_tokens = v;
    else if (!strcmp(name, "runs"))
        b->no_runs = v == 0;
}

/* The counts, once the file is written: their memory goes to compiling and
 * calibrating it. */
static void drop_counts(td_model_builder *b)
{
    free(b->para);
    free(b->tok);
    b->para = b->tok = NULL;
    b->para_cap = b->tok_cap = 0;
    st_free(&b->words);
    st_free(&b->seps);
    free(b->ws);
    b->ws = NULL;
    b->ws_n = b->ws_cap = 0;
    b->ws_wide = 0;
}

void td_model_builder_free(td_model_builder *b)
{
    if (!b)
        return;
    drop_counts(b);
    free(b->styles);
    free(b->cal);
    free(b->file);
    free(b->inputs);
    free(b);
}

const char *td_model_builder_message(const td_model_builder *b)
{
    if (!b)
        return "no builder";
    return b->failed || b->soft ? b->msg : "";
}

static int grow(uint8_t **p, size_t *cap, size_t need)
{
    if (need <= *cap)
        return TD_OK;
    size_t c = *cap ? *cap : 4096;
    while (c < need)
        c *= 2;
    uint8_t *q = td__realloc_large(*p, *cap, c);
    if (!q)
        return TD_ENOMEM;
    *p = q;
    *cap = c;
    return TD_OK;
}

static inline int is_blank(uint8_t c)
{
    return c == ' ' || c == '\t' || c == '\f' || c == '\v';
}

/* One code point of well-formed UTF-8 (the builder's text, checked by
 * update): its length. */
static inline unsigned dec(const uint8_t *p, uint32_t *c)
{
    uint32_t b = p[0];
    if (b < 0x80) {
        *c = b;
        return 1;
    }
    if (b < 0xE0) {
        *c = (b & 0x1F) << 6 | (p[1] & 0x3Fu);
        return 2;
    }
    if (b < 0xF0) {
        *c = (b & 0x0F) << 12 | (p[1] & 0x3Fu) << 6 | (p[2] & 0x3Fu);
        return 3;
    }
    *c = (b & 0x07) << 18 | (p[1] & 0x3Fu) << 12 | (p[2] & 0x3Fu) << 6 | (p[3] & 0x3Fu);
    return 4;
}

/* ASCII word characters: letters, digits, '_' (a byte per byte value; none
 * from 0x80). */
static const uint8_t word_ascii[256] = {['0' ... '9'] = 1, ['A' ... 'Z'] = 1, ['_'] = 1,
                                         ['a' ... 'z'] = 1};

static inline int is_word_ascii(uint32_t c) /* c < 256: a byte */
{
    return word_ascii[c];
}

/* Word characters (docs/format.md): ASCII letters, digits and '_', and
 * every code point from U+0080 up except the punctuation and symbol blocks. */
static inline int is_word_cp(uint32_t c)
{
    if (c < 0x80)
        return is_word_ascii(c);
    if (c <= 0xBF || c == 0xD7 || c == 0xF7)
        return 0;
    if ((c >= 0x2000 && c <= 0x2BFF) || (c >= 0x3000 && c <= 0x303F) ||
        (c >= 0xFE30 && c <= 0xFE4F) || (c >= 0xFF00 && c <= 0xFF0F) ||
        (c >= 0xFF1A && c <= 0xFF20) || (c >= 0xFF3B && c <= 0xFF40) ||
        (c >= 0xFF5B && c <= 0xFF65) || c == 0xFEFF)
        return 0;
    return 1;
}

/* Ideographs and kana: scripts written without spaces between words, so
 * each code point is a word of its own (separated by empty separators),
 * the unit their text repeats by.  A run of them would otherwise be one
 * word per clause, nearly all seen once, and the model's vocabulary would
 * be a handful of punctuation-delimited phrases. */
static inline int is_cjk_word(uint32_t c)
{
    return (c >= 0x3040 && c <= 0x30FF) || (c >= 0x31F0 && c <= 0x31FF) ||
           (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x4E00 && c <= 0x9FFF) ||
           (c >= 0xF900 && c <= 0xFAFF) || (c >= 0xFF66 && c <= 0xFF9F) ||
           (c >= 0x20000 && c <= 0x3FFFF);
}

/* Code points between two of which a line break is not a space
 * (ideographs, kana, CJK punctuation and fullwidth forms; the rule of CSS
 * for segment breaks between East Asian wide characters, Hangul aside):
 * text in those scripts is wrapped anywhere, and its lines join with
 * nothing. */
static inline int is_wide_join(uint32_t c)
{
    return is_cjk_word(c) || (c >= 0x3000 && c <= 0x303F) || (c >= 0xFF00 && c <= 0xFF60) ||
           (c >= 0xFFE0 && c <= 0xFFE6);
}

static inline int is_digit(uint32_t c)
{
    return c >= '0' && c <= '9';
}

#define WS_NARROW_WORDS (1u << 20)
#define WS_NARROW_SEPS (1u << 11)

/* Token i as word << 32 | sep << 1 | final, whatever its width. */
static inline uint64_t ws_get(const void *ws, int wide, size_t i)
{
    if (wide)
        return ((const uint64_t *)ws)[i];
    uint32_t t = ((const uint32_t *)ws)[i];
    return (uint64_t)(t >> 12) << 32 | (t & 0xFFF);
}

static __attribute__((noinline)) int ws_grow(td_model_builder *b, int wide)
{
    size_t c = b->ws_n < b->ws_cap ? b->ws_cap : b->ws_cap ? 2 * b->ws_cap : 65536;
    void *q = td__realloc_large(b->ws, b->ws_cap * (b->ws_wide ? 8 : 4), c * (wide ? 8 : 4));
    if (!q)
        return nomem(b);
    if (wide && !b->ws_wide) { /* widen, from the end */
        for (size_t i = b->ws_n; i-- > 0;)
            ((uint64_t *)q)[i] = ws_get(q, 0, i);
        b->ws_wide = 1;
    }
    b->ws = q;
    b->ws_cap = c;
    return TD_OK;
}

/* Append a word and its separator (sep << 1 | final), to be counted at the end. */
static inline int push_token(td_model_builder *b, uint32_t word, uint32_t sf)
{
    int wide = b->ws_wide || word >= WS_NARROW_WORDS || sf >= 2 * WS_NARROW_SEPS;
    if ((b->ws_n == b->ws_cap || wide != b->ws_wide) && ws_grow(b, wide))
        return b->failed;
    if (wide)
        ((uint64_t *)b->ws)[b->ws_n++] = (uint64_t)word << 32 | sf;
    else
        ((uint32_t *)b->ws)[b->ws_n++] = word << 12 | sf;
    return TD_OK;
}

/* Class of the word after separator s[0..n): 1 after a sentence end. */
static unsigned sep_class(const uint8_t *s, size_t n)
{
    unsigned cls = 0;
    for (size_t i = 0; i < n;) {
        uint32_t c;
        i += dec(s + i, &c);
        if (c == '.' || c == '!' || c == '?' || c == 0x2026 || c == 0x3002 || c == 0xFF01 ||
            c == 0xFF1F || c == 0x061F || c == 0x0964)
            cls = 1;
    }
    return cls;
}

/* Clip a separator to TM_SEP_MAX bytes and TM_SEP_COLS code points. */
static size_t clip_sep(const uint8_t *p, size_t n)
{
    if (n <= TM_SEP_COLS) /* fits either way */
        return n;
    size_t i = 0;
    unsigned cols = 0;
    while (i < n && cols < TM_SEP_COLS) {
        uint32_t c;
        unsigned l = dec(p + i, &c);
        if (i + l > TM_SEP_MAX)
            break;
        i += l;
        cols++;
    }
    return i;
}

typedef struct para_ctx {
    td_model_builder *b;
    unsigned cls;  /* class of the next word */
    uint32_t nwords;
    uint32_t pending_word; /* waiting for its separator */
    int has_pending;
} para_ctx;

static inline __attribute__((always_inline)) int emit_sep(para_ctx *x, const uint8_t *s, size_t n,
                                                             int final)
{
    td_model_builder *b = x->b;
    uint32_t sid;
    if (n == 1 && s[0] == ' ' && b->space != UINT32_MAX) { /* the usual one */
        sid = b->space;
    } else {
        sid = st_intern(&b->seps, s, n);
        if (sid == UINT32_MAX)
            return nomem(b);
        if (n == 1 && s[0] == ' ')
            b->space = sid;
    }
    uint32_t *c = b->seps.e[sid].cnt;
    if (c[0]++ == 0)
        c[1] = sep_class(s, n);
    if (!x->has_pending) { /* text before the first word */
        if (c[2] < TM_COUNT_MAX)
            c[2]++;
        return TD_OK;
    }
    if (push_token(b, x->pending_word, sid << 1 | (unsigned)final))
        return b->failed;
    x->has_pending = 0;
    x->cls = c[1];
    return TD_OK;
}

static inline __attribute__((always_inline)) int emit_word(para_ctx *x, const uint8_t *w, size_t n)
{
    td_model_builder *b = x->b;
    uint32_t id = st_intern(&b->words, w, n);
    if (id == UINT32_MAX || id >= (1u << 30))
        return id == UINT32_MAX ? nomem(b) : fail(b, TD_ERANGE, "too many distinct words");
    uint32_t *c = b->words.e[id].cnt;
    if (c[0] < TM_COUNT_MAX) {
        c[0]++;
        c[1 + x->cls]++;
    }
    x->pending_word = id;
    x->has_pending = 1;
    x->nwords++;
    b->ntokens++;
    return TD_OK;
}

/* Tokenise one paragraph's content (lines joined by single spaces), t[n]
 * a 0 (it ends every run of word characters). */
static int tokenize(td_model_builder *b, const uint8_t *t, size_t n)
{
    para_ctx x = {b, 2, 0, 0, 0};
    uint8_t sep[TM_SEP_MAX + TB_RUN_MAX + ST_SLACK];
    size_t sn = 0, run = 0;
    int sep_full = 0;
    size_t i = 0;
    while (i < n) {
        uint32_t c;
        unsigned l = dec(t + i, &c);
        if (is_word_cp(c)) {
            /* a word: word characters, joined by ' ’ - (and . , between
             * digits); an ideograph or kana is a word alone */
            size_t ws = i, we;
            uint32_t last = c;
            i += l;
            for (int cjk = is_cjk_word(c);;) {
                if (cjk) {
                    we = i;
                    break;
                }
                if (is_word_ascii(t[i])) {
                    while (is_word_ascii(t[++i]))
                        ;
                    last = t[i - 1];
                }
                we = i;
                if (i >= n)
                    break;
                uint32_t d;
                unsigned dl = dec(t + i, &d);
                if (is_word_cp(d) && !is_cjk_word(d)) {
                    i += dl;
                    last = d;
                    continue;
                }
                if (d == '\'' || d == 0x2019 || d == '-' || d == '.' || d == ',') {
                    uint32_t e;
                    if (i + dl < n && (dec(t + i + dl, &e), is_word_cp(e) && !is_cjk_word(e)) &&
                        ((d != '.' && d != ',') || (is_digit(last) && is_digit(e)))) {
                        i += dl;
                        last = d;
                        continue;
                    }
                }
                break;
            }
            /* the separator before it */
            if (x.has_pending || sn || !x.nwords) {
                if (emit_sep(&x, sep, clip_sep(sep, sn), 0))
                    return b->failed;
            }
            sn = 0;
            run = 0;
            sep_full = 0;
            /* long words are cut into pieces joined by empty separators */
            while (we - ws > TM_WORD_MAX) {
                size_t cut = ws + TM_WORD_MAX;
                while ((t[cut] & 0xC0) == 0x80)
                    cut--;
                if (emit_word(&x, t + ws, cut - ws) || emit_sep(&x, sep, 0, 0))
                    return b->failed;
                ws = cut;
            }
            if (emit_word(&x, t + ws, we - ws))
                return b->failed;
            /* the usual separator, one space and a word: emitted at once */
            if (t[i] == ' ' && is_word_ascii(t[i + 1])) {
                if (emit_sep(&x, t + i, 1, 0))
                    return b->failed;
                i++;
            }
            continue;
        }
        /* separator characters: controls dropped, runs of blanks capped */
        i += l;
        if (c < 0x20 && !is_blank((uint8_t)c))
            continue;
        if (c == 0x7F)
            continue;
        if (is_blank((uint8_t)c) && c < 0x80) {
            if (run >= TB_RUN_MAX)
                continue;
            run++;
            c = c == '\t' ? '\t' : ' ';
        } else {
            run = 0;
        }
        if (!sep_full) {
            if (sn + l <= TM_SEP_MAX + TB_RUN_MAX) {
                if (l == 1)
                    sep[sn] = (uint8_t)c; /* blanks as ' ' or tab */
                else
                    memcpy(sep + sn, t + i - l, l);
                sn += l;
            } else {
                sep_full = 1;
            }
        }
    }
    if (!x.nwords)
        return TD_OK;
    /* the final separator, trailing blanks removed */
    while (sn && (sep[sn - 1] == ' ' || sep[sn - 1] == '\t'))
        sn--;
    return emit_sep(&x, sep, clip_sep(sep, sn), 1);
}

/* Code points of the UTF-8 p[0..n): bytes that are not 10xxxxxx. */
static unsigned cols_of(const uint8_t *p, size_t n)
{
    size_t c = n, i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t x = td__load64le(p + i);
        uint64_t t = (x & ~(x << 1) & 0x8080808080808080u) >> 7; /* 1 per 10xxxxxx */
        c -= (size_t)((t * 0x0101010101010101u) >> 56);
    }
    for (; i < n; i++)
        c -= (p[i] & 0xC0) == 0x80;
    return (unsigned)c;
}

/* Whether the line starting at q joins the text t[0..n) without a space:
 * the code points before the break and after it are both wide. */
static int wide_join(const uint8_t *t, size_t n, const uint8_t *q)
{
    if (t[n - 1] < 0x80 || q[0] < 0x80) /* ASCII on either side */
        return 0;
    size_t k = n - 1;
    while (k && (t[k] & 0xC0) == 0x80)
        k--;
    uint32_t a, z;
    dec(t + k, &a);
    dec(q, &z);
    return is_wide_join(a) && is_wide_join(z);
}

/* A paragraph is complete: learn its layout and its words. */
static int end_paragraph(td_model_builder *b)
{
    if (!b->para_lines)
        return TD_OK;
    const uint8_t *p = b->para;
    size_t n = b->para_n;
    uint8_t ind1[TM_IND_MAX], ind2[TM_IND_MAX];
    unsigned l1 = 0, l2 = 0, trails = 0, width = 0;
    if (grow(&b->tok, &b->tok_cap, n + ST_SLACK))
        return nomem(b);
    size_t tn = 0;
    uint32_t li = 0;
    for (size_t s = 0; s < n; li++) {
        size_t e = (size_t)((const uint8_t *)memchr(p + s, '\n', n - s) - p);
        size_t a = s, z = e;
        while (a < z && is_blank(p[a]))
            a++;
        while (z > a && is_blank(p[z - 1]))
            z--;
        if (li < 2) {
            unsigned k = 0;
            for (size_t i = s; i < a && k < TM_IND_MAX; i++)
                if (p[i] == ' ' || p[i] == '\t')
                    (li ? ind2 : ind1)[k++] = p[i];
            if (li)
                l2 = k;
            else
                l1 = k;
        }
        trails += z < e;
        unsigned w = cols_of(p + s, z - s);
        if (w > width)
            width = w;
        if (tn && !wide_join(b->tok, tn, p + a))
            b->tok[tn++] = ' ';
        memcpy(b->tok + tn, p + a, z - a);
        tn += z - a;
        s = e + 1;
    }
    uint64_t before = b->ntokens;
    b->tok[tn] = 0;
    if (tokenize(b, b->tok, tn))
        return b->failed;
    b->para_n = b->line_at = 0;
    b->para_lines = 0;
    if (b->ntokens == before)
        return TD_OK; /* no words: nothing to learn from its layout either */
    unsigned trail = 2 * trails > li;
    if (li >= 2) {
        if (width > TM_WIDTH)
            width = TM_WIDTH;
        if (width < TM_WIDTH_MIN)
            width = TM_WIDTH_MIN;
        b->widths[width]++;
    }
    for (uint32_t i = 0; i < b->nstyles; i++) {
        tb_style *st = &b->styles[i];
        if (st->l1 == l1 && st->l2 == l2 && st->trail == trail && !memcmp(st->ind1, ind1, l1) &&
            !memcmp(st->ind2, ind2, l2)) {
            st->count++;
            return TD_OK;
        }
    }
    if (b->nstyles == TB_STYLES)
        return TD_OK;
    if (b->nstyles % 64 == 0) {
        tb_style *ns = realloc(b->styles, (b->nstyles + 64) * sizeof *ns);
        if (!ns)
            return nomem(b);
        b->styles = ns;
    }
    tb_style *st = &b->styles[b->nstyles++];
    memset(st, 0, sizeof *st);
    memcpy(st->ind1, ind1, l1);
    memcpy(st->ind2, ind2, l2);
    st->l1 = (uint8_t)l1;
    st->l2 = (uint8_t)l2;
    st->trail = (uint8_t)trail;
    st->count = 1;
    return TD_OK;
}

/* The line para[line_at..para_n) is complete. */
static int end_line(td_model_builder *b)
{
    uint8_t *l = b->para + b->line_at;
    size_t n = b->para_n - b->line_at, i = 0;
    if (b->at_doc_start) {
        if (n >= 3 && l[0] == 0xEF && l[1] == 0xBB && l[2] == 0xBF)
            i = 3;
        b->at_doc_start = 0;
    }
    size_t j = i;
    while (j < n && is_blank(l[j]))
        j++;
    if (j == n) { /* a blank line ends the paragraph */
        b->para_n = b->line_at;
        return end_paragraph(b);
    }
    if (i) { /* the BOM */
        memmove(l, l + i, n - i);
        b->para_n -= i;
    }
    b->para[b->para_n++] = '\n'; /* (room kept by feed) */
    b->para_lines++;
    b->line_at = b->para_n;
    if (b->para_n > TB_PARA_MAX)
        return end_paragraph(b);
    return TD_OK;
}

static int feed(td_model_builder *b, const uint8_t *p, size_t n)
{
    const uint8_t *end = p + n;
    const uint8_t *cr = memchr(p, '\r', n); /* the next '\r', or NULL */
    while (p < end) {
        if (b->cr) { /* was the last '\r' a CRLF? */
            b->cr = 0;
            if (*p == '\n') {
                b->crlf++;
                p++;
                continue;
            }
            b->lf++;
        }
        if (cr && cr < p)
            cr = memchr(p, '\r', (size_t)(end - p));
        const uint8_t *e = memchr(p, '\n', (size_t)(cr ? cr - p : end - p));
        if (!e)
            e = cr ? cr : end;
        size_t k = (size_t)(e - p);
        if (grow(&b->para, &b->para_cap, b->para_n + k + 1))
            return nomem(b);
        memcpy(b->para + b->para_n, p, k);
        b->para_n += k;
        if (e == end)
            return TD_OK;
        if (*e == '\r')
            b->cr = 1;
        else
            b->lf++;
        if (end_line(b))
            return b->failed;
        p = e + 1;
    }
    return TD_OK;
}

/* Validate UTF-8 (carrying an incomplete code point across calls) and
 * feed the complete part; p[0..len) is in cal already when it belongs there. */
static int update(td_model_builder *b, const uint8_t *p, size_t len)
{
    b->bytes += len;
    while (b->ncarry && len) {
        uint8_t tmp[4];
        memcpy(tmp, b->carry, b->ncarry);
        unsigned need = b->carry[0] < 0xE0 ? 2 : b->carry[0] < 0xF0 ? 3 : 4;
        while (b->ncarry < need && len) {
            b->carry[b->ncarry] = *p;
            tmp[b->ncarry++] = *p++;
            len--;
        }
        if (b->ncarry < need) {
            /* still incomplete: check the prefix so far */
            for (unsigned i = 1; i < b->ncarry; i++)
                if ((b->carry[i] & 0xC0) != 0x80)
                    return fail(b, TD_EUTF8, "input is not valid UTF-8 (byte %llu)",
                                (unsigned long long)b->utf8_off);
            return TD_OK;
        }
        uint32_t c;
        if (!td__utf8_decode(tmp, need, &c))
            return fail(b, TD_EUTF8, "input is not valid UTF-8 (byte %llu)",
                        (unsigned long long)b->utf8_off);
        if (feed(b, tmp, need))
            return b->failed;
        b->utf8_off += need;
        b->ncarry = 0;
    }
    size_t i = 0;
    while (i < len) {
        if (i + 8 <= len && !(td__load64le(p + i) & 0x8080808080808080u)) {
            i += 8; /* ASCII */
            continue;
        }
        if (p[i] < 0x80) {
            i++;
            continue;
        }
        uint32_t c;
        unsigned l = td__utf8_decode(p + i, len - i, &c);
        if (!l) {
            /* incomplete at the end, or invalid */
            size_t rest = len - i;
            unsigned need = p[i] >= 0xC2 && p[i] <= 0xF4 ? (p[i] < 0xE0 ? 2u : p[i] < 0xF0 ? 3u : 4u) : 0u;
            int ok = need && rest < need;
            for (size_t k = 1; ok && k < rest; k++)
                ok = (p[i + k] & 0xC0) == 0x80;
            if (!ok)
                return fail(b, TD_EUTF8, "input is not valid UTF-8 (byte %llu)",
                            (unsigned long long)(b->utf8_off + i));
            if (feed(b, p, i))
                return b->failed;
            b->utf8_off += i;
            memcpy(b->carry, p + i, rest);
            b->ncarry = (unsigned)rest;
            return TD_OK;
        }
        i += l;
    }
    if (feed(b, p, len))
        return b->failed;
    b->utf8_off += len;
    return TD_OK;
}

static int cal_alloc(td_model_builder *b)
{
    if (!b->cal && !(b->cal = td__alloc_large(TB_CAL_MAX + TB_CAL_SLACK)))
        return nomem(b);
    return TD_OK;
}

int td_model_builder_update(td_model_builder *b, const void *buf, size_t len)
{
    if (!b || (!buf && len) || b->file)
        return TD_EINVAL;
    if (b->failed)
        return b->failed;
    if (b->cal_n < TB_CAL_MAX && len) {
        size_t k = TD_MIN(len, TB_CAL_MAX - b->cal_n);
        if (cal_alloc(b))
            return b->failed;
        memcpy(b->cal + b->cal_n, buf, k);
        b->cal_n += k;
    }
    return update(b, buf, len);
}

int td_model_builder_break(td_model_builder *b)
{
    if (!b || b->file)
        return TD_EINVAL;
    if (b->failed)
        return b->failed;
    if (b->ncarry)
        return fail(b, TD_EUTF8, "input is not valid UTF-8 (byte %llu: truncated)",
                    (unsigned long long)b->utf8_off);
    if (b->cr)
        b->lf++;
    b->cr = 0;
    if (b->para_n > b->line_at && end_line(b))
        return b->failed;
    if (end_paragraph(b))
        return b->failed;
    b->at_doc_start = 1;
    return TD_OK;
}

/* ---- finishing: renumber, write the file -------------------------------------- */

typedef struct trip {
    uint32_t a, b, c;
} trip;

typedef struct wb {
    uint8_t *p;
    size_t n, cap;
    int bad;
} wbuf;

static void w_bytes(wbuf *w, const void *p, size_t n)
{
    if (w->bad)
        return;
    if (grow(&w->p, &w->cap, w->n + n)) {
        w->bad = 1;
        return;
    }
    memcpy(w->p + w->n, p, n);
    w->n += n;
}

/* v as a var at o (5 bytes of room); the byte after it. */
static inline uint8_t *put_var(uint8_t *o, uint32_t v)
{
    for (; v > 0x7F; v >>= 7)
        *o++ = (uint8_t)(v | 0x80);
    *o++ = (uint8_t)v;
    return o;
}

static inline void w_var(wbuf *w, uint32_t v)
{
    if (w->bad || (w->n + 5 > w->cap && grow(&w->p, &w->cap, w->n + 5))) {
        w->bad = 1;
        return;
    }
    uint8_t *t = w->p + w->n;
    unsigned k = 0;
    for (; v > 0x7F; v >>= 7)
        t[k++] = (uint8_t)(v | 0x80);
    t[k++] = (uint8_t)v;
    w->n += k;
}

static size_t w_begin(wbuf *w, const char *tag)
{
    w_bytes(w, tag, 4);
    w_bytes(w, "\0\0\0\0", 4);
    return w->n;
}

static void w_end(wbuf *w, size_t at)
{
    if (w->bad)
        return;
    uint32_t l = (uint32_t)(w->n - at);
    for (int i = 0; i < 4; i++)
        w->p[at - 4 + i] = (uint8_t)(l >> (8 * i));
}

/* A count list from sorted (key, id, count) triples [i, j) with the same key;
 * totals kept below 2^31 by halving. */
static void w_list(wbuf *w, const trip *t, size_t n)
{
    uint64_t total = 0;
    unsigned shift = 0;
    for (size_t i = 0; i < n; i++)
        total += t[i].c;
    while ((total >> shift) + n > TM_COUNT_MAX)
        shift++;
    /* room for the whole list at once, then the vars unchecked */
    if (w->bad || (w->n + 5 * (2 * n + 1) > w->cap && grow(&w->p, &w->cap, w->n + 5 * (2 * n + 1)))) {
        w->bad = 1;
        return;
    }
    uint8_t *o = w->p + w->n;
    o = put_var(o, (uint32_t)n);
    for (size_t i = 0; i < n; i++) {
        o = put_var(o, i ? t[i].b - t[i - 1].b - 1 : t[i].b);
        uint32_t c = t[i].c >> shift;
        o = put_var(o, c ? c : 1);
    }
    w->n = (size_t)(o - w->p);
}

typedef struct rank_ent {
    uint32_t id, count;
    const uint8_t *s;
    uint64_t pre; /* the first 8 bytes, big-endian, zero-padded: strings hold no
                   * zero byte, so comparing pre compares those bytes */
    uint8_t len;
} rank_ent;

static rank_ent rank_of(const strtab *t, size_t id)
{
    const st_ent *e = &t->e[id];
    const uint8_t *p = t->pool + e->off;
    return (rank_ent){(uint32_t)id, e->cnt[0], p, __builtin_bswap64(load_part(p, e->len)), e->len};
}

static int rank_cmp(const void *x, const void *y)
{
    const rank_ent *p = x, *q = y;
    if (p->count != q->count)
        return p->count > q->count ? -1 : 1;
    if (p->pre != q->pre)
        return p->pre < q->pre ? -1 : 1;
    size_t m = p->len < q->len ? p->len : q->len;
    int c = m ? memcmp(p->s, q->s, m) : 0;
    if (c)
        return c;
    return (p->len > q->len) - (p->len < q->len);
}

/* a[0..n) in rank_cmp's order (a total one: the strings are distinct), by
 * a merge sort through t (n entries), not qsort: a call per comparison,
 * and scratch of its own faulted in afresh. */
static void rank_sort(rank_ent *a, size_t n, rank_ent *t)
{
    enum { RUN = 16 };
    for (size_t lo = 0; lo < n; lo += RUN) { /* insertion sort of runs */
        size_t hi = TD_MIN(lo + RUN, n);
        for (size_t i = lo + 1; i < hi; i++) {
            rank_ent x = a[i];
            size_t j = i;
            for (; j > lo && rank_cmp(&x, &a[j - 1]) < 0; j--)
                a[j] = a[j - 1];
            a[j] = x;
        }
    }
    rank_ent *src = a, *dst = t;
    for (size_t w = RUN; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = TD_MIN(lo + w, n), hi = TD_MIN(lo + 2 * w, n), i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                dst[k++] = rank_cmp(&src[j], &src[i]) < 0 ? src[j++] : src[i++];
            while (i < mid)
                dst[k++] = src[i++];
            while (j < hi)
                dst[k++] = src[j++];
        }
        rank_ent *x = src;
        src = dst;
        dst = x;
    }
    if (src != a)
        memcpy(a, src, n * sizeof *a);
}

/* n bytes of the block at *at, on a cache line. */
static void *carve(uint8_t **at, size_t n)
{
    void *p = *at;
    *at += (n + 63) & ~(size_t)63;
    return p;
}

static int style_cmp(const void *x, const void *y)
{
    const tb_style *p = x, *q = y;
    if (p->count != q->count)
        return p->count > q->count ? -1 : 1;
    /* then the bytes of (ind1, ind2, trail) */
    uint8_t a[2 * TM_IND_MAX + 3], b[2 * TM_IND_MAX + 3];
    memset(a, 0, sizeof a);
    memset(b, 0, sizeof b);
    a[0] = p->l1;
    memcpy(a + 1, p->ind1, p->l1);
    a[9] = p->l2;
    memcpy(a + 10, p->ind2, p->l2);
    a[18] = p->trail;
    b[0] = q->l1;
    memcpy(b + 1, q->ind1, q->l1);
    b[9] = q->l2;
    memcpy(b + 10, q->ind2, q->l2);
    b[18] = q->trail;
    return memcmp(a, b, sizeof a);
}

/* The counts of finish_file: words renumbered, each with its separator
 * after it (word << 32 | separator * 2 + final), and per separator the
 * class of the word after it.  Bigrams are pairs of consecutive words in a
 * paragraph: (previous word * 2 + class, word); SEPW's pairs are (word,
 * separator value). */
typedef struct counts {
    const void *tk; /* the tokens, renumbered (ws) */
    int wide;
    size_t n;
    const uint8_t *scls;
    void *t1, *t2;  /* n each, of 16 bits when contexts and values fit, else 32 */
    size_t *ca, *cv; /* a counter per context, per value */
    trip *lt;       /* room for one list */
} counts;

/* Pass 0 counts the pairs per context and value, pass 1 puts the contexts
 * in order of value (t1); each width and list gets its own copy. */
static inline __attribute__((always_inline)) void pairs_pass(const counts *c, int big, int wide,
                                                             int n16, int pass)
{
    size_t *ca = c->ca, *cv = c->cv;
    uint16_t *t1s = c->t1;
    uint32_t *t1 = c->t1;
    const uint32_t *t32 = c->tk;
    const uint64_t *t64 = c->tk;
    uint32_t pa = 0, first = 1; /* bigrams: previous word * 2 + class; a paragraph starts */
    for (size_t i = 0; i < c->n; i++) {
        uint32_t wd = wide ? (uint32_t)(t64[i] >> 32) : t32[i] >> 12;
        uint32_t sv = wide ? (uint32_t)t64[i] : t32[i] & 0xFFF;
        uint32_t a = big ? pa : wd, v = big ? wd : sv;
        if (big) {
            pa = wd * 2 + c->scls[sv >> 1];
            if (first) {
                first = sv & 1;
                continue;
            }
            first = sv & 1;
        }
        if (pass == 0) {
            ca[a]++;
            cv[v]++;
        } else if (n16) {
            t1s[cv[v]++] = (uint16_t)a;
        } else {
            t1[cv[v]++] = a;
        }
    }
}

/* The values, by context, from the contexts in order of value (t1). */
static inline __attribute__((always_inline)) void by_context(const counts *c, uint32_t nv, int n16)
{
    const uint16_t *t1s = c->t1;
    const uint32_t *t1 = c->t1;
    uint16_t *t2s = c->t2;
    uint32_t *t2 = c->t2;
    size_t *ca = c->ca, j = 0;
    for (uint32_t k = 0; k < nv; k++)
        for (; j < c->cv[k]; j++) {
            if (n16)
                t2s[ca[t1s[j]]++] = (uint16_t)k;
            else
                t2[ca[t1[j]]++] = k;
        }
}

/* The count lists of contexts 0..na-1 over values 0..nv-1 (absent: an
 * empty list).  Two stable counting passes, by value then by context,
 * leave each context's values in order, equal ones together. */
static void w_lists(wbuf *w, const counts *c, int big, uint32_t na, uint32_t nv)
{
    size_t *ca = c->ca, *cv = c->cv;
    const int n16 = na <= 65536 && nv <= 65536;
    memset(ca, 0, na * sizeof *ca);
    memset(cv, 0, nv * sizeof *cv);
    if (c->wide)
        big ? pairs_pass(c, 1, 1, 0, 0) : pairs_pass(c, 0, 1, 0, 0);
    else
        big ? pairs_pass(c, 1, 0, 0, 0) : pairs_pass(c, 0, 0, 0, 0);
    size_t sum = 0;
    for (uint32_t k = 0; k < nv; k++) {
        size_t t = cv[k];
        cv[k] = sum;
        sum += t;
    }
    if (n16) { /* contexts, by value */
        if (c->wide)
            big ? pairs_pass(c, 1, 1, 1, 1) : pairs_pass(c, 0, 1, 1, 1);
        else
            big ? pairs_pass(c, 1, 0, 1, 1) : pairs_pass(c, 0, 0, 1, 1);
    } else {
        if (c->wide)
            big ? pairs_pass(c, 1, 1, 0, 1) : pairs_pass(c, 0, 1, 0, 1);
        else
            big ? pairs_pass(c, 1, 0, 0, 1) : pairs_pass(c, 0, 0, 0, 1);
    }
    sum = 0;
    for (uint32_t k = 0; k < na; k++) {
        size_t t = ca[k];
        ca[k] = sum;
        sum += t;
    }
    if (n16)
        by_context(c, nv, 1);
    else
        by_context(c, nv, 0);
    const uint16_t *t2s = c->t2;
    const uint32_t *t2 = c->t2;
    size_t i = 0;
    for (uint32_t k = 0; k < na; k++) {
        size_t m = 0;
        while (i < ca[k]) {
            uint32_t x = n16 ? t2s[i] : t2[i];
            size_t e = i + 1;
            while (e < ca[k] && (n16 ? t2s[e] : t2[e]) == x)
                e++;
            c->lt[m++] = (trip){k, x, e - i > TM_COUNT_MAX ? TM_COUNT_MAX : (uint32_t)(e - i)};
            i = e;
        }
        w_list(w, c->lt, m);
    }
}

int td_model_builder_add_fd(td_model_builder *b, int fd)
{
    enum { CHUNK = 1u << 20 };
    uint8_t *buf = NULL;
    int rc = TD_OK;
    if (!b || fd < 0 || b->file)
        return TD_EINVAL;
    if (b->failed)
        return b->failed;
    /* remembered so that save never puts the model in place of its corpus */
    td__file_id id = td__file_id_fd(fd);
    if (id.set) {
        td__file_id *in = realloc(b->inputs, (b->ninputs + 1) * sizeof *in);
        if (!in)
            return nomem(b);
        in[b->ninputs++] = id;
        b->inputs = in;
    }
    for (;;) {
        /* the first TB_CAL_MAX bytes are read straight into cal (no copy,
         * no chunk buffer to fault in), the rest into a chunk */
        uint8_t *to;
        size_t room;
        if (b->cal_n < TB_CAL_MAX) {
            if ((rc = cal_alloc(b)) != TD_OK)
                break;
            to = b->cal + b->cal_n;
            room = TB_CAL_MAX - b->cal_n;
        } else {
            if (!buf && !(buf = malloc(CHUNK))) {
                rc = TD_ENOMEM;
                break;
            }
            to = buf;
            room = CHUNK;
        }
        ssize_t r = read(fd, to, room);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            rc = TD_EIO;
            break;
        }
        if (r == 0)
            break;
        if (to != buf)
            b->cal_n += (size_t)r;
        if ((rc = update(b, to, (size_t)r)) != TD_OK)
            break;
    }
    int e = errno;
    free(buf);
    if (rc == TD_OK)
        rc = td_model_builder_break(b);
    errno = e;
    return rc;
}

int td_model_builder_add_file(td_model_builder *b, const char *path)
{
    int fd, rc, e;
    if (!b || !path)
        return TD_EINVAL;
    if (b->failed)
        return b->failed;
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return TD_EIO;
    rc = td_model_builder_add_fd(b, fd);
    e = errno;
    close(fd);
    errno = e;
    return rc;
}

/* ---- runs: lines the corpus repeats ------------------------------------------ */

/* A corpus whose repeated lines hold less than this share of its bytes
 * (prose: 1-8%) gets no RUNS section, so its model stays version 1 and its
 * text what it was; manual pages, header comments and change logs hold
 * 38-57% (docs/benchmarks.md, text). */
#define TB_RUN_SHARE_MIN 0.10

typedef struct tb_runs {
    uint64_t runs, bytes;
    uint32_t n[TM_RUN_NB * TM_RUN_NB]; /* by (length, distance) bucket */
} tb_runs;

static unsigned log2u(uint32_t v)
{
    return 31u - (unsigned)__builtin_clz(v);
}

static void run_end(tb_runs *u, uint32_t d, uint32_t n)
{
    /* a run longer than the longest copy, 2^(TM_RUN_NB - 1) bytes, is
     * counted as that many runs of equal length */
    uint32_t k = (n >> (TM_RUN_NB - 1)) + 1, piece = n / k;
    u->runs += k;
    u->bytes += n;
    u->n[log2u(piece) * TM_RUN_NB + TD_MIN(log2u(d), TM_RUN_NB - 1)] += k;
}

/* The runs of t[0, n) (t with TB_CAL_SLACK bytes after it: str_hash reads
 * whole words; docs/format.md, "Building a model"): a run starts at
 * a line (its '\n' included) of at least TM_RUN_MIN bytes before the '\n'
 * equal to an earlier line, and goes on over the next lines, of any length,
 * that equal the lines at the same distance.  TD_ENOMEM or TD_OK. */
static int find_runs(const uint8_t *t, size_t n, tb_runs *u)
{
    memset(u, 0, sizeof *u);
    size_t slots = 1024;
    while (slots < n / 16)
        slots <<= 1;
    uint64_t *tab = calloc(slots, sizeof *tab); /* hash << 32 | (line start + 1) */
    if (!tab)
        return TD_ENOMEM;
    uint32_t d = 0, rl = 0; /* the run going on: distance, bytes so far */
    for (size_t pos = 0; pos < n;) {
        const uint8_t *e = memchr(t + pos, '\n', n - pos);
        size_t len = e ? (size_t)(e - t) - pos : n - pos, ln = len + (e != NULL);
        if (d && pos >= d && memcmp(t + pos - d, t + pos, ln) == 0) {
            rl += (uint32_t)ln;
        } else {
            if (d)
                run_end(u, d, rl);
            d = 0;
        }
        if (e && len >= TM_RUN_MIN) { /* compared with its '\n': whole lines */
            uint32_t h32 = str_hash(t + pos, len) | 1u; /* t has TB_CAL_SLACK */
            size_t i = h32 & (slots - 1);
            while (tab[i] && ((uint32_t)(tab[i] >> 32) != h32 ||
                              memcmp(t + (uint32_t)tab[i] - 1, t + pos, len + 1) != 0))
                i = (i + 1) & (slots - 1);
            if (tab[i] && !d) { /* a line seen before starts a run */
                d = (uint32_t)(pos - ((uint32_t)tab[i] - 1));
                rl = (uint32_t)ln;
            }
            tab[i] = (uint64_t)h32 << 32 | (uint32_t)(pos + 1);
        }
        pos += ln;
    }
    if (d)
        run_end(u, d, rl);
    free(tab);
    return TD_OK;
}

/* The model file's bytes (*data, malloc'd, the caller frees it): what finish
 * compiles and what save writes. */
static int finish_file(td_model_builder *b, uint8_t **data, size_t *len)
{
    *data = NULL;
    *len = 0;
    if (!b->failed)
        td_model_builder_break(b);
    if (b->failed)
        return b->failed;
    if (b->bytes == 0)
        return fail(b, TD_ECORPUS, "the corpus is empty");
    if (b->bytes < TB_MIN_BYTES)
        return fail(b, TD_ECORPUS, "the corpus is too small to model (%llu bytes; at least 10 KiB "
                                   "are needed)", (unsigned long long)b->bytes);

    int rc = TD_ENOMEM;
    uint8_t *scratch = NULL;
    wbuf w = {0};
    const size_t NW = b->words.n, NSP = b->seps.n, n = b->ws_n;

    /* Head words: seen twice or more; ids by count, then bytes. */
    uint32_t V = 0;
    for (size_t i = 0; i < NW; i++)
        V += b->words.e[i].cnt[0] >= 2;
    if (V < TB_MIN_WORDS) {
        rc = fail(b, TD_ECORPUS, "the corpus is too small to model (%llu words occur more than "
                                 "once; at least 16 are needed)", (unsigned long long)V);
        goto out;
    }
    /* All the scratch in one block (its pages, huge or not, faulted in
     * once): ranks and maps, the counts' ids (of 16 bits when they fit),
     * counters and a list, the unigrams' sums. */
    const size_t idb = 2 * ((size_t)V + 1) <= 65536 && 2 * NSP <= 65536 ? 2 : 4;
    const size_t nca = 2 * ((size_t)V + 1) + TD_MAX((size_t)V + 1, 2 * NSP);
    const size_t nlt = (size_t)V + 2 * NSP + 1;
    size_t sz = 0;
    const size_t part[] = {V * sizeof(rank_ent), NW * sizeof(uint32_t), NSP * sizeof(rank_ent),
                           NSP * sizeof(uint32_t), TD_MAX((size_t)V, NSP) * sizeof(rank_ent),
                           NSP, 2 * n * idb, nca * sizeof(size_t), nlt * sizeof(trip),
                           ((size_t)V + 1) * sizeof(uint64_t)};
    for (size_t i = 0; i < sizeof part / sizeof *part; i++)
        sz += (part[i] + 63) & ~(size_t)63;
    if (!(scratch = td__alloc_large(sz)))
        goto nomem_out;
    uint8_t *cut = scratch;
    rank_ent *wr = carve(&cut, part[0]);
    uint32_t *wmap = carve(&cut, part[1]);
    rank_ent *sr = carve(&cut, part[2]);
    uint32_t *smap = carve(&cut, part[3]);
    rank_ent *rtmp = carve(&cut, part[4]);
    uint8_t *scls = carve(&cut, part[5]);
    uint8_t *t12 = carve(&cut, part[6]);
    size_t *cac = carve(&cut, part[7]);
    trip *lt = carve(&cut, part[8]);
    uint64_t *acc = carve(&cut, part[9]);

    V = 0;
    for (size_t i = 0; i < NW; i++)
        if (b->words.e[i].cnt[0] >= 2)
            wr[V++] = rank_of(&b->words, i);
    rank_sort(wr, V, rtmp);
    for (size_t i = 0; i < NW; i++)
        wmap[i] = V;
    for (uint32_t i = 0; i < V; i++)
        wmap[wr[i].id] = i;
    for (size_t i = 0; i < NSP; i++)
        sr[i] = rank_of(&b->seps, i);
    rank_sort(sr, NSP, rtmp);
    for (size_t i = 0; i < NSP; i++)
        smap[sr[i].id] = (uint32_t)i;

    /* The tokens renumbered in place */
    if (b->ws_wide) {
        uint64_t *tk = b->ws;
        for (size_t i = 0; i < n; i++) {
            uint32_t sv = (uint32_t)tk[i];
            tk[i] = (uint64_t)wmap[tk[i] >> 32] << 32 | (smap[sv >> 1] * 2 + (sv & 1));
        }
    } else { /* renumbered ids are no larger */
        uint32_t *tk = b->ws;
        for (size_t i = 0; i < n; i++)
            tk[i] = wmap[tk[i] >> 12] << 12 | (smap[(tk[i] >> 1) & 0x7FF] * 2 + (tk[i] & 1));
    }
    for (size_t i = 0; i < NSP; i++)
        scls[i] = (uint8_t)b->seps.e[sr[i].id].cnt[1];
    counts cn = {b->ws, b->ws_wide, n, scls, t12, t12 + n * idb, cac, cac + 2 * ((size_t)V + 1), lt};

    tm_params p = b->p;
    p.eol = b->crlf > b->lf;
    if (!p.tail_r)
        p.tail_r = V;

    /* header, filled in at the end */
    w_bytes(&w, TM_MAGIC, 8);
    uint8_t zero[TM_HEADER - 8];
    memset(zero, 0, sizeof zero);
    w_bytes(&w, zero, sizeof zero);
    size_t at = w_begin(&w, "PARM");
    w_var(&w, p.eol);
    w_var(&w, p.cache_mu);
    w_var(&w, p.copy_mu);
    w_var(&w, p.recent_mu);
    w_var(&w, p.recent_n);
    w_var(&w, p.wb_word);
    w_var(&w, p.wb_sep);
    w_var(&w, p.tail_r);
    w_var(&w, p.char_order);
    w_var(&w, p.char_min);
    w_var(&w, p.max_tokens);
    w_end(&w, at);
    at = w_begin(&w, "WORD");
    w_var(&w, V);
    for (uint32_t i = 0; i < V; i++) {
        w_var(&w, wr[i].len);
        w_bytes(&w, wr[i].s, wr[i].len);
    }
    w_end(&w, at);
    at = w_begin(&w, "SEPS");
    w_var(&w, (uint32_t)NSP);
    for (size_t i = 0; i < NSP; i++) {
        w_var(&w, sr[i].len);
        w_bytes(&w, sr[i].s, sr[i].len);
    }
    w_end(&w, at);
    at = w_begin(&w, "UNIG");
    {
        trip *u = lt; /* (V + 1 of its entries) */
        for (unsigned c = 0; c < TM_CLASSES; c++) {
            memset(acc, 0, ((size_t)V + 1) * sizeof *acc);
            for (size_t i = 0; i < NW; i++)
                acc[wmap[i]] += b->words.e[i].cnt[1 + c];
            size_t k = 0;
            for (uint32_t i = 0; i <= V; i++)
                if (acc[i])
                    u[k++] = (trip){0, i, acc[i] > TM_COUNT_MAX ? TM_COUNT_MAX : (uint32_t)acc[i]};
            w_list(&w, u, k);
        }
    }
    w_end(&w, at);
    at = w_begin(&w, "BIGR");
    w_lists(&w, &cn, 1, 2 * (V + 1), V + 1);
    w_end(&w, at);
    at = w_begin(&w, "SEPW");
    w_lists(&w, &cn, 0, V + 1, 2 * (uint32_t)NSP);
    w_end(&w, at);
    at = w_begin(&w, "LEAD");
    {
        size_t k = 0;
        for (size_t i = 0; i < NSP; i++)
            if (b->seps.e[sr[i].id].cnt[2])
                lt[k++] = (trip){0, (uint32_t)i, b->seps.e[sr[i].id].cnt[2]};
        w_list(&w, lt, k);
    }
    w_end(&w, at);
    at = w_begin(&w, "STYL");
    qsort(b->styles, b->nstyles, sizeof *b->styles, style_cmp);
    w_var(&w, b->nstyles);
    for (uint32_t i = 0; i < b->nstyles; i++) {
        const tb_style *st = &b->styles[i];
        w_var(&w, st->l1);
        w_bytes(&w, st->ind1, st->l1);
        w_var(&w, st->l2);
        w_bytes(&w, st->ind2, st->l2);
        w_var(&w, st->trail);
        w_var(&w, st->count);
    }
    w_end(&w, at);
    at = w_begin(&w, "WIDT");
    {
        trip t[TM_WIDTH + 1];
        size_t k = 0;
        for (uint32_t i = TM_WIDTH_MIN; i <= TM_WIDTH; i++)
            if (b->widths[i])
                t[k++] = (trip){0, i, b->widths[i]};
        w_list(&w, t, k);
    }
    w_end(&w, at);
    uint32_t version = TM_VERSION;
    if (b->cal_n && !b->no_runs) {
        tb_runs u;
        if (find_runs(b->cal, b->cal_n, &u) != TD_OK)
            goto nomem_out;
        if ((double)u.bytes >= TB_RUN_SHARE_MIN * (double)b->cal_n) {
            uint64_t rate = (u.runs << TM_RUN_RATE_BITS) / (b->cal_n - u.bytes + 1);
            version = TM_VERSION_RUNS;
            at = w_begin(&w, "RUNS");
            w_var(&w, (uint32_t)TD_MAX(1, TD_MIN(rate, (uint64_t)1 << TM_RUN_RATE_BITS)));
            w_var(&w, (uint32_t)TD_MAX(1, TD_MIN(u.bytes * 65536 / b->cal_n, (uint64_t)65536)));
            for (unsigned k = 0; k < TM_RUN_NB * TM_RUN_NB; k++)
                w_var(&w, u.n[k]);
            w_end(&w, at);
        }
    }
    if (w.bad)
        goto nomem_out;

    /* header: version, flags 0, payload length, BLAKE2b-256 of the payload */
    rc = td__sodium_ready();
    if (rc != TD_OK) {
        rc = fail(b, rc, "libsodium cannot be initialised");
        goto out;
    }
    for (int i = 0; i < 4; i++)
        w.p[8 + i] = (uint8_t)(version >> (8 * i));
    td__store64le(w.p + 16, (uint64_t)(w.n - TM_HEADER));
    crypto_generichash(w.p + 24, 32, w.p + TM_HEADER, (unsigned long long)(w.n - TM_HEADER), NULL, 0);
    *data = w.p;
    *len = w.n;
    w.p = NULL;
    rc = TD_OK;
    goto out;
nomem_out:
    rc = nomem(b);
out:
    free(w.p);
    free(scratch);
    return rc;
}

/* ---- calibration: the repetition of the corpus ------------------------------- */

/* cache_mu and copy_mu (the continuation cache: how often text repeats a
 * recent phrase) were fitted on prose, which repeats itself little.  Legal
 * text, reference manuals and logs repeat themselves more, and text from
 * the defaults then compresses 5-10% worse than they do (docs/benchmarks.md,
 * "text").  So the builder measures: it generates text of the corpus's size
 * (up to TB_CAL_MAX) from the finished model and compares how it compresses
 * under lz4 and zstd -3 with the corpus.  If the mean difference is more
 * than TB_CAL_TOL percent, it moves both parameters: first by the slope
 * measured on prose (about TB_CAL_SLOPE percent per unit), then by the
 * slope between its last two points, TB_CAL_STEPS times at most, and keeps
 * the best value seen.  Prose lands inside the tolerance at the defaults,
 * so its models (the built-in one included) do not change.  Text that
 * repeats itself much (manual pages, Chinese) needs the range up to 0.85,
 * where the error climbs two to three times as fast as on prose. */
#define TB_CAL_TOL 2.0
#define TB_CAL_SLOPE 55.0
#define TB_CAL_SLOPE_MIN 5.0
#define TB_CAL_STEPS 3
/* The range (TM_CAL_LO .. TM_CAL_HI) is in text_model.h, for the tests. */
_Static_assert(TM_CAL_LO >= 1u << 14 && TM_CAL_HI < 1u << 21,
               "cal_store rewrites the rates in place as 3-byte numbers");
#define TB_CAL_SEED 0
/* Below this, a second thread costs more than it saves: a 300 KB corpus
 * built 7% slower with it, 600 KB 4-14% faster, 1.2 MB 16-20% faster
 * (wall time; tests/bench/bench_model_build.py). */
#define TB_CAL_PAR_MIN (512u * 1024u)

static const int cal_codecs[2] = {TD_CODEC_LZ4, TD_CODEC_ZSTD};

/* The model file into *data, *len; the counts are then freed for the
 * compile and the calibration. */
static int write_file(td_model_builder *b, uint8_t **data, size_t *len)
{
    int rc = finish_file(b, data, len);
    drop_counts(b);
    return rc;
}

/* One job of the calibration's fork-join (td__pool_run): with fin set,
 * first the file of builder fin written (write_file) into *fdata, *flen,
 * which becomes data, len; then with gen set, bytes [off, off + n) of the
 * text of state ts, into gen + off; else with m set, *m compiled from data;
 * else the sizes of buf under cal_codecs[c0..c1).  Jobs of one run touch
 * disjoint memory (the corpus copy, buf, is only read). */
typedef struct {
    td_model_builder *fin;
    uint8_t **fdata;
    size_t *flen;
    td_codecs *cx;
    const uint8_t *buf;
    size_t n;
    int c0, c1;
    uint64_t z[2];
    td_model **m;
    const void *ts;
    uint8_t *data, *gen;
    size_t len, off;
    int rc;
} cal_job;

static void cal_job_run(void *p)
{
    cal_job *j = p;
    j->rc = TD_OK;
    if (j->fin) {
        j->rc = write_file(j->fin, j->fdata, j->flen);
        j->data = *j->fdata;
        j->len = *j->flen;
        if (j->rc != TD_OK)
            return;
    }
    if (j->gen && j->n)
        j->rc = td__text_once_fill(j->ts, j->off, j->gen + j->off, j->n);
    else if (!j->gen && j->m) /* compiled in place; cal_store changes its rates */
        j->rc = td__tm_load(j->m, j->data, j->len, TM_LOAD_TRUSTED | TM_LOAD_OWN);
    for (int i = j->c0; j->rc == TD_OK && i < j->c1; i++)
        j->rc = td__codecs_size(j->cx, cal_codecs[i], j->buf, j->n, &j->z[i]);
}

/* Run two jobs (at once when the pool has a worker); the first error. */
static int cal_run2(td_pool *pool, cal_job j[2])
{
    td__pool_run(pool, cal_job_run, j, sizeof j[0], 2);
    return j[0].rc != TD_OK ? j[0].rc : j[1].rc;
}

/* Text from m at both rates mu into g[0, n), from one state; with a worker,
 * the first MiB (made word by word) in two halves, then the rest (made from
 * the first MiB's blocks, which are then all there) in two halves, cut at
 * block boundaries (the bytes do not depend on the cuts). */
static int cal_generate(td_pool *pool, td_model *m, uint32_t mu, uint8_t *g, size_t n)
{
    m->p.cache_mu = m->p.copy_mu = mu;
    void *ts;
    int rc = td__text_once_new(m, TB_CAL_SEED, n, &ts);
    if (rc != TD_OK)
        return rc;
    int par = td__pool_size(pool) > 1;
    size_t from = 0, r0 = (size_t)TD_MIN((uint64_t)n, TM_ROUND0);
    for (size_t to = par ? r0 : n; rc == TD_OK && from < n; from = to, to = n) {
        size_t h = par ? from + (to - from) / 2 / td_kind_text.block * td_kind_text.block : to;
        cal_job j[2] = {{.ts = ts, .gen = g, .off = from, .n = h - from},
                        {.ts = ts, .gen = g, .off = h, .n = to - h}};
        rc = cal_run2(pool, j);
    }
    td__text_once_free(ts);
    return rc;
}

/* Sizes of buf under both codecs, on two threads when the pool has them
 * (cx[0] and cx[1] are then distinct). */
static int cal_sizes(td_pool *pool, td_codecs *cx[2], const uint8_t *buf, size_t n, uint64_t z[2])
{
    cal_job j[2] = {{.cx = cx[0], .buf = buf, .n = n, .c0 = 0, .c1 = 1},
                    {.cx = cx[1], .buf = buf, .n = n, .c0 = 1, .c1 = 2}};
    int rc = cal_run2(pool, j);
    z[0] = j[0].z[0];
    z[1] = j[1].z[1];
    return rc;
}

/* How much better (> 0) text of compressed size z compresses than a corpus
 * of the same length and compressed size cs: the ratio of ratios - 1. */
static double size_error(uint64_t cs, uint64_t z)
{
    return (double)cs / (double)z - 1.0;
}

/* Percent by which g (text from m with both rates at the value it was
 * generated with) compresses better (> 0) or worse than the corpus, whose
 * sizes are cs[]. */
static int cal_error(td_pool *pool, td_codecs *cx[2], const uint8_t *g, size_t n,
                     const uint64_t cs[2], double *err, uint64_t z[2])
{
    int rc = cal_sizes(pool, cx, g, n, z);
    double e = 0;
    for (int i = 0; rc == TD_OK && i < 2; i++)
        e += size_error(cs[i], z[i]);
    *err = 50.0 * e;
    return rc;
}

/* Rewrite cache_mu and copy_mu (the second and third vars of PARM, the first
 * section) of the file data, and its hash. */
static void cal_store(uint8_t *data, size_t len, uint32_t mu)
{
    uint8_t *v = data + TM_HEADER + 8 + 1; /* tag, length, eol (0 or 1) */
    for (int k = 0; k < 2; k++, v += 3) {
        v[0] = (uint8_t)(0x80 | (mu & 0x7F));
        v[1] = (uint8_t)(0x80 | ((mu >> 7) & 0x7F));
        v[2] = (uint8_t)(mu >> 14);
    }
    crypto_generichash(data + 24, 32, data + TM_HEADER, (unsigned long long)(len - TM_HEADER), NULL,
                       0);
}

static const char *const cal_labels[2] = {"lz4 -1", "zstd -3"};

/* Error i of the calibration kept: > 0 when the text compresses more. */
static double cal_fid_error(const td_model_builder *b, int i)
{
    return size_error(b->cal_cs[i], b->cal_z[i]);
}

/* td_model_builder_note()'s text, from the calibration kept of a model
 * with runs or not. */
static void make_note(td_model_builder *b, int runs)
{
    double e0 = cal_fid_error(b, 0), e1 = cal_fid_error(b, 1);
    b->note[0] = 0;
    if (fabs(e0) <= TD_FIDELITY_NOTE_OFF && fabs(e1) <= TD_FIDELITY_NOTE_OFF)
        return;
    const char *why = "", *what = "";
    if (e0 > 0 && e1 < 0) {
        why = ": the corpus likely repeats whole lines or pages beyond lz4's 64 KiB window (as "
              "manual pages and boilerplate do), ";
        what = runs ? "longer or further back than the model's copies of lines (at most 128 KiB "
                      "long, 256 KiB back)"
                    : "which the model does not copy";
    } else if (e0 > 0 && e1 > 0)
        why = ": the corpus repeats itself less than text at the calibration's lowest rate";
    else if (e0 < 0 && e1 < 0)
        why = ": the corpus repeats itself more than text at the calibration's highest rate";
    double n = (double)b->cal_bytes;
    int mib = n >= 1048576.0;
    (void)td__msg(b->note, sizeof b->note,
                  "text of this model compresses %+.1f%% under lz4 -1 and %+.1f%% under zstd -3 "
                  "against its corpus (first %.*f %s, seed 0)%s%s",
                  100.0 * e0, 100.0 * e1, mib, mib ? n / 1048576.0 : n / 1024.0,
                  mib ? "MiB" : "KiB", why, what);
}

int td_model_builder_fidelity(const td_model_builder *b, int i, td_fidelity_t *out)
{
    if (!b || !out || i < 0 || i >= TD_MODEL_FIDELITY_CODECS)
        return TD_EINVAL;
    if (!b->have_fid)
        return TD_ERANGE;
    memset(out, 0, sizeof *out);
    out->label = cal_labels[i];
    out->error = cal_fid_error(b, i);
    out->sample_ratio = (double)b->cal_bytes / (double)b->cal_cs[i];
    out->generated_bytes = out->sample_bytes = b->cal_bytes;
    return TD_OK;
}

const char *td_model_builder_note(const td_model_builder *b)
{
    return b ? b->note : "";
}

/* Write the model file (write_file) into *data, *len and calibrate it in
 * place.  With keep, the model compiled from the final file is handed back
 * (*keep; NULL when the calibration does not run).  A failure of
 * write_file keeps its message (fail() keeps the first). */
static int calibrate(td_model_builder *b, uint8_t **data, size_t *len, td_model **keep)
{
    uint32_t mu0 = b->p.cache_mu;
    if (b->p_set || b->p.copy_mu != mu0 || mu0 < TM_CAL_LO || mu0 > TM_CAL_HI)
        return write_file(b, data, len);
    size_t n = b->cal_n;
    td_model *m = NULL;
    td_codecs *cx[2] = {NULL, NULL};
    td_pool *pool = NULL;
    /* A second thread compresses the corpus while the caller writes and
     * compiles the model, generates half of each text and runs one of the
     * two codecs of each measurement; the threads then need their own
     * buffers and codecs.  Alone, the file is written first (it may still
     * fail: an empty corpus), and text is generated over the corpus once it
     * is measured. */
    unsigned nt = b->threads ? b->threads : td__ncpus();
    if (nt > 1 && n >= TB_CAL_PAR_MIN)
        (void)td__pool_new(&pool, 1);
    int par = td__pool_size(pool) > 1;
    if (!par) {
        int rc = write_file(b, data, len);
        if (rc != TD_OK) {
            td__pool_free(pool);
            return rc;
        }
    }
    uint8_t *g = par ? td__alloc_large(n) : b->cal;
    int rc = g ? td__codecs_new(&cx[0], n) : TD_ENOMEM;
    if (rc == TD_OK)
        rc = par ? td__codecs_new(&cx[1], n) : (cx[1] = cx[0], TD_OK);
    uint64_t cs[2] = {0, 0};
    if (rc == TD_OK) { /* the model compiles while the corpus is measured */
        cal_job j[2] = {{.fin = par ? b : NULL, .fdata = data, .flen = len, .m = &m,
                         .data = *data, .len = *len},
                        {.cx = cx[1], .buf = b->cal, .n = n, .c0 = 0, .c1 = 2}};
        rc = cal_run2(pool, j);
        cs[0] = j[1].z[0];
        cs[1] = j[1].z[1];
    }
    if (rc == TD_OK) /* alone, over the corpus once it is measured */
        rc = cal_generate(pool, m, mu0, g, n);
    double err = 0, best_err, perr = 0;
    uint32_t mu = mu0, best = mu0, pmu = mu0;
    uint64_t z[2] = {0, 0}, best_z[2];
    if (rc == TD_OK)
        rc = cal_error(pool, cx, g, n, cs, &err, z);
    best_err = err;
    memcpy(best_z, z, sizeof z);
    for (int step = 0; rc == TD_OK && step < TB_CAL_STEPS && fabs(err) > TB_CAL_TOL; step++) {
        /* the slope measured between the last two points once there are
         * two (the error grows steeply towards the top of the range), the
         * prose slope before, or when they disagree with it in sign */
        double slope = TB_CAL_SLOPE;
        if (step && mu != pmu) {
            double sl = (err - perr) / ((double)mu - (double)pmu) * 65536.0;
            if (sl > TB_CAL_SLOPE_MIN)
                slope = sl;
        }
        double next = (double)mu - err / slope * 65536.0;
        uint32_t to = next < TM_CAL_LO ? TM_CAL_LO : next > TM_CAL_HI ? TM_CAL_HI : (uint32_t)next;
        if (to == mu) /* at a bound already */
            break;
        pmu = mu;
        perr = err;
        mu = to;
        rc = cal_generate(pool, m, mu, g, n);
        if (rc == TD_OK)
            rc = cal_error(pool, cx, g, n, cs, &err, z);
        if (rc == TD_OK && fabs(err) < fabs(best_err)) {
            best = mu;
            best_err = err;
            memcpy(best_z, z, sizeof z);
        }
    }
    if (rc == TD_OK && best != mu0)
        cal_store(*data, *len, best);
    if (rc == TD_OK) {
        memcpy(b->cal_cs, cs, sizeof cs);
        memcpy(b->cal_z, best_z, sizeof best_z);
        b->cal_bytes = n;
        b->have_fid = 1;
        make_note(b, m->runs.rate != 0);
    }
    if (rc == TD_OK && keep) { /* the model compiled is the file's but for the rates */
        td__tm_set_cache(m, *data, best);
        uint8_t *copy = malloc(*len);
        if (copy) {
            memcpy(copy, *data, *len);
            b->file = copy;
            b->file_n = *len;
            *keep = m;
            m = NULL;
        } else {
            rc = TD_ENOMEM;
        }
    }
    if (m)
        m->data = NULL; /* the caller's again */
    td__pool_free(pool);
    if (cx[1] != cx[0])
        td__codecs_free(cx[1]);
    td__codecs_free(cx[0]);
    if (g != b->cal)
        free(g);
    td_model_free(m);
    free(b->cal);
    b->cal = NULL;
    b->cal_n = 0;
    if (rc == TD_ENOMEM)
        return nomem(b);
    return rc == TD_OK ? TD_OK : fail(b, rc, "internal error: calibrating the model failed");
}

/* The model file, made once into b->file (counted, written, calibrated);
 * with keep, the model compiled for the calibration may be handed back. */
static int make_file(td_model_builder *b, td_model **keep)
{
    uint8_t *data = NULL;
    size_t len = 0;
    if (b->file)
        return TD_OK;
    int rc = calibrate(b, &data, &len, keep);
    if (rc != TD_OK || b->file) { /* failed, or the model kept the file */
        if (rc != TD_OK)
            free(data);
        return rc;
    }
    b->file = data;
    b->file_n = len;
    return TD_OK;
}

int td_model_builder_finish(td_model_builder *b, td_model **out)
{
    if (!b || !out)
        return TD_EINVAL;
    *out = NULL;
    int rc = make_file(b, out);
    if (rc != TD_OK || *out)
        return rc;
    rc = td__tm_load(out, b->file, b->file_n, TM_LOAD_TRUSTED);
    if (rc != TD_OK && rc != TD_ENOMEM)
        rc = fail(b, rc, "internal error: the built model does not load");
    return rc;
}

/* The calibration compiled the model once; the file needs no more. */
int td_model_builder_save(td_model_builder *b, const char *path)
{
    if (!b || !path || !*path)
        return TD_EINVAL;
    b->soft = 0;
    td__file_id out = b->failed ? (td__file_id){0, 0, 0} : td__file_id_path(path);
    for (size_t i = 0; i < b->ninputs; i++) {
        if (td__file_id_eq(b->inputs[i], out)) {
            snprintf(b->msg, sizeof b->msg,
                     "'%s' is a corpus file: the model would replace it (choose another output)",
                     path);
            b->soft = 1;
            return TD_EINVAL;
        }
    }
    int rc = make_file(b, NULL);
    return rc == TD_OK ? td__output_put(path, b->file, b->file_n) : rc;
}
