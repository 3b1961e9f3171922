/*
 * Verification: the one implementation behind td_verify, the CLI's verify
 * (td_verify_fd), --mpi, Python and Dask.  A td_verifier compares data fed
 * in any chunking against a stream it regenerates in its own buffer, counts
 * the differences, and notes short and long input; td_verify_message words
 * the result the same way for every front end.
 */
#define _GNU_SOURCE /* posix_fadvise, F_SETPIPE_SZ */
#include "stream.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct td_verifier {
    td_stream *s;
    uint64_t limit;    /* bytes the stream has from the offset on */
    int stop_at_first; /* td_verify: stop comparing at the first difference */
    int finished;
    td_verify_result r;
    uint64_t hist[2][256]; /* sampled bytes: the stream's, the data's */
};

int td_verifier_new(td_verifier **out, int kind, const td_options *o, uint64_t offset,
                    uint64_t expected_size)
{
    td_verifier *v;
    int rc;

    if (!out)
        return TD_EINVAL;
    *out = NULL;
    /* Stream bytes exist at offsets 0 .. 2^64-2. */
    if (expected_size != TD_SIZE_UNBOUNDED && expected_size > UINT64_MAX - offset)
        return TD_ERANGE;
    v = calloc(1, sizeof *v);
    if (!v)
        return TD_ENOMEM;
    v->limit = expected_size == TD_SIZE_UNBOUNDED ? UINT64_MAX - offset : expected_size;
    rc = td_stream_open(&v->s, kind, offset + v->limit, o);
    if (rc == TD_OK)
        rc = td_stream_seek(v->s, offset);
    if (rc != TD_OK) {
        td_stream_free(v->s);
        free(v);
        return rc;
    }
    v->r.offset = offset;
    v->r.expected = expected_size;
    *out = v;
    return TD_OK;
}

/* Differing bytes among n, 8 at a time. */
static uint64_t count_diff(const uint8_t *a, const uint8_t *b, size_t n)
{
    uint64_t bad = 0;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t x, y;
        memcpy(&x, a + i, 8);
        memcpy(&y, b + i, 8);
        x ^= y;
        if (x) {
            /* One bit per nonzero byte. */
            x |= x >> 4;
            x |= x >> 2;
            x |= x >> 1;
            bad += (uint64_t)__builtin_popcountll(x & UINT64_C(0x0101010101010101));
        }
    }
    for (; i < n; i++)
        bad += a[i] != b[i];
    return bad;
}

int td_verifier_update(td_verifier *v, const void *buf, size_t len)
{
    const uint8_t *p = buf;

    if (!v || v->finished || (!buf && len))
        return TD_EINVAL;
    if (len > UINT64_MAX - v->r.received)
        return TD_ERANGE;
    v->r.received += len;
    while (len && v->r.compared < v->limit) {
        const uint8_t *w;
        size_t n;
        if (v->stop_at_first && v->r.mismatches) {
            /* Nothing more to learn: only count what arrives. */
            uint64_t skip = TD_MIN((uint64_t)len, v->limit - v->r.compared);
            v->r.compared += skip;
            break;
        }
        int rc = td__stream_window(v->s, &w, &n);
        if (rc != TD_OK) {
            v->r.received -= len;
            return rc == TD_DONE ? TD_ERANGE : rc;
        }
        n = TD_MIN(n, len);
        if (memcmp(w, p, n) != 0) {
            if (!v->r.mismatches) {
                size_t i = 0;
                while (w[i] == p[i])
                    i++;
                v->r.first_mismatch = v->r.compared + i;
            }
            v->r.mismatches += v->stop_at_first ? 1 : count_diff(w, p, n);
        }
        if (!v->stop_at_first) {
            /* One byte in 256, by stream offset, for the chance estimate of
             * td_verify_message: the same bytes under any chunking (after the
             * comparison, which has brought them into the cache). */
            uint64_t at = v->r.offset + v->r.compared, (*h)[256] = v->hist;
            size_t i = (size_t)((256 - (at & 255)) & 255), agree = 0, k = 0;
            for (; i < n; i += 256, k++) {
                h[0][w[i]]++;
                h[1][p[i]]++;
                agree += w[i] == p[i];
            }
            v->r.sampled += k;
            v->r.sampled_agree += agree;
        }
        td__stream_advance(v->s, n);
        v->r.compared += n;
        p += n;
        len -= n;
    }
    return TD_OK;
}

