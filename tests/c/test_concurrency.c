/*
 * Thread-safety, as documented in testdata.h: functions that take no stream
 * may be called from any number of threads at once; distinct streams need no
 * locking; a stream with threads > 1 runs its own workers.  These tests are
 * meant to run under ThreadSanitizer (CI: .ci/run), which reports any data
 * race; without it they still check that the bytes are right.
 *
 * Each Criterion test runs in a fresh process, so the first test to use the
 * random kind also races the one-time libsodium initialisation.
 * TD_TEST_SMALL=1 shrinks the amounts (valgrind).
 */
#include "td_test_util.h"

#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#define KIB 1024u
#define MIB (1024u * 1024u)
#define NTHREADS 8

static size_t amount(size_t normal)
{
    const char *e = getenv("TD_TEST_SMALL");
    return e && *e && strcmp(e, "0") != 0 ? normal / 8 : normal;
}

typedef struct job {
    int index;
    int kind;
    td_options o;
    uint64_t offset;
    size_t len;
    const unsigned char *want; /* expected bytes, shared read-only */
    unsigned char *out;        /* where a thread leaves its bytes, if set */
    int failed;                /* set by the thread; checked by the test */
    char why[160];
} job;

static void fail(job *j, const char *what, int rc)
{
    if (!j->failed)
        snprintf(j->why, sizeof j->why, "thread %d: %s (rc %d: %s)", j->index, what, rc,
                 td_strerror(rc));
    j->failed = 1;
}

static void run_all(void *(*fn)(void *), job *jobs, int n)
{
    pthread_t t[64];
    cr_assert_leq(n, 64);
    for (int i = 0; i < n; i++)
        cr_assert_eq(pthread_create(&t[i], NULL, fn, &jobs[i]), 0);
    for (int i = 0; i < n; i++)
        cr_assert_eq(pthread_join(t[i], NULL), 0);
    for (int i = 0; i < n; i++)
        cr_expect_not(jobs[i].failed, "%s", jobs[i].why);
}

/* The configurations the threads cycle through. */
static void setup(job *j, int i, const unsigned char **want_cache, size_t len)
{
    static const struct {
        int kind;
        uint32_t alg;
        uint32_t threads;
    } cfg[] = {{TD_RANDOM, TD_ALG_CHACHA20, 1}, {TD_RANDOM, TD_ALG_FAST, 2},
               {TD_ZERO, 0, 3},                 {TD_RANDOM, TD_ALG_CHACHA20, 4},
               {TD_RANDOM, TD_ALG_FAST, 1},     {TD_RANDOM, TD_ALG_CHACHA20, 0}};
    int c = i % (int)(sizeof cfg / sizeof cfg[0]);
    memset(j, 0, sizeof *j);
    j->index = i;
    j->kind = cfg[c].kind;
    td_options_init(&j->o);
    j->o.algorithm = cfg[c].alg;
    j->o.threads = cfg[c].threads;
    j->o.seed = (uint64_t)c * 1000003u;
    j->offset = (uint64_t)c * 77777u;
    j->len = len;
    j->want = want_cache[c];
}

/* Expected bytes per configuration, computed single-threaded up front. */
static const unsigned char **expected(size_t len)
{
    static const unsigned char *cache[6];
    for (int c = 0; c < 6; c++) {
        job j;
        unsigned char *buf = malloc(len);
        cr_assert_not_null(buf);
        const unsigned char *none[6] = {0};
        setup(&j, c, none, len);
        j.o.threads = 1;
        cr_assert_eq(td_fill(j.kind, &j.o, j.offset, buf, len), TD_OK);
        cache[c] = buf;
    }
    return cache;
}

static void free_expected(const unsigned char **cache)
{
    for (int c = 0; c < 6; c++)
        free((void *)cache[c]);
}

/* ------------------------------------------------------------------------ */

static void *fill_thread(void *arg)
{
    job *j = arg;
    unsigned char *buf = malloc(j->len);
    if (!buf) {
        fail(j, "malloc", 0);
        return NULL;
    }
    for (int round = 0; round < 3; round++) {
        int rc = td_fill(j->kind, &j->o, j->offset, buf, j->len);
        if (rc != TD_OK)
            fail(j, "td_fill", rc);
        else if (memcmp(buf, j->want, j->len) != 0)
            fail(j, "td_fill bytes differ", 0);
        uint64_t first = 0;
        rc = td_verify(j->kind, &j->o, j->offset, j->want, j->len, &first);
        if (rc != TD_OK)
            fail(j, "td_verify", rc);
    }
    free(buf);
    return NULL;
}

