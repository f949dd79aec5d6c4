/* SPDX-License-Identifier: MIT */
/*
 * Files written whole or not at all: a temporary file beside the target,
 * renamed over it when complete (POSIX rename replaces the target
 * atomically within one file system, and one folder is one file system).
 */
#define _POSIX_C_SOURCE 200809L

#include "outfile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void clear(an_outfile *o)
{
    free(o->path);
    free(o->tmp);
    *o = (an_outfile){NULL, NULL, NULL};
}

int an_outfile_open(an_outfile *o, const char *path)
{
    *o = (an_outfile){NULL, NULL, NULL};
    const char *slash = strrchr(path, '/');
    const size_t dir = slash ? (size_t)(slash - path) + 1 : 0; /* with '/' */
    const size_t len = strlen(path);
    o->path = malloc(len + 1);
    o->tmp = malloc(len + 16);
    if (o->path == NULL || o->tmp == NULL) {
        clear(o);
        errno = ENOMEM;
        return -1;
    }
    memcpy(o->path, path, len + 1);
    /* "<dir>/.<name>.XXXXXX": hidden, so a listing of the folder or a
     * glob such as *.csv never shows a file being written. */
    memcpy(o->tmp, path, dir);
    snprintf(o->tmp + dir, len - dir + 16, ".%s.XXXXXX", path + dir);
    const int fd = mkstemp(o->tmp);
    if (fd < 0) {
        const int e = errno;
        clear(o);
        errno = e;
        return -1;
    }
    /* mkstemp makes the file 0600; give it what fopen would. */
    const mode_t mask = umask(0);
    umask(mask);
    if (fchmod(fd, 0666 & ~mask) != 0 || (o->f = fdopen(fd, "w")) == NULL) {
        const int e = errno;
        close(fd);
        unlink(o->tmp);
        clear(o);
        errno = e;
        return -1;
    }
    return 0;
}

int an_outfile_commit(an_outfile *o)
{
    if (o->f == NULL) {
        errno = EBADF;
        return -1;
    }
    int failed = ferror(o->f);
    int e = failed ? EIO : 0;
    if (fclose(o->f) != 0 && !failed) {
        failed = 1;
        e = errno;
    }
    o->f = NULL;
    if (!failed && rename(o->tmp, o->path) != 0) {
        failed = 1;
        e = errno;
    }
    if (failed)
        unlink(o->tmp);
    clear(o);
    errno = e;
    return failed ? -1 : 0;
}

void an_outfile_abort(an_outfile *o)
{
    if (o->f != NULL)
        fclose(o->f);
    if (o->tmp != NULL)
        unlink(o->tmp);
    clear(o);
}

int an_outfile_write(const char *path, void (*write)(FILE *f, const void *ctx), const void *ctx)
{
    an_outfile out;
    if (an_outfile_open(&out, path) != 0)
        return -1;
    write(out.f, ctx);
    return an_outfile_commit(&out);
}
