/* testdata profile [--sample SIZE] [--name NAME] [--model M] [--no-fingerprint] [--threads N] [-o PROFILE] FILE... | -
 *        testdata profile --check PROFILE [--json] FILE...
 *        testdata profile --dump PROFILE [-o FILE] */
#define _GNU_SOURCE
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { O_OUTPUT, O_SAMPLE, O_NAME, O_MODEL, O_NOFP, O_THREADS, O_CHECK, O_JSON, O_DUMP };

static const cli_opt profile_opts[] = {
    [O_OUTPUT] = {"output", 'o', "FILE",
                  "write the profile to FILE (default stdout); a regular FILE is replaced only "
                  "once complete"},
    [O_SAMPLE] = {"sample", 0, "SIZE",
                  "parse at most SIZE bytes (default 8M), in 1 MiB regions spread over the "
                  "input (SIZE is rounded up to whole MiB)"},
    [O_NAME] = {"name", 0, "NAME", "a name stored in the profile (printable ASCII, at most 63 "
                                   "bytes)"},
    [O_MODEL] = {"model", 0, "M",
                 "auto (default: whichever generates data closer to the sample), lz (matches and "
                 "literals) or context (byte contexts: text)"},
    [O_NOFP] = {"no-fingerprint", 0, NULL,
                "do not measure the compressors (faster; with --model lz, not its fidelity either)"},
    [O_THREADS] = {"threads", 0, "N",
                   "threads (default 1; 0 = all cores; at most 2 are used): the compressors are "
                   "measured while the sample is parsed, then the candidate models two at a time; the "
                   "profile does not change"},
    [O_CHECK] = {"check", 0, "PROFILE",
                 "measure each FILE's first MiB and print its ratio and compressor cost next to "
                 "PROFILE's (a file or a built-in name), with the error; builds no profile"},
    [O_JSON] = {"json", 0, NULL, "with --check: one JSON array, one object per FILE, on stdout"},
    [O_DUMP] = {"dump", 0, "PROFILE", "print PROFILE (a file or a built-in name) as JSON, or write it to "
                              "-o FILE"},
    {NULL, 0, NULL, NULL},
};

/* Profile pos[0..n) as one sample with options o (checked by run());
 * TD_OK or a code with the message printed. */
static int profile_inputs(const char *const *pos, int n, const td_profile_options *o,
                          td_profile **out)
{
    td_profile_options po = *o;
    td_profile_builder *b = NULL;
    uint64_t hint = 0;
    int rc;

    for (int i = 0; i < n; i++) {
        struct stat st;
        if (strcmp(pos[i], "-") == 0 || stat(pos[i], &st) != 0 || !S_ISREG(st.st_mode)) {
            hint = TD_SIZE_UNBOUNDED;
            break;
        }
        hint += (uint64_t)st.st_size;
    }
    po.size_hint = hint;
    rc = td_profile_builder_new(&b, &po);
    if (rc != TD_OK) {
        cli_error("profile: %s", td_strerror(rc));
        return rc;
    }
    for (int i = 0; i < n && rc == TD_OK; i++) {
        int stdin_ = strcmp(pos[i], "-") == 0;
        int fd = stdin_ ? STDIN_FILENO : open(pos[i], O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            cli_error("cannot open '%s': %s", pos[i], strerror(errno));
            rc = TD_EIO;
            break;
        }
        rc = td_profile_builder_update_fd(b, fd);
        if (rc == TD_EIO)
            cli_error("read error on '%s': %s", stdin_ ? "stdin" : pos[i], strerror(errno));
        else if (rc != TD_OK)
            cli_error("profile '%s': %s", stdin_ ? "stdin" : pos[i], td_strerror(rc));
        if (!stdin_)
            close(fd);
    }
    if (rc == TD_OK) {
        rc = td_profile_builder_finish(b, out);
        if (rc != TD_OK)
            cli_error("profile: %s", td_strerror(rc));
    }
    td_profile_builder_free(b);
    return rc;
}

/* path as a shell word: as it is when it needs no quoting, in single
 * quotes when it holds none, else NULL (and for a path that would read as
 * an option). */
