/*
 * testdata tree gen|list|verify|like: file trees (docs/format.md, "Trees").
 * The tree, its options, sizes, names, writing and checking are the
 * library's (td_tree); this file turns arguments into td_tree_set calls,
 * findings into lines and results into exit statuses.
 */
#define _GNU_SOURCE
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- shared -------------------------------------------------------------- */

static int set_tree_opt(void *ctx, const char *key, const char *val, char *msg, size_t cap)
{
    return td_tree_set(ctx, key, val, msg, cap);
}

/* The tree of a parsed command line; usage errors (also a profile or
 * histogram that cannot be read) exit 2. */
static td_tree *make_tree(const cli_args *a, int allow_random_seed)
{
    td_tree *t;
    char msg[512];
    int rc;

    if (td_tree_new(&t) != TD_OK) {
        cli_error("out of memory");
        exit(CLI_EXIT_FAIL);
    }
    cli_apply_stream_opts(a, allow_random_seed, "tree gen", set_tree_opt, t, NULL);
    if ((rc = td_tree_prepare(t, msg, sizeof msg)) != TD_OK) {
        if (rc == TD_ENOMEM) {
            cli_error("out of memory");
            exit(CLI_EXIT_FAIL);
        }
        cli_usage_error("%s", msg);
    }
    return t;
}

typedef struct prog {
    cli_progress pr;
} prog;

static int progress_cb(void *ctx, uint64_t files, uint64_t bytes)
{
    (void)files;
    if (cli_interrupted())
        return 1;
    cli_progress_update(&((prog *)ctx)->pr, bytes);
    return 0;
}

static void summary(prog *p, const char *what, const td_tree_result *r, const char *extra)
{
    char h[32];
    double el;
    if (!p->pr.on)
        return;
    cli_progress_update(&p->pr, r->bytes);
    cli_progress_break(&p->pr);
    el = cli_now() - p->pr.t0;
    cli_human(h, sizeof h, r->bytes);
    cli_error("%s %llu files, %llu bytes (%s) in %.2f s: %.0f files/s, %.3f GB/s%s", what,
              (unsigned long long)r->files, (unsigned long long)r->bytes, h, el,
              el > 0 ? (double)r->files / el : 0.0, el > 0 ? (double)r->bytes / el / 1e9 : 0.0,
              extra);
}

static const char *dir_arg(const cli_args *a, const char *cmd)
{
    if (a->npos < 1)
        cli_usage_error("tree %s needs DIR", cmd);
    if (a->npos > 1)
        cli_usage_error("unexpected argument '%s'", a->pos[1]);
    if (!*a->pos[0])
        cli_usage_error("DIR is empty");
    return a->pos[0];
}

/* ---- tree gen ------------------------------------------------------------ */

enum { G_RESUME, G_PROGRESS, G_QUIET, G_MPI };

static const cli_opt gen_opts[] = {
    [G_RESUME] = {"resume", 0, NULL,
                  "verify files already there and keep those that are right (completes an "
                  "interrupted run)"},
    [G_PROGRESS] = {"progress", 0, NULL, "progress and summary on stderr even if not a terminal"},
    [G_QUIET] = {"quiet", 'q', NULL, "no progress, no summary"},
    [G_MPI] = {"mpi", 0, NULL, "under mpiexec: the ranks write parts of the files "
               "(docs/scale-out.md)"},
    {NULL, 0, NULL, NULL},
};

static int run_gen(const cli_cmd *cmd, int argc, char **argv)
{
    static cli_args a; /* its arrays live until the program ends */
    prog p;
    td_tree_io io;
    td_tree_result res;
    char where[512], extra[64] = "";
    const char *dir;
    td_tree *t;
    int rc;

    cli_parse(cmd, argc, argv, &a);
    dir = dir_arg(&a, "gen");
    t = make_tree(&a, !a.count[G_MPI]);
    if (a.count[G_MPI]) {
        rc = cli_mpi_tree(t, dir, 0, a.count[G_RESUME] ? TD_TREE_RESUME : 0,
                          cli_progress_mode(cmd, &a) < 0);
        td_tree_free(t);
        return rc;
    }
    cli_progress_init(&p.pr, cli_progress_mode(cmd, &a), "tree gen", td_tree_total(t));
    td_tree_io_init(&io);
    io.flags = a.count[G_RESUME] ? TD_TREE_RESUME : 0;
    io.progress = progress_cb;
    io.ctx = &p;
    cli_defer_signals(1);
    rc = td_tree_write(t, dir, &io, &res, where, sizeof where);
    cli_progress_break(&p.pr);
    if (rc == TD_EIO)
        cli_error("cannot write '%s%s%s': %s", dir, strcmp(where, dir) ? "/" : "",
                  strcmp(where, dir) ? where : "", cli_tree_why(res.error));
    else if (rc == TD_ECANCELED)
        cli_error("%llu of %llu files written, each complete: 'tree gen --resume' "
                  "completes the tree", (unsigned long long)res.files,
                  (unsigned long long)td_tree_count(t));
    else if (rc != TD_OK)
        cli_error("%s", td_strerror(rc));
    cli_defer_signals(0); /* ends the program here after a signal */
    if (rc == TD_OK) {
        if (a.count[G_RESUME])
            snprintf(extra, sizeof extra, " (%llu already right)", (unsigned long long)res.skipped);
        summary(&p, "wrote", &res, extra);
    }
    td_tree_free(t);
    return rc == TD_OK ? 0 : CLI_EXIT_FAIL;
}

