/*
 * testdata: the command-line front end.  It only translates arguments,
 * errors and I/O; every parser, check, generator, verifier and analyzer
 * lives in libtestdata.
 *
 * Exit status: 0 success; 1 failure (I/O error, verify mismatch); 2 usage
 * error; 129/130/143 after SIGHUP/SIGINT/SIGTERM; 141 when the reader of
 * stdout went away with SIGPIPE ignored.
 */
#define _GNU_SOURCE
#include <testdata.h>

#include "mpi_mode.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define EXIT_FAIL 1
#define EXIT_USAGE 2
#define MIB (1024u * 1024u)
/* verify reads (and compares) in chunks this big, double-buffered; analyze
 * reads in 1 MiB ones. */
#define VERIFY_BUF (2u * MIB)
#define ANALYZE_BUF MIB

static const char *prog = "testdata";

/* ------------------------------------------------------------------------ */
/* Messages                                                                  */
/* ------------------------------------------------------------------------ */

/* "testdata: MESSAGE (try 'testdata CMD --help')" on one line, exit 2. */
static const char *cur_cmd = NULL;

static void usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void usage_error(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s: ", prog);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    if (cur_cmd)
        fprintf(stderr, " (try 'testdata %s --help')\n", cur_cmd);
    else
        fputs(" (try 'testdata --help')\n", stderr);
    exit(EXIT_USAGE);
}

/* 1.5 GiB, 12.0 MiB, 512 B. */
static void human(char *buf, size_t cap, double v)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    int u = 0;
    while (v >= 1024 && u < 6) {
        v /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, cap, "%.0f B", v);
    else
        snprintf(buf, cap, "%.1f %s", v, units[u]);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ------------------------------------------------------------------------ */
/* Signals: a partial -o file is removed on SIGINT/SIGTERM                   */
/* ------------------------------------------------------------------------ */

static const char *volatile partial_path = NULL; /* removed on a signal */

static void on_signal(int sig)
{
    if (partial_path)
        unlink(partial_path);
    _exit(128 + sig);
}

static void setup_signals(void)
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        /* Keep a signal ignored if the parent ignored it (nohup, &). */
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            continue;
        sigaction(sigs[i], &sa, NULL);
    }
    /* A file-size limit must arrive as EFBIG, not kill us silently. */
    signal(SIGXFSZ, SIG_IGN);
}

/* ------------------------------------------------------------------------ */
/* Progress: a line on stderr while running, and a summary at the end       */
/* ------------------------------------------------------------------------ */

typedef struct progress {
    int on;          /* print progress and summary */
    int tty;         /* stderr is a terminal: redraw one line */
    const char *verb;
    uint64_t total;  /* TD_SIZE_UNBOUNDED: no %, no ETA */
    double t0, last;
    int drawn;       /* a line is on screen (tty) */
} progress;

static void progress_init(progress *p, int mode, const char *verb, uint64_t total)
{
    /* mode: -1 quiet, 0 automatic (terminal only), 1 forced */
    memset(p, 0, sizeof *p);
    p->tty = isatty(STDERR_FILENO);
    p->on = mode > 0 || (mode == 0 && p->tty);
    p->verb = verb;
    p->total = total;
    p->t0 = p->last = now();
}

static void progress_line(progress *p, uint64_t done, double t)
{
    char d[32], tot[32], rate[32], line[160];
    double el = t - p->t0, r = el > 0 ? (double)done / el : 0;
    int n;
    human(d, sizeof d, (double)done);
    human(rate, sizeof rate, r);
    if (p->total != TD_SIZE_UNBOUNDED && p->total > 0) {
        human(tot, sizeof tot, (double)p->total);
        double left = r > 0 ? (double)(p->total - done) / r : 0;
        unsigned long s = (unsigned long)(left + 0.5);
        n = snprintf(line, sizeof line, "%s: %s %s / %s (%3.0f%%), %s/s, ETA %lu:%02lu:%02lu",
                     prog, p->verb, d, tot, 100.0 * (double)done / (double)p->total, rate,
                     s / 3600, s / 60 % 60, s % 60);
    } else {
        n = snprintf(line, sizeof line, "%s: %s %s, %s/s", prog, p->verb, d, rate);
    }
    if (p->tty)
        fprintf(stderr, "\r%s%*s", line, n < 79 ? 79 - n : 0, "");
    else
        fprintf(stderr, "%s\n", line);
    p->drawn = p->tty;
}

static void progress_update(progress *p, uint64_t done)
{
    if (!p->on)
        return;
    double t = now();
    if (t - p->last < (p->tty ? 0.25 : 1.0))
        return;
    p->last = t;
    progress_line(p, done, t);
}

/* End the progress line (before an error message, or at the end). */
static void progress_break(progress *p)
{
    if (p->drawn) {
        fputc('\n', stderr);
        p->drawn = 0;
    }
}

