/* SPDX-License-Identifier: MIT */
/*
 * The concurrent client (see client.h and the rule in flight.h).
 */
#include "client.h"

#include "keys.h"
#include "rng.h" /* SplitMix64: the picks and operations depend on the seed alone */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int key_moves(const client *cl, uint32_t i)
{
    char key[KEY_CAP];
    size_t len = key_name(key, i);

    return plan_find(cl->p, view_hash(cl->f->old, key, len)) != NULL;
}

/* Half the keys from the moving ranges, half from the rest, distinct. The
 * draws are bounded; a data set with too few keys of one kind gives fewer. */
static int pick_keys(client *cl, uint64_t *rng)
{
    uint32_t n = cl->c->keys;
    uint32_t want = cl->cfg.keys < n ? cl->cfg.keys : n;
    uint32_t want_moving = want / 2, want_staying = want - want / 2;
    unsigned char *taken;
    uint64_t draws = 0, max_draws = 20 * (uint64_t)n;

    cl->picked = malloc((want ? want : 1) * sizeof *cl->picked);
    taken = calloc(n ? n : 1, 1);
    if (cl->picked == NULL || taken == NULL) {
        free(taken);
        fprintf(stderr, "redis-shard: out of memory\n");
        return -1;
    }
    while ((want_moving > 0 || want_staying > 0) && draws++ < max_draws) {
        uint32_t i = (uint32_t)(dch__rng_next(rng) % n);

        if (taken[i])
            continue;
        if (key_moves(cl, i)) {
            if (want_moving == 0)
                continue;
            want_moving--;
            cl->st.keys_moving++;
        } else {
            if (want_staying == 0)
                continue;
            want_staying--;
            cl->st.keys_staying++;
        }
        taken[i] = 1;
        cl->picked[cl->npicked++] = i;
    }
    free(taken);
    return 0;
}

/* A read of key i by the rule; returns 0 or -1 (a failed command). */
static int do_read(client *cl, uint32_t i, const char *key, size_t klen,
                   int o, int n, int two_step)
{
    char val[VALUE_CAP];
    size_t vlen = 0;
    int found;

    found = store_get(cl->conns[two_step ? o : n], key, klen, val, sizeof val,
                      &vlen);
    if (found < 0)
        return -1;
    if (two_step) {
        if (found) {
            cl->st.donor_reads++;
        } else {
            found = store_get(cl->conns[n], key, klen, val, sizeof val, &vlen);
            if (found < 0)
                return -1;
            if (found)
                cl->st.fallback_reads++;
        }
    }
    if (!found)
        cl->st.misses++;
    else if (!value_is(val, vlen, i, cl->gens[i]))
        cl->st.stale++;
    cl->st.reads++;
    return 0;
}

/* A write of key i's next generation by the rule. */
static int do_write(client *cl, uint32_t i, const char *key, size_t klen,
                    int o, int n, int two_step)
{
    char val[VALUE_CAP];
    size_t vlen = value_make(val, i, cl->gens[i] + 1);

    if (two_step) {
        int rc = store_set_if_exists(cl->conns[o], key, klen, val, vlen);

        if (rc < 0)
            return -1;
        if (rc == 1) {
            cl->st.donor_writes++;
        } else {
            if (store_set(cl->conns[n], key, klen, val, vlen) != 0)
                return -1;
            cl->st.receiver_writes++;
        }
    } else if (store_set(cl->conns[n], key, klen, val, vlen) != 0) {
        return -1;
    }
    cl->gens[i]++;
    cl->st.writes++;
    return 0;
}

