/*
 * Command lines from declarative specs (as libgit2's cli_opt_spec): each
 * command lists its options once, and parsing, "did you mean" hints and
 * --help all come from that list.  Stream options (--seed, --ratio ...)
 * are not listed here: they come from the library's option table, so an
 * option added there works and is documented here with no change.
 */
#define _GNU_SOURCE
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

int cli_opt_index(const cli_cmd *cmd, const char *name)
{
    for (int i = 0; cmd->opts[i].name; i++)
        if (strcmp(cmd->opts[i].name, name) == 0)
            return i;
    return -1;
}

static int nopts(const cli_cmd *cmd)
{
    int n = 0;
    while (cmd->opts[n].name)
        n++;
    return n;
}

/* The parsed command line lives until the program ends: the allocations
 * stay reachable from here (so leak checkers see no leak) and are never
 * freed one by one. */
static void *parsed[8];

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p) {
        cli_error("out of memory");
        exit(CLI_EXIT_FAIL);
    }
    for (size_t i = 0; i < sizeof parsed / sizeof parsed[0]; i++)
        if (!parsed[i]) {
            parsed[i] = p;
            break;
        }
    return p;
}

static void print_version(void)
{
    printf("testdata %s (format %d)\n", td_version(), TD_FORMAT_VERSION);
    exit(0);
}

/* "unknown option '--sed'; did you mean '--seed'?" */
static void unknown_option(const cli_cmd *cmd, const char *name)
{
    const char *cand[128];
    size_t n = 0;
    for (int i = 0; cmd->opts[i].name && n < 100; i++)
        cand[n++] = cmd->opts[i].name;
    if (cmd->stream_opts)
        for (size_t i = 0; i < td_option_count() && n < 116; i++)
            cand[n++] = td_option_get(i)->key;
    if (cmd->tree_opts)
        for (size_t i = 0; i < td_tree_option_count() && n < 126; i++)
            cand[n++] = td_tree_option_get(i)->key;
    cand[n++] = "help";
    cand[n] = NULL;
    const char *s = td_suggest(name, cand);
    if (s) {
        char dashed[64];
        snprintf(dashed, sizeof dashed, "%s", s);
        for (char *p = dashed; *p; p++)
            if (*p == '_')
                *p = '-';
        cli_usage_error("unknown option '--%s'; did you mean '--%s'?", name, dashed);
    }
    cli_usage_error("unknown option '--%s'", name);
}

/* The value of option k given as arg (i indexes argv): inline (after '='
 * or the short letter) or the next argument.  A file name cannot be empty
 * (-o "$UNSET"): a usage error here, before any work is done. */
static const char *take_value(const cli_cmd *cmd, int k, const char *inline_value, int argc,
                              char **argv, int *i, const char *spelled)
{
    const char *v = inline_value, *what = cmd->opts[k].value;
    if (!v && *i + 1 < argc)
        v = argv[++*i];
    if (!v)
        cli_usage_error("option '%s' needs a value (%s)", spelled, what);
    if (!*v && (strcmp(what, "FILE") == 0 || strcmp(what, "MODEL") == 0))
        cli_usage_error("option '%s' needs a %s name, not an empty string", spelled, what);
    return v;
}

/* -x, -xVALUE, -x VALUE: the option's index; *value set if it takes one. */
static int short_option(const cli_cmd *cmd, int argc, char **argv, int *i, const char **value)
{
    const char *arg = argv[*i];
    char spelled[3] = {'-', arg[1], '\0'};
    int k = -1;
    if (arg[1] == 'h' && !arg[2]) {
        cli_print_help(cmd, stdout);
        exit(0);
    }
    if (arg[1] == 'V' && !arg[2])
        print_version();
    for (int j = 0; cmd->opts[j].name; j++)
        if (cmd->opts[j].alias == arg[1])
            k = j;
    if (k < 0)
        cli_usage_error("unknown option '-%c'", arg[1]);
    if (cmd->opts[k].value)
        *value = take_value(cmd, k, arg[2] ? arg + 2 : NULL, argc, argv, i, spelled);
    else if (arg[2])
        cli_usage_error("option '-%c' takes no value", arg[1]);
    return k;
}

/* --name, --name=VALUE, --name VALUE: the option's index, or -1 after a
 * stream option was stored in *a. */
