/*
 * TD_RANDOM: incompressible bytes from one of two generators.
 *
 * chacha20: the original ChaCha20 keystream (64-bit nonce, 64-bit block
 *   counter), so a stream can be 2^64 bytes long and any offset is one
 *   counter away.  The IETF variant's 32-bit counter would stop at 256 GiB.
 *   libsodium computes it; when built with OpenSSL, libcrypto's ChaCha20
 *   (AVX-512 where the CPU has it, ~3x libsodium's AVX2 code) computes the
 *   very same bytes: its 16-byte IV is state words 12-15, i.e. our 64-bit
 *   counter followed by our 64-bit nonce, as long as one call does not carry
 *   out of the low counter word, so calls are split at 2^32-block edges.
 * fast: counter-based SplitMix64; every word depends only on its index, so
 *   seeking is free and the loop vectorises.
 */
#include "kind.h"

#include <sodium.h>
#ifdef TD_HAVE_OPENSSL
#include <dlfcn.h>
#include <openssl/evp.h>
#include <pthread.h>
#endif

#define CHACHA_BLOCK 64u
/* Keyed OpenSSL contexts kept by a prepared stream for reuse. */
#define CTX_SLOTS 16u
/* Zero source for the xor API; small enough to stay in L1. */
#define ZERO_CHUNK 16384u

static const uint8_t zero_chunk[ZERO_CHUNK];
static const uint8_t chacha_nonce[crypto_stream_chacha20_NONCEBYTES];

#ifdef TD_HAVE_OPENSSL
/* libcrypto is opened once the process has made EVP_AFTER chacha20 bytes
 * with libsodium, not linked: loading and relocating it at start-up cost
 * every process about 3 ms and 120 page faults (`testdata --version`: 6 ms
 * of CPU against 3), and most processes never make a chacha20 byte.  Where it cannot be
 * opened, libsodium computes the same bytes.  The table is written once,
 * under evp_once, and only read after; the library is never unloaded
 * (RTLD_NODELETE: it registers exit handlers). */
typedef struct evp_api {
    __typeof__(&EVP_CIPHER_CTX_new) ctx_new;
    __typeof__(&EVP_CIPHER_CTX_free) ctx_free;
    __typeof__(&EVP_EncryptInit_ex2) init;
    __typeof__(&EVP_EncryptUpdate) update;
    __typeof__(&EVP_CIPHER_fetch) fetch;
    __typeof__(&EVP_CIPHER_free) cipher_free;
} evp_api;

static evp_api evp_table;
static const evp_api *evp_loaded;
static pthread_once_t evp_once = PTHREAD_ONCE_INIT;

static int evp_sym(void *h, const char *name, void *fn, size_t size)
{
    void *p = dlsym(h, name);
    if (p)
        memcpy(fn, &p, size); /* POSIX: a data pointer holds a function's */
    return p != NULL;
}

#define EVP_SYM(h, f, name) evp_sym(h, name, &evp_table.f, sizeof evp_table.f)

