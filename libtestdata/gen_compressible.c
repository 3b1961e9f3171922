/*
 * TD_COMPRESSIBLE (format 2): LZ77-shaped data with a target compression ratio.
 *
 * The stream is a sequence of independent blocks of G bytes (16 KiB, or
 * compress_block when that is smaller).  Each block is built like the output
 * of an LZ77 decoder: literal runs alternate with back-references (copies of
 * earlier bytes of the same block, at least 8 bytes long, starting in the
 * first half of a recent literal run).  The ratio is set by the share of
 * copied bytes; the shape (literal-run and match means, how far back copies
 * reach) comes from a table calibrated per block class against many codecs
 * (compressible_table.h, tools/calibrate_compressible.py).
 *
 * Literal bytes come from a per-block "pool", a chain in which each byte is
 * the previous one XOR a step drawn from a fixed set of `succ` values.
 * Every byte value stays equally likely, so LZ codecs and order-0 entropy
 * coders see 8 bits per literal; block-sorting codecs (bzip2) see the
 * order-1 structure, which pays back what BWT+MTF loses on LZ-shaped data.
 * succ = 256 is uniform (plain random bytes).
 *
 * Everything on the byte path is integer arithmetic on 64-bit words; the
 * only floating-point step is quantising o->ratio to 1/1024 once, in
 * prepare (exact in IEEE-754 double).  See docs/format.md, "compressible".
 */
#include "compressible.h"

#include <math.h>

#include "compressible_table.h"

/* Copies never come from closer than this, so 8-byte chunked copying equals
 * byte-by-byte LZ copying, and no short period repeats. */
#define COMP_MIN_DIST 16u
#define COMP_MIN_MATCH 8u
#define COMP_MAX_RUNS 4096u
#define COMP_SLACK TD_COMP_SLACK
#define COMP_CHUNK 64u /* pool bytes made per step */
#define COMP_SHORT_COPY 256u /* longer copies go through memcpy */

const td__comp_table_t *td__comp_class(uint32_t cb)
{
    /* Pieces of 32 KiB and more hold whole 16 KiB blocks and amortise
     * per-piece headers like a stream does. */
    for (unsigned i = 0; i < TD_COMP_NCLASSES; i++)
        if (td__comp_classes[i].piece == cb)
            return &td__comp_classes[i].t;
    return &td__comp_classes[0].t;
}

void td__comp_params_for(const td__comp_table_t *tab, uint32_t rq, td__comp_params *p)
{
    const td__comp_row *t = tab->rows;
    unsigned n = tab->nrows, k;

    if (rq <= t[0].rq) {
        *p = (td__comp_params){t[0].lit_mean, t[0].match_mean16, t[0].jbits, t[0].succ};
        return;
    }
    for (k = 1; k < n - 1 && rq > t[k].rq; k++)
        ;
    if (rq >= t[k].rq) {
        *p = (td__comp_params){t[k].lit_mean, t[k].match_mean16, t[k].jbits, t[k].succ};
        return;
    }
    /* Linear interpolation between rows k-1 and k, rounded down. */
    const td__comp_row *a = &t[k - 1], *b = &t[k];
    uint64_t num = rq - a->rq, den = b->rq - a->rq;
#define LERP(f) (uint32_t)(((uint64_t)a->f * (den - num) + (uint64_t)b->f * num) / den)
    p->lit_mean = LERP(lit_mean);
    p->match_mean16 = LERP(match_mean16);
    p->succ = LERP(succ);
#undef LERP
    p->jbits = num * 2 < den ? a->jbits : b->jbits;
}

/* Lemire's remainder multipliers, 2^32 / d + 1 (mod 2^32) for d < TD_COMP_MODM:
 * x % d = ((modm[d] * x) * d) >> 32, exact for the x < 2^12 of td__comp_block
 * (modm[0] is never used).  Built by the compiler: they depend on no key. */
