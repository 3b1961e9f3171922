/*
 * The CLI's --mpi mode (programs/mpi_mode.c): `mpiexec -n N testdata gen|verify
 * ... --mpi`.  testdata.c parses the arguments exactly as without --mpi and
 * hands the result over here; ranges come from td_split_range(), bytes from
 * td_stream / td_write_file_at / td_verify_count.  Built for real when
 * CMake finds MPI (TD_HAVE_MPI); otherwise these say so and return 2.
 */
#ifndef TD_CLI_MPI_H
#define TD_CLI_MPI_H

#include <testdata.h>

/* Alignment of the ranks' ranges in one shared file. */
#define TD_MPI_ALIGN (1024u * 1024u)
/* Shard file i in a directory: DIR/part-%06llu (as testdata.dask). */
#define TD_MPI_SHARD_NAME "part-%06llu"

typedef struct td_mpi_job {
    int kind;
    uint64_t size;   /* SIZE: bytes in all, bounded */
    uint64_t offset; /* --offset: the stream byte at the start of the output */
    td_options opt;
    const char *path; /* gen: -o FILE or DIR; verify: FILE or DIR */
    uint64_t files;   /* --files M: M shard files in DIR; 0: one shared file */
    int quiet;        /* no throughput line */
} td_mpi_job;

/* Both return this rank's exit status (the same on every rank):
 * 0, 1 (failure or mismatch), 2 (usage). */
int td_mpi_gen(const td_mpi_job *job);
int td_mpi_verify(const td_mpi_job *job);

#endif
