/* A small strict JSON (RFC 8259) reader and writer for profiles.  Not installed. */
#ifndef TD_LIKE_JSON_H
#define TD_LIKE_JSON_H

#include <stddef.h>
#include <stdint.h>

enum { TDJ_NULL, TDJ_FALSE, TDJ_TRUE, TDJ_NUM, TDJ_STR, TDJ_ARR, TDJ_OBJ };

/* One value.  Children of arrays and objects are consecutive in a list
 * linked through `next` (node indices; 0 ends the list: node 0 is the root,
 * which is never anyone's child). */
typedef struct tdj_node {
    uint8_t type;
    uint8_t is_int;  /* TDJ_NUM: the text is an integer that fits int64 */
    uint32_t first;  /* ARR/OBJ: first child; STR: offset of the bytes in strs */
    uint32_t count;  /* ARR/OBJ: children; STR: length in bytes */
    uint32_t next;   /* next sibling, 0 = none */
    uint32_t key;    /* members of objects: offset of the key in strs */
    uint32_t keylen;
    int64_t ival;    /* TDJ_NUM with is_int */
    double dval;     /* TDJ_NUM */
} tdj_node;

typedef struct tdj_doc {
    tdj_node *nodes;
    uint32_t nnodes, capnodes;
    char *strs; /* decoded strings, each NUL-terminated */
    uint32_t nstrs, capstrs;
} tdj_doc;

/* Limits that hostile input cannot exceed. */
#define TDJ_MAX_DEPTH 32
#define TDJ_MAX_NODES (1u << 20)

/* Parse buf[0..len).  TD_OK, TD_ESYNTAX (malformed; msg says where and why),
 * TD_ERANGE (too deep, too many values, number out of range) or TD_ENOMEM.
 * msg (may be NULL) receives a NUL-terminated explanation on failure.  On
 * failure d holds nothing to free (tdj_free is still safe). */
int tdj_parse(tdj_doc *d, const char *buf, size_t len, char *msg, size_t msgcap);
void tdj_free(tdj_doc *d);

/* Member `key` of object node o, or NULL. */
const tdj_node *tdj_get(const tdj_doc *d, const tdj_node *o, const char *key);
/* Child i of array node a, or NULL (linear walk; use tdj_next to iterate). */
const tdj_node *tdj_child(const tdj_doc *d, const tdj_node *a);
const tdj_node *tdj_next(const tdj_doc *d, const tdj_node *n);
const char *tdj_str(const tdj_doc *d, const tdj_node *n);
const char *tdj_keystr(const tdj_doc *d, const tdj_node *n);

/* A growable output buffer. */
typedef struct tdj_out {
    char *buf;
    size_t len, cap;
    int err; /* TD_ENOMEM after a failed growth; later writes do nothing */
} tdj_out;

void tdj_raw(tdj_out *o, const char *s);
void tdj_rawn(tdj_out *o, const char *s, size_t n);
void tdj_int(tdj_out *o, int64_t v);
/* v rounded to `dec` decimals, locale-independent ("12.345"); non-finite -> 0. */
void tdj_fixed(tdj_out *o, double v, int dec);
/* A JSON string with escapes; bytes >= 0x80 are written as \u00XX so any
 * byte string round-trips through a strict reader (descriptions only). */
void tdj_string(tdj_out *o, const char *s);

#endif
