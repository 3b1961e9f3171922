/* td_tree: golden manifests, exact totals, stateless access, write/verify
 * round trips with every kind of finding, resume, errors. */
#define _GNU_SOURCE
#include "td_test_util.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

static td_tree *make(const char *const *kv)
{
    td_tree *t;
    char msg[256];
    cr_assert_eq(td_tree_new(&t), TD_OK);
    for (; kv && kv[0]; kv += 2)
        cr_assert_eq(td_tree_set(t, kv[0], kv[1], msg, sizeof msg), TD_OK, "%s=%s: %s", kv[0],
                     kv[1], msg);
    cr_assert_eq(td_tree_prepare(t, msg, sizeof msg), TD_OK, "%s", msg);
    return t;
}

/* SHA-256 over "path\tsize\n" of every file. */
static void manifest_hash(const td_tree *t, char hex[65])
{
    crypto_hash_sha256_state h;
    unsigned char d[32];
    td_tree_entry e;
    crypto_hash_sha256_init(&h);
    for (uint64_t i = 0; i < td_tree_count(t); i++) {
        char line[300];
        cr_assert_eq(td_tree_file(t, i, &e), TD_OK);
        int n = snprintf(line, sizeof line, "%s\t%llu\n", e.path, (unsigned long long)e.size);
        crypto_hash_sha256_update(&h, (unsigned char *)line, (size_t)n);
    }
    crypto_hash_sha256_final(&h, d);
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", d[i]);
}

typedef struct golden {
    const char *kv[12];
    uint64_t files, total;
    const char *sha256;
} golden;

/* Pinned: the sizes and names of a tree are a contract (docs/format.md,
 * "Trees"), the same on every platform. */
static const golden goldens[] = {
    {{"files", "1000", "seed", "1", NULL}, 1000, 0, NULL},
    {{"files", "7", "total", "1000003", NULL}, 7, 1000003, NULL},
    {{"files", "5000", "sizes", "lognormal:median=16K,sigma=1.5", "seed", "9", NULL}, 5000, 0, NULL},
    {{"files", "5000", "sizes", "pareto:min=1K,alpha=1.2,max=1G", "depth", "3", "fanout", "4",
      NULL}, 5000, 0, NULL},
    {{"files", "300", "sizes", "uniform:0,100000", "kind", "text", NULL}, 300, 0, NULL},
    {{"total", "2G", "seed", "7", NULL}, 0, 2ull << 30, NULL},
};

#include "golden_tree.inc" /* golden_tree_sha256[] */

Test(tree, golden_manifests, TD_ONE_THREAD)
{
    for (size_t g = 0; g < sizeof goldens / sizeof goldens[0]; g++) {
        td_tree *t = make(goldens[g].kv);
        char hex[65];
        if (goldens[g].files)
            cr_expect_eq(td_tree_count(t), goldens[g].files);
        if (goldens[g].total)
            cr_expect_eq(td_tree_total(t), goldens[g].total);
        manifest_hash(t, hex);
        if (getenv("TD_PRINT_GOLDEN"))
            printf("    \"%s\",\n", hex);
        else
            cr_expect_str_eq(hex, golden_tree_sha256[g], "golden %zu", g);
        td_tree_free(t);
    }
}

Test(tree, total_exact_and_sizes_sum, TD_ONE_THREAD)
{
    static const char *const cases[][8] = {
        {"files", "7", "total", "1000003", NULL},
        {"files", "7", "total", "1000003", "sizes", "fixed:4K", NULL},
        {"files", "1000", "total", "999", NULL},
        {"files", "3", "total", "0", NULL},
        {"files", "9", "total", "10", "sizes", "fixed:0", NULL},
        {"total", "123456789", NULL},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        td_tree *t = make(cases[c]);
        uint64_t sum = 0, want;
        td_tree_entry e;
        for (int k = 0; cases[c][k]; k += 2)
            if (strcmp(cases[c][k], "total") == 0)
                td_parse_size(cases[c][k + 1], &want);
        for (uint64_t i = 0; i < td_tree_count(t); i++) {
            cr_assert_eq(td_tree_file(t, i, &e), TD_OK);
            sum += e.size;
            cr_assert_eq(e.offset, i * TD_TREE_STRIDE);
            cr_assert_eq(e.index, i);
        }
        cr_expect_eq(sum, td_tree_total(t), "case %zu", c);
        cr_expect_eq(sum, want, "case %zu", c);
        td_tree_free(t);
    }
}

