/* The registry of kinds (names <-> td_kind values <-> vtables) and the
 * block loop shared by block-structured kinds. */
#include "kind.h"

/* Indexed by td_kind.  A kind is added here only once it works end to end. */
static const td_kind_vtbl *const kinds[TD_KIND_COUNT] = {
    [TD_ZERO] = &td_kind_zero,
    [TD_RANDOM] = &td_kind_random,
    [TD_TEXT] = &td_kind_text,
    [TD_COMPRESSIBLE] = &td_kind_compressible,
    [TD_LIKE] = &td_kind_like,
};

const td_kind_vtbl *td__kind_get(int kind)
{
    if (kind < 0 || kind >= TD_KIND_COUNT)
        return NULL;
    return kinds[kind];
}

const char *td_kind_name(int kind)
{
    const td_kind_vtbl *vt = td__kind_get(kind);
    return vt ? vt->name : NULL;
}

int td_kind_is_text(int kind)
{
    const td_kind_vtbl *vt = td__kind_get(kind);
    return vt ? vt->text != 0 : TD_EKIND;
}

int td_kind_from_name(const char *name, int *kind)
{
    if (!name || !kind)
        return TD_EINVAL;
    for (int k = 0; k < TD_KIND_COUNT; k++) {
        if (kinds[k] && strcmp(kinds[k]->name, name) == 0) {
            *kind = k;
            return TD_OK;
        }
    }
    return TD_EKIND;
}

int td__kind_fill(const td_kind_vtbl *vt, const void *state, uint64_t offset, uint8_t *buf,
                  size_t len)
{
    const uint32_t B = vt->block;
    uint64_t bi = offset / B;
    size_t skip = (size_t)(offset % B);
    uint8_t *scratch = NULL;
    int rc = TD_OK;

    if (vt->fill)
        return vt->fill(state, offset, buf, len);
    while (len && rc == TD_OK) {
        size_t n = TD_MIN((size_t)B - skip, len);
        if (skip == 0 && len >= (size_t)B + vt->slack) {
            /* Room for the slack: build the block in place (the bytes it
             * writes past its end belong to the next block, built next). */
            rc = vt->fill_block(state, bi, buf, B);
        } else {
            if (!scratch && !(scratch = malloc((size_t)B + vt->slack)))
                return TD_ENOMEM;
            rc = vt->fill_block(state, bi, scratch, (uint32_t)(skip + n));
            memcpy(buf, scratch + skip, n);
        }
        buf += n;
        len -= n;
        skip = 0;
        bi++;
    }
    free(scratch);
    return rc;
}

int td_kind_from_name_msg(const char *name, int *kind, char *msg, size_t cap)
{
    const char *names[TD_KIND_COUNT + 1];
    char list[128] = "";
    size_t n = 0;
    int rc = td_kind_from_name(name, kind);

    if (rc == TD_OK || !msg)
        return rc;
    if (rc == TD_EINVAL)
        return td__msg(msg, cap, "no kind given"), rc;
    for (int i = 0; i < TD_KIND_COUNT; i++)
        if (kinds[i]) {
            names[n++] = kinds[i]->name;
            (void)td__msg(list + strlen(list), sizeof list - strlen(list), "%s%s",
                          n > 1 ? ", " : "", kinds[i]->name);
        }
    names[n] = NULL;
    const char *s = td_suggest(name, names);
    if (s)
        td__msg(msg, cap, "unknown kind '%s'; did you mean '%s'? (kinds: %s)", name, s, list);
    else
        td__msg(msg, cap, "unknown kind '%s' (kinds: %s)", name, list);
    return rc;
}
