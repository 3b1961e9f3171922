/* The bottom layer: key derivation, libsodium set-up, CPU count, parsing. */
#define _GNU_SOURCE /* strtod_l, newlocale */
#include "common.h"

#include <errno.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <sched.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#endif
#if defined(__APPLE__) || defined(__FreeBSD__)
#include <xlocale.h>
#endif

int td__sodium_ready(void)
{
    /* sodium_init() is idempotent and thread-safe (0 first time, 1 after),
     * so calling it every time keeps the library free of global state. */
    return sodium_init() < 0 ? TD_ENOMEM : TD_OK;
}

void td__derive_key_with(const char *domain, uint64_t seed, const void *extra, size_t extra_len,
                         uint8_t key[32])
{
    crypto_generichash_state h;
    uint8_t le[8];
    td__store64le(le, seed);
    crypto_generichash_init(&h, NULL, 0, 32);
    crypto_generichash_update(&h, (const unsigned char *)domain, strlen(domain));
    crypto_generichash_update(&h, le, sizeof le);
    if (extra_len)
        crypto_generichash_update(&h, extra, extra_len);
    crypto_generichash_final(&h, key, 32);
}

void td__derive_key(const char *domain, uint64_t seed, uint8_t key[32])
{
    td__derive_key_with(domain, seed, NULL, 0, key);
}

unsigned td__ncpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1u : (unsigned)n;
}

int td__parse_u64(const char *s, uint64_t *out, int allow_hex)
{
    unsigned base = 10;
    uint64_t v = 0;
    int overflow = 0;

    if (allow_hex && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s += 2;
    }
    if (!*s)
        return TD_ESYNTAX;
    for (; *s; s++) {
        unsigned d;
        if (*s >= '0' && *s <= '9')
            d = (unsigned)(*s - '0');
        else if (base == 16 && *s >= 'a' && *s <= 'f')
            d = (unsigned)(*s - 'a' + 10);
        else if (base == 16 && *s >= 'A' && *s <= 'F')
            d = (unsigned)(*s - 'A' + 10);
        else
            return TD_ESYNTAX;
        if (v > (UINT64_MAX - d) / base)
            overflow = 1;
        v = v * base + d;
    }
    if (overflow)
        return TD_ERANGE;
    *out = v;
    return TD_OK;
}

/* strtod() would follow LC_NUMERIC (under de_DE, "1.5" is rejected and
 * "1,5" accepted); strtod_l() with the "C" locale does not.  The locale
 * object is made per call, so there is no global state (glibc and musl hand
 * out a static object for "C" without allocating). */
int td__parse_double(const char *s, double *out)
{
    char *end;
    double v;
    int e;

    if (!*s || strchr(" \t\n\v\f\r", *s))
        return TD_ESYNTAX;
    locale_t c = newlocale(LC_ALL_MASK, "C", (locale_t)0);
    if (c == (locale_t)0)
        return TD_ENOMEM;
    errno = 0;
    v = strtod_l(s, &end, c);
    e = errno;
    freelocale(c);
    if (*end)
        return TD_ESYNTAX;
    if (e == ERANGE || !isfinite(v))
        return TD_ERANGE;
    *out = v;
    return TD_OK;
}

int td__msg(char *buf, size_t cap, const char *fmt, ...)
{
    va_list ap;
    int n;
    if (!buf || cap == 0)
        return TD_EINVAL;
    va_start(ap, fmt);
    n = vsnprintf(buf, cap, fmt, ap);
    va_end(ap);
    if (n < 0) {
        buf[0] = '\0';
        return TD_EINVAL;
    }
    return (size_t)n >= cap ? TD_ERANGE : TD_OK;
}

int td__options_null(const void *o, char *msg, size_t cap)
{
    if (msg && cap)
        msg[0] = '\0';
    if (o)
        return TD_OK;
    if (msg && cap)
        (void)td__msg(msg, cap, "no options");
    return TD_EINVAL;
}

int td__sample_check(uint64_t sample_bytes, char *msg, size_t cap)
{
    if (sample_bytes != 0 && sample_bytes != TD_SIZE_UNBOUNDED)
        return TD_OK;
    if (msg && cap)
        (void)td__msg(msg, cap, "bad sample size %s: 1 byte to 2^64-2 (rounded up to whole MiB)",
                      sample_bytes ? "inf" : "0");
    return TD_ERANGE;
}

const char *td__opt_spelled(const char *given, char *buf, size_t cap)
{
    if (given[0] == '-' && given[1] == '-')
        (void)td__msg(buf, cap, "%s", given);
    else
        (void)td__msg(buf, cap, "option '%s'", given);
    return buf;
}

char *td__join(char *buf, size_t cap, const char *const *names)
{
    size_t at = 0;
    buf[0] = '\0';
    for (size_t i = 0; names[i] && at < cap; i++) {
        (void)td__msg(buf + at, cap - at, "%s%s", i ? ", " : "", names[i]);
        at += strlen(buf + at);
    }
    return buf;
}

double td__entropy0(const uint64_t h[256])
{
    uint64_t t = 0;
    for (int v = 0; v < 256; v++)
        t += h[v];
    double e = 0;
    for (int v = 0; v < 256; v++)
        if (h[v]) {
            double p = (double)h[v] / (double)t;
            e -= p * log2(p);
        }
    return e;
}

int td__key_eq(const char *a, const char *b)
{
    for (; *a && *b; a++, b++) {
        char x = *a == '-' ? '_' : *a, y = *b == '-' ? '_' : *b;
        if (x != y)
            return 0;
    }
    return *a == *b;
}

