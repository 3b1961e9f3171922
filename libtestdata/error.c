/* Error messages and version. */
#include "common.h"

const char *td_strerror(int rc)
{
    switch (rc) {
    case TD_OK: return "success";
    case TD_DONE: return "end of stream";
    case TD_EINVAL: return "invalid argument";
    case TD_ENOMEM: return "out of memory";
    case TD_EKIND: return "unknown kind";
    case TD_EOPTION: return "unknown option, or option does not apply to this kind";
    case TD_ERANGE: return "value out of range";
    case TD_EIO: return "input/output error";
    case TD_EMISMATCH: return "data does not match the stream";
    case TD_ESYNTAX: return "malformed size or value";
    case TD_ECANCELED: return "stopped by the caller (progress callback)";
    case TD_EUTF8: return "text is not valid UTF-8";
    case TD_ECORPUS: return "empty or too small input: a profile needs a sample of at least one byte, a text model 10 KiB of text";
    case TD_EMODEL: return "not a valid text model (truncated or corrupted)";
    case TD_EMODELVERSION: return "text model of an unsupported format version";
    default: return "unknown error";
    }
}

const char *td_version(void)
{
    return TD_VERSION_STRING;
}