Test(concurrency, td_fill_and_verify_from_many_threads)
{
    size_t len = amount(2 * MIB + 333);
    const unsigned char **want = expected(len);
    job jobs[NTHREADS];
    for (int i = 0; i < NTHREADS; i++)
        setup(&jobs[i], i, want, len);
    run_all(fill_thread, jobs, NTHREADS);
    free_expected(want);
}

static void *fill_once_thread(void *arg)
{
    job *j = arg;
    int rc = td_fill(j->kind, &j->o, j->offset, j->out, j->len);
    if (rc != TD_OK)
        fail(j, "td_fill", rc);
    return NULL;
}

Test(concurrency, first_use_races_the_one_time_initialisation)
{
    /* Nothing has touched the random kind in this process yet. */
    enum { LEN = 4096 };
    static unsigned char out[NTHREADS][LEN];
    unsigned char want[LEN];
    const unsigned char *none[6] = {0};
    job jobs[NTHREADS];
    for (int i = 0; i < NTHREADS; i++) {
        setup(&jobs[i], 0, none, LEN);
        jobs[i].index = i;
        jobs[i].out = out[i];
    }
    run_all(fill_once_thread, jobs, NTHREADS);
    cr_assert_eq(td_fill(jobs[0].kind, &jobs[0].o, jobs[0].offset, want, LEN), TD_OK);
    for (int i = 0; i < NTHREADS; i++)
        cr_expect(memcmp(out[i], want, LEN) == 0, "thread %d", i);
}

/* Each thread: its own stream, read in random pieces with read and next,
 * seeks back, and reads again; several streams have threads > 1. */
static void *stream_thread(void *arg)
{
    job *j = arg;
    uint64_t rng = (uint64_t)j->index * 0x9E3779B97F4A7C15u + 1;
    unsigned char *buf = malloc(j->len);
    td_stream *s = NULL;
    int rc;
    if (!buf) {
        fail(j, "malloc", 0);
        return NULL;
    }
    rc = td_stream_open(&s, j->kind, j->offset + j->len, &j->o);
    if (rc != TD_OK) {
        fail(j, "td_stream_open", rc);
        free(buf);
        return NULL;
    }
    for (int pass = 0; pass < 2 && !j->failed; pass++) {
        size_t done = 0;
        if ((rc = td_stream_seek(s, j->offset)) != TD_OK)
            fail(j, "td_stream_seek", rc);
        while (done < j->len && !j->failed) {
            size_t n = 0;
            uint64_t r = td_test_rand(&rng);
            if (r & 1) {
                const void *chunk;
                rc = td_stream_next(s, &chunk, &n);
                if (rc == TD_OK)
                    memcpy(buf + done, chunk, n);
            } else {
                size_t want = 1 + (size_t)((r >> 8) % (r & 2 ? 3 * MIB : 5000));
                if (want > j->len - done)
                    want = j->len - done;
                rc = td_stream_read(s, buf + done, want, &n);
            }
            if (rc != TD_OK)
                fail(j, "read/next", rc);
            done += n;
        }
        if (!j->failed && memcmp(buf, j->want, j->len) != 0)
            fail(j, "stream bytes differ from td_fill", 0);
    }
    td_stream_free(s);
    free(buf);
    return NULL;
}

Test(concurrency, separate_streams_in_many_threads)
{
    size_t len = amount(5 * MIB + 4321);
    const unsigned char **want = expected(len);
    job jobs[NTHREADS];
    for (int i = 0; i < NTHREADS; i++)
        setup(&jobs[i], i, want, len);
    run_all(stream_thread, jobs, NTHREADS);
    free_expected(want);
}

/* Streams with their own worker pools created, used a little and freed in a
 * loop from several threads at once (pool start-up and shutdown races). */
static void *churn_thread(void *arg)
{
    job *j = arg;
    size_t len = 600 * KIB; /* above the per-thread minimum: the pool is used */
    unsigned char *buf = malloc(len);
    if (!buf) {
        fail(j, "malloc", 0);
        return NULL;
    }
    for (int round = 0; round < 6 && !j->failed; round++) {
        td_options o = j->o;
        o.threads = 2 + (uint32_t)((j->index + round) % 3);
        td_stream *s = NULL;
        size_t n = 0;
        int rc = td_stream_open(&s, j->kind, UINT64_MAX, &o);
        if (rc != TD_OK) {
            fail(j, "td_stream_open", rc);
            break;
        }
        if (round % 2 == 0) { /* sometimes freed without ever reading */
            rc = td_stream_read(s, buf, len, &n);
            if (rc != TD_OK || n != len)
                fail(j, "td_stream_read", rc);
            else if (memcmp(buf, j->want, len) != 0)
                fail(j, "bytes differ", 0);
        }
        td_stream_free(s);
    }
    free(buf);
    return NULL;
}