#ifdef MADV_HUGEPAGE
#define TD_HUGE ((size_t)2 << 20)
#endif

void *td__alloc_large(size_t n)
{
#ifdef TD_HUGE
    if (n >= TD_LARGE && n <= SIZE_MAX - TD_HUGE) {
        size_t r = (n + TD_HUGE - 1) & ~(TD_HUGE - 1);
        void *p;
        if (posix_memalign(&p, TD_HUGE, r) != 0)
            return NULL;
        madvise(p, r, MADV_HUGEPAGE); /* advice: nothing to report if refused */
        return p;
    }
#endif
    return malloc(n);
}

void *td__calloc_large(size_t n)
{
    if (n < TD_LARGE)
        return calloc(1, n ? n : 1);
    void *p = td__alloc_large(n);
    if (p)
        memset(p, 0, n);
    return p;
}

void *td__realloc_large(void *p, size_t old, size_t n)
{
#ifdef TD_HUGE
    if (n >= TD_LARGE) {
        if (p && old >= TD_LARGE && n <= ((old + TD_HUGE - 1) & ~(TD_HUGE - 1)))
            return p; /* rounded up already */
        void *q = td__alloc_large(n);
        if (!q)
            return NULL;
        if (p)
            memcpy(q, p, TD_MIN(old, n));
        free(p);
        return q;
    }
#endif
    (void)old;
    return realloc(p, n);
}

void *td__alloc_filled(size_t n, uint64_t fill)
{
    return TD_MIN((uint64_t)n, fill) >= TD_FILLED ? td__alloc_large(n) : malloc(n);
}

static td__file_id file_id(int ok, const struct stat *st)
{
    if (!ok || !S_ISREG(st->st_mode))
        return (td__file_id){0, 0, 0};
    return (td__file_id){(uint64_t)st->st_dev, (uint64_t)st->st_ino, 1};
}

td__file_id td__file_id_fd(int fd)
{
    struct stat st;
    return file_id(fstat(fd, &st) == 0, &st);
}

td__file_id td__file_id_path(const char *path)
{
    struct stat st;
    return file_id(path && stat(path, &st) == 0, &st);
}

int td__read_fd(int fd, size_t cap, size_t hint, char **buf, size_t *len)
{
    /* hint + 1: a regular file ends with a read of 0 without a realloc. */
    size_t got = 0, size = hint < cap ? hint + 1 : cap + 1;
    if (size < 4096)
        size = cap < 4096 ? cap + 1 : 4096;
    char *b = malloc(size);
    *buf = NULL;
    *len = 0;
    if (!b)
        return TD_ENOMEM;
    for (;;) {
        if (got == size) {
            if (size > cap)
                break; /* cap + 1 bytes: the caller's "too big" */
            size_t ns = size > cap / 2 ? cap + 1 : size * 2;
            char *nb = realloc(b, ns);
            if (!nb) {
                free(b);
                return TD_ENOMEM;
            }
            b = nb;
            size = ns;
        }
        ssize_t r = read(fd, b + got, size - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            free(b);
            errno = e;
            return TD_EIO;
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    *buf = b;
    *len = got;
    return TD_OK;
}

/* Waits for another thread of this process that owns o, seen at ready ==
 * seen.  It yields at first (256 times, about 0.3 ms with a core to spare):
 * the owner is often about done, and a thread put to sleep wakes late.  Then
 * it sleeps, so as not to take CPU time from the owner when there are more
 * threads than cores: on Linux on a futex on ready, which td__once_done
 * wakes, for at most 1 ms (a wake that came first and changed nothing is not
 * waited for longer); elsewhere 12.5-100 µs at a time. */
static void once_wait(td_once *o, uint32_t seen, unsigned *n)
{
    if (*n < 256) {
        ++*n;
        sched_yield();
        return;
    }
#ifdef __linux__
    struct timespec ts = {0, 1000000};
    atomic_fetch_add(&o->sleepers, 1);
    syscall(SYS_futex, (uint32_t *)&o->ready, FUTEX_WAIT_PRIVATE, seen, &ts, NULL, 0);
    atomic_fetch_sub(&o->sleepers, 1);
#else
    (void)o;
    (void)seen;
    unsigned k = *n - 256;
    if (k < 3)
        ++*n;
    struct timespec ts = {0, 12500L << k};
    nanosleep(&ts, NULL);
#endif
}

int td__once_take(td_once *o, uint32_t need, int wait)
{
    const uint64_t me = 1 + (uint64_t)getpid();
    unsigned waits = 0;
    for (;;) {
        uint64_t who = atomic_load(&o->owner);
        uint32_t ready = atomic_load(&o->ready);
        if (ready >= need)
            return 0;
        if (who == me) { /* another thread of this process is at it: a few ms */
            if (!wait)
                return 0;
            once_wait(o, ready, &waits);
            continue;
        }
        if (!atomic_compare_exchange_strong(&o->owner, &who, me)) {
            if (!wait)
                return 0;
            continue;
        }
        if (atomic_load(&o->ready) < need)
            return 1;
        atomic_store(&o->owner, 0);
        return 0;
    }
}

void td__once_done(td_once *o, uint32_t ready)
{
    if (ready)
        atomic_store(&o->ready, ready);
    atomic_store(&o->owner, 0);
#ifdef __linux__
    /* A sleeper counted after this load sleeps on a ready that has already
     * changed, so it does not sleep, or (nothing made) for 1 ms at most. */
    if (atomic_load(&o->sleepers))
        syscall(SYS_futex, (uint32_t *)&o->ready, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
#endif
}
