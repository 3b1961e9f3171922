/*
 * Compressors as libraries (never child processes), configured as their
 * command lines are: gzip -6 (deflate, gzip wrapper), zstd -3, lz4 (frame,
 * 4 MiB linked blocks, content checksum) and xz -6 (LZMA2, .xz stream).
 * Time is the thread's CPU time, so it does not depend on what else the
 * machine is doing (as far as caches allow).
 */
#include "codec.h"

#include <lz4frame.h>
#include <lzma.h>
#include <time.h>
#include <zlib.h>
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_createCCtx_advanced, stable since 1.0 */
#include <zstd.h>
#include <zstd_errors.h>

struct td_codecs {
    z_stream z;
    int z_ready;
    ZSTD_CCtx *zc;
    lzma_stream xz;
    lzma_options_lzma xzopt;
    lzma_filter xzfilters[2];
    LZ4F_preferences_t lz4prefs;
    LZ4F_preferences_t lz4size; /* the same without the content checksum */
    uint8_t *out;
    size_t outcap;
};

static uint64_t cpu_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

void td__codecs_free(td_codecs *c)
{
    if (!c)
        return;
    if (c->z_ready)
        deflateEnd(&c->z);
    ZSTD_freeCCtx(c->zc);
    lzma_end(&c->xz);
    free(c->out);
    free(c);
}

/* zstd's tables (about 1.2 MiB at -3 on a MiB of input) on huge pages. */
static void *zstd_alloc(void *opaque, size_t n)
{
    (void)opaque;
    return td__alloc_large(n);
}

static void zstd_free(void *opaque, void *p)
{
    (void)opaque;
    free(p);
}

/* xz's match finder (its hash table and binary tree, ~10 MiB touched on
 * 3 MB of input) too: on 4 KiB pages, the faults of the first xz -6 were
 * more than half of the faults of `testdata profile`. */
static void *xz_alloc(void *opaque, size_t nmemb, size_t size)
{
    (void)opaque;
    return size && nmemb > SIZE_MAX / size ? NULL : td__alloc_large(nmemb * size);
}

static void xz_free(void *opaque, void *p)
{
    (void)opaque;
    free(p);
}

static const lzma_allocator xz_allocator = {xz_alloc, xz_free, NULL};

int td__codecs_new(td_codecs **out, size_t max_in)
{
    lzma_stream init = LZMA_STREAM_INIT;
    td_codecs *c = calloc(1, sizeof *c);
    *out = NULL;
    if (!c)
        return TD_ENOMEM;
    c->xz = init;
    c->xz.allocator = &xz_allocator;
    if (!(c->zc = ZSTD_createCCtx_advanced((ZSTD_customMem){zstd_alloc, zstd_free, NULL})))
        goto fail;
    /* lz4 as the lz4 command writes frames: 4 MiB linked blocks, checksum. */
    c->lz4prefs.frameInfo.blockSizeID = LZ4F_max4MB;
    c->lz4prefs.frameInfo.blockMode = LZ4F_blockLinked;
    c->lz4prefs.frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled;
    c->lz4size = c->lz4prefs;
    c->lz4size.frameInfo.contentChecksumFlag = LZ4F_noContentChecksum;
    /* xz -6, with the dictionary capped at the input size: a larger one
     * cannot find more matches in one unit, and would cost ~90 MiB. */
    if (lzma_lzma_preset(&c->xzopt, 6))
        goto fail;
    if (c->xzopt.dict_size > max_in)
        c->xzopt.dict_size = max_in < LZMA_DICT_SIZE_MIN ? LZMA_DICT_SIZE_MIN : (uint32_t)max_in;
    c->xzfilters[0].id = LZMA_FILTER_LZMA2;
    c->xzfilters[0].options = &c->xzopt;
    c->xzfilters[1].id = LZMA_VLI_UNKNOWN;
    c->xzfilters[1].options = NULL;
    /* deflate's state is made on first use (the model builder's calibration
     * never uses it); without one, deflateBound is zlib's conservative bound,
     * which leaves room for the gzip wrapper too. */
    c->outcap = TD_MAX(deflateBound(NULL, max_in) + 18, ZSTD_compressBound(max_in));
    c->outcap = TD_MAX(c->outcap, LZ4F_compressFrameBound(max_in, &c->lz4prefs));
    c->outcap = TD_MAX(c->outcap, lzma_stream_buffer_bound(max_in));
    if (!(c->out = td__alloc_large(c->outcap)))
        goto fail;
    *out = c;
    return TD_OK;
fail:
    td__codecs_free(c);
    return TD_ENOMEM;
}

