/*
 * td_analyzer: entropy and compression ratios of arbitrary data, and a
 * one-line verdict on what they mean for a transfer benchmark.
 *
 * Entropy is computed from the histogram of every byte.  Compression ratios
 * come from independent TD_ANALYZE_BLOCK-byte blocks compressed with zlib,
 * libzstd, liblz4 and liblzma (the libraries, never child processes).  When
 * the input is larger than the sample budget, only every stride-th block is
 * compressed; with an unknown size the stride starts at 1 and doubles
 * whenever the budget is full, dropping the samples that are off the new
 * stride, so the kept samples always spread evenly over what has been seen.
 */
#define _GNU_SOURCE /* posix_fadvise */
#include "pool.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blockcount.h"
#include "codec.h"

#include <math.h>
#include <stdio.h>

#define BLOCK TD_ANALYZE_BLOCK

typedef struct sample {
    uint64_t index; /* block number in the input */
    uint64_t len;   /* bytes in the block (the last one may be short) */
    uint64_t csize[TD_CODEC_COUNT];
    uint64_t ns[TD_CODEC_COUNT]; /* CPU time of each compression */
} sample;

/* A sampled block, received and waiting to be compressed. */
typedef struct job {
    const td_analyzer *a;
    td_codecs *cx;
    uint8_t *data; /* BLOCK bytes, owned by the analyzer */
    sample s;
    int rc;
} job;

struct td_analyzer {
    uint64_t hist[4][256]; /* four interleaved histograms: fewer store stalls */
    uint64_t total;        /* bytes seen */
    uint64_t stride;       /* unknown size: blocks with index % stride == 0 are sampled */
    uint64_t hint_blocks;  /* blocks in the announced size; 0: unknown or all fit */
    uint64_t next_pick;    /* known size: the i-th pick is block i*hint_blocks/max_samples */
    uint64_t picks;
    size_t max_samples;
    sample *samples;       /* compressed samples, in input order */
    size_t nsamples;
    int cur_sampled;       /* is the block being received sampled? */
    size_t blen;           /* bytes of it received, into batch[nbatch].data */
    unsigned nthreads;     /* compressor sets, blocks compressed at once */
    td_codecs **cx;
    job *batch;            /* nthreads entries: complete blocks first, then free */
    unsigned nbatch;
    td_pool *pool;         /* nthreads - 1 workers, or NULL */
    int finished;
    td_blockcount *dedup;  /* distinct TD_ANALYZE_DEDUP_BLOCK-byte blocks */
    size_t dlen;           /* bytes of the dedup block being received, in dpart */
    uint8_t dpart[TD_ANALYZE_DEDUP_BLOCK];
};

static const char *const codec_names[TD_CODEC_COUNT] = {"gzip", "zstd", "lz4", "xz"};
static const char *const codec_labels[TD_CODEC_COUNT] = {"gzip -6", "zstd -3", "lz4", "xz -6"};

const char *td_codec_name(int codec)
{
    return codec >= 0 && codec < TD_CODEC_COUNT ? codec_names[codec] : NULL;
}

const char *td_codec_label(int codec)
{
    return codec >= 0 && codec < TD_CODEC_COUNT ? codec_labels[codec] : NULL;
}

void td_analyze_options_init(td_analyze_options *o)
{
    if (!o)
        return;
    memset(o, 0, sizeof *o);
    o->size_hint = TD_SIZE_UNBOUNDED;
    o->sample_bytes = TD_ANALYZE_DEFAULT_SAMPLE;
    o->threads = 1;
}

void td_analyzer_free(td_analyzer *a)
{
    if (!a)
        return;
    td__pool_free(a->pool);
    for (unsigned t = 0; a->cx && t < a->nthreads; t++)
        td__codecs_free(a->cx[t]);
    for (unsigned t = 0; a->batch && t < a->nthreads; t++)
        free(a->batch[t].data);
    free(a->cx);
    free(a->batch);
    free(a->samples);
    td__blockcount_free(a->dedup);
    free(a);
}

int td_analyze_options_check(const td_analyze_options *o, char *msg, size_t cap)
{
    int rc = td__options_null(o, msg, cap);
    return rc != TD_OK ? rc : td__sample_check(o->sample_bytes, msg, cap);
}

