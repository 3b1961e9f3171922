/*
 * TD_LIKE: data like a sample, generated from a profile (like_profile.c).
 * The format is specified in docs/format.md, section "like".
 *
 * The base block is a sequence of independent documents of the profile's
 * length (the sample's, at most 1 MiB), laid end to end over 1 MiB (the
 * last one cut).  Every 1 MiB kind block of the stream is the base block
 * through a byte permutation of its own (format 6), so the shared block
 * loop of kinds.c cuts any range, no two blocks share their strings, and
 * the sample's own duplicates go through dedup.c.  Each document
 * is written as an LZ77 decoder would write it: a sequence drawn from the
 * profile's joint statistics of (offset class, literal-run length), a
 * match length drawn for that class, the literal run, then a copy.
 * Documents start with no history and no repeat offsets, like the sample did, so data generated
 * from a small sample keeps compressing like that small sample however
 * much is generated.  Literals are drawn by position bin: a category (the
 * byte at a repeat offset or a period of the sample, or a fresh byte from
 * the context model of the previous byte).  Sources in a distance bucket
 * are, half the time, where an earlier copy started (a phrase, repeated
 * whole as real data repeats its words and keys), and otherwise chosen
 * among a few candidates by how likely their first byte follows the
 * previous byte, which keeps byte pairs across match junctions.
 *
 * Every step is integer arithmetic on wyrand draws from a per-document
 * state, so any byte range is produced from the documents it touches alone.
 */
#include "gen.h"
#include "like.h"

#include <math.h>
#include <sodium.h>
#include <stdatomic.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define LIKE_X86 1
#endif

/* Classes of byte values that the block permutations keep (docs/format.md,
 * like, "Key and documents"): 0, tab, LF, CR and space are fixed; control bytes,
 * ASCII punctuation, digits, capitals, small letters, UTF-8 continuation
 * bytes and the three kinds of UTF-8 lead bytes are each shuffled among
 * themselves, so text stays text-shaped and UTF-8 keeps its sequence
 * lengths. */
#define NCLASS 14

static unsigned byte_class(unsigned b)
{
    static const uint8_t fixed[5] = {0, '\t', '\n', '\r', ' '};
    for (unsigned i = 0; i < 5; i++)
        if (b == fixed[i])
            return i;
    if (b < 0x20 || b == 0x7f)
        return 5;
    if (b >= '0' && b <= '9')
        return 7;
    if (b >= 'A' && b <= 'Z')
        return 8;
    if (b >= 'a' && b <= 'z')
        return 9;
    if (b < 0x80)
        return 6;
    return b < 0xc0 ? 10 : b < 0xe0 ? 11 : b < 0xf0 ? 12 : 13;
}

/* The base block (block 0's documents), each document made as far as it
 * has been read, so that reading a few bytes does not pay for a whole block
 * of documents, nor a read deep in the block for the documents before it:
 * bytes [0, doc[d].ready) of document d (at buf + d * doc length) are final
 * and never written again; one thread at a time makes more of it
 * (td_once). */
typedef struct like_base {
    uint8_t *buf; /* TD_LIKE_BLOCK bytes, after doc[] */
    td_once doc[];
} like_base;

/* Scratch of the documents of base_fill: the table of recent 4-byte
 * strings.  An entry is (tag << 21) | (position + 1); entries of another
 * document's tag count as empty, so the table is cleared once per 2047
 * documents rather than once per document. */
typedef struct doc_work {
    uint32_t *recent;
    uint32_t tag;
    uint32_t *starts; /* where the document's copies began, in order */
    uint32_t *below;  /* below[k]: the copies that began before k * 64 */
    uint8_t *aside;   /* a document begun before the range (base_fill) */
} doc_work;

/* What a profile's states share, made once per profile (like_tables). */
typedef struct like_tab {
    uint32_t doc;
    uint32_t nx, xdist[TD_LIKE_NX], per[2];
    uint32_t same[TD_LIKE_NOC];
    uint16_t seq_tab[TD_LIKE_SLOTS];          /* (offset class << 6) | literal-length code */
    uint32_t vbase[TD_LIKE_NVC], vspan[TD_LIKE_NVC]; /* td__like_vbase/vspan by code (one load, no branch) */
    uint32_t need[TD_LIKE_NOC];               /* least distance of a class (0 for repeats) */
    uint8_t *ml_tab[TD_LIKE_NOC];             /* match-length codes; NULL for unused classes */
    uint8_t cat_tab[TD_LIKE_NBINS][2][TD_LIKE_SLOTS];
    uint8_t lmap[TD_LIKE_NBINS][256];
    uint8_t uniform[TD_LIKE_NBINS];           /* bin with uniform fresh bytes and no categories */
    uint8_t *lit_tab[TD_LIKE_NBINS];          /* [group][slot] -> byte */
    const uint8_t *lit_ctx[TD_LIKE_NBINS][256]; /* previous byte -> its group's table (one load) */
    uint8_t jmap[256];
    uint32_t *jw;                         /* [group][byte] -> weight >= 1 */
    uint32_t ndocs;                       /* documents per block: ceil(block / doc) */
    uint32_t cbyte, cshare;               /* the model's one-byte 4 KiB blocks (cshare 0: none) */
    uint8_t *mlbuf;
    uint8_t cls[256];                     /* bytes of the permutations' classes, class by class */
    uint16_t cls_end[NCLASS];             /* end of each class in cls[] */
    td__like_translate_fn *translate;     /* the widest this CPU runs */
    td__like_ctxtab *ctx;                 /* a context model's (format 8), or NULL */
} like_tab;

