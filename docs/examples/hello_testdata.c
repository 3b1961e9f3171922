/* A complete program using libtestdata: stream, seek, verify, write a fixture.
 *   cc hello_testdata.c $(pkg-config --cflags --libs testdata) -o hello_testdata
 */
#include <stdio.h>
#include <stdlib.h>
#include <testdata.h>

int main(void)
{
    td_options o;
    td_options_init(&o);
    o.seed = 7;                        /* same seed, same bytes, everywhere */

    /* 1. Stream 16 MiB of random bytes through a small buffer. */
    td_stream *s = td_stream_new_with(TD_RANDOM, 16u << 20, &o);
    if (!s)
        return 1;
    unsigned char buf[4096];
    size_t n;
    unsigned long long total = 0;
    while (td_stream_read(s, buf, sizeof buf, &n) == TD_OK)
        total += n;

    /* 2. Seek: bytes [1 MiB, 1 MiB + 4 KiB) alone, and check them statelessly. */
    td_stream_seek(s, 1u << 20);
    td_stream_read(s, buf, sizeof buf, &n);
    int rc = td_verify(TD_RANDOM, &o, 1u << 20, buf, n, NULL);
    td_stream_free(s);

    /* 3. One corrupted byte is found at its absolute stream offset. */
    buf[100] ^= 1;
    uint64_t bad = 0;
    int rc2 = td_verify(TD_RANDOM, &o, 1u << 20, buf, n, &bad);

    /* 4. A fixture file in one call (written atomically). */
    int rc3 = td_write_file("fixture.bin", TD_ZERO, 1u << 20, NULL);
    remove("fixture.bin");

    printf("libtestdata %s: streamed %llu bytes; verify: %s; corrupted byte at %llu (%s); "
           "write_file: %s\n", td_version(), total, td_strerror(rc),
           (unsigned long long)bad, td_strerror(rc2), td_strerror(rc3));
    return rc == TD_OK && rc2 == TD_EMISMATCH && bad == (1u << 20) + 100 && rc3 == TD_OK
               ? EXIT_SUCCESS : EXIT_FAILURE;
}