static void *client_main(void *arg)
{
    client *cl = arg;
    flight *f = cl->f;
    uint64_t rng = cl->cfg.seed ^ 0x5eed5eed5eed5eedu;

    for (uint64_t op = 0; op < cl->cfg.max_ops && cl->npicked > 0; op++) {
        uint64_t r = dch__rng_next(&rng);
        uint32_t i = cl->picked[(r >> 1) % cl->npicked];
        char key[KEY_CAP];
        size_t klen = key_name(key, i);
        uint64_t h = view_hash(f->old, key, klen);
        int o = view_owner(f->old, h), n = view_owner(f->new, h);
        int two_step = 0, stop, rc;

        pthread_mutex_lock(&f->mu);
        stop = f->stop;
        pthread_mutex_unlock(&f->mu);
        if (stop)
            break;
        if (o < 0 || n < 0) {
            fprintf(stderr, "redis-shard: client: %s has no owner\n", key);
            cl->failed = 1;
            break;
        }
        if (o == n)
            cl->st.staying_ops++;
        else if (flight_finished(f, o))
            cl->st.finished_ops++;
        else
            two_step = 1;
        if (two_step && cl->cfg.naive) {
            two_step = 0;
            n = o;
        }
        rc = (r & 1) ? do_write(cl, i, key, klen, o, n, two_step)
                     : do_read(cl, i, key, klen, o, n, two_step);
        if (rc != 0) {
            cl->failed = 1;
            break;
        }
        pthread_mutex_lock(&f->mu);
        f->client_ops++;
        pthread_cond_broadcast(&f->cv);
        pthread_mutex_unlock(&f->mu);
    }
    pthread_mutex_lock(&f->mu);
    f->client_stopped = 1;
    pthread_cond_broadcast(&f->cv);
    pthread_mutex_unlock(&f->mu);
    return NULL;
}

int client_start(client *cl, const cluster *c, uint32_t *gens, const plan *p,
                 flight *f, const client_config *cfg)
{
    uint64_t rng = cfg->seed;

    memset(cl, 0, sizeof *cl);
    cl->c = c;
    cl->p = p;
    cl->f = f;
    cl->cfg = *cfg;
    cl->gens = gens;
    cl->conns = calloc(c->nbook ? c->nbook : 1, sizeof *cl->conns);
    if (cl->conns == NULL) {
        fprintf(stderr, "redis-shard: out of memory\n");
        return -1;
    }
    if (pick_keys(cl, &rng) != 0)
        return -1;
    for (size_t b = 0; b < c->nbook; b++)
        if (store_connect(&cl->conns[b], c->book[b].host, c->book[b].port) != 0)
            return -1;
    if (pthread_create(&cl->thread, NULL, client_main, cl) != 0) {
        fprintf(stderr, "redis-shard: cannot start the client thread\n");
        return -1;
    }
    cl->started = 1;
    return 0;
}

int client_finish(client *cl)
{
    if (!cl->started)
        return 0;
    pthread_mutex_lock(&cl->f->mu);
    cl->f->stop = 1;
    pthread_mutex_unlock(&cl->f->mu);
    pthread_join(cl->thread, NULL);
    cl->started = 0;
    return cl->failed ? -1 : 0;
}

int client_check(client *cl, redisContext **conns)
{
    for (uint32_t k = 0; k < cl->npicked; k++) {
        uint32_t i = cl->picked[k];
        char key[KEY_CAP], val[VALUE_CAP];
        size_t klen = key_name(key, i), vlen = 0;
        uint64_t h = view_hash(cl->f->old, key, klen);
        int o = view_owner(cl->f->old, h), n = view_owner(cl->f->new, h);
        int found = store_get(conns[n], key, klen, val, sizeof val, &vlen);

        if (found < 0)
            return -1;
        if (!found || !value_is(val, vlen, i, cl->gens[i]))
            cl->st.lost++;
        if (o != n) {
            found = store_get(conns[o], key, klen, val, sizeof val, &vlen);
            if (found < 0)
                return -1;
            if (found)
                cl->st.doubled++;
        }
    }
    return 0;
}

void client_free(client *cl)
{
    if (cl->started)
        client_finish(cl);
    if (cl->conns != NULL)
        for (size_t b = 0; b < cl->c->nbook; b++)
            store_close(cl->conns[b]);
    free(cl->conns);
    free(cl->picked);
    memset(cl, 0, sizeof *cl);
}
