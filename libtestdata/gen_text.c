/*
 * TD_TEXT: prose from a text model (text_model.c; the built-in English one
 * unless td_options.model says otherwise).  The format is specified in
 * docs/format.md, section "text".
 *
 * The stream is cut into blocks of TEXT_BLOCK bytes, each made on its own
 * from a PRNG seeded by (key, block index) and starting with a paragraph,
 * so any byte range can be produced without the blocks before it.
 *
 * Per word: a class-conditioned bigram with Witten-Bell backoff to a
 * unigram, a continuation cache (the word that followed the previous word
 * last time in this block), rare words spelled by a character model with
 * Zipf-distributed ranks (an open vocabulary), and a separator drawn after
 * each word.  Lines are wrapped greedily at the paragraph's width.  Only
 * integer arithmetic.
 *
 * That costs about three times what compressing the text with lz4 costs.
 * So only the first ROUND_BLOCKS blocks (round 0, the base) are made that
 * way; every later round of ROUND_BLOCKS blocks is the base with each head
 * word rotated within its class of words of the same length and frequency
 * band, and some rare words respelled (docs/format.md, text, "Rounds").
 */
#include "text_model.h"

#include <stdio.h>
#include <unistd.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define TEXT_BLOCK 65536u
/* Strings are written with 32-byte copies that may run this far past the
 * block; the bytes there are overwritten by whatever comes next. */
#define TEXT_SLACK 64u
/* Room needed for one more word: break (trail, EOL, indent), the rest of
 * the previous separator, the word, the final separator, trail and EOL. */
#define TEXT_RESERVE 128u
#define TEXT_PARA_RESERVE (TEXT_RESERVE + 48u)
#define CACHE_N (1u << TM_CACHE_BITS)
/* Tokens of the block kept for copying: the last HIST_N. */
#define HIST_N 8192u
/* A copy starts at least this many tokens back: no short loops. */
#define COPY_MIN_DIST 16u
/* Blocks generated together, interleaved, so that their table lookups
 * overlap (each block is still made on its own: same bytes). */
#define LANES 4
/* Fills of at least this many bytes (a stream's buffer) build the model's
 * spelling cache, once it pays (spell_cache). */
#define TEXT_CACHE_MIN (LANES * TEXT_BLOCK)
/* The cache costs about what spelling the rare words of 4 MiB of round 0
 * one by one does (gen text of 300 KiB to 16 MiB: 3.5-7.5 ms more with it
 * than without), and a stream makes at most 1 MiB of round 0 (later rounds
 * respell without it): so it is built once the model has made this much
 * round 0 in all, over many streams (a tree of text files, a test suite). */
#define TEXT_CACHE_AFTER ((uint64_t)4 << 20)
/* A round: 16 blocks, 1 MiB. */
#define ROUND_SHIFT 4
#define ROUND_BLOCKS (1u << ROUND_SHIFT)
#define TAIL_CLASS 0xFFFFu
/* fill_runs's and fill_lazy's scratches kept by a state, one per thread
 * (more threads make their own) */
#define TEXT_SLOTS 4

/* A word written in a base block: head word (cls, and its gidx of
 * td__tm_rot in g's low 24 bits) or rare word (cls TAIL_CLASS, its index in
 * the block's tails[]); its length in bytes in g's top 8 bits. */
typedef struct base_tok {
    uint32_t g;
    uint16_t pos, cls;
} base_tok;

typedef struct base_tail {
    uint8_t s[32]; /* as written (capitalised or not) */
    uint32_t rank;
    uint16_t len;
    uint16_t cap; /* written capitalised */
} base_tail;

/* Block c of round 0 with the words it wrote, made on first need by one
 * thread (td_once; ready 1 when made). */
typedef struct text_base {
    td_once once;
    uint32_t ntok;
    base_tok *tok;
    base_tail *tails;
    uint8_t *buf; /* TEXT_BLOCK + TEXT_SLACK */
} text_base;

/* Round 0's blocks and their words live in one region on huge pages
 * (td__alloc_large), made by the first fill that keeps several blocks (a
 * stream's buffer: most of round 0 follows) and kept for the state's life:
 * fresh memory on 4 KiB pages costs a fault per page, and the faults of a
 * block (its bytes and words, about 40 pages) were a third of the time to
 * make it word by word.  A block made alone (a small read past round 0)
 * uses the region only if it is there: 2 MiB for one block of 64 KiB
 * would be too much for many small streams.  Block c has a fixed slot; the
 * words of all blocks are carved after the slots; what does not fit goes
 * to malloc. */
#define ARENA_SLOT ((size_t)TEXT_BLOCK + TEXT_SLACK)
#define ARENA_WORDS ((size_t)ROUND_BLOCKS * ARENA_SLOT)
#define ARENA_SIZE ((size_t)4 << 20)
_Static_assert(ARENA_WORDS < ARENA_SIZE / 2, "room for the words of round 0");

typedef struct text_state {
    uint64_t k[4];
    const td_model *m;
    unsigned keep_n; /* blocks of round 0 worth keeping: those below (the
                      * bases of the rounds below the state's end) */
    int once;        /* td__text_once_new's: never builds the spelling cache */
    uint8_t *_Atomic arena; /* ARENA_SIZE bytes, or NULL until needed */
    atomic_size_t arena_used; /* bytes carved past ARENA_WORDS */
    text_base base[ROUND_BLOCKS];
    /* fill_runs's buffers, each with the last pass's text without runs and
     * its copies, which the next range of a stream read in order starts
     * after, and what it derived from the base blocks; a thread that finds
     * them all taken uses its own (the same bytes), so they are held
     * without waiting (td_once as a try-lock). */
    td_once run_lock[TEXT_SLOTS];
    struct run_scratch *run_sc[TEXT_SLOTS];
    /* fill_lazy's, held the same way, one per thread of the dedup layer */
    td_once lz_lock[TEXT_SLOTS];
    struct lz_scratch *lz_sc[TEXT_SLOTS];
} text_state;

/* Where gen_blocks records the words it writes (base blocks only). */
typedef struct tok_log {
    const tm_rot *rot;
    base_tok *tok;
    base_tail *tails;
    uint32_t ntok, ntail, captok, captail;
    int failed;
} tok_log;

/* Per-block scratch: the words and separators written so far (ring) and,
 * per (word, class) context, the position of the token that followed it
 * last.  Stale entries from an earlier block are harmless: a position is
 * used only if the history there shows the same context. */
typedef struct text_scratch {
    uint32_t hw[HIST_N], hs[HIST_N];
    uint32_t cache[CACHE_N];
} text_scratch;

/* One block being generated. */
typedef struct lane {
    uint8_t *dst;
    text_scratch *x;
    uint64_t s;       /* PRNG state */
    uint64_t r;       /* the draw of the next word */
    size_t pos;
    const tm_style *sty;
    const tm_str *pend; /* separator whose gap and tail are not written yet */
    const tm_word *wr;  /* record of the word in flight */
    const uint8_t *tc;  /* rare-word spelling cache, or NULL */
    tok_log *log;       /* base blocks: where the words go, else NULL */
    uint32_t prev, w, sid, ntok, nt, src;
    unsigned col, width, cls, copying, done;
} lane;

static inline uint32_t cache_slot(uint32_t prev, unsigned cls)
{
    return ((prev * 3 + cls + 1) * 0x9E3779B1u) >> (32 - TM_CACHE_BITS);
}

static inline void put32(uint8_t *dst, size_t *pos, const uint8_t *src, unsigned len)
{
    memcpy(dst + *pos, src, 32);
    *pos += len;
}

/* Rank of a rare word from 32 random bits x: with u = (x + 1) / 2^32 and
 * v = 1/u - 1 in 16.16 fixed point, rank = R v (v + 2), so that
 * P(rank >= k) = (R / (R + k))^(1/2): a Zipf tail whose vocabulary grows
 * like n^(2/3) (docs/format.md). */
static inline uint32_t tail_rank(uint32_t R, uint32_t x)
{
    uint64_t y = (uint64_t)x + 1;
    uint64_t a = ((((uint64_t)1 << 32) - y) << 16) / y;
    if (a > ((uint64_t)1 << 24))
        return TM_TAIL_RANK_MAX - 1;
    uint64_t r = ((uint64_t)R * ((a * (a + ((uint64_t)1 << 17))) >> 16)) >> 16;
    return r < TM_TAIL_RANK_MAX ? (uint32_t)r : TM_TAIL_RANK_MAX - 1;
}

#define PREFETCH(p) __builtin_prefetch(p)

/* Start a paragraph (or end the block when there is no room for one). */
static void para_start(const td_model *m, lane *L)
{
    if (L->pos + TEXT_PARA_RESERVE > TEXT_BLOCK) {
        memset(L->dst + L->pos, '\n', TEXT_BLOCK - L->pos);
        L->done = 1;
        return;
    }
    const tm_style *sty = &m->styles[tm_sample(m->ent + m->style.off, m->style.n, td__wyrand(&L->s))];
    L->width = tm_sample(m->ent + m->width.off, m->width.n, td__wyrand(&L->s));
    const tm_str *lead = &m->seps[tm_sample(m->ent + m->lead.off, m->lead.n, td__wyrand(&L->s))];
    uint8_t *dst = L->dst;
    if (L->pos) {
        memcpy(dst + L->pos, m->p.eol ? "\r\n" : "\n", 2);
        L->pos += m->p.eol ? 2u : 1u;
    }
    memcpy(dst + L->pos, sty->ind1, TM_IND_MAX);
    L->pos += sty->ind1_len;
    put32(dst, &L->pos, m->pool + lead->off, lead->len);
    L->col = sty->ind1_len + lead->cols;
    L->sty = sty;
    L->pend = NULL;
    L->prev = UINT32_MAX;
    L->ntok = 0;
    L->cls = 2;
    L->copying = 0;
    L->r = td__wyrand(&L->s);
    PREFETCH(m->ent + m->uni[2].off + (((uint64_t)(uint32_t)L->r * m->uni[2].n) >> 32));
}

/* Phase 1: choose the word. */
static inline __attribute__((always_inline)) void phase_word(const td_model *m, lane *L)
{
    const uint32_t V = m->V;
    text_scratch *x = L->x;
    uint64_t r = L->r;
    uint32_t w, sid = UINT32_MAX, nt = L->nt;
    if (L->prev == UINT32_MAX) {
        w = tm_sample(m->ent + m->uni[2].off, m->uni[2].n, r);
        L->copying = 0;
    } else {
        uint32_t prev = L->prev;
        unsigned cls = L->cls;
        uint32_t *ce = &x->cache[cache_slot(prev, cls)];
        uint32_t q = *ce, t16 = (uint32_t)(r >> 48);
        int copied = 0;
        if (L->copying) { /* go on copying from src */
            if (t16 < m->p.copy_mu && L->src + 1 < nt) {
                q = L->src + 1;
                copied = 1;
            }
        } else if (t16 < m->p.cache_mu && q > 0 && q < nt && nt - q >= COPY_MIN_DIST &&
                   nt - q < HIST_N && x->hw[(q - 1) % HIST_N] == prev && (x->hs[(q - 1) % HIST_N] & 1) == 0 &&
                   m->seps[x->hs[(q - 1) % HIST_N] >> 1].cls == cls) {
            copied = 1;
        }
        if (copied && x->hw[q % HIST_N] != prev) {
            w = x->hw[q % HIST_N];
            sid = x->hs[q % HIST_N];
            L->src = q;
        } else {
            copied = 0;
            const tm_dist *d = &m->words[prev < V ? prev : V].big[cls];
            w = d->n ? tm_sample(m->ent + d->off, d->n, r) : TM_NIL;
            if (w == TM_NIL) {
                uint64_t r2 = td__wyrand(&L->s);
                if (cls == 0 && (uint32_t)(r2 >> 48) < m->p.recent_mu) {
                    /* a recent word (drawn by position: frequent ones more often) */
                    uint32_t k = nt < m->p.recent_n ? nt : m->p.recent_n;
                    uint32_t j = nt - 1 - (uint32_t)(((uint64_t)(uint32_t)r2 * k) >> 32);
                    uint32_t hp = x->hs[(j - 1) % HIST_N];
                    if (j > 0 && !(hp & 1) && m->seps[hp >> 1].cls == 0)
                        w = x->hw[j % HIST_N];
                }
                if (w == TM_NIL)
                    w = tm_sample(m->ent + m->uni[cls].off, m->uni[cls].n, td__wyrand(&L->s));
            }
        }
        *ce = nt;
        L->copying = (unsigned)copied;
    }
    if (w == V) { /* a rare word: its rank */
        w = V + 1 + tail_rank(m->p.tail_r, (uint32_t)td__wyrand(&L->s));
        if (L->tc && w - V - 1 < TM_TCACHE_N)
            PREFETCH(L->tc + (size_t)(w - V - 1) * 32);
    }
    L->w = w;
    L->sid = sid;
    L->wr = &m->words[w < V ? w : V];
    PREFETCH(L->wr);
}

