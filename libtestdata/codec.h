/*
 * The compressors the library measures data with (codec.c): one set of
 * contexts per thread, each codec configured as its command line is, and
 * the CPU time each compression took.  Over common.h; used by analyze.c.
 * Not installed.
 */
#ifndef TD_CODEC_H
#define TD_CODEC_H

#include "common.h"

typedef struct td_codecs td_codecs;

/* Contexts for inputs of up to max_in bytes.  TD_OK or TD_ENOMEM. */
TD_HIDDEN int td__codecs_new(td_codecs **out, size_t max_in);
TD_HIDDEN void td__codecs_free(td_codecs *c);
/* Compress in[0..len) with codec k (a td_codec) as one independent unit;
 * *csize is the compressed size, *ns the thread CPU time it took.  Below
 * 256 KiB, after an untimed first compression (the codec's allocations and
 * first touches), *ns is the mean of repeats up to 256 KiB, 256 of them or
 * 5 ms: what compressing many inputs like this one costs each. */
TD_HIDDEN int td__codecs_compress(td_codecs *c, int k, const uint8_t *in, size_t len,
                                  uint64_t *csize, uint64_t *ns);
/* The same size, untimed, and sooner where the frame's bytes need not all
 * be computed (lz4's content checksum). */
TD_HIDDEN int td__codecs_size(td_codecs *c, int k, const uint8_t *in, size_t len, uint64_t *csize);

#endif
