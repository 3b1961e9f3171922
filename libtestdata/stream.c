/*
 * td_stream: a position over one generator plus an aligned buffer.
 *
 * Large reads are generated straight into the caller's buffer; small reads
 * and td_stream_next() go through the internal buffer, which always starts
 * at a multiple of the kind's block so that block-structured kinds
 * regenerate nothing when a caller reads in tiny pieces.  Random access
 * costs what it reads, not a window: a small read just after a seek out of
 * the buffer is made straight into the caller's memory when the kind's
 * ranges cost only their bytes, and otherwise loads only the blocks that
 * hold it (the reads that follow go on from there).  The verifier and the
 * writers (verify.c, output.c) consume the buffer in place (stream.h).
 */
#include "stream.h"

/* 256 KiB single-threaded (fits L2); with threads, 1 MiB per thread so the
 * hand-off to the pool is small next to the work. */
#define STREAM_BUF_SINGLE (256u * 1024u)
#define STREAM_BUF_PER_THREAD (1024u * 1024u)
#define STREAM_BUF_MAX (8u * 1024u * 1024u)
/* Reads of ranged kinds from this size up skip the buffer. */
#define STREAM_DIRECT_MIN (64u * 1024u)

struct td_stream {
    td_gen gen;
    uint64_t size;
    uint64_t pos;
    uint8_t *buf;
    size_t bufcap;
    uint64_t buf_off;  /* stream offset of buf[0] */
    size_t buf_len;    /* valid bytes in buf; 0 = empty */
    int seeked;        /* the last call was a seek out of the buffer */
};

/* Buffer size for the generator's threads, rounded up to whole aligned
 * pieces so a refill never splits a block; never above the stream size by
 * more than that rounding. */
static size_t buffer_cap(const td_gen *g, uint64_t size)
{
    size_t cap = g->nthreads > 1 ? TD_MIN((size_t)STREAM_BUF_MAX,
                                          (size_t)g->nthreads * STREAM_BUF_PER_THREAD)
                                 : STREAM_BUF_SINGLE;
    if (cap > size)
        cap = size ? (size_t)size : 1;
    if (cap % g->align)
        cap += g->align - cap % g->align;
    return cap;
}

int td_stream_open(td_stream **out, int kind, uint64_t size, const td_options *o)
{
    td_stream *s;
    int rc;

    if (!out)
        return TD_EINVAL;
    *out = NULL;
    s = calloc(1, sizeof *s);
    if (!s)
        return TD_ENOMEM;
    rc = td__gen_init(&s->gen, kind, o, size);
    if (rc != TD_OK) {
        free(s);
        return rc;
    }
    /* A stream never uses more threads than it has 256 KiB pieces, nor a
     * buffer larger than itself: small streams cost little memory and no
     * idle threads, however many threads were asked for. */
    s->gen.nthreads = td__gen_useful_threads(&s->gen, size > SIZE_MAX ? SIZE_MAX : (size_t)size);
    s->bufcap = buffer_cap(&s->gen, size);
    td__gen_keep_pool(&s->gen, s->bufcap);
    s->size = size;
    *out = s;
    return TD_OK;
}

td_stream *td_stream_new_with(int kind, uint64_t size, const td_options *o)
{
    td_stream *s;
    return td_stream_open(&s, kind, size, o) == TD_OK ? s : NULL;
}

td_stream *td_stream_new(int kind, uint64_t size)
{
    return td_stream_new_with(kind, size, NULL);
}

void td_stream_free(td_stream *s)
{
    if (!s)
        return;
    td__gen_fini(&s->gen);
    free(s->buf);
    free(s);
}

/* The window fills up to the stream's size (like's 1 MiB alignment gives a
 * short stream a 1 MiB window): 1 MiB on 4 KiB pages faulted 256 times. */
static void *buffer_alloc(const td_stream *s)
{
    return td__alloc_filled(s->bufcap, s->size);
}

/* The buffer, allocated on first use.  If a multi-threaded buffer cannot be
 * had, the stream goes on single-threaded with a small one: threads are
 * never a reason to fail. */
static int ensure_buffer(td_stream *s)
{
    if (s->buf)
        return TD_OK;
    s->buf = buffer_alloc(s);
    if (!s->buf && s->gen.nthreads > 1) {
        td__pool_free(s->gen.pool);
        s->gen.pool = NULL;
        s->gen.nthreads = 1;
        s->bufcap = buffer_cap(&s->gen, s->size);
        s->buf = buffer_alloc(s);
    }
    return s->buf ? TD_OK : TD_ENOMEM;
}

/* Load the buffer window that holds s->pos: a whole buffer from the block
 * that holds it, or with want > 0 (a read after a seek) just the blocks that
 * hold the want bytes from s->pos. */
