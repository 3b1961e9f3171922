/*
 * SWIG interface over include/testdata.h: the low-level module
 * testdata.capi.  The pleasant API lives in the pure-Python package
 * (bindings/python/testdata/); this file only translates types and errors.
 *
 * Conventions of the generated module
 *   - Built with -threads: every call into the library runs with the GIL
 *     released.  Typemaps (which touch Python objects) run with it held.
 *   - Every function returning a status int raises on a negative code:
 *     ValueError (bad kind, option, value, range), MemoryError, OSError
 *     (TD_EIO, with errno).  The exception carries the code as .td_status.
 *     td_verify/td_verify_count return TD_EMISMATCH instead of raising.
 *     Non-negative codes (TD_OK, TD_DONE) are returned.
 *   - None for a string, a stream or options to be modified raises
 *     TypeError; a wrong type raises TypeError (SWIG's own checks).
 *   - Buffers: (void *buf, size_t len|cap) take any writable, C-contiguous
 *     buffer (bytearray, memoryview, mmap, numpy array ...), held until the
 *     call returns; (const void *buf, size_t len) take any C-contiguous one.
 *   - Pointer outputs (int *kind, uint64_t *size, size_t *out_len, ...)
 *     are returned after the status: rc, value = capi.td_parse_size("1K").
 *   - A td_stream is owned by its Python object, which frees it (there is no
 *     td_stream_free here).  As in C, one stream must not be used by two
 *     threads at once; testdata.Stream serialises its calls.
 */
%module(package="testdata") capi

%begin %{
#define PY_SSIZE_T_CLEAN
%}

%{
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <testdata.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/mman.h>
#endif

/* Large new bytes objects: ask for transparent huge pages, so that the first
 * touch of the memory (by the generator) costs one page fault per 2 MiB
 * instead of per 4 KiB.  Purely advisory; errors are ignored. */
static void td_py_advise_huge(void *p, size_t n)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    const uintptr_t huge = (uintptr_t)2 << 20;
    uintptr_t a = ((uintptr_t)p + huge - 1) & ~(huge - 1);
    uintptr_t e = ((uintptr_t)p + n) & ~(huge - 1);
    if (n >= 4 * huge && e > a)
        (void)madvise((void *)a, e - a, MADV_HUGEPAGE);
#else
    (void)p;
    (void)n;
#endif
}

/* Set the Python exception for a negative status; returns 1 if it did. */
static int td_py_error(int rc, const char *filename)
{
    PyObject *type, *exc;

    if (rc >= 0)
        return 0;
    if (PyErr_Occurred())
        return 1;
    switch (rc) {
    case TD_ENOMEM:
        PyErr_NoMemory();
        return 1;
    case TD_EIO:
        if (errno)
            PyErr_SetFromErrnoWithFilename(PyExc_OSError, filename);
        else
            PyErr_SetString(PyExc_OSError, td_strerror(rc));
        return 1;
    default:
        type = PyExc_ValueError;
        break;
    }
    exc = PyObject_CallFunction(type, "s", td_strerror(rc));
    if (!exc)
        return 1;
    PyObject *code = PyLong_FromLong(rc);
    if (!code || PyObject_SetAttrString(exc, "td_status", code) != 0)
        PyErr_Clear();
    Py_XDECREF(code);
    PyErr_SetObject(type, exc);
    Py_DECREF(exc);
    return 1;
}

/* A td_progress_fn for long calls made with the GIL released: take the GIL
 * and run Python's signal handlers, so Ctrl-C stops generate(), write() and
 * verify() within milliseconds (a pending KeyboardInterrupt stops the call,
 * which cleans up and returns TD_ECANCELED). */
static int td_py_check_signals(void *ctx, uint64_t done)
{
    (void)ctx;
    (void)done;
    PyGILState_STATE st = PyGILState_Ensure();
    int stop = PyErr_CheckSignals() != 0;
    PyGILState_Release(st);
    return stop;
}

static td_io_options td_py_io(uint32_t flags)
{
    td_io_options io;
    td_io_options_init(&io);
    io.flags = flags;
    io.progress = td_py_check_signals;
    return io;
}

/* Thin forwarders that give td_fill / td_stream_read a second Python
 * signature returning a new bytes object (allocated once, filled in place);
 * fills are interruptible. */
static int td_fill_bytes(int kind, const td_options *o, uint64_t offset, void *NEWBYTES,
                         size_t NEWLEN)
{
    td_io_options io = td_py_io(0);
    return td_fill_ex(kind, o, offset, NEWBYTES, NEWLEN, &io);
}

static int td_py_fill(int kind, const td_options *o, uint64_t offset, void *buf, size_t len)
{
    td_io_options io = td_py_io(0);
    return td_fill_ex(kind, o, offset, buf, len, &io);
}

static int td_py_write_file(const char *path, int kind, uint64_t offset, uint64_t size,
                            const td_options *o)
{
    td_io_options io = td_py_io(0);
    return td_write_file_ex(path, kind, offset, size, o, &io, NULL);
}

static int td_py_verify_file(const char *path, int kind, uint64_t offset, uint64_t size,
                             const td_options *o, td_verify_result *VRESULT)
{
    td_io_options io = td_py_io(0);
    return td_verify_file_ex(path, kind, offset, size, o, &io, VRESULT);
}

/* td_options_set / td_kind_from_name with the library's message as the
 * Python error. */
static int td_py_options_set(td_options *o, int kind, const char *key, const char *value,
                             char *MSGBUF)
{
    return td_options_set_msg(o, kind, key, value, MSGBUF, 1024);
}

static int td_py_options_check_output(const td_options *o, const char *path, char *MSGBUF)
{
    return td_options_check_output(o, path, MSGBUF, 1024);
}

static int td_py_kind_from_name(const char *name, int *kind, char *MSGBUF)
{
    return td_kind_from_name_msg(name, kind, MSGBUF, 256);
}

static int td_py_parse_size(const char *text, uint64_t *size, char *MSGBUF)
{
    return td_parse_size_msg(text, size, MSGBUF, 256);
}