static void progress_done(progress *p, uint64_t done, const char *what)
{
    if (!p->on)
        return;
    double t = now(), el = t - p->t0;
    char d[32], rate[32];
    progress_line(p, done, t);
    progress_break(p);
    human(d, sizeof d, (double)done);
    human(rate, sizeof rate, el > 0 ? (double)done / el : 0);
    fprintf(stderr, "%s: %s %llu bytes (%s) in %.2f s, %s/s (%.3f GB/s)\n", prog, what,
            (unsigned long long)done, d, el, rate, el > 0 ? (double)done / el / 1e9 : 0.0);
}

/* ------------------------------------------------------------------------ */
/* Arguments                                                                 */
/* ------------------------------------------------------------------------ */

#define MAX_POS 64
#define MAX_KOPT 64

typedef struct args {
    const char *pos[MAX_POS];
    int npos;
    const char *kkey[MAX_KOPT]; /* --KEY VALUE handed to td_options_set */
    const char *kval[MAX_KOPT];
    int nkopt;
    const char *output;
    const char *offset;
    const char *sample;
    const char *threads; /* analyze's own --threads */
    int progress;     /* -1 quiet, 0 auto, 1 forced */
    int keep_partial;
    int json;
    int mpi;           /* --mpi: programs/mpi_mode.c */
    const char *files; /* --files M (with --mpi) */
} args;

/* Flags of the CLI itself; what a command does not list is rejected. */
enum { F_OUTPUT = 1, F_OFFSET = 2, F_PROGRESS = 4, F_KEEP = 8, F_JSON = 16, F_SAMPLE = 32,
       F_KINDOPTS = 64, F_MPI = 128 };

static void print_help(const char *text)
{
    fputs(text, stdout);
    exit(0);
}

static void print_version(void)
{
    printf("testdata %s (format %d)\n", td_version(), TD_FORMAT_VERSION);
    exit(0);
}

static const char *take_value(int argc, char **argv, int *i, const char *name, const char *eq)
{
    if (eq)
        return eq + 1;
    if (*i + 1 >= argc)
        usage_error("missing value for '%s'", name);
    return argv[++*i];
}

/* Flags of some command: never taken for a stream option. */
static int is_cli_flag(const char *n)
{
    static const char *const all[] = {"output", "offset", "sample", "progress", "quiet",
                                      "keep-partial", "json", "mpi", "files", NULL};
    for (int i = 0; all[i]; i++)
        if (strcmp(n, all[i]) == 0)
            return 1;
    return 0;
}

/* Does some kind take the stream option --NAME ('-' or '_' between words)? */
static int stream_option_exists(const char *name, size_t len)
{
    char key[64];
    td_options probe;
    if (len >= sizeof key)
        return 0;
    for (size_t i = 0; i < len; i++)
        key[i] = name[i] == '-' ? '_' : name[i];
    key[len] = '\0';
    for (int k = 0; k < TD_KIND_COUNT; k++) {
        td_options_init(&probe);
        /* The key is checked before the value: TD_EOPTION means unknown. */
        if (td_kind_name(k) && td_options_set(&probe, k, key, "0") != TD_EOPTION)
            return 1;
    }
    return 0;
}

static void parse_args(int argc, char **argv, unsigned flags, const char *help, args *a)
{
    int only_pos = 0;
    memset(a, 0, sizeof *a);
    for (int i = 1; i < argc; i++) {
        char *arg = argv[i];
        if (only_pos || arg[0] != '-' || arg[1] == '\0' || (arg[1] >= '0' && arg[1] <= '9')) {
            /* Positional; "-" is stdin and "-5" a (bad) size, left to the size parser. */
            if (a->npos == MAX_POS)
                usage_error("too many arguments");
            a->pos[a->npos++] = arg;
            continue;
        }
        if (strcmp(arg, "--") == 0) {
            only_pos = 1;
            continue;
        }
        if (arg[1] != '-') { /* short options */
            if (strcmp(arg, "-h") == 0)
                print_help(help);
            if (strcmp(arg, "-q") == 0 && (flags & F_PROGRESS)) {
                a->progress = -1;
                continue;
            }
            if (arg[1] == 'o' && (flags & F_OUTPUT)) {
                a->output = arg[2] ? arg + 2 : take_value(argc, argv, &i, "-o", NULL);
                continue;
            }
            usage_error("unknown option '%s'", arg);
        }
        /* --name or --name=value */
        char name[64];
        const char *eq = strchr(arg, '=');
        size_t nlen = eq ? (size_t)(eq - arg) : strlen(arg);
        if (nlen >= sizeof name)
            usage_error("unknown option '%.*s'", (int)nlen, arg);
        memcpy(name, arg, nlen);
        name[nlen] = '\0';
        const char *n = name + 2;
        int is_flag = 1;
        if (strcmp(n, "help") == 0)
            print_help(help);
        else if (strcmp(n, "version") == 0)
            print_version();
        else if (strcmp(n, "progress") == 0 && (flags & F_PROGRESS))
            a->progress = a->progress < 0 ? -1 : 1; /* --quiet wins */
        else if (strcmp(n, "quiet") == 0 && (flags & F_PROGRESS))
            a->progress = -1;
        else if (strcmp(n, "keep-partial") == 0 && (flags & F_KEEP))
            a->keep_partial = 1;
        else if (strcmp(n, "json") == 0 && (flags & F_JSON))
            a->json = 1;
        else if (strcmp(n, "mpi") == 0 && (flags & F_MPI))
            a->mpi = 1;
        else
            is_flag = 0;
        if (is_flag) {
            if (eq)
                usage_error("option '%s' takes no value", name);
            continue;
        }
        if (strcmp(n, "output") == 0 && (flags & F_OUTPUT)) {
            a->output = take_value(argc, argv, &i, name, eq);
        } else if (strcmp(n, "offset") == 0 && (flags & F_OFFSET)) {
            a->offset = take_value(argc, argv, &i, name, eq);
        } else if (strcmp(n, "sample") == 0 && (flags & F_SAMPLE)) {
            a->sample = take_value(argc, argv, &i, name, eq);
        } else if (strcmp(n, "files") == 0 && (flags & F_MPI)) {
            a->files = take_value(argc, argv, &i, name, eq);
        } else if (strcmp(n, "threads") == 0 && (flags & F_SAMPLE)) {
            a->threads = take_value(argc, argv, &i, name, eq);
        } else if (is_cli_flag(n)) {
            usage_error("unknown option '%s' for %s", name, cur_cmd);
        } else if ((flags & F_KINDOPTS) && stream_option_exists(n, strlen(n))) {
            /* Any other --KEY VALUE is a stream option for the library to
             * judge, so options of new kinds work without changes here. */
            if (a->nkopt == MAX_KOPT)
                usage_error("too many options");
            a->kval[a->nkopt] = take_value(argc, argv, &i, name, eq);
            a->kkey[a->nkopt++] = arg; /* "--key" or "--key=value" */
        } else {
            usage_error("unknown option '%s'", name);
        }
    }
}