Test(tree, stateless_any_order_any_thread_safe_and_unique_paths, TD_ONE_THREAD)
{
    static const char *const kv[] = {"files", "3000", "depth", "2", "fanout", "6", NULL};
    td_tree *t = make(kv), *u = make(kv);
    td_tree_entry a, b;
    uint32_t depth, fanout;
    cr_assert_eq(td_tree_shape(t, &depth, &fanout), TD_OK);
    cr_expect_eq(depth, 2);
    cr_expect_eq(fanout, 6);
    for (uint64_t k = 0; k < 3000; k++) {
        uint64_t i = (k * 7919) % 3000; /* any order */
        cr_assert_eq(td_tree_file(t, i, &a), TD_OK);
        cr_assert_eq(td_tree_file(u, i, &b), TD_OK);
        cr_assert_str_eq(a.path, b.path);
        cr_assert_eq(a.size, b.size);
        if (i > 0) {
            cr_assert_eq(td_tree_file(t, i - 1, &b), TD_OK);
            cr_assert(strcmp(a.path, b.path) != 0);
            cr_assert(b.dir <= a.dir); /* files go directory by directory */
        }
    }
    cr_expect_eq(td_tree_file(t, 3000, &a), TD_ERANGE);
    cr_expect_eq(td_tree_file(NULL, 0, &a), TD_EINVAL);
    td_tree_free(t);
    td_tree_free(u);
}

Test(tree, bad_options_name_field_and_values, TD_ONE_THREAD)
{
    td_tree *t;
    char msg[256];
    cr_assert_eq(td_tree_new(&t), TD_OK);
    cr_expect_eq(td_tree_set(t, "--files", "x", msg, sizeof msg), TD_ESYNTAX);
    cr_expect(strstr(msg, "--files") && strstr(msg, "0 to 268435456"), "%s", msg);
    cr_expect_eq(td_tree_set(t, "depth", "99", msg, sizeof msg), TD_ERANGE);
    cr_expect(strstr(msg, "option 'depth'") && strstr(msg, "0 to 16"), "%s", msg);
    cr_expect_eq(td_tree_set(t, "kind", "randm", msg, sizeof msg), TD_EKIND);
    cr_expect(strstr(msg, "random"), "%s", msg);
    cr_expect_eq(td_tree_set(t, "fils", "3", msg, sizeof msg), TD_EOPTION);
    cr_expect(strstr(msg, "files"), "%s", msg);
    cr_expect_eq(td_tree_set(t, "sizes", "weibull:3", msg, sizeof msg), TD_OK); /* at prepare */
    cr_expect_eq(td_tree_prepare(t, msg, sizeof msg), TD_ESYNTAX);
    cr_expect(strstr(msg, "unknown distribution") && strstr(msg, "lognormal:median"), "%s", msg);
    td_tree_free(t);

    cr_assert_eq(td_tree_new(&t), TD_OK);
    cr_expect_eq(td_tree_set(t, "ratio", "2", msg, sizeof msg), TD_OK);
    cr_expect_eq(td_tree_prepare(t, msg, sizeof msg), TD_EOPTION); /* random takes no ratio */
    td_tree_free(t);
    cr_assert_eq(td_tree_new(&t), TD_OK);
    cr_expect_eq(td_tree_set(t, "ratio", "2", msg, sizeof msg), TD_OK);
    cr_expect_eq(td_tree_set(t, "kind", "compressible", msg, sizeof msg), TD_OK);
    cr_expect_eq(td_tree_prepare(t, msg, sizeof msg), TD_OK, "%s", msg); /* any order */
    cr_expect_eq(td_tree_set(t, "files", "3", msg, sizeof msg), TD_EINVAL); /* prepared */
    td_tree_free(t);

    cr_expect_eq(td_tree_option_count(), 7);
    cr_expect_not_null(td_tree_option_find("--fanout"));
    cr_expect_null(td_tree_option_find("seed")); /* a stream option */
    cr_expect_null(td_tree_option_get(99));
}

