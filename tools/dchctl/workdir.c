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
 * The migrator holds the lock too: the rollout's descriptor is close-on-exec
 * (the plan's shell does not need it), but the migrator's process inherits
 * a copy without that flag (rollout.c), and a flock() lasts while any copy
 * is open. So a rollout killed while its migrator runs leaves a locked
 * folder, which no sweep touches and which a resumed rollout waits for
 * (adopt_workdir) before it runs that step again or moves on.
 *
 * Only our own folders named dch-rollout-* are touched, only the step files
 * and the state file are deleted, and a folder is removed only when that
 * leaves it empty (rmdir), so whatever a migrator put there stays. A folder is locked right
 * after mkdtemp(); a sweep that comes between the two may remove it while
 * still empty, which the maker sees (the path no longer names its folder)
 * and answers with a new one.
 */
#define _DEFAULT_SOURCE /* flock(), mkdtemp(), nanosleep() */
#include "workdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PREFIX "dch-rollout-"

static const char *const step_files[] = {"from.dchmap", "to.dchmap", "plan.json",
                                         "migrator.state", "migrator.state.tmp"};

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

/* The file names of the folder d->path. */
static void set_names(workdir *d)
{
    snprintf(d->from, sizeof d->from, "%s/%s", d->path, step_files[0]);
    snprintf(d->to, sizeof d->to, "%s/%s", d->path, step_files[1]);
    snprintf(d->plan, sizeof d->plan, "%s/%s", d->path, step_files[2]);
    snprintf(d->state, sizeof d->state, "%s/%s", d->path, step_files[3]);
}

/* The folder that holds the step folders: $TMPDIR, else /tmp. */
static const char *tmp_dir(void)
{
    const char *env = getenv("TMPDIR");
    return env && *env ? env : "/tmp";
}

int make_workdir(workdir *d)
{
    const char *tmp = tmp_dir();
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
    set_names(d);
    return 0;
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Whether path is TMP/dch-rollout-NAME, TMP as make_workdir picks it: the
 * path comes from the owner record in etcd, which anyone who can write the
 * key can set, and a resume deletes files in it. */
static int is_step_folder(const char *path)
{
    const char *tmp = tmp_dir();
    const size_t n = strlen(tmp);
    if (path[0] != '/' || strncmp(path, tmp, n) != 0 || path[n] != '/')
        return 0;
    const char *name = path + n + 1;
    return strncmp(name, PREFIX, strlen(PREFIX)) == 0 && strchr(name, '/') == NULL;
}

/* Whether the folder at path is there, and ours to lock: 1 gone, 0 yes, -1
 * (errno) when it cannot be adopted. Only ENOENT means gone: a folder of
 * another user, or one we cannot open, may still hold a running migrator,
 * and taking it for gone would start the step again beside it. */
static int check_folder(const char *path)
{
    struct stat st;
    if (!is_step_folder(path)) {
        errno = EINVAL;
        return -1;
    }
    if (lstat(path, &st) != 0)
        return errno == ENOENT ? 1 : -1;
    if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    if (st.st_uid != geteuid()) {
        errno = EPERM;
        return -1;
    }
    return 0;
}

int adopt_workdir(workdir *d, const char *path, uint64_t wait_ms,
                  void (*waiting)(const workdir *d, void *ctx), void *ctx)
{
    d->lock = -1;
    if (snprintf(d->path, sizeof d->path, "%s", path) >= (int)sizeof d->path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    const int there = check_folder(path);
    if (there != 0)
        return there;
    set_names(d);
    const int fd = open_folder(path);
    if (fd < 0)
        return errno == ENOENT ? 1 : -1;
    const uint64_t until = now_ms() + wait_ms;
    for (int waited = 0; flock(fd, LOCK_EX | LOCK_NB) != 0; waited = 1) {
        if (errno != EWOULDBLOCK && errno != EINTR) {
            const int err = errno;
            close(fd);
            errno = err;
            return -1;
        }
        if (!waited && waiting != NULL)
            waiting(d, ctx);
        if (now_ms() >= until) {
            close(fd);
            errno = ETIMEDOUT;
            return -1;
        }
        const struct timespec pause = {0, 100 * 1000000L};
        nanosleep(&pause, NULL);
    }
    if (!still_there(fd, path)) { /* swept away while we waited */
        close(fd);
        return 1;
    }
    d->lock = fd;
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

int workdir_state_write(const workdir *d, const char *line)
{
    char tmp[4300];
    snprintf(tmp, sizeof tmp, "%s/%s", d->path, step_files[4]);
    FILE *f = fopen(tmp, "w");
    if (f == NULL)
        return -1;
    const int ok = fprintf(f, "%s\n", line) > 0;
    if (fclose(f) != 0 || !ok)
        return -1;
    return rename(tmp, d->state);
}

void read_first_line(const char *path, char *buf, size_t cap)
{
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return;
    if (fgets(buf, (int)cap, f) == NULL)
        buf[0] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
    fclose(f);
}

void workdir_state_read(const workdir *d, char *buf, size_t cap)
{
    read_first_line(d->state, buf, cap);
}
