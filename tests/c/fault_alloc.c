/*
 * Allocation and thread-start failures, injected.
 *
 * Linked with -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=free,
 * --wrap=posix_memalign,--wrap=pthread_create (tests/c/CMakeLists.txt), so every such call made by
 * the library's (static) objects and by this file goes through the wrappers
 * below; calls inside libc, libsodium or Criterion do not.  While armed, the
 * wrappers count "events" (allocations and thread starts), fail event N (or
 * every event from N on), and keep the set of live allocations.
 *
 * For every public function that can allocate, and N = 1, 2, 3, ... until a
 * run sees fewer than N events, each run must return TD_OK with the right
 * bytes (the library may degrade, e.g. to fewer threads) or TD_ENOMEM (NULL
 * for td_stream_new), and must leave no allocation behind.
 */
#define _GNU_SOURCE /* nftw */
#include "td_test_util.h"

#include <dirent.h>
#include <ftw.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <unistd.h>

#define KIB 1024u
#define MIB (1024u * 1024u)

/* ------------------------------------------------------------------------ */
/* The wrappers                                                              */

void *__real_malloc(size_t n);
void *__real_calloc(size_t m, size_t n);
void *__real_realloc(void *p, size_t n);
void __real_free(void *p);
int __real_posix_memalign(void **p, size_t align, size_t n);
int __real_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t m, size_t n);
void *__wrap_realloc(void *p, size_t n);
void __wrap_free(void *p);
int __wrap_posix_memalign(void **p, size_t align, size_t n);
int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg);

static atomic_int armed;
static atomic_long events;      /* counted while armed */
static atomic_long injected;    /* failures injected */
static atomic_long bytes;       /* bytes asked for while armed */
static long fail_at;            /* event number to fail (1-based); 0 never */
static int fail_after;          /* fail every event from fail_at on */
static pthread_mutex_t live_mu = PTHREAD_MUTEX_INITIALIZER;
#define MAX_LIVE 4096
static void *live[MAX_LIVE];
static int nlive, live_overflow;

static int should_fail(void)
{
    if (!atomic_load(&armed))
        return 0;
    long e = atomic_fetch_add(&events, 1) + 1;
    if (fail_at && (e == fail_at || (fail_after && e > fail_at))) {
        atomic_fetch_add(&injected, 1);
        return 1;
    }
    return 0;
}

static void track(void *p, size_t n)
{
    if (!p || !atomic_load(&armed))
        return;
    atomic_fetch_add(&bytes, (long)n);
    pthread_mutex_lock(&live_mu);
    if (nlive < MAX_LIVE)
        live[nlive++] = p;
    else
        live_overflow = 1;
    pthread_mutex_unlock(&live_mu);
}

static void untrack(void *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&live_mu);
    for (int i = 0; i < nlive; i++) {
        if (live[i] == p) {
            live[i] = live[--nlive];
            break;
        }
    }
    pthread_mutex_unlock(&live_mu);
}

void *__wrap_malloc(size_t n)
{
    if (should_fail())
        return NULL;
    void *p = __real_malloc(n);
    track(p, n);
    return p;
}

void *__wrap_calloc(size_t m, size_t n)
{
    if (should_fail())
        return NULL;
    void *p = __real_calloc(m, n);
    track(p, m * n);
    return p;
}

void *__wrap_realloc(void *p, size_t n)
{
    if (should_fail())
        return NULL;
    void *q = __real_realloc(p, n);
    if (q || !n) {
        untrack(p);
        track(q, n);
    }
    return q;
}

/* td__alloc_large's huge-page buffers */
int __wrap_posix_memalign(void **p, size_t align, size_t n)
{
    if (should_fail())
        return ENOMEM;
    int rc = __real_posix_memalign(p, align, n);
    if (rc == 0)
        track(*p, n);
    return rc;
}

void __wrap_free(void *p)
{
    untrack(p);
    __real_free(p);
}

