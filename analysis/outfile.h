/* SPDX-License-Identifier: MIT */
/*
 * Files written whole or not at all. Every file dch-analysis and dch-bench
 * write (CSV tables, charts.gp, index.html, diagrams, bench.json) goes first
 * to a hidden temporary file in the same folder, which is renamed over the
 * target only once it is complete: a run that is killed, or that fails
 * half-way, leaves the previous file or none, never a truncated one. The
 * rename is atomic because both names are in one folder (one file system).
 *
 * The file is not fsync'ed: the guarantee is against a stopped program, not
 * a lost machine, which is what a report or a benchmark's output needs.
 */
#ifndef DCH_ANALYSIS_OUTFILE_H
#define DCH_ANALYSIS_OUTFILE_H

#include <stdio.h>

/** A file being written: write to `f`, then an_outfile_commit or _abort. */
typedef struct an_outfile {
    FILE *f;
    char *path; /* the target */
    char *tmp;  /* the temporary beside it */
} an_outfile;

/**
 * Start writing `path`: creates ".<name>.XXXXXX" in path's folder, with the
 * permissions a plain fopen would give (0666 less the umask).
 * @return 0, or -1 with errno set (nothing is created).
 */
int an_outfile_open(an_outfile *o, const char *path);

/**
 * Close the temporary file and rename it over the target. On any write or
 * close error the temporary is removed and the target left as it was.
 * @return 0, or -1 with errno set. `o` is closed either way.
 */
int an_outfile_commit(an_outfile *o);

/** Close and remove the temporary file; the target is left as it was. */
void an_outfile_abort(an_outfile *o);

/**
 * The whole of a file in one call: open `path`, let `write` fill it from
 * `ctx`, commit.
 * @return what an_outfile_open or an_outfile_commit returns.
 */
int an_outfile_write(const char *path, void (*write)(FILE *f, const void *ctx), const void *ctx);

#endif /* DCH_ANALYSIS_OUTFILE_H */