typedef struct seen {
    int n;
    int what[16];
    uint64_t first_bad[16];
    char path[16][TD_TREE_PATH_MAX];
    uint64_t missing; /* collect_not_missing */
} seen;

static int collect(void *ctx, const td_tree_finding *f)
{
    seen *s = ctx;
    if (s->n < 16) {
        s->what[s->n] = f->what;
        s->first_bad[s->n] = f->first_bad;
        snprintf(s->path[s->n], sizeof s->path[0], "%s", f->path);
    }
    s->n++;
    return 0;
}

static char *join(const char *dir, const char *rel)
{
    static char buf[512];
    snprintf(buf, sizeof buf, "%s/%s", dir, rel);
    return buf;
}

Test(tree, write_verify_findings_resume)
{
    static const char *const kv[] = {"files", "200", "total", "2M", "seed", "3", NULL};
    char dir[] = "/tmp/td-tree-test-XXXXXX", msg[300];
    td_tree *t = make(kv);
    td_tree_io io;
    td_tree_result r;
    td_tree_entry e[5];
    seen s = {0};
    cr_assert_not_null(mkdtemp(dir));
    td_tree_io_init(&io);
    io.threads = 2;
    cr_assert_eq(td_tree_write(t, dir, &io, &r, msg, sizeof msg), TD_OK, "%s", msg);
    cr_expect_eq(r.files, 200);
    cr_expect_eq(r.written, 200);
    cr_expect_eq(r.bytes, 2u << 20);
    cr_assert_eq(td_tree_verify(t, dir, NULL, &r), TD_OK);
    cr_expect_eq(r.ok, 200);

    /* one file made alone is the same bytes */
    cr_assert_eq(td_tree_file(t, 17, &e[0]), TD_OK);
    {
        uint8_t *want = malloc(e[0].size + 1), *got = malloc(e[0].size + 1);
        td_options o;
        cr_assert_eq(td_tree_options(t, &o), TD_OK);
        cr_assert_eq(td_fill(td_tree_kind(t), &o, e[0].offset, want, e[0].size), TD_OK);
        int fd = open(join(dir, e[0].path), O_RDONLY);
        cr_assert_eq(read(fd, got, e[0].size + 1), (ssize_t)e[0].size);
        close(fd);
        cr_expect(memcmp(want, got, e[0].size) == 0);
        free(want);
        free(got);
    }

    /* changed, missing, short, long; an extra file */
    uint64_t pick[4] = {0}, k = 0;
    for (uint64_t i = 0; i < 200 && k < 4; i++) {
        td_tree_entry x;
        td_tree_file(t, i, &x);
        if (x.size > 10 && (k == 0 || i > pick[k - 1] + 20))
            pick[k++] = i;
    }
    cr_assert_eq(k, 4);
    for (int i = 0; i < 4; i++)
        td_tree_file(t, pick[i], &e[i]);
    int fd = open(join(dir, e[0].path), O_WRONLY);
    cr_assert(fd >= 0);
    cr_assert_eq(pwrite(fd, "\xff\x00\x13", 3, 4), 3);
    close(fd);
    cr_assert_eq(unlink(join(dir, e[1].path)), 0);
    cr_assert_eq(truncate(join(dir, e[2].path), 3), 0);
    fd = open(join(dir, e[3].path), O_WRONLY | O_APPEND);
    cr_assert_eq(write(fd, "tail", 4), 4);
    close(fd);
    fd = open(join(dir, "zz-mine"), O_WRONLY | O_CREAT, 0644);
    close(fd);

    td_tree_io_init(&io);
    io.report = collect;
    io.ctx = &s;
    io.threads = 3;
    cr_assert_eq(td_tree_verify(t, dir, &io, &r), TD_EMISMATCH);
    cr_expect_eq(r.changed, 1);
    cr_expect_eq(r.missing, 1);
    cr_expect_eq(r.wrong_size, 2);
    cr_expect_eq(r.extra, 1);
    cr_expect_eq(r.ok, 196);
    cr_assert_eq(s.n, 5);
    cr_expect_eq(s.what[0], TD_TREE_CHANGED);
    cr_expect_geq(s.first_bad[0], 4);
    cr_expect_leq(s.first_bad[0], 6);
    cr_expect_str_eq(s.path[0], e[0].path);
    cr_expect_eq(s.what[1], TD_TREE_MISSING);
    cr_expect_eq(s.what[2], TD_TREE_WRONG_SIZE);
    cr_expect_eq(s.first_bad[2], 3);
    cr_expect_eq(s.what[3], TD_TREE_WRONG_SIZE);
    cr_expect_eq(s.first_bad[3], e[3].size);
    cr_expect_eq(s.what[4], TD_TREE_EXTRA);
    cr_expect_str_eq(s.path[4], "zz-mine");
    {
        td_tree_finding f = {.what = TD_TREE_CHANGED, .path = "a/b", .first_bad = 7,
                             .mismatches = 2, .expected = 9};
        char line[200];
        cr_assert_eq(td_tree_finding_message(&f, line, sizeof line), TD_OK);
        cr_expect(strstr(line, "changed: a/b") && strstr(line, "byte 7"), "%s", line);
    }

    /* resume rewrites exactly the four wrong files and leaves the extra one */
    td_tree_io_init(&io);
    io.flags = TD_TREE_RESUME;
    cr_assert_eq(td_tree_write(t, dir, &io, &r, msg, sizeof msg), TD_OK, "%s", msg);
    cr_expect_eq(r.skipped, 196);
    cr_expect_eq(r.written, 4);
    td_tree_io_init(&io);
    io.flags = TD_TREE_NO_EXTRA;
    cr_expect_eq(td_tree_verify(t, dir, &io, &r), TD_OK);
    cr_expect_eq(access(join(dir, "zz-mine"), F_OK), 0);

    /* parts: the files of [50, 80) only */
    td_tree_io_init(&io);
    io.first = 50;
    io.count = 30;
    cr_expect_eq(td_tree_verify(t, dir, &io, &r), TD_OK);
    cr_expect_eq(r.files, 30);

    /* a profile of it */
    {
        char *json = malloc(1 << 20);
        size_t len;
        cr_assert_eq(td_tree_scan(dir, NULL, json, 1 << 20, &len), TD_OK);
        cr_expect(strstr(json, "\"files\": 201") != NULL, "%s", json);
        cr_expect_eq(td_tree_scan(dir, NULL, json, 10, &len), TD_ERANGE);
        cr_expect_gt(len, 10);
        free(json);
    }
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
    td_tree_free(t);
}

