/*
 * TD_TEXT: English-like prose from a word model derived from a corpus
 * (tools/gen_text_model.py -> text_model.c).  The format is specified in
 * docs/format.md, section "text".
 *
 * The stream is cut into blocks of TEXT_BLOCK bytes.  Every block is made on
 * its own from a PRNG seeded by (key, block index) and starts with a new
 * paragraph, so any byte range can be produced without the blocks before it.
 *
 * Speed: a word costs a third of a 64-bit PRNG draw, two table lookups
 * (successor slot and unigram slot, chosen between without a branch), one
 * 16-byte copy of a padded word string (punctuation is part of the word)
 * and a few branch-free updates for line wrapping.  Only integer arithmetic
 * is used.
 */
#include "kind.h"
#include "text_model.h"

#define TEXT_BLOCK 65536u
/* A block is written with 16-byte copies that may run this far past its
 * end; the bytes there are garbage, overwritten by whatever comes next. */
#define TEXT_SLACK 64u
#define TEXT_WIDTH 72u
/* Room a word may need besides its own bytes: the end mark and the
 * block's closing "\n\n", plus one spare. */
#define TEXT_RESERVE 4u

/* Random bits per word; three words take one 64-bit draw. */
#define TEXT_HBITS 21
#if TD_TEXT_SUCC_BITS + TD_TEXT_UNI_BITS > TEXT_HBITS
#error "text model needs more than 21 random bits per word"
#endif


typedef struct text_state {
    uint64_t k[4];
} text_state;

static inline void copy16(uint8_t *dst, const char *src)
{
    memcpy(dst, src, 16);
}

/* The word after w, from random bits h: bits 0..SUCC_BITS-1 pick a
 * successor slot of w; a slot holding TD_TEXT_NEXT_UNIGRAM means the word is
 * the unigram-table slot given by the next UNI_BITS bits instead. */
static inline unsigned next_word(unsigned w, uint32_t h)
{
    unsigned wb = td_text_succ[(size_t)w * TD_TEXT_SUCC + (h & (TD_TEXT_SUCC - 1))];
    unsigned wu = td_text_unigram[(h >> TD_TEXT_SUCC_BITS) & ((1u << TD_TEXT_UNI_BITS) - 1)];
#if defined(__GNUC__)
    /* Make the unigram load unconditional, so that the select below is a
     * conditional move: clang would otherwise branch to skip the load, and
     * that branch is mispredicted for about one word in five. */
    __asm__("" : "+r"(wu));
#endif
    return wb == TD_TEXT_NEXT_UNIGRAM ? wu : wb;
}

/* Append word w at *pos, its leading space turned into '\n' when the word
 * would pass the right margin.  Branch-free. */
static inline void put_word(uint8_t *dst, size_t *pos, unsigned *col, unsigned w)
{
    size_t p = *pos;
    unsigned k = *col;
    unsigned L = td_text_len[w];
    copy16(dst + p, td_text_words[w]);
    unsigned wrap = (unsigned)((int)TEXT_WIDTH - (int)(k + L)) >> 31;
    dst[p] = (uint8_t)(' ' ^ (-wrap & (' ' ^ '\n')));
    *col = (k & (wrap - 1u)) + L - wrap;
    *pos = p + L;
}

static inline int is_mid_punct(uint8_t c)
{
    return c == ',' || c == ';' || c == ':';
}

/*
 * Write block bi: TEXT_BLOCK bytes at dst, scribbling at most TEXT_SLACK
 * bytes past them.  Stops once a sentence ends at or after `end`: nothing
 * before it changes later, so a prefix costs what it holds.
 */
