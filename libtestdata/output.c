/*
 * Output that never loses a user's data: td_output (atomic replacement of
 * regular files, direct writes into everything else) and the writers built
 * on it, td_write_file* and td_write_fd, shared by the CLI, --mpi and Python.
 *
 * The rules (docs/reliability.md):
 *   - a regular file, or a path that does not exist yet, gets its data in a
 *     temporary file in the same directory, which replaces it only when
 *     complete: an unnamed O_TMPFILE (nothing left behind even by SIGKILL)
 *     linked in at the end, or else a hidden ".tdtmp-" file;
 *   - a symlink is followed: the file it points to is replaced, the link
 *     stays;
 *   - a device, FIFO or socket, and anything reached through /proc (such
 *     as /dev/stdout), is written into directly and never replaced or
 *     removed;
 *   - TD_IO_IN_PLACE (the CLI's --keep-partial) writes into the file itself.
 */
#define _GNU_SOURCE /* O_TMPFILE, F_SETPIPE_SZ */
#include "stream.h"
#include "tree.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sodium.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/xattr.h>
#endif

enum { OUT_ATOMIC, OUT_DIRECT, OUT_IN_PLACE };

struct td_output {
    int fd;
    int mode;
    int tmpfile;      /* OUT_ATOMIC: unnamed O_TMPFILE (else a named temporary) */
    int replaces;     /* OUT_ATOMIC: an existing file is replaced */
    char *final;      /* the path to replace (symlinks resolved) */
    char *dir;        /* its directory */
    char *temp;       /* the named temporary, or NULL */
    int dirfd;        /* td__output_openat: the directory's fd (not owned), else -1 */
    char *name;       /* td__output_openat: the name in it, else NULL */
};

void td_io_options_init(td_io_options *io)
{
    if (io)
        memset(io, 0, sizeof *io);
}

static char *dup_dir(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    size_t n = (size_t)(slash - path);
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, path, n);
        d[n] = '\0';
    }
    return d;
}

static int under_proc(const char *dir)
{
    char real[PATH_MAX];
    return realpath(dir, real) && (strcmp(real, "/proc") == 0 || strncmp(real, "/proc/", 6) == 0);
}

/* The descriptor of this process that the /proc link dir/name stands for
 * (/dev/stdout, /dev/fd/N, /proc/self/fd/N, /proc/thread-self/fd/N), or -1. */
