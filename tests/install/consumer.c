/* Prints the SHA-free fingerprint of a stream: first 8 bytes in hex. */
#include <stdio.h>
#include <testdata.h>

int main(void)
{
    unsigned char b[8];
    if (td_fill(TD_RANDOM, NULL, 0, b, sizeof b) != TD_OK)
        return 1;
    for (int i = 0; i < 8; i++)
        printf("%02x", b[i]);
    printf(" %s\n", td_version());
    return 0;
}
