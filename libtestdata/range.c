/* td_split_range: disjoint, aligned pieces of [0, size) for parallel writers. */
#include "common.h"

int td_split_range(uint64_t size, uint64_t parts, uint64_t align, uint64_t index,
                   uint64_t *part_offset, uint64_t *part_len)
{
    uint64_t per, p, off, end;

    if (!part_offset || !part_len || parts == 0 || align == 0 || index >= parts)
        return TD_EINVAL;
    if (size == TD_SIZE_UNBOUNDED)
        return TD_ERANGE;
    per = size / parts + (size % parts != 0);
    /* Round up to a multiple of align; past size it only matters that P >= size. */
    p = per % align ? per + (align - per % align) : per;
    if (p < per || p > size)
        p = size;
    /* i*P and (i+1)*P, saturating at size (no overflow in between). */
    off = (index && p > size / index) ? size : index * p;
    end = size - off < p ? size : off + p;
    *part_offset = off;
    *part_len = end - off;
    return TD_OK;
}

int td_shard_name(char *buf, size_t cap, uint64_t index)
{
    if (!buf || cap == 0)
        return TD_EINVAL;
    return td__msg(buf, cap, "part-%06llu", (unsigned long long)index);
}
