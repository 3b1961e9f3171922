/* td_write_file(_at): a fixture file (or one shard) in one call, never left half-written. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <unistd.h>

#define WRITE_CHUNK (1024u * 1024u)

static int write_all(int fd, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return TD_EIO;
        }
        p += w;
        n -= (size_t)w;
    }
    return TD_OK;
}

int td_write_file(const char *path, td_kind kind, uint64_t size, const td_options *o)
{
    return td_write_file_at(path, kind, 0, size, o);
}

int td_write_file_at(const char *path, td_kind kind, uint64_t offset, uint64_t size,
                     const td_options *o)
{
    char *tmp_path;
    uint8_t *buf = NULL;
    td_gen g;
    int fd, rc, saved;

    if (!path || !*path)
        return TD_EINVAL;
    if (size == TD_SIZE_UNBOUNDED || size > UINT64_MAX - offset)
        return TD_ERANGE;
    rc = td__gen_init(&g, (int)kind, o);
    if (rc == TD_OK)
        rc = td__sodium_ready();
    if (rc != TD_OK) {
        td__gen_fini(&g);
        return rc;
    }
    size_t plen = strlen(path);
    tmp_path = malloc(plen + sizeof ".tdtmp.XXXXXX");
    if (size)
        buf = malloc(size < WRITE_CHUNK ? (size_t)size : WRITE_CHUNK);
    if (!tmp_path || (size && !buf)) {
        rc = TD_ENOMEM;
        goto out;
    }
    if (size > WRITE_CHUNK)
        td__gen_keep_pool(&g, WRITE_CHUNK);
    /* Not mkstemp(): its 0600 mode would need a umask() dance, which is
     * process-global and so not thread-safe.  O_EXCL gives the same safety. */
    memcpy(tmp_path, path, plen);
    fd = -1;
    for (int attempt = 0; attempt < 100 && fd < 0; attempt++) {
        snprintf(tmp_path + plen, sizeof ".tdtmp.XXXXXX", ".tdtmp.%06x",
                 (unsigned)(randombytes_random() & 0xffffff));
        fd = open(tmp_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd < 0) {
        rc = TD_EIO;
        goto out;
    }
    for (uint64_t done = 0; done < size && rc == TD_OK;) {
        size_t n = size - done < WRITE_CHUNK ? (size_t)(size - done) : WRITE_CHUNK;
        rc = td__gen_fill(&g, offset + done, buf, n);
        if (rc == TD_OK)
            rc = write_all(fd, buf, n);
        done += n;
    }
    saved = errno;
    if (close(fd) != 0 && rc == TD_OK) {
        rc = TD_EIO;
        saved = errno;
    }
    if (rc == TD_OK && rename(tmp_path, path) != 0) {
        rc = TD_EIO;
        saved = errno;
    }
    if (rc != TD_OK)
        unlink(tmp_path);
    errno = saved;
out:
    saved = errno;
    free(tmp_path);
    free(buf);
    td__gen_fini(&g);
    errno = saved;
    return rc;
}
