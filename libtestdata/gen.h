/*
 * The generator engine (gen.c): a kind's state, optionally wrapped in the
 * dedup layer (dedup.c), filled single-threaded or split over a pool.
 * Over kind.h and pool.h; used by stream.c, verify.c, output.c.
 * Not installed.
 */
#ifndef TD_GEN_H
#define TD_GEN_H

#include "kind.h"
#include "pool.h"

/* Below this many bytes per thread, a thread costs more than it saves. */
#define TD_MIN_BYTES_PER_THREAD (256u * 1024u)

/* The dedup layer: a view over a kind's stream in which a fixed-block
 * deduplicator finds the ratio td_options.dedup. */
typedef struct td_dedup td_dedup;

/* A prepared generator. */
typedef struct td_gen {
    const td_kind_vtbl *vt;
    void *state;       /* the kind's state */
    td_dedup *dedup;   /* the dedup layer over it, or NULL */
    uint32_t align;    /* thread pieces and buffers start at multiples of it */
    unsigned nthreads; /* resolved o.threads (0 -> cores), capped */
    td_pool *pool;     /* kept workers; NULL: each fill starts its own */
    td_options opt;
} td_gen;

/* Check the options (NULL: defaults) and build the generator for reads
 * below end (UINT64_MAX: anywhere; a hint, see td_kind_vtbl.prepare).  On
 * failure *g is zeroed (td__gen_fini is harmless). */
TD_HIDDEN int td__gen_init(td_gen *g, int kind, const td_options *o, uint64_t end);
TD_HIDDEN void td__gen_fini(td_gen *g);
/* Fill, split over up to g->nthreads threads when large enough. */
TD_HIDDEN int td__gen_fill(td_gen *g, uint64_t offset, uint8_t *buf, size_t len);
/* Nonzero when any range of g's stream costs only its own bytes (zero,
 * random, like, with or without dedup), so that a small read at a random
 * offset need not make the aligned window around it. */
static inline int td__gen_ranged(const td_gen *g)
{
    return g->vt->ranged || !g->vt->fill_block;
}
/* Single-threaded fill (thread-safe for a shared generator). */
TD_HIDDEN int td__gen_fill1(const td_gen *g, uint64_t offset, uint8_t *buf, size_t len);
/* Before many fills of up to `piece` bytes: keep a pool of the useful size
 * for them, so threads start once, not per call.  Failure is harmless. */
TD_HIDDEN void td__gen_keep_pool(td_gen *g, size_t piece);
/* Threads useful for `piece` bytes at once (>= 1). */
TD_HIDDEN unsigned td__gen_useful_threads(const td_gen *g, size_t piece);

/* The dedup layer (dedup.c).  td__dedup_new returns TD_OK with *out NULL
 * when o->dedup == 1 (no layer). */
TD_HIDDEN int td__dedup_new(td_dedup **out, const td_options *o, const td_kind_vtbl *vt,
                            const void *kstate);
/* A dedup layer with its parameters given: blocks of `block` bytes (a
 * power of two), dq = round(ratio * 2^16), key picks the repeats (the like
 * kind's mapping of its sample's own duplicates). */
TD_HIDDEN int td__dedup_new_raw(td_dedup **out, const td_kind_vtbl *vt, const void *kstate,
                                uint32_t block, uint64_t dq, uint64_t key);
TD_HIDDEN void td__dedup_free(td_dedup *d);
TD_HIDDEN uint32_t td__dedup_block(const td_dedup *d);
TD_HIDDEN int td__dedup_fill(const td_dedup *d, uint64_t offset, uint8_t *buf, size_t len);
/* Underlying dedup block shown by logical block i; *is_new = 1 when it is
 * the first appearance of that block. */
TD_HIDDEN uint64_t td__dedup_map(const td_dedup *d, uint64_t i, int *is_new);

#endif
