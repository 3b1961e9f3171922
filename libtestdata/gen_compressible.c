/*
 * TD_COMPRESSIBLE: LZ77-shaped data with a target compression ratio.
 *
 * The stream is a sequence of independent 16 KiB blocks.  Each block is
 * built like the output of an LZ77 decoder: literal runs of uniformly random
 * bytes alternate with back-references (copies of earlier bytes of the same
 * block, so always within a 32 KiB window).  The ratio is set by the share
 * of copied bytes; the literal-run and match-length means for a ratio come
 * from a calibrated table (compressible_table.h, produced by
 * tools/calibrate_compressible.py) interpolated with integer arithmetic.
 *
 * Everything on the byte path is integer arithmetic on 64-bit words; the
 * only floating-point step is quantising o->ratio to 1/1024 once, in
 * prepare (exact in IEEE-754 double).  See docs/format.md, "compressible".
 */
#include "compressible.h"

#include <math.h>

#include "compressible_table.h"

#define COMP_BLOCK TD_COMP_BLOCK
/* Copies never come from closer than this, so 8-byte chunked copying equals
 * byte-by-byte LZ copying, and no short period repeats. */
#define COMP_MIN_DIST 16u
#define COMP_MIN_MATCH 8u
#define COMP_MAX_RUNS 4096u
#define COMP_SLACK TD_COMP_SLACK


typedef struct comp_state {
    uint64_t key;
    td__comp_params p;
} comp_state;

/* Parameters for a ratio quantised to 1/1024 (rq = ratio * 1024). */
void td__comp_params_for(uint32_t rq, td__comp_params *p)
{
    const td__comp_row *t = td__comp_table;
    unsigned n = TD_COMP_TABLE_ROWS, k;

    if (rq <= t[0].rq) {
        *p = (td__comp_params){t[0].lit_mean, t[0].match_mean16, t[0].jbits};
        return;
    }
    for (k = 1; k < n - 1 && rq > t[k].rq; k++)
        ;
    if (rq >= t[k].rq) {
        *p = (td__comp_params){t[k].lit_mean, t[k].match_mean16, t[k].jbits};
        return;
    }
    /* Linear interpolation between rows k-1 and k, rounded down. */
    const td__comp_row *a = &t[k - 1], *b = &t[k];
    uint64_t num = rq - a->rq, den = b->rq - a->rq;
    p->lit_mean = (uint32_t)(((uint64_t)a->lit_mean * (den - num) + (uint64_t)b->lit_mean * num) / den);
    p->match_mean16 =
        (uint32_t)(((uint64_t)a->match_mean16 * (den - num) + (uint64_t)b->match_mean16 * num) / den);
    p->jbits = num * 2 < den ? a->jbits : b->jbits;
}

/* Copy len bytes from dst - dist to dst in 8-byte chunks (dist >= 8); may
 * write up to 7 bytes past dst + len. */
static inline void lz_copy(uint8_t *dst, size_t dist, size_t len)
{
    const uint8_t *src = dst - dist;
    for (size_t i = 0; i < len; i += 8) {
        uint64_t v;
        memcpy(&v, src + i, 8);
        memcpy(dst + i, &v, 8);
    }
}

/* Block bi of the stream into out[0 .. COMP_BLOCK + COMP_SLACK); only
 * out[0 .. end) is guaranteed (generation stops once it is complete). */
void td__comp_block(const td__comp_params *p, uint64_t key, uint64_t bi, uint8_t *out,
                    uint32_t end)
{
    uint16_t rs[COMP_MAX_RUNS], rl[COMP_MAX_RUNS];
    uint32_t nruns = 0, pos = 0;
    const uint64_t ml = p->lit_mean ? p->lit_mean : 1;
    const uint64_t mm16 = p->match_mean16;
    const uint64_t min16 = 16u * COMP_MIN_MATCH;
    const uint64_t a16 = mm16 > min16 ? 3 * (mm16 - min16) : 0;
    const uint32_t jb = p->jbits;
    uint64_t s = td__wymix(key ^ (bi * TD_WY_P1), bi + TD_WY_P0);

    while (pos < end) {
        uint64_t r = td__wyrand(&s);
        /* Literal run: 1 + two uniforms on [0, ml), mean about ml.  Ranges
         * are reduced by multiply-shift (x * n) >> bits, not by division. */
        uint32_t lit = 1 + (uint32_t)(((r & 0xffff) * ml) >> 16) +
                       (uint32_t)((((r >> 16) & 0xffff) * ml) >> 16);
        if (lit > COMP_BLOCK - pos)
            lit = COMP_BLOCK - pos;
        for (uint32_t k = 0; k < lit; k += 8)
            td__store64le(out + pos + k, td__wyrand(&s));
        if (nruns < COMP_MAX_RUNS) {
            rs[nruns] = (uint16_t)pos;
            rl[nruns] = (uint16_t)lit;
            nruns++;
        }
        pos += lit;
        if (pos >= COMP_BLOCK)
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
        if (j >= nruns)
            j %= nruns;
        uint32_t idx = nruns - 1 - j;
        uint32_t src = rs[idx] + (uint32_t)(((r2 >> 32) * ((rl[idx] + 1u) / 2)) >> 32);
        while (pos - src < COMP_MIN_DIST && idx > 0)
            src = rs[--idx];
        if (pos - src < COMP_MIN_DIST)
            continue;
        if (len > COMP_BLOCK - pos)
            len = COMP_BLOCK - pos;
        lz_copy(out + pos, pos - src, len);
        pos += len;
    }
}

static int comp_fill_block(const void *state, uint64_t bi, uint8_t *out, uint32_t end)
{
    const comp_state *st = state;
    td__comp_block(&st->p, st->key, bi, out, end);
    return TD_OK;
}

static int comp_prepare(const td_options *o, void **state)
{
    comp_state *st;
    uint8_t k[32];
    int rc = td__sodium_ready();
    if (rc != TD_OK)
        return rc;
    st = calloc(1, sizeof *st);
    if (!st)
        return TD_ENOMEM;
    /* ratio * 1024 is exact in binary floating point; llround is exact. */
    td__comp_params_for((uint32_t)llround(o->ratio * 1024.0), &st->p);
    td__derive_key("libtestdata/compressible/1", o->seed, k);
    st->key = td__load64le(k);
    *state = st;
    return TD_OK;
}

static void comp_release(void *state)
{
    free(state);
}

const td_kind_vtbl td_kind_compressible = {
    .name = "compressible",
    .block = COMP_BLOCK,
    .slack = COMP_SLACK,
    .prepare = comp_prepare,
    .release = comp_release,
    .fill_block = comp_fill_block,
};