static int cancel_at_once(void *ctx, uint64_t files, uint64_t bytes)
{
    (void)ctx;
    (void)bytes;
    return files >= 64;
}

Test(tree, cancel_leaves_complete_files, TD_ONE_THREAD)
{
    static const char *const kv[] = {"files", "5000", "sizes", "fixed:1000", NULL};
    char dir[] = "/tmp/td-tree-cancel-XXXXXX";
    td_tree *t = make(kv);
    td_tree_io io;
    td_tree_result r;
    cr_assert_not_null(mkdtemp(dir));
    td_tree_io_init(&io);
    io.progress = cancel_at_once;
    cr_expect_eq(td_tree_write(t, dir, &io, &r, NULL, 0), TD_ECANCELED);
    cr_expect_lt(r.files, 5000);
    td_tree_io_init(&io);
    cr_expect_eq(td_tree_verify(t, dir, &io, &r), TD_EMISMATCH);
    cr_expect_eq(r.wrong_size + r.changed + r.extra + r.unreadable, 0); /* only missing */
    cr_expect_eq(r.missing + r.ok, 5000);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
    td_tree_free(t);
}

/* Files of t whose path starts with prefix. */
static uint64_t files_under(const td_tree *t, const char *prefix)
{
    td_tree_entry e;
    uint64_t n = 0;
    for (uint64_t i = 0; i < td_tree_count(t); i++)
        n += td_tree_file(t, i, &e) == TD_OK && strncmp(e.path, prefix, strlen(prefix)) == 0;
    return n;
}

