/**
 * @file testdata.h
 * @brief libtestdata - test data with known, controlled properties.
 *
 * The library produces byte streams that are:
 *   - seeded and reproducible: the bytes depend only on (kind, seed, kind
 *     options, format version), never on chunk sizes, call patterns, thread
 *     count, platform or endianness;
 *   - seekable: any byte range [offset, offset+len) can be produced on its
 *     own, so a receiver can verify data without holding a copy of it;
 *   - fast: generation is meant never to be the bottleneck of a benchmark.
 *
 * Conventions used throughout this header
 *   - Every name has the td_ / TD_ prefix.  Objects are opaque handles.
 *   - Functions that can fail return an int: TD_OK (0) on success, TD_DONE
 *     (positive) at the end of a stream, a negative TD_E* code on failure.
 *     td_strerror() turns any code into a static message.
 *   - The library keeps no mutable global state.  It never calls abort() or
 *     exit() on bad input: every argument is checked and reported.
 *   - Thread-safety: functions that take no td_stream are safe to call from
 *     any number of threads at once.  A td_stream may be used by one thread
 *     at a time (distinct streams need no locking).
 *   - Ownership: memory returned through a pointer parameter belongs to the
 *     library and stays valid as documented at each function; strings
 *     returned by the library are static and must not be freed.
 *
 * The byte format of every kind is specified in docs/format.md.  Changing
 * the bytes a (kind, seed, options) triple yields means bumping
 * TD_FORMAT_VERSION on purpose.
 */
#ifndef TESTDATA_H
#define TESTDATA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Marks the library's exported functions (symbol visibility). */
#if defined(_WIN32) && defined(TD_BUILDING_SHARED)
#  define TD_API __declspec(dllexport)
#elif defined(__GNUC__) || defined(__clang__)
#  define TD_API __attribute__((visibility("default")))
#else
#  define TD_API
#endif

/** Library major version: bumped on incompatible API or ABI changes. */
#define TD_VERSION_MAJOR 0
/** Library minor version: bumped when features are added compatibly. */
#define TD_VERSION_MINOR 1
/** Library patch version. */
#define TD_VERSION_PATCH 0
/** Library version, as "MAJOR.MINOR.PATCH". */
#define TD_VERSION_STRING "0.1.0"

/**
 * Version of the byte format.  Bumped whenever the bytes produced for an
 * existing (kind, seed, options) combination change.  Golden vectors in the
 * test suite pin the bytes of this version.
 */
#define TD_FORMAT_VERSION 12

/** A stream size meaning "endless": reads never reach TD_DONE. */
#define TD_SIZE_UNBOUNDED UINT64_MAX

/* ------------------------------------------------------------------------ */
/* Return codes                                                              */
/* ------------------------------------------------------------------------ */

/**
 * Return codes.  The numeric values are stable across releases and may be
 * stored or compared by callers.
 */
typedef enum td_status {
    TD_OK        = 0,   /**< success */
    TD_DONE      = 1,   /**< end of stream reached; nothing was produced */
    TD_EINVAL    = -1,  /**< invalid argument (NULL pointer, bad value) */
    TD_ENOMEM    = -2,  /**< memory allocation failed */
    TD_EKIND     = -3,  /**< unknown kind */
    TD_EOPTION   = -4,  /**< unknown option, or option does not apply to the kind */
    TD_ERANGE    = -5,  /**< value or offset out of range (e.g. past the end, overflow) */
    TD_EIO       = -6,  /**< I/O error; errno holds the system's reason */
    TD_EMISMATCH = -7,  /**< td_verify: the data differs from the stream */
    TD_ESYNTAX   = -8,  /**< a size or option string could not be parsed */
    TD_ECANCELED = -9,  /**< a progress callback (td_io_options) asked to stop */
    TD_EUTF8     = -10, /**< text given to the model builder is not valid UTF-8 */
    TD_ECORPUS   = -11, /**< corpus empty or too small to model (under 10 KiB), or an empty profile sample */
    TD_EMODEL    = -12, /**< not a text model file, or truncated or corrupted */
    TD_EMODELVERSION = -13 /**< a text model file of another format version */
} td_status;

/**
 * Human-readable, static, English message for a return code.  Never returns
 * NULL (unknown codes give "unknown error").  Thread-safe.
 */
TD_API const char *td_strerror(int rc);

/** The library's version string (TD_VERSION_STRING of the built library). */
TD_API const char *td_version(void);

/* ------------------------------------------------------------------------ */
/* Kinds and options                                                         */
/* ------------------------------------------------------------------------ */

/** What the bytes of a stream look like.  Values are stable. */
typedef enum td_kind {
    TD_ZERO   = 0, /**< all zero bytes */
    TD_RANDOM = 1, /**< incompressible pseudo-random bytes (see td_algorithm) */
    TD_TEXT   = 2, /**< prose from a text model (td_options.model; built-in English by
                        default): words, sentences, paragraphs, lines of at most 72 columns */
    TD_COMPRESSIBLE = 3, /**< LZ-shaped bytes compressing by td_options.ratio */
    TD_LIKE = 4   /**< data like a sample: generated from a td_profile (td_options.profile) */
} td_kind;

/** Kinds are below TD_KIND_COUNT; a reserved value below it that is not
 *  yet a kind gives TD_EKIND (and td_kind_name() NULL). */
#define TD_KIND_COUNT 5

/** Generator behind TD_RANDOM. */
typedef enum td_algorithm {
    /** ChaCha20 keystream (original variant, 64-bit counter); default. */
    TD_ALG_CHACHA20 = 0,
    /** Non-cryptographic counter-based generator: much faster, equally
     *  incompressible, not suitable where unpredictability matters. */
    TD_ALG_FAST = 1
} td_algorithm;

/** A text model (see "Text models" below).  Opaque, immutable. */
typedef struct td_model td_model;

/** Smallest dedup_block (one disk sector). */
#define TD_DEDUP_BLOCK_MIN 512u
/** Largest dedup_block (1 GiB). */
#define TD_DEDUP_BLOCK_MAX (1u << 30)
/** Largest dedup ratio. */
#define TD_DEDUP_MAX_RATIO 1048576.0
/** Smallest compress_block (one disk sector). */
#define TD_COMPRESS_BLOCK_MIN 512u
/** Largest compress_block (1 MiB). */
#define TD_COMPRESS_BLOCK_MAX (1u << 20)

/**
 * Options of a stream.  Always initialise with td_options_init() and then
 * set fields, so that fields added later get their defaults; the reserved
 * space keeps the struct's size and layout stable across minor versions.
 * Fields that do not apply to a kind are ignored by that kind.
 */
typedef struct td_options {
    uint64_t seed;           /**< stream seed; default 0 */
    uint32_t threads;        /**< threads for large reads; 1 default, 0 = all cores */
    uint32_t algorithm;      /**< td_algorithm for TD_RANDOM; default TD_ALG_CHACHA20 */
    double ratio;            /**< target compression ratio (kinds that take one;
                                  TD_COMPRESSIBLE: 1 to 1000); default 3 */
    double dedup;            /**< target dedup ratio, 1 to 2^20; default 1 (no
                                  duplicates); kinds that list "dedup" only */
    uint32_t dedup_block;    /**< dedup block size: a power of two from
                                  TD_DEDUP_BLOCK_MIN to TD_DEDUP_BLOCK_MAX; default 4096 */
    uint32_t compress_block; /**< TD_COMPRESSIBLE: the ratio holds for independent
                                  compress_block-byte pieces (a power of two from
                                  TD_COMPRESS_BLOCK_MIN to TD_COMPRESS_BLOCK_MAX);
                                  0 (default): tuned for whole streams */
    /** TD_TEXT: the model to generate from; NULL (default) is the built-in
     *  English model.  A model stored here by the caller stays the caller's
     *  (see "Who owns a model or profile" below): it must stay valid while a
     *  call that takes these options runs, and need not outlive a stream
     *  made with it (td_stream_open returns a stream that no longer uses
     *  it).  td_options_set() with the key "model" loads a model file into
     *  it, which the options then own. */
    union {
        const td_model *model;
        uint64_t model_pad_;  /**< keeps the layout on 32-bit targets */
    };
    /** TD_LIKE: the profile to generate from; NULL means the built-in
     *  "english".  Other kinds ignore it.  As for model: a profile stored
     *  here by the caller stays the caller's, must stay valid while a call
     *  that takes these options runs, and need not outlive a stream made
     *  with it; built-in profiles (td_profile_builtin()) live forever.
     *  td_options_set() with the key "profile" takes a built-in name, or a
     *  profile file, which it loads and the options then own. */
    union {
        const struct td_profile *profile;
        uint64_t profile_pad_;  /**< keeps the layout on 32-bit targets */
    };
    /** Private: the model and the profile that td_options_set() loaded
     *  (and td_options_release() frees); 0 when none.  Never set them. */
    uint64_t owned_[2];
    uint64_t reserved[4];    /**< reserved for future options, must stay 0 */
} td_options;

/**
 * A static initialiser equal to what td_options_init() sets (the test suite
 * compares them): `td_options o = TD_OPTIONS_INIT;` or
 * `static const td_options defaults = TD_OPTIONS_INIT;`.  Positional, so it
 * is valid C and C++.
 */
#define TD_OPTIONS_INIT {0u, 1u, 0u /* TD_ALG_CHACHA20 */, 3.0, 1.0, 4096u, 0u, {0}, {0}, {0u}, {0u}}

/** Set every field of *o to its default.  NULL is ignored.  It does not
 *  free what td_options_set() loaded: on options that may hold a loaded
 *  model or profile, call td_options_release() instead. */
TD_API void td_options_init(td_options *o);

/**
 * Who owns a model or profile (td_options.model, td_options.profile): one
 * rule for both.  A value the options loaded themselves, from a file given
 * to td_options_set() ("model", or "profile" naming a file), is owned by
 * the options: it is freed when td_options_set() replaces it (the same key
 * set again, to a file or, for "profile", to a built-in name) and by
 * td_options_release().  A pointer the caller stored in the field directly
 * stays the caller's and is never freed by the options, even when
 * td_options_set() or td_options_release() overwrites it.  Streams, fills,
 * verifiers and trees made from the options do not need either value once
 * they are made (a stream keeps what it needs).  A copy of a td_options
 * struct shares what the original loaded: release one of them only.
 * The CLI, Python's testdata package and td_tree all follow this rule.
 *
 * Free what td_options_set() loaded into *o (the model and profile files
 * it owns) and reset *o to its defaults, as td_options_init() does.
 * Pointers the caller stored directly are not freed.  NULL is ignored.
 * Options that never had a file loaded need no release (it is harmless).
 *
 * @param o  the options, initialised with td_options_init() or
 *           TD_OPTIONS_INIT (or NULL)
 */
TD_API void td_options_release(td_options *o);

/**
 * Set one option from strings, as the CLI and bindings do ("ratio", "3").
 * The keys, their types, ranges and the kinds they apply to are those of
 * the option table (td_option_get()); '-' and '_' are alike in keys
 * ("dedup-block"), and a leading "--" is allowed ("--dedup-block", as a
 * command line spells it; messages then name the option that way).  Integers are decimal (seed also 0x hex), sizes take
 * td_parse_size() suffixes, choices are one of the listed names.
 *
 * The keys "model" FILE and "profile" FILE load the file into options that then
 * own it, and free the file value they replace (see td_options_release()).
 *
 * @param o      options to change (td_options_init() first)
 * @param kind   the kind they are for (a td_kind)
 * @param key    the option's key
 * @param value  its value, as text
 * @return TD_OK; TD_EOPTION if the key is unknown or does not apply to
 *         @p kind; TD_ESYNTAX if the value cannot be parsed; TD_ERANGE if
 *         it is out of range; TD_EINVAL for NULL arguments, TD_EKIND for a
 *         bad kind; TD_EIO, TD_ENOMEM or a format error when a model or
 *         profile file cannot be loaded.  On failure *o is unchanged.
 */
