/*
 * Profiles for the `like` kind: building one from a sample, loading and
 * saving the JSON form, built-in profiles, and the canonical digest.
 *
 * The builder keeps up to sample_bytes of the input in regions of at most
 * 1 MiB (all of it when it is small; otherwise regions spread over the
 * input: evenly when the size is known, by doubling stride when it is
 * not), so memory is bounded whatever the input size.  finish() parses each
 * region with an LZ77 parser (hash chains, lazy matching, repeat offsets)
 * and turns the parse into the statistics of the model: the joint
 * distribution of literal-run lengths and offset classes, match lengths per
 * class, literal categories and context models per position bin.  The model
 * holds counts only: nothing of the sample's content but byte values and
 * their frequencies.
 */
#include "like.h"
#include "pool.h"
#include "like_json.h"
#include "codec.h"

#include <bzlib.h>
#include <errno.h>
#include <fcntl.h>
#include <lz4.h>
#include <lz4hc.h>
#include <math.h>
#include <pthread.h>
#include <sodium.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define REGION TD_LIKE_DOC_MAX
#define DEFAULT_SAMPLE (8ull * 1024 * 1024)
#define FP_BYTES TD_ANALYZE_BLOCK /* documented so (td_profile_options) */

/* ------------------------------------------------------------------------ */
/* Sampling tables                                                           */
/* ------------------------------------------------------------------------ */

typedef struct slot_rem {
    uint64_t rem;
    uint32_t idx;
} slot_rem;

