/* Messages, exit statuses, the standard descriptors, signals, and the
 * loop of the commands that report on files. */
#define _GNU_SOURCE
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

const char *cli_command = NULL;
/* A rank other than 0 of mpiexec ... --mpi: rank 0 prints for all. */
static int quiet_rank;

void cli_error(const char *fmt, ...)
{
    va_list ap;
    fputs("testdata: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

void cli_usage_error(const char *fmt, ...)
{
    va_list ap;
    if (quiet_rank) /* rank 0 says it */
        exit(CLI_EXIT_USAGE);
    fputs("testdata: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    if (cli_command)
        fprintf(stderr, " (try 'testdata %s --help')\n", cli_command);
    else
        fputs(" (try 'testdata --help')\n", stderr);
    exit(CLI_EXIT_USAGE);
}

void cli_error_lines(const char *lines)
{
    while (*lines) {
        size_t n = strcspn(lines, "\n");
        fprintf(stderr, "testdata: %.*s\n", (int)n, lines);
        lines += n + (lines[n] == '\n');
    }
}

void cli_human(char *buf, size_t cap, uint64_t bytes)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024 && u < 6) {
        v /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, cap, "%llu B", (unsigned long long)bytes);
    else
        snprintf(buf, cap, "%.1f %s", v, units[u]);
}

double cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void cli_guard_std_fds(void)
{
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) != -1 || errno != EBADF)
            continue;
        /* The lowest free descriptor is fd itself (those below are open).
         * stdout is opened read-only, so writing to it fails with EBADF as
         * it did closed, instead of the data vanishing with exit 0. */
        int n = open("/dev/null", fd == 2 ? O_WRONLY : O_RDONLY);
        if (n < 0)
            _exit(CLI_EXIT_FAIL); /* nowhere to even say so */
        if (n != fd) {
            dup2(n, fd);
            close(n);
        }
    }
}

/* The one check of stdout for every command, help and --version, as GNU
 * coreutils' close_stdout: at exit, stdout is flushed and closed, and any
 * write error (a closed stdout, which cli_guard_std_fds made read-only; a
 * full disk) becomes a message and exit 1; a reader that went away (EPIPE,
 * SIGPIPE ignored) ends quietly with 141, as gen does.  Commands may stop
 * writing early after an error but leave the report to this.  stdout goes
 * through a cookie stream so that the first error's errno is kept: stdio
 * forgets it (a failed flush in the middle empties the buffer). */
static int stdout_errno;

static ssize_t stdout_write(void *cookie, const char *buf, size_t n)
{
    size_t done = 0;
    (void)cookie;
    while (done < n) {
        ssize_t w = write(STDOUT_FILENO, buf + done, n - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (!stdout_errno)
                stdout_errno = w < 0 ? errno : EIO;
            return (ssize_t)done; /* 0: an error, for stdio */
        }
        done += (size_t)w;
    }
    return (ssize_t)n;
}

static int stdout_close(void *cookie)
{
    (void)cookie;
    if (close(STDOUT_FILENO) != 0 && errno != EINTR) {
        if (!stdout_errno)
            stdout_errno = errno;
        return -1;
    }
    return 0;
}

static void close_stdout(void)
{
    int failed = ferror(stdout) != 0;
    if (fclose(stdout) != 0)
        failed = 1;
    if (!failed)
        return;
    if (stdout_errno == EPIPE)
        _exit(128 + SIGPIPE);
    cli_error("write error on stdout: %s", strerror(stdout_errno ? stdout_errno : EIO));
    _exit(CLI_EXIT_FAIL);
}

void cli_check_stdout_at_exit(void)
{
    static const cookie_io_functions_t io = {.write = stdout_write, .close = stdout_close};
    FILE *f = fopencookie(NULL, "w", io);
    if (f) {
        /* stdio's own rules for stdout: line buffered on a terminal. */
        setvbuf(f, NULL, isatty(STDOUT_FILENO) ? _IOLBF : _IOFBF, BUFSIZ);
        stdout = f;
    }
    atexit(close_stdout);
}

/* ---- MPI ranks ------------------------------------------------------------ */

/* Under mpiexec ... --mpi every rank is a copy of this program with the
 * same argv: only rank 0 prints usage errors and the interruption, or
 * each would be printed once per rank.  The rank is the launcher's
 * (MPICH/Hydra and Slurm's PMI, PMIx, Open MPI), read before MPI starts,
 * since usage errors are found before it does. */
void cli_mpi_rank_from_env(int argc, char **argv)
{
    static const char *const vars[] = {"PMI_RANK", "PMIX_RANK", "OMPI_COMM_WORLD_RANK"};
    int mpi = 0;
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
        mpi |= strcmp(argv[i], "--mpi") == 0;
    for (size_t i = 0; mpi && i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v) {
            quiet_rank = strcmp(v, "0") != 0;
            break;
        }
    }
}