TD_API int td_options_set(td_options *o, int kind, const char *key, const char *value);

/**
 * As td_options_set(), and on failure write one line for people into
 * @p msg (at most @p cap bytes, NUL-terminated; msg may be NULL) that names
 * the option and its valid values, e.g. "bad value 'fats' for
 * option 'algorithm': one of chacha20, fast; did you mean 'fast'?" or
 * "unknown option 'sed'; did you mean 'seed'?".  msg is untouched on success.
 */
TD_API int td_options_set_msg(td_options *o, int kind, const char *key, const char *value,
                              char *msg, size_t cap);

/**
 * Check that @p o is valid for @p kind: every value in range.  Called by all
 * functions that take options; exposed so callers can validate early.
 * @return TD_OK, TD_EKIND, TD_EINVAL, TD_EOPTION (a dedup target on a kind
 *         that cannot honour it) or TD_ERANGE.
 */
TD_API int td_options_check(int kind, const td_options *o);

/**
 * As td_options_check(), with a message naming the field at fault and its
 * range on failure, e.g. "option 'dedup_block' is 0: out of range (a power
 * of two from 512 to 1G)".  msg may be NULL; untouched on success.
 */
TD_API int td_options_check_msg(int kind, const td_options *o, char *msg, size_t cap);

/**
 * Check that writing the stream of @p o to @p path would not replace a file
 * the stream comes from: the text model or profile the options use, when
 * it was loaded from a file (td_model_load_file(), td_profile_open(),
 * td_options_set() with a path).  The same file by any name counts (a
 * hard link, a symlink), compared by device and inode.
 * td_write_file_ex() checks this itself; a caller that opens its own
 * output (td_output_open()) calls it first.
 * @param o     the options (NULL: the defaults, which use no file)
 * @param path  the output path; one that does not exist, or is not a
 *              regular file, is fine
 * @param msg   on TD_EINVAL, one line naming the file (may be NULL)
 * @param cap   size of @p msg in bytes (the line is cut to fit)
 * @return TD_OK, or TD_EINVAL if @p path is that file (or NULL).
 */
TD_API int td_options_check_output(const td_options *o, const char *path, char *msg, size_t cap);

/** How an option's value is written (td_option_info.type). */
typedef enum td_option_type {
    TD_OPTION_UINT = 0,   /**< an unsigned integer */
    TD_OPTION_SIZE = 1,   /**< a byte count with td_parse_size() suffixes */
    TD_OPTION_REAL = 2,   /**< a decimal number ("1.5") */
    TD_OPTION_CHOICE = 3, /**< one of the names in td_option_info.values */
    TD_OPTION_TEXT = 4    /**< free text: a distribution, a file name (tree options) */
} td_option_type;

/**
 * One row of the option table: everything the library knows about an
 * option, for front ends to parse, check and document it from (help, man
 * page, completions).  All strings are static.
 */
typedef struct td_option_info {
    const char *key;          /**< "dedup_block" (the CLI spells it --dedup-block) */
    int type;                 /**< td_option_type */
    const char *value_name;   /**< placeholder for usage lines: "N", "R", "SIZE", "NAME" */
    const char *help;         /**< one line, no final period */
    const char *const *values; /**< TD_OPTION_CHOICE: the names, NULL-terminated; else NULL */
    const char *range;        /**< the valid values, for people: "1 to 1000" */
    const char *default_value; /**< the default, as it would be written: "4096" */
    uint32_t kinds;           /**< bit k is set when the option applies to kind k */
    uint32_t reserved;        /**< 0 */
} td_option_info;

/** Number of rows of the option table. */
TD_API size_t td_option_count(void);

/** Row @p index of the option table (0 .. td_option_count()-1), or NULL. */
TD_API const td_option_info *td_option_get(size_t index);

/** The row for @p key ('-' and '_' alike), or NULL if there is none. */
TD_API const td_option_info *td_option_find(const char *key);

/** Nonzero when option @p opt applies to @p kind. */
TD_API int td_option_applies(const td_option_info *opt, int kind);

/**
 * The candidate closest to @p word by edit distance (at most a third of
 * its length, at least 1), for "did you mean" hints; NULL when none is
 * close.  @p candidates is NULL-terminated.  Pure; thread-safe.
 */
TD_API const char *td_suggest(const char *word, const char *const *candidates);

/**
 * Parse a kind name ("zero", "random", ...) into *kind.
 * @return TD_OK, TD_EKIND if unknown, TD_EINVAL for NULL arguments.
 */
TD_API int td_kind_from_name(const char *name, int *kind);

/** Name of a kind ("zero", "random", ...), or NULL if @p kind is unknown. */
TD_API const char *td_kind_name(int kind);

/**
 * Whether the bytes of @p kind are text meant to be read on a terminal
 * (printable characters and newlines: TD_TEXT), so that front ends can
 * refuse to dump the other, binary kinds onto one.
 * @return 1 for a text kind, 0 for a binary one, TD_EKIND if unknown.
 */
TD_API int td_kind_is_text(int kind);

/**
 * As td_kind_from_name(), writing on failure a line such as
 * "unknown kind 'randm'; did you mean 'random'? (kinds: zero, random, text,
 * compressible)" into @p msg (may be NULL).
 */
TD_API int td_kind_from_name_msg(const char *name, int *kind, char *msg, size_t cap);

/**
 * Parse a size with the suffixes of GNU coreutils' `head -c`, with the same
 * meaning: a plain number is bytes; b is 512; K M G T P E Z Y (also k and
 * m) and KiB MiB GiB TiB PiB EiB ZiB YiB are powers of 1024; KB MB GB TB
 * PB EB ZB YB (also kB mB, and the obsolescent KD MD ...) are powers of
 * 1000.  Z and Y fit only with 0.  "inf" or "unbounded" gives
 * TD_SIZE_UNBOUNDED.  Unlike head, a sign, white space or a bare suffix
 * ("K") is refused.
 * @return TD_OK, TD_ESYNTAX (empty, sign, unknown suffix, junk), TD_ERANGE
 *         (does not fit in 64 bits), TD_EINVAL for NULL arguments.
 */
TD_API int td_parse_size(const char *text, uint64_t *size);

/**
 * As td_parse_size(), and on failure a message for the user in @p msg
 * (may be NULL), for the caller to put after the value: "not a size: a
 * whole number of bytes, with an optional suffix ..." (the valid forms),
 * or "out of range: more than 2^64-1 bytes".  td_options_set_msg() and
 * td_tree_set() explain a size option's unparsable value in the same words.
 * @return as td_parse_size().
 */
TD_API int td_parse_size_msg(const char *text, uint64_t *size, char *msg, size_t cap);

/* ------------------------------------------------------------------------ */
/* Streams                                                                   */
/* ------------------------------------------------------------------------ */

/**
 * A positioned reader over one stream.  Opaque.
 *
 * Memory: a stream holds a small generator state and one buffer, allocated
 * on the first read that needs it: 256 KiB with threads == 1, 1 MiB per
 * thread (at most 8 MiB) otherwise.  With threads != 1 the stream also keeps
 * threads - 1 worker threads until td_stream_free().
 * Thread-safety: one thread at a time per stream; separate streams are
 * independent.
 */
typedef struct td_stream td_stream;

/**
 * Create a stream of @p size bytes (TD_SIZE_UNBOUNDED for endless) of
 * @p kind with seed 0 and default options.
 * @return a stream to release with td_stream_free(), or NULL on failure
 *         (use td_stream_open() to learn why).
 */
TD_API td_stream *td_stream_new(int kind, uint64_t size);

/** As td_stream_new(), with options (NULL means defaults).  The options are
 *  copied; @p o may be freed or changed afterwards. */
TD_API td_stream *td_stream_new_with(int kind, uint64_t size, const td_options *o);

/**
 * Create a stream and report why it failed.
 * @param[out] out  receives the new stream, or NULL on failure
 * @param kind      a td_kind value (an int, so that bad values can be reported)
 * @param size      stream length in bytes, or TD_SIZE_UNBOUNDED
 * @param o         options (copied), or NULL for defaults
 * @return TD_OK, TD_EINVAL, TD_EKIND, TD_ERANGE (bad option values) or TD_ENOMEM.
 */
TD_API int td_stream_open(td_stream **out, int kind, uint64_t size, const td_options *o);

/**
 * Read up to @p cap bytes at the current position into @p buf and advance.
 * @return TD_OK with *out_len > 0; TD_DONE with *out_len == 0 at the end
 *         (also when cap is 0 at the end); TD_EINVAL for NULL arguments; a
 *         negative code on failure (*out_len is then 0).
 *         With cap == 0 before the end: TD_OK and *out_len == 0.
 */
TD_API int td_stream_read(td_stream *s, void *buf, size_t cap, size_t *out_len);

/**
 * Zero-copy iteration: point *chunk at the next bytes of the stream, held in
 * the stream's internal buffer, and advance past them.  The chunk stays valid
 * until the next call on @p s (read, next, seek or free).
 * @return TD_OK with *len > 0; TD_DONE with *len == 0 and *chunk == NULL at
 *         the end; negative on failure.
 */
TD_API int td_stream_next(td_stream *s, const void **chunk, size_t *len);

/**
 * Move to byte @p offset.  Seeking to the end (offset == size) is allowed:
 * the next read returns TD_DONE.  A read right after a seek out of the
 * buffered window costs only its own bytes for zero, random and like, and
 * the blocks that hold it (64 KiB of text) for text and compressible, not a
 * whole buffer: random access costs what it reads.
 * @return TD_OK, TD_ERANGE if offset > size (position unchanged), TD_EINVAL.
 */
TD_API int td_stream_seek(td_stream *s, uint64_t offset);

/** Current position (0 for NULL). */
TD_API uint64_t td_stream_tell(const td_stream *s);

/** Size given at creation (TD_SIZE_UNBOUNDED for endless; 0 for NULL). */
TD_API uint64_t td_stream_size(const td_stream *s);

/** Release a stream and its buffers.  NULL is fine. */
TD_API void td_stream_free(td_stream *s);

/* ------------------------------------------------------------------------ */
/* Stateless access                                                          */
/* ------------------------------------------------------------------------ */

/**
 * Write bytes [offset, offset+len) of the (kind, options) stream into
 * @p buf.  Stateless and thread-safe; with o->threads != 1 the work is split
 * over that many threads (the bytes do not change).
 * @param kind    the kind of stream
 * @param o       options, or NULL for defaults
 * @param offset  stream offset of the first byte wanted
 * @param buf     destination of @p len bytes
 * @param len     number of bytes
 * @return TD_OK; TD_ERANGE if offset+len overflows 2^64; TD_EINVAL, TD_EKIND,
 *         TD_ENOMEM.  len == 0 is TD_OK (buf may then be NULL).
 */
TD_API int td_fill(int kind, const td_options *o, uint64_t offset, void *buf, size_t len);

/**
 * Check that @p buf holds bytes [offset, offset+len) of the stream.
 * Stops at the first difference.
 * @param kind    the kind of stream
 * @param o       options, or NULL for defaults
 * @param offset  stream offset of buf[0]
 * @param buf     the data to check
 * @param len     its length
 * @param[out] first_mismatch  absolute stream offset of the first differing
 *                              byte (may be NULL); untouched on TD_OK
 * @return TD_OK if identical, TD_EMISMATCH if not, or another negative code.
 */
TD_API int td_verify(int kind, const td_options *o, uint64_t offset,
                     const void *buf, size_t len, uint64_t *first_mismatch);