static int cmp_rem(const void *a, const void *b)
{
    const slot_rem *x = a, *y = b;
    if (x->rem != y->rem)
        return x->rem > y->rem ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

int td__like_slots(const uint32_t *cnt, unsigned n, uint16_t *out)
{
    uint64_t T = 0;
    unsigned used = 0, k = 0, nr = 0;
    uint32_t *q;
    slot_rem *rem;
    for (unsigned i = 0; i < n; i++)
        T += cnt[i];
    if (T == 0 || n > 65536)
        return TD_EINVAL;
    q = malloc(n * sizeof *q);
    rem = malloc(n * sizeof *rem);
    if (!q || !rem) {
        free(q);
        free(rem);
        return TD_ENOMEM;
    }
    for (unsigned i = 0; i < n; i++) {
        uint64_t x = (uint64_t)cnt[i] * TD_LIKE_SLOTS;
        q[i] = (uint32_t)(x / T);
        used += q[i];
        if (cnt[i])
            rem[nr++] = (slot_rem){x % T, i};
    }
    /* The leftover slots (fewer than the nonzero entries) go to the largest
     * remainders, ties to the lower index. */
    qsort(rem, nr, sizeof *rem, cmp_rem);
    for (unsigned j = 0; used < TD_LIKE_SLOTS; j++, used++)
        q[rem[j].idx]++;
    for (unsigned i = 0; i < n; i++)
        for (uint32_t j = 0; j < q[i]; j++)
            out[k++] = (uint16_t)i;
    free(q);
    free(rem);
    return TD_OK;
}

/* ------------------------------------------------------------------------ */
/* The LZ77 parse                                                            */
/* ------------------------------------------------------------------------ */

typedef struct pseq {
    uint32_t ll, ml, of; /* literal run, match length (0: trailing literals), distance */
    int32_t rep;         /* 0..2 when the distance is a repeat offset, else -1 */
} pseq;

#define HBITS 17
#define CHAIN 32

static inline uint32_t h4(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return (v * 2654435761u) >> (32 - HBITS);
}

static inline uint32_t mlen(const uint8_t *a, const uint8_t *b, const uint8_t *end)
{
    const uint8_t *s = b;
    while (b + 8 <= end) {
        uint64_t x, y;
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        if (x != y)
            return (uint32_t)(b - s) + (uint32_t)(__builtin_ctzll(x ^ y) >> 3);
        a += 8;
        b += 8;
    }
    while (b < end && *a == *b) {
        a++;
        b++;
    }
    return (uint32_t)(b - s);
}

/* Walk the hash chain of buf + x, the positions lo[0..hi - lo) newest last
 * (so from hi[-1] down), for its match: *len is the length to beat, raised
 * (with *dist) to the longest found, the first one of that length, over
 * CHAIN candidates, stopping at one of 4096 or more.  A candidate whose byte
 * at offset *len differs cannot be longer, and cannot reach the cut-off, so
 * it is skipped without a compare (in a tight loop: most are).  A chain is
 * one array, read backwards, rather than links from each position to the
 * one before: the same candidates in the same order, without a cache miss
 * per link. */
static inline void chain_walk(const uint8_t *buf, const uint32_t *lo, const uint32_t *hi,
                              uint32_t n, uint32_t x, uint32_t *len, uint32_t *dist)
{
    uint32_t need = *len;
    int d = CHAIN;
    const uint32_t *q = hi;
    while (q > lo && d > 0) {
        uint32_t c = q[-1];
        if (need < 4096) {
            if (x + need >= n)
                break; /* nothing can be longer */
            uint8_t want = buf[x + need];
            while (buf[c + need] != want) {
                --q;
                if (--d == 0 || q == lo)
                    goto done;
                c = q[-1];
            }
        }
        d--;
        uint32_t l = mlen(buf + c, buf + x, buf + n);
        if (l > need) {
            need = l;
            *dist = x - c;
        }
        if (l >= 4096)
            break;
        --q;
    }
done:
    *len = need;
}

/* The hash chains of lz_parse, for regions of up to n bytes: made once for
 * all the regions of a sample, on huge pages (td__alloc_large: in a VM the
 * 4 KiB pages of these 5 MiB were most of profiling 1 MiB). */
typedef struct lz_scratch {
    uint32_t *off, *top, *chain;
} lz_scratch;

static int lz_scratch_new(lz_scratch *z, uint32_t n)
{
    z->off = td__alloc_large(sizeof(uint32_t) * (((size_t)1 << HBITS) + 1));
    z->top = td__alloc_large(sizeof(uint32_t) << HBITS);
    z->chain = td__alloc_large(sizeof(uint32_t) * ((size_t)n + 1));
    return z->off && z->top && z->chain ? TD_OK : TD_ENOMEM;
}

static void lz_scratch_free(lz_scratch *z)
{
    free(z->off);
    free(z->top);
    free(z->chain);
}

/* Longest-match lazy parse of buf[0..n): matches of >= 4 bytes found through
 * hash chains (32 candidates) and the three repeat offsets, one step of lazy
 * evaluation, extended backwards into the pending literals.  Repeat
 * offsets start unset (the generator starts each document the same way). */
static int lz_parse(const lz_scratch *z, const uint8_t *buf, uint32_t n, pseq **out, size_t *nout)
{
    /* The positions of hash h, in order, are chain[off[h] .. off[h + 1]),
     * placed before the parse; those inserted so far (the parse's hash
     * chain) are chain[off[h] .. top[h]). */
    uint32_t *off = z->off, *top = z->top, *chain = z->chain;
    pseq *s = td__alloc_large(sizeof(pseq) * ((size_t)n / 4 + 2));
    uint32_t rep[3] = {0, 0, 0}, i = 0, anchor = 0, ins = 0;
    uint32_t lazy_at = UINT32_MAX, lazy_len = 0, lazy_dist = 0; /* the last lazy step's chain walk */
    unsigned nrep = 0;
    size_t ns = 0;
    const uint8_t *end = buf + n;

    if (!s)
        return TD_ENOMEM;
    memset(off, 0, sizeof(uint32_t) * (((size_t)1 << HBITS) + 1));
    for (uint32_t p = 0; p + 4 <= n; p++)
        off[h4(buf + p) + 1]++;
    for (size_t h = 0; h < ((size_t)1 << HBITS); h++) {
        off[h + 1] += off[h];
        top[h] = off[h];
    }
    for (uint32_t p = 0; p + 4 <= n; p++)
        chain[top[h4(buf + p)]++] = p;
    memcpy(top, off, sizeof(uint32_t) << HBITS);
#define INSERT_UPTO(x)                                                                             \
    while (ins < (x) && ins + 4 <= n) {                                                            \
        top[h4(buf + ins)]++;                                                                      \
        ins++;                                                                                     \
    }
#define WALK(x, len, dist)                                                                         \
    do {                                                                                           \
        uint32_t hx = h4(buf + (x));                                                               \
        chain_walk(buf, chain + off[hx], chain + top[hx], n, (x), (len), (dist));                  \
    } while (0)
    while (i + TD_LIKE_MINMATCH <= n) {
        uint32_t best = 0, bdist = 0;
        int brep = -1;
        for (unsigned r = 0; r < nrep; r++) {
            if (rep[r] > i || (r == 0 && i == anchor && ns > 0))
                continue; /* rep0 right after a match would only extend it */
            uint32_t l = mlen(buf + i - rep[r], buf + i, end);
            if (l >= TD_LIKE_MINMATCH && l > best) {
                best = l;
                bdist = rep[r];
                brep = (int)r;
            }
        }
        INSERT_UPTO(i);
        /* need: the length that would win (a chain match must beat a
         * repeat match by 2). */
        uint32_t need = best + (brep >= 0), l = need, ld = 0;
        if (i == lazy_at) {
            /* The lazy step walked this chain already (same inserts, same 32
             * candidates, same cut-off): its longest match, the first one
             * found, is what this walk would find past need. */
            l = lazy_len;
            ld = lazy_dist;
        } else {
            WALK(i, &l, &ld);
        }
        if (l > need) {
            best = l;
            bdist = ld;
            brep = -1;
        }
        if (best < TD_LIKE_MINMATCH) {
            i++;
            continue;
        }
        if (i + 1 + TD_LIKE_MINMATCH <= n) {
            /* A match longer than best + 1 wins (and is kept for the walk
             * at i + 1).  The walk starts from 0: starting it from best + 1
             * gives the same answer but measured 24% more instructions on
             * kennedy.xls (long runs: each candidate that passes the bar is
             * compared from its start). */
            uint32_t b2 = 0, d2 = 0;
            INSERT_UPTO(i + 1);
            WALK(i + 1, &b2, &d2);
            if (b2 > best + 1) {
                i++;
                lazy_at = i;
                lazy_len = b2;
                lazy_dist = d2;
                continue;
            }
        }
        while (i > anchor && i > bdist && buf[i - 1] == buf[i - 1 - bdist]) {
            i--;
            best++;
        }
        if (brep < 0)
            for (unsigned r = 0; r < nrep; r++)
                if (rep[r] == bdist && !(r == 0 && i == anchor && ns)) {
                    brep = (int)r;
                    break;
                }
        s[ns++] = (pseq){i - anchor, best, bdist, brep};
        td__like_rep_update(rep, &nrep, brep, bdist);
        i += best;
        anchor = i;
    }
#undef INSERT_UPTO
#undef WALK
    s[ns++] = (pseq){n - anchor, 0, 0, -1};
    *out = s;
    *nout = ns;
    return TD_OK;
}

/* ------------------------------------------------------------------------ */
/* Builder                                                                   */
/* ------------------------------------------------------------------------ */

typedef struct region {
    uint8_t *buf;
    uint32_t len;
} region;

struct td_profile_builder {
    td_profile_options o;
    uint64_t total;       /* bytes seen */
    uint64_t max_regions;
    uint64_t stride;      /* unknown size: region i is kept when i % stride == 0 */
    uint64_t hint_regions;/* known size: regions in the input */
    uint64_t next_pick, picks;
    region *r;
    size_t nr;
    uint64_t cur_index;   /* index of the region being received */
    int cur_kept;
    uint32_t cur_len;
    uint8_t *cur;
    int finished;
    char name[TD_LIKE_NAME_MAX];
};

void td_profile_options_init(td_profile_options *o)
{
    if (!o)
        return;
    memset(o, 0, sizeof *o);
    o->size_hint = TD_SIZE_UNBOUNDED;
    o->sample_bytes = DEFAULT_SAMPLE;
    o->fingerprint = 1;
    o->threads = 1;
}

void td_profile_builder_free(td_profile_builder *b)
{
    if (!b)
        return;
    for (size_t i = 0; i < b->nr; i++)
        free(b->r[i].buf);
    free(b->r);
    free(b->cur);
    free(b);
}

static int keep_region(td_profile_builder *b, uint64_t index)
{
    if (b->hint_regions) {
        /* Known size: pick max_regions regions evenly, the i-th being
         * floor(i * hint / max). */
        if (b->picks < b->max_regions && index == b->next_pick) {
            b->picks++;
            b->next_pick = b->picks * b->hint_regions / b->max_regions;
            return 1;
        }
        return 0;
    }
    if (index % b->stride)
        return 0;
    if (b->nr >= b->max_regions) {
        /* Unknown size: double the stride and drop the regions now off it. */
        size_t w = 0;
        b->stride *= 2;
        for (size_t i = 0; i < b->nr; i++) {
            if ((i * (b->stride / 2)) % b->stride == 0)
                b->r[w++] = b->r[i];
            else
                free(b->r[i].buf);
        }
        b->nr = w;
        if (index % b->stride)
            return 0;
    }
    return 1;
}

int td_profile_builder_new(td_profile_builder **out, const td_profile_options *o)
{
    return td_profile_builder_new_msg(out, o, NULL, 0);
}

static const char *const model_names[TD_PROFILE_MODEL_COUNT] = {"auto", "lz", "context"};

const char *td_profile_model_name(int model)
{
    return model >= 0 && model < TD_PROFILE_MODEL_COUNT ? model_names[model] : NULL;
}

int td_profile_model_parse(const char *name, uint32_t *model, char *msg, size_t msgcap)
{
    for (uint32_t i = 0; name && model && i < TD_PROFILE_MODEL_COUNT; i++)
        if (!strcmp(name, model_names[i])) {
            *model = i;
            return TD_OK;
        }
    if (msg && msgcap)
        (void)td__msg(msg, msgcap, "bad model '%s': auto, lz or context", name ? name : "(null)");
    return TD_EINVAL;
}

int td_profile_options_check(const td_profile_options *o, char *msg, size_t msgcap)
{
    int rc = td__options_null(o, msg, msgcap);
    if (rc != TD_OK)
        return rc;
    if (o->model >= TD_PROFILE_MODEL_COUNT || o->reserved32_) {
        if (msg && msgcap)
            (void)td__msg(msg, msgcap, "bad model %u: auto (0), lz (1) or context (2)", o->model);
        return TD_EINVAL;
    }
    if (td__sample_check(o->sample_bytes, msg, msgcap) != TD_OK)
        return TD_ERANGE;
    if (o->fingerprint_piece > FP_BYTES) {
        if (msg && msgcap)
            (void)td__msg(msg, msgcap,
                          "bad fingerprint_piece %llu: 0 (the first MiB whole) or 1 .. %u",
                          (unsigned long long)o->fingerprint_piece, FP_BYTES);
        return TD_ERANGE;
    }
    if (o->name) {
        size_t n = strlen(o->name);
        rc = n >= TD_LIKE_NAME_MAX ? TD_ERANGE : TD_OK;
        for (size_t i = 0; i < n && rc == TD_OK; i++)
            if (o->name[i] < 0x20 || o->name[i] > 0x7e)
                rc = TD_EINVAL;
        if (rc != TD_OK) {
            if (msg && msgcap)
                (void)td__msg(msg, msgcap, "bad profile name '%s': printable ASCII of at most %d bytes",
                              o->name, TD_LIKE_NAME_MAX - 1);
            return rc;
        }
    }
    return TD_OK;
}

int td_profile_builder_new_msg(td_profile_builder **out, const td_profile_options *o, char *msg,
                               size_t msgcap)
{
    td_profile_options def;
    td_profile_builder *b;
    int rc;
    if (msg && msgcap)
        msg[0] = '\0';
    if (!out)
        return TD_EINVAL;
    *out = NULL;
    if (!o) {
        td_profile_options_init(&def);
        o = &def;
    }
    if ((rc = td_profile_options_check(o, msg, msgcap)) != TD_OK)
        return rc;
    b = calloc(1, sizeof *b);
    if (!b)
        return TD_ENOMEM;
    b->o = *o;
    b->o.name = NULL;
    if (o->name)
        snprintf(b->name, sizeof b->name, "%s", o->name);
    b->max_regions = o->sample_bytes / REGION + (o->sample_bytes % REGION != 0);
    if (b->max_regions > 4096)
        b->max_regions = 4096;
    b->stride = 1;
    if (o->size_hint != TD_SIZE_UNBOUNDED) {
        uint64_t nreg = o->size_hint / REGION + (o->size_hint % REGION != 0);
        if (nreg > b->max_regions)
            b->hint_regions = nreg;
    }
    b->r = calloc((size_t)b->max_regions, sizeof *b->r);
    b->cur = td__alloc_large(REGION);
    if (!b->r || !b->cur) {
        td_profile_builder_free(b);
        return TD_ENOMEM;
    }
    b->cur_kept = keep_region(b, 0);
    *out = b;
    return TD_OK;
}

static int close_region(td_profile_builder *b)
{
    if (b->cur_kept && b->cur_len) {
        uint8_t *copy = malloc(b->cur_len);
        if (!copy)
            return TD_ENOMEM;
        memcpy(copy, b->cur, b->cur_len);
        b->r[b->nr].buf = copy;
        b->r[b->nr].len = b->cur_len;
        b->nr++;
    }
    b->cur_len = 0;
    b->cur_index++;
    b->cur_kept = keep_region(b, b->cur_index);
    return TD_OK;
}

int td_profile_builder_update(td_profile_builder *b, const void *buf, size_t len)
{
    const uint8_t *p = buf;
    if (!b || (!buf && len) || b->finished)
        return TD_EINVAL;
    if (len > UINT64_MAX - b->total)
        return TD_ERANGE;
    b->total += len;
    while (len) {
        size_t n = REGION - b->cur_len;
        if (n > len)
            n = len;
        if (b->cur_kept)
            memcpy(b->cur + b->cur_len, p, n);
        b->cur_len += (uint32_t)n;
        p += n;
        len -= n;
        if (b->cur_len == REGION) {
            int rc = close_region(b);
            if (rc != TD_OK)
                return rc;
        }
    }
    return TD_OK;
}

/* Statistics being gathered over all regions (doubles would round; these
 * are exact counts). */
typedef struct acc {
    uint64_t seq[TD_LIKE_NOC][TD_LIKE_NVC];
    uint64_t seqinc[TD_LIKE_NOC][TD_LIKE_NVC]; /* of those, after incompressible runs (inc_run) */
    uint64_t ml[TD_LIKE_NOC][TD_LIKE_NVC];
    uint64_t same_n[TD_LIKE_NOC], same_d[TD_LIKE_NOC];
    uint64_t cat[TD_LIKE_NBINS][2][TD_LIKE_NCAT];
    uint64_t lit[TD_LIKE_NBINS][256][256];
    uint64_t jun[256][256];
    /* Row totals of lit and jun: rows that stay zero are never read. */
    uint64_t litrow[TD_LIKE_NBINS][256];
    uint64_t junrow[256];
    /* keep_incompressible's scratch */
    uint32_t kb_slots[TD_LIKE_NOC * TD_LIKE_NVC];
    double kb_credit[TD_LIKE_NOC * TD_LIKE_NVC], kb_frac[TD_LIKE_NOC * TD_LIKE_NVC];
    double kb_ideal[TD_LIKE_NOC * TD_LIKE_NVC]; /* slots by the counts, unrounded */
    uint16_t kb_tab[TD_LIKE_SLOTS];
} acc;

static unsigned offset_class(const td__like_model *m, const pseq *s)
{
    if (s->rep >= 0)
        return (unsigned)s->rep;
    for (unsigned x = 0; x < m->nx; x++)
        if (m->xdist[x] == s->of)
            return TD_LIKE_OC_X + x;
    return TD_LIKE_OC_B + td__like_vcode(s->of);
}

/* Scale counts so that their total is at most 2^20 (nonzero stays >= 1). */
static void scale_counts(const uint64_t *in, uint32_t *out, unsigned n)
{
    uint64_t T = 0;
    for (unsigned i = 0; i < n; i++)
        T += in[i];
    for (unsigned i = 0; i < n; i++) {
        if (T <= (1u << 20)) {
            out[i] = (uint32_t)in[i];
        } else {
            uint64_t v = in[i] ? (uint64_t)((unsigned __int128)in[i] * (1u << 20) / T) : 0;
            out[i] = in[i] && v == 0 ? 1u : (uint32_t)v;
        }
    }
}

/* Mean literal run of value code l, as the generator draws it (uniform in
 * its bucket). */
static double code_mean(unsigned l)
{
    return td__like_vbase(l) + (td__like_vspan(l) - 1) / 2.0;
}

/* Whether the n >= 256 literals r[0, n) look incompressible: their order-0
 * entropy is within 0.1 bit of what n random bytes show (8 - 255 / (2 n ln 2)
 * on average: 7.28 bits at 256).  Text scores 4-6, compressed data 7.9+. */
static int inc_run(const uint8_t *r, uint32_t n)
{
    uint64_t h[256] = {0};
    for (uint32_t j = 0; j < n; j++)
        h[r[j]]++;
    return td__entropy0(h) >= 8.0 - 184.0 / n - 0.1;
}

/* The generator draws (class, literal-length code) from a table of 4096
 * slots (td__like_slots), so a pair the sample has less than once in 4096
 * sequences gets none.  A sample whose incompressible stretches (the
 * compressed members of an archive, the images of a document) are
 * scattered among much text has its long literal runs spread over many
 * such pairs: a tar of /usr/share/doc (text and .gz files) has 53 literal
 * bytes a sequence by its counts, its table drew 25, and its `like` data
 * compressed a third better than the tar.  When the table would draw less
 * than 95% of the literal bytes of incompressible runs (seqinc: their share of
 * each pair), the counts c[class * NVC + code] become the table's slots
 * (4096 in all, which the table keeps as they are), and each pair short of
 * such bytes gets slots of a run of its class that carries them, each taken
 * from a pair of short runs that rounding favoured most.  Only those runs:
 * a long run of text the parse did not match (novel text, or a repeat from
 * further than its 1 MiB regions) put back as fresh literals made text
 * archives compress 5-10% worse than the sample
 * (tests/bench/experiments/like_long_literals.py).  TD_OK or TD_ENOMEM. */
static int keep_incompressible(uint32_t *c, acc *a)
{
    enum { N = TD_LIKE_NOC * TD_LIKE_NVC };
    uint32_t *sl = a->kb_slots;
    double *credit = a->kb_credit, *fr = a->kb_frac, *x = a->kb_ideal, len[TD_LIKE_NVC];
    uint64_t T = 0;
    for (unsigned k = 0; k < N; k++)
        T += c[k];
    if (!T)
        return TD_OK;
    int rc = td__like_slots(c, N, a->kb_tab);
    if (rc != TD_OK)
        return rc;
    memset(sl, 0, N * sizeof *sl);
    memset(credit, 0, N * sizeof *credit);
    for (unsigned i = 0; i < TD_LIKE_SLOTS; i++)
        sl[a->kb_tab[i]]++;
    for (unsigned l = 0; l < TD_LIKE_NVC; l++)
        len[l] = code_mean(l);
    double want = 0, got = 0, mean = 0;
    for (unsigned k = 0; k < N; k++) {
        unsigned o = k / TD_LIKE_NVC, l = k % TD_LIKE_NVC;
        fr[k] = a->seq[o][l] ? (double)a->seqinc[o][l] / (double)a->seq[o][l] : 0.0;
        x[k] = (double)c[k] * TD_LIKE_SLOTS / (double)T;
        want += fr[k] * x[k] * len[l];
        got += fr[k] * sl[k] * len[l];
        mean += (double)c[k] / (double)T * len[l];
    }
    if (got >= 0.95 * want)
        return TD_OK;
    for (unsigned moved = 0; moved < 512; moved++) {
        unsigned worst = 0, from = 0;
        double wl = 0, over = -1e30;
        for (unsigned k = 0; k < N; k++) {
            double lk = len[k % TD_LIKE_NVC], lost = fr[k] * (x[k] - sl[k]) * lk - credit[k];
            if (lost > wl) {
                wl = lost;
                worst = k;
            }
            /* from short runs (at most the mean), so that taking a slot
             * does not undo what was put back */
            if (sl[k] >= 2 && lk <= mean && sl[k] - x[k] > over) {
                over = sl[k] - x[k];
                from = k;
            }
        }
        double need = TD_MIN(wl, want - got);
        if (need < 1.0 || sl[from] < 2)
            break;
        unsigned l = td__like_vcode((uint32_t)(need + 0.5));
        sl[from]--;
        got -= fr[from] * len[from % TD_LIKE_NVC];
        sl[worst - worst % TD_LIKE_NVC + l]++;
        got += len[l];
        credit[worst] += len[l];
    }
    for (unsigned k = 0; k < N; k++)
        c[k] = sl[k];
    return TD_OK;
}

/* Context groups (tot[a]: the total of row c[a]; rows with none are not
 * read): the g-1 busiest contexts get a group each (ties to the
 * lower byte), all others share the last one. */
static void group_contexts(uint64_t (*c)[256], const uint64_t *tot, unsigned g, td__like_ctxmodel *out)
{
    int order[256];
    unsigned used = 0;
    for (int a = 0; a < 256; a++) {
        order[a] = a;
        used += tot[a] != 0;
    }
    for (int i = 1; i < 256; i++) { /* insertion sort: count desc, byte asc */
        int x = order[i], j = i - 1;
        while (j >= 0 && (tot[order[j]] < tot[x] || (tot[order[j]] == tot[x] && order[j] > x))) {
            order[j + 1] = order[j];
            j--;
        }
        order[j + 1] = x;
    }
    if (used == 0)
        used = 1;
    if (g > used)
        g = used;
    memset(out, 0, sizeof *out);
    out->ngroups = g;
    uint64_t merged[TD_LIKE_MAXG][256];
    memset(merged, 0, g * sizeof merged[0]);
    for (int i = 0; i < 256; i++) {
        int a = order[i];
        unsigned grp = (unsigned)i < g - 1 ? (unsigned)i : g - 1;
        out->map[a] = (uint8_t)grp;
        for (int b = 0; b < 256 && tot[a]; b++)
            merged[grp][b] += c[a][b];
    }
    for (unsigned k = 0; k < g; k++) {
        uint64_t t = 0;
        for (int b = 0; b < 256; b++)
            t += merged[k][b];
        if (!t) /* a group never seen (empty sample): uniform */
            for (int b = 0; b < 256; b++)
                merged[k][b] = 1;
        scale_counts(merged[k], out->cnt[k], 256);
    }
}

/* Whether q[0..n) is one repeated byte. */
static int one_byte(const uint8_t *q, size_t n)
{
    size_t j = 1;
    while (j < n && q[j] == q[0])
        j++;
    return j == n;
}

/* 64-bit fingerprint of a 4 KiB block (dedup counting only). */
static uint64_t block_hash(const uint8_t *p)
{
    uint64_t h = 0x9e3779b97f4a7c15ull;
    for (unsigned i = 0; i < 4096; i += 8)
        h = td__wymix(h ^ td__load64le(p + i), TD_WY_P0 + i);
    return h;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* p->dedup, p->const4k and p->m.dedup from the whole 4 KiB blocks of the
 * kept regions. */
static int sample_dedup(const td_profile_builder *b, td_profile *p)
{
    size_t nb = 0, k = 0, cons = 0;
    uint64_t by[256] = {0};
    for (size_t i = 0; i < b->nr; i++)
        nb += b->r[i].len / 4096;
    uint64_t *h = nb ? malloc(nb * sizeof *h) : NULL;
    if (nb && !h)
        return TD_ENOMEM;
    for (size_t i = 0; i < b->nr; i++)
        for (uint32_t o = 0; o + 4096 <= b->r[i].len; o += 4096) {
            const uint8_t *q = b->r[i].buf + o;
            if (one_byte(q, 4096)) {
                cons++;
                by[q[0]]++;
            } else {
                h[k++] = block_hash(q);
            }
        }
    /* model.const: the one-byte blocks of the most common such byte
     * (const_blocks leaves them out of the parse). */
    unsigned c = 0;
    for (unsigned x = 1; x < 256; x++)
        if (by[x] > by[c])
            c = x;
    if (by[c]) {
        p->m.cbyte = c;
        p->m.cshare = (uint32_t)((by[c] * 65536 + nb / 2) / nb);
        if (p->m.cshare == 0)
            p->m.cshare = 1;
    }
    if (k) /* no qsort of an empty (NULL) array */
        qsort(h, k, sizeof *h, cmp_u64);
    size_t uniq = 0;
    for (size_t i = 0; i < k; i++)
        uniq += i == 0 || h[i] != h[i - 1];
    p->dedup = uniq ? (double)k / (double)uniq : 1.0;
    p->const4k = nb ? (double)cons / (double)nb : 0.0;
    free(h);
    /* The generator repeats 4 KiB blocks only when the sample clearly
     * does (one-byte blocks are model.cshare's, const_blocks). */
    double dq = p->dedup > 64.0 ? 64.0 : p->dedup;
    p->m.dedup = dq > 1.005 ? (uint32_t)llround(dq * 65536.0) : 65536u;
    return TD_OK;
}

/* Ratio and CPU ns/byte of each td_codec on buf (the profile's fingerprint),
 * by the same compressors and settings as td_analyze.  With piece (1 ..
 * n - 1), the time is the mean over up to FP_PIECES pieces of that size,
 * each compressed on its own: a like stream of a 4 KB sample, timed as one
 * MiB, costs gzip -6 several times what the sample does only because its
 * history is longer. */
#define FP_PIECES 8
static int fingerprint(const uint8_t *buf, size_t n, size_t piece, double ratio[TD_LIKE_NFP],
                       double ns_per_byte[TD_LIKE_NFP])
{
    td_codecs *c = NULL;
    int rc = n ? td__codecs_new(&c, n) : TD_ECORPUS;
    size_t np = piece && piece < n ? TD_MIN(n / piece, FP_PIECES) : 0;
    for (int k = 0; k < TD_LIKE_NFP && rc == TD_OK; k++) {
        uint64_t csize = 0, ns = 0, t;
        rc = np ? td__codecs_size(c, k, buf, n, &csize) : td__codecs_compress(c, k, buf, n, &csize, &ns);
        for (size_t i = 0; i < np && rc == TD_OK; i++, ns += t) {
            uint64_t z;
            rc = td__codecs_compress(c, k, buf + i * piece, piece, &z, &t);
        }
        ratio[k] = csize ? (double)n / (double)csize : 0;
        ns_per_byte[k] = np ? (double)ns / (double)(np * piece) : (double)ns / (double)n;
    }
    td__codecs_free(c);
    return rc;
}

int td_profile_compare(const td_profile *ref, const void *buf, size_t len, td_profile_comparison *out)
{
    if (out)
        memset(out, 0, sizeof *out);
    if (!ref || !out || (!buf && len))
        return TD_EINVAL;
    if (!len)
        return TD_ECORPUS;
    size_t n = len < FP_BYTES ? len : FP_BYTES;
    /* A sample under FP_BYTES was timed whole, so its cost is that of a
     * short history: time the data in pieces of its size to compare like
     * for like.  Built-ins keep ratios only. */
    uint64_t piece = ref->have_fp && ref->sampled_bytes < FP_BYTES && ref->fp_ns[0] > 0
                         ? ref->sampled_bytes : 0;
    int rc = fingerprint(buf, n, (size_t)piece, out->ratio, out->ns_per_byte);
    if (rc != TD_OK) {
        memset(out, 0, sizeof *out);
        return rc;
    }
    out->bytes = n;
    out->piece = piece < n ? piece : 0;
    for (int k = 0; ref->have_fp && k < TD_LIKE_NFP; k++) {
        out->ref_ratio[k] = ref->fp_ratio[k];
        out->ref_ns_per_byte[k] = ref->fp_ns[k];
    }
    return TD_OK;
}

int td_profile_compare_fd(const td_profile *ref, int fd, td_profile_comparison *out)
{
    if (out)
        memset(out, 0, sizeof *out);
    if (!ref || !out || fd < 0)
        return TD_EINVAL;
    /* cap + 1 = FP_BYTES: what is measured, and no byte more is read */
    char *buf;
    size_t n;
    int rc = td__read_fd(fd, FP_BYTES - 1, FP_BYTES - 1, &buf, &n);
    if (rc == TD_OK)
        rc = td_profile_compare(ref, buf, n, out);
    free(buf);
    return rc;
}

/* p->digest: BLAKE2b-256 of o, p->m's canonical JSON. */
static int digest_json(td_profile *p, const td__json_out *o)
{
    if (o->err)
        return TD_ENOMEM;
    crypto_generichash(p->digest, 32, (const unsigned char *)o->buf, o->len, NULL, 0);
    return TD_OK;
}

int td__like_profile_finalize(td_profile *p)
{
    td__json_out o = {0};
    td__like_model_json(&p->m, &o);
    int rc = digest_json(p, &o);
    free(o.buf);
    return rc;
}

/* Writes m's canonical JSON into *o, replacing what was there; its size, or
 * SIZE_MAX when out of memory (which sticks to o). */
static size_t model_json_size(const td__like_model *m, td__json_out *o)
{
    o->len = 0;
    td__like_model_json(m, o);
    return o->err ? SIZE_MAX : o->len;
}

/* Bytes of a and b that are equal, 8 at a time: a byte of x = a ^ b is zero
 * exactly when bit 7 of ((x & 0x7f) + 0x7f) | x is clear (no carry crosses
 * bytes). */
static uint64_t count_eq(const uint8_t *a, const uint8_t *b, uint32_t n)
{
    const uint64_t lo7 = 0x7f7f7f7f7f7f7f7full, hi = 0x8080808080808080ull;
    uint64_t t = 0;
    uint32_t j = 0;
    for (; j + 8 <= n; j += 8) {
        uint64_t x = td__load64le(a + j) ^ td__load64le(b + j);
        t += 8u - (unsigned)__builtin_popcountll((((x & lo7) + lo7) | x) & hi);
    }
    for (; j < n; j++)
        t += a[j] == b[j];
    return t;
}

typedef uint8_t lanes16 __attribute__((vector_size(16)));

/* The counts of step 3 of build_model over one parsed region: eq[c] +=
 * the literal positions pos >= cand[c] with buf[pos] == buf[pos - cand[c]].
 * cand[0..63] are the distances 1..64: each literal is compared with the 64
 * bytes before it at once, into byte lanes (lane w of lane[q] counts distance
 * 64 - 16q - w) that are added to eq before they can wrap.  The rest are
 * counted per literal run. */
static void period_counts(const uint8_t *buf, const pseq *s, size_t ns, const uint32_t *cand, unsigned nc,
                          uint64_t *eq)
{
    lanes16 lane[4] = {{0}};
    unsigned pending = 0;
    uint32_t pos = 0;
    for (size_t k = 0; k < ns; k++) {
        uint32_t start = pos, end = pos + s[k].ll;
        for (; pos < end; pos++) {
            if (pos < 64) {
                for (uint32_t d = 1; d <= pos; d++)
                    eq[d - 1] += buf[pos] == buf[pos - d];
                continue;
            }
            lanes16 c = (lanes16){0} + buf[pos];
            for (int q = 0; q < 4; q++) {
                lanes16 w;
                memcpy(&w, buf + pos - 64 + 16 * q, sizeof w);
                lane[q] -= (lanes16)(w == c);
            }
            if (++pending == 255) {
                for (int q = 0; q < 4; q++) {
                    for (int w = 0; w < 16; w++)
                        eq[63 - 16 * q - w] += lane[q][w];
                    lane[q] = (lanes16){0};
                }
                pending = 0;
            }
        }
        for (unsigned c = 64; c < nc; c++) {
            uint32_t from = start > cand[c] ? start : cand[c];
            if (from < end)
                eq[c] += count_eq(buf + from, buf + from - cand[c], end - from);
        }
        pos += s[k].ml;
    }
    for (int q = 0; q < 4; q++)
        for (int w = 0; w < 16; w++)
            eq[63 - 16 * q - w] += lane[q][w];
}

/* The sample as the parse sees it: a kept region, or a copy of it without
 * its one-byte blocks of model.cbyte (own: the copy, to free). */
typedef struct view {
    const uint8_t *buf;
    uint32_t len;
    uint8_t *own;
} view;

/* One-byte 4 KiB blocks (zero pages, blank areas, padding) are much of a
 * sparse sample's dedup and of its small blocks' ratio, and a statistical
 * model makes them only by chance.  Those of byte model.cbyte (counted
 * into model.cshare by sample_dedup) are left out of the parse: the
 * generator puts blocks of that byte back at that share.  Blocks are
 * 4 KiB-aligned in the sample (regions start at whole MiB).  The regions
 * themselves stay as they are (the fingerprint may be reading the first). */
static int const_blocks(const td_profile_builder *b, const td__like_model *m, view *v)
{
    const unsigned c = m->cbyte;
    for (size_t i = 0; i < b->nr; i++)
        v[i] = (view){b->r[i].buf, b->r[i].len, NULL};
    if (!m->cshare)
        return TD_OK;
    for (size_t i = 0; i < b->nr; i++) {
        const uint8_t *q = b->r[i].buf;
        uint32_t n = b->r[i].len, w = 0;
        uint8_t *cp = NULL;
        for (uint32_t o = 0; o < n; o += 4096) {
            uint32_t k = TD_MIN(4096u, n - o);
            int drop = k == 4096 && q[o] == c && one_byte(q + o, 4096);
            if (drop && !cp) { /* the first one: copy what came before */
                if (!(cp = td__alloc_large(n))) /* huge pages: a fault per 2 MiB */
                    return TD_ENOMEM;
                memcpy(cp, q, o);
                w = o;
            } else if (!drop && cp) {
                memcpy(cp + w, q + o, k);
                w += k;
            }
        }
        if (cp)
            v[i] = (view){cp, w, cp};
    }
    return TD_OK;
}

/* The rest of p->m (zeroed but for its dedup and const, sample_dedup) from
 * the regions' views rv (const_blocks); json receives p->m's canonical
 * JSON, written by the last size check, for the digest. */
static int build_model(td_profile_builder *b, const view *rv, td_profile *p, td__json_out *json)
{
    td__like_model *m = &p->m;
    acc *a = td__calloc_large(sizeof *a);
    uint32_t maxlen = 0;
    for (size_t i = 0; i < b->nr; i++)
        if (rv[i].len > maxlen)
            maxlen = rv[i].len;
    uint32_t *dh = td__calloc_large(((size_t)maxlen + 1) * sizeof *dh); /* uses of each distance */
    pseq **ps = calloc(b->nr ? b->nr : 1, sizeof *ps);
    size_t *nps = calloc(b->nr ? b->nr : 1, sizeof *nps);
    lz_scratch z = {0};
    uint64_t nm = 0;
    int rc = TD_ENOMEM;

    if (!a || !dh || !ps || !nps || lz_scratch_new(&z, maxlen) != TD_OK)
        goto out;
    m->doc = maxlen < TD_LIKE_DOC_MIN ? TD_LIKE_DOC_MIN : maxlen;

    /* 1. Parse every region; histogram of explicit distances. */
    for (size_t i = 0; i < b->nr; i++) {
        rc = lz_parse(&z, rv[i].buf, rv[i].len, &ps[i], &nps[i]);
        if (rc != TD_OK)
            goto out;
        for (size_t k = 0; k < nps[i]; k++)
            if (ps[i][k].ml && ps[i][k].rep < 0) {
                dh[ps[i][k].of]++;
                nm++;
            }
    }
    /* 2. Exact distances: the most used ones, each >= 8 uses and >= 0.3%
     * of explicit matches. */
    /* One pass keeps the 32 most used (ties: the shorter distance first). */
    m->nx = 0;
    for (uint32_t d = 1; d <= maxlen && d < TD_LIKE_DOC_MAX; d++) {
        uint32_t c = dh[d];
        if (c < 8 || (uint64_t)c * 1000 < 3 * nm)
            continue;
        if (m->nx == TD_LIKE_NX && c <= dh[m->xdist[TD_LIKE_NX - 1]])
            continue;
        unsigned at = m->nx < TD_LIKE_NX ? m->nx++ : TD_LIKE_NX - 1;
        while (at > 0 && dh[m->xdist[at - 1]] < c) {
            m->xdist[at] = m->xdist[at - 1];
            at--;
        }
        m->xdist[at] = d;
    }
    /* 3. Literal periods: of d in 1..64 and the exact distances, the two
     * that most often hold the same byte as a literal. */
    {
        uint32_t cand[64 + TD_LIKE_NX];
        uint64_t eq[64 + TD_LIKE_NX];
        unsigned nc = 0;
        for (uint32_t d = 1; d <= 64; d++)
            cand[nc++] = d;
        for (unsigned x = 0; x < m->nx; x++)
            if (m->xdist[x] > 64)
                cand[nc++] = m->xdist[x];
        memset(eq, 0, sizeof eq);
        for (size_t i = 0; i < b->nr; i++)
            period_counts(rv[i].buf, ps[i], nps[i], cand, nc, eq);
        for (int t = 0; t < 2; t++) {
            unsigned best = nc;
            for (unsigned c = 0; c < nc; c++)
                if ((t == 0 || cand[c] != m->per[0]) && eq[c] && (best == nc || eq[c] > eq[best]))
                    best = c;
            m->per[t] = best == nc ? 0 : cand[best];
        }
        if (!m->per[0])
            m->per[1] = 0;
    }
    /* 4. Statistics. */
    for (size_t i = 0; i < b->nr; i++) {
        const uint8_t *buf = rv[i].buf;
        uint32_t rep[3] = {0, 0, 0}, pos = 0;
        unsigned nrep = 0;
        for (size_t k = 0; k < nps[i]; k++) {
            const pseq *s = &ps[i][k];
            for (uint32_t j = 0; j < s->ll; j++, pos++) {
                unsigned bin = td__like_bin(pos), first = j == 0 && k > 0;
                uint32_t cd[5] = {nrep > 0 ? rep[0] : 0, nrep > 1 ? rep[1] : 0, nrep > 2 ? rep[2] : 0,
                                  m->per[0], m->per[1]};
                unsigned cat = 5;
                for (unsigned c = 0; c < 5; c++)
                    if (cd[c] && cd[c] <= pos && buf[pos] == buf[pos - cd[c]] && !(first && c == 0)) {
                        cat = c;
                        break;
                    }
                a->cat[bin][first][cat]++;
                if (cat == 5) {
                    a->lit[bin][pos ? buf[pos - 1] : 0][buf[pos]]++;
                    a->litrow[bin][pos ? buf[pos - 1] : 0]++;
                }
            }
            if (!s->ml)
                break;
            unsigned oc = offset_class(m, s);
            if (k > 0 && ps[i][k - 1].ml) {
                a->same_d[oc]++;
                a->same_n[oc] += ps[i][k - 1].ll == s->ll && ps[i][k - 1].ml == s->ml;
            }
            a->seq[oc][td__like_vcode(s->ll)]++;
            if (s->ll >= 256 && inc_run(buf + pos - s->ll, s->ll))
                a->seqinc[oc][td__like_vcode(s->ll)]++;
            a->ml[oc][td__like_vcode(s->ml - TD_LIKE_MINMATCH)]++;
            td__like_rep_update(rep, &nrep, s->rep, s->of);
            pos += s->ml;
        }
    }
    /* The junction model is P(byte | previous byte) over all bytes, so
     * that sources chosen by it keep the sample's byte pairs. */
    for (size_t i = 0; i < b->nr; i++)
        for (uint32_t j = 1; j < rv[i].len; j++) {
            a->jun[rv[i].buf[j - 1]][rv[i].buf[j]]++;
            a->junrow[rv[i].buf[j - 1]]++;
        }
    /* 5. Counts into the model. */
    {
        uint64_t tot = 0;
        for (unsigned o = 0; o < TD_LIKE_NOC; o++)
            for (unsigned l = 0; l < TD_LIKE_NVC; l++)
                tot += a->seq[o][l];
        if (!tot) { /* no match at all: long literal runs, matches that never fit */
            unsigned far = TD_LIKE_OC_B + td__like_vcode(TD_LIKE_DOC_MAX - 1);
            a->seq[far][TD_LIKE_NVC - 1] = 1;
            a->ml[far][0] = 1;
        }
        /* Joint counts scaled as one distribution, match lengths per class. */
        uint64_t flat[TD_LIKE_NOC * TD_LIKE_NVC];
        uint32_t fl[TD_LIKE_NOC * TD_LIKE_NVC];
        for (unsigned o = 0; o < TD_LIKE_NOC; o++)
            for (unsigned l = 0; l < TD_LIKE_NVC; l++)
                flat[o * TD_LIKE_NVC + l] = a->seq[o][l];
        scale_counts(flat, fl, TD_LIKE_NOC * TD_LIKE_NVC);
        rc = keep_incompressible(fl, a);
        if (rc != TD_OK)
            goto out;
        for (unsigned o = 0; o < TD_LIKE_NOC; o++)
            for (unsigned l = 0; l < TD_LIKE_NVC; l++)
                m->seq[o][l] = fl[o * TD_LIKE_NVC + l];
        for (unsigned o = 0; o < TD_LIKE_NOC; o++) {
            scale_counts(a->ml[o], m->ml[o], TD_LIKE_NVC);
            m->same[o] = a->same_d[o] ? (uint32_t)(a->same_n[o] * 65536 / a->same_d[o]) : 0;
            /* A class may have lengths but no (scaled) joint count: drop its
             * lengths too, so every stored class is drawable. */
            if (!td__like_sum(m->seq[o], TD_LIKE_NVC)) {
                memset(m->ml[o], 0, sizeof m->ml[o]);
                m->same[o] = 0;
            }
        }
        /* A position bin with few literals (a small sample has none past
         * 2 KiB) borrows the counts of all bins, so that its bytes still
         * look like the sample's. */
        uint64_t cat_all[2][TD_LIKE_NCAT] = {{0}};
        for (unsigned bin = 0; bin < TD_LIKE_NBINS; bin++)
            for (unsigned f = 0; f < 2; f++)
                for (unsigned c = 0; c < TD_LIKE_NCAT; c++)
                    cat_all[f][c] += a->cat[bin][f][c];
        for (unsigned bin = 0; bin < TD_LIKE_NBINS; bin++)
            for (unsigned f = 0; f < 2; f++) {
                uint64_t t = 0, row[TD_LIKE_NCAT];
                for (unsigned c = 0; c < TD_LIKE_NCAT; c++)
                    t += a->cat[bin][f][c];
                for (unsigned c = 0; c < TD_LIKE_NCAT; c++)
                    row[c] = a->cat[bin][f][c] + (t < 64 ? cat_all[f][c] + cat_all[!f][c] * (c != 0) : 0);
                scale_counts(row, m->cat[bin][f], TD_LIKE_NCAT);
            }
        for (unsigned bin = 0; bin < TD_LIKE_NBINS; bin++) {
            uint64_t t = 0;
            for (int x = 0; x < 256; x++)
                t += a->litrow[bin][x];
            if (t >= 64)
                continue;
            for (unsigned q = 0; q < TD_LIKE_NBINS; q++) {
                uint64_t tq = 0;
                for (int x = 0; x < 256 && q != bin; x++)
                    tq += a->litrow[q][x];
                if (q == bin || tq == 0)
                    continue;
                for (int x = 0; x < 256; x++) {
                    if (!a->litrow[q][x])
                        continue;
                    for (int y = 0; y < 256; y++)
                        a->lit[bin][x][y] += a->lit[q][x][y];
                    a->litrow[bin][x] += a->litrow[q][x];
                }
            }
        }
    }
    /* A bin whose fresh literals carry no information a compressor could
     * use (order-0 entropy >= 7.95 bits over >= 4096 literals: compressed or
     * encrypted data) is stored as exactly uniform, with no categories: its
     * bytes are then generated eight per draw. */
    int uniform[TD_LIKE_NBINS] = {0};
    for (unsigned bin = 0; bin < TD_LIKE_NBINS; bin++) {
        uint64_t h[256] = {0}, t = 0;
        for (int x = 0; x < 256; x++)
            for (int y = 0; y < 256 && a->litrow[bin][x]; y++)
                h[y] += a->lit[bin][x][y];
        for (int y = 0; y < 256; y++)
            t += h[y];
        uniform[bin] = t >= 4096 && td__entropy0(h) >= 7.95;
    }
    /* 6. Context models, with as many groups as fit the size budget. */
    _Static_assert(TD_LIKE_MAXG >= 2, "the loop below sets jsize");
    size_t jsize = SIZE_MAX;
    /* Room for the rest of a profile.  The budget has always been checked
     * with dedup written as 65536, so its extra digits do not count: the
     * same models fit. */
    const size_t budget = TD_LIKE_MAX_JSON - 4096 + (m->dedup >= 100000) + (m->dedup >= 1000000);
    for (unsigned g = TD_LIKE_MAXG; g >= 2; g /= 2) {
        for (unsigned bin = 0; bin < TD_LIKE_NBINS; bin++)
            group_contexts(a->lit[bin], a->litrow[bin], bin == TD_LIKE_NBINS - 1 ? g : (g > 16 ? 16 : g),
                           &m->lit[bin]);
        group_contexts(a->jun, a->junrow, g, &m->jun);
        for (unsigned bin = 0; bin < TD_LIKE_NBINS; bin++) {
            if (!uniform[bin])
                continue;
            memset(&m->lit[bin], 0, sizeof m->lit[bin]);
            m->lit[bin].ngroups = 1;
            for (int y = 0; y < 256; y++)
                m->lit[bin].cnt[0][y] = 1;
            for (unsigned f = 0; f < 2; f++) {
                uint64_t t = td__like_sum(m->cat[bin][f], TD_LIKE_NCAT);
                memset(m->cat[bin][f], 0, sizeof m->cat[bin][f]);
                m->cat[bin][f][TD_LIKE_NCAT - 1] = (uint32_t)(t ? t : 1);
            }
        }
        if ((jsize = model_json_size(m, json)) <= budget)
            break;
    }
    /* Still too big (pathological): drop the rarest length entries.  jsize
     * (and *json) is always that of m as it stands. */
    for (uint32_t floor_c = 1; jsize > budget && floor_c < (1u << 20); floor_c *= 2) {
        for (unsigned o = 0; o < TD_LIKE_NOC; o++)
            for (unsigned l = 0; l < TD_LIKE_NVC; l++) {
                uint64_t t = td__like_sum(m->ml[o], TD_LIKE_NVC); /* of the entries left */
                if (m->ml[o][l] <= floor_c && m->ml[o][l] * 2 < t)
                    m->ml[o][l] = 0;
            }
        jsize = model_json_size(m, json);
    }
    rc = TD_OK;
out:
    for (size_t i = 0; ps && i < b->nr; i++)
        free(ps[i]);
    free(ps);
    free(nps);
    free(dh);
    free(a);
    lz_scratch_free(&z);
    return rc;
}

int td_profile_builder_update_fd(td_profile_builder *b, int fd)
{
    const size_t cap = 1u << 20;
    uint8_t *buf;
    int rc = TD_OK;
    if (!b || fd < 0)
        return TD_EINVAL;
    buf = td__alloc_large(cap);
    if (!buf)
        return TD_ENOMEM;
#ifdef POSIX_FADV_SEQUENTIAL
    (void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
    for (;;) {
        ssize_t n = read(fd, buf, cap);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = errno;
            free(buf);
            errno = e;
            return TD_EIO;
        }
        if (n == 0)
            break;
        rc = td_profile_builder_update(b, buf, (size_t)n);
        if (rc != TD_OK)
            break;
    }
    free(buf);
    return rc;
}

/* One half of td_profile_builder_finish: the model (with fp unset), or
 * the fingerprint.  They write different fields of *p. */
/* ---- The choice of a context model (format 8) ---- */

/* Settings tried: K:budget:E (docs/benchmarks.md, "like", the experiment of
 * stop 44): orders 1 and 2 serve small samples, whose high-order contexts
 * would make a MiB far more repetitive than the few KB they came from. */
static const struct {
    unsigned K, budget, E;
} ctx_sets[] = {{1, 30000, 16}, {2, 30000, 8}, {2, 30000, 16}, {3, 30000, 8},
                {3, 30000, 16}, {4, 30000, 8}, {4, 30000, 16}, {4, 40000, 8}};
static const double ctx_rates[] = {0, 0.5, 1}; /* copies: times the sample's rate */
#define CAL_BYTES ((size_t)256 << 10)          /* generated per candidate */
#define CAL_SAMPLE (1u << 20)                  /* the sample's first bytes measured */

static size_t cal_gzip6(const uint8_t *in, size_t n, uint8_t *tmp, size_t cap)
{
    uLongf z = cap;
    return compress2(tmp, &z, in, n, 6) == Z_OK ? (size_t)z : 0;
}

static size_t cal_bzip2_9(const uint8_t *in, size_t n, uint8_t *tmp, size_t cap)
{
    unsigned z = (unsigned)cap;
    return BZ2_bzBuffToBuffCompress((char *)tmp, &z, (char *)(uintptr_t)in, (unsigned)n, 9, 0, 0) == BZ_OK
               ? (size_t)z
               : 0;
}

/* lz4 -1 and -9 as blocks: their frames add a few bytes, whatever the data */
static size_t cal_lz4_1(const uint8_t *in, size_t n, uint8_t *tmp, size_t cap)
{
    int z = LZ4_compress_default((const char *)in, (char *)tmp, (int)n, (int)cap);
    return z > 0 ? (size_t)z : 0;
}

static size_t cal_lz4_9(const uint8_t *in, size_t n, uint8_t *tmp, size_t cap)
{
    int z = LZ4_compress_HC((const char *)in, (char *)tmp, (int)n, (int)cap, 9);
    return z > 0 ? (size_t)z : 0;
}

/* The sample's 32-byte windows, one in 8 picked by their hash (so that a
 * window of generated data that is also the sample's is picked on both
 * sides), as a set of hashes: a context model of low-entropy data (a
 * bitmap, a table) can spell out the sample's strings, which data made
 * from a profile must not (issue 14: no 32-byte run shared with the sample
 * but runs of one byte). */
#define WIN 32
typedef struct wset {
    uint64_t *h; /* 0: empty */
    size_t mask;
} wset;

static inline size_t win_slot(const wset *w, uint64_t key)
{
    size_t at = (size_t)((key * 0xD6E8FEB86659FD93ull) >> 17) & w->mask;
    while (w->h[at] && w->h[at] != key)
        at = (at + 1) & w->mask;
    return at;
}

/* Adds the picked windows of p[0, n) to w (hits NULL), or counts those of
 * them in w that are not one repeated byte. */
static void win_scan(wset *w, const uint8_t *p, size_t n, uint64_t *hits)
{
    const uint64_t B = 0x100000001b3ull;
    uint64_t bw = 1, h = 0;
    if (n < WIN)
        return;
    for (int k = 0; k < WIN - 1; k++)
        bw *= B;
    for (int k = 0; k < WIN; k++)
        h = h * B + p[k];
    for (size_t i = 0;; i++) {
        if ((h * 0x9E3779B97F4A7C15ull) >> 61 == 0) {
            size_t at = win_slot(w, h | 1);
            if (!hits) {
                w->h[at] = h | 1;
            } else if (w->h[at]) {
                int one = 1;
                for (int k = 1; k < WIN && one; k++)
                    one = p[i + (size_t)k] == p[i];
                *hits += !one;
            }
        }
        if (i + WIN >= n)
            break;
        h = (h - p[i] * bw) * B + p[i + WIN];
    }
}

/* The codecs a candidate is measured with: a greedy and a chain-searching
 * LZ parser, deflate and a block sorter, which between them see short and
 * long matches and byte contexts.  The sum of their errors is the
 * candidate's: the larger of two (gzip -6, bzip2 -9; format 8) chose
 * context models whose bzip2 -9 error was least but that greedy parsers
 * found far less in (docs/benchmarks.md, "like", stop 49).  Cheapest first,
 * for the bound below. */
typedef size_t cal_fn(const uint8_t *in, size_t n, uint8_t *tmp, size_t cap);
static cal_fn *const cal_codecs[] = {cal_lz4_1, cal_gzip6, cal_lz4_9, cal_bzip2_9};
static const char *const cal_labels[] = {"lz4 -1", "gzip -6", "lz4 -9", "bzip2 -9"};
#define NCAL (sizeof cal_codecs / sizeof cal_codecs[0])
_Static_assert(NCAL == TD_PROFILE_FIDELITY_CODECS && NCAL == sizeof cal_labels / sizeof cal_labels[0],
               "td_profile_fidelity() reports the codecs that choose the model");

/* The sum of the codecs' errors on the first CAL_BYTES of q's stream (seed
 * 0) against the sample's ratios want[]; < 0 on error.  A candidate is
 * kept only below bound, so once the sum so far reaches it the other
 * codecs and the window scan are skipped (the result is then some sum >=
 * bound): the choice is the same, in less codec time.  Else every signed
 * error is in err[] and, with ws, *shared: its windows found in ws. */
static double cal_error(const td_profile *q, const double want[NCAL], double bound, uint8_t *gen,
                        uint8_t *tmp, size_t cap, wset *ws, uint64_t *shared, double err[NCAL])
{
    td_options o;
    td_options_init(&o);
    o.profile = q;
    o.threads = 1;
    if (td_fill(TD_LIKE, &o, 0, gen, CAL_BYTES) != TD_OK)
        return -1;
    double sum = 0;
    for (size_t i = 0; i < NCAL && sum < bound; i++) {
        size_t z = cal_codecs[i](gen, CAL_BYTES, tmp, cap);
        if (!z)
            return -1;
        err[i] = (double)CAL_BYTES / (double)z / want[i] - 1;
        sum += fabs(err[i]);
    }
    if (sum < bound && ws) {
        *shared = 0;
        win_scan(ws, gen, CAL_BYTES, shared);
    }
    return sum;
}

/* td_profile_fidelity(): the errors of the model chosen. */
static void set_fidelity(td_profile *p, const double err[NCAL], const double want[NCAL], size_t sample)
{
    p->have_fid = 1;
    memcpy(p->fid_err, err, sizeof p->fid_err);
    memcpy(p->fid_ratio, want, sizeof p->fid_ratio);
    p->fid_sample = (uint32_t)sample;
}

#define NSETS (sizeof ctx_sets / sizeof ctx_sets[0])
#define NRATES (sizeof ctx_rates / sizeof ctx_rates[0])

/* One candidate of choose_model, number c (setting ctx_sets[c / NRATES],
 * rate ctx_rates[c % NRATES]): its context model made from st over base,
 * generated and measured by cal_error against bound.  The jobs of one run
 * have their own q, json, gen and tmp; st, base, want and ws are only
 * read. */
typedef struct cand_job {
    const td__like_ctxstats *st;
    const td__like_model *base;
    const double *want;
    wset *ws;
    size_t c, cap;
    double bound, e, err[NCAL];
    uint64_t shared;
    int skip, rc;
    td_profile *q;
    td__json_out json;
    uint8_t *gen, *tmp;
} cand_job;

static void cand_run(void *x)
{
    cand_job *j = x;
    td_profile *q = j->q;
    const size_t i = j->c / NRATES, k = j->c % NRATES;
    j->skip = 0;
    td__like_tables_unref(q->tables);
    q->tables = NULL;
    q->m = *j->base;
    q->m.doc = TD_LIKE_DOC_MAX; /* one document per block */
    j->rc = td__like_ctx_make(j->st, ctx_sets[i].K, ctx_sets[i].budget, ctx_sets[i].E, ctx_rates[k], &q->m);
    if (j->rc != TD_OK)
        return;
    if (model_json_size(&q->m, &j->json) > TD_LIKE_MAX_JSON - 4096) {
        j->skip = 1;
        return;
    }
    if ((j->rc = digest_json(q, &j->json)) != TD_OK)
        return;
    j->e = cal_error(q, j->want, j->bound, j->gen, j->tmp, j->cap, j->ws, &j->shared, j->err);
    if (j->e < 0)
        j->rc = TD_ENOMEM;
}

/* Replaces p->m (an LZ model, digest set) by a context model of the sample
 * when one comes closer to it under the codecs of cal_codecs; json then
 * holds the new model's canonical JSON.  Every candidate is generated and
 * measured, as a user would: the models differ in kind, so nothing cheaper
 * ranks them.  With
 * two threads, candidates are measured two at a time against the bound of
 * the pair's start and then taken in order: a stale bound only measures
 * in full a candidate that loses anyway, so the choice is the one thread's.
 * While *fp_busy (the fingerprint on another thread), two threads measure
 * one candidate at a time: never more than two threads compute. */
static int choose_model(td_profile_builder *b, const view *rv, td_profile *p, td__json_out *json,
                        const int *fp_busy)
{
    const int lz_only = b->o.model == TD_PROFILE_MODEL_LZ;
    if (lz_only && !b->o.fingerprint) /* nothing to choose, nothing asked: the fast way */
        return TD_OK;
    const uint8_t *bufs[4];
    uint32_t lens[4];
    size_t nv = 0, cap = compressBound(CAL_SAMPLE) + CAL_SAMPLE / 100 + 600; /* the codecs' bounds */
    td__like_ctxstats *st = NULL;
    wset ws = {NULL, 0};
    td_pool *pool = NULL;
    unsigned nt = b->o.threads ? b->o.threads : td__ncpus();
    if (nt > 1 && !lz_only)
        (void)td__pool_new(&pool, 1); /* none: one at a time */
    const size_t batch = td__pool_size(pool) > 1 ? 2 : 1;
    cand_job cj[2];
    memset(cj, 0, sizeof cj);
    td_profile *best = calloc(1, sizeof *best);
    int rc = best ? TD_OK : TD_ENOMEM;
    for (size_t t = 0; t < batch && rc == TD_OK; t++) {
        cj[t].cap = cap;
        cj[t].q = calloc(1, sizeof *cj[t].q);
        cj[t].gen = malloc(CAL_BYTES);
        cj[t].tmp = malloc(cap);
        if (!cj[t].q || !cj[t].gen || !cj[t].tmp)
            rc = TD_ENOMEM;
    }
    if (rc != TD_OK)
        goto out;
    td_profile *q = cj[0].q;
    uint8_t *gen = cj[0].gen, *tmp = cj[0].tmp;
    /* at most 4 MiB of regions, spread evenly: the contexts' sort holds
     * 16 bytes per byte counted */
    for (size_t i = 0; i < 4 && i < b->nr; i++) {
        size_t r = b->nr <= 4 ? i : i * b->nr / 4;
        if (rv[r].len) {
            bufs[nv] = rv[r].buf;
            lens[nv++] = rv[r].len;
        }
    }
    if (!nv || (rv[0].len < 64 && b->o.model != TD_PROFILE_MODEL_CONTEXT)) { /* too little for contexts */
        rc = TD_OK;
        goto out;
    }
    double want[NCAL];
    /* the first region as read, one-byte blocks and all: the stream
     * measured against it has model.const's blocks too (until stop 54 the
     * region without them, so a sample with such blocks read 10-20%
     * better than it is) */
    const size_t ns = TD_MIN(b->r[0].len, CAL_SAMPLE);
    for (size_t i = 0; i < NCAL; i++) {
        size_t z = cal_codecs[i](b->r[0].buf, ns, tmp, cap);
        if (!z) {
            rc = TD_EIO; /* cannot happen: the output buffer is the codecs' bound */
            goto out;
        }
        want[i] = (double)ns / (double)z;
    }
    double lz_err[NCAL], best_err[NCAL];
    q->m = p->m;
    if (!lz_only) { /* else nothing to choose: the LZ model is measured for td_profile_fidelity() */
        if ((rc = td__like_ctx_stats(bufs, lens, nv, &st)) != TD_OK)
            goto out;
        size_t total = 0, c = 1024;
        for (size_t i = 0; i < nv; i++)
            total += lens[i];
        while (c < total / 2)
            c *= 2; /* one window in 8 picked: a quarter full */
        ws.h = calloc(c, sizeof *ws.h);
        ws.mask = c - 1;
        if (!ws.h) {
            rc = TD_ENOMEM;
            goto out;
        }
        for (size_t i = 0; i < nv; i++)
            win_scan(&ws, bufs[i], lens[i], NULL);
    }
    if ((rc = digest_json(q, json)) != TD_OK) /* json holds p->m's (build_model) */
        goto out;
    /* context: any candidate beats the LZ model */
    uint64_t shared_lz = UINT64_MAX;
    double err = b->o.model == TD_PROFILE_MODEL_CONTEXT
                     ? HUGE_VAL
                     : cal_error(q, want, HUGE_VAL, gen, tmp, cap, lz_only ? NULL : &ws, &shared_lz, lz_err);
    int found = 0;
    if (err < 0) {
        rc = TD_ENOMEM;
        goto out;
    }
    for (size_t t = 0; t < batch; t++) {
        cj[t].st = st;
        cj[t].base = &p->m;
        cj[t].want = want;
        cj[t].ws = &ws;
    }
    const size_t ncand = lz_only ? 0 : NSETS * NRATES;
    for (size_t c0 = 0; c0 < ncand;) {
        size_t k = fp_busy && __atomic_load_n(fp_busy, __ATOMIC_ACQUIRE) ? 1 : batch;
        size_t nb = TD_MIN(k, ncand - c0);
        for (size_t t = 0; t < nb; t++) {
            cj[t].c = c0 + t;
            cj[t].bound = err;
        }
        td__pool_run(pool, cand_run, cj, sizeof cj[0], nb);
        for (size_t t = 0; t < nb; t++) {
            if ((rc = cj[t].rc) != TD_OK)
                goto out;
            /* never more of the sample's strings than the LZ model makes */
            if (!cj[t].skip && cj[t].e < err && cj[t].shared <= shared_lz) {
                err = cj[t].e;
                best->m = cj[t].q->m;
                memcpy(best_err, cj[t].err, sizeof best_err);
                found = 1;
            }
        }
        c0 += nb;
    }
    if (found)
        p->m = best->m;
    if (found || b->o.model != TD_PROFILE_MODEL_CONTEXT) /* else the LZ model, not measured */
        set_fidelity(p, found ? best_err : lz_err, want, ns);
    rc = model_json_size(&p->m, json) == SIZE_MAX ? TD_ENOMEM : TD_OK;
out:
    td__pool_free(pool);
    td__like_ctx_stats_free(st);
    free(ws.h);
    for (size_t t = 0; t < 2; t++) {
        if (cj[t].q)
            td__like_tables_unref(cj[t].q->tables);
        free(cj[t].q);
        free(cj[t].gen);
        free(cj[t].tmp);
        free(cj[t].json.buf);
    }
    free(best);
    return rc;
}

typedef struct finish_job {
    td_profile_builder *b;
    td_profile *p;
    td__json_out *json;
    int *fp_busy; /* nonzero while the fingerprint runs on another thread */
    int fp, rc;
} finish_job;

static void finish_run(void *x)
{
    finish_job *j = x;
    const td_profile_builder *b = j->b;
    j->rc = TD_OK;
    if (j->json) {
        /* the views: the regions without model.const's blocks (set by
         * sample_dedup), for both models */
        view *rv = calloc(b->nr ? b->nr : 1, sizeof *rv);
        j->rc = rv ? sample_dedup(b, j->p) : TD_ENOMEM;
        if (j->rc == TD_OK)
            j->rc = const_blocks(b, &j->p->m, rv);
        if (j->rc == TD_OK)
            j->rc = build_model(j->b, rv, j->p, j->json);
        if (j->rc == TD_OK)
            j->rc = choose_model(j->b, rv, j->p, j->json, j->fp_busy);
        for (size_t i = 0; rv && i < b->nr; i++)
            free(rv[i].own);
        free(rv);
    } else if (j->fp) {
        j->p->have_fp = fingerprint(b->r[0].buf, b->r[0].len < FP_BYTES ? b->r[0].len : FP_BYTES,
                                    (size_t)b->o.fingerprint_piece, j->p->fp_ratio, j->p->fp_ns) == TD_OK;
        __atomic_store_n(j->fp_busy, 0, __ATOMIC_RELEASE);
    }
}

int td_profile_builder_finish(td_profile_builder *b, td_profile **out)
{
    td__json_out json = {0};
    td_profile *p;
    int rc;
    if (!b || !out || b->finished)
        return TD_EINVAL;
    *out = NULL;
    b->finished = 1;
    /* An empty sample (say, a failed command piped in) has no statistics; a
     * profile of it would quietly make data like nothing in particular. */
    if (b->total == 0)
        return TD_ECORPUS;
    if (b->cur_len) {
        rc = close_region(b);
        if (rc != TD_OK)
            return rc;
    }
    rc = td__sodium_ready();
    if (rc != TD_OK)
        return rc;
    p = calloc(1, sizeof *p);
    if (!p)
        return TD_ENOMEM;
    p->source_bytes = b->total;
    memcpy(p->name, b->name, sizeof p->name);
    for (size_t i = 0; i < b->nr; i++)
        p->sampled_bytes += b->r[i].len;
    /* The fingerprint (xz -6 most of it) and the model are independent:
     * with a second thread, one measures while the other parses. */
    int fp_busy = 0;
    finish_job j[2] = {{.b = b, .p = p, .json = &json, .fp_busy = &fp_busy},
                       {.b = b, .p = p, .fp = b->o.fingerprint && b->nr, .fp_busy = &fp_busy}};
    unsigned nt = b->o.threads ? b->o.threads : td__ncpus();
    td_pool *pool = NULL;
    if (nt > 1 && j[1].fp)
        (void)td__pool_new(&pool, 1); /* no worker: both on this thread */
    fp_busy = td__pool_size(pool) > 1;
    td__pool_run(pool, finish_run, j, sizeof j[0], 2);
    td__pool_free(pool);
    rc = j[0].rc;
    if (rc != TD_OK) {
        free(json.buf);
        free(p);
        return rc;
    }
    rc = digest_json(p, &json);
    free(json.buf);
    if (rc != TD_OK) {
        free(p);
        return rc;
    }
    *out = p;
    return TD_OK;
}

/* ------------------------------------------------------------------------ */
/* JSON                                                                      */
/* ------------------------------------------------------------------------ */

/* The context tables are most of a profile's JSON, so they are written
 * straight into the buffer. */
static void ctx_json(const td__like_ctxmodel *c, td__json_out *o)
{
    char *q = td__json_room(o, 8 + 256 * 4 + 16);
    if (!q)
        return;
    q = (char *)memcpy(q, "\"map\":[", 7) + 7;
    for (int a = 0; a < 256; a++) {
        if (a)
            *q++ = ',';
        q = td__put_u32(q, c->map[a]);
    }
    q = (char *)memcpy(q, "],\"groups\":[", 12) + 12;
    td__json_done(o, q);
    for (unsigned g = 0; g < c->ngroups; g++) {
        int first = 1;
        /* per entry at most ",255," and 10 digits */
        if (!(q = td__json_room(o, 2 + 256 * 16 + 2)))
            return;
        if (g)
            *q++ = ',';
        *q++ = '[';
        for (int b = 0; b < 256; b++) {
            if (!c->cnt[g][b])
                continue;
            if (!first)
                *q++ = ',';
            first = 0;
            q = td__put_u32(q, (uint32_t)b);
            *q++ = ',';
            q = td__put_u32(q, c->cnt[g][b]);
        }
        *q++ = ']';
        td__json_done(o, q);
    }
    td__json_raw(o, "]");
}

/* The nonzero counts of a class table as [class, code, count] triples. */
static void sparse_json(td__json_out *o, const uint32_t t[TD_LIKE_NOC][TD_LIKE_NVC])
{
    int first = 1;
    for (unsigned oc = 0; oc < TD_LIKE_NOC; oc++) {
        /* per entry at most ",[98,63," and 10 digits and "]" */
        char *q = td__json_room(o, TD_LIKE_NVC * 24);
        if (!q)
            return;
        for (unsigned l = 0; l < TD_LIKE_NVC; l++)
            if (t[oc][l]) {
                if (!first)
                    *q++ = ',';
                first = 0;
                *q++ = '[';
                q = td__put_u32(q, oc);
                *q++ = ',';
                q = td__put_u32(q, l);
                *q++ = ',';
                q = td__put_u32(q, t[oc][l]);
                *q++ = ']';
            }
        td__json_done(o, q);
    }
}

void td__like_model_json(const td__like_model *m, td__json_out *o)
{
    int first;
    td__json_raw(o, "{\"doc\":");
    td__json_int(o, m->doc);
    td__json_raw(o, ",\"dedup\":");
    td__json_int(o, m->dedup);
    if (m->cshare) {
        td__json_raw(o, ",\"const\":[");
        td__json_int(o, m->cbyte);
        td__json_raw(o, ",");
        td__json_int(o, m->cshare);
        td__json_raw(o, "]");
    }
    if (m->has_ctx) {
        td__json_raw(o, ",");
        td__like_ctx_json(&m->ctx, o);
        td__json_raw(o, "}");
        return;
    }
    td__json_raw(o, ",\"dist\":[");
    for (unsigned x = 0; x < m->nx; x++) {
        if (x)
            td__json_raw(o, ",");
        td__json_int(o, m->xdist[x]);
    }
    td__json_raw(o, "],\"periods\":[");
    td__json_int(o, m->per[0]);
    td__json_raw(o, ",");
    td__json_int(o, m->per[1]);
    td__json_raw(o, "],\"seq\":[");
    sparse_json(o, m->seq);
    td__json_raw(o, "],\"ml\":[");
    sparse_json(o, m->ml);
    td__json_raw(o, "],\"same\":[");
    first = 1;
    for (unsigned oc = 0; oc < TD_LIKE_NOC; oc++)
        if (m->same[oc]) {
            td__json_raw(o, first ? "[" : ",[");
            first = 0;
            td__json_int(o, oc);
            td__json_raw(o, ",");
            td__json_int(o, m->same[oc]);
            td__json_raw(o, "]");
        }
    td__json_raw(o, "],\"lit\":[");
    for (unsigned bin = 0; bin < TD_LIKE_NBINS; bin++) {
        td__json_raw(o, bin ? ",{\"cat\":[" : "{\"cat\":[");
        for (unsigned f = 0; f < 2; f++) {
            td__json_raw(o, f ? ",[" : "[");
            for (unsigned c = 0; c < TD_LIKE_NCAT; c++) {
                if (c)
                    td__json_raw(o, ",");
                td__json_int(o, m->cat[bin][f][c]);
            }
            td__json_raw(o, "]");
        }
        td__json_raw(o, "],");
        ctx_json(&m->lit[bin], o);
        td__json_raw(o, "}");
    }
    td__json_raw(o, "],\"junction\":{");
    ctx_json(&m->jun, o);
    td__json_raw(o, "}}");
}

int td__like_model_check(const td__like_model *m, char *msg, size_t cap)
{
    uint64_t tot = 0;
    if (m->doc < TD_LIKE_DOC_MIN || m->doc > TD_LIKE_DOC_MAX)
        return td__json_fail(msg, cap, "model.doc must be 1024 .. 1048576");
    if (m->dedup < 65536 || m->dedup > 64u * 65536u)
        return td__json_fail(msg, cap, "model.dedup must be 65536 .. 4194304");
    if (m->cshare > 65536 || m->cbyte > 255 || (!m->cshare && m->cbyte))
        return td__json_fail(msg, cap, "model.const: [byte 0 .. 255, share 1 .. 65536]");
    if (m->has_ctx)
        return td__like_ctx_check(&m->ctx, msg, cap);
    if (m->nx > TD_LIKE_NX)
        return td__json_fail(msg, cap, "model.dist: at most 32 distances");
    for (unsigned x = 0; x < m->nx; x++) {
        if (m->xdist[x] < 1 || m->xdist[x] >= TD_LIKE_DOC_MAX)
            return td__json_fail(msg, cap, "model.dist: distances must be 1 .. 1048575");
        for (unsigned y = 0; y < x; y++)
            if (m->xdist[y] == m->xdist[x])
                return td__json_fail(msg, cap, "model.dist: distances must be distinct");
    }
    for (int t = 0; t < 2; t++)
        if (m->per[t] >= TD_LIKE_DOC_MAX)
            return td__json_fail(msg, cap, "model.periods: periods must be 0 .. 1048575");
    for (unsigned oc = 0; oc < TD_LIKE_NOC; oc++) {
        uint64_t s = td__like_sum(m->seq[oc], TD_LIKE_NVC);
        uint64_t l = td__like_sum(m->ml[oc], TD_LIKE_NVC);
        if (s && oc >= TD_LIKE_OC_X && oc < TD_LIKE_OC_B && oc - TD_LIKE_OC_X >= m->nx)
            return td__json_fail(msg, cap, "model.seq: exact-distance class without a distance");
        if (s && oc >= TD_LIKE_OC_B && oc - TD_LIKE_OC_B > td__like_vcode(TD_LIKE_DOC_MAX - 1))
            return td__json_fail(msg, cap, "model.seq: distance bucket beyond 2^20");
        if (s && !l)
            return td__json_fail(msg, cap, "model.ml: an offset class of model.seq has no match lengths");
        if (s > (1u << 24) || l > (1u << 24))
            return td__json_fail(msg, cap, "model.seq/ml: counts too large");
        if (m->same[oc] > 65536)
            return td__json_fail(msg, cap, "model.same: values must be 0 .. 65536");
        tot += s;
    }
    if (!tot)
        return td__json_fail(msg, cap, "model.seq: no sequence with a nonzero count");
    const td__like_ctxmodel *cm[TD_LIKE_NBINS + 1];
    for (unsigned bin = 0; bin < TD_LIKE_NBINS; bin++) {
        cm[bin] = &m->lit[bin];
        for (unsigned f = 0; f < 2; f++)
            if (td__like_sum(m->cat[bin][f], TD_LIKE_NCAT) > (1u << 24))
                return td__json_fail(msg, cap, "model.lit.cat: counts too large");
    }
    cm[TD_LIKE_NBINS] = &m->jun;
    for (unsigned i = 0; i <= TD_LIKE_NBINS; i++) {
        const td__like_ctxmodel *c = cm[i];
        if (c->ngroups < 1 || c->ngroups > TD_LIKE_MAXG)
            return td__json_fail(msg, cap, "model.lit/junction: 1 .. 32 groups");
        for (int a = 0; a < 256; a++)
            if (c->map[a] >= c->ngroups)
                return td__json_fail(msg, cap, "model.lit/junction: map names a missing group");
        for (unsigned g = 0; g < c->ngroups; g++) {
            uint64_t s = td__like_sum(c->cnt[g], 256);
            if (!s || s > (1u << 24))
                return td__json_fail(msg, cap, "model.lit/junction: each group needs a total of 1 .. 2^24");
        }
    }
    return TD_OK;
}

/* Readers of the "model" object. */
typedef struct rd {
    const td__json_doc *d;
    char *msg;
    size_t cap;
} rd;

static int bad(rd *r, const char *what)
{
    return td__json_fail(r->msg, r->cap, "%s", what);
}

static int get_u32(rd *r, const td__json_node *n, uint32_t lo, uint32_t hi, uint32_t *v, const char *what)
{
    return td__json_get_u32(n, lo, hi, v, r->msg, r->cap, what);
}

static int known_keys(rd *r, const td__json_node *o, const char *const *keys, size_t n,
                      const char *what)
{
    return td__json_known_keys(r->d, o, keys, n, r->msg, r->cap, what);
}

static int read_ctx(rd *r, const td__json_node *o, td__like_ctxmodel *c, const char *what)
{
    static const char *const keys[] = {"map", "groups", "cat"};
    const td__json_node *map = td__json_get(r->d, o, "map"), *gr = td__json_get(r->d, o, "groups");
    char w[96];
    if (!map || map->type != TD_JSON_ARR || map->count != 256)
        return td__json_fail(r->msg, r->cap, "%s.map: expected an array of 256 group numbers", what);
    if (!gr || gr->type != TD_JSON_ARR || gr->count < 1 || gr->count > TD_LIKE_MAXG)
        return td__json_fail(r->msg, r->cap, "%s.groups: expected an array of 1 .. 32 groups", what);
    if (known_keys(r, o, keys, sizeof keys / sizeof keys[0], what))
        return TD_EINVAL;
    c->ngroups = gr->count;
    int a = 0;
    snprintf(w, sizeof w, "%s.map", what);
    for (const td__json_node *e = td__json_child(r->d, map); e; e = td__json_next(r->d, e), a++) {
        uint32_t v;
        if (get_u32(r, e, 0, c->ngroups - 1, &v, w) != TD_OK)
            return TD_EINVAL;
        c->map[a] = (uint8_t)v;
    }
    unsigned g = 0;
    snprintf(w, sizeof w, "%s.groups", what);
    for (const td__json_node *e = td__json_child(r->d, gr); e; e = td__json_next(r->d, e), g++) {
        int last = -1;
        if (e->type != TD_JSON_ARR || e->count % 2)
            return td__json_fail(r->msg, r->cap, "%s: each group is a flat array of (byte, count) pairs", w);
        for (const td__json_node *x = td__json_child(r->d, e); x; x = td__json_next(r->d, x)) {
            uint32_t sym, cnt;
            if (get_u32(r, x, 0, 255, &sym, w) != TD_OK)
                return TD_EINVAL;
            x = td__json_next(r->d, x);
            if (get_u32(r, x, 1, 1u << 24, &cnt, w) != TD_OK)
                return TD_EINVAL;
            if ((int)sym <= last)
                return td__json_fail(r->msg, r->cap, "%s: byte values must increase within a group", w);
            last = (int)sym;
            c->cnt[g][sym] = cnt;
        }
    }
    return TD_OK;
}

static int read_triples(rd *r, const td__json_node *arr, uint32_t tab[TD_LIKE_NOC][TD_LIKE_NVC], const char *what)
{
    if (!arr || arr->type != TD_JSON_ARR)
        return bad(r, what);
    int prev = -1;
    for (const td__json_node *e = td__json_child(r->d, arr); e; e = td__json_next(r->d, e)) {
        uint32_t oc, c, n;
        if (e->type != TD_JSON_ARR || e->count != 3)
            return bad(r, what);
        const td__json_node *x = td__json_child(r->d, e);
        if (get_u32(r, x, 0, TD_LIKE_NOC - 1, &oc, what) || get_u32(r, td__json_next(r->d, x), 0, TD_LIKE_NVC - 1, &c, what) ||
            get_u32(r, td__json_next(r->d, td__json_next(r->d, x)), 1, 1u << 24, &n, what))
            return TD_EINVAL;
        if ((int)(oc * TD_LIKE_NVC + c) <= prev)
            return td__json_fail(r->msg, r->cap, "%s: entries must be sorted and distinct", what);
        prev = (int)(oc * TD_LIKE_NVC + c);
        tab[oc][c] = n;
    }
    return TD_OK;
}

static int read_model(rd *r, const td__json_node *mo, td__like_model *m)
{
    static const char *const keys[] = {"doc", "dedup", "const", "dist", "periods", "seq", "ml", "same", "lit",
                                       "junction", "ctx"};
    const td__json_doc *d = r->d;
    const td__json_node *n;
    if (!mo || mo->type != TD_JSON_OBJ)
        return bad(r, "profile: \"model\" must be an object");
    if (known_keys(r, mo, keys, sizeof keys / sizeof keys[0], "model"))
        return TD_EINVAL;
    memset(m, 0, sizeof *m);
    if (get_u32(r, td__json_get(d, mo, "doc"), TD_LIKE_DOC_MIN, TD_LIKE_DOC_MAX, &m->doc, "model.doc") ||
        get_u32(r, td__json_get(d, mo, "dedup"), 65536, 64u * 65536u, &m->dedup, "model.dedup"))
        return TD_EINVAL;
    n = td__json_get(d, mo, "const");
    if (n) {
        if (n->type != TD_JSON_ARR || n->count != 2)
            return bad(r, "model.const: expected [byte, share]");
        if (get_u32(r, td__json_child(d, n), 0, 255, &m->cbyte, "model.const: byte") ||
            get_u32(r, td__json_next(d, td__json_child(d, n)), 1, 65536, &m->cshare, "model.const: share"))
            return TD_EINVAL;
    }
    n = td__json_get(d, mo, "ctx");
    if (n) {
        /* a context model has no LZ statistics (format 8) */
        static const char *const ck[] = {"doc", "dedup", "const", "ctx"};
        if (known_keys(r, mo, ck, sizeof ck / sizeof ck[0], "model (with ctx)"))
            return TD_EINVAL;
        m->has_ctx = 1;
        if (td__like_ctx_read(d, n, &m->ctx, r->msg, r->cap))
            return TD_EINVAL;
        return td__like_model_check(m, r->msg, r->cap);
    }
    n = td__json_get(d, mo, "dist");
    if (!n || n->type != TD_JSON_ARR || n->count > TD_LIKE_NX)
        return bad(r, "model.dist: expected an array of at most 32 distances");
    for (const td__json_node *e = td__json_child(d, n); e; e = td__json_next(d, e))
        if (get_u32(r, e, 1, TD_LIKE_DOC_MAX - 1, &m->xdist[m->nx++], "model.dist"))
            return TD_EINVAL;
    n = td__json_get(d, mo, "periods");
    if (!n || n->type != TD_JSON_ARR || n->count != 2)
        return bad(r, "model.periods: expected two periods");
    if (get_u32(r, td__json_child(d, n), 0, TD_LIKE_DOC_MAX - 1, &m->per[0], "model.periods") ||
        get_u32(r, td__json_next(d, td__json_child(d, n)), 0, TD_LIKE_DOC_MAX - 1, &m->per[1], "model.periods"))
        return TD_EINVAL;
    if (read_triples(r, td__json_get(d, mo, "seq"), m->seq, "model.seq: expected [class, code, count] triples") ||
        read_triples(r, td__json_get(d, mo, "ml"), m->ml, "model.ml: expected [class, code, count] triples"))
        return TD_EINVAL;
    n = td__json_get(d, mo, "same");
    if (!n || n->type != TD_JSON_ARR)
        return bad(r, "model.same: expected an array of [class, p16] pairs");
    int prev = -1;
    for (const td__json_node *e = td__json_child(d, n); e; e = td__json_next(d, e)) {
        uint32_t oc, q;
        if (e->type != TD_JSON_ARR || e->count != 2)
            return bad(r, "model.same: expected [class, p16] pairs");
        if (get_u32(r, td__json_child(d, e), 0, TD_LIKE_NOC - 1, &oc, "model.same") ||
            get_u32(r, td__json_next(d, td__json_child(d, e)), 1, 65536, &q, "model.same"))
            return TD_EINVAL;
        if ((int)oc <= prev)
            return bad(r, "model.same: classes must be sorted and distinct");
        prev = (int)oc;
        m->same[oc] = q;
    }
    n = td__json_get(d, mo, "lit");
    if (!n || n->type != TD_JSON_ARR || n->count != TD_LIKE_NBINS)
        return bad(r, "model.lit: expected 4 position bins");
    unsigned bin = 0;
    for (const td__json_node *e = td__json_child(d, n); e; e = td__json_next(d, e), bin++) {
        const td__json_node *cat = td__json_get(d, e, "cat");
        if (e->type != TD_JSON_OBJ || !cat || cat->type != TD_JSON_ARR || cat->count != 2)
            return bad(r, "model.lit: each bin needs \"cat\": two rows of 6 counts");
        unsigned f = 0;
        for (const td__json_node *row = td__json_child(d, cat); row; row = td__json_next(d, row), f++) {
            unsigned c = 0;
            if (row->type != TD_JSON_ARR || row->count != TD_LIKE_NCAT)
                return bad(r, "model.lit.cat: rows of 6 counts");
            for (const td__json_node *x = td__json_child(d, row); x; x = td__json_next(d, x), c++)
                if (get_u32(r, x, 0, 1u << 24, &m->cat[bin][f][c], "model.lit.cat"))
                    return TD_EINVAL;
        }
        if (read_ctx(r, e, &m->lit[bin], "model.lit"))
            return TD_EINVAL;
    }
    n = td__json_get(d, mo, "junction");
    if (!n || n->type != TD_JSON_OBJ || td__json_get(d, n, "cat"))
        return bad(r, "model.junction: expected an object with map and groups");
    if (read_ctx(r, n, &m->jun, "model.junction"))
        return TD_EINVAL;
    return td__like_model_check(m, r->msg, r->cap);
}

static double num_or(const td__json_node *n, double def)
{
    return n && n->type == TD_JSON_NUM && isfinite(n->dval) ? n->dval : def;
}

static int load_impl(td_profile *p, const void *buf, size_t len, char *msg, size_t cap)
{
    td__json_doc d;
    rd r;
    int rc;
    if (len > TD_LIKE_MAX_JSON) {
        td__json_fail(msg, cap, "profile larger than 64 KiB");
        return TD_ERANGE;
    }
    rc = td__json_parse(&d, buf, len, msg, cap);
    if (rc != TD_OK)
        return rc;
    r.d = &d;
    r.msg = msg;
    r.cap = cap;
    const td__json_node *root = &d.nodes[0];
    const td__json_node *fmt = td__json_get(&d, root, "format"), *ver = td__json_get(&d, root, "version");
    rc = TD_EINVAL;
    if (root->type != TD_JSON_OBJ) {
        bad(&r, "profile: expected a JSON object");
        goto out;
    }
    if (!fmt || !td__json_str(&d, fmt) || strcmp(td__json_str(&d, fmt), "libtestdata-profile")) {
        bad(&r, "profile: \"format\" must be \"libtestdata-profile\"");
        goto out;
    }
    if (!ver || ver->type != TD_JSON_NUM || !ver->is_int || ver->ival < 1 || ver->ival > 2) {
        bad(&r, "profile: unsupported \"version\" (this library reads versions 1 and 2)");
        goto out;
    }
    const td__json_node *nm = td__json_get(&d, root, "name");
    if (nm) {
        if (!td__json_str(&d, nm) || nm->count >= TD_LIKE_NAME_MAX) {
            bad(&r, "profile: \"name\" must be a string of at most 63 bytes");
            goto out;
        }
        memcpy(p->name, td__json_str(&d, nm), nm->count + 1);
    }
    const td__json_node *src = td__json_get(&d, root, "source");
    if (src) {
        const td__json_node *b = td__json_get(&d, src, "bytes"), *s = td__json_get(&d, src, "sampled");
        if (b && b->type == TD_JSON_NUM && b->is_int && b->ival >= 0)
            p->source_bytes = (uint64_t)b->ival;
        if (s && s->type == TD_JSON_NUM && s->is_int && s->ival >= 0)
            p->sampled_bytes = (uint64_t)s->ival;
    }
    const td__json_node *fp = td__json_get(&d, root, "fingerprint");
    p->dedup = 1.0;
    if (fp && fp->type == TD_JSON_OBJ) {
        p->dedup = num_or(td__json_get(&d, fp, "dedup4k"), 1.0);
        p->const4k = num_or(td__json_get(&d, fp, "const4k"), 0.0);
        if (!(p->dedup >= 1.0 && p->dedup <= TD_DEDUP_MAX_RATIO) || !(p->const4k >= 0 && p->const4k <= 1)) {
            bad(&r, "fingerprint: dedup4k must be 1 .. 2^20 and const4k 0 .. 1");
            goto out;
        }
        for (int c = 0; c < TD_LIKE_NFP; c++) {
            const td__json_node *e = td__json_get(&d, fp, td_codec_name(c));
            if (e && e->type == TD_JSON_OBJ) {
                p->fp_ratio[c] = num_or(td__json_get(&d, e, "ratio"), 0);
                p->fp_ns[c] = num_or(td__json_get(&d, e, "ns_per_byte"), 0);
                p->have_fp = 1;
            }
        }
    }
    rc = read_model(&r, td__json_get(&d, root, "model"), &p->m);
    if (rc == TD_OK)
        rc = td__like_profile_finalize(p);
out:
    td__json_free(&d);
    return rc;
}

int td_profile_load_msg(td_profile **out, const void *buf, size_t len, char *msg, size_t msgcap)
{
    td_profile *p;
    int rc;
    if (msg && msgcap)
        msg[0] = 0;
    if (!out || (!buf && len))
        return TD_EINVAL;
    *out = NULL;
    rc = td__sodium_ready();
    if (rc != TD_OK)
        return rc;
    p = calloc(1, sizeof *p);
    if (!p)
        return TD_ENOMEM;
    rc = load_impl(p, buf, len, msg, msgcap);
    if (rc != TD_OK) {
        free(p);
        return rc;
    }
    *out = p;
    return TD_OK;
}

int td_profile_load(td_profile **out, const void *buf, size_t len)
{
    return td_profile_load_msg(out, buf, len, NULL, 0);
}

int td_profile_load_file_msg(td_profile **out, const char *path, char *msg, size_t msgcap)
{
    char *buf;
    size_t len = 0;
    int fd;
    if (!out || !path)
        return TD_EINVAL;
    *out = NULL;
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (msg && msgcap)
            snprintf(msg, msgcap, "%s: %s", path, strerror(errno));
        return TD_EIO;
    }
    /* At most one byte past the limit: a larger file is rejected without
     * reading it all. */
    int rc = td__read_fd(fd, TD_LIKE_MAX_JSON, 0, &buf, &len);
    if (rc != TD_OK) {
        int e = errno;
        if (rc == TD_EIO && msg && msgcap)
            snprintf(msg, msgcap, "%s: %s", path, strerror(e));
        close(fd);
        errno = e;
        return rc;
    }
    td__file_id src = td__file_id_fd(fd);
    close(fd);
    rc = td_profile_load_msg(out, buf, len, msg, msgcap);
    if (rc == TD_OK)
        (*out)->src = src;
    free(buf);
    return rc;
}

int td_profile_load_file(td_profile **out, const char *path)
{
    return td_profile_load_file_msg(out, path, NULL, 0);
}

static void profile_json(const td_profile *p, td__json_out *o)
{
    /* version 2: a model may be a context model (format 8) */
    td__json_raw(o, p->m.has_ctx ? "{\n  \"format\": \"libtestdata-profile\",\n  \"version\": 2,\n"
                                 : "{\n  \"format\": \"libtestdata-profile\",\n  \"version\": 1,\n");
    if (p->name[0]) {
        td__json_raw(o, "  \"name\": ");
        td__json_string(o, p->name);
        td__json_raw(o, ",\n");
    }
    td__json_raw(o, "  \"source\": {\"bytes\": ");
    td__json_int(o, (int64_t)(p->source_bytes > INT64_MAX ? INT64_MAX : p->source_bytes));
    td__json_raw(o, ", \"sampled\": ");
    td__json_int(o, (int64_t)p->sampled_bytes);
    td__json_raw(o, "},\n  \"fingerprint\": {");
    if (p->have_fp) {
        for (int c = 0; c < TD_LIKE_NFP; c++) {
            td__json_raw(o, "\"");
            td__json_raw(o, td_codec_name(c));
            td__json_raw(o, "\": {\"ratio\": ");
            td__json_fixed(o, p->fp_ratio[c], 3);
            td__json_raw(o, ", \"ns_per_byte\": ");
            td__json_fixed(o, p->fp_ns[c], 2);
            td__json_raw(o, "}, ");
        }
    }
    td__json_raw(o, "\"dedup4k\": ");
    td__json_fixed(o, p->dedup, 4);
    td__json_raw(o, ", \"const4k\": ");
    td__json_fixed(o, p->const4k, 4);
    td__json_raw(o, "},\n  \"model\": ");
    td__like_model_json(&p->m, o);
    td__json_raw(o, "\n}\n");
}

int td_profile_save(const td_profile *p, void *buf, size_t cap, size_t *len)
{
    td__json_out o = {0};
    if (!p || !len || (!buf && cap))
        return TD_EINVAL;
    profile_json(p, &o);
    if (o.err) {
        free(o.buf);
        return TD_ENOMEM;
    }
    *len = o.len;
    if (o.len > cap) {
        free(o.buf);
        return TD_ERANGE;
    }
    memcpy(buf, o.buf, o.len);
    free(o.buf);
    return TD_OK;
}

int td_profile_save_file(const td_profile *p, const char *path)
{
    td__json_out o = {0};
    int rc;
    if (!p || !path)
        return TD_EINVAL;
    profile_json(p, &o);
    if (o.err) {
        free(o.buf);
        return TD_ENOMEM;
    }
    rc = td__output_put(path, o.buf, o.len);
    free(o.buf);
    return rc;
}

const char *td__profile_unknown_msg(char *buf, size_t cap, const char *name, int or_file)
{
    char names[256];
    const char *s = td_suggest(name, td__like_builtin_names);
    td__join(names, sizeof names, td__like_builtin_names);
    td__msg(buf, cap, or_file ? "neither a built-in profile (%s) nor a profile file%s%s%s"
                              : "not a built-in profile (built-ins: %s)%s%s%s",
            names, s ? "; did you mean '" : "", s ? s : "", s ? "'?" : "");
    return buf;
}

int td_profile_open(td_profile **out, const char *name_or_path, char *msg, size_t msgcap)
{
    const td_profile *b;
    int rc;
    if (!out || !name_or_path)
        return TD_EINVAL;
    *out = NULL;
    b = td_profile_builtin(name_or_path);
    if (b) {
        /* Built-ins are immutable and td_profile_free ignores them. */
        *out = (td_profile *)(uintptr_t)b;
        return TD_OK;
    }
    rc = td_profile_load_file_msg(out, name_or_path, msg, msgcap);
    if (rc == TD_EIO && errno == ENOENT && msg && msgcap) {
        char why[384];
        td__msg(msg, msgcap, "'%s' is %s", name_or_path,
                td__profile_unknown_msg(why, sizeof why, name_or_path, 1));
        errno = ENOENT;
    }
    return rc;
}

void td_profile_free(td_profile *p)
{
    if (p && !p->builtin) {
        td__like_tables_unref(p->tables);
        free(p);
    }
}

/* ------------------------------------------------------------------------ */
/* Built-in profiles                                                         */
/* ------------------------------------------------------------------------ */

/* Each parsed on its own first use (opening a profile file, or one
 * built-in, parses no other: that was most of the start-up of `gen like`),
 * into memory kept for the life of the process.  A slot of
 * td__like_builtin_objs is written once, under the lock, with release
 * order after the object is complete; a reader that sees it non-NULL
 * (acquire) sees the whole immutable object, so no lock once each is
 * parsed. */
static pthread_mutex_t builtin_mu = PTHREAD_MUTEX_INITIALIZER;

static const td_profile *builtin_get(unsigned i)
{
    td_profile *p = __atomic_load_n(&td__like_builtin_objs[i], __ATOMIC_ACQUIRE);
    if (p)
        return p;
    pthread_mutex_lock(&builtin_mu);
    /* Relaxed: the only writer of the slot holds this lock. */
    p = __atomic_load_n(&td__like_builtin_objs[i], __ATOMIC_RELAXED);
    if (!p && td__sodium_ready() == TD_OK && (p = calloc(1, sizeof *p))) {
        if (load_impl(p, td__like_builtins[i].json, strlen(td__like_builtins[i].json), NULL, 0) != TD_OK) {
            free(p); /* a broken table is a build error; the tests catch it */
            p = NULL;
        } else {
            snprintf(p->name, sizeof p->name, "%s", td__like_builtins[i].name);
            p->builtin = 1;
            __atomic_store_n(&td__like_builtin_objs[i], p, __ATOMIC_RELEASE);
        }
    }
    pthread_mutex_unlock(&builtin_mu);
    return p;
}

/* Index of the built-in called name, or -1. */
static int builtin_index(const char *name)
{
    for (unsigned i = 0; name && i < td__like_nbuiltins; i++)
        if (strcmp(td__like_builtins[i].name, name) == 0)
            return (int)i;
    return -1;
}

const td_profile *td_profile_builtin(const char *name)
{
    int i = builtin_index(name);
    return i < 0 ? NULL : builtin_get((unsigned)i);
}

const char *td_profile_builtin_name(unsigned i)
{
    return i < td__like_nbuiltins ? td__like_builtins[i].name : NULL;
}

int td_profile_builtin_msg(const td_profile **out, const char *name, char *msg, size_t msgcap)
{
    if (!out || !name)
        return TD_EINVAL;
    int i = builtin_index(name);
    if (i >= 0)
        return (*out = builtin_get((unsigned)i)) ? TD_OK : TD_ENOMEM;
    *out = NULL;
    if (msg && msgcap) {
        char why[384];
        td__msg(msg, msgcap, "'%s' is %s", name, td__profile_unknown_msg(why, sizeof why, name, 0));
    }
    return TD_EINVAL;
}

/* ------------------------------------------------------------------------ */
/* Accessors                                                                 */
/* ------------------------------------------------------------------------ */

const char *td_profile_name(const td_profile *p)
{
    return p ? p->name : NULL;
}

int td_profile_digest(const td_profile *p, uint8_t out[32])
{
    if (!p || !out)
        return TD_EINVAL;
    memcpy(out, p->digest, 32);
    return TD_OK;
}

int td_profile_fingerprint(const td_profile *p, int codec, double *ratio, double *ns_per_byte)
{
    if (!p || codec < 0 || codec >= TD_LIKE_NFP)
        return TD_EINVAL;
    if (!p->have_fp)
        return TD_ERANGE;
    if (ratio)
        *ratio = p->fp_ratio[codec];
    if (ns_per_byte)
        *ns_per_byte = p->fp_ns[codec];
    return TD_OK;
}

int td_profile_fidelity(const td_profile *p, int i, td_fidelity_t *out)
{
    if (!p || !out || i < 0 || i >= TD_PROFILE_FIDELITY_CODECS)
        return TD_EINVAL;
    memset(out, 0, sizeof *out);
    if (!p->have_fid)
        return TD_ERANGE;
    out->label = cal_labels[i];
    out->error = p->fid_err[i];
    out->sample_ratio = p->fid_ratio[i];
    out->generated_bytes = CAL_BYTES;
    out->sample_bytes = p->fid_sample;
    return TD_OK;
}

int td_profile_info(const td_profile *p, td_profile_info_t *info)
{
    if (!p || !info)
        return TD_EINVAL;
    memset(info, 0, sizeof *info);
    info->source_bytes = p->source_bytes;
    info->sampled_bytes = p->sampled_bytes;
    info->doc_bytes = p->m.doc;
    info->model = p->m.has_ctx ? TD_PROFILE_MODEL_CONTEXT : TD_PROFILE_MODEL_LZ;
    info->dedup = p->dedup;
    info->const4k = p->const4k;
    return TD_OK;
}