static int td_py_verify_message(const td_verify_result *r, const char *name, char *MSGBUF)
{
    (void)td_verify_message(r, name, MSGBUF, 1024); /* truncation is harmless */
    return TD_OK;
}

/* The name of shard file i ("part-000042"), as --mpi --files names it. */
static int td_py_shard_name(uint64_t index, char *MSGBUF)
{
    return td_shard_name(MSGBUF, 64, index);
}

static int td_stream_read_bytes(td_stream *s, void *NEWBYTES, size_t NEWLEN, size_t *NEWUSED)
{
    return td_stream_read(s, NEWBYTES, NEWLEN, NEWUSED);
}

/* The values of choice option `index` of the option table, one per line
 * ("chacha20\nfast"); "" for other options. */
static int td_py_option_values(size_t index, char *MSGBUF)
{
    const td_option_info *o = td_option_get(index);
    size_t n = 0;
    if (!o)
        return TD_ERANGE;
    MSGBUF[0] = '\0';
    for (size_t i = 0; o->values && o->values[i]; i++) {
        int w = snprintf(MSGBUF + n, 1024 - n, "%s%s", i ? "\n" : "", o->values[i]);
        if (w < 0 || (size_t)w >= 1024 - n)
            return TD_ERANGE;
        n += (size_t)w;
    }
    return TD_OK;
}

/* testdata.analyze(): the analysis as the library's JSON (td_analysis_json),
 * so Python has the CLI's keys without listing them.  *JSONOUT is malloc'd. */
static int td_py_analysis_json(const td_analysis *r, const char *name, char **JSONOUT)
{
    size_t cap = TD_ANALYSIS_JSON_MAX(name ? strlen(name) : 0);
    if (!(*JSONOUT = (char *)malloc(cap)))
        return TD_ENOMEM;
    return td_analysis_json(r, name, *JSONOUT, cap);
}

static void td_py_analyze_options(td_analyze_options *ao, uint64_t sample, uint32_t threads)
{
    td_analyze_options_init(ao);
    ao->sample_bytes = sample;
    ao->threads = threads;
}

/* testdata.analyze() checks its options here first, for the library's message. */
static int td_py_analyze_options_check(uint64_t sample, uint32_t threads, char *MSGBUF)
{
    td_analyze_options ao;
    td_py_analyze_options(&ao, sample, threads);
    return td_analyze_options_check(&ao, MSGBUF, 1024);
}

static int td_py_analyze_file(const char *path, uint64_t sample, uint32_t threads,
                              char **JSONOUT)
{
    td_analyze_options ao;
    td_analysis r;
    td_io_options io = td_py_io(0);
    int rc;
    td_py_analyze_options(&ao, sample, threads);
    rc = td_analyze_file(path, &ao, &io, &r);
    return rc == TD_OK ? td_py_analysis_json(&r, path, JSONOUT) : rc;
}

/* In 8 MiB pieces, so that Ctrl-C stops a long analysis. */
static int td_py_analyze_buffer(const void *buf, size_t len, uint64_t sample, uint32_t threads,
                                char **JSONOUT)
{
    td_analyze_options ao;
    td_analyzer *a;
    td_analysis r;
    int rc;
    td_py_analyze_options(&ao, sample, threads);
    ao.size_hint = len;
    rc = td_analyzer_new(&a, &ao);
    for (size_t at = 0; rc == TD_OK && at < len;) {
        size_t n = len - at < ((size_t)8 << 20) ? len - at : ((size_t)8 << 20);
        rc = td_analyzer_update(a, (const char *)buf + at, n);
        at += n;
        if (rc == TD_OK && at < len && td_py_check_signals(NULL, at))
            rc = TD_ECANCELED;
    }
    if (rc == TD_OK)
        rc = td_analyzer_finish(a, &r);
    td_analyzer_free(a);
    return rc == TD_OK ? td_py_analysis_json(&r, NULL, JSONOUT) : rc;
}

#define TD_PY_TEXTBUF (1u << 20)

/* ---- file trees ------------------------------------------------------------ */

/* Ctrl-C stops tree calls as it stops fills (td_tree_progress_fn). */
static int td_py_tree_signals(void *ctx, uint64_t files, uint64_t bytes)
{
    (void)files;
    return td_py_check_signals(ctx, bytes);
}

/* Findings as lines, in order, in a bounded buffer. */
typedef struct td_py_lines {
    char *buf;
    size_t len, cap;
    uint64_t dropped;
} td_py_lines;

static int td_py_tree_line(void *ctx, const td_tree_finding *f)
{
    td_py_lines *l = (td_py_lines *)ctx;
    char line[1024];
    size_t n;
    td_tree_finding_message(f, line, sizeof line);
    n = strlen(line);
    if (l->len + n + 2 >= l->cap) {
        l->dropped++;
        return 0;
    }
    memcpy(l->buf + l->len, line, n);
    l->len += n;
    l->buf[l->len++] = '\n';
    l->buf[l->len] = '\0';
    return 0;
}

static int td_py_tree_new(td_tree **out)
{
    return td_tree_new(out);
}

static int td_py_tree_set(td_tree *t, const char *key, const char *value, char *MSGBUF)
{
    return td_tree_set(t, key, value, MSGBUF, 1024);
}

static int td_py_tree_prepare(td_tree *t, char *MSGBUF)
{
    return td_tree_prepare(t, MSGBUF, 1024);
}

static int td_py_tree_file(const td_tree *t, uint64_t index, td_tree_entry *TENTRY)
{
    return td_tree_file(t, index, TENTRY);
}

/* Write files [first, first+count) of t under path; the status is returned
 * (not raised), with the counts and the relative path at fault. */
static int td_py_tree_write(const td_tree *t, const char *path, uint32_t flags, uint32_t threads,
                            uint64_t first, uint64_t count, td_tree_result *TRESULT,
                            char *TEXTBUF)
{
    td_tree_io io;
    td_tree_io_init(&io);
    io.flags = flags;
    io.threads = threads;
    io.first = first;
    io.count = count;
    io.progress = td_py_tree_signals;
    return td_tree_write(t, path, &io, TRESULT, TEXTBUF, 4096);
}

