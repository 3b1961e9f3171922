/* The `like` kind: profile model shared by like_profile.c and gen_like.c.
 * Not installed.  The meaning of every field is specified in docs/format.md,
 * section "like". */
#ifndef TD_LIKE_H
#define TD_LIKE_H

#include "kind.h"
#include "like_json.h"

static inline uint32_t td__load32le(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Limits of format version 1 (part of the byte format). */
#define TD_LIKE_MINMATCH 4u
#define TD_LIKE_NBINS 4           /* literal statistics by position in the document */
#define TD_LIKE_NX 32             /* exact distances */
#define TD_LIKE_NVC 64            /* value codes (half-octave buckets) */
#define TD_LIKE_OC_X 3            /* offset classes: 0..2 repeat, 3..34 exact, 35..98 buckets */
#define TD_LIKE_OC_B (TD_LIKE_OC_X + TD_LIKE_NX)
#define TD_LIKE_NOC (TD_LIKE_OC_B + TD_LIKE_NVC)
#define TD_LIKE_NCAT 6            /* literal categories: rep0 rep1 rep2 per0 per1 fresh */
#define TD_LIKE_MAXG 32           /* context groups per literal model */
#define TD_LIKE_SLOTS 4096u       /* every sampling table has 2^12 slots */
#define TD_LIKE_RETRY 16          /* draws of a sequence before giving up on its match */
#define TD_LIKE_CAND 4             /* candidate sources for a bucket distance */
#define TD_LIKE_DOC_MIN 1024u
#define TD_LIKE_DOC_MAX (1u << 20)
#define TD_LIKE_BLOCK (1u << 20)  /* the kind's block: stream offsets align to it */
#define TD_LIKE_MAX_JSON (64u * 1024u)
#define TD_LIKE_NAME_MAX 64

/* Value codes: v < 16 is itself; otherwise two codes per octave. */
static inline unsigned td__like_vcode(uint32_t v)
{
    if (v < 16)
        return v;
    unsigned lg = 31u - (unsigned)__builtin_clz(v);
    return 16u + 2u * (lg - 4u) + ((v >> (lg - 1u)) & 1u);
}
static inline uint32_t td__like_vbase(unsigned c)
{
    if (c < 16)
        return c;
    unsigned lg = (c - 16u) / 2u + 4u;
    return (1u << lg) | ((uint32_t)((c - 16u) & 1u) << (lg - 1u));
}
static inline uint32_t td__like_vspan(unsigned c)
{
    return c < 16 ? 1u : 1u << ((c - 16u) / 2u + 3u);
}
/* The repeat offsets after a match (the parser, the builder's statistics
 * and the generator keep them alike): repeat r (0..2) moves to the front, a
 * new distance (r < 0) is pushed in; nrep counts those set. */
static inline void td__like_rep_update(uint32_t rep[3], unsigned *nrep, int r, uint32_t dist)
{
    if (r == 1) {
        uint32_t t = rep[1];
        rep[1] = rep[0];
        rep[0] = t;
    } else if (r == 2) {
        uint32_t t = rep[2];
        rep[2] = rep[1];
        rep[1] = rep[0];
        rep[0] = t;
    } else if (r < 0) {
        rep[2] = rep[1];
        rep[1] = rep[0];
        rep[0] = dist;
        if (*nrep < 3)
            ++*nrep;
    }
}

/* The total of n counts. */
static inline uint64_t td__like_sum(const uint32_t *c, unsigned n)
{
    uint64_t t = 0;
    for (unsigned i = 0; i < n; i++)
        t += c[i];
    return t;
}

/* Position bin of a document offset. */
/* Upper ends of the position bins 0..2 (bin 3 is open-ended). */
#define TD_LIKE_BIN0_END 2048u
#define TD_LIKE_BIN1_END 16384u
#define TD_LIKE_BIN2_END 131072u

static inline unsigned td__like_bin(uint32_t pos)
{
    return pos < TD_LIKE_BIN0_END ? 0u : pos < TD_LIKE_BIN1_END ? 1u : pos < TD_LIKE_BIN2_END ? 2u : 3u;
}

/* First position past bin (UINT32_MAX for the last one). */
static inline uint32_t td__like_bin_end(unsigned bin)
{
    return bin == 0 ? TD_LIKE_BIN0_END : bin == 1 ? TD_LIKE_BIN1_END : bin == 2 ? TD_LIKE_BIN2_END : UINT32_MAX;
}

/* A byte distribution over context groups: map[prev byte] -> group. */
typedef struct td__like_ctxmodel {
    uint8_t map[256];
    uint32_t ngroups;
    uint32_t cnt[TD_LIKE_MAXG][256]; /* counts, each group's total <= 2^20 */
} td__like_ctxmodel;

/* A context model (format 8, "model.ctx"; like_ctx.c): the records as
 * stored (decoded from base64), and the copies. */
#define TD_LIKE_CTX_MAXK 4          /* context bytes */
#define TD_LIKE_CTX_MAXREC 49152u   /* record bytes (their base64 fills the 64 KiB) */
#define TD_LIKE_CTX_NCOPY 256       /* [len, dist] pairs */
#define TD_LIKE_CTX_MAXGAP (1u << 20)
#define TD_LIKE_CTX_MAXFLOOR 2048u  /* 16 draws of 8 bits, in 1/16 bit */
typedef struct td__like_ctxspec {
    uint32_t order;                 /* K: the longest context */
    uint32_t floor;                 /* least entropy of the last 16 draws, 1/16 bit; 0: none */
    uint32_t gap;                   /* mean bytes between copies; 0: no copies */
    uint32_t ncopies;
    uint32_t copy[TD_LIKE_CTX_NCOPY][2]; /* length, distance */
    uint32_t len;                   /* bytes of rec */
    uint8_t rec[TD_LIKE_CTX_MAXREC];
} td__like_ctxspec;

/* The statistics of a profile (what the JSON "model" object holds). */
typedef struct td__like_model {
    uint32_t has_ctx;                    /* a context model (ctx); the LZ fields below are unused */
    td__like_ctxspec ctx;
    uint32_t doc;                        /* document length */
    uint32_t dedup;                      /* 4 KiB-block dedup ratio * 65536 (65536: none) */
    uint32_t cbyte, cshare;              /* 4 KiB blocks of byte cbyte: share * 65536 (0: none) */
    uint32_t nx;
    uint32_t xdist[TD_LIKE_NX];              /* exact distances, distinct, >= 1 */
    uint32_t per[2];                     /* literal periods (0 = none) */
    uint32_t seq[TD_LIKE_NOC][TD_LIKE_NVC];      /* counts of (offset class, literal-length code) */
    uint32_t ml[TD_LIKE_NOC][TD_LIKE_NVC];       /* counts of match-length codes per offset class */
    uint32_t same[TD_LIKE_NOC];              /* P(same lengths as the previous sequence) * 65536 */
    uint32_t cat[TD_LIKE_NBINS][2][TD_LIKE_NCAT];/* literal categories: [bin][first after a match] */
    td__like_ctxmodel lit[TD_LIKE_NBINS];         /* fresh literals given the previous byte */
    td__like_ctxmodel jun;                    /* first byte of a match given the previous byte */
} td__like_model;

/* Fingerprint codecs stored in a profile (td_codec values). */
#define TD_LIKE_NFP TD_CODEC_COUNT

struct td_profile {
    int builtin;                /* static object: td_profile_free does nothing */
    td__file_id src;            /* the file it was loaded from (td_options_check_output) */
    char name[TD_LIKE_NAME_MAX];
    uint64_t source_bytes;      /* bytes given to the builder */
    uint64_t sampled_bytes;     /* bytes parsed */
    double dedup;               /* 4 KiB-block dedup ratio of the sampled bytes (not one-byte blocks) */
    double const4k;             /* share of 4 KiB blocks made of one repeated byte */
    int have_fp;
    double fp_ratio[TD_LIKE_NFP];
    double fp_ns[TD_LIKE_NFP];
    /* td_profile_fidelity(): the builder's measure of the model it chose
     * (choose_model); not saved, so a loaded profile has none */
    int have_fid;
    double fid_err[TD_PROFILE_FIDELITY_CODECS];
    double fid_ratio[TD_PROFILE_FIDELITY_CODECS]; /* the sample's */
    uint32_t fid_sample;                          /* the sample's bytes measured */
    td__like_model m;
    uint8_t digest[32];         /* BLAKE2b-256 of the canonical model JSON */
    /* gen_like.c's sampling tables for m, made on the first prepare and
     * shared, counted, by the states made from it: a cache, so a const
     * profile still sets it (atomically).  NULL until then. */
    void *tables;
};

/* Drops the profile's reference to its tables (td_profile_free). */
TD_HIDDEN void td__like_tables_unref(void *tables);

/* Canonical JSON of a model (appended to o); the digest is over these bytes. */
TD_HIDDEN void td__like_model_json(const td__like_model *m, td__json_out *o);
/* Validate a model (all ranges); TD_OK or TD_EINVAL with a message. */
TD_HIDDEN int td__like_model_check(const td__like_model *m, char *msg, size_t cap);
TD_HIDDEN int td__like_profile_finalize(td_profile *p);

/* out[i] = p[in[i]] for i < n: how every block of `like` is made from its
 * base block (gen_like.c).  td__like_translators() stores the versions
 * this CPU can run, widest first, and returns how many (at least one: the
 * portable one, last); all give the same bytes. */
typedef void td__like_translate_fn(const uint8_t *p, const uint8_t *in, uint8_t *out, size_t n);
TD_HIDDEN unsigned td__like_translators(td__like_translate_fn *fn[3]);

/* ---- Context models (like_ctx.c) ---- */

/* Checks m->ctx (records well formed, sorted, prefix-closed; copies and
 * ranges): TD_OK or TD_EINVAL with a message. */
TD_HIDDEN int td__like_ctx_check(const td__like_ctxspec *c, char *msg, size_t cap);
/* "ctx":{...} of the canonical JSON (appended to o). */
TD_HIDDEN void td__like_ctx_json(const td__like_ctxspec *c, td__json_out *o);
/* Reads the "ctx" object n into c (ranges only; td__like_ctx_check after). */
TD_HIDDEN int td__like_ctx_read(const td__json_doc *d, const td__json_node *n, td__like_ctxspec *c,
                                char *msg, size_t cap);

/* The compiled form a generator uses (made once per profile). */
typedef struct td__like_ctxtab td__like_ctxtab;
TD_HIDDEN int td__like_ctx_compile(const td__like_ctxspec *c, td__like_ctxtab **out);
TD_HIDDEN void td__like_ctx_free(td__like_ctxtab *t);
/* A document from draw state s: out[0, end) at least (generation stops once
 * pos >= end), of a document cut at lim (out holds lim bytes; the bytes
 * before lim do not depend on lim). */
TD_HIDDEN void td__like_ctx_doc(const td__like_ctxtab *t, uint64_t s, uint8_t *out, uint32_t end,
                                uint32_t lim);

/* The builder's side: the sample's contexts and long repeats, counted once,
 * from which td__like_ctx_make writes models of any setting. */
typedef struct td__like_ctxstats td__like_ctxstats;
TD_HIDDEN int td__like_ctx_stats(const uint8_t *const *buf, const uint32_t *len, size_t n,
                                 td__like_ctxstats **out);
TD_HIDDEN void td__like_ctx_stats_free(td__like_ctxstats *s);
/* Sets m->ctx (and has_ctx) from s: contexts of order <= K, those of order
 * >= 2 kept by frequency within budget record bytes, each with its E most
 * frequent next bytes; copies at copy_rate times the sample's rate. */
TD_HIDDEN int td__like_ctx_make(const td__like_ctxstats *s, unsigned K, size_t budget, unsigned E,
                                double copy_rate, td__like_model *m);

/* Built-in profiles (like_builtin.c, generated by tools/gen_like_profiles.py). */
typedef struct td__like_builtin {
    const char *name;
    const char *json;
} td__like_builtin;
extern const td__like_builtin td__like_builtins[] TD_HIDDEN;
extern const unsigned td__like_nbuiltins TD_HIDDEN;
/* [i]: built-in i once parsed (like_profile.c, builtin_get), NULL until its
 * first use.  Sized by the generator, so nothing is allocated for it. */
extern td_profile *td__like_builtin_objs[] TD_HIDDEN;

/* Largest-remainder sampling table: slot i holds the index of an entry;
 * entry k gets floor(c_k * 4096 / T) slots plus one if its remainder
 * (c_k * 4096 mod T) is among the largest (ties to the lower index). */
TD_HIDDEN int td__like_slots(const uint32_t *cnt, unsigned n, uint16_t *out);

#endif
