/*
 * The dedup layer: a view over any kind's stream in which a fixed-block
 * deduplicator finds total_blocks / unique_blocks = td_options.dedup.
 *
 * The stream is cut into logical blocks of D = dedup_block bytes.  With
 * dq = round(dedup * 2^16), the number of unique blocks among the first n
 * logical blocks is U(n) = ceil(n * 2^16 / dq).  Logical block i is new when
 * U(i+1) > U(i); it then shows block U(i) of the underlying stream (so new
 * blocks show the underlying stream's blocks 0, 1, 2, ... in order).
 * Otherwise it repeats an earlier unique block: underlying block
 * h(key, i) mod U(i), h a 64-bit mix of a key derived from the seed.
 * Integer arithmetic only; see docs/format.md, "dedup".
 */
#include "internal.h"

#include <math.h>

#define DEDUP_ONE 65536u


int td__dedup_init(td_dedup *d, const td_options *o)
{
    uint8_t k[32];
    int rc;

    memset(d, 0, sizeof *d);
    if (o->dedup == 1.0)
        return TD_OK;
    rc = td__sodium_ready();
    if (rc != TD_OK)
        return rc;
    d->on = 1;
    /* dedup * 2^16 is exact in binary floating point; llround is exact. */
    d->dq = (uint64_t)llround(o->dedup * DEDUP_ONE);
    if (d->dq < DEDUP_ONE)
        d->dq = DEDUP_ONE;
    d->block = o->dedup_block;
    td__derive_key("libtestdata/dedup/1", o->seed, k);
    d->key = td__load64le(k);
    return TD_OK;
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
    return td__wymix(d->key ^ i, (i + 1) * TD_WY_P0 ^ TD_WY_P1) % u;
}

/* The start of a kind block of the underlying stream held in memory. */
typedef struct kcache {
    uint64_t tag;  /* kind block index + 1; 0 = empty */
    size_t valid;  /* bytes of the block held */
    int whole;     /* fill whole blocks (sequential use) or just what is asked */
    uint8_t *buf;
} kcache;

/* Copy underlying bytes [so, so+n) through the cache (kind block size b).
 * Kinds whose blocks are built front to back (compressible) produce a
 * block's first bytes for less than the whole block, so a cache that serves
 * scattered duplicates fills only the prefix it needs. */
static int cached_copy(const td_gen *g, kcache *c, uint64_t so, uint8_t *dst, size_t n)
{
    const uint64_t b = g->vt->block;
    while (n) {
        uint64_t kb = so / b, at = so % b;
        size_t k = (size_t)(b - at) < n ? (size_t)(b - at) : n;
        if (c->tag != kb + 1 || c->valid < at + k) {
            uint64_t start = kb * b, rem = UINT64_MAX - start;
            size_t m = rem < b - 1 ? (size_t)rem + 1 : (size_t)b;
            if (!c->whole && at + k < m)
                m = (size_t)(at + k);
            int rc = g->vt->fill(g->state, start, c->buf, m);
            if (rc != TD_OK) {
                c->tag = 0;
                return rc;
            }
            c->tag = kb + 1;
            c->valid = m;
        }
        memcpy(dst, c->buf + at, k);
        dst += k;
        n -= k;
        so += k;
    }
    return TD_OK;
}

int td__dedup_fill(const td_gen *g, uint64_t offset, uint8_t *buf, size_t len)
{
    const td_dedup *d = &g->dedup;
    const uint64_t db = d->block, kb = g->vt->block;
    const int direct = kb <= db && db % kb == 0;
    kcache cache[2] = {{0, 0, 1, NULL}, {0, 0, 0, NULL}};
    int rc = TD_OK;

    if (!direct) {
        cache[0].buf = malloc(kb);
        cache[1].buf = malloc(kb);
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
        size_t n = (size_t)(db - at) < len ? (size_t)(db - at) : len;
        if (direct && is_new) {
            /* Runs of new blocks are consecutive underlying blocks. */
            for (uint64_t next = i + 1; n < len; next++) {
                int nx;
                (void)td__dedup_map(d, next, &nx);
                if (!nx)
                    break;
                n += len - n < db ? len - n : (size_t)db;
            }
        }
        if (direct)
            rc = g->vt->fill(g->state, src * db + at, buf, n);
        else
            rc = cached_copy(g, &cache[is_new ? 0 : 1], src * db + at, buf, n);
        buf += n;
        len -= n;
        offset += n;
    }
    free(cache[0].buf);
    free(cache[1].buf);
    return rc;
}
