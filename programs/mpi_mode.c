/*
 * testdata gen|verify --mpi: every rank of an MPI job writes or checks its
 * own part of the output, with plain POSIX I/O on a shared file system.
 *
 * One shared file (gen -o FILE --mpi, verify FILE --mpi): rank r of N takes
 * td_split_range(SIZE, N, 1 MiB, r) of the file, i.e. the same bytes a
 * single `testdata gen` writes at those positions.  For a regular file,
 * rank 0 opens a named temporary beside it (td_output, TD_IO_NAMED_TEMP),
 * every rank writes its part into that, and rank 0 renames it into place
 * once all succeeded; on failure or a signal the temporary is removed and
 * the old file is untouched.  M files (--files M, DIR): file i is DIR/
 * td_shard_name(i) with bytes td_split_range(SIZE, M, 1, i), written whole
 * (and atomically) by one rank with td_write_file_ex.
 *
 * Failures are agreed on with reductions, so every rank exits with the same
 * status; rank 0 prints the summary and the aggregate throughput.
 *
 * Built twice: into the program (option checks, and a loader), and with
 * TD_MPI_MODULE as testdata-mpi.so (the MPI code), which the program loads
 * on the first --mpi, so that only --mpi pays for loading MPI.
 */
#define _GNU_SOURCE
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#ifndef TD_MPI_MODULE
int cli_mpi_dispatch(const cli_cmd *cmd, const cli_args *a, const cli_stream *s,
                     const char *path, int verify)
{
    int mpi = cli_opt_index(cmd, "mpi"), files = cli_opt_index(cmd, "files");
    cli_mpi_job job;

    if (a->val[files] && !a->count[mpi])
        cli_usage_error("--files needs --mpi");
    if (!a->count[mpi])
        return -1;
    if (s->seed_was_random)
        cli_usage_error("--seed random does not work with --mpi (every rank needs the same "
                        "seed): give a number");
    memset(&job, 0, sizeof job);
    job.s = *s;
    job.path = path;
    job.quiet = cli_progress_mode(cmd, a) < 0;
    if (a->val[files]) {
        uint64_t n;
        if (td_parse_size(a->val[files], &n) != TD_OK || n == 0 || n > CLI_MAX_FILES)
            cli_usage_error("bad --files '%s': a count from 1 to %u", a->val[files],
                            CLI_MAX_FILES);
        if (s->size != TD_SIZE_UNBOUNDED && n > (s->size ? s->size : 1))
            cli_usage_error("bad --files '%s': more files than the %llu bytes of SIZE",
                            a->val[files], (unsigned long long)s->size);
        job.files = n;
    }
    return verify ? cli_mpi_verify(&job) : cli_mpi_gen(&job);
}
#endif

#ifndef TD_HAVE_MPI

int cli_mpi_gen(const cli_mpi_job *job)
{
    (void)job;
    cli_error("--mpi: this testdata was built without MPI");
    return CLI_EXIT_USAGE;
}

int cli_mpi_verify(const cli_mpi_job *job)
{
    return cli_mpi_gen(job);
}

int cli_mpi_tree(const td_tree *t, const char *dir, int verify, uint32_t flags, int quiet)
{
    (void)t;
    (void)dir;
    (void)verify;
    (void)flags;
    (void)quiet;
    return cli_mpi_gen(NULL);
}

#elif !defined(TD_MPI_MODULE)

#include <dlfcn.h>
#include <limits.h>
#include <unistd.h>

typedef void (*module_fn_t)(void);

/* The module's function called name, loading the module on first use;
 * NULL (after a message) when it cannot be loaded or has no such function. */
static module_fn_t module_fn(const char *name)
{
    static void *h;
    char path[PATH_MAX], why[512] = "";
    if (!h) {
        ssize_t n = readlink("/proc/self/exe", path, sizeof path);
        char *slash = n > 0 && (size_t)n < sizeof path ? memrchr(path, '/', (size_t)n) : NULL;
        if (slash && (size_t)(slash - path) + sizeof TD_MPI_MODULE_NAME + 1 < sizeof path) {
            memcpy(slash + 1, TD_MPI_MODULE_NAME, sizeof TD_MPI_MODULE_NAME);
            if (!(h = dlopen(path, RTLD_NOW | RTLD_LOCAL)) && access(path, F_OK) == 0)
                snprintf(why, sizeof why, "%s", dlerror());
        }
        if (!h && !(h = dlopen(TD_MPI_MODULE_DIR "/" TD_MPI_MODULE_NAME, RTLD_NOW | RTLD_LOCAL))
            && !why[0])
            snprintf(why, sizeof why, "%s", dlerror());
        if (!h) {
            cli_error("--mpi: cannot load its module: %s", why);
            return NULL;
        }
    }
    void *p = dlsym(h, name);
    module_fn_t f = NULL;
    if (!p)
        cli_error("--mpi: %s", dlerror());
    else
        memcpy(&f, &p, sizeof f); /* POSIX: a dlsym'd function pointer */
    return f;
}

