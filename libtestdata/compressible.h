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
} td__comp_params;

/* One row of the calibrated table: parameters for ratio rq/1024. */
typedef struct td__comp_row {
    uint32_t rq;
    uint32_t lit_mean;
    uint32_t match_mean16;
    uint32_t jbits;
} td__comp_row;

#define TD_COMP_BLOCK 16384u
#define TD_COMP_SLACK 16u

TD_HIDDEN void td__comp_params_for(uint32_t rq, td__comp_params *p);
/* Bytes [0, end) of block bi into out (which must hold TD_COMP_BLOCK +
 * TD_COMP_SLACK bytes); end <= TD_COMP_BLOCK. */
TD_HIDDEN void td__comp_block(const td__comp_params *p, uint64_t key, uint64_t bi, uint8_t *out,
                              uint32_t end);

#endif
