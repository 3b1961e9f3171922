/* testdata model build CORPUS... -o MODEL | model info [MODEL] | model export -o MODEL */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { B_OUTPUT, B_THREADS };

static const cli_opt build_opts[] = {
    [B_OUTPUT] = {"output", 'o', "MODEL", "write the model file to MODEL (replaced only once "
                  "complete); - for stdout"},
    [B_THREADS] = {"threads", 0, "N",
                   "threads (default 1; 0 = all cores; at most 2 are used, from 512 KiB of "
                   "corpus): the calibration compresses the corpus while the model is written; "
                   "the model does not change"},
    {NULL, 0, NULL, NULL},
};

/* export's: build's output row alone (B_OUTPUT is 0 in both) */
static const cli_opt export_opts[] = {
    [B_OUTPUT] = {"output", 'o', "MODEL", "write the model file to MODEL (replaced only once "
                  "complete); - for stdout"},
    {NULL, 0, NULL, NULL},
};

static const cli_opt no_opts[] = {{NULL, 0, NULL, NULL}};

static const char *why(int rc)
{
    return rc == TD_EIO ? strerror(errno) : td_strerror(rc);
}

/* Whether path means stdout ("-"); a terminal is refused there, as gen
 * refuses binary kinds: a model is binary. */
static int to_stdout(const char *path)
{
    if (strcmp(path, "-") != 0)
        return 0;
    if (isatty(STDOUT_FILENO))
        cli_usage_error("not writing a model (binary) to a terminal: redirect it (> FILE, | cmd) "
                        "or use -o FILE");
    return 1;
}

static int save(const td_model *m, const char *path)
{
    if (to_stdout(path)) {
        const void *buf;
        size_t len;
        int rc = td_model_data(m, &buf, &len);
        if (rc != TD_OK) {
            cli_error("cannot write the model: %s", why(rc));
            return CLI_EXIT_FAIL;
        }
        fwrite(buf, 1, len, stdout); /* a write error is reported at exit */
        return 0;
    }
    int rc = td_model_save(m, path);
    if (rc != TD_OK) {
        cli_error("cannot write '%s': %s", path, why(rc));
        return CLI_EXIT_FAIL;
    }
    return 0;
}

static int run_build(const cli_cmd *cmd, int argc, char **argv)
{
    static cli_args a;
    td_model_builder *b = NULL;
    const char *out;
    unsigned threads = 1;
    int rc;

    cli_parse(cmd, argc, argv, &a);
    if (a.npos < 1)
        cli_usage_error("model build needs CORPUS... (files of UTF-8 text, or - for stdin)");
    if (!(out = a.val[B_OUTPUT]))
        cli_usage_error("model build needs -o MODEL");
    int std = to_stdout(out); /* before the work */
    if (a.val[B_THREADS])
        threads = cli_parse_threads(a.val[B_THREADS]);
    if (td_model_builder_new(&b) != TD_OK) {
        cli_error("out of memory");
        return CLI_EXIT_FAIL;
    }
    (void)td_model_builder_set_threads(b, threads);
    for (int i = 0; i < a.npos; i++) {
        const char *p = a.pos[i];
        rc = strcmp(p, "-") == 0 ? td_model_builder_add_fd(b, STDIN_FILENO)
                                 : td_model_builder_add_file(b, p);
        if (rc != TD_OK) {
            const char *msg = td_model_builder_message(b);
            cli_error("corpus '%s': %s", strcmp(p, "-") == 0 ? "stdin" : p,
                      rc == TD_EIO ? strerror(errno) : *msg ? msg : td_strerror(rc));
            td_model_builder_free(b);
            return rc == TD_EUTF8 ? CLI_EXIT_USAGE : CLI_EXIT_FAIL;
        }
    }
    /* a file through the builder's atomic save; stdout from the model */
    td_model *m = NULL;
    rc = std ? td_model_builder_finish(b, &m) : td_model_builder_save(b, out);
    const char *msg = td_model_builder_message(b);
    int status = 0;
    if (rc == TD_OK) {
        if (std)
            status = save(m, out);
        if (!status && *td_model_builder_note(b))
            cli_error("note: %s", td_model_builder_note(b));
    } else if (!std && !*msg) { /* built, not written */
        cli_error("cannot write '%s': %s", out, why(rc));
        status = CLI_EXIT_FAIL;
    } else {
        cli_error("cannot build a model: %s", *msg ? msg : why(rc));
        status = rc == TD_ECORPUS || rc == TD_EINVAL ? CLI_EXIT_USAGE : CLI_EXIT_FAIL;
    }
    td_model_free(m);
    td_model_builder_free(b);
    return status;
}

