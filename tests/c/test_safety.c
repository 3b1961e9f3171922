/*
 * Data safety (issue "no output path, signal or fork may destroy or corrupt
 * a user's file"): td_write_file never replaces what is not a regular file,
 * follows symlinks, leaves the old file on failure; streams survive fork();
 * threads never make a run fail; one pool per verifier; dedup duplicates
 * cost what unique blocks cost.
 */
#define _GNU_SOURCE
#include "td_test_util.h"

#include "../../libtestdata/gen.h"
#include "../../libtestdata/tree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#define MIB (1024u * 1024u)

static char dir[256];

static void make_dir(void)
{
    snprintf(dir, sizeof dir, "/tmp/td_safety_%d_XXXXXX", (int)getpid());
    cr_assert_not_null(mkdtemp(dir));
}

static void remove_dir(void)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char p[600];
    while (d && (e = readdir(d))) {
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            unlink(p);
        }
    }
    if (d)
        closedir(d);
    rmdir(dir);
}

static int entries(void)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    while (d && (e = readdir(d)))
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    if (d)
        closedir(d);
    return n;
}

static void path_in(char *buf, size_t cap, const char *name)
{
    snprintf(buf, cap, "%s/%s", dir, name);
}

static void put_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

static void expect_content(const char *path, const char *text)
{
    char got[256] = "";
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    size_t n = fread(got, 1, sizeof got - 1, f);
    got[n] = '\0';
    fclose(f);
    cr_assert_str_eq(got, text, "%s", path);
}

static void expect_stream(const char *path, int kind, uint64_t size, uint64_t seed)
{
    td_options o;
    td_verify_result r;
    td_options_init(&o);
    o.seed = seed;
    cr_assert_eq(td_verify_file(path, kind, size, &o, &r), TD_OK, "%s", path);
}

static td_options seeded(uint64_t seed)
{
    td_options o;
    td_options_init(&o);
    o.seed = seed;
    return o;
}

/* A copy of /dev/full (a node made with mknod in a scratch directory): the
 * same device, and a regression could only ever turn the copy into a file,
 * never the machine's /dev/full. */
Test(output, dev_full_stays_a_device, TD_ONE_THREAD)
{
    char full[300];
    struct stat st;
    td_options o = seeded(1);
    make_dir();
    path_in(full, sizeof full, "full");
    if (mknod(full, S_IFCHR | 0666, makedev(1, 7)) != 0) {
        remove_dir();
        cr_skip_test("mknod needs root (%s)", strerror(errno));
    }
    errno = 0;
    cr_assert_eq(td_write_file(full, TD_ZERO, 10, &o), TD_EIO);
    cr_assert_eq(errno, ENOSPC);
    cr_assert_eq(lstat(full, &st), 0);
    cr_assert(S_ISCHR(st.st_mode), "the device was replaced");
    cr_assert_eq(entries(), 1);
    remove_dir();
}

Test(output, copy_of_a_device_node_stays_a_device, TD_ONE_THREAD)
{
    char node[300];
    struct stat st;
    td_options o = seeded(1);
    make_dir();
    path_in(node, sizeof node, "null");
    if (mknod(node, S_IFCHR | 0666, makedev(1, 3)) != 0) {
        remove_dir();
        cr_skip_test("mknod needs root (%s)", strerror(errno));
    }
    cr_assert_eq(td_write_file(node, TD_RANDOM, MIB, &o), TD_OK);
    cr_assert_eq(lstat(node, &st), 0);
    cr_assert(S_ISCHR(st.st_mode), "the device node was replaced");
    cr_assert_eq(entries(), 1);
    remove_dir();
}

Test(output, fifo_is_written_into)
{
    char fifo[300];
    struct stat st;
    int status;
    td_options o = seeded(5);
    make_dir();
    path_in(fifo, sizeof fifo, "fifo");
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    pid_t child = fork();
    if (child == 0) {
        /* Reader: the bytes must be the stream's. */
        alarm(20);
        int fd = open(fifo, O_RDONLY);
        td_verify_result r;
        td_options oc = seeded(5);
        _exit(fd >= 0 && td_verify_fd(fd, TD_RANDOM, 0, 3 * MIB, &oc, NULL, &r) == TD_OK ? 0 : 1);
    }
    cr_assert_eq(td_write_file(fifo, TD_RANDOM, 3 * MIB, &o), TD_OK);
    cr_assert_eq(waitpid(child, &status, 0), child);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the reader saw other bytes");
    cr_assert_eq(lstat(fifo, &st), 0);
    cr_assert(S_ISFIFO(st.st_mode), "the FIFO was replaced");
    remove_dir();
}