int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg)
{
    if (should_fail())
        return EAGAIN;
    return __real_pthread_create(t, a, fn, arg);
}

static void arm(long at, int after)
{
    pthread_mutex_lock(&live_mu);
    nlive = 0;
    live_overflow = 0;
    pthread_mutex_unlock(&live_mu);
    fail_at = at;
    fail_after = after;
    atomic_store(&events, 0);
    atomic_store(&injected, 0);
    atomic_store(&bytes, 0);
    atomic_store(&armed, 1);
}

static void disarm(void)
{
    atomic_store(&armed, 0);
}

/* ------------------------------------------------------------------------ */
/* The driver                                                                */

/* A scenario runs public calls and returns TD_OK or the first failure code;
 * it checks the bytes of every call that succeeded itself (failing the test
 * through `bad`, since cr_assert while armed would leak Criterion's state). */
typedef struct scenario {
    const char *name;
    int kind;
    td_options o;
    size_t len;
    unsigned char *want; /* bytes [0, len) of the stream, computed up front */
    unsigned char *buf;  /* scratch of len bytes */
    char bad[200];
} scenario;

typedef int (*scenario_fn)(scenario *sc);

static void sc_bad(scenario *sc, const char *what, int rc)
{
    if (!sc->bad[0])
        snprintf(sc->bad, sizeof sc->bad, "%s: %s (rc %d)", sc->name, what, rc);
}

/* Run fn with the Nth event failing, for N = 1, 2, ... until a run has fewer
 * than N events.  Returns how many runs gave TD_ENOMEM. */
static int sweep(scenario *sc, scenario_fn fn, int persistent)
{
    int enomem = 0;
    for (long n = 1; n < 100000; n++) {
        sc->bad[0] = '\0';
        arm(n, persistent);
        int rc = fn(sc);
        disarm();
        long ev = atomic_load(&events), inj = atomic_load(&injected);
        cr_assert_eq(sc->bad[0], '\0', "N=%ld%s: %s", n, persistent ? "+" : "", sc->bad);
        cr_assert(rc == TD_OK || rc == TD_ENOMEM, "%s, failing event %ld%s: rc %d (%s)",
                  sc->name, n, persistent ? " and later" : "", rc, td_strerror(rc));
        cr_assert(inj > 0 || rc == TD_OK, "%s: TD_ENOMEM without a failure", sc->name);
        cr_assert_eq(live_overflow, 0);
        cr_assert_eq(nlive, 0, "%s, failing event %ld%s: %d allocation(s) leaked", sc->name, n,
                     persistent ? " and later" : "", nlive);
        enomem += rc == TD_ENOMEM;
        if (ev < n) {
            /* nothing failed: every allocation has been tried */
            if (getenv("TD_FAULT_VERBOSE"))
                fprintf(stderr, "%s%s: %ld events, %d x TD_ENOMEM\n", sc->name,
                        persistent ? " (persistent)" : "", ev, enomem);
            return enomem;
        }
    }
    cr_assert_fail("%s: no end to the allocations", sc->name);
    return enomem;
}

static void sweep_both(scenario *sc, scenario_fn fn, int must_fail)
{
    int a = sweep(sc, fn, 0);
    int b = sweep(sc, fn, 1);
    if (must_fail)
        cr_expect_gt(a + b, 0, "%s: no failure ever reported TD_ENOMEM", sc->name);
}

static void setup(scenario *sc, const char *name, int kind, uint32_t threads, size_t len)
{
    memset(sc, 0, sizeof *sc);
    sc->name = name;
    sc->kind = kind;
    td_options_init(&sc->o);
    sc->o.seed = 99;
    sc->o.threads = threads;
    if (kind == TD_RANDOM && threads % 2 == 0)
        sc->o.algorithm = TD_ALG_FAST;
    sc->len = len;
    sc->want = malloc(len);
    sc->buf = malloc(len);
    cr_assert(sc->want && sc->buf);
    cr_assert_eq(td_fill(kind, &sc->o, 0, sc->want, len), TD_OK);
}

