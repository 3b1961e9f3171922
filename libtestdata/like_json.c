/*
 * A strict JSON reader (RFC 8259) and a small writer, for profiles.
 *
 * The reader builds a flat array of nodes.  It accepts exactly one value
 * surrounded by optional white space, and rejects everything the RFC does
 * not allow (comments, trailing commas, single quotes, leading zeros, bare
 * control characters, invalid UTF-8, lone surrogates) as well as duplicate
 * object keys and \u0000, which profiles never need.  Depth, node count and
 * number range are bounded, so hostile input costs at most linear time and
 * bounded memory, and every failure names the byte offset and the reason.
 */
#include "like_json.h"

#include "common.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

typedef struct parser {
    const unsigned char *p, *end, *start;
    td__json_doc *d;
    char *msg;
    size_t msgcap;
    int rc;
} parser;

static int fail(parser *ps, int rc, const char *why)
{
    if (ps->rc == TD_OK) {
        ps->rc = rc;
        if (ps->msg && ps->msgcap)
            snprintf(ps->msg, ps->msgcap, "JSON at byte %zu: %s", (size_t)(ps->p - ps->start), why);
    }
    return rc;
}

static void ws(parser *ps)
{
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
        ps->p++;
}

static int new_node(parser *ps, uint8_t type, uint32_t *idx)
{
    td__json_doc *d = ps->d;
    if (d->nnodes >= TD_JSON_MAX_NODES)
        return fail(ps, TD_ERANGE, "too many values");
    if (d->nnodes == d->capnodes) {
        uint32_t nc = d->capnodes ? d->capnodes * 2 : 64;
        /* on huge pages once large: a profile's few tens of thousands of
         * nodes were some 200 page faults, most of loading a built-in */
        td__json_node *n = td__realloc_large(d->nodes, (size_t)d->capnodes * sizeof *n,
                                             (size_t)nc * sizeof *n);
        if (!n)
            return fail(ps, TD_ENOMEM, "out of memory");
        d->nodes = n;
        d->capnodes = nc;
    }
    memset(&d->nodes[d->nnodes], 0, sizeof d->nodes[0]);
    d->nodes[d->nnodes].type = type;
    *idx = d->nnodes++;
    return TD_OK;
}

static int put_str(parser *ps, const char *s, size_t n)
{
    td__json_doc *d = ps->d;
    if ((size_t)d->nstrs + n + 1 > UINT32_MAX / 2)
        return fail(ps, TD_ERANGE, "strings too long");
    while ((size_t)d->nstrs + n + 1 > d->capstrs) {
        uint32_t nc = d->capstrs ? d->capstrs * 2 : 256;
        char *b = realloc(d->strs, nc);
        if (!b)
            return fail(ps, TD_ENOMEM, "out of memory");
        d->strs = b;
        d->capstrs = nc;
    }
    memcpy(d->strs + d->nstrs, s, n);
    d->nstrs += (uint32_t)n;
    return TD_OK;
}

static int hex4(const unsigned char *p, unsigned *v)
{
    unsigned x = 0;
    for (int i = 0; i < 4; i++) {
        unsigned c = p[i], h;
        if (c >= '0' && c <= '9')
            h = c - '0';
        else if (c >= 'a' && c <= 'f')
            h = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            h = c - 'A' + 10;
        else
            return -1;
        x = x * 16 + h;
    }
    *v = x;
    return 0;
}

/* Length of the valid UTF-8 sequence at p (1..4), or 0 (RFC 3629: no
 * overlong forms, no surrogates, nothing above U+10FFFF). */
static int utf8_len(const unsigned char *p, const unsigned char *end)
{
    unsigned c = p[0];
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        return end - p >= 2 && (p[1] & 0xC0) == 0x80 ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        if (end - p < 3 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80)
            return 0;
        if (c == 0xE0 && p[1] < 0xA0)
            return 0;
        if (c == 0xED && p[1] >= 0xA0)
            return 0;
        return 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        if (end - p < 4 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80 || (p[3] & 0xC0) != 0x80)
            return 0;
        if (c == 0xF0 && p[1] < 0x90)
            return 0;
        if (c == 0xF4 && p[1] >= 0x90)
            return 0;
        return 4;
    }
    return 0;
}

