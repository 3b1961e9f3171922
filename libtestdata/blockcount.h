/*
 * Counting distinct fixed-size blocks in bounded memory, for the
 * analyzer's dedup ratio (analyze.c).  Over common.h.  Not installed.
 *
 * Each block is reduced to a 64-bit hash.  The distinct hashes are kept in
 * a hash set, exactly, until it holds TD__BLOCKCOUNT_EXACT of them; from
 * then on only hashes whose top `level` bits are zero are kept (distinct
 * sampling: level rises by one, dropping about half of the kept hashes,
 * whenever the set is full again), and the number of distinct blocks is
 * estimated as kept * 2^level.  Memory stays below 4 MiB whatever the
 * input; the estimate's relative standard error is about
 * 1/sqrt(kept) < 0.4 %.
 */
#ifndef TD_BLOCKCOUNT_H
#define TD_BLOCKCOUNT_H

#include "common.h"

/* Distinct hashes counted exactly (512 MiB of distinct 4 KiB blocks). */
#define TD__BLOCKCOUNT_EXACT (1u << 17)

typedef struct td_blockcount td_blockcount;

TD_HIDDEN int td__blockcount_new(td_blockcount **out);
TD_HIDDEN void td__blockcount_free(td_blockcount *b);
/* One block's hash; TD_OK or TD_ENOMEM (the set is unchanged then). */
TD_HIDDEN int td__blockcount_add(td_blockcount *b, uint64_t hash);
/* Blocks added, distinct among them (exact unless *estimated). */
TD_HIDDEN void td__blockcount_result(const td_blockcount *b, uint64_t *blocks,
                                     uint64_t *unique, int *estimated);
/* A 64-bit hash of n bytes, n a multiple of 16 (wyhash-style). */
TD_HIDDEN uint64_t td__block_hash(const uint8_t *p, size_t n);

#endif
