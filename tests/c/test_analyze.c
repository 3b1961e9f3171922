/* td_analyzer: entropy, compression ratios, sampling, verdicts, errors. */
#include "td_test_util.h"

#include <math.h>

/* Equal but for the CPU times (and the speeds from them), which vary from
 * run to run; copies, so the caller's results keep their times. */
static int same_analysis(const td_analysis *a, const td_analysis *b)
{
    td_analysis x = *a, y = *b;
    memset(x.cpu_ns, 0, sizeof x.cpu_ns);
    memset(x.mb_per_s, 0, sizeof x.mb_per_s);
    memset(y.cpu_ns, 0, sizeof y.cpu_ns);
    memset(y.mb_per_s, 0, sizeof y.mb_per_s);
    return memcmp(&x, &y, sizeof x) == 0;
}

#define MIB (1024u * 1024u)

static unsigned char *make(int kind, size_t len, uint64_t seed)
{
    td_options o;
    unsigned char *buf = malloc(len ? len : 1);
    cr_assert_not_null(buf);
    td_options_init(&o);
    o.seed = seed;
    cr_assert_eq(td_fill(kind, &o, 0, buf, len), TD_OK);
    return buf;
}

/* Cheap to compress, yet every 1 MiB block compresses differently: zeros
 * with a random head of a different length in each block. */
static unsigned char *mixed(size_t len, uint64_t seed)
{
    unsigned char *buf = calloc(1, len ? len : 1);
    td_options o;
    cr_assert_not_null(buf);
    td_options_init(&o);
    o.seed = seed;
    for (size_t b = 0; b * MIB < len; b++) {
        size_t head = (b * 53 * 1024) % (300 * 1024) + 1;
        if (head > len - b * MIB)
            head = len - b * MIB;
        cr_assert_eq(td_fill(TD_RANDOM, &o, b * MIB, buf + b * MIB, head), TD_OK);
    }
    return buf;
}

Test(analyze, zero_data, TD_ONE_THREAD)
{
    unsigned char *buf = make(TD_ZERO, 2 * MIB, 0);
    td_analysis r;
    cr_assert_eq(td_analyze_buffer(buf, 2 * MIB, NULL, &r), TD_OK);
    cr_expect_eq(r.size, 2 * MIB);
    cr_expect_eq(r.sampled, 2 * MIB);
    cr_expect_eq(r.is_sampled, 0);
    cr_expect_eq(r.entropy, 0.0);
    for (int c = 0; c < TD_CODEC_COUNT; c++)
        cr_expect_gt(r.ratio[c], 200.0, "%s: %f", td_codec_name(c), r.ratio[c]);
    cr_expect_gt(r.ratio[TD_CODEC_GZIP], 900.0);
    cr_expect_gt(r.ratio[TD_CODEC_ZSTD], 5000.0);
    cr_expect(strncmp(r.verdict, "compresses ", 11) == 0, "%s", r.verdict);
    cr_expect_not_null(strstr(r.verdict, "scp -C"));
    cr_expect_null(strchr(r.verdict, '\n'));
    free(buf);
}

Test(analyze, random_data, TD_ONE_THREAD)
{
    unsigned char *buf = make(TD_RANDOM, 3 * MIB + 123, 7);
    td_analysis r;
    cr_assert_eq(td_analyze_buffer(buf, 3 * MIB + 123, NULL, &r), TD_OK);
    cr_expect_eq(r.size, 3 * MIB + 123);
    cr_expect_eq(r.sampled, r.size);
    cr_expect_gt(r.entropy, 7.999);
    cr_expect_leq(r.entropy, 8.0);
    for (int c = 0; c < TD_CODEC_COUNT; c++) {
        cr_expect(fabs(r.ratio[c] - 1.0) < 0.01, "%s: %f", td_codec_name(c), r.ratio[c]);
        cr_expect_gt(r.compressed[c], 0);
    }
    cr_expect_str_eq(r.verdict, "incompressible: transfer speed reflects the raw link");
    free(buf);
}