/* Phase 2: draw its separator's slot. */
static inline __attribute__((always_inline)) void phase_sep(const td_model *m, lane *L)
{
    if (L->sid != UINT32_MAX)
        return;
    const tm_word *wr = L->wr;
    if (!wr->sep.n) {
        L->sid = TM_NIL;
        return;
    }
    L->r = td__wyrand(&L->s);
    PREFETCH(m->ent + wr->sep.off + (((uint64_t)(uint32_t)L->r * wr->sep.n) >> 32));
    L->sid = UINT32_MAX - 1; /* drawn, not read yet */
}

static void log_word(tok_log *g, size_t pos, uint32_t w, uint32_t V, const uint8_t *wp, unsigned wl)
{
    if (g->ntok == g->captok) {
        uint32_t cap = g->captok ? 2 * g->captok : 16384;
        base_tok *t = realloc(g->tok, sizeof *t * cap);
        if (!t) {
            g->failed = 1;
            return;
        }
        g->tok = t;
        g->captok = cap;
    }
    base_tok *t = &g->tok[g->ntok++];
    t->pos = (uint16_t)pos;
    if (w < V) {
        t->cls = g->rot->cls[w];
        t->g = g->rot->gidx[w] | (uint32_t)wl << 24;
        return;
    }
    if (g->ntail == g->captail) {
        uint32_t cap = g->captail ? 2 * g->captail : 1024;
        base_tail *n = realloc(g->tails, sizeof *n * cap);
        if (!n) {
            g->failed = 1;
            g->ntok--;
            return;
        }
        g->tails = n;
        g->captail = cap;
    }
    base_tail *e = &g->tails[g->ntail];
    memcpy(e->s, wp, 32);
    e->rank = w - V - 1;
    e->len = (uint16_t)wl;
    e->cap = (uint16_t)td__tm_is_cap(wp, wl);
    t->cls = TAIL_CLASS;
    t->g = g->ntail++ | (uint32_t)wl << 24;
}

/* Phase 3: the separator, then write the word and the separator.  The
 * separator goes in whole; if the next word does not fit on the line, its
 * gap and tail are taken back and the line broken there. */
static inline __attribute__((always_inline)) void phase_emit(const td_model *m, lane *L)
{
    const uint32_t V = m->V;
    const tm_word *wr = L->wr;
    uint32_t w = L->w, sid = L->sid;
    uint8_t tw[TM_WORD_MAX + 40];
    if (sid == UINT32_MAX - 1)
        sid = tm_sample(m->ent + wr->sep.off, wr->sep.n, L->r);
    if (sid == TM_NIL)
        sid = tm_sample(m->ent + m->sepg.off, m->sepg.n, td__wyrand(&L->s));
    L->ntok++;
    if (!(sid & 1) && (L->pos + TEXT_RESERVE > TEXT_BLOCK || L->ntok >= m->p.max_tokens))
        sid = m->final_sep;
    L->x->hw[L->nt % HIST_N] = w;
    L->x->hs[L->nt % HIST_N] = sid;
    L->nt++;

    const uint8_t *wp;
    unsigned wl, wc;
    if (w < V) {
        wp = m->pool + wr->off;
        wl = wr->len;
        wc = wr->cols;
    } else {
        uint32_t rank = w - V - 1;
        const uint8_t *e = L->tc && rank < TM_TCACHE_N ? L->tc + (size_t)rank * 32 : NULL;
        if (e && e[30] != TM_TCACHE_NONE) {
            wl = e[30];
            wc = e[31];
            wp = e;
            if (L->cls != 0) {
                memcpy(tw, e, 32);
                td__tm_cap(tw, wl);
                wp = tw;
            }
        } else {
            wl = td__tm_tail_word(m, rank, L->cls != 0, tw, &wc);
            wp = tw;
        }
    }
    const tm_str *sp = &m->seps[sid >> 1], *pend = L->pend;
    unsigned final = sid & 1;
    unsigned hc = final ? sp->cols : sp->head_cols;
    uint8_t *dst = L->dst;
    size_t pos = L->pos;
    unsigned col = L->col;

    if (pend) {
        /* the unit: tail of the previous separator, word, head of this one */
        unsigned ucols = pend->tail_cols + wc + hc;
        if (col + pend->gap_cols + ucols + L->sty->trail > L->width) {
            const tm_style *sty = L->sty;
            pos -= pend->gap_len + pend->tail_len;
            dst[pos] = ' ';
            pos += sty->trail;
            memcpy(dst + pos, m->p.eol ? "\r\n" : "\n", 2);
            pos += m->p.eol ? 2u : 1u;
            memcpy(dst + pos, sty->ind2, TM_IND_MAX);
            pos += sty->ind2_len;
            put32(dst, &pos, m->pool + pend->off + pend->head_len + pend->gap_len, pend->tail_len);
            col = sty->ind2_len + ucols;
        } else {
            col += pend->gap_cols + ucols;
        }
    } else {
        col += wc + hc;
    }
    if (L->log)
        log_word(L->log, pos, w, V, wp, wl);
    put32(dst, &pos, wp, wl);
    put32(dst, &pos, m->pool + sp->off, sp->len);
    L->col = col;
    if (final) {
        dst[pos] = ' ';
        pos += L->sty->trail;
        memcpy(dst + pos, m->p.eol ? "\r\n" : "\n", 2);
        pos += m->p.eol ? 2u : 1u;
        L->pos = pos;
        para_start(m, L);
        return;
    }
    L->pos = pos;
    L->pend = sp;
    L->prev = w;
    L->cls = sp->cls;
    L->r = td__wyrand(&L->s);
    const tm_dist *d = &wr->big[sp->cls];
    PREFETCH(m->ent + d->off + (((uint64_t)(uint32_t)L->r * d->n) >> 32));
}

/*
 * Write blocks bi .. bi+n-1 (n <= LANES) at dst[0..n): exactly TEXT_BLOCK
 * bytes each, scribbling at most TEXT_SLACK bytes past them.
 */
static void gen_blocks(const text_state *st, uint64_t bi, unsigned n, uint8_t *const *dst,
                       text_scratch *x, size_t stop, const uint8_t *tc, tok_log *const *logs)
{
    const td_model *m = st->m;
    lane L[LANES];
    for (unsigned i = 0; i < n; i++) {
        memset(&L[i], 0, sizeof L[i]);
        L[i].dst = dst[i];
        L[i].x = &x[i];
        L[i].tc = tc;
        L[i].log = logs ? logs[i] : NULL;
        L[i].s = td__wymix(st->k[0] ^ (bi + i), st->k[1] ^ TD_WY_P1) ^ st->k[2];
        para_start(m, &L[i]);
    }
    for (;;) {
        unsigned active = 0;
        for (unsigned i = 0; i < n; i++)
            if (!L[i].done) {
                phase_word(m, &L[i]);
                active++;
            }
        if (!active)
            break;
        for (unsigned i = 0; i < n; i++)
            if (!L[i].done)
                phase_sep(m, &L[i]);
        for (unsigned i = 0; i < n; i++)
            if (!L[i].done)
                phase_emit(m, &L[i]);
        /* A prefix is enough (a cut block's end): the bytes are final up
         * to the pending separator's gap and tail, which the next word
         * moves to a new line when it does not fit. */
        if (stop < TEXT_BLOCK)
            for (unsigned i = 0; i < n; i++) {
                const tm_str *pend = L[i].pend;
                if (L[i].pos - (pend ? pend->gap_len + pend->tail_len : 0u) >= stop)
                    L[i].done = 1;
            }
    }
}

static int base_publish(const text_state *st, unsigned c, uint8_t *block, int own, const tok_log *g,
                        int rc);
static uint8_t *arena(const text_state *st, int make);

/* The model's spelling cache for a fill of round 0 that makes `made`
 * bytes: built with may_build once the model's streams have made
 * TEXT_CACHE_AFTER bytes of round 0, else whatever is there.  One-shot
 * states (the builder's calibration) neither count nor build. */
static const uint8_t *spell_cache(const text_state *st, size_t made, int may_build)
{
    td_model *m = (td_model *)st->m; /* only its caches change */
    if (!st->once &&
        __atomic_fetch_add(&m->r0_made, (uint64_t)made, __ATOMIC_RELAXED) >= TEXT_CACHE_AFTER &&
        may_build)
        return td__tm_tail_cache(m);
    return __atomic_load_n(&m->tcache, __ATOMIC_ACQUIRE);
}

/* Bytes [offset, offset + len) of round 0; with use_cache, the model's
 * spelling cache is built if it pays and is not there yet (spell_cache);
 * with keep, whole blocks below st->keep_n are kept as base blocks (either
 * changes the speed, never the bytes). */
static int gen_range(const text_state *st, uint64_t offset, uint8_t *buf, size_t len,
                     int use_cache, int keep)
{
    uint8_t *scratch[LANES] = {NULL};
    uint64_t bi = offset / TEXT_BLOCK;
    size_t skip = (size_t)(offset % TEXT_BLOCK);
    size_t nblocks = (skip + len + TEXT_BLOCK - 1) / TEXT_BLOCK;
    unsigned lanes = nblocks < LANES ? (unsigned)nblocks : LANES;
    text_scratch *x = calloc(lanes, sizeof *x);
    int rc = TD_OK;
    if (!x)
        return TD_ENOMEM;
    const uint8_t *tc = spell_cache(st, len, use_cache);
    const tm_rot *rot = keep && st->keep_n ? td__tm_rot(st->m) : NULL;
    if (rot && nblocks > 1 && bi < st->keep_n)
        (void)arena(st, 1); /* NULL: malloc does */
    /* the word logs of kept blocks, reused by the next blocks of their lane
     * (base_publish copies them) */
    tok_log lg[LANES];
    memset(lg, 0, sizeof lg);

    while (len) {
        /* up to LANES blocks at once; a block that is cut (first or last)
         * or too close to the end of buf for the slack goes via scratch */
        uint8_t *out[LANES];
        size_t take[LANES], from[LANES];
        unsigned n = 0;
        size_t used = 0;
        while (n < lanes && used < len) {
            size_t k = TEXT_BLOCK - (n == 0 ? skip : 0);
            if (k > len - used)
                k = len - used;
            from[n] = n == 0 ? skip : 0;
            take[n] = k;
            if (from[n] == 0 && len - used >= TEXT_BLOCK + TEXT_SLACK) {
                out[n] = buf + used;
            } else {
                if (!scratch[n] && !(scratch[n] = malloc(TEXT_BLOCK + TEXT_SLACK))) {
                    rc = TD_ENOMEM;
                    goto done;
                }
                out[n] = scratch[n];
            }
            used += k;
            n++;
        }
        /* whole blocks of a large fill also become base blocks (made once) */
        tok_log *logs[LANES] = {NULL};
        for (unsigned i = 0; i < n; i++)
            if (rot && take[i] == TEXT_BLOCK && bi + i < st->keep_n &&
                td__once_take((td_once *)&st->base[bi + i].once, 1, 0)) {
                lg[i].rot = rot;
                lg[i].ntok = lg[i].ntail = 0;
                lg[i].failed = 0;
                logs[i] = &lg[i];
            }
        /* one block, cut and not kept: its prefix up to the range's end
         * is enough (a small read costs what it reads, not 64 KiB) */
        size_t stop = n == 1 && !logs[0] ? from[0] + take[0] : TEXT_BLOCK;
        gen_blocks(st, bi, n, out, x, stop, tc, logs);
        for (unsigned i = 0; i < n; i++)
            if (logs[i])
                (void)base_publish(st, (unsigned)(bi + i), out[i], 0, logs[i], TD_OK);
        used = 0;
        for (unsigned i = 0; i < n; i++) {
            if (out[i] == scratch[i])
                memcpy(buf + used, scratch[i] + from[i], take[i]);
            used += take[i];
        }
        buf += used;
        len -= used;
        skip = 0;
        bi += n;
    }
done:
    for (unsigned i = 0; i < LANES; i++) {
        free(scratch[i]);
        free(lg[i].tok);
        free(lg[i].tails);
    }
    free(x);
    return rc;
}

