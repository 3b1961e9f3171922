/*
 * testdata gen|verify --mpi: every rank of an MPI job writes or checks its
 * own part of the output, with plain POSIX I/O on a shared file system.
 *
 * One shared file (gen -o FILE --mpi, verify FILE --mpi): rank r of N takes
 * td_split_range(SIZE, N, 1 MiB, r) of the file, i.e. the same bytes a
 * single `testdata gen` writes at those positions; rank 0 creates and sizes
 * the file first.  M files (--files M, DIR): file i is DIR/part-%06d with
 * bytes td_split_range(SIZE, M, 1, i) (P = ceil(SIZE/M): [i*P, min((i+1)*P,
 * SIZE)), shifted by --offset) and is written whole by one rank with
 * td_write_file_at, rank r taking files td_split_range(M, N, 1, r).
 *
 * Failures are agreed on with reductions, so every rank exits with the same
 * status; rank 0 prints the summary and the aggregate throughput.
 */
#define _GNU_SOURCE
#include "mpi_mode.h"

#include <stdio.h>

#ifndef TD_HAVE_MPI

int td_mpi_gen(const td_mpi_job *job)
{
    (void)job;
    fputs("testdata: --mpi: this testdata was built without MPI\n", stderr);
    return 2;
}

int td_mpi_verify(const td_mpi_job *job)
{
    return td_mpi_gen(job);
}

#else

#include <mpi.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
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
    fprintf(stderr, "testdata: rank %d: %s '%s': %s\n", rank, what, path, strerror(err));
}

static void shard_path(char *buf, size_t cap, const char *dir, uint64_t i)
{
    size_t n = strlen(dir);
    snprintf(buf, cap, "%s%s" TD_MPI_SHARD_NAME, dir, n && dir[n - 1] == '/' ? "" : "/",
             (unsigned long long)i);
}

static void throughput(const td_mpi_job *j, const char *verb, uint64_t bytes, double secs)
{
    if (rank != 0 || j->quiet)
        return;
    if (secs <= 0)
        secs = 1e-9;
    fprintf(stderr,
            "testdata: %s %llu bytes with %d rank%s in %.3f s: %.2f GB/s aggregate "
            "(%.2f GB/s per rank)\n",
            verb, (unsigned long long)bytes, nranks, nranks == 1 ? "" : "s", secs,
            bytes / secs / 1e9, bytes / secs / 1e9 / nranks);
}

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

/* ---- gen ----------------------------------------------------------------- */

/* This rank's part of one shared file: bytes [off, off+len) of the file. */
static int gen_part(const td_mpi_job *j, int fd, uint64_t off, uint64_t len)
{
    td_stream *s = NULL;
    int rc;

    if (len == 0)
        return 0;
    rc = td_stream_open(&s, j->kind, j->offset + off + len, &j->opt);
    if (rc == TD_OK)
        rc = td_stream_seek(s, j->offset + off);
    while (rc == TD_OK) {
        const void *chunk;
        size_t n;
        rc = td_stream_next(s, &chunk, &n);
        if (rc != TD_OK)
            break;
        if (pwrite_all(fd, chunk, n, off) != 0) {
            rank_error("write error on", j->path, errno);
            td_stream_free(s);
            return 1;
        }
        off += n;
    }
    td_stream_free(s);
    if (rc < 0) {
        fprintf(stderr, "testdata: rank %d: %s\n", rank, td_strerror(rc));
        return 1;
    }
    return 0;
}

static int gen_shared(const td_mpi_job *j)
{
    int fd = -1, st = 0, removable = 0;
    uint64_t off, len;
    double t0;

    /* Rank 0 creates (truncates) and sizes the file; then everyone opens it. */
    if (rank == 0) {
        struct stat sb;
        fd = open(j->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
        if (fd < 0) {
            rank_error("cannot open", j->path, errno);
            st = 1;
        } else if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode)) {
            removable = 1;
            if (ftruncate(fd, (off_t)j->size) != 0) {
                rank_error("cannot size", j->path, errno);
                st = 1;
            }
        }
    }
    MPI_Bcast(&st, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (st)
        goto out;
    if (rank != 0) {
        fd = open(j->path, O_WRONLY | O_CLOEXEC);
        if (fd < 0) {
            rank_error("cannot open", j->path, errno);
            st = 1;
        }
    }
    if (agree(st)) {
        st = 1;
        goto out;
    }
    td_split_range(j->size, (uint64_t)nranks, TD_MPI_ALIGN, (uint64_t)rank, &off, &len);
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    st = gen_part(j, fd, off, len);
    if (close(fd) != 0 && st == 0) {
        rank_error("write error on", j->path, errno);
        st = 1;
    }
    fd = -1;
    st = agree(st);
    if (st == 0)
        throughput(j, "wrote", j->size, MPI_Wtime() - t0);
out:
    if (fd >= 0)
        close(fd);
    if (st && rank == 0 && removable && unlink(j->path) == 0)
        fprintf(stderr, "testdata: removed the incomplete '%s'\n", j->path);
    return st;
}