static int own_fd(const char *dir, const char *name)
{
    char real[PATH_MAX], self[PATH_MAX];
    const char *p = name;
    long fd = 0;
    size_t n;
    if (!*p)
        return -1;
    for (; *p; p++) {
        if (*p < '0' || *p > '9' || fd > INT_MAX / 10)
            return -1;
        fd = fd * 10 + (*p - '0');
    }
    if (fd > INT_MAX || !realpath(dir, real) || !realpath("/proc/self", self))
        return -1;
    n = strlen(self);
    if (strncmp(real, self, n) != 0)
        return -1;
    p = real + n;
    if (strncmp(p, "/task/", 6) == 0) { /* a thread's: the process's table */
        p += 6;
        if (*p < '0' || *p > '9')
            return -1;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    return strcmp(p, "/fd") == 0 ? (int)fd : -1;
}

/* Whether an entry e (a link or a file) of a sticky world-writable
 * directory d (/tmp) may be used: only if it is the caller's or the
 * directory owner's.  As the kernel's fs.protected_symlinks and
 * fs.protected_regular, whatever their setting; the kernel never sees
 * either case here:
 *   - resolve() follows links itself; root's "gen -o /tmp/x" would
 *     otherwise replace whatever another user's link there names;
 *   - a replacement is a rename, not an O_CREAT open of the file, and the
 *     new file takes the old one's owner: another user's file planted at
 *     /tmp/x would become theirs with root's data (a model or profile of
 *     a private corpus, say), what protected_regular stops for "> /tmp/x".
 */
static int sticky_allows(const struct stat *d, const struct stat *e)
{
    if (e->st_uid == geteuid())
        return 1;
    if ((d->st_mode & (S_ISVTX | S_IWOTH)) != (S_ISVTX | S_IWOTH))
        return 1;
    return d->st_uid == e->st_uid;
}

static int may_use(const char *dir, const struct stat *e)
{
    struct stat d;
    if (e->st_uid == geteuid())
        return 1;
    return stat(dir, &d) == 0 && sticky_allows(&d, e);
}

/* Follow symlinks from path to what the data is for.  OUT_ATOMIC with
 * *final set (the regular file or missing path to replace), or OUT_DIRECT
 * (write into path itself, or into *fd, a descriptor of this process that
 * path names through /proc, if not -1).  TD_OK, TD_EIO (errno) or
 * TD_ENOMEM. */
static int resolve(const char *path, int *mode, char **final, struct stat *st, int *exists,
                   int *fd)
{
    *fd = -1;
    char *cur = strdup(path);
    if (!cur)
        return TD_ENOMEM;
    for (int hops = 0; hops < 40; hops++) {
        if (lstat(cur, st) != 0) {
            if (errno != ENOENT) {
                free(cur);
                return TD_EIO;
            }
            *exists = 0;
            *mode = OUT_ATOMIC;
            *final = cur;
            return TD_OK;
        }
        if (!S_ISLNK(st->st_mode)) {
            *exists = 1;
            if (S_ISDIR(st->st_mode)) {
                free(cur);
                errno = EISDIR;
                return TD_EIO;
            }
            if (S_ISREG(st->st_mode) && st->st_uid != geteuid()) {
                char *dir = dup_dir(cur);
                int ok = dir && may_use(dir, st);
                free(dir);
                if (!ok) {
                    free(cur);
                    if (!dir)
                        return TD_ENOMEM;
                    errno = EACCES;
                    return TD_EIO;
                }
            }
            *mode = S_ISREG(st->st_mode) ? OUT_ATOMIC : OUT_DIRECT;
            *final = cur;
            return TD_OK;
        }
        char *dir = dup_dir(cur);
        char target[PATH_MAX];
        ssize_t n = dir ? readlink(cur, target, sizeof target - 1) : -1;
        if (!dir || n < 0) {
            int e = dir ? errno : ENOMEM;
            free(dir);
            free(cur);
            errno = e;
            return e == ENOMEM ? TD_ENOMEM : TD_EIO;
        }
        target[n] = '\0';
        if (!may_use(dir, st)) {
            free(dir);
            free(cur);
            errno = EACCES;
            return TD_EIO;
        }
        /* /proc's links (/dev/stdout -> /proc/self/fd/1 -> "pipe:[...]")
         * are not paths to follow: open them as they are.  One of our own
         * descriptors is written through, as a shell's "> /dev/stdout":
         * reopened, a file that stdout appends to (>>) would be truncated,
         * and one open only for reading (< /dev/stdin) written into. */
        if (under_proc(dir)) {
            const char *slash = strrchr(cur, '/');
            *fd = own_fd(dir, slash ? slash + 1 : cur);
            free(dir);
            free(cur);
            *mode = OUT_DIRECT;
            *final = strdup(path);
            *exists = 1;
            return *final ? TD_OK : TD_ENOMEM;
        }
        size_t need = strlen(dir) + 1 + (size_t)n + 1;
        char *next = malloc(need);
        if (!next) {
            free(dir);
            free(cur);
            return TD_ENOMEM;
        }
        if (target[0] == '/')
            memcpy(next, target, (size_t)n + 1);
        else
            snprintf(next, need, "%s/%s", dir, target);
        free(dir);
        free(cur);
        cur = next;
    }
    free(cur);
    errno = ELOOP;
    return TD_EIO;
}

static int random_name(char *buf, size_t cap)
{
    uint8_t r[6];
    randombytes_buf(r, sizeof r);
    return snprintf(buf, cap, ".tdtmp-%02x%02x%02x%02x%02x%02x", r[0], r[1], r[2], r[3], r[4],
                    r[5]);
}

/* Give the data a hidden name in o->dir: create it (O_EXCL, so never
 * someone else's file) or, with an unnamed O_TMPFILE, link it there.
 * Names are random; an existing one is skipped. */
static int name_temp(td_output *o, int link_tmpfile)
{
    /* td__output_openat's files: a name in o->dirfd, not a path */
    size_t cap = (o->name ? 0 : strlen(o->dir)) + 32;
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", o->fd);
    o->temp = malloc(cap);
    if (!o->temp)
        return TD_ENOMEM;
    for (int attempt = 0; attempt < 100; attempt++) {
        size_t n = o->name ? 0 : (size_t)snprintf(o->temp, cap, "%s/", o->dir);
        random_name(o->temp + n, cap - n);
        if (link_tmpfile) {
            if (linkat(AT_FDCWD, proc, o->name ? o->dirfd : AT_FDCWD, o->temp,
                       AT_SYMLINK_FOLLOW) == 0)
                return TD_OK;
        } else if ((o->fd = open(o->temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666)) >= 0) {
            return TD_OK;
        }
        if (errno != EEXIST)
            break;
    }
    free(o->temp);
    o->temp = NULL;
    return TD_EIO;
}

static void free_output(td_output *o)
{
    free(o->name);
    free(o->final);
    free(o->dir);
    free(o->temp);
    free(o);
}

/* Free o keeping errno; returns rc. */
static int fail(td_output *o, int rc)
{
    int saved = errno;
    if (o->fd >= 0)
        close(o->fd);
    free_output(o);
    errno = saved;
    return rc;
}

/* Give fd the extended attributes of the old file (the open file from, or
 * else path): its POSIX ACL (system.posix_acl_access), SELinux label and
 * user.* attributes, as `sed -i` and editors keep them.  Without this a
 * replaced file shared through an ACL would be closed to the people it was
 * shared with.  security.capability is left behind: it grants privileges
 * to the old program, not to test data.  Best effort, as the owner and
 * mode: a file system or a caller that cannot set one does not fail the
 * write. */
#ifdef __linux__
static ssize_t x_list(const char *path, int from, char *buf, size_t n)
{
    return from >= 0 ? flistxattr(from, buf, n) : llistxattr(path, buf, n);
}

static ssize_t x_get(const char *path, int from, const char *name, void *v, size_t n)
{
    return from >= 0 ? fgetxattr(from, name, v, n) : lgetxattr(path, name, v, n);
}
#endif

static void copy_xattrs(const char *path, int from, int fd)
{
#ifdef __linux__
    char small[1024], *names = small;
    ssize_t n = x_list(path, from, small, sizeof small);
    if (n < 0 && errno == ERANGE) { /* many or long names: ask their size */
        ssize_t need = x_list(path, from, NULL, 0);
        names = need > 0 ? malloc((size_t)need) : NULL;
        n = names ? x_list(path, from, names, (size_t)need) : -1;
    }
    char vsmall[256], *v = vsmall;
    size_t vcap = sizeof vsmall;
    for (ssize_t i = 0; n > 0 && i < n; i += (ssize_t)strlen(names + i) + 1) {
        const char *name = names + i;
        if (strcmp(name, "security.capability") == 0)
            continue;
        ssize_t len = x_get(path, from, name, v, vcap);
        if (len < 0 && errno == ERANGE) {
            ssize_t need = x_get(path, from, name, NULL, 0);
            char *nv = need > 0 ? realloc(v == vsmall ? NULL : v, (size_t)need) : NULL;
            if (!nv)
                continue;
            v = nv;
            vcap = (size_t)need;
            len = x_get(path, from, name, v, vcap);
        }
        if (len >= 0)
            (void)fsetxattr(fd, name, v, (size_t)len, 0);
    }
    if (v != vsmall)
        free(v);
    if (names != small)
        free(names);
#else
    (void)path;
    (void)from;
    (void)fd;
#endif
}

/* The old file's metadata on the new one: its mode, extended attributes
 * (the ACL's mask wins over the mode's group bits: after it) when from or
 * path gives them, and, as root, owner (root writing into a user's file
 * must not make it root's). */
static void copy_meta(const struct stat *old, const char *path, int from, int fd)
{
    if (geteuid() == 0)
        (void)fchown(fd, old->st_uid, old->st_gid);
    (void)fchmod(fd, old->st_mode & 07777);
    if (path || from >= 0)
        copy_xattrs(path, from, fd);
}

/* The temporary of an atomic output, in the target's directory, with the
 * old file's mode, extended attributes (ACL included) and, as root, owner. */
static int open_temp(td_output *o, uint32_t flags, const struct stat *old)
{
    int rc;
    o->dir = dup_dir(o->final);
    if (!o->dir)
        return TD_ENOMEM;
#ifdef O_TMPFILE
    if (!(flags & TD_IO_NAMED_TEMP)) {
        o->fd = open(o->dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
        o->tmpfile = o->fd >= 0;
        /* Other errors than "not supported by this file system (or
         * kernel)" are real: no permission, no space, read-only. */
        if (o->fd < 0 && errno != EISDIR && errno != EOPNOTSUPP && errno != EINVAL &&
            errno != ENOENT)
            return TD_EIO;
    }
#endif
    if (o->fd < 0 && (rc = name_temp(o, 0)) != TD_OK)
        return rc;
    if (o->replaces)
        copy_meta(old, o->final, -1, o->fd);
    return TD_OK;
}

int td_output_open(td_output **out, const char *path, uint32_t flags)
{
    td_output *o;
    struct stat st;
    int rc, exists = 0, own;

    if (!out)
        return TD_EINVAL;
    *out = NULL;
    if (!path || !*path || (flags & ~(uint32_t)(TD_IO_IN_PLACE | TD_IO_NAMED_TEMP)))
        return TD_EINVAL;
    rc = td__sodium_ready();
    if (rc != TD_OK)
        return rc;
    o = calloc(1, sizeof *o);
    if (!o)
        return TD_ENOMEM;
    o->fd = -1;
    o->dirfd = -1;
    rc = resolve(path, &o->mode, &o->final, &st, &exists, &own);
    if (rc != TD_OK)
        return fail(o, rc);
    if (o->mode == OUT_ATOMIC && (flags & TD_IO_IN_PLACE))
        o->mode = OUT_IN_PLACE;
    if (own >= 0) {
        /* Its offset, O_APPEND and access mode are the caller's. */
        o->fd = fcntl(own, F_DUPFD_CLOEXEC, 0);
    } else if (o->mode == OUT_DIRECT) {
        /* Never O_CREAT here: it exists and is not ours to make or replace. */
        o->fd = open(o->final, O_WRONLY | O_CLOEXEC | O_NOCTTY);
        if (o->fd >= 0 && fstat(o->fd, &st) == 0 && S_ISREG(st.st_mode) && ftruncate(o->fd, 0) != 0)
            return fail(o, TD_EIO);
    } else if (o->mode == OUT_IN_PLACE) {
        o->fd = open(o->final, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0666);
    } else {
        o->replaces = exists;
        if ((rc = open_temp(o, flags, &st)) != TD_OK)
            return fail(o, rc);
    }
    if (o->fd < 0)
        return fail(o, TD_EIO);
    *out = o;
    return TD_OK;
}

int td_output_fd(const td_output *o)
{
    return o ? o->fd : -1;
}

const char *td_output_temp_path(const td_output *o)
{
    return o ? o->temp : NULL;
}

int td_output_atomic(const td_output *o)
{
    return o && o->mode == OUT_ATOMIC;
}

/* Write all n bytes; EINTR asks io->progress whether to go on.  *written
 * counts what reached the file. */
static int write_all(int fd, const uint8_t *p, size_t n, const td_io_options *io, uint64_t *written)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR) {
                if (io && io->progress && io->progress(io->ctx, *written) != 0)
                    return TD_ECANCELED;
                continue;
            }
            return TD_EIO;
        }
        p += w;
        n -= (size_t)w;
        *written += (uint64_t)w;
    }
    return TD_OK;
}

