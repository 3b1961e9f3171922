/*
 * text_bound: how fast could a word-at-a-time `text` generator be on this
 * machine?  A minimal loop over a model's tables (bigram draw with a unigram
 * fallback, separator draw, two 32-byte copies, a line-wrap test; no
 * continuation cache, no copies, no rare words, no history), one block at a
 * time or several interleaved (as gen_text.c does), next to lz4 -1
 * (LZ4_compress_default) on its own output, in turns, CPU time, best of 5.  Not the format (its bytes are nobody's): an upper
 * bound for designs that still draw word by word.
 *
 *   text_bound [MODEL]      (default: the built-in model)
 *
 * "2 draws" draws the word and its separator from two wyrand numbers, as
 * format 3 does; "1 draw" takes both from one (as a joint word-and-separator
 * table would).
 */
#include "../libtestdata/text_model.h"

#include <lz4.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* One block being written. */
typedef struct blk {
    uint8_t *dst;
    size_t pos;
    uint64_t s;
    unsigned col, cls;
    uint32_t prev;
} blk;

static inline void step(const td_model *m, blk *L, int draws)
{
    uint64_t r = td__wyrand(&L->s);
    const tm_dist *d = &m->words[L->prev].big[L->cls];
    uint32_t w = d->n ? tm_sample(m->ent + d->off, d->n, r) : TM_NIL;
    if (w >= m->V)
        w = tm_sample(m->ent + m->uni[0].off, m->uni[0].n, r >> 13);
    if (w >= m->V)
        w = 0;
    const tm_word *wr = &m->words[w];
    uint64_t r2 = draws == 2 ? td__wyrand(&L->s) : (r >> 16) | (r << 48);
    uint32_t sid = wr->sep.n ? tm_sample(m->ent + wr->sep.off, wr->sep.n, r2) : TM_NIL;
    if (sid == TM_NIL || (sid >> 1) >= m->NS)
        sid = 0;
    const tm_str *sp = &m->seps[sid >> 1];
    unsigned u = wr->cols + sp->cols;
    if (L->col + u > TM_WIDTH) {
        L->dst[L->pos++] = '\n';
        L->col = 0;
    }
    memcpy(L->dst + L->pos, m->pool + wr->off, 32);
    L->pos += wr->len;
    memcpy(L->dst + L->pos, m->pool + sp->off, 32);
    L->pos += sp->len;
    L->col += u;
    L->prev = w;
    L->cls = sp->cls & 1;
}

#define BLOCK 65536u
#define MAXL 16

/* n bytes (a multiple of lanes * BLOCK) as blocks of BLOCK bytes, `lanes`
 * of them written at once, interleaved, word by word. */
static void gen(const td_model *m, uint8_t *dst, size_t n, int draws, unsigned lanes, uint64_t s)
{
    for (size_t at = 0; at < n; at += (size_t)lanes * BLOCK) {
        blk L[MAXL];
        for (unsigned i = 0; i < lanes; i++)
            L[i] = (blk){dst + at + (size_t)i * BLOCK, 0, s ^ (at + i), 0, 0, 0};
        for (;;) {
            unsigned live = 0;
            for (unsigned i = 0; i < lanes; i++)
                if (L[i].pos + 128 < BLOCK) {
                    step(m, &L[i], draws);
                    live++;
                }
            if (!live)
                break;
        }
        for (unsigned i = 0; i < lanes; i++)
            memset(L[i].dst + L[i].pos, '\n', BLOCK - L[i].pos);
    }
}

int main(int argc, char **argv)
{
    td_model *own = NULL;
    const td_model *m = td_model_builtin();
    if (argc > 1) {
        int rc = td_model_load_file(&own, argv[1]);
        if (rc != TD_OK) {
            fprintf(stderr, "text_bound: %s: %s\n", argv[1], td_strerror(rc));
            return 1;
        }
        m = own;
    }
    size_t n = (size_t)32 << 20;
    int cap = LZ4_compressBound((int)n);
    uint8_t *b = malloc(n + 64);
    char *c = malloc((size_t)cap);
    if (!m || !b || !c)
        return 1;
    static const unsigned lanes[] = {1, 4, 8, 16};
    for (int draws = 2; draws >= 1; draws--)
        for (unsigned k = 0; k < sizeof lanes / sizeof *lanes; k++) {
            double bg = 0, bl = 0;
            for (int i = 0; i < 5; i++) {
                double t = cpu();
                gen(m, b, n, draws, lanes[k], (uint64_t)i + 1);
                double g = (double)n / (cpu() - t) / 1e6;
                t = cpu();
                LZ4_compress_default((const char *)b, c, (int)n, cap);
                double l = (double)n / (cpu() - t) / 1e6;
                bg = g > bg ? g : bg;
                bl = l > bl ? l : bl;
            }
            printf("%d draw%s per word, %2u blocks at once: %4.0f MB/s, lz4 -1 %4.0f MB/s on its output: %.2fx\n",
                   draws, draws > 1 ? "s" : " ", lanes[k], bg, bl, bg / bl);
        }
    free(b);
    free(c);
    td_model_free(own);
    return 0;
}
