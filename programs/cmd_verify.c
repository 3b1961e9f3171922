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

static int run(const cli_cmd *cmd, int argc, char **argv)
{
    cli_args a;
    cli_stream s;
    cli_progress pr;
    td_io_options io;
    td_verify_result r;
    const char *path = NULL, *name = "stdin";
    int fd = STDIN_FILENO, rc;

    cli_parse(cmd, argc, argv, &a);
    if (a.npos < 2)
        cli_usage_error("verify needs KIND and SIZE");
    if (a.npos > 3)
        cli_usage_error("unexpected argument '%s'", a.pos[3]);
    if (a.npos == 3 && strcmp(a.pos[2], "-") != 0)
        path = a.pos[2];
    cli_parse_stream(&a, a.pos[0], a.pos[1], a.val[O_OFFSET], 0, &s);
    if ((rc = cli_mpi_dispatch(cmd, &a, &s, a.npos == 3 ? a.pos[2] : NULL, 1)) >= 0)
        return rc;
    if (path) {
        name = path;
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            cli_error("cannot open '%s': %s", path, strerror(errno));
            return CLI_EXIT_FAIL;
        }
    }
    cli_progress_init(&pr, cli_progress_mode(cmd, &a), "verify", s.size);
    td_io_options_init(&io);
    io.progress = cli_progress_cb;
    io.ctx = &pr;
    cli_defer_signals(1);
    rc = td_verify_fd(fd, s.kind, s.offset, s.size, &s.opt, &io, &r);
    int e = errno;
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

const cli_cmd cli_cmd_verify = {
    .name = "verify",
    .args = "KIND SIZE [options] [FILE|-]",
    .summary = "check bytes against the stream",
    .description = "Check that FILE (default: stdin) holds exactly bytes [offset, offset+SIZE)\n"
                   "of the stream KIND, regenerating them on the fly (no stored copy).",
    .operands = "  SIZE               bytes, as for gen\n"
                "  FILE               the data to check; '-' or nothing reads stdin\n",
    .opts = verify_opts,
    .stream_opts = 1,
    .footer = "Exit status: 0 identical; 1 different, short, long or read error (the\n"
              "first differing offset and the number of differing bytes are printed);\n"
              "2 usage error.\n",
    .run = run,
};
