/* testdata analyze [--json] [--sample SIZE] [--threads N] FILE... | - */
#define _GNU_SOURCE
#include "cli.h"

#include <stdio.h>

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

/* The command's state for cli_report_files: the options and the last result. */
typedef struct analyze_ctx {
    td_analyze_options ao;
    td_analysis r;
} analyze_ctx;

static int measure(void *ctx, int fd)
{
    analyze_ctx *x = ctx;
    return td_analyze_fd(fd, &x->ao, NULL, &x->r);
}

static int json(void *ctx, const char *file, char *buf, size_t cap)
{
    return td_analysis_json(&((analyze_ctx *)ctx)->r, file, buf, cap);
}

static size_t json_max(size_t name_len)
{
    return TD_ANALYSIS_JSON_MAX(name_len);
}

static void print_text(void *ctx, const char *name, int i)
{
    const td_analysis *r = &((analyze_ctx *)ctx)->r;
    char h[32], hs[32];
    cli_human(h, sizeof h, r->size);
    printf("%s%s\n", i ? "\n" : "", name);
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

static int run(const cli_cmd *cmd, int argc, char **argv)
{
    static const cli_file_report report = {measure, NULL, print_text, json, json_max};
    cli_args a;
    analyze_ctx x;

    cli_parse(cmd, argc, argv, &a);
    if (a.npos < 1)
        cli_usage_error("analyze needs FILE... or - for stdin");
    td_analyze_options_init(&x.ao);
    if (a.val[O_SAMPLE])
        x.ao.sample_bytes = cli_parse_size(a.val[O_SAMPLE], "--sample");
    if (a.val[O_THREADS])
        x.ao.threads = cli_parse_threads(a.val[O_THREADS]);
    char msg[256];
    if (td_analyze_options_check(&x.ao, msg, sizeof msg) != TD_OK)
        cli_usage_error("%s", msg);
    return cli_report_files(&a, a.count[O_JSON] > 0, &report, &x);
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
