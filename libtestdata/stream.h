/* Internals of td_stream shared with the verifier and the writers.  Over
 * gen.h.  Not installed. */
#ifndef TD_STREAM_H
#define TD_STREAM_H

#include "gen.h"

/* The buffered bytes from the current position on, without advancing:
 * TD_OK with *len > 0, TD_DONE at the end, or an error. */
TD_HIDDEN int td__stream_window(td_stream *s, const uint8_t **p, size_t *len);
/* Advance past n bytes of the window. */
TD_HIDDEN void td__stream_advance(td_stream *s, size_t n);

#endif
