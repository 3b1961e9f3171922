/*
 * The testdata program's own helpers, shared by its commands (cmd_*.c) and
 * --mpi mode.  Everything here has the cli_ prefix: the td_ prefix belongs
 * to the library.  The program only translates arguments, errors and I/O;
 * parsing of sizes and options, generation, verification and analysis are
 * the library's.
 *
 *   cli_util.c      messages, exit statuses, fds 0-2, signals
 *   cli_opt.c       declarative option specs: parsing and --help
 *   cli_progress.c  progress line and summary on stderr
 *   cmd_*.c         one file per command
 *   mpi_mode.c      gen/verify --mpi
 */
#ifndef TD_CLI_H
#define TD_CLI_H

#include <testdata.h>

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Exit statuses (docs/testdata.1): 0 success, 1 failure, 2 usage error,
 * 128+N after signal N. */
#define CLI_EXIT_FAIL 1
#define CLI_EXIT_USAGE 2

/* ---- messages (cli_util.c) --------------------------------------------- */

/* "testdata: MESSAGE" on stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "testdata: MESSAGE (try 'testdata CMD --help')" and exit 2. */
void cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* Each line of a library message (td_verify_message ...) as cli_error. */
void cli_error_lines(const char *lines);
/* The command being run, for usage errors ("gen"), or NULL. */
extern const char *cli_command;
/* "1.5 GiB" */
void cli_human(char *buf, size_t cap, uint64_t bytes);
double cli_now(void);
/* Open /dev/null onto whichever of fds 0, 1, 2 are closed, so that no file
 * opened later takes their place (output landing in an inherited-closed
 * stderr would corrupt it). */
void cli_guard_std_fds(void);

/* At exit, flush and close stdout; on a write error say so and exit 1
 * (141 for EPIPE).  Called once, first thing in main. */
void cli_check_stdout_at_exit(void);

/* With --mpi in argv, whether the launcher's environment makes this a
 * rank other than 0, which then prints no usage error and no
 * interruption (rank 0 does).  Called once, in main. */
void cli_mpi_rank_from_env(int argc, char **argv);

/* ---- signals (cli_util.c) ---------------------------------------------- */

/* SIGINT, SIGTERM and SIGHUP (unless ignored by the parent) end the program
 * with 128+N after one line, the same for every command, "testdata:
 * interrupted by SIGINT" (from one place: exit_interrupted in cli_util.c).  While cli_defer_signals(1) is in effect (a library call that
 * polls cli_interrupted() through its progress callback), the first signal
 * only sets the flag, so the call can clean up; a second one ends the
 * program at once.  SIGXFSZ is ignored (a file-size limit comes as EFBIG). */
void cli_signals_install(void);
void cli_defer_signals(int on);
/* The signal received while deferred, or 0. */
int cli_interrupted(void);
/* A temporary file the handler must remove if it ends the program (--mpi's
 * shared temporary), or NULL. */
void cli_signal_temp(const char *path);

/* ---- options (cli_opt.c) ----------------------------------------------- */

/* One option of a command.  Options with a value placeholder take a value
 * (--name VALUE, --name=VALUE, -x VALUE, -xVALUE); others are flags. */
typedef struct cli_opt {
    const char *name;  /* long name without "--"; NULL ends a list */
    char alias;        /* short name, or 0 */
    const char *value; /* value placeholder ("FILE"), NULL for a flag */
    const char *help;  /* one line; wrapped when printed */
} cli_opt;

/* Option rows gen and verify share. */
#define CLI_OPT_PROGRESS {"progress", 0, NULL, "progress and summary on stderr even if not a terminal or piped into pv"}
#define CLI_OPT_QUIET {"quiet", 'q', NULL, "no progress, no summary"}
#define CLI_OPT_FILES {"files", 0, "M", "with --mpi: M files DIR/part-000000 ... instead of FILE"}

typedef struct cli_cmd cli_cmd;
struct cli_cmd {
    const char *name;        /* "gen" */
    const char *args;        /* "KIND SIZE [options] [-o FILE]"; NULL with subs:
                                "gen|list|... ..." from them (cli_cmd_args) */
    const char *summary;     /* one line, for `testdata --help` */
    const char *description; /* the first lines of the command's --help */
    const char *operands;    /* help lines for the positional arguments, or NULL */
    const cli_opt *opts;     /* the command's options, NULL-name-terminated */
    int stream_opts;         /* also takes the library's stream options */
    int tree_opts;           /* also takes the library's tree options (td_tree_option_get);
                                kept with the stream options, in order */
    const char *footer;      /* exit statuses, notes */
    void (*notes)(FILE *f);  /* notes printed before the footer, made from the
                                library's tables (lists that must not drift); or NULL */
    /* What the operands are, for shell completion (cmd_completion.c): one
     * letter per position: k KIND, s SIZE, f FILE, F FILE... (any number),
     * d DIR, h SHELL, c COMMAND; NULL for none. */
    const char *complete;
    /* Subcommands ("tree gen" ...: name is the parent's, a space and the
     * word), NULL-terminated, or NULL.  A command with subcommands runs
     * cli_run_subs; its --help lists them, and completion offers them. */
    const cli_cmd *const *subs;
    int (*run)(const cli_cmd *cmd, int argc, char **argv);
};

