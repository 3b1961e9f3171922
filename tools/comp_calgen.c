/*
 * Helper of tools/calibrate_compressible.py: writes SIZE bytes of
 * compressible-kind blocks for explicit parameters (bypassing the tables).
 *   comp_calgen BLOCK LIT_MEAN MATCH_MEAN16 JBITS SUCC SIZE [SEED]
 * Built by the calibration script against the static library.
 */
#include "compressible.h"

#include <stdio.h>

int main(int argc, char **argv)
{
    td__comp_params p;
    static td__comp_gen g;
    static uint8_t blk[TD_COMP_BLOCK + TD_COMP_SLACK];
    unsigned long long size, seed = 12345;
    uint32_t G;

    if (argc < 7) {
        fprintf(stderr, "usage: %s BLOCK LIT_MEAN MATCH_MEAN16 JBITS SUCC SIZE [SEED]\n", argv[0]);
        return 2;
    }
    G = (uint32_t)strtoul(argv[1], NULL, 0);
    p.lit_mean = (uint32_t)strtoul(argv[2], NULL, 0);
    p.match_mean16 = (uint32_t)strtoul(argv[3], NULL, 0);
    p.jbits = (uint32_t)strtoul(argv[4], NULL, 0);
    p.succ = (uint32_t)strtoul(argv[5], NULL, 0);
    size = strtoull(argv[6], NULL, 0);
    if (argc > 7)
        seed = strtoull(argv[7], NULL, 0);
    if (G < 512 || G > TD_COMP_BLOCK || (G & (G - 1)))
        return 2;
    td__comp_setup(&g, seed * 0x9E3779B97F4A7C15ull + 1, seed * 0xD1B54A32D192ED03ull + 7, G, &p);
    for (uint64_t bi = 0; bi * G < size; bi++) {
        uint64_t n = size - bi * G;
        td__comp_block(&g, bi, blk, G);
        if (fwrite(blk, 1, n < G ? n : G, stdout) == 0)
            return 1;
    }
    return 0;
}