/* Verify; the findings' lines (at most about 1 MiB of them) as text. */
static int td_py_tree_verify(const td_tree *t, const char *path, uint32_t flags, uint32_t threads,
                             uint64_t first, uint64_t count, td_tree_result *TRESULT,
                             char *TEXTBUF)
{
    td_tree_io io;
    td_py_lines l = {TEXTBUF, 0, TD_PY_TEXTBUF, 0};
    int rc;
    td_tree_io_init(&io);
    io.flags = flags;
    io.threads = threads;
    io.first = first;
    io.count = count;
    io.progress = td_py_tree_signals;
    io.report = td_py_tree_line;
    io.ctx = &l;
    rc = td_tree_verify(t, path, &io, TRESULT);
    if (l.dropped)
        snprintf(TEXTBUF + l.len, TD_PY_TEXTBUF - l.len, "... and %llu more\n",
                 (unsigned long long)l.dropped);
    return rc;
}

/* Text models: a builder fed corpus files, then finished and saved.  The
 * message names what went wrong (the builder's, or the system's reason). */
static int td_py_model_builder_new(uint32_t threads, td_model_builder **out)
{
    int rc = td_model_builder_new(out);
    if (rc == TD_OK)
        rc = td_model_builder_set_threads(*out, threads);
    return rc;
}

static int td_py_model_builder_add_file(td_model_builder *b, const char *path, char *MSGBUF)
{
    int rc = td_model_builder_add_file(b, path);
    if (rc == TD_EIO)
        snprintf(MSGBUF, 1024, "corpus '%s': %s", path, strerror(errno));
    else if (rc != TD_OK)
        snprintf(MSGBUF, 1024, "corpus '%s': %s", path,
                 *td_model_builder_message(b) ? td_model_builder_message(b) : td_strerror(rc));
    return rc;
}

/* The builder writes the file itself (no model compiled twice), and
 * refuses a path that is one of its corpus files. */
static int td_py_model_builder_save(td_model_builder *b, const char *path, char *MSGBUF)
{
    int rc = td_model_builder_save(b, path);
    const char *msg = td_model_builder_message(b);
    if (rc != TD_OK && *msg)
        snprintf(MSGBUF, 1024, "cannot build a model: %s", msg);
    else if (rc != TD_OK)
        snprintf(MSGBUF, 1024, "cannot write '%s': %s", path,
                 rc == TD_EIO ? strerror(errno) : td_strerror(rc));
    return rc;
}

/* build_model(): the calibration's measure of codec i, as for profiles
 * (the error in RATIO, the corpus's ratio in NSPB, the label in MSGBUF);
 * TD_ERANGE (ValueError) when not measured. */
static int td_py_model_builder_fidelity(const td_model_builder *b, int i, double *RATIO, double *NSPB,
                                        char *MSGBUF)
{
    td_fidelity_t f;
    int rc = td_model_builder_fidelity(b, i, &f);
    snprintf(MSGBUF, 1024, "%s", rc == TD_OK ? f.label : td_strerror(rc));
    *RATIO = rc == TD_OK ? f.error : 0;
    *NSPB = rc == TD_OK ? f.sample_ratio : 0;
    return rc;
}

/* Profiles (TD_LIKE): each call's message on failure is the library's. */
static int td_py_profile_open(const char *name_or_path, td_profile **out, char *MSGBUF)
{
    return td_profile_open(out, name_or_path, MSGBUF, 1024);
}

/* Profile.builtin(): a built-in only, never a file of that name. */
static int td_py_profile_builtin(const char *name, td_profile **out, char *MSGBUF)
{
    const td_profile *b = NULL;
    int rc = td_profile_builtin_msg(&b, name, MSGBUF, 1024);
    *out = (td_profile *)(uintptr_t)b; /* td_profile_free ignores built-ins */
    return rc;
}

static int td_py_profile_loads(const void *buf, size_t len, td_profile **out, char *MSGBUF)
{
    return td_profile_load_msg(out, buf, len, MSGBUF, 1024);
}

/* sample_given 0: the library's default sample size. */
static int td_py_profile_builder_new(uint64_t size_hint, int sample_given, uint64_t sample,
                                     uint32_t fingerprint, uint32_t threads, const char *name,
                                     const char *model, td_profile_builder **out, char *MSGBUF)
{
    td_profile_options po;
    td_profile_options_init(&po);
    if (td_profile_model_parse(model, &po.model, MSGBUF, 1024) != TD_OK)
        return TD_EINVAL;
    po.size_hint = size_hint;
    if (sample_given)
        po.sample_bytes = sample;
    po.fingerprint = fingerprint;
    po.threads = threads;
    po.name = name && name[0] ? name : NULL;
    return td_profile_builder_new_msg(out, &po, MSGBUF, 1024);
}

static int td_py_profile_save(const td_profile *p, char **JSONOUT)
{
    size_t len = 0;
    int rc = td_profile_save(p, NULL, 0, &len);
    if (rc != TD_OK && rc != TD_ERANGE)
        return rc;
    *JSONOUT = (char *)malloc(len + 1);
    if (!*JSONOUT)
        return TD_ENOMEM;
    rc = td_profile_save(p, *JSONOUT, len, &len);
    (*JSONOUT)[rc == TD_OK ? len : 0] = '\0';
    return rc;
}

static int td_py_profile_save_file(const td_profile *p, const char *path)
{
    return td_profile_save_file(p, path);
}

static int td_py_profile_fingerprint(const td_profile *p, int codec, double *RATIO, double *NSPB)
{
    return td_profile_fingerprint(p, codec, RATIO, NSPB);
}

/* Profile.fidelity(): codec i's error (RATIO) and the sample's ratio (NSPB),
 * its label in MSGBUF; TD_ERANGE (ValueError) when not measured. */