static int long_option(const cli_cmd *cmd, int argc, char **argv, int *i, const char **value,
                       cli_args *a)
{
    const char *arg = argv[*i], *name = arg + 2, *eq = strchr(name, '=');
    size_t len = eq ? (size_t)(eq - name) : strlen(name);
    char key[64], spelled[70];
    int k;
    if (len >= sizeof key)
        cli_usage_error("unknown option '%.*s'", (int)(len + 2), arg);
    memcpy(key, name, len);
    key[len] = '\0';
    snprintf(spelled, sizeof spelled, "--%s", key);
    if (strcmp(key, "help") == 0) {
        cli_print_help(cmd, stdout);
        exit(0);
    }
    if (strcmp(key, "version") == 0)
        print_version();
    k = cli_opt_index(cmd, key);
    if (k < 0 && ((cmd->stream_opts && td_option_find(key)) ||
                  (cmd->tree_opts && td_tree_option_find(key)))) {
        /* A stream option: the library judges it once KIND is known. */
        if (!eq && *i + 1 >= argc)
            cli_usage_error("option '%s' needs a value", spelled);
        a->skey[a->nstream] = name; /* "dedup-block" or "dedup-block=4K" */
        a->sval[a->nstream++] = eq ? eq + 1 : argv[++*i];
        return -1;
    }
    if (k < 0)
        unknown_option(cmd, key);
    if (cmd->opts[k].value)
        *value = take_value(cmd, k, eq ? eq + 1 : NULL, argc, argv, i, spelled);
    else if (eq)
        cli_usage_error("option '%s' takes no value", spelled);
    return k;
}

void cli_parse(const cli_cmd *cmd, int argc, char **argv, cli_args *a)
{
    int only_pos = 0, n = nopts(cmd);

    memset(a, 0, sizeof *a);
    a->pos = xcalloc((size_t)argc, sizeof *a->pos);
    a->val = xcalloc((size_t)n, sizeof *a->val);
    a->count = xcalloc((size_t)n, sizeof *a->count);
    a->skey = xcalloc((size_t)argc, sizeof *a->skey);
    a->sval = xcalloc((size_t)argc, sizeof *a->sval);
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *value = NULL;
        int k;
        if (only_pos || arg[0] != '-' || arg[1] == '\0' || (arg[1] >= '0' && arg[1] <= '9')) {
            /* "-" is stdin; "-5" a (bad) size, left to the size parser. */
            a->pos[a->npos++] = arg;
            continue;
        }
        if (strcmp(arg, "--") == 0) {
            only_pos = 1;
            continue;
        }
        k = arg[1] == '-' ? long_option(cmd, argc, argv, &i, &value, a)
                          : short_option(cmd, argc, argv, &i, &value);
        if (k >= 0) {
            a->val[k] = value;
            a->count[k]++;
        }
    }
}

/* ---- --help ------------------------------------------------------------- */

/* "  LEFT  text..." with text wrapped at 79 columns under column `col`. */
static void print_item(FILE *f, const char *left, const char *text, int col)
{
    int at = fprintf(f, "  %s", left);
    const char *p = text;
    if (at >= col - 1) {
        fputc('\n', f);
        at = 0;
    }
    while (*p) {
        int room = 79 - col;
        size_t n = strlen(p);
        if ((int)n > room) {
            n = (size_t)room;
            while (n > 0 && p[n] != ' ')
                n--;
            if (n == 0)
                n = (size_t)room;
        }
        fprintf(f, "%*s%.*s\n", col - at, "", (int)n, p);
        at = 0;
        p += n;
        while (*p == ' ')
            p++;
    }
}

static void stream_option_help(FILE *f)
{
    fputs("\nstream options (any kind that takes them):\n", f);
    for (size_t i = 0; i < td_option_count(); i++) {
        const td_option_info *o = td_option_get(i);
        char left[64], kinds[128] = "", text[512];
        int all = 1;
        snprintf(left, sizeof left, "--%s %s", o->key, o->value_name);
        for (char *p = left; *p && *p != ' '; p++)
            if (*p == '_')
                *p = '-';
        for (int k = 0; k < TD_KIND_COUNT; k++) {
            if (!td_kind_name(k))
                continue;
            if (td_option_applies(o, k))
                snprintf(kinds + strlen(kinds), sizeof kinds - strlen(kinds), "%s%s",
                         kinds[0] ? ", " : "", td_kind_name(k));
            else
                all = 0;
        }
        snprintf(text, sizeof text, "%s%s%s%s; %s; default %s", o->help, all ? "" : " (",
                 all ? "" : kinds, all ? "" : ")", o->range, o->default_value);
        print_item(f, left, text, 23);
    }
}

static void tree_option_help(FILE *f)
{
    fputs("\ntree options:\n", f);
    for (size_t i = 0; i < td_tree_option_count(); i++) {
        const td_option_info *o = td_tree_option_get(i);
        char left[64], text[512];
        snprintf(left, sizeof left, "--%s %s", o->key, o->value_name);
        snprintf(text, sizeof text, "%s; %s; default %s", o->help, o->range, o->default_value);
        print_item(f, left, text, 23);
    }
}

