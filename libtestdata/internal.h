/* Internal interfaces shared by the library's source files. Not installed. */
#ifndef TD_INTERNAL_H
#define TD_INTERNAL_H

#include "testdata.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define TD_HIDDEN __attribute__((visibility("hidden")))

/*
 * One kind of data.  A kind turns validated options into an immutable
 * "generator state" once (key derivation, tables), after which fill() may be
 * called from any number of threads at once with the same state.
 */
typedef struct td_kind_vtbl {
    const char *name;
    /* Offsets that are multiples of this are cheapest to start at (a block
     * boundary of block-structured kinds); 1 for kinds with no blocks.
     * Stream buffers and thread splits are aligned to it. */
    uint32_t block;
    /* Option keys, beyond seed and threads, this kind accepts. NULL-ended. */
    const char *const *options;
    /* Kind-specific validation of *o (generic fields are checked already). */
    int (*check)(const td_options *o);
    /* Build the state for *o (already checked).  May set *state to NULL
     * when the kind needs none. */
    int (*prepare)(const td_options *o, void **state);
    void (*release)(void *state);
    /* Bytes [offset, offset+len) of the stream; offset+len never overflows.
     * Must be thread-safe for a shared state. */
    int (*fill)(const void *state, uint64_t offset, uint8_t *buf, size_t len);
} td_kind_vtbl;

extern const td_kind_vtbl td_kind_zero TD_HIDDEN;
extern const td_kind_vtbl td_kind_random TD_HIDDEN;
extern const td_kind_vtbl td_kind_text TD_HIDDEN;
extern const td_kind_vtbl td_kind_compressible TD_HIDDEN;

/* The vtable of a kind, or NULL when unknown. */
TD_HIDDEN const td_kind_vtbl *td__kind_get(int kind);

/* Fork-join thread pool (pool.c). */
typedef struct td_pool td_pool;
TD_HIDDEN int td__pool_new(td_pool **out, unsigned nworkers);
TD_HIDDEN unsigned td__pool_size(const td_pool *p);
/* Run fn on each of njobs jobs (job i at jobs + i*job_size); job 0 runs on
 * the calling thread.  Returns when all are done. */
TD_HIDDEN void td__pool_run(td_pool *p, void (*fn)(void *job), void *jobs, size_t job_size,
                            unsigned njobs);
TD_HIDDEN void td__pool_free(td_pool *p);

/* The dedup layer (dedup.c): how logical dedup blocks map to blocks of
 * the kind's own stream. */
typedef struct td_dedup {
    int on;         /* 0: the stream is the kind's stream unchanged */
    uint32_t block; /* dedup block size D (power of two) */
    uint64_t dq;    /* round(dedup * 2^16) */
    uint64_t key;   /* from the seed, picks which block a duplicate repeats */
} td_dedup;

/* A prepared generator: the kind's vtable plus its state and options. */
typedef struct td_gen {
    const td_kind_vtbl *vt;
    void *state;
    td_dedup dedup;
    td_options opt;
    unsigned nthreads; /* resolved o.threads (0 -> cores), capped */
    td_pool *pool;     /* kept workers (streams); NULL: start threads per call */
} td_gen;

/* Below this many bytes per thread, a thread costs more than it saves. */
#define TD_MIN_BYTES_PER_THREAD (256u * 1024u)
#define TD_MAX_THREADS 256u

/* Validate options and build the generator (o may be NULL). */
TD_HIDDEN int td__gen_init(td_gen *g, int kind, const td_options *o);
TD_HIDDEN void td__gen_fini(td_gen *g);
/* Fill using the generator, split over g->opt.threads threads when large. */
TD_HIDDEN int td__gen_fill(const td_gen *g, uint64_t offset, uint8_t *buf, size_t len);
/* Before many td__gen_fill calls of up to `piece` bytes each: keep a pool
 * for them, so that threads start once, not per call.  Failure is harmless
 * (each call then starts its own threads, or runs on one). */
TD_HIDDEN void td__gen_keep_pool(td_gen *g, size_t piece);
/* Single-threaded fill. */
TD_HIDDEN int td__gen_fill1(const td_gen *g, uint64_t offset, uint8_t *buf, size_t len);

/* Set up *d from checked options (off when o->dedup == 1). */
TD_HIDDEN int td__dedup_init(td_dedup *d, const td_options *o);
/* Underlying block shown by logical dedup block i; *is_new = 1 when it is
 * the first appearance of that block. */
TD_HIDDEN uint64_t td__dedup_map(const td_dedup *d, uint64_t i, int *is_new);
/* Single-threaded fill of a generator with dedup on. */
TD_HIDDEN int td__dedup_fill(const td_gen *g, uint64_t offset, uint8_t *buf, size_t len);
/* Largest accepted dedup ratio (keeps the block arithmetic in 64 bits). */
#define TD_DEDUP_MAX 1048576.0

/* Seed -> 32-byte key, BLAKE2b-256 over a domain string and the seed (LE). */
TD_HIDDEN void td__derive_key(const char *domain, uint64_t seed, uint8_t key[32]);
/* Call sodium_init() exactly once; returns TD_OK or TD_ENOMEM-like failure. */
TD_HIDDEN int td__sodium_ready(void);

/* A finite double in C syntax, independent of the process's locale
 * (options.c).  TD_OK, TD_ESYNTAX, TD_ERANGE (overflow, inf, nan) or
 * TD_ENOMEM; *out is set only on TD_OK. */
TD_HIDDEN int td__parse_double(const char *s, double *out);

/* Number of online CPUs (>= 1). */
TD_HIDDEN unsigned td__ncpus(void);

/* wyrand (Wang Yi): a Weyl sequence through a 64x64->128 multiply-fold.
 * The per-block PRNG of the block-structured kinds and of dedup. */
#define TD_WY_P0 UINT64_C(0xa0761d6478bd642f)
#define TD_WY_P1 UINT64_C(0xe7037ed1a0b428db)

static inline uint64_t td__wymix(uint64_t a, uint64_t b)
{
#ifdef __SIZEOF_INT128__
    unsigned __int128 t = (unsigned __int128)a * b;
    return (uint64_t)(t >> 64) ^ (uint64_t)t;
#else
    uint64_t al = (uint32_t)a, ah = a >> 32, bl = (uint32_t)b, bh = b >> 32;
    uint64_t ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
    uint64_t mid = (ll >> 32) + (uint32_t)lh + (uint32_t)hl;
    uint64_t lo = (mid << 32) | (uint32_t)ll;
    uint64_t hi = hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
    return hi ^ lo;
#endif
}

static inline uint64_t td__wyrand(uint64_t *s)
{
    *s += TD_WY_P0;
    return td__wymix(*s, *s ^ TD_WY_P1);
}

static inline void td__store64le(uint8_t *p, uint64_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(p, &v, 8);
#else
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
#endif
}

static inline uint64_t td__load64le(const uint8_t *p)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
#else
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
#endif
}

#endif