typedef int (*job_fn)(const cli_mpi_job *);
typedef int (*tree_fn)(const td_tree *, const char *, int, uint32_t, int);

static int run_job(const char *name, const cli_mpi_job *job)
{
    job_fn f = (job_fn)module_fn(name);
    int st = f ? f(job) : CLI_EXIT_FAIL;
    cli_defer_signals(0); /* after a signal: the message (rank 0), 128+N */
    return st;
}

int cli_mpi_gen(const cli_mpi_job *job)
{
    return run_job("cli_mpi_module_gen", job);
}

int cli_mpi_verify(const cli_mpi_job *job)
{
    return run_job("cli_mpi_module_verify", job);
}

int cli_mpi_tree(const td_tree *t, const char *dir, int verify, uint32_t flags, int quiet)
{
    tree_fn f = (tree_fn)module_fn("cli_mpi_module_tree");
    int st = f ? f(t, dir, verify, flags, quiet) : CLI_EXIT_FAIL;
    cli_defer_signals(0); /* after a signal: the message (rank 0), 128+N */
    return st;
}

#else /* the module */

#include <mpi.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CHUNK (4u * 1024u * 1024u)

static int rank, nranks;

static void start(void)
{
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited)
        MPI_Init(NULL, NULL);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
}

static int finish(int status)
{
    MPI_Finalize();
    return status;
}

/* The worst status over all ranks (0 ok < 1 failure < 2 usage).  Ranks
 * that finish first wait politely (test, then sleep 1 ms) instead of
 * busy-polling in MPI_Allreduce: with more ranks than cores a spinning rank
 * would take CPU from those still generating. */
static int agree(int status)
{
    int all = status, done = 0;
    MPI_Request req;
    struct timespec ms = {0, 1000000};
    MPI_Iallreduce(&status, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &req);
    for (;;) {
        MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        if (done)
            return all;
        nanosleep(&ms, NULL);
    }
}

static void rank_error(const char *what, const char *path, int err)
{
    cli_error("rank %d: %s '%s': %s", rank, what, path, strerror(err));
}

/* DIR/part-NNNNNN */
static void shard_path(char *buf, size_t cap, const char *dir, uint64_t i)
{
    char name[64];
    size_t n = strlen(dir);
    td_shard_name(name, sizeof name, i);
    snprintf(buf, cap, "%s%s%s", dir, n && dir[n - 1] == '/' ? "" : "/", name);
}

static void throughput(const cli_mpi_job *j, const char *verb, uint64_t bytes, double secs)
{
    if (rank != 0 || j->quiet)
        return;
    if (secs <= 0)
        secs = 1e-9;
    cli_error("%s %llu bytes with %d rank%s in %.3f s: %.2f GB/s aggregate (%.2f GB/s per rank)",
              verb, (unsigned long long)bytes, nranks, nranks == 1 ? "" : "s", secs,
              bytes / secs / 1e9, bytes / secs / 1e9 / nranks);
}

/* ---- gen ----------------------------------------------------------------- */

static int pwrite_all(int fd, const void *buf, size_t n, uint64_t pos)
{
    const char *p = buf;
    while (n) {
        ssize_t w = pwrite(fd, p, n, (off_t)pos);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += w;
        n -= (size_t)w;
        pos += (uint64_t)w;
    }
    return 0;
}