Test(analyze, chunking_does_not_matter, TD_ONE_THREAD)
{
    size_t len = 2 * MIB + 5000;
    unsigned char *buf = make(TD_RANDOM, len, 1);
    memset(buf + MIB / 2, 'a', MIB); /* some compressible middle */
    td_analysis whole, parts;
    td_analyzer *a;
    uint64_t rng = 99;
    cr_assert_eq(td_analyze_buffer(buf, len, NULL, &whole), TD_OK);
    cr_assert_eq(td_analyzer_new(&a, NULL), TD_OK);
    for (size_t done = 0; done < len;) {
        size_t n = 1 + (size_t)(td_test_rand(&rng) % 300000);
        if (n > len - done)
            n = len - done;
        cr_assert_eq(td_analyzer_update(a, buf + done, n), TD_OK);
        done += n;
    }
    cr_assert_eq(td_analyzer_finish(a, &parts), TD_OK);
    td_analyzer_free(a);
    cr_expect(same_analysis(&whole, &parts));
    cr_expect_gt(whole.ratio[TD_CODEC_GZIP], 1.3);
    cr_expect_lt(whole.ratio[TD_CODEC_GZIP], 2.0);
    /* random and zero halves: lz4 as good as gzip, so the synthetic verdict
     * (it comes before "slightly compressible" once gzip reaches 1.5x) */
    if (whole.ratio[TD_CODEC_GZIP] >= 1.5)
        cr_expect(whole.synthetic && strstr(whole.verdict, "like synthetic data"), "%s",
                  whole.verdict);
    else
        cr_expect(strncmp(whole.verdict, "slightly compressible", 21) == 0, "%s", whole.verdict);
    free(buf);
}

Test(analyze, sampling_bounded_known_size, TD_ONE_THREAD)
{
    /* 20 MiB with a 4 MiB budget: 4 blocks compressed, flagged as sampled. */
    size_t len = 20 * MIB;
    unsigned char *buf = make(TD_ZERO, len, 0);
    td_analyzer *a;
    td_analysis r;
    td_analyze_options o;
    td_analyze_options_init(&o);
    o.size_hint = len;
    o.sample_bytes = 4 * MIB;
    cr_assert_eq(td_analyzer_new(&a, &o), TD_OK);
    cr_assert_eq(td_analyzer_update(a, buf, len), TD_OK);
    cr_assert_eq(td_analyzer_finish(a, &r), TD_OK);
    td_analyzer_free(a);
    cr_expect_eq(r.size, len);
    cr_expect_leq(r.sampled, 4 * MIB);
    cr_expect_geq(r.sampled, 3 * MIB);
    cr_expect_eq(r.is_sampled, 1);
    cr_expect_eq(r.entropy, 0.0);
    free(buf);
}

Test(analyze, sampling_bounded_unknown_size, TD_ONE_THREAD)
{
    /* Unknown size: the stride doubles; samples stay within budget and spread. */
    size_t len = 37 * MIB + 17;
    unsigned char *buf = mixed(len, 3);
    td_analyzer *a;
    td_analysis r, whole;
    td_analyze_options o;
    td_analyze_options_init(&o);
    o.sample_bytes = 4 * MIB;
    cr_assert_eq(td_analyzer_new(&a, &o), TD_OK);
    for (size_t done = 0; done < len; done += MIB / 3) {
        size_t n = len - done < MIB / 3 ? len - done : MIB / 3;
        cr_assert_eq(td_analyzer_update(a, buf + done, n), TD_OK);
    }
    cr_assert_eq(td_analyzer_finish(a, &r), TD_OK);
    td_analyzer_free(a);
    cr_expect_eq(r.size, len);
    cr_expect_leq(r.sampled, 4 * MIB);
    cr_expect_geq(r.sampled, 2 * MIB);
    cr_expect_eq(r.is_sampled, 1);
    /* The sample says about what the whole input says. */
    o.sample_bytes = 64 * MIB;
    cr_assert_eq(td_analyze_buffer(buf, len, &o, &whole), TD_OK);
    cr_expect_eq(whole.is_sampled, 0);
    for (int c = 0; c < TD_CODEC_COUNT; c++)
        cr_expect(fabs(r.ratio[c] / whole.ratio[c] - 1) < 0.5, "%s: %f vs %f",
                  td_codec_name(c), r.ratio[c], whole.ratio[c]);
    free(buf);
}

Test(analyze, mixed_entropy, TD_ONE_THREAD)
{
    /* Two values, equally often: exactly 1 bit per byte. */
    size_t len = 1 << 16;
    unsigned char *buf = malloc(len);
    td_analysis r;
    for (size_t i = 0; i < len; i++)
        buf[i] = (i & 1) ? 'x' : 'y';
    cr_assert_eq(td_analyze_buffer(buf, len, NULL, &r), TD_OK);
    cr_expect(fabs(r.entropy - 1.0) < 1e-12, "%f", r.entropy);
    free(buf);
}

