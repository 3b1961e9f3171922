/*
 * Text models (internal): the compiled form of a model file, shared by the
 * builder (text_build.c), the loader (text_model.c) and the generator
 * (gen_text.c).  The file format is specified in docs/format.md, section
 * "Text models"; the generator in section "text".
 */
#ifndef TD_TEXT_MODEL_H
#define TD_TEXT_MODEL_H

#include "kind.h"

#include <stdint.h>

#define TM_MAGIC "TDTXTMOD"
#define TM_VERSION 1u
/* Files with a RUNS section (repeated lines: text_build.c measures them,
 * gen_text.c copies them) are version 2; others stay version 1, byte for
 * byte, so that a library that predates runs refuses only the files it
 * cannot follow, with TD_EMODELVERSION. */
#define TM_VERSION_RUNS 2u
#define TM_HEADER 56u     /* magic, version, flags, payload length, BLAKE2b-256 */

#define TM_WORD_MAX 32u   /* bytes (and so columns) of a word */
#define TM_SEP_MAX 32u    /* bytes of a separator */
#define TM_SEP_COLS 15u   /* columns of a separator: a line of indentation, separator
                            * tail, word, separator head and trailing space fits in 72 */
#define TM_IND_MAX 8u     /* bytes of an indentation (spaces and tabs) */
#define TM_WIDTH 72u      /* no line is longer (in code points) */
#define TM_WIDTH_MIN 16u
#define TM_TAIL_CPS 24u   /* code points of a generated rare word */
#define TM_MAX_ORDER 6u   /* of the character model */
#define TM_CLASSES 3u     /* after a plain separator, a sentence end, a paragraph start */
#define TM_COUNT_MAX 0x7fffffffu /* totals of a distribution stay below 2^31 */
#define TM_TAIL_RANK_MAX (1u << 27)
#define TM_CACHE_BITS 12u
/* Runs (docs/format.md, text, "Runs"): a run starts at a line of at least
 * TM_RUN_MIN bytes that repeats an earlier one; runs are counted by
 * their length and distance in log2 buckets 0..TM_RUN_NB-1 (bucket k:
 * [2^k, 2^(k+1))), together: the long runs of a corpus are the far ones.  The
 * distance buckets end at 2^TM_RUN_NB = 4 text blocks: a run is copied
 * from at most 4 blocks back, which a reader makes before the block. */
#define TM_RUN_MIN 20u
#define TM_RUN_NB 18u
#define TM_RUN_BACK 4u
#define TM_RUN_RATE_BITS 24u /* rate: runs per 2^24 bytes outside runs */
#define TM_RUN_IDX_BITS 8u   /* tm_runs.start: by a draw's top 8 bits */

/* One slot of an alias table (Walker/Vose), 8 bytes: the slot's value and
 * its alias's value (24 bits each) and a 16-bit acceptance threshold split
 * over the top bytes. */
typedef struct tm_alias {
    uint32_t vp; /* value | (threshold & 0xFF) << 24 */
    uint32_t op; /* alias value | (threshold >> 8) << 24 */
} tm_alias;
#define TM_NIL 0xFFFFFFu /* value: back off, or end of word */

/* A distribution: n alias slots starting at ent[off].  Distributions with
 * backoff have one more slot whose value is TM_BACKOFF. */
typedef struct tm_dist {
    uint32_t off; /* first slot in the owning array */
    uint32_t n;   /* number of slots (0: empty, always back off) */
} tm_dist;
#define TM_BACKOFF 0xFFFFFFFFu /* (stored as TM_NIL) */

/* What the generator needs about a word, in half a cache line. */
typedef struct tm_word {
    uint32_t off;      /* string in the pool */
    uint8_t len, cols; /* bytes, code points */
    uint16_t pad;
    tm_dist sep;       /* separator after it (sep * 2 + final), with backoff */
    tm_dist big[2];    /* next word after it and a plain / sentence-end separator */
} tm_word;

