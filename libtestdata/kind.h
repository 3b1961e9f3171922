/*
 * The kind interface: what a kind of data provides, and the registry that
 * maps td_kind values and names to kinds (kinds.c).  Over common.h.
 * Not installed.
 *
 * A kind turns checked options into an immutable "state" once (key
 * derivation, tables); then any number of threads may fill from it at once.
 * Block-structured kinds (text, compressible) make each block on its own
 * from (state, block index) and provide fill_block; the shared loop in
 * kinds.c cuts any byte range into blocks (unless the kind also has a
 * fill of its own).  Kinds with cheap random access
 * (zero, random, like) provide fill instead.
 */
#ifndef TD_KIND_H
#define TD_KIND_H

#include "common.h"

typedef struct td_kind_vtbl {
    const char *name;
    /* Nonzero when the bytes are text for people (td_kind_is_text): front
     * ends refuse to write the other kinds to a terminal.  Binary (0)
     * unless set. */
    int text;
    /* A power of two: offsets that are multiples of it are cheapest to
     * start at (the block of block-structured kinds); 1 for no blocks.
     * Stream buffers and thread splits are aligned to it. */
    uint32_t block;
    /* fill_block may write this many bytes past the end of the block. */
    uint32_t slack;
    /* Nonzero when fill costs only the bytes asked for, at any offset, in a
     * kind whose blocks are still units of the stream (like's permuted
     * base): the dedup layer treats its blocks as fill_block kinds' (the
     * same mapping) but reads through fill, with no block cache. */
    int ranged;
    /* Kind-specific checks of *o beyond the ranges of the option table
     * (which are checked already); NULL when there are none. */
    int (*check)(const td_options *o);
    /* Build the state for *o (already checked); may leave *state NULL.
     * end: the stream's end, which no read reaches (UINT64_MAX: not
     * known); a hint only, for work that reads past it alone would use. */
    int (*prepare)(const td_options *o, uint64_t end, void **state);
    void (*release)(void *state);
    /* At least one of the two.  A kind with both (text: fill makes several
     * blocks at once, interleaved) gets fill for ranges and fill_block
     * where one block is wanted (the dedup layer); they must agree. */
    /* Bytes [offset, offset+len) of the stream; offset+len never overflows. */
    int (*fill)(const void *state, uint64_t offset, uint8_t *buf, size_t len);
    /* Block bi into out, which has room for block + slack bytes.  Bytes
     * [0, end) must be right (1 <= end <= block); a kind may stop early
     * after them, so a prefix costs less than the whole block. */
    int (*fill_block)(const void *state, uint64_t bi, uint8_t *out, uint32_t end);
} td_kind_vtbl;

extern const td_kind_vtbl td_kind_zero TD_HIDDEN;
extern const td_kind_vtbl td_kind_random TD_HIDDEN;
extern const td_kind_vtbl td_kind_text TD_HIDDEN;
extern const td_kind_vtbl td_kind_compressible TD_HIDDEN;
extern const td_kind_vtbl td_kind_like TD_HIDDEN;

/* Names of td_algorithm values, indexed by value, NULL-terminated
 * (gen_random.c): the values of the option "algorithm". */
extern const char *const td__algorithm_names[] TD_HIDDEN;

/* Names of the built-in profiles of TD_LIKE, NULL-terminated
 * (like_builtin.c): the suggested values of the option "profile". */
extern const char *const td__like_builtin_names[] TD_HIDDEN;

/* Why name is no profile, for every message that says so (like_profile.c):
 * "not a built-in profile (built-ins: english, ...)" or, with or_file,
 * "neither a built-in profile (english, ...) nor a profile file", then
 * "; did you mean 'html'?" when a built-in is close.  Returns buf. */
TD_HIDDEN const char *td__profile_unknown_msg(char *buf, size_t cap, const char *name, int or_file);

/* The files o's data is generated from (its text model's, its profile's,
 * when loaded from a file) into in[0..1], and with what, what they are
 * ("text model", "profile"); returns how many.  Outputs never replace them
 * (td_options_check_output, td_tree_write). */
TD_HIDDEN int td__options_inputs(const td_options *o, td__file_id in[2], const char *what[2]);

/* The vtable of a kind, or NULL when unknown. */
TD_HIDDEN const td_kind_vtbl *td__kind_get(int kind);

/* Bytes [offset, offset+len) of a kind's stream, single-threaded: fill, or
 * the block loop over fill_block.  offset+len must not overflow. */
TD_HIDDEN int td__kind_fill(const td_kind_vtbl *vt, const void *state, uint64_t offset,
                            uint8_t *buf, size_t len);

#endif
