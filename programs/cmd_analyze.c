/* testdata analyze [--json] [--sample SIZE] [--threads N] FILE... | - */
#define _GNU_SOURCE
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { O_JSON, O_SAMPLE, O_THREADS };

static const cli_opt analyze_opts[] = {
    [O_JSON] = {"json", 0, NULL, "one JSON array, one object per FILE, on stdout"},
    [O_SAMPLE] = {"sample", 0, "SIZE",
                  "compress at most SIZE bytes per file (default 8M), in 1 MiB blocks spread "
                  "evenly over the file; the report says when the ratios come from a sample. "
                  "Entropy always uses every byte"},
    [O_THREADS] = {"threads", 0, "N",
                   "compress N blocks at once (default 1; 0 = all cores); the results do not "
                   "change"},
    {NULL, 0, NULL, NULL},
};

/* Analyse one input; TD_OK, or the library's code with the message printed
 * and its reason in *why. */
static int analyze_one(const char *path, const td_analyze_options *ao, td_analysis *r,
                       const char **why)
{
    int stdin_ = strcmp(path, "-") == 0, rc;
    const char *name = stdin_ ? "stdin" : path;
    int fd = stdin_ ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);

    if (fd < 0) {
        *why = strerror(errno);
        cli_error("cannot open '%s': %s", path, *why);
        return TD_EIO;
    }
    rc = td_analyze_fd(fd, ao, NULL, r);
    if (rc == TD_EIO) {
        *why = strerror(errno);
        cli_error("read error on '%s': %s", name, *why);
    } else if (rc != TD_OK) {
        *why = td_strerror(rc);
        cli_error("analyze '%s': %s", name, *why);
    }
    if (!stdin_)
        close(fd);
    return rc;
}

static void print_text(const char *name, const td_analysis *r)
{
    char h[32], hs[32];
    cli_human(h, sizeof h, r->size);
    printf("%s\n", name);
    printf("  size        %llu bytes (%s)\n", (unsigned long long)r->size, h);
    printf("  entropy     %.3f bits/byte\n", r->entropy);
    for (int c = 0; c < TD_CODEC_COUNT; c++) {
        double x = r->ratio[c];
        double v = r->mb_per_s[c];
        char xs[32];
        snprintf(xs, sizeof xs, "%.*fx", x >= 99.95 ? 0 : x >= 9.995 ? 1 : 2, x);
        printf("  %-10s  %-7s %6.*f MB/s  (%llu -> %llu bytes)\n", td_codec_label(c), xs,
               v >= 99.5 ? 0 : 1, v, (unsigned long long)r->sampled,
               (unsigned long long)r->compressed[c]);
    }
    if (r->is_sampled) {
        cli_human(hs, sizeof hs, r->sampled);
        printf("  sampled     ratios from %s of %s (1 MiB blocks spread over the input)\n", hs, h);
    }
    if (r->dedup_blocks) {
        double x = r->dedup_ratio;
        printf("  dedup 4K    %.*fx  (%llu blocks of 4 KiB, %s%llu unique)\n",
               x >= 99.95 ? 0 : x >= 9.995 ? 1 : 2, x, (unsigned long long)r->dedup_blocks,
               r->dedup_is_estimate ? "~" : "", (unsigned long long)r->dedup_unique);
    }
    printf("  verdict     %s\n", r->verdict);
}

/* One JSON object (the library renders it, for Python too); "error" when
 * r is NULL. */
static void print_json(const char *name, const td_analysis *r, const char *why)
{
    size_t cap = TD_ANALYSIS_JSON_MAX(strlen(name));
    char *buf = malloc(cap);
    if (!buf) {
        cli_error("out of memory");
        exit(CLI_EXIT_FAIL);
    }
    if (r)
        (void)td_analysis_json(r, name, buf, cap);
    else
        (void)td_analysis_json_error(name, why, buf, cap);
    fputs(buf, stdout);
    free(buf);
}

static int run(const cli_cmd *cmd, int argc, char **argv)
{
    cli_args a;
    td_analyze_options ao;
    int status = 0, werr = 0, json;

    cli_parse(cmd, argc, argv, &a);
    if (a.npos < 1)
        cli_usage_error("analyze needs FILE... or - for stdin");
    json = a.count[O_JSON] > 0;
    td_analyze_options_init(&ao);
    if (a.val[O_SAMPLE])
        ao.sample_bytes = cli_parse_size(a.val[O_SAMPLE], "--sample");
    if (a.val[O_THREADS])
        ao.threads = cli_parse_threads(a.val[O_THREADS]);
    char msg[256];
    if (td_analyze_options_check(&ao, msg, sizeof msg) != TD_OK)
        cli_usage_error("%s", msg);
    if (json)
        printf("[");
    for (int i = 0; i < a.npos; i++) {
        td_analysis r;
        const char *name = a.pos[i], *why = "error";
        int rc = analyze_one(name, &ao, &r, &why);
        if (json) {
            if (i)
                printf(",\n ");
            print_json(name, rc == TD_OK ? &r : NULL, why);
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
            status = CLI_EXIT_FAIL;
    }
    if (!werr && json)
        printf("]\n");
    return status; /* a write error is reported at exit (cli_check_stdout_at_exit) */
}

const cli_cmd cli_cmd_analyze = {
    .name = "analyze",
    .args = "[--json] [--sample SIZE] [--threads N] FILE... | -",
    .summary = "entropy, compression and dedup ratios, verdict",
    .description = "Report size, Shannon entropy (bits/byte), the compression ratio and\n"
                   "speed (MB/s of CPU time) under gzip -6, zstd -3, lz4 and xz -6\n"
                   "(computed with the libraries) and the 4 KiB fixed-block dedup ratio,\n"
                   "then a one-line verdict on what the data measures in a transfer\n"
                   "benchmark; it warns when data compresses like synthetic data (a\n"
                   "compressing path's throughput would look too good).",
    .operands = "  FILE               a file to analyse (any number); '-' reads stdin\n",
    .opts = analyze_opts,
    .stream_opts = 0,
    .footer = "Exit status: 0 done, 1 a file could not be read, 2 usage error.\n",
    .complete = "F",
    .run = run,
};
