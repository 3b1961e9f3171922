/*
 * text_units: could `text` reach 2x lz4 -1 by drawing units of several words
 * at once?  A prototype, not the format (its bytes are nobody's).
 *
 * The output is cut into regions of R bytes.  Each region has its own table
 * of units: T bytes of real `text` (td_fill, this model, a seed derived from
 * the stream seed and the region index), cut either into its lines (UNIT 0:
 * separators, capitals, indentation and wrapping resolved) or into runs of
 * UNIT words (wrapping redone at unit boundaries; paragraph breaks kept).
 * Each unit is filed under the class of the unit before it in the table
 * (mid-sentence, after a sentence end, paragraph start), and the generator
 * draws the next unit from the class of the last one it wrote: one random
 * index per unit, so the joins keep the chain's first-order shape.  Blocks
 * of 64 KiB are independent (their own random state), so output is seekable
 * and the same for any thread count; a region costs one table build, which
 * the speed figures include.
 *
 *   text_units gen   MODEL|builtin SEED SIZE UNIT T R     bytes to stdout
 *   text_units speed MODEL|builtin UNIT T R [MiB]         MB/s vs lz4 -1
 *
 * TEXT_UNITS_LOCAL=W,P in the environment: with probability P/256 the next
 * unit is one of the W following the last one in table order (its class's).
 *
 * speed: MiB (default 64) of output, generation (table builds included) and
 * LZ4_compress_default on it in turns, CPU time, best of 5; also the draw
 * loop alone (tables built beforehand) and td_fill of real text.
 */
#include "../libtestdata/text_model.h"

#include <lz4.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BLOCK 65536u
#define MAXU 255u /* bytes of a unit */

