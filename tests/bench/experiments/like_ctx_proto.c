/* like_ctx_proto.c: a byte context model as the source of `like` data, in C,
 * through format 7's block layout (experiment; not part of the library).
 *
 * tests/bench/experiments/like_markov_oracle.py showed in Python, on the first
 * 300 KB of a sample, that an order-3/4 byte model of the sample, pruned to
 * 30-60 KB, with the sample's long repeats copied on top at a calibrated rate
 * and an entropy floor, matches prose under all ten codecs.  This program asks
 * what the Python could not: does it hold for whole samples, at 32 MiB,
 * through the block layout `like` uses (one 1 MiB base block, every block
 * the base through a byte permutation of its own, gen_like.c), and how fast
 * is it?
 *
 * It reads the sample (at most --cap bytes), builds the model as the oracle
 * does, calibrates it as a builder would (each --set and copy rate; the one
 * whose 1 MiB of output is closest to the sample's first MiB, or the whole
 * sample if shorter, under gzip -6 and bzip2 -9 (--cal: other codecs): the
 * least of the largest |error|; with CTX_CAL_SAMPLE_SIZE set, output as long as that instead;
 * --calsize B: B bytes of output),
 * generates a 1 MiB base block from it (seed --seed) and writes --mib MiB:
 * block b is the base through block b's class-preserving byte permutation
 * (byte_class() below is gen_like.c's).  It prints on stderr the chosen
 * setting, the model's size, and the times of each step, and the speed of
 * LZ4_compress_default on the base block for comparison.
 *
 *   cc -O2 -march=native -o /tmp/ctxp tests/bench/experiments/like_ctx_proto.c -lz -lbz2 -llz4 -llzma -lzstd -lm
 *   /tmp/ctxp --mib 32 SAMPLE OUT
 *
 * tests/bench/experiments/like_ctx_eval.py runs it over the samples and
 * measures OUT against the sample as tests/bench/bench_like.py does.
 */
#include <bzlib.h>
#include <lzma.h>
#include <lz4.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>
#include <zstd.h>

#define MAXK 4
#define BASE ((size_t)1 << 20)

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    return p;
}

static uint64_t wy(uint64_t *s)
{
    *s += 0xa0761d6478bd642full;
    __uint128_t m = (__uint128_t)*s * (*s ^ 0xe7037ed1a0b428dbull);
    return (uint64_t)(m >> 64) ^ (uint64_t)m;
}

/* ---- the model ---- */

typedef struct {
    uint64_t key;  /* k << 40 | context (newest byte lowest) */
    uint32_t total; /* of the kept entries */
    uint32_t raw;   /* all the context's occurrences */
    uint16_t n;     /* entries */
    uint8_t k;
    float bits;     /* entropy of the kept entries */
    uint32_t off;   /* into the entry arrays */
} ctx_t;

typedef struct {
    int K;
    ctx_t *c;
    size_t nc;
    uint8_t *eb;   /* entry bytes */
    uint32_t *ew;  /* entry counts */
    /* alias tables, per entry: threshold (of 2^32) and the alias entry;
     * and each entry's next state (the longest kept context that ends
     * with the context's bytes and then the entry's byte) */
    uint32_t *thr;
    uint8_t *alias;
    uint32_t *next;
    uint32_t o1[256]; /* the state of order 1 of each byte (or order 0) */
    /* open addressing: key + 1 -> context index */
    uint64_t *hk;
    uint32_t *hv;
    size_t hmask;
    size_t bytes; /* what a profile would store: k + 1 + 3 per entry, per context */
} model_t;

/* a[0, n) sorted by their low bits bits (LSD, 8 a pass), through t; returns
 * whichever of a and t holds the result. */
static uint64_t *radix64(uint64_t *a, uint64_t *t, size_t n, int bits)
{
    size_t cnt[256];
    for (int sh = 0; sh < bits; sh += 8) {
        memset(cnt, 0, sizeof cnt);
        for (size_t i = 0; i < n; i++)
            cnt[(a[i] >> sh) & 255]++;
        size_t s = 0;
        for (int b = 0; b < 256; b++) {
            size_t x = cnt[b];
            cnt[b] = s;
            s += x;
        }
        for (size_t i = 0; i < n; i++)
            t[cnt[(a[i] >> sh) & 255]++] = a[i];
        uint64_t *x = a;
        a = t;
        t = x;
    }
    return a;
}

