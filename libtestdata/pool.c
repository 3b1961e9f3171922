/*
 * A tiny fork-join pool: a stream with threads > 1 keeps its workers, so a
 * parallel read costs two condition-variable round trips, not thread starts.
 *
 * fork(): only the forking thread survives in the child, so a pool made
 * before the fork has no workers there, and its mutex may be locked for
 * ever.  The pool remembers the process that made it; in any other process
 * it never touches its locks: jobs run on the caller, free only frees.
 */
#include "pool.h"

#include <pthread.h>
#include <unistd.h>

struct td_pool {
    pid_t pid;             /* process that started the workers */
    pthread_mutex_t mu;
    pthread_cond_t work;   /* workers wait here for a new generation */
    pthread_cond_t idle;   /* the caller waits here for pending == 0 */
    unsigned nworkers;
    uint64_t generation;
    unsigned pending;
    int quit;
    void (*fn)(void *job);
    uint8_t *jobs;
    size_t job_size;
    unsigned njobs;
    pthread_t *tids;
};

typedef struct worker_arg {
    td_pool *p;
    unsigned index; /* runs job index+1; the caller runs job 0 */
} worker_arg;

static void *worker_main(void *arg)
{
    td_pool *p = ((worker_arg *)arg)->p;
    unsigned me = ((worker_arg *)arg)->index + 1;
    uint64_t seen = 0;

    free(arg);
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->quit && p->generation == seen)
            pthread_cond_wait(&p->work, &p->mu);
        if (p->quit)
            break;
        seen = p->generation;
        if (me < p->njobs) {
            void (*fn)(void *) = p->fn;
            void *job = p->jobs + (size_t)me * p->job_size;
            pthread_mutex_unlock(&p->mu);
            fn(job);
            pthread_mutex_lock(&p->mu);
            if (--p->pending == 0)
                pthread_cond_signal(&p->idle);
        }
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

int td__pool_new(td_pool **out, unsigned nworkers)
{
    pthread_attr_t attr;
    int have_attr;
    td_pool *p = calloc(1, sizeof *p);

    *out = NULL;
    if (!p)
        return TD_ENOMEM;
    p->tids = calloc(nworkers ? nworkers : 1, sizeof *p->tids);
    if (!p->tids || pthread_mutex_init(&p->mu, NULL) != 0) {
        free(p->tids);
        free(p);
        return TD_ENOMEM;
    }
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->idle, NULL);
    p->pid = getpid();
    /* Small stacks: the default (often 8 MiB each) exhausts a limited
     * address space (ulimit -v) long before the work needs it. */
    have_attr = pthread_attr_init(&attr) == 0;
    if (have_attr)
        (void)pthread_attr_setstacksize(&attr, TD_POOL_STACK);
    for (unsigned i = 0; i < nworkers; i++) {
        worker_arg *a = malloc(sizeof *a);
        if (!a)
            break;
        a->p = p;
        a->index = i;
        if (pthread_create(&p->tids[i], have_attr ? &attr : NULL, worker_main, a) != 0) {
            free(a);
            break;
        }
        p->nworkers++;
    }
    if (have_attr)
        pthread_attr_destroy(&attr);
    *out = p;
    return TD_OK;
}

int td__pool_stale(const td_pool *p)
{
    return p && p->pid != getpid();
}

unsigned td__pool_size(const td_pool *p)
{
    return p && !td__pool_stale(p) ? p->nworkers + 1 : 1;
}

void td__pool_run(td_pool *p, void (*fn)(void *job), void *jobs, size_t job_size, unsigned njobs)
{
    unsigned parallel = TD_MIN(njobs, td__pool_size(p));

    if (parallel > 1) {
        pthread_mutex_lock(&p->mu);
        p->fn = fn;
        p->jobs = jobs;
        p->job_size = job_size;
        p->njobs = parallel;
        p->pending = parallel - 1;
        p->generation++;
        pthread_cond_broadcast(&p->work);
        pthread_mutex_unlock(&p->mu);
    }
    if (njobs)
        fn(jobs);
    /* Jobs beyond the pool's size run here. */
    for (unsigned i = TD_MAX(parallel, 1u); i < njobs; i++)
        fn((uint8_t *)jobs + (size_t)i * job_size);
    if (parallel > 1) {
        pthread_mutex_lock(&p->mu);
        while (p->pending)
            pthread_cond_wait(&p->idle, &p->mu);
        pthread_mutex_unlock(&p->mu);
    }
}

void td__pool_free(td_pool *p)
{
    if (!p)
        return;
    if (!td__pool_stale(p)) {
        pthread_mutex_lock(&p->mu);
        p->quit = 1;
        pthread_cond_broadcast(&p->work);
        pthread_mutex_unlock(&p->mu);
        for (unsigned i = 0; i < p->nworkers; i++)
            pthread_join(p->tids[i], NULL);
        pthread_cond_destroy(&p->work);
        pthread_cond_destroy(&p->idle);
        pthread_mutex_destroy(&p->mu);
    }
    free(p->tids);
    free(p);
}