static void gen_block(const text_state *st, uint64_t bi, uint8_t *dst, size_t end)
{
    const size_t B = TEXT_BLOCK;
    uint64_t s = td__wymix(st->k[0] ^ bi, st->k[1] ^ TD_WY_P1) ^ st->k[2];
    size_t pos = 0;
    unsigned col = 0;
    int done = 0;

    while (!done) {
        uint64_t r = td__wyrand(&s);
        unsigned nsent = td_text_paragraph_len[r & ((1u << TD_TEXT_PLEN_BITS) - 1)];
        int para_start = 1;

        for (unsigned j = 0; j < nsent && !done; j++) {
            r = td__wyrand(&s);
            unsigned n = td_text_sentence_len[r & ((1u << TD_TEXT_SLEN_BITS) - 1)];
            unsigned w = td_text_start[(r >> 10) & ((1u << TD_TEXT_START_BITS) - 1)];
            uint8_t endc = (uint8_t)td_text_end_punct[(r >> 22) & 255u];
            unsigned L = td_text_len[w];
            /* The sentence surely fits: no per-word checks needed. */
            int fast = pos + (size_t)n * 16u + TEXT_RESERVE <= B;

            if (!fast && pos + L + TEXT_RESERVE > B) {
                done = 1;
                break;
            }
            /* First word: capitalised; a paragraph starts on a new line
             * after a blank one, the block's first word at column 0. */
            if (pos == 0) {
                memcpy(dst, td_text_words[w] + 1, 15);
                dst[0] &= 0xDF;
                pos = col = L - 1;
            } else {
                if (para_start)
                    col = TEXT_WIDTH; /* forces the wrap */
                put_word(dst, &pos, &col, w);
                dst[pos - L + 1] &= 0xDF;
            }
            para_start = 0;

            /* Words 2..n: three per 64-bit draw, TEXT_HBITS bits each. */
            if (fast) {
                unsigned i = 1;
                for (; i + 2 < n; i += 3) {
                    r = td__wyrand(&s);
                    w = next_word(w, (uint32_t)r);
                    put_word(dst, &pos, &col, w);
                    w = next_word(w, (uint32_t)(r >> TEXT_HBITS));
                    put_word(dst, &pos, &col, w);
                    w = next_word(w, (uint32_t)(r >> (2 * TEXT_HBITS)));
                    put_word(dst, &pos, &col, w);
                }
                if (i < n) {
                    r = td__wyrand(&s);
                    w = next_word(w, (uint32_t)r);
                    put_word(dst, &pos, &col, w);
                    if (i + 1 < n) {
                        w = next_word(w, (uint32_t)(r >> TEXT_HBITS));
                        put_word(dst, &pos, &col, w);
                    }
                }
            } else {
                for (unsigned i = 1; i < n; i++) {
                    unsigned part = (i - 1) % 3;
                    if (part == 0)
                        r = td__wyrand(&s);
                    unsigned nw = next_word(w, (uint32_t)(r >> (TEXT_HBITS * part)));
                    if (pos + td_text_len[nw] + TEXT_RESERVE > B) {
                        done = 1;
                        break;
                    }
                    w = nw;
                    put_word(dst, &pos, &col, w);
                }
            }
            /* The end mark replaces a trailing comma, semicolon or colon. */
            unsigned c = (unsigned)is_mid_punct(dst[pos - 1]);
            pos -= c;
            col -= c;
            dst[pos++] = endc;
            col++;
            if (pos >= end && end < B)
                return;
        }
        if (!done) {
            dst[pos++] = '\n';
            col = 0;
        }
    }
    /* Close the block: end of line, then blank lines up to the boundary. */
    memset(dst + pos, '\n', B - pos);
}

static int text_fill_block(const void *state, uint64_t bi, uint8_t *out, uint32_t end)
{
    gen_block(state, bi, out, end);
    return TD_OK;
}

static int text_prepare(const td_options *o, void **state)
{
    uint8_t k[32];
    text_state *st;
    int rc = td__sodium_ready();
    if (rc != TD_OK)
        return rc;
    st = malloc(sizeof *st);
    if (!st)
        return TD_ENOMEM;
    td__derive_key("libtestdata/text/1", o->seed, k);
    for (int i = 0; i < 4; i++)
        st->k[i] = td__load64le(k + 8 * i);
    *state = st;
    return TD_OK;
}

static void text_release(void *state)
{
    free(state);
}

const td_kind_vtbl td_kind_text = {
    .name = "text",
    .text = 1,
    .block = TEXT_BLOCK,
    .slack = TEXT_SLACK,
    .prepare = text_prepare,
    .release = text_release,
    .fill_block = text_fill_block,
};