/* collect, but missing files only counted (they come first, and would
 * take every slot) */
static int collect_not_missing(void *ctx, const td_tree_finding *f)
{
    seen *s = ctx;
    if (f->what == TD_TREE_MISSING) {
        s->missing++;
        return 0;
    }
    return collect(ctx, f);
}

/* The extra entries verify reports (threads, flags), their paths joined
 * by spaces in report order; missing: the files it should find missing
 * (those behind a symlink, which is not followed). */
static void extras_seen_missing(const td_tree *t, const char *dir, unsigned threads,
                                uint32_t flags, uint64_t missing, char *out, size_t cap)
{
    td_tree_io io;
    td_tree_result r;
    seen s = {0};
    td_tree_io_init(&io);
    io.report = collect_not_missing;
    io.ctx = &s;
    io.threads = threads;
    io.flags = flags;
    int rc = td_tree_verify(t, dir, &io, &r);
    cr_expect(rc == TD_OK || rc == TD_EMISMATCH, "rc %d", rc);
    cr_expect_eq(r.wrong_size + r.changed + r.unreadable, 0);
    cr_expect_eq(r.missing, (flags & TD_TREE_EXTRA_ONLY) ? 0 : missing);
    cr_expect_eq(r.missing, s.missing);
    cr_expect_eq((int)r.extra, s.n);
    out[0] = '\0';
    for (int k = 0; k < s.n && k < 16; k++) {
        cr_expect_eq(s.what[k], TD_TREE_EXTRA);
        size_t n = strlen(out);
        snprintf(out + n, cap - n, "%s%s", k ? " " : "", s.path[k]);
    }
}

static void extras_seen(const td_tree *t, const char *dir, unsigned threads, uint32_t flags,
                        char *out, size_t cap)
{
    extras_seen_missing(t, dir, threads, flags, 0, out, cap);
}

/* Verify reads each directory once, as it checks the files in it, and
 * reads again only the directories where something is not the tree's:
 * the extra entries it reports are the very ones, in the same order, as
 * those of the pass that reads every directory (TD_TREE_EXTRA_ONLY). */