Test(output, symlink_is_followed)
{
    char target[300], link[300], dangling[300], created[300];
    struct stat st;
    td_options o = seeded(3);
    make_dir();
    path_in(target, sizeof target, "target");
    path_in(link, sizeof link, "link");
    path_in(dangling, sizeof dangling, "dangling");
    path_in(created, sizeof created, "created");
    put_file(target, "old");
    cr_assert_eq(symlink("target", link), 0);
    cr_assert_eq(td_write_file(link, TD_RANDOM, MIB, &o), TD_OK);
    cr_assert_eq(lstat(link, &st), 0);
    cr_assert(S_ISLNK(st.st_mode), "the symlink was replaced");
    expect_stream(target, TD_RANDOM, MIB, 3);
    /* A dangling link: the file it names is created. */
    cr_assert_eq(symlink("created", dangling), 0);
    cr_assert_eq(td_write_file(dangling, TD_ZERO, 100, &o), TD_OK);
    cr_assert_eq(lstat(dangling, &st), 0);
    cr_assert(S_ISLNK(st.st_mode));
    cr_assert_eq(stat(created, &st), 0);
    cr_assert_eq(st.st_size, 100);
    cr_assert_eq(entries(), 4, "no temporary left");
    remove_dir();
}

/* /dev/stdout, /dev/fd/N, /proc/self/fd/N name one of the caller's own
 * descriptors: written through it, as a shell's "> /dev/stdout", never
 * reopened.  Reopened, a file the descriptor appends to lost its contents
 * (truncated), and a file open only for reading was written into. */
Test(output, own_descriptor_through_proc_is_written_through, TD_ONE_THREAD)
{
    char path[300], via[64];
    struct stat st;
    td_options o = seeded(1);
    make_dir();
    path_in(path, sizeof path, "log");
    put_file(path, "log\n");
    int fd = open(path, O_WRONLY | O_APPEND);
    cr_assert_geq(fd, 0);
    snprintf(via, sizeof via, "/proc/self/fd/%d", fd);
    cr_assert_eq(td_write_file(via, TD_ZERO, 4, &o), TD_OK, "%s", strerror(errno));
    snprintf(via, sizeof via, "/dev/fd/%d", fd);
    cr_assert_eq(td_write_file(via, TD_ZERO, 4, &o), TD_OK, "%s", strerror(errno));
    close(fd);
    cr_assert_eq(stat(path, &st), 0);
    cr_assert_eq(st.st_size, 12, "the log was truncated (%lld bytes)", (long long)st.st_size);
    expect_content(path, "log\n");
    /* Open for reading only: writing fails (EBADF), the file is as it was. */
    fd = open(path, O_RDONLY);
    cr_assert_geq(fd, 0);
    snprintf(via, sizeof via, "/proc/self/fd/%d", fd);
    errno = 0;
    cr_assert_eq(td_write_file(via, TD_ZERO, 4, &o), TD_EIO);
    cr_assert_eq(errno, EBADF);
    close(fd);
    cr_assert_eq(stat(path, &st), 0);
    cr_assert_eq(st.st_size, 12);
    cr_assert_eq(entries(), 1);
    remove_dir();
}

/* A sticky world-writable directory, as /tmp. */
static void make_sticky(const char *sticky)
{
    cr_assert_eq(mkdir(sticky, 0777), 0);
    cr_assert_eq(chmod(sticky, 01777), 0);
}

/* Entry (a file or a link) of the sticky directory becomes another user's
 * (nobody's), or the test is skipped: that needs root. */
static void give_to_nobody(const char *sticky, const char *entry)
{
    if (lchown(entry, 65534, 65534) != 0) {
        int e = errno;
        unlink(entry);
        rmdir(sticky);
        remove_dir();
        cr_skip_test("lchown needs root (%s)", strerror(e));
    }
}

/* As the kernel's fs.protected_symlinks, whatever the sysctl says: root
 * writing to a path in /tmp must not follow another user's link there to
 * a file of its choosing. */