static int gzip6(td_codecs *c, const uint8_t *in, size_t len, uint64_t *csize)
{
    if (!c->z_ready) {
        /* gzip -6: deflate with the gzip wrapper (windowBits 15 + 16). */
        int zrc = deflateInit2(&c->z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
        if (zrc != Z_OK)
            return zrc == Z_MEM_ERROR ? TD_ENOMEM : TD_EINVAL;
        c->z_ready = 1;
    } else if (deflateReset(&c->z) != Z_OK) {
        return TD_EINVAL;
    }
    c->z.next_in = (Bytef *)(uintptr_t)in;
    c->z.avail_in = (uInt)len;
    c->z.next_out = c->out;
    c->z.avail_out = (uInt)c->outcap;
    int zrc = deflate(&c->z, Z_FINISH);
    if (zrc != Z_STREAM_END)
        return zrc == Z_MEM_ERROR ? TD_ENOMEM : TD_EINVAL;
    *csize = c->z.total_out;
    return TD_OK;
}

static int zstd3(td_codecs *c, const uint8_t *in, size_t len, uint64_t *csize)
{
    size_t n = ZSTD_compressCCtx(c->zc, c->out, c->outcap, in, len, 3);
    if (ZSTD_isError(n))
        return ZSTD_getErrorCode(n) == ZSTD_error_memory_allocation ? TD_ENOMEM : TD_EINVAL;
    *csize = n;
    return TD_OK;
}

static int lz4f(td_codecs *c, const uint8_t *in, size_t len, uint64_t *csize)
{
    size_t n = LZ4F_compressFrame(c->out, c->outcap, in, len, &c->lz4prefs);
    if (LZ4F_isError(n))
        return TD_ENOMEM; /* the output is big enough: allocation is all that can fail */
    *csize = n;
    return TD_OK;
}

/* The size of lz4f's frame: the content checksum is 4 bytes at its end
 * whatever their value (the header's length does not depend on the flag),
 * so it is left out and counted. */
static int lz4f_size(td_codecs *c, const uint8_t *in, size_t len, uint64_t *csize)
{
    size_t n = LZ4F_compressFrame(c->out, c->outcap, in, len, &c->lz4size);
    if (LZ4F_isError(n))
        return TD_ENOMEM;
    *csize = n + 4;
    return TD_OK;
}

static int xz6(td_codecs *c, const uint8_t *in, size_t len, uint64_t *csize)
{
    /* Re-initialising an lzma_stream reuses its encoder's memory. */
    lzma_ret lr = lzma_stream_encoder(&c->xz, c->xzfilters, LZMA_CHECK_CRC64);
    if (lr != LZMA_OK)
        return lr == LZMA_MEM_ERROR ? TD_ENOMEM : TD_EINVAL;
    c->xz.next_in = in;
    c->xz.avail_in = len;
    c->xz.next_out = c->out;
    c->xz.avail_out = c->outcap;
    do
        lr = lzma_code(&c->xz, LZMA_FINISH);
    while (lr == LZMA_OK && c->xz.avail_out > 0);
    if (lr != LZMA_STREAM_END)
        return lr == LZMA_MEM_ERROR ? TD_ENOMEM : TD_EINVAL;
    *csize = c->xz.total_out;
    return TD_OK;
}

static int (*const codec_fns[TD_CODEC_COUNT])(td_codecs *, const uint8_t *, size_t, uint64_t *) = {
    [TD_CODEC_GZIP] = gzip6, [TD_CODEC_ZSTD] = zstd3, [TD_CODEC_LZ4] = lz4f, [TD_CODEC_XZ] = xz6};

/* One compression of a small input is mostly the codec's first use: zstd
 * allocates and first touches its tables (about 1.2 MiB, 3-4 ms on a VM's
 * fresh pages), deflate and xz their state, so a 4 KiB file came out at
 * 5-7 MB/s under gzip -6 and zstd -3.  Below SPEED_BYTES, an untimed
 * first compression, then repeats up to SPEED_BYTES, SPEED_REPS times or
 * SPEED_NS of CPU time, timed together (about 10 ms more for a 4 KiB
 * input's four codecs, most of it xz's); from SPEED_BYTES on, one timed
 * compression, as the work outweighs the start-up. */
#define SPEED_BYTES (256u << 10)
#define SPEED_REPS 256u
#define SPEED_NS 5000000u

int td__codecs_compress(td_codecs *c, int k, const uint8_t *in, size_t len, uint64_t *csize,
                        uint64_t *ns)
{
    if (k < 0 || k >= TD_CODEC_COUNT)
        return TD_EINVAL;
    int rc = TD_OK;
    unsigned reps = 0;
    if (len < SPEED_BYTES && (rc = codec_fns[k](c, in, len, csize)) != TD_OK)
        return rc;
    uint64_t t0 = cpu_ns(), t, done = 0;
    do {
        rc = codec_fns[k](c, in, len, csize);
        reps++;
        done += len;
        t = cpu_ns() - t0;
    } while (rc == TD_OK && done < SPEED_BYTES && reps < SPEED_REPS && t < SPEED_NS);
    *ns = t / reps;
    return rc;
}

int td__codecs_size(td_codecs *c, int k, const uint8_t *in, size_t len, uint64_t *csize)
{
    if (k == TD_CODEC_LZ4)
        return lz4f_size(c, in, len, csize);
    if (k < 0 || k >= TD_CODEC_COUNT)
        return TD_EINVAL;
    return codec_fns[k](c, in, len, csize);
}