#define COMP_M1(d) (uint32_t)(UINT32_MAX / ((d) ? (d) : 1) + 1)
#define COMP_M4(d) COMP_M1(d), COMP_M1((d) + 1), COMP_M1((d) + 2), COMP_M1((d) + 3)
#define COMP_M16(d) COMP_M4(d), COMP_M4((d) + 4), COMP_M4((d) + 8), COMP_M4((d) + 12)
#define COMP_M64(d) COMP_M16(d), COMP_M16((d) + 16), COMP_M16((d) + 32), COMP_M16((d) + 48)
#define COMP_M256(d) COMP_M64(d), COMP_M64((d) + 64), COMP_M64((d) + 128), COMP_M64((d) + 192)
_Static_assert(TD_COMP_MODM == 512, "comp_modm has 512 entries");
static const uint32_t comp_modm[TD_COMP_MODM] = {COMP_M256(0), COMP_M256(256)};
#undef COMP_M256
#undef COMP_M64
#undef COMP_M16
#undef COMP_M4
#undef COMP_M1

/* A bijection of 0..255 whose top three bits cycle through all eight values,
 * so that any first-succ indices give the same number of steps in each
 * top-3-bit class (docs/format.md, "The step map"). */
static inline uint8_t gmap(uint32_t i)
{
    uint32_t c = i & 7;
    return (uint8_t)((c << 5) | ((13 * (i >> 3) + 7 * c) & 31));
}

void td__comp_setup(td__comp_gen *g, uint64_t key, uint64_t lkey, uint32_t block,
                    const td__comp_params *p)
{
    g->key = key;
    g->lkey = lkey;
    g->block = block;
    g->p = *p;
    if (g->p.succ < 8)
        g->p.succ = 8;
    if (g->p.succ > 256)
        g->p.succ = 256;
    /* pair[d] = 0x100 | the first base step s1 (in index order) such that
     * s1 ^ d is a base step; later (smaller) i overwrite. */
    memset(g->pair, 0, sizeof g->pair);
    for (uint32_t i = g->p.succ; g->p.succ < 256 && i-- > 0;)
        for (uint32_t k = 0; k < g->p.succ; k++)
            g->pair[gmap(i) ^ gmap(k)] = (uint16_t)(0x100 | gmap(i));
}

/* 16-byte vectors (GCC and Clang vector extensions: SSE2 on x86-64, NEON on
 * arm64, plain words elsewhere); loads and stores go through memcpy. */
typedef uint8_t comp_v16 __attribute__((vector_size(16)));
typedef uint16_t comp_v8h __attribute__((vector_size(16)));
typedef uint64_t comp_v2q __attribute__((vector_size(16)));

static inline comp_v16 v16_load(const uint8_t *p)
{
    comp_v16 v;
    memcpy(&v, p, 16);
    return v;
}

static inline void v16_store(uint8_t *p, comp_v16 v)
{
    memcpy(p, &v, 16);
}

/* The base steps for eight pool random bytes u (one per 16-bit lane):
 * gmap(index), index = (u * succ) >> 8 < succ; a block's steps are these
 * XOR its epoch's mask. */
static inline comp_v8h step_of8(comp_v8h u, uint16_t succ)
{
    comp_v8h i = (comp_v8h)((u * succ) >> 8);
    comp_v8h c = i & 7;
    return (c << 5) | ((13 * (i >> 3) + 7 * c) & 31);
}

/* The next 64 pool bytes (8 words of the pool's wyrand state *ps): the
 * literal bytes themselves when succ = 256, else the chain itself, each byte
 * the one before it (*pc, the chain's last byte) XOR a step.  The chain is
 * computed here, away from the literal runs: a run is then the chain XOR one
 * byte (xor_run), and no byte of a run waits for the one before it.  The
 * steps are made per byte in 16-bit lanes and put back in place, so the
 * result does not depend on the machine's byte order. */