Test(output, others_symlink_in_a_sticky_directory_is_not_followed)
{
    char sticky[300], target[300], link[400];
    td_options o = seeded(1);
    make_dir();
    path_in(sticky, sizeof sticky, "sticky");
    path_in(target, sizeof target, "precious");
    snprintf(link, sizeof link, "%s/out.bin", sticky);
    put_file(target, "precious");
    make_sticky(sticky);
    cr_assert_eq(symlink(target, link), 0);
    give_to_nobody(sticky, link);
    errno = 0;
    cr_assert_eq(td_write_file(link, TD_ZERO, 10, &o), TD_EIO);
    cr_assert_eq(errno, EACCES);
    expect_content(target, "precious");
    /* Followed when the link is the caller's, or the directory is not sticky. */
    cr_assert_eq(chmod(sticky, 0777), 0);
    cr_assert_eq(td_write_file(link, TD_ZERO, 10, &o), TD_OK, "%s", strerror(errno));
    cr_assert_eq(chmod(sticky, 01777), 0);
    cr_assert_eq(lchown(link, geteuid(), getegid()), 0);
    cr_assert_eq(td_write_file(link, TD_RANDOM, 100, &o), TD_OK, "%s", strerror(errno));
    expect_stream(target, TD_RANDOM, 100, 1);
    unlink(link);
    rmdir(sticky);
    remove_dir();
}

/* As the kernel's fs.protected_regular, whatever the sysctl says: another
 * user's file in a sticky world-writable directory is not replaced (the
 * new file would take that user's ownership with the caller's data),
 * unless it is the directory owner's; by path and in a tree. */