/* A stream's state: its key, its base block and dedup, and the tables. */
typedef struct like_state {
    uint64_t k[4];
    like_base *base;           /* the documents' block that every block permutes */
    td_dedup *dd;              /* the sample's own duplicates, or NULL */
    struct like_tables *tabs;  /* the profile's tables (tab_of), with their lit_tab, jw, mlbuf */
} like_state;

/* A profile's sampling tables, which every state of the profile points
 * at.  They take up to about 1 MiB and 1-3 ms to make, far more than a
 * small read costs, so they are made once per profile (td_profile.tables)
 * and counted: the profile holds one reference and each state one, since a
 * stream outlives its options. */
typedef struct like_tables {
    _Atomic uint32_t refs;
    like_tab s;
    /* base_fill's scratch, lent to one fill at a time (busy): its pages
     * stay faulted in from one state to the next, where fresh ones (about
     * 10 µs each in a VM) were most of a small read of a long document */
    _Atomic int busy;
    doc_work work;
} like_tables;

static inline const like_tab *tab_of(const like_state *st)
{
    return &st->tabs->s;
}

static void work_free(doc_work *w)
{
    free(w->recent);
    free(w->starts);
    free(w->below);
    free(w->aside);
}

void td__like_tables_unref(void *tables)
{
    like_tables *t = tables;
    if (!t || atomic_fetch_sub_explicit(&t->refs, 1, memory_order_acq_rel) != 1)
        return;
    for (int i = 0; i < TD_LIKE_NBINS; i++)
        free(t->s.lit_tab[i]);
    free(t->s.mlbuf);
    free(t->s.jw);
    td__like_ctx_free(t->s.ctx);
    work_free(&t->work);
    free(t);
}

static void like_release(void *state)
{
    like_state *st = state;
    if (!st)
        return;
    td__dedup_free(st->dd);
    free(st->base);
    td__like_tables_unref(st->tabs);
    free(st);
}

static int ctx_tables(const td__like_ctxmodel *c, uint8_t *map, uint8_t **tab)
{
    uint16_t t[TD_LIKE_SLOTS];
    uint8_t *out = malloc((size_t)c->ngroups * TD_LIKE_SLOTS);
    if (!out)
        return TD_ENOMEM;
    memcpy(map, c->map, 256);
    for (unsigned g = 0; g < c->ngroups; g++) {
        int rc = td__like_slots(c->cnt[g], 256, t);
        if (rc != TD_OK) {
            free(out);
            return rc;
        }
        for (unsigned i = 0; i < TD_LIKE_SLOTS; i++)
            out[g * TD_LIKE_SLOTS + i] = (uint8_t)t[i];
    }
    *tab = out;
    return TD_OK;
}

static const td_kind_vtbl like_docs;