/* ---- tree list ----------------------------------------------------------- */

static const cli_opt list_opts[] = {
    {NULL, 0, NULL, NULL},
};

static int run_list(const cli_cmd *cmd, int argc, char **argv)
{
    static cli_args a; /* its arrays live until the program ends */
    td_tree *t;
    td_tree_entry e;
    const char *kind;
    static char obuf[1 << 20];

    cli_parse(cmd, argc, argv, &a);
    if (a.npos > 0)
        cli_usage_error("unexpected argument '%s' (tree list writes nothing: no DIR)", a.pos[0]);
    t = make_tree(&a, 0);
    kind = td_kind_name(td_tree_kind(t));
    setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
    size_t klen = strlen(kind);
    for (uint64_t i = 0; i < td_tree_count(t); i++) {
        char line[TD_TREE_PATH_MAX + 96], *p;
        size_t n;
        td_tree_file(t, i, &e);
        n = strlen(e.path);
        memcpy(line, e.path, n);
        p = line + n;
        *p++ = '\t';
        p += snprintf(p, 24, "%llu", (unsigned long long)e.size);
        *p++ = '\t';
        memcpy(p, kind, klen);
        p += klen;
        *p++ = '\t';
        p += snprintf(p, 24, "%llu", (unsigned long long)e.offset);
        *p++ = '\n';
        if (fwrite(line, 1, (size_t)(p - line), stdout) != (size_t)(p - line))
            break;
        if ((i & 0xffff) == 0 && cli_interrupted())
            break;
    }
    td_tree_free(t);
    return 0; /* a write error is reported at exit (cli_check_stdout_at_exit) */
}

/* ---- tree verify --------------------------------------------------------- */

enum { V_PROGRESS, V_QUIET, V_MPI };

static const cli_opt verify_opts[] = {
    [V_PROGRESS] = {"progress", 0, NULL, "progress and summary on stderr even if not a terminal"},
    [V_QUIET] = {"quiet", 'q', NULL, "no progress, no summary, no line per finding"},
    [V_MPI] = {"mpi", 0, NULL, "under mpiexec: the ranks check parts of the files"},
    {NULL, 0, NULL, NULL},
};

int cli_tree_report(void *ctx, const td_tree_finding *f)
{
    char line[1024];
    (void)ctx;
    td_tree_finding_message(f, line, sizeof line);
    cli_error("%s", line);
    return cli_interrupted() != 0;
}

void cli_tree_verdict(const char *dir, const td_tree_result *r, uint64_t files)
{
    uint64_t bad = r->missing + r->wrong_size + r->changed + r->unreadable;
    cli_error("%s: %llu of %llu files wrong (%llu missing, %llu wrong size, %llu changed, "
              "%llu unreadable), %llu extra entries", dir, (unsigned long long)bad,
              (unsigned long long)files, (unsigned long long)r->missing,
              (unsigned long long)r->wrong_size, (unsigned long long)r->changed,
              (unsigned long long)r->unreadable, (unsigned long long)r->extra);
}

static int run_verify(const cli_cmd *cmd, int argc, char **argv)
{
    static cli_args a; /* its arrays live until the program ends */
    prog p;
    td_tree_io io;
    td_tree_result res;
    const char *dir;
    td_tree *t;
    int rc, quiet;

    cli_parse(cmd, argc, argv, &a);
    dir = dir_arg(&a, "verify");
    t = make_tree(&a, 0);
    quiet = cli_progress_mode(cmd, &a) < 0;
    if (a.count[V_MPI]) {
        rc = cli_mpi_tree(t, dir, 1, 0, quiet);
        td_tree_free(t);
        return rc;
    }
    cli_progress_init(&p.pr, cli_progress_mode(cmd, &a), "tree verify", td_tree_total(t));
    td_tree_io_init(&io);
    io.progress = progress_cb;
    io.report = quiet ? NULL : cli_tree_report;
    io.ctx = &p;
    cli_defer_signals(1);
    rc = td_tree_verify(t, dir, &io, &res);
    cli_progress_break(&p.pr);
    if (rc == TD_EIO)
        cli_error("cannot read '%s': %s", dir, strerror(errno));
    else if (rc == TD_EMISMATCH && !quiet)
        cli_tree_verdict(dir, &res, td_tree_count(t));
    else if (rc != TD_OK && rc != TD_EMISMATCH && rc != TD_ECANCELED)
        cli_error("%s", td_strerror(rc));
    cli_defer_signals(0);
    if (rc == TD_OK)
        summary(&p, "verified", &res, "");
    td_tree_free(t);
    return rc == TD_OK ? 0 : CLI_EXIT_FAIL;
}

/* ---- tree like ----------------------------------------------------------- */

enum { L_OUTPUT };