/* Most occurrences first; a context's prefix (its bytes but the newest)
 * occurs at least as often, and comes first at a tie (lower order). */
static int by_total_desc(const void *x, const void *y)
{
    const ctx_t *a = x, *b = y;
    if (a->raw != b->raw)
        return a->raw < b->raw ? 1 : -1;
    return a->key < b->key ? -1 : a->key > b->key;
}

static size_t h_slot(const model_t *m, uint64_t key)
{
    size_t i = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 24) & m->hmask;
    while (m->hk[i] && m->hk[i] != key + 1)
        i = (i + 1) & m->hmask;
    return i;
}

/* The longest kept context of at most top bytes of ctx (newest byte
 * lowest): its index. */
static uint32_t longest(const model_t *m, uint64_t ctx, int top)
{
    for (int k = top; k > 0; k--) {
        size_t sl = h_slot(m, (uint64_t)k << 40 | (ctx & (((uint64_t)1 << (8 * k)) - 1)));
        if (m->hk[sl])
            return m->hv[sl];
    }
    return m->hv[h_slot(m, 0)];
}

/* Order-K model of s[0, n), the contexts of order >= 2 pruned to budget
 * bytes (0: not pruned), each context its E most frequent next bytes; a
 * context of order >= 1 whose kept entries count less than 2 is left out
 * (the oracle backs off from it). */
