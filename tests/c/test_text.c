/* TD_TEXT: golden vectors, chunking/seek/thread invariance, prose shape,
 * corpus regurgitation and compression fingerprint. */
#include "td_test_util.h"

#include <ctype.h>
#include <dirent.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#ifdef TD_HAVE_ZSTD
#include <zstd.h>
#endif

#define MIB (1024u * 1024u)
#define TEXT_BLOCK 65536u

static uint8_t *gen(uint64_t seed, uint64_t off, size_t len, uint32_t threads)
{
    td_options o;
    uint8_t *b = malloc(len);
    cr_assert_not_null(b);
    td_options_init(&o);
    o.seed = seed;
    o.threads = threads;
    cr_assert_eq(td_fill(TD_TEXT, &o, off, b, len), TD_OK);
    return b;
}

static void sha256_hex(const uint8_t *p, size_t n, char out[65])
{
    uint8_t h[32];
    crypto_hash_sha256(h, p, n);
    for (int i = 0; i < 32; i++)
        sprintf(out + 2 * i, "%02x", h[i]);
}

/* ---- registration ------------------------------------------------------ */

Test(text, registered)
{
    int k = -1;
    cr_assert_eq(td_kind_from_name("text", &k), TD_OK);
    cr_assert_eq(k, TD_TEXT);
    cr_assert_str_eq(td_kind_name(TD_TEXT), "text");
    td_options o;
    td_options_init(&o);
    cr_assert_eq(td_options_set(&o, TD_TEXT, "seed", "7"), TD_OK);
    cr_assert_eq(td_options_set(&o, TD_TEXT, "threads", "2"), TD_OK);
    cr_assert_eq(td_options_set(&o, TD_TEXT, "algorithm", "fast"), TD_EOPTION);
    cr_assert_eq(td_options_set(&o, TD_TEXT, "ratio", "2"), TD_EOPTION);
}

/* ---- golden vectors ----------------------------------------------------- */

static const struct {
    uint64_t seed;
    uint64_t offset;
    const char *sha256;
} golden[] = {
    {0, 0, "176c84e28bce263859bab32069ea9a8f051cec147068d693f5cb4e71b9530ca9"},
    {0, UINT64_C(1) << 40, "5e9f173222240e3705b66a31abf41ca61d6455e67cb303cca73e966f91e0ae48"},
    {1, 0, "b734782aa6c254c3366bc663b5451a76c07ec5d13adb005fb1b391d723b1837e"},
    {1, UINT64_C(1) << 40, "d4b6af4fdaa580b39f5110686a58fdd64395c3a72774a2b9603aadef3ae63e06"},
    {UINT64_MAX, 0, "bc418d8f18f33bffde8c1e9777000b71a1d408f0e14afe9c2412107a5b3b9fbb"},
    {UINT64_MAX, UINT64_C(1) << 40, "94e2b53fc9b7a61c31dcf40c20d9bf74218deb82293373d8c8c601705832622b"},
};

Test(text, golden)
{
    int bad = 0;
    for (size_t i = 0; i < sizeof golden / sizeof golden[0]; i++) {
        char hex[65];
        uint8_t *b = gen(golden[i].seed, golden[i].offset, MIB, 1);
        sha256_hex(b, MIB, hex);
        if (strcmp(hex, golden[i].sha256) != 0) {
            fprintf(stderr, "golden seed=%llu offset=%llu: got %s\n",
                    (unsigned long long)golden[i].seed, (unsigned long long)golden[i].offset,
                    hex);
            bad++;
        }
        free(b);
    }
    cr_assert_eq(bad, 0, "%d golden vectors differ", bad);
}

Test(text, seeds_differ)
{
    uint8_t *a = gen(0, 0, 4096, 1), *b = gen(1, 0, 4096, 1);
    cr_assert_neq(memcmp(a, b, 4096), 0);
    free(a);
    free(b);
}

/* ---- invariance --------------------------------------------------------- */

Test(text, invariance)
{
    td_options o;
    td_options_init(&o);
    o.seed = 42;
    td_test_check_invariance(TD_TEXT, &o, 0, 3u * MIB + 12345u);
    o.seed = 7;
    td_test_check_invariance(TD_TEXT, &o, 5u * TEXT_BLOCK - 999, 6u * MIB + 777u);
}

