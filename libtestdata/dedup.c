/*
 * The dedup layer: a view over any kind's stream in which a fixed-block
 * deduplicator finds total_blocks / unique_blocks = td_options.dedup.
 *
 * The stream is cut into logical blocks of D = dedup_block bytes.  With
 * dq = round(dedup * 2^16), the number of unique blocks among the first n
 * logical blocks is U(n) = ceil(n * 2^16 / dq).  Logical block i is new when
 * U(i+1) > U(i); it then shows block U(i) of the underlying stream (so new
 * blocks show the underlying stream's blocks 0, 1, 2, ... in order).
 * Otherwise it repeats an earlier unique block chosen by a 64-bit mix of a
 * key derived from the seed.  When the kind's own blocks hold m = K/D > 1
 * dedup blocks, a duplicate repeats the first dedup block of an earlier kind
 * block, so that it costs a D-byte prefix of one kind block to make, as a
 * new block does, instead of up to a whole kind block.  Integer arithmetic
 * only; see docs/format.md, "dedup".
 */
#include "gen.h"

#include <math.h>

#define DEDUP_ONE 65536u

struct td_dedup {
    const td_kind_vtbl *vt;
    const void *kstate;
    uint32_t block;  /* D, a power of two */
    uint32_t m;      /* kind blocks of block-structured kinds hold m >= 1 dedup blocks */
    uint64_t dq;     /* round(dedup * 2^16) */
    uint64_t key;    /* from the seed: picks which block a duplicate repeats */
};

int td__dedup_new_raw(td_dedup **out, const td_kind_vtbl *vt, const void *kstate, uint32_t block,
                      uint64_t dq, uint64_t key)
{
    td_dedup *d = calloc(1, sizeof *d);

    *out = NULL;
    if (!d)
        return TD_ENOMEM;
    d->vt = vt;
    d->kstate = kstate;
    d->dq = TD_MAX(dq, (uint64_t)DEDUP_ONE);
    d->block = block;
    d->m = (vt->fill_block || vt->ranged) && vt->block > d->block ? vt->block / d->block : 1;
    d->key = key;
    *out = d;
    return TD_OK;
}

int td__dedup_new(td_dedup **out, const td_options *o, const td_kind_vtbl *vt,
                  const void *kstate)
{
    uint8_t k[32];
    int rc;

    *out = NULL;
    if (o->dedup == 1.0)
        return TD_OK;
    rc = td__sodium_ready();
    if (rc != TD_OK)
        return rc;
    td__derive_key("libtestdata/dedup/1", o->seed, k);
    /* dedup * 2^16 is exact in binary floating point; llround is exact. */
    return td__dedup_new_raw(out, vt, kstate, o->dedup_block,
                             (uint64_t)llround(o->dedup * DEDUP_ONE), td__load64le(k));
}

void td__dedup_free(td_dedup *d)
{
    free(d);
}

uint32_t td__dedup_block(const td_dedup *d)
{
    return d->block;
}

/* Unique blocks among the first n logical blocks: ceil(n * 2^16 / dq). */
static inline uint64_t uniq(const td_dedup *d, uint64_t n)
{
    uint64_t q = n / d->dq, r = n % d->dq; /* r < dq <= 2^36 */
    return q * DEDUP_ONE + (r * DEDUP_ONE + d->dq - 1) / d->dq;
}

uint64_t td__dedup_map(const td_dedup *d, uint64_t i, int *is_new)
{
    uint64_t u = uniq(d, i);
    if (uniq(d, i + 1) > u) {
        *is_new = 1;
        return u;
    }
    *is_new = 0;
    uint64_t h = td__wymix(d->key ^ i, (i + 1) * TD_WY_P0 ^ TD_WY_P1);
    /* Kind blocks whose first dedup block has appeared: ceil(u / m). */
    uint64_t started = u / d->m + (u % d->m != 0);
    return d->m * (h % started);
}

/* One kind block of the underlying stream held in memory. */
typedef struct kcache {
    uint64_t tag;  /* kind block index + 1; 0 = empty */
    uint32_t valid; /* bytes of the block held */
    int whole;     /* fill whole blocks (sequential use) or just what is asked */
    uint8_t *buf;
} kcache;

/* Copy underlying bytes [so, so+n) through the cache (n stays inside one
 * dedup block, so inside one kind block). */
static int cached_copy(const td_dedup *d, kcache *c, uint64_t so, uint8_t *dst, size_t n)
{
    const uint32_t K = d->vt->block;
    uint64_t kb = so / K;
    uint32_t at = (uint32_t)(so % K);
    if (c->tag != kb + 1 || c->valid < at + n) {
        uint32_t end = c->whole ? K : at + (uint32_t)n;
        int rc = d->vt->fill_block(d->kstate, kb, c->buf, end);
        if (rc != TD_OK) {
            c->tag = 0;
            return rc;
        }
        c->tag = kb + 1;
        c->valid = end;
    }
    memcpy(dst, c->buf + at, n);
    return TD_OK;
}

int td__dedup_fill(const td_dedup *d, uint64_t offset, uint8_t *buf, size_t len)
{
    const uint64_t db = d->block;
    /* A kind block is made from its start, so pieces inside one are made
     * once, through a cache; a ranged kind makes any piece directly. */
    const int cached = d->m > 1 && !d->vt->ranged;
    kcache cache[2] = {{0, 0, 1, NULL}, {0, 0, 0, NULL}};
    int rc = TD_OK;

    if (cached) {
        size_t cap = (size_t)d->vt->block + d->vt->slack;
        cache[0].buf = malloc(cap);
        cache[1].buf = malloc(cap);
        if (!cache[0].buf || !cache[1].buf) {
            free(cache[0].buf);
            free(cache[1].buf);
            return TD_ENOMEM;
        }
    }
    while (len && rc == TD_OK) {
        uint64_t i = offset / db, at = offset % db;
        int is_new;
        uint64_t src = td__dedup_map(d, i, &is_new);
        size_t n = TD_MIN((size_t)(db - at), len);
        if (!cached && is_new) {
            /* Runs of new blocks are consecutive underlying blocks. */
            for (uint64_t next = i + 1; n < len; next++) {
                int nx;
                (void)td__dedup_map(d, next, &nx);
                if (!nx)
                    break;
                n += TD_MIN(len - n, (size_t)db);
            }
        }
        uint64_t so = src * db + at;
        if (!cached)
            rc = td__kind_fill(d->vt, d->kstate, so, buf, n);
        else if (!is_new && so % d->vt->block == 0 && len >= (size_t)d->vt->block + d->vt->slack)
            /* A duplicate's source is a prefix of a kind block: made in
             * place, as the bytes it may write past n are written later. */
            rc = d->vt->fill_block(d->kstate, so / d->vt->block, buf, (uint32_t)n);
        else
            rc = cached_copy(d, &cache[is_new ? 0 : 1], so, buf, n);
        buf += n;
        len -= n;
        offset += n;
    }
    free(cache[0].buf);
    free(cache[1].buf);
    return rc;
}