int td_output_write(td_output *o, const void *buf, size_t len)
{
    uint64_t w = 0;
    if (!o || (!buf && len))
        return TD_EINVAL;
    return write_all(o->fd, buf, len, NULL, &w);
}

int td__output_put(const char *path, const void *buf, size_t len)
{
    td_output *out;
    int rc = td_output_open(&out, path, 0);
    if (rc != TD_OK)
        return rc;
    rc = td_output_write(out, buf, len);
    if (rc != TD_OK) {
        td_output_abort(out); /* keeps errno */
        return rc;
    }
    return td_output_commit(out);
}

void td_output_abort(td_output *o)
{
    int saved = errno;
    if (!o)
        return;
    if (o->fd >= 0)
        close(o->fd);
    if (o->temp)
        unlinkat(o->name ? o->dirfd : AT_FDCWD, o->temp, 0);
    free_output(o);
    errno = saved;
}

/* Close o->fd; returns rc, or TD_EIO if rc was TD_OK and close failed;
 * errno is that of the first failure. */
static int close_keep(td_output *o, int rc)
{
    int saved = errno;
    if (close(o->fd) != 0 && rc == TD_OK)
        rc = TD_EIO;
    else
        errno = saved;
    o->fd = -1;
    return rc;
}

/* Remove the file a failed commit linked in under its final name, if that
 * name is still the file (st: its fstat) and not something put there since. */