Test(text, end_of_address_space)
{
    /* The last bytes of the 2^64-1 byte stream can be made on their own. */
    uint8_t a[101], b[300];
    td_options o;
    td_options_init(&o);
    cr_assert_eq(td_fill(TD_TEXT, &o, UINT64_MAX - 100, a, 100), TD_OK);
    cr_assert_eq(td_fill(TD_TEXT, &o, UINT64_MAX - 300, b, 300), TD_OK);
    cr_assert_eq(memcmp(a, b + 200, 100), 0);
    cr_assert_eq(td_fill(TD_TEXT, &o, UINT64_MAX - 100, a, 101), TD_ERANGE);
}

/* ---- shape of the prose ------------------------------------------------- */

Test(text, prose_shape)
{
    const size_t len = 4u * MIB;
    uint8_t *b = gen(11, 5 * TEXT_BLOCK, len, 1);
    size_t col = 0, maxcol = 0, sentences = 0, paragraphs = 0, lines = 0;

    for (size_t i = 0; i < len; i++) {
        uint8_t c = b[i];
        cr_assert(c == '\n' || (c >= 0x20 && c < 0x7f), "byte %zu is 0x%02x", i, c);
        if (c == '\n') {
            if (col > maxcol)
                maxcol = col;
            col = 0;
            lines++;
            /* A blank line ends a paragraph, which ends a sentence. */
            if (i >= 2 && b[i - 1] == '\n' && b[i - 2] != '\n') {
                paragraphs++;
                cr_assert(strchr(".!?", b[i - 2]), "paragraph ends with '%c' at %zu",
                          b[i - 2], i);
            }
            continue;
        }
        col++;
        cr_assert(!(c == ' ' && (col == 1 || i + 1 == len || b[i + 1] == ' ' || b[i + 1] == '\n')),
                  "stray space at %zu", i);
        if (strchr(".!?", c)) {
            sentences++;
            /* Next sentence starts with a capital letter. */
            size_t j = i + 1;
            while (j < len && (b[j] == ' ' || b[j] == '\n'))
                j++;
            cr_assert(j > i + 1 || j == len, "no space after end mark at %zu", i);
            if (j < len)
                cr_assert(isupper(b[j]), "sentence at %zu starts with '%c'", j, b[j]);
        }
        if (strchr(",;:", c) && i + 1 < len)
            cr_assert(b[i + 1] == ' ' || b[i + 1] == '\n', "punctuation at %zu", i);
    }
    cr_assert_leq(maxcol, 80);
    cr_assert_geq(maxcol, 68);
    /* Every block starts a paragraph: a capital letter after a blank line. */
    for (size_t blk = 0; blk < len; blk += TEXT_BLOCK) {
        cr_assert(isupper(b[blk]), "block at %zu starts with '%c'", blk, b[blk]);
        if (blk)
            cr_assert(b[blk - 1] == '\n' && b[blk - 2] == '\n');
    }
    /* Words, sentences and paragraphs of plausible sizes. */
    cr_assert(sentences > len / 400 && sentences < len / 30, "%zu sentences", sentences);
    cr_assert(paragraphs > len / 4000 && paragraphs < len / 60, "%zu paragraphs", paragraphs);
    cr_assert(lines > len / 80);
    free(b);
}

/* ---- regurgitation ------------------------------------------------------ */

/* Hashes of word 8-grams (lower case, letters and inner apostrophes). */
typedef struct hset {
    uint64_t *slot;
    size_t mask, n;
} hset;

static void hset_add(hset *h, uint64_t v)
{
    if (!v)
        v = 1;
    if (2 * (h->n + 1) > h->mask) {
        hset old = *h;
        h->mask = old.mask ? 2 * old.mask + 1 : 1023;
        h->slot = calloc(h->mask + 1, sizeof *h->slot);
        h->n = 0;
        for (size_t i = 0; old.slot && i <= old.mask; i++)
            if (old.slot[i])
                hset_add(h, old.slot[i]);
        free(old.slot);
    }
    size_t i = (size_t)(v * 0x9e3779b97f4a7c15u >> 20) & h->mask;
    while (h->slot[i] && h->slot[i] != v)
        i = (i + 1) & h->mask;
    if (!h->slot[i]) {
        h->slot[i] = v;
        h->n++;
    }
}

static int hset_has(const hset *h, uint64_t v)
{
    if (!v)
        v = 1;
    size_t i = (size_t)(v * 0x9e3779b97f4a7c15u >> 20) & h->mask;
    while (h->slot[i]) {
        if (h->slot[i] == v)
            return 1;
        i = (i + 1) & h->mask;
    }
    return 0;
}