Test(tree, extra_entries_at_every_level_as_a_full_walk)
{
    static const char *const kv[] = {"files", "300", "sizes", "fixed:100", "depth", "2",
                                     "fanout", "3", "seed", "5", NULL};
    static const char *const kv_sparse[] = {"files", "5", "sizes", "fixed:10", "depth", "2",
                                            "fanout", "3", NULL};
    char dir[] = "/tmp/td-tree-extra-XXXXXX", msg[300], got[2048], want[2048], cmd[700];
    td_tree *t = make(kv);
    td_tree_io io;
    td_tree_result r;
    cr_assert_not_null(mkdtemp(dir));
    td_tree_io_init(&io);
    cr_assert_eq(td_tree_write(t, dir, &io, &r, msg, sizeof msg), TD_OK, "%s", msg);
    for (unsigned th = 1; th <= 3; th += 2) {
        extras_seen(t, dir, th, 0, got, sizeof got);
        cr_expect_str_eq(got, "");
    }
    /* an extra file on top, in a subdirectory, a tree name in the wrong
     * directory, a directory of another name (not entered), a tree-named
     * directory below the deepest level, a symlink where a tree directory
     * is (neither followed nor entered: its files are missing) */
    cr_assert_eq(system((snprintf(cmd, sizeof cmd,
                                  "cd '%s' && echo x > zz && echo x > d1/extra.bin && "
                                  "cp d0/d0/$(ls d0/d0 | head -1) d1/f000.bin && "
                                  "mkdir d0/zdir && echo x > d0/zdir/f001.bin && mkdir d0/d1/d0 && "
                                  "mv d2/d2 d2/real && ln -s real d2/d2", dir), cmd)), 0);
    snprintf(want, sizeof want, "zz d0/zdir d0/d1/d0 d1/extra.bin d1/f000.bin d2/d2 d2/real");
    uint64_t behind_link = files_under(t, "d2/d2/");
    cr_assert_gt(behind_link, 0);
    for (unsigned th = 1; th <= 3; th += 2) {
        extras_seen_missing(t, dir, th, 0, behind_link, got, sizeof got);
        cr_expect_str_eq(got, want, "threads %u", th);
        extras_seen_missing(t, dir, th, TD_TREE_EXTRA_ONLY, behind_link, got, sizeof got);
        cr_expect_str_eq(got, want, "threads %u, extra only", th);
        extras_seen_missing(t, dir, th, TD_TREE_NO_EXTRA, behind_link, got, sizeof got);
        cr_expect_str_eq(got, "");
    }
    cr_expect_eq(system((snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir), cmd)), 0);
    td_tree_free(t);

    /* more directories than files: some are not made; one made by hand,
     * empty, and one with an entry of its own */
    t = make(kv_sparse);
    memcpy(dir + strlen(dir) - 6, "XXXXXX", 6);
    cr_assert_not_null(mkdtemp(dir));
    cr_assert_eq(td_tree_write(t, dir, &io, &r, msg, sizeof msg), TD_OK, "%s", msg);
    extras_seen(t, dir, 1, 0, got, sizeof got);
    cr_expect_str_eq(got, "");
    cr_assert_eq(system((snprintf(cmd, sizeof cmd,
                                  "cd '%s' && mkdir -p d0/d0 d2/d2 && echo x > d2/d2/mine",
                                  dir), cmd)), 0);
    for (unsigned th = 1; th <= 3; th += 2) {
        extras_seen(t, dir, th, 0, got, sizeof got);
        cr_expect_str_eq(got, "d2/d2/mine", "threads %u", th);
        extras_seen(t, dir, th, TD_TREE_EXTRA_ONLY, got, sizeof got);
        cr_expect_str_eq(got, "d2/d2/mine", "threads %u, extra only", th);
    }
    cr_expect_eq(system((snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir), cmd)), 0);
    td_tree_free(t);
}

/* No symlink below the top directory is followed: one where a file or a
 * directory of the tree should be is an error (write) or a missing file
 * (verify), and what it points to is never touched.  td_tree_write used
 * to replace the file a link named and write a directory's files through
 * a link to another directory. */
