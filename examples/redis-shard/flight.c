/* SPDX-License-Identifier: MIT */
/*
 * Shared step state (see flight.h).
 */
#include "flight.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int flight_init(flight *f, const view *old, const view *new, size_t nbook)
{
    memset(f, 0, sizeof *f);
    f->old = old;
    f->new = new;
    f->finished = calloc(nbook ? nbook : 1, 1);
    if (f->finished == NULL) {
        fprintf(stderr, "redis-shard: out of memory\n");
        return -1;
    }
    if (pthread_mutex_init(&f->mu, NULL) != 0) {
        free(f->finished);
        return -1;
    }
    if (pthread_cond_init(&f->cv, NULL) != 0) {
        pthread_mutex_destroy(&f->mu);
        free(f->finished);
        return -1;
    }
    return 0;
}

void flight_destroy(flight *f)
{
    pthread_cond_destroy(&f->cv);
    pthread_mutex_destroy(&f->mu);
    free(f->finished);
    f->finished = NULL;
}

int flight_finished(flight *f, int d)
{
    int v;

    pthread_mutex_lock(&f->mu);
    v = f->finished[d];
    pthread_mutex_unlock(&f->mu);
    return v;
}