int td_analyzer_new(td_analyzer **out, const td_analyze_options *o)
{
    td_analyze_options def;
    td_analyzer *a;
    unsigned nt;
    int rc = TD_ENOMEM;

    if (!out)
        return TD_EINVAL;
    *out = NULL;
    if (!o) {
        td_analyze_options_init(&def);
        o = &def;
    }
    if (td_analyze_options_check(o, NULL, 0) != TD_OK)
        return TD_ERANGE;
    a = calloc(1, sizeof *a);
    if (!a)
        return TD_ENOMEM;
    a->max_samples = (size_t)(o->sample_bytes / BLOCK + (o->sample_bytes % BLOCK != 0));
    if (a->max_samples > ((size_t)1 << 20))
        a->max_samples = (size_t)1 << 20;
    a->stride = 1;
    if (o->size_hint != TD_SIZE_UNBOUNDED) {
        uint64_t nblocks = o->size_hint / BLOCK + (o->size_hint % BLOCK != 0);
        if (nblocks > a->max_samples)
            a->hint_blocks = nblocks; /* pick exactly max_samples blocks */
    }
    a->samples = malloc(a->max_samples * sizeof *a->samples);
    if (!a->samples)
        goto fail;
    if ((rc = td__blockcount_new(&a->dedup)) != TD_OK)
        goto fail;
    rc = TD_ENOMEM;

    /* Threads: more than the blocks in the budget would only idle. */
    nt = o->threads ? o->threads : td__ncpus();
    if (nt > TD_MAX_THREADS)
        nt = TD_MAX_THREADS;
    if (nt > a->max_samples)
        nt = (unsigned)a->max_samples;
    if (nt > 1 && td__pool_new(&a->pool, nt - 1) == TD_OK)
        nt = td__pool_size(a->pool); /* fewer threads may have started */
    else
        nt = 1;
    a->cx = calloc(nt, sizeof *a->cx);
    a->batch = calloc(nt, sizeof *a->batch);
    if (!a->cx || !a->batch)
        goto fail;
    a->nthreads = nt;
    for (unsigned t = 0; t < nt; t++) {
        rc = td__codecs_new(&a->cx[t], BLOCK);
        if (rc == TD_OK && !(a->batch[t].data = malloc(BLOCK)))
            rc = TD_ENOMEM;
        if (rc != TD_OK && t > 0) {
            /* Threads are never a reason to fail: go on with those that
             * got their memory. */
            td__codecs_free(a->cx[t]);
            a->cx[t] = NULL;
            free(a->batch[t].data);
            a->batch[t].data = NULL;
            a->nthreads = t;
            rc = TD_OK;
            break;
        }
        if (rc != TD_OK)
            goto fail;
    }
    *out = a;
    return TD_OK;
fail:
    td_analyzer_free(a);
    return rc;
}

/* Compress one block with every codec into s->csize and s->ns. */
static int compress_block(td_codecs *c, const uint8_t *in, size_t len, sample *s)
{
    for (int k = 0; k < TD_CODEC_COUNT; k++) {
        int rc = td__codecs_compress(c, k, in, len, &s->csize[k], &s->ns[k]);
        if (rc != TD_OK)
            return rc;
    }
    return TD_OK;
}

static void compress_job(void *arg)
{
    job *j = arg;
    j->rc = compress_block(j->cx, j->data, (size_t)j->s.len, &j->s);
}

/* Compress the complete blocks of the batch, one per thread, and append
 * their samples in input order. */
static int flush_batch(td_analyzer *a)
{
    int rc = TD_OK;
    if (a->nbatch == 0)
        return TD_OK;
    for (unsigned k = 0; k < a->nbatch; k++) {
        a->batch[k].a = a;
        a->batch[k].cx = a->cx[k];
    }
    if (a->pool && a->nbatch > 1)
        td__pool_run(a->pool, compress_job, a->batch, sizeof a->batch[0], a->nbatch);
    else
        for (unsigned k = 0; k < a->nbatch; k++)
            compress_job(&a->batch[k]);
    for (unsigned k = 0; k < a->nbatch; k++) {
        if (a->batch[k].rc != TD_OK && rc == TD_OK)
            rc = a->batch[k].rc;
        a->samples[a->nsamples++] = a->batch[k].s;
    }
    a->nbatch = 0;
    return rc;
}

/* The block being received is complete (or the input ended): queue it. */
static int close_block(td_analyzer *a)
{
    if (!a->cur_sampled || a->blen == 0)
        return TD_OK;
    job *j = &a->batch[a->nbatch++];
    memset(&j->s, 0, sizeof j->s);
    j->s.index = (a->total - 1) / BLOCK;
    j->s.len = a->blen;
    a->blen = 0;
    a->cur_sampled = 0;
    return a->nbatch == a->nthreads ? flush_batch(a) : TD_OK;
}