static void model_build(model_t *m, const uint8_t *s, size_t n, int K, size_t budget, int E)
{
    memset(m, 0, sizeof *m);
    m->K = K;
    size_t nk = 0;
    for (int k = 0; k <= K; k++)
        nk += n > (size_t)k ? n - (size_t)k : 0;
    uint64_t *keys = xmalloc(nk * sizeof *keys), *tmp = xmalloc(nk * sizeof *tmp);
    size_t j = 0;
    for (int k = 0; k <= K; k++)
        for (size_t i = (size_t)k; i < n; i++) {
            uint64_t c = 0;
            for (int q = 1; q <= k; q++)
                c |= (uint64_t)s[i - (size_t)q] << (8 * (q - 1));
            keys[j++] = ((uint64_t)k << 40 | c) << 8 | s[i];
        }
    const uint64_t *sorted = radix64(keys, tmp, nk, 56); /* order from bit 48, context, next byte */
    /* every context, with all its entries */
    size_t cap = 1024, nall = 0;
    ctx_t *all = xmalloc(cap * sizeof *all);
    size_t ecap = 1 << 16, ne = 0;
    uint8_t *eb = xmalloc(ecap);
    uint32_t *ew = xmalloc(ecap * sizeof *ew);
    for (size_t i = 0; i < nk;) {
        uint64_t ck = sorted[i] >> 8;
        uint32_t cnt[256];
        memset(cnt, 0, sizeof cnt);
        size_t e = i;
        while (e < nk && sorted[e] >> 8 == ck)
            cnt[sorted[e++] & 255]++;
        uint32_t raw = (uint32_t)(e - i);
        i = e;
        /* top E by count (ties: lower byte first) */
        uint8_t ob[256];
        int no = 0;
        for (int b = 0; b < 256; b++)
            if (cnt[b])
                ob[no++] = (uint8_t)b;
        for (int a = 1; a < no; a++)
            for (int q = a; q && cnt[ob[q - 1]] < cnt[ob[q]]; q--) {
                uint8_t t = ob[q];
                ob[q] = ob[q - 1];
                ob[q - 1] = t;
            }
        if (no > E)
            no = E;
        uint32_t tot = 0;
        for (int q = 0; q < no; q++)
            tot += cnt[ob[q]];
        int k = (int)(ck >> 40);
        if (k >= 1 && tot < 2)
            continue;
        if (nall == cap)
            all = realloc(all, (cap *= 2) * sizeof *all);
        while (ne + (size_t)no > ecap) {
            ecap *= 2;
            eb = realloc(eb, ecap);
            ew = realloc(ew, ecap * sizeof *ew);
        }
        double h = 0;
        for (int q = 0; q < no; q++) {
            eb[ne + (size_t)q] = ob[q];
            ew[ne + (size_t)q] = cnt[ob[q]];
            double p = (double)cnt[ob[q]] / tot;
            h -= p * log2(p);
        }
        all[nall++] = (ctx_t){ck, tot, raw, (uint16_t)no, (uint8_t)k, (float)h, (uint32_t)ne};
        ne += (size_t)no;
    }
    free(keys);
    free(tmp);
    /* keep orders 0 and 1; then the most frequent of order >= 2 that fit,
     * each only if its prefix is kept (so the kept contexts are closed
     * under prefixes, and a state's successor by a byte is found from the
     * state alone) */
    qsort(all, nall, sizeof *all, by_total_desc);
    size_t hc = 1024;
    while (hc < 2 * nall)
        hc *= 2;
    m->hk = calloc(hc, sizeof *m->hk);
    m->hv = xmalloc(hc * sizeof *m->hv);
    m->hmask = hc - 1;
    size_t cost = 0, nkeep = 0;
    for (size_t i = 0; i < nall; i++) {
        size_t c = (size_t)all[i].k + 1 + 3 * (size_t)all[i].n;
        if (all[i].k >= 2) {
            if (budget && cost + c > budget)
                continue;
            uint64_t pre = (uint64_t)(all[i].k - 1) << 40 | ((all[i].key & 0xFFFFFFFFFFull) >> 8);
            if (!m->hk[h_slot(m, pre)])
                continue;
        }
        cost += c;
        all[nkeep] = all[i];
        size_t sl = h_slot(m, all[i].key);
        m->hk[sl] = all[i].key + 1;
        m->hv[sl] = (uint32_t)nkeep++;
    }
    m->c = all;
    m->nc = nkeep;
    m->bytes = cost;
    m->eb = eb;
    m->ew = ew;
    m->thr = xmalloc(ne * sizeof *m->thr);
    m->alias = xmalloc(ne);
    m->next = xmalloc(ne * sizeof *m->next);
    for (unsigned b = 0; b < 256; b++)
        m->o1[b] = m->hv[h_slot(m, 0)];
    for (size_t i = 0; i < nkeep; i++) {
        ctx_t *c = &m->c[i];
        if (c->k == 1)
            m->o1[c->key & 255] = (uint32_t)i;
        /* Vose's alias table over the n entries */
        unsigned n = c->n;
        double pr[256];
        int sm[256], lg[256], ns = 0, nl = 0;
        for (unsigned q = 0; q < n; q++) {
            pr[q] = (double)ew[c->off + q] * n / c->total;
            if (pr[q] < 1.0)
                sm[ns++] = (int)q;
            else
                lg[nl++] = (int)q;
        }
        for (unsigned q = 0; q < n; q++) {
            m->thr[c->off + q] = UINT32_MAX;
            m->alias[c->off + q] = (uint8_t)q;
        }
        while (ns && nl) {
            int a = sm[--ns], g = lg[--nl];
            m->thr[c->off + (unsigned)a] = (uint32_t)(pr[a] * 4294967295.0);
            m->alias[c->off + (unsigned)a] = (uint8_t)g;
            pr[g] -= 1.0 - pr[a];
            if (pr[g] < 1.0)
                sm[ns++] = g;
            else
                lg[nl++] = g;
        }
        for (unsigned q = 0; q < n; q++)
            m->next[c->off + q] = longest(m, (c->key & 0xFFFFFFFFull) << 8 | eb[c->off + q],
                                          c->k + 1 < m->K ? c->k + 1 : m->K);
    }
}

static void model_free(model_t *m)
{
    free(m->c);
    free(m->eb);
    free(m->ew);
    free(m->thr);
    free(m->alias);
    free(m->next);
    free(m->hk);
    free(m->hv);
}

/* ---- the sample's long repeats ---- */

typedef struct {
    uint32_t len, dist;
} rep_t;

/* A greedy parse (the most recent earlier occurrence of each 4 bytes, as
 * the oracle's): its matches of at least least bytes, and their rate per
 * byte of the sample outside them. */
