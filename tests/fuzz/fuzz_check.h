/* CHECK(cond): a failed invariant aborts, which libFuzzer reports as a crash. */
#ifndef TD_FUZZ_CHECK_H
#define TD_FUZZ_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond)                                                                            \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);           \
            abort();                                                                           \
        }                                                                                      \
    } while (0)

#endif