static const char *shell_word(const char *path, char *buf, size_t cap)
{
    if (path[0] == '-')
        return NULL;
    if (path[strspn(path, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._/+-,:=@%")] == 0)
        return path;
    if (strchr(path, '\'') || (size_t)snprintf(buf, cap, "'%s'", path) >= cap)
        return NULL;
    return buf;
}

static void print_fingerprint(FILE *f, const char *what, const td_profile *p)
{
    td_profile_info_t info;
    td_profile_info(p, &info);
    /* dedup leaves out the one-byte blocks (a zeroed sample would read
     * 1.000), so their share is said beside it */
    char ones[64] = "";
    if (info.const4k > 0)
        snprintf(ones, sizeof ones, " without its one-byte blocks (%.1f%% of them)",
                 100.0 * info.const4k);
    fprintf(f, "%s: %llu bytes (%llu parsed, documents of %u bytes), 4 KiB dedup %.3f%s, %s model\n",
            what, (unsigned long long)info.source_bytes, (unsigned long long)info.sampled_bytes,
            info.doc_bytes, info.dedup, ones, td_profile_model_name((int)info.model));
    for (int c = 0; c < TD_CODEC_COUNT; c++) {
        double r, ns;
        if (td_profile_fingerprint(p, c, &r, &ns) == TD_OK && ns > 0)
            fprintf(f, "  %-8s ratio %7.3f  %7.1f ns/byte  %8.1f MB/s\n", td_codec_label(c), r,
                    ns, 1e3 / ns);
        else if (td_profile_fingerprint(p, c, &r, &ns) == TD_OK)
            fprintf(f, "  %-8s ratio %7.3f  (no timing)\n", td_codec_label(c), r);
    }
}

/* The builder's own measure of the model it chose (a profile just built);
 * the codecs beyond issue 14's worst-case bound are named, so that nobody
 * takes the data for closer than it is, with the command that measures a
 * MiB of it (out: where the profile went, NULL or "-" for stdout). */
static void print_fidelity(FILE *f, const td_profile *p, const char *out)
{
    td_fidelity_t fi;
    if (td_profile_fidelity(p, 0, &fi) != TD_OK)
        return;
    char off[128] = "";
    size_t no = 0;
    fprintf(f, "like data (%llu KiB at seed 0) against the sample's first %llu KiB:",
            (unsigned long long)(fi.generated_bytes >> 10), (unsigned long long)((fi.sample_bytes + 1023) >> 10));
    for (int i = 0; i < TD_PROFILE_FIDELITY_CODECS && td_profile_fidelity(p, i, &fi) == TD_OK; i++) {
        fprintf(f, "%s %s %+.1f%%", i ? "," : "", fi.label, 100.0 * fi.error);
        if (fabs(fi.error) > TD_FIDELITY_NOTE_OFF && no < sizeof off)
            no += (size_t)snprintf(off + no, sizeof off - no, "%s%s", no ? ", " : "", fi.label);
    }
    fputc('\n', f);
    if (!no)
        return;
    char q[512];
    const char *w = out && strcmp(out, "-") != 0 ? shell_word(out, q, sizeof q) : NULL;
    double r, ns;
    if (td_profile_fingerprint(p, TD_CODEC_GZIP, &r, &ns) != TD_OK)
        fprintf(f, "  more than 10%% off under %s: compare generated data with yours under the "
                   "codecs you benchmark (testdata profile --check PROFILE FILE)\n", off);
    else
        fprintf(f, "  more than 10%% off under %s; a MiB of its data against the sample's fingerprint: "
                   "testdata gen like 1M --profile %s | testdata profile --check %s -\n",
                off, w ? w : "PROFILE", w ? w : "PROFILE");
}

/* A profile named on the command line (a built-in or a file), or exit 2. */
static td_profile *open_profile(const char *what, const char *name_or_path)
{
    td_profile *p = NULL;
    char msg[512] = "";
    int rc = td_profile_open(&p, name_or_path, msg, sizeof msg);
    if (rc != TD_OK)
        cli_usage_error("bad %s '%s': %s", what, name_or_path, msg[0] ? msg : td_strerror(rc));
    return p;
}

/* The JSON of p to stdout, or to path through the library's atomic output. */
static int write_profile(const td_profile *p, const char *path)
{
    size_t len = 0;
    char *j;
    int rc;

    if (path && strcmp(path, "-") != 0) {
        rc = td_profile_save_file(p, path);
        if (rc != TD_OK) {
            cli_error("cannot write '%s': %s", path, rc == TD_EIO ? strerror(errno) : td_strerror(rc));
            return CLI_EXIT_FAIL;
        }
        return 0;
    }
    (void)td_profile_save(p, NULL, 0, &len);
    j = malloc(len ? len : 1);
    rc = j ? td_profile_save(p, j, len, &len) : TD_ENOMEM;
    if (rc != TD_OK) {
        free(j);
        cli_error("profile: %s", td_strerror(rc));
        return CLI_EXIT_FAIL;
    }
    fwrite(j, 1, len, stdout); /* a write error is reported at exit */
    free(j);
    return 0;
}

/* The state of --check for cli_report_files: the profile and the last result. */
typedef struct check_ctx {
    td_profile *ref;
    td_profile_comparison c;
} check_ctx;

static int measure(void *ctx, int fd)
{
    check_ctx *x = ctx;
    return td_profile_compare_fd(x->ref, fd, &x->c);
}

static const char *why(int rc)
{
    return rc == TD_ECORPUS ? "empty" : NULL;
}

static int json(void *ctx, const char *file, char *buf, size_t cap)
{
    return td_profile_comparison_json(&((check_ctx *)ctx)->c, file, buf, cap);
}

static size_t json_max(size_t name_len)
{
    return TD_PROFILE_COMPARISON_JSON_MAX(name_len);
}

static void print_text(void *ctx, const char *name, int i)
{
    const td_profile_comparison *c = &((check_ctx *)ctx)->c;
    (void)i;
    printf("%s\n", name);
    if (c->piece)
        printf("  (cost timed in pieces of %llu bytes, as the profile's sample was)\n",
               (unsigned long long)c->piece);
    printf("  %-8s %8s %8s %7s | %9s %9s %7s\n", "codec", "ratio", "profile", "error", "ns/byte",
           "profile", "cost");
    for (int k = 0; k < TD_CODEC_COUNT && c->ref_ratio[k] > 0; k++) {
        double err = 100.0 * (c->ratio[k] / c->ref_ratio[k] - 1);
        if (c->ref_ns_per_byte[k] > 0)
            printf("  %-8s %8.3f %8.3f %+6.1f%% | %9.1f %9.1f %6.2fx\n", td_codec_label(k), c->ratio[k],
                   c->ref_ratio[k], err, c->ns_per_byte[k], c->ref_ns_per_byte[k],
                   c->ns_per_byte[k] / c->ref_ns_per_byte[k]);
        else /* built-ins keep ratios, not timings (they depend on the machine) */
            printf("  %-8s %8.3f %8.3f %+6.1f%% | %9.1f %9s %7s\n", td_codec_label(k), c->ratio[k],
                   c->ref_ratio[k], err, c->ns_per_byte[k], "-", "-");
    }
}

/* Each FILE measured against the profile (td_profile_compare_fd: its first
 * MiB, timed in the profile's regime); 0, or 1 if a FILE could not be read. */
static int check(const cli_args *a)
{
    static const cli_file_report report = {measure, why, print_text, json, json_max};
    check_ctx x = {.ref = open_profile("--check profile", a->val[O_CHECK])};
    int json_ = a->count[O_JSON] > 0;

    if (!json_)
        print_fingerprint(stdout, a->val[O_CHECK], x.ref);
    int status = cli_report_files(a, json_, &report, &x);
    if (!json_ && td_profile_fingerprint(x.ref, 0, NULL, NULL) == TD_ERANGE)
        printf("(%s has no fingerprint: it was made with --no-fingerprint)\n", a->val[O_CHECK]);
    td_profile_free(x.ref);
    return status;
}

/* -o naming a sample file (the same file by any name, or stdin's) would
 * replace the sample with its profile: a usage error, before any reading. */
static void sample_not_output(const char *const *pos, int n, const char *out)
{
    struct stat so, si;
    if (!out || strcmp(out, "-") == 0 || stat(out, &so) != 0 || !S_ISREG(so.st_mode))
        return;
    for (int i = 0; i < n; i++) {
        int std = strcmp(pos[i], "-") == 0;
        if ((std ? fstat(STDIN_FILENO, &si) : stat(pos[i], &si)) == 0 && si.st_dev == so.st_dev &&
            si.st_ino == so.st_ino)
            cli_usage_error("'%s' is a sample file%s: the profile would replace it (choose another "
                            "output)", out, std ? " (stdin)" : "");
    }
}

static int run(const cli_cmd *cmd, int argc, char **argv)
{
    cli_args a;
    td_profile_options po;
    td_profile *p = NULL;
    char msg[256];
    int rc;

    cli_parse(cmd, argc, argv, &a);
    if (a.val[O_DUMP]) {
        if (a.npos)
            cli_usage_error("--dump takes no FILE");
        if (a.val[O_CHECK] || a.val[O_NAME] || a.val[O_SAMPLE] || a.val[O_MODEL] || a.count[O_NOFP] ||
            a.val[O_THREADS] || a.count[O_JSON])
            cli_usage_error("--dump takes none of --check, --json, --name, --sample, --model, "
                            "--no-fingerprint, --threads");
        p = open_profile("--dump profile", a.val[O_DUMP]);
        rc = write_profile(p, a.val[O_OUTPUT]); /* -o: a built-in as a file */
        td_profile_free(p);
        return rc;
    }
    if (a.npos < 1)
        cli_usage_error("profile needs FILE... or - for stdin");
    if (a.val[O_CHECK]) {
        if (a.val[O_OUTPUT] || a.val[O_NAME] || a.val[O_SAMPLE] || a.val[O_MODEL] || a.count[O_NOFP] ||
            a.val[O_THREADS])
            cli_usage_error("--check takes none of -o, --name, --sample, --model, --no-fingerprint, "
                            "--threads (it measures each FILE's first MiB, builds no profile)");
        return check(&a);
    }
    if (a.count[O_JSON])
        cli_usage_error("--json goes with --check (the profile itself is JSON)");
    td_profile_options_init(&po);
    if (a.val[O_SAMPLE])
        po.sample_bytes = cli_parse_size(a.val[O_SAMPLE], "--sample");
    if (a.val[O_THREADS])
        po.threads = cli_parse_threads(a.val[O_THREADS]);
    if (a.val[O_MODEL] && td_profile_model_parse(a.val[O_MODEL], &po.model, msg, sizeof msg) != TD_OK)
        cli_usage_error("--model: %s", msg);
    po.name = a.val[O_NAME];
    po.fingerprint = !a.count[O_NOFP];
    /* The library judges the options before any sample is read. */
    if (td_profile_options_check(&po, msg, sizeof msg) != TD_OK)
        cli_usage_error("%s", msg);
    sample_not_output(a.pos, a.npos, a.val[O_OUTPUT]);
    rc = profile_inputs(a.pos, a.npos, &po, &p);
    if (rc != TD_OK)
        return rc == TD_ECORPUS ? CLI_EXIT_USAGE : CLI_EXIT_FAIL; /* as `model build` */
    print_fingerprint(stderr, "sample", p);
    print_fidelity(stderr, p, a.val[O_OUTPUT]);
    rc = write_profile(p, a.val[O_OUTPUT]);
    td_profile_free(p);
    return rc;
}

/* The built-in names come from the library, so the help cannot drift. */
static void builtin_notes(FILE *f)
{
    size_t col = fprintf(f, "Built-in profiles:");
    for (unsigned i = 0; td_profile_builtin_name(i); i++) {
        const char *name = td_profile_builtin_name(i);
        size_t w = strlen(name) + 2;
        if (col + w > 80) {
            fputc('\n', f);
            col = 0;
        }
        col += fprintf(f, "%s%s%s", col ? " " : "", name, td_profile_builtin_name(i + 1) ? "," : "");
    }
    fprintf(f, "\n(testdata profile --dump NAME shows one).\n");
}

const cli_cmd cli_cmd_profile = {
    .name = "profile",
    .args = "FILE... [-o PROFILE] | --check PROFILE [--json] FILE... | --dump PROFILE [-o FILE]",
    .summary = "statistics to generate data like FILE (gen like --profile)",
    .description =
        "Read samples (the FILEs one after the other, or stdin) and write a profile: the\n"
        "statistics from which 'testdata gen like SIZE --profile PROFILE' makes data that\n"
        "compresses like them, in ratio and in speed.  The profile (JSON, at most 64 KiB,\n"
        "docs/format.md) holds counts, never content.  The sample's fingerprint (ratio and\n"
        "compressor CPU time of gzip -6, zstd -3, lz4 and xz -6) is printed on stderr.\n"
        "Memory stays bounded whatever the input size.",
    .operands = "  FILE               a sample (any number, read as one); '-' reads stdin\n",
    .opts = profile_opts,
    .stream_opts = 0,
    .notes = builtin_notes,
    .footer = "Exit status: 0 done, 1 a file could not be read or written, 2 usage error.\n",
    .complete = "F",
    .run = run,
};
