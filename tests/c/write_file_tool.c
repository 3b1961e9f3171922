/* td_write_file from the command line, for the SIGKILL fault-injection test
 * (tests/cli/test_kill.py): write_file_tool PATH KIND SIZE SEED. */
#include <stdio.h>
#include <stdlib.h>
#include <testdata.h>

int main(int argc, char **argv)
{
    td_options o;
    uint64_t size;
    int kind;
    if (argc != 5 || td_kind_from_name(argv[2], &kind) != TD_OK ||
        td_parse_size(argv[3], &size) != TD_OK) {
        fputs("usage: write_file_tool PATH KIND SIZE SEED\n", stderr);
        return 2;
    }
    td_options_init(&o);
    if (td_options_set(&o, kind, "seed", argv[4]) != TD_OK)
        return 2;
    int rc = td_write_file(argv[1], kind, size, &o);
    if (rc != TD_OK) {
        fprintf(stderr, "write_file_tool: %s\n", td_strerror(rc));
        return 1;
    }
    return 0;
}