/* The tables of model m (refs 1). */
static int tables_new(const td__like_model *m, like_tables **out)
{
    uint16_t t[TD_LIKE_SLOTS];
    int rc;
    like_tables *tb = calloc(1, sizeof *tb);
    if (!tb)
        return TD_ENOMEM;
    atomic_init(&tb->refs, 1);
    like_tab *lt = &tb->s;
    lt->doc = m->doc;
    lt->ndocs = (TD_LIKE_BLOCK + m->doc - 1) / m->doc;
    lt->cbyte = m->cbyte;
    lt->cshare = m->cshare;
    lt->nx = m->nx;
    memcpy(lt->xdist, m->xdist, sizeof lt->xdist);
    memcpy(lt->per, m->per, sizeof lt->per);
    memcpy(lt->same, m->same, sizeof lt->same);
    {
        unsigned n = 0;
        for (unsigned c = 0; c < NCLASS; c++) {
            for (unsigned b = 0; b < 256; b++)
                if (byte_class(b) == c)
                    lt->cls[n++] = (uint8_t)b;
            lt->cls_end[c] = (uint16_t)n;
        }
    }
    {
        td__like_translate_fn *fn[3];
        td__like_translators(fn);
        lt->translate = fn[0];
    }
    if (m->has_ctx) {
        if ((rc = td__like_ctx_compile(&m->ctx, &lt->ctx)) != TD_OK)
            goto fail;
        *out = tb;
        return TD_OK;
    }
    for (unsigned c = 0; c < TD_LIKE_NVC; c++) {
        lt->vbase[c] = td__like_vbase(c);
        lt->vspan[c] = td__like_vspan(c);
    }
    for (unsigned oc = 0; oc < TD_LIKE_NOC; oc++)
        lt->need[oc] = oc < TD_LIKE_OC_X ? 0 : oc < TD_LIKE_OC_B ? m->xdist[oc - TD_LIKE_OC_X] : td__like_vbase(oc - TD_LIKE_OC_B);
    rc = td__like_slots(&m->seq[0][0], TD_LIKE_NOC * TD_LIKE_NVC, t);
    if (rc != TD_OK)
        goto fail;
    for (unsigned i = 0; i < TD_LIKE_SLOTS; i++)
        lt->seq_tab[i] = (uint16_t)(((t[i] / TD_LIKE_NVC) << 6) | (t[i] % TD_LIKE_NVC));
    {
        unsigned used = 0;
        for (unsigned oc = 0; oc < TD_LIKE_NOC; oc++)
            used += td__like_sum(m->seq[oc], TD_LIKE_NVC) != 0;
        lt->mlbuf = malloc((size_t)(used ? used : 1) * TD_LIKE_SLOTS);
        if (!lt->mlbuf) {
            rc = TD_ENOMEM;
            goto fail;
        }
        used = 0;
        for (unsigned oc = 0; oc < TD_LIKE_NOC; oc++) {
            if (!td__like_sum(m->seq[oc], TD_LIKE_NVC))
                continue;
            rc = td__like_slots(m->ml[oc], TD_LIKE_NVC, t);
            if (rc != TD_OK)
                goto fail;
            lt->ml_tab[oc] = lt->mlbuf + (size_t)used++ * TD_LIKE_SLOTS;
            for (unsigned i = 0; i < TD_LIKE_SLOTS; i++)
                lt->ml_tab[oc][i] = (uint8_t)t[i];
        }
    }
    for (unsigned bin = 0; bin < TD_LIKE_NBINS; bin++) {
        for (unsigned f = 0; f < 2; f++) {
            if (!td__like_sum(m->cat[bin][f], TD_LIKE_NCAT)) {
                memset(lt->cat_tab[bin][f], TD_LIKE_NCAT - 1, TD_LIKE_SLOTS);
                continue;
            }
            rc = td__like_slots(m->cat[bin][f], TD_LIKE_NCAT, t);
            if (rc != TD_OK)
                goto fail;
            for (unsigned i = 0; i < TD_LIKE_SLOTS; i++)
                lt->cat_tab[bin][f][i] = (uint8_t)t[i];
        }
        rc = ctx_tables(&m->lit[bin], lt->lmap[bin], &lt->lit_tab[bin]);
        if (rc != TD_OK)
            goto fail;
        for (unsigned b = 0; b < 256; b++)
            lt->lit_ctx[bin][b] = lt->lit_tab[bin] + (size_t)lt->lmap[bin][b] * TD_LIKE_SLOTS;
        /* Uniform: one group, all 256 counts equal, categories all fresh. */
        int u = m->lit[bin].ngroups == 1;
        for (int b = 1; b < 256 && u; b++)
            u = m->lit[bin].cnt[0][b] == m->lit[bin].cnt[0][0];
        for (unsigned f = 0; f < 2 && u; f++)
            for (unsigned c = 0; c + 1 < TD_LIKE_NCAT; c++)
                u &= m->cat[bin][f][c] == 0;
        lt->uniform[bin] = (uint8_t)u;
    }
    memcpy(lt->jmap, m->jun.map, 256);
    lt->jw = malloc((size_t)m->jun.ngroups * 256 * sizeof *lt->jw);
    if (!lt->jw) {
        rc = TD_ENOMEM;
        goto fail;
    }
    for (unsigned g = 0; g < m->jun.ngroups; g++) {
        uint64_t T = td__like_sum(m->jun.cnt[g], 256);
        for (int b = 0; b < 256; b++)
            lt->jw[g * 256 + b] = (uint32_t)((uint64_t)m->jun.cnt[g][b] * 65536 / T) + 1;
    }
    *out = tb;
    return TD_OK;
fail:
    td__like_tables_unref(tb);
    return rc;
}

/* The profile's tables, made on first use, with a reference for the
 * caller.  Two threads may both make them; one set is kept. */