static int gen_files(const td_mpi_job *j)
{
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
    td_split_range(j->files, (uint64_t)nranks, 1, (uint64_t)rank, &f0, &nf);
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (uint64_t i = f0; i < f0 + nf && st == 0; i++) {
        uint64_t off, len;
        int rc;
        td_split_range(j->size, j->files, 1, i, &off, &len);
        shard_path(path, sizeof path, j->path, i);
        rc = td_write_file_at(path, (td_kind)j->kind, j->offset + off, len, &j->opt);
        if (rc == TD_EIO) {
            rank_error("cannot write", path, errno);
            st = 1;
        } else if (rc != TD_OK) {
            fprintf(stderr, "testdata: rank %d: %s: %s\n", rank, path, td_strerror(rc));
            st = 1;
        }
    }
    st = agree(st);
    if (st == 0)
        throughput(j, "wrote", j->size, MPI_Wtime() - t0);
    return st;
}

int td_mpi_gen(const td_mpi_job *j)
{
    start();
    if (!j->path) {
        if (rank == 0)
            fputs("testdata: gen --mpi needs -o FILE (or -o DIR with --files M) "
                  "(try 'testdata --help')\n", stderr);
        return finish(2);
    }
    if (j->size == TD_SIZE_UNBOUNDED) {
        if (rank == 0)
            fputs("testdata: gen --mpi needs a bounded SIZE (try 'testdata --help')\n", stderr);
        return finish(2);
    }
    return finish(j->files ? gen_files(j) : gen_shared(j));
}

/* ---- verify -------------------------------------------------------------- */

/* What one rank found; reduced over all ranks. */
typedef struct tally {
    uint64_t first;    /* lowest differing stream offset, UINT64_MAX: none */
    uint64_t bad;      /* differing bytes */
    uint64_t compared; /* bytes compared */
    uint64_t short_first, nshort;   /* files: lowest short file index, count */
    uint64_t long_first, nlong;     /* files: lowest long file index, count */
    uint64_t missing_first, nmissing;
} tally;

/* Compare bytes [pos, pos+len) of fd with stream bytes from stream_off on. */
static int verify_range(const td_mpi_job *j, int fd, const char *path, uint8_t *buf,
                        uint64_t pos, uint64_t len, uint64_t stream_off, tally *t)
{
    uint64_t done = 0;
    while (done < len) {
        size_t want = len - done < CHUNK ? (size_t)(len - done) : CHUNK;
        ssize_t got = pread(fd, buf, want, (off_t)(pos + done));
        if (got < 0) {
            if (errno == EINTR)
                continue;
            rank_error("read error on", path, errno);
            return 1;
        }
        if (got == 0)
            break; /* shorter than stat said: the size checks report it */
        uint64_t f = 0, c = 0;
        int rc = td_verify_count((td_kind)j->kind, &j->opt, stream_off + done, buf, (size_t)got,
                                 &f, &c);
        if (rc == TD_EMISMATCH) {
            if (f < t->first)
                t->first = f;
            t->bad += c;
        } else if (rc != TD_OK) {
            fprintf(stderr, "testdata: rank %d: verify: %s\n", rank, td_strerror(rc));
            return 1;
        }
        done += (uint64_t)got;
        t->compared += (uint64_t)got;
    }
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

static void reduce(tally *t)
{
    uint64_t mins[4] = {t->first, t->short_first, t->long_first, t->missing_first};
    uint64_t sums[5] = {t->bad, t->compared, t->nshort, t->nlong, t->nmissing};
    uint64_t rmins[4], rsums[5];
    MPI_Op op_min;
    MPI_Op_create(u64_min, 1, &op_min);
    MPI_Reduce(mins, rmins, 4, MPI_UINT64_T, op_min, 0, MPI_COMM_WORLD);
    MPI_Op_free(&op_min);
    MPI_Reduce(sums, rsums, 5, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        t->first = rmins[0];
        t->short_first = rmins[1];
        t->long_first = rmins[2];
        t->missing_first = rmins[3];
        t->bad = rsums[0];
        t->compared = rsums[1];
        t->nshort = rsums[2];
        t->nlong = rsums[3];
        t->nmissing = rsums[4];
    }
}

static int verify_shared(const td_mpi_job *j, tally *t, uint64_t *fsize, uint8_t *buf)
{
    struct stat sb;
    uint64_t off, len;
    int fd = open(j->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        rank_error("cannot open", j->path, errno);
        return 1;
    }
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        fprintf(stderr, "testdata: rank %d: verify --mpi needs a regular file: '%s'\n", rank,
                j->path);
        close(fd);
        return 2;
    }
    *fsize = (uint64_t)sb.st_size;
    td_split_range(j->size, (uint64_t)nranks, TD_MPI_ALIGN, (uint64_t)rank, &off, &len);
    if (off >= *fsize)
        len = 0;
    else if (len > *fsize - off)
        len = *fsize - off;
    (void)posix_fadvise(fd, (off_t)off, (off_t)len, POSIX_FADV_SEQUENTIAL);
    int st = verify_range(j, fd, j->path, buf, off, len, j->offset + off, t);
    close(fd);
    return st;
}

