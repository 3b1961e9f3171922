/*
 * Fuzz target: the profile loader (the strict JSON reader and the model
 * checks behind td_profile_load), and the generator on whatever it accepts.
 *
 * Input: the bytes of a profile.  Invariants: the loader returns one of its
 * documented codes with a message on failure; a loaded profile saves to
 * JSON of at most 64 KiB that loads again to the same digest and the same
 * bytes, and td_fill on it succeeds (any model that passes the checks is
 * safe to generate from).
 */
#include <testdata.h>

#include "fuzz_check.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    td_profile *p = NULL, *q = NULL;
    char msg[256];
    int rc = td_profile_load_msg(&p, data, size, msg, sizeof msg);
    CHECK(rc == TD_OK || rc == TD_ESYNTAX || rc == TD_EINVAL || rc == TD_ERANGE || rc == TD_ENOMEM);
    if (rc != TD_OK) {
        CHECK(p == NULL);
        CHECK(rc == TD_ENOMEM || msg[0] != 0);
        return 0;
    }
    size_t len = 0;
    CHECK(td_profile_save(p, NULL, 0, &len) == TD_ERANGE);
    CHECK(len > 0 && len <= TD_PROFILE_MAX_JSON + 4096);
    char *j = malloc(len);
    CHECK(j != NULL);
    CHECK(td_profile_save(p, j, len, &len) == TD_OK);
    rc = td_profile_load(&q, j, len);
    CHECK(rc == TD_OK || (rc == TD_ERANGE && len > TD_PROFILE_MAX_JSON));
    if (rc == TD_OK) {
        uint8_t d1[32], d2[32];
        CHECK(td_profile_digest(p, d1) == TD_OK && td_profile_digest(q, d2) == TD_OK);
        CHECK(memcmp(d1, d2, 32) == 0);
    }
    /* Generate from it: a little at the start, a little far away. */
    static uint8_t a[65536], b[65536];
    td_options o;
    td_options_init(&o);
    o.profile = p;
    CHECK(td_fill(TD_LIKE, &o, 0, a, 20000) == TD_OK);
    CHECK(td_fill(TD_LIKE, &o, (UINT64_C(1) << 40) + 3, a + 20000, 10000) == TD_OK);
    if (q) {
        o.profile = q;
        CHECK(td_fill(TD_LIKE, &o, 0, b, 20000) == TD_OK);
        CHECK(memcmp(a, b, 20000) == 0);
    }
    free(j);
    td_profile_free(q);
    td_profile_free(p);
    return 0;
}