/* ---- rounds ------------------------------------------------------------ */

/* The state's region (ARENA_SIZE bytes on huge pages), with make made by
 * whoever needs it first; NULL if not made (or out of memory: then malloc
 * does). */
static uint8_t *arena(const text_state *st, int make)
{
    text_state *s = (text_state *)st;
    uint8_t *a = atomic_load_explicit(&s->arena, memory_order_acquire);
    if (a || !make)
        return a;
    uint8_t *mine = td__alloc_large(ARENA_SIZE), *expect = NULL;
    if (!mine)
        return NULL;
    if (atomic_compare_exchange_strong_explicit(&s->arena, &expect, mine, memory_order_acq_rel,
                                                memory_order_acquire))
        return mine;
    free(mine);
    return expect;
}

/* Block c's slot in the region, or NULL if there is none. */
static uint8_t *base_slot(const text_state *st, unsigned c)
{
    uint8_t *a = arena(st, 0);
    return a ? a + (size_t)c * ARENA_SLOT : NULL;
}

/* n bytes (n > 0) copied from p into the region, or into malloc's memory
 * when the region is full; NULL if out of memory. */
static void *arena_copy(const text_state *st, const void *p, size_t n)
{
    uint8_t *a = arena(st, 0), *q = NULL;
    if (a) {
        size_t r = (n + 63) & ~(size_t)63;
        size_t at = atomic_fetch_add_explicit(&((text_state *)st)->arena_used, r, memory_order_relaxed);
        if (at <= ARENA_SIZE - ARENA_WORDS && r <= ARENA_SIZE - ARENA_WORDS - at)
            q = a + ARENA_WORDS + at;
    }
    if (!q && !(q = malloc(n)))
        return NULL;
    return memcpy(q, p, n);
}

static void arena_free(const text_state *st, void *p)
{
    const uint8_t *a = arena(st, 0);
    if (!a || (uint8_t *)p < a || (uint8_t *)p >= a + ARENA_SIZE)
        free(p);
}

static void base_drop(const text_state *st, text_base *b)
{
    arena_free(st, b->tok);
    arena_free(st, b->tails);
    arena_free(st, b->buf);
    b->tok = NULL;
    b->tails = NULL;
    b->buf = NULL;
}

/* Ends what td__once_take began for block c: its TEXT_BLOCK bytes (block,
 * which is its slot of the region already or is copied there; without a
 * region, block itself if own (it came from malloc: it is taken over), else
 * a copy from malloc) and its words (copied from g), made ready unless g or
 * rc says it failed; a failure is not final (the next reader tries again). */
static int base_publish(const text_state *st, unsigned c, uint8_t *block, int own, const tok_log *g,
                        int rc)
{
    text_base *b = (text_base *)&st->base[c];
    /* an owner of another process (before fork) may have left these */
    base_drop(st, b);
    if (rc == TD_OK && g->failed)
        rc = TD_ENOMEM;
    if (rc == TD_OK) {
        uint8_t *slot = base_slot(st, c);
        b->buf = slot ? slot : own ? block : malloc(ARENA_SLOT);
        if (b->buf && b->buf != block)
            memcpy(b->buf, block, TEXT_BLOCK);
    }
    if (own && block != b->buf)
        free(block);
    if (b->buf && g->ntok && !(b->tok = arena_copy(st, g->tok, g->ntok * sizeof *g->tok)))
        base_drop(st, b);
    if (b->buf && g->ntail && !(b->tails = arena_copy(st, g->tails, g->ntail * sizeof *g->tails)))
        base_drop(st, b);
    if (b->buf) {
        b->ntok = g->ntok;
        /* the gap copies read up to 32 bytes past the block */
        memset(b->buf + TEXT_BLOCK, '\n', TEXT_SLACK);
    } else if (rc == TD_OK) {
        rc = TD_ENOMEM;
    }
    td__once_done(&b->once, b->buf ? 1 : 0);
    return rc;
}

/* Block c of round 0 up to at least stop, its words logged in *g, into
 * *out, or if *out is NULL a new buffer from malloc (zeroed first when zero
 * is set; NULL if out of memory). */
static int base_make(const text_state *st, unsigned c, uint32_t stop, const uint8_t *tc,
                     int zero, uint8_t **out, tok_log *g)
{
    *g = (tok_log){.rot = td__tm_rot(st->m)};
    tok_log *lg = g;
    text_scratch *x = calloc(1, sizeof *x);
    uint8_t *buf = *out ? *out : zero ? calloc(1, ARENA_SLOT) : malloc(ARENA_SLOT);
    int rc = TD_ENOMEM;
    if (g->rot && x && buf) {
        gen_blocks(st, c, 1, &buf, x, stop, tc, &lg);
        rc = TD_OK;
    }
    free(x);
    *out = buf;
    return rc;
}

/* Makes base block c (with its words) if nobody has yet. */
static int base_need(const text_state *st, unsigned c)
{
    text_base *b = (text_base *)&st->base[c];
    if (atomic_load_explicit(&b->once.ready, memory_order_acquire) || !td__once_take(&b->once, 1, 1))
        return TD_OK;
    tok_log g;
    uint8_t *slot = base_slot(st, c), *buf = slot;
    int rc = base_make(st, c, TEXT_BLOCK, spell_cache(st, TEXT_BLOCK, 1), 0, &buf, &g);
    rc = base_publish(st, c, buf, buf != slot, &g, rc); /* takes a malloc'd buf over */
    free(g.tok);
    free(g.tails);
    return rc;
}

/* What round j (>= 1) does to the base: the rotation of each class and how
 * many rare words are respelled; and the respellings made so far. */
#define RESPELL_CACHE 1024u
typedef struct text_round {
    uint64_t j;
    uint32_t thr;  /* respelled if the word's 16-bit hash is below */
    uint32_t *rot; /* per class: index of the member that member 0 becomes */
    uint32_t key[RESPELL_CACHE]; /* 1 + rank, 0: empty */
    uint8_t word[RESPELL_CACHE][36]; /* uncapitalised; len 0: kept */
    uint8_t len[RESPELL_CACHE];
} text_round;

static uint64_t isqrt64(uint64_t x)
{
    uint64_t r = 0;
    for (uint64_t bit = (uint64_t)1 << 62; bit; bit >>= 2) {
        if (x >= r + bit) {
            x -= r + bit;
            r = (r >> 1) + bit;
        } else {
            r >>= 1;
        }
    }
    return r;
}

static void round_init(const text_state *st, const tm_rot *rt, uint64_t j, text_round *R)
{
    uint64_t s = td__wymix(st->k[3] ^ j, st->k[0] ^ TD_WY_P1);
    R->j = j;
    memset(R->key, 0, sizeof R->key);
    for (uint32_t q = 0; q < rt->nc; q++) {
        uint32_t n = rt->start[q + 1] - rt->start[q];
        R->rot[q] = n > 1 ? (uint32_t)(((td__wyrand(&s) >> 32) * n) >> 32) : 0;
    }
    /* 2^17 / sqrt(j): the new spellings of a round fall as j^-1/2, so the
     * vocabulary grows as about the square root of the text (Heaps' law) */
    uint64_t d = isqrt64(j << 16);
    R->thr = d <= 512 ? 65536u : (uint32_t)(((uint64_t)1 << 25) / d);
}

/* The model's tables that round_put reads, loaded once per block (the
 * bytes written could alias them: the compiler cannot hoist the loads). */
typedef struct round_tabs {
    const uint8_t *pool;
    const uint32_t *start, *mem;
} round_tabs;

/* Token t of base block b in round R->j written at out + t.pos (32 bytes,
 * the word's and what follows); its length. */
static inline __attribute__((always_inline)) uint32_t
round_put(const text_state *st, round_tabs T, text_round *R, const text_base *b, base_tok t,
          uint8_t *out)
{
    if (t.cls != TAIL_CLASS) {
        uint32_t lo = T.start[t.cls], hi = T.start[t.cls + 1];
        uint32_t g = (t.g & 0xFFFFFF) + R->rot[t.cls];
        if (g >= hi)
            g -= hi - lo;
        memcpy(out + t.pos, T.pool + T.mem[g], 32);
        return t.g >> 24;
    }
    const base_tail *e = &b->tails[t.g & 0xFFFFFF];
    const uint8_t *w = e->s;
    uint8_t cw[32];
    uint64_t h = td__wymix(st->k[3] ^ R->j, st->k[1] ^ e->rank);
    if ((uint32_t)(h >> 48) < R->thr) {
        /* the same rank may come back in the round: spelled once */
        unsigned slot = e->rank % RESPELL_CACHE;
        if (R->key[slot] != e->rank + 1) {
            R->key[slot] = e->rank + 1;
            R->len[slot] = (uint8_t)td__tm_respell(st->m, h, e->s, e->len, R->word[slot]);
        }
        if (R->len[slot]) {
            memcpy(cw, R->word[slot], 32);
            if (e->cap)
                td__tm_cap(cw, e->len);
            w = cw;
        }
    }
    memcpy(out + t.pos, w, 32);
    return e->len;
}

/* Bytes [lo, hi) of block c of round R->j at out (and up to 32 bytes on
 * either side): the base block's separators and layout, its words mapped,
 * from token a on (at or before the first that may reach lo). */
static inline __attribute__((always_inline)) void
round_span(const text_state *st, const tm_rot *rt, text_round *R, const text_base *b,
           uint8_t *out, uint32_t lo, uint32_t hi, uint32_t a)
{
    const uint8_t *in = b->buf;
    const round_tabs T = {st->m->pool, rt->start, rt->mem_off};
    uint32_t p = lo;
    for (; a < b->ntok && b->tok[a].pos < lo; a++) /* words that may reach lo */
        if (b->tok[a].pos + TM_WORD_MAX > lo)
            p = TD_MAX(p, b->tok[a].pos + round_put(st, T, R, b, b->tok[a], out));
    for (uint32_t i = a; i < b->ntok; i++) {
        const base_tok t = b->tok[i];
        if (t.pos >= hi)
            break;
        do { /* the separators since the last word */
            memcpy(out + p, in + p, 32);
            p += 32;
        } while (p < t.pos);
        p = t.pos + round_put(st, T, R, b, t, out);
    }
    while (p < hi) {
        memcpy(out + p, in + p, 32);
        p += 32;
    }
}

/* Bytes [0, end) of block c of round R->j at out (at most 32 bytes written
 * past end). */
static void round_block(const text_state *st, const tm_rot *rt, text_round *R,
                        const text_base *b, uint8_t *out, uint32_t end)
{
    round_span(st, rt, R, b, out, 0, end, 0);
}

/* Exactly bytes [lo, hi) of round_block's, at out + lo (fill_lazy makes a
 * block's bytes where they are wanted, in pieces): round_span with the 32
 * bytes on either side that its copies may pass over kept (out has
 * TEXT_SLACK bytes past the block); a, as round_span's. */
static void round_piece(const text_state *st, const tm_rot *rt, text_round *R,
                        const text_base *b, uint8_t *out, uint32_t lo, uint32_t hi, uint32_t a)
{
    uint8_t before[32], after[32];
    uint32_t bl = lo < 32 ? lo : 32;
    memcpy(before, out + lo - bl, bl);
    memcpy(after, out + hi, 32);
    round_span(st, rt, R, b, out, lo, hi, a);
    memcpy(out + lo - bl, before, bl);
    memcpy(out + hi, after, 32);
}

/* One call's view of the rounds: the generic block loop (td__kind_fill)
 * passes it to round_fill_block as its state, so that a round's draws and
 * respellings are made once per call, not once per block. */