/**
 * As td_verify(), but scans all of @p buf and counts differing bytes.
 * @param kind    the kind of stream
 * @param o       options, or NULL for defaults
 * @param offset  stream offset of buf[0]
 * @param buf     the data to check
 * @param len     its length
 * @param[out] first_mismatch  as in td_verify() (may be NULL)
 * @param[out] count            number of differing bytes (may be NULL; 0 on TD_OK)
 */
TD_API int td_verify_count(int kind, const td_options *o, uint64_t offset,
                           const void *buf, size_t len,
                           uint64_t *first_mismatch, uint64_t *count);

/**
 * Split [0, @p size) into @p parts contiguous ranges for ranks, workers or
 * files, and give range @p index.  Every range starts at a multiple of
 * @p align; all ranges but the last non-empty one have the same length
 *     P = round_up(ceil(size / parts), align)
 * so range i is [min(i*P, size), min((i+1)*P, size)).  Ranges 0..parts-1
 * are disjoint and, concatenated in order, cover [0, size) exactly once;
 * trailing ranges may be empty (then *part_offset == size).
 * Fixed-size shards of S bytes: parts = ceil(size / S), align = S gives P == S.
 * Pure arithmetic; thread-safe.
 * @return TD_OK; TD_EINVAL for NULL outputs, parts == 0, align == 0 or
 *         index >= parts; TD_ERANGE if size is TD_SIZE_UNBOUNDED.
 *         Outputs are untouched on failure.
 */
TD_API int td_split_range(uint64_t size, uint64_t parts, uint64_t align, uint64_t index,
                          uint64_t *part_offset, uint64_t *part_len);

/**
 * As td_write_file(), but the file holds bytes [@p offset, offset+size) of
 * the stream (one shard of a larger data set; td_write_file() is offset 0).
 * @return as td_write_file(); TD_ERANGE also if offset+size overflows 2^64.
 */
TD_API int td_write_file_at(const char *path, int kind, uint64_t offset, uint64_t size,
                            const td_options *o);

/**
 * Write the first @p size bytes of the stream to @p path (a fixture in one
 * call), following the rules of td_output: a regular file is replaced only
 * once the new one is complete, a device or FIFO is written into, nothing
 * is left behind on failure.
 * @return TD_OK; TD_EIO (errno set) on a system error; TD_ERANGE if size is
 *         TD_SIZE_UNBOUNDED; TD_EINVAL, TD_EKIND, TD_ENOMEM.
 */
TD_API int td_write_file(const char *path, int kind, uint64_t size, const td_options *o);


/* ------------------------------------------------------------------------ */
/* Progress, files and file descriptors                                      */
/* ------------------------------------------------------------------------ */

/**
 * A progress callback for long calls: called with the number of bytes done
 * so far, at least every 16 MiB and whenever a system call was interrupted
 * by a signal (so a front end can act on Ctrl-C at once).  Returning
 * nonzero stops the call, which then cleans up and returns TD_ECANCELED.
 * Called on the thread that made the call.
 */
typedef int (*td_progress_fn)(void *ctx, uint64_t done);

/** td_io_options.flags: write into the file itself, created if missing and
 *  truncated, instead of through a temporary: a failure then leaves the
 *  bytes written so far (the CLI's --keep-partial). */
#define TD_IO_IN_PLACE 1u
/** td_io_options.flags (td_output_open): make the temporary a named file
 *  (td_output_temp_path()) even where an unnamed O_TMPFILE would do, so
 *  that other processes can open it. */
#define TD_IO_NAMED_TEMP 2u

/** How a long call reports progress and writes files.  Initialise with
 *  td_io_options_init(). */
typedef struct td_io_options {
    uint32_t flags;          /**< TD_IO_IN_PLACE, TD_IO_NAMED_TEMP */
    uint32_t reserved32;     /**< reserved, 0 */
    td_progress_fn progress; /**< or NULL */
    void *ctx;               /**< passed to progress */
    uint64_t reserved[6];    /**< reserved, 0 */
} td_io_options;

/** Set *io to no flags and no callback.  NULL is ignored. */
TD_API void td_io_options_init(td_io_options *io);

/**
 * As td_fill(), calling io->progress between pieces of at most 16 MiB; a
 * nonzero return stops with TD_ECANCELED (buf is then partly filled).
 * io may be NULL.
 */
TD_API int td_fill_ex(int kind, const td_options *o, uint64_t offset, void *buf, size_t len,
                      const td_io_options *io);

/**
 * An output file that never loses what was there before.  Opaque.
 *
 * What happens depends on what @p path names (symlinks are followed):
 *   - a regular file, or nothing yet: the data goes to a temporary file in
 *     the same directory (an unnamed O_TMPFILE where the file system has
 *     it, so that even SIGKILL leaves nothing; otherwise a hidden
 *     ".tdtmp-XXXXXXXXXXXX" file), which td_output_commit() puts in place
 *     with one rename, after fsync when it replaces a file; the new file
 *     keeps the old one's mode, extended attributes (ACL, SELinux label,
 *     user.*; not security.capability) and, when run as root, owner, as far
 *     as the file system and the caller's rights allow.  A symlink
 *     stays and the file it points to is replaced; another user's symlink
 *     in a sticky world-writable directory (/tmp) is not followed, nor is
 *     another user's file there replaced, unless it is the directory
 *     owner's (EACCES, as the kernel's fs.protected_symlinks and
 *     fs.protected_regular).  td_output_abort() or any
 *     failure leaves the old file untouched;
 *   - a device, FIFO or socket, or anything reached through /proc:
 *     written into directly, never replaced or removed; one of the
 *     caller's own descriptors (/dev/stdout, /dev/fd/N, /proc/self/fd/N)
 *     through a duplicate of it, with its offset, O_APPEND and access mode;
 *   - with TD_IO_IN_PLACE: the regular file itself, truncated first.
 */
typedef struct td_output td_output;

/**
 * Open an output for @p path.  @p flags: TD_IO_IN_PLACE, TD_IO_NAMED_TEMP.
 * @return TD_OK; TD_EIO with errno (cannot create the temporary, the path
 *         is a directory, ...); TD_EINVAL; TD_ENOMEM.
 */
TD_API int td_output_open(td_output **out, const char *path, uint32_t flags);

/** The file descriptor to write to (for pwrite() or a write loop of one's own). */
TD_API int td_output_fd(const td_output *out);

/** Path of the named temporary file, or NULL (unnamed temporary, or the
 *  data goes into the path itself).  For a signal handler that must
 *  unlink() it, and for other processes to open. */
TD_API const char *td_output_temp_path(const td_output *out);

/** Nonzero when the data goes to a temporary that replaces the path on
 *  td_output_commit(). */
TD_API int td_output_atomic(const td_output *out);

/** Write all @p len bytes (interrupted writes are resumed).
 *  @return TD_OK, TD_EIO (errno), TD_EINVAL. */
TD_API int td_output_write(td_output *out, const void *buf, size_t len);

/**
 * Put the data in place and release @p out (always released).
 * @return TD_OK; TD_EIO with errno (the temporary is then removed and the
 *         old file is untouched).
 */
TD_API int td_output_commit(td_output *out);

/** Drop the data: remove the temporary, leave the path as it was (or, for
 *  direct and in-place outputs, as far as it was written), release @p out. */
TD_API void td_output_abort(td_output *out);

/**
 * Write bytes [@p offset, offset+size) of the stream to @p path with the
 * rules of td_output (td_write_file() is offset 0 with no @p io).
 * @param path     the file (or device, FIFO ...) to write
 * @param kind     the kind of stream
 * @param offset   stream offset of the first byte written
 * @param size     bytes to write
 * @param o        options, or NULL for defaults
 * @param io       progress callback and flags (TD_IO_IN_PLACE), or NULL
 * @param written  if not NULL, receives the bytes written to the file or
 *                 temporary, also on failure
 * @return TD_OK; TD_EIO (errno set); TD_ECANCELED; TD_ERANGE if offset+size
 *         overflows, or for an unbounded size with a file that would be
 *         replaced (it could never complete); TD_EINVAL (also when @p path
 *         is the model or profile file the stream comes from:
 *         td_options_check_output()), TD_EKIND, TD_ENOMEM, or an option
 *         error (checked before any file is touched).
 */
TD_API int td_write_file_ex(const char *path, int kind, uint64_t offset, uint64_t size,
                            const td_options *o, const td_io_options *io, uint64_t *written);

/**
 * Write bytes [@p offset, offset+size) of the stream (size may be
 * TD_SIZE_UNBOUNDED) to the file descriptor @p fd, e.g. standard output.
 * A pipe gets a 1 MiB buffer where the system allows.
 * @return TD_OK; TD_EIO with errno (EPIPE when the reader went away);
 *         TD_ECANCELED; TD_ERANGE; TD_EINVAL; TD_EKIND; TD_ENOMEM.
 */
TD_API int td_write_fd(int fd, int kind, uint64_t offset, uint64_t size, const td_options *o,
                       const td_io_options *io, uint64_t *written);

/* ------------------------------------------------------------------------ */
/* Verification                                                              */
/* ------------------------------------------------------------------------ */

/**
 * What a verification found.  Filled by td_verifier_finish(),
 * td_verify_fd() and td_verify_file(); td_verify_message() words it.
 */
typedef struct td_verify_result {
    uint64_t offset;         /**< stream offset of the first byte of the data */
    uint64_t expected;       /**< bytes expected; TD_SIZE_UNBOUNDED: up to the stream's end */
    uint64_t received;       /**< bytes of data (including any past the expected ones) */
    uint64_t compared;       /**< bytes compared: at most expected */
    uint64_t mismatches;     /**< differing bytes among them */
    uint64_t first_mismatch; /**< position in the data (from 0) of the first
                                  differing byte; meaningful when mismatches > 0 */
    uint64_t missing;        /**< short input: expected - received; else 0 */
    uint64_t extra;          /**< long input: bytes past the expected ones; else 0 */
    int extra_is_lower_bound; /**< nonzero when more may have followed (a pipe
                                   is read only one byte past the end) */
    int status;              /**< TD_OK (identical, right length), TD_EMISMATCH, or
                                  the error that ended the verification */
    uint64_t sampled;        /**< bytes compared at stream offsets that are multiples
                                  of 256 (one in 256, whatever the chunking): the
                                  sample of the three counts below */
    uint64_t sampled_agree;  /**< sampled bytes equal to the stream's */
    uint64_t chance;         /**< sampled bytes that would agree by chance if the
                                  data were unrelated to the stream: the sum over
                                  byte values of (data count × stream count) /
                                  sampled, rounded.  Random data agrees 1 in 256,
                                  sparse data (mostly zero bytes) on most bytes.
                                  Each count sums over pieces verified apart (as
                                  MPI ranks do); the chance is then each piece's */
    uint64_t reserved[3];    /**< reserved, 0 */
} td_verify_result;

/**
 * An incremental verifier: feed the data in any chunks with
 * td_verifier_update(), then td_verifier_finish().  The expected bytes are
 * regenerated in a bounded buffer (as a td_stream's), with the threads of
 * @p o; results do not depend on chunking or threads.  Opaque; one thread
 * at a time per verifier.
 */
typedef struct td_verifier td_verifier;

/**
 * Create a verifier for bytes [@p offset, offset + @p expected_size) of the
 * (kind, options) stream; expected_size may be TD_SIZE_UNBOUNDED (no length
 * check, but data past the stream's last byte, offset 2^64-2, is long).
 * @return TD_OK, TD_EINVAL, TD_EKIND, TD_ERANGE (also for offset+size past
 *         the end of the stream), TD_ENOMEM, or an option error.
 */
