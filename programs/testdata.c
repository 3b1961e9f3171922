/*
 * testdata: the command-line front end.  It only translates arguments,
 * errors and I/O; every parser, check and generator lives in libtestdata.
 */
#define _GNU_SOURCE
#include <testdata.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define EXIT_USAGE 2

static const char *prog = "testdata";

/* "testdata: WHAT 'ARG': REASON (try ...)", then exit 2. */
static void usage_error(const char *what, const char *arg, int rc)
{
    fprintf(stderr, "%s: %s", prog, what);
    if (arg)
        fprintf(stderr, " '%s'", arg);
    if (rc)
        fprintf(stderr, ": %s", td_strerror(rc));
    fputs(" (try 'testdata --help')\n", stderr);
    exit(EXIT_USAGE);
}

/* Options shared by the commands that describe a stream. */
typedef struct stream_args {
    int kind;
    uint64_t size;
    uint64_t offset;
    td_options opt;
    const char *output;
} stream_args;

/* Every --KEY VALUE that libtestdata knows is passed to td_options_set(),
 * so options of new kinds work here without changes. */
static const struct option gen_long[] = {
    {"seed", required_argument, NULL, 'k'},
    {"algorithm", required_argument, NULL, 'k'},
    {"threads", required_argument, NULL, 'k'},
    {"ratio", required_argument, NULL, 'k'},
    {"dedup", required_argument, NULL, 'k'},
    {"dedup-block", required_argument, NULL, 'k'},
    {"offset", required_argument, NULL, 'O'},
    {"output", required_argument, NULL, 'o'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static const char gen_help[] =
    "usage: testdata gen KIND SIZE [options] [-o FILE]\n"
    "Write bytes [offset, offset+SIZE) of the stream KIND to stdout or FILE.\n"
    "\n"
    "  KIND               zero | random | compressible\n"
    "  SIZE               bytes; K M G T P E (KiB MiB ...) are powers of 1024,\n"
    "                     KB MB GB ... powers of 1000; 'inf' never ends\n"
    "  --seed N           stream seed (default 0)\n"
    "  --algorithm A      random: chacha20 (default) or fast\n"
    "  --ratio R          compressible: target compression ratio, 1 to 1000\n"
    "                     (default 3)\n"
    "  --dedup D          random, compressible: a fixed-block deduplicator finds\n"
    "                     D times fewer unique blocks than blocks (default 1)\n"
    "  --dedup-block N    dedup block size, a power of two (default 4096)\n"
    "  --threads N        generator threads (default 1; 0 = all cores)\n"
    "  --offset N         first byte of the stream to write (default 0)\n"
    "  -o, --output FILE  write to FILE instead of stdout\n";

static void parse_stream_args(int argc, char **argv, stream_args *a, const char *help)
{
    const char *okeys[64];
    const char *ovals[64];
    int nopt = 0, c, li, rc;

    td_options_init(&a->opt);
    a->offset = 0;
    a->output = NULL;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:h", gen_long, &li)) != -1) {
        switch (c) {
        case 'k':
            if (nopt == 64)
                usage_error("too many options", NULL, 0);
            okeys[nopt] = gen_long[li].name;
            ovals[nopt++] = optarg;
            break;
        case 'O':
            rc = td_parse_size(optarg, &a->offset);
            if (rc != TD_OK)
                usage_error("bad --offset", optarg, rc);
            break;
        case 'o':
            a->output = optarg;
            break;
        case 'h':
            fputs(help, stdout);
            exit(0);
        default:
            exit(EXIT_USAGE);
        }
    }
    if (argc - optind < 2)
        usage_error("gen needs KIND and SIZE", NULL, 0);
    if (argc - optind > 2)
        usage_error("unexpected argument", argv[optind + 2], 0);
    rc = td_kind_from_name(argv[optind], &a->kind);
    if (rc != TD_OK)
        usage_error("unknown kind", argv[optind], 0);
    rc = td_parse_size(argv[optind + 1], &a->size);
    if (rc != TD_OK)
        usage_error("bad size", argv[optind + 1], rc);
    for (int i = 0; i < nopt; i++) {
        char key[32];
        snprintf(key, sizeof key, "%s", okeys[i]);
        for (char *p = key; *p; p++)
            if (*p == '-')
                *p = '_';
        rc = td_options_set(&a->opt, a->kind, key, ovals[i]);
        if (rc == TD_EOPTION) {
            fprintf(stderr, "%s: option --%s does not apply to kind %s (try 'testdata --help')\n",
                    prog, okeys[i], td_kind_name(a->kind));
            exit(EXIT_USAGE);
        }
        if (rc != TD_OK) {
            fprintf(stderr, "%s: bad value '%s' for --%s: %s\n", prog, ovals[i], okeys[i],
                    td_strerror(rc));
            exit(EXIT_USAGE);
        }
    }
    if (a->size != TD_SIZE_UNBOUNDED && a->size > UINT64_MAX - a->offset)
        usage_error("--offset plus SIZE is past the end of the stream", NULL, 0);
}

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

static int cmd_gen(int argc, char **argv)
{
    stream_args a;
    td_stream *s;
    int fd = STDOUT_FILENO, rc;
    uint64_t end;

    parse_stream_args(argc, argv, &a, gen_help);
    end = a.size == TD_SIZE_UNBOUNDED ? TD_SIZE_UNBOUNDED : a.offset + a.size;
    rc = td_stream_open(&s, a.kind, end, &a.opt);
    if (rc == TD_OK)
        rc = td_stream_seek(s, a.offset);
    if (rc != TD_OK) {
        fprintf(stderr, "%s: cannot create stream: %s\n", prog, td_strerror(rc));
        td_stream_free(s);
        return 1;
    }
    if (a.output) {
        fd = open(a.output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
        if (fd < 0) {
            fprintf(stderr, "%s: cannot open '%s': %s\n", prog, a.output, strerror(errno));
            td_stream_free(s);
            return 1;
        }
    } else {
        struct stat st;
        /* A bigger pipe means fewer wake-ups of the reader per byte. */
        if (fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode))
            (void)fcntl(fd, F_SETPIPE_SZ, 1 << 20);
    }
    for (;;) {
        const void *chunk;
        size_t len;
        rc = td_stream_next(s, &chunk, &len);
        if (rc != TD_OK)
            break;
        if (write_all(fd, chunk, len) != 0) {
            fprintf(stderr, "%s: write error on %s: %s\n", prog, a.output ? a.output : "stdout",
                    strerror(errno));
            rc = TD_EIO;
            break;
        }
    }
    td_stream_free(s);
    if (rc < 0 && rc != TD_EIO)
        fprintf(stderr, "%s: %s\n", prog, td_strerror(rc));
    if (a.output) {
        if (close(fd) != 0 && rc >= 0) {
            fprintf(stderr, "%s: write error on %s: %s\n", prog, a.output, strerror(errno));
            rc = TD_EIO;
        }
        if (rc < 0)
            unlink(a.output);
    }
    return rc < 0 ? 1 : 0;
}

static const char main_help[] =
    "usage: testdata COMMAND [ARGS]\n"
    "Generate test data with known, controlled properties.\n"
    "\n"
    "commands:\n"
    "  gen KIND SIZE [options]   write a seeded, reproducible stream\n"
    "\n"
    "'testdata COMMAND --help' describes a command.  --version prints the version.\n";

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(main_help, stderr);
        return EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        fputs(main_help, stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("testdata %s (format %d)\n", td_version(), TD_FORMAT_VERSION);
        return 0;
    }
    if (strcmp(argv[1], "gen") == 0)
        return cmd_gen(argc - 1, argv + 1);
    fprintf(stderr, "%s: unknown command '%s' (try 'testdata --help')\n", prog, argv[1]);
    return EXIT_USAGE;
}
