/*
 * A stand-in for the small part of Criterion the C tests use, for builds in
 * which Criterion cannot run: under ThreadSanitizer, Criterion's runner
 * aborts ("Could not initialize inheritable arena", Snaipe/Criterion#274).
 * Selected by TD_MINI_CRITERION (tests/c/CMakeLists.txt sets it when
 * TD_SANITIZE contains "thread").
 *
 * Like Criterion, each test runs in a child process of its own; a failed
 * cr_assert ends that test, a failed cr_expect marks it failed and goes on.
 * A failure prints the expression, its line and the message.  Only for use from the test's own thread.
 * Of Criterion's test attributes, .init, .fini and .disabled are honoured
 * and .timeout is left to CTest.
 */
#ifndef TD_MINI_CRITERION_H
#define TD_MINI_CRITERION_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The Test() attributes the suites use, with Criterion's names. */
typedef struct mc_attr {
    int unused_; /* so that Test() without attributes expands to {0} */
    void (*init)(void), (*fini)(void);
    int disabled;
    double timeout; /* not enforced: CTest's own timeout applies */
} mc_attr;

typedef struct mc_test {
    const char *suite, *name;
    void (*fn)(void);
    const mc_attr *attr;
} mc_test;

static mc_test mc_tests[256];
static int mc_ntests;
static int mc_failed;
static void (*mc_fini)(void); /* the running test's .fini, also run when an assert ends it */

static inline void mc_end(int status)
{
    void (*fini)(void) = mc_fini;
    mc_fini = NULL; /* once, even if it fails an assert itself */
    if (fini)
        fini();
    exit(status);
}

static inline void mc_register(const char *suite, const char *name, void (*fn)(void),
                               const mc_attr *attr)
{
    if (mc_ntests < 256)
        mc_tests[mc_ntests++] = (mc_test){suite, name, fn, attr};
}

__attribute__((format(printf, 5, 6))) static inline void
mc_fail(int fatal, const char *file, int line, const char *expr, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s:%d: %s failed: %s\n   ", file, line, fatal ? "assertion" : "expectation",
            expr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    mc_failed = 1;
    if (fatal)
        mc_end(1);
}