static int tables_get(const td_profile *p, like_tables **out)
{
    void **slot = &((td_profile *)(uintptr_t)p)->tables;
    like_tables *t = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (!t) {
        like_tables *made;
        int rc = tables_new(&p->m, &made);
        if (rc != TD_OK)
            return rc;
        void *was = NULL;
        if (__atomic_compare_exchange_n(slot, &was, made, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            t = made;
        } else {
            td__like_tables_unref(made);
            t = was;
        }
    }
    atomic_fetch_add_explicit(&t->refs, 1, memory_order_relaxed);
    *out = t;
    return TD_OK;
}

static int like_prepare(const td_options *o, uint64_t end, void **state)
{
    (void)end;
    const td_profile *p = o->profile ? o->profile : td_profile_builtin("english");
    like_tables *tb;
    like_state *st;
    int rc = td__sodium_ready();
    if (rc != TD_OK)
        return rc;
    if (!p)
        return TD_EINVAL;
    if ((rc = tables_get(p, &tb)) != TD_OK)
        return rc;
    st = calloc(1, sizeof *st);
    if (!st) {
        td__like_tables_unref(tb);
        return TD_ENOMEM;
    }
    st->tabs = tb;
    /* key = BLAKE2b-256(domain || u64le(seed) || profile digest) */
    {
        crypto_generichash_state h;
        uint8_t le[8], key[32];
        static const char domain[] = "libtestdata/like/1";
        td__store64le(le, o->seed);
        crypto_generichash_init(&h, NULL, 0, 32);
        crypto_generichash_update(&h, (const unsigned char *)domain, sizeof domain - 1);
        crypto_generichash_update(&h, le, 8);
        crypto_generichash_update(&h, p->digest, 32);
        crypto_generichash_final(&h, key, 32);
        for (int i = 0; i < 4; i++)
            st->k[i] = td__load64le(key + 8 * i);
    }
    size_t head = (sizeof *st->base + tb->s.ndocs * sizeof st->base->doc[0] + 63) / 64 * 64;
    st->base = malloc(head + TD_LIKE_BLOCK);
    if (!st->base) {
        rc = TD_ENOMEM;
        goto fail;
    }
    st->base->buf = (uint8_t *)st->base + head;
    for (uint32_t d = 0; d < tb->s.ndocs; d++)
        td__once_init(&st->base->doc[d]);
    if (p->m.dedup > 65536) {
        uint8_t k[32];
        td__derive_key("libtestdata/like/dedup/1", o->seed, k);
        rc = td__dedup_new_raw(&st->dd, &like_docs, st, 4096, p->m.dedup, td__load64le(k));
        if (rc != TD_OK)
            goto fail;
    }
    *state = st;
    return TD_OK;
fail:
    like_release(st);
    return rc;
}

#define INVALID UINT32_MAX

/* td__wyrand, with the 64x64->128 multiply as one mulq on x86-64: in the
 * large loop of gen_doc, GCC keeps the __int128 product on the stack and
 * reloads it, a store and a load on every draw.  The same values. */
static inline uint64_t like_rand(uint64_t *s)
{
#if defined(__x86_64__) && defined(__GNUC__)
    uint64_t a = *s += TD_WY_P0, hi;
    __asm__("mulq %2" : "+a"(a), "=d"(hi) : "rm"(a ^ TD_WY_P1) : "cc");
    return a ^ hi;
#else
    return td__wyrand(s);
#endif
}

/* c ? a : b without a branch (the conditions here are coin flips, which a
 * branch predictor loses). */
static inline uint32_t sel32(int c, uint32_t a, uint32_t b)
{
    uint32_t m = 0u - (uint32_t)(c != 0);
    __asm__("" : "+r"(m)); /* keep the compiler from making it a branch again */
    return (a & m) | (b & ~m);
}


/* Bits of the table of 4-byte strings (recent[]): enough for the document. */
static unsigned recent_bits(uint32_t doc)
{
    unsigned b = 10;
    while (b < 16 && (1u << b) < doc)
        b++;
    return b;
}

#define BELOW_SHIFT 6

/* The copies that began at or before t, of the n in starts (increasing),
 * of which the first filled * 64 bytes are indexed by below[]: at most one
 * 64-byte block's (16 copies of at least 4 bytes) is scanned. */
static inline uint32_t starts_upto(const uint32_t *starts, const uint32_t *below, uint32_t n,
                                   uint32_t filled, uint32_t t)
{
    if ((t >> BELOW_SHIFT) >= filled)
        return n; /* every copy began before filled * 64 <= t */
    uint32_t i = below[t >> BELOW_SHIFT];
    while (i < n && starts[i] <= t)
        i++;
    return i;
}

#define RECENT_POS ((1u << 21) - 1)

/* Slot of the 4-byte string v (little-endian) in recent[] of 2^rb slots. */
static inline uint32_t recent_slot(uint32_t v, unsigned rb)
{
    return (v * 2654435761u) >> (32 - rb);
}

/* Document j, bytes [0, end) (generation stops once pos >= end), of a
 * document cut at lim <= doc (the last one of a block): out must hold lim
 * bytes, and no write passes them.  The bytes before lim do not depend on
 * lim. */
static void gen_doc(const like_state *st, uint64_t j, uint8_t *out, uint32_t end, uint32_t lim,
                    doc_work *w)
{
    const like_tab *tab = tab_of(st);
    const uint32_t L = lim;
    uint64_t s = td__wymix(st->k[0] ^ j, st->k[1] ^ TD_WY_P1) ^ st->k[2];
    uint32_t pos = 0, rep[3] = {0, 0, 0}, lastd = 0, pll = 0, pml = 0;
    unsigned nrep = 0, rb = recent_bits(tab->doc);
    uint32_t *recent = w->recent, rins = 0; /* positions < rins are in recent[] */
    uint32_t *starts = w->starts, *below = w->below, nstarts = 0, filled = 0;
    int have_prev = 0;

    if (++w->tag == 2048) {
        memset(recent, 0, sizeof(uint32_t) << rb);
        w->tag = 1;
    }
    const uint32_t tag = w->tag << 21;
    while (pos < end) {
        uint64_t r = like_rand(&s);
        unsigned e = tab->seq_tab[r & 4095];
        for (int t = 1; t < TD_LIKE_RETRY; t++) {
            unsigned oc0 = e >> 6, lc0 = e & 63;
            /* A repeat class needs its repeat offset (rep[i] != 0 exactly
             * when i < nrep). */
            uint32_t need = tab->need[oc0];
            if (oc0 < TD_LIKE_OC_X && !rep[oc0])
                need = INVALID;
            if (need != INVALID && need <= pos + tab->vbase[lc0])
                break;
            r = like_rand(&s);
            e = tab->seq_tab[r & 4095];
        }
        unsigned oc = e >> 6, lc = e & 63;
        uint32_t ll = tab->vbase[lc] + (uint32_t)((((r >> 12) & 0xfffff) * tab->vspan[lc]) >> 20);
        unsigned mc = tab->ml_tab[oc][(r >> 32) & 4095];
        uint32_t ml = TD_LIKE_MINMATCH + tab->vbase[mc] + (uint32_t)((((r >> 44) & 0xfffff) * tab->vspan[mc]) >> 20);
        /* r2: distance in a bucket (bits 0-31), same lengths (32-47), pick (48-63). */
        uint64_t r2 = like_rand(&s);
        {
            int same = have_prev & (((r2 >> 32) & 0xffff) < tab->same[oc]);
            ll = sel32(same, pll, ll);
            ml = sel32(same, pml, ml);
        }
        pll = ll;
        pml = ml;
        have_prev = 1;
        uint32_t dist;
        int rp = -1;
        if (oc < TD_LIKE_OC_X) {
            dist = oc < nrep ? rep[oc] : INVALID;
            rp = (int)oc;
        } else if (oc < TD_LIKE_OC_B) {
            dist = tab->xdist[oc - TD_LIKE_OC_X];
        } else {
            unsigned b = oc - TD_LIKE_OC_B;
            dist = tab->vbase[b] + (uint32_t)(((r2 & 0xffffffff) * tab->vspan[b]) >> 32);
            if (!dist)
                dist = 1;
        }

        /* The literal run.  A sequence whose match cannot be made writes at
         * least one literal, so generation always advances. */
        ll += (ll == 0) & (dist > pos); /* dist > pos also when INVALID */
        if (ll > L - pos)
            ll = L - pos;
        /* A distance from a bucket gets three more candidates (21 bits each
         * of one draw, made before the literals so that their bytes can be
         * fetched from memory meanwhile). */
        uint32_t cand[TD_LIKE_CAND], pdist = 0;
        int phrase = 0;
        if (oc >= TD_LIKE_OC_B) {
            unsigned b = oc - TD_LIKE_OC_B;
            uint32_t span = tab->vspan[b], base = tab->vbase[b], at = pos + ll;
            uint64_t rc = like_rand(&s);
            /* Half the copies at a distance from a bucket (bit 63 of rc,
             * which the candidates leave unused) start where an earlier
             * copy of the document started, at the most recent such
             * distance in the bucket: real data repeats whole phrases, so
             * every copy of one continues alike and a greedy compressor's
             * hash finds it wherever it looks.  Found here, at the end of
             * the literal run (no copy starts during it), so that its
             * source is fetched while the literals are made. */
            if ((rc >> 63) && dist <= at) {
                uint32_t lo = TD_MAX(base, 1u), hi = TD_MAX(base + span - 1, 1u);
                /* the most recent copy that began at least lo before at */
                uint32_t c = at >= lo ? starts_upto(starts, below, nstarts, filled, at - lo) : 0;
                if (c && at - starts[c - 1] <= hi) {
                    pdist = at - starts[c - 1];
                    phrase = 1;
                    __builtin_prefetch((const void *)(out + starts[c - 1]));
                }
            }
            cand[0] = dist;
            for (int c = 1; c < TD_LIKE_CAND; c++) {
                uint32_t d = base + (uint32_t)((((rc >> (21 * (c - 1))) & 0x1fffff) * span) >> 21);
                cand[c] = d ? d : 1;
            }
            /* A prefetch never faults: no test of cand <= at (a branch
             * on coin flips at a document's start). */
            for (int c = 0; c < TD_LIKE_CAND && !phrase; c++)
                __builtin_prefetch((const void *)((uintptr_t)out + at - cand[c]));
        }
        uint64_t raw = 0;
        unsigned nraw = 0;
        uint32_t k = 0;
        if (ll && lastd) {
            /* The first literal after a match (never in the uniform path). */
            unsigned bin = td__like_bin(pos);
            uint64_t rr = like_rand(&s);
            unsigned cat = tab->cat_tab[bin][1][(rr >> 40) & 4095];
            uint32_t cd = cat < 3 ? rep[cat] : cat < 5 ? tab->per[cat - 3] : 0;
            uint8_t b;
            if (cat < 5 && cd && cd <= pos && out[pos - cd] != out[pos - lastd]) {
                b = out[pos - cd];
            } else {
                const uint8_t *lt = tab->lit_ctx[bin][out[pos - 1]];
                b = lt[rr & 4095];
                /* The byte after a match never extends it (the parse
                 * would have taken the longer match). */
                uint8_t bad = out[pos - lastd];
                if (b == bad)
                    b = lt[(rr >> 12) & 4095];
                if (b == bad)
                    b = lt[(rr >> 24) & 4095];
                if (b == bad)
                    b ^= 1;
            }
            out[pos++] = b;
            k = 1;
        }
        /* The other literals, a stretch of one position bin at a time.  The
         * category's distance is looked up, not branched on (cd = 0 for
         * "fresh"), and the previous byte stays in a register: the chain
         * from one literal to the next is two loads and a select. */
        uint32_t cdv[TD_LIKE_NCAT] = {rep[0], rep[1], rep[2], tab->per[0], tab->per[1], 0};
        while (k < ll) {
            unsigned bin = td__like_bin(pos);
            uint32_t n = TD_MIN(ll - k, td__like_bin_end(bin) - pos);
            k += n;
            if (tab->uniform[bin]) {
                /* Eight uniform bytes per draw, little-endian. */
                for (; n && nraw; n--, nraw--, raw >>= 8)
                    out[pos++] = (uint8_t)raw;
                for (; n >= 8; n -= 8, pos += 8)
                    td__store64le(out + pos, like_rand(&s));
                if (n) {
                    raw = like_rand(&s);
                    nraw = 8;
                    for (; n; n--, nraw--, raw >>= 8)
                        out[pos++] = (uint8_t)raw;
                }
                continue;
            }
            const uint8_t *ct = tab->cat_tab[bin][0];
            const uint8_t *const *lx = tab->lit_ctx[bin];
            if (pos == 0) {
                uint64_t rr = like_rand(&s);
                out[pos++] = lx[0][rr & 4095];
                n--;
            }
            unsigned prev = out[pos - 1];
            for (; n; n--) {
                uint64_t rr = like_rand(&s);
                uint32_t cd = cdv[ct[(rr >> 40) & 4095]];
                uint32_t m = 0u - (uint32_t)(cd - 1u < pos); /* cd != 0 && cd <= pos */
                uint32_t bc = out[pos - (cd & m) - (1u & ~m)];
                uint32_t bl = lx[prev][rr & 4095];
                prev = (bc & m) | (bl & ~m);
                out[pos++] = (uint8_t)prev;
            }
        }
        if (pos >= L)
            break;

        /* The others: of the candidates, prefer sources whose first byte
         * is likely after the previous byte. */
        if (phrase)
            dist = pdist;
        else if (oc >= TD_LIKE_OC_B && dist <= pos) {
            uint64_t wt[TD_LIKE_CAND], W = 0;
            const uint32_t *jw = tab->jw + (size_t)tab->jmap[out[pos - 1]] * 256;
            for (int c = 0; c < TD_LIKE_CAND; c++) {
                wt[c] = cand[c] <= pos ? jw[out[pos - cand[c]]] : 0;
                W += wt[c];
            }
            /* The first candidate whose running sum of weights passes x
             * (x < W, and wt[0] >= 1): counted, not branched on. */
            uint64_t x = ((r2 >> 48) * W) >> 16, cum = 0;
            unsigned pick = 0;
            for (int c = 0; c + 1 < TD_LIKE_CAND; c++) {
                cum += wt[c];
                pick += cum <= x;
            }
            dist = cand[pick];
        }
        if (dist == INVALID || dist > pos) {
            lastd = 0;
            continue;
        }
        /* A new distance copies from the most recent earlier occurrence of
         * the source's first 4 bytes, which is where a compressor's hash
         * table looks first (real repeats are found there). */
        if (rp < 0 && !phrase && dist + 4 <= pos) {
            /* Four positions per 8-byte load, stored in order (a later
             * position replaces an earlier one of the same hash). */
            for (; rins + 8 <= pos; rins += 4) {
                uint64_t w8 = td__load64le(out + rins);
                for (unsigned i = 0; i < 4; i++)
                    recent[recent_slot((uint32_t)(w8 >> (8 * i)), rb)] = tag | (rins + i + 1);
            }
            /* The 0-4 positions left, without a branch on how many (a
             * mispredicted loop exit per lookup): one past the table's end
             * takes the stores of the positions not to insert. */
            {
                uint32_t left = pos - 3 - rins; /* rins + 8 > pos: at most 4 */
                for (uint32_t i = 0; i < 4; i++) {
                    uint32_t ok = i < left, p = sel32(ok, rins + i, 0);
                    uint32_t slot = sel32(ok, recent_slot(td__load32le(out + p), rb), 1u << rb);
                    recent[slot] = tag | (p + 1);
                }
                rins += left;
            }
            /* A source closer than 4 bytes reaches past pos, which is not
             * written yet: those bytes count as zero (docs/format.md). */
            uint32_t sp = pos - dist, v = 0;
            if (dist >= 4)
                v = td__load32le(out + sp);
            else
                for (uint32_t t = 0; t < dist; t++)
                    v |= (uint32_t)out[sp + t] << (8 * t);
            uint32_t ent = recent[recent_slot(v, rb)];
            uint32_t q = sel32((ent & ~RECENT_POS) == tag, ent & RECENT_POS, 0);
            uint32_t qa = sel32(q != 0, q - 1, 0); /* a valid address to compare at */
            dist = sel32((q > sp + 1) & (td__load32le(out + qa) == v), pos - qa, dist);
        }
        if (ml > L - pos)
            ml = L - pos;
        {
            uint8_t *d = out + pos;
            const uint8_t *src = d - dist;
            uint32_t ci = 0;
            if (dist >= 16 && ml + 15 <= L - pos) {
                /* 16 bytes at a time; the bytes written past the match are
                 * rewritten later (nothing reads at or after pos before). */
                do
                    memcpy(d + ci, src + ci, 16);
                while ((ci += 16) < ml);
                ci = ml;
            } else if (dist >= 8)
                for (; ci + 8 <= ml; ci += 8) {
                    uint64_t v;
                    memcpy(&v, src + ci, 8);
                    memcpy(d + ci, &v, 8);
                }
            for (; ci < ml; ci++)
                d[ci] = src[ci];
        }
        while ((filled << BELOW_SHIFT) <= pos)
            below[filled++] = nstarts;
        starts[nstarts++] = pos;
        pos += ml;
        lastd = dist;
        td__like_rep_update(rep, &nrep, rp, dist);
    }
}

/* What w lacks for documents of length L (with aside: a document made
 * aside as well; lz: of an LZ model, whose documents use the tables).  A
 * new table of recent strings is zeroed: tag 0 is no document's, so the
 * first document need not clear it. */
static int work_alloc(doc_work *w, uint32_t L, int aside, int lz)
{
    if (aside && !w->aside)
        w->aside = malloc(L);
    if (!lz) /* a context model's documents need only the aside buffer */
        return !aside || w->aside ? TD_OK : TD_ENOMEM;
    if (!w->recent) {
        /* one more slot than the table: the tail of the inserts stores there */
        w->recent = calloc((1u << recent_bits(L)) + 1, sizeof(uint32_t));
        w->tag = 0;
    }
    /* a copy is at least 4 bytes but the last, cut at the document's end */
    if (!w->starts)
        w->starts = malloc(sizeof(uint32_t) * (L / TD_LIKE_MINMATCH + 1));
    if (!w->below)
        w->below = malloc(sizeof(uint32_t) * ((L >> BELOW_SHIFT) + 1));
    return w->recent && w->starts && w->below && (!aside || w->aside) ? TD_OK : TD_ENOMEM;
}

/* Bytes [from, to) of the base block: block 0's documents end to end, the
 * last one cut at the block's end.  A document begun before from is made
 * again aside and only its new bytes are copied (readers may be reading its
 * old ones).  The scratch is the profile's when no other fill holds it. */
static int base_fill(const like_state *st, uint8_t *buf, uint32_t from, uint32_t to)
{
    const like_tab *tab = tab_of(st);
    const uint32_t L = tab->doc;
    like_tables *tb = st->tabs;
    doc_work own = {0}, *w = &own;
    int lent = !atomic_exchange_explicit(&tb->busy, 1, memory_order_acquire);
    if (lent)
        w = &tb->work;
    int rc = work_alloc(w, L, from % L != 0, !tab->ctx);
    for (uint32_t d = from / L, at = d * L; rc == TD_OK && at < to; d++, at += L) {
        uint32_t lim = TD_MIN(L, TD_LIKE_BLOCK - at), end = TD_MIN(lim, to - at);
        uint8_t *o = at < from ? w->aside : buf + at;
        if (tab->ctx)
            td__like_ctx_doc(tab->ctx, td__wymix(st->k[0] ^ d, st->k[1] ^ TD_WY_P1) ^ st->k[2], o, end, lim);
        else
            gen_doc(st, d, o, end, lim, w);
        if (at < from)
            memcpy(buf + from, w->aside + (from - at), end - (from - at));
    }
    if (lent)
        atomic_store_explicit(&tb->busy, 0, memory_order_release);
    else
        work_free(&own);
    return rc;
}

/* Makes bytes [from, end) of the base block final: each document they
 * touch, as far as they reach into it. */
static int base_need(const like_state *st, uint32_t from, uint32_t end)
{
    like_base *b = st->base;
    const uint32_t L = tab_of(st)->doc;
    for (uint32_t d = from / L, at = d * L; at < end; d++, at += L) {
        td_once *o = &b->doc[d];
        uint32_t lim = TD_MIN(L, TD_LIKE_BLOCK - at), need = TD_MIN(lim, end - at);
        if (atomic_load_explicit(&o->ready, memory_order_acquire) >= need ||
            !td__once_take(o, need, 1))
            continue;
        uint32_t ready = atomic_load(&o->ready);
        /* A first read of a document makes what it needs, at least 16 KiB:
         * a one-shot read (td_fill of 4 KiB, dedup's pieces) needs little.
         * A second makes the rest, as does a first one after a whole
         * document (a reader going forward): a document is then made at
         * most once more than whole, however a stream reads it. */
        uint32_t to = ready ? lim : TD_MIN(lim, TD_MAX(need, 16384u));
        if (d && atomic_load_explicit(&b->doc[d - 1].ready, memory_order_relaxed) == L)
            to = lim;
        int rc = base_fill(st, b->buf, at + ready, at + to);
        td__once_done(o, rc == TD_OK ? to : 0);
        if (rc != TD_OK)
            return rc;
    }
    return TD_OK;
}

/* The byte permutation of block bi: each class of byte_class() shuffled
 * by Fisher-Yates, from its top. */
static void block_perm(const like_state *st, uint64_t bi, uint8_t p[256])
{
    const like_tab *tab = tab_of(st);
    uint64_t s = td__wymix(st->k[3] ^ bi, st->k[0] ^ TD_WY_P1);
    uint8_t v[256];
    memcpy(v, tab->cls, 256);
    for (unsigned c = 0, lo = 0; c < NCLASS; lo = tab->cls_end[c++])
        for (unsigned i = tab->cls_end[c] - 1u; i > lo; i--) {
            unsigned j = lo + (unsigned)(((like_rand(&s) >> 32) * (i - lo + 1)) >> 32);
            uint8_t t = v[i];
            v[i] = v[j];
            v[j] = t;
        }
    for (unsigned t = 0; t < 256; t++)
        p[tab->cls[t]] = v[t];
}

/* out[i] = p[in[i]] for i < n: the block's permutation applied.  The
 * vector versions give the same bytes (tests/c/test_like.c compares them);
 * prepare picks the widest the CPU has. */
static void translate_scalar(const uint8_t *p, const uint8_t *in, uint8_t *out, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t v = td__load64le(in + i), r = 0;
        for (unsigned k = 0; k < 64; k += 8)
            r |= (uint64_t)p[(v >> k) & 255] << k;
        td__store64le(out + i, r);
    }
    for (; i < n; i++)
        out[i] = p[in[i]];
}