static inline void pool_chunk(uint32_t succ, uint8_t mask, uint64_t *ps, uint8_t *dst,
                              uint64_t *pc)
{
    uint64_t s = *ps;
    if (succ >= 256) {
        for (unsigned i = 0; i < 8; i++)
            td__store64le(dst + 8 * i, td__wyrand(&s));
        *ps = s;
        return;
    }
    const uint64_t ones = UINT64_C(0x0101010101010101);
    uint64_t c = *pc;
    for (unsigned q = 0; q < 4; q++) {
        uint64_t a = td__wyrand(&s), b = td__wyrand(&s);
        comp_v2q x = {a, b};
        comp_v8h lo = (comp_v8h)x & 0xff, hi = (comp_v8h)x >> 8;
        x = (comp_v2q)(step_of8(lo, (uint16_t)succ) | (step_of8(hi, (uint16_t)succ) << 8));
        x ^= mask * ones;
        /* Prefix XOR inside each 8-byte lane, then the carries. */
        x ^= x << 8;
        x ^= x << 16;
        x ^= x << 32;
        uint64_t w0 = x[0] ^ c * ones;
        uint64_t w1 = x[1] ^ (w0 >> 56) * ones;
        c = w1 >> 56;
        td__store64le(dst + 16 * q, w0);
        td__store64le(dst + 16 * q + 8, w1);
    }
    *ps = s;
    *pc = c;
}

/* The bytes src[0 .. n) XOR k into dst, 16 at a time, at least 64 (dst and
 * src have room). */
static inline void xor_run(uint8_t *dst, const uint8_t *src, uint32_t n, uint8_t k)
{
    const comp_v16 kk = (comp_v16){0} + k;
    v16_store(dst, v16_load(src) ^ kk);
    v16_store(dst + 16, v16_load(src + 16) ^ kk);
    v16_store(dst + 32, v16_load(src + 32) ^ kk);
    v16_store(dst + 48, v16_load(src + 48) ^ kk);
    for (uint32_t t = 64; t < n; t += 16)
        v16_store(dst + t, v16_load(src + t) ^ kk);
}

/* LZ copy: out[t] = out[t - dist] for t in [0, len), dist >= 16.  Copies
 * up to COMP_SHORT_COPY bytes (most, below ratio 10) go in 16-byte chunks in
 * order (32-byte steps when dist >= 32), which equals byte-by-byte LZ
 * copying since every chunk reads only bytes already final; they write at
 * least 32 bytes (out has room; what lies past len is overwritten next, or
 * is slack).  Longer ones go through memcpy (fewer, wider stores and no
 * branch per chunk): when the source overlaps the destination the result
 * repeats with period dist, so it is built from non-overlapping copies of
 * one period, doubling (chunks that read what the last few chunks wrote
 * would stall on store-to-load forwarding). */
static inline void lz_copy(uint8_t *dst, size_t dist, size_t len)
{
    const uint8_t *src = dst - dist;
    if (len <= 32 || (len <= COMP_SHORT_COPY && dist < 32)) {
        v16_store(dst, v16_load(src));
        v16_store(dst + 16, v16_load(src + 16));
        for (size_t t = 32; t < len; t += 16)
            v16_store(dst + t, v16_load(src + t));
        return;
    }
    if (len <= COMP_SHORT_COPY) {
        /* dist >= 32: 32 bytes a step (both loads before the stores) */
        for (size_t t = 0; t < len; t += 32) {
            const comp_v16 a = v16_load(src + t), b = v16_load(src + t + 16);
            v16_store(dst + t, a);
            v16_store(dst + t + 16, b);
        }
        return;
    }
    if (dist >= len) {
        memcpy(dst, src, len);
        return;
    }
    memcpy(dst, src, dist);
    for (size_t w = dist; w < len;) {
        size_t n = len - w < w ? len - w : w;
        memcpy(dst + w, dst, n);
        w += n;
    }
}

/* Block bi into out[0 .. G + COMP_SLACK); only out[0 .. end) is guaranteed
 * (generation stops once it is complete). */