/* A string of the model (word or separator) in the string pool. */
typedef struct tm_str {
    uint32_t off;  /* in the pool */
    uint8_t len;   /* bytes */
    uint8_t cols;  /* code points */
    /* separators only: split at the last run of spaces and tabs */
    uint8_t head_len, head_cols; /* before the run (the whole string if final) */
    uint8_t gap_len, gap_cols;   /* the run: where a line may break */
    uint8_t tail_len, tail_cols; /* after it */
    uint8_t cls;   /* class of the next word: 0 plain, 1 sentence end */
} tm_str;

typedef struct tm_style {
    uint8_t ind1[TM_IND_MAX], ind2[TM_IND_MAX];
    uint8_t ind1_len, ind2_len;
    uint8_t trail;
} tm_style;

/* Parameters of the generator, stored in the PARM section. */
typedef struct tm_params {
    uint32_t eol;        /* 0: "\n", 1: "\r\n" */
    uint32_t cache_mu;   /* continuation-cache probability, /65536 */
    uint32_t copy_mu;    /* same, right after a word that came from the cache */
    uint32_t recent_mu;  /* a backed-off word is a recent word, /65536 */
    uint32_t recent_n;   /* ... one of the last recent_n words */
    uint32_t wb_word;    /* Witten-Bell weight of word backoff, /256 */
    uint32_t wb_sep;     /* same for separators */
    uint32_t tail_r;     /* offset R of the rare-word rank law P(r) ~ (r+R)^-2 */
    uint32_t char_order; /* order of the character model, 1..TM_MAX_ORDER */
    uint32_t char_min;   /* least count of a character context */
    uint32_t max_tokens; /* a paragraph ends after this many words */
} tm_params;

/* The RUNS section, compiled: rate 0 when the file has none. */
typedef struct tm_runs {
    uint32_t rate;                /* runs per 2^TM_RUN_RATE_BITS bytes outside runs */
    uint32_t share;               /* of the corpus in runs, 1/65536 (model info only) */
    /* cumulative counts of runs by (length bucket, distance bucket), at
     * length * TM_RUN_NB + distance */
    uint32_t cum[TM_RUN_NB * TM_RUN_NB];
    /* start[j]: the first pair whose cum exceeds floor(j * total / 2^8), where
     * a search for a draw with top bits j can start (the same pair as a
     * search of all of cum, found in a few steps) */
    uint16_t start[1u << TM_RUN_IDX_BITS];
} tm_runs;

/* Character-model state: a context of up to char_order code points; its
 * alias table gives the next state (whose last code point is the one
 * emitted) or TM_END. */
typedef struct tm_cstate {
    uint32_t off, n;
    uint32_t cp;    /* last code point of the context (0 for the start) */
    uint8_t cplen;  /* its UTF-8 length */
    uint8_t utf8[4];
} tm_cstate;
#define TM_END 0xffffffffu

struct td_model {
    int refs; /* atomic */
    int builtin;
    uint8_t *data; /* the file, header included */
    size_t size;
    uint8_t hash[32]; /* BLAKE2b-256 of the payload (also in the header) */
    td__file_id src;  /* the file it was loaded from (td_options_check_output) */

    tm_params p;
    uint32_t version; /* of the file: TM_VERSION, or TM_VERSION_RUNS */
    tm_runs runs;
    uint32_t V;    /* head words; id V is the rare-word (UNK) token */
    uint32_t NS;   /* separators */
    uint8_t *pool; /* strings, padded by 64 bytes */
    tm_word *words; /* V + 1; words[V] is the rare word (no string) */
    tm_str *seps;  /* NS */

    tm_alias *ent; /* all alias slots */
    tm_dist uni[TM_CLASSES];
    tm_dist sepg;  /* all separators */
    tm_dist lead;
    tm_dist style; /* values index styles */
    tm_dist width; /* values are widths */
    tm_style *styles;
    uint32_t nstyles;
    uint32_t final_sep; /* sep * 2 + 1 used to end a paragraph early */