Test(analyze, empty_input, TD_ONE_THREAD)
{
    td_analysis r;
    cr_assert_eq(td_analyze_buffer(NULL, 0, NULL, &r), TD_OK);
    cr_expect_eq(r.size, 0);
    cr_expect_eq(r.entropy, 0.0);
    cr_expect_eq(r.ratio[TD_CODEC_GZIP], 0.0);
    cr_expect(strncmp(r.verdict, "empty", 5) == 0, "%s", r.verdict);
}

Test(analyze, errors, TD_ONE_THREAD)
{
    td_analyzer *a = (td_analyzer *)1;
    td_analysis r;
    char line[8];
    cr_expect_eq(td_analyzer_new(NULL, NULL), TD_EINVAL);
    cr_expect_eq(td_analyzer_update(NULL, "x", 1), TD_EINVAL);
    cr_expect_eq(td_analyzer_finish(NULL, &r), TD_EINVAL);
    cr_expect_eq(td_analyze_buffer("x", 1, NULL, NULL), TD_EINVAL);
    cr_expect_eq(td_analyze_buffer(NULL, 1, NULL, &r), TD_EINVAL);
    cr_expect_eq(td_analysis_verdict(NULL, line, sizeof line), TD_EINVAL);
    td_analyzer_free(NULL);

    cr_assert_eq(td_analyzer_new(&a, NULL), TD_OK);
    cr_expect_eq(td_analyzer_update(a, NULL, 5), TD_EINVAL);
    cr_expect_eq(td_analyzer_update(a, NULL, 0), TD_OK);
    cr_expect_eq(td_analyzer_finish(a, NULL), TD_EINVAL);
    cr_expect_eq(td_analyzer_update(a, "abc", 3), TD_OK);
    cr_expect_eq(td_analyzer_finish(a, &r), TD_OK);
    cr_expect_eq(r.size, 3);
    cr_expect_eq(td_analyzer_finish(a, &r), TD_EINVAL);   /* twice */
    cr_expect_eq(td_analyzer_update(a, "abc", 3), TD_EINVAL); /* after finish */
    td_analyzer_free(a);

    /* A short buffer truncates the verdict, NUL-terminated, and says so. */
    cr_assert_eq(td_analyze_buffer("abc", 3, NULL, &r), TD_OK);
    cr_expect_eq(td_analysis_verdict(&r, line, sizeof line), TD_ERANGE);
    cr_expect_eq(strlen(line), sizeof line - 1);
    cr_expect_eq(td_analysis_verdict(&r, line, 0), TD_EINVAL);
}

Test(analyze, codec_names, TD_ONE_THREAD)
{
    static const char *names[] = {"gzip", "zstd", "lz4", "xz"};
    for (int c = 0; c < TD_CODEC_COUNT; c++) {
        cr_expect_str_eq(td_codec_name(c), names[c]);
        cr_expect_not_null(td_codec_label(c));
    }
    cr_expect_null(td_codec_name(-1));
    cr_expect_null(td_codec_name(TD_CODEC_COUNT));
    cr_expect_null(td_codec_label(TD_CODEC_COUNT));
}

static void analyze_with(const unsigned char *buf, size_t len, uint64_t hint, uint64_t sample,
                         uint32_t threads, size_t chunk, td_analysis *r)
{
    td_analyze_options o;
    td_analyzer *a;
    td_analyze_options_init(&o);
    o.size_hint = hint;
    o.sample_bytes = sample;
    o.threads = threads;
    cr_assert_eq(td_analyzer_new(&a, &o), TD_OK);
    for (size_t done = 0; done < len; done += chunk)
        cr_assert_eq(td_analyzer_update(a, buf + done, len - done < chunk ? len - done : chunk),
                     TD_OK);
    cr_assert_eq(td_analyzer_finish(a, r), TD_OK);
    td_analyzer_free(a);
}

