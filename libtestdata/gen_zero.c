/* TD_ZERO: all zero bytes. */
#include "kind.h"

static int zero_fill(const void *state, uint64_t offset, uint8_t *buf, size_t len)
{
    (void)state;
    (void)offset;
    memset(buf, 0, len);
    return TD_OK;
}

const td_kind_vtbl td_kind_zero = {
    .name = "zero",
    .block = 1,
    .fill = zero_fill,
};
