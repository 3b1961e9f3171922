/*
 * Fuzz target: the text-model loader and builder, and generation from
 * whatever loads.
 *
 * Input: byte 0 selects the mode.
 *   even: the rest is a model payload; it gets a valid header (magic,
 *         version 1, or 2 (RUNS) when bit 1 is set, length and
 *         BLAKE2b-256), so that the section parser and
 *         the compiler see the bytes rather than the checksum rejecting
 *         them; then also the raw input as a whole file.  A model that
 *         loads must generate (a few blocks of the first MiB and of later
 *         rounds, the same in pieces), survive a save/load round
 *         trip to the same bytes, and produce the same bytes again.
 *   odd:  the rest is corpus text for the builder, fed in two pieces cut
 *         at byte 1 of the input; a model that builds must load from its
 *         own bytes and generate.
 * Every model that loads is also compiled the older way (its character
 * model through the hashed trie, TM_LOAD_HASH_CHARS): the two must have as
 * many states and give the same bytes.
 * Loading and building may fail with a documented code, never crash.
 */
#include <testdata.h>

#include "../../libtestdata/text_model.h"
#include "fuzz_check.h"

#include <sodium.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* m against the same bytes compiled with the hashed trie. */
static void same_as_hash(const td_model *m)
{
    const void *data;
    size_t len;
    CHECK(td_model_data(m, &data, &len) == TD_OK);
    td_model *h = NULL;
    int rc = td__tm_load(&h, data, len, TM_LOAD_HASH_CHARS);
    CHECK(rc == TD_OK || rc == TD_ENOMEM);
    if (!h)
        return;
    CHECK(h->ncstates == m->ncstates);
    static uint8_t x[20000], y[20000];
    td_options o;
    td_options_init(&o);
    o.seed = 3;
    const uint64_t at[2] = {1000, 1048576 + 1000}; /* rare words spelled; respelled */
    for (int i = 0; i < 2; i++) {
        o.model = m;
        CHECK(td_fill(TD_TEXT, &o, at[i], x, sizeof x) == TD_OK);
        o.model = h;
        CHECK(td_fill(TD_TEXT, &o, at[i], y, sizeof y) == TD_OK);
        CHECK(memcmp(x, y, sizeof x) == 0);
    }
    td_model_free(h);
}

static void exercise(const td_model *m)
{
    static uint8_t a[3 * 65536 + 100], b[3 * 65536 + 100];
    same_as_hash(m);
    td_options o;
    td_options_init(&o);
    o.model = m;
    o.seed = 7;
    CHECK(td_fill(TD_TEXT, &o, 65536 - 50, a, sizeof a) == TD_OK);
    /* the same range again, in two unaligned pieces */
    CHECK(td_fill(TD_TEXT, &o, 65536 - 50, b, 1000) == TD_OK);
    CHECK(td_fill(TD_TEXT, &o, 65536 - 50 + 1000, b + 1000, sizeof b - 1000) == TD_OK);
    CHECK(memcmp(a, b, sizeof a) == 0);
    /* later rounds (base blocks with their words, rotations, respellings),
     * across the end of round 2 */
    static uint8_t c[70000], d[70000];
    CHECK(td_fill(TD_TEXT, &o, 3 * 1048576 - 50, c, sizeof c) == TD_OK);
    CHECK(td_fill(TD_TEXT, &o, 3 * 1048576 - 50, d, 500) == TD_OK);
    CHECK(td_fill(TD_TEXT, &o, 3 * 1048576 - 50 + 500, d + 500, sizeof d - 500) == TD_OK);
    CHECK(memcmp(c, d, sizeof c) == 0);
    const void *data;
    size_t len;
    CHECK(td_model_data(m, &data, &len) == TD_OK);
    td_model *m2;
    CHECK(td_model_load(&m2, data, len) == TD_OK);
    o.model = m2;
    CHECK(td_fill(TD_TEXT, &o, 65536 - 50, b, 4096) == TD_OK);
    CHECK(memcmp(a, b, 4096) == 0);
    td_model_free(m2);
}

static void try_load(const uint8_t *p, size_t n)
{
    td_model *m = NULL;
    int rc = td_model_load(&m, p, n);
    CHECK(rc == TD_OK || rc == TD_EMODEL || rc == TD_EMODELVERSION || rc == TD_ENOMEM);
    CHECK((rc == TD_OK) == (m != NULL));
    if (m) {
        exercise(m);
        td_model_free(m);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    if (sodium_init() < 0)
        return 0;
    const uint8_t *p = data + 1;
    size_t n = size - 1;
    if (!(data[0] & 1)) {
        uint8_t *f = malloc(56 + n);
        if (!f)
            return 0;
        memcpy(f, "TDTXTMOD\1\0\0\0\0\0\0\0", 16);
        f[8] = data[0] & 2 ? 2 : 1;
        for (int i = 0; i < 8; i++)
            f[16 + i] = (uint8_t)((uint64_t)n >> (8 * i));
        crypto_generichash(f + 24, 32, p, n, NULL, 0);
        if (n)
            memcpy(f + 56, p, n);
        try_load(f, 56 + n);
        free(f);
        try_load(p, n);
        return 0;
    }
    td_model_builder *b;
    if (td_model_builder_new(&b) != TD_OK)
        return 0;
    size_t cut = n ? (size_t)data[0] * n / 256 : 0;
    int rc = td_model_builder_update(b, p, cut);
    if (rc == TD_OK)
        rc = td_model_builder_update(b, p + cut, n - cut);
    td_model *m = NULL;
    int rc2 = td_model_builder_finish(b, &m);
    CHECK(rc == TD_OK || rc == TD_EUTF8 || rc == TD_ENOMEM);
    CHECK(rc2 == TD_OK || rc2 == TD_EUTF8 || rc2 == TD_ECORPUS || rc2 == TD_ENOMEM);
    CHECK(rc == TD_OK || rc2 == rc);
    CHECK(rc2 != TD_OK || td_model_builder_message(b)[0] == 0);
    CHECK(rc2 == TD_OK || td_model_builder_message(b)[0] != 0 || rc2 == TD_ENOMEM);
    td_model_builder_free(b);
    if (m) {
        exercise(m);
        td_model_free(m);
    }
    return 0;
}