int td_verifier_finish(td_verifier *v, td_verify_result *r)
{
    if (!v || !r || v->finished)
        return TD_EINVAL;
    v->finished = 1;
    if (v->r.received > v->limit)
        v->r.extra = v->r.received - v->limit;
    else if (v->r.expected != TD_SIZE_UNBOUNDED)
        v->r.missing = v->limit - v->r.received;
    v->r.status = v->r.mismatches || v->r.missing || v->r.extra ? TD_EMISMATCH : TD_OK;
    if (v->r.sampled) {
        double c = 0;
        for (int b = 0; b < 256; b++)
            c += (double)v->hist[0][b] * (double)v->hist[1][b];
        v->r.chance = (uint64_t)(c / (double)v->r.sampled + 0.5);
    }
    *r = v->r;
    return v->r.status;
}

int td_verify_result_merge(td_verify_result *into, const td_verify_result *part, uint64_t part_pos)
{
    if (!into || !part)
        return TD_EINVAL;
    if (part->mismatches && part->first_mismatch > UINT64_MAX - part_pos)
        return TD_ERANGE;
    uint64_t first = part_pos + part->first_mismatch;
    if (part->mismatches && (!into->mismatches || first < into->first_mismatch))
        into->first_mismatch = first;
    into->received += part->received;
    into->compared += part->compared;
    into->mismatches += part->mismatches;
    into->missing += part->missing;
    into->extra += part->extra;
    into->extra_is_lower_bound |= part->extra_is_lower_bound;
    into->sampled += part->sampled;
    into->sampled_agree += part->sampled_agree;
    into->chance += part->chance;
    /* the lower code, so that the sum does not depend on the pieces' order */
    if (part->status != TD_OK && (into->status == TD_OK || part->status < into->status))
        into->status = part->status;
    return TD_OK;
}

void td_verifier_free(td_verifier *v)
{
    if (!v)
        return;
    td_stream_free(v->s);
    free(v);
}

/* Counts extra bytes that were not fed through update (a file's size). */
static void add_extra(td_verifier *v, uint64_t n, int lower_bound)
{
    v->r.received += n;
    v->r.extra_is_lower_bound = lower_bound;
}

static int verify_buffer(int kind, const td_options *o, uint64_t offset, const void *buf,
                         size_t len, int stop, td_verify_result *r)
{
    td_verifier *v;
    int rc;

    if (len && !buf)
        return TD_EINVAL;
    if (len > UINT64_MAX - offset)
        return TD_ERANGE;
    rc = td_verifier_new(&v, kind, o, offset, len);
    if (rc != TD_OK)
        return rc;
    v->stop_at_first = stop;
    rc = td_verifier_update(v, buf, len);
    if (rc == TD_OK)
        rc = td_verifier_finish(v, r);
    td_verifier_free(v);
    return rc;
}

int td_verify(int kind, const td_options *o, uint64_t offset, const void *buf, size_t len,
              uint64_t *first_mismatch)
{
    td_verify_result r = {0}; /* a TD_EMISMATCH that finish did not set reads zeros */
    int rc = verify_buffer(kind, o, offset, buf, len, 1, &r);
    if (rc == TD_EMISMATCH && first_mismatch)
        *first_mismatch = offset + r.first_mismatch;
    return rc;
}

int td_verify_count(int kind, const td_options *o, uint64_t offset, const void *buf, size_t len,
                    uint64_t *first_mismatch, uint64_t *count)
{
    td_verify_result r = {0}; /* a TD_EMISMATCH that finish did not set reads zeros */
    int rc;
    if (count)
        *count = 0;
    rc = verify_buffer(kind, o, offset, buf, len, 0, &r);
    if (rc == TD_EMISMATCH) {
        if (first_mismatch)
            *first_mismatch = offset + r.first_mismatch;
        if (count)
            *count = r.mismatches;
    }
    return rc;
}