typedef struct round_call {
    const text_state *st;
    const tm_rot *rt;
    text_round *R;
} round_call;

/* At most this much of a base block that is not made yet is made apart,
 * for one call, rather than whole and kept (base_prefix). */
#define PREFIX_MAX (TEXT_BLOCK / 2)

/* Block c of round 0 up to at least stop, with its words, into *b, for the
 * caller alone (base_drop frees it).  A round block's first end bytes come
 * from the base block's first end bytes (round_block keeps every word's
 * place), so a small read of a later round (a one-shot td_fill, a dedup
 * piece) costs what it reads, not a whole block made word by word.  The
 * bytes past the prefix stay zero (round_block copies up to 32 past end). */
static int base_prefix(const text_state *st, unsigned c, uint32_t stop, text_base *b)
{
    tok_log g;
    uint8_t *buf = NULL;
    int rc = base_make(st, c, stop, __atomic_load_n(&st->m->tcache, __ATOMIC_ACQUIRE), 1, &buf, &g);
    if (rc == TD_OK && g.failed)
        rc = TD_ENOMEM;
    *b = (text_base){.ntok = g.ntok, .tok = g.tok, .tails = g.tails, .buf = buf};
    if (rc != TD_OK)
        base_drop(st, b);
    return rc;
}

static int round_fill_block(const void *state, uint64_t bi, uint8_t *out, uint32_t end)
{
    const round_call *c = state;
    unsigned k = (unsigned)(bi & (ROUND_BLOCKS - 1));
    const text_base *b = &c->st->base[k];
    text_base mine;
    int rc, apart = end <= PREFIX_MAX && !atomic_load_explicit(&b->once.ready, memory_order_acquire);
    rc = apart ? base_prefix(c->st, k, end, &mine) : base_need(c->st, k);
    if (rc != TD_OK)
        return rc;
    if (c->R->j != bi >> ROUND_SHIFT)
        round_init(c->st, c->rt, bi >> ROUND_SHIFT, c->R);
    round_block(c->st, c->rt, c->R, apart ? &mine : b, out, end);
    if (apart)
        base_drop(c->st, &mine);
    return TD_OK;
}

static const td_kind_vtbl text_rounds = {
    .name = "text",
    .block = TEXT_BLOCK,
    .slack = TEXT_SLACK, /* round_block's 32-byte copies */
    .fill_block = round_fill_block,
};

/* Bytes [offset, offset + len) of rounds 1 and later. */
static int round_range(const text_state *st, uint64_t offset, uint8_t *buf, size_t len)
{
    text_round R;
    round_call c = {st, td__tm_rot(st->m), &R};
    if (!c.rt || !(R.rot = malloc(sizeof *R.rot * (c.rt->nc + 1))))
        return TD_ENOMEM;
    R.j = 0;
    int rc = td__kind_fill(&text_rounds, &c, offset, buf, len);
    free(R.rot);
    return rc;
}

#define ROUND0_END ((uint64_t)TEXT_BLOCK * ROUND_BLOCKS)
_Static_assert(ROUND0_END == TM_ROUND0, "text_model.h's TM_ROUND0 is round 0's size");

/* The text without runs (fill_range adds them). */
static int fill_pre(const text_state *st, uint64_t offset, uint8_t *buf, size_t len,
                    int use_cache)
{
    if (offset < ROUND0_END) {
        size_t n = (size_t)TD_MIN((uint64_t)len, ROUND0_END - offset);
        /* keep round 0's blocks if later rounds are read now or may be (a
         * one-shot state's end says which will be) */
        int rc = gen_range(st, offset, buf, n, use_cache, st->once || use_cache || n < len);
        if (rc != TD_OK || n == len)
            return rc;
        offset += n;
        buf += n;
        len -= n;
    }
    return round_range(st, offset, buf, len);
}

/* ---- runs ---------------------------------------------------------------- */

/* A model with a RUNS section (docs/format.md, text, "Runs") overwrites
 * some lines of its text with copies of earlier lines, up to TM_RUN_BACK
 * blocks back, as repetitive corpora repeat them (the same licence in every
 * header, a change log whole).  Where the copies go and how far back they
 * reach is drawn from each aligned group of RUN_GROUP blocks' text without
 * runs alone, and a copy may run on over the group's later blocks.  A
 * group is made from the text without runs of its view, the blocks from
 * TM_RUN_BACK before it to its end, with the copies of all of them made in
 * order, so that a copy of a copied line copies the copy (the corpus's
 * popular lines are popular in the text too), and no more is needed to
 * make it: any range, on any thread, costs its groups and TM_RUN_BACK
 * blocks before them.  A copy whose source lies before the view is left
 * out, so a chain of copies longer than that copies the text of its first
 * link. */
#define RUN_WIN 16u                         /* blocks made per pass */
/* Blocks are made in aligned groups of RUN_GROUP, each from the view that
 * starts TM_RUN_BACK blocks before the group (docs/format.md, text, "Runs");
 * a view holds at most RUN_VIEW_MAX blocks before the group's last. */
#define RUN_GROUP 4u
#define RUN_VIEW_MAX (TM_RUN_BACK + RUN_GROUP - 1)
#define GROUP_BYTES (RUN_GROUP * TEXT_BLOCK)
#define RUN_MAX (GROUP_BYTES / TM_RUN_MIN)  /* copies a group can hold */
/* blocks of t: a pass's view and blocks, up to its last group's end */
#define RUN_T_BLOCKS (RUN_VIEW_MAX + RUN_WIN + RUN_GROUP - 1)
#define RUN_SALT 0x52554e5354455854ull     /* "RUNSTEXT" */
/* A view whose blocks before its group hold more copies than this makes
 * their bytes as it passes them, not as its copies read them (run_cur):
 * finding what so many short copies read costs more than it saves (the
 * comments of /usr/include, about 700 copies; manual pages, about 120) */
#define RUN_DENSE 256u

/* The first block of block b's view. */
static uint64_t run_view(uint64_t b)
{
    uint64_t g = b / RUN_GROUP * RUN_GROUP;
    return g > TM_RUN_BACK ? g - TM_RUN_BACK : 0;
}

/* A copy: bytes [dst, dst + n) (whole lines) of the copied lines from
 * about d bytes back. */
typedef struct run_copy {
    uint32_t dst, n, d;
    uint32_t blk; /* fill_runs: its block, counted from the pass's first */
} run_copy;

/* A value of log2 bucket k, from r's high 32 bits. */
static uint32_t run_value(unsigned k, uint64_t r)
{
    return (1u << k) | (uint32_t)((r >> 32) & ((1u << k) - 1));
}

/* The (length, distance) bucket pair of runs u by r's low 32 bits: the
 * first whose cumulative count exceeds them scaled to the total (searched
 * from the first pair that their top bits allow). */
static unsigned run_pair(const tm_runs *u, uint64_t r)
{
    uint32_t r32 = (uint32_t)(r & 0xFFFFFFFFu);
    uint32_t x = (uint32_t)(((uint64_t)r32 * u->cum[TM_RUN_NB * TM_RUN_NB - 1]) >> 32);
    unsigned k = u->start[r32 >> (32 - TM_RUN_IDX_BITS)];
    while (u->cum[k] <= x)
        k++;
    return k;
}

/* Bit i of nl (words 64-byte pieces of t): t[i] is '\n'.  Lines are found
 * through it: a memchr per line cost more than the draws. */
static void nl_map_n(const uint8_t *t, uint64_t *nl, size_t words)
{
    for (size_t w = 0; w < words; w++, t += 64) {
#if defined(__SSE2__)
        const __m128i lf = _mm_set1_epi8('\n');
        uint64_t m = 0;
        for (unsigned i = 0; i < 4; i++) {
            __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(t + 16 * i));
            m |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, lf)) << (16 * i);
        }
#else
        uint64_t m = 0;
        for (unsigned i = 0; i < 64; i++)
            m |= (uint64_t)(t[i] == '\n') << i;
#endif
        nl[w] = m;
    }
}

/* The first '\n' of the group at or after i, or GROUP_BYTES. */
static uint32_t nl_next(const uint64_t *nl, uint32_t i)
{
    if (i >= GROUP_BYTES)
        return GROUP_BYTES;
    uint32_t w = i / 64;
    uint64_t m = nl[w] & (~0ull << (i % 64));
    while (!m) {
        if (++w == GROUP_BYTES / 64)
            return GROUP_BYTES;
        m = nl[w];
    }
    return w * 64 + (uint32_t)__builtin_ctzll(m);
}

/* The line end after the last '\n' in [lo, i], or lo if none. */
static uint32_t nl_prev_end(const uint64_t *nl, uint32_t lo, uint32_t i)
{
    uint32_t w = i / 64;
    uint64_t m = nl[w] & (~0ull >> (63 - i % 64));
    while (!m) {
        if (w == lo / 64)
            return lo;
        m = nl[--w];
    }
    uint32_t e = w * 64 + 63 - (uint32_t)__builtin_clzll(m);
    return e >= lo ? e + 1 : lo;
}

/* The end of the line that holds byte i of the group: after a '\n', or at
 * the end of i's block (a block starts a line). */
static uint32_t line_end(const uint64_t *nl, uint32_t i)
{
    return TD_MIN(nl_next(nl, i) + 1, (i / TEXT_BLOCK + 1) * TEXT_BLOCK);
}

/* ---- the text without runs, in pieces ----------------------------------- */

/* Under a copy the text without runs is mostly overwritten (copies cover
 * 46-72% of the text of the models with runs measured), so fill_runs and
 * fill_lazy make it in pieces, where it is read.  A round keeps every byte
 * of its base block but the words, and no word holds a '\n', so the base
 * blocks' line ends are every round's: copies are planned from them. */
#define PIECE 64u
#define PIECE_W (TEXT_BLOCK / PIECE / 64) /* words of a block's bits of pieces */
#define BLOCK_NLW (TEXT_BLOCK / 64)       /* words of a block's line ends */

/* Bits [a, b) of m set. */
static void bits_set(uint64_t *m, uint32_t a, uint32_t b)
{
    if (a >= b)
        return;
    for (uint32_t w = a / 64; w <= (b - 1) / 64; w++) {
        uint32_t lo = w == a / 64 ? a % 64 : 0, hi = w == (b - 1) / 64 ? (b - 1) % 64 + 1 : 64;
        m[w] |= (hi - lo == 64 ? ~0ull : (((uint64_t)1 << (hi - lo)) - 1)) << lo;
    }
}

/* The first bit of [a, b) of m that is v, or b. */
static uint32_t bits_next(const uint64_t *m, uint32_t a, uint32_t b, int v)
{
    while (a < b) {
        uint64_t w = (v ? m[a / 64] : ~m[a / 64]) >> (a % 64);
        if (w)
            return TD_MIN(b, a + (uint32_t)__builtin_ctzll(w));
        a = (a / 64 + 1) * 64;
    }
    return b;
}

/* What the piece makers keep for the next call: the rounds, with their
 * respellings (by j % 3: a pass or a view spans three at most; j 0: none),
 * and what is derived from the base blocks, their line ends (bit c of
 * nl_ok) and, per piece, the first token at or after it (tidx_ok); pid,
 * the process that made them (a fork's child may find them half made). */
typedef struct piece_kit {
    pid_t pid;
    uint32_t nl_ok, tidx_ok;
    uint64_t *nl;   /* block c's at nl + c * BLOCK_NLW */
    uint16_t *tidx; /* block c's at tidx + c * (TEXT_BLOCK / PIECE) */
    const tm_rot *rt;
    text_round R[3];
} piece_kit;

static void piece_kit_free(piece_kit *x)
{
    free(x->nl);
    free(x->tidx);
    for (int i = 0; i < 3; i++)
        free(x->R[i].rot);
}

static int piece_kit_init(const text_state *st, piece_kit *x)
{
    *x = (piece_kit){.nl = malloc(sizeof *x->nl * BLOCK_NLW * ROUND_BLOCKS),
                     .tidx = malloc(sizeof *x->tidx * (TEXT_BLOCK / PIECE) * ROUND_BLOCKS),
                     .rt = td__tm_rot(st->m)};
    int ok = x->nl && x->tidx && x->rt;
    for (int i = 0; ok && i < 3; i++)
        ok = (x->R[i].rot = malloc(sizeof *x->R[i].rot * (x->rt->nc + 1))) != NULL;
    return ok;
}

