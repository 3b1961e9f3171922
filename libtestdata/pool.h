/* A fork-join thread pool (pool.c), over common.h.  Not installed. */
#ifndef TD_POOL_H
#define TD_POOL_H

#include "common.h"

typedef struct td_pool td_pool;

/* Stack of a worker thread.  Code run by workers (kinds' fill functions)
 * must use less than half of it. */
#define TD_POOL_STACK (512u * 1024u)

/* A pool of up to nworkers threads.  Fewer may start (no memory, a thread
 * limit): the pool then has fewer, possibly none, which is still usable.
 * TD_OK or TD_ENOMEM (the pool object itself). */
TD_HIDDEN int td__pool_new(td_pool **out, unsigned nworkers);
/* Workers + the calling thread; 1 for NULL or a pool of another process. */
TD_HIDDEN unsigned td__pool_size(const td_pool *p);
/* Nonzero when the pool was made before a fork() of this process: its
 * workers do not exist here.  Such a pool runs every job on the caller. */
TD_HIDDEN int td__pool_stale(const td_pool *p);
/* Run fn on each of njobs jobs (job i at jobs + i*job_size); job 0 runs on
 * the calling thread, and so do all jobs when p is NULL or stale.  Returns
 * when all are done. */
TD_HIDDEN void td__pool_run(td_pool *p, void (*fn)(void *job), void *jobs, size_t job_size,
                            unsigned njobs);
/* Stop and join the workers and free the pool; a stale pool is only freed
 * (its locks may be held by threads that did not survive the fork). */
TD_HIDDEN void td__pool_free(td_pool *p);

#endif
