/* Distinct fixed-size blocks in bounded memory (see blockcount.h). */
#include "blockcount.h"

#define MIN_SLOTS ((size_t)1 << 10)
/* The set is at most half full: 2 * TD__BLOCKCOUNT_EXACT slots, 2 MiB. */
#define MAX_SLOTS ((size_t)2 * TD__BLOCKCOUNT_EXACT)

struct td_blockcount {
    uint64_t *slot; /* 0 = empty; hashes are never 0 (see add) */
    size_t cap;     /* a power of two */
    size_t used;
    unsigned level; /* kept: hashes whose top `level` bits are 0 */
    uint64_t blocks;
};

uint64_t td__block_hash(const uint8_t *p, size_t n)
{
    uint64_t h = TD_WY_P0 ^ (uint64_t)n;
    /* XOR-ing the old state back in keeps it when a product happens to be
     * 0 (a plain wyhash chain would forget everything before that word). */
    for (size_t i = 0; i + 16 <= n; i += 16)
        h ^= td__wymix(td__load64le(p + i) ^ TD_WY_P1 ^ h, td__load64le(p + i + 8) ^ TD_WY_P0);
    return td__wymix(h ^ TD_WY_P1, (uint64_t)n ^ TD_WY_P0);
}

int td__blockcount_new(td_blockcount **out)
{
    td_blockcount *b = calloc(1, sizeof *b);
    *out = NULL;
    if (!b || !(b->slot = calloc(MIN_SLOTS, sizeof *b->slot))) {
        free(b);
        return TD_ENOMEM;
    }
    b->cap = MIN_SLOTS;
    *out = b;
    return TD_OK;
}

void td__blockcount_free(td_blockcount *b)
{
    if (b)
        free(b->slot);
    free(b);
}

static int kept(unsigned level, uint64_t h)
{
    return level == 0 || (h >> (64 - level)) == 0;
}

static void put(uint64_t *slot, size_t cap, uint64_t h)
{
    size_t i = (size_t)h & (cap - 1);
    while (slot[i] && slot[i] != h)
        i = (i + 1) & (cap - 1);
    slot[i] = h;
}

/* Rebuild into cap slots, keeping the hashes that pass `level`. */
static int rebuild(td_blockcount *b, size_t cap, unsigned level)
{
    uint64_t *n = calloc(cap, sizeof *n);
    size_t used = 0;
    if (!n)
        return TD_ENOMEM;
    for (size_t i = 0; i < b->cap; i++)
        if (b->slot[i] && kept(level, b->slot[i])) {
            put(n, cap, b->slot[i]);
            used++;
        }
    free(b->slot);
    b->slot = n;
    b->cap = cap;
    b->used = used;
    b->level = level;
    return TD_OK;
}

int td__blockcount_add(td_blockcount *b, uint64_t h)
{
    size_t i;
    h = h ? h : 1;
    if (!kept(b->level, h)) {
        b->blocks++;
        return TD_OK;
    }
    for (i = (size_t)h & (b->cap - 1); b->slot[i]; i = (i + 1) & (b->cap - 1))
        if (b->slot[i] == h) {
            b->blocks++;
            return TD_OK;
        }
    if ((b->used + 1) * 2 > b->cap) {
        /* Full: grow while the set may, then sample more sparsely (until
         * at most half the slots are taken, as one step nearly always does). */
        int rc = TD_OK;
        if (b->cap < MAX_SLOTS) {
            rc = rebuild(b, b->cap * 2, b->level);
        } else {
            unsigned level = b->level;
            do
                rc = rebuild(b, b->cap, ++level);
            while (rc == TD_OK && (b->used + 1) * 2 > b->cap && level < 63);
        }
        if (rc != TD_OK)
            return rc;
        return td__blockcount_add(b, h);
    }
    b->slot[i] = h;
    b->used++;
    b->blocks++;
    return TD_OK;
}

void td__blockcount_result(const td_blockcount *b, uint64_t *blocks, uint64_t *unique,
                           int *estimated)
{
    uint64_t u = (uint64_t)b->used << b->level;
    *blocks = b->blocks;
    *unique = u < b->blocks ? u : b->blocks;
    if (*unique == 0 && b->blocks)
        *unique = 1;
    *estimated = b->level > 0;
}