static int verify_files(const td_mpi_job *j, tally *t, uint8_t *buf)
{
    uint64_t f0, nf;
    char path[4096];
    int st = 0;

    td_split_range(j->files, (uint64_t)nranks, 1, (uint64_t)rank, &f0, &nf);
    for (uint64_t i = f0; i < f0 + nf && st == 0; i++) {
        uint64_t off, len;
        struct stat sb;
        td_split_range(j->size, j->files, 1, i, &off, &len);
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
            fprintf(stderr, "testdata: rank %d: not a regular file: '%s'\n", rank, path);
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
        st = verify_range(j, fd, path, buf, 0, fsize < len ? fsize : len, j->offset + off, t);
        close(fd);
    }
    return st;
}

static void report_file(const char *what, const td_mpi_job *j, uint64_t first, uint64_t n)
{
    char path[4096];
    shard_path(path, sizeof path, j->path, first);
    fprintf(stderr, "testdata: %llu file%s %s, the first '%s'\n", (unsigned long long)n,
            n == 1 ? "" : "s", what, path);
}

int td_mpi_verify(const td_mpi_job *j)
{
    tally t = {UINT64_MAX, 0, 0, UINT64_MAX, 0, UINT64_MAX, 0, UINT64_MAX, 0};
    uint64_t fsize = 0;
    uint8_t *buf;
    double t0;
    int st;

    start();
    if (!j->path || strcmp(j->path, "-") == 0) {
        if (rank == 0)
            fputs("testdata: verify --mpi needs a FILE (or DIR with --files M), not stdin "
                  "(try 'testdata --help')\n", stderr);
        return finish(2);
    }
    if (j->size == TD_SIZE_UNBOUNDED) {
        if (rank == 0)
            fputs("testdata: verify --mpi needs a bounded SIZE (try 'testdata --help')\n", stderr);
        return finish(2);
    }
    buf = malloc(CHUNK);
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    if (!buf) {
        fprintf(stderr, "testdata: rank %d: out of memory\n", rank);
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
        const char *name = j->path;
        if (t.bad) {
            uint64_t rel = t.first - j->offset;
            if (j->files) {
                uint64_t per = j->size / j->files + (j->size % j->files != 0);
                char path[4096];
                shard_path(path, sizeof path, j->path, rel / per);
                fprintf(stderr,
                        "testdata: %s differs from the stream: first difference at byte %llu "
                        "(in '%s' at byte %llu)",
                        name, (unsigned long long)rel, path, (unsigned long long)(rel % per));
            } else {
                fprintf(stderr, "testdata: %s differs from the stream: first difference at byte %llu",
                        name, (unsigned long long)rel);
            }
            if (j->offset)
                fprintf(stderr, " (stream offset %llu)", (unsigned long long)t.first);
            fprintf(stderr, ", %llu differing byte%s in %llu compared\n", (unsigned long long)t.bad,
                    t.bad == 1 ? "" : "s", (unsigned long long)t.compared);
            st = 1;
        }
        if (j->files) {
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
        } else if (fsize < j->size) {
            fprintf(stderr, "testdata: %s is short: %llu of %llu bytes, %llu missing\n", name,
                    (unsigned long long)fsize, (unsigned long long)j->size,
                    (unsigned long long)(j->size - fsize));
            st = 1;
        } else if (fsize > j->size) {
            fprintf(stderr, "testdata: %s is long: more than %llu bytes (%llu extra)\n", name,
                    (unsigned long long)j->size, (unsigned long long)(fsize - j->size));
            st = 1;
        }
        if (st == 0)
            throughput(j, "verified", t.compared, secs);
    }
    MPI_Bcast(&st, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return finish(st);
}

#endif /* TD_HAVE_MPI */
