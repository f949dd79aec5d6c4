/* SPDX-License-Identifier: MIT */
/*
 * verify: every key of the data set on its owner under the published router
 * with its last written value, nothing on a shard that does not own it, no
 * keys that are not the data set's, and, on the servers named on the
 * command line (shards that left), nothing at all.
 */
#include "commands.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct verifier {
    const cluster *c;
    const view *v;
    int shard;            /* book index being scanned, -1 for a non-member */
    uint64_t misplaced;   /* keys on a shard that does not own them */
    uint64_t foreign;     /* keys that are not the data set's */
    uint64_t lost;        /* data set keys missing from their owner */
    uint64_t damaged;     /* values that are not the key's last value */
    const uint32_t *idx;  /* the batch being read back */
} verifier;

static int on_scanned(const char *key, size_t len, void *ctx)
{
    verifier *vf = ctx;
    uint32_t i;

    if (!key_parse(key, len, &i) || i >= vf->c->keys)
        vf->foreign++;
    else if (vf->shard < 0 ||
             view_owner(vf->v, view_hash(vf->v, key, len)) != vf->shard)
        vf->misplaced++;
    return 0;
}

static int on_read(size_t k, const char *val, size_t len, void *ctx)
{
    verifier *vf = ctx;
    uint32_t i = vf->idx[k];

    if (val == NULL)
        vf->lost++;
    else if (!value_is(val, len, i, vf->c->gens[i]))
        vf->damaged++;
    return 0;
}

int cmd_verify(const char *dir, int argc, char **argv)
{
    cluster c;
    view v;
    verifier vf;
    redisContext **conns = NULL;
    key_batch *bufs = NULL;
    long long *size = NULL, total = 0;
    double t0 = now_seconds();
    int status = 1;

    for (int a = 0; a < argc; a++) {
        member m;

        if (member_parse(&m, "extra", argv[a]) != 0)
            return EXIT_USAGE;
    }
    if (cluster_load(&c, dir) != 0)
        return 1;
    if (current_view(&v, &c) != 0) {
        cluster_free(&c);
        return 1;
    }
    memset(&vf, 0, sizeof vf);
    vf.c = &c;
    vf.v = &v;
    conns = connect_all(&c);
    size = calloc(c.nbook, sizeof *size);
    bufs = key_batches_new(c.nbook);
    if (conns == NULL || size == NULL || bufs == NULL)
        goto out;

    /* Every key on every member: ours, and on its owner. SCAN may report a
     * key twice, so totals come from DBSIZE. */
    for (size_t b = 0; b < c.nbook; b++) {
        vf.shard = member_of_router(&c, c.book[b].name) ? (int)b : -1;
        if ((size[b] = store_dbsize(conns[b])) < 0 ||
            store_scan(conns[b], 1000000u, on_scanned, &vf) != 0)
            goto out;
        total += size[b];
    }
    /* Non-members named on the command line must hold nothing of ours. */
    for (int a = 0; a < argc; a++) {
        member m;
        redisContext *extra;
        int rc;

        member_parse(&m, "extra", argv[a]);
        if (store_connect(&extra, m.host, m.port) != 0)
            goto out;
        vf.shard = -1;
        rc = store_scan(extra, 1000000u, on_scanned, &vf);
        store_close(extra);
        if (rc != 0)
            goto out;
    }
    /* Every key of the data set, read back from its owner. */
    for (uint64_t i = 0; i <= c.keys; i++) {
        for (size_t b = 0; b < c.nbook; b++) {
            key_batch *bb = &bufs[b];

            if (bb->n == PIPELINE || (i == c.keys && bb->n > 0)) {
                vf.idx = bb->idx;
                if (store_get_many(conns[b], bb->kp, bb->klen, bb->n, on_read,
                                   &vf) != 0)
                    goto out;
                bb->n = 0;
            }
        }
        if (i < c.keys) {
            char key[KEY_CAP];
            size_t klen = key_name(key, (uint32_t)i);
            int o = view_owner(&v, view_hash(&v, key, klen));
            key_batch *bb;

            if (o < 0) {
                vf.lost++;
                continue;
            }
            bb = &bufs[o];
            memcpy(bb->keys[bb->n], key, klen + 1);
            bb->kp[bb->n] = bb->keys[bb->n];
            bb->klen[bb->n] = klen;
            bb->idx[bb->n] = (uint32_t)i;
            bb->n++;
        }
    }

    printf("verify %s (%s, %" PRIu32 " keys) in %.3f s\n", dir,
           scheme_name(c.scheme), c.keys, now_seconds() - t0);
    for (size_t b = 0; b < c.nbook; b++) {
        printf("  %-8s %s:%-5d %8lld keys\n", c.book[b].name, c.book[b].host,
               c.book[b].port, size[b]);
        printf("@shard-size scheme=%s name=%s keys=%lld\n",
               scheme_name(c.scheme), c.book[b].name, size[b]);
    }
    printf("  lost %" PRIu64 ", damaged %" PRIu64 ", misplaced %" PRIu64
           ", foreign %" PRIu64 ", stored %lld of %" PRIu32 "\n",
           vf.lost, vf.damaged, vf.misplaced, vf.foreign, total, c.keys);
    printf("@verify scheme=%s keys=%" PRIu32 " stored=%lld lost=%" PRIu64
           " damaged=%" PRIu64 " misplaced=%" PRIu64 " foreign=%" PRIu64 "\n",
           scheme_name(c.scheme), c.keys, total, vf.lost, vf.damaged,
           vf.misplaced, vf.foreign);
    /* With nothing lost, every key is on its owner; a total above the key
     * count then means copies elsewhere. */
    status = vf.lost || vf.damaged || vf.misplaced || vf.foreign ||
             total != (long long)c.keys;
    printf("result: %s\n", status ? "FAILED" : "ok");
out:
    free(size);
    shards_free(&c, &v, conns, bufs);
    return status;
}
