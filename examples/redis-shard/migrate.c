/* SPDX-License-Identifier: MIT */
/*
 * The migrator (see migrate.h).
 */
#include "migrate.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* SCAN calls allowed per walk: COUNT 1000 over any keyspace this example
 * makes finishes in far fewer. */
#define SCAN_MAX_CALLS 1000000u
/* Longest wait for the client between two batches. */
#define INTERLEAVE_WAIT_S 2

typedef struct pending {
    char *key;
    size_t len;
    int to;
} pending;

typedef struct collector {
    const plan *p;
    const view *old, *new;
    int donor;
    pending *items;
    size_t n, cap;
    migrate_result *res;
    int counting_only; /* second pass: count, do not collect */
    uint64_t found;
} collector;

static int collect(const char *key, size_t len, void *ctx)
{
    collector *col = ctx;
    uint64_t h = view_hash(col->old, key, len);
    const move *m = plan_find(col->p, h);

    if (view_owner(col->old, h) != col->donor) {
        col->res->strays++;
        return 0;
    }
    if (m == NULL)
        return 0;
    if (m->from != col->donor || view_owner(col->new, h) != m->to) {
        col->res->disagreements++;
        return 0;
    }
    col->found++;
    if (col->counting_only)
        return 0;
    if (col->n == col->cap) {
        size_t ncap = col->cap ? col->cap * 2 : 1024;
        pending *ni = realloc(col->items, ncap * sizeof *ni);

        if (ni == NULL) {
            fprintf(stderr, "redis-shard: out of memory\n");
            return -1;
        }
        col->items = ni;
        col->cap = ncap;
    }
    col->items[col->n].key = malloc(len + 1);
    if (col->items[col->n].key == NULL) {
        fprintf(stderr, "redis-shard: out of memory\n");
        return -1;
    }
    memcpy(col->items[col->n].key, key, len);
    col->items[col->n].key[len] = '\0';
    col->items[col->n].len = len;
    col->items[col->n].to = m->to;
    col->n++;
    return 0;
}

static int by_receiver_then_key(const void *a, const void *b)
{
    const pending *x = a, *y = b;
    size_t n = x->len < y->len ? x->len : y->len;
    int c;

    if (x->to != y->to)
        return x->to < y->to ? -1 : 1;
    c = memcmp(x->key, y->key, n);
    if (c != 0)
        return c;
    return x->len < y->len ? -1 : x->len > y->len;
}

static void free_items(collector *col)
{
    for (size_t i = 0; i < col->n; i++)
        free(col->items[i].key);
    free(col->items);
    col->items = NULL;
    col->n = col->cap = 0;
}

/* Wait until the client has done `want` more operations, it has stopped, or
 * the wait times out. */
static void wait_for_client(flight *f, unsigned want, migrate_result *res)
{
    struct timespec deadline;
    uint64_t target;

    if (want == 0)
        return;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += INTERLEAVE_WAIT_S;
    pthread_mutex_lock(&f->mu);
    target = f->client_ops + want;
    while (f->client_ops < target && !f->client_stopped) {
        if (pthread_cond_timedwait(&f->cv, &f->mu, &deadline) == ETIMEDOUT) {
            res->waits_timed_out++;
            break;
        }
    }
    pthread_mutex_unlock(&f->mu);
}

static int move_keys(const cluster *c, collector *col, flight *f,
                     redisContext *donor, const migrate_config *cfg,
                     migrate_result *res)
{
    const char **keys = malloc(cfg->batch * sizeof *keys);
    size_t *lens = malloc(cfg->batch * sizeof *lens);
    size_t i = 0;
    int rc = 0;

    if (keys == NULL || lens == NULL) {
        free(keys);
        free(lens);
        fprintf(stderr, "redis-shard: out of memory\n");
        return -1;
    }
    while (i < col->n && rc == 0) {
        int to = col->items[i].to;
        size_t n = 0;

        if (cfg->stop_after != 0 && res->batches >= cfg->stop_after) {
            fprintf(stderr, "redis-shard: stopping after %" PRIu64
                            " batches, as asked\n", res->batches);
            rc = -1;
            break;
        }

        while (i < col->n && col->items[i].to == to && n < cfg->batch) {
            keys[n] = col->items[i].key;
            lens[n] = col->items[i].len;
            n++;
            i++;
        }
        rc = store_migrate(donor, c->book[to].host, c->book[to].port, keys,
                           lens, n);
        if (rc == 0) {
            res->sent[col->donor] += n;
            res->received[to] += n;
            res->moved += n;
            res->batches++;
            wait_for_client(f, cfg->interleave, res);
        }
    }
    free(keys);
    free(lens);
    return rc;
}

static int drain_donor(const cluster *c, const plan *p, flight *f, int d,
                       redisContext *donor, const migrate_config *cfg,
                       migrate_result *res)
{
    collector col;
    size_t kept = 0;
    int rc;

    memset(&col, 0, sizeof col);
    col.p = p;
    col.old = f->old;
    col.new = f->new;
    col.donor = d;
    col.res = res;
    rc = store_scan(donor, SCAN_MAX_CALLS, collect, &col);
    if (rc != 0) {
        free_items(&col);
        return -1;
    }
    if (col.n > 1)
        qsort(col.items, col.n, sizeof *col.items, by_receiver_then_key);
    for (size_t i = 0; i < col.n; i++) {
        if (kept > 0 && by_receiver_then_key(&col.items[kept - 1],
                                             &col.items[i]) == 0) {
            free(col.items[i].key);
            continue;
        }
        col.items[kept++] = col.items[i];
    }
    col.n = kept;
    rc = move_keys(c, &col, f, donor, cfg, res);
    free_items(&col);
    if (rc != 0)
        return -1;

    /* Second pass: nothing may be left. Under the client rule no moving key
     * can reappear on the donor, so anything found is a broken rule. */
    col.counting_only = 1;
    col.found = 0;
    if (store_scan(donor, SCAN_MAX_CALLS, collect, &col) != 0)
        return -1;
    res->left_behind += col.found;
    if (col.found != 0)
        return 0; /* not finished: the client keeps using the donor */

    pthread_mutex_lock(&f->mu);
    f->finished[d] = 1;
    pthread_cond_broadcast(&f->cv);
    pthread_mutex_unlock(&f->mu);
    return 0;
}

int migrate_run(const cluster *c, const plan *p, flight *f,
                redisContext **conns, const migrate_config *cfg,
                migrate_result *res)
{
    memset(res, 0, sizeof *res);
    res->sent = calloc(c->nbook ? c->nbook : 1, sizeof *res->sent);
    res->received = calloc(c->nbook ? c->nbook : 1, sizeof *res->received);
    if (res->sent == NULL || res->received == NULL) {
        fprintf(stderr, "redis-shard: out of memory\n");
        return -1;
    }
    for (size_t d = 0; d < c->nbook; d++) {
        if (p->sends[d] == 0.0)
            continue;
        if (drain_donor(c, p, f, (int)d, conns[d], cfg, res) != 0)
            return -1;
    }
    return 0;
}

void migrate_result_free(migrate_result *res)
{
    free(res->sent);
    free(res->received);
    memset(res, 0, sizeof *res);
}