TD_API int td_verifier_new(td_verifier **out, int kind, const td_options *o, uint64_t offset,
                           uint64_t expected_size);

/** Compare the next @p len bytes of the data.  Bytes past the expected
 *  ones are counted as extra.  @return TD_OK, TD_EINVAL, TD_ERANGE, TD_ENOMEM. */
TD_API int td_verifier_update(td_verifier *v, const void *buf, size_t len);

/**
 * Finish and fill *result.  The verifier cannot be updated afterwards.
 * @return TD_OK when the data is identical and of the expected length,
 *         TD_EMISMATCH otherwise (differing bytes, short or long), TD_EINVAL.
 */
TD_API int td_verifier_finish(td_verifier *v, td_verify_result *result);

/** Release a verifier.  NULL is fine. */
TD_API void td_verifier_free(td_verifier *v);

/**
 * Add to @p into the result of verifying another piece of the same data,
 * which starts at position @p part_pos of into's data (pieces verified
 * apart: MPI ranks, files of a set, threads).  received, compared,
 * mismatches, missing, extra and the sampled counts add up (the chance
 * too, as each piece's: td_verify_result.chance); first_mismatch becomes
 * the lowest position of a differing byte of either; status is TD_OK when
 * both are, else the lower of the two codes (so that the order of the
 * pieces does not matter).  offset and expected stay into's.  Commutative and associative
 * (any order of pieces gives the same sum), so an MPI reduction can use it
 * as its operation.  A zeroed td_verify_result is the empty sum.
 * @return TD_OK; TD_EINVAL for NULL, or TD_ERANGE if a position passes
 *         2^64 - 1 (nothing is changed then).
 */
TD_API int td_verify_result_merge(td_verify_result *into, const td_verify_result *part,
                                  uint64_t part_pos);

/**
 * One line per finding, for people, naming the data @p name: "NAME differs
 * from the stream: first difference at byte N (stream offset M), K
 * differing bytes in C compared", "NAME is short: R of E bytes, M missing",
 * "NAME is long: more than E bytes (X extra)"; lines are separated by
 * newlines, with no final newline.  For an identical result: "NAME matches the
 * stream: N bytes".  When the data looks unrelated to the stream, the line
 * adds "nearly every byte differs: wrong seed, kind, options or offset?":
 * two thirds or more of the compared bytes differ, or (with 64 sampled
 * bytes or more) sampled_agree exceeds chance by less than a tenth of
 * (sampled - chance), plus three binomial standard deviations.  Sparse
 * data agrees on most bytes by chance; intact data with damage agrees
 * beyond it.  With almost no room above chance (sampled - chance under 16
 * or 1% of sampled: both sides nearly one byte value) only the first cue
 * counts.
 * @return TD_OK; TD_ERANGE if truncated (still NUL-terminated); TD_EINVAL.
 */
TD_API int td_verify_message(const td_verify_result *r, const char *name, char *buf, size_t cap);

/**
 * Verify everything read from @p fd (until end of file, or one byte past
 * the expected bytes) against bytes [@p offset, offset+size) of the stream.
 * A second thread reads ahead while the first compares.  io->progress (io
 * may be NULL) is called with the bytes read so far at least every 8 MiB
 * and every 100 ms while waiting for input.
 * @return TD_OK, TD_EMISMATCH, TD_EIO (errno; *result holds what was
 *         compared before), TD_ECANCELED, or a td_verifier_new() error.
 */
TD_API int td_verify_fd(int fd, int kind, uint64_t offset, uint64_t size, const td_options *o,
                        const td_io_options *io, td_verify_result *result);

/** td_verify_fd() on the file at @p path: the counterpart of td_write_file(). */
TD_API int td_verify_file(const char *path, int kind, uint64_t size, const td_options *o,
                          td_verify_result *result);

/** As td_verify_file(), at a stream offset and with progress (io may be NULL). */
TD_API int td_verify_file_ex(const char *path, int kind, uint64_t offset, uint64_t size,
                             const td_options *o, const td_io_options *io,
                             td_verify_result *result);

/**
 * The name of shard file @p index of a data set cut into files
 * (td_split_range() gives its bytes): "part-000042".  Used by --mpi
 * --files and testdata.dask, so both name the same files.
 * @return TD_OK, TD_EINVAL, TD_ERANGE (truncated).
 */
TD_API int td_shard_name(char *buf, size_t cap, uint64_t index);

/* ------------------------------------------------------------------------ */
/* File trees                                                                */
/* ------------------------------------------------------------------------ */

/**
 * A file tree: many files with sizes drawn from a distribution, laid out
 * in directories of a given depth and fan-out, their bytes shards of one
 * stream.  Fixed entirely by its options (td_tree_set()); docs/format.md,
 * "Trees", specifies exactly how sizes, names and contents are derived.
 *
 * Stateless access: after td_tree_prepare(), td_tree_file() gives the path,
 * size and stream offset of any file alone in O(1), and enumeration never
 * holds a list of the files.  File i holds bytes
 * [i * TD_TREE_STRIDE, i * TD_TREE_STRIDE + size) of the tree's stream
 * (kind, options, seed), so `testdata gen KIND SIZE --offset OFFSET` makes
 * any file alone.  Opaque.  After td_tree_prepare() a tree is immutable and
 * may be used by any number of threads at once.
 */
typedef struct td_tree td_tree;

/** Stream distance between the first bytes of consecutive files (2^36). */
#define TD_TREE_STRIDE (UINT64_C(1) << 36)
/** Largest file of a tree: TD_TREE_STRIDE bytes (64 GiB). */
#define TD_TREE_MAX_FILE_SIZE TD_TREE_STRIDE
/** Most files a tree may have (2^28). */
#define TD_TREE_MAX_FILES (UINT64_C(1) << 28)
/** Deepest directory level (td_tree option "depth"). */
#define TD_TREE_MAX_DEPTH 16u
/** Largest fan-out (td_tree option "fanout"). */
#define TD_TREE_MAX_FANOUT 65536u
/** Room for a relative path of a tree file, with its NUL. */
#define TD_TREE_PATH_MAX 192u
/** Version of the tree profile JSON written by td_tree_scan(). */
#define TD_TREE_PROFILE_VERSION 1

/**
 * Make an empty tree spec with the defaults (100 files of the "default"
 * distribution, random content, seed 0; docs/format.md).
 * @return TD_OK, TD_EINVAL, TD_ENOMEM.
 */
TD_API int td_tree_new(td_tree **out);

/** Release a tree.  NULL is fine. */
TD_API void td_tree_free(td_tree *t);

/**
 * Set one option from strings, as the CLI and bindings do: a tree option
 * of td_tree_option_get() ("files", "total", "sizes", "depth", "fanout",
 * "kind", "like") or a stream option of td_option_get() ("seed", "ratio",
 * ...; "threads" is the number of files written or checked at once).  As
 * in td_options_set(), '-' and '_' are alike and a leading "--" is allowed
 * (messages then name the option so).  Stream options are checked against
 * the kind in td_tree_prepare(), so they may come before "kind".  Not
 * allowed after td_tree_prepare().
 * @param t      the tree
 * @param key    the option
 * @param value  its value, as a command line writes it
 * @param msg    on failure, one line naming the option and its valid values
 *               (may be NULL); untouched on success
 * @param cap    bytes at msg
 * @return TD_OK, TD_EOPTION (unknown key), TD_ESYNTAX, TD_ERANGE, TD_EKIND,
 *         TD_EINVAL (NULL, or the tree is prepared), TD_ENOMEM.
 */
TD_API int td_tree_set(td_tree *t, const char *key, const char *value, char *msg, size_t cap);

/**
 * Resolve the options into the tree: read a "like" profile or an
 * "empirical:FILE" histogram, build the size distribution, the number of
 * files and (with "total") the exact scaling.  Takes O(files) time, O(1)
 * memory.  Idempotent.
 * @return TD_OK; TD_ESYNTAX, TD_ERANGE, TD_EOPTION, TD_EKIND (with a message
 *         naming the option at fault); TD_EIO (a file could not be read;
 *         errno); TD_ENOMEM.
 */
TD_API int td_tree_prepare(td_tree *t, char *msg, size_t cap);

/** Number of files (0 before td_tree_prepare()). */
TD_API uint64_t td_tree_count(const td_tree *t);
/** Sum of the sizes of all files (0 before td_tree_prepare()). */
TD_API uint64_t td_tree_total(const td_tree *t);
/** The kind of every file's bytes (TD_RANDOM by default). */
TD_API int td_tree_kind(const td_tree *t);
/** The stream options of the files' bytes, as resolved by td_tree_prepare().
 *  @return TD_OK or TD_EINVAL (NULL, or not prepared). */
TD_API int td_tree_options(const td_tree *t, td_options *o);
/** Resolved depth and fan-out of the directories.
 *  @return TD_OK or TD_EINVAL (NULL, or not prepared). */
TD_API int td_tree_shape(const td_tree *t, uint32_t *depth, uint32_t *fanout);

/** One file of a tree (td_tree_file()). */
typedef struct td_tree_entry {
    uint64_t index;   /**< 0 .. td_tree_count()-1 */
    uint64_t size;    /**< bytes */
    uint64_t offset;  /**< stream offset of its first byte: index * TD_TREE_STRIDE */
    uint64_t dir;     /**< index of its directory (0 is the top, breadth first) */
    int kind;         /**< the kind of its bytes (with td_tree_options()) */
    int reserved_int; /**< 0 */
    char path[TD_TREE_PATH_MAX]; /**< relative, '/'-separated: "d3/d07/f000042.bin" */
    uint64_t reserved[4]; /**< 0 */
} td_tree_entry;

/**
 * File @p index of a prepared tree.  O(1), stateless, thread-safe.
 * @return TD_OK; TD_ERANGE if index >= td_tree_count(); TD_EINVAL.
 */
TD_API int td_tree_file(const td_tree *t, uint64_t index, td_tree_entry *e);

/** What a tree verification found about one file (td_tree_finding.what). */
typedef enum td_tree_problem {
    TD_TREE_MISSING = 1,   /**< a file of the tree is not there (or is not a regular file) */
    TD_TREE_WRONG_SIZE = 2, /**< its size differs (first_bad: first differing byte, or the
                                 shorter length) */
    TD_TREE_CHANGED = 3,   /**< right size, different bytes (first_bad: the first one) */
    TD_TREE_EXTRA = 4,     /**< an entry in a tree directory that is not a file of the tree */
    TD_TREE_UNREADABLE = 5 /**< could not be opened or read (errno in .error) */
} td_tree_problem;

/** One finding of td_tree_verify(), given to td_tree_io.report. */
typedef struct td_tree_finding {
    int what;            /**< td_tree_problem */
    int error;           /**< TD_TREE_UNREADABLE: the errno */
    uint64_t index;      /**< the file's index (UINT64_MAX for TD_TREE_EXTRA) */
    const char *path;    /**< relative path; valid during the callback */
    uint64_t expected;   /**< expected size */
    uint64_t actual;     /**< size found */
    uint64_t first_bad;  /**< offset in the file of the first wrong byte */
    uint64_t mismatches; /**< differing bytes among those compared */
} td_tree_finding;

/**
 * One line for people about a finding, naming the problem and the first
 * bad offset: "missing: d1/f03.bin (4096 bytes)", "wrong size: d1/f03.bin
 * is 100 of 4096 bytes, first bad byte at 100", "changed: ... first
 * difference at byte 17, 3 differing bytes", "extra: d1/notes.txt".
 * @return TD_OK, TD_ERANGE (truncated), TD_EINVAL.
 */
TD_API int td_tree_finding_message(const td_tree_finding *f, char *buf, size_t cap);