Test(tree, symlinks_are_never_followed, TD_ONE_THREAD)
{
    static const char *const kv[] = {"files", "40", "sizes", "fixed:100", "depth", "1",
                                     "fanout", "2", NULL};
    char dir[] = "/tmp/td-tree-links-XXXXXX", msg[300], cmd[700], top[64], other[64];
    char file0[64 + TD_TREE_PATH_MAX], sub[96];
    td_tree *t = make(kv);
    td_tree_io io;
    td_tree_result r;
    td_tree_entry e;
    struct stat st;
    cr_assert_not_null(mkdtemp(dir));
    snprintf(top, sizeof top, "%s/t", dir);
    snprintf(other, sizeof other, "%s/other", dir);
    cr_assert_eq(mkdir(top, 0777), 0);
    cr_assert_eq(mkdir(other, 0777), 0);
    cr_assert_eq(system((snprintf(cmd, sizeof cmd, "echo precious > '%s/precious'", other), cmd)),
                 0);
    cr_assert_eq(td_tree_file(t, 0, &e), TD_OK);
    cr_assert_null(strchr(e.path, '/'));
    snprintf(file0, sizeof file0, "%s/%s", top, e.path);
    snprintf(sub, sizeof sub, "%s/d0", top);
    cr_assert_eq(symlink("../other/precious", file0), 0);
    td_tree_io_init(&io);
    cr_expect_eq(td_tree_write(t, top, &io, &r, msg, sizeof msg), TD_EIO);
    cr_expect_str_eq(msg, e.path);
    cr_expect_eq(stat(join(other, "precious"), &st), 0);
    cr_expect_eq(st.st_size, 9, "the file behind the link was replaced");
    io.flags = TD_TREE_RESUME;
    cr_expect_eq(td_tree_write(t, top, &io, &r, msg, sizeof msg), TD_EIO);
    cr_expect_eq(lstat(file0, &st), 0);
    cr_expect(S_ISLNK(st.st_mode));
    cr_assert_eq(unlink(file0), 0);
    cr_assert_eq(symlink("../other", sub), 0);
    td_tree_io_init(&io);
    errno = 0;
    cr_expect_eq(td_tree_write(t, top, &io, &r, msg, sizeof msg), TD_EIO);
    cr_expect_eq(errno, ENOTDIR);
    cr_expect_eq(r.error, ENOTDIR);
    cr_expect_eq(system((snprintf(cmd, sizeof cmd, "test \"$(ls '%s')\" = precious", other), cmd)),
                 0, "files were written through the link");
    /* verify: the files behind the link are missing, the link is extra */
    cr_assert_eq(unlink(sub), 0);
    cr_assert_eq(td_tree_write(t, top, &io, &r, msg, sizeof msg), TD_OK, "%s", msg);
    cr_assert_eq(rename(sub, join(dir, "moved")), 0);
    cr_assert_eq(symlink("../moved", sub), 0);
    cr_expect_eq(td_tree_verify(t, top, &io, &r), TD_EMISMATCH);
    cr_expect_eq(r.missing, files_under(t, "d0/"));
    cr_expect_eq(r.extra, 1);
    cr_expect_eq(r.ok, 40 - r.missing);
    cr_expect_eq(system((snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir), cmd)), 0);
    td_tree_free(t);
}

/* Verify keeps checked files open to close several at once, but never so
 * many that it runs out of descriptors: with only a dozen free, three
 * threads still check every file (no file "unreadable" for EMFILE). */
Test(tree, verify_with_few_descriptors)
{
    static const char *const kv[] = {"files", "2000", "sizes", "fixed:100", "depth", "2",
                                     "fanout", "4", NULL};
    char dir[] = "/tmp/td-tree-fds-XXXXXX", msg[300], cmd[600];
    td_tree *t = make(kv);
    td_tree_io io;
    td_tree_result r;
    struct rlimit old, low;
    cr_assert_not_null(mkdtemp(dir));
    td_tree_io_init(&io);
    cr_assert_eq(td_tree_write(t, dir, &io, &r, msg, sizeof msg), TD_OK, "%s", msg);
    int lowest = dup(0);
    cr_assert_geq(lowest, 0);
    close(lowest);
    cr_assert_eq(getrlimit(RLIMIT_NOFILE, &old), 0);
    low = old;
    low.rlim_cur = (rlim_t)lowest + 12;
    cr_assert_eq(setrlimit(RLIMIT_NOFILE, &low), 0);
    for (unsigned th = 1; th <= 3; th++) {
        td_tree_io_init(&io);
        io.threads = th;
        int rc = td_tree_verify(t, dir, &io, &r);
        cr_expect_eq(rc, TD_OK, "threads %u: rc %d, %llu unreadable", th, rc,
                     (unsigned long long)r.unreadable);
        cr_expect_eq(r.ok, 2000);
    }
    cr_assert_eq(setrlimit(RLIMIT_NOFILE, &old), 0);
    int fd = dup(0); /* nothing left open */
    cr_expect_eq(fd, lowest);
    close(fd);
    cr_expect_eq(system((snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir), cmd)), 0);
    td_tree_free(t);
}