/* Whether the data looks unrelated to the stream.  Unrelated bytes agree by
 * chance 1 in 256 (random), 1 in 10 (text), up to 1 in 4 (like source,
 * json, pdf), so two thirds differing is one cue; a stream shifted by a
 * few bytes agrees a little more (runs, indentation).  Sparse data (95%
 * zero bytes) agrees on most bytes by chance, so the other cue is the
 * agreement beyond chance: intact data adds all of the room chance leaves
 * (sampled - chance), damaged data the undamaged share of it, unrelated
 * data nothing.  Under a tenth of the room, plus three binomial standard
 * deviations, is unrelated.  Where chance leaves almost no room (both
 * sides nearly one byte value) it cannot tell, and says nothing. */
static int unrelated(const td_verify_result *r)
{
    if (r->compared >= 64 && r->mismatches >= r->compared / 3 * 2)
        return 1;
    if (r->sampled < 64 || r->chance > r->sampled)
        return 0;
    double n = (double)r->sampled, c = (double)r->chance, room = n - c;
    if (room < 16.0 || room < n / 100.0)
        return 0;
    double p = c / n;
    return (double)r->sampled_agree - c <= room / 10.0 + 3.0 * sqrt(n * p * (1.0 - p));
}

int td_verify_message(const td_verify_result *r, const char *name, char *buf, size_t cap)
{
    size_t at = 0;
    int rc = TD_OK;
    char more[96] = "";

    if (!r || !buf || cap == 0)
        return TD_EINVAL;
    if (!name)
        name = "input";
    buf[0] = '\0';
#define APPEND(...)                                                                            \
    do {                                                                                       \
        if (at && at < cap - 1)                                                                \
            buf[at++] = '\n', buf[at] = '\0';                                                  \
        if (td__msg(buf + at, cap - at, __VA_ARGS__) != TD_OK)                                 \
            rc = TD_ERANGE;                                                                    \
        at += strlen(buf + at);                                                                \
    } while (0)
    if (r->mismatches) {
        if (r->offset)
            (void)td__msg(more, sizeof more, " (stream offset %llu)",
                          (unsigned long long)(r->offset + r->first_mismatch));
        APPEND("%s differs from the stream: first difference at byte %llu%s, %llu differing "
               "byte%s in %llu compared%s",
               name, (unsigned long long)r->first_mismatch, more,
               (unsigned long long)r->mismatches, r->mismatches == 1 ? "" : "s",
               (unsigned long long)r->compared,
               unrelated(r) ? " (nearly every byte differs: wrong seed, kind, options or offset?)"
                            : "");
    }
    if (r->missing)
        APPEND("%s is short: %llu of %llu bytes, %llu missing", name,
               (unsigned long long)r->received, (unsigned long long)r->expected,
               (unsigned long long)r->missing);
    if (r->extra) {
        if (r->expected == TD_SIZE_UNBOUNDED)
            APPEND("%s is long: the stream ends %llu bytes after offset %llu (%s%llu extra)", name,
                   (unsigned long long)(r->received - r->extra), (unsigned long long)r->offset,
                   r->extra_is_lower_bound ? "at least " : "", (unsigned long long)r->extra);
        else
            APPEND("%s is long: more than %llu bytes (%s%llu extra)", name,
                   (unsigned long long)r->expected, r->extra_is_lower_bound ? "at least " : "",
                   (unsigned long long)r->extra);
    }
    if (at == 0)
        APPEND("%s matches the stream: %llu bytes", name, (unsigned long long)r->compared);
#undef APPEND
    return rc;
}

/* ---- reading a file descriptor -------------------------------------------- */

#define READ_BUF (2u * 1024u * 1024u)

