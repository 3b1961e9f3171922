/*
 * text_tool: build, inspect and generate from text models (a developer
 * tool until the CLI grows `testdata model ...`).
 *
 *   text_tool build [-p NAME=VALUE]... -o MODEL FILE...   (FILE - is stdin)
 *   text_tool gen MODEL|builtin SEED OFFSET SIZE          bytes to stdout
 *   text_tool save-builtin MODEL
 *   text_tool info MODEL|builtin
 *   text_tool speed MODEL|builtin SECONDS                 MB/s of a stream, CPU time
 *   text_tool load MODEL|builtin N                        ms to load the model's bytes
 *                                                         (td_model_load), min and median of N
 *
 * build reads each FILE as one document; -p sets a builder parameter
 * (experiments only; the defaults are what the library uses).
 */
#include <testdata.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* from libtestdata/text_model.h (hidden, linked statically) */
void td__tm_builder_param(td_model_builder *b, const char *name, uint32_t value);

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static const td_model *get_model(const char *arg, td_model **own)
{
    *own = NULL;
    if (!strcmp(arg, "builtin"))
        return td_model_builtin();
    int rc = td_model_load_file(own, arg);
    if (rc != TD_OK) {
        fprintf(stderr, "text_tool: %s: %s\n", arg, td_strerror(rc));
        exit(1);
    }
    return *own;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        goto usage;
    if (!strcmp(argv[1], "build")) {
        const char *outp = NULL;
        td_model_builder *b;
        if (td_model_builder_new(&b) != TD_OK)
            return 1;
        int i = 2;
        for (; i < argc; i++) {
            if (!strcmp(argv[i], "-o") && i + 1 < argc) {
                outp = argv[++i];
            } else if (!strcmp(argv[i], "-p") && i + 1 < argc) {
                char *eq = strchr(argv[++i], '=');
                if (!eq)
                    goto usage;
                *eq = 0;
                td__tm_builder_param(b, argv[i], (uint32_t)strtoul(eq + 1, NULL, 0));
            } else {
                break;
            }
        }
        if (!outp || i == argc)
            goto usage;
        static char buf[1 << 20];
        double t0 = now(), tin = 0;
        unsigned long long total = 0;
        for (; i < argc; i++) {
            FILE *f = strcmp(argv[i], "-") ? fopen(argv[i], "rb") : stdin;
            if (!f) {
                fprintf(stderr, "text_tool: %s: %s\n", argv[i], strerror(errno));
                return 1;
            }
            size_t n;
            while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
                double t1 = now();
                int rc = td_model_builder_update(b, buf, n);
                tin += now() - t1;
                total += n;
                if (rc != TD_OK) {
                    fprintf(stderr, "text_tool: %s: %s: %s\n", argv[i], td_strerror(rc),
                            td_model_builder_message(b));
                    return 1;
                }
            }
            if (f != stdin)
                fclose(f);
            td_model_builder_break(b);
        }
        td_model *m;
        double t1 = now();
        int rc = td_model_builder_finish(b, &m);
        double tf = now() - t1;
        if (rc != TD_OK) {
            fprintf(stderr, "text_tool: %s: %s\n", td_strerror(rc), td_model_builder_message(b));
            return 1;
        }
        td_model_builder_free(b);
        rc = td_model_save(m, outp);
        if (rc != TD_OK) {
            fprintf(stderr, "text_tool: %s: %s\n", outp, td_strerror(rc));
            return 1;
        }
        td_model_info info;
        td_model_describe(m, &info);
        double tt = now() - t0;
        fprintf(stderr, "built %s: %llu bytes of text, %u words, %u separators, %u char states, "
                        "model %llu bytes; %.3f s (update %.3f, finish %.3f): %.1f MB/s\n",
                outp, total, info.words, info.separators, info.char_states,
                (unsigned long long)info.size, tt, tin, tf, total / tt / 1e6);
        td_model_free(m);
        return 0;
    }
    if (!strcmp(argv[1], "gen") && argc == 6) {
        td_model *own;
        const td_model *m = get_model(argv[2], &own);
        td_options o;
        td_options_init(&o);
        o.seed = strtoull(argv[3], NULL, 0);
        o.model = m;
        uint64_t off = strtoull(argv[4], NULL, 0), size = strtoull(argv[5], NULL, 0);
        size_t chunk = 1 << 22;
        char *buf = malloc(chunk);
        td_stream *s;
        int rc = td_stream_open(&s, TD_TEXT, off + size, &o);
        if (rc == TD_OK)
            rc = td_stream_seek(s, off);
        while (rc == TD_OK) {
            size_t n;
            rc = td_stream_read(s, buf, chunk, &n);
            if (rc == TD_OK && fwrite(buf, 1, n, stdout) != n)
                return 1;
        }
        if (rc != TD_DONE) {
            fprintf(stderr, "text_tool: %s\n", td_strerror(rc));
            return 1;
        }
        td_stream_free(s);
        td_model_free(own);
        free(buf);
        return 0;
    }
    if (!strcmp(argv[1], "speed") && argc == 4) {
        /* CPU seconds of reading a stream in 1 MiB pieces, one thread, its
         * start-up (round 0's base blocks) included: what a user reads */
        td_model *own;
        const td_model *m = get_model(argv[2], &own);
        td_options o;
        td_options_init(&o);
        o.model = m;
        o.threads = 1;
        double secs = atof(argv[3]);
        size_t n = 1 << 20, got;
        uint8_t *buf = malloc(n);
        uint64_t done = 0;
        td_stream *s = NULL;
        struct timespec a, b;
        double used = 0;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
        if (!buf || td_stream_open(&s, TD_TEXT, TD_SIZE_UNBOUNDED, &o) != TD_OK)
            return 1;
        do {
            if (td_stream_read(s, buf, n, &got) != TD_OK)
                return 1;
            done += got;
            clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
            used = (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec);
        } while (used < secs);
        printf("%.1f\n", (double)done / used / 1e6);
        td_stream_free(s);
        free(buf);
        td_model_free(own);
        return 0;
    }
    if (!strcmp(argv[1], "load") && argc == 4) {
        /* wall time of td_model_load (parse, check, compile) of the same
         * bytes N times: the part of a short `gen text` that is the model's */
        td_model *own;
        const td_model *m = get_model(argv[2], &own);
        const void *data;
        size_t len;
        int n = atoi(argv[3]);
        if (n < 1 || n > 10000 || td_model_data(m, &data, &len) != TD_OK)
            goto usage;
        double *t = malloc((size_t)n * sizeof *t);
        if (!t)
            return 1;
        for (int i = 0; i < n; i++) {
            td_model *x;
            double t0 = now();
            if (td_model_load(&x, data, len) != TD_OK)
                return 1;
            td_model_free(x);
            t[i] = now() - t0;
            for (int j = i; j > 0 && t[j - 1] > t[j]; j--) { /* insertion: N is small */
                double y = t[j];
                t[j] = t[j - 1];
                t[j - 1] = y;
            }
        }
        printf("min %.2f ms, median %.2f ms (%d loads of %zu bytes)\n", 1e3 * t[0], 1e3 * t[n / 2], n,
               len);
        free(t);
        td_model_free(own);
        return 0;
    }
    if (!strcmp(argv[1], "save-builtin") && argc == 3) {
        const td_model *m = td_model_builtin();
        if (!m || td_model_save(m, argv[2]) != TD_OK)
            return 1;
        return 0;
    }
    if (!strcmp(argv[1], "info") && argc == 3) {
        td_model *own;
        const td_model *m = get_model(argv[2], &own);
        td_model_info info;
        td_model_describe(m, &info);
        printf("format %u, %u words, %u separators, %u char states, %llu bytes, hash ",
               info.format_version, info.words, info.separators, info.char_states,
               (unsigned long long)info.size);
        for (int i = 0; i < 32; i++)
            printf("%02x", info.hash[i]);
        printf("\n");
        td_model_free(own);
        return 0;
    }
usage:
    fprintf(stderr, "usage: text_tool build [-p NAME=VALUE]... -o MODEL FILE...\n"
                    "       text_tool gen MODEL|builtin SEED OFFSET SIZE\n"
                    "       text_tool save-builtin MODEL\n"
                    "       text_tool info MODEL|builtin\n"
                    "       text_tool speed MODEL|builtin SECONDS\n"
                    "       text_tool load MODEL|builtin N\n");
    return 2;
}
