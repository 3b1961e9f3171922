/* A small strict JSON (RFC 8259) reader and writer for profiles.  Not installed. */
#ifndef TD_LIKE_JSON_H
#define TD_LIKE_JSON_H

#include "common.h"

enum { TD_JSON_NULL, TD_JSON_FALSE, TD_JSON_TRUE, TD_JSON_NUM, TD_JSON_STR, TD_JSON_ARR, TD_JSON_OBJ };

/* One value.  Children of arrays and objects are consecutive in a list
 * linked through `next` (node indices; 0 ends the list: node 0 is the root,
 * which is never anyone's child). */
typedef struct td__json_node {
    uint8_t type;
    uint8_t is_int;  /* TD_JSON_NUM: the text is an integer that fits int64 */
    uint32_t first;  /* ARR/OBJ: first child; STR: offset of the bytes in strs */
    uint32_t count;  /* ARR/OBJ: children; STR: length in bytes */
    uint32_t next;   /* next sibling, 0 = none */
    uint32_t key;    /* members of objects: offset of the key in strs */
    uint32_t keylen;
    int64_t ival;    /* TD_JSON_NUM with is_int */
    double dval;     /* TD_JSON_NUM */
} td__json_node;

typedef struct td__json_doc {
    td__json_node *nodes;
    uint32_t nnodes, capnodes;
    char *strs; /* decoded strings, each NUL-terminated */
    uint32_t nstrs, capstrs;
} td__json_doc;

/* Limits that hostile input cannot exceed. */
#define TD_JSON_MAX_DEPTH 32
#define TD_JSON_MAX_NODES (1u << 20)

/* Parse buf[0..len).  TD_OK, TD_ESYNTAX (malformed; msg says where and why),
 * TD_ERANGE (too deep, too many values, number out of range) or TD_ENOMEM.
 * msg (may be NULL) receives a NUL-terminated explanation on failure.  On
 * failure d holds nothing to free (td__json_free is still safe). */
TD_HIDDEN int td__json_parse(td__json_doc *d, const char *buf, size_t len, char *msg, size_t msgcap);
TD_HIDDEN void td__json_free(td__json_doc *d);

/* Member `key` of object node o, or NULL. */
TD_HIDDEN const td__json_node *td__json_get(const td__json_doc *d, const td__json_node *o, const char *key);
/* Child i of array node a, or NULL (linear walk; use td__json_next to iterate). */
TD_HIDDEN const td__json_node *td__json_child(const td__json_doc *d, const td__json_node *a);
TD_HIDDEN const td__json_node *td__json_next(const td__json_doc *d, const td__json_node *n);
TD_HIDDEN const char *td__json_str(const td__json_doc *d, const td__json_node *n);
TD_HIDDEN const char *td__json_keystr(const td__json_doc *d, const td__json_node *n);

/* Readers' checks, shared by every reader of a profile so that their
 * messages read alike.  Each returns TD_OK or TD_EINVAL, and on failure
 * writes "what: ..." into msg (may be NULL) of cap bytes. */

/* TD_EINVAL with fmt's text in msg. */
TD_HIDDEN int td__json_fail(char *msg, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* *v = the integer n, lo <= n <= hi; else "what: expected an integer lo .. hi". */
TD_HIDDEN int td__json_get_u32(const td__json_node *n, uint32_t lo, uint32_t hi, uint32_t *v, char *msg,
                               size_t cap, const char *what);
/* TD_OK when every key of object o is one of keys[0, n); else
 * "what: unknown key \"...\"". */
TD_HIDDEN int td__json_known_keys(const td__json_doc *d, const td__json_node *o, const char *const *keys,
                                  size_t n, char *msg, size_t cap, const char *what);

/* A growable output buffer. */
typedef struct td__json_out {
    char *buf;
    size_t len, cap;
    int err; /* TD_ENOMEM after a failed growth; later writes do nothing */
} td__json_out;

/* Room for n more bytes and the NUL; 0, or -1 (o->err set) when out of memory. */
TD_HIDDEN int td__json_grow(td__json_out *o, size_t n);

/* Inline: a profile's JSON is thousands of short writes, made several
 * times per profile built or loaded (size checks, digest, save). */
static inline void td__json_rawn(td__json_out *o, const char *s, size_t n)
{
    if (o->err || (o->len + n + 1 > o->cap && td__json_grow(o, n) != 0))
        return;
    memcpy(o->buf + o->len, s, n);
    o->len += n;
    o->buf[o->len] = 0;
}
static inline void td__json_raw(td__json_out *o, const char *s)
{
    td__json_rawn(o, s, strlen(s));
}
/* Direct writing, for long runs of numbers (a profile's count tables):
 * room for n more bytes at the end of o, or NULL (o->err set); then write
 * at most n bytes there (td__put_dec) and end the text at `end`. */
TD_HIDDEN char *td__json_room(td__json_out *o, size_t n);
TD_HIDDEN void td__json_done(td__json_out *o, char *end);
TD_HIDDEN void td__json_int(td__json_out *o, int64_t v);
/* v rounded to `dec` decimals, locale-independent ("12.345"); non-finite -> 0. */
TD_HIDDEN void td__json_fixed(td__json_out *o, double v, int dec);
/* A JSON string with escapes; bytes >= 0x80 are written as \u00XX so any
 * byte string round-trips through a strict reader (descriptions only). */
TD_HIDDEN void td__json_string(td__json_out *o, const char *s);

#endif