static ssize_t read_full(int fd, void *buf, size_t cap, const td_io_options *io, uint64_t done,
                         int *cancel)
{
    size_t got = 0;
    while (got < cap) {
        ssize_t r = read(fd, (char *)buf + got, cap - got);
        if (r < 0) {
            if (errno == EINTR) {
                if (io && io->progress && io->progress(io->ctx, done + got) != 0) {
                    *cancel = 1;
                    return -1;
                }
                continue;
            }
            return -1;
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

/*
 * Double-buffered input: a thread reads the next chunk while the caller
 * compares the previous one, so the writer on the other end of a pipe never
 * waits for our comparisons.  Without the thread (pthread_create failed),
 * the caller reads each chunk itself.
 */
typedef struct reader {
    int fd;
    uint64_t limit;   /* deliver at most this many bytes */
    uint64_t sent;
    uint8_t *buf[2];
    size_t len[2];
    int err[2];       /* errno of a failed read of this slot, or 0 */
    int full[2];
    int last[2];      /* nothing follows this slot (end, limit or error) */
    int next;         /* slot the reader fills next */
    int stop;         /* the consumer gave up */
    int threaded;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t tid;
} reader;

static int reader_fill(reader *r)
{
    int i = r->next, last, cancel = 0, old;
    uint64_t left = r->limit - r->sent;
    size_t want = left < READ_BUF ? (size_t)left : READ_BUF;
    ssize_t got = 0;
    /* The thread can be cancelled only while it waits in read(): that is
     * how the consumer stops it when it gives up early on a pipe. */
    if (want) {
        if (r->threaded)
            pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &old);
        got = read_full(r->fd, r->buf[i], want, NULL, 0, &cancel);
        if (r->threaded)
            pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
    }
    int e = got < 0 ? errno : 0;

    if (got < 0)
        got = 0;
    last = e != 0 || (size_t)got < want || want == 0 || (uint64_t)got == left;
    pthread_mutex_lock(&r->mu);
    r->len[i] = (size_t)got;
    r->err[i] = e;
    r->last[i] = last;
    r->full[i] = 1;
    r->sent += (uint64_t)got;
    r->next = i ^ 1;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
    return last;
}

static void *reader_main(void *arg)
{
    reader *r = arg;
    int old;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
    for (;;) {
        pthread_mutex_lock(&r->mu);
        while (r->full[r->next] && !r->stop)
            pthread_cond_wait(&r->cv, &r->mu);
        int stop = r->stop;
        pthread_mutex_unlock(&r->mu);
        if (stop || reader_fill(r))
            return NULL;
    }
}

static int reader_start(reader *r, int fd, uint64_t limit)
{
    pthread_attr_t attr;
    int have;

    memset(r, 0, sizeof *r);
    r->fd = fd;
    r->limit = limit;
    /* buffer i holds at most what the input has past i buffers (2 MiB on
     * 4 KiB pages faulted 512 times: about 5 ms on a VM) */
    for (int i = 0; i < 2; i++)
        r->buf[i] = td__alloc_filled(READ_BUF, limit > (uint64_t)i * READ_BUF
                                                   ? limit - (uint64_t)i * READ_BUF : 0);
    if (!r->buf[0] || !r->buf[1]) {
        free(r->buf[0]);
        free(r->buf[1]);
        return TD_ENOMEM;
    }
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->cv, NULL);
    have = pthread_attr_init(&attr) == 0;
    if (have)
        (void)pthread_attr_setstacksize(&attr, TD_POOL_STACK);
    /* Set before the thread starts: it reads r->threaded to know that it
     * may be cancelled in read(). */
    r->threaded = 1;
    if (pthread_create(&r->tid, have ? &attr : NULL, reader_main, r) != 0)
        r->threaded = 0;
    if (have)
        pthread_attr_destroy(&attr);
    return TD_OK;
}

/* Wait for slot i (0, 1, 0, ...) to be read.  While waiting, the progress
 * callback is asked every 100 ms whether to go on (a signal may have been
 * delivered to this thread, which a condition wait does not report);
 * returns nonzero to stop. */
static int reader_get(reader *r, int i, const td_io_options *io, uint64_t done)
{
    int stop = 0;
    if (!r->threaded) {
        if (!r->full[i])
            reader_fill(r);
        return 0;
    }
    pthread_mutex_lock(&r->mu);
    while (!r->full[i] && !stop) {
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        t.tv_nsec += 100000000L;
        if (t.tv_nsec >= 1000000000L) {
            t.tv_sec++;
            t.tv_nsec -= 1000000000L;
        }
        if (pthread_cond_timedwait(&r->cv, &r->mu, &t) == ETIMEDOUT && io && io->progress) {
            pthread_mutex_unlock(&r->mu);
            stop = io->progress(io->ctx, done) != 0;
            pthread_mutex_lock(&r->mu);
        }
    }
    pthread_mutex_unlock(&r->mu);
    return stop;
}

static void reader_put(reader *r, int i)
{
    pthread_mutex_lock(&r->mu);
    r->full[i] = 0;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

static void reader_stop(reader *r)
{
    if (r->threaded) {
        pthread_mutex_lock(&r->mu);
        r->stop = 1;
        pthread_cond_broadcast(&r->cv);
        pthread_mutex_unlock(&r->mu);
        /* Ends a read() that may never return (an idle pipe); harmless
         * when the thread has ended or is about to. */
        pthread_cancel(r->tid);
        pthread_join(r->tid, NULL);
    }
    pthread_cond_destroy(&r->cv);
    pthread_mutex_destroy(&r->mu);
    free(r->buf[0]);
    free(r->buf[1]);
}

int td_verify_fd(int fd, int kind, uint64_t offset, uint64_t size, const td_options *o,
                 const td_io_options *io, td_verify_result *result)
{
    td_verifier *v;
    reader rd;
    uint64_t next_report = 8u << 20;
    int rc;
    struct stat st;

    if (!result || fd < 0)
        return TD_EINVAL;
    memset(result, 0, sizeof *result);
    rc = td_verifier_new(&v, kind, o, offset, size);
    if (rc != TD_OK)
        return rc;
    (void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    if (fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode))
        (void)fcntl(fd, F_SETPIPE_SZ, 1u << 20); /* fewer wake-ups of the writer */
    rc = reader_start(&rd, fd, v->limit);
    if (rc != TD_OK) {
        td_verifier_free(v);
        return rc;
    }
    for (int i = 0;; i ^= 1) {
        if (reader_get(&rd, i, io, v->r.received)) {
            rc = TD_ECANCELED;
            break;
        }
        if (rd.len[i])
            rc = td_verifier_update(v, rd.buf[i], rd.len[i]);
        int err = rd.err[i], last = rd.last[i];
        reader_put(&rd, i);
        if (rc == TD_OK && err) {
            rc = TD_EIO;
            errno = err;
        }
        if (rc != TD_OK)
            break;
        if (io && io->progress && v->r.received >= next_report) {
            next_report = v->r.received + (8u << 20);
            if (io->progress(io->ctx, v->r.received) != 0) {
                rc = TD_ECANCELED;
                break;
            }
        }
        if (last)
            break;
    }
    int saved = errno;
    reader_stop(&rd);
    if (rc == TD_OK && v->r.received == v->limit) {
        /* Anything after the expected bytes makes the input long. */
        uint8_t probe;
        int cancel = 0;
        ssize_t got = read_full(fd, &probe, 1, io, v->r.received, &cancel);
        off_t pos;
        if (got < 0) {
            rc = cancel ? TD_ECANCELED : TD_EIO;
            saved = errno;
        } else if (got > 0) {
            if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
                (pos = lseek(fd, 0, SEEK_CUR)) >= 0 && st.st_size >= pos)
                add_extra(v, (uint64_t)(st.st_size - pos) + 1, 0);
            else
                add_extra(v, 1, 1);
        }
    }
    if (rc == TD_OK) {
        rc = td_verifier_finish(v, result);
    } else {
        *result = v->r;
        result->status = rc;
    }
    td_verifier_free(v);
    errno = saved;
    return rc;
}

int td_verify_file_ex(const char *path, int kind, uint64_t offset, uint64_t size,
                      const td_options *o, const td_io_options *io, td_verify_result *result)
{
    int fd, rc, saved;
    if (!path || !*path || !result)
        return TD_EINVAL;
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        memset(result, 0, sizeof *result);
        return TD_EIO;
    }
    rc = td_verify_fd(fd, kind, offset, size, o, io, result);
    saved = errno;
    close(fd);
    errno = saved;
    return rc;
}

int td_verify_file(const char *path, int kind, uint64_t size, const td_options *o,
                   td_verify_result *result)
{
    return td_verify_file_ex(path, kind, 0, size, o, NULL, result);
}