static int td_py_profile_fidelity(const td_profile *p, int i, double *RATIO, double *NSPB, char *MSGBUF)
{
    td_fidelity_t f;
    int rc = td_profile_fidelity(p, i, &f);
    snprintf(MSGBUF, 1024, "%s", rc == TD_OK ? f.label : td_strerror(rc));
    *RATIO = rc == TD_OK ? f.error : 0;
    *NSPB = rc == TD_OK ? f.sample_ratio : 0;
    return rc;
}

/* Profile.compare(): the library measures and renders (td_profile_comparison_json);
 * a path is opened here. */
static int td_py_comparison_json(int rc, const td_profile_comparison *c, char **JSONOUT)
{
    size_t cap = TD_PROFILE_COMPARISON_JSON_MAX(0);
    if (rc != TD_OK)
        return rc;
    *JSONOUT = (char *)malloc(cap);
    return *JSONOUT ? td_profile_comparison_json(c, NULL, *JSONOUT, cap) : TD_ENOMEM;
}

static int td_py_profile_compare_file(const td_profile *p, const char *path, char **JSONOUT)
{
    td_profile_comparison c;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return TD_EIO;
    int rc = td_profile_compare_fd(p, fd, &c);
    int e = errno;
    close(fd);
    errno = e;
    return td_py_comparison_json(rc, &c, JSONOUT);
}

static int td_py_profile_compare_buffer(const td_profile *p, const void *buf, size_t len, char **JSONOUT)
{
    td_profile_comparison c;
    return td_py_comparison_json(td_profile_compare(p, buf, len, &c), &c, JSONOUT);
}

/* "lz" or "context": how the profile models its sample. */
static const char *td_py_profile_model(const td_profile *p)
{
    td_profile_info_t i;
    return td_profile_info(p, &i) == TD_OK ? td_profile_model_name((int)i.model) : "";
}

static int td_py_profile_digest(const td_profile *p, char *MSGBUF)
{
    uint8_t d[32];
    int rc = td_profile_digest(p, d);
    for (int i = 0; rc == TD_OK && i < 32; i++)
        snprintf(MSGBUF + 2 * i, 3, "%02x", d[i]);
    return rc;
}

/* The options borrow the profile: the Python object that sets it keeps
 * the profile's owner alive as long as the options. */
static void td_py_options_set_profile(td_options *o, const td_profile *p)
{
    o->profile = p;
}

static int td_py_tree_scan(const char *path, char *TEXTBUF)
{
    size_t len;
    return td_tree_scan(path, NULL, TEXTBUF, TD_PY_TEXTBUF, &len);
}
%}

%include <stdint.i>

/* The C enums are plain ints on the Python side. */
%apply int { td_kind };

/* ---- status codes --------------------------------------------------------- */

%typemap(out) int {
    if (td_py_error($1, NULL))
        SWIG_fail;
    $result = PyLong_FromLong($1);
}
%typemap(out) int td_write_file, int td_write_file_at {
    if (td_py_error($1, arg1))
        SWIG_fail;
    $result = PyLong_FromLong($1);
}
%typemap(out) int td_verify, int td_verify_count, int td_verifier_finish {
    if ($1 != TD_EMISMATCH && td_py_error($1, NULL))
        SWIG_fail;
    $result = PyLong_FromLong($1);
}
%typemap(out) int td_py_write_file, int td_output_open {
    if (td_py_error($1, arg1))
        SWIG_fail;
    $result = PyLong_FromLong($1);
}
%typemap(out) int td_py_verify_file {
    if ($1 != TD_EMISMATCH && td_py_error($1, arg1))
        SWIG_fail;
    $result = PyLong_FromLong($1);
}

/* A message buffer filled by the library; on failure it is the error. */
%typemap(in, numinputs=0) char *MSGBUF (char buf[1024]) { buf[0] = '\0'; $1 = buf; }
%typemap(out) int td_py_options_set, int td_py_options_check_output, int td_py_kind_from_name, int td_py_parse_size, int td_py_shard_name,
              int td_py_model_builder_add_file, int td_py_model_builder_save, int td_py_analyze_options_check {
    $result = PyLong_FromLong($1);
}
%typemap(argout) char *MSGBUF {
    if (result < 0) {
        Py_XDECREF($result);
        $result = NULL;
        /* A file that cannot be read (a model, a corpus) is an OSError. */
        int err = errno;
        PyObject *etype = result == TD_EIO ? PyExc_OSError : PyExc_ValueError;
        /* OSError(errno, text) is the subclass for errno (FileNotFoundError). */
        PyObject *exc = result == TD_EIO && err ? PyObject_CallFunction(etype, "is", err, buf$argnum)
                                                : PyObject_CallFunction(etype, "s", buf$argnum);
        if (exc) {
            PyObject *code = PyLong_FromLong(result);
            if (!code || PyObject_SetAttrString(exc, "td_status", code) != 0)
                PyErr_Clear();
            Py_XDECREF(code);
            PyErr_SetObject(etype, exc);
            Py_DECREF(exc);
        }
        SWIG_fail;
    }
    $result = SWIG_Python_AppendOutput($result, PyUnicode_FromString(buf$argnum));
}
%typemap(out) int td_py_profile_open, int td_py_profile_builtin, int td_py_profile_loads, int td_py_profile_digest,
              int td_py_profile_builder_new, int td_py_profile_fidelity, int td_py_model_builder_fidelity {
    $result = PyLong_FromLong($1);
}
%typemap(out) int td_py_profile_save_file {
    if (td_py_error($1, arg2))
        SWIG_fail;
    $result = PyLong_FromLong($1);
}
%typemap(out) int td_py_verify_message { $result = PyLong_FromLong($1); }
%typemap(out) int td_py_option_values { $result = PyLong_FromLong($1); }

/* A malloc'd JSON text returned as str after the status. */
%typemap(in, numinputs=0) char **JSONOUT (char *json = NULL) { $1 = &json; }
%typemap(argout) char **JSONOUT {
    PyObject *text = PyUnicode_FromString(json$argnum ? json$argnum : "");
    if (!text)
        SWIG_fail;
    $result = SWIG_Python_AppendOutput($result, text);
}
%typemap(freearg) char **JSONOUT { free(json$argnum); }
%typemap(out) int td_py_analyze_file {
    if (td_py_error($1, arg1))
        SWIG_fail;
    $result = PyLong_FromLong($1);
}

