/* Generators behind td_fill/td_verify: option checks, thread splitting. */
#include "internal.h"

#include <pthread.h>
#include <sodium.h>
#include <unistd.h>


static pthread_once_t sodium_once = PTHREAD_ONCE_INIT;
static int sodium_rc;

static void sodium_init_once(void)
{
    sodium_rc = sodium_init() < 0 ? TD_ENOMEM : TD_OK;
}

int td__sodium_ready(void)
{
    pthread_once(&sodium_once, sodium_init_once);
    return sodium_rc;
}

void td__derive_key(const char *domain, uint64_t seed, uint8_t key[32])
{
    crypto_generichash_state h;
    uint8_t le[8];
    td__store64le(le, seed);
    crypto_generichash_init(&h, NULL, 0, 32);
    crypto_generichash_update(&h, (const unsigned char *)domain, strlen(domain));
    crypto_generichash_update(&h, le, sizeof le);
    crypto_generichash_final(&h, key, 32);
}

unsigned td__ncpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1u : (unsigned)n;
}

int td__gen_init(td_gen *g, int kind, const td_options *o)
{
    td_options def;
    int rc;

    if (!g)
        return TD_EINVAL;
    memset(g, 0, sizeof *g);
    if (!o) {
        td_options_init(&def);
        o = &def;
    }
    rc = td_options_check(kind, o);
    if (rc != TD_OK)
        return rc;
    g->vt = td__kind_get(kind);
    g->opt = *o;
    g->nthreads = o->threads ? o->threads : td__ncpus();
    if (g->nthreads > TD_MAX_THREADS)
        g->nthreads = TD_MAX_THREADS;
    rc = td__dedup_init(&g->dedup, &g->opt);
    if (rc != TD_OK) {
        memset(g, 0, sizeof *g);
        return rc;
    }
    if (g->vt->prepare) {
        rc = g->vt->prepare(&g->opt, &g->state);
        if (rc != TD_OK) {
            memset(g, 0, sizeof *g);
            return rc;
        }
    }
    return TD_OK;
}

void td__gen_fini(td_gen *g)
{
    if (g)
        td__pool_free(g->pool);
    if (g && g->vt && g->vt->release && g->state)
        g->vt->release(g->state);
    if (g)
        memset(g, 0, sizeof *g);
}

void td__gen_keep_pool(td_gen *g, size_t piece)
{
    size_t useful = piece / TD_MIN_BYTES_PER_THREAD;
    unsigned nt = g->nthreads < useful ? g->nthreads : (unsigned)useful;
    if (nt > 1 && !g->pool)
        (void)td__pool_new(&g->pool, nt - 1);
}

int td__gen_fill1(const td_gen *g, uint64_t offset, uint8_t *buf, size_t len)
{
    if (g->dedup.on)
        return td__dedup_fill(g, offset, buf, len);
    return g->vt->fill(g->state, offset, buf, len);
}

typedef struct fill_job {
    const td_gen *g;
    uint64_t offset;
    uint8_t *buf;
    size_t len;
    int rc;
} fill_job;

static void fill_worker(void *arg)
{
    fill_job *j = arg;
    j->rc = j->len ? td__gen_fill1(j->g, j->offset, j->buf, j->len) : TD_OK;
}

