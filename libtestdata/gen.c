/* The generator engine: option check, kind state, dedup layer, threads. */
#include "gen.h"

int td__gen_init(td_gen *g, int kind, const td_options *o, uint64_t end)
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
    g->nthreads = TD_MIN(o->threads ? o->threads : td__ncpus(), TD_MAX_THREADS);
    if (g->vt->prepare)
        rc = g->vt->prepare(&g->opt, end, &g->state);
    if (rc == TD_OK)
        rc = td__dedup_new(&g->dedup, &g->opt, g->vt, g->state);
    if (rc != TD_OK) {
        td__gen_fini(g);
        return rc;
    }
    g->align = g->dedup ? TD_MAX(g->vt->block, td__dedup_block(g->dedup)) : g->vt->block;
    return TD_OK;
}

void td__gen_fini(td_gen *g)
{
    if (!g)
        return;
    td__pool_free(g->pool);
    td__dedup_free(g->dedup);
    if (g->vt && g->vt->release && g->state)
        g->vt->release(g->state);
    memset(g, 0, sizeof *g);
}

unsigned td__gen_useful_threads(const td_gen *g, size_t piece)
{
    size_t useful = piece / TD_MIN_BYTES_PER_THREAD;
    return useful <= 1 ? 1u : (unsigned)TD_MIN((size_t)g->nthreads, useful);
}

void td__gen_keep_pool(td_gen *g, size_t piece)
{
    unsigned nt = td__gen_useful_threads(g, piece);
    if (td__pool_stale(g->pool)) {
        td__pool_free(g->pool); /* made before a fork: no workers here */
        g->pool = NULL;
    }
    if (nt > 1 && !g->pool)
        (void)td__pool_new(&g->pool, nt - 1);
}

int td__gen_fill1(const td_gen *g, uint64_t offset, uint8_t *buf, size_t len)
{
    if (g->dedup)
        return td__dedup_fill(g->dedup, offset, buf, len);
    return td__kind_fill(g->vt, g->state, offset, buf, len);
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

int td__gen_fill(td_gen *g, uint64_t offset, uint8_t *buf, size_t len)
{
    fill_job jobs[TD_MAX_THREADS];
    unsigned nt = td__gen_useful_threads(g, len);
    const uint64_t align = g->align;
    td_pool *pool;
    int rc = TD_OK;

    if (nt <= 1)
        return td__gen_fill1(g, offset, buf, len);
    if (td__pool_stale(g->pool)) {
        td__pool_free(g->pool);
        g->pool = NULL;
    }
    pool = g->pool;
    if (pool)
        nt = TD_MIN(nt, td__pool_size(pool));
    else if (td__pool_new(&pool, nt - 1) != TD_OK)
        return td__gen_fill1(g, offset, buf, len);
    else
        nt = TD_MIN(nt, td__pool_size(pool));

    /* Pieces end on aligned offsets of the stream, so that block-structured
     * kinds never generate a block twice. */
    uint64_t per = (len / nt + align - 1) / align * align;
    size_t done = 0;
    for (unsigned t = 0; t < nt; t++) {
        uint64_t start = offset + done;
        /* per >= len - done also keeps start + per from wrapping past 2^64. */
        uint64_t end = (t == nt - 1 || per >= len - done) ? offset + len
                                                          : (start + per) / align * align;
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

int td_fill_ex(int kind, const td_options *o, uint64_t offset, void *buf, size_t len,
               const td_io_options *io)
{
    /* Pieces short enough that a progress callback (Python's signal check)
     * runs every few milliseconds, long enough for threads. */
    const size_t piece = 16u << 20;
    uint8_t *p = buf;
    td_gen g;
    int rc;

    if (len == 0)
        return td__kind_get(kind) ? TD_OK : TD_EKIND;
    if (!buf)
        return TD_EINVAL;
    if (len > UINT64_MAX - offset)
        return TD_ERANGE;
    rc = td__gen_init(&g, kind, o, offset + len);
    if (rc != TD_OK)
        return rc;
    if (!io || !io->progress) {
        rc = td__gen_fill(&g, offset, p, len);
        td__gen_fini(&g);
        return rc;
    }
    td__gen_keep_pool(&g, piece);
    for (size_t done = 0; done < len && rc == TD_OK;) {
        size_t n = TD_MIN(len - done, piece);
        rc = td__gen_fill(&g, offset + done, p + done, n);
        done += n;
        if (rc == TD_OK && done < len && io->progress(io->ctx, done) != 0)
            rc = TD_ECANCELED;
    }
    td__gen_fini(&g);
    return rc;
}

int td_fill(int kind, const td_options *o, uint64_t offset, void *buf, size_t len)
{
    return td_fill_ex(kind, o, offset, buf, len, NULL);
}