Test(output, others_file_in_a_sticky_directory_is_not_replaced, TD_ONE_THREAD)
{
    char sticky[300], f[400];
    td_options o = seeded(1);
    td_output *out;
    struct stat st;
    make_dir();
    path_in(sticky, sizeof sticky, "sticky");
    snprintf(f, sizeof f, "%s/planted.bin", sticky);
    make_sticky(sticky);
    put_file(f, "planted");
    give_to_nobody(sticky, f);
    errno = 0;
    cr_assert_eq(td_write_file(f, TD_ZERO, 10, &o), TD_EIO);
    cr_assert_eq(errno, EACCES);
    expect_content(f, "planted");
    int dfd = open(sticky, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    cr_assert_geq(dfd, 0);
    errno = 0;
    cr_assert_eq(td__output_openat(&out, dfd, sticky, "planted.bin", 0, NULL, 0), TD_EIO);
    cr_assert_eq(errno, EACCES);
    expect_content(f, "planted");
    /* The directory owner's file, or any file of a directory that is not
     * sticky, is replaced (and keeps its owner). */
    cr_assert_eq(chown(sticky, 65534, 65534), 0);
    cr_assert_eq(td_write_file(f, TD_ZERO, 10, &o), TD_OK, "%s", strerror(errno));
    cr_assert_eq(chown(sticky, 0, 0), 0);
    cr_assert_eq(chmod(sticky, 0777), 0);
    cr_assert_eq(td__output_openat(&out, dfd, sticky, "planted.bin", 0, NULL, 0), TD_OK);
    cr_assert_eq(td_output_write(out, "new", 3), TD_OK);
    cr_assert_eq(td_output_commit(out), TD_OK);
    expect_content(f, "new");
    cr_assert_eq(stat(f, &st), 0);
    cr_assert_eq(st.st_uid, 65534);
    close(dfd);
    unlink(f);
    rmdir(sticky);
    remove_dir();
}

Test(output, directory_is_an_error, TD_ONE_THREAD)
{
    td_options o = seeded(3);
    make_dir();
    errno = 0;
    cr_assert_eq(td_write_file(dir, TD_ZERO, 10, &o), TD_EIO);
    cr_assert_eq(errno, EISDIR);
    cr_assert_eq(entries(), 0);
    remove_dir();
}

static int cancel_after(void *ctx, uint64_t done)
{
    return done >= *(uint64_t *)ctx;
}

Test(output, failure_leaves_the_old_file)
{
    char path[300], hard[300];
    td_options o = seeded(9);
    td_io_options io;
    uint64_t stop = 8 * MIB, written = 0;
    make_dir();
    path_in(path, sizeof path, "precious.txt");
    path_in(hard, sizeof hard, "hardlink");
    put_file(path, "precious");
    cr_assert_eq(link(path, hard), 0);
    td_io_options_init(&io);
    io.progress = cancel_after;
    io.ctx = &stop;
    cr_assert_eq(td_write_file_ex(path, TD_RANDOM, 0, 64 * MIB, &o, &io, &written), TD_ECANCELED);
    cr_assert_geq(written, stop);
    expect_content(path, "precious");
    expect_content(hard, "precious");
    cr_assert_eq(entries(), 2, "a temporary was left");
    /* Success replaces the name; the other hard link keeps the old data. */
    cr_assert_eq(td_write_file(path, TD_RANDOM, MIB, &o), TD_OK);
    expect_stream(path, TD_RANDOM, MIB, 9);
    expect_content(hard, "precious");
    remove_dir();
}

Test(output, replacement_keeps_the_mode, TD_ONE_THREAD)
{
    char path[300];
    struct stat st;
    td_options o = seeded(1);
    make_dir();
    path_in(path, sizeof path, "f");
    put_file(path, "x");
    cr_assert_eq(chmod(path, 0640), 0);
    cr_assert_eq(td_write_file(path, TD_ZERO, 10, &o), TD_OK);
    cr_assert_eq(stat(path, &st), 0);
    cr_assert_eq(st.st_mode & 07777, 0640);
    remove_dir();
}

/* A replaced file keeps its ACL and user attributes (as `sed -i` does), but
 * not a file capability: that grants privileges to the old program.  The
 * output of 0 bytes is written with no write(), which would drop the
 * capability on its own. */
Test(output, replacement_keeps_acl_and_xattrs, TD_ONE_THREAD)
{
    char path[300];
    td_options o = seeded(1);
    make_dir();
    path_in(path, sizeof path, "f");
    put_file(path, "x");
    cr_assert_eq(chmod(path, 0640), 0);
    if (setxattr(path, "user.td_note", "kept", 4, 0) != 0)
        cr_skip_test("no user xattrs on %s: %s", dir, strerror(errno));
    /* version 2; user::rw- user:1234:rw- group::r-- mask::rw- other::--- */
    uint8_t acl[4 + 5 * 8] = {2, 0, 0, 0};
    static const uint16_t ent[5][2] = {{1, 6}, {2, 6}, {4, 4}, {0x10, 6}, {0x20, 0}};
    for (int i = 0; i < 5; i++) {
        uint8_t *e = acl + 4 + 8 * i;
        uint32_t id = ent[i][0] == 2 ? 1234u : UINT32_MAX;
        memcpy(e, ent[i], 4);
        memcpy(e + 4, &id, 4);
    }
    int has_acl = setxattr(path, "system.posix_acl_access", acl, sizeof acl, 0) == 0;
    /* VFS_CAP_REVISION_2, CAP_NET_RAW permitted; needs CAP_SETFCAP */
    uint32_t cap[5] = {0x02000000u, 1u << 13, 0, 0, 0};
    int has_cap = setxattr(path, "security.capability", cap, sizeof cap, 0) == 0;
    struct stat st, st0;
    cr_assert_eq(stat(path, &st0), 0); /* 0660 with the ACL: its mask is the group's bits */
    cr_assert_eq(td_write_file(path, TD_ZERO, 0, &o), TD_OK);
    char v[64];
    cr_assert_eq(getxattr(path, "user.td_note", v, sizeof v), 4, "user.td_note was lost");
    cr_assert_eq(memcmp(v, "kept", 4), 0);
    if (has_acl) {
        uint8_t got[sizeof acl + 8];
        cr_assert_eq(getxattr(path, "system.posix_acl_access", got, sizeof got), (ssize_t)sizeof acl,
                     "the ACL was lost");
        cr_assert_eq(memcmp(got, acl, sizeof acl), 0);
    }
    if (has_cap)
        cr_assert_eq(getxattr(path, "security.capability", v, sizeof v), -1,
                     "a file capability was copied to the new data");
    cr_assert_eq(stat(path, &st), 0);
    cr_assert_eq(st.st_mode & 07777, st0.st_mode & 07777);
    /* Data written (not 0 bytes) and the named-temporary path keep them too. */
    cr_assert_eq(td_write_file(path, TD_ZERO, 100, &o), TD_OK);
    cr_assert_eq(getxattr(path, "user.td_note", v, sizeof v), 4);
    if (has_acl)
        cr_assert_eq(getxattr(path, "system.posix_acl_access", NULL, 0), (ssize_t)sizeof acl);
    td_output *out;
    cr_assert_eq(td_output_open(&out, path, TD_IO_NAMED_TEMP), TD_OK);
    cr_assert_eq(td_output_write(out, "new", 3), TD_OK);
    cr_assert_eq(td_output_commit(out), TD_OK);
    expect_content(path, "new");
    cr_assert_eq(getxattr(path, "user.td_note", v, sizeof v), 4);
    remove_dir();
}

/* A tree file is replaced by its name in the directory the tree writer
 * holds open, never by its path: a directory swapped in on the way, with
 * a symlink where the file was, must not redirect the write (as root, to
 * any file on the system).  Before 2026-12-04 the replacement went through
 * td_output_open(dirpath/name), which followed the symlink. */
Test(output, tree_replacement_stays_in_its_directory, TD_ONE_THREAD)
{
    char a[300], b[300], fa[320], fb[320], victim[300];
    td_output *out;
    make_dir();
    path_in(a, sizeof a, "a");
    path_in(b, sizeof b, "b");
    path_in(victim, sizeof victim, "victim");
    snprintf(fa, sizeof fa, "%s/f", a);
    snprintf(fb, sizeof fb, "%s/f", b);
    cr_assert_eq(mkdir(a, 0755), 0);
    put_file(fa, "old");
    cr_assert_eq(chmod(fa, 0604), 0);
    int has_x = setxattr(fa, "user.td_note", "tree", 4, 0) == 0;
    put_file(victim, "precious");
    int dfd = open(a, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    cr_assert_geq(dfd, 0);
    cr_assert_eq(rename(a, b), 0); /* dfd now names b */
    cr_assert_eq(mkdir(a, 0755), 0);
    cr_assert_eq(symlink(victim, fa), 0);
    cr_assert_eq(td__output_openat(&out, dfd, a, "f", 0, NULL, 0), TD_OK);
    cr_assert_eq(td_output_write(out, "new", 3), TD_OK);
    cr_assert_eq(td_output_commit(out), TD_OK, "%s", strerror(errno));
    expect_content(victim, "precious");
    expect_content(fb, "new");
    struct stat st;
    cr_assert_eq(lstat(fa, &st), 0);
    cr_assert(S_ISLNK(st.st_mode), "the symlink was replaced");
    cr_assert_eq(stat(fb, &st), 0);
    cr_assert_eq(st.st_mode & 07777, 0604);
    char v[16];
    if (has_x)
        cr_assert_eq(getxattr(fb, "user.td_note", v, sizeof v), 4, "user.td_note was lost");
    /* A symlink (or anything not a regular file) there is refused. */
    cr_assert_eq(unlink(fb), 0);
    cr_assert_eq(symlink(victim, fb), 0);
    cr_assert_eq(td__output_openat(&out, dfd, b, "f", 0, NULL, 0), TD_EIO);
    cr_assert_eq(errno, EEXIST);
    expect_content(victim, "precious");
    close(dfd);
    unlink(fa);
    unlink(fb);
    rmdir(a);
    rmdir(b);
    remove_dir();
}

Test(output, long_file_name)
{
    char name[251], path[600];
    td_options o = seeded(1);
    make_dir();
    memset(name, 'n', 250);
    name[250] = '\0';
    path_in(path, sizeof path, name);
    cr_assert_eq(td_write_file(path, TD_RANDOM, 1000, &o), TD_OK, "%s", strerror(errno));
    expect_stream(path, TD_RANDOM, 1000, 1);
    remove_dir();
}

Test(output, endless_stream_cannot_replace_a_file, TD_ONE_THREAD)
{
    char path[300];
    td_options o = seeded(1);
    make_dir();
    path_in(path, sizeof path, "f");
    cr_assert_eq(td_write_file(path, TD_ZERO, TD_SIZE_UNBOUNDED, &o), TD_ERANGE);
    cr_assert_eq(entries(), 0);
    remove_dir();
}

/* ---- fork ------------------------------------------------------------------ */

/* In the child: read what the stream has, compare, free; exit 0 if right. */
static void child_reads(td_stream *s, const uint8_t *want, size_t n)
{
    uint8_t *got = malloc(n);
    size_t len = 0, done = 0;
    alarm(20); /* a hang fails the test instead of blocking it */
    while (done < n && td_stream_read(s, got + done, n - done, &len) == TD_OK)
        done += len;
    int ok = done == n && memcmp(got, want, n) == 0;
    td_stream_free(s);
    free(got);
    _exit(ok ? 0 : 1);
}

/* Fork; the child reads s from its start and must see want[0..n). */
static void expect_child_reads(td_stream *s, const uint8_t *want, size_t n)
{
    int status;
    pid_t child = fork();
    if (child == 0) {
        td_stream_seek(s, 0);
        child_reads(s, want, n);
    }
    cr_assert_eq(waitpid(child, &status, 0), child);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "child: status %d (signal %d)", status, WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

Test(fork, child_uses_and_frees_a_threaded_stream)
{
#if defined(__SANITIZE_THREAD__)
    cr_skip_test("ThreadSanitizer cannot start threads after a multi-threaded fork");
#endif
    const size_t n = 16 * MIB;
    td_options o = seeded(4);
    td_stream *s;
    uint8_t *want = malloc(n), *first = malloc(n);
    size_t len;
    int status;
    o.threads = 4;
    cr_assert_eq(td_fill(TD_RANDOM, &o, 0, want, n), TD_OK);
    cr_assert_eq(td_stream_open(&s, TD_RANDOM, 2 * n, &o), TD_OK);
    cr_assert_eq(td_stream_read(s, first, n, &len), TD_OK); /* the pool is running */
    for (int round = 0; round < 2; round++)
        expect_child_reads(s, want, n);
    /* A child that only frees the stream. */
    pid_t child = fork();
    if (child == 0) {
        alarm(20);
        td_stream_free(s);
        _exit(0);
    }
    cr_assert_eq(waitpid(child, &status, 0), child);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "free in the child: %d", status);
    /* The parent's stream still works. */
    cr_assert_eq(td_stream_seek(s, 0), TD_OK);
    cr_assert_eq(td_stream_read(s, first, n, &len), TD_OK);
    cr_assert_eq(memcmp(first, want, n), 0);
    td_stream_free(s);
    free(want);
    free(first);
}

/* A stream of kind that the parent read `first` bytes of, with threads:
 * a child reads all of it again and gets the bytes of td_fill. */
static void child_reads_after(td_kind kind, size_t first)
{
    const size_t n = 3 * MIB;
    td_options o = seeded(4);
    td_stream *s;
    uint8_t *want = malloc(n), *got = malloc(first);
    size_t len;
    o.threads = 2;
    cr_assert_eq(td_fill(kind, &o, 0, want, n), TD_OK);
    cr_assert_eq(td_stream_open(&s, kind, n, &o), TD_OK);
    cr_assert_eq(td_stream_read(s, got, first, &len), TD_OK);
    cr_assert_eq(memcmp(got, want, first), 0);
    expect_child_reads(s, want, n);
    td_stream_free(s);
    free(got);
    free(want);
}

/* A like stream makes its base block as far as it is read: a child extends
 * it, with threads, from where the parent left it. */
Test(fork, child_extends_a_like_stream)
{
#if defined(__SANITIZE_THREAD__)
    cr_skip_test("ThreadSanitizer cannot start threads after a multi-threaded fork");
#endif
    child_reads_after(TD_LIKE, 100);
}

/* A text stream makes its base blocks (round 0, with their words) on the
 * first read past the first MiB: the parent makes half of them, a child
 * (with threads) the rest. */
Test(fork, child_reads_text_rounds)
{
#if defined(__SANITIZE_THREAD__)
    cr_skip_test("ThreadSanitizer cannot start threads after a multi-threaded fork");
#endif
    child_reads_after(TD_TEXT, 3 * MIB / 2);
}

/* ---- threads under limits ------------------------------------------------------ */

Test(threads, never_make_a_run_fail_under_an_address_space_limit)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    cr_skip_test("sanitizers reserve terabytes of address space");
#else
    int status;
    pid_t child = fork();
    if (child == 0) {
        /* The test process (libraries, Criterion) already maps some; leave
         * 48 MiB on top of it: not enough for 8 default 8 MiB stacks and an
         * 8 MiB buffer. */
        struct rlimit rl;
        FILE *f = fopen("/proc/self/statm", "r");
        unsigned long pages = 0;
        if (!f || fscanf(f, "%lu", &pages) != 1)
            _exit(2);
        fclose(f);
        rl.rlim_cur = rl.rlim_max = (rlim_t)pages * 4096 + 48u * MIB;
        if (setrlimit(RLIMIT_AS, &rl) != 0)
            _exit(2);
        td_options o = seeded(2);
        o.threads = 8;
        td_stream *s;
        uint8_t *buf = malloc(MIB);
        size_t len, done = 0;
        if (!buf || td_stream_open(&s, TD_RANDOM, 64 * MIB, &o) != TD_OK)
            _exit(3);
        while (td_stream_read(s, buf, MIB, &len) == TD_OK)
            done += len;
        td_stream_free(s);
        _exit(done == 64 * MIB ? 0 : 4);
    }
    cr_assert_eq(waitpid(child, &status, 0), child);
    cr_assert(WIFEXITED(status), "status %d", status);
    cr_assert_eq(WEXITSTATUS(status), 0, "exit %d", WEXITSTATUS(status));
#endif
}

static int count_threads(void)
{
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    int n = 0;
    while (d && (e = readdir(d)))
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n;
}

Test(threads, one_pool_per_verifier_of_the_useful_size)
{
    const size_t n = 64 * MIB;
    td_options o = seeded(6);
    td_verifier *v;
    td_verify_result r;
    uint8_t *data = malloc(n);
    int base, most = 0;
    o.threads = 256;
    /* Warm up: a sanitizer runtime starts a thread of its own with the
     * first one. */
    cr_assert_eq(td_fill(TD_RANDOM, &o, 0, data, n), TD_OK);
    base = count_threads();
    cr_assert_eq(td_fill(TD_RANDOM, &o, 0, data, n), TD_OK);
    cr_assert_eq(count_threads(), base, "td_fill left threads behind");
    cr_assert_eq(td_verifier_new(&v, TD_RANDOM, &o, 0, n), TD_OK);
    for (size_t done = 0; done < n; done += MIB) {
        cr_assert_eq(td_verifier_update(v, data + done, MIB), TD_OK);
        int t = count_threads() - base;
        most = t > most ? t : most;
    }
    cr_assert_eq(td_verifier_finish(v, &r), TD_OK);
    td_verifier_free(v);
    /* 8 MiB buffer / 256 KiB per thread: 32 threads at most, 31 workers. */
    cr_assert_leq(most, 31, "%d workers for threads=256", most);
    cr_assert_eq(count_threads(), base);
    /* td_verify the same way: one pool for the call. */
    cr_assert_eq(td_verify(TD_RANDOM, &o, 0, data, n, NULL), TD_OK);
    cr_assert_eq(count_threads(), base);
    free(data);
}

/* ---- dedup cost ------------------------------------------------------------------ */

/* A block kind that counts the bytes it is asked to make. */
static atomic_ullong made;

static int counting_block(const void *state, uint64_t bi, uint8_t *out, uint32_t end)
{
    (void)state;
    for (uint32_t i = 0; i < end; i++)
        out[i] = (uint8_t)(bi * 131 + i);
    atomic_fetch_add(&made, end);
    return TD_OK;
}

static const td_kind_vtbl counting = {
    .name = "counting", .block = 65536, .slack = 0, .fill_block = counting_block};

Test(dedup, duplicates_cost_what_unique_blocks_cost, TD_ONE_THREAD)
{
    const size_t n = 16 * MIB;
    const uint32_t blocks[] = {512, 4096, 16384};
    uint8_t *buf = malloc(n);
    for (size_t b = 0; b < sizeof blocks / sizeof blocks[0]; b++) {
        td_options o = seeded(1);
        td_dedup *d;
        o.dedup = 7;
        o.dedup_block = blocks[b];
        cr_assert_eq(td__dedup_new(&d, &o, &counting, NULL), TD_OK);
        atomic_store(&made, 0);
        cr_assert_eq(td__dedup_fill(d, 0, buf, n), TD_OK);
        unsigned long long m = atomic_load(&made);
        /* New blocks come from whole kind blocks made once; a duplicate
         * costs one dedup block.  Version 1 made up to a whole 64 KiB
         * block per duplicate: ~100x for 512-byte blocks. */
        cr_assert_leq(m, 2 * n, "dedup_block %u: %llu bytes made for %zu", blocks[b], m, n);
        td__dedup_free(d);
    }
    free(buf);
}