int td__gen_fill(const td_gen *g, uint64_t offset, uint8_t *buf, size_t len)
{
    fill_job jobs[TD_MAX_THREADS];
    unsigned nt = g->nthreads;
    uint64_t block = g->vt->block, per;
    td_pool *pool = g->pool;
    int rc = TD_OK;

    if (len / TD_MIN_BYTES_PER_THREAD < nt)
        nt = (unsigned)(len / TD_MIN_BYTES_PER_THREAD);
    if (pool && nt > td__pool_size(pool))
        nt = td__pool_size(pool);
    if (nt <= 1)
        return td__gen_fill1(g, offset, buf, len);
    if (!pool && td__pool_new(&pool, nt - 1) != TD_OK)
        return td__gen_fill1(g, offset, buf, len);

    /* Pieces end on block boundaries of the stream so that block-structured
     * kinds never generate a block twice. */
    per = (len / nt + block - 1) / block * block;
    size_t done = 0;
    for (unsigned t = 0; t < nt; t++) {
        uint64_t start = offset + done;
        /* per >= len - done also keeps start + per from wrapping past 2^64. */
        uint64_t end = (t == nt - 1 || per >= len - done) ? offset + len
                                                          : (start + per) / block * block;
        jobs[t] = (fill_job){g, start, buf + done, (size_t)(end - start), TD_OK};
        done += jobs[t].len;
    }
    td__pool_run(pool, fill_worker, jobs, sizeof jobs[0], nt);
    if (pool != g->pool)
        td__pool_free(pool);
    for (unsigned t = 0; t < nt; t++)
        if (jobs[t].rc != TD_OK && rc == TD_OK)
            rc = jobs[t].rc;
    return rc;
}

int td_fill(td_kind kind, const td_options *o, uint64_t offset, void *buf, size_t len)
{
    td_gen g;
    int rc;

    if (len == 0)
        return td__kind_get((int)kind) ? TD_OK : TD_EKIND;
    if (!buf)
        return TD_EINVAL;
    if (len > UINT64_MAX - offset)
        return TD_ERANGE;
    rc = td__gen_init(&g, (int)kind, o);
    if (rc != TD_OK)
        return rc;
    rc = td__gen_fill(&g, offset, buf, len);
    td__gen_fini(&g);
    return rc;
}

#define VERIFY_CHUNK (1024u * 1024u)

static int verify_impl(td_kind kind, const td_options *o, uint64_t offset, const void *buf,
                       size_t len, uint64_t *first_mismatch, uint64_t *count)
{
    const uint8_t *p = buf;
    uint64_t first = 0, bad = 0;
    uint8_t *tmp;
    td_gen g;
    int rc;

    if (count)
        *count = 0;
    if (len && !buf)
        return TD_EINVAL;
    if (len > UINT64_MAX - offset)
        return TD_ERANGE;
    rc = td__gen_init(&g, (int)kind, o);
    if (rc != TD_OK || len == 0) {
        td__gen_fini(&g);
        return rc;
    }
    tmp = malloc(len < VERIFY_CHUNK ? len : VERIFY_CHUNK);
    /* Several chunks with threads: keep one pool for the call rather than
     * starting threads per chunk (no pool just means one thread). */
    if (tmp && g.nthreads > 1 && len > VERIFY_CHUNK)
        (void)td__pool_new(&g.pool, g.nthreads - 1);
    if (!tmp) {
        td__gen_fini(&g);
        return TD_ENOMEM;
    }
    if (len > VERIFY_CHUNK)
        td__gen_keep_pool(&g, VERIFY_CHUNK);
    for (size_t done = 0; done < len;) {
        size_t n = len - done < VERIFY_CHUNK ? len - done : VERIFY_CHUNK;
        rc = td__gen_fill(&g, offset + done, tmp, n);
        if (rc != TD_OK)
            break;
        if (memcmp(tmp, p + done, n) != 0) {
            for (size_t i = 0; i < n; i++) {
                if (tmp[i] != p[done + i]) {
                    if (!bad)
                        first = offset + done + i;
                    bad++;
                    if (!count)
                        break;
                }
            }
            if (!count)
                break;
        }
        done += n;
    }
    free(tmp);
    td__gen_fini(&g);
    if (rc != TD_OK)
        return rc;
    if (count)
        *count = bad;
    if (bad) {
        if (first_mismatch)
            *first_mismatch = first;
        return TD_EMISMATCH;
    }
    return TD_OK;
}

int td_verify(td_kind kind, const td_options *o, uint64_t offset, const void *buf, size_t len,
              uint64_t *first_mismatch)
{
    return verify_impl(kind, o, offset, buf, len, first_mismatch, NULL);
}

int td_verify_count(td_kind kind, const td_options *o, uint64_t offset, const void *buf,
                    size_t len, uint64_t *first_mismatch, uint64_t *count)
{
    return verify_impl(kind, o, offset, buf, len, first_mismatch, count);
}