/** td_tree_io.flags: td_tree_write() first verifies an existing file and
 *  leaves it alone when it is right (a rerun completes an interrupted tree). */
#define TD_TREE_RESUME 1u
/** td_tree_io.flags: td_tree_verify() does not look for extra entries. */
#define TD_TREE_NO_EXTRA 2u
/** td_tree_io.flags: td_tree_verify() only looks for extra entries (for a
 *  caller that checks the files in parts, such as --mpi). */
#define TD_TREE_EXTRA_ONLY 4u

/** Progress of a tree call: files and bytes done so far.  Nonzero stops it
 *  (TD_ECANCELED).  Called on the calling thread. */
typedef int (*td_tree_progress_fn)(void *ctx, uint64_t files, uint64_t bytes);
/** A finding of td_tree_verify(), in the order of the files (extra entries
 *  after them, directory by directory, names sorted).  Nonzero stops. */
typedef int (*td_tree_report_fn)(void *ctx, const td_tree_finding *f);

/** How td_tree_write() and td_tree_verify() run.  td_tree_io_init() first. */
typedef struct td_tree_io {
    uint32_t flags;      /**< TD_TREE_RESUME, TD_TREE_NO_EXTRA */
    uint32_t threads;    /**< files handled at once; 0 (default): the tree's
                              "threads" option, whose 0 means all cores */
    uint64_t first;      /**< first file to handle (a part of the tree: --mpi, Dask) */
    uint64_t count;      /**< files to handle from @c first; UINT64_MAX: all (default) */
    td_tree_progress_fn progress; /**< or NULL; called at least every 64 files or 16 MiB */
    td_tree_report_fn report;     /**< or NULL */
    void *ctx;           /**< passed to both */
    uint64_t reserved[4]; /**< 0 */
} td_tree_io;

/** Set *io to its defaults (all files, no callbacks).  NULL is ignored. */
TD_API void td_tree_io_init(td_tree_io *io);

/** Counts of a tree call. */
typedef struct td_tree_result {
    uint64_t files;      /**< files handled */
    uint64_t bytes;      /**< bytes written or checked */
    uint64_t written;    /**< td_tree_write: files written */
    uint64_t skipped;    /**< td_tree_write with TD_TREE_RESUME: files already right */
    uint64_t ok;         /**< td_tree_verify: files that are right */
    uint64_t missing;    /**< TD_TREE_MISSING findings */
    uint64_t wrong_size; /**< TD_TREE_WRONG_SIZE findings */
    uint64_t changed;    /**< TD_TREE_CHANGED findings */
    uint64_t extra;      /**< TD_TREE_EXTRA findings */
    uint64_t unreadable; /**< TD_TREE_UNREADABLE findings */
    int error;           /**< td_tree_write: errno of the first failure */
    int reserved_int;    /**< 0 */
    uint64_t reserved[4]; /**< 0 */
} td_tree_result;

/**
 * Write the files of @p t (or the part io->first, io->count) under @p dir,
 * made if missing, with the rules of td_output: each file appears complete
 * or not at all (an unnamed O_TMPFILE linked in, or a temporary renamed),
 * an existing file of the tree is replaced atomically (with
 * TD_TREE_RESUME: verified first and kept when right), and nothing else in
 * @p dir is touched.  No symlink below @p dir is followed: one where a file
 * or directory of the tree should be is an error (TD_EIO; td_tree_verify()
 * reports it missing).  The text model or profile file the tree's data is
 * generated from is never replaced, should it sit in @p dir under a file's
 * name (TD_EIO, errno EEXIST, that file in @p path_buf).  Files are written
 * by io->threads threads at once.
 * @param t         a prepared tree
 * @param dir       the top directory
 * @param io        threads, part, flags and callbacks, or NULL for defaults
 * @param result    if not NULL, receives the counts
 * @param path_buf  if not NULL, receives the path at fault on TD_EIO
 *                  (relative to dir, or dir itself)
 * @param cap       bytes at path_buf
 * @return TD_OK; TD_EIO (errno, also in result->error); TD_ECANCELED;
 *         TD_EINVAL (not prepared, NULL); TD_ENOMEM.
 */
TD_API int td_tree_write(const td_tree *t, const char *dir, const td_tree_io *io,
                         td_tree_result *result, char *path_buf, size_t cap);

/**
 * Check the files of @p t (or a part) under @p dir: every file present,
 * of the right size and bytes; and (for the whole tree, unless
 * TD_TREE_NO_EXTRA) nothing else in the tree's directories.  Each problem
 * goes to io->report in order.
 * @return TD_OK when all is right; TD_EMISMATCH when anything was found;
 *         TD_ECANCELED; TD_EINVAL; TD_ENOMEM; TD_EIO (@p dir unreadable).
 */
TD_API int td_tree_verify(const td_tree *t, const char *dir, const td_tree_io *io,
                          td_tree_result *result);

/**
 * Scan the tree under @p dir (sizes, depth and fan-out; never contents)
 * into a tree profile: a small JSON document (docs/format.md, "Tree
 * profiles") that the option "like" reproduces.  Symlinks are not followed.
 * @param dir  the top directory
 * @param io   io->progress is called every 4096 files (io may be NULL)
 * @param buf  receives the NUL-terminated JSON
 * @param cap  bytes at buf
 * @param len  receives its length (also the length needed on TD_ERANGE)
 * @return TD_OK; TD_ERANGE (buf too small: 256 KiB always suffice); TD_EIO
 *         (errno); TD_EINVAL; TD_ECANCELED (io->progress); TD_ENOMEM.
 */
TD_API int td_tree_scan(const char *dir, const td_tree_io *io, char *buf, size_t cap,
                        size_t *len);

/** Number of rows of the tree option table (files, total, sizes ...). */
TD_API size_t td_tree_option_count(void);
/** Row @p index of the tree option table, or NULL.  Its kinds field has
 *  every kind's bit. */
TD_API const td_option_info *td_tree_option_get(size_t index);
/** The tree option row for @p key ('-' and '_' alike), or NULL. */
TD_API const td_option_info *td_tree_option_find(const char *key);

/**
 * One codec's measure of how closely generated data compresses like the
 * data it was made from: a text model's corpus
 * (td_model_builder_fidelity()) or a profile's sample
 * (td_profile_fidelity()).
 */
typedef struct td_fidelity_t {
    const char *label;        /**< the codec: "lz4 -1", "zstd -3", "gzip -6", "lz4 -9" or "bzip2 -9" (static) */
    double error;             /**< generated ratio / sample_ratio - 1 (> 0: the generated data compresses more) */
    double sample_ratio;      /**< the corpus's or sample's ratio under the codec */
    uint64_t generated_bytes; /**< bytes of generated data measured */
    uint64_t sample_bytes;    /**< bytes of the corpus or sample measured: its first ones */
    uint64_t reserved[2];     /**< 0 */
} td_fidelity_t;

/** How far off (|error| of a td_fidelity_t) a codec is named in a note:
 *  td_model_builder_note(), and the line `testdata profile` prints. */
#define TD_FIDELITY_NOTE_OFF 0.10

/* ------------------------------------------------------------------------ */
/* Text models                                                               */
/* ------------------------------------------------------------------------ */

/**
 * A text model: what TD_TEXT learns from a corpus (words, how they follow
 * one another, punctuation, sentence and paragraph shape, line layout) and
 * generates from.  Models are immutable and reference-counted: any number
 * of threads may use one at once.  Their file format (versioned, with a
 * checksum) is specified in docs/format.md, section "Text models"; the
 * content of a model is part of the TD_TEXT key, so two different models
 * never give the same bytes.
 */
typedef struct td_model_builder td_model_builder;

/** Facts about a model (td_model_describe()). */
typedef struct td_model_info {
    uint32_t format_version; /**< version of the model file format */
    uint32_t words;          /**< words in the vocabulary (seen at least twice) */
    uint32_t separators;     /**< distinct separators (punctuation and spaces) */
    uint32_t char_states;    /**< states of the character model of rare words */
    uint64_t size;           /**< bytes of the model file */
    uint8_t hash[32];        /**< BLAKE2b-256 of the model's content */
    uint32_t cache_mu;       /**< how often text continues a recent phrase, in 1/65536
                                  (the continuation cache; calibrated on the corpus) */
    uint32_t copy_mu;        /**< how often it goes on copying once it does, in 1/65536 */
    uint32_t run_share;      /**< share of the corpus's bytes in repeated lines, in 1/65536,
                                  which text copies as runs (docs/format.md, text, "Runs");
                                  0: none (under 10% of the corpus: prose) */
    uint32_t reserved32;     /**< reserved, 0 */
    uint64_t reserved[2];    /**< reserved, 0 */
} td_model_info;

/**
 * Start building a model.  Feed it text with td_model_builder_update() and
 * get the model from td_model_builder_finish().
 * @return TD_OK, TD_EINVAL (NULL), TD_ENOMEM.
 */
TD_API int td_model_builder_new(td_model_builder **out);

/**
 * Let the builder use up to @p threads threads (0: all cores; the default
 * is 1, the calling thread only).  With two or more and a corpus of at
 * least 512 KiB, the calibration that td_model_builder_finish() and
 * td_model_builder_save() run compresses the corpus on a second thread
 * while the model file is written and compiled, and splits each text it
 * generates and each pair of compressors it measures between the two: a
 * build of 1-3 MB took 15-26% less wall time on a 2-vCPU VM (whose two
 * vCPUs give about 1.4x one), for up to a fifth more CPU time.  The model
 * does not depend on it.  At most two are used; the second exists only
 * during finish or save.
 * @return TD_OK; TD_EINVAL for NULL or a finished builder.
 */
TD_API int td_model_builder_set_threads(td_model_builder *b, unsigned threads);

/**
 * Feed @p len bytes of corpus text (UTF-8, any language; LF, CRLF or CR line
 * ends).  Pieces may be cut anywhere, even inside a character.  Paragraphs
 * are separated by blank lines.
 * @return TD_OK; TD_EUTF8 if the text is not valid UTF-8 (the builder then
 *         fails for good; td_model_builder_message() says where);
 *         TD_ENOMEM; TD_EINVAL for NULL arguments or a finished builder
 *         (after td_model_builder_finish() or td_model_builder_save()).
 */
TD_API int td_model_builder_update(td_model_builder *b, const void *buf, size_t len);

/**
 * End one document (one corpus file): what follows starts a new paragraph.
 * @return TD_OK, or the builder's error; TD_EINVAL for NULL or a finished
 *         builder.
 */
TD_API int td_model_builder_break(td_model_builder *b);

/**
 * Feed everything read from @p fd (to its end) as one document: the
 * td_model_builder_update() calls and td_model_builder_break() the front
 * ends would otherwise write themselves.
 * @return TD_OK; TD_EIO (errno set) on a read error; TD_EUTF8; TD_ENOMEM;
 *         TD_EINVAL.
 */
TD_API int td_model_builder_add_fd(td_model_builder *b, int fd);

/** As td_model_builder_add_fd(), from the file @p path (opened and closed
 *  here).  @return as td_model_builder_add_fd(); TD_EIO if it cannot be opened. */
TD_API int td_model_builder_add_file(td_model_builder *b, const char *path);

/**
 * Finish: count, write and compile the model.  The continuation cache
 * (how often text repeats a recent phrase) is calibrated on the corpus: the
 * builder keeps the first 4 MiB of input, generates text of that size from
 * the model and compares how it compresses under lz4 and zstd -3 with the
 * corpus (docs/format.md, "Building a model").  The builder stays valid
 * (free it with td_model_builder_free()); finish may be called once.
 * @param b         the builder
 * @param[out] out  the new model (release with td_model_free()), NULL on failure
 * @return TD_OK; TD_ECORPUS if the corpus is empty or too small (under
 *         10 KiB, or fewer than 16 words seen twice); TD_EUTF8 (from an
 *         earlier update); TD_ENOMEM; TD_EINVAL.
 */
