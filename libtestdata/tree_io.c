/*
 * File trees on a file system: td_tree_write, td_tree_verify, td_tree_scan.
 *
 * Speed comes from the file system's side: files are taken in index order
 * (so directory by directory), each thread keeps its directory open and
 * creates files relative to it (td__output_openat: O_TMPFILE + linkat, no
 * path walk, no stat in a directory it just made), one generator serves
 * every file and thread, and buffers are allocated once per thread.
 * Memory does not grow with the number of files: threads claim chunks of
 * files from a counter, and verify findings wait in a bounded window of
 * chunks so that they are reported in file order.  Verify of a small file
 * is an open, one read and a share of a close_range; each directory is
 * read once, by the thread that checks its first files, and the pass for
 * extra entries reads again only where that found something.
 */
#define _GNU_SOURCE /* O_NOATIME, O_DIRECTORY, fdopendir */
#include "tree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/stat.h>
#ifdef __linux__
#include <sys/syscall.h>
#endif
#include <time.h>
#include <unistd.h>

#define CHUNK_FILES 32u
#define BUF_BYTES (1u << 20)
#define PROGRESS_FILES 64u
#define PROGRESS_BYTES (16u << 20)
/* Checked files a thread keeps open to close many in one system call. */
#define PEND_FDS 32u

typedef struct finding_rec {
    td_tree_finding f;
    char path[TD_TREE_PATH_MAX];
} finding_rec;

typedef struct slot {
    uint64_t chunk;  /* the chunk it holds */
    int done;
    size_t n, cap;
    finding_rec *rec;
} slot;

typedef struct job job;

typedef struct run {
    const td_tree *t;
    const td_tree_io *io;
    td_gen gen;
    int verify;
    int rootfd;
    const char *root;
    uint64_t first, end;       /* files [first, end) */
    uint64_t nchunks;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    uint64_t next_chunk;       /* claimed so far */
    uint64_t emitted;          /* chunks reported (verify) */
    unsigned window;
    slot *slots;
    int stop;                  /* cancel or failure: no new files */
    int rc;                    /* the first failure */
    int err;
    char errpath[TD_TREE_PATH_MAX];
    int active;                /* threads still working */
    /* Verify of the whole tree: bit d set once a worker has read directory
     * d and found only the tree's entries in it (scan_dir_entries), so the
     * pass for extra entries need not read it again.  NULL: that pass reads
     * every directory itself. */
    uint64_t *clean;
    unsigned pend_cap;         /* files a job keeps open at most (close_later) */
    uint64_t files_done, bytes_done;
    td_tree_result res;        /* counts, under mu */
    int canceled;
    td__file_id inputs[2];     /* the model and profile the data comes from: never replaced */
    int ninputs;
} run;

struct job {
    run *r;
    int caller;
    uint8_t *buf, *exp;        /* BUF_BYTES each */
    uint64_t dir;              /* the open directory, or UINT64_MAX */
    int dirfd, fresh;
    char dirpath[TD_TREE_PATH_MAX + 8];
    char *abspath;             /* root + "/" + dirpath */
    size_t abscap;
    uint64_t last_files, last_bytes;
    int pend[PEND_FDS];        /* checked files not closed yet */
    unsigned npend;
    pthread_t th;
    int started;
};

/* Wait on r->cv for at most 20 ms (mu held): the caller wakes up to
 * report progress (and notice Ctrl-C) while others work. */
static void wait_a_little(run *r)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 20000000;
    if (ts.tv_nsec >= 1000000000) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000;
    }
    pthread_cond_timedwait(&r->cv, &r->mu, &ts);
}

static int stopped(run *r)
{
    return __atomic_load_n(&r->stop, __ATOMIC_RELAXED);
}