#ifdef LIKE_X86
/* 16 table rows of 16 bytes: each row looked up by the low nibble, kept
 * where the high nibble is the row's. */
__attribute__((target("avx2"))) static void translate_avx2(const uint8_t *p, const uint8_t *in,
                                                           uint8_t *out, size_t n)
{
    __m256i row[16];
    const __m256i nib = _mm256_set1_epi8(0x0f);
    size_t i = 0;
    for (int h = 0; h < 16; h++)
        row[h] = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(p + 16 * h)));
    for (; i + 32 <= n; i += 32) {
        __m256i x = _mm256_loadu_si256((const __m256i *)(in + i));
        __m256i lo = _mm256_and_si256(x, nib), hi = _mm256_and_si256(_mm256_srli_epi16(x, 4), nib);
        __m256i r = _mm256_setzero_si256();
        for (int h = 0; h < 16; h++)
            r = _mm256_or_si256(r, _mm256_and_si256(_mm256_cmpeq_epi8(hi, _mm256_set1_epi8((char)h)),
                                                    _mm256_shuffle_epi8(row[h], lo)));
        _mm256_storeu_si256((__m256i *)(out + i), r);
    }
    translate_scalar(p, in + i, out + i, n - i);
}

/* Two 128-entry lookups (the low 7 bits), chosen by the top bit. */
__attribute__((target("avx512f,avx512bw,avx512vbmi"))) static void
translate_vbmi(const uint8_t *p, const uint8_t *in, uint8_t *out, size_t n)
{
    const __m512i t0 = _mm512_loadu_si512(p), t1 = _mm512_loadu_si512(p + 64);
    const __m512i t2 = _mm512_loadu_si512(p + 128), t3 = _mm512_loadu_si512(p + 192);
    size_t i = 0;
    for (; i + 64 <= n; i += 64) {
        __m512i x = _mm512_loadu_si512(in + i);
        __m512i lo = _mm512_permutex2var_epi8(t0, x, t1), hi = _mm512_permutex2var_epi8(t2, x, t3);
        _mm512_storeu_si512(out + i, _mm512_mask_blend_epi8(_mm512_movepi8_mask(x), lo, hi));
    }
    translate_scalar(p, in + i, out + i, n - i);
}
#endif