TD_API int td_model_builder_finish(td_model_builder *b, td_model **out);

/**
 * Finish and write the model file to @p path (the file
 * td_model_builder_finish() then td_model_save() would write, without
 * handing back a model).  The file is replaced atomically, as by
 * td_model_save().  Call this or td_model_builder_finish(), once; after
 * TD_EIO, save may be called again (the model is not built again).  A
 * @p path that is one of the regular files the builder read (the same
 * file, by device and inode, through any name) is refused before anything
 * is built or written, so a corpus file is never replaced by its model.
 * @return as td_model_builder_finish(); TD_EIO (errno set) if the file
 *         cannot be written; TD_EINVAL if @p path is NULL or empty, or a
 *         corpus file (td_model_builder_message() says so; the builder
 *         stays usable and save may be called again with another path).
 */
TD_API int td_model_builder_save(td_model_builder *b, const char *path);

/** Number of codecs td_model_builder_fidelity() reports. */
#define TD_MODEL_FIDELITY_CODECS 2

/**
 * How closely text from the model that td_model_builder_finish() or
 * td_model_builder_save() built compresses like its corpus, for codec @p i
 * from 0 to TD_MODEL_FIDELITY_CODECS - 1: lz4 -1 (a frame) and zstd -3.
 * This is the calibration's own measure: text of the size of the corpus's
 * first bytes (at most 4 MiB), at seed 0 and the rate the calibration
 * chose, against those bytes.  The calibration brings the mean of the two
 * errors towards 0 within the rates it may choose, so a poor fit shows
 * either as a spread (text that compresses more than its corpus under
 * lz4 -1, a 64 KiB window, and less under zstd -3, whose window is MiBs:
 * the corpus likely repeats whole lines or pages far apart, as manual pages and
 * boilerplate do, longer or further back than the model's copies of lines
 * make, or the model has none: under 10% of the corpus) or as both errors of one
 * sign (no rate in the range repeats as much, or as little, as the
 * corpus).  Errors under other codecs and at other sizes: compress
 * generated text (td_analyzer, or `testdata analyze`).
 * @return TD_OK; TD_ERANGE before the model is built, or when it was not
 *         calibrated; TD_EINVAL (NULL, bad @p i).
 */
TD_API int td_model_builder_fidelity(const td_model_builder *b, int i, td_fidelity_t *out);

/**
 * A warning about the model just built, in one line, or "" when there is
 * none: one of td_model_builder_fidelity()'s codecs is more than
 * TD_FIDELITY_NOTE_OFF (10%) off.
 * Static storage inside the builder: valid until it is freed.
 */
TD_API const char *td_model_builder_note(const td_model_builder *b);

/** What went wrong, in one line (empty when nothing did).  Static storage
 *  inside the builder: valid until it is freed. */
TD_API const char *td_model_builder_message(const td_model_builder *b);

/** Release a builder.  NULL is fine. */
TD_API void td_model_builder_free(td_model_builder *b);

/**
 * Load a model from the bytes of a model file (copied; @p buf may be freed
 * afterwards).  The file is checked completely (checksum, every count and
 * index), so a damaged file is reported, never used.
 * @return TD_OK; TD_EMODEL (not a model, truncated, corrupted);
 *         TD_EMODELVERSION (a format version this library cannot read);
 *         TD_ENOMEM; TD_EINVAL.
 */
TD_API int td_model_load(td_model **out, const void *buf, size_t len);

/** As td_model_load(), from a file: a regular file, or anything else that
 *  can be read to its end (a FIFO, /dev/stdin), up to 4 GiB.  TD_EIO (errno
 *  set: EISDIR for a directory) if it cannot be read. */
TD_API int td_model_load_file(td_model **out, const char *path);

/**
 * Write the model file to @p path (through a temporary file renamed into
 * place).  Loading it gives a model that generates the same bytes.
 * @return TD_OK, TD_EIO (errno set), TD_ENOMEM, TD_EINVAL.
 */
TD_API int td_model_save(const td_model *m, const char *path);

/** Point *buf at the model file's bytes (owned by the model; valid until
 *  it is freed) and set *len.  @return TD_OK or TD_EINVAL. */
TD_API int td_model_data(const td_model *m, const void **buf, size_t *len);

/** Facts about a model.  @return TD_OK or TD_EINVAL. */
TD_API int td_model_describe(const td_model *m, td_model_info *info);

/**
 * The built-in English model (built once per process from data compiled into
 * the library; never freed, and td_model_free() on it does nothing).
 * @return the model, or NULL if memory ran out building it.
 */
TD_API const td_model *td_model_builtin(void);

/** Drop a reference to a model (streams keep their own).  NULL is fine. */
TD_API void td_model_free(td_model *m);

/* ------------------------------------------------------------------------ */
/* Analysis: how compressible is some data?                                  */
/* ------------------------------------------------------------------------ */

/** Compressors measured by the analyzer.  Values are stable. */
typedef enum td_codec {
    TD_CODEC_GZIP = 0, /**< deflate, gzip wrapper, level 6 (zlib): gzip -6, ssh -C */
    TD_CODEC_ZSTD = 1, /**< Zstandard level 3 (libzstd): zstd -3 */
    TD_CODEC_LZ4  = 2, /**< LZ4 frame, default level (liblz4): lz4 -1 */
    TD_CODEC_XZ   = 3  /**< LZMA2 preset 6 in an .xz stream (liblzma): xz -6 */
} td_codec;

/** Number of codecs; valid codecs are 0 .. TD_CODEC_COUNT-1. */
#define TD_CODEC_COUNT 4

/** Default number of bytes the analyzer compresses (see td_analyzer_new). */
#define TD_ANALYZE_DEFAULT_SAMPLE (8u * 1024u * 1024u)

/** Unit of sampling: inputs are compressed in independent blocks of this
 *  many bytes (the last block may be shorter). */
#define TD_ANALYZE_BLOCK (1024u * 1024u)

/** Block size of the analyzer's dedup ratio (td_analysis.dedup_ratio): a
 *  fixed-block deduplicator with 4 KiB blocks, as most file systems and
 *  backup tools default to. */
#define TD_ANALYZE_DEDUP_BLOCK 4096u

/** Short, stable identifier of a codec ("gzip", "zstd", "lz4", "xz"), for
 *  keys in machine-readable output; NULL if @p codec is unknown. */
TD_API const char *td_codec_name(int codec);

/** The equivalent command line ("gzip -6", "zstd -3", "lz4", "xz -6"), for
 *  people; NULL if @p codec is unknown. */
TD_API const char *td_codec_label(int codec);

/**
 * Result of an analysis.  Filled in completely by td_analyzer_finish() and
 * td_analyze_buffer(); the caller owns it (no pointers inside, nothing to
 * free).  The reserved space keeps its size stable across minor versions.
 */
typedef struct td_analysis {
    uint64_t size;        /**< bytes analysed (all bytes given) */
    uint64_t sampled;     /**< bytes that were compressed; == size unless sampled */
    int is_sampled;       /**< nonzero when the ratios come from a sample (sampled < size) */
    int reserved_int;     /**< reserved, 0 */
    double entropy;       /**< Shannon entropy of the byte histogram of all @c size
                               bytes, in bits per byte: 0 (one value) .. 8 (uniform) */
    /** Compression ratio per td_codec: sampled / compressed.  ~1.0 (or a
     *  little below) means incompressible; 0 when size is 0. */
    double ratio[TD_CODEC_COUNT];
    /** Compressed size of the sampled bytes per td_codec, in bytes. */
    uint64_t compressed[TD_CODEC_COUNT];
    /** One line, no newline, explaining what the ratios mean for a transfer
     *  benchmark, e.g. "incompressible: transfer speed reflects the raw
     *  link".  NUL-terminated; produced by the library so that every front
     *  end (CLI, bindings) says the same thing. */
    char verdict[256];
    /** Complete TD_ANALYZE_DEDUP_BLOCK-byte blocks of the input, at
     *  offsets 0, 4096, ... (a shorter last block is not counted). */
    uint64_t dedup_blocks;
    /** Distinct blocks among them: exact while there are at most 131072
     *  (512 MiB of distinct data), else an estimate (dedup_is_estimate). */
    uint64_t dedup_unique;
    /** dedup_blocks / dedup_unique: how many times fewer blocks a
     *  fixed-block deduplicator stores (1: no duplicates; what
     *  td_options.dedup asks a stream for); 0 when there is no complete
     *  block.  Every byte counts, not only the sample. */
    double dedup_ratio;
    /** Nonzero when dedup_unique is estimated from a hash sample of the
     *  blocks (bounded memory, under 4 MiB; relative error typically below
     *  1 %). */
    int dedup_is_estimate;
    /** Nonzero when the data compresses like synthetic data: it compresses
     *  at least 1.5x under gzip -6 and lz4 gets at least 90% of gzip -6's
     *  ratio.  On real data of that ratio lz4 gets 53-78% of gzip's (text,
     *  HTML, source, spreadsheets, protobuf, URLs, binaries; docs/benchmarks.md)
     *  and compressors run several times slower per byte, so a benchmark of
     *  a compressing path fed with such data reports too high a throughput.
     *  The verdict says so. */
    int synthetic;
    /** Thread CPU time each codec spent compressing the sampled bytes, in
     *  nanoseconds (timing varies from run to run; the ratios do not). */
    uint64_t cpu_ns[TD_CODEC_COUNT];
    /** Compression speed per codec: sampled bytes per second of
     *  cpu_ns, in MB/s (10^6 bytes); 0 when nothing was compressed. */
    double mb_per_s[TD_CODEC_COUNT];
    uint64_t reserved[4]; /**< reserved, 0 */
} td_analysis;

/**
 * How to analyse.  Initialise with td_analyze_options_init(), then set
 * fields; the reserved space keeps the size stable across minor versions.
 */
typedef struct td_analyze_options {
    /** Expected input size when known (a regular file's size), so samples
     *  are spread evenly from the start; TD_SIZE_UNBOUNDED (default) when
     *  unknown (a pipe): the spread then adapts as data arrives.  A wrong
     *  hint only changes where samples are taken, never correctness. */
    uint64_t size_hint;
    /** Bytes to compress at most, rounded up to whole TD_ANALYZE_BLOCK
     *  blocks; default TD_ANALYZE_DEFAULT_SAMPLE; 0 and TD_SIZE_UNBOUNDED
     *  are out of range. */
    uint64_t sample_bytes;
    /** Threads compressing blocks in parallel: 1 (default), 0 = all cores.
     *  Results do not depend on it. */
    uint32_t threads;
    uint32_t reserved32;  /**< reserved, must stay 0 */
    uint64_t reserved[6]; /**< reserved, must stay 0 */
} td_analyze_options;

/** Set every field of *o to its default.  NULL is ignored. */
TD_API void td_analyze_options_init(td_analyze_options *o);

/**
 * Check options as td_analyzer_new() does, with a message for the user:
 * front ends call it to report a bad field in the library's words.
 * @param o    the options to check
 * @param msg  receives the message (NUL-terminated, truncated to @p cap;
 *             empty on success), or NULL
 * @param cap  size of @p msg in bytes
 * @return TD_OK, TD_EINVAL (o is NULL), TD_ERANGE (sample_bytes 0 or
 *         TD_SIZE_UNBOUNDED).
 */
TD_API int td_analyze_options_check(const td_analyze_options *o, char *msg, size_t cap);