#define Test(suite, name, ...)                                                                 \
    static void suite##_##name(void);                                                          \
    static const mc_attr mc_attr_##suite##_##name = {0, __VA_ARGS__};                          \
    __attribute__((constructor)) static void mc_reg_##suite##_##name(void)                     \
    {                                                                                          \
        mc_register(#suite, #name, suite##_##name, &mc_attr_##suite##_##name);                 \
    }                                                                                          \
    static void suite##_##name(void)

/* The message (a format string literal and its arguments) may be absent. */
#define MC_(fatal, cond, text, ...)                                                            \
    do {                                                                                       \
        if (!(cond))                                                                           \
            mc_fail(fatal, __FILE__, __LINE__, text, " " __VA_ARGS__);                         \
    } while (0)
#define cr_log_warn(...)                                                                       \
    do {                                                                                       \
        fputs("warning: ", stderr);                                                            \
        fprintf(stderr, __VA_ARGS__);                                                          \
        fputc('\n', stderr);                                                                   \
    } while (0)
#define cr_log_info(...) cr_log_warn(__VA_ARGS__)
/* Each test runs in a process of its own, so skipping ends that process. */
#define cr_skip_test(...)                                                                      \
    do {                                                                                       \
        fputs("skipped: ", stderr);                                                            \
        fprintf(stderr, __VA_ARGS__);                                                          \
        fputc('\n', stderr);                                                                   \
        mc_end(mc_failed);                                                                     \
    } while (0)
#define cr_assert(cond, ...) MC_(1, cond, #cond, __VA_ARGS__)
#define cr_expect(cond, ...) MC_(0, cond, #cond, __VA_ARGS__)
#define cr_assert_not(cond, ...) MC_(1, !(cond), "!(" #cond ")", __VA_ARGS__)
#define cr_expect_not(cond, ...) MC_(0, !(cond), "!(" #cond ")", __VA_ARGS__)
#define cr_assert_eq(a, b, ...) MC_(1, (a) == (b), #a " == " #b, __VA_ARGS__)
#define cr_expect_eq(a, b, ...) MC_(0, (a) == (b), #a " == " #b, __VA_ARGS__)
#define cr_assert_neq(a, b, ...) MC_(1, (a) != (b), #a " != " #b, __VA_ARGS__)
#define cr_expect_neq(a, b, ...) MC_(0, (a) != (b), #a " != " #b, __VA_ARGS__)
#define cr_assert_lt(a, b, ...) MC_(1, (a) < (b), #a " < " #b, __VA_ARGS__)
#define cr_assert_leq(a, b, ...) MC_(1, (a) <= (b), #a " <= " #b, __VA_ARGS__)
#define cr_assert_gt(a, b, ...) MC_(1, (a) > (b), #a " > " #b, __VA_ARGS__)
#define cr_assert_geq(a, b, ...) MC_(1, (a) >= (b), #a " >= " #b, __VA_ARGS__)
#define cr_expect_geq(a, b, ...) MC_(0, (a) >= (b), #a " >= " #b, __VA_ARGS__)
#define cr_expect_leq(a, b, ...) MC_(0, (a) <= (b), #a " <= " #b, __VA_ARGS__)
#define cr_expect_gt(a, b, ...) MC_(0, (a) > (b), #a " > " #b, __VA_ARGS__)
#define cr_assert_float_eq(a, b, eps, ...)                                                     \
    MC_(1, (a) - (b) <= (eps) && (b) - (a) <= (eps), #a " == " #b " within " #eps, __VA_ARGS__)
#define cr_assert_fail(...) MC_(1, 0, "cr_assert_fail", __VA_ARGS__)
#define cr_assert_null(p, ...) MC_(1, (p) == NULL, #p " == NULL", __VA_ARGS__)
#define cr_assert_not_null(p, ...) MC_(1, (p) != NULL, #p " != NULL", __VA_ARGS__)
#define cr_expect_null(p, ...) MC_(0, (p) == NULL, #p " == NULL", __VA_ARGS__)
#define cr_expect_not_null(p, ...) MC_(0, (p) != NULL, #p " != NULL", __VA_ARGS__)
#define cr_expect_lt(a, b, ...) MC_(0, (a) < (b), #a " < " #b, __VA_ARGS__)
#define cr_assert_str_eq(a, b, ...) MC_(1, strcmp((a), (b)) == 0, #a " equals " #b, __VA_ARGS__)
#define cr_expect_str_eq(a, b, ...) MC_(0, strcmp((a), (b)) == 0, #a " equals " #b, __VA_ARGS__)
#define cr_assert_str_neq(a, b, ...) MC_(1, strcmp((a), (b)) != 0, #a " differs from " #b, __VA_ARGS__)
#define cr_expect_str_neq(a, b, ...) MC_(0, strcmp((a), (b)) != 0, #a " differs from " #b, __VA_ARGS__)
#define cr_assert_arr_eq(a, b, n, ...) MC_(1, memcmp((a), (b), (n)) == 0, #a " equals " #b, __VA_ARGS__)
#define cr_expect_arr_eq(a, b, n, ...) MC_(0, memcmp((a), (b), (n)) == 0, #a " equals " #b, __VA_ARGS__)

/* Tests run in child processes, --jobs of them at once (default: the
 * CPUs), as Criterion's runner does (under ThreadSanitizer one long test file would
 * otherwise hold the whole step on one core); each is reported with its
 * time when it ends. */
static double mc_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    int failed = 0, running = 0, next = 0;
    pid_t pid_of[256];
    double t0[256];
    long jobs = sysconf(_SC_NPROCESSORS_ONLN);
    for (int a = 1; a < argc; a++) /* --jobs N, as Criterion; other options are ignored */
        if (strcmp(argv[a], "--jobs") == 0 && a + 1 < argc)
            jobs = atol(argv[++a]);
    if (jobs < 1)
        jobs = 1;
    int skipped = 0;
    while (next < mc_ntests || running) {
        if (next < mc_ntests && mc_tests[next].attr->disabled) {
            printf("[SKIP] %s::%s (disabled)\n", mc_tests[next].suite, mc_tests[next].name);
            pid_of[next++] = 0;
            skipped++;
            continue;
        }
        if (next < mc_ntests && running < jobs) {
            fflush(NULL);
            pid_t pid = fork();
            if (pid < 0) {
                perror("fork");
                return 1;
            }
            if (pid == 0) {
                const mc_attr *a = mc_tests[next].attr;
                if (a->init)
                    a->init();
                mc_fini = a->fini;
                mc_tests[next].fn();
                void (*fini)(void) = mc_fini;
                mc_fini = NULL;
                if (fini)
                    fini();
                fflush(NULL);
                _exit(mc_failed ? 1 : 0);
            }
            pid_of[next] = pid;
            t0[next++] = mc_now();
            running++;
            continue;
        }
        int status = 0;
        pid_t pid = waitpid(-1, &status, 0);
        if (pid < 0) {
            perror("waitpid");
            return 1;
        }
        int i = 0;
        while (i < next && pid_of[i] != pid)
            i++;
        if (i == next)
            continue; /* not one of ours */
        running--;
        const mc_test *t = &mc_tests[i];
        int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
        printf("[%s] %s::%s (%.2fs)\n", ok ? "PASS" : "FAIL", t->suite, t->name, mc_now() - t0[i]);
        if (!WIFEXITED(status))
            printf("       (killed by signal %d)\n", WTERMSIG(status));
        failed += !ok;
    }
    printf("Synthesis: Tested: %d | Passing: %d | Failing: %d | Skipped: %d\n",
           mc_ntests - skipped, mc_ntests - skipped - failed, failed, skipped);
    return failed != 0;
}

#endif
