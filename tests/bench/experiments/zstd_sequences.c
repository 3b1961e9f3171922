/* How zstd -3 parses a file: its sequences, the share coded as repeat
 * offsets, and what the sequences cost (the frame's size less an order-0
 * estimate of its literals).  A diagnostic for `like` fidelity: when the
 * ratio of generated data is short of the sample's under entropy coders
 * but not under lz4 -9, compare these figures (docs/benchmarks.md, "like",
 * notes of 2026-12-05).  Reads at most the first MiB of each file.  With
 * ZS_DUMP=FILE, also writes the sequences of the last file to FILE, one a
 * line: position of the match, match length, offset, repeat code (0: a new
 * offset), literal run (for like_trace_vs_zstd.py).
 *
 *   cc -O2 -o zstd_sequences tests/bench/experiments/zstd_sequences.c -l:libzstd.a -lm
 *   ./zstd_sequences SAMPLE GENERATED...
 */
#define ZSTD_STATIC_LINKING_ONLY
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <zstd.h>

static double entropy(const long *h, int n, double tot)
{
    double e = 0;
    for (int i = 0; i < n; i++)
        if (h[i]) {
            double p = (double)h[i] / tot;
            e -= p * log2(p);
        }
    return e;
}

int main(int argc, char **argv)
{
    for (int a = 1; a < argc; a++) {
        FILE *f = fopen(argv[a], "rb");
        unsigned char *b = malloc(1 << 20);
        if (!f || !b)
            return 1;
        size_t n = fread(b, 1, 1 << 20, f);
        fclose(f);
        ZSTD_CCtx *c = ZSTD_createCCtx();
        ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, 3);
        size_t cap = ZSTD_sequenceBound(n), zcap = ZSTD_compressBound(n);
        ZSTD_Sequence *s = malloc(cap * sizeof *s);
        void *z = malloc(zcap);
        size_t ns = ZSTD_generateSequences(c, s, cap, b, n);
        size_t zn = ZSTD_compress(z, zcap, b, n, 3);
        if (ZSTD_isError(ns) || ZSTD_isError(zn))
            return 1;
        long lh[256] = {0}, mlh[64] = {0}, llh[64] = {0};
        if (getenv("ZS_DUMP")) {
            FILE *d = fopen(getenv("ZS_DUMP"), "w");
            size_t q = 0;
            for (size_t i = 0; i < ns; i++) {
                q += s[i].litLength;
                if (s[i].matchLength)
                    fprintf(d, "%zu %u %u %u %u\n", q, s[i].matchLength, s[i].offset, s[i].rep, s[i].litLength);
                q += s[i].matchLength;
            }
            fclose(d);
        }
        size_t nm = 0, lit = 0, rep = 0, p = 0;
        for (size_t i = 0; i < ns; i++) {
            for (unsigned t = 0; t < s[i].litLength; t++)
                lh[b[p + t]]++;
            lit += s[i].litLength;
            p += s[i].litLength + s[i].matchLength;
            if (!s[i].matchLength)
                continue;
            nm++;
            rep += s[i].rep != 0;
            mlh[s[i].matchLength < 63 ? s[i].matchLength : 63]++;
            llh[s[i].litLength < 63 ? s[i].litLength : 63]++;
        }
        double hl = entropy(lh, 256, (double)lit), litbits = hl * (double)lit;
        printf("%s: %zu bytes, zstd -3 ratio %.2f; %zu sequences, literals %.1f%% (order-0 %.2f bits), "
               "repeat offsets %.1f%%, H(match length) %.2f, H(literal run) %.2f, sequences cost about %.1f bits each\n",
               argv[a], n, (double)n / (double)zn, nm, 100.0 * (double)lit / (double)n, hl, 100.0 * (double)rep / (double)nm,
               entropy(mlh, 64, (double)nm), entropy(llh, 64, (double)nm), ((double)zn * 8 - litbits) / (double)nm);
        ZSTD_freeCCtx(c);
        free(s);
        free(z);
        free(b);
    }
    return 0;
}