/* The subcommands' words joined by sep ("build|info", "build, info"). */
static char *sub_words(const cli_cmd *cmd, const char *sep, char *buf, size_t cap)
{
    buf[0] = '\0';
    for (int i = 0; cmd->subs[i]; i++) {
        size_t n = strlen(buf);
        snprintf(buf + n, cap - n, "%s%s", i ? sep : "", cli_sub_word(cmd->subs[i]));
    }
    return buf;
}

const char *cli_cmd_args(const cli_cmd *cmd, char *buf, size_t cap)
{
    if (cmd->args || !cmd->subs)
        return cmd->args ? cmd->args : "";
    size_t n = strlen(sub_words(cmd, "|", buf, cap));
    snprintf(buf + n, cap - n, " ...");
    return buf;
}

/* The help of a command with subcommands: one line each. */
static void subs_help(const cli_cmd *cmd, FILE *f)
{
    char args[256];
    fprintf(f, "usage: testdata %s %s\n%s\n\ncommands:\n", cmd->name,
            cli_cmd_args(cmd, args, sizeof args), cmd->description);
    for (int i = 0; cmd->subs[i]; i++) {
        char left[64], sargs[256];
        snprintf(left, sizeof left, "%s %s", cmd->subs[i]->name,
                 cli_cmd_args(cmd->subs[i], sargs, sizeof sargs));
        fprintf(f, "  %-30s %s\n", left, cmd->subs[i]->summary);
    }
    fprintf(f, "\n'testdata %s COMMAND --help' describes a command.\n", cmd->name);
    if (cmd->footer)
        fprintf(f, "\n%s", cmd->footer);
}

const char *cli_sub_word(const cli_cmd *sub)
{
    const char *sp = strrchr(sub->name, ' ');
    return sp ? sp + 1 : sub->name;
}

int cli_run_subs(const cli_cmd *cmd, int argc, char **argv)
{
    const char *names[32];
    char list[256];
    int n = 0;
    if (argc < 2) {
        subs_help(cmd, stderr);
        return CLI_EXIT_USAGE;
    }
    if (strcmp(argv[1], "help") == 0 && argc > 2) {
        /* "tree help gen" is "tree gen --help", as "help tree gen" is */
        char *hargv[] = {argv[0], argv[2], (char *)"--help", NULL};
        return cli_run_subs(cmd, 3, hargv);
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        subs_help(cmd, stdout);
        return 0;
    }
    for (int i = 0; cmd->subs[i] && n < 31; i++) {
        const char *w = cli_sub_word(cmd->subs[i]);
        if (strcmp(w, argv[1]) == 0) {
            cli_command = cmd->subs[i]->name;
            return cmd->subs[i]->run(cmd->subs[i], argc - 1, argv + 1);
        }
        names[n++] = w;
    }
    names[n] = NULL;
    const char *s = td_suggest(argv[1], names);
    if (s)
        cli_usage_error("unknown command '%s %s'; did you mean '%s %s'?", cmd->name, argv[1],
                        cmd->name, s);
    cli_usage_error("unknown command '%s %s' (%s)", cmd->name, argv[1],
                    sub_words(cmd, ", ", list, sizeof list));
}

void cli_print_help(const cli_cmd *cmd, FILE *f)
{
    if (cmd->subs) {
        subs_help(cmd, f);
        return;
    }
    char args[256];
    fprintf(f, "usage: testdata %s %s\n%s\n", cmd->name, cli_cmd_args(cmd, args, sizeof args),
            cmd->description);
    if ((cmd->stream_opts && !cmd->tree_opts) || cmd->operands)
        fputc('\n', f);
    if (cmd->stream_opts && !cmd->tree_opts) {
        char kinds[256] = "";
        const char *left = "KIND";
        for (int k = 0; k < TD_KIND_COUNT; k++)
            if (td_kind_name(k))
                snprintf(kinds + strlen(kinds), sizeof kinds - strlen(kinds), "%s%s",
                         kinds[0] ? " | " : "", td_kind_name(k));
        print_item(f, left, kinds, 21);
    }
    if (cmd->operands)
        fputs(cmd->operands, f);
    fputs("\noptions:\n", f);
    for (int i = 0; cmd->opts[i].name; i++) {
        const cli_opt *o = &cmd->opts[i];
        char left[64];
        if (o->alias)
            snprintf(left, sizeof left, "-%c, --%s%s%s", o->alias, o->name, o->value ? " " : "",
                     o->value ? o->value : "");
        else
            snprintf(left, sizeof left, "--%s%s%s", o->name, o->value ? " " : "",
                     o->value ? o->value : "");
        print_item(f, left, o->help, 21);
    }
    print_item(f, "-h, --help", "this help; --version prints the version", 21);
    if (cmd->tree_opts)
        tree_option_help(f);
    if (cmd->stream_opts)
        stream_option_help(f);
    if (cmd->notes) {
        fputc('\n', f);
        cmd->notes(f);
    }
    if (cmd->footer)
        fprintf(f, "\n%s", cmd->footer);
}

