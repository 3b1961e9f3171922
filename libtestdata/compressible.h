/* Internal interface of the compressible kind (also used by the calibration
 * tool in tools/).  Not installed. */
#ifndef TD_COMPRESSIBLE_H
#define TD_COMPRESSIBLE_H

#include "kind.h"

/* Shape of the LZ sequences of a block. */
typedef struct td__comp_params {
    uint32_t lit_mean;      /* mean literal-run length, bytes (>= 1) */
    uint32_t match_mean16;  /* mean match length, 1/16 bytes */
    uint32_t jbits;         /* copy sources lie < 2^jbits literal runs back */
    uint32_t succ;          /* size of the literal chain's step set, 8..256 (256: uniform) */
} td__comp_params;

/* One row of a calibrated table: parameters for ratio rq/1024. */
typedef struct td__comp_row {
    uint32_t rq;
    uint32_t lit_mean;
    uint32_t match_mean16;
    uint32_t jbits;
    uint32_t succ;
} td__comp_row;

/* A calibrated table: one per block class (see td__comp_class). */
typedef struct td__comp_table_t {
    uint32_t block;  /* generator block size G of this class */
    uint32_t nrows;
    const td__comp_row *rows;
} td__comp_table_t;

#define TD_COMP_BLOCK 16384u       /* G without compress_block, and the largest G */
#define TD_COMP_SLACK 64u
#define TD_COMP_EPOCH_SHIFT 21u /* the step set changes every 2 MiB of stream */
#define TD_COMP_MODM 512u /* remainders by d < TD_COMP_MODM without division */
#define TD_COMP_CBLOCK_MIN 512u
#define TD_COMP_CBLOCK_MAX (1u << 20)

/* Everything a block needs; immutable after td__comp_setup. */
typedef struct td__comp_gen {
    uint64_t key;   /* token stream key */
    uint64_t lkey;  /* literal pool key */
    uint32_t block; /* G */
    td__comp_params p;
    uint16_t pair[256]; /* 0x100 | first base step s1 with s1 ^ d a base step; 0: none */
} td__comp_gen;

/* Table class for compress_block cb (0: not set). */
TD_HIDDEN const td__comp_table_t *td__comp_class(uint32_t cb);
/* Parameters for a ratio quantised to 1/1024 (rq = ratio * 1024) from table t. */
TD_HIDDEN void td__comp_params_for(const td__comp_table_t *t, uint32_t rq, td__comp_params *p);
/* Set g's fields (succ clamped to 8..256). */
TD_HIDDEN void td__comp_setup(td__comp_gen *g, uint64_t key, uint64_t lkey, uint32_t block,
                              const td__comp_params *p);
/* Bytes [0, end) of block bi into out (which must hold g->block +
 * TD_COMP_SLACK bytes); end <= g->block. */
TD_HIDDEN void td__comp_block(const td__comp_gen *g, uint64_t bi, uint8_t *out, uint32_t end);

#endif
