/*
 * TD_RANDOM: incompressible bytes from one of two generators.
 *
 * chacha20: the original ChaCha20 keystream (64-bit nonce, 64-bit block
 *   counter), so a stream can be 2^64 bytes long and any offset is one
 *   counter away.  The IETF variant's 32-bit counter would stop at 256 GiB.
 * fast: a counter-based wyrand mix, one 64-bit multiply per 8 bytes; every
 *   word depends only on its index, so seeking is free.
 */
#include "internal.h"

#include <sodium.h>

#define CHACHA_BLOCK 64u
/* Zero source for the xor API; small enough to stay in L1. */
#define ZERO_CHUNK 16384u

static const uint8_t zero_chunk[ZERO_CHUNK];
static const uint8_t chacha_nonce[crypto_stream_chacha20_NONCEBYTES];

typedef struct random_state {
    uint32_t algorithm;
    uint8_t key[crypto_stream_chacha20_KEYBYTES];
    uint64_t fast_key;
} random_state;

static int chacha_fill(const random_state *st, uint64_t offset, uint8_t *buf, size_t len)
{
    uint64_t ic = offset / CHACHA_BLOCK;
    size_t skip = (size_t)(offset % CHACHA_BLOCK);

    if (skip) {
        uint8_t tmp[CHACHA_BLOCK];
        size_t n = CHACHA_BLOCK - skip;
        if (n > len)
            n = len;
        crypto_stream_chacha20_xor_ic(tmp, zero_chunk, CHACHA_BLOCK, chacha_nonce, ic, st->key);
        memcpy(buf, tmp + skip, n);
        buf += n;
        len -= n;
        ic++;
    }
    while (len >= CHACHA_BLOCK) {
        size_t n = len < ZERO_CHUNK ? len - len % CHACHA_BLOCK : ZERO_CHUNK;
        crypto_stream_chacha20_xor_ic(buf, zero_chunk, n, chacha_nonce, ic, st->key);
        buf += n;
        len -= n;
        ic += n / CHACHA_BLOCK;
    }
    if (len) {
        uint8_t tmp[CHACHA_BLOCK];
        crypto_stream_chacha20_xor_ic(tmp, zero_chunk, CHACHA_BLOCK, chacha_nonce, ic, st->key);
        memcpy(buf, tmp, len);
    }
    return TD_OK;
}

#define WY_P0 UINT64_C(0xa0761d6478bd642f)
#define WY_P1 UINT64_C(0xe7037ed1a0b428db)

/* Word i of the fast stream: wymix(s, s ^ P1) with s = key + (i+1)*P0. */
static inline uint64_t fast_word(uint64_t key, uint64_t i)
{
    uint64_t s = key + (i + 1) * WY_P0;
    uint64_t b = s ^ WY_P1;
#ifdef __SIZEOF_INT128__
    unsigned __int128 t = (unsigned __int128)s * b;
    return (uint64_t)(t >> 64) ^ (uint64_t)t;
#else
    uint64_t al = (uint32_t)s, ah = s >> 32, bl = (uint32_t)b, bh = b >> 32;
    uint64_t ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
    uint64_t mid = (ll >> 32) + (uint32_t)lh + (uint32_t)hl;
    uint64_t lo = (mid << 32) | (uint32_t)ll;
    uint64_t hi = hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
    return hi ^ lo;
#endif
}

static int fast_fill(const random_state *st, uint64_t offset, uint8_t *buf, size_t len)
{
    const uint64_t key = st->fast_key;
    uint64_t i = offset / 8;
    size_t skip = (size_t)(offset % 8);

    if (skip) {
        uint8_t tmp[8];
        size_t n = 8 - skip;
        if (n > len)
            n = len;
        td__store64le(tmp, fast_word(key, i));
        memcpy(buf, tmp + skip, n);
        buf += n;
        len -= n;
        i++;
    }
    size_t words = len / 8;
    for (size_t w = 0; w < words; w++)
        td__store64le(buf + 8 * w, fast_word(key, i + w));
    buf += 8 * words;
    len -= 8 * words;
    i += words;
    if (len) {
        uint8_t tmp[8];
        td__store64le(tmp, fast_word(key, i));
        memcpy(buf, tmp, len);
    }
    return TD_OK;
}

static int random_fill(const void *state, uint64_t offset, uint8_t *buf, size_t len)
{
    const random_state *st = state;
    if (st->algorithm == TD_ALG_FAST)
        return fast_fill(st, offset, buf, len);
    return chacha_fill(st, offset, buf, len);
}

static int random_check(const td_options *o)
{
    if (o->algorithm != TD_ALG_CHACHA20 && o->algorithm != TD_ALG_FAST)
        return TD_ERANGE;
    return TD_OK;
}

static int random_prepare(const td_options *o, void **state)
{
    random_state *st;
    int rc = td__sodium_ready();
    if (rc != TD_OK)
        return rc;
    st = calloc(1, sizeof *st);
    if (!st)
        return TD_ENOMEM;
    st->algorithm = o->algorithm;
    if (o->algorithm == TD_ALG_FAST) {
        uint8_t k[32];
        td__derive_key("libtestdata/random/fast/1", o->seed, k);
        st->fast_key = td__load64le(k);
        sodium_memzero(k, sizeof k);
    } else {
        td__derive_key("libtestdata/random/chacha20/1", o->seed, st->key);
    }
    *state = st;
    return TD_OK;
}

static void random_release(void *state)
{
    free(state);
}

static const char *const random_options[] = {"algorithm", "dedup", "dedup_block", NULL};

const td_kind_vtbl td_kind_random = {
    .name = "random",
    .block = CHACHA_BLOCK,
    .options = random_options,
    .check = random_check,
    .prepare = random_prepare,
    .release = random_release,
    .fill = random_fill,
};
