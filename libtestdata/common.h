/*
 * The bottom layer of the library: helpers every other file may use and
 * that use nothing of the library but the public header.  Not installed.
 *
 *   common.h   key derivation, sodium set-up, CPU count, wyrand, endian
 *              helpers, number parsing and printing, small arithmetic,
 *              large buffers on huge pages
 *   pool.h     fork-join thread pool                      (over common)
 *   kind.h     the kind interface and the registry        (over common)
 *   gen.h      the generator engine and the dedup layer   (over kind, pool)
 *   stream.c, verify.c, output.c, options.c ...          (over gen)
 */
#ifndef TD_COMMON_H
#define TD_COMMON_H

#include "testdata.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define TD_HIDDEN __attribute__((visibility("hidden")))

/* Threads any call uses at most, whatever td_options.threads asks. */
#define TD_MAX_THREADS 256u

#define TD_MIN(a, b) ((a) < (b) ? (a) : (b))
#define TD_MAX(a, b) ((a) > (b) ? (a) : (b))

static inline int td__is_pow2(uint64_t v)
{
    return v && !(v & (v - 1));
}

/* Call sodium_init() once per process; TD_OK or TD_ENOMEM.  A failure is
 * not cached: the next call tries again. */
/* Option keys compare with '-' and '_' alike, so the CLI's --dedup-block
 * is "dedup_block" (stream and tree option tables). */
TD_HIDDEN int td__key_eq(const char *a, const char *b);

/* Order-0 entropy in bits per byte of the byte counts h[256] (0 when they
 * are all 0). */
TD_HIDDEN double td__entropy0(const uint64_t h[256]);

TD_HIDDEN int td__sodium_ready(void);

/* Seed -> 32-byte key: BLAKE2b-256 over a domain string and u64le(seed). */
TD_HIDDEN void td__derive_key(const char *domain, uint64_t seed, uint8_t key[32]);

/* As td__derive_key, with extra bytes (an object's canonical content)
 * hashed after the seed: the key of a kind whose bytes depend on a model
 * or profile. */
TD_HIDDEN void td__derive_key_with(const char *domain, uint64_t seed, const void *extra,
                                   size_t extra_len, uint8_t key[32]);

/* buf[0..len) as the whole content of the file at path, replaced
 * atomically through td_output (docs/reliability.md): how the library
 * saves the files it makes (models, profiles).  errno as td_output's. */
TD_HIDDEN int td__output_put(const char *path, const void *buf, size_t len);

/* fd read to its end, but never more than cap + 1 bytes (so a caller sees
 * that an input is too big without reading all of it), into a new buffer
 * *buf of *len bytes (free()).  hint: the expected size (a regular file's
 * st_size) or 0.  TD_OK, TD_EIO (errno set) or TD_ENOMEM; *buf is NULL on
 * failure.  The loaders of profiles and models read files and pipes alike
 * through it. */
TD_HIDDEN int td__read_fd(int fd, size_t cap, size_t hint, char **buf, size_t *len);

/* A regular file's identity (device, inode), to tell that two names reach
 * one file; set = 0 for anything else (a pipe, a device, nothing). */
typedef struct td__file_id {
    uint64_t dev, ino;
    int set;
} td__file_id;

/* The identity of the file open on fd, or of path (symlinks followed). */
TD_HIDDEN td__file_id td__file_id_fd(int fd);
TD_HIDDEN td__file_id td__file_id_path(const char *path);

/* Both name one regular file. */
static inline int td__file_id_eq(td__file_id a, td__file_id b)
{
    return a.set && b.set && a.dev == b.dev && a.ino == b.ino;
}

/* Large buffers, freed with free().  From TD_LARGE bytes up they start on
 * a 2 MiB boundary, are rounded up to 2 MiB and are advised for transparent
 * huge pages (Linux): a 4 KiB page faulted in costs as much as some tens of
 * thousands of instructions, a huge page about what zeroing it does.
 * td__calloc_large zeroes; td__realloc_large keeps the first old bytes of
 * p, which came from these functions with size old (or is NULL). */
#define TD_LARGE ((size_t)256 << 10)
TD_HIDDEN void *td__alloc_large(size_t n);
TD_HIDDEN void *td__calloc_large(size_t n);
TD_HIDDEN void *td__realloc_large(void *p, size_t old, size_t n);

/* A buffer of n bytes of which about fill will be written: from
 * td__alloc_large when that is at least TD_FILLED (at most half of a huge
 * page then goes unused), else from malloc, whose untouched pages cost
 * nothing (many small streams open at once must not take 2 MiB each). */
#define TD_FILLED ((size_t)1 << 20)
TD_HIDDEN void *td__alloc_filled(size_t n, uint64_t fill);

/* Number of online CPUs (>= 1). */
TD_HIDDEN unsigned td__ncpus(void);

/* Decimal digits only, or 0x/0X and hex digits when allow_hex: TD_OK,
 * TD_ESYNTAX or TD_ERANGE.  (strtoull() would also take white space, a
 * sign that negates the value, and octal.) */
TD_HIDDEN int td__parse_u64(const char *s, uint64_t *out, int allow_hex);

/* A finite double in C syntax, independent of the process's locale.
 * TD_OK, TD_ESYNTAX, TD_ERANGE (overflow, inf, nan) or TD_ENOMEM; *out is
 * set only on TD_OK. */
TD_HIDDEN int td__parse_double(const char *s, double *out);

