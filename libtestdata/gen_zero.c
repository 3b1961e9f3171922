/* TD_ZERO: all zero bytes. */
#include "internal.h"

static int zero_fill(const void *state, uint64_t offset, uint8_t *buf, size_t len)
{
    (void)state;
    (void)offset;
    memset(buf, 0, len);
    return TD_OK;
}

static const char *const zero_options[] = {NULL};

const td_kind_vtbl td_kind_zero = {
    .name = "zero",
    .block = 1,
    .options = zero_options,
    .check = NULL,
    .prepare = NULL,
    .release = NULL,
    .fill = zero_fill,
};