/* Forgets what another process made; 1 if it did. */
static int piece_kit_check(piece_kit *x)
{
    pid_t pid = getpid();
    if (x->pid == pid)
        return 0;
    x->pid = pid;
    x->nl_ok = x->tidx_ok = 0;
    x->R[0].j = x->R[1].j = x->R[2].j = 0;
    return 1;
}

/* The line ends of base blocks [c, c + n) (one after another in x->nl),
 * the blocks made if need be; NULL and *rc on error. */
static const uint64_t *base_nl(const text_state *st, piece_kit *x, unsigned c, unsigned n, int *rc)
{
    for (unsigned i = c; i < c + n; i++) {
        if (x->nl_ok >> i & 1)
            continue;
        int e = base_need(st, i);
        if (e != TD_OK) {
            *rc = e;
            return NULL;
        }
        nl_map_n(st->base[i].buf, x->nl + (size_t)i * BLOCK_NLW, BLOCK_NLW);
        x->nl_ok |= 1u << i;
    }
    return x->nl + (size_t)c * BLOCK_NLW;
}

/* Pieces [k0, k1) of block blk (past round 0) that made does not have,
 * into out (the block, with TEXT_SLACK bytes past it); made gets them. */
static int piece_text(const text_state *st, piece_kit *x, uint64_t blk, uint64_t *made,
                      uint8_t *out, uint32_t k0, uint32_t k1)
{
    if (bits_next(made, k0, k1, 0) == k1)
        return TD_OK;
    uint64_t j = blk >> ROUND_SHIFT;
    unsigned c = (unsigned)(blk & (ROUND_BLOCKS - 1));
    int rc = base_need(st, c);
    if (rc != TD_OK)
        return rc;
    text_round *R = &x->R[j % 3];
    if (R->j != j)
        round_init(st, x->rt, j, R);
    const text_base *bb = &st->base[c];
    uint16_t *tx = x->tidx + (size_t)c * (TEXT_BLOCK / PIECE);
    if (!(x->tidx_ok >> c & 1)) { /* tokens are in place order */
        uint32_t t = 0;
        for (uint32_t i = 0; i < TEXT_BLOCK / PIECE; i++) {
            while (t < bb->ntok && bb->tok[t].pos < i * PIECE)
                t++;
            tx[i] = (uint16_t)t;
        }
        x->tidx_ok |= 1u << c;
    }
    while ((k0 = bits_next(made, k0, k1, 0)) < k1) {
        uint32_t e = bits_next(made, k0, k1, 1);
        uint32_t lo = k0 * PIECE, from = lo > TM_WORD_MAX ? lo - TM_WORD_MAX : 0;
        round_piece(st, x->rt, R, bb, out, lo, e * PIECE, tx[from / PIECE]);
        bits_set(made, k0, e);
        k0 = e;
    }
    return TD_OK;
}

/* The walk of a group's plan: the draws (s), the place (p), the line ends
 * not passed yet (bits m of nl[w]) and the copies made. */
typedef struct run_walk {
    uint64_t s, m;
    uint32_t p, w;
    unsigned made;
} run_walk;

static void run_walk_init(const text_state *st, uint64_t gi, const uint64_t *nl, run_walk *k)
{
    *k = (run_walk){.s = td__wymix(st->k[2] ^ gi, st->k[3] ^ RUN_SALT), .m = nl[0]};
}

/* The copies of walk k's group from where it is to stop (positions relative
 * to the group; nl, the line ends of its text without runs, nl_map):
 * appended to c[*nc], in order; the walk then stands at or past stop, with
 * every copy that starts before it made.  A copy may run on over the
 * group's later blocks, as the corpus's long runs (a page repeated whole)
 * do. */
static inline __attribute__((always_inline)) void run_walk_to(const text_state *st,
                                                              const uint64_t *nl, run_walk *k,
                                                              uint32_t stop, run_copy *c,
                                                              size_t *nc)
{
    const tm_runs *u = &st->m->runs;
    const unsigned eol = st->m->p.eol ? 2u : 1u;
    uint64_t s = k->s, m = k->m;
    uint32_t p = k->p, w = k->w;
    unsigned made = k->made;
    /* the line ends are walked as the bits of nl (w, m: those not passed
     * yet), a line per draw; a copy moves the walk to its end */
    while (p < stop && made < RUN_MAX) {
        while (!m && w < GROUP_BYTES / 64 - 1)
            m = nl[++w];
        uint32_t e = m ? w * 64 + (uint32_t)__builtin_ctzll(m) + 1 : GROUP_BYTES;
        uint32_t next = (p / TEXT_BLOCK + 1) * TEXT_BLOCK;
        if (e <= next) {
            next = e;
            m &= m - 1;
        }
        uint64_t r = td__wyrand(&s);
        if ((r >> 40) >= (uint64_t)u->rate * (next - p)) {
            p = next;
            continue;
        }
        uint64_t r1 = td__wyrand(&s), r2 = td__wyrand(&s);
        unsigned pair = run_pair(u, r1);
        uint32_t len = run_value(pair / TM_RUN_NB, r1), d = run_value(pair % TM_RUN_NB, r2);
        /* whole lines of at least len bytes (or to the group's end), back
         * to the last line end after a '\n' */
        uint32_t q = len < GROUP_BYTES - p ? line_end(nl, p + len - 1) : GROUP_BYTES;
        q = nl_prev_end(nl, p, q - 1);
        if (q - p <= eol) {
            p = next;
            continue;
        }
        c[(*nc)++] = (run_copy){.dst = p, .n = q - p, .d = d};
        made++;
        p = q;
        if (p < GROUP_BYTES) {
            w = p / 64;
            m = nl[w] & (~0ull << (p % 64));
        }
    }
    if (made == RUN_MAX)
        p = GROUP_BYTES; /* no more copies */
    *k = (run_walk){.s = s, .m = m, .p = p, .w = w, .made = made};
}

/* fill_runs's buffers: t, the text without runs of a pass's groups and the
 * TM_RUN_BACK blocks before them (t block i is block pb + i), made where
 * tm[i] says, a bit per piece; s, one group's view;
 * c, the copies of t's groups (run_walk), each with the block it starts in,
 * planned from the base blocks' line ends (bx), or from t's in round 0.
 * After a pass, t and c start with its last blocks and their copies, which
 * the next pass of a stream read in order starts after (next_at: the
 * offset they end at; 0: none), and s holds its last group, made (made_g:
 * its first block + 1; 0: none), which reads of one block at a time (the
 * dedup layer's) then take their blocks from.  kit stays for the next
 * call. */
typedef struct run_scratch {
    uint8_t *t, *s;
    uint64_t (*tm)[PIECE_W];
    run_copy *c;
    uint64_t *nl; /* a group's line ends in round 0 */
    uint64_t pb;
    uint64_t next_at;
    uint64_t made_g;
    uint64_t kept_from; /* the first block kept at the front of t */
    size_t kept_n;      /* copies of the kept blocks, at the front of c */
    piece_kit kit;
} run_scratch;

static void run_scratch_free(run_scratch *r)
{
    if (r) {
        free(r->t);
        free(r->s);
        free(r->tm);
        free(r->c);
        free(r->nl);
        piece_kit_free(&r->kit);
        free(r);
    }
}

static run_scratch *run_scratch_new(const text_state *st)
{
    run_scratch *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    int ok = piece_kit_init(st, &r->kit) &&
             (r->t = malloc((size_t)RUN_T_BLOCKS * TEXT_BLOCK + TEXT_SLACK)) &&
             (r->s = malloc((size_t)(RUN_VIEW_MAX + 1) * TEXT_BLOCK)) &&
             (r->tm = malloc(sizeof *r->tm * RUN_T_BLOCKS)) &&
             (r->c = malloc(sizeof *r->c * RUN_MAX * (RUN_T_BLOCKS / RUN_GROUP + 1))) &&
             (r->nl = malloc(GROUP_BYTES / 8));
    if (!ok) {
        run_scratch_free(r);
        r = NULL;
    }
    return r;
}

/* t's blocks [i, i + n) about to be made: round 0's made whole from the base
 * blocks, taken when made and made whole and kept when not (as
 * text_fill_block's are for a model without runs: the dedup layer's
 * duplicates come back to the stream's first blocks, and each needs its
 * group's view); the later rounds' made in pieces as read (run_text). */
static int run_pre(const text_state *st, run_scratch *r, uint64_t i, uint64_t n, int use_cache)
{
    for (uint64_t e = i + n; i < e;) {
        uint64_t blk = r->pb + i;
        uint64_t m = 1;
        int rc = TD_OK;
        if (blk >= ROUND_BLOCKS) {
            memset(r->tm[i], 0, sizeof r->tm[i]);
        } else if (atomic_load_explicit(&st->base[blk].once.ready, memory_order_acquire)) {
            memcpy(r->t + i * TEXT_BLOCK, st->base[blk].buf, TEXT_BLOCK);
        } else {
            while (i + m < e && blk + m < ROUND_BLOCKS &&
                   !atomic_load_explicit(&st->base[blk + m].once.ready, memory_order_acquire))
                m++;
            rc = gen_range(st, blk * TEXT_BLOCK, r->t + i * TEXT_BLOCK, m * TEXT_BLOCK, use_cache, 1);
        }
        if (rc != TD_OK)
            return rc;
        if (blk < ROUND_BLOCKS)
            memset(r->tm[i], 0xFF, sizeof r->tm[i] * m);
        i += m;
    }
    return TD_OK;
}

/* t block i's bytes [a, b) made. */
static int run_text(const text_state *st, run_scratch *r, uint64_t i, uint32_t a, uint32_t b)
{
    return piece_text(st, &r->kit, r->pb + i, r->tm[i], r->t + i * TEXT_BLOCK, a / PIECE,
                      (b - 1) / PIECE + 1);
}

/* Bytes [a, b) of s (t block v on) the text without runs. */
static int run_fill(const text_state *st, run_scratch *r, uint64_t v, uint32_t a, uint32_t b)
{
    while (a < b) { /* block by block */
        uint64_t i = v + a / TEXT_BLOCK;
        uint32_t o = a % TEXT_BLOCK, n = TD_MIN(b - a, TEXT_BLOCK - o);
        int rc = run_text(st, r, i, o, o + n);
        if (rc != TD_OK)
            return rc;
        memcpy(r->s + a, r->t + i * TEXT_BLOCK + o, n);
        a += n;
    }
    return TD_OK;
}

/* A group's view being made in s: it starts at t block v; its bytes before
 * the group (the first g) are final where sv says, a bit per piece, those
 * whose text without runs is made as they are passed (up to pdone), the
 * rest as they are read; the group's are final up to done. */
typedef struct run_cur {
    uint64_t v;
    uint32_t g, done, pdone;
    uint64_t sv[TM_RUN_BACK * PIECE_W];
} run_cur;

/* The pieces of s in [a, b) before the group that no copy has written and
 * whose text without runs is made already, final (a copy each: the rest
 * are made if they are read). */
static void run_pass(run_scratch *r, run_cur *x, uint32_t a, uint32_t b)
{
    for (uint32_t w = a / PIECE / 64; w * 64 * PIECE < b; w++) {
        uint64_t i = x->v + w / PIECE_W;
        uint64_t m = ~x->sv[w] & r->tm[i][w % PIECE_W];
        uint32_t k0 = w * 64;
        if (k0 < a / PIECE)
            m &= ~0ull << (a / PIECE - k0);
        if ((b - 1) / PIECE < k0 + 63)
            m &= ~0ull >> (63 - ((b - 1) / PIECE - k0));
        x->sv[w] |= m;
        while (m) { /* runs of set bits */
            unsigned lo = (unsigned)__builtin_ctzll(m);
            uint64_t rest = m >> lo;
            unsigned n = ~rest ? (unsigned)__builtin_ctzll(~rest) : 64 - lo;
            size_t at = (size_t)(k0 + lo) * PIECE;
            memcpy(r->s + at, r->t + x->v * TEXT_BLOCK + at, (size_t)n * PIECE);
            m &= n + lo >= 64 ? 0 : ~0ull << (lo + n);
        }
    }
}