Test(analyze, threads_do_not_change_results)
{
    /* Mixed content so every block compresses differently. */
    size_t len = 23 * MIB + 999;
    unsigned char *buf = mixed(len, 11);
    const uint64_t hints[] = {TD_SIZE_UNBOUNDED, 23 * MIB + 999, 5 * MIB /* wrong */};
    for (size_t h = 0; h < 3; h++) {
        td_analysis base, r;
        analyze_with(buf, len, hints[h], 6 * MIB, 1, MIB / 2 + 7, &base);
        cr_expect_eq(base.is_sampled, 1);
        cr_expect_leq(base.sampled, 6 * MIB);
        const uint32_t threads[] = {2, 0, 64};
        for (size_t t = 0; t < 3; t++) {
            analyze_with(buf, len, hints[h], 6 * MIB, threads[t], 3 * MIB + 1, &r);
            cr_expect(same_analysis(&base, &r), "hint %zu threads %u", h, threads[t]);
        }
    }
    /* Not sampled: everything is compressed, whatever the threads. */
    td_analysis all1, all2;
    analyze_with(buf, 5 * MIB, TD_SIZE_UNBOUNDED, 8 * MIB, 1, MIB, &all1);
    analyze_with(buf, 5 * MIB, 5 * MIB, 8 * MIB, 2, 12345, &all2);
    cr_expect_eq(all1.sampled, 5 * MIB);
    cr_expect(same_analysis(&all1, &all2));
    free(buf);
}

Test(analyze, options, TD_ONE_THREAD)
{
    td_analyze_options o;
    td_analyzer *a;
    td_analyze_options_init(NULL);
    td_analyze_options_init(&o);
    cr_expect_eq(o.size_hint, TD_SIZE_UNBOUNDED);
    cr_expect_eq(o.sample_bytes, TD_ANALYZE_DEFAULT_SAMPLE);
    cr_expect_eq(o.threads, 1);
    o.sample_bytes = 0;
    cr_expect_eq(td_analyzer_new(&a, &o), TD_ERANGE);
    cr_expect_null(a);
    cr_expect_eq(td_analyze_buffer("x", 1, &o, &(td_analysis){0}), TD_ERANGE);
    /* The message front ends print: the field and its valid values. */
    char msg[128];
    cr_expect_eq(td_analyze_options_check(&o, msg, sizeof msg), TD_ERANGE);
    cr_expect(strstr(msg, "sample size 0") && strstr(msg, "1 byte to 2^64-2"), "%s", msg);
    o.sample_bytes = TD_SIZE_UNBOUNDED;
    cr_expect_eq(td_analyzer_new(&a, &o), TD_ERANGE);
    cr_expect_eq(td_analyze_options_check(&o, msg, sizeof msg), TD_ERANGE);
    cr_expect(strstr(msg, "sample size inf"), "%s", msg);
    cr_expect_eq(td_analyze_options_check(NULL, msg, sizeof msg), TD_EINVAL);
    o.sample_bytes = 1;
    cr_expect_eq(td_analyze_options_check(&o, msg, sizeof msg), TD_OK);
    cr_expect_eq(msg[0], 0, "no message on success: %s", msg);
}

/* Speed beside ratio; the flat codec fingerprint of generated data is
 * called synthetic, English-like text and incompressible data are not. */
Test(analyze, speed_and_synthetic_verdict, TD_ONE_THREAD)
{
    const size_t len = 2 * MIB;
    unsigned char *buf = malloc(len);
    td_options o;
    td_analysis r;
    cr_assert(buf);
    td_options_init(&o);
    o.ratio = 3;
    cr_assert_eq(td_fill(TD_COMPRESSIBLE, &o, 0, buf, len), TD_OK);
    cr_assert_eq(td_analyze_buffer(buf, len, NULL, &r), TD_OK);
    cr_expect_eq(r.synthetic, 1);
    cr_expect(strstr(r.verdict, "like synthetic data") != NULL, "%s", r.verdict);
    for (int c = 0; c < TD_CODEC_COUNT; c++) {
        cr_expect_gt(r.cpu_ns[c], 0);
        cr_expect_gt(r.mb_per_s[c], 0);
    }
    cr_expect_gt(r.mb_per_s[TD_CODEC_LZ4], r.mb_per_s[TD_CODEC_XZ]);
    td_options_init(&o);
    cr_assert_eq(td_fill(TD_TEXT, &o, 0, buf, len), TD_OK);
    cr_assert_eq(td_analyze_buffer(buf, len, NULL, &r), TD_OK);
    cr_expect_eq(r.synthetic, 0);
    cr_expect(strstr(r.verdict, "synthetic") == NULL, "%s", r.verdict);
    cr_assert_eq(td_fill(TD_RANDOM, &o, 0, buf, len), TD_OK);
    cr_assert_eq(td_analyze_buffer(buf, len, NULL, &r), TD_OK);
    cr_expect_eq(r.synthetic, 0);
    cr_assert_eq(td_analyze_buffer(buf, 0, NULL, &r), TD_OK);
    cr_expect_eq(r.synthetic, 0);
    cr_expect_eq(r.mb_per_s[TD_CODEC_GZIP], 0);
    free(buf);
}
