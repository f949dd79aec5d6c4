/* SPDX-License-Identifier: MIT */
/*
 * A rollout's step files live in a folder of their own in $TMPDIR, so that
 * the migrator gets them as plain paths. A rollout removes its folder when
 * it ends, but one killed (SIGKILL, a crash, a lost machine) cannot, so the
 * folder also tells whether its rollout lives: the rollout holds an
 * exclusive flock() on it, and the kernel drops that lock when the process
 * dies, however it dies. Each rollout first removes the folders whose lock
 * it can take: their rollouts are gone.
 *
 * Only our own folders named dch-rollout-* are touched, only the three step
 * files are deleted, and a folder is removed only when that leaves it empty
 * (rmdir), so whatever a migrator put there stays. A folder is locked right
 * after mkdtemp(); a sweep that comes between the two may remove it while
 * still empty, which the maker sees (the path no longer names its folder)
 * and answers with a new one.
 */
#define _DEFAULT_SOURCE /* flock(), mkdtemp() */
#include "workdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define PREFIX "dch-rollout-"

static const char *const step_files[] = {"from.dchmap", "to.dchmap", "plan.json"};

static int open_folder(const char *path)
{
    return open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* The step files of the folder open as fd, then the folder if empty. */
static void remove_folder(int fd, const char *path)
{
    for (size_t i = 0; i < sizeof step_files / sizeof step_files[0]; i++)
        unlinkat(fd, step_files[i], 0);
    rmdir(path);
}

/* Remove the folder at path if it is ours and no process holds its lock. */
static void sweep_one(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
        return;
    const int fd = open_folder(path);
    if (fd < 0)
        return;
    if (flock(fd, LOCK_EX | LOCK_NB) == 0)
        remove_folder(fd, path);
    close(fd); /* and with it the lock */
}

static void sweep_stale(const char *tmp)
{
    DIR *dir = opendir(tmp);
    if (dir == NULL)
        return;
    for (struct dirent *e; (e = readdir(dir)) != NULL;) {
        char path[4200];
        if (strncmp(e->d_name, PREFIX, strlen(PREFIX)) != 0 ||
            snprintf(path, sizeof path, "%s/%s", tmp, e->d_name) >= (int)sizeof path)
            continue;
        sweep_one(path);
    }
    closedir(dir);
}

/* Whether the locked folder fd is still the one at path. */
static int still_there(int fd, const char *path)
{
    struct stat held, named;
    return fstat(fd, &held) == 0 && stat(path, &named) == 0 && held.st_dev == named.st_dev &&
           held.st_ino == named.st_ino;
}

/* One attempt: 0 made and locked, 1 swept away meanwhile, -1 failed. */
static int try_make(workdir *d)
{
    if (mkdtemp(d->path) == NULL)
        return -1;
    d->lock = open_folder(d->path);
    if (d->lock < 0)
        return errno == ENOENT ? 1 : -1;
    const int locked = flock(d->lock, LOCK_EX) == 0;
    const int err = errno;
    if (locked && still_there(d->lock, d->path))
        return 0;
    close(d->lock);
    d->lock = -1;
    errno = err;
    return locked ? 1 : -1;
}

int make_workdir(workdir *d)
{
    const char *env = getenv("TMPDIR");
    const char *tmp = env && *env ? env : "/tmp";
    d->lock = -1;
    sweep_stale(tmp);
    int rc = 1;
    for (int attempt = 0; rc == 1 && attempt < 8; attempt++) {
        snprintf(d->path, sizeof d->path, "%s/" PREFIX "XXXXXX", tmp);
        rc = try_make(d);
    }
    if (rc == 1)
        errno = EBUSY; /* swept away eight times over */
    if (rc != 0)
        return -1;
    snprintf(d->from, sizeof d->from, "%s/%s", d->path, step_files[0]);
    snprintf(d->to, sizeof d->to, "%s/%s", d->path, step_files[1]);
    snprintf(d->plan, sizeof d->plan, "%s/%s", d->path, step_files[2]);
    return 0;
}

void remove_workdir(workdir *d)
{
    if (d->lock < 0)
        return;
    remove_folder(d->lock, d->path);
    close(d->lock);
    d->lock = -1;
}