/* Options of a stream: KIND SIZE and --KEY VALUE pairs. */
typedef struct stream_spec {
    int kind;
    uint64_t size;
    uint64_t offset;
    td_options opt;
} stream_spec;

static void parse_stream(const args *a, stream_spec *s, int allow_random_seed)
{
    int rc;

    rc = td_kind_from_name(a->pos[0], &s->kind);
    if (rc != TD_OK) {
        char kinds[256] = "";
        for (int k = 0; k < TD_KIND_COUNT; k++)
            if (td_kind_name(k))
                snprintf(kinds + strlen(kinds), sizeof kinds - strlen(kinds), "%s%s",
                         kinds[0] ? ", " : "", td_kind_name(k));
        usage_error("unknown kind '%s' (kinds: %s)", a->pos[0], kinds);
    }
    rc = td_parse_size(a->pos[1], &s->size);
    if (rc != TD_OK)
        usage_error("bad size '%s': %s", a->pos[1], td_strerror(rc));
    s->offset = 0;
    if (a->offset) {
        rc = td_parse_size(a->offset, &s->offset);
        if (rc != TD_OK)
            usage_error("bad --offset '%s': %s", a->offset, td_strerror(rc));
    }
    td_options_init(&s->opt);
    for (int i = 0; i < a->nkopt; i++) {
        char key[64], seedbuf[32];
        const char *opt = a->kkey[i] + 2, *val = a->kval[i];
        size_t klen = strcspn(opt, "=");
        snprintf(key, sizeof key, "%.*s", (int)klen, opt);
        for (char *p = key; *p; p++)
            if (*p == '-')
                *p = '_';
        if (strcmp(key, "seed") == 0 && strcmp(val, "random") == 0) {
            uint64_t seed;
            if (!allow_random_seed)
                usage_error("--seed random cannot be verified: give the seed that gen printed");
            if (getrandom(&seed, sizeof seed, 0) != (ssize_t)sizeof seed)
                seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
            snprintf(seedbuf, sizeof seedbuf, "%llu", (unsigned long long)seed);
            val = seedbuf;
            fprintf(stderr, "%s: seed %s (reproduce with --seed %s)\n", prog, val, val);
        }
        rc = td_options_set(&s->opt, s->kind, key, val);
        if (rc == TD_EOPTION) {
            /* Known to some kind (parse_args checked), or rejected by the
             * kind's own check of the values. */
            usage_error("option '--%.*s' does not apply to kind %s", (int)klen, opt,
                        td_kind_name(s->kind));
        }
        if (rc != TD_OK)
            usage_error("bad value '%s' for --%.*s: %s", val, (int)klen, opt, td_strerror(rc));
    }
    if (s->size != TD_SIZE_UNBOUNDED && s->size > UINT64_MAX - s->offset)
        usage_error("--offset plus SIZE is past the end of the stream (2^64 bytes)");
}

/* ------------------------------------------------------------------------ */
/* I/O helpers                                                               */
/* ------------------------------------------------------------------------ */