static void teardown(scenario *sc)
{
    free(sc->want);
    free(sc->buf);
}

/* ------------------------------------------------------------------------ */
/* Scenarios                                                                 */

static int sc_fill(scenario *sc)
{
    memset(sc->buf, 0, sc->len);
    int rc = td_fill(sc->kind, &sc->o, 0, sc->buf, sc->len);
    if (rc == TD_OK && memcmp(sc->buf, sc->want, sc->len) != 0)
        sc_bad(sc, "td_fill returned TD_OK with wrong bytes", rc);
    return rc;
}

static int sc_verify(scenario *sc)
{
    uint64_t first = 0, count = 0;
    int rc = td_verify(sc->kind, &sc->o, 0, sc->want, sc->len, &first);
    if (rc != TD_OK)
        return rc;
    return td_verify_count(sc->kind, &sc->o, 0, sc->want, sc->len, &first, &count);
}

/* Open, read in small and large pieces, next, seek back, read, free. */
static int sc_stream(scenario *sc)
{
    td_stream *s = (td_stream *)&s; /* must become NULL on failure */
    size_t n = 0, done = 0;
    int rc = td_stream_open(&s, sc->kind, sc->len, &sc->o);
    if (rc != TD_OK) {
        if (s)
            sc_bad(sc, "td_stream_open failed but left *out set", rc);
        return rc;
    }
    memset(sc->buf, 0, sc->len);
    /* Small read (through the stream's buffer), then the rest in one go. */
    rc = td_stream_read(s, sc->buf, 1000, &n);
    if (rc == TD_OK) {
        done = n;
        rc = td_stream_read(s, sc->buf + done, sc->len - done, &n);
        done += rc == TD_OK ? n : 0;
    } else if (n != 0) {
        sc_bad(sc, "failed read reported bytes", rc);
    }
    if (rc == TD_OK) {
        const void *chunk;
        if (done != sc->len || memcmp(sc->buf, sc->want, sc->len) != 0)
            sc_bad(sc, "stream bytes differ", rc);
        if (td_stream_next(s, &chunk, &n) != TD_DONE)
            sc_bad(sc, "no TD_DONE at the end", rc);
        if (td_stream_seek(s, sc->len / 3) != TD_OK)
            sc_bad(sc, "seek", rc);
        rc = td_stream_next(s, &chunk, &n);
        if (rc == TD_OK && (n == 0 || memcmp(chunk, sc->want + sc->len / 3, n) != 0))
            sc_bad(sc, "td_stream_next bytes differ", rc);
    }
    td_stream_free(s);
    return rc;
}

static int sc_stream_new(scenario *sc)
{
    td_stream *s = td_stream_new_with(sc->kind, sc->len, &sc->o);
    if (!s)
        return TD_ENOMEM;
    td_stream_free(s);
    s = td_stream_new(sc->kind, 10);
    if (!s)
        return TD_ENOMEM;
    td_stream_free(s);
    return TD_OK;
}

static char tmpdir[256];

static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    if (!d)
        return -1;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n;
}

