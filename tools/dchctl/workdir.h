/* SPDX-License-Identifier: MIT */
/*
 * The folder of a rollout's step files, $TMPDIR/dch-rollout-XXXXXX (see
 * workdir.c): made locked, and removed by the next rollout when the one
 * that made it died without removing it.
 */
#ifndef DCH_TOOL_WORKDIR_H
#define DCH_TOOL_WORKDIR_H

typedef struct workdir {
    char path[4096];
    char from[4200], to[4200], plan[4200]; /* DCH_FROM, DCH_TO, DCH_PLAN */
    int lock; /* the folder, open and locked; -1 when there is none */
} workdir;

/* First remove the folders of rollouts that died, then make and lock a new
 * one; 0, or -1 with errno set. */
int make_workdir(workdir *d);

/* Remove d's folder and its step files, and release it. Nothing when
 * make_workdir did not succeed. */
void remove_workdir(workdir *d);

#endif /* DCH_TOOL_WORKDIR_H */