/* Split text into word hashes; returns the count. */
static size_t words_of(const uint8_t *t, size_t n, uint64_t **out)
{
    size_t cap = n / 2 + 1, k = 0;
    uint64_t *w = malloc(cap * sizeof *w);
    for (size_t i = 0; i < n;) {
        if (!isalpha(t[i])) {
            i++;
            continue;
        }
        uint64_t h = 1469598103934665603u;
        while (i < n && (isalpha(t[i]) || (t[i] == '\'' && i + 1 < n && isalpha(t[i + 1]) &&
                                           i > 0 && isalpha(t[i - 1])))) {
            h = (h ^ (uint8_t)tolower(t[i])) * 1099511628211u;
            i++;
        }
        w[k++] = h;
    }
    *out = w;
    return k;
}

static uint64_t gram8(const uint64_t *w)
{
    uint64_t h = 0;
    for (int j = 0; j < 8; j++)
        h = (h ^ w[j]) * 0x100000001b3u + (h >> 29);
    return h;
}

Test(text, no_regurgitation)
{
    const char *dir = TD_CORPUS_DIR;
    DIR *d = opendir(dir);
    if (!d)
        cr_skip_test("corpus directory %s not found; regurgitation check skipped", dir);
    hset set = {0};
    struct dirent *e;
    int files = 0;
    while ((e = readdir(d))) {
        size_t nl = strlen(e->d_name);
        if (nl < 5 || strcmp(e->d_name + nl - 4, ".txt"))
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "rb");
        cr_assert_not_null(f);
        fseek(f, 0, SEEK_END);
        long sz = ftell(f);
        fseek(f, 0, SEEK_SET);
        uint8_t *t = malloc((size_t)sz);
        cr_assert_eq(fread(t, 1, (size_t)sz, f), (size_t)sz);
        fclose(f);
        uint64_t *w;
        size_t nw = words_of(t, (size_t)sz, &w);
        for (size_t i = 0; i + 8 <= nw; i++)
            hset_add(&set, gram8(w + i));
        free(w);
        free(t);
        files++;
    }
    closedir(d);
    if (!files)
        cr_skip_test("no corpus *.txt in %s; regurgitation check skipped", dir);

    uint8_t *b = gen(5, 0, MIB, 1);
    uint64_t *w;
    size_t nw = words_of(b, MIB, &w), hits = 0;
    for (size_t i = 0; i + 8 <= nw; i++)
        hits += (size_t)hset_has(&set, gram8(w + i));
    double pct = 100.0 * (double)hits / (double)(nw - 7);
    fprintf(stderr, "text: %zu of %zu 8-grams (%.3f%%) appear in the corpus\n", hits, nw - 7,
            pct);
    cr_assert_lt(pct, 5.0);
    free(w);
    free(b);
    free(set.slot);
}

/* ---- compression fingerprint -------------------------------------------- */

#define COMP_LEN (4u * MIB)

Test(text, gzip_ratio, .timeout = 120)
{
    uint8_t *b = gen(9, 0, COMP_LEN, 1);
    uLongf clen = compressBound(COMP_LEN);
    uint8_t *c = malloc(clen);
    cr_assert_eq(compress2(c, &clen, b, COMP_LEN, 6), Z_OK);
    double r = (double)COMP_LEN / (double)clen;
    fprintf(stderr, "text: zlib-6 ratio %.3f\n", r);
    cr_assert(r >= 2.4 && r <= 3.4, "zlib-6 ratio %.3f outside 2.4-3.4", r);
    free(c);
    free(b);
}

#ifdef TD_HAVE_ZSTD
static double zstd_ratio(const uint8_t *b, size_t n, int level)
{
    size_t cap = ZSTD_compressBound(n);
    uint8_t *c = malloc(cap);
    size_t clen = ZSTD_compress(c, cap, b, n, level);
    cr_assert(!ZSTD_isError(clen));
    free(c);
    return (double)n / (double)clen;
}

Test(text, zstd_ratio, .timeout = 120)
{
    uint8_t *b = gen(9, 0, COMP_LEN, 1);
    double r3 = zstd_ratio(b, COMP_LEN, 3);
    double r19 = zstd_ratio(b, 2 * MIB, 19);
    fprintf(stderr, "text: zstd-3 ratio %.3f, zstd-19 (2 MiB) %.3f\n", r3, r19);
    cr_assert(r3 >= 2.5 && r3 <= 3.4, "zstd-3 ratio %.3f outside 2.5-3.4", r3);
    cr_assert(r19 >= 2.9 && r19 <= 4.4, "zstd-19 ratio %.3f outside 2.9-4.4", r19);
    free(b);
}
#endif