static int sc_write_file(scenario *sc)
{
    char path[300];
    snprintf(path, sizeof path, "%s/fixture.bin", tmpdir);
    unlink(path);
    int rc = td_write_file(path, sc->kind, sc->len, &sc->o);
    int entries = count_entries(tmpdir);
    if (rc == TD_OK) {
        FILE *f = fopen(path, "rb");
        size_t n = f ? fread(sc->buf, 1, sc->len, f) : 0;
        if (f)
            fclose(f);
        if (n != sc->len || memcmp(sc->buf, sc->want, sc->len) != 0)
            sc_bad(sc, "file contents differ", rc);
        if (entries != 1)
            sc_bad(sc, "stray files next to the fixture", entries);
        unlink(path);
    } else if (entries != 0) {
        sc_bad(sc, "a failed td_write_file left a file behind", entries);
    }
    return rc;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* A tree: options, prepare (a quantile table), write with the scenario's
 * threads, verify, scan.  On TD_ENOMEM every file present is complete. */
static int sc_tree(scenario *sc)
{
    char dir[300], thr[16], json[4096];
    td_tree *t = NULL;
    td_tree_io io;
    td_tree_result r;
    size_t len;
    int rc;
    snprintf(dir, sizeof dir, "%s/tree", tmpdir);
    snprintf(thr, sizeof thr, "%u", sc->o.threads);
    rc = td_tree_new(&t);
    if (rc == TD_OK)
        rc = td_tree_set(t, "files", "80", NULL, 0); /* 3 chunks: threads */
    if (rc == TD_OK)
        rc = td_tree_set(t, "sizes", "uniform:0,1000", NULL, 0); /* no table: cheap under valgrind */
    if (rc == TD_OK)
        rc = td_tree_set(t, "threads", thr, NULL, 0);
    if (rc == TD_OK)
        rc = td_tree_prepare(t, NULL, 0);
    if (rc == TD_OK)
        rc = td_tree_write(t, dir, NULL, &r, NULL, 0);
    if (rc == TD_OK) {
        td_tree_io_init(&io);
        rc = td_tree_verify(t, dir, &io, &r);
        if (rc != TD_OK && rc != TD_ENOMEM)
            sc_bad(sc, "td_tree_verify of a complete tree", rc);
    }
    if (rc == TD_OK) {
        rc = td_tree_scan(dir, NULL, json, sizeof json, &len);
        if (rc == TD_OK && !strstr(json, "\"files\": 80"))
            sc_bad(sc, "td_tree_scan", rc);
    }
    if (rc == TD_ENOMEM && t && td_tree_count(t) == 80) {
        /* what was written is right: only files are missing */
        td_tree_io_init(&io);
        int v = td_tree_verify(t, dir, &io, &r);
        if (v == TD_EMISMATCH && r.wrong_size + r.changed + r.extra + r.unreadable)
            sc_bad(sc, "a file written before TD_ENOMEM is wrong", v);
    }
    td_tree_free(t);
    if (access(dir, F_OK) == 0 && nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS) != 0)
        sc_bad(sc, "rm", 0);
    return rc;
}

static int sc_no_alloc(scenario *sc)
{
    td_options o;
    uint64_t v;
    int k;
    td_options_init(&o);
    if (td_options_set(&o, TD_RANDOM, "seed", "0x1234") != TD_OK ||
        td_options_set(&o, TD_RANDOM, "algorithm", "fast") != TD_OK ||
        td_options_check(TD_RANDOM, &o) != TD_OK || td_parse_size("10G", &v) != TD_OK ||
        td_kind_from_name("zero", &k) != TD_OK || !td_kind_name(TD_RANDOM) ||
        !td_strerror(TD_ENOMEM) || !td_version())
        sc_bad(sc, "a helper failed", 0);
    return TD_OK;
}

/* ------------------------------------------------------------------------ */

static const struct {
    int kind;
    uint32_t threads;
    size_t len;
} cases[] = {
    {TD_ZERO, 1, 5000},        {TD_RANDOM, 1, 5000},       {TD_RANDOM, 2, 5000},
    {TD_ZERO, 4, 2 * MIB + 5}, {TD_RANDOM, 4, 2 * MIB + 5}, {TD_RANDOM, 3, 1 * MIB + 3},
};
#define NCASES (sizeof cases / sizeof cases[0])

static void run_cases(const char *name, scenario_fn fn, int must_fail)
{
    for (size_t i = 0; i < NCASES; i++) {
        scenario sc;
        char label[96];
        snprintf(label, sizeof label, "%s(%s, threads %u, %zu bytes)", name,
                 td_kind_name(cases[i].kind), cases[i].threads, cases[i].len);
        setup(&sc, label, cases[i].kind, cases[i].threads, cases[i].len);
        sweep_both(&sc, fn, must_fail);
        teardown(&sc);
    }
}

