/*
 * Linked into every test_* executable with -Wl,--wrap=pthread_create (see
 * CMakeLists.txt): a test marked TD_ONE_THREAD that starts a thread, in the
 * library or in the test itself, aborts, so the mark that keeps it out of the
 * ThreadSanitizer run cannot go stale.  Criterion's own threads are not
 * counted: --wrap only redirects calls from the objects linked here.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

int td_test_threads_forbidden;

int __real_pthread_create(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
int __wrap_pthread_create(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg)
{
    if (td_test_threads_forbidden) {
        fputs("a test marked TD_ONE_THREAD started a thread: take the mark off "
              "(tests/c/td_test_util.h)\n",
              stderr);
        abort();
    }
    return __real_pthread_create(t, a, fn, arg);
}