/* ---- None is never a valid string or stream ------------------------------- */

%typemap(check) const char * {
    if (!$1)
        SWIG_exception_fail(SWIG_TypeError, "in method '$symname', argument $argnum: expected str, got None");
}
%typemap(check) td_stream *, const td_stream *, td_options *o {
    if (!$1)
        SWIG_exception_fail(SWIG_TypeError, "in method '$symname', argument $argnum: got None");
}
/* ... but None is fine for options that are only read: it means defaults. */
%typemap(check) const td_options *o "";

/* File paths: str (file system encoding, surrogateescape), bytes or
 * os.PathLike, as open() takes them; an embedded NUL is a ValueError (a C
 * string would silently end there and name another file). */
%typemap(in) const char *path (PyObject *conv = NULL) {
    if ($input == Py_None)
        SWIG_exception_fail(SWIG_TypeError, "path must be str, bytes or os.PathLike, not None");
    if (!PyUnicode_FSConverter($input, &conv))
        SWIG_fail;
    $1 = PyBytes_AS_STRING(conv);
}
%typemap(freearg) const char *path { Py_XDECREF(conv$argnum); }
%typemap(check) const char *path "";

/* ---- outputs -------------------------------------------------------------- */

/* Outputs start at 0: the library leaves some untouched (first_mismatch on TD_OK). */
%typemap(in, numinputs=0) int *kind (int temp = 0) { $1 = &temp; }
%typemap(argout) int *kind {
    $result = SWIG_Python_AppendOutput($result, PyLong_FromLong(temp$argnum));
}
%typemap(in, numinputs=0) uint64_t *U64OUT (uint64_t temp = 0) { $1 = &temp; }
%typemap(argout) uint64_t *U64OUT {
    $result = SWIG_Python_AppendOutput($result, PyLong_FromUnsignedLongLong((unsigned long long)temp$argnum));
}
%apply uint64_t *U64OUT { uint64_t *size, uint64_t *first_mismatch, uint64_t *count,
                         uint64_t *part_offset, uint64_t *part_len };

%typemap(in, numinputs=0) size_t *out_len (size_t temp = 0) { $1 = &temp; }
%typemap(argout) size_t *out_len {
    $result = SWIG_Python_AppendOutput($result, PyLong_FromSize_t(temp$argnum));
}

%typemap(in, numinputs=0) td_verify_result *VRESULT (td_verify_result temp) {
    memset(&temp, 0, sizeof temp);
    $1 = &temp;
}
%typemap(argout) td_verify_result *VRESULT {
    td_verify_result *copy = (td_verify_result *)malloc(sizeof *copy);
    if (!copy)
        SWIG_fail;
    *copy = temp$argnum;
    $result = SWIG_Python_AppendOutput($result, SWIG_NewPointerObj(copy, $1_descriptor, SWIG_POINTER_OWN));
}
%apply td_verify_result *VRESULT { td_verify_result *result };

%typemap(in, numinputs=0) td_verifier **out (td_verifier *temp = NULL) { $1 = &temp; }
%typemap(argout) td_verifier **out {
    $result = SWIG_Python_AppendOutput($result, SWIG_NewPointerObj(temp$argnum, $*1_descriptor, SWIG_POINTER_OWN));
    temp$argnum = NULL;
}
%typemap(freearg) td_verifier **out { td_verifier_free(temp$argnum); }
%typemap(check) td_verifier * {
    if (!$1)
        SWIG_exception_fail(SWIG_TypeError, "in method '$symname', argument $argnum: got None");
}

%typemap(in, numinputs=0) td_stream **out (td_stream *temp = NULL) { $1 = &temp; }
%typemap(argout) td_stream **out {
    $result = SWIG_Python_AppendOutput($result, SWIG_NewPointerObj(temp$argnum, $*1_descriptor, SWIG_POINTER_OWN));
    temp$argnum = NULL;
}
%typemap(freearg) td_stream **out { td_stream_free(temp$argnum); }

/* td_stream_next: the chunk is copied into a new bytes object. */
%typemap(in, numinputs=0) (const void **chunk, size_t *len) (const void *chunk = NULL, size_t len = 0) {
    $1 = ($1_ltype)&chunk; $2 = &len;
}
%typemap(argout) (const void **chunk, size_t *len) {
    PyObject *b = PyBytes_FromStringAndSize(chunk$argnum ? (const char *)chunk$argnum : "", (Py_ssize_t)len$argnum);
    if (!b)
        SWIG_fail;
    $result = SWIG_Python_AppendOutput($result, b);
}

/* ---- buffers -------------------------------------------------------------- */

/* Writable, C-contiguous, released in freearg, i.e. after the C call. */
%typemap(in) (void *buf, size_t len) (Py_buffer view, int have_view = 0) {
    if (PyObject_GetBuffer($input, &view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) != 0) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError,
                     "in method '$symname', argument $argnum: expected a writable, C-contiguous bytes-like object, not '%.200s'",
                     Py_TYPE($input)->tp_name);
        SWIG_fail;
    }
    have_view = 1;
    $1 = view.buf;
    $2 = (size_t)view.len;
}
%typemap(freearg) (void *buf, size_t len) {
    if (have_view$argnum)
        PyBuffer_Release(&view$argnum);
}
%apply (void *buf, size_t len) { (void *buf, size_t cap) };

/* Read-only, C-contiguous. */
%typemap(in) (const void *buf, size_t len) (Py_buffer view, int have_view = 0) {
    if (PyObject_GetBuffer($input, &view, PyBUF_C_CONTIGUOUS) != 0) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError,
                     "in method '$symname', argument $argnum: expected a C-contiguous bytes-like object, not '%.200s'",
                     Py_TYPE($input)->tp_name);
        SWIG_fail;
    }
    have_view = 1;
    $1 = view.buf;
    $2 = (size_t)view.len;
}
%typemap(freearg) (const void *buf, size_t len) {
    if (have_view$argnum)
        PyBuffer_Release(&view$argnum);
}