void td__comp_block(const td__comp_gen *g, uint64_t bi, uint8_t *out, uint32_t end)
{
    uint16_t rs[COMP_MAX_RUNS], rl[COMP_MAX_RUNS];
    /* pool[0] = 0, then the pool bytes (chain bytes when succ < 256), so
     * that pool[pp] is the chain byte before the next run's first. */
    uint8_t pool[TD_COMP_BLOCK + 4 * COMP_CHUNK];
    const td__comp_params *p = &g->p;
    const uint32_t G = g->block;
    uint32_t nruns = 0, pos = 0, pp = 0, pool_have = 1;
    uint64_t pc = 0;
    const uint64_t ml = p->lit_mean ? p->lit_mean : 1;
    const uint64_t mm16 = p->match_mean16;
    const uint64_t min16 = 16u * COMP_MIN_MATCH;
    const uint64_t a16 = mm16 > min16 ? 3 * (mm16 - min16) : 0;
    const uint32_t jb = p->jbits;
    /* j % nruns without a division, branch or dependency on a divider
     * (Lemire's direct remainder, exact for j < 2^12, nruns < 2^9). */
    const int fastmod = jb <= 12;
    uint64_t s = td__wymix(g->key ^ (bi * TD_WY_P1), bi + TD_WY_P0);
    uint64_t ps = td__wymix(g->lkey ^ (bi * TD_WY_P1), bi + TD_WY_P0);
    /* The step set is the base set XOR a mask drawn per 2 MiB epoch: an
     * order-1 structure for block sorters (900 KB blocks), but none across
     * epochs for xz's 8 MiB window.  Pairs of steps do not depend on the
     * mask (s1 ^ s2), so one pair table serves every epoch. */
    const uint32_t succ = g->p.succ;
    const uint64_t e = ((uint64_t)bi * G) >> TD_COMP_EPOCH_SHIFT;
    const uint8_t mask = (uint8_t)td__wymix(g->lkey ^ (e * TD_WY_P0), e + TD_WY_P1);
    /* The last two bytes written, out[pos - 1] and out[pos - 2]: the chain
     * continues from them. */
    uint32_t last = 0, prev = 0;

    pool[0] = 0;
    /* Pool bytes do not depend on when they are made: make about what the
     * block will use in one run of chunks, fewer top-ups in the loop. */
    {
        uint64_t want = (uint64_t)end * 16 * ml / (16 * ml + (mm16 > min16 ? mm16 : 0));
        if (want > G)
            want = G;
        while (pool_have < want) {
            pool_chunk(succ, mask, &ps, pool + pool_have, &pc);
            pool_have += COMP_CHUNK;
        }
    }
    while (pos < end) {
        uint64_t r = td__wyrand(&s);
        /* Literal run: 1 + two uniforms on [0, ml), mean about ml.  Ranges
         * are reduced by multiply-shift (x * n) >> bits, not by division. */
        uint32_t lit = 1 + (uint32_t)(((r & 0xffff) * ml) >> 16) +
                       (uint32_t)((((r >> 16) & 0xffff) * ml) >> 16);
        if (lit > G - pos)
            lit = G - pos;
        while (pool_have < pp + 1 + TD_MAX(lit + 15, 64u)) {
            pool_chunk(succ, mask, &ps, pool + pool_have, &pc);
            pool_have += COMP_CHUNK;
        }
        if (succ < 256) {
            const uint32_t k = last ^ pool[pp];
            xor_run(out + pos, pool + pp + 1, lit, (uint8_t)k);
            prev = lit >= 2 ? pool[pp + lit - 1] ^ k : last;
            last = pool[pp + lit] ^ k;
        } else {
            xor_run(out + pos, pool + pp + 1, lit, 0);
            prev = lit >= 2 ? pool[pp + lit - 1] : last;
            last = pool[pp + lit];
        }
        pp += lit;
        if (nruns < COMP_MAX_RUNS) {
            rs[nruns] = (uint16_t)pos;
            rl[nruns] = (uint16_t)lit;
            nruns++;
        }
        pos += lit;
        if (pos >= G)
            break;

        /* Match length: MIN + A*x^2 (x uniform in [0,1)), mean match_mean;
         * below MIN the mean is reached by skipping some matches. */
        uint32_t len;
        uint64_t x = (r >> 32) & 0xffff;
        if (mm16 > min16) {
            len = COMP_MIN_MATCH + (uint32_t)((a16 * (x * x)) >> 36);
        } else {
            if ((r >> 48) % min16 >= mm16)
                continue;
            len = COMP_MIN_MATCH;
        }
        /* Source: the start half of a recent literal run, j runs back with
         * j log-uniform below 2^jbits. */
        uint64_t r2 = td__wyrand(&s);
        uint32_t nb = (uint32_t)(((r2 & 0xff) * (jb + 1)) >> 8);
        uint32_t j = (uint32_t)(r2 >> 8) & ((1u << nb) - 1);
        if (fastmod && nruns < TD_COMP_MODM)
            j = (uint32_t)(((uint64_t)(uint32_t)(comp_modm[nruns] * j) * nruns) >> 32);
        else if (j >= nruns)
            j %= nruns;
        uint32_t idx = nruns - 1 - j;
        uint32_t src = rs[idx] + (uint32_t)(((r2 >> 32) * ((rl[idx] + 1u) / 2)) >> 32);
        while (pos - src < COMP_MIN_DIST && idx > 0)
            src = rs[--idx];
        if (pos - src < COMP_MIN_DIST)
            continue;
        if (succ < 256 && pos >= 2) {
            /* The run's last byte becomes a step from both its neighbours
             * (the copy's first byte is fixed), the first such step in the
             * set's order; none for a few d when succ is small. */
            uint32_t d = prev ^ out[src];
            if (g->pair[d]) {
                last = (prev ^ g->pair[d] ^ mask) & 0xff;
                out[pos - 1] = (uint8_t)last;
            }
        }
        if (len > G - pos)
            len = G - pos;
        lz_copy(out + pos, pos - src, len);
        last = out[len <= pos - src ? src + len - 1 : pos + len - 1]; /* no division */
        pos += len;
    }
}