static void unlink_new(const td_output *o, const struct stat *st)
{
    struct stat now;
    int dfd = o->name ? o->dirfd : AT_FDCWD;
    const char *name = o->name ? o->name : o->final;
    if (fstatat(dfd, name, &now, AT_SYMLINK_NOFOLLOW) == 0 && now.st_dev == st->st_dev &&
        now.st_ino == st->st_ino)
        unlinkat(dfd, name, 0);
}

int td_output_commit(td_output *o)
{
    struct stat st;
    int rc = TD_OK, linked = 0, saved;

    if (!o)
        return TD_EINVAL;
    if (o->mode != OUT_ATOMIC) {
        rc = close_keep(o, TD_OK);
        saved = errno;
        free_output(o);
        errno = saved;
        return rc;
    }
    /* Old data is at stake only when a file is replaced: then make the new
     * data durable before the name moves to it. */
    if (o->replaces && fsync(o->fd) != 0 && errno != EINVAL && errno != EROFS)
        rc = TD_EIO;
    /* Something that is not a regular file may have appeared meanwhile.
     * (A new file of td__output_openat is linked in by a linkat() that
     * fails on any name already there: it is checked below, if so.) */
    if (rc == TD_OK && !o->name && lstat(o->final, &st) == 0 && !S_ISREG(st.st_mode)) {
        errno = EEXIST;
        rc = TD_EIO;
    }
    if (rc == TD_OK && o->tmpfile) {
        char proc[64];
        snprintf(proc, sizeof proc, "/proc/self/fd/%d", o->fd);
        /* A new file appears under its name in one step.  A replacement (or
         * a file that appeared meanwhile) needs a name to rename(), given
         * here and renamed below once close() has succeeded: the old file
         * goes only for data that closed without error. */
        if (!o->replaces && linkat(AT_FDCWD, proc, o->name ? o->dirfd : AT_FDCWD,
                                   o->name ? o->name : o->final, AT_SYMLINK_FOLLOW) == 0)
            linked = fstat(o->fd, &st) == 0 ? 2 : 1; /* 2: st is the new file's */
        else if (!o->replaces && errno != EEXIST)
            rc = TD_EIO;
        else if (o->name && fstatat(o->dirfd, o->name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                 !S_ISREG(st.st_mode)) {
            errno = EEXIST;
            rc = TD_EIO;
        } else if (!o->name && !o->dir && !(o->dir = dup_dir(o->final)))
            rc = TD_ENOMEM;
        else
            rc = name_temp(o, 1);
    }
    rc = close_keep(o, rc);
    if (rc == TD_OK && !linked &&
        (o->name ? renameat(o->dirfd, o->temp, o->dirfd, o->name) : rename(o->temp, o->final)) != 0)
        rc = TD_EIO;
    saved = errno;
    if (linked == 2 && rc != TD_OK)
        unlink_new(o, &st); /* close() failed: the new file may lack data */
    if (linked) {
        free(o->temp);
        o->temp = NULL;
    }
    if (rc != TD_OK && o->temp)
        unlinkat(o->name ? o->dirfd : AT_FDCWD, o->temp, 0);
    free_output(o);
    errno = saved;
    return rc;
}

/* For many files in one directory (tree.c): the rules of td_output_open,
 * with one system call fewer per file and no path walk.  An unnamed
 * O_TMPFILE in dirfd is linked in under the name by td_output_commit
 * (linkat) or, when a regular file is there, renamed over it (renameat);
 * all by name in dirfd, so that a directory or a symlink swapped in on
 * the way (dirpath is only for messages) never redirects the write.
 * Anything else than a regular file is refused (EEXIST), never written
 * into: a symlink too, which would lead out of the tree.  Without
 * O_TMPFILE, td_output_open(dirpath/name). */
int td__output_openat(td_output **out, int dirfd, const char *dirpath, const char *name,
                      int fresh, const td__file_id *keep, int nkeep)
{
    struct stat st;
    size_t dl = strlen(dirpath), nl = strlen(name);
    char *path;
    td_output *o;
    int rc;

    *out = NULL;
    path = malloc(dl + nl + 2);
    if (!path)
        return TD_ENOMEM;
    memcpy(path, dirpath, dl);
    path[dl] = '/';
    memcpy(path + dl + 1, name, nl + 1);
    int replaces = 0;
    if (!fresh) {
        if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
            td__file_id id = {(uint64_t)st.st_dev, (uint64_t)st.st_ino, 1};
            int kept = !S_ISREG(st.st_mode);
            for (int k = 0; k < nkeep && !kept; k++)
                kept = td__file_id_eq(keep[k], id);
            struct stat d;
            if (kept) /* an input, or not a regular file: never written */
                errno = EEXIST;
            else if (st.st_uid != geteuid() && (fstat(dirfd, &d) != 0 || !sticky_allows(&d, &st)))
                errno = EACCES;
            else
                replaces = 1;
            if (!replaces) {
                free(path);
                return TD_EIO;
            }
        } else if (errno != ENOENT) {
            free(path);
            return TD_EIO;
        }
    }
#ifdef O_TMPFILE
    int fd = openat(dirfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
    if (fd >= 0 && replaces) {
        /* The old file's metadata, read through a descriptor of that very
         * file (the one fstatat saw), never through the name again. */
        struct stat now;
        int from = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (from >= 0 && fstat(from, &now) == 0 && now.st_dev == st.st_dev &&
            now.st_ino == st.st_ino)
            copy_meta(&now, NULL, from, fd);
        else /* unreadable (not root): the mode and owner at least */
            copy_meta(&st, NULL, -1, fd);
        if (from >= 0)
            close(from);
    }
    if (fd >= 0) {
        o = calloc(1, sizeof *o);
        char *nm = strdup(name);
        if (!o || !nm) {
            close(fd);
            free(o);
            free(nm);
            free(path);
            return TD_ENOMEM;
        }
        o->fd = fd;
        o->dirfd = dirfd;
        o->mode = OUT_ATOMIC;
        o->tmpfile = 1;
        o->replaces = replaces;
        o->final = path;
        o->name = nm;
        *out = o;
        return TD_OK;
    }
    if (errno != EISDIR && errno != EOPNOTSUPP && errno != EINVAL && errno != ENOENT) {
        free(path);
        return TD_EIO;
    }
#endif
    rc = td_output_open(out, path, 0);
    free(path);
    return rc;
}

/* Write stream bytes [offset, offset+size) to fd, with progress. */
static int write_stream(int fd, int kind, uint64_t offset, uint64_t size, const td_options *o,
                        const td_io_options *io, uint64_t *written)
{
    td_stream *s;
    uint64_t end = size == TD_SIZE_UNBOUNDED ? TD_SIZE_UNBOUNDED : offset + size;
    uint64_t next_report = 8u << 20;
    struct stat st;
    int rc;

    rc = td_stream_open(&s, kind, end, o);
    if (rc == TD_OK)
        rc = td_stream_seek(s, offset);
    if (rc != TD_OK) {
        td_stream_free(s);
        return rc;
    }
    if (fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode))
        (void)fcntl(fd, F_SETPIPE_SZ, 1u << 20); /* fewer wake-ups of the reader */
    for (;;) {
        const void *chunk;
        size_t len;
        rc = td_stream_next(s, &chunk, &len);
        if (rc != TD_OK)
            break;
        rc = write_all(fd, chunk, len, io, written);
        if (rc != TD_OK)
            break;
        if (io && io->progress && *written >= next_report) {
            next_report = *written + (8u << 20);
            if (io->progress(io->ctx, *written) != 0) {
                rc = TD_ECANCELED;
                break;
            }
        }
    }
    int saved = errno;
    td_stream_free(s);
    errno = saved;
    return rc == TD_DONE ? TD_OK : rc;
}

