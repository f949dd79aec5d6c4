/* SPDX-License-Identifier: MIT */
/*
 * Map files on disk: atomic replacement on save, bounded reading on load.
 *
 * This is the one POSIX part of libdch (open, fsync, rename); the byte format
 * itself lives in map_file.c and is plain C11. Atomic replacement is the
 * usual write-to-temporary, fsync, rename, fsync-the-directory sequence:
 * rename() is atomic within a file system, the first fsync makes sure the
 * renamed file has its data, and the second that the rename itself survives
 * a power loss.
 */
#define _POSIX_C_SOURCE 200809L

#include "dch/map_file.h"

#include "dch/error.h"

#include "alloc.h"
#include "map_file_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef O_CLOEXEC
#define O_CLOEXEC 0
#endif

/* Write all of buf, retrying on short writes and EINTR. */
static int write_all(int fd, const uint8_t *buf, size_t len)
{
    while (len > 0) {
        const ssize_t n = write(fd, buf, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Read up to len bytes, stopping early only at end of file; -1 on error. */
static ssize_t read_full(int fd, uint8_t *buf, size_t len)
{
    size_t got = 0;
    while (got < len) {
        const ssize_t n = read(fd, buf + got, len - got);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (n == 0)
            break;
        got += (size_t)n;
    }
    return (ssize_t)got;
}

/*
 * The directory holding `path`, allocated: everything before the last '/',
 * "/" for a file in the root, "." for a bare name.
 */
static char *directory_of(const dch_allocator *a, const char *path)
{
    const char *slash = strrchr(path, '/');
    if (slash == NULL)
        return dch__strdup(a, ".", 1);
    return dch__strdup(a, path, slash == path ? 1 : (size_t)(slash - path));
}

/* fsync a directory, so that a rename into it is durable. */
static int sync_directory(const char *dir)
{
    const int fd = open(dir, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    /* Some file systems cannot sync a directory and say so with EINVAL;
     * there is nothing more to do on them. */
    int rc = fsync(fd);
    if (rc != 0 && errno == EINVAL)
        rc = 0;
    const int saved = errno;
    close(fd);
    errno = saved;
    return rc;
}

int dch_map_save_file(const dch_map *m, const char *path)
{
    if (m == NULL || path == NULL || path[0] == '\0')
        return DCH_EINVAL;
    dch_map_config cfg;
    dch_map_get_config(m, &cfg);
    const dch_allocator *a = cfg.allocator;

    size_t len;
    (void)dch_map_save(m, NULL, 0, &len);
    uint8_t *buf = dch__alloc(a, len);
    const size_t plen = strlen(path);
    const size_t tcap = plen + 64;
    char *tmp = dch__alloc(a, tcap);
    char *dir = directory_of(a, path);
    /* Every allocation comes before the first file operation. */
    if (buf == NULL || tmp == NULL || dir == NULL) {
        dch__free(a, buf);
        dch__free(a, tmp);
        dch__free(a, dir);
        return DCH_ENOMEM;
    }
    (void)dch_map_save(m, buf, len, &len);

    /* An existing file keeps its permission bits; open() applies the umask
     * to a new one. */
    struct stat st;
    const int have_mode = stat(path, &st) == 0;

    int fd = -1;
    for (unsigned n = 0; fd < 0 && n < 1000; n++) {
        snprintf(tmp, tcap, "%s.%ld.%u.tmp", path, (long)getpid(), n);
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    int ok = fd >= 0;
    if (ok && have_mode)
        ok = fchmod(fd, st.st_mode & 07777) == 0;
    ok = ok && write_all(fd, buf, len) == 0 && fsync(fd) == 0;
    int saved = errno;
    if (fd >= 0 && close(fd) != 0 && ok) {
        ok = 0;
        saved = errno;
    }
    if (ok && rename(tmp, path) != 0) {
        ok = 0;
        saved = errno;
    }
    if (!ok && fd >= 0)
        unlink(tmp);
    if (ok && sync_directory(dir) != 0) {
        /* The new map is in place; only its durability is in doubt. */
        ok = 0;
        saved = errno;
    }
    dch__free(a, buf);
    dch__free(a, tmp);
    dch__free(a, dir);
    errno = saved;
    return ok ? DCH_OK : DCH_EIO;
}

int dch_map_load_file(dch_map **out, const char *path)
{
    return dch_map_load_file_with(out, path, NULL);
}

int dch_map_load_file_with(dch_map **out, const char *path,
                           const dch_allocator *allocator)
{
    if (out == NULL || path == NULL || !dch__allocator_valid(allocator))
        return DCH_EINVAL;
    const int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return DCH_EIO;

    /* The header announces the length; the format code judges the rest. */
    uint8_t head[DCH__MAP_FILE_HEADER];
    const ssize_t got = read_full(fd, head, sizeof head);
    uint8_t *buf = NULL;
    uint64_t len = 0;
    int rc = got < 0 ? DCH_EIO : dch__map_file_length(head, (size_t)got, &len);
    if (rc == DCH_OK) {
        /* One byte more than announced, to see whether anything follows. */
        buf = dch__alloc(allocator, (size_t)len + 1);
        if (buf == NULL) {
            rc = DCH_ENOMEM;
        } else {
            memcpy(buf, head, sizeof head);
            const ssize_t more = read_full(fd, buf + sizeof head, (size_t)len + 1 - sizeof head);
            if (more < 0)
                rc = DCH_EIO;
            else if ((size_t)more != (size_t)len - sizeof head)
                rc = DCH_ECORRUPT;
            else
                rc = dch_map_load_with(out, buf, (size_t)len, allocator);
        }
    }
    const int saved = errno;
    dch__free(allocator, buf);
    close(fd);
    errno = saved;
    return rc;
}