/**
 * An incremental analyzer: feed any number of chunks of arbitrary sizes with
 * td_analyzer_update(), then td_analyzer_finish().  The entropy is exact
 * (every byte counts), and so is the dedup ratio up to 512 MiB of distinct
 * 4 KiB blocks (every block counts; beyond, a bounded-memory estimate:
 * td_analysis.dedup_is_estimate); the compression ratios come from compressing
 * independent TD_ANALYZE_BLOCK-byte blocks: all of them when the input is at
 * most sample_bytes long, otherwise about sample_bytes worth of blocks spread
 * evenly over the input (the result then has is_sampled set).  Results
 * depend only on the bytes and sample_bytes (and size_hint, which picks the
 * blocks), never on chunking or threads.  Memory stays bounded whatever the
 * input size: about 20 MiB per thread, mostly the xz encoder.  Opaque; one
 * thread at a time per analyzer, distinct analyzers are independent.
 */
typedef struct td_analyzer td_analyzer;

/**
 * Create an analyzer.
 * @param[out] out  receives the analyzer (NULL on failure); release it with
 *                  td_analyzer_free()
 * @param o         options, or NULL for defaults; copied
 * @return TD_OK, TD_EINVAL (out is NULL), TD_ERANGE (sample_bytes out of
 *         range: td_analyze_options_check()), TD_ENOMEM.
 */
TD_API int td_analyzer_new(td_analyzer **out, const td_analyze_options *o);

/**
 * Feed the next @p len bytes of the input (len 0 is fine, buf may then be NULL).
 * @return TD_OK; TD_EINVAL (NULL analyzer, or NULL buf with len > 0, or
 *         called after td_analyzer_finish()); TD_ERANGE if the total would
 *         pass 2^64-1; TD_ENOMEM if a compressor failed to allocate.
 */
TD_API int td_analyzer_update(td_analyzer *a, const void *buf, size_t len);

/**
 * Finish: compress the pending block, compute entropy, ratios and verdict
 * into *result.  The analyzer cannot be updated afterwards (free it).
 * @return TD_OK, TD_EINVAL (NULL argument, or finished twice), TD_ENOMEM.
 */
TD_API int td_analyzer_finish(td_analyzer *a, td_analysis *result);

/** Release an analyzer.  NULL is fine. */
TD_API void td_analyzer_free(td_analyzer *a);

/**
 * One-call analysis of a buffer (new + update + finish + free).  Thread-safe.
 * @param buf     the data (not modified, not retained)
 * @param len     its length in bytes
 * @param o       options or NULL for defaults; size_hint is taken from @p len
 * @param[out] result  the analysis
 * @return as td_analyzer_new/update/finish; TD_EINVAL if result is NULL or
 *         buf is NULL with len > 0.
 */
TD_API int td_analyze_buffer(const void *buf, size_t len, const td_analyze_options *o,
                             td_analysis *result);

/**
 * Analyse everything read from @p fd (until end of file) with an analyzer:
 * the counterpart of td_verify_fd() for the CLI's `analyze` and Python's
 * testdata.analyze().  For a regular file, its size is the size hint unless
 * @p o gives one.  io->progress (io may be NULL) is called with the bytes
 * read so far at least every 8 MiB and when a read was interrupted.
 * @return TD_OK; TD_EIO (errno); TD_ECANCELED; TD_EINVAL; TD_ENOMEM; TD_ERANGE.
 */
TD_API int td_analyze_fd(int fd, const td_analyze_options *o, const td_io_options *io,
                         td_analysis *result);

/** td_analyze_fd() on the file at @p path (opened read-only).
 *  @return as td_analyze_fd(); TD_EIO with errno when it cannot be opened. */
TD_API int td_analyze_file(const char *path, const td_analyze_options *o,
                           const td_io_options *io, td_analysis *result);

/** Room that td_analysis_json() and td_analysis_json_error() need at most
 *  for a file name of @p file_len bytes (each byte may take 6 escaped). */
#define TD_ANALYSIS_JSON_MAX(file_len) (6 * (size_t)(file_len) + 4096)

/**
 * The analysis as one JSON object on one line, as `testdata analyze --json`
 * prints it (and Python's testdata.analyze() returns it): the keys file,
 * size, entropy, sampled, sampled_bytes, ratios and compressed (objects
 * keyed by td_codec_name()), dedup (block, blocks, unique, ratio,
 * estimated) and verdict.  @p file is the input's name (null in JSON when
 * NULL); bytes that are not UTF-8 become \\udcXX (Python's surrogateescape,
 * so os.fsencode() gives the name back).  Numbers never depend on the
 * locale.  Thread-safe.
 * @return TD_OK; TD_ERANGE if truncated (NUL-terminated); TD_EINVAL.
 */
TD_API int td_analysis_json(const td_analysis *r, const char *file, char *buf, size_t cap);

/**
 * The JSON object analyze --json gives for an input that could not be
 * read: {"file": FILE, "error": ERROR}.
 * @return TD_OK; TD_ERANGE if truncated; TD_EINVAL.
 */
TD_API int td_analysis_json_error(const char *file, const char *error, char *buf, size_t cap);

/**
 * Write the one-line verdict for @p r (as in r->verdict) into @p buf, for
 * callers that built or changed a td_analysis themselves.  Always
 * NUL-terminates when cap > 0.
 * @return TD_OK; TD_EINVAL for NULL arguments or cap == 0; TD_ERANGE if the
 *         line was truncated.
 */
TD_API int td_analysis_verdict(const td_analysis *r, char *buf, size_t cap);

/* ------------------------------------------------------------------------ */
/* Profiles: data like yours (TD_LIKE)                                       */
/* ------------------------------------------------------------------------ */

/**
 * The statistics of a sample from which TD_LIKE generates data that
 * compresses like it: an LZ77 parse's joint distribution of literal runs,
 * match lengths and offsets, literal byte models by context and position,
 * plus the sample's codec fingerprint.  A profile holds counts, never the
 * sample's content (no run of 16 sample bytes appears in its JSON form).
 * Its JSON form ("libtestdata-profile", version 1, at most 64 KiB) is
 * specified in docs/format.md.  Immutable once built or loaded, so one
 * profile may be shared by any number of threads and streams.  Opaque.
 */
typedef struct td_profile td_profile;

/** An incremental profile builder (like td_analyzer).  Opaque; one thread
 *  at a time per builder. */
typedef struct td_profile_builder td_profile_builder;

/** Default number of sample bytes the builder keeps and parses. */
#define TD_PROFILE_DEFAULT_SAMPLE (8u * 1024u * 1024u)
/** Largest JSON form of a profile, in bytes. */
#define TD_PROFILE_MAX_JSON (64u * 1024u)

/**
 * How td_profile_builder_finish() models a sample (td_profile_options.model;
 * docs/format.md, "like").
 */
enum td_profile_model {
    /** The LZ model or a context model, whichever makes data closer to the
     *  sample under lz4 -1, gzip -6, lz4 -9 and bzip2 -9 (the sum of their
     *  errors; the builder generates and measures 256 KiB of each
     *  candidate: 0.5-3 s of CPU more per profile). */
    TD_PROFILE_MODEL_AUTO = 0,
    /** LZ statistics (matches and literals): the only model before byte
     *  format 8; best for structured and binary data. */
    TD_PROFILE_MODEL_LZ = 1,
    /** Byte contexts of orders 0..4 with copies of long repeats (byte format
     *  8), the best of the builder's settings: text of any language. */
    TD_PROFILE_MODEL_CONTEXT = 2,
    TD_PROFILE_MODEL_COUNT = 3 /**< the number of models */
};

/** The name of a td_profile_model: "auto", "lz" or "context"; NULL for any other value. */
TD_API const char *td_profile_model_name(int model);

/**
 * The td_profile_model named `name` ("auto", "lz", "context") into *model.
 * TD_OK, or TD_EINVAL with a message naming the valid values in msg (may be
 * NULL).
 */
TD_API int td_profile_model_parse(const char *name, uint32_t *model, char *msg, size_t msgcap);

/**
 * How to build a profile.  Initialise with td_profile_options_init(); the
 * reserved space keeps the size stable across minor versions.
 */
typedef struct td_profile_options {
    /** Expected input size when known (TD_SIZE_UNBOUNDED if not): regions
     *  are then spread evenly from the start.  Only picks the regions. */
    uint64_t size_hint;
    /** Bytes kept and parsed at most, in regions of 1 MiB (so rounded up to
     *  whole MiB); default TD_PROFILE_DEFAULT_SAMPLE; 0 and
     *  TD_SIZE_UNBOUNDED are out of range. */
    uint64_t sample_bytes;
    /** Nonzero (default): measure the fingerprint (ratio and CPU ns/byte of
     *  gzip -6, zstd -3, lz4, xz -6 on up to 1 MiB of the sample), and with
     *  model TD_PROFILE_MODEL_LZ its fidelity (td_profile_fidelity(); the
     *  other settings measure it to choose the model). */
    uint32_t fingerprint;
    /** Threads for td_profile_builder_finish() (default 1; 0 = all cores;
     *  at most 2 are used): with two, the fingerprint is measured on a
     *  second thread while the model is built, and the context models the
     *  builder tries (TD_PROFILE_MODEL_AUTO, _CONTEXT) are measured two at
     *  a time once the fingerprint is done.  The profile's model does
     *  not depend on it, and the fingerprint's timings are each codec's own
     *  thread CPU time. */
    uint32_t threads;
    /** A name stored in the profile (at most 63 bytes of printable ASCII),
     *  or NULL for none; copied by td_profile_builder_new(). */
    const char *name;
#if UINTPTR_MAX == 0xffffffffu
    uint32_t name_pad_;   /**< keeps the layout of 64-bit builds */
#endif
    /** How to model the sample: a td_profile_model (default
     *  TD_PROFILE_MODEL_AUTO). */
    uint32_t model;
    uint32_t reserved32_; /**< reserved, must stay 0 */
    /** Bytes of the pieces the fingerprint's CPU time is measured on: 0
     *  (default) times the first MiB of the sample as one input; from 1 to
     *  TD_ANALYZE_BLOCK, up to 8 of its first pieces of this size are timed,
     *  each compressed on its own, as a sample of that size is measured
     *  (td_profile_compare() times data this way against a profile whose
     *  sample was under a MiB, so that the costs compare like for like).
     *  The ratios are those of the first MiB either way. */
    uint64_t fingerprint_piece;
    uint64_t reserved[3]; /**< reserved, must stay 0 */
} td_profile_options;

/** Set every field of *o to its default.  NULL is ignored. */
TD_API void td_profile_options_init(td_profile_options *o);

/**
 * Check options as td_profile_builder_new() does, with a message for the
 * user naming the bad field and its valid values: front ends call it
 * before reading any sample.
 * @param o       the options to check
 * @param msg     receives the message (NUL-terminated, truncated to
 *                @p msgcap; empty on success), or NULL
 * @param msgcap  size of @p msg in bytes
 * @return TD_OK, TD_EINVAL (o is NULL, or a name with a byte that is not
 *         printable ASCII), TD_ERANGE (sample_bytes 0 or TD_SIZE_UNBOUNDED,
 *         a name longer than 63 bytes, fingerprint_piece over
 *         TD_ANALYZE_BLOCK).
 */
TD_API int td_profile_options_check(const td_profile_options *o, char *msg, size_t msgcap);

/**
 * Create a builder.
 * @param[out] out  receives the builder (NULL on failure)
 * @param o         options (copied), or NULL for defaults
 * @return TD_OK, TD_EINVAL, TD_ERANGE (sample_bytes 0 or TD_SIZE_UNBOUNDED),
 *         TD_ENOMEM.
 */
TD_API int td_profile_builder_new(td_profile_builder **out, const td_profile_options *o);