static void evp_load(void)
{
    void *h = dlopen("libcrypto.so.3", RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (h && EVP_SYM(h, ctx_new, "EVP_CIPHER_CTX_new") &&
        EVP_SYM(h, ctx_free, "EVP_CIPHER_CTX_free") && EVP_SYM(h, init, "EVP_EncryptInit_ex2") &&
        EVP_SYM(h, update, "EVP_EncryptUpdate") && EVP_SYM(h, fetch, "EVP_CIPHER_fetch") &&
        EVP_SYM(h, cipher_free, "EVP_CIPHER_free"))
        __atomic_store_n(&evp_loaded, &evp_table, __ATOMIC_RELEASE);
}

/* libcrypto's functions, or NULL where it cannot be opened. */
static const evp_api *evp(void)
{
    return pthread_once(&evp_once, evp_load) == 0 ? __atomic_load_n(&evp_loaded, __ATOMIC_ACQUIRE)
                                                  : NULL;
}

/* libcrypto's functions if some stream opened it already, else NULL. */
static const evp_api *evp_if_loaded(void)
{
    return __atomic_load_n(&evp_loaded, __ATOMIC_ACQUIRE);
}

/* Opening libcrypto and fetching the cipher cost about 7 ms of CPU
 * (`testdata gen random 4K`: 14 ms against 5), which is what libsodium
 * takes for several MiB.  So it is opened once the process has made this
 * much with libsodium: a small output never pays for it, a loop of small
 * fills (a new state each) soon gets the faster cipher.  The count is a
 * process-wide hint, like the table: it changes no byte. */
#define EVP_AFTER ((uint64_t)1 << 20)
static uint64_t sodium_bytes;

/* Contexts already keyed, each owned by one call at a time (busy): a call
 * then only sets the counter, where making, keying and freeing a context
 * cost as much as 4 KiB of keystream (many small files).  A call that finds
 * none free uses a context of its own, as before. */
typedef struct ctx_cache {
    EVP_CIPHER *cipher; /* fetched once (implicit fetches per call are slow); NULL until then */
    int failed;         /* libcrypto or its cipher is not there: libsodium for good */
    EVP_CIPHER_CTX *ctx[CTX_SLOTS];
    int busy[CTX_SLOTS];
} ctx_cache;
#endif

typedef struct random_state {
    uint32_t algorithm;
    uint8_t key[crypto_stream_chacha20_KEYBYTES];
    uint64_t fast_key;
#ifdef TD_HAVE_OPENSSL
    ctx_cache *cache; /* the state's one mutable part (synchronised on its own) */
#endif
} random_state;

#ifdef TD_HAVE_OPENSSL
/* The state's cipher, or NULL for libsodium (a fill of len bytes is
 * about to be made): fetched, opening libcrypto if need be, once the
 * process has made EVP_AFTER bytes without it.  Two threads may both fetch
 * it; one is kept. */
static EVP_CIPHER *cipher_get(const random_state *st, size_t len)
{
    ctx_cache *cc = st->cache;
    EVP_CIPHER *c = __atomic_load_n(&cc->cipher, __ATOMIC_ACQUIRE);
    if (c || __atomic_load_n(&cc->failed, __ATOMIC_RELAXED))
        return c;
    if (!evp_if_loaded() &&
        __atomic_fetch_add(&sodium_bytes, len, __ATOMIC_RELAXED) + len < EVP_AFTER)
        return NULL;
    const evp_api *e = evp();
    if (!e || !(c = e->fetch(NULL, "ChaCha20", NULL))) {
        __atomic_store_n(&cc->failed, 1, __ATOMIC_RELAXED);
        return NULL;
    }
    EVP_CIPHER *was = NULL;
    if (!__atomic_compare_exchange_n(&cc->cipher, &was, c, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        e->cipher_free(c);
        c = was;
    }
    return c;
}

/* A new context keyed with st->key, or NULL. */
static EVP_CIPHER_CTX *ctx_new_keyed(const random_state *st, EVP_CIPHER *cipher)
{
    const evp_api *e = evp_if_loaded();
    EVP_CIPHER_CTX *c = e->ctx_new();
    if (c && !e->init(c, cipher, st->key, NULL, NULL)) {
        e->ctx_free(c);
        c = NULL;
    }
    return c;
}

/* A context keyed with st->key for the caller alone (*slot: its slot, or -1
 * for one of its own), or NULL. */
static EVP_CIPHER_CTX *ctx_get(const random_state *st, EVP_CIPHER *cipher, int *slot)
{
    ctx_cache *cc = st->cache;
    for (unsigned k = 0; cc && k < CTX_SLOTS; k++) {
        if (__atomic_exchange_n(&cc->busy[k], 1, __ATOMIC_ACQUIRE))
            continue;
        if (!cc->ctx[k]) {
            EVP_CIPHER_CTX *c = ctx_new_keyed(st, cipher);
            if (!c) {
                __atomic_store_n(&cc->busy[k], 0, __ATOMIC_RELEASE);
                break;
            }
            cc->ctx[k] = c;
        }
        *slot = (int)k;
        return cc->ctx[k];
    }
    *slot = -1;
    return ctx_new_keyed(st, cipher);
}

static void ctx_put(const random_state *st, EVP_CIPHER_CTX *c, int slot)
{
    if (slot >= 0)
        __atomic_store_n(&st->cache->busy[slot], 0, __ATOMIC_RELEASE);
    else
        evp_if_loaded()->ctx_free(c);
}
#endif

/* Keystream blocks [ic, ic + len/64) into buf; len is a multiple of 64. */
static void chacha_blocks(const random_state *st, uint64_t ic, uint8_t *buf, size_t len)
{
#ifdef TD_HAVE_OPENSSL
    int slot = -1;
    EVP_CIPHER *cipher = st->cache ? cipher_get(st, len) : NULL;
    EVP_CIPHER_CTX *ctx = cipher ? ctx_get(st, cipher, &slot) : NULL;
    const evp_api *e = evp_if_loaded();
    if (ctx) {
        int ok = 1;
        while (len && ok) {
            /* Blocks left before the low counter word wraps. */
            uint64_t room = UINT64_C(0x100000000) - (ic & 0xffffffffu);
            size_t n = (uint64_t)len / CHACHA_BLOCK > room ? (size_t)(room * CHACHA_BLOCK) : len;
            uint8_t iv[16] = {0};
            td__store64le(iv, ic);
            ok = e->init(ctx, NULL, NULL, iv, NULL);
            for (size_t done = 0; ok && done < n;) {
                int step = n - done < ZERO_CHUNK ? (int)(n - done) : (int)ZERO_CHUNK, outl;
                /* In place over zeroed L1-hot memory beats reading a zero source. */
                memset(buf + done, 0, (size_t)step);
                ok = e->update(ctx, buf + done, &outl, buf + done, step);
                done += (size_t)step;
            }
            if (ok) {
                buf += n;
                len -= n;
                ic += n / CHACHA_BLOCK;
            }
        }
        ctx_put(st, ctx, slot);
        if (ok)
            return;
    }
    /* No OpenSSL context: libsodium gives the same bytes, only slower. */
#endif
    while (len) {
        size_t n = len < ZERO_CHUNK ? len : ZERO_CHUNK;
        crypto_stream_chacha20_xor_ic(buf, zero_chunk, n, chacha_nonce, ic, st->key);
        buf += n;
        len -= n;
        ic += n / CHACHA_BLOCK;
    }
}

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
    size_t whole = len - len % CHACHA_BLOCK;
    if (whole) {
        chacha_blocks(st, ic, buf, whole);
        buf += whole;
        len -= whole;
        ic += whole / CHACHA_BLOCK;
    }
    if (len) {
        uint8_t tmp[CHACHA_BLOCK];
        crypto_stream_chacha20_xor_ic(tmp, zero_chunk, CHACHA_BLOCK, chacha_nonce, ic, st->key);
        memcpy(buf, tmp, len);
    }
    return TD_OK;
}

/* fast: SplitMix64 (Steele, Lea, Flood 2014), read as a counter-based
 * generator: word i is mix(key + (i+1) * GAMMA).  Two 64-bit multiplies and
 * no carried state, so compilers vectorise it (AVX-512 has a 64-bit
 * multiply) and any word is one multiply-add away. */
#define SM_GAMMA UINT64_C(0x9e3779b97f4a7c15)

static inline uint64_t fast_word(uint64_t key, uint64_t i)
{
    uint64_t z = key + (i + 1) * SM_GAMMA;
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* ifunc resolvers run before sanitizer runtimes start; instrumented, they
 * crash the process at load time, so sanitizer builds use the default clone. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TD_NO_CLONES 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define TD_NO_CLONES 1
#endif
#endif
#if defined(__x86_64__) && defined(__has_attribute) && !defined(TD_NO_CLONES)
#if __has_attribute(target_clones)
/* Same arithmetic, three instruction sets; picked once at load time. */
#define TD_CLONES __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#endif
#endif
#ifndef TD_CLONES
#define TD_CLONES
#endif

TD_CLONES
static void fast_words(uint64_t key, uint64_t i, uint8_t *out, size_t words)
{
    for (size_t w = 0; w < words; w++)
        td__store64le(out + 8 * w, fast_word(key, i + w));
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
    fast_words(key, i, buf, words);
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

static int random_prepare(const td_options *o, uint64_t end, void **state)
{
    (void)end;
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
#ifdef TD_HAVE_OPENSSL
        st->cache = calloc(1, sizeof *st->cache); /* NULL: libsodium only */
#endif
    }
    *state = st;
    return TD_OK;
}

static void random_release(void *state)
{
    random_state *st = state;
#ifdef TD_HAVE_OPENSSL
    if (st->cache && st->cache->cipher) { /* then libcrypto is open */
        for (unsigned k = 0; k < CTX_SLOTS; k++)
            evp_if_loaded()->ctx_free(st->cache->ctx[k]);
        evp_if_loaded()->cipher_free(st->cache->cipher);
    }
    free(st->cache);
#endif
    sodium_memzero(st->key, sizeof st->key);
    free(st);
}

/* Indexed by td_algorithm: the values of the option "algorithm". */
const char *const td__algorithm_names[] = {"chacha20", "fast", NULL};

const td_kind_vtbl td_kind_random = {
    .name = "random",
    .block = CHACHA_BLOCK,
    .prepare = random_prepare,
    .release = random_release,
    .fill = random_fill,
};
