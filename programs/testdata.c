/*
 * testdata: the command-line front end.  It only translates arguments,
 * errors and I/O; every parser, check, generator, verifier and analyzer
 * lives in libtestdata.  This file dispatches to the commands (cmd_*.c).
 *
 * Exit status: 0 success; 1 failure (I/O error, verify mismatch); 2 usage
 * error; 129/130/143 after SIGHUP/SIGINT/SIGTERM; 141 when the reader of
 * stdout went away with SIGPIPE ignored.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

const cli_cmd *const cli_commands[] = {&cli_cmd_gen, &cli_cmd_verify, &cli_cmd_analyze,
                                       &cli_cmd_tree, &cli_cmd_model, &cli_cmd_profile, &cli_cmd_completion, NULL};

static void main_help(FILE *f)
{
    fputs("usage: testdata COMMAND [ARGS]\n"
          "Seeded, reproducible, seekable test data with known, controlled properties.\n"
          "\n"
          "commands:\n", f);
    for (int i = 0; cli_commands[i]; i++) {
        char left[80], args[256];
        snprintf(left, sizeof left, "%s %s", cli_commands[i]->name,
                 cli_cmd_args(cli_commands[i], args, sizeof args));
        if (strlen(left) > 38)
            snprintf(left, sizeof left, "%s ...", cli_commands[i]->name);
        fprintf(f, "  %-38s %s\n", left, cli_commands[i]->summary);
    }
    fputs("  help [COMMAND]                         this help, or a command's\n"
          "\n"
          "'testdata COMMAND --help' describes a command.  --version prints the version.\n"
          "Example: testdata gen random 1G --seed 7 | ssh host testdata verify random 1G --seed 7\n",
          f);
}

static const cli_cmd *find_command(const char *name)
{
    const char *names[16];
    int n = 0;
    for (int i = 0; cli_commands[i]; i++) {
        if (strcmp(cli_commands[i]->name, name) == 0)
            return cli_commands[i];
        names[n++] = cli_commands[i]->name;
    }
    names[n++] = "help";
    names[n] = NULL;
    const char *s = td_suggest(name, names);
    if (s)
        cli_usage_error("unknown command '%s'; did you mean '%s'?", name, s);
    cli_usage_error("unknown command '%s'", name);
}

int main(int argc, char **argv)
{
    /* Before anything is opened: no file may take the place of a closed
     * standard descriptor. */
    cli_guard_std_fds();
    cli_check_stdout_at_exit();
    cli_mpi_rank_from_env(argc, argv);
    if (argc < 2) {
        main_help(stderr);
        return CLI_EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        /* "help help" is help itself (it is no command: find_command would
         * answer "unknown command 'help'; did you mean 'help'?") */
        if (argc > 2 && strcmp(argv[1], "help") == 0 && strcmp(argv[2], "help") != 0) {
            /* "help CMD [SUB]" is "CMD [SUB] --help": one help per command,
             * however the command prints it (tree has subcommands). */
            const cli_cmd *cmd = find_command(argv[2]);
            char **hargv = calloc((size_t)argc, sizeof *hargv);
            if (!hargv)
                return CLI_EXIT_FAIL;
            for (int i = 2; i < argc; i++)
                hargv[i - 2] = argv[i];
            hargv[argc - 2] = (char *)"--help";
            cli_command = cmd->name;
            int rc = cmd->run(cmd, argc - 1, hargv); /* tree's help returns */
            free(hargv);
            return rc;
        }
        main_help(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
        printf("testdata %s (format %d)\n", td_version(), TD_FORMAT_VERSION);
        return 0;
    }
    const cli_cmd *cmd = find_command(argv[1]);
    cli_signals_install();
    cli_command = cmd->name;
    return cmd->run(cmd, argc - 1, argv + 1);
}
