/* The registry of kinds: names <-> td_kind values <-> vtables. */
#include "internal.h"

#include <string.h>

/* Indexed by td_kind.  A kind is added here only once it works end to end. */
static const td_kind_vtbl *const kinds[TD_KIND_COUNT] = {
    [TD_ZERO] = &td_kind_zero,
    [TD_RANDOM] = &td_kind_random,
    [TD_TEXT] = &td_kind_text,
    [TD_COMPRESSIBLE] = &td_kind_compressible,
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
