/* Messages, exit statuses, the standard descriptors and signals. */
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

/* ---- signals ------------------------------------------------------------ */

static volatile sig_atomic_t deferred, interrupted;
static const char *volatile temp_path;

static void on_signal(int sig)
{
    if (deferred && !interrupted) {
        interrupted = sig;
        return;
    }
    if (temp_path)
        unlink(temp_path);
    _exit(128 + sig);
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
    if (!on && interrupted) {
        int sig = interrupted;
        if (temp_path)
            unlink(temp_path);
        _exit(128 + sig);
    }
}

int cli_interrupted(void)
{
    return interrupted;
}

void cli_signal_temp(const char *path)
{
    temp_path = path;
}
