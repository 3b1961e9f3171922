/*
 * Internals of td_tree shared by tree.c (the spec: options, size
 * distributions, names) and tree_io.c (writing, verifying, scanning).
 * Over gen.h.  Not installed.
 */
#ifndef TD_TREE_H
#define TD_TREE_H

#include "gen.h"

/* Points of the quantile table: Q[k] for k = 0 .. TD_TREE_QN. */
#define TD_TREE_QBITS 16
#define TD_TREE_QN (1u << TD_TREE_QBITS)

/* The size histogram of empirical:FILE and of tree profiles: sizes below
 * 256 have a bin each; above, 64 bins per power of two. */
#define TD_TREE_HBINS (256u + 56u * 64u)

typedef struct td__hist {
    uint64_t count[TD_TREE_HBINS];
    uint64_t min[TD_TREE_HBINS]; /* smallest and largest size seen in the bin */
    uint64_t max[TD_TREE_HBINS];
    uint64_t files, total;
} td__hist;

enum { TD__DIST_FIXED, TD__DIST_UNIFORM, TD__DIST_TABLE };

#define TD__TREE_MAX_SOPTS 32

struct td_tree {
    /* as set */
    uint64_t files, total;
    int have_files, have_total, have_depth, have_fanout, have_sizes;
    uint32_t depth, fanout;
    int kind;
    int dashed;    /* keys were given as "--key": messages say so */
    char *sizes;   /* the DIST string */
    char *like;    /* profile path */
    int nsopt;     /* stream options, applied in td_tree_prepare */
    char *skey[TD__TREE_MAX_SOPTS], *sval[TD__TREE_MAX_SOPTS];
    /* prepared */
    int prepared;
    td_options opt;       /* owns the files its "model" and "profile" loaded */
    int dist;             /* TD__DIST_* */
    uint64_t dmin, dmax;  /* fixed: dmin; uniform: [dmin, dmax] */
    uint64_t *q;          /* TD__DIST_TABLE: TD_TREE_QN + 1 points */
    uint64_t n;           /* files */
    uint64_t sum_raw_lo, sum_raw_hi; /* the raw sizes' sum (128 bits), with total */
    uint64_t target;      /* total asked for (scale) */
    int scale;            /* sizes are scaled to target */
    uint64_t remainder;   /* files 0 .. remainder-1 get one byte more */
    uint64_t bytes;       /* td_tree_total */
    uint64_t k0, k1;      /* from the tree key: the draws within strata */
    uint64_t rk[4];       /* round keys of the permutation of strata */
    unsigned half_bits;   /* the permutation works on 2 * half_bits bits */
    uint64_t ndirs;       /* directories 1 + F + ... + F^D */
    uint64_t level_first[TD_TREE_MAX_DEPTH + 2]; /* first directory index of each level */
    int dir_width, file_width;
    const char *ext;
};

/* Directory j's relative path ("" for the top, "d3/d07"), with no final
 * slash; returns its length. */
TD_HIDDEN size_t td__tree_dir_path(const td_tree *t, uint64_t j, char *buf, size_t cap);
/* Files of directory j: [*first, *end). */
TD_HIDDEN void td__tree_dir_files(const td_tree *t, uint64_t j, uint64_t *first, uint64_t *end);
/* Directory of file i. */
TD_HIDDEN uint64_t td__tree_file_dir(const td_tree *t, uint64_t i);
/* Size of file i. */
TD_HIDDEN uint64_t td__tree_size(const td_tree *t, uint64_t i);
/* File name (no directory) of file i. */
TD_HIDDEN size_t td__tree_file_name(const td_tree *t, uint64_t i, char *buf, size_t cap);
/* The file index a name in directory j stands for, or UINT64_MAX. */
TD_HIDDEN uint64_t td__tree_name_index(const td_tree *t, uint64_t j, const char *name);

/* Histograms (tree.c). */
TD_HIDDEN void td__hist_add(td__hist *h, uint64_t size, uint64_t count);
TD_HIDDEN unsigned td__hist_bin(uint64_t size);

/* td_output relative to an open directory (output.c): the file `name`
 * (no slash) in dirfd, whose path dirpath is only used in messages (and
 * where the file system has no O_TMPFILE).  `fresh`: the directory was
 * just made by this process, so nothing is there yet.  An existing entry
 * that is not a regular file, or is one of keep[0..nkeep), is refused
 * (TD_EIO, errno EEXIST); a regular file is replaced by name in dirfd. */
TD_HIDDEN int td__output_openat(td_output **out, int dirfd, const char *dirpath,
                                const char *name, int fresh, const td__file_id *keep, int nkeep);

#endif
