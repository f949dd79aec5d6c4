/* SPDX-License-Identifier: MIT */
/*
 * Progress lines. The clock is CLOCK_MONOTONIC, so a wall-clock jump cannot
 * make a step look long or short.
 */
#define _POSIX_C_SOURCE 200809L

#include "progress.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

double an_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void an_progress_begin(an_progress *p, const char *what)
{
    p->what = what;
    p->start = p->last = an_now();
    p->shown = false;
    p->tty = isatty(fileno(stderr)) != 0;
}

void an_progress_update(an_progress *p, const char *detail, double done,
                        double total)
{
    double t = an_now();
    if (t - p->start < 1.0 || (p->shown && t - p->last < 0.5))
        return;
    double pct = total > 0 ? 100.0 * done / total : 0.0;
    fprintf(stderr, "%sdch-analysis: %s: %s %3.0f%% (%.1f s)%s",
            p->tty ? "\r" : "", p->what, detail ? detail : "", pct,
            t - p->start, p->tty ? "\033[K" : "\n");
    fflush(stderr);
    p->shown = true;
    p->last = t;
}

void an_progress_end(an_progress *p)
{
    if (!p->shown)
        return;
    fprintf(stderr, "%sdch-analysis: %s: done in %.1f s%s\n",
            p->tty ? "\r" : "", p->what, an_now() - p->start,
            p->tty ? "\033[K" : "");
    p->shown = false;
}