/**
 * As td_profile_builder_new(), with a message in @p msg (NUL-terminated,
 * truncated to @p msgcap; empty on success) naming the bad field and its
 * valid values, for a front end to print or raise as it is.
 */
TD_API int td_profile_builder_new_msg(td_profile_builder **out, const td_profile_options *o, char *msg,
                                      size_t msgcap);

/**
 * Feed the next @p len bytes of the sample.  Any chunking of the same bytes
 * gives the same profile.  Memory stays bounded (about sample_bytes plus
 * 40 MiB at finish) whatever the input size.
 * @return TD_OK; TD_EINVAL (NULL builder, NULL buf with len > 0, after
 *         finish); TD_ERANGE (total past 2^64-1); TD_ENOMEM.
 */
TD_API int td_profile_builder_update(td_profile_builder *b, const void *buf, size_t len);

/**
 * Feed everything read from @p fd up to its end (interrupted reads are
 * resumed; the fd is not closed): td_profile_builder_update() over a file,
 * a pipe or stdin, in bounded memory.
 * @return TD_OK; TD_EIO (errno set) on a read error; as
 *         td_profile_builder_update() otherwise.
 */
TD_API int td_profile_builder_update_fd(td_profile_builder *b, int fd);

/**
 * Parse the kept sample and build the profile.  The builder cannot be
 * updated afterwards (free it).  The model depends only on the bytes and
 * the options; the fingerprint's timings are measurements.
 * @param b        the builder
 * @param[out] out  the new profile, to release with td_profile_free()
 * @return TD_OK, TD_ECORPUS (no byte was given: an empty sample has no
 *         statistics to profile), TD_EINVAL (NULL argument, finished
 *         twice), TD_ENOMEM.
 */
TD_API int td_profile_builder_finish(td_profile_builder *b, td_profile **out);

/** Release a builder.  NULL is fine. */
TD_API void td_profile_builder_free(td_profile_builder *b);

/**
 * Load a profile from its JSON form (a strict RFC 8259 reader: malformed or
 * hostile input is rejected, never trusted).
 * @return TD_OK; TD_ESYNTAX (not JSON); TD_EINVAL (not a valid version-1
 *         profile); TD_ERANGE (larger than 64 KiB, numbers or nesting out of
 *         range); TD_ENOMEM.
 */
TD_API int td_profile_load(td_profile **out, const void *buf, size_t len);

/** As td_profile_load(), and on failure writes a one-line explanation
 *  (byte offset and reason) into msg (NUL-terminated when msgcap > 0). */
TD_API int td_profile_load_msg(td_profile **out, const void *buf, size_t len, char *msg,
                               size_t msgcap);

/** Load a profile file.  As td_profile_load(); TD_EIO (errno set) if the
 *  file cannot be read. */
TD_API int td_profile_load_file(td_profile **out, const char *path);

/** As td_profile_load_file(), with a message as in td_profile_load_msg(). */
TD_API int td_profile_load_file_msg(td_profile **out, const char *path, char *msg, size_t msgcap);

/**
 * Write the JSON form of @p p into buf.  *len receives its length (also
 * when buf is too small: call with cap 0 to learn the size).
 * @return TD_OK, TD_ERANGE (cap too small), TD_EINVAL, TD_ENOMEM.
 */
TD_API int td_profile_save(const td_profile *p, void *buf, size_t cap, size_t *len);

/** Write the JSON form of @p p to @p path through td_output (atomic
 *  replacement of a regular file).  TD_OK, TD_EIO (errno), TD_EINVAL, TD_ENOMEM. */
TD_API int td_profile_save_file(const td_profile *p, const char *path);

/**
 * A built-in profile by name ("english", "html", "source", "executable",
 * "json", "database", "office", ...; see td_profile_builtin_name()), or
 * NULL if there is none.  Built-ins are static: td_profile_free() ignores
 * them.  Thread-safe.
 */
TD_API const td_profile *td_profile_builtin(const char *name);

/** Name of built-in profile @p i (0, 1, ...), NULL past the last one. */
TD_API const char *td_profile_builtin_name(unsigned i);

/**
 * As td_profile_builtin(), with a status and a message.
 * @param[out] out  the built-in profile (static: td_profile_free() ignores
 *                  it), or NULL
 * @param name      the built-in's name (td_profile_builtin_name())
 * @param msg       if not NULL, on TD_EINVAL a one-line explanation naming
 *                  the built-in profiles (and the closest one, if any)
 * @param msgcap    size of @p msg (the message is truncated to fit)
 * @return TD_OK; TD_EINVAL if @p name is not a built-in (or NULL);
 *         TD_ENOMEM if the built-ins could not be parsed.
 */
TD_API int td_profile_builtin_msg(const td_profile **out, const char *name, char *msg,
                                  size_t msgcap);

/**
 * A built-in profile if @p name_or_path is the name of one, else the
 * profile file at that path (loaded as by td_profile_load_file_msg()): what
 * the CLI's --profile and Python's profile= take.  Release *out with
 * td_profile_free() either way.
 * @return TD_OK; as td_profile_load_file_msg() (the message names the
 *         built-in profiles when the file does not exist).
 */
TD_API int td_profile_open(td_profile **out, const char *name_or_path, char *msg, size_t msgcap);

/** Release a profile.  NULL and built-in profiles are ignored. */
TD_API void td_profile_free(td_profile *p);

/** The profile's name ("" when it has none; the name of a built-in). */
TD_API const char *td_profile_name(const td_profile *p);

/** BLAKE2b-256 of the canonical form of the profile's model: the part of
 *  the key that makes two profiles give different bytes. */
TD_API int td_profile_digest(const td_profile *p, uint8_t out[32]);

/**
 * The sample's fingerprint as measured when profiling: compression ratio
 * and compressor CPU ns per input byte of @p codec (a td_codec).
 * @return TD_OK; TD_ERANGE if the profile has no fingerprint; TD_EINVAL.
 */
TD_API int td_profile_fingerprint(const td_profile *p, int codec, double *ratio,
                                  double *ns_per_byte);

/** Number of codecs td_profile_fidelity() reports. */
#define TD_PROFILE_FIDELITY_CODECS 4

/**
 * How closely `like` data made from the profile compressed like its sample
 * when td_profile_builder_finish() made it: the measure by which the
 * builder chose the profile's model, for codec @p i, from 0 to
 * TD_PROFILE_FIDELITY_CODECS - 1 (lz4 -1 and -9 as blocks, gzip -6 as a
 * zlib stream, bzip2 -9).  256 KiB of the stream at seed 0 against the
 * sample's first MiB (one-byte 4 KiB blocks and all, as the stream has
 * them too).  A quick estimate: errors at scale and under other codecs
 * come from td_profile_compare() on generated data.  Not part of the profile's
 * JSON: a profile loaded from a file, a built-in one, one of a sample
 * whose first MiB holds fewer than 64 bytes outside one-byte 4 KiB blocks,
 * and one built with model TD_PROFILE_MODEL_LZ and no fingerprint have
 * none.
 * @return TD_OK; TD_ERANGE if the profile has none; TD_EINVAL (bad @p i).
 */
TD_API int td_profile_fidelity(const td_profile *p, int i, td_fidelity_t *out);

/**
 * Data measured against a profile's fingerprint (td_profile_compare()):
 * how closely it compresses like the profile's sample, codec by codec.
 * The caller owns it (no pointers inside).
 */
typedef struct td_profile_comparison {
    /** Bytes measured: the data's first TD_ANALYZE_BLOCK at most, as a
     *  profile's fingerprint measures its sample's. */
    uint64_t bytes;
    /** 0: the cost was timed on the measured bytes as one input.  Else the
     *  profile's sample was shorter than TD_ANALYZE_BLOCK and timed whole,
     *  and the data was timed as up to 8 of its first pieces of this many
     *  bytes (the sample's), each compressed on its own: a longer history
     *  alone makes gzip -6 several times slower per byte. */
    uint64_t piece;
    /** The data's compression ratio per td_codec. */
    double ratio[TD_CODEC_COUNT];
    /** The data's compressor CPU ns per byte per td_codec (a measurement). */
    double ns_per_byte[TD_CODEC_COUNT];
    /** The profile's ratio per td_codec; 0 when it has no fingerprint
     *  (made without one). */
    double ref_ratio[TD_CODEC_COUNT];
    /** The profile's CPU ns per byte per td_codec; 0 when it keeps no
     *  timings (built-ins: timings depend on the machine). */
    double ref_ns_per_byte[TD_CODEC_COUNT];
    uint64_t reserved[4]; /**< 0 */
} td_profile_comparison;

/**
 * Measure data as td_profile_builder_finish() measures a sample's
 * fingerprint, in the profile's regime (td_profile_comparison.piece), and
 * put it beside the profile's fingerprint.  Only the first
 * TD_ANALYZE_BLOCK bytes are compressed; no profile is built.
 * @param ref  the profile (a file's or a built-in)
 * @param buf  the data
 * @param len  its length in bytes
 * @param[out] out  filled in on TD_OK (zeroed on any other result)
 * @return TD_OK; TD_ECORPUS for no data; TD_EINVAL for NULL arguments;
 *         TD_ENOMEM.
 */
TD_API int td_profile_compare(const td_profile *ref, const void *buf, size_t len,
                              td_profile_comparison *out);

/**
 * As td_profile_compare() on what @p fd reads: at most TD_ANALYZE_BLOCK
 * bytes, from its current position (a file, a pipe; the fd is not closed).
 * @param ref  the profile
 * @param fd   a file descriptor open for reading
 * @param[out] out  as td_profile_compare()
 * @return as td_profile_compare(); TD_EIO with errno set on a read error;
 *         TD_EINVAL for a negative fd.
 */
TD_API int td_profile_compare_fd(const td_profile *ref, int fd, td_profile_comparison *out);

/** Room that td_profile_comparison_json() needs at most for a file name of
 *  @p file_len bytes (each byte may take 6 escaped). */
#define TD_PROFILE_COMPARISON_JSON_MAX(file_len) (6 * (size_t)(file_len) + 4096)

/**
 * The comparison as one JSON object on one line, as `testdata profile
 * --check --json` prints it: {"file", "bytes", "piece", "codecs"}, codecs
 * keyed by td_codec_name(), each {"ratio", "ns_per_byte", "profile_ratio",
 * "profile_ns_per_byte", "error" (ratio / profile_ratio - 1), "cost"
 * (ns_per_byte / profile_ns_per_byte)}, null where the profile has no
 * figure.  @p file as in td_analysis_json(); an input that could not be
 * read is td_analysis_json_error()'s object.  Numbers never depend on the
 * locale.  Thread-safe.
 * @return TD_OK; TD_ERANGE if truncated (NUL-terminated); TD_EINVAL.
 */
TD_API int td_profile_comparison_json(const td_profile_comparison *c, const char *file, char *buf,
                                      size_t cap);

/** Facts about a profile (td_profile_info()). */
typedef struct td_profile_info_t {
    uint64_t source_bytes;  /**< bytes the builder was given */
    uint64_t sampled_bytes; /**< bytes it parsed */
    uint32_t doc_bytes;     /**< length of the generator's independent documents */
    uint32_t model;         /**< TD_PROFILE_MODEL_LZ or TD_PROFILE_MODEL_CONTEXT */
    double dedup;           /**< 4 KiB-block dedup ratio of the sample (one-byte blocks excluded) */
    double const4k;         /**< share of the sample's 4 KiB blocks that are one repeated byte */
    uint64_t reserved[4];   /**< 0 */
} td_profile_info_t;

/** Fill *info.  TD_OK or TD_EINVAL. */
TD_API int td_profile_info(const td_profile *p, td_profile_info_t *info);

#ifdef __cplusplus
}
#endif
#endif /* TESTDATA_H */