static double cpu(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static uint64_t mix(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

typedef struct unit {
    uint32_t off;
    uint8_t len, cols, cls, par; /* cls: of its end; par: ends a paragraph */
} unit;

typedef struct table {
    uint8_t *text; /* T bytes of real text */
    uint8_t *pool; /* unit bytes, padded */
    unit *u;
    uint32_t nu;
    uint32_t *idx[3]; /* units by the class of the unit before them */
    uint32_t n[3];
    int crlf;
} table;

static unsigned cols_of(const uint8_t *p, unsigned n)
{
    unsigned c = 0;
    for (unsigned i = 0; i < n; i++)
        c += (p[i] & 0xC0) != 0x80;
    return c;
}

static unsigned end_cls(const uint8_t *p, unsigned n)
{
    while (n && (p[n - 1] == '\r' || p[n - 1] == '"' || p[n - 1] == '\'' || p[n - 1] == ')'))
        n--;
    return n && (p[n - 1] == '.' || p[n - 1] == '!' || p[n - 1] == '?');
}

static void add(table *t, uint32_t *pl, const uint8_t *s, unsigned len, unsigned par,
                unsigned *prev)
{
    if (len == 0 || len > MAXU)
        return;
    unit *u = &t->u[t->nu];
    u->off = *pl;
    u->len = (uint8_t)len;
    u->cols = (uint8_t)cols_of(s, len);
    u->cls = par ? 2 : (uint8_t)end_cls(s, len);
    u->par = (uint8_t)par;
    memcpy(t->pool + *pl, s, len);
    *pl += len;
    t->idx[*prev][t->n[*prev]++] = t->nu;
    *prev = u->cls;
    t->nu++;
}

/* Cut t->text[0..T) into units. */
static void cut(table *t, size_t T, unsigned words)
{
    const uint8_t *x = t->text;
    uint32_t pl = 0;
    unsigned prev = 2;
    t->nu = 0;
    t->crlf = 0;
    t->n[0] = t->n[1] = t->n[2] = 0;
    if (words == 0) { /* lines, '\n' included; a blank line is a unit */
        size_t a = 0;
        for (size_t i = 0; i < T; i++)
            if (x[i] == '\n') {
                unsigned len = (unsigned)(i + 1 - a);
                if (len <= MAXU) {
                    unit *u = &t->u[t->nu];
                    u->off = pl;
                    u->len = (uint8_t)len;
                    u->cols = (uint8_t)cols_of(x + a, len - 1);
                    u->cls = len == 1 || (len == 2 && x[a] == '\r') ? 2
                                                                     : (uint8_t)end_cls(x + a, len - 1);
                    u->par = 0;
                    memcpy(t->pool + pl, x + a, len);
                    pl += len;
                    t->idx[prev][t->n[prev]++] = t->nu;
                    prev = u->cls;
                    t->nu++;
                }
                a = i + 1;
            }
        return;
    }
    /* words: paragraphs split at blank lines, line breaks inside them become
     * spaces; a unit is `words` words with the spaces between them, without
     * its trailing spaces; a paragraph's indentation stays on its first unit */
    uint8_t buf[MAXU + 64];
    unsigned bl = 0, nw = 0;
    size_t i = 0;
    while (i < T) {
        uint8_t c = x[i];
        if (c == '\r') { /* CRLF models: the generator writes t->crlf */
            t->crlf = 1;
            i++;
            continue;
        }
        if (c == '\n' && i + 2 < T && (x[i + 1] == '\n' || (x[i + 1] == '\r' && x[i + 2] == '\n'))) { /* paragraph end */
            while (bl && buf[bl - 1] == ' ')
                bl--;
            if (bl)
                add(t, &pl, buf, bl, 1, &prev);
            else if (t->nu && !t->u[t->nu - 1].par) {
                t->u[t->nu - 1].par = 1;
                t->u[t->nu - 1].cls = 2;
                prev = 2;
            }
            bl = nw = 0;
            while (i < T && (x[i] == '\n' || x[i] == '\r'))
                i++;
            continue;
        }
        if (c == '\n')
            c = ' ';
        if (c == ' ' && bl && buf[bl - 1] != ' ' && buf[bl - 1] != '\t') {
            /* a word ended */
            if (++nw == words) {
                add(t, &pl, buf, bl, 0, &prev);
                bl = nw = 0;
                while (i < T && (x[i] == ' ' || x[i] == '\n' || x[i] == '\r') &&
                       !(x[i] == '\n' && i + 2 < T &&
                         (x[i + 1] == '\n' || (x[i + 1] == '\r' && x[i + 2] == '\n'))))
                    i++;
                continue;
            }
        }
        if (bl < MAXU)
            buf[bl++] = c;
        else
            bl = nw = 0, buf[0] = c, bl = 1; /* drop an over-long run */
        i++;
    }
}

static int table_build(table *t, const td_model *m, uint64_t seed, uint64_t region, size_t T,
                       unsigned words)
{
    td_options o;
    td_options_init(&o);
    o.model = m;
    o.seed = mix(seed ^ mix(region + 0x9e3779b97f4a7c15ull));
    if (td_fill(TD_TEXT, &o, 0, t->text, T) != TD_OK)
        return -1;
    cut(t, T, words);
    if (!(t->n[0] && t->n[1] && t->n[2]))
        fprintf(stderr, "text_units: empty class (%u %u %u)\n", t->n[0], t->n[1], t->n[2]);
    return t->n[0] && t->n[1] && t->n[2] ? 0 : -1;
}

static int table_init(table *t, size_t T)
{
    t->text = malloc(T);
    t->pool = malloc(T + 2 * MAXU + 64);
    t->u = malloc(sizeof(unit) * (T / 2 + 1));
    for (int c = 0; c < 3; c++)
        t->idx[c] = malloc(sizeof(uint32_t) * (T / 2 + 1));
    return t->text && t->pool && t->u && t->idx[0] && t->idx[1] && t->idx[2] ? 0 : -1;
}

static void table_free(table *t)
{
    free(t->text);
    free(t->pool);
    free(t->u);
    for (int c = 0; c < 3; c++)
        free(t->idx[c]);
}

/* Block `b` (BLOCK bytes) from table t. */
/* Locality (tools only): with probability P/256 the next unit is one of
 * the W after the last one drawn in the table's order (within its class),
 * else any; W = 0: always any. */
static unsigned loc_w, loc_p;

static void block(const table *t, uint64_t seed, uint64_t b, uint8_t *dst, unsigned words)
{
    uint64_t s = mix(seed + mix(b));
    unsigned cls = 2, col = 0;
    size_t pos = 0;
    uint32_t last = (uint32_t)((mix(s) & 0xFFFFFFFFu) * t->nu >> 32); /* a block starts anywhere */
    for (;;) {
        uint64_t r = td__wyrand(&s);
        uint32_t j = (uint32_t)(((r & 0xFFFFFFFFu) * t->n[cls]) >> 32);
        if (loc_w && ((r >> 32) & 0xFF) < loc_p) {
            /* the first unit of this class after `last`, then a skip */
            uint32_t lo = 0, hi = t->n[cls];
            while (lo < hi) {
                uint32_t mid = (lo + hi) / 2;
                if (t->idx[cls][mid] <= last)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            j = (lo + (uint32_t)((r >> 40) % loc_w)) % t->n[cls];
        }
        uint32_t k = t->idx[cls][j];
        last = k;
        const unit *u = &t->u[k];
        if (pos + u->len + 6 > BLOCK)
            break;
        if (words) {
            if (col && col + u->cols + 1 > TM_WIDTH) {
                if (t->crlf)
                    dst[pos++] = '\r';
                dst[pos++] = '\n';
                col = 0;
            } else if (col) {
                dst[pos++] = ' ';
                col++;
            }
        }
        const uint8_t *src = t->pool + u->off;
        for (unsigned c = 0; c < u->len; c += 32)
            memcpy(dst + pos + c, src + c, 32);
        pos += u->len;
        col += u->cols;
        if (u->par) {
            if (t->crlf)
                dst[pos++] = '\r';
            dst[pos++] = '\n';
            if (t->crlf)
                dst[pos++] = '\r';
            dst[pos++] = '\n';
            col = 0;
        }
        cls = u->cls;
    }
    if (words && col) {
        if (t->crlf)
            dst[pos++] = '\r';
        dst[pos++] = '\n';
    }
    memset(dst + pos, '\n', BLOCK - pos);
}

/* Output bytes [0, n) (n a multiple of BLOCK); R a multiple of BLOCK.
 * build = 0: one table, built already (draw loop alone). */
static int gen(const td_model *m, table *t, uint64_t seed, uint8_t *dst, size_t n, unsigned words,
               size_t T, size_t R, int build)
{
    for (size_t at = 0; at < n; at += BLOCK) {
        if (build && at % R == 0 && table_build(t, m, seed, at / R, T, words))
            return -1;
        block(t, seed, at / BLOCK, dst + at, words);
    }
    return 0;
}

static size_t parse(const char *s)
{
    char *e;
    double v = strtod(s, &e);
    switch (*e) {
    case 'K': v *= 1024; break;
    case 'M': v *= 1048576; break;
    case 'G': v *= 1073741824; break;
    }
    return (size_t)v;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
    usage:
        fprintf(stderr, "usage: text_units gen MODEL|builtin SEED SIZE UNIT T R\n"
                        "       text_units speed MODEL|builtin UNIT T R [MiB]\n");
        return 2;
    }
    td_model *own = NULL;
    const td_model *m = td_model_builtin();
    if (strcmp(argv[2], "builtin")) {
        int rc = td_model_load_file(&own, argv[2]);
        if (rc != TD_OK) {
            fprintf(stderr, "text_units: %s: %s\n", argv[2], td_strerror(rc));
            return 1;
        }
        m = own;
    }
    table t;
    if (getenv("TEXT_UNITS_LOCAL")) /* "W,P" */
        sscanf(getenv("TEXT_UNITS_LOCAL"), "%u,%u", &loc_w, &loc_p);
    if (!strcmp(argv[1], "gen") && argc == 8) {
        uint64_t seed = strtoull(argv[3], NULL, 0);
        size_t size = parse(argv[4]), T = parse(argv[6]), R = parse(argv[7]);
        unsigned words = (unsigned)atoi(argv[5]);
        R = (R + BLOCK - 1) / BLOCK * BLOCK;
        size_t n = (size + BLOCK - 1) / BLOCK * BLOCK;
        uint8_t *b = malloc(n + 64); /* unit copies go up to 31 bytes past a block */
        if (!b || table_init(&t, T) || gen(m, &t, seed, b, n, words, T, R, 1))
            return 1;
        fwrite(b, 1, size, stdout);
        free(b);
        table_free(&t);
        td_model_free(own);
        return 0;
    }
    if (!strcmp(argv[1], "speed") && (argc == 6 || argc == 7)) {
        unsigned words = (unsigned)atoi(argv[3]);
        size_t T = parse(argv[4]), R = parse(argv[5]);
        R = (R + BLOCK - 1) / BLOCK * BLOCK;
        size_t n = (size_t)(argc == 7 ? atoi(argv[6]) : 64) << 20;
        int cap = LZ4_compressBound((int)n);
        uint8_t *b = malloc(n + 64);
        char *c = malloc((size_t)cap);
        if (!b || !c || table_init(&t, T))
            return 1;
        double bg = 0, bd = 0, bl = 0, bf = 0, lmin = 1e9, lmax = 0;
        td_options o;
        td_options_init(&o);
        o.model = m;
        for (int i = 0; i < 5; i++) {
            double t0 = cpu();
            if (gen(m, &t, (uint64_t)i + 1, b, n, words, T, R, 1))
                return 1;
            double g = (double)n / (cpu() - t0) / 1e6;
            t0 = cpu();
            LZ4_compress_default((const char *)b, c, (int)n, cap);
            double l = (double)n / (cpu() - t0) / 1e6;
            t0 = cpu();
            gen(m, &t, (uint64_t)i + 1, b, n, words, T, R, 0);
            double d = (double)n / (cpu() - t0) / 1e6;
            t0 = cpu();
            td_fill(TD_TEXT, &o, 0, b, n / 4);
            double f = (double)(n / 4) / (cpu() - t0) / 1e6;
            bg = g > bg ? g : bg;
            bd = d > bd ? d : bd;
            bl = l > bl ? l : bl;
            bf = f > bf ? f : bf;
            lmin = g / l < lmin ? g / l : lmin;
            lmax = g / l > lmax ? g / l : lmax;
        }
        printf("unit %u T %zu R %zu: units %.0f MB/s (draws alone %.0f), lz4 -1 %.0f MB/s: %.2fx "
               "(rounds %.2f-%.2f; draws alone %.2fx); td_fill text %.0f MB/s = %.2fx\n",
               words, T, R, bg, bd, bl, bg / bl, lmin, lmax, bd / bl, bf, bf / bl);
        free(b);
        free(c);
        table_free(&t);
        td_model_free(own);
        return 0;
    }
    goto usage;
}