static int refill(td_stream *s, size_t want)
{
    int rc = ensure_buffer(s); /* may shrink bufcap */
    if (rc != TD_OK)
        return rc;
    const uint64_t align = s->gen.align;
    uint64_t start = s->pos - s->pos % align;
    uint64_t avail = s->size - start;
    size_t cap = s->bufcap;
    if (want && (uint64_t)want < cap - (s->pos - start)) {
        uint64_t end = s->pos - start + want; /* below bufcap, a multiple of align */
        cap = (size_t)((end + align - 1) / align * align);
    }
    size_t n = avail < cap ? (size_t)avail : cap;

    s->buf_len = 0;
    /* After a fork, a pool of the parent has no workers here: start ours. */
    if (td__pool_stale(s->gen.pool))
        td__gen_keep_pool(&s->gen, s->bufcap);
    rc = td__gen_fill(&s->gen, start, s->buf, n);
    if (rc != TD_OK)
        return rc;
    s->buf_off = start;
    s->buf_len = n;
    return TD_OK;
}

static int in_buffer(const td_stream *s)
{
    return s->buf_len && s->pos >= s->buf_off && s->pos - s->buf_off < s->buf_len;
}

int td__stream_window(td_stream *s, const uint8_t **p, size_t *len)
{
    *p = NULL;
    *len = 0;
    s->seeked = 0;
    if (s->pos >= s->size)
        return TD_DONE;
    if (!in_buffer(s)) {
        int rc = refill(s, 0);
        if (rc != TD_OK)
            return rc;
    }
    size_t at = (size_t)(s->pos - s->buf_off);
    *p = s->buf + at;
    *len = s->buf_len - at;
    return TD_OK;
}

void td__stream_advance(td_stream *s, size_t n)
{
    s->pos += n;
}

int td_stream_read(td_stream *s, void *buf, size_t cap, size_t *out_len)
{
    uint8_t *dst = buf;
    size_t done = 0;
    int rc = TD_OK;

    if (out_len)
        *out_len = 0;
    if (!s || !out_len || (!buf && cap))
        return TD_EINVAL;
    if (s->pos >= s->size)
        return TD_DONE;
    if ((uint64_t)cap > s->size - s->pos)
        cap = (size_t)(s->size - s->pos);

    int seeked = s->seeked, ranged = td__gen_ranged(&s->gen);
    s->seeked = 0;
    while (done < cap) {
        size_t want = cap - done, direct = 0;
        if (!in_buffer(s)) {
            /* Straight into the caller's memory: any range of a ranged kind
             * after a seek (random access) or when large enough that a call
             * costs little next to it; whole windows of the others. */
            if (ranged && (seeked || want >= STREAM_DIRECT_MIN))
                direct = want;
            else if (want >= s->bufcap && s->pos % s->gen.align == 0)
                direct = want - want % s->bufcap;
        }
        if (direct) {
            if (td__pool_stale(s->gen.pool))
                td__gen_keep_pool(&s->gen, s->bufcap);
            rc = td__gen_fill(&s->gen, s->pos, dst + done, direct);
            if (rc != TD_OK)
                break;
            done += direct;
            s->pos += direct;
        } else if (in_buffer(s)) {
            size_t at = (size_t)(s->pos - s->buf_off);
            size_t n = TD_MIN(s->buf_len - at, want);
            memcpy(dst + done, s->buf + at, n);
            done += n;
            s->pos += n;
        } else {
            rc = refill(s, seeked ? want : 0);
            seeked = 0;
            if (rc != TD_OK)
                break;
        }
    }
    *out_len = done;
    /* Report an error only when nothing was delivered; the next call repeats it. */
    return done || rc == TD_OK ? TD_OK : rc;
}

int td_stream_next(td_stream *s, const void **chunk, size_t *len)
{
    const uint8_t *p;
    int rc;

    if (chunk)
        *chunk = NULL;
    if (len)
        *len = 0;
    if (!s || !chunk || !len)
        return TD_EINVAL;
    rc = td__stream_window(s, &p, len);
    if (rc != TD_OK)
        return rc;
    *chunk = p;
    s->pos += *len;
    return TD_OK;
}

int td_stream_seek(td_stream *s, uint64_t offset)
{
    if (!s)
        return TD_EINVAL;
    if (offset > s->size)
        return TD_ERANGE;
    s->pos = offset;
    s->seeked = !in_buffer(s);
    return TD_OK;
}

uint64_t td_stream_tell(const td_stream *s)
{
    return s ? s->pos : 0;
}

uint64_t td_stream_size(const td_stream *s)
{
    return s ? s->size : 0;
}
