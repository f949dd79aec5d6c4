/* SPDX-License-Identifier: MIT */
/*
 * The folder of a rollout's step files, $TMPDIR/dch-rollout-XXXXXX (see
 * workdir.c): made locked, shared with the migrator (which holds the lock
 * too while it runs), taken over by a resumed rollout once nobody holds it,
 * and removed by the next rollout when the one that made it died without
 * removing it.
 */
#ifndef DCH_TOOL_WORKDIR_H
#define DCH_TOOL_WORKDIR_H

#include <stddef.h>
#include <stdint.h>

typedef struct workdir {
    char path[4096];
    char from[4200], to[4200], plan[4200]; /* DCH_FROM, DCH_TO, DCH_PLAN */
    char state[4200]; /* migrator.state: what the last migrator did */
    int lock; /* the folder, open (close-on-exec) and locked; -1 when none */
} workdir;

/* First remove the folders of rollouts that died, then make and lock a new
 * one; 0, or -1 with errno set. */
int make_workdir(workdir *d);

/* Take over the folder at `path` that a stopped rollout left: lock it,
 * waiting up to wait_ms while a process (its migrator) still holds it, and
 * calling waiting(d, ctx) once, with d's paths set, before the first wait.
 * 0 taken (d is then as make_workdir leaves it); 1 no such folder (ENOENT
 * only); -1 with errno: ETIMEDOUT when still held after wait_ms, EINVAL
 * when path is not $TMPDIR/dch-rollout-* (nothing in it is touched), EPERM
 * when another user owns it, or the error of lstat(), open() or flock(). */
int adopt_workdir(workdir *d, const char *path, uint64_t wait_ms,
                  void (*waiting)(const workdir *d, void *ctx), void *ctx);

/* Remove d's folder and its step files, and release it. Nothing when
 * make_workdir did not succeed. */
void remove_workdir(workdir *d);

/* The state line of the folder at d->path: write replaces it atomically
 * (0 or -1); read gives "" when there is none. */
int workdir_state_write(const workdir *d, const char *line);
void workdir_state_read(const workdir *d, char *buf, size_t cap);

/* The first line of a small file, without its newline, into buf (cap > 0);
 * "" when it cannot be read. */
void read_first_line(const char *path, char *buf, size_t cap);

#endif /* DCH_TOOL_WORKDIR_H */
