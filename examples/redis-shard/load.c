/* SPDX-License-Identifier: MIT */
/*
 * load: write keys k:0 .. k:N-1 at generation 0, each on its owner under the
 * published router, pipelined PIPELINE at a time per shard.
 */
#include "commands.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cmd_load(const char *dir, int argc, char **argv)
{
    cluster c;
    view v;
    redisContext **conns = NULL;
    key_batch *bufs = NULL;
    uint64_t n, *per_shard = NULL;
    double t0;
    int status = 1;

    if (argc != 1 || dch__number_parse(argv[0], 0, 0, UINT32_MAX, &n) != 0 || n == 0)
        return usage("load takes a key count from 1 to 4294967295");
    if (cluster_load(&c, dir) != 0)
        return 1;
    if (c.keys != 0) {
        fprintf(stderr, "redis-shard: %s already holds %" PRIu32 " keys\n",
                dir, c.keys);
        cluster_free(&c);
        return 1;
    }
    if (current_view(&v, &c) != 0) {
        cluster_free(&c);
        return 1;
    }
    conns = connect_all(&c);
    bufs = key_batches_new(c.nbook);
    per_shard = calloc(c.nbook, sizeof *per_shard);
    if (conns == NULL || bufs == NULL || per_shard == NULL)
        goto out;
    t0 = now_seconds();
    /* Keys are grouped by owner and sent PIPELINE at a time per shard. */
    for (uint64_t i = 0; i <= n; i++) {
        for (size_t s = 0; s < c.nbook; s++) {
            key_batch *b = &bufs[s];

            if (b->n == PIPELINE || (i == n && b->n > 0)) {
                if (store_set_many(conns[s], b->kp, b->klen, b->vp, b->vlen,
                                   b->n) != 0)
                    goto out;
                per_shard[s] += b->n;
                b->n = 0;
            }
        }
        if (i < n) {
            uint32_t k = (uint32_t)i;
            char key[KEY_CAP];
            size_t klen = key_name(key, k);
            int s = view_owner(&v, view_hash(&v, key, klen));
            key_batch *b;

            if (s < 0) {
                fprintf(stderr, "redis-shard: the router owns nothing\n");
                goto out;
            }
            b = &bufs[s];
            memcpy(b->keys[b->n], key, klen + 1);
            b->klen[b->n] = klen;
            b->vlen[b->n] = value_make(b->vals[b->n], k, 0);
            b->kp[b->n] = b->keys[b->n];
            b->vp[b->n] = b->vals[b->n];
            b->n++;
        }
    }
    c.keys = (uint32_t)n;
    free(c.gens);
    c.gens = calloc(n, sizeof *c.gens);
    /* gens first: the book's key count must never exceed what gens covers. */
    if (c.gens == NULL || cluster_save_gens(&c, dir) != 0 ||
        cluster_save_book(&c, dir) != 0)
        goto out;
    printf("loaded %" PRIu64 " keys in %.3f s (%s)\n", n, now_seconds() - t0,
           scheme_name(c.scheme));
    for (size_t s = 0; s < c.nbook; s++) {
        printf("  %-8s %s:%-5d %8" PRIu64 " keys\n", c.book[s].name,
               c.book[s].host, c.book[s].port, per_shard[s]);
        printf("@load scheme=%s name=%s keys=%" PRIu64 "\n",
               scheme_name(c.scheme), c.book[s].name, per_shard[s]);
    }
    status = 0;
out:
    free(per_shard);
    shards_free(&c, &v, conns, bufs);
    return status;
}
