/* testdata verify KIND [SIZE] [options] [FILE|-] */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { O_OFFSET, O_PROGRESS, O_QUIET, O_MPI, O_FILES };

static const cli_opt verify_opts[] = {
    [O_OFFSET] = {"offset", 0, "N", "stream offset of the first byte of FILE (default 0)"},
    [O_PROGRESS] = CLI_OPT_PROGRESS,
    [O_QUIET] = CLI_OPT_QUIET,
    [O_MPI] = {"mpi", 0, NULL, "under mpiexec: each rank checks its part of FILE"},
    [O_FILES] = CLI_OPT_FILES,
    {NULL, 0, NULL, NULL},
};

static int verify(const cli_cmd *cmd, int argc, char **argv, cli_stream *s)
{
    cli_args a;
    cli_progress pr;
    td_io_options io;
    td_verify_result r;
    const char *path = NULL, *name = "stdin";
    int fd = STDIN_FILENO, rc;

    cli_parse(cmd, argc, argv, &a);
    if (a.npos < 1)
        cli_usage_error("verify needs KIND (and SIZE, unless the input is a regular file)");
    if (a.npos > 3)
        cli_usage_error("unexpected argument '%s'", a.pos[3]);
    /* KIND SIZE [FILE], KIND FILE, or KIND (stdin): the second is SIZE when
     * it reads as one, else a FILE that exists (or '-'), else a bad SIZE. */
    const char *size = a.npos > 1 ? a.pos[1] : NULL, *file = a.npos == 3 ? a.pos[2] : NULL;
    uint64_t probe;
    struct stat st;
    char why[256];
    if (a.npos == 2 && td_parse_size_msg(size, &probe, why, sizeof why) != TD_OK) {
        if (strcmp(size, "-") != 0 && stat(size, &st) != 0)
            cli_usage_error("bad size '%s': %s (and no FILE of that name)", size, why);
        file = size;
        size = NULL;
    }
    if (file && strcmp(file, "-") != 0)
        path = file;
    cli_parse_stream(&a, a.pos[0], size, a.val[O_OFFSET], 0, s);
    if (!size && path && a.count[O_MPI] && !a.val[O_FILES]) {
        /* --mpi on one shared FILE: every rank sees the same size. */
        if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
            cli_usage_error("SIZE is needed: '%s' is not a regular file", path);
        s->size = (uint64_t)st.st_size;
    } else if (!size && a.count[O_MPI]) {
        cli_usage_error("verify --mpi --files needs SIZE");
    }
    if ((rc = cli_mpi_dispatch(cmd, &a, s, file, 1)) >= 0)
        return rc;
    if (path) {
        name = path;
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            cli_error("cannot open '%s': %s", path, strerror(errno));
            return CLI_EXIT_FAIL;
        }
    }
    if (!size) {
        /* SIZE omitted: the rest of a regular file (never of a pipe, which
         * could end early and still match). */
        off_t at = lseek(fd, 0, SEEK_CUR);
        if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || at < 0) {
            if (fd != STDIN_FILENO)
                close(fd);
            cli_usage_error("SIZE is needed: %s%s%s is not a regular file", path ? "'" : "",
                            path ? path : "stdin", path ? "'" : "");
        }
        s->size = st.st_size > at ? (uint64_t)(st.st_size - at) : 0;
        if (s->size > UINT64_MAX - s->offset)
            cli_usage_error("--offset plus the size of %s is past the end of the stream", name);
    }
    cli_progress_init(&pr, cli_progress_mode(cmd, &a), "verify", s->size);
    cli_progress_pipe(&pr, fd);
    td_io_options_init(&io);
    io.progress = cli_progress_cb;
    io.ctx = &pr;
    cli_defer_signals(1);
    rc = td_verify_fd(fd, s->kind, s->offset, s->size, &s->opt, &io, &r);
    int e = errno;
    if (cli_interrupted()) /* an input cut short by the same Ctrl-C is no verdict */
        rc = TD_ECANCELED;
    cli_progress_break(&pr);
    if (rc == TD_EIO) {
        cli_error("read error on '%s' after %llu bytes: %s", name,
                  (unsigned long long)r.received, strerror(e));
    } else if (rc == TD_EMISMATCH) {
        char msg[1024];
        td_verify_message(&r, name, msg, sizeof msg);
        cli_error_lines(msg);
    } else if (rc != TD_OK && rc != TD_ECANCELED) {
        cli_error("verify: %s", td_strerror(rc));
    }
    if (fd != STDIN_FILENO)
        close(fd);
    cli_defer_signals(0);
    if (rc != TD_OK)
        return CLI_EXIT_FAIL;
    cli_progress_done(&pr, r.compared, "verified");
    return 0;
}

static int run(const cli_cmd *cmd, int argc, char **argv)
{
    return cli_stream_run(cmd, argc, argv, verify);
}

const cli_cmd cli_cmd_verify = {
    .name = "verify",
    .args = "KIND [SIZE] [options] [FILE|-]",
    .summary = "check bytes against the stream",
    .description = "Check that FILE (default: stdin) holds exactly bytes [offset, offset+SIZE)\n"
                   "of the stream KIND, regenerating them on the fly (no stored copy).",
    .operands = "  SIZE               bytes, as for gen; omitted, the size of FILE (a regular\n"
                "                     file: a truncated one then passes, so give SIZE to\n"
                "                     check the length too)\n"
                "  FILE               the data to check; '-' or nothing reads stdin\n",
    .opts = verify_opts,
    .stream_opts = 1,
    .footer = "Exit status: 0 identical; 1 different, short, long or read error (the\n"
              "first differing offset and the number of differing bytes are printed);\n"
              "2 usage error.\n",
    .complete = "kff",
    .run = run,
};