/* A new block (number @p index) starts: decide whether it is sampled. */
static void open_block(td_analyzer *a, uint64_t index)
{
    a->blen = 0;
    if (a->hint_blocks) {
        if (index < a->hint_blocks) {
            /* Known size: blocks floor(i * n / max), i = 0 .. max-1. */
            a->cur_sampled = index == a->next_pick && a->picks < a->max_samples;
            if (a->cur_sampled) {
                a->picks++;
                a->next_pick = (uint64_t)((unsigned __int128)a->picks * a->hint_blocks /
                                          a->max_samples);
            }
            return;
        }
        /* More data than announced: carry on as for an unknown size. */
        a->hint_blocks = 0;
        a->stride = 1;
        while (a->stride <= index / a->max_samples)
            a->stride *= 2;
    }
    if (index % a->stride == 0 && a->nsamples + a->nbatch >= a->max_samples) {
        /* Budget full: double the stride, keep the samples still on it,
         * compressed or queued (queued ones keep their buffers by swapping). */
        size_t k = 0;
        a->stride *= 2;
        for (size_t i = 0; i < a->nsamples; i++)
            if (a->samples[i].index % a->stride == 0)
                a->samples[k++] = a->samples[i];
        a->nsamples = k;
        unsigned q = 0;
        for (unsigned i = 0; i < a->nbatch; i++) {
            if (a->batch[i].s.index % a->stride == 0) {
                job t = a->batch[q];
                a->batch[q++] = a->batch[i];
                a->batch[i] = t;
            }
        }
        a->nbatch = q;
    }
    a->cur_sampled = index % a->stride == 0;
}

static void histogram(td_analyzer *a, const uint8_t *p, size_t n)
{
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        a->hist[0][p[i]]++;
        a->hist[1][p[i + 1]]++;
        a->hist[2][p[i + 2]]++;
        a->hist[3][p[i + 3]]++;
    }
    for (; i < n; i++)
        a->hist[0][p[i]]++;
}

/* Whole dedup blocks at input offsets 0, 4096, ...: hashed in place, or
 * gathered in dpart when a chunk boundary cuts one. */
static int dedup_feed(td_analyzer *a, const uint8_t *p, size_t n)
{
    const size_t B = TD_ANALYZE_DEDUP_BLOCK;
    int rc = TD_OK;
    if (a->dlen) {
        size_t take = TD_MIN(B - a->dlen, n);
        memcpy(a->dpart + a->dlen, p, take);
        a->dlen += take;
        p += take;
        n -= take;
        if (a->dlen < B)
            return TD_OK;
        a->dlen = 0;
        rc = td__blockcount_add(a->dedup, td__block_hash(a->dpart, B));
    }
    for (; rc == TD_OK && n >= B; p += B, n -= B)
        rc = td__blockcount_add(a->dedup, td__block_hash(p, B));
    if (rc == TD_OK && n) {
        memcpy(a->dpart, p, n);
        a->dlen = n;
    }
    return rc;
}

int td_analyzer_update(td_analyzer *a, const void *buf, size_t len)
{
    const uint8_t *p = buf;
    int rc;

    if (!a || a->finished || (len && !buf))
        return TD_EINVAL;
    if (len > UINT64_MAX - a->total)
        return TD_ERANGE;
    if (len && (rc = dedup_feed(a, p, len)) != TD_OK)
        return rc;
    histogram(a, p, len);
    while (len) {
        size_t pos = (size_t)(a->total % BLOCK);
        size_t n = BLOCK - pos;
        if (n > len)
            n = len;
        if (pos == 0)
            open_block(a, a->total / BLOCK);
        if (a->cur_sampled) {
            memcpy(a->batch[a->nbatch].data + a->blen, p, n);
            a->blen += n;
        }
        a->total += n;
        p += n;
        len -= n;
        if (a->total % BLOCK == 0) {
            rc = close_block(a);
            if (rc != TD_OK)
                return rc;
        }
    }
    return TD_OK;
}

/* v with @p decimals digits after a '.', whatever the process's
 * locale: printf's radix character follows LC_NUMERIC ("1,50" under de_DE),
 * so keep its leading digits and its last @p decimals characters (the
 * fraction digits) and put a '.' between them. */
static void fmt_fixed(char *buf, size_t cap, double v, int decimals)
{
    char tmp[400]; /* %.2f of DBL_MAX is 312 characters */
    const char *sign = signbit(v) ? "-" : "";
    if (!isfinite(v)) { /* only from a td_analysis built by the caller */
        snprintf(buf, cap, "%s%s", sign, isnan(v) ? "nan" : "inf");
        return;
    }
    int n = snprintf(tmp, sizeof tmp, "%.*f", decimals, fabs(v));
    if (n < 0 || (size_t)n >= sizeof tmp) {
        snprintf(buf, cap, "?");
        return;
    }
    size_t digits = strspn(tmp, "0123456789");
    if (decimals > 0 && (size_t)n > digits + (size_t)decimals)
        snprintf(buf, cap, "%s%.*s.%s", sign, (int)digits, tmp, tmp + n - decimals);
    else
        snprintf(buf, cap, "%s%.*s", sign, (int)digits, tmp);
}