/* A parsed command line. */
typedef struct cli_args {
    const char **pos;     /* positional arguments */
    int npos;
    const char **val;     /* per option of cmd->opts: its (last) value, or NULL */
    int *count;           /* per option: how often it was given */
    const char **skey;    /* stream options, in order: key as given ("dedup-block") */
    const char **sval;
    int nstream;
} cli_args;

/* Parse argv (argv[0] is the command name) against cmd; handles --help and
 * --version; usage errors exit 2.  The arrays live until the program ends. */
void cli_parse(const cli_cmd *cmd, int argc, char **argv, cli_args *a);
/* The help of cmd, as --help prints it. */
void cli_print_help(const cli_cmd *cmd, FILE *f);
/* Index of option `name` in cmd->opts (for cli_args.val/count), or -1. */
int cli_opt_index(const cli_cmd *cmd, const char *name);
/* The word that selects subcommand sub on the command line ("gen" of
 * "tree gen"). */
const char *cli_sub_word(const cli_cmd *sub);
/* What follows cmd's name in a usage line: cmd->args, or for a command
 * with subcommands and no args their words, "gen|list|verify|like ...",
 * made in buf (cap bytes), so that the list cannot drift from cmd->subs. */
const char *cli_cmd_args(const cli_cmd *cmd, char *buf, size_t cap);
/* The run of a command with subcommands (cmd->subs): CMD --help | -h | help
 * prints the list, CMD SUB ARGS runs SUB with ARGS, anything else is a
 * usage error with a "did you mean". */
int cli_run_subs(const cli_cmd *cmd, int argc, char **argv);

/* What a stream is: KIND SIZE [--offset N] [--KEY VALUE ...]. */
typedef struct cli_stream {
    int kind;
    uint64_t size;
    uint64_t offset;
    td_options opt;
    uint64_t random_seed; /* --seed random was resolved to this */
    int seed_was_random;
} cli_stream;

/* KIND from pos[0], SIZE from pos[1] (size may be NULL: then it is
 * TD_SIZE_UNBOUNDED and filled in later), --offset, stream options.
 * allow_random_seed: --seed random picks a seed (gen) or is refused. */
void cli_parse_stream(const cli_args *a, const char *kind, const char *size,
                      const char *offset, int allow_random_seed, cli_stream *s);
/* Free what the options loaded (--model, --profile files). */
void cli_stream_release(cli_stream *s);
/* A command's run over a fresh cli_stream, released after body returns
 * (the options own the --model and --profile files they load). */
int cli_stream_run(const cli_cmd *cmd, int argc, char **argv,
                   int (*body)(const cli_cmd *, int, char **, cli_stream *));

/* How cli_apply_stream_opts hands on one option: a library setter that
 * fills msg (naming the field and its valid values) on failure. */
typedef int (*cli_set_fn)(void *ctx, const char *key, const char *value, char *msg, size_t cap);

/* Hand a's stream options, in order, to set() as ("--key", value), with
 * "--seed random" (the last --seed only) replaced by a fresh seed that is
 * printed on stderr and stored in *random_seed (may be NULL); refused
 * unless allow_random_seed, naming the command (hint) whose seed to give.
 * Usage errors exit 2.  Returns whether a seed was picked. */
int cli_apply_stream_opts(const cli_args *a, int allow_random_seed, const char *hint,
                          cli_set_fn set, void *ctx, uint64_t *random_seed);
/* Why a file of a tree could not be written (errno e), in words: the two
 * refusals (EEXIST, ENOTDIR: something in the way, left alone) get their
 * own (cli_util.c). */
const char *cli_tree_why(int e);
/* A size argument or die with a usage error naming `what`. */
uint64_t cli_parse_size(const char *text, const char *what);
/* A --threads value (0: all cores) or die with the option table's usage error. */
unsigned cli_parse_threads(const char *text);

/* ---- one report per FILE (cli_util.c) ---------------------------------- */

/* How a command that reports on files (analyze, profile --check) measures
 * one and prints what it found; ctx holds the command's last result. */
typedef struct cli_file_report {
    /* Measure the open fd; TD_OK, or a library code (TD_EIO with errno). */
    int (*measure)(void *ctx, int fd);
    /* Why measure failed with rc, other than TD_EIO (NULL: td_strerror). */
    const char *(*why)(int rc);
    /* The text report of the last result; i is the FILE's index. */
    void (*print_text)(void *ctx, const char *name, int i);
    /* The library's JSON object of the last result for file, and the room
     * it needs at most for a name of name_len bytes. */
    int (*json)(void *ctx, const char *file, char *buf, size_t cap);
    size_t (*json_max)(size_t name_len);
} cli_file_report;