Test(alloc_failure, td_fill)
{
    /* Only the random kind allocates (its state); zero needs nothing. */
    run_cases("td_fill", sc_fill, 0);
}

Test(alloc_failure, td_verify_and_verify_count)
{
    run_cases("td_verify", sc_verify, 1);
}

Test(alloc_failure, streams)
{
    run_cases("stream", sc_stream, 1);
}

Test(alloc_failure, td_stream_new)
{
    run_cases("td_stream_new", sc_stream_new, 1);
}

Test(alloc_failure, td_write_file)
{
    snprintf(tmpdir, sizeof tmpdir, "%s/td_fault_%d", P_tmpdir, (int)getpid());
    cr_assert(mkdir(tmpdir, 0700) == 0 || errno == EEXIST);
    run_cases("td_write_file", sc_write_file, 1);
    rmdir(tmpdir);
}

Test(alloc_failure, td_tree)
{
    static const uint32_t threads[] = {1, 2};
    /* tmpfs when there is one: thousands of small trees */
    snprintf(tmpdir, sizeof tmpdir, "%s/td_fault_tree_%d",
             access("/dev/shm", W_OK) == 0 ? "/dev/shm" : P_tmpdir, (int)getpid());
    cr_assert(mkdir(tmpdir, 0700) == 0 || errno == EEXIST);
    for (size_t i = 0; i < 2; i++) {
        scenario sc;
        char label[64];
        snprintf(label, sizeof label, "td_tree(threads %u)", threads[i]);
        setup(&sc, label, TD_RANDOM, threads[i], 64);
        sweep_both(&sc, sc_tree, 1);
        teardown(&sc);
    }
    rmdir(tmpdir);
}

Test(alloc_failure, helpers_do_not_allocate)
{
    scenario sc;
    memset(&sc, 0, sizeof sc);
    sc.name = "helpers";
    arm(0, 0);
    sc_no_alloc(&sc);
    disarm();
    cr_assert_eq(sc.bad[0], '\0', "%s", sc.bad);
    cr_assert_eq(atomic_load(&events), 0, "the option and size helpers allocated");
}

/* Thread starts are counted as events too: a long td_verify or td_write_file
 * with threads > 1 should start its workers once, not once per chunk. */
static long thread_starts(int (*call)(const scenario *), const scenario *sc)
{
    arm(0, 0);
    int rc = call(sc);
    disarm();
    cr_assert_eq(rc, TD_OK);
    return atomic_load(&events);
}

static int call_verify(const scenario *sc)
{
    return td_verify(sc->kind, &sc->o, 0, sc->want, sc->len, NULL);
}

static int call_write_file(const scenario *sc)
{
    char path[300];
    snprintf(path, sizeof path, "%s/td_threads_%d.bin", P_tmpdir, (int)getpid());
    int rc = td_write_file(path, sc->kind, sc->len, &sc->o);
    unlink(path);
    return rc;
}

Test(resources, verify_and_write_file_start_workers_once)
{
    scenario sc;
    setup(&sc, "threads", TD_RANDOM, 4, 8 * MIB);
    /* Allocations: state, stream, buffer, pool, its tids, 3 worker args
     * (+ the output and its two paths for a file); thread starts: 3.  Per
     * 1 MiB chunk, 8 x that would show. */
    long v = thread_starts(call_verify, &sc);
    long w = thread_starts(call_write_file, &sc);
    cr_expect_leq(v, 12, "td_verify: %ld allocations + thread starts for 8 MiB", v);
    cr_expect_leq(w, 16, "td_write_file: %ld allocations + thread starts for 8 MiB", w);
    teardown(&sc);
}