/* A new bytes object of the given length, filled by the call and returned;
 * with a NEWUSED output it is shrunk to the bytes actually produced. */
%define TD_NEWBYTES_IN(bytes, n)
    {
        int ecode = SWIG_AsVal_size_t($input, &n);
        if (!SWIG_IsOK(ecode) || n > (size_t)PY_SSIZE_T_MAX)
            SWIG_exception_fail(SWIG_ArgError(ecode), "in method '$symname', argument $argnum: expected a length >= 0");
        bytes = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)n);
        if (!bytes)
            SWIG_fail;
        td_py_advise_huge(PyBytes_AS_STRING(bytes), n);
    }
%enddef

%typemap(in, fragment=SWIG_AsVal_frag(size_t)) (void *NEWBYTES, size_t NEWLEN) (PyObject *bytes = NULL, size_t n = 0) {
    TD_NEWBYTES_IN(bytes, n)
    $1 = PyBytes_AS_STRING(bytes);
    $2 = n;
}
%typemap(argout) (void *NEWBYTES, size_t NEWLEN) {
    $result = SWIG_Python_AppendOutput($result, bytes$argnum);
    bytes$argnum = NULL;
}
%typemap(freearg) (void *NEWBYTES, size_t NEWLEN) { Py_XDECREF(bytes$argnum); }

%typemap(in, fragment=SWIG_AsVal_frag(size_t)) (void *NEWBYTES, size_t NEWLEN, size_t *NEWUSED) (PyObject *bytes = NULL, size_t n = 0, size_t used = 0) {
    TD_NEWBYTES_IN(bytes, n)
    $1 = PyBytes_AS_STRING(bytes);
    $2 = n;
    $3 = &used;
}
%typemap(argout) (void *NEWBYTES, size_t NEWLEN, size_t *NEWUSED) {
    if (used$argnum < n$argnum && _PyBytes_Resize(&bytes$argnum, (Py_ssize_t)used$argnum) != 0)
        SWIG_fail;
    $result = SWIG_Python_AppendOutput($result, bytes$argnum);
    bytes$argnum = NULL;
}
%typemap(freearg) (void *NEWBYTES, size_t NEWLEN, size_t *NEWUSED) { Py_XDECREF(bytes$argnum); }

/* ---- file trees ------------------------------------------------------------ */

%typemap(in, numinputs=0) td_tree **out (td_tree *temp = NULL) { $1 = &temp; }
%typemap(argout) td_tree **out {
    $result = SWIG_Python_AppendOutput($result, SWIG_NewPointerObj(temp$argnum, $*1_descriptor, SWIG_POINTER_OWN));
    temp$argnum = NULL;
}
%typemap(freearg) td_tree **out { td_tree_free(temp$argnum); }
%typemap(check) td_tree *, const td_tree * {
    if (!$1)
        SWIG_exception_fail(SWIG_TypeError, "in method '$symname', argument $argnum: got None");
}
%typemap(out) int td_py_tree_set, int td_py_tree_prepare, int td_py_tree_write,
              int td_py_tree_verify, int td_py_tree_scan {
    if (PyErr_Occurred()) /* KeyboardInterrupt from the progress callback */
        SWIG_fail;
    $result = PyLong_FromLong($1);
}
%typemap(in, numinputs=0) td_tree_entry *TENTRY (td_tree_entry temp) {
    memset(&temp, 0, sizeof temp);
    $1 = &temp;
}
%typemap(argout) td_tree_entry *TENTRY {
    td_tree_entry *copy = (td_tree_entry *)malloc(sizeof *copy);
    if (!copy)
        SWIG_fail;
    *copy = temp$argnum;
    $result = SWIG_Python_AppendOutput($result, SWIG_NewPointerObj(copy, $1_descriptor, SWIG_POINTER_OWN));
}
%typemap(in, numinputs=0) td_tree_result *TRESULT (td_tree_result temp) {
    memset(&temp, 0, sizeof temp);
    $1 = &temp;
}
%typemap(argout) td_tree_result *TRESULT {
    td_tree_result *copy = (td_tree_result *)malloc(sizeof *copy);
    if (!copy)
        SWIG_fail;
    *copy = temp$argnum;
    $result = SWIG_Python_AppendOutput($result, SWIG_NewPointerObj(copy, $1_descriptor, SWIG_POINTER_OWN));
}
/* A large text buffer (findings, a profile, a path), returned as str in the
 * file system's encoding (paths need not be UTF-8). */
%typemap(in, numinputs=0) char *TEXTBUF (char *tbuf = NULL) {
    tbuf = (char *)malloc(TD_PY_TEXTBUF);
    if (!tbuf)
        SWIG_exception_fail(SWIG_MemoryError, "out of memory");
    tbuf[0] = '\0';
    $1 = tbuf;
}
%typemap(argout) char *TEXTBUF {
    $result = SWIG_Python_AppendOutput($result, PyUnicode_DecodeFSDefault(tbuf$argnum));
}
%typemap(freearg) char *TEXTBUF { free(tbuf$argnum); }

/* ---- objects -------------------------------------------------------------- */

/* td_options: a struct whose constructor applies td_options_init(). */
%ignore td_options::reserved;
%ignore td_options::owned_;
%extend td_options {
    td_options() {
        td_options *o = (td_options *)calloc(1, sizeof *o);
        td_options_init(o);
        return o;
    }
    /* What td_options_set loaded ("model" FILE) is the options' own; the
     * profile set by td_py_options_set_profile is its Python owner's. */
    ~td_options() {
        td_options_release($self);
        free($self);
    }
}
%ignore td_model_info; /* the td_model_* calls are not exposed: build_model() and model=PATH */
%ignore td_options::model;
%ignore td_options::model_pad_;