/* Bytes [a, b) of s final (those in the group are, up to x->done): a piece
 * that no copy has written yet is the text without runs. */
static int run_need(const text_state *st, run_scratch *r, run_cur *x, uint32_t a, uint32_t b)
{
    uint32_t k1 = (TD_MIN(b, x->g) + PIECE - 1) / PIECE;
    for (uint32_t k = a / PIECE; (k = bits_next(x->sv, k, k1, 0)) < k1;) {
        uint32_t e = bits_next(x->sv, k, k1, 1);
        int rc = run_fill(st, r, x->v, k * PIECE, e * PIECE);
        if (rc != TD_OK)
            return rc;
        bits_set(x->sv, k, e);
        k = e;
    }
    return TD_OK;
}

/* Make copy c at p of s (made up to p, as x says): from the first line start
 * at or after p - d (a block start or a byte after '\n'), the bytes up to
 * the last code point before its last line end, then spaces to that; or,
 * when the source is nearer than that, its whole lines that fit before p.
 * Only the bytes read are made: the text without runs under a copy is
 * mostly never read. */
static int run_make(const text_state *st, run_scratch *r, run_cur *x, uint32_t p,
                    const run_copy *c, unsigned eol)
{
    uint8_t *s = r->s;
    int rc = TD_OK;
    if (p >= x->g) { /* the text without runs since the group's last copy */
        if ((rc = run_fill(st, r, x->v, x->done, p)) != TD_OK)
            return rc;
        x->done = p;
    } else if (p > x->pdone) {
        run_pass(r, x, x->pdone, p);
        x->pdone = p;
    }
    if (c->d > p)
        return TD_OK; /* before the stream, or too far back for this block */
    uint32_t src = p - c->d, k = c->n - eol, n;
    if (src % TEXT_BLOCK) { /* to a line start */
        if ((rc = run_need(st, r, x, src - 1, src)) != TD_OK)
            return rc;
        if (s[src - 1] != '\n') {
            uint32_t lim = TD_MIN(p, (src / TEXT_BLOCK + 1) * TEXT_BLOCK), y = src;
            for (src = lim; y < lim;) { /* a piece at a time */
                uint32_t e = TD_MIN(lim, (y / PIECE + 1) * PIECE);
                if ((rc = run_need(st, r, x, y, e)) != TD_OK)
                    return rc;
                const uint8_t *q = memchr(s + y, '\n', e - y);
                if (q) {
                    src = TD_MIN((uint32_t)(q - s) + 1, p);
                    break;
                }
                y = e;
            }
        }
    }
    if (src >= p)
        return TD_OK;
    if (k <= p - src) { /* back to a code point's start */
        if ((rc = run_need(st, r, x, src, TD_MIN(src + k + 1, p))) != TD_OK)
            return rc;
        if (src + k == p) { /* s[p] would be the text without runs */
            uint64_t i = x->v + p / TEXT_BLOCK;
            if ((rc = run_text(st, r, i, p % TEXT_BLOCK, p % TEXT_BLOCK + 1)) != TD_OK)
                return rc;
            if ((r->t[i * TEXT_BLOCK + p % TEXT_BLOCK] & 0xC0) == 0x80)
                while (--k && (s[src + k] & 0xC0) == 0x80)
                    ;
        } else {
            while (k && (s[src + k] & 0xC0) == 0x80)
                k--;
        }
        n = c->n;
    } else { /* the whole lines that fit before p */
        k = p - src;
        if ((rc = run_need(st, r, x, src, p)) != TD_OK)
            return rc;
        while (k && s[src + k - 1] != '\n')
            k--;
        n = k;
    }
    if (!n)
        return TD_OK;
    if (p < x->g) { /* the pieces it shares with bytes it leaves, made first */
        if (p % PIECE && (rc = run_need(st, r, x, p, p + 1)) != TD_OK)
            return rc;
        if ((p + n) % PIECE && (rc = run_need(st, r, x, p + n - 1, p + n)) != TD_OK)
            return rc;
        bits_set(x->sv, p / PIECE, (p + n - 1) / PIECE + 1);
        x->pdone = p + n;
    } else {
        x->done = p + n;
    }
    memcpy(s + p, s + src, k);
    if (n > k) {
        memset(s + p + k, ' ', n - eol - k);
        if (eol == 2)
            s[p + n - 2] = '\r';
        s[p + n - 1] = '\n';
    }
    return TD_OK;
}

/* ---- a block's prefix of a model with runs, made lazily ------------------ */

/* A duplicate of the dedup layer is the first few KiB of a random earlier
 * block (docs/format.md, "dedup").  fill_runs makes it from its group's
 * whole view, eight blocks of text without runs with their copies planned
 * and made, about 0.45 ms for 4 KiB, so `--dedup 2` ran at 18 MB/s.
 * fill_lazy makes only what the prefix depends on: the copies that land in
 * it, the bytes those read (recursively), and the text without runs under
 * the rest, in pieces.  The bytes are fill_runs's: a byte of the view is
 * made by the one copy that covers it or is the text without runs, and a
 * copy reads only bytes before it, which are final by then (run_make).
 * Plans are walked from the base blocks' line ends only as far as bytes
 * are wanted, and where a copy starts is found from them and the copies'
 * sources (lz_nl_next), without making those bytes. */
#define LZ_BLOCKS (RUN_VIEW_MAX + 1)
#define LZ_BYTES ((size_t)LZ_BLOCKS * TEXT_BLOCK)
#define LZ_SLOT ((size_t)TEXT_BLOCK + TEXT_SLACK)
#define LZ_SCAN 64u   /* bytes made at a time where a copy looks back for a line end */
#define LZ_IDX 512u   /* copies are found from the first of each such piece */
#define LZ_NIDX (GROUP_BYTES / LZ_IDX)
#define LZ_STEP 4096u /* a plan is walked on this far past the byte wanted */
#define LZ_DEPTH 64   /* copies of copies nested deeper: fill_runs makes it */
#define LZ_DEEP 1     /* fill_lazy's "not made: use fill_runs" (codes are <= 0) */
_Static_assert(TM_RUN_BACK == RUN_GROUP, "a view is the group and the one before it");
_Static_assert(ROUND_BLOCKS % RUN_GROUP == 0, "a group's base blocks follow one another");

enum { LZ_OPEN, LZ_NONE, LZ_FULL, LZ_PART };

typedef struct lz_copy {
    uint32_t p, n, d;  /* a copy (run_copy) at p of the view */
    uint32_t src, k;   /* once resolved: k bytes from src */
    unsigned how;      /* LZ_OPEN (not resolved), LZ_NONE (not made), LZ_FULL, LZ_PART */
} lz_copy;

/* One view (up to two groups) being made: s, its bytes, final where fin
 * says; each block's text without runs (lz_t: a base block, or a round's
 * made in pb where its bit of made is set, a bit per piece); per group g,
 * its plan walked as far as wanted (wk[g]; walked[g] once started), its
 * copies so far in c[g], and idx[g][x], the first copy that starts at or
 * after x * LZ_IDX (set up to piece nidx[g] - 1).  kit stays for the
 * next call. */
typedef struct lz_scratch {
    uint8_t *s, *pb;
    uint64_t *fin;
    uint32_t fin_lo, fin_hi; /* words of fin that may be set */
    uint64_t made[LZ_BLOCKS][PIECE_W];
    piece_kit kit;
    run_walk wk[2];
    int walked[2];
    lz_copy *c[2];
    run_copy *tmp;
    size_t nc[2];
    uint32_t *idx[2], nidx[2];
    uint64_t vb; /* the view's first block */
    int depth, rc; /* rc: LZ_DEEP or an error stops the call */
} lz_scratch;

static void lz_scratch_free(lz_scratch *z)
{
    if (z) {
        free(z->s);
        free(z->pb);
        free(z->fin);
        piece_kit_free(&z->kit);
        for (int g = 0; g < 2; g++) {
            free(z->c[g]);
            free(z->idx[g]);
        }
        free(z->tmp);
        free(z);
    }
}

/* Mostly untouched: malloc, not huge pages (a call touches a few pages). */
static lz_scratch *lz_scratch_new(const text_state *st)
{
    lz_scratch *z = calloc(1, sizeof *z);
    if (!z)
        return NULL;
    if (!piece_kit_init(st, &z->kit) || !(z->s = malloc(LZ_BYTES)) ||
        !(z->pb = malloc(LZ_BLOCKS * LZ_SLOT)) || !(z->fin = calloc(LZ_BYTES / 64, sizeof *z->fin)) ||
        !(z->c[0] = malloc(sizeof *z->c[0] * RUN_MAX)) ||
        !(z->c[1] = malloc(sizeof *z->c[1] * RUN_MAX)) ||
        !(z->idx[0] = malloc(sizeof *z->idx[0] * LZ_NIDX)) ||
        !(z->idx[1] = malloc(sizeof *z->idx[1] * LZ_NIDX)) ||
        !(z->tmp = malloc(sizeof *z->tmp * RUN_MAX))) {
        lz_scratch_free(z);
        return NULL;
    }
    return z;
}

static void lz_need(const text_state *st, lz_scratch *z, uint32_t lo, uint32_t hi);
static uint32_t lz_nl_next(const text_state *st, lz_scratch *z, uint32_t a, uint32_t b);

/* Stop the call with rc (LZ_DEEP or an error). */
static void lz_stop(lz_scratch *z, int rc)
{
    if (z->rc == TD_OK)
        z->rc = rc;
}

static void lz_done(lz_scratch *z, uint32_t a, uint32_t b)
{
    if (a >= b)
        return;
    z->fin_lo = TD_MIN(z->fin_lo, a / 64);
    z->fin_hi = TD_MAX(z->fin_hi, (b - 1) / 64 + 1);
    bits_set(z->fin, a, b);
}

/* The first byte of [pos, hi) that is not final, or hi. */
static uint32_t lz_open(const lz_scratch *z, uint32_t pos, uint32_t hi)
{
    return bits_next(z->fin, pos, hi, 0);
}

/* View block i's text without runs: round 0's is its base block. */
static const uint8_t *lz_t(const text_state *st, const lz_scratch *z, unsigned i)
{
    uint64_t blk = z->vb + i;
    return blk < ROUND_BLOCKS ? st->base[blk].buf : z->pb + i * LZ_SLOT;
}

/* View block i's text without runs made over [a, b). */
static void lz_text_make(const text_state *st, lz_scratch *z, unsigned i, uint32_t a, uint32_t b)
{
    uint64_t blk = z->vb + i;
    int rc = blk < ROUND_BLOCKS ? base_need(st, (unsigned)blk)
                                : piece_text(st, &z->kit, blk, z->made[i], z->pb + i * LZ_SLOT,
                                             a / PIECE, (b - 1) / PIECE + 1);
    if (rc != TD_OK)
        lz_stop(z, rc);
}

/* Bytes [a, b) of the view final as the text without runs. */
static void lz_text(const text_state *st, lz_scratch *z, uint32_t a, uint32_t b)
{
    while (a < b && z->rc == TD_OK) {
        unsigned i = a / TEXT_BLOCK;
        uint32_t o = a % TEXT_BLOCK, e = TD_MIN(b - a, TEXT_BLOCK - o);
        lz_text_make(st, z, i, o, o + e);
        if (z->rc != TD_OK)
            break;
        memcpy(z->s + a, lz_t(st, z, i) + o, e);
        lz_done(z, a, a + e);
        a += e;
    }
}

/* Group g of the view's plan walked past pos (from the line ends of its
 * base blocks, which follow one another in bx.nl: a group is aligned), and
 * the index of its copies brought up to date. */
