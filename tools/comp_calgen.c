/*
 * Helper of tools/calibrate_compressible.py: writes SIZE bytes of
 * compressible-kind blocks for explicit parameters (bypassing the table).
 *   comp_calgen LIT_MEAN MATCH_MEAN16 JBITS SIZE_BYTES [SEED]
 * Built by the calibration script against the static library.
 */
#include "compressible.h"

#include <stdio.h>

int main(int argc, char **argv)
{
    td__comp_params p;
    static uint8_t blk[TD_COMP_BLOCK + TD_COMP_SLACK];
    unsigned long long size, seed = 12345;

    if (argc < 5) {
        fprintf(stderr, "usage: %s LIT_MEAN MATCH_MEAN16 JBITS SIZE [SEED]\n", argv[0]);
        return 2;
    }
    p.lit_mean = (uint32_t)strtoul(argv[1], NULL, 0);
    p.match_mean16 = (uint32_t)strtoul(argv[2], NULL, 0);
    p.jbits = (uint32_t)strtoul(argv[3], NULL, 0);
    size = strtoull(argv[4], NULL, 0);
    if (argc > 5)
        seed = strtoull(argv[5], NULL, 0);
    for (uint64_t bi = 0; bi * TD_COMP_BLOCK < size; bi++) {
        uint64_t n = size - bi * TD_COMP_BLOCK;
        td__comp_block(&p, seed * 0x9E3779B97F4A7C15ull + 1, bi, blk, TD_COMP_BLOCK);
        if (fwrite(blk, 1, n < TD_COMP_BLOCK ? n : TD_COMP_BLOCK, stdout) == 0)
            return 1;
    }
    return 0;
}