static rep_t *long_matches(const uint8_t *s, size_t n, uint32_t least, size_t *nr, double *rate)
{
    const unsigned HB = 22;
    int64_t *last = xmalloc(((size_t)1 << HB) * sizeof *last);
    for (size_t i = 0; i < (size_t)1 << HB; i++)
        last[i] = -1;
    size_t cap = 1024, nn = 0, covered = 0;
    rep_t *out = xmalloc(cap * sizeof *out);
#define H4(p) ((uint32_t)(((uint64_t)((uint32_t)(p)[0] | (uint32_t)(p)[1] << 8 | (uint32_t)(p)[2] << 16 | (uint32_t)(p)[3] << 24) * 2654435761u) >> (32 - HB)) & ((1u << HB) - 1))
    size_t i = 0;
    while (i + 4 <= n) {
        uint32_t h = H4(s + i);
        int64_t j = last[h];
        last[h] = (int64_t)i;
        size_t m = 0;
        if (j >= 0 && memcmp(s + j, s + i, 4) == 0)
            while (i + m < n && s[i + m] == s[(size_t)j + m])
                m++;
        if (m >= least) {
            if (nn == cap)
                out = realloc(out, (cap *= 2) * sizeof *out);
            out[nn++] = (rep_t){(uint32_t)m, (uint32_t)(i - (size_t)j)};
            for (size_t k = i + 1; k < i + m && k + 4 <= n; k++)
                last[H4(s + k)] = (int64_t)k;
            covered += m;
            i += m;
        } else {
            i++;
        }
    }
    free(last);
    *nr = nn;
    *rate = (double)nn / (double)(n - covered > 0 ? n - covered : 1);
    return out;
}

/* ---- generation ---- */

/* One document being made: out[0, n) from model m, with copies of reps at
 * rate (per drawn byte), and the entropy floor: while the last 16 draws
 * came from distributions of less than floor bits in all, draw from order
 * 1. */
typedef struct {
    const model_t *m;
    const rep_t *reps;
    size_t nr;
    double lq, floor_bits;
    uint64_t s, ctx; /* ctx: the last bytes, newest lowest */
    uint8_t *out;
    size_t pos, n, next_copy;
    uint32_t st; /* the longest kept context of the output */
    float hist[16], hsum;
    unsigned hi;
} lane_t;

static size_t gap(lane_t *L)
{
    return L->lq < 0 ? (size_t)floor(log(((double)(wy(&L->s) >> 11) + 0.5) * 0x1p-53) / L->lq) : SIZE_MAX;
}

static void lane_init(lane_t *L, const model_t *m, const rep_t *reps, size_t nr, double rate,
                      double floor_bits, uint64_t seed, uint8_t *out, size_t n)
{
    memset(L, 0, sizeof *L);
    L->m = m;
    L->reps = reps;
    L->nr = nr;
    L->lq = rate > 0 && nr ? log1p(-rate) : 0;
    L->floor_bits = floor_bits;
    L->s = seed * 0x9E3779B97F4A7C15ull + 1;
    L->out = out;
    L->n = n;
    for (int i = 0; i < 16; i++)
        L->hist[i] = 8.0f;
    L->hsum = 128.0f;
    L->next_copy = gap(L);
    L->st = longest(m, 0, 0);
}

/* One byte, or one copy. */
static inline void lane_step(lane_t *L)
{
    const model_t *m = L->m;
    uint8_t *out = L->out;
    size_t pos = L->pos;
    if (pos >= L->next_copy) {
        const rep_t *r = &L->reps[(wy(&L->s) >> 32) * L->nr >> 32];
        L->next_copy = pos + gap(L);
        if (r->dist <= pos) {
            size_t l = r->len < L->n - pos ? r->len : L->n - pos;
            for (size_t q = 0; q < l; q++, pos++)
                out[pos] = out[pos - r->dist];
            uint64_t ctx = 0;
            for (int q = 1; q <= MAXK && (size_t)q <= pos; q++)
                ctx |= (uint64_t)out[pos - (size_t)q] << (8 * (q - 1));
            L->ctx = ctx;
            L->st = longest(m, ctx, m->K < (int)pos ? m->K : (int)pos);
            L->pos = pos;
            return;
        }
    }
    uint32_t st = L->st, ci = st;
    if (L->floor_bits > 0 && L->hsum < L->floor_bits && m->c[st].k > 1)
        ci = m->o1[L->ctx & 255];
    const ctx_t *c = &m->c[ci];
    L->hsum += c->bits - L->hist[L->hi];
    L->hist[L->hi] = c->bits;
    L->hi = (L->hi + 1) & 15;
    uint64_t r = wy(&L->s);
    uint32_t q = (uint32_t)(((r >> 32) * c->n) >> 32);
    /* a select by mask, not a branch: the branch is mispredicted half the time */
    uint32_t al = m->alias[c->off + q], msk = -(uint32_t)((uint32_t)r > m->thr[c->off + q]);
    q = (al & msk) | (q & ~msk);
    uint8_t b = m->eb[c->off + q];
    out[pos++] = b;
    L->st = ci == st ? m->next[c->off + q] : longest(m, L->ctx << 8 | b, m->K < (int)pos ? m->K : (int)pos);
    L->ctx = (L->ctx << 8 | b) & 0xFFFFFFFFull;
    L->pos = pos;
}

