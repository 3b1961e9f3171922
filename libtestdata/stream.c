/*
 * td_stream: a position over one generator plus a block-aligned buffer.
 *
 * Large reads are generated straight into the caller's buffer; small reads
 * and td_stream_next() go through the internal buffer, which always starts
 * at a multiple of its own size so that block-structured kinds regenerate
 * nothing when a caller reads in tiny pieces.
 */
#include "internal.h"

/* 256 KiB single-threaded (fits L2); with threads, 1 MiB per thread so the
 * hand-off to the pool is small next to the work. */
#define STREAM_BUF_SINGLE (256u * 1024u)
#define STREAM_BUF_PER_THREAD (1024u * 1024u)
#define STREAM_BUF_MAX (8u * 1024u * 1024u)

struct td_stream {
    td_gen gen;
    uint64_t size;
    uint64_t pos;
    uint8_t *buf;
    size_t bufcap;
    uint64_t buf_off;  /* stream offset of buf[0] */
    size_t buf_len;    /* valid bytes in buf; 0 = empty */
};

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
    rc = td__gen_init(&s->gen, kind, o);
    if (rc != TD_OK) {
        free(s);
        return rc;
    }
    /* A stream can never use more threads than it has 256 KiB pieces, nor a
     * buffer larger than itself: small streams cost little memory and no
     * idle threads, however many threads were asked for. */
    if (size / TD_MIN_BYTES_PER_THREAD < s->gen.nthreads)
        s->gen.nthreads = size < 2 * TD_MIN_BYTES_PER_THREAD
                              ? 1u
                              : (unsigned)(size / TD_MIN_BYTES_PER_THREAD);
    unsigned nt = s->gen.nthreads;
    size_t cap = STREAM_BUF_SINGLE;
    if (nt > 1) {
        cap = STREAM_BUF_MAX / STREAM_BUF_PER_THREAD < nt ? STREAM_BUF_MAX
                                                          : nt * STREAM_BUF_PER_THREAD;
        /* No pool (threads could not start) just means one thread. */
        (void)td__pool_new(&s->gen.pool, (nt < TD_MAX_THREADS ? nt : TD_MAX_THREADS) - 1);
    }
    if (cap > size)
        cap = size ? (size_t)size : 1;
    /* Must hold whole blocks so a refill never splits one. */
    if (cap % s->gen.vt->block)
        cap += s->gen.vt->block - cap % s->gen.vt->block;
    s->bufcap = cap;
    s->size = size;
    *out = s;
    return TD_OK;
}

td_stream *td_stream_new_with(td_kind kind, uint64_t size, const td_options *o)
{
    td_stream *s;
    return td_stream_open(&s, (int)kind, size, o) == TD_OK ? s : NULL;
}

td_stream *td_stream_new(td_kind kind, uint64_t size)
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

/* Load the buffer window that holds s->pos. */
static int refill(td_stream *s)
{
    uint64_t start = s->pos - s->pos % s->bufcap;
    uint64_t avail = s->size - start;
    size_t n = avail < s->bufcap ? (size_t)avail : s->bufcap;
    int rc;

    if (!s->buf) {
        s->buf = malloc(s->bufcap);
        if (!s->buf)
            return TD_ENOMEM;
    }
    s->buf_len = 0;
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

    while (done < cap) {
        size_t want = cap - done;
        if (in_buffer(s)) {
            size_t at = (size_t)(s->pos - s->buf_off);
            size_t n = s->buf_len - at < want ? s->buf_len - at : want;
            memcpy(dst + done, s->buf + at, n);
            done += n;
            s->pos += n;
        } else if (want >= s->bufcap) {
            /* Whole windows go straight into the caller's memory. */
            size_t n = want - want % s->bufcap;
            rc = td__gen_fill(&s->gen, s->pos, dst + done, n);
            if (rc != TD_OK)
                break;
            done += n;
            s->pos += n;
        } else {
            rc = refill(s);
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
    int rc;

    if (chunk)
        *chunk = NULL;
    if (len)
        *len = 0;
    if (!s || !chunk || !len)
        return TD_EINVAL;
    if (s->pos >= s->size)
        return TD_DONE;
    if (!in_buffer(s)) {
        rc = refill(s);
        if (rc != TD_OK)
            return rc;
    }
    size_t at = (size_t)(s->pos - s->buf_off);
    *chunk = s->buf + at;
    *len = s->buf_len - at;
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
