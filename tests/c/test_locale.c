/*
 * The library's number parsing and formatting do not depend on the
 * process's locale: under a locale whose radix character is ',' (de_DE),
 * "1.5" still parses as 1.5 and verdicts still say "1.50x".
 *
 * Needs such a locale.  When none is installed and localedef(1) is there,
 * one is compiled into a temporary directory and found through LOCPATH (as
 * glibc reads it on every setlocale); otherwise the tests are skipped.
 * Each Criterion test runs in its own process, so setlocale() here affects
 * nothing else.
 */
#define _GNU_SOURCE
#include "td_test_util.h"

#include "../../libtestdata/common.h" /* td__parse_double */

#include <locale.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#ifdef TD_MINI_CRITERION
#define SKIP(msg)                                                                              \
    do {                                                                                       \
        fprintf(stderr, "skipped: %s\n", msg);                                                 \
        return;                                                                                \
    } while (0)
#else
#define SKIP(msg) cr_skip_test("%s", msg)
#endif

static char locdir[64];

static void cleanup_locdir(void)
{
    if (locdir[0]) {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", locdir);
        if (system(cmd) != 0)
            fprintf(stderr, "could not remove %s\n", locdir);
        locdir[0] = '\0';
    }
}

/* Switch LC_NUMERIC to a locale with a decimal comma; 0 if there is none. */
static int comma_locale(void)
{
    static const char *const names[] = {"de_DE.UTF-8", "de_DE.utf8", "de_DE", "fr_FR.UTF-8",
                                        "fr_FR.utf8", "nl_NL.UTF-8"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (setlocale(LC_NUMERIC, names[i]))
            goto check;
    /* None installed: compile de_DE.UTF-8 (about a second) if we can. */
    snprintf(locdir, sizeof locdir, "/tmp/td-locale-XXXXXX");
    if (!mkdtemp(locdir)) {
        locdir[0] = '\0';
        return 0;
    }
    atexit(cleanup_locdir); /* also after a failed assertion (mini_criterion) */
    char cmd[256];
    snprintf(cmd, sizeof cmd,
             "localedef -i de_DE -f UTF-8 '%s/de_DE.UTF-8' >/dev/null 2>&1", locdir);
    if (system(cmd) != 0) /* localedef exits 1 on mere warnings: check below */
        (void)0;
    setenv("LOCPATH", locdir, 1);
    if (!setlocale(LC_NUMERIC, "de_DE.UTF-8"))
        return 0;
check:
    return strcmp(localeconv()->decimal_point, ",") == 0;
}

Test(locale, parse_double_ignores_lc_numeric, .fini = cleanup_locdir, TD_ONE_THREAD)
{
    double v = 0;
    if (!comma_locale()) {
        cleanup_locdir();
        SKIP("no locale with a decimal comma (and no localedef)");
    }
    /* The hazard is real in this process: strtod stops at the '.'. */
    char *end;
    (void)strtod("1.5", &end);
    cr_expect_str_eq(end, ".5");

    cr_assert_eq(td__parse_double("1.5", &v), TD_OK);
    cr_expect_eq(v, 1.5);
    cr_assert_eq(td__parse_double("0.001", &v), TD_OK);
    cr_expect_eq(v, 0.001);
    cr_assert_eq(td__parse_double("2.5e3", &v), TD_OK);
    cr_expect_eq(v, 2500.0);
    cr_assert_eq(td__parse_double("-0.25", &v), TD_OK);
    cr_expect_eq(v, -0.25);
    v = 7;
    cr_expect_eq(td__parse_double("1,5", &v), TD_ESYNTAX);
    cr_expect_eq(td__parse_double(" 1.5", &v), TD_ESYNTAX);
    cr_expect_eq(td__parse_double("", &v), TD_ESYNTAX);
    cr_expect_eq(td__parse_double("1.5x", &v), TD_ESYNTAX);
    cr_expect_eq(td__parse_double("1e999", &v), TD_ERANGE);
    cr_expect_eq(td__parse_double("nan", &v), TD_ERANGE);
    cr_expect_eq(td__parse_double("inf", &v), TD_ERANGE);
    cr_expect_eq(v, 7.0); /* untouched on failure */
    /* The process's locale is left as it was. */
    cr_expect_str_eq(localeconv()->decimal_point, ",");
    cleanup_locdir();
}

Test(locale, verdict_uses_a_decimal_point, .fini = cleanup_locdir, TD_ONE_THREAD)
{
    td_analysis r;
    char line[256], c_line[256];
    size_t len = 3u << 20;
    unsigned char *buf = malloc(len);
    cr_assert_not_null(buf);
    for (size_t i = 0; i < len; i++) /* compresses, to a ratio with decimals */
        buf[i] = (unsigned char)((i * 7 + i / 3000) % 61);
    /* Verdicts made by hand, and one from real data, in the C locale... */
    memset(&r, 0, sizeof r);
    r.size = 1000;
    r.ratio[TD_CODEC_GZIP] = 1.5;
    r.ratio[TD_CODEC_XZ] = 1.734;
    cr_assert_eq(td_analysis_verdict(&r, c_line, sizeof c_line), TD_OK);
    cr_expect(strstr(c_line, "(1.73x under xz -6)") && strstr(c_line, "~1.7x faster"), "%s",
              c_line);
    td_analysis real;
    cr_assert_eq(td_analyze_buffer(buf, len, NULL, &real), TD_OK);
    char real_c[256];
    strcpy(real_c, real.verdict);

    if (!comma_locale()) {
        free(buf);
        cleanup_locdir();
        SKIP("no locale with a decimal comma (and no localedef)");
    }
    char probe[16];
    snprintf(probe, sizeof probe, "%.1f", 1.5);
    cr_expect_str_eq(probe, "1,5"); /* printf itself would write a comma */
    /* ... are the same under a decimal comma. */
    cr_assert_eq(td_analysis_verdict(&r, line, sizeof line), TD_OK);
    cr_expect_str_eq(line, c_line);
    r.ratio[TD_CODEC_GZIP] = 12.34;
    r.ratio[TD_CODEC_XZ] = 40.5;
    cr_assert_eq(td_analysis_verdict(&r, line, sizeof line), TD_OK);
    cr_expect(strstr(line, "compresses 12.3x under gzip -6, 40.5x under xz -6") &&
                  strstr(line, "~12x faster"),
              "%s", line);
    cr_assert_eq(td_analyze_buffer(buf, len, NULL, &real), TD_OK);
    cr_expect_str_eq(real.verdict, real_c);
    free(buf);
    cleanup_locdir();
}

Test(locale, analysis_json_numbers_use_a_point, .fini = cleanup_locdir, TD_ONE_THREAD)
{
    td_analysis r;
    char c_json[4096], json[4096];
    memset(&r, 0, sizeof r);
    r.size = 1000;
    r.entropy = 7.5;
    r.ratio[TD_CODEC_GZIP] = 1.5;
    r.dedup_ratio = 2.25;
    cr_assert_eq(td_analysis_json(&r, "f", c_json, sizeof c_json), TD_OK);
    cr_expect(strstr(c_json, "\"entropy\": 7.500000") && strstr(c_json, "\"gzip\": 1.5,") &&
                  strstr(c_json, "\"ratio\": 2.25"),
              "%s", c_json);
    if (!comma_locale()) {
        cleanup_locdir();
        SKIP("no locale with a decimal comma (and no localedef)");
    }
    cr_assert_eq(td_analysis_json(&r, "f", json, sizeof json), TD_OK);
    cr_expect_str_eq(json, c_json);
    cr_expect_str_eq(localeconv()->decimal_point, ","); /* left as it was */
    /* the same writer renders td_profile_comparison */
    td_profile_comparison c;
    memset(&c, 0, sizeof c);
    c.ratio[TD_CODEC_GZIP] = 1.5;
    c.ref_ratio[TD_CODEC_GZIP] = 1.25;
    cr_assert_eq(td_profile_comparison_json(&c, "f", json, sizeof json), TD_OK);
    cr_expect(strstr(json, "\"ratio\": 1.5,") && strstr(json, "\"profile_ratio\": 1.25,") &&
                  strstr(json, "\"error\": 0.2,"),
              "%s", json);
    cleanup_locdir();
}