int td_write_fd(int fd, int kind, uint64_t offset, uint64_t size, const td_options *o,
                const td_io_options *io, uint64_t *written)
{
    uint64_t w = 0;
    int rc;
    if (fd < 0)
        return TD_EINVAL;
    if (size != TD_SIZE_UNBOUNDED && size > UINT64_MAX - offset)
        return TD_ERANGE;
    rc = write_stream(fd, kind, offset, size, o, io, &w);
    if (written)
        *written = w;
    return rc;
}

int td_write_file_ex(const char *path, int kind, uint64_t offset, uint64_t size,
                     const td_options *o, const td_io_options *io, uint64_t *written)
{
    td_output *out;
    td_options def;
    uint64_t w = 0;
    int rc, saved;

    if (written)
        *written = 0;
    if (!path || !*path)
        return TD_EINVAL;
    if (size != TD_SIZE_UNBOUNDED && size > UINT64_MAX - offset)
        return TD_ERANGE;
    /* Check the stream before touching the file system. */
    if (!o) {
        td_options_init(&def);
        o = &def;
    }
    rc = td_options_check(kind, o);
    if (rc == TD_OK)
        rc = td_options_check_output(o, path, NULL, 0);
    if (rc != TD_OK)
        return rc;
    rc = td_output_open(&out, path, io ? io->flags : 0);
    if (rc != TD_OK)
        return rc;
    if (size == TD_SIZE_UNBOUNDED && td_output_atomic(out)) {
        /* An endless stream never completes, so it could never replace the
         * file: refuse rather than fill the disk and then remove it all. */
        td_output_abort(out);
        return TD_ERANGE;
    }
    rc = write_stream(td_output_fd(out), kind, offset, size, o, io, &w);
    if (rc == TD_OK) {
        rc = td_output_commit(out);
    } else {
        saved = errno;
        td_output_abort(out);
        errno = saved;
    }
    if (written)
        *written = w;
    return rc;
}

int td_write_file_at(const char *path, int kind, uint64_t offset, uint64_t size,
                     const td_options *o)
{
    return td_write_file_ex(path, kind, offset, size, o, NULL, NULL);
}

int td_write_file(const char *path, int kind, uint64_t size, const td_options *o)
{
    return td_write_file_ex(path, kind, 0, size, o, NULL, NULL);
}