/* td_model_builder: opaque, freed by its owning Python object. */
%nodefaultctor td_model_builder;
struct td_model_builder {};
%extend td_model_builder {
    ~td_model_builder() { td_model_builder_free($self); }
}
%typemap(in, numinputs=0) td_model_builder **out (td_model_builder *temp = NULL) { $1 = &temp; }
%typemap(argout) td_model_builder **out {
    $result = SWIG_Python_AppendOutput($result, SWIG_NewPointerObj(temp$argnum, $*1_descriptor, SWIG_POINTER_OWN));
    temp$argnum = NULL;
}
%typemap(freearg) td_model_builder **out { td_model_builder_free(temp$argnum); }
%typemap(check) td_model_builder * {
    if (!$1)
        SWIG_exception_fail(SWIG_TypeError, "in method '$symname', argument $argnum: got None");
}

/* td_verify_result: a plain struct, read-only from Python. */
%ignore td_verify_result::reserved;
%extend td_verify_result {
    ~td_verify_result() { free($self); }
}

/* td_verifier: opaque, freed by its owning Python object. */
%nodefaultctor td_verifier;
struct td_verifier {};
%extend td_verifier {
    ~td_verifier() { td_verifier_free($self); }
}

/* td_stream: opaque, freed by the Python object that owns it (never twice). */
%nodefaultctor td_stream;
struct td_stream {};
%extend td_stream {
    ~td_stream() { td_stream_free($self); }
}

/* td_profile, td_profile_builder: opaque, owned by their Python objects
 * (td_profile_free ignores built-in profiles, so owning one is harmless). */
%nodefaultctor td_profile;
struct td_profile {};
%extend td_profile {
    ~td_profile() { td_profile_free($self); }
}
%nodefaultctor td_profile_builder;
struct td_profile_builder {};
%extend td_profile_builder {
    ~td_profile_builder() { td_profile_builder_free($self); }
}
%ignore td_options::profile;
%ignore td_options::profile_pad_;
%ignore td_profile_options;
%ignore td_profile_info_t;
%ignore td_fidelity_t;
%typemap(in, numinputs=0) td_profile **out (td_profile *temp = NULL) { $1 = &temp; }
%typemap(argout) td_profile **out {
    $result = SWIG_Python_AppendOutput($result, SWIG_NewPointerObj(temp$argnum, $*1_descriptor, SWIG_POINTER_OWN));
    temp$argnum = NULL;
}
%typemap(freearg) td_profile **out { td_profile_free(temp$argnum); }
%typemap(in, numinputs=0) td_profile_builder **out (td_profile_builder *temp = NULL) { $1 = &temp; }
%typemap(argout) td_profile_builder **out {
    $result = SWIG_Python_AppendOutput($result, SWIG_NewPointerObj(temp$argnum, $*1_descriptor, SWIG_POINTER_OWN));
    temp$argnum = NULL;
}
%typemap(freearg) td_profile_builder **out { td_profile_builder_free(temp$argnum); }
%typemap(check) td_profile_builder *b, const td_profile *p {
    if (!$1)
        SWIG_exception_fail(SWIG_TypeError, "in method '$symname', argument $argnum: got None");
}
%typemap(out) int td_py_profile_compare_file {
    if (td_py_error($1, arg2))
        SWIG_fail;
    $result = PyLong_FromLong($1);
}

%typemap(in, numinputs=0) double *RATIO (double temp = 0), double *NSPB (double temp = 0) { $1 = &temp; }
%typemap(argout) double *RATIO, double *NSPB {
    $result = SWIG_Python_AppendOutput($result, PyFloat_FromDouble(temp$argnum));
}

/* td_tree: opaque, freed by its owning Python object. */
%nodefaultctor td_tree;
struct td_tree {};
%extend td_tree {
    ~td_tree() { td_tree_free($self); }
}
%ignore td_tree_entry::reserved;
%ignore td_tree_entry::reserved_int;
%extend td_tree_entry {
    ~td_tree_entry() { free($self); }
}
%ignore td_tree_result::reserved;
%ignore td_tree_result::reserved_int;
%extend td_tree_result {
    ~td_tree_result() { free($self); }
}
%ignore td_tree_io;
%ignore td_profile_comparison; /* a tuple (typemap CMP) */
%ignore td_tree_finding;

/* Functions are exposed deliberately, each with typemaps for its buffers,
 * outputs and ownership: a library function added later stays hidden until
 * it is listed here (a raw wrapper could let Python free twice or overflow a
 * buffer).  Constants, enums and kinds/options need no change: kinds are
 * looked up by name and options set by td_options_set.
 * Not exposed: td_stream_new/_with (owned pointers without a status: use
 * td_stream_open) and td_stream_free (the owning object frees). */