/* n bytes into out: one document (lanes 1), or lanes documents of n /
 * lanes bytes (seeds seed, seed + 1, ...) made a step of each in turn, so
 * that their chains of dependent loads overlap (other bytes, same model). */
static void generate(const model_t *m, const rep_t *reps, size_t nr, double rate, double floor_bits,
                     uint64_t seed, uint8_t *out, size_t n, unsigned lanes)
{
    lane_t L[16];
    lanes = lanes < 1 ? 1 : lanes > 16 ? 16 : lanes;
    size_t per = n / lanes;
    for (unsigned l = 0; l < lanes; l++)
        lane_init(&L[l], m, reps, nr, rate, floor_bits, seed + l, out + l * per,
                  l + 1 < lanes ? per : n - l * per);
    if (lanes == 1) {
        while (L[0].pos < L[0].n)
            lane_step(&L[0]);
        return;
    }
    for (unsigned live = lanes; live;) {
        live = 0;
        for (unsigned l = 0; l < lanes; l++)
            if (L[l].pos < L[l].n) {
                lane_step(&L[l]);
                live++;
            }
    }
}

/* ---- format 7's block permutations (gen_like.c) ---- */

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
    if (b < 0xC0)
        return 10;
    if (b < 0xE0)
        return 11;
    if (b < 0xF0)
        return 12;
    return 13;
}

static void block_perm(uint64_t seed, uint64_t bi, uint8_t p[256])
{
    uint8_t cls[256], v[256];
    unsigned end[14], n = 0;
    for (unsigned c = 0; c < 14; c++) {
        for (unsigned b = 0; b < 256; b++)
            if (byte_class(b) == c)
                cls[n++] = (uint8_t)b;
        end[c] = n;
    }
    uint64_t s = seed ^ (bi * 0xD6E8FEB86659FD93ull);
    memcpy(v, cls, 256);
    for (unsigned c = 0, lo = 0; c < 14; lo = end[c++])
        for (unsigned i = end[c] - 1u; i > lo; i--) {
            unsigned j = lo + (unsigned)(((wy(&s) >> 32) * (i - lo + 1)) >> 32);
            uint8_t t = v[i];
            v[i] = v[j];
            v[j] = t;
        }
    for (unsigned t = 0; t < 256; t++)
        p[cls[t]] = v[t];
}

/* ---- calibration ---- */

static size_t gz6(const uint8_t *b, size_t n)
{
    uLongf z = compressBound(n);
    uint8_t *o = xmalloc(z);
    compress2(o, &z, b, n, 6);
    free(o);
    return z;
}

static size_t bz9(const uint8_t *b, size_t n)
{
    unsigned z = (unsigned)(n + n / 100 + 600);
    char *o = xmalloc(z);
    BZ2_bzBuffToBuffCompress(o, &z, (char *)b, (unsigned)n, 9, 0, 0);
    free(o);
    return z;
}

static size_t xz6(const uint8_t *b, size_t n)
{
    size_t cap = lzma_stream_buffer_bound(n), z = 0;
    uint8_t *o = xmalloc(cap);
    lzma_easy_buffer_encode(6, LZMA_CHECK_CRC64, NULL, b, n, o, &z, cap);
    free(o);
    return z;
}

static size_t zs3(const uint8_t *b, size_t n)
{
    size_t cap = ZSTD_compressBound(n);
    uint8_t *o = xmalloc(cap);
    size_t z = ZSTD_compress(o, cap, b, n, 3);
    free(o);
    return z;
}

static size_t lz4d(const uint8_t *b, size_t n)
{
    int cap = LZ4_compressBound((int)n);
    char *o = xmalloc((size_t)cap);
    int z = LZ4_compress_default((const char *)b, o, (int)n, cap);
    free(o);
    return (size_t)z;
}