/* This rank's part of one shared file: bytes [off, off+len) of the file. */
static int gen_part(const cli_mpi_job *j, int fd, const char *name, uint64_t off, uint64_t len)
{
    td_stream *s = NULL;
    int rc;

    if (len == 0)
        return 0;
    rc = td_stream_open(&s, j->s.kind, j->s.offset + off + len, &j->s.opt);
    if (rc == TD_OK)
        rc = td_stream_seek(s, j->s.offset + off);
    while (rc == TD_OK) {
        const void *chunk;
        size_t n;
        if (cli_interrupted()) {
            td_stream_free(s);
            return 1; /* the ranks agree on the failure; rank 0 cleans up */
        }
        rc = td_stream_next(s, &chunk, &n);
        if (rc != TD_OK)
            break;
        if (pwrite_all(fd, chunk, n, off) != 0) {
            rank_error("write error on", name, errno);
            td_stream_free(s);
            return 1;
        }
        off += n;
    }
    td_stream_free(s);
    if (rc < 0) {
        cli_error("rank %d: %s", rank, td_strerror(rc));
        return 1;
    }
    return 0;
}

static int gen_shared(const cli_mpi_job *j)
{
    td_output *out = NULL;
    char where[4096] = "";
    int fd = -1, st = 0;
    uint64_t off, len;
    double t0;

    /* Rank 0 opens the output; everyone then opens what it writes into. */
    if (rank == 0) {
        struct stat sb;
        if (td_output_open(&out, j->path, TD_IO_NAMED_TEMP) != TD_OK) {
            rank_error("cannot write", j->path, errno);
            st = 1;
        } else if (td_output_atomic(out)) {
            snprintf(where, sizeof where, "%s", td_output_temp_path(out));
            cli_signal_temp(td_output_temp_path(out)); /* removed by a second signal */
            if (ftruncate(td_output_fd(out), (off_t)j->s.size) != 0) {
                rank_error("cannot size", where, errno);
                st = 1;
            }
        } else if (fstat(td_output_fd(out), &sb) != 0 || !S_ISBLK(sb.st_mode)) {
            cli_error("gen --mpi needs a regular file or a block device: '%s'", j->path);
            st = 2;
        } else {
            snprintf(where, sizeof where, "%s", j->path);
        }
    }
    MPI_Bcast(&st, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (st) {
        if (out)
            td_output_abort(out);
        return st;
    }
    MPI_Bcast(where, sizeof where, MPI_CHAR, 0, MPI_COMM_WORLD);
    fd = rank == 0 ? td_output_fd(out) : open(where, O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
        rank_error("cannot open", where, errno);
        st = 1;
    }
    if (agree(st)) {
        if (rank != 0 && fd >= 0)
            close(fd);
        if (out) {
            cli_signal_temp(NULL);
            td_output_abort(out);
        }
        return 1;
    }
    td_split_range(j->s.size, (uint64_t)nranks, CLI_MPI_ALIGN, (uint64_t)rank, &off, &len);
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    st = gen_part(j, fd, where, off, len);
    if (rank != 0 && close(fd) != 0 && st == 0) {
        rank_error("write error on", where, errno);
        st = 1;
    }
    st = agree(st);
    if (rank == 0) {
        cli_signal_temp(NULL);
        if (st == 0 && td_output_commit(out) != TD_OK) {
            rank_error("cannot put in place", j->path, errno);
            st = 1;
        } else if (st != 0) {
            td_output_abort(out);
        }
    }
    MPI_Bcast(&st, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (st == 0)
        throughput(j, "wrote", j->s.size, MPI_Wtime() - t0);
    return st;
}

static int gen_files(const cli_mpi_job *j)
{
    td_io_options io;
    int st = 0;
    uint64_t f0, nf;
    double t0;
    char path[4096];

    if (rank == 0 && mkdir(j->path, 0777) != 0 && errno != EEXIST) {
        rank_error("cannot create directory", j->path, errno);
        st = 1;
    }
    MPI_Bcast(&st, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (st)
        return st;
    td_io_options_init(&io);
    io.progress = cli_progress_cb;
    io.ctx = &(cli_progress){0}; /* off: only the interruption check */
    td_split_range(j->files, (uint64_t)nranks, 1, (uint64_t)rank, &f0, &nf);
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    /* Signals are deferred (cli_mpi_module_gen): one ends the current file's write
     * cleanly through the progress callback. */
    for (uint64_t i = f0; i < f0 + nf && st == 0; i++) {
        uint64_t off, len;
        int rc;
        td_split_range(j->s.size, j->files, 1, i, &off, &len);
        shard_path(path, sizeof path, j->path, i);
        rc = td_write_file_ex(path, j->s.kind, j->s.offset + off, len, &j->s.opt, &io, NULL);
        if (rc == TD_EIO) {
            rank_error("cannot write", path, errno);
            st = 1;
        } else if (rc != TD_OK && rc != TD_ECANCELED) {
            cli_error("rank %d: %s: %s", rank, path, td_strerror(rc));
            st = 1;
        } else if (rc == TD_ECANCELED) {
            st = 1;
        }
    }
    st = agree(st);
    if (st == 0)
        throughput(j, "wrote", j->s.size, MPI_Wtime() - t0);
    return st;
}

int cli_mpi_module_gen(const cli_mpi_job *j)
{
    /* A signal (mpiexec forwards Ctrl-C to every rank) only sets a flag:
     * each rank stops writing, the ranks agree on the failure, rank 0
     * removes the temporary, and all finalize.  Ending at once instead
     * would let mpiexec kill rank 0 before it could clean up. */
    cli_defer_signals(1);
    start();
    if (!j->path) {
        if (rank == 0)
            cli_error("gen --mpi needs -o FILE (or -o DIR with --files M) (try 'testdata --help')");
        return finish(CLI_EXIT_USAGE);
    }
    if (j->s.size == TD_SIZE_UNBOUNDED) {
        if (rank == 0)
            cli_error("gen --mpi needs a bounded SIZE (try 'testdata --help')");
        return finish(CLI_EXIT_USAGE);
    }
    int st = finish(j->files ? gen_files(j) : gen_shared(j));
    return cli_interrupted() ? 128 + cli_interrupted() : st;
}

/* ---- verify -------------------------------------------------------------- */

/* What one rank found; reduced over all ranks. */
typedef struct tally {
    td_verify_result r; /* the ranges compared, positions in the whole data (td_verify_result_merge) */
    uint64_t short_first, nshort;   /* files: lowest short file index, count */
    uint64_t long_first, nlong;     /* files: lowest long file index, count */
    uint64_t missing_first, nmissing;
} tally;

/* Compare bytes [pos, pos+len) of fd with the data's bytes from data_off
 * on (stream offset j->s.offset + data_off). */
static int verify_range(const cli_mpi_job *j, int fd, const char *path, uint8_t *buf,
                        uint64_t pos, uint64_t len, uint64_t data_off, tally *t)
{
    td_verifier *v;
    td_verify_result r;
    uint64_t done = 0;
    int rc = td_verifier_new(&v, j->s.kind, &j->s.opt, j->s.offset + data_off, len);
    if (rc != TD_OK) {
        cli_error("rank %d: verify: %s", rank, td_strerror(rc));
        return 1;
    }
    while (done < len) {
        size_t want = len - done < CHUNK ? (size_t)(len - done) : CHUNK;
        ssize_t got = pread(fd, buf, want, (off_t)(pos + done));
        if (got < 0) {
            if (errno == EINTR)
                continue;
            rank_error("read error on", path, errno);
            td_verifier_free(v);
            return 1;
        }
        if (got == 0)
            break; /* shorter than stat said: the size checks report it */
        rc = td_verifier_update(v, buf, (size_t)got);
        if (rc != TD_OK) {
            cli_error("rank %d: verify: %s", rank, td_strerror(rc));
            td_verifier_free(v);
            return 1;
        }
        done += (uint64_t)got;
    }
    td_verifier_finish(v, &r);
    td_verifier_free(v);
    /* only what was compared: the sizes are checked apart */
    r.received = r.missing = r.extra = 0;
    r.status = TD_OK;
    (void)td_verify_result_merge(&t->r, &r, data_off);
    return 0;
}

/* Unsigned minimum as a user operation: MPICH 4.0's built-in MPI_MIN on
 * MPI_UINT64_T compares as signed (UINT64_MAX, "none", would win). */
static void u64_min(void *in, void *inout, int *len, MPI_Datatype *type)
{
    const uint64_t *a = in;
    uint64_t *b = inout;
    (void)type;
    for (int i = 0; i < *len; i++)
        if (a[i] < b[i])
            b[i] = a[i];
}

/* td_verify_result_merge as an MPI operation on whole td_verify_results. */
static void merge_results(void *in, void *inout, int *len, MPI_Datatype *type)
{
    const td_verify_result *a = in;
    td_verify_result *b = inout;
    (void)type;
    for (int i = 0; i < *len; i++)
        (void)td_verify_result_merge(&b[i], &a[i], 0);
}

static void reduce(tally *t)
{
    uint64_t mins[3] = {t->short_first, t->long_first, t->missing_first};
    uint64_t sums[3] = {t->nshort, t->nlong, t->nmissing};
    uint64_t rmins[3], rsums[3];
    td_verify_result rr;
    MPI_Datatype vr;
    MPI_Op op_min, op_merge;
    MPI_Op_create(u64_min, 1, &op_min);
    MPI_Reduce(mins, rmins, 3, MPI_UINT64_T, op_min, 0, MPI_COMM_WORLD);
    MPI_Op_free(&op_min);
    MPI_Reduce(sums, rsums, 3, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Type_contiguous((int)sizeof(td_verify_result), MPI_BYTE, &vr);
    MPI_Type_commit(&vr);
    MPI_Op_create(merge_results, 1, &op_merge);
    MPI_Reduce(&t->r, &rr, 1, vr, op_merge, 0, MPI_COMM_WORLD);
    MPI_Op_free(&op_merge);
    MPI_Type_free(&vr);
    if (rank == 0) {
        t->r = rr;
        t->short_first = rmins[0];
        t->long_first = rmins[1];
        t->missing_first = rmins[2];
        t->nshort = rsums[0];
        t->nlong = rsums[1];
        t->nmissing = rsums[2];
    }
}

static int verify_shared(const cli_mpi_job *j, tally *t, uint64_t *fsize, uint8_t *buf)
{
    struct stat sb;
    uint64_t off, len;
    int fd = open(j->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        rank_error("cannot open", j->path, errno);
        return 1;
    }
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        cli_error("rank %d: verify --mpi needs a regular file: '%s'", rank, j->path);
        close(fd);
        return 2;
    }
    *fsize = (uint64_t)sb.st_size;
    td_split_range(j->s.size, (uint64_t)nranks, CLI_MPI_ALIGN, (uint64_t)rank, &off, &len);
    if (off >= *fsize)
        len = 0;
    else if (len > *fsize - off)
        len = *fsize - off;
    (void)posix_fadvise(fd, (off_t)off, (off_t)len, POSIX_FADV_SEQUENTIAL);
    int st = verify_range(j, fd, j->path, buf, off, len, off, t);
    close(fd);
    return st;
}

static int verify_files(const cli_mpi_job *j, tally *t, uint8_t *buf)
{
    uint64_t f0, nf;
    char path[4096];
    int st = 0;

    td_split_range(j->files, (uint64_t)nranks, 1, (uint64_t)rank, &f0, &nf);
    for (uint64_t i = f0; i < f0 + nf && st == 0; i++) {
        uint64_t off, len;
        struct stat sb;
        td_split_range(j->s.size, j->files, 1, i, &off, &len);
        shard_path(path, sizeof path, j->path, i);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            if (errno != ENOENT) {
                rank_error("cannot open", path, errno);
                return 1;
            }
            if (i < t->missing_first)
                t->missing_first = i;
            t->nmissing++;
            continue;
        }
        if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
            cli_error("rank %d: not a regular file: '%s'", rank, path);
            close(fd);
            return 1;
        }
        uint64_t fsize = (uint64_t)sb.st_size;
        if (fsize < len) {
            if (i < t->short_first)
                t->short_first = i;
            t->nshort++;
        } else if (fsize > len) {
            if (i < t->long_first)
                t->long_first = i;
            t->nlong++;
        }
        st = verify_range(j, fd, path, buf, 0, fsize < len ? fsize : len, off, t);
        close(fd);
    }
    return st;
}

static void report_file(const char *what, const cli_mpi_job *j, uint64_t first, uint64_t n)
{
    char path[4096];
    shard_path(path, sizeof path, j->path, first);
    cli_error("%llu file%s %s, the first '%s'", (unsigned long long)n, n == 1 ? "" : "s", what,
              path);
}

int cli_mpi_module_verify(const cli_mpi_job *j)
{
    tally t = {.short_first = UINT64_MAX, .long_first = UINT64_MAX, .missing_first = UINT64_MAX};
    uint64_t fsize = 0;
    uint8_t *buf;
    double t0;
    int st;

    start();
    if (!j->path || strcmp(j->path, "-") == 0) {
        if (rank == 0)
            cli_error("verify --mpi needs a FILE (or DIR with --files M), not stdin "
                      "(try 'testdata --help')");
        return finish(CLI_EXIT_USAGE);
    }
    if (j->s.size == TD_SIZE_UNBOUNDED) {
        if (rank == 0)
            cli_error("verify --mpi needs a bounded SIZE (try 'testdata --help')");
        return finish(CLI_EXIT_USAGE);
    }
    buf = malloc(CHUNK);
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    if (!buf) {
        cli_error("rank %d: out of memory", rank);
        st = 1;
    } else {
        st = j->files ? verify_files(j, &t, buf) : verify_shared(j, &t, &fsize, buf);
    }
    free(buf);
    st = agree(st);
    if (st)
        return finish(st);
    reduce(&t);
    double secs = MPI_Wtime() - t0;
    if (rank == 0) {
        /* The whole data set as one verification, worded by the library. */
        td_verify_result r = t.r;
        r.offset = j->s.offset;
        r.expected = j->s.size;
        r.received = j->files ? r.compared : fsize;
        if (!j->files && fsize < j->s.size)
            r.missing = j->s.size - fsize;
        if (!j->files && fsize > j->s.size)
            r.extra = fsize - j->s.size;
        if (r.mismatches || r.missing || r.extra) {
            char msg[1024];
            td_verify_message(&r, j->path, msg, sizeof msg);
            cli_error_lines(msg);
            st = 1;
        }
        if (j->files && r.mismatches) {
            uint64_t per = j->s.size / j->files + (j->s.size % j->files != 0);
            char path[4096];
            shard_path(path, sizeof path, j->path, r.first_mismatch / per);
            cli_error("the first difference is in '%s' at byte %llu", path,
                      (unsigned long long)(r.first_mismatch % per));
        }
        if (t.nmissing) {
            report_file("missing", j, t.missing_first, t.nmissing);
            st = 1;
        }
        if (t.nshort) {
            report_file("short", j, t.short_first, t.nshort);
            st = 1;
        }
        if (t.nlong) {
            report_file("long", j, t.long_first, t.nlong);
            st = 1;
        }
        if (st == 0)
            throughput(j, "verified", r.compared, secs);
    }
    MPI_Bcast(&st, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return finish(st);
}

/* ---- tree gen|verify --mpi ------------------------------------------------ */

/* Findings of this rank, as lines, printed in rank order at the end. */
typedef struct lines {
    char *buf;
    size_t len, cap;
} lines;

static int tree_collect(void *ctx, const td_tree_finding *f)
{
    lines *l = ctx;
    char line[1024];
    td_tree_finding_message(f, line, sizeof line);
    size_t n = strlen(line);
    if (l->len + n + 12 > l->cap) {
        size_t nc = (l->cap ? 2 * l->cap : 4096) + n + 12;
        char *p = realloc(l->buf, nc);
        if (!p)
            return 0;
        l->buf = p;
        l->cap = nc;
    }
    memcpy(l->buf + l->len, "testdata: ", 10);
    l->len += 10;
    memcpy(l->buf + l->len, line, n);
    l->len += n;
    l->buf[l->len++] = '\n';
    l->buf[l->len] = '\0';
    return cli_interrupted() != 0;
}

static int tree_progress(void *ctx, uint64_t files, uint64_t bytes)
{
    (void)ctx;
    (void)files;
    (void)bytes;
    return cli_interrupted() != 0;
}

int cli_mpi_module_tree(const td_tree *t, const char *dir, int verify, uint32_t flags,
                        int quiet)
{
    td_tree_io io;
    td_tree_result res, ex;
    lines l = {0}, xl = {0};
    char where[512];
    uint64_t f0, nf, n = td_tree_count(t), mine[8], all[8];
    int st = 0, rc;
    double t0;

    cli_defer_signals(1);
    start();
    td_split_range(n ? n : 1, (uint64_t)nranks, 1, (uint64_t)rank, &f0, &nf);
    if (!n)
        nf = 0;
    td_tree_io_init(&io);
    io.progress = tree_progress;
    memset(&res, 0, sizeof res);
    if (!verify && rank == 0) {
        /* The top directory first, so that no rank finds it missing. */
        io.count = 0;
        if (td_tree_write(t, dir, &io, &res, where, sizeof where) != TD_OK) {
            rank_error("cannot create directory", dir, res.error);
            st = 1;
        }
    }
    MPI_Bcast(&st, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (st)
        return finish(st);
    io.first = f0;
    io.count = nf;
    io.flags = flags | (verify ? TD_TREE_NO_EXTRA : 0);
    io.report = tree_collect;
    io.ctx = &l;
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    if (verify) {
        rc = td_tree_verify(t, dir, &io, &res);
        if ((rc == TD_OK || rc == TD_EMISMATCH) && rank == 0) {
            /* extra entries: rank 0 alone, after its files */
            io.flags = TD_TREE_EXTRA_ONLY;
            io.first = 0;
            io.count = 0;
            io.ctx = &xl;
            int xr = td_tree_verify(t, dir, &io, &ex);
            res.extra = ex.extra;
            if (rc == TD_OK)
                rc = xr;
        }
        if (rc == TD_EIO)
            rank_error("cannot read", dir, errno);
        st = rc == TD_OK ? 0 : 1;
    } else {
        rc = td_tree_write(t, dir, &io, &res, where, sizeof where);
        if (rc == TD_EIO)
            cli_error("rank %d: cannot write '%s/%s': %s", rank, dir, where, cli_tree_why(res.error));
        else if (rc != TD_OK && rc != TD_ECANCELED)
            cli_error("rank %d: %s", rank, td_strerror(rc));
        st = rc == TD_OK ? 0 : 1;
    }
    st = agree(st);
    /* Findings in rank order, which is file order, all printed by rank 0:
     * mpiexec forwards each rank's stderr on its own, in no fixed order. */
    {
        int mylen = quiet ? 0 : (int)(l.len < (1u << 30) ? l.len : (1u << 30)), *lens = NULL, *offs = NULL;
        char *all_lines = NULL;
        if (rank == 0) {
            lens = calloc((size_t)nranks, sizeof *lens);
            offs = calloc((size_t)nranks, sizeof *offs);
        }
        MPI_Gather(&mylen, 1, MPI_INT, lens, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            size_t tot = 0;
            for (int r = 0; r < nranks; r++) {
                offs[r] = (int)tot;
                tot += (size_t)lens[r];
            }
            all_lines = malloc(tot + 1);
        }
        MPI_Gatherv(l.buf, mylen, MPI_CHAR, all_lines, lens, offs, MPI_CHAR, 0, MPI_COMM_WORLD);
        if (rank == 0 && all_lines) {
            int tot = offs[nranks - 1] + lens[nranks - 1];
            fwrite(all_lines, 1, (size_t)tot, stderr);
        }
        free(all_lines);
        free(lens);
        free(offs);
    }
    if (xl.len && !quiet) /* rank 0's extra entries, after every file */
        fputs(xl.buf, stderr);
    free(l.buf);
    free(xl.buf);
    mine[0] = res.files, mine[1] = res.bytes, mine[2] = res.missing, mine[3] = res.wrong_size;
    mine[4] = res.changed, mine[5] = res.extra, mine[6] = res.unreadable, mine[7] = res.skipped;
    MPI_Reduce(mine, all, 8, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        td_tree_result sum;
        memset(&sum, 0, sizeof sum);
        sum.files = all[0], sum.bytes = all[1], sum.missing = all[2], sum.wrong_size = all[3];
        sum.changed = all[4], sum.extra = all[5], sum.unreadable = all[6], sum.skipped = all[7];
        if (verify && st && !quiet &&
            sum.missing + sum.wrong_size + sum.changed + sum.extra + sum.unreadable)
            cli_tree_verdict(dir, &sum, n);
        if (!st && !quiet) {
            double secs = MPI_Wtime() - t0;
            if (secs <= 0)
                secs = 1e-9;
            cli_error("%s %llu files, %llu bytes with %d rank%s in %.3f s: %.0f files/s, "
                      "%.2f GB/s aggregate", verify ? "verified" : "wrote",
                      (unsigned long long)sum.files, (unsigned long long)sum.bytes, nranks,
                      nranks == 1 ? "" : "s", secs, (double)sum.files / secs,
                      (double)sum.bytes / secs / 1e9);
        }
    }
    return finish(st);
}

#endif /* TD_HAVE_MPI */