%rename("$ignore", %$isfunction) "";
%rename("%s") td_strerror;
%rename("%s") td_version;
%rename("%s") td_options_init;
%rename("%s") td_options_set;
%rename("%s") td_options_check;
%rename("%s") td_kind_from_name;
%rename("%s") td_kind_name;
%rename("%s") td_parse_size;
%rename("%s") td_stream_open;
%rename("%s") td_stream_read;
%rename("%s") td_stream_next;
%rename("%s") td_stream_seek;
%rename("%s") td_stream_tell;
%rename("%s") td_stream_size;
%rename("%s") td_fill;
%rename("%s") td_verify;
%rename("%s") td_verify_count;
%rename("%s") td_write_file;
%rename("%s") td_write_file_at;
%rename("%s") td_split_range;
%rename("%s") td_fill_bytes;
%rename("%s") td_stream_read_bytes;
%rename("%s") td_verifier_new;
%rename("%s") td_verifier_update;
%rename("%s") td_verifier_finish;
%rename("%s") td_py_shard_name;
%rename("%s") td_py_fill;
%rename("%s") td_py_write_file;
%rename("%s") td_py_verify_file;
%rename("%s") td_py_options_set;
%rename("%s") td_py_options_check_output;
%rename("%s") td_py_kind_from_name;
%rename("%s") td_py_parse_size;
%rename("%s") td_py_verify_message;
%rename("%s") td_kind_is_text;
%rename("%s") td_option_count;
%rename("%s") td_option_get;
%rename("%s") td_py_option_values;
%rename("%s") td_py_analyze_file;
%rename("%s") td_py_analyze_buffer;
%rename("%s") td_py_analyze_options_check;
%rename("%s") td_py_tree_new;
%rename("%s") td_py_tree_set;
%rename("%s") td_py_tree_prepare;
%rename("%s") td_py_tree_file;
%rename("%s") td_py_tree_write;
%rename("%s") td_py_tree_verify;
%rename("%s") td_py_tree_scan;
%rename("%s") td_py_model_builder_new;
%rename("%s") td_py_model_builder_add_file;
%rename("%s") td_py_model_builder_save;
%rename("%s") td_py_model_builder_fidelity;
%rename("%s") td_model_builder_note;
%rename("%s") td_tree_count;
%rename("%s") td_tree_total;
%rename("%s") td_tree_kind;
%rename("%s") td_tree_option_count;
%rename("%s") td_tree_option_get;
%rename("%s") td_py_profile_open;
%rename("%s") td_py_profile_builtin;
%rename("%s") td_py_profile_loads;
%rename("%s") td_py_profile_builder_new;
%rename("%s") td_profile_builder_update;
%rename("%s") td_profile_builder_finish;
%rename("%s") td_py_profile_save;
%rename("%s") td_py_profile_save_file;
%rename("%s") td_py_profile_fingerprint;
%rename("%s") td_py_profile_fidelity;
%rename("%s") td_py_profile_compare_file;
%rename("%s") td_py_profile_compare_buffer;
%rename("%s") td_py_profile_digest;
%rename("%s") td_py_profile_model;
%rename("%s") td_py_options_set_profile;
%rename("%s") td_profile_builtin_name;
%rename("%s") td_profile_name;

%include "testdata.h"

int td_fill_bytes(int kind, const td_options *o, uint64_t offset, void *NEWBYTES, size_t NEWLEN);
int td_stream_read_bytes(td_stream *s, void *NEWBYTES, size_t NEWLEN, size_t *NEWUSED);
int td_py_fill(int kind, const td_options *o, uint64_t offset, void *buf, size_t len);
int td_py_write_file(const char *path, int kind, uint64_t offset, uint64_t size, const td_options *o);
int td_py_verify_file(const char *path, int kind, uint64_t offset, uint64_t size, const td_options *o,
                      td_verify_result *VRESULT);
int td_py_options_set(td_options *o, int kind, const char *key, const char *value, char *MSGBUF);
int td_py_options_check_output(const td_options *o, const char *path, char *MSGBUF);
int td_py_kind_from_name(const char *name, int *kind, char *MSGBUF);
int td_py_parse_size(const char *text, uint64_t *size, char *MSGBUF);
int td_py_verify_message(const td_verify_result *r, const char *name, char *MSGBUF);
int td_py_shard_name(uint64_t index, char *MSGBUF);
int td_py_option_values(size_t index, char *MSGBUF);
int td_py_analyze_file(const char *path, uint64_t sample, uint32_t threads, char **JSONOUT);
int td_py_analyze_buffer(const void *buf, size_t len, uint64_t sample, uint32_t threads,
                         char **JSONOUT);
int td_py_analyze_options_check(uint64_t sample, uint32_t threads, char *MSGBUF);
int td_py_tree_new(td_tree **out);
int td_py_tree_set(td_tree *t, const char *key, const char *value, char *MSGBUF);
int td_py_tree_prepare(td_tree *t, char *MSGBUF);
int td_py_tree_file(const td_tree *t, uint64_t index, td_tree_entry *TENTRY);
int td_py_tree_write(const td_tree *t, const char *path, uint32_t flags, uint32_t threads,
                     uint64_t first, uint64_t count, td_tree_result *TRESULT, char *TEXTBUF);
int td_py_tree_verify(const td_tree *t, const char *path, uint32_t flags, uint32_t threads,
                      uint64_t first, uint64_t count, td_tree_result *TRESULT, char *TEXTBUF);
int td_py_tree_scan(const char *path, char *TEXTBUF);
int td_py_model_builder_new(uint32_t threads, td_model_builder **out);
int td_py_model_builder_add_file(td_model_builder *b, const char *path, char *MSGBUF);
int td_py_model_builder_save(td_model_builder *b, const char *path, char *MSGBUF);
int td_py_model_builder_fidelity(const td_model_builder *b, int i, double *RATIO, double *NSPB, char *MSGBUF);

/* Macros SWIG cannot evaluate on its own. */
#undef TD_SIZE_UNBOUNDED
%constant unsigned long long TD_SIZE_UNBOUNDED = TD_SIZE_UNBOUNDED;
int td_py_profile_open(const char *name_or_path, td_profile **out, char *MSGBUF);
int td_py_profile_builtin(const char *name, td_profile **out, char *MSGBUF);
int td_py_profile_loads(const void *buf, size_t len, td_profile **out, char *MSGBUF);
int td_py_profile_builder_new(uint64_t size_hint, int sample_given, uint64_t sample,
                              uint32_t fingerprint, uint32_t threads, const char *name,
                              const char *model, td_profile_builder **out, char *MSGBUF);
int td_py_profile_save(const td_profile *p, char **JSONOUT);
int td_py_profile_save_file(const td_profile *p, const char *path);
int td_py_profile_fingerprint(const td_profile *p, int codec, double *RATIO, double *NSPB);
int td_py_profile_fidelity(const td_profile *p, int i, double *RATIO, double *NSPB, char *MSGBUF);
int td_py_profile_compare_file(const td_profile *p, const char *path, char **JSONOUT);
int td_py_profile_compare_buffer(const td_profile *p, const void *buf, size_t len, char **JSONOUT);
int td_py_profile_digest(const td_profile *p, char *MSGBUF);
const char *td_py_profile_model(const td_profile *p);
void td_py_options_set_profile(td_options *o, const td_profile *p);