Test(concurrency, streams_with_worker_pools_created_and_freed_concurrently)
{
    const size_t len = 600 * KIB;
    static unsigned char want[2][600 * KIB];
    job jobs[NTHREADS];
    for (int i = 0; i < NTHREADS; i++) {
        memset(&jobs[i], 0, sizeof jobs[i]);
        jobs[i].index = i;
        jobs[i].kind = i % 2 ? TD_ZERO : TD_RANDOM;
        td_options_init(&jobs[i].o);
        jobs[i].o.seed = 5;
        jobs[i].o.algorithm = TD_ALG_FAST;
        jobs[i].len = len;
        jobs[i].want = want[i % 2];
    }
    cr_assert_eq(td_fill(TD_RANDOM, &jobs[0].o, 0, want[0], len), TD_OK);
    cr_assert_eq(td_fill(TD_ZERO, &jobs[1].o, 0, want[1], len), TD_OK);
    run_all(churn_thread, jobs, NTHREADS);
}

/* The stateless helpers, all at once. */
static void *helpers_thread(void *arg)
{
    job *j = arg;
    for (int round = 0; round < 200 && !j->failed; round++) {
        td_options o;
        uint64_t size = 0;
        int k = -1;
        char num[32];
        td_options_init(&o);
        snprintf(num, sizeof num, "%d", j->index * 1000 + round);
        if (td_options_set(&o, TD_RANDOM, "seed", num) != TD_OK ||
            o.seed != (uint64_t)(j->index * 1000 + round))
            fail(j, "td_options_set", 0);
        if (td_options_set(&o, TD_RANDOM, "algorithm", round % 2 ? "fast" : "chacha20") != TD_OK)
            fail(j, "td_options_set algorithm", 0);
        if (td_options_check(TD_RANDOM, &o) != TD_OK)
            fail(j, "td_options_check", 0);
        if (td_parse_size("4KiB", &size) != TD_OK || size != 4096)
            fail(j, "td_parse_size", 0);
        if (td_kind_from_name("random", &k) != TD_OK || k != TD_RANDOM)
            fail(j, "td_kind_from_name", 0);
        if (strcmp(td_kind_name(TD_ZERO), "zero") != 0 || !td_strerror(round - 100) ||
            strcmp(td_version(), TD_VERSION_STRING) != 0)
            fail(j, "names", 0);
    }
    return NULL;
}

Test(concurrency, stateless_helpers)
{
    job jobs[NTHREADS];
    for (int i = 0; i < NTHREADS; i++) {
        memset(&jobs[i], 0, sizeof jobs[i]);
        jobs[i].index = i;
    }
    run_all(helpers_thread, jobs, NTHREADS);
}

/* td_write_file to distinct paths from several threads. */
static void *write_thread(void *arg)
{
    job *j = arg;
    char path[256];
    unsigned char *buf = malloc(j->len);
    snprintf(path, sizeof path, "%s/td_conc_%d_%d.bin", P_tmpdir, (int)getpid(), j->index);
    int rc = td_write_file(path, j->kind, j->offset + j->len, &j->o);
    if (rc != TD_OK) {
        fail(j, "td_write_file", rc);
    } else {
        FILE *f = fopen(path, "rb");
        if (!f || !buf || fseek(f, (long)j->offset, SEEK_SET) != 0 ||
            fread(buf, 1, j->len, f) != j->len || memcmp(buf, j->want, j->len) != 0)
            fail(j, "file contents differ", 0);
        if (f)
            fclose(f);
    }
    unlink(path);
    free(buf);
    return NULL;
}

Test(concurrency, write_file_from_many_threads)
{
    size_t len = amount(1 * MIB + 17);
    const unsigned char **want = expected(len);
    job jobs[NTHREADS];
    for (int i = 0; i < NTHREADS; i++)
        setup(&jobs[i], i, want, len);
    run_all(write_thread, jobs, NTHREADS);
    free_expected(want);
}

/* TD_ONE_THREAD (td_test_util.h) keeps a test out of the ThreadSanitizer run;
 * a marked test that starts a thread must not pass, or the mark could go stale. */
Test(concurrency, one_thread_mark_is_checked)
{
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        if (!freopen("/dev/null", "w", stderr))
            _exit(4);
        td_test_forbid_threads();
        td_options o;
        td_options_init(&o);
        o.threads = 2;
        size_t n = 16 * MIB;
        void *buf = malloc(n);
        _exit(buf && td_fill(TD_RANDOM, &o, 0, buf, n) == TD_OK ? 0 : 3);
    }
    int status = 0;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_expect(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT, "status %#x", status);
}