    /* character model for rare words */
    uint32_t ncstates;
    tm_cstate *cst;
    tm_alias *cent;    /* values: next state or TM_END */
    uint32_t cstart;   /* state of an empty word */
    uint64_t tk[2];    /* key of rare-word spellings, from the model hash */
    /* Spellings of ranks below TM_TCACHE_N (td__tm_tail_cache): NULL until
     * the first large fill builds it; published once with a CAS. */
    uint8_t *tcache;
    /* Bytes of round 0 made from the model by streams (gen_text.c), which
     * decide when the spelling cache pays for itself; atomic. */
    uint64_t r0_made;
    /* Classes of the head words for the permutation of rounds (gen_text.c):
     * NULL until first needed (td__tm_rot), published once with a CAS. */
    struct tm_rot *rot;
};

/* The head words in classes of equal length, code points, shape (first
 * character a digit, a capital, or other) and frequency band (docs/format.md, text, "Rounds"), class by class in
 * order of their first id, ids ascending within a class. */
typedef struct tm_rot {
    uint32_t nc;       /* classes (at most TM_ROT_MAXC) */
    uint32_t *start;   /* nc + 1: class q is mem[start[q] .. start[q + 1]) */
    uint32_t *mem_off; /* V: pool offset of each member, class by class */
    uint32_t *gidx;    /* V: index of word w in mem_off[] */
    uint16_t *cls;     /* V: class of word w */
} tm_rot;
/* keys (16 bands); at most 16 * 528 * 3 classes (cols <= len) */
#define TM_ROT_MAXC (16u * 33u * 33u * 3u)

/* Rare-word spelling cache: TM_TCACHE_N entries of 32 bytes, the word's
 * bytes (uncapitalised) in 0..29, its length at 30 (TM_TCACHE_NONE: longer,
 * spell it) and its code points at 31.  Ranks follow a Zipf tail, so the
 * first 2^16 cover about two thirds of the rare words of the built-in model. */
#define TM_TCACHE_N (1u << 16)
#define TM_TCACHE_NONE 0xFFu

/* Sampling: slot from bits 0..31 of r, acceptance from bits 32..47; bits
 * 48..63 are left for the caller. */
static inline uint32_t tm_pick(const tm_alias *s, uint32_t acc16)
{
    uint32_t t = (s->vp >> 24) | (s->op >> 24) << 8;
    return (acc16 < t ? s->vp : s->op) & 0xFFFFFF;
}

static inline uint32_t tm_sample(const tm_alias *e, uint32_t n, uint64_t r)
{
    return tm_pick(e + (uint32_t)(((uint64_t)(uint32_t)r * n) >> 32), (uint32_t)(r >> 32) & 0xFFFF);
}

/* The same from 32 bits: slot from bits 0..15, acceptance from 16..31. */
static inline uint32_t tm_sample32(const tm_alias *e, uint32_t n, uint32_t h)
{
    return tm_pick(e + (((h & 0xFFFF) * n) >> 16), h >> 16);
}

/* Parse and compile a model file (copied).  flags: TM_LOAD_BUILTIN (the
 * built-in model, never freed; buf, linked in, is used in place),
 * TM_LOAD_TRUSTED (the header's hash is known good: computed by the caller,
 * or the built-in's: not checked again),
 * TM_LOAD_OWN (buf is malloc'd and taken, not copied, on success),
 * TM_LOAD_HASH_CHARS (the character model compiled by the older, slower
 * way, which every model takes whose alphabet is too large to sort: tests
 * compare the two).  TD_OK, TD_EMODEL, TD_EMODELVERSION, TD_ENOMEM. */
#define TM_LOAD_BUILTIN 1
#define TM_LOAD_TRUSTED 2
#define TM_LOAD_OWN 4
#define TM_LOAD_HASH_CHARS 8
TD_HIDDEN int td__tm_load(td_model **out, const void *buf, size_t len, int flags);

/* Serialized built-in model (text_model_en.c). */
extern const unsigned char td__tm_builtin_data[] TD_HIDDEN;
extern const size_t td__tm_builtin_size TD_HIDDEN;

/* The file of m (not shared yet) rewritten with cache_mu = copy_mu = mu,
 * the same length and tables (the builder's calibration): take its bytes,
 * both rates and its hash, the key of its text and rare-word spellings. */