/* ---- signals ------------------------------------------------------------ */

/* The one message after SIGINT, SIGTERM or SIGHUP, for every command.
 * Async-signal-safe: the signal handler calls it. */
static void say_interrupted(int sig)
{
    static const char head[] = "testdata: interrupted by ";
    const char *name = sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM"
                     : sig == SIGHUP ? "SIGHUP" : "a signal";
    char line[64];
    size_t n = sizeof head - 1, k = strlen(name);
    if (quiet_rank)
        return;
    memcpy(line, head, n);
    memcpy(line + n, name, k);
    line[n + k] = '\n';
    (void)!write(STDERR_FILENO, line, n + k + 1);
}

/* ---- signals ------------------------------------------------------------ */

static volatile sig_atomic_t deferred, interrupted;
static const char *volatile temp_path;

/* The one way out after a signal, for every command: the message, the
 * temporary (if one is registered) removed, exit 128+N.  Outputs are
 * unnamed O_TMPFILEs until complete, so nothing else is left behind. */
static void exit_interrupted(int sig)
{
    if (temp_path)
        unlink(temp_path);
    say_interrupted(sig);
    _exit(128 + sig);
}

static void on_signal(int sig)
{
    if (deferred && !interrupted) {
        interrupted = sig;
        return;
    }
    exit_interrupted(sig);
}

void cli_signals_install(void)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    /* No SA_RESTART: a write or read blocked on a pipe returns EINTR, so
     * the library asks the progress callback and can stop cleanly. */
    sa.sa_flags = 0;
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        /* Keep a signal ignored if the parent ignored it (nohup, &). */
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            continue;
        sigaction(sigs[i], &sa, NULL);
    }
    signal(SIGXFSZ, SIG_IGN);
}

void cli_defer_signals(int on)
{
    deferred = on;
    if (!on && interrupted)
        exit_interrupted(interrupted);
}

int cli_interrupted(void)
{
    return interrupted;
}

void cli_signal_temp(const char *path)
{
    temp_path = path;
}

/* Why a file of the tree could not be written.  The two refusals get
 * words of their own: the system's ("File exists", "Not a directory") do
 * not say that something is in the way and is left alone. */
const char *cli_tree_why(int e)
{
    if (e == EEXIST)
        return "something that is not a file of the tree is there (a symlink, directory, FIFO, "
               "device, or the text model or profile the data comes from, where a file of the "
               "tree should be, is never replaced)";
    if (e == ENOTDIR)
        return "something that is not a directory is there (a symlink or file where a "
               "directory of the tree should be is never followed or replaced)";
    return strerror(e);
}

/* The JSON object, in a buffer of the room it needs; with ok 0, the
 * library's error object. */
static void print_json(const cli_file_report *r, void *ctx, const char *file, int ok,
                       const char *why)
{
    size_t n = strlen(file), cap = r->json_max(n);
    if (cap < TD_ANALYSIS_JSON_MAX(n)) /* the error object's */
        cap = TD_ANALYSIS_JSON_MAX(n);
    char *buf = malloc(cap);
    if (!buf) {
        cli_error("out of memory");
        exit(CLI_EXIT_FAIL);
    }
    if (ok)
        (void)r->json(ctx, file, buf, cap);
    else
        (void)td_analysis_json_error(file, why, buf, cap);
    fputs(buf, stdout);
    free(buf);
}

int cli_report_files(const cli_args *a, int json, const cli_file_report *r, void *ctx)
{
    int status = 0;
    if (json)
        printf("[");
    for (int i = 0; i < a->npos; i++) {
        const char *path = a->pos[i], *why;
        int stdin_ = strcmp(path, "-") == 0, rc;
        const char *name = stdin_ ? "stdin" : path;
        int fd = stdin_ ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            why = strerror(errno);
            cli_error("cannot open '%s': %s", path, why);
            rc = TD_EIO;
        } else {
            rc = r->measure(ctx, fd);
            why = rc == TD_EIO ? strerror(errno) : r->why ? r->why(rc) : NULL;
            if (!why)
                why = td_strerror(rc);
            if (rc == TD_EIO)
                cli_error("read error on '%s': %s", name, why);
            else if (rc != TD_OK)
                cli_error("'%s': %s", name, why);
            if (!stdin_)
                close(fd);
        }
        if (json) {
            if (i)
                printf(",\n ");
            print_json(r, ctx, path, rc == TD_OK, why);
        } else if (rc == TD_OK) {
            r->print_text(ctx, name, i);
        }
        if (rc != TD_OK)
            status = CLI_EXIT_FAIL;
        if (fflush(stdout) != 0)
            return status; /* no reader or no space: reported at exit */
    }
    if (json)
        printf("]\n");
    return status; /* a write error is reported at exit (cli_check_stdout_at_exit) */
}