static void lz_walk(const text_state *st, lz_scratch *z, unsigned g, uint32_t pos)
{
    uint64_t gb = z->vb + (uint64_t)g * RUN_GROUP;
    unsigned c = (unsigned)(gb & (ROUND_BLOCKS - 1));
    const uint64_t *nl = z->kit.nl + (size_t)c * BLOCK_NLW;
    if (!z->walked[g]) {
        int rc = TD_OK;
        if (!base_nl(st, &z->kit, c, RUN_GROUP, &rc)) {
            lz_stop(z, rc);
            return;
        }
        run_walk_init(st, gb / RUN_GROUP, nl, &z->wk[g]);
        z->walked[g] = 1;
        z->nc[g] = 0;
        z->nidx[g] = 0;
    }
    if (z->wk[g].p > pos)
        return;
    size_t n = 0, k0 = z->nc[g];
    run_walk_to(st, nl, &z->wk[g], TD_MIN(GROUP_BYTES, pos + LZ_STEP), z->tmp, &n);
    for (size_t k = 0; k < n; k++) {
        lz_copy *C = &z->c[g][k0 + k];
        *C = (lz_copy){.p = g * GROUP_BYTES + z->tmp[k].dst, .n = z->tmp[k].n, .d = z->tmp[k].d,
                       .how = LZ_OPEN};
        for (; z->nidx[g] <= z->tmp[k].dst / LZ_IDX; z->nidx[g]++)
            z->idx[g][z->nidx[g]] = (uint32_t)(k0 + k);
    }
    z->nc[g] = k0 + n;
}

/* The byte of the text without runs at p. */
static uint8_t lz_text_byte(const text_state *st, lz_scratch *z, uint32_t p)
{
    unsigned i = p / TEXT_BLOCK;
    lz_text_make(st, z, i, p % TEXT_BLOCK, p % TEXT_BLOCK + 1);
    return z->rc == TD_OK ? lz_t(st, z, i)[p % TEXT_BLOCK] : 0;
}

/* Where copy C reads and how much (run_make's choices, on the bytes before
 * it, made as they are looked at). */
static void lz_resolve(const text_state *st, lz_scratch *z, lz_copy *C)
{
    const uint32_t p = C->p, eol = st->m->p.eol ? 2u : 1u;
    const uint8_t *s = z->s;
    C->how = LZ_NONE;
    if (C->d > p)
        return;
    uint32_t from = p - C->d, src = from; /* line_from(s, from, p), from the line ends */
    if (from % TEXT_BLOCK != 0 && lz_nl_next(st, z, from - 1, from) != from - 1) {
        uint32_t lim = TD_MIN(p, (from / TEXT_BLOCK + 1) * TEXT_BLOCK);
        uint32_t x = lz_nl_next(st, z, from, lim);
        src = x < lim ? TD_MIN(x + 1, p) : lim;
    }
    if (z->rc != TD_OK || src >= p)
        return;
    uint32_t k = C->n - eol;
    if (k <= p - src) { /* back to a code point's start; s[p] is still the text's */
        while (k) {
            uint32_t at = src + k;
            uint8_t v;
            if (at == p) {
                v = lz_text_byte(st, z, p);
            } else {
                lz_need(st, z, at, at + 1);
                v = s[at];
            }
            if (z->rc != TD_OK)
                return;
            if ((v & 0xC0) != 0x80)
                break;
            k--;
        }
        C->how = LZ_FULL;
    } else { /* the whole lines that fit before p */
        k = p - src;
        while (k) {
            uint32_t y = src + k, x = y - TD_MIN(k, LZ_SCAN);
            lz_need(st, z, x, y);
            if (z->rc != TD_OK)
                return;
            while (y > x && s[y - 1] != '\n')
                y--;
            k = y - src;
            if (y > x)
                break;
        }
        C->how = LZ_PART;
    }
    C->src = src;
    C->k = k;
}

/* Bytes [a, b) of copy C's place, final. */
static void lz_copy_fill(const text_state *st, lz_scratch *z, const lz_copy *C, uint32_t a,
                         uint32_t b)
{
    const uint32_t p = C->p, eol = st->m->p.eol ? 2u : 1u;
    if (C->how == LZ_NONE) {
        lz_text(st, z, a, b);
        return;
    }
    uint32_t ce = p + C->k;
    if (a < ce) { /* the copied bytes, from before p */
        uint32_t e = TD_MIN(b, ce);
        lz_need(st, z, C->src + (a - p), C->src + (e - p));
        if (z->rc != TD_OK)
            return;
        memcpy(z->s + a, z->s + C->src + (a - p), e - a);
        lz_done(z, a, e);
        a = e;
    }
    if (a >= b)
        return;
    if (C->how == LZ_PART) {
        lz_text(st, z, a, b);
        return;
    }
    uint32_t sp = p + C->n - eol; /* spaces to the line end, then it */
    for (uint32_t x = a; x < b; x++)
        z->s[x] = x < sp ? ' ' : eol == 2 && x == sp ? '\r' : '\n';
    lz_done(z, a, b);
}

/* The copy that covers byte pos of the view, resolved; or NULL, with the
 * text without runs there up to *e (the next copy, or as far as the plan
 * is walked).  A copy's end in *e. */
static lz_copy *lz_at(const text_state *st, lz_scratch *z, uint32_t pos, uint32_t *e)
{
    unsigned g = pos / GROUP_BYTES;
    uint32_t r = pos % GROUP_BYTES;
    lz_walk(st, z, g, r);
    if (z->rc != TD_OK)
        return NULL;
    /* the first copy after pos: from the index of pos's piece on */
    lz_copy *c = z->c[g];
    size_t n = z->nc[g], a = r / LZ_IDX < z->nidx[g] ? z->idx[g][r / LZ_IDX] : n;
    while (a < n && c[a].p <= pos)
        a++;
    if (a && pos < c[a - 1].p + c[a - 1].n) {
        lz_copy *C = &c[a - 1]; /* (c does not move as the plan grows) */
        if (C->how == LZ_OPEN)
            lz_resolve(st, z, C);
        *e = C->p + C->n;
        return C;
    }
    *e = a < n ? c[a].p : g * GROUP_BYTES + z->wk[g].p;
    return NULL;
}

/* The first '\n' of the text without runs in [a, e) of the view, or e:
 * its base blocks' line ends (lz_walk has made them for the groups
 * looked at). */
static uint32_t lz_text_nl(const lz_scratch *z, uint32_t a, uint32_t e)
{
    while (a < e) {
        uint32_t i = a / TEXT_BLOCK, o = a % TEXT_BLOCK;
        uint32_t be = TD_MIN(e - i * TEXT_BLOCK, TEXT_BLOCK);
        const uint64_t *nl = z->kit.nl + (size_t)((z->vb + i) & (ROUND_BLOCKS - 1)) * BLOCK_NLW;
        for (uint32_t w = o / 64; w * 64 < be; w++) {
            uint64_t m = nl[w] & (w == o / 64 ? ~0ull << (o % 64) : ~0ull);
            if (m) {
                uint32_t x = w * 64 + (uint32_t)__builtin_ctzll(m);
                return x < be ? i * TEXT_BLOCK + x : e;
            }
        }
        a = i * TEXT_BLOCK + be;
    }
    return e;
}

/* The first '\n' of the view's final bytes in [a, b), or b: found through
 * the copies and the line ends of the text without runs, without making
 * the bytes (the copies' sources are looked at the same way). */
static uint32_t lz_nl_next(const text_state *st, lz_scratch *z, uint32_t a, uint32_t b)
{
    uint32_t r = b;
    if (++z->depth > LZ_DEPTH)
        lz_stop(z, LZ_DEEP);
    while (a < b && z->rc == TD_OK) {
        uint32_t f = lz_open(z, a, b); /* bytes made already: read */
        if (f > a) {
            const uint8_t *q = memchr(z->s + a, '\n', f - a);
            if (q) {
                r = (uint32_t)(q - z->s);
                break;
            }
            a = f;
            continue;
        }
        uint32_t e, x;
        const lz_copy *C = lz_at(st, z, a, &e);
        if (z->rc != TD_OK)
            break;
        e = TD_MIN(e, b);
        if (!C || C->how == LZ_NONE) {
            x = lz_text_nl(z, a, e);
        } else {
            uint32_t ce = TD_MIN(e, C->p + C->k);
            x = e;
            if (a < ce) { /* the copied bytes: their source's */
                uint32_t s0 = C->src + (a - C->p), s1 = C->src + (ce - C->p);
                uint32_t y = lz_nl_next(st, z, s0, s1);
                if (y < s1)
                    x = C->p + (y - C->src);
                a = ce;
            }
            if (x == e && a < e) { /* the rest: spaces and the line end, or the text's */
                uint32_t le = C->p + C->n - 1;
                x = C->how == LZ_PART ? lz_text_nl(z, a, e) : le >= a && le < e ? le : e;
            }
        }
        if (x < e) {
            r = x;
            break;
        }
        a = e;
    }
    z->depth--;
    return r;
}

/* Bytes [lo, hi) of the view final. */
static void lz_need(const text_state *st, lz_scratch *z, uint32_t lo, uint32_t hi)
{
    if (++z->depth > LZ_DEPTH)
        lz_stop(z, LZ_DEEP);
    for (uint32_t pos = lz_open(z, lo, hi); z->rc == TD_OK && pos < hi; pos = lz_open(z, pos, hi)) {
        uint32_t e;
        const lz_copy *C = lz_at(st, z, pos, &e);
        if (z->rc != TD_OK)
            break;
        e = TD_MIN(hi, e);
        if (C)
            lz_copy_fill(st, z, C, pos, e);
        else
            lz_text(st, z, pos, e);
        pos = e;
    }
    z->depth--;
}

/* The first end bytes of block b0 into out, as fill_runs makes them;
 * LZ_DEEP when copies nest too deep for it (fill_runs then makes them). */
static int lz_block(const text_state *st, lz_scratch *z, uint64_t b0, uint8_t *out, uint32_t end)
{
    if (piece_kit_check(&z->kit)) /* a fork's child: nothing kept is sure */
        memset(z->fin, 0, LZ_BYTES / 8);
    z->vb = run_view(b0);
    memset(z->made, 0, sizeof z->made);
    uint32_t x = (uint32_t)((b0 - z->vb) * TEXT_BLOCK);
    z->walked[0] = z->walked[1] = 0;
    z->depth = 0;
    z->rc = TD_OK;
    z->fin_lo = UINT32_MAX;
    z->fin_hi = 0;
    lz_need(st, z, x, x + end);
    if (z->rc == TD_OK)
        memcpy(out, z->s + x, end);
    if (z->fin_hi > z->fin_lo)
        memset(z->fin + z->fin_lo, 0, (z->fin_hi - z->fin_lo) * sizeof *z->fin);
    return z->rc;
}

/* fill_block's prefix of block b0 of a model with runs (lz_block), with one
 * of the state's lazy scratches that no other thread holds, else one's own. */
static int fill_lazy(const text_state *st, uint64_t b0, uint8_t *out, uint32_t end)
{
    text_state *w = (text_state *)st; /* only its buffers change */
    unsigned slot = 0;
    while (slot < TEXT_SLOTS && !td__once_take(&w->lz_lock[slot], UINT32_MAX, 0))
        slot++;
    lz_scratch *z = slot < TEXT_SLOTS ? w->lz_sc[slot] : NULL;
    if (!z && !(z = lz_scratch_new(st))) {
        if (slot < TEXT_SLOTS)
            td__once_done(&w->lz_lock[slot], 0);
        return TD_ENOMEM;
    }
    int rc = lz_block(st, z, b0, out, end);
    if (slot < TEXT_SLOTS) {
        w->lz_sc[slot] = z;
        td__once_done(&w->lz_lock[slot], 0);
    } else {
        lz_scratch_free(z);
    }
    return rc;
}

/* Bytes [offset, offset + len) of a model with runs: up to RUN_WIN blocks
 * at a time, their groups' copies placed from the first block's view to
 * the last group's end (the part the pass before placed kept, when it
 * ended there); then each group's blocks with the copies of their view
 * made, in order, over its text without runs, which is made only where it
 * is read.  Each of the state's buffers (and what the last pass left in
 * it) serves one thread at a time; a thread that finds none makes its own. */