static int put_utf8(parser *ps, unsigned cp)
{
    char b[4];
    size_t n;
    if (cp < 0x80) {
        b[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        b[0] = (char)(0xC0 | (cp >> 6));
        b[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        b[0] = (char)(0xE0 | (cp >> 12));
        b[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        b[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        b[0] = (char)(0xF0 | (cp >> 18));
        b[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        b[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        b[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    return put_str(ps, b, n);
}

/* A string starting at the opening quote; *off and *len receive its decoded bytes. */
static int parse_string(parser *ps, uint32_t *off, uint32_t *len)
{
    uint32_t start;
    ps->p++; /* opening quote */
    start = ps->d->nstrs;
    for (;;) {
        if (ps->p >= ps->end)
            return fail(ps, TD_ESYNTAX, "unterminated string");
        unsigned c = *ps->p;
        if (c == '"') {
            ps->p++;
            break;
        }
        if (c < 0x20)
            return fail(ps, TD_ESYNTAX, "control character in string");
        if (c == '\\') {
            if (ps->end - ps->p < 2)
                return fail(ps, TD_ESYNTAX, "unterminated escape");
            unsigned e = ps->p[1];
            char ch = 0;
            switch (e) {
            case '"': ch = '"'; break;
            case '\\': ch = '\\'; break;
            case '/': ch = '/'; break;
            case 'b': ch = '\b'; break;
            case 'f': ch = '\f'; break;
            case 'n': ch = '\n'; break;
            case 'r': ch = '\r'; break;
            case 't': ch = '\t'; break;
            case 'u': {
                unsigned u, lo;
                if (ps->end - ps->p < 6 || hex4(ps->p + 2, &u))
                    return fail(ps, TD_ESYNTAX, "bad \\u escape");
                ps->p += 6;
                if (u >= 0xD800 && u <= 0xDBFF) {
                    if (ps->end - ps->p < 6 || ps->p[0] != '\\' || ps->p[1] != 'u' ||
                        hex4(ps->p + 2, &lo) || lo < 0xDC00 || lo > 0xDFFF)
                        return fail(ps, TD_ESYNTAX, "lone surrogate in \\u escape");
                    ps->p += 6;
                    u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
                } else if (u >= 0xDC00 && u <= 0xDFFF) {
                    return fail(ps, TD_ESYNTAX, "lone surrogate in \\u escape");
                }
                if (u == 0)
                    return fail(ps, TD_ESYNTAX, "\\u0000 is not allowed");
                if (put_utf8(ps, u) != TD_OK)
                    return ps->rc;
                continue;
            }
            default:
                return fail(ps, TD_ESYNTAX, "unknown escape");
            }
            if (put_str(ps, &ch, 1) != TD_OK)
                return ps->rc;
            ps->p += 2;
            continue;
        }
        int n = utf8_len(ps->p, ps->end);
        if (!n)
            return fail(ps, TD_ESYNTAX, "invalid UTF-8 in string");
        if (put_str(ps, (const char *)ps->p, (size_t)n) != TD_OK)
            return ps->rc;
        ps->p += n;
    }
    if (put_str(ps, "", 1) != TD_OK) /* NUL terminator */
        return ps->rc;
    *off = start;
    *len = ps->d->nstrs - start - 1;
    return TD_OK;
}

static int parse_number(parser *ps, td__json_node *n)
{
    const unsigned char *s = ps->p;
    int frac = 0;
    if (ps->p < ps->end && *ps->p == '-')
        ps->p++;
    if (ps->p >= ps->end)
        return fail(ps, TD_ESYNTAX, "bad number");
    if (*ps->p == '0') {
        ps->p++;
    } else if (*ps->p >= '1' && *ps->p <= '9') {
        while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9')
            ps->p++;
    } else {
        return fail(ps, TD_ESYNTAX, "bad number");
    }
    if (ps->p < ps->end && *ps->p == '.') {
        frac = 1;
        ps->p++;
        if (ps->p >= ps->end || *ps->p < '0' || *ps->p > '9')
            return fail(ps, TD_ESYNTAX, "bad number: digits must follow '.'");
        while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9')
            ps->p++;
    }
    if (ps->p < ps->end && (*ps->p == 'e' || *ps->p == 'E')) {
        frac = 1;
        ps->p++;
        if (ps->p < ps->end && (*ps->p == '+' || *ps->p == '-'))
            ps->p++;
        if (ps->p >= ps->end || *ps->p < '0' || *ps->p > '9')
            return fail(ps, TD_ESYNTAX, "bad number: digits must follow the exponent");
        while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9')
            ps->p++;
    }
    size_t len = (size_t)(ps->p - s);
    char tmp[64];
    if (len >= sizeof tmp)
        return fail(ps, TD_ERANGE, "number too long");
    memcpy(tmp, s, len);
    tmp[len] = 0;
    if (!frac) {
        /* Exact integer arithmetic: profiles are integers. */
        const char *q = tmp;
        int neg = *q == '-';
        uint64_t v = 0;
        if (neg)
            q++;
        for (; *q; q++) {
            unsigned dgt = (unsigned)(*q - '0');
            if (v > (UINT64_C(9223372036854775808) - dgt) / 10)
                return fail(ps, TD_ERANGE, "integer out of range");
            v = v * 10 + dgt;
        }
        if (!neg && v > INT64_MAX)
            return fail(ps, TD_ERANGE, "integer out of range");
        n->is_int = 1;
        n->ival = neg ? (int64_t)(0 - v) : (int64_t)v;
        n->dval = (double)n->ival;
        return TD_OK;
    }
    double dv;
    int rc = td__parse_double(tmp, &dv);
    if (rc == TD_ERANGE)
        return fail(ps, TD_ERANGE, "number out of range");
    if (rc != TD_OK)
        return fail(ps, rc == TD_ENOMEM ? TD_ENOMEM : TD_ESYNTAX, "bad number");
    n->dval = dv;
    return TD_OK;
}

static int literal(parser *ps, const char *word, uint8_t type, uint32_t *idx)
{
    size_t n = strlen(word);
    if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0)
        return fail(ps, TD_ESYNTAX, "unexpected character");
    ps->p += n;
    return new_node(ps, type, idx);
}

static int parse_value(parser *ps, uint32_t *idx, int depth);

static int parse_container(parser *ps, uint32_t *idx, int depth, int is_obj)
{
    uint32_t me, last = 0, count = 0;
    if (depth >= TD_JSON_MAX_DEPTH)
        return fail(ps, TD_ERANGE, "nesting too deep");
    if (new_node(ps, is_obj ? TD_JSON_OBJ : TD_JSON_ARR, &me) != TD_OK)
        return ps->rc;
    ps->p++;
    ws(ps);
    if (ps->p < ps->end && *ps->p == (is_obj ? '}' : ']')) {
        ps->p++;
        *idx = me;
        return TD_OK;
    }
    for (;;) {
        uint32_t koff = 0, klen = 0, child;
        ws(ps);
        if (is_obj) {
            if (ps->p >= ps->end || *ps->p != '"')
                return fail(ps, TD_ESYNTAX, "expected a string key");
            if (parse_string(ps, &koff, &klen) != TD_OK)
                return ps->rc;
            /* Duplicate keys are ambiguous: reject them (objects are small). */
            for (uint32_t c = ps->d->nodes[me].first; c; c = ps->d->nodes[c].next)
                if (ps->d->nodes[c].keylen == klen &&
                    memcmp(ps->d->strs + ps->d->nodes[c].key, ps->d->strs + koff, klen) == 0)
                    return fail(ps, TD_ESYNTAX, "duplicate key");
            ws(ps);
            if (ps->p >= ps->end || *ps->p != ':')
                return fail(ps, TD_ESYNTAX, "expected ':'");
            ps->p++;
            ws(ps);
        }
        if (parse_value(ps, &child, depth + 1) != TD_OK)
            return ps->rc;
        ps->d->nodes[child].key = koff;
        ps->d->nodes[child].keylen = klen;
        if (last)
            ps->d->nodes[last].next = child;
        else
            ps->d->nodes[me].first = child;
        last = child;
        count++;
        ws(ps);
        if (ps->p >= ps->end)
            return fail(ps, TD_ESYNTAX, is_obj ? "unterminated object" : "unterminated array");
        if (*ps->p == ',') {
            ps->p++;
            continue;
        }
        if (*ps->p == (is_obj ? '}' : ']')) {
            ps->p++;
            break;
        }
        return fail(ps, TD_ESYNTAX, is_obj ? "expected ',' or '}'" : "expected ',' or ']'");
    }
    ps->d->nodes[me].count = count;
    *idx = me;
    return TD_OK;
}

static int parse_value(parser *ps, uint32_t *idx, int depth)
{
    ws(ps);
    if (ps->p >= ps->end)
        return fail(ps, TD_ESYNTAX, "unexpected end of input");
    switch (*ps->p) {
    case '{':
        return parse_container(ps, idx, depth, 1);
    case '[':
        return parse_container(ps, idx, depth, 0);
    case '"': {
        uint32_t off, len;
        if (parse_string(ps, &off, &len) != TD_OK)
            return ps->rc;
        if (new_node(ps, TD_JSON_STR, idx) != TD_OK)
            return ps->rc;
        ps->d->nodes[*idx].first = off;
        ps->d->nodes[*idx].count = len;
        return TD_OK;
    }
    case 't':
        return literal(ps, "true", TD_JSON_TRUE, idx);
    case 'f':
        return literal(ps, "false", TD_JSON_FALSE, idx);
    case 'n':
        return literal(ps, "null", TD_JSON_NULL, idx);
    default: {
        td__json_node tmp;
        memset(&tmp, 0, sizeof tmp);
        if (*ps->p != '-' && (*ps->p < '0' || *ps->p > '9'))
            return fail(ps, TD_ESYNTAX, "unexpected character");
        if (parse_number(ps, &tmp) != TD_OK)
            return ps->rc;
        if (new_node(ps, TD_JSON_NUM, idx) != TD_OK)
            return ps->rc;
        ps->d->nodes[*idx].is_int = tmp.is_int;
        ps->d->nodes[*idx].ival = tmp.ival;
        ps->d->nodes[*idx].dval = tmp.dval;
        return TD_OK;
    }
    }
}

void td__json_free(td__json_doc *d)
{
    if (!d)
        return;
    free(d->nodes);
    free(d->strs);
    memset(d, 0, sizeof *d);
}

int td__json_parse(td__json_doc *d, const char *buf, size_t len, char *msg, size_t msgcap)
{
    parser ps;
    uint32_t root;
    memset(d, 0, sizeof *d);
    if (msg && msgcap)
        msg[0] = 0;
    if (!buf && len)
        return TD_EINVAL;
    ps.start = ps.p = (const unsigned char *)buf;
    ps.end = ps.p + len;
    ps.d = d;
    ps.msg = msg;
    ps.msgcap = msgcap;
    ps.rc = TD_OK;
    /* The root is node 0, so that 0 can end sibling lists. */
    if (parse_value(&ps, &root, 0) == TD_OK) {
        ws(&ps);
        if (ps.p != ps.end)
            fail(&ps, TD_ESYNTAX, "trailing characters after the value");
    }
    if (ps.rc != TD_OK) {
        td__json_free(d);
        return ps.rc;
    }
    return TD_OK;
}

const td__json_node *td__json_get(const td__json_doc *d, const td__json_node *o, const char *key)
{
    size_t kl = strlen(key);
    if (!o || o->type != TD_JSON_OBJ)
        return NULL;
    for (uint32_t c = o->first; c; c = d->nodes[c].next)
        if (d->nodes[c].keylen == kl && memcmp(d->strs + d->nodes[c].key, key, kl) == 0)
            return &d->nodes[c];
    return NULL;
}

const td__json_node *td__json_child(const td__json_doc *d, const td__json_node *a)
{
    return a && (a->type == TD_JSON_ARR || a->type == TD_JSON_OBJ) && a->first ? &d->nodes[a->first] : NULL;
}

const td__json_node *td__json_next(const td__json_doc *d, const td__json_node *n)
{
    return n && n->next ? &d->nodes[n->next] : NULL;
}

const char *td__json_str(const td__json_doc *d, const td__json_node *n)
{
    return n && n->type == TD_JSON_STR ? d->strs + n->first : NULL;
}

const char *td__json_keystr(const td__json_doc *d, const td__json_node *n)
{
    return d->strs ? d->strs + n->key : "";
}

/* ------------------------------------------------------------------------ */

int td__json_fail(char *msg, size_t cap, const char *fmt, ...)
{
    if (msg && cap) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, cap, fmt, ap);
        va_end(ap);
    }
    return TD_EINVAL;
}

int td__json_get_u32(const td__json_node *n, uint32_t lo, uint32_t hi, uint32_t *v, char *msg, size_t cap,
                     const char *what)
{
    if (!n || n->type != TD_JSON_NUM || !n->is_int || n->ival < lo || n->ival > hi)
        return td__json_fail(msg, cap, "%s: expected an integer %u .. %u", what, lo, hi);
    *v = (uint32_t)n->ival;
    return TD_OK;
}

int td__json_known_keys(const td__json_doc *d, const td__json_node *o, const char *const *keys, size_t n,
                        char *msg, size_t cap, const char *what)
{
    for (const td__json_node *k = td__json_child(d, o); k; k = td__json_next(d, k)) {
        const char *ks = td__json_keystr(d, k);
        size_t i = 0;
        while (i < n && strcmp(ks, keys[i]))
            i++;
        if (i == n)
            return td__json_fail(msg, cap, "%s: unknown key \"%.32s\"", what, ks);
    }
    return TD_OK;
}

int td__json_grow(td__json_out *o, size_t n)
{
    if (o->err)
        return -1;
    if (o->len + n + 1 > o->cap) {
        size_t nc = o->cap ? o->cap : 4096;
        while (o->len + n + 1 > nc)
            nc *= 2;
        char *b = realloc(o->buf, nc);
        if (!b) {
            o->err = TD_ENOMEM;
            return -1;
        }
        o->buf = b;
        o->cap = nc;
    }
    return 0;
}

char *td__json_room(td__json_out *o, size_t n)
{
    if (o->err || (o->len + n + 1 > o->cap && td__json_grow(o, n) != 0))
        return NULL;
    return o->buf + o->len;
}

void td__json_done(td__json_out *o, char *end)
{
    o->len = (size_t)(end - o->buf);
    o->buf[o->len] = 0;
}

void td__json_int(td__json_out *o, int64_t v)
{
    char *q = td__json_room(o, 21); /* "-" and 20 digits */
    if (!q)
        return;
    if (v < 0)
        *q++ = '-';
    td__json_done(o, td__put_dec(q, v < 0 ? 0 - (uint64_t)v : (uint64_t)v, 1));
}

void td__json_fixed(td__json_out *o, double v, int dec)
{
    uint64_t scale = 1;
    char b[48];
    if (!isfinite(v))
        v = 0;
    for (int i = 0; i < dec; i++)
        scale *= 10;
    int neg = v < 0;
    double a = fabs(v) * (double)scale + 0.5;
    if (a > 9e18)
        a = 9e18;
    uint64_t q = (uint64_t)a;
    int n;
    if (dec > 0)
        n = snprintf(b, sizeof b, "%s%llu.%0*llu", neg && q ? "-" : "", (unsigned long long)(q / scale), dec,
                     (unsigned long long)(q % scale));
    else
        n = snprintf(b, sizeof b, "%s%llu", neg && q ? "-" : "", (unsigned long long)q);
    td__json_rawn(o, b, (size_t)n);
}

void td__json_string(td__json_out *o, const char *s)
{
    static const char hexd[] = "0123456789abcdef";
    td__json_rawn(o, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        unsigned c = *p;
        if (c == '"' || c == '\\') {
            char e[2] = {'\\', (char)c};
            td__json_rawn(o, e, 2);
        } else if (c < 0x20 || c >= 0x7F) {
            char e[6] = {'\\', 'u', '0', '0', hexd[c >> 4], hexd[c & 15]};
            td__json_rawn(o, e, 6);
        } else {
            char ch = (char)c;
            td__json_rawn(o, &ch, 1);
        }
    }
    td__json_rawn(o, "\"", 1);
}