static void fail(run *r, int rc, int err, const char *path)
{
    pthread_mutex_lock(&r->mu);
    if (r->rc == TD_OK) {
        r->rc = rc;
        r->err = err;
        (void)td__msg(r->errpath, sizeof r->errpath, "%s", path ? path : "");
    }
    __atomic_store_n(&r->stop, 1, __ATOMIC_RELAXED);
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

/* The caller's progress call; returns nonzero when it asked to stop. */
static int progress(job *j, int force)
{
    run *r = j->r;
    if (!j->caller || !r->io->progress)
        return 0;
    uint64_t f = __atomic_load_n(&r->files_done, __ATOMIC_RELAXED);
    uint64_t b = __atomic_load_n(&r->bytes_done, __ATOMIC_RELAXED);
    if (!force && f - j->last_files < PROGRESS_FILES && b - j->last_bytes < PROGRESS_BYTES)
        return 0;
    j->last_files = f;
    j->last_bytes = b;
    if (r->io->progress(r->io->ctx, f, b) != 0) {
        pthread_mutex_lock(&r->mu);
        r->canceled = 1;
        __atomic_store_n(&r->stop, 1, __ATOMIC_RELAXED);
        pthread_cond_broadcast(&r->cv);
        pthread_mutex_unlock(&r->mu);
        return 1;
    }
    return 0;
}

/* ---- descriptors ------------------------------------------------------- */

/* ThreadSanitizer does not see close_range: it would take the descriptors
 * for still open and report their next users (same numbers) as races, so
 * its builds close them one by one. */
#if defined(__SANITIZE_THREAD__)
#define TD_NO_CLOSE_RANGE 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TD_NO_CLOSE_RANGE 1
#endif
#endif

/* Close the files in j->pend: each run of consecutive descriptors (the
 * usual case: they were opened one after the other) in one close_range,
 * which is safe because they are all the job's own while it holds them
 * open.  Where close_range is missing it closes nothing: then one by one. */
static void close_pending(job *j)
{
    int *p = j->pend;
    unsigned n = j->npend;
    for (unsigned a = 1; a < n; a++) {
        int v = p[a];
        unsigned b = a;
        for (; b && p[b - 1] > v; b--)
            p[b] = p[b - 1];
        p[b] = v;
    }
    for (unsigned a = 0, b; a < n; a = b) {
        for (b = a + 1; b < n && p[b] == p[b - 1] + 1; b++)
            ;
#if defined(__linux__) && defined(SYS_close_range) && !defined(TD_NO_CLOSE_RANGE)
        if (b - a > 1 && syscall(SYS_close_range, (unsigned)p[a], (unsigned)p[b - 1], 0u) == 0)
            continue;
#endif
        for (unsigned k = a; k < b; k++)
            close(p[k]);
    }
    j->npend = 0;
}

/* fd (a file read and checked, a directory left) is closed with the next
 * few. */
static void close_later(job *j, int fd)
{
    j->pend[j->npend++] = fd;
    if (j->npend >= j->r->pend_cap)
        close_pending(j);
}

/* ---- directories --------------------------------------------------------- */

static void close_dir(job *j)
{
    if (j->dirfd >= 0 && j->dirfd != j->r->rootfd)
        close_later(j, j->dirfd); /* with the files: one run of descriptors */
    j->dirfd = -1;
    j->dir = UINT64_MAX;
}

/* Directory rel (a/b/c) under rootfd, level by level, following no
 * symlink: a link where a directory of the tree should be is not one
 * (ENOTDIR), so nothing is ever written or checked outside the tree.
 * With mk, missing levels are made (EEXIST is another thread's or run's
 * work) and *made tells whether the last one was.  The fd, or -1 (errno). */
static int open_beneath(int rootfd, char *rel, int mk, int *made)
{
    int fd = rootfd;
    char *p = rel;
    *made = 0;
    for (;;) {
        char *slash = strchr(p, '/');
        if (slash)
            *slash = '\0';
        int next = openat(fd, p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (next < 0 && errno == ENOENT && mk) {
            int ok = mkdirat(fd, p, 0777) == 0;
            if (!ok && errno != EEXIST)
                next = -1;
            else
                next = openat(fd, p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            *made = ok && next >= 0 && !slash;
        }
        int e = errno;
        if (slash)
            *slash = '/';
        if (fd != rootfd)
            close(fd);
        if (next < 0 || !slash) {
            errno = e;
            return next;
        }
        fd = next;
        p = slash + 1;
    }
}

/* Open directory d of the tree (making it and its parents when writing). */
static int open_dir(job *j, uint64_t d)
{
    run *r = j->r;
    size_t n;
    if (j->dir == d)
        return TD_OK;
    close_dir(j);
    /* the last directory and its files: usually one run of descriptors, and
     * the next directory's come after its own */
    close_pending(j);
    n = td__tree_dir_path(r->t, d, j->dirpath, sizeof j->dirpath);
    j->fresh = 0;
    if (n == 0) {
        j->dirfd = r->rootfd;
    } else {
        j->dirfd = open_beneath(r->rootfd, j->dirpath, !r->verify, &j->fresh);
        if (j->dirfd < 0)
            return j->r->verify && (errno == ENOENT || errno == ENOTDIR) ? TD_DONE : TD_EIO;
    }
    j->dir = d;
    size_t rl = strlen(r->root), need = rl + 2 + n;
    if (need > j->abscap) {
        char *p = realloc(j->abspath, need + 64);
        if (!p)
            return TD_ENOMEM;
        j->abspath = p;
        j->abscap = need + 64;
    }
    memcpy(j->abspath, r->root, rl);
    if (n) {
        j->abspath[rl] = '/';
        memcpy(j->abspath + rl + 1, j->dirpath, n + 1);
    } else {
        j->abspath[rl] = '\0';
    }
    return TD_OK;
}

/* ---- checking one file --------------------------------------------------- */

/* The finding for a file of f->actual bytes that should have size, with
 * bad differing bytes (the first at first_bad, or UINT64_MAX) among the
 * first cmp compared: 1 if wrong (a wrong size points at the first bad
 * byte, else at the end of the shorter), 0 if right. */
static int judge(td_tree_finding *f, uint64_t size, uint64_t cmp, uint64_t first_bad,
                 uint64_t bad)
{
    f->mismatches = bad;
    if (f->actual != size) {
        f->what = TD_TREE_WRONG_SIZE;
        f->first_bad = first_bad != UINT64_MAX ? first_bad : cmp;
        return 1;
    }
    if (bad) {
        f->what = TD_TREE_CHANGED;
        f->first_bad = first_bad;
        return 1;
    }
    return 0;
}

/* Compare the open file fd (st: its stat) with file i; fills *f and
 * returns 1 when something is wrong, 0 when it is right, <0 on
 * cancellation or a system error (errno). */
static int check_fd(job *j, int fd, const struct stat *st, uint64_t i, uint64_t size,
                    td_tree_finding *f)
{
    run *r = j->r;
    uint64_t off = 0, have = (uint64_t)st->st_size, cmp = TD_MIN(have, size);
    uint64_t first_bad = UINT64_MAX, bad = 0, base = i * TD_TREE_STRIDE;
    while (off < cmp) {
        size_t n = (size_t)TD_MIN((uint64_t)BUF_BYTES, cmp - off), got = 0;
        while (got < n) {
            ssize_t k = pread(fd, j->buf + got, n - got, (off_t)(off + got));
            if (k < 0 && errno == EINTR)
                continue;
            if (k < 0)
                return -1;
            if (k == 0)
                break;
            got += (size_t)k;
        }
        if (got < n) { /* shrank meanwhile */
            have = off + got;
            cmp = have;
            n = got;
        }
        int rc = td__gen_fill1(&r->gen, base + off, j->exp, n);
        if (rc != TD_OK) {
            errno = ENOMEM;
            return -1;
        }
        if (memcmp(j->buf, j->exp, n) != 0) {
            for (size_t k = 0; k < n; k++)
                if (j->buf[k] != j->exp[k]) {
                    if (first_bad == UINT64_MAX)
                        first_bad = off + k;
                    bad++;
                }
        }
        off += n;
        __atomic_add_fetch(&r->bytes_done, n, __ATOMIC_RELAXED);
        if (size > BUF_BYTES && (stopped(r) || progress(j, 0)))
            return -2;
    }
    memset(f, 0, sizeof *f);
    f->index = i;
    f->expected = size;
    f->actual = have;
    return judge(f, size, cmp, first_bad, bad);
}

/* Compare the first n bytes of j->buf with file i from its start; *first_bad
 * and *bad as in check_fd.  Returns 0, or -1 (errno) if the generator failed. */
static int compare_small(job *j, uint64_t i, size_t n, uint64_t *first_bad, uint64_t *bad)
{
    if (n && td__gen_fill1(&j->r->gen, i * TD_TREE_STRIDE, j->exp, n) != TD_OK) {
        errno = ENOMEM;
        return -1;
    }
    if (n && memcmp(j->buf, j->exp, n) != 0)
        for (size_t k = 0; k < n; k++)
            if (j->buf[k] != j->exp[k]) {
                if (*first_bad == UINT64_MAX)
                    *first_bad = k;
                (*bad)++;
            }
    __atomic_add_fetch(&j->r->bytes_done, n, __ATOMIC_RELAXED);
    return 0;
}

/* Verify file i in the open directory; 1 with *f filled when wrong, 0
 * when right, <0 when canceled.  A small file costs two system calls and
 * a share of a third: open, one read of size + 1 bytes (which also tells a
 * longer file and something that is not a regular file), and a close_range
 * of it and the next few (close_later). */
static int verify_one(job *j, const char *name, uint64_t i, uint64_t size, td_tree_finding *f)
{
    struct stat st;
    int rc, e;
    memset(f, 0, sizeof *f);
    f->index = i;
    f->expected = size;
    /* O_NOFOLLOW: a symlink where a file should be is not the file (ELOOP) */
    int fd = openat(j->dirfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOATIME |
                                        O_NOFOLLOW);
    if (fd < 0 && (errno == EMFILE || errno == ENFILE) && j->npend) {
        close_pending(j);
        fd = openat(j->dirfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOATIME |
                                        O_NOFOLLOW);
    }
    if (fd < 0 && errno == EPERM)
        fd = openat(j->dirfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW);
    if (fd < 0) {
        f->what = errno == ENOENT || errno == ENOTDIR || errno == ELOOP ? TD_TREE_MISSING
                                                                        : TD_TREE_UNREADABLE;
        f->error = errno;
        return 1;
    }
    if (size < BUF_BYTES) {
        size_t got = 0, want = (size_t)size + 1;
        ssize_t k = 0;
        while (got < want) {
            k = pread(fd, j->buf + got, want - got, (off_t)got);
            if (k < 0 && errno == EINTR)
                continue;
            if (k <= 0)
                break;
            got += (size_t)k;
            /* A regular file reads short only at its end (POSIX), so the
             * expected size read short ends the check; a shorter file, or
             * something else, still reads on until 0 or an error. */
            if (got == (size_t)size)
                break;
        }
        if (k < 0 && (errno == EISDIR || errno == ESPIPE || errno == EINVAL)) {
            f->what = TD_TREE_MISSING; /* a directory, FIFO ... where a file should be */
            close(fd);
            return 1;
        }
        if (k < 0) {
            f->what = TD_TREE_UNREADABLE;
            f->error = errno;
            close(fd);
            return 1;
        }
        uint64_t first_bad = UINT64_MAX, bad = 0, cmp = TD_MIN(got, (size_t)size);
        rc = compare_small(j, i, (size_t)cmp, &first_bad, &bad);
        e = errno;
        f->actual = got;
        if (rc == 0 && got > size && fstat(fd, &st) == 0)
            f->actual = (uint64_t)st.st_size > got ? (uint64_t)st.st_size : got;
        close_later(j, fd);
        if (rc < 0) {
            f->what = TD_TREE_UNREADABLE;
            f->error = e;
            return 1;
        }
        return judge(f, size, cmp, first_bad, bad);
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        f->what = TD_TREE_MISSING; /* a directory, FIFO ... where a file should be */
        close(fd);
        return 1;
    }
    rc = check_fd(j, fd, &st, i, size, f);
    e = errno;
    close(fd);
    if (rc == -1) {
        memset(f, 0, sizeof *f);
        f->index = i;
        f->expected = size;
        f->what = TD_TREE_UNREADABLE;
        f->error = e;
        return 1;
    }
    return rc;
}

/* ---- writing one file ---------------------------------------------------- */

static int write_one(job *j, const char *name, uint64_t i, uint64_t size)
{
    run *r = j->r;
    td_output *out;
    uint64_t base = i * TD_TREE_STRIDE, off = 0;
    int rc;

    if ((r->io->flags & TD_TREE_RESUME) && !j->fresh) {
        td_tree_finding f;
        struct stat st;
        if (fstatat(j->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
            (uint64_t)st.st_size == size) {
            rc = verify_one(j, name, i, size, &f);
            if (rc < 0)
                return TD_ECANCELED;
            if (rc == 0) {
                pthread_mutex_lock(&r->mu);
                r->res.skipped++;
                pthread_mutex_unlock(&r->mu);
                return TD_OK;
            }
            __atomic_sub_fetch(&r->bytes_done, size, __ATOMIC_RELAXED);
        }
    }
    /* An output never replaces an input: a text model or profile kept in
     * DIR under a file's name would be lost to the data made from it. */
    rc = td__output_openat(&out, j->dirfd, j->abspath, name, j->fresh, r->inputs, r->ninputs);
    if (rc != TD_OK)
        return rc;
    while (off < size) {
        size_t n = (size_t)TD_MIN((uint64_t)BUF_BYTES, size - off);
        rc = td__gen_fill1(&r->gen, base + off, j->buf, n);
        if (rc == TD_OK)
            rc = td_output_write(out, j->buf, n);
        if (rc != TD_OK)
            break;
        off += n;
        __atomic_add_fetch(&r->bytes_done, n, __ATOMIC_RELAXED);
        if (size > BUF_BYTES && (stopped(r) || progress(j, 0))) {
            rc = TD_ECANCELED;
            break;
        }
    }
    if (rc == TD_OK)
        return td_output_commit(out);
    int e = errno;
    td_output_abort(out);
    errno = e;
    return rc;
}

/* ---- the workers --------------------------------------------------------- */

static void add_finding(slot *s, const td_tree_finding *f, const char *path)
{
    if (s->n == s->cap) {
        size_t nc = s->cap ? 2 * s->cap : 8;
        finding_rec *p = realloc(s->rec, nc * sizeof *p);
        if (!p)
            return; /* counted all the same; only the line is lost */
        s->rec = p;
        s->cap = nc;
    }
    s->rec[s->n].f = *f;
    (void)td__msg(s->rec[s->n].path, sizeof s->rec[s->n].path, "%s", path);
    s->rec[s->n].f.path = NULL;
    s->n++;
}

static void count_finding(td_tree_result *res, int what)
{
    switch (what) {
    case TD_TREE_MISSING: res->missing++; break;
    case TD_TREE_WRONG_SIZE: res->wrong_size++; break;
    case TD_TREE_CHANGED: res->changed++; break;
    case TD_TREE_EXTRA: res->extra++; break;
    default: res->unreadable++; break;
    }
}

/* Report the findings of finished chunks in order (mu held). */
static void emit_ready(run *r)
{
    while (r->emitted < r->nchunks) {
        slot *s = &r->slots[r->emitted % r->window];
        if (!s->done || s->chunk != r->emitted)
            break;
        for (size_t k = 0; k < s->n; k++) {
            s->rec[k].f.path = s->rec[k].path;
            if (r->io->report && !r->canceled && r->io->report(r->io->ctx, &s->rec[k].f) != 0) {
                r->canceled = 1;
                __atomic_store_n(&r->stop, 1, __ATOMIC_RELAXED);
            }
        }
        s->n = 0;
        s->done = 0;
        r->emitted++;
        pthread_cond_broadcast(&r->cv);
    }
}

static int is_tree_subdir(const td_tree *t, unsigned level, const char *name, int isdir);

/* Level of directory d (0: the top). */
static unsigned dir_level(const td_tree *t, uint64_t d)
{
    unsigned l = 0;
    while (l < t->depth && t->level_first[l + 1] <= d)
        l++;
    return l;
}

/* The first directory whose files start at or after file i: the smallest
 * d with floor(d n / ndirs) >= i. */
static uint64_t dir_from(const td_tree *t, uint64_t i)
{
    return (uint64_t)(((unsigned __int128)i * t->ndirs + t->n - 1) / t->n);
}

/* Read directory d (opened as the job's directory, where its files are
 * checked next) and set its bit in r->clean when it holds nothing but
 * files of d and real subdirectories with tree names: what the pass for
 * extra entries would find nothing in.  Anything else (an extra entry, a
 * d_type the file system does not give, an error) leaves the bit clear, and
 * that pass reads the directory as before. */
static void scan_dir_entries(job *j, uint64_t d)
{
#if defined(__linux__) && defined(__GLIBC__)
    run *r = j->r;
    const td_tree *t = r->t;
    unsigned level = dir_level(t, d);
    int ok = 1, fd;
    if (open_dir(j, d) != TD_OK)
        return;
    /* the top's descriptor is shared by the threads: its own one for reading */
    fd = d == 0 ? openat(r->rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC) : j->dirfd;
    if (fd < 0)
        return;
    for (;;) {
        ssize_t n = getdents64(fd, j->exp, BUF_BYTES);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            ok = n == 0;
            break;
        }
        for (ssize_t off = 0; off < n && ok;) {
            const struct dirent64 *e = (const struct dirent64 *)(const void *)(j->exp + off);
            const char *nm = e->d_name;
            off += e->d_reclen;
            if (nm[0] == '.' && (nm[1] == '\0' || (nm[1] == '.' && nm[2] == '\0')))
                continue;
            if (td__tree_name_index(t, d, nm) != UINT64_MAX)
                continue;
            ok = is_tree_subdir(t, level, nm, e->d_type == DT_DIR);
        }
        if (!ok)
            break;
    }
    if (fd != j->dirfd)
        close(fd);
    if (ok)
        __atomic_or_fetch(&r->clean[d / 64], UINT64_C(1) << (d % 64), __ATOMIC_RELAXED);
#else
    (void)j;
    (void)d;
#endif
}

static void do_chunk(job *j, uint64_t c, slot *s)
{
    run *r = j->r;
    const td_tree *t = r->t;
    uint64_t a = r->first + c * CHUNK_FILES, b = TD_MIN(a + CHUNK_FILES, r->end);
    char name[64], rel[TD_TREE_PATH_MAX];
    /* counted here and added to r->res once per chunk: no lock per file */
    td_tree_result loc;
    memset(&loc, 0, sizeof loc);
    /* With r->clean, the chunk also reads the directories whose files start
     * in it (the last chunk: all the rest), each when its files come. */
    uint64_t dnext = r->clean ? dir_from(t, a) : 0;
    uint64_t dend = !r->clean ? 0 : b == r->end ? t->ndirs : dir_from(t, b);
    for (uint64_t i = a; i < b && !stopped(r); i++) {
        uint64_t d = td__tree_file_dir(t, i), size = td__tree_size(t, i);
        for (; dnext < dend && dnext <= d; dnext++)
            scan_dir_entries(j, dnext);
        int rc = open_dir(j, d);
        td__tree_file_name(t, i, name, sizeof name);
        if (r->verify) {
            td_tree_finding f;
            int bad;
            if (rc == TD_DONE) { /* the directory is missing: so is the file */
                memset(&f, 0, sizeof f);
                f.what = TD_TREE_MISSING;
                f.index = i;
                f.expected = size;
                bad = 1;
            } else if (rc != TD_OK) {
                fail(r, rc, errno, j->dirpath);
                goto out;
            } else {
                bad = verify_one(j, name, i, size, &f);
            }
            if (bad < 0)
                goto out;
            if (bad) { /* the slot is this chunk's alone until it is done */
                count_finding(&loc, f.what);
                size_t n = td__tree_dir_path(t, d, rel, sizeof rel);
                (void)td__msg(rel + n, sizeof rel - n, "%s%s", n ? "/" : "", name);
                add_finding(s, &f, rel);
            } else {
                loc.ok++;
            }
            loc.files++;
        } else {
            if (rc == TD_OK)
                rc = write_one(j, name, i, size);
            if (rc == TD_ECANCELED)
                goto out;
            if (rc != TD_OK) {
                size_t n = td__tree_dir_path(t, d, rel, sizeof rel);
                int e = errno;
                (void)td__msg(rel + n, sizeof rel - n, "%s%s", n ? "/" : "", name);
                fail(r, rc, e, rel);
                goto out;
            }
            loc.files++;
        }
        __atomic_add_fetch(&r->files_done, 1, __ATOMIC_RELAXED);
        if (progress(j, 0))
            goto out;
    }
    for (; dnext < dend && !stopped(r); dnext++)
        scan_dir_entries(j, dnext);
out:
    pthread_mutex_lock(&r->mu);
    r->res.files += loc.files;
    r->res.ok += loc.ok;
    r->res.missing += loc.missing;
    r->res.wrong_size += loc.wrong_size;
    r->res.changed += loc.changed;
    r->res.extra += loc.extra;
    r->res.unreadable += loc.unreadable;
    pthread_mutex_unlock(&r->mu);
}

static void *worker(void *arg)
{
    job *j = arg;
    run *r = j->r;
    for (;;) {
        uint64_t c;
        slot *s = NULL;
        pthread_mutex_lock(&r->mu);
        /* Verify: a chunk's findings wait in a slot of the window until
         * those of every chunk before it are reported. */
        while (!r->stop && r->next_chunk < r->nchunks && r->verify &&
               r->next_chunk >= r->emitted + r->window) {
            if (j->caller) {
                wait_a_little(r);
                pthread_mutex_unlock(&r->mu);
                progress(j, 1);
                pthread_mutex_lock(&r->mu);
            } else {
                pthread_cond_wait(&r->cv, &r->mu);
            }
        }
        if (r->stop || r->next_chunk >= r->nchunks) {
            pthread_mutex_unlock(&r->mu);
            break;
        }
        c = r->next_chunk++;
        if (r->verify) {
            s = &r->slots[c % r->window];
            s->chunk = c;
            s->n = 0;
            s->done = 0;
        }
        pthread_mutex_unlock(&r->mu);
        do_chunk(j, c, s);
        if (r->verify) {
            pthread_mutex_lock(&r->mu);
            s->done = 1;
            emit_ready(r);
            pthread_mutex_unlock(&r->mu);
        }
    }
    close_dir(j);
    close_pending(j);
    pthread_mutex_lock(&r->mu);
    r->active--;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

/* mkdir -p */
static int make_root(const char *dir)
{
    char *p = strdup(dir);
    if (!p)
        return TD_ENOMEM;
    for (char *s = p + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        if (mkdir(p, 0777) != 0 && errno != EEXIST) {
            int e = errno;
            free(p);
            errno = e;
            return TD_EIO;
        }
        *s = '/';
    }
    int rc = mkdir(p, 0777) == 0 || errno == EEXIST ? TD_OK : TD_EIO;
    int e = errno;
    free(p);
    errno = e;
    return rc;
}

/* ---- extra entries -------------------------------------------------------- */

typedef struct names {
    char **v;
    size_t n, cap;
} names;

static int names_add(names *l, const char *s)
{
    if (l->n == l->cap) {
        size_t nc = l->cap ? 2 * l->cap : 16;
        char **p = realloc(l->v, nc * sizeof *p);
        if (!p)
            return TD_ENOMEM;
        l->v = p;
        l->cap = nc;
    }
    if (!(l->v[l->n] = strdup(s)))
        return TD_ENOMEM;
    l->n++;
    return TD_OK;
}

static void names_free(names *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Tree directory child digit of a name "d%0*u", or -1. */
static long subdir_digit(const td_tree *t, const char *name)
{
    long v = 0;
    if (name[0] != 'd' || (int)strlen(name) != 1 + t->dir_width)
        return -1;
    for (int i = 1; i <= t->dir_width; i++) {
        if (name[i] < '0' || name[i] > '9')
            return -1;
        v = v * 10 + (name[i] - '0');
    }
    return v < (long)t->fanout ? v : -1;
}

/* An entry (a directory if isdir) of a directory at level that is one of
 * the tree's subdirectories: the one rule of both passes over entries. */
static int is_tree_subdir(const td_tree *t, unsigned level, const char *name, int isdir)
{
    return isdir && level < t->depth && subdir_digit(t, name) >= 0;
}

/* Report entries of directory j (at rel, open as fd) that are not the
 * tree's, names sorted; then the same in its tree subdirectories. */
static int extras(run *r, int fd, uint64_t j, unsigned level, const char *rel)
{
    const td_tree *t = r->t;
    names ex = {0}, sub = {0};
    DIR *d = fdopendir(fd);
    struct dirent *e;
    int rc = TD_OK;
    if (!d) {
        int err = errno;
        close(fd);
        return err == ENOMEM ? TD_ENOMEM : TD_OK;
    }
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (td__tree_name_index(t, j, e->d_name) != UINT64_MAX)
            continue;
        int isdir = e->d_type == DT_DIR;
        if (e->d_type == DT_UNKNOWN) {
            struct stat st;
            isdir = fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                    S_ISDIR(st.st_mode);
        }
        if (is_tree_subdir(t, level, e->d_name, isdir))
            rc = names_add(&sub, e->d_name);
        else
            rc = names_add(&ex, e->d_name);
        if (rc != TD_OK)
            break;
    }
    if (rc == TD_OK) {
        if (ex.n > 1)
            qsort(ex.v, ex.n, sizeof *ex.v, cmp_str);
        if (sub.n > 1)
            qsort(sub.v, sub.n, sizeof *sub.v, cmp_str);
        for (size_t k = 0; k < ex.n && !r->canceled; k++) {
            char path[TD_TREE_PATH_MAX + 256];
            td_tree_finding f;
            memset(&f, 0, sizeof f);
            f.what = TD_TREE_EXTRA;
            f.index = UINT64_MAX;
            (void)td__msg(path, sizeof path, "%s%s%s", rel, *rel ? "/" : "", ex.v[k]);
            f.path = path;
            r->res.extra++;
            if (r->io->report && r->io->report(r->io->ctx, &f) != 0)
                r->canceled = 1;
        }
        uint64_t off = j - t->level_first[level];
        for (size_t k = 0; k < sub.n && rc == TD_OK && !r->canceled; k++) {
            uint64_t child = t->level_first[level + 1] + off * t->fanout +
                             (uint64_t)subdir_digit(t, sub.v[k]);
            char path[TD_TREE_PATH_MAX + 8];
            (void)td__msg(path, sizeof path, "%s%s%s", rel, *rel ? "/" : "", sub.v[k]);
            int cfd = openat(dirfd(d), sub.v[k], O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
            if (cfd >= 0)
                rc = extras(r, cfd, child, level + 1, path);
        }
    }
    closedir(d);
    names_free(&ex);
    names_free(&sub);
    return rc;
}

/* The pass for extra entries over the directories the workers read
 * (r->clean): from directory d at level (its path rel, of length len, in a
 * buffer of TD_TREE_PATH_MAX + 8), in the order extras() takes, reading
 * only those whose bit is clear, with extras().  A directory with its bit
 * set is a real directory (its parent's entry said so), so its children
 * are where extras() would look for them. */
static int extras_known(run *r, uint64_t d, unsigned level, char *rel)
{
    const td_tree *t = r->t;
    int rc = TD_OK;
    if (!(r->clean[d / 64] >> (d % 64) & 1)) {
        int fd = d == 0 ? dup(r->rootfd)
                        : openat(r->rootfd, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        return fd >= 0 ? extras(r, fd, d, level, rel) : TD_OK;
    }
    if (level >= t->depth)
        return TD_OK;
    uint64_t c0 = t->level_first[level + 1] + (d - t->level_first[level]) * t->fanout;
    for (uint64_t k = 0; k < t->fanout && rc == TD_OK && !r->canceled; k++) {
        (void)td__tree_dir_path(t, c0 + k, rel, TD_TREE_PATH_MAX + 8);
        rc = extras_known(r, c0 + k, level + 1, rel);
    }
    return rc;
}

/* ---- the calls ----------------------------------------------------------- */

static int run_tree(const td_tree *t, const char *dir, const td_tree_io *io_in,
                    td_tree_result *result, int verify, char *path_buf, size_t cap)
{
    td_tree_io defio;
    const td_tree_io *io = io_in;
    td_options go;
    run r;
    job *jobs = NULL;
    unsigned nt;
    int rc;

    if (result)
        memset(result, 0, sizeof *result);
    if (path_buf && cap)
        path_buf[0] = '\0';
    if (!t || !t->prepared || !dir || !*dir)
        return TD_EINVAL;
    if (!io) {
        td_tree_io_init(&defio);
        io = &defio;
    }
    memset(&r, 0, sizeof r);
    r.t = t;
    r.io = io;
    r.verify = verify;
    r.root = dir;
    r.first = TD_MIN(io->first, t->n);
    r.end = io->count >= t->n - r.first ? t->n : r.first + io->count;
    if (verify && (io->flags & TD_TREE_EXTRA_ONLY))
        r.end = r.first;
    r.nchunks = (r.end - r.first + CHUNK_FILES - 1) / CHUNK_FILES;
    nt = io->threads ? io->threads : t->opt.threads;
    if (nt == 0)
        nt = td__ncpus();
    nt = (unsigned)TD_MIN((uint64_t)TD_MIN(nt, TD_MAX_THREADS), TD_MAX(r.nchunks, 1));
    go = t->opt;
    go.threads = 1;
    if (!verify)
        r.ninputs = td__options_inputs(&go, r.inputs, NULL);
    rc = td__gen_init(&r.gen, t->kind, &go, UINT64_MAX);
    if (rc != TD_OK)
        return rc;
    if (!verify && (rc = make_root(dir)) != TD_OK)
        goto root_failed;
    r.rootfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (r.rootfd < 0) {
        rc = TD_EIO;
        goto root_failed;
    }
    pthread_mutex_init(&r.mu, NULL);
    pthread_cond_init(&r.cv, NULL);
    r.window = 4 * nt + 4;
    /* The workers read the directories for the pass for extra entries as
     * they check their files (one open of each, and in parallel); a bit per
     * directory, so only up to 2^24 of them (2 MiB), else that pass reads
     * them all. */
    if (verify && !(io->flags & (TD_TREE_NO_EXTRA | TD_TREE_EXTRA_ONLY)) && r.first == 0 &&
        r.end == t->n && r.nchunks > 0 && t->ndirs <= (UINT64_C(1) << 24))
        r.clean = calloc((size_t)((t->ndirs + 63) / 64), sizeof *r.clean);
    /* All jobs together keep at most a quarter of the descriptors the
     * process may have open, so that neither they nor the program's other
     * threads run out because of them. */
    {
        struct rlimit rl;
        uint64_t lim = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY
                           ? (uint64_t)rl.rlim_cur : 4096;
        r.pend_cap = (unsigned)TD_MAX(1, TD_MIN((uint64_t)PEND_FDS, lim / 4 / nt));
    }
    jobs = calloc(nt, sizeof *jobs);
    if (verify)
        r.slots = calloc(r.window, sizeof *r.slots);
    rc = jobs && (!verify || r.slots) ? TD_OK : TD_ENOMEM;
    for (unsigned k = 0; k < nt && rc == TD_OK; k++) {
        jobs[k].r = &r;
        jobs[k].caller = k == 0;
        jobs[k].dirfd = -1;
        jobs[k].dir = UINT64_MAX;
        jobs[k].buf = malloc(BUF_BYTES);
        jobs[k].exp = malloc(BUF_BYTES);
        if (!jobs[k].buf || !jobs[k].exp)
            rc = TD_ENOMEM;
    }
    if (rc == TD_OK) {
        r.active = (int)nt;
        for (unsigned k = 1; k < nt; k++) {
            if (pthread_create(&jobs[k].th, NULL, worker, &jobs[k]) == 0)
                jobs[k].started = 1;
            else
                r.active--; /* fewer threads: the others do its share */
        }
        worker(&jobs[0]);
        /* Until the last worker is done, keep the caller's progress (and
         * Ctrl-C) going. */
        pthread_mutex_lock(&r.mu);
        while (r.active > 0) {
            wait_a_little(&r);
            if (r.active == 0)
                break;
            pthread_mutex_unlock(&r.mu);
            progress(&jobs[0], 1);
            pthread_mutex_lock(&r.mu);
        }
        pthread_mutex_unlock(&r.mu);
        for (unsigned k = 1; k < nt; k++)
            if (jobs[k].started)
                pthread_join(jobs[k].th, NULL);
        if (verify && !r.stop)
            emit_ready(&r);
        if (r.rc != TD_OK)
            rc = r.rc;
        else if (r.canceled)
            rc = TD_ECANCELED;
    }
    if (rc == TD_OK && verify && !(io->flags & TD_TREE_NO_EXTRA) &&
        ((r.first == 0 && r.end == t->n) || (io->flags & TD_TREE_EXTRA_ONLY))) {
        if (r.clean) {
            char rel[TD_TREE_PATH_MAX + 8] = "";
            rc = extras_known(&r, 0, 0, rel);
        } else {
            int fd = dup(r.rootfd);
            if (fd >= 0)
                rc = extras(&r, fd, 0, 0, "");
        }
        if (rc == TD_OK && r.canceled)
            rc = TD_ECANCELED;
    }
    if (rc == TD_OK && io->progress)
        (void)io->progress(io->ctx, r.files_done, r.bytes_done);
    r.res.bytes = r.bytes_done;
    if (!verify)
        r.res.written = r.res.files - r.res.skipped;
    r.res.error = r.err;
    if (result)
        *result = r.res;
    if (path_buf && r.errpath[0])
        (void)td__msg(path_buf, cap, "%s", r.errpath);
    for (unsigned k = 0; jobs && k < nt; k++) {
        free(jobs[k].buf);
        free(jobs[k].exp);
        free(jobs[k].abspath);
    }
    for (unsigned k = 0; r.slots && k < r.window; k++)
        free(r.slots[k].rec);
    free(r.slots);
    free(r.clean);
    free(jobs);
    close(r.rootfd);
    pthread_mutex_destroy(&r.mu);
    pthread_cond_destroy(&r.cv);
    td__gen_fini(&r.gen);
    if (rc == TD_OK && verify &&
        r.res.missing + r.res.wrong_size + r.res.changed + r.res.extra + r.res.unreadable)
        rc = TD_EMISMATCH;
    errno = r.err;
    return rc;

root_failed: { /* DIR cannot be made or opened: nothing else was started */
    int e = errno;
    td__gen_fini(&r.gen);
    if (result)
        result->error = e;
    if (path_buf)
        (void)td__msg(path_buf, cap, "%s", dir);
    errno = e;
    return rc;
}
}

int td_tree_write(const td_tree *t, const char *dir, const td_tree_io *io,
                  td_tree_result *result, char *path_buf, size_t cap)
{
    return run_tree(t, dir, io, result, 0, path_buf, cap);
}

int td_tree_verify(const td_tree *t, const char *dir, const td_tree_io *io,
                   td_tree_result *result)
{
    return run_tree(t, dir, io, result, 1, NULL, 0);
}

/* ---- scanning a tree into a profile --------------------------------------- */

typedef struct scan {
    td__hist *h;
    uint64_t dirs, parents, subdirs, files;
    unsigned maxdepth;
    const td_tree_io *io;
    int canceled;
} scan;

static int scan_dir(scan *s, int fd, unsigned level)
{
    DIR *d = fdopendir(fd);
    struct dirent *e;
    uint64_t subs = 0;
    int rc = TD_OK;
    if (!d) {
        int err = errno;
        close(fd);
        errno = err;
        return err == ENOMEM ? TD_ENOMEM : TD_EIO;
    }
    s->dirs++;
    if (level > s->maxdepth)
        s->maxdepth = level;
    while (rc == TD_OK && (e = readdir(d)) != NULL) {
        struct stat st;
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue; /* gone meanwhile */
        if (S_ISDIR(st.st_mode)) {
            subs++;
            if (level >= 255)
                continue;
            int cfd = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
            if (cfd >= 0)
                rc = scan_dir(s, cfd, level + 1);
        } else if (S_ISREG(st.st_mode)) {
            td__hist_add(s->h, (uint64_t)st.st_size > TD_TREE_MAX_FILE_SIZE
                                   ? TD_TREE_MAX_FILE_SIZE
                                   : (uint64_t)st.st_size, 1);
            s->files++;
            if (s->io && s->io->progress && s->files % 4096 == 0 &&
                s->io->progress(s->io->ctx, s->files, s->h->total) != 0)
                rc = TD_ECANCELED;
        }
    }
    if (subs) {
        s->parents++;
        s->subdirs += subs;
    }
    closedir(d);
    return rc;
}

typedef struct jout {
    char *buf;
    size_t cap, len;
} jout;

static void put(jout *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#include <stdarg.h>
static void put(jout *o, const char *fmt, ...)
{
    va_list ap;
    char tmp[128];
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if (o->len + (size_t)n < o->cap)
        memcpy(o->buf + o->len, tmp, (size_t)n + 1);
    o->len += (size_t)n;
}

int td_tree_scan(const char *dir, const td_tree_io *io, char *buf, size_t cap, size_t *len)
{
    scan s;
    jout o = {buf, cap, 0};
    int rc, fd;

    if (len)
        *len = 0;
    if (!dir || !buf || !cap)
        return TD_EINVAL;
    buf[0] = '\0';
    memset(&s, 0, sizeof s);
    s.io = io;
    s.h = calloc(1, sizeof *s.h);
    if (!s.h)
        return TD_ENOMEM;
    fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        free(s.h);
        errno = e;
        return TD_EIO;
    }
    rc = scan_dir(&s, fd, 0);
    if (rc != TD_OK) {
        int e = errno;
        free(s.h);
        errno = e;
        return rc;
    }
    uint64_t fanout = s.parents ? (s.subdirs + s.parents / 2) / s.parents : 1;
    fanout = TD_MAX(1, TD_MIN(fanout, TD_TREE_MAX_FANOUT));
    put(&o, "{\n  \"format\": \"testdata-tree-profile\",\n  \"version\": %d,\n",
        TD_TREE_PROFILE_VERSION);
    put(&o, "  \"files\": %llu,\n  \"total\": %llu,\n", (unsigned long long)s.h->files,
        (unsigned long long)s.h->total);
    put(&o, "  \"dirs\": %llu,\n  \"depth\": %u,\n  \"fanout\": %llu,\n",
        (unsigned long long)s.dirs, TD_MIN(s.maxdepth, TD_TREE_MAX_DEPTH),
        (unsigned long long)fanout);
    put(&o, "  \"sizes\": [");
    int first = 1;
    for (unsigned b = 0; b < TD_TREE_HBINS; b++) {
        if (!s.h->count[b])
            continue;
        put(&o, "%s\n    [%llu, %llu, %llu]", first ? "" : ",", (unsigned long long)s.h->min[b],
            (unsigned long long)s.h->max[b], (unsigned long long)s.h->count[b]);
        first = 0;
    }
    put(&o, "%s]\n}\n", first ? "" : "\n  ");
    free(s.h);
    if (len)
        *len = o.len;
    if (o.len >= cap) {
        buf[0] = '\0';
        return TD_ERANGE;
    }
    return TD_OK;
}