unsigned td__like_translators(td__like_translate_fn *fn[3])
{
    unsigned k = 0;
#ifdef LIKE_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512bw"))
        fn[k++] = translate_vbmi;
    if (__builtin_cpu_supports("avx2"))
        fn[k++] = translate_avx2;
#endif
    fn[k++] = translate_scalar;
    return k;
}

/* Bytes [offset, offset+len) of the documents' stream: each block is the
 * base block through the block's permutation.  Documents cost 2-6 times
 * what compressing them with lz4 costs; a permutation keeps every
 * statistic a compressor uses (matches, byte frequencies, contexts) for a
 * table load per byte, and no two blocks share their strings.  A block's
 * bytes need none before them, so any range costs only what it reads (the
 * dedup layer's 4 KiB pieces, a stream's seeks). */
static int docs_fill(const void *state, uint64_t offset, uint8_t *buf, size_t len)
{
    const like_state *st = state;
    uint8_t p[256];

    while (len) {
        uint64_t bi = offset / TD_LIKE_BLOCK;
        uint32_t at = (uint32_t)(offset % TD_LIKE_BLOCK);
        size_t n = TD_MIN((size_t)(TD_LIKE_BLOCK - at), len);
        int rc = base_need(st, at, at + (uint32_t)n);
        if (rc != TD_OK)
            return rc;
        block_perm(st, bi, p);
        tab_of(st)->translate(p, st->base->buf + at, buf, n);
        buf += n;
        len -= n;
        offset += n;
    }
    return TD_OK;
}