static const struct {
    const char *name;
    size_t (*fn)(const uint8_t *, size_t);
} cal_codecs[] = {{"gz6", gz6}, {"bz9", bz9}, {"xz6", xz6}, {"zs3", zs3}, {"lz4", lz4d}};

int main(int argc, char **argv)
{
    size_t cap = 8u << 20, mib = 32, calsize = BASE;
    uint64_t seed = 1;
    double floor_bits = 16, least = 16;
    const char *sets = "3:30000:8,4:30000:8,4:30000:16,4:60000:8", *rates = "0,0.5,1", *cal = "gz6,bz9";
    int a = 1;
    for (; a + 1 < argc && argv[a][0] == '-' && argv[a][1] == '-'; a += 2) {
        if (!strcmp(argv[a], "--cap"))
            cap = strtoull(argv[a + 1], NULL, 0);
        else if (!strcmp(argv[a], "--mib"))
            mib = strtoull(argv[a + 1], NULL, 0);
        else if (!strcmp(argv[a], "--seed"))
            seed = strtoull(argv[a + 1], NULL, 0);
        else if (!strcmp(argv[a], "--bits"))
            floor_bits = atof(argv[a + 1]);
        else if (!strcmp(argv[a], "--calsize"))
            calsize = strtoull(argv[a + 1], NULL, 0);
        else if (!strcmp(argv[a], "--long"))
            least = atof(argv[a + 1]);
        else if (!strcmp(argv[a], "--sets"))
            sets = argv[a + 1];
        else if (!strcmp(argv[a], "--rates"))
            rates = argv[a + 1];
        else if (!strcmp(argv[a], "--cal"))
            cal = argv[a + 1];
        else
            break;
    }
    if (argc - a != 2) {
        fprintf(stderr, "usage: %s [--cap B] [--mib N] [--seed S] [--bits F] [--long L] [--sets K:BUDGET:E,...] "
                        "[--rates R,...] [--cal gz6,bz9,xz6,zs3,lz4] [--calsize B] SAMPLE OUT\n", argv[0]);
        return 2;
    }
    FILE *f = fopen(argv[a], "rb");
    if (!f) {
        perror(argv[a]);
        return 1;
    }
    uint8_t *s = xmalloc(cap);
    size_t n = fread(s, 1, cap, f);
    fclose(f);
    if (n < 64) {
        fprintf(stderr, "sample too small\n");
        return 1;
    }
    double t0 = now();
    size_t nr;
    double rate0;
    rep_t *reps = long_matches(s, n, (uint32_t)least, &nr, &rate0);
    double t_rep = now() - t0;
    /* the sample's first MiB against a whole base block: a model of a small
     * sample makes a MiB more repetitive than the sample's few KB */
    size_t G = n < BASE ? n : BASE;
    int cc[8], ncc = 0;
    double zs[8];
    for (unsigned i = 0; i < sizeof cal_codecs / sizeof cal_codecs[0]; i++)
        if (strstr(cal, cal_codecs[i].name) && ncc < 8) {
            cc[ncc] = (int)i;
            zs[ncc++] = (double)G / (double)cal_codecs[i].fn(s, G);
        }
    if (getenv("CTX_CAL_SAMPLE_SIZE") == NULL)
        G = calsize < BASE ? calsize : BASE;
    double t_cal0 = now();
    uint8_t *g = xmalloc(BASE);
    double best = 1e9, best_rate = 0, t_build = 0, t_gen = 0;
    int bK = 0, bE = 0, nbuild = 0;
    size_t bB = 0;
    char *sc = strdup(sets);
    for (char *tok = strtok(sc, ","); tok; tok = strtok(NULL, ",")) {
        int K, E;
        size_t B;
        if (sscanf(tok, "%d:%zu:%d", &K, &B, &E) != 3 || K < 0 || K > MAXK || E < 1 || E > 256) {
            fprintf(stderr, "bad set '%s'\n", tok);
            return 2;
        }
        model_t m;
        double t1 = now();
        model_build(&m, s, n, K, B, E);
        t_build += now() - t1;
        nbuild++;
        char *rc = strdup(rates), *save;
        for (char *rt = strtok_r(rc, ",", &save); rt; rt = strtok_r(NULL, ",", &save)) {
            double rate = atof(rt) * rate0;
            t1 = now();
            generate(&m, reps, nr, rate, floor_bits, seed, g, G, 1);
            t_gen += now() - t1;
            double e = 0;
            fprintf(stderr, "  K=%d B=%zu E=%d rate x%s:", K, B, E, rt);
            for (int i = 0; i < ncc; i++) {
                double x = 100 * ((double)G / (double)cal_codecs[cc[i]].fn(g, G) / zs[i] - 1);
                e = fabs(x) > e ? fabs(x) : e;
                fprintf(stderr, " %s %+.1f%%", cal_codecs[cc[i]].name, x);
            }
            fprintf(stderr, " (%zu bytes)\n", m.bytes);
            if (e < best) {
                best = e;
                bK = K;
                bB = B;
                bE = E;
                best_rate = atof(rt);
            }
        }
        free(rc);
        model_free(&m);
    }
    free(sc);
    double t_cal = now() - t_cal0;
    model_t m;
    double t1 = now();
    model_build(&m, s, n, bK, bB, bE);
    double t_final = now() - t1;
    /* best of 5, in a buffer already faulted in (a fresh page costs ~10 us here) */
    double t_base = 1e9;
    for (int r = 0; r < 5; r++) {
        t1 = now();
        generate(&m, reps, nr, best_rate * rate0, floor_bits, seed, g, BASE, 1);
        double t = now() - t1;
        t_base = t < t_base ? t : t_base;
    }
    /* the same with 2, 4 and 8 documents made in turns (other bytes) */
    double t_lanes[3];
    uint8_t *scratch = xmalloc(BASE);
    memset(scratch, 0, BASE);
    for (int li = 0; li < 3; li++) {
        t_lanes[li] = 1e9;
        for (int r = 0; r < 5; r++) {
            t1 = now();
            generate(&m, reps, nr, best_rate * rate0, floor_bits, seed, scratch, BASE, 2u << li);
            double t = now() - t1;
            t_lanes[li] = t < t_lanes[li] ? t : t_lanes[li];
        }
    }
    free(scratch);
    /* lz4 -1 on the base block, for scale */
    char *lz = xmalloc((size_t)LZ4_compressBound((int)BASE));
    double best_lz = 1e9;
    for (int r = 0; r < 5; r++) {
        t1 = now();
        (void)LZ4_compress_default((const char *)g, lz, (int)BASE, LZ4_compressBound((int)BASE));
        double t = now() - t1;
        best_lz = t < best_lz ? t : best_lz;
    }
    free(lz);
    FILE *o = fopen(argv[a + 1], "wb");
    if (!o) {
        perror(argv[a + 1]);
        return 1;
    }
    uint8_t *blk = xmalloc(BASE), p[256];
    double t_perm = 0;
    for (size_t b = 0; b < mib; b++) {
        t1 = now();
        block_perm(seed, b, p);
        for (size_t i = 0; i < BASE; i++)
            blk[i] = p[g[i]];
        t_perm += now() - t1;
        fwrite(blk, 1, BASE, o);
    }
    fclose(o);
    fprintf(stderr,
            "chosen K=%d B=%zu E=%d rate x%g (sample's rate %.5f, %zu repeats) worst of the calibration's codecs %.1f%%; "
            "model %zu bytes, %zu contexts\n"
            "times (CPU): repeats %.3f s, %d model builds %.3f s, calibration generation %.3f s (all of it %.3f s), final build %.3f s; "
            "base block %.2f ns/B (%.0f MB/s; as 2, 4, 8 documents in turns %.2f, %.2f, %.2f ns/B), lz4 -1 on it %.0f MB/s, "
            "permutation %.2f GB/s\n",
            bK, bB, bE, best_rate, rate0, nr, best, m.bytes, m.nc, t_rep, nbuild, t_build, t_gen, t_cal, t_final,
            t_base / BASE * 1e9, BASE / t_base / 1e6, t_lanes[0] / BASE * 1e9, t_lanes[1] / BASE * 1e9,
            t_lanes[2] / BASE * 1e9, BASE / best_lz / 1e6, mib * BASE / (t_perm > 0 ? t_perm : 1e-9) / 1e9);
    model_free(&m);
    free(reps);
    free(g);
    free(blk);
    free(s);
    return 0;
}
