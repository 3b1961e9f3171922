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

/* A JSON string.  Bytes that are not UTF-8 (file names can be anything)
 * become \udcXX, the convention of Python's surrogateescape, so the output
 * stays valid JSON and os.fsencode() gives the name back. */
static void json_string(FILE *f, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    fputc('"', f);
    while (*p) {
        unsigned c = *p;
        size_t n = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3
                                : (c & 0xF8) == 0xF0 ? 4 : 0;
        int ok = n > 0;
        for (size_t i = 1; ok && i < n; i++)
            ok = (p[i] & 0xC0) == 0x80;
        if (ok && n == 2)
            ok = c >= 0xC2; /* no overlong forms */
        if (ok && n == 3) {
            unsigned v = ((c & 0x0F) << 12) | ((p[1] & 0x3Fu) << 6) | (p[2] & 0x3Fu);
            ok = v >= 0x800 && !(v >= 0xD800 && v <= 0xDFFF);
        }
        if (ok && n == 4) {
            unsigned v = ((c & 0x07) << 18) | ((p[1] & 0x3Fu) << 12) | ((p[2] & 0x3Fu) << 6) |
                         (p[3] & 0x3Fu);
            ok = v >= 0x10000 && v <= 0x10FFFF;
        }
        if (!ok) {
            fprintf(f, "\\udc%02x", c);
            p++;
            continue;
        }
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20 || c == 0x7f)
            fprintf(f, "\\u%04x", c);
        else
            fwrite(p, 1, n, f);
        p += n;
    }
    fputc('"', f);
}

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
        printf("  %-10s  %.*fx  (%llu -> %llu bytes)\n", td_codec_label(c),
               x >= 99.95 ? 0 : x >= 9.995 ? 1 : 2, x, (unsigned long long)r->sampled,
               (unsigned long long)r->compressed[c]);
    }
    if (r->is_sampled) {
        cli_human(hs, sizeof hs, r->sampled);
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
    if (a.val[O_SAMPLE]) {
        uint64_t v = cli_parse_size(a.val[O_SAMPLE], "--sample");
        if (v == 0 || v == TD_SIZE_UNBOUNDED)
            cli_usage_error("bad --sample '%s': %s", a.val[O_SAMPLE], td_strerror(TD_ERANGE));
        ao.sample_bytes = v;
    }
    if (a.val[O_THREADS]) {
        /* The same row of the library's option table as gen --threads. */
        td_options t;
        char msg[256];
        td_options_init(&t);
        if (td_options_set_msg(&t, TD_ZERO, "--threads", a.val[O_THREADS], msg, sizeof msg) != TD_OK)
            cli_usage_error("%s", msg);
        ao.threads = t.threads;
    }
    if (json)
        printf("[");
    for (int i = 0; i < a.npos; i++) {
        td_analysis r;
        const char *name = a.pos[i], *why = "error";
        int rc = analyze_one(name, &ao, &r, &why);
        if (json) {
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
            status = CLI_EXIT_FAIL;
    }
    if (!werr && json)
        printf("]\n");
    if (!werr && fflush(stdout) != 0)
        werr = errno;
    if (werr || ferror(stdout)) {
        /* The reader is gone (SIGPIPE ignored): end quietly, as gen does. */
        if (werr == EPIPE)
            return 128 + SIGPIPE;
        cli_error("write error on stdout: %s", strerror(werr ? werr : EIO));
        return CLI_EXIT_FAIL;
    }
    return status;
}

const cli_cmd cli_cmd_analyze = {
    .name = "analyze",
    .args = "[--json] [--sample SIZE] [--threads N] FILE... | -",
    .summary = "entropy, compression ratios, verdict",
    .description = "Report size, Shannon entropy (bits/byte) and the compression ratio under\n"
                   "gzip -6, zstd -3, lz4 and xz -6 (computed with the libraries), then a\n"
                   "one-line verdict on what the data measures in a transfer benchmark.",
    .operands = "  FILE               a file to analyse (any number); '-' reads stdin\n",
    .opts = analyze_opts,
    .stream_opts = 0,
    .footer = "Exit status: 0 done, 1 a file could not be read, 2 usage error.\n",
    .run = run,
};
