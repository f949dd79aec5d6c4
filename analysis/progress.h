/* SPDX-License-Identifier: MIT */
/*
 * A progress line on stderr for steps that take more than a second: nothing
 * is printed for quick steps, and a long one reports at most twice a second
 * (rewriting one line on a terminal, one line per report otherwise).
 */
#ifndef DCH_ANALYSIS_PROGRESS_H
#define DCH_ANALYSIS_PROGRESS_H

#include <stdbool.h>

typedef struct an_progress {
    const char *what; /* borrowed: the step's name */
    double start;
    double last;
    bool shown;
    bool tty;
} an_progress;

/** Seconds on a monotonic clock. */
double an_now(void);

/** Start timing a step named `what` (borrowed until an_progress_end). */
void an_progress_begin(an_progress *p, const char *what);

/** Report done / total units of work, if the step has run over a second. */
void an_progress_update(an_progress *p, const char *detail, double done,
                        double total);

/** End the step; if progress was shown, say how long it took. */
void an_progress_end(an_progress *p);

#endif /* DCH_ANALYSIS_PROGRESS_H */