static int fill_runs(const text_state *st, uint64_t offset, uint8_t *buf, size_t len,
                     int use_cache, int lazy)
{
    const unsigned eol = st->m->p.eol ? 2u : 1u;
    text_state *w = (text_state *)st; /* only its buffers change */
    unsigned slot = 0;
    while (slot < TEXT_SLOTS && !td__once_take(&w->run_lock[slot], UINT32_MAX, 0))
        slot++;
    int mine = slot < TEXT_SLOTS;
    td_once *lk = mine ? &w->run_lock[slot] : NULL;
    run_scratch *r = mine ? w->run_sc[slot] : NULL;
    /* a prefix of one block (lazy), unless it is in the group made last */
    if (lazy && !(r && r->made_g && offset / GROUP_BYTES * RUN_GROUP + 1 == r->made_g)) {
        int rc = fill_lazy(st, offset / TEXT_BLOCK, buf, (uint32_t)len);
        if (rc != LZ_DEEP) {
            if (mine)
                td__once_done(lk, 0);
            return rc;
        }
    }
    if (!r && !(r = run_scratch_new(st))) {
        if (mine)
            td__once_done(lk, 0);
        return TD_ENOMEM;
    }
    if (mine)
        w->run_sc[slot] = r;
    (void)piece_kit_check(&r->kit); /* a fork's child: nothing kept is sure */
    size_t first[RUN_T_BLOCKS + 1];
    run_cur x;
    int rc = TD_OK;
    while (rc == TD_OK && len) {
        uint64_t b0 = offset / TEXT_BLOCK;
        if (r->made_g && b0 / RUN_GROUP * RUN_GROUP + 1 == r->made_g) {
            uint64_t ge = (r->made_g - 1 + RUN_GROUP) * TEXT_BLOCK;
            size_t n = (size_t)TD_MIN((uint64_t)len, ge - offset);
            memcpy(buf, r->s + (size_t)(offset - run_view(r->made_g - 1) * TEXT_BLOCK), n);
            buf += n;
            offset += n;
            len -= n;
            continue;
        }
        /* the blocks wanted, to a group's end after the first pass: the
         * next pass in order then starts where this one's groups end */
        uint64_t bw = TD_MIN((offset + len + TEXT_BLOCK - 1) / TEXT_BLOCK,
                             (b0 + RUN_WIN) / RUN_GROUP * RUN_GROUP);
        uint64_t b1 = (bw + RUN_GROUP - 1) / RUN_GROUP * RUN_GROUP; /* whole groups */
        uint64_t pb = run_view(b0);
        uint64_t to = b1 * TEXT_BLOCK;
        size_t nc = 0;
        uint64_t b = pb, kept_at = r->next_at, kept_from = r->kept_from;
        r->next_at = r->made_g = 0; /* t and s change: a fork's child in this pass starts afresh */
        if (kept_at && kept_at == b0 * TEXT_BLOCK && kept_from <= pb) {
            /* the last pass's last blocks from pb on, and their copies */
            size_t drop = (size_t)(pb - kept_from), k0 = 0;
            while (k0 < r->kept_n && r->c[k0].blk < drop)
                k0++;
            memmove(r->t, r->t + drop * TEXT_BLOCK, (size_t)(b0 - pb) * TEXT_BLOCK);
            memmove(r->tm, r->tm + drop, sizeof *r->tm * (size_t)(b0 - pb));
            memmove(r->c, r->c + k0, sizeof *r->c * (r->kept_n - k0));
            for (size_t i = 0; i < r->kept_n - k0; i++)
                r->c[i].blk -= (uint32_t)drop;
            for (; b < b0; b++) {
                first[b - pb] = nc;
                while (nc < r->kept_n - k0 && r->c[nc].blk == b - pb)
                    nc++;
            }
        }
        r->pb = pb;
        rc = run_pre(st, r, b - pb, b1 - b, use_cache);
        /* b is at a group's start (pb and b0 of a kept pass are) */
        for (; rc == TD_OK && b < b1; b += RUN_GROUP) {
            size_t k = nc;
            run_walk wk;
            const uint64_t *nl = r->nl;
            if (b < ROUND_BLOCKS) /* t is made: its base blocks may not be kept (a short stream) */
                nl_map_n(r->t + (b - pb) * TEXT_BLOCK, r->nl, GROUP_BYTES / 64);
            else if (!(nl = base_nl(st, &r->kit, (unsigned)(b & (ROUND_BLOCKS - 1)), RUN_GROUP, &rc)))
                break;
            run_walk_init(st, b / RUN_GROUP, nl, &wk);
            run_walk_to(st, nl, &wk, GROUP_BYTES, r->c, &nc);
            for (uint64_t j = b; j < b + RUN_GROUP; j++) {
                first[j - pb] = k;
                while (k < nc && r->c[k].dst < (j + 1 - b) * TEXT_BLOCK) {
                    r->c[k].blk = (uint32_t)(j - pb);
                    r->c[k].dst -= (uint32_t)((j - b) * TEXT_BLOCK);
                    k++;
                }
            }
        }
        if (rc != TD_OK)
            break;
        first[b1 - pb] = nc;
        /* a group's blocks at once, from its view: the blocks from
         * TM_RUN_BACK before it to its end */
        for (b = b0; rc == TD_OK && b < bw;) {
            uint64_t sb = run_view(b), g0 = b / RUN_GROUP * RUN_GROUP, last = g0 + RUN_GROUP - 1;
            x.v = sb - pb;
            /* the bytes before the group as read, unless dense */
            x.g = x.done = first[g0 - pb] - first[sb - pb] > RUN_DENSE
                               ? 0
                               : (uint32_t)((g0 - sb) * TEXT_BLOCK);
            x.pdone = 0;
            memset(x.sv, 0, sizeof x.sv);
            for (uint64_t k = sb; rc == TD_OK && k <= last; k++) {
                uint32_t base = (uint32_t)((k - sb) * TEXT_BLOCK);
                for (size_t i = first[k - pb]; rc == TD_OK && i < first[k - pb + 1]; i++)
                    rc = run_make(st, r, &x, base + r->c[i].dst, &r->c[i], eol);
            }
            if (rc == TD_OK)
                rc = run_fill(st, r, sb - pb, x.done, (uint32_t)((last + 1 - sb) * TEXT_BLOCK));
            if (rc != TD_OK)
                break;
            r->made_g = g0 + 1;
            for (; b <= last && b < bw; b++) {
                uint64_t bs = b * TEXT_BLOCK;
                uint64_t lo = TD_MAX(bs, offset), hi = TD_MIN(bs + TEXT_BLOCK, offset + len);
                memcpy(buf + (lo - offset), r->s + (size_t)(b - sb) * TEXT_BLOCK + (lo - bs),
                       (size_t)(hi - lo));
            }
        }
        if (rc != TD_OK)
            break;
        /* keep the blocks the next pass's view may start at (t is still the
         * text without runs) and their copies at the front */
        uint64_t kb = TD_MAX(pb, b1 > RUN_VIEW_MAX ? b1 - RUN_VIEW_MAX : 0);
        size_t k0 = first[kb - pb];
        memmove(r->t, r->t + (size_t)((kb - pb) * TEXT_BLOCK), (size_t)(b1 - kb) * TEXT_BLOCK);
        memmove(r->tm, r->tm + (kb - pb), sizeof *r->tm * (size_t)(b1 - kb));
        memmove(r->c, r->c + k0, sizeof *r->c * (nc - k0));
        r->kept_n = nc - k0;
        for (size_t i = 0; i < r->kept_n; i++)
            r->c[i].blk -= (uint32_t)(kb - pb);
        r->kept_from = kb;
        r->next_at = to;
        size_t n = (size_t)TD_MIN((uint64_t)len, bw * TEXT_BLOCK - offset);
        buf += n;
        offset += n;
        len -= n;
    }
    if (mine)
        td__once_done(lk, 0);
    else
        run_scratch_free(r);
    return rc;
}

static int fill_range(const text_state *st, uint64_t offset, uint8_t *buf, size_t len,
                      int use_cache)
{
    if (st->m->runs.rate)
        return fill_runs(st, offset, buf, len, use_cache, 0);
    return fill_pre(st, offset, buf, len, use_cache);
}

/* The spelling cache costs a few ms to build (about 1 MiB of text), once per
 * model: worth it for large fills only (same bytes either way). */
static int text_fill(const void *state, uint64_t offset, uint8_t *buf, size_t len)
{
    return fill_range(state, offset, buf, len, len >= TEXT_CACHE_MIN);
}

/* One block, for the dedup layer (td__kind_fill uses text_fill, which
 * interleaves blocks).  Past round 0 it stops soon after `end`: a duplicate
 * dedup block costs its prefix of the text block, not the whole of it.
 * Round 0's blocks are the base blocks, made whole, once: duplicates come
 * back to them often (they are the stream's first kind blocks), a prefix
 * made word by word costs as much as 60 KiB of later rounds, and any stream
 * past round 0 makes them anyway. */
static int text_fill_block(const void *state, uint64_t bi, uint8_t *out, uint32_t end)
{
    const text_state *st = state;
    if (st->m->runs.rate)
        return fill_runs(st, bi * TEXT_BLOCK, out, end, 0, end < TEXT_BLOCK);
    if (bi >= ROUND_BLOCKS)
        return round_range(st, bi * TEXT_BLOCK, out, end);
    int rc = base_need(st, (unsigned)bi);
    if (rc == TD_OK)
        memcpy(out, st->base[bi].buf, end);
    return rc;
}

static int text_prepare(const td_options *o, uint64_t end, void **state)
{
    uint8_t k[32];
    char domain[20 + 64 + 1];
    text_state *st;
    int rc = td__sodium_ready();
    if (rc != TD_OK)
        return rc;
    const td_model *m = o->model ? o->model : td_model_builtin();
    if (!m)
        return TD_ENOMEM;
    st = calloc(1, sizeof *st);
    if (!st)
        return TD_ENOMEM;
    /* the blocks of round 0 that rounds up to end are made from: none for
     * a stream that ends in round 0 */
    st->keep_n = end <= ROUND0_END ? 0
                                   : (unsigned)TD_MIN((end - ROUND0_END + TEXT_BLOCK - 1) / TEXT_BLOCK,
                                                      (uint64_t)ROUND_BLOCKS);
    atomic_init(&st->arena, NULL);
    atomic_init(&st->arena_used, 0);
    for (unsigned c = 0; c < ROUND_BLOCKS; c++)
        td__once_init(&st->base[c].once);
    for (unsigned i = 0; i < TEXT_SLOTS; i++) {
        td__once_init(&st->run_lock[i]);
        td__once_init(&st->lz_lock[i]);
    }
    /* The model is part of the key: its hash goes into the domain. */
    memcpy(domain, "libtestdata/text/2/", 19);
    for (int i = 0; i < 32; i++)
        snprintf(domain + 19 + 2 * i, 3, "%02x", m->hash[i]);
    td__derive_key(domain, o->seed, k);
    for (int i = 0; i < 4; i++)
        st->k[i] = td__load64le(k + 8 * i);
    td__tm_ref(m);
    st->m = m;
    *state = st;
    return TD_OK;
}

static void text_release(void *state)
{
    text_state *st = state;
    if (!st)
        return;
    for (unsigned c = 0; c < ROUND_BLOCKS; c++)
        base_drop(st, &st->base[c]);
    free(atomic_load_explicit(&st->arena, memory_order_relaxed));
    for (unsigned i = 0; i < TEXT_SLOTS; i++) {
        run_scratch_free(st->run_sc[i]);
        lz_scratch_free(st->lz_sc[i]);
    }
    td__tm_unref(st->m);
    free(st);
}

const td_kind_vtbl td_kind_text = {
    .name = "text",
    .text = 1,
    .block = TEXT_BLOCK,
    .slack = TEXT_SLACK,
    .prepare = text_prepare,
    .release = text_release,
    .fill = text_fill,
    .fill_block = text_fill_block,
};

int td__text_once_new(const td_model *m, uint64_t seed, uint64_t end, void **state)
{
    td_options o;
    td_options_init(&o);
    o.model = m;
    o.seed = seed;
    int rc = text_prepare(&o, end, state);
    if (rc == TD_OK)
        ((text_state *)*state)->once = 1;
    return rc;
}

int td__text_once_fill(const void *state, uint64_t offset, uint8_t *buf, size_t len)
{
    return fill_range(state, offset, buf, len, 0);
}

void td__text_once_free(void *state)
{
    text_release(state);
}