/* Each FILE operand ('-': stdin) measured and reported: in text, or with
 * json as one JSON array of the library's objects (the library's error
 * object for a FILE that could not be measured).  A FILE that cannot be
 * opened or read is named on stderr and the others are still measured.
 * 0, or CLI_EXIT_FAIL if one could not be. */
int cli_report_files(const cli_args *a, int json, const cli_file_report *r, void *ctx);

/* ---- progress (cli_progress.c) ----------------------------------------- */

typedef struct cli_progress {
    int on;          /* print progress and summary */
    int tty;         /* stderr is a terminal: redraw one line */
    int automatic;   /* neither --progress nor --quiet */
    int peer_fd;     /* automatic mode: a pipe to look for another progress
                        meter on (cli_progress_pipe), or -1 */
    const char *verb;
    uint64_t total;  /* TD_SIZE_UNBOUNDED: no %, no ETA */
    double t0, last;
    int drawn;       /* a line is on screen (tty) */
} cli_progress;

/* mode: -1 quiet, 0 automatic (terminal only), 1 forced. */
void cli_progress_init(cli_progress *p, int mode, const char *verb, uint64_t total);
/* In automatic mode, stay quiet when fd (the data's stdout or stdin) is a
 * pipe whose other end a progress meter (pv, mbuffer, bar) holds, as pv
 * users expect: one progress line, not two fighting on the terminal.  The
 * check is made at the first redraw, when the other end has had time to
 * start (Linux: /proc; elsewhere nothing is found). */
void cli_progress_pipe(cli_progress *p, int fd);
/* Nonzero when a process other than this one that has the pipe fd open is
 * a progress meter (pv, mbuffer, bar). */
int cli_pipe_has_meter(int fd);
void cli_progress_update(cli_progress *p, uint64_t done);
/* End the line on screen (before an error message). */
void cli_progress_break(cli_progress *p);
void cli_progress_done(cli_progress *p, uint64_t done, const char *what);
/* A td_progress_fn: ctx is a cli_progress; stops when interrupted. */
int cli_progress_cb(void *ctx, uint64_t done);
/* -q/--quiet and --progress of a parsed command line as a mode. */
int cli_progress_mode(const cli_cmd *cmd, const cli_args *a);

/* ---- commands ---------------------------------------------------------- */

extern const cli_cmd cli_cmd_gen, cli_cmd_verify, cli_cmd_analyze, cli_cmd_completion,
    cli_cmd_tree, cli_cmd_model, cli_cmd_profile;
/* Every command, NULL-terminated (testdata.c). */
extern const cli_cmd *const cli_commands[];

/* ---- --mpi (mpi_mode.c) ------------------------------------------------ */

/* Shard and range alignment of one shared file. */
#define CLI_MPI_ALIGN (1024u * 1024u)
/* Most files --files may ask for. */
#define CLI_MAX_FILES 1000000u

typedef struct cli_mpi_job {
    cli_stream s;
    const char *path;  /* gen: -o FILE or DIR; verify: FILE or DIR */
    uint64_t files;    /* --files M: M shard files in DIR; 0: one shared file */
    int quiet;         /* no throughput line */
} cli_mpi_job;

/* This rank's exit status, the same on every rank. */
int cli_mpi_gen(const cli_mpi_job *job);
int cli_mpi_verify(const cli_mpi_job *job);
/* --mpi and --files of gen and verify: check and run; returns -1 when
 * --mpi is not given. */
int cli_mpi_dispatch(const cli_cmd *cmd, const cli_args *a, const cli_stream *s,
                     const char *path, int verify);

/* tree gen|verify --mpi (mpi_mode.c): rank r writes or checks files
 * td_split_range(files, ranks, 1, r) of the prepared tree; verify's rank 0
 * also looks for extra entries.  flags: TD_TREE_RESUME for gen. */
int cli_mpi_tree(const td_tree *t, const char *dir, int verify, uint32_t flags, int quiet);
/* With MPI the three above load a module, testdata-mpi.so (mpi_mode.c built
 * with TD_MPI_MODULE), on first use and call its entry points below: linked
 * into the program, libmpich cost every command 2-4 ms of CPU at start-up
 * (its relocations and UCX's constructors).  The module is looked for
 * beside the program, then in TD_MPI_MODULE_DIR. */
int cli_mpi_module_gen(const cli_mpi_job *job);
int cli_mpi_module_verify(const cli_mpi_job *job);
int cli_mpi_module_tree(const td_tree *t, const char *dir, int verify, uint32_t flags,
                        int quiet);
/* A td_tree_report_fn printing the finding's line (cmd_tree.c), and the
 * closing line of a tree verify that found something. */
int cli_tree_report(void *ctx, const td_tree_finding *f);
void cli_tree_verdict(const char *dir, const td_tree_result *r, uint64_t files);

#endif