TD_HIDDEN void td__tm_set_cache(td_model *m, const uint8_t *data, uint32_t mu);

/* Take / drop a reference. */
TD_HIDDEN void td__tm_ref(const td_model *m);
TD_HIDDEN void td__tm_unref(const td_model *m);

/* Generator of rare-word spelling rank r into out (at least TM_WORD_MAX + 32
 * bytes); returns the length in bytes, *cols the code points. */
TD_HIDDEN unsigned td__tm_tail_word(const td_model *m, uint32_t rank, int cap, uint8_t *out,
                                    unsigned *cols);

/* The spelling cache of m, built on first use (NULL if out of memory: the
 * caller spells). */
TD_HIDDEN const uint8_t *td__tm_tail_cache(const td_model *m);

/* The range over which the builder calibrates cache_mu and copy_mu (in
 * 1/65536): 0.25 (0.3 until format 10: a small corpus's text with wb_word
 * 64 then stayed 3.6% more compressible than the corpus under zstd -3) to
 * 0.85.  Both are 3-byte vars (2^14 and up), so the calibrated file keeps
 * its length (text_build.c, cal_store). */
#define TM_CAL_LO 16384u
#define TM_CAL_HI 55705u

/* Bytes of text's round 0, which is made word by word; later rounds are
 * made from its blocks (gen_text.c, docs/format.md, text, "Rounds"). */
#define TM_ROUND0 ((uint64_t)1 << 20)

/* Text of model m with seed as td_fill() of TD_TEXT makes it, for a model
 * filled once, as the builder's calibration does: td__text_once_fill() does
 * not build the model's spelling cache (at a few MiB it costs more than it
 * saves).  When bytes up to end reach past the first MiB, it keeps the
 * whole blocks of the first MiB it makes that text up to end is made from,
 * so that threads filling parts of one state at once make each of them once
 * (a part past the first MiB waits for the thread making the blocks it
 * needs). */
TD_HIDDEN int td__text_once_new(const td_model *m, uint64_t seed, uint64_t end, void **state);
TD_HIDDEN int td__text_once_fill(const void *state, uint64_t offset, uint8_t *buf, size_t len);
TD_HIDDEN void td__text_once_free(void *state);

/* The round classes of m, built on first use (NULL if out of memory). */
TD_HIDDEN const tm_rot *td__tm_rot(const td_model *m);

/* A rare word respelled for a later round of text (docs/format.md, text,
 * "Rounds"): the character model walked from the start with wyrand state s,
 * each code point drawn until it has the byte length of orig's code point
 * at that place (from the start state after TM_RESPELL_TRIES / 2 draws, at
 * most TM_RESPELL_TRIES draws); writes len bytes at out
 * (at least len + 4) and returns len, or 0 if a place failed. */
#define TM_RESPELL_TRIES 16
TD_HIDDEN unsigned td__tm_respell(const td_model *m, uint64_t s, const uint8_t *orig, unsigned len,
                                  uint8_t *out);

/* Whether w's first code point is a capital that td__tm_cap makes. */
TD_HIDDEN int td__tm_is_cap(const uint8_t *w, unsigned len);

/* Capitalise the first letter of out[0..len) in place (the rare words of
 * sentence starts). */
TD_HIDDEN void td__tm_cap(uint8_t *out, unsigned len);

/* UTF-8 helpers (text_model.c). */
TD_HIDDEN unsigned td__utf8_decode(const uint8_t *p, size_t n, uint32_t *cp);
TD_HIDDEN unsigned td__utf8_encode(uint32_t c, uint8_t *out);

/* Radix sort of k[0..n), with tmp (n keys) as scratch, or its own if NULL;
 * TD_OK or TD_ENOMEM. */
TD_HIDDEN int td__tm_radix_sort(uint64_t *k, size_t n, uint64_t *tmp);

/* Builder parameters overriding the defaults (tools and experiments). */
TD_HIDDEN void td__tm_builder_param(td_model_builder *b, const char *name, uint32_t value);

#endif