static const cli_opt like_opts[] = {
    [L_OUTPUT] = {"output", 'o', "FILE", "write the profile to FILE (replaced only once "
                  "complete) instead of stdout"},
    {NULL, 0, NULL, NULL},
};

static int run_like(const cli_cmd *cmd, int argc, char **argv)
{
    static cli_args a; /* its arrays live until the program ends */
    const char *dir, *path;
    size_t cap = 1u << 20, len = 0;
    char *buf;
    int rc;

    cli_parse(cmd, argc, argv, &a);
    dir = dir_arg(&a, "like");
    path = a.val[L_OUTPUT];
    buf = malloc(cap);
    if (!buf) {
        cli_error("out of memory");
        return CLI_EXIT_FAIL;
    }
    cli_defer_signals(1);
    rc = td_tree_scan(dir, NULL, buf, cap, &len);
    cli_defer_signals(0);
    if (rc != TD_OK) {
        cli_error("cannot scan '%s': %s", dir, rc == TD_EIO ? strerror(errno) : td_strerror(rc));
        free(buf);
        return CLI_EXIT_FAIL;
    }
    if (path && strcmp(path, "-") != 0) {
        td_output *out;
        rc = td_output_open(&out, path, 0);
        if (rc == TD_OK && (rc = td_output_write(out, buf, len)) != TD_OK)
            td_output_abort(out);
        else if (rc == TD_OK)
            rc = td_output_commit(out);
        if (rc != TD_OK)
            cli_error("cannot write '%s': %s", path,
                      rc == TD_EIO ? strerror(errno) : td_strerror(rc));
    } else {
        fwrite(buf, 1, len, stdout); /* a write error is reported at exit */
    }
    free(buf);
    return rc == TD_OK ? 0 : CLI_EXIT_FAIL;
}

/* ---- the commands (cli_run_subs dispatches; tree --help lists them) ------ */

static const char tree_footer[] =
    "File i holds bytes [i * 2^36, i * 2^36 + SIZE) of the stream (--kind, --seed and\n"
    "the kind's options): `testdata tree list` prints the path, SIZE, kind and offset\n"
    "of each, so `testdata gen KIND SIZE --offset OFFSET` makes any one of them.\n"
    "--threads N is the number of files written or checked at once (0: all cores);\n"
    "the tree never depends on it.  --kind takes any KIND `testdata gen --help` lists.\n"
    "Exit status: 0 done (verify: all right), 1 failure or findings, 2 usage error,\n"
    "129/130/143 interrupted.\n";

static const cli_cmd tree_gen = {
    .name = "tree gen",
    .args = "DIR [options]",
    .summary = "write a file tree",
    .description = "Write the files of a tree fixed by its options and seed under DIR (made if\n"
                   "missing).  Each file appears complete or not at all; entries of DIR that\n"
                   "are not files of the tree are never touched.",
    .opts = gen_opts,
    .stream_opts = 1,
    .tree_opts = 1,
    .footer = tree_footer,
    .complete = "d",
    .run = run_gen,
};

static const cli_cmd tree_list = {
    .name = "tree list",
    .args = "[options]",
    .summary = "print the manifest of a tree",
    .description = "Print one line per file of the tree, without writing anything:\n"
                   "PATH, SIZE, KIND and stream OFFSET, separated by tabs.",
    .opts = list_opts,
    .stream_opts = 1,
    .tree_opts = 1,
    .footer = tree_footer,
    .run = run_list,
};

static const cli_cmd tree_verify = {
    .name = "tree verify",
    .args = "DIR [options]",
    .summary = "check a file tree",
    .description = "Check every file of the tree under DIR, and that DIR holds nothing else.\n"
                   "Prints each missing, wrong-size, changed, unreadable and extra entry with\n"
                   "the first bad offset, in file order; nothing when all is right.",
    .opts = verify_opts,
    .stream_opts = 1,
    .tree_opts = 1,
    .footer = tree_footer,
    .complete = "d",
    .run = run_verify,
};

static const cli_cmd tree_like = {
    .name = "tree like",
    .args = "DIR [-o PROFILE]",
    .summary = "profile a tree for tree gen --like",
    .description = "Scan the tree under DIR (sizes, depth and fan-out; never the contents)\n"
                   "into a tree profile (JSON, docs/format.md) that 'tree gen --like PROFILE'\n"
                   "reproduces.",
    .opts = like_opts,
    .footer = "Exit status: 0 done, 1 failure, 2 usage error.\n",
    .complete = "d",
    .run = run_like,
};

static const cli_cmd *const subs[] = {&tree_gen, &tree_list, &tree_verify, &tree_like, NULL};

static const cli_opt no_opts[] = {{NULL, 0, NULL, NULL}};

const cli_cmd cli_cmd_tree = {
    .name = "tree",
    .args = NULL, /* "gen|list|verify|like ...", from subs (cli_cmd_args) */
    .summary = "file trees: write, list, check, profile",
    .description = "Many files with sizes from a distribution, reproducible and verifiable.",
    .opts = no_opts,
    .footer = NULL,
    .subs = subs,
    .run = cli_run_subs,
};
