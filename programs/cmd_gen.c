/* testdata gen KIND SIZE [options] [-o FILE] */
#include "cli.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

enum { O_OUTPUT, O_OFFSET, O_KEEP, O_FORCE, O_PROGRESS, O_QUIET, O_MPI, O_FILES };

static const cli_opt gen_opts[] = {
    [O_OUTPUT] = {"output", 'o', "FILE",
                  "write to FILE instead of stdout ('-' is stdout); a regular FILE is replaced "
                  "only once complete, a device or FIFO is written into"},
    [O_OFFSET] = {"offset", 0, "N", "first byte of the stream (default 0)"},
    [O_KEEP] = {"keep-partial", 0, NULL,
                "write into FILE itself (truncated first) and keep what was written if the run "
                "fails"},
    [O_FORCE] = {"force", 'f', NULL,
                 "write a binary kind even when the output is a terminal (refused otherwise)"},
    [O_PROGRESS] = CLI_OPT_PROGRESS,
    [O_QUIET] = CLI_OPT_QUIET,
    [O_MPI] = {"mpi", 0, NULL,
               "under mpiexec: each rank writes its part of FILE (docs/scale-out.md)"},
    [O_FILES] = CLI_OPT_FILES,
    {NULL, 0, NULL, NULL},
};

/* Write to stdout or to an output opened by the library's rules. */
static int gen(const cli_cmd *cmd, int argc, char **argv, cli_stream *s)
{
    cli_args a;
    cli_progress pr;
    td_io_options io;
    td_output *out = NULL;
    const char *path, *where = "stdout";
    uint64_t written = 0;
    int rc, fd = STDOUT_FILENO, e, put = 0;

    cli_parse(cmd, argc, argv, &a);
    if (a.npos < 2)
        cli_usage_error("gen needs KIND and SIZE");
    if (a.npos > 2)
        cli_usage_error("unexpected argument '%s'", a.pos[2]);
    path = a.val[O_OUTPUT];
    if (path && strcmp(path, "-") == 0 && !a.count[O_MPI])
        path = NULL;
    cli_parse_stream(&a, a.pos[0], a.pos[1], a.val[O_OFFSET], 1, s);
    if (path) {
        char msg[512];
        if (td_options_check_output(&s->opt, path, msg, sizeof msg) != TD_OK)
            cli_usage_error("%s", msg);
    }
    if ((rc = cli_mpi_dispatch(cmd, &a, s, path, 0)) >= 0)
        return rc;
    if (a.count[O_KEEP] && !path)
        cli_usage_error("--keep-partial needs -o FILE");

    if (path) {
        rc = td_output_open(&out, path, a.count[O_KEEP] ? TD_IO_IN_PLACE : 0);
        if (rc != TD_OK) {
            cli_error("cannot write '%s': %s", path, rc == TD_EIO ? strerror(errno) : td_strerror(rc));
            return CLI_EXIT_FAIL;
        }
        if (s->size == TD_SIZE_UNBOUNDED && td_output_atomic(out)) {
            td_output_abort(out);
            cli_usage_error("an endless stream can never replace '%s' (it is never complete): "
                            "give a SIZE, or --keep-partial to write into it", path);
        }
        fd = td_output_fd(out);
        where = path;
    }
    if (!a.count[O_FORCE] && td_kind_is_text(s->kind) == 0 && isatty(fd)) {
        /* As zstd: binary bytes would garble the terminal, and a big SIZE
         * would scroll for minutes. */
        if (out)
            td_output_abort(out);
        cli_error("not writing binary data (kind %s) to a terminal: redirect it (> FILE, "
                  "| cmd), use -o FILE, or --force", td_kind_name(s->kind));
        return CLI_EXIT_USAGE;
    }
    cli_progress_init(&pr, cli_progress_mode(cmd, &a), "gen", s->size);
    cli_progress_pipe(&pr, fd);
    td_io_options_init(&io);
    io.progress = cli_progress_cb;
    io.ctx = &pr;
    cli_defer_signals(1);
    rc = td_write_fd(fd, s->kind, s->offset, s->size, &s->opt, &io, &written);
    e = errno;
    if (out && rc == TD_OK) {
        put = td_output_atomic(out); /* a failure now is the rename's, not a write's */
        rc = td_output_commit(out);
        e = errno;
        out = NULL;
    }
    cli_progress_break(&pr);
    if (rc == TD_EIO && e == EPIPE && !path) {
        /* The reader went away (SIGPIPE ignored): end quietly. */
        cli_defer_signals(0);
        return 128 + SIGPIPE;
    }
    if (rc == TD_EIO && put)
        cli_error("wrote %llu bytes but cannot put '%s' in place: %s", (unsigned long long)written,
                  path, strerror(e));
    else if (rc == TD_EIO)
        cli_error("write error on '%s' after %llu bytes: %s", where, (unsigned long long)written,
                  strerror(e));
    else if (rc != TD_OK && rc != TD_ECANCELED)
        cli_error("%s", td_strerror(rc));
    if (rc != TD_OK && out) {
        int atomic = td_output_atomic(out);
        td_output_abort(out);
        if (atomic && rc != TD_ECANCELED) /* interrupted: one message, for every command */
            cli_error("'%s' is unchanged", path);
        else if (a.count[O_KEEP])
            cli_error("kept the incomplete '%s' (%llu bytes)", path, (unsigned long long)written);
    }
    cli_defer_signals(0); /* ends the program here after a signal */
    if (rc != TD_OK)
        return CLI_EXIT_FAIL;
    cli_progress_done(&pr, written, "wrote");
    return 0;
}

static int run(const cli_cmd *cmd, int argc, char **argv)
{
    return cli_stream_run(cmd, argc, argv, gen);
}

const cli_cmd cli_cmd_gen = {
    .name = "gen",
    .args = "KIND SIZE [options] [-o FILE]",
    .summary = "write bytes of a stream",
    .description = "Write bytes [offset, offset+SIZE) of the stream KIND to stdout or FILE.",
    .operands = "  SIZE               bytes, with the suffixes of head -c: b is 512; K M G T P E\n"
                "                     (k m, KiB MiB ...) are powers of 1024, KB MB GB ...\n"
                "                     (kB mB) powers of 1000; 'inf' never ends\n",
    .opts = gen_opts,
    .stream_opts = 1,
    .footer = "--seed random picks a seed and prints it on stderr.  Kinds other than text\n"
              "are not written to a terminal without --force.\n"
              "Exit status: 0 done, 1 I/O error, 2 usage error, 129/130/143 interrupted.\n",
    .complete = "ks",
    .run = run,
};