static int call_small_streams(const scenario *sc)
{
    /* Many small streams open at once, as a benchmark with one stream per
     * object would have them. */
    enum { N = 16 };
    td_stream *s[N];
    unsigned char b[64];
    size_t n;
    int rc = TD_OK;
    for (int i = 0; i < N; i++) {
        rc = td_stream_open(&s[i], sc->kind, sc->len, &sc->o);
        if (rc != TD_OK)
            return rc;
        if (td_stream_read(s[i], b, sizeof b, &n) != TD_OK)
            rc = TD_EIO;
    }
    for (int i = 0; i < N; i++)
        td_stream_free(s[i]);
    return rc;
}

Test(resources, small_streams_start_no_threads)
{
    /* A stream smaller than two 256 KiB pieces can never use a second
     * thread: it should not start any, whatever `threads` says. */
    scenario sc;
    for (uint32_t threads = 0; threads <= 64; threads += 16) {
        setup(&sc, "small streams", TD_RANDOM, threads, 300 * KIB);
        arm(0, 0);
        int rc = call_small_streams(&sc);
        disarm();
        cr_assert_eq(rc, TD_OK);
        /* Per stream: the stream, the generator state, the read buffer. */
        cr_expect_leq(atomic_load(&events), 16 * 3, "threads %u: %ld allocations + thread starts",
                      threads, atomic_load(&events));
        /* ... and the buffer need not be larger than the stream. */
        cr_expect_leq(atomic_load(&bytes), 16 * (300 * KIB + 4 * KIB),
                      "threads %u: %ld bytes for 16 streams of 300 KiB", threads,
                      atomic_load(&bytes));
        teardown(&sc);
    }
}

/* ------------------------------------------------------------------------ */
/* Who owns a model or profile that td_options_set loaded: the options       */

static char model_path[300], profile_path[300];

/* A model file and a profile file (the built-ins, saved) in tmpdir. */
static void ownership_files(void)
{
    snprintf(tmpdir, sizeof tmpdir, "%s/td_fault_own_%d", P_tmpdir, (int)getpid());
    cr_assert(mkdir(tmpdir, 0700) == 0 || errno == EEXIST);
    snprintf(model_path, sizeof model_path, "%s/m.tdm", tmpdir);
    snprintf(profile_path, sizeof profile_path, "%s/p.json", tmpdir);
    /* A small model (from 16 KiB of built-in text) keeps the sweeps short. */
    static unsigned char text[16 * KIB];
    td_options o;
    td_model_builder *b = NULL;
    td_model *m = NULL;
    td_options_init(&o);
    cr_assert_eq(td_fill(TD_TEXT, &o, 0, text, sizeof text), TD_OK);
    cr_assert_eq(td_model_builder_new(&b), TD_OK);
    cr_assert_eq(td_model_builder_update(b, text, sizeof text), TD_OK);
    cr_assert_eq(td_model_builder_finish(b, &m), TD_OK);
    td_model_builder_free(b);
    cr_assert_eq(td_model_save(m, model_path), TD_OK);
    td_model_free(m);
    cr_assert_eq(td_profile_save_file(td_profile_builtin("html"), profile_path), TD_OK);
    cr_assert(td_profile_builtin("source")); /* parsed once, kept for good */
}

static void ownership_cleanup(void)
{
    unlink(model_path);
    unlink(profile_path);
    rmdir(tmpdir);
}

/* "model" and "profile" files set twice, a built-in profile in between,
 * then released: the options free every file they loaded, and a failed
 * set leaves them as they were. */
