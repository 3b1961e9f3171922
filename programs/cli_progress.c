/* A progress line on stderr while running, and a summary at the end. */
#include "cli.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void cli_progress_init(cli_progress *p, int mode, const char *verb, uint64_t total)
{
    memset(p, 0, sizeof *p);
    p->tty = isatty(STDERR_FILENO);
    p->on = mode > 0 || (mode == 0 && p->tty);
    p->peer_fd = -1;
    p->automatic = mode == 0;
    p->verb = verb;
    p->total = total;
    p->t0 = p->last = cli_now();
}

void cli_progress_pipe(cli_progress *p, int fd)
{
    struct stat st;
    /* Only the automatic mode defers; --progress means it. */
    if (p->automatic && p->on && fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode))
        p->peer_fd = fd;
}

/* Is process `pid` a progress meter that has the pipe "pipe:[ino]" open? */
static int meter_holds(const char *pid, const char *want)
{
    static const char *const meters[] = {"pv", "mbuffer", "bar", NULL};
    char path[300], comm[32], link[64];
    int found = 0;
    FILE *f;

    snprintf(path, sizeof path, "/proc/%s/comm", pid);
    if (!(f = fopen(path, "re")))
        return 0;
    if (!fgets(comm, sizeof comm, f))
        comm[0] = '\0';
    fclose(f);
    comm[strcspn(comm, "\n")] = '\0';
    for (int i = 0; meters[i] && !found; i++)
        found = strcmp(comm, meters[i]) == 0;
    if (!found)
        return 0;
    snprintf(path, sizeof path, "/proc/%s/fd", pid);
    DIR *d = opendir(path);
    if (!d)
        return 0;
    found = 0;
    for (struct dirent *e; !found && (e = readdir(d));) {
        char fdpath[600];
        if (e->d_name[0] == '.')
            continue;
        snprintf(fdpath, sizeof fdpath, "%s/%s", path, e->d_name);
        ssize_t n = readlink(fdpath, link, sizeof link - 1);
        if (n > 0) {
            link[n] = '\0';
            found = strcmp(link, want) == 0;
        }
    }
    closedir(d);
    return found;
}

int cli_pipe_has_meter(int fd)
{
    struct stat st;
    char want[48], self[24];
    int found = 0;
    DIR *d;

    if (fstat(fd, &st) != 0 || !S_ISFIFO(st.st_mode))
        return 0;
    snprintf(want, sizeof want, "pipe:[%llu]", (unsigned long long)st.st_ino);
    snprintf(self, sizeof self, "%ld", (long)getpid());
    if (!(d = opendir("/proc")))
        return 0;
    for (struct dirent *e; !found && (e = readdir(d));)
        if (e->d_name[0] >= '1' && e->d_name[0] <= '9' && strcmp(e->d_name, self) != 0)
            found = meter_holds(e->d_name, want);
    closedir(d);
    return found;
}

/* The deferred check of cli_progress_pipe: once, at the first output. */
static void check_peer(cli_progress *p)
{
    if (p->peer_fd >= 0) {
        if (cli_pipe_has_meter(p->peer_fd))
            p->on = 0;
        p->peer_fd = -1;
    }
}

static void line(cli_progress *p, uint64_t done, double t)
{
    char d[32], tot[32], rate[32], text[160];
    double el = t - p->t0, r = el > 0 ? (double)done / el : 0;
    int n;
    cli_human(d, sizeof d, done);
    cli_human(rate, sizeof rate, (uint64_t)r);
    if (p->total != TD_SIZE_UNBOUNDED && p->total > 0) {
        cli_human(tot, sizeof tot, p->total);
        double left = r > 0 ? (double)(p->total - done) / r : 0;
        unsigned long s = (unsigned long)(left + 0.5);
        n = snprintf(text, sizeof text, "testdata: %s %s / %s (%3.0f%%), %s/s, ETA %lu:%02lu:%02lu",
                     p->verb, d, tot, 100.0 * (double)done / (double)p->total, rate, s / 3600,
                     s / 60 % 60, s % 60);
    } else {
        n = snprintf(text, sizeof text, "testdata: %s %s, %s/s", p->verb, d, rate);
    }
    if (p->tty)
        fprintf(stderr, "\r%s%*s", text, n < 79 ? 79 - n : 0, "");
    else
        fprintf(stderr, "%s\n", text);
    p->drawn = p->tty;
}

void cli_progress_update(cli_progress *p, uint64_t done)
{
    if (!p->on)
        return;
    double t = cli_now();
    if (t - p->last < (p->tty ? 0.25 : 1.0))
        return;
    p->last = t;
    check_peer(p);
    if (p->on)
        line(p, done, t);
}

void cli_progress_break(cli_progress *p)
{
    if (p->drawn) {
        fputc('\n', stderr);
        p->drawn = 0;
    }
}

void cli_progress_done(cli_progress *p, uint64_t done, const char *what)
{
    check_peer(p);
    if (!p->on)
        return;
    double t = cli_now(), el = t - p->t0;
    char d[32], rate[32];
    line(p, done, t);
    cli_progress_break(p);
    cli_human(d, sizeof d, done);
    cli_human(rate, sizeof rate, el > 0 ? (uint64_t)((double)done / el) : 0);
    fprintf(stderr, "testdata: %s %llu bytes (%s) in %.2f s, %s/s (%.3f GB/s)\n", what,
            (unsigned long long)done, d, el, rate, el > 0 ? (double)done / el / 1e9 : 0.0);
}

int cli_progress_cb(void *ctx, uint64_t done)
{
    if (cli_interrupted())
        return 1;
    cli_progress_update(ctx, done);
    return 0;
}

int cli_progress_mode(const cli_cmd *cmd, const cli_args *a)
{
    int q = cli_opt_index(cmd, "quiet"), p = cli_opt_index(cmd, "progress");
    if (q >= 0 && a->count[q])
        return -1; /* --quiet wins */
    if (p >= 0 && a->count[p])
        return 1;
    return 0;
}