static int write_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Read until @p cap bytes or end of input; returns bytes read, or -1 (errno). */
static ssize_t read_full(int fd, void *buf, size_t cap)
{
    size_t got = 0;
    while (got < cap) {
        ssize_t r = read(fd, (char *)buf + got, cap - got);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

static void bigger_pipe(int fd)
{
    struct stat st;
    /* A bigger pipe means fewer wake-ups of the other side per byte. */
    if (fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode))
        (void)fcntl(fd, F_SETPIPE_SZ, MIB);
}

/* ------------------------------------------------------------------------ */
/* --mpi: hand the parsed command over to programs/mpi_mode.c                */
/* ------------------------------------------------------------------------ */

static const char mpi_help[] =
    "  --mpi              under mpiexec: each rank does its part of FILE (see\n"
    "                     docs/scale-out.md); rank 0 prints the aggregate GB/s\n"
    "  --files M          with --mpi: M files DIR/part-000000... instead of FILE\n";

/* --files needs --mpi; every rank must see the same seed. */
static void mpi_check(const args *a)
{
    if (a->files && !a->mpi)
        usage_error("--files needs --mpi");
    for (int i = 0; a->mpi && i < a->nkopt; i++) {
        const char *k = a->kkey[i]; /* "--seed" or "--seed=VALUE" */
        if (strncmp(k, "--seed", 6) == 0 && (k[6] == '\0' || k[6] == '=') &&
            strcmp(a->kval[i], "random") == 0)
            usage_error("--seed random does not work with --mpi (every rank needs the same "
                        "seed): give a number");
    }
}

static int mpi_run(const args *a, const stream_spec *sp, const char *path, int verify)
{
    td_mpi_job job = {.kind = sp->kind, .size = sp->size, .offset = sp->offset, .opt = sp->opt,
                      .path = path, .files = 0, .quiet = a->progress < 0};
    if (a->files) {
        int rc = td_parse_size(a->files, &job.files);
        if (rc != TD_OK || job.files == 0 || job.files == TD_SIZE_UNBOUNDED)
            usage_error("bad --files '%s': a count of at least 1", a->files);
    }
    return verify ? td_mpi_verify(&job) : td_mpi_gen(&job);
}

/* ------------------------------------------------------------------------ */
/* gen                                                                       */
/* ------------------------------------------------------------------------ */

static char gen_help[2048];
static char verify_help[2048];

static const char stream_opts_help[] =
    "  --seed N|random    stream seed (default 0); 'random' picks one and prints it\n"
    "  --algorithm A      random: chacha20 (default) or fast\n"
    "  --ratio R          compressible: target compression ratio, 1 to 1000\n"
    "                     (default 3)\n"
    "  --dedup D          random, compressible: a fixed-block deduplicator finds\n"
    "                     D times fewer unique blocks than blocks (default 1)\n"
    "  --dedup-block N    dedup block size, a power of two (default 4096)\n"
    "  --threads N        generator threads (default 1; 0 = all cores)\n"
    "  --KEY VALUE        any other option of the kind\n"
    "  --offset N         first byte of the stream (default 0)\n";

static const char size_help[] =
    "  SIZE               bytes; K M G T P E (KiB MiB ...) are powers of 1024,\n"
    "                     KB MB GB ... powers of 1000; 'inf' never ends\n";

static void build_helps(void)
{
    char kinds[256] = "";
    for (int k = 0; k < TD_KIND_COUNT; k++)
        if (td_kind_name(k))
            snprintf(kinds + strlen(kinds), sizeof kinds - strlen(kinds), "%s%s",
                     kinds[0] ? " | " : "", td_kind_name(k));
    snprintf(gen_help, sizeof gen_help,
             "usage: testdata gen KIND SIZE [options] [-o FILE]\n"
             "Write bytes [offset, offset+SIZE) of the stream KIND to stdout or FILE.\n"
             "\n"
             "  KIND               %s\n"
             "%s%s"
             "  -o, --output FILE  write to FILE instead of stdout; removed if incomplete\n"
             "  --keep-partial     keep an incomplete FILE after an error or signal\n"
             "  --progress         progress and summary on stderr even if not a terminal\n"
             "  -q, --quiet        no progress, no summary\n"
             "%s"
             "  -h, --help         this help; --version prints the version\n"
             "\n"
             "Exit status: 0 done, 1 I/O error, 2 usage error, 129/130/143 interrupted.\n",
             kinds, size_help, stream_opts_help, mpi_help);
    snprintf(verify_help, sizeof verify_help,
             "usage: testdata verify KIND SIZE [options] [FILE|-]\n"
             "Check that FILE (default: stdin) holds exactly bytes [offset, offset+SIZE)\n"
             "of the stream KIND, regenerating them on the fly (no stored copy).\n"
             "\n"
             "  KIND               %s\n"
             "%s%s"
             "  --progress         progress and summary on stderr even if not a terminal\n"
             "  -q, --quiet        no progress, no summary\n"
             "%s"
             "  -h, --help         this help; --version prints the version\n"
             "\n"
             "Exit status: 0 identical; 1 different, short, long or read error (the\n"
             "first differing offset and the number of differing bytes are printed);\n"
             "2 usage error.\n",
             kinds, size_help, stream_opts_help, mpi_help);
}

static int cmd_gen(int argc, char **argv)
{
    args a;
    stream_spec sp;
    progress pr;
    td_stream *s = NULL;
    int fd = STDOUT_FILENO, rc, removable = 0, epipe = 0;
    uint64_t end, done = 0;
    const char *where;

    cur_cmd = "gen";
    parse_args(argc, argv, F_OUTPUT | F_OFFSET | F_PROGRESS | F_KEEP | F_KINDOPTS | F_MPI, gen_help,
               &a);
    if (a.npos < 2)
        usage_error("gen needs KIND and SIZE");
    if (a.npos > 2)
        usage_error("unexpected argument '%s'", a.pos[2]);
    mpi_check(&a);
    parse_stream(&a, &sp, 1);
    if (a.mpi)
        return mpi_run(&a, &sp, a.output, 0);

    end = sp.size == TD_SIZE_UNBOUNDED ? TD_SIZE_UNBOUNDED : sp.offset + sp.size;
    rc = td_stream_open(&s, sp.kind, end, &sp.opt);
    if (rc == TD_OK)
        rc = td_stream_seek(s, sp.offset);
    if (rc != TD_OK) {
        fprintf(stderr, "%s: cannot create the stream: %s\n", prog, td_strerror(rc));
        td_stream_free(s);
        return EXIT_FAIL;
    }
    if (a.output) {
        struct stat st;
        fd = open(a.output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
        if (fd < 0) {
            fprintf(stderr, "%s: cannot open '%s': %s\n", prog, a.output, strerror(errno));
            td_stream_free(s);
            return EXIT_FAIL;
        }
        /* Only a regular file is ours to remove (never /dev/full, a fifo...). */
        removable = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && !a.keep_partial;
        if (removable)
            partial_path = a.output;
        where = a.output;
    } else {
        bigger_pipe(fd);
        where = "stdout";
    }

    progress_init(&pr, a.progress, "gen", sp.size);
    for (;;) {
        const void *chunk;
        size_t len;
        rc = td_stream_next(s, &chunk, &len);
        if (rc != TD_OK)
            break;
        if (write_all(fd, chunk, len) != 0) {
            int e = errno;
            rc = TD_EIO;
            progress_break(&pr);
            if (e == EPIPE) { /* the reader is gone (SIGPIPE ignored): end quietly */
                epipe = 1;
                break;
            }
            fprintf(stderr, "%s: write error on '%s' after %llu bytes: %s\n", prog, where,
                    (unsigned long long)done, strerror(e));
            break;
        }
        done += len;
        progress_update(&pr, done);
    }
    if (rc < 0 && rc != TD_EIO) {
        progress_break(&pr);
        fprintf(stderr, "%s: %s\n", prog, td_strerror(rc));
    }
    if (a.output && close(fd) != 0 && rc >= 0) {
        progress_break(&pr);
        fprintf(stderr, "%s: write error on '%s': %s\n", prog, a.output, strerror(errno));
        rc = TD_EIO;
    }
    if (rc < 0 && a.output) {
        if (removable && unlink(a.output) == 0)
            fprintf(stderr, "%s: removed the incomplete '%s'\n", prog, a.output);
        else if (a.keep_partial)
            fprintf(stderr, "%s: kept the incomplete '%s' (%llu bytes)\n", prog, a.output,
                    (unsigned long long)done);
    }
    if (rc >= 0)
        progress_done(&pr, done, "wrote");
    partial_path = NULL;
    td_stream_free(s);
    if (epipe)
        return 128 + SIGPIPE;
    return rc < 0 ? EXIT_FAIL : 0;
}

/* ------------------------------------------------------------------------ */
/* verify                                                                    */
/* ------------------------------------------------------------------------ */

/*
 * Double-buffered input: a thread reads the next chunk while the main thread
 * compares the previous one, so the writer on the other end of a pipe never
 * waits for our comparisons.  Without the thread (pthread_create failed), the
 * main thread reads each chunk itself.
 */
typedef struct reader {
    int fd;
    uint64_t limit;   /* deliver at most this many bytes */
    uint64_t sent;
    uint8_t *buf[2];
    size_t len[2];
    int err[2];       /* errno of a failed read of this slot, or 0 */
    int full[2];
    int last[2];      /* nothing follows this slot (end, limit or error) */
    int next;         /* slot the reader fills next */
    int threaded;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t tid;
} reader;

/* Fill slot r->next (called with the mutex not held, slot empty). */
static int reader_fill(reader *r)
{
    int i = r->next, last;
    uint64_t left = r->limit - r->sent;
    size_t want = left < VERIFY_BUF ? (size_t)left : VERIFY_BUF;
    ssize_t got = want ? read_full(r->fd, r->buf[i], want) : 0;
    int e = got < 0 ? errno : 0;

    if (got < 0)
        got = 0;
    last = e != 0 || (size_t)got < want || want == 0 || (uint64_t)got == left;
    pthread_mutex_lock(&r->mu);
    r->len[i] = (size_t)got;
    r->err[i] = e;
    r->last[i] = last;
    r->full[i] = 1;
    r->sent += (uint64_t)got;
    r->next = i ^ 1;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
    return last;
}

static void *reader_main(void *arg)
{
    reader *r = arg;
    for (;;) {
        pthread_mutex_lock(&r->mu);
        while (r->full[r->next])
            pthread_cond_wait(&r->cv, &r->mu);
        pthread_mutex_unlock(&r->mu);
        if (reader_fill(r))
            return NULL;
    }
}

static int reader_start(reader *r, int fd, uint64_t limit)
{
    memset(r, 0, sizeof *r);
    r->fd = fd;
    r->limit = limit;
    r->buf[0] = malloc(VERIFY_BUF);
    r->buf[1] = malloc(VERIFY_BUF);
    if (!r->buf[0] || !r->buf[1])
        return -1;
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->cv, NULL);
    r->threaded = pthread_create(&r->tid, NULL, reader_main, r) == 0;
    return 0;
}

/* Wait for chunk @p i (0, 1, 0, ...) to be read; returns it. */
static void reader_get(reader *r, int i, const uint8_t **data, size_t *len, int *err, int *last)
{
    if (!r->threaded && !r->full[i])
        reader_fill(r);
    pthread_mutex_lock(&r->mu);
    while (!r->full[i])
        pthread_cond_wait(&r->cv, &r->mu);
    *data = r->buf[i];
    *len = r->len[i];
    *err = r->err[i];
    *last = r->last[i];
    pthread_mutex_unlock(&r->mu);
}

/* Give chunk @p i back to the reader. */
static void reader_put(reader *r, int i)
{
    pthread_mutex_lock(&r->mu);
    r->full[i] = 0;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

/* After the last chunk: the reader thread has ended. */
static void reader_stop(reader *r)
{
    if (r->threaded)
        pthread_join(r->tid, NULL);
    free(r->buf[0]);
    free(r->buf[1]);
}

static int cmd_verify(int argc, char **argv)
{
    args a;
    stream_spec sp;
    progress pr;
    int fd = STDIN_FILENO, rc = TD_OK, status = 0;
    const char *name = "stdin";
    uint8_t probe[1], *buf;
    reader rd;
    uint64_t done = 0, first = 0, bad = 0, extra = 0;
    int long_input = 0, extra_exact = 0;

    cur_cmd = "verify";
    parse_args(argc, argv, F_OFFSET | F_PROGRESS | F_KINDOPTS | F_MPI, verify_help, &a);
    if (a.npos < 2)
        usage_error("verify needs KIND and SIZE");
    if (a.npos > 3)
        usage_error("unexpected argument '%s'", a.pos[3]);
    mpi_check(&a);
    parse_stream(&a, &sp, 0);
    rc = td_options_check(sp.kind, &sp.opt);
    if (rc != TD_OK)
        usage_error("bad options: %s", td_strerror(rc));
    if (a.mpi)
        return mpi_run(&a, &sp, a.npos == 3 ? a.pos[2] : NULL, 1);

    if (a.npos == 3 && strcmp(a.pos[2], "-") != 0) {
        name = a.pos[2];
        fd = open(name, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            fprintf(stderr, "%s: cannot open '%s': %s\n", prog, name, strerror(errno));
            return EXIT_FAIL;
        }
    }
    (void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    bigger_pipe(fd);
    if (reader_start(&rd, fd, sp.size) != 0) {
        fprintf(stderr, "%s: out of memory\n", prog);
        return EXIT_FAIL;
    }

    progress_init(&pr, a.progress, "verify", sp.size);
    for (int i = 0;; i ^= 1) {
        const uint8_t *data;
        size_t got;
        int err, last;
        reader_get(&rd, i, &data, &got, &err, &last);
        if (err) {
            progress_break(&pr);
            fprintf(stderr, "%s: read error on '%s' after %llu bytes: %s\n", prog, name,
                    (unsigned long long)(done + got), strerror(err));
            reader_stop(&rd);
            status = EXIT_FAIL;
            goto out;
        }
        if (got > 0) {
            uint64_t f = 0, c = 0;
            rc = td_verify_count(sp.kind, &sp.opt, sp.offset + done, data, got, &f, &c);
            if (rc == TD_EMISMATCH) {
                if (!bad)
                    first = f - sp.offset;
                bad += c;
            } else if (rc != TD_OK) {
                progress_break(&pr);
                fprintf(stderr, "%s: verify: %s\n", prog, td_strerror(rc));
                exit(EXIT_FAIL); /* the reader thread may still be in read() */
            }
            done += got;
            progress_update(&pr, done);
        }
        reader_put(&rd, i);
        if (last)
            break;
    }
    reader_stop(&rd);
    buf = probe;
    if (done == sp.size) {
        /* Anything after SIZE bytes makes the input long. */
        struct stat st;
        off_t pos;
        ssize_t got = read_full(fd, buf, 1);
        if (got < 0) {
            progress_break(&pr);
            fprintf(stderr, "%s: read error on '%s' after %llu bytes: %s\n", prog, name,
                    (unsigned long long)done, strerror(errno));
            status = EXIT_FAIL;
            goto out;
        }
        if (got > 0) {
            long_input = 1;
            extra = 1;
            if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
                (pos = lseek(fd, 0, SEEK_CUR)) >= 0) {
                extra = (uint64_t)(st.st_size - pos) + 1;
                extra_exact = 1;
            }
        }
    }
    progress_break(&pr);
    if (bad) {
        fprintf(stderr, "%s: %s differs from the stream: first difference at byte %llu", prog,
                name, (unsigned long long)first);
        if (sp.offset)
            fprintf(stderr, " (stream offset %llu)", (unsigned long long)(first + sp.offset));
        fprintf(stderr, ", %llu differing byte%s in %llu compared\n", (unsigned long long)bad,
                bad == 1 ? "" : "s", (unsigned long long)done);
        status = EXIT_FAIL;
    }
    if (done < sp.size && sp.size != TD_SIZE_UNBOUNDED) {
        fprintf(stderr, "%s: %s is short: %llu of %llu bytes, %llu missing\n", prog, name,
                (unsigned long long)done, (unsigned long long)sp.size,
                (unsigned long long)(sp.size - done));
        status = EXIT_FAIL;
    }
    if (long_input) {
        fprintf(stderr, "%s: %s is long: more than %llu bytes (%s%llu extra)\n", prog, name,
                (unsigned long long)sp.size, extra_exact ? "" : "at least ",
                (unsigned long long)extra);
        status = EXIT_FAIL;
    }
    if (status == 0)
        progress_done(&pr, done, "verified");
out:
    if (fd != STDIN_FILENO)
        close(fd);
    return status;
}

/* ------------------------------------------------------------------------ */
/* analyze                                                                   */
/* ------------------------------------------------------------------------ */

static const char analyze_help[] =
    "usage: testdata analyze [--json] [--sample SIZE] [--threads N] FILE... | -\n"
    "Report size, Shannon entropy (bits/byte) and the compression ratio under\n"
    "gzip -6, zstd -3, lz4 and xz -6 (computed with the libraries), then a\n"
    "one-line verdict on what the data measures in a transfer benchmark.\n"
    "\n"
    "  FILE          a file to analyse; '-' reads stdin\n"
    "  --json        one JSON array, one object per FILE, on stdout\n"
    "  --sample SIZE compress at most SIZE bytes per file (default 8M), in 1 MiB\n"
    "                blocks spread evenly over the file; the report says when the\n"
    "                ratios come from a sample.  Entropy always uses every byte.\n"
    "  --threads N   compress N blocks at once (default 1; 0 = all cores);\n"
    "                the results do not change\n"
    "  -h, --help    this help; --version prints the version\n"
    "\n"
    "Exit status: 0 done, 1 a file could not be read, 2 usage error.\n";

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

/* Analyse one input; returns TD_OK, or TD_EIO with the message printed and
 * its reason in *why. */
static int analyze_one(const char *path, uint64_t sample, uint32_t threads, td_analysis *r,
                       const char **why)
{
    int fd = STDIN_FILENO, rc;
    const char *name = strcmp(path, "-") == 0 ? "stdin" : path;
    uint64_t hint = TD_SIZE_UNBOUNDED;
    struct stat st;
    td_analyzer *an = NULL;
    uint8_t *buf = NULL;

    if (strcmp(path, "-") != 0) {
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            *why = strerror(errno);
            fprintf(stderr, "%s: cannot open '%s': %s\n", prog, path, *why);
            return TD_EIO;
        }
    }
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
        hint = (uint64_t)st.st_size;
    (void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    td_analyze_options ao;
    td_analyze_options_init(&ao);
    ao.size_hint = hint;
    if (sample)
        ao.sample_bytes = sample;
    ao.threads = threads;
    rc = td_analyzer_new(&an, &ao);
    buf = malloc(ANALYZE_BUF);
    if (rc == TD_OK && !buf)
        rc = TD_ENOMEM;
    while (rc == TD_OK) {
        ssize_t got = read_full(fd, buf, ANALYZE_BUF);
        if (got < 0) {
            *why = strerror(errno);
            fprintf(stderr, "%s: read error on '%s': %s\n", prog, name, *why);
            rc = TD_EIO;
            break;
        }
        if (got == 0)
            break;
        rc = td_analyzer_update(an, buf, (size_t)got);
    }
    if (rc == TD_OK)
        rc = td_analyzer_finish(an, r);
    if (rc != TD_OK && rc != TD_EIO) {
        *why = td_strerror(rc);
        fprintf(stderr, "%s: analyze '%s': %s\n", prog, name, *why);
        rc = TD_EIO;
    }
    td_analyzer_free(an);
    free(buf);
    if (fd != STDIN_FILENO)
        close(fd);
    return rc;
}

static void print_text(const char *name, const td_analysis *r)
{
    char h[32], hs[32];
    human(h, sizeof h, (double)r->size);
    printf("%s\n", name);
    printf("  size        %llu bytes (%s)\n", (unsigned long long)r->size, h);
    printf("  entropy     %.3f bits/byte\n", r->entropy);
    for (int c = 0; c < TD_CODEC_COUNT; c++) {
        double x = r->ratio[c];
        printf("  %-10s  %.*fx  (%llu -> %llu bytes)\n", td_codec_label(c),
               x >= 99.95 ? 0 : x >= 9.995 ? 1 : 2, x, (unsigned long long)r->sampled,
               (unsigned long long)r->compressed[c]);
    }
    if (r->is_sampled) {
        human(hs, sizeof hs, (double)r->sampled);
        printf("  sampled     ratios from %s of %s (1 MiB blocks spread over the input)\n", hs, h);
    }
    printf("  verdict     %s\n", r->verdict);
}

static void print_json(const char *name, const td_analysis *r)
{
    printf("{\"file\": ");
    json_string(stdout, name);
    printf(", \"size\": %llu, \"entropy\": %.6f, \"sampled\": %s, \"sampled_bytes\": %llu, "
           "\"ratios\": {",
           (unsigned long long)r->size, r->entropy, r->is_sampled ? "true" : "false",
           (unsigned long long)r->sampled);
    for (int c = 0; c < TD_CODEC_COUNT; c++)
        printf("%s\"%s\": %.6g", c ? ", " : "", td_codec_name(c), r->ratio[c]);
    printf("}, \"compressed\": {");
    for (int c = 0; c < TD_CODEC_COUNT; c++)
        printf("%s\"%s\": %llu", c ? ", " : "", td_codec_name(c),
               (unsigned long long)r->compressed[c]);
    printf("}, \"verdict\": ");
    json_string(stdout, r->verdict);
    printf("}");
}

static int cmd_analyze(int argc, char **argv)
{
    args a;
    uint64_t sample = 0;
    uint32_t threads = 1;
    int status = 0, rc, werr = 0;

    cur_cmd = "analyze";
    parse_args(argc, argv, F_JSON | F_SAMPLE, analyze_help, &a);
    if (a.npos < 1)
        usage_error("analyze needs FILE... or - for stdin");
    if (a.sample) {
        rc = td_parse_size(a.sample, &sample);
        if (rc != TD_OK || sample == 0 || sample == TD_SIZE_UNBOUNDED)
            usage_error("bad --sample '%s': %s", a.sample,
                        td_strerror(rc != TD_OK ? rc : TD_ERANGE));
    }
    if (a.threads) {
        char *end;
        errno = 0;
        unsigned long t = strtoul(a.threads, &end, 10);
        if (!*a.threads || *end || a.threads[0] == '-' || errno || t > 1024)
            usage_error("bad value '%s' for --threads: %s", a.threads,
                        td_strerror(errno || t > 1024 ? TD_ERANGE : TD_ESYNTAX));
        threads = (uint32_t)t;
    }
    if (a.json)
        printf("[");
    for (int i = 0; i < a.npos; i++) {
        td_analysis r;
        const char *name = a.pos[i], *why = "error";
        rc = analyze_one(a.pos[i], sample, threads, &r, &why);
        if (a.json) {
            if (i)
                printf(",\n ");
            if (rc == TD_OK) {
                print_json(name, &r);
            } else {
                printf("{\"file\": ");
                json_string(stdout, name);
                printf(", \"error\": ");
                json_string(stdout, why);
                printf("}");
            }
        } else if (rc == TD_OK) {
            if (i)
                printf("\n");
            print_text(strcmp(name, "-") == 0 ? "stdin" : name, &r);
        }
        if (fflush(stdout) != 0) {
            werr = errno; /* no reader or no space: no point in going on */
            break;
        }
        if (rc != TD_OK)
            status = EXIT_FAIL;
    }
    if (!werr && a.json)
        printf("]\n");
    if (!werr && fflush(stdout) != 0)
        werr = errno;
    if (werr || ferror(stdout)) {
        /* The reader is gone (SIGPIPE ignored): end quietly, as gen does. */
        if (werr == EPIPE)
            return 128 + SIGPIPE;
        fprintf(stderr, "%s: write error on stdout: %s\n", prog,
                strerror(werr ? werr : EIO));
        return EXIT_FAIL;
    }
    return status;
}

/* ------------------------------------------------------------------------ */

static const char main_help[] =
    "usage: testdata COMMAND [ARGS]\n"
    "Seeded, reproducible, seekable test data with known, controlled properties.\n"
    "\n"
    "commands:\n"
    "  gen KIND SIZE [options] [-o FILE]     write bytes of a stream\n"
    "  verify KIND SIZE [options] [FILE|-]   check bytes against the stream\n"
    "  analyze FILE... | -                   entropy, compression ratios, verdict\n"
    "\n"
    "'testdata COMMAND --help' describes a command.  --version prints the version.\n"
    "Example: testdata gen random 1G --seed 7 | ssh host testdata verify random 1G --seed 7\n";

int main(int argc, char **argv)
{
    build_helps();
    if (argc < 2) {
        fputs(main_help, stderr);
        return EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        fputs(main_help, stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0)
        print_version();
    setup_signals();
    if (strcmp(argv[1], "gen") == 0)
        return cmd_gen(argc - 1, argv + 1);
    if (strcmp(argv[1], "verify") == 0)
        return cmd_verify(argc - 1, argv + 1);
    if (strcmp(argv[1], "analyze") == 0)
        return cmd_analyze(argc - 1, argv + 1);
    fprintf(stderr, "%s: unknown command '%s' (try 'testdata --help')\n", prog, argv[1]);
    return EXIT_USAGE;
}