static int run_info(const cli_cmd *cmd, int argc, char **argv)
{
    static cli_args a;
    td_model *own = NULL;
    const td_model *m;
    td_model_info in;

    cli_parse(cmd, argc, argv, &a);
    if (a.npos > 1)
        cli_usage_error("model info takes one MODEL (none: the built-in model)");
    if (a.npos == 1) {
        int rc = td_model_load_file(&own, a.pos[0]);
        if (rc != TD_OK) {
            cli_error("cannot load model '%s': %s", a.pos[0], why(rc));
            return rc == TD_EIO ? CLI_EXIT_FAIL : CLI_EXIT_USAGE;
        }
        m = own;
    } else if (!(m = td_model_builtin())) {
        cli_error("out of memory");
        return CLI_EXIT_FAIL;
    }
    (void)td_model_describe(m, &in);
    printf("model       %s\n", a.npos ? a.pos[0] : "built-in English");
    printf("format      %u\n", in.format_version);
    printf("size        %llu bytes\n", (unsigned long long)in.size);
    printf("words       %u\n", in.words);
    printf("separators  %u\n", in.separators);
    printf("char states %u\n", in.char_states);
    printf("repetition  %.3f, copying on %.3f (the continuation cache, fitted to the corpus)\n",
           in.cache_mu / 65536.0, in.copy_mu / 65536.0);
    if (in.run_share)
        printf("runs        %.1f%% of the corpus in repeated lines, which its text copies\n",
               in.run_share / 655.36);
    else
        printf("runs        none (repeated lines under 10%% of the corpus)\n");
    printf("hash        ");
    for (int i = 0; i < 32; i++)
        printf("%02x", in.hash[i]);
    printf("\n");
    td_model_free(own);
    return 0; /* a write error is reported at exit (cli_check_stdout_at_exit) */
}

static int run_export(const cli_cmd *cmd, int argc, char **argv)
{
    static cli_args a;
    const td_model *m;

    cli_parse(cmd, argc, argv, &a);
    if (a.npos)
        cli_usage_error("model export takes no operands");
    if (!a.val[B_OUTPUT])
        cli_usage_error("model export needs -o MODEL");
    if (!(m = td_model_builtin())) {
        cli_error("out of memory");
        return CLI_EXIT_FAIL;
    }
    return save(m, a.val[B_OUTPUT]);
}

/* ---- dispatch ------------------------------------------------------------ */

static const cli_cmd model_build = {
    .name = "model build",
    .args = "CORPUS... -o MODEL [--threads N]",
    .summary = "learn a text model from UTF-8 text",
    .description = "Learn a text model (words, punctuation, sentence and paragraph shape,\n"
                   "line layout) from CORPUS files of UTF-8 text in any language, for\n"
                   "'testdata gen text SIZE --model MODEL'.  Each file is one document;\n"
                   "paragraphs are separated by blank lines.  At least 10 KiB of text.",
    .operands = "  CORPUS             a file of UTF-8 text (any number); '-' reads stdin\n",
    .opts = build_opts,
    .footer = "Exit status: 0 done, 1 failure, 2 usage error or unusable corpus (not UTF-8,\n"
              "empty, under 10 KiB).\n",
    .complete = "F",
    .run = run_build,
};

static const cli_cmd model_info = {
    .name = "model info",
    .args = "[MODEL]",
    .summary = "describe a model file (none: the built-in one)",
    .description = "Check MODEL completely and print its format version, size, vocabulary\n"
                   "and content hash (the hash is part of the text stream's key).",
    .operands = "  MODEL              a model file; none: the built-in English model\n",
    .opts = no_opts,
    .footer = "Exit status: 0 done, 1 unreadable, 2 not a valid model.\n",
    .complete = "f",
    .run = run_info,
};

static const cli_cmd model_export = {
    .name = "model export",
    .args = "-o MODEL",
    .summary = "write the built-in English model to a file",
    .description = "Write the built-in English model as a model file (the same bytes as\n"
                   "the default of 'gen text' when given with --model).",
    .opts = export_opts,
    .footer = "Exit status: 0 done, 1 failure, 2 usage error.\n",
    .run = run_export,
};

static const cli_cmd *const subs[] = {&model_build, &model_info, &model_export, NULL};

const cli_cmd cli_cmd_model = {
    .name = "model",
    .args = NULL, /* "build|info|export ...", from subs (cli_cmd_args) */
    .summary = "text models: build from a corpus, describe, export",
    .description = "Text models: what 'gen text' learns from a corpus and generates from.",
    .opts = no_opts,
    .footer = NULL,
    .subs = subs,
    .run = cli_run_subs,
};