/* Ratios as people read them: 1.00, 12.3, 1031. */
static void fmt_ratio(char *buf, size_t cap, double r)
{
    if (r >= 99.95)
        fmt_fixed(buf, cap, r, 0);
    else if (r >= 9.995)
        fmt_fixed(buf, cap, r, 1);
    else
        fmt_fixed(buf, cap, r, 2);
}

/* Two significant digits, for "~N x faster": 1031 -> 1000, 4.27 -> 4.3. */
static void fmt_approx(char *buf, size_t cap, double r)
{
    if (r >= 10) {
        double mag = pow(10, floor(log10(r)) - 1);
        fmt_fixed(buf, cap, floor(r / mag + 0.5) * mag, 0);
    } else {
        fmt_fixed(buf, cap, r, 1);
    }
}

/* Real data's codec fingerprint is never flat: lz4 finds far fewer of the
 * short matches that make gzip's ratio (0.53-0.78 of it over text, HTML,
 * source, spreadsheets, protobuf, URLs and binaries), while generated
 * long-match data gives lz4 nearly gzip's ratio.  The ratio of the two is
 * machine-independent, unlike the CPU times that follow from it. */
static int synthetic(const td_analysis *r)
{
    double g = r->ratio[TD_CODEC_GZIP], l = r->ratio[TD_CODEC_LZ4];
    return r->size > 0 && g >= 1.5 && l >= 0.9 * g;
}

int td_analysis_verdict(const td_analysis *r, char *buf, size_t cap)
{
    char gz[32], lz[32], best_s[32], approx[32];
    int best = 0, n;

    if (!r || !buf || cap == 0)
        return TD_EINVAL;
    for (int c = 1; c < TD_CODEC_COUNT; c++)
        if (r->ratio[c] > r->ratio[best])
            best = c;
    double top = r->ratio[best], g = r->ratio[TD_CODEC_GZIP];
    fmt_ratio(gz, sizeof gz, g);
    fmt_ratio(lz, sizeof lz, r->ratio[TD_CODEC_LZ4]);
    fmt_ratio(best_s, sizeof best_s, top);
    if (r->size == 0) {
        n = snprintf(buf, cap, "empty: there is nothing to transfer");
    } else if (top < 1.1) {
        n = snprintf(buf, cap, "incompressible: transfer speed reflects the raw link");
    } else if (synthetic(r)) {
        n = snprintf(buf, cap,
                     "compresses %sx under gzip -6 and %sx under lz4, like synthetic data: real "
                     "data of this ratio compresses less under lz4, and slower: a compressing "
                     "path's throughput will look too good (testdata profile makes data like "
                     "yours)",
                     gz, lz);
    } else if (top < 2.0) {
        fmt_approx(approx, sizeof approx, top);
        n = snprintf(buf, cap,
                     "slightly compressible (%sx under %s): a compressing link can look up "
                     "to ~%sx faster than the raw link",
                     best_s, td_codec_label(best), approx);
    } else {
        /* ssh/scp -C, HTTP and most filesystems use deflate-class codecs:
         * lead with gzip, mention the best when it is much better. */
        double headline = g >= 2.0 ? g : top;
        fmt_approx(approx, sizeof approx, headline);
        if (best != TD_CODEC_GZIP && top > 1.5 * g)
            n = snprintf(buf, cap,
                         "compresses %sx under gzip -6, %sx under %s: anything that compresses "
                         "on the way (scp -C, ssh Compression yes, HTTP gzip, ZFS/Btrfs "
                         "compression, WAN optimizers, dedup) will make it look ~%sx faster",
                         gz, best_s, td_codec_label(best), approx);
        else
            n = snprintf(buf, cap,
                         "compresses %sx under gzip -6: anything that compresses on the way "
                         "(scp -C, ssh Compression yes, HTTP gzip, ZFS/Btrfs compression, WAN "
                         "optimizers, dedup) will make it look ~%sx faster",
                         gz, approx);
    }
    return n < 0 || (size_t)n >= cap ? TD_ERANGE : TD_OK;
}

