/*
 * libtestdata - test data with known, controlled properties.
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

#if defined(_WIN32) && defined(TD_BUILDING_SHARED)
#  define TD_API __declspec(dllexport)
#elif defined(__GNUC__) || defined(__clang__)
#  define TD_API __attribute__((visibility("default")))
#else
#  define TD_API
#endif

/** Library version, as "MAJOR.MINOR.PATCH". */
#define TD_VERSION_MAJOR 0
#define TD_VERSION_MINOR 1
#define TD_VERSION_PATCH 0
#define TD_VERSION_STRING "0.1.0"

/**
 * Version of the byte format.  Bumped whenever the bytes produced for an
 * existing (kind, seed, options) combination change.  Golden vectors in the
 * test suite pin the bytes of this version.
 */
#define TD_FORMAT_VERSION 1

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
    TD_ESYNTAX   = -8   /**< a size or option string could not be parsed */
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

/** What the bytes of a stream look like.  Values are stable; 2 is reserved
 *  for TD_TEXT and 3 for TD_COMPRESSIBLE. */
typedef enum td_kind {
    TD_ZERO   = 0, /**< all zero bytes */
    TD_RANDOM = 1, /**< incompressible pseudo-random bytes (see td_algorithm) */
    TD_COMPRESSIBLE = 3 /**< LZ-shaped bytes compressing by td_options.ratio */
} td_kind;

/** Number of kinds; valid kinds are 0 .. TD_KIND_COUNT-1 (a value with no
 *  kind built in gives TD_EKIND). */
#define TD_KIND_COUNT 4

/** Generator behind TD_RANDOM. */
typedef enum td_algorithm {
    /** ChaCha20 keystream (original variant, 64-bit counter); default. */
    TD_ALG_CHACHA20 = 0,
    /** Non-cryptographic counter-based generator: much faster, equally
     *  incompressible, not suitable where unpredictability matters. */
    TD_ALG_FAST = 1
} td_algorithm;

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
    uint32_t dedup_block;    /**< dedup block size, power of two; default 4096 */
    uint32_t reserved32;     /**< reserved, must stay 0 */
    uint64_t reserved[8];    /**< reserved for future options, must stay 0 */
} td_options;

/** Set every field of *o to its default.  NULL is ignored. */
TD_API void td_options_init(td_options *o);

/**
 * Set one option from strings, as the CLI and bindings do ("ratio", "3").
 * Known keys: seed, threads, algorithm (chacha20|fast), ratio, dedup,
 * dedup_block.  Numbers are decimal (seed also accepts 0x hex); dedup_block
 * accepts size suffixes.
 *
 * @return TD_OK; TD_EOPTION if the key is unknown or does not apply to
 *         @p kind; TD_ESYNTAX if the value cannot be parsed; TD_ERANGE if
 *         it is out of range; TD_EINVAL for NULL arguments or bad kind.
 *         On failure *o is unchanged.
 */
TD_API int td_options_set(td_options *o, int kind, const char *key, const char *value);

/**
 * Check that @p o is valid for @p kind: every value in range.  Called by all
 * functions that take options; exposed so callers can validate early.
 * @return TD_OK, TD_EKIND, TD_EINVAL or TD_ERANGE.
 */
TD_API int td_options_check(int kind, const td_options *o);

/**
 * Parse a kind name ("zero", "random", ...) into *kind.
 * @return TD_OK, TD_EKIND if unknown, TD_EINVAL for NULL arguments.
 */
TD_API int td_kind_from_name(const char *name, int *kind);

/** Name of a kind ("zero", "random", ...), or NULL if @p kind is unknown. */
TD_API const char *td_kind_name(int kind);

/**
 * Parse a size: a plain number is bytes; K M G T P E and KiB MiB GiB TiB PiB
 * EiB are powers of 1024; KB MB GB TB PB EB are powers of 1000 (as in GNU
 * coreutils).  "inf" or "unbounded" gives TD_SIZE_UNBOUNDED.
 * @return TD_OK, TD_ESYNTAX (empty, sign, unknown suffix, junk), TD_ERANGE
 *         (does not fit in 64 bits), TD_EINVAL for NULL arguments.
 */
TD_API int td_parse_size(const char *text, uint64_t *size);

/* ------------------------------------------------------------------------ */
/* Streams                                                                   */
/* ------------------------------------------------------------------------ */

/** A positioned reader over one stream.  Opaque. */
typedef struct td_stream td_stream;

/**
 * Create a stream of @p size bytes (TD_SIZE_UNBOUNDED for endless) of
 * @p kind with seed 0 and default options.
 * @return a stream to release with td_stream_free(), or NULL on failure
 *         (use td_stream_open() to learn why).
 */
TD_API td_stream *td_stream_new(td_kind kind, uint64_t size);

/** As td_stream_new(), with options (NULL means defaults).  The options are
 *  copied; @p o may be freed or changed afterwards. */
TD_API td_stream *td_stream_new_with(td_kind kind, uint64_t size, const td_options *o);

/**
 * Create a stream and report why it failed.
 * @param[out] out  receives the new stream, or NULL on failure
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
 * the next read returns TD_DONE.
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
 * @param o  options, or NULL for defaults
 * @return TD_OK; TD_ERANGE if offset+len overflows 2^64; TD_EINVAL, TD_EKIND,
 *         TD_ENOMEM.  len == 0 is TD_OK (buf may then be NULL).
 */
TD_API int td_fill(td_kind kind, const td_options *o, uint64_t offset, void *buf, size_t len);

/**
 * Check that @p buf holds bytes [offset, offset+len) of the stream.
 * Stops at the first difference.
 * @param[out] first_mismatch  absolute stream offset of the first differing
 *                              byte (may be NULL); untouched on TD_OK
 * @return TD_OK if identical, TD_EMISMATCH if not, or another negative code.
 */
TD_API int td_verify(td_kind kind, const td_options *o, uint64_t offset,
                     const void *buf, size_t len, uint64_t *first_mismatch);

/**
 * As td_verify(), but scans all of @p buf and counts differing bytes.
 * @param[out] first_mismatch  as in td_verify() (may be NULL)
 * @param[out] count            number of differing bytes (may be NULL; 0 on TD_OK)
 */
TD_API int td_verify_count(td_kind kind, const td_options *o, uint64_t offset,
                           const void *buf, size_t len,
                           uint64_t *first_mismatch, uint64_t *count);

/**
 * Write the first @p size bytes of the stream to a new file at @p path (a
 * fixture in one call).  The data goes to a temporary file in the same
 * directory that is renamed over @p path only when complete, so no partial
 * file is left behind on failure.
 * @return TD_OK; TD_EIO (errno set) on a system error; TD_ERANGE if size is
 *         TD_SIZE_UNBOUNDED; TD_EINVAL, TD_EKIND, TD_ENOMEM.
 */
TD_API int td_write_file(const char *path, td_kind kind, uint64_t size, const td_options *o);

#ifdef __cplusplus
}
#endif
#endif /* TESTDATA_H */