static int sc_set_twice(scenario *sc)
{
    td_options t, l;
    int rc;
    td_options_init(&t);
    td_options_init(&l);
    if ((rc = td_options_set(&t, TD_TEXT, "model", model_path)) != TD_OK ||
        (rc = td_options_set(&t, TD_TEXT, "model", model_path)) != TD_OK ||
        (rc = td_options_set(&l, TD_LIKE, "profile", profile_path)) != TD_OK ||
        (rc = td_options_set(&l, TD_LIKE, "profile", "source")) != TD_OK ||
        (rc = td_options_set(&l, TD_LIKE, "profile", profile_path)) != TD_OK ||
        (rc = td_options_set(&l, TD_LIKE, "profile", profile_path)) != TD_OK) {
        td_options_release(&t);
        td_options_release(&l);
        return rc;
    }
    if (td_options_set(&t, TD_TEXT, "model", "/nonexistent/m.tdm") != TD_EIO || !t.model)
        sc_bad(sc, "a failed set of a model changed the options", 0);
    td_options_release(&t);
    td_options_release(&l);
    if (t.model || l.profile)
        sc_bad(sc, "td_options_release left a pointer", 0);
    return TD_OK;
}

Test(ownership, loaded_values_are_freed_when_replaced_and_released)
{
    scenario sc;
    ownership_files();
    memset(&sc, 0, sizeof sc);
    sc.name = "set model and profile twice, release";
    arm(0, 0);
    int rc = sc_set_twice(&sc);
    disarm();
    cr_assert_eq(rc, TD_OK, "%s", td_strerror(rc));
    cr_assert_eq(sc.bad[0], '\0', "%s", sc.bad);
    cr_assert_eq(nlive, 0, "%d allocation(s) leaked: a replaced model or profile", nlive);
    /* (No sweep of allocation failures: loading takes some 6000 of them.) */
    ownership_cleanup();
}

Test(ownership, pointers_the_caller_stored_stay_the_callers)
{
    td_model *m = NULL;
    td_profile *p = NULL;
    td_model_info info;
    td_options o;
    uint8_t d[32];
    ownership_files();
    cr_assert_eq(td_model_load_file(&m, model_path), TD_OK);
    cr_assert_eq(td_profile_open(&p, profile_path, NULL, 0), TD_OK);
    arm(0, 0);
    td_options_init(&o);
    /* A loaded model, then the caller's over it: the loaded one is still
     * the options' to free; the caller's is never freed. */
    cr_assert_eq(td_options_set(&o, TD_TEXT, "model", model_path), TD_OK);
    o.model = m;
    o.profile = p;
    cr_assert_eq(td_options_set(&o, TD_TEXT, "seed", "3"), TD_OK);
    td_options_release(&o);
    disarm();
    cr_assert_eq(nlive, 0, "the model the options loaded was not freed");
    cr_assert_eq(td_model_describe(m, &info), TD_OK);
    cr_assert_eq(td_profile_digest(p, d), TD_OK);
    td_model_free(m);
    td_profile_free(p);
    ownership_cleanup();
}

/* The model and the profile alike: a stream does not need either once it
 * is open (ASan and valgrind would see a use after free). */
static void stream_outlives(int kind, const char *key, const char *path)
{
    enum { LEN = 300 * KIB };
    static unsigned char want[LEN], got[LEN];
    td_options o, ref;
    td_stream *s = NULL;
    size_t n = 0;
    td_options_init(&ref);
    ref.seed = 5;
    cr_assert_eq(td_options_set(&ref, kind, key, path), TD_OK);
    cr_assert_eq(td_fill(kind, &ref, 0, want, LEN), TD_OK);
    o = ref;
    o.owned_[0] = o.owned_[1] = 0; /* a copy that owns nothing */
    cr_assert_eq(td_stream_open(&s, kind, LEN, &o), TD_OK);
    td_options_release(&ref);
    cr_assert_eq(td_stream_read(s, got, LEN, &n), TD_OK);
    cr_assert_eq(n, LEN);
    cr_assert_eq(memcmp(got, want, LEN), 0, "%s: the stream changed after its %s was freed",
                 td_kind_name(kind), key);
    td_stream_free(s);
}

Test(ownership, streams_need_no_model_or_profile_once_open)
{
    ownership_files();
    stream_outlives(TD_TEXT, "model", model_path);
    stream_outlives(TD_LIKE, "profile", profile_path);
    ownership_cleanup();
}