/* ---- streams ------------------------------------------------------------ */

uint64_t cli_parse_size(const char *text, const char *what)
{
    uint64_t v;
    char msg[256];
    if (td_parse_size_msg(text, &v, msg, sizeof msg) != TD_OK)
        cli_usage_error("bad %s '%s': %s", what, text, msg);
    return v;
}

unsigned cli_parse_threads(const char *text)
{
    /* The same row of the library's option table as gen --threads. */
    td_options t;
    char msg[256];
    td_options_init(&t);
    if (td_options_set_msg(&t, TD_ZERO, "--threads", text, msg, sizeof msg) != TD_OK)
        cli_usage_error("%s", msg);
    return t.threads;
}

int cli_apply_stream_opts(const cli_args *a, int allow_random_seed, const char *hint,
                          cli_set_fn set, void *ctx, uint64_t *random_seed)
{
    char msg[512]; /* a size option's message says what a size is */
    int last_seed = -1, picked = 0;

    for (int i = 0; i < a->nstream; i++) {
        const char *k = a->skey[i];
        size_t klen = strcspn(k, "=");
        if (klen == 4 && strncmp(k, "seed", 4) == 0)
            last_seed = i;
    }
    for (int i = 0; i < a->nstream; i++) {
        char key[64], seedbuf[32];
        const char *val = a->sval[i];
        size_t klen = strcspn(a->skey[i], "=");
        snprintf(key, sizeof key, "--%.*s", (int)klen, a->skey[i]);
        if (strcmp(key, "--seed") == 0 && strcmp(val, "random") == 0) {
            if (!allow_random_seed)
                cli_usage_error("--seed random cannot be checked: give the seed that %s printed",
                                hint);
            if (i != last_seed)
                continue; /* a later --seed wins: pick nothing it would not use */
            uint64_t seed;
            if (getrandom(&seed, sizeof seed, 0) != (ssize_t)sizeof seed)
                seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
            snprintf(seedbuf, sizeof seedbuf, "%llu", (unsigned long long)seed);
            val = seedbuf;
            picked = 1;
            if (random_seed)
                *random_seed = seed;
            cli_error("seed %s (reproduce with --seed %s)", seedbuf, seedbuf);
        }
        if (set(ctx, key, val, msg, sizeof msg) != TD_OK)
            cli_usage_error("%s", msg);
    }
    return picked;
}

typedef struct stream_ctx {
    td_options *opt;
    int kind;
} stream_ctx;

static int set_stream_opt(void *ctx, const char *key, const char *val, char *msg, size_t cap)
{
    stream_ctx *c = ctx;
    /* --model and --profile files are the options' own: a later one
     * replaces (and frees) the earlier; cli_stream_release frees the last. */
    return td_options_set_msg(c->opt, c->kind, key, val, msg, cap);
}

void cli_parse_stream(const cli_args *a, const char *kind, const char *size,
                      const char *offset, int allow_random_seed, cli_stream *s)
{
    char msg[256];

    memset(s, 0, sizeof *s);
    if (td_kind_from_name_msg(kind, &s->kind, msg, sizeof msg) != TD_OK)
        cli_usage_error("%s", msg);
    s->size = size ? cli_parse_size(size, "size") : TD_SIZE_UNBOUNDED;
    s->offset = offset ? cli_parse_size(offset, "--offset") : 0;
    td_options_init(&s->opt);
    stream_ctx c = {&s->opt, s->kind};
    s->seed_was_random = cli_apply_stream_opts(a, allow_random_seed, "gen", set_stream_opt, &c,
                                               &s->random_seed);
    if (s->size != TD_SIZE_UNBOUNDED && s->size > UINT64_MAX - s->offset)
        cli_usage_error("--offset plus SIZE is past the end of the stream (2^64 bytes)");
}

void cli_stream_release(cli_stream *s)
{
    td_options_release(&s->opt);
}

int cli_stream_run(const cli_cmd *cmd, int argc, char **argv,
                   int (*body)(const cli_cmd *, int, char **, cli_stream *))
{
    cli_stream s;
    memset(&s, 0, sizeof s);
    td_options_init(&s.opt);
    int rc = body(cmd, argc, argv, &s);
    cli_stream_release(&s);
    return rc;
}