typedef struct comp_state {
    td__comp_gen g;
} comp_state;

/* The kind's block is always TD_COMP_BLOCK (16 KiB); with a smaller G it
 * holds 16K/G generator blocks, built one after another (each may write its
 * slack into the next, which is built after it). */
static int comp_fill_block(const void *state, uint64_t bi, uint8_t *out, uint32_t end)
{
    const td__comp_gen *g = &((const comp_state *)state)->g;
    const uint32_t G = g->block, per = TD_COMP_BLOCK / G;

    for (uint32_t j = 0, at = 0; at < end; j++, at += G)
        td__comp_block(g, bi * per + j, out + at, TD_MIN(G, end - at));
    return TD_OK;
}

static int comp_prepare(const td_options *o, uint64_t end, void **state)
{
    (void)end;
    comp_state *st;
    td__comp_params p;
    uint8_t k[32], lk[32];
    int rc = td__sodium_ready();
    if (rc != TD_OK)
        return rc;
    st = calloc(1, sizeof *st);
    if (!st)
        return TD_ENOMEM;
    const td__comp_table_t *t = td__comp_class(o->compress_block);
    /* ratio * 1024 is exact in binary floating point; llround is exact. */
    td__comp_params_for(t, (uint32_t)llround(o->ratio * 1024.0), &p);
    td__derive_key("libtestdata/compressible/2", o->seed, k);
    td__derive_key("libtestdata/compressible/2/literals", o->seed, lk);
    td__comp_setup(&st->g, td__load64le(k), td__load64le(lk), t->block, &p);
    *state = st;
    return TD_OK;
}

static void comp_release(void *state)
{
    free(state);
}

const td_kind_vtbl td_kind_compressible = {
    .name = "compressible",
    .block = TD_COMP_BLOCK,
    .slack = COMP_SLACK,
    .prepare = comp_prepare,
    .release = comp_release,
    .fill_block = comp_fill_block,
};