/* snprintf that never fails: truncates, always NUL-terminates when cap > 0;
 * returns TD_OK or TD_ERANGE when truncated. */
TD_HIDDEN int td__msg(char *buf, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* An option's name as its caller spelled it, for a message: "--files" as
 * given (the CLI, which reads the same spelling back), or "option 'files'"
 * (a program).  Written into buf; returns buf. */
TD_HIDDEN const char *td__opt_spelled(const char *given, char *buf, size_t cap);

/* The start of a td_*_options_check: msg emptied (if any); o NULL is
 * TD_EINVAL, said in msg. */
TD_HIDDEN int td__options_null(const void *o, char *msg, size_t cap);

/* sample_bytes of td_analyze_options and td_profile_options: 1 to 2^64-2
 * (0 samples nothing; TD_SIZE_UNBOUNDED would keep or compress without
 * bound).  TD_OK, or TD_ERANGE with the message in msg (if any). */
TD_HIDDEN int td__sample_check(uint64_t sample_bytes, char *msg, size_t cap);

/* The NULL-terminated names joined with ", " into buf (truncated as by
 * td__msg); returns buf. */
TD_HIDDEN char *td__join(char *buf, size_t cap, const char *const *names);

/* v in decimal at p, no NUL; returns the end.  By hand, not snprintf:
 * this is most of the cost of a profile's canonical JSON (thousands of
 * integers) and of naming millions of tree files.  The one digit loop of
 * the library; 32-bit, so that the compiler unrolls it and divides by
 * multiplying. */
static inline char *td__put_u32(char *p, uint32_t v)
{
    char t[10];
    int n = 0;
    do
        t[n++] = (char)('0' + v % 10);
    while (v /= 10);
    while (n)
        *p++ = t[--n];
    return p;
}

/* As td__put_u32 for any v, with at least `width` digits (leading zeros):
 * a v above 2^32 - 1 is written in base-10^9 digits of 9 decimals. */
static inline char *td__put_dec(char *p, uint64_t v, int width)
{
    uint32_t part[3]; /* 2^64 < 10^27 */
    int k = 0, n;
    char t[24], *e;
    if (v <= UINT32_MAX)
        part[k++] = (uint32_t)v;
    else
        for (; v; v /= 1000000000u)
            part[k++] = (uint32_t)(v % 1000000000u);
    e = td__put_u32(t, part[--k]);
    while (k--) {
        char *s = e;
        e = td__put_u32(s, part[k]);
        n = (int)(e - s);
        if (n < 9) {
            memmove(s + 9 - n, s, (size_t)n);
            memset(s, '0', (size_t)(9 - n));
            e = s + 9;
        }
    }
    for (n = (int)(e - t); width > n; width--)
        *p++ = '0';
    for (const char *q = t; q < e; q++)
        *p++ = *q;
    return p;
}

/* wyrand (Wang Yi): a Weyl sequence through a 64x64->128 multiply-fold.
 * The per-block PRNG of the block-structured kinds and of dedup. */
#define TD_WY_P0 UINT64_C(0xa0761d6478bd642f)
#define TD_WY_P1 UINT64_C(0xe7037ed1a0b428db)

static inline uint64_t td__wymix(uint64_t a, uint64_t b)
{
#ifdef __SIZEOF_INT128__
    unsigned __int128 t = (unsigned __int128)a * b;
    return (uint64_t)(t >> 64) ^ (uint64_t)t;
#else
    uint64_t al = (uint32_t)a, ah = a >> 32, bl = (uint32_t)b, bh = b >> 32;
    uint64_t ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
    uint64_t mid = (ll >> 32) + (uint32_t)lh + (uint32_t)hl;
    uint64_t lo = (mid << 32) | (uint32_t)ll;
    uint64_t hi = hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
    return hi ^ lo;
#endif
}

static inline uint64_t td__wyrand(uint64_t *s)
{
    *s += TD_WY_P0;
    return td__wymix(*s, *s ^ TD_WY_P1);
}

static inline void td__store64le(uint8_t *p, uint64_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(p, &v, 8);
#else
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
#endif
}

static inline uint64_t td__load64le(const uint8_t *p)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
#else
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
#endif
}

/* Something a stream makes lazily and shares between its threads (like's
 * base block, text's base blocks), made ready up to `ready` by one thread at
 * a time.  The owner is 1 + its process id rather than a lock: a lock held
 * by a parent thread at fork() would never be released in the child, while
 * an owner of another process is simply taken over. */
typedef struct td_once {
    _Atomic uint64_t owner; /* 0: nobody */
    _Atomic uint32_t ready;
    _Atomic uint32_t sleepers; /* threads asleep on ready, or about to be */
} td_once;

/* Nothing made, nobody at it, nobody asleep. */
static inline void td__once_init(td_once *o)
{
    atomic_init(&o->owner, 0);
    atomic_init(&o->ready, 0);
    atomic_init(&o->sleepers, 0);
}

/* 1 if the caller now owns o and o->ready < need: it makes more, then
 * calls td__once_done.  0 if o->ready >= need, or, without wait, if another
 * thread of this process is at it (with wait, that thread is waited for). */
TD_HIDDEN int td__once_take(td_once *o, uint32_t need, int wait);

/* Ends ownership; ready (if above 0) is what is now made. */
TD_HIDDEN void td__once_done(td_once *o, uint32_t ready);

#endif