int td_analyzer_finish(td_analyzer *a, td_analysis *r)
{
    uint64_t counts[256];
    double h = 0;
    int rc;

    if (!a || !r || a->finished)
        return TD_EINVAL;
    rc = close_block(a);
    if (rc == TD_OK)
        rc = flush_batch(a);
    if (rc != TD_OK)
        return rc;
    a->finished = 1;
    memset(r, 0, sizeof *r);
    r->size = a->total;
    for (int v = 0; v < 256; v++)
        counts[v] = a->hist[0][v] + a->hist[1][v] + a->hist[2][v] + a->hist[3][v];
    if (a->total)
        h = td__entropy0(counts);
    r->entropy = h > 0 ? (h < 8 ? h : 8) : 0;
    for (size_t i = 0; i < a->nsamples; i++) {
        r->sampled += a->samples[i].len;
        for (int c = 0; c < TD_CODEC_COUNT; c++) {
            r->compressed[c] += a->samples[i].csize[c];
            r->cpu_ns[c] += a->samples[i].ns[c];
        }
    }
    r->is_sampled = r->sampled < r->size;
    for (int c = 0; c < TD_CODEC_COUNT; c++) {
        r->ratio[c] = r->compressed[c] ? (double)r->sampled / (double)r->compressed[c] : 0;
        /* A clock tick under the sampled size would read as infinite. */
        r->mb_per_s[c] = r->sampled ? (double)r->sampled * 1e3 / (double)(r->cpu_ns[c] | 1) : 0;
    }
    r->synthetic = synthetic(r);
    td__blockcount_result(a->dedup, &r->dedup_blocks, &r->dedup_unique, &r->dedup_is_estimate);
    r->dedup_ratio = r->dedup_unique ? (double)r->dedup_blocks / (double)r->dedup_unique : 0;
    (void)td_analysis_verdict(r, r->verdict, sizeof r->verdict);
    return TD_OK;
}

int td_analyze_buffer(const void *buf, size_t len, const td_analyze_options *o,
                      td_analysis *result)
{
    td_analyze_options opt;
    td_analyzer *a;
    int rc;

    if (!result || (len && !buf))
        return TD_EINVAL;
    if (o)
        opt = *o;
    else
        td_analyze_options_init(&opt);
    opt.size_hint = len;
    rc = td_analyzer_new(&a, &opt);
    if (rc != TD_OK)
        return rc;
    rc = td_analyzer_update(a, buf, len);
    if (rc == TD_OK)
        rc = td_analyzer_finish(a, result);
    td_analyzer_free(a);
    return rc;
}

int td_analyze_fd(int fd, const td_analyze_options *o, const td_io_options *io,
                  td_analysis *result)
{
    enum { CHUNK = 1u << 20 };
    td_analyze_options opt;
    td_analyzer *a = NULL;
    struct stat st;
    uint64_t done = 0, next_report = 8u << 20;
    uint8_t *buf;
    int rc;

    if (fd < 0 || !result)
        return TD_EINVAL;
    if (o)
        opt = *o;
    else
        td_analyze_options_init(&opt);
    /* A regular file's size spreads the samples evenly from the start. */
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && opt.size_hint == TD_SIZE_UNBOUNDED)
        opt.size_hint = (uint64_t)st.st_size;
    (void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    buf = malloc(CHUNK);
    if (!buf)
        return TD_ENOMEM;
    rc = td_analyzer_new(&a, &opt);
    while (rc == TD_OK) {
        ssize_t got = read(fd, buf, CHUNK);
        if (got < 0 && errno == EINTR) {
            if (io && io->progress && io->progress(io->ctx, done) != 0)
                rc = TD_ECANCELED;
            continue;
        }
        if (got < 0) {
            rc = TD_EIO;
            break;
        }
        if (got == 0)
            break;
        rc = td_analyzer_update(a, buf, (size_t)got);
        done += (uint64_t)got;
        if (rc == TD_OK && io && io->progress && done >= next_report) {
            next_report = done + (8u << 20);
            if (io->progress(io->ctx, done) != 0)
                rc = TD_ECANCELED;
        }
    }
    int saved = errno;
    if (rc == TD_OK)
        rc = td_analyzer_finish(a, result);
    td_analyzer_free(a);
    free(buf);
    errno = saved;
    return rc;
}

int td_analyze_file(const char *path, const td_analyze_options *o, const td_io_options *io,
                    td_analysis *result)
{
    int fd, rc, saved;
    if (!path || !*path || !result)
        return TD_EINVAL;
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return TD_EIO;
    rc = td_analyze_fd(fd, o, io, result);
    saved = errno;
    close(fd);
    errno = saved;
    return rc;
}