/* The documents, before the sample's own dedup. */
static const td_kind_vtbl like_docs = {
    .name = "like",
    .block = TD_LIKE_BLOCK,
    .ranged = 1,
    .fill = docs_fill,
};

/* The sample's one-byte 4 KiB blocks (model.cshare / 65536 of the blocks,
 * of byte model.cbyte), which the parse left out: put back where a keyed
 * draw of the block's index says, over the documents and the dedup mapping
 * alike, and not permuted, so that they repeat as in the sample. */
static void const_blocks(const like_state *st, uint64_t offset, uint8_t *buf, size_t len)
{
    const like_tab *t = tab_of(st);
    while (len) {
        uint64_t i = offset / 4096;
        size_t k = TD_MIN((size_t)(4096 - offset % 4096), len);
        if ((td__wymix(st->k[2] ^ i, st->k[3] ^ TD_WY_P0) & 0xffff) < t->cshare)
            memset(buf, (int)t->cbyte, k);
        buf += k;
        len -= k;
        offset += k;
    }
}

/* With the sample's own duplicate 4 KiB blocks: the generic dedup mapping
 * (dedup.c) over the documents; then its one-byte blocks, over what was
 * made.  Making only the runs between them measured slower (bench_gen
 * --stream 1, ptt5's profile: 31 against 21 GB/s): each run pays its
 * block's permutation again, and overwriting costs one memset. */
static int like_fill(const void *state, uint64_t offset, uint8_t *buf, size_t len)
{
    const like_state *st = state;
    int rc = st->dd ? td__dedup_fill(st->dd, offset, buf, len) : docs_fill(state, offset, buf, len);
    if (rc == TD_OK && tab_of(st)->cshare)
        const_blocks(st, offset, buf, len);
    return rc;
}

const td_kind_vtbl td_kind_like = {
    .name = "like",
    .block = TD_LIKE_BLOCK,
    .slack = 0,
    .ranged = 1,
    .check = NULL,
    .prepare = like_prepare,
    .release = like_release,
    .fill = like_fill,
};
