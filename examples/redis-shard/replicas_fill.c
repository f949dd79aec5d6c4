/* SPDX-License-Identifier: MIT */
/*
 * The fill of the copies a leave creates (replicas.h): which slots gain
 * copies and from which surviving copy each is read, then the copying
 * itself, source by source: a SCAN of the source, then pipelined GETs
 * there and SETs on every new copy.
 */
#include "replicas.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- The copies a leave creates ------------------------------------------ */

void fill_plan_free(fill_plan *fp)
{
    free(fp->source);
    free(fp->targets);
    free(fp->ntargets);
}

static int has(const uint32_t *ids, size_t n, uint32_t id)
{
    for (size_t i = 0; i < n; i++)
        if (ids[i] == id)
            return 1;
    return 0;
}

/*
 * The clone keeps every survivor's id, so copies compare by id. Of a slot's
 * surviving old copies, the one that sources the fewest slots so far fills
 * it, so the reads spread over the survivors instead of falling on the
 * primaries.
 */
int plan_fill(fill_plan *fp, const dch_map *from, const dch_map *to, uint32_t leaver)
{
    const uint32_t limit = dch_map_id_limit(from);
    uint64_t *sourced = calloc(limit ? limit : 1, sizeof *sourced);

    memset(fp, 0, sizeof *fp);
    fp->P = dch_map_slot_count(from);
    fp->R = DCH_MAP_MAX_REPLICAS;
    fp->source = malloc(fp->P * sizeof *fp->source);
    fp->targets = malloc((size_t)fp->P * fp->R * sizeof *fp->targets);
    fp->ntargets = calloc(fp->P, 1);
    if (sourced == NULL || fp->source == NULL || fp->targets == NULL || fp->ntargets == NULL) {
        free(sourced);
        fill_plan_free(fp);
        fprintf(stderr, "redis-shard: out of memory\n");
        return -1;
    }
    for (uint32_t slot = 0; slot < fp->P; slot++) {
        uint32_t a[DCH_MAP_MAX_REPLICAS], b[DCH_MAP_MAX_REPLICAS];
        const size_t na = dch_map_slot_replicas(from, slot, a, DCH_MAP_MAX_REPLICAS);
        const size_t nb = dch_map_slot_replicas(to, slot, b, DCH_MAP_MAX_REPLICAS);

        fp->source[slot] = DCH_NODE_NONE;
        for (size_t i = 0; i < na; i++) {
            if (a[i] != leaver && (fp->source[slot] == DCH_NODE_NONE ||
                                   sourced[a[i]] < sourced[fp->source[slot]]))
                fp->source[slot] = a[i];
            if (!has(b, nb, a[i])) {
                fp->dropped++;
                fp->dropped_elsewhere += a[i] != leaver;
            }
        }
        for (size_t j = 0; j < nb; j++)
            if (!has(a, na, b[j]))
                fp->targets[(size_t)slot * fp->R + fp->ntargets[slot]++] = b[j];
        fp->created += fp->ntargets[slot];
        if (fp->ntargets[slot] > 0 && fp->source[slot] == DCH_NODE_NONE) {
            fprintf(stderr, "redis-shard: slot %" PRIu32 " has no surviving copy\n", slot);
            free(sourced);
            fill_plan_free(fp);
            return -1;
        }
        if (fp->ntargets[slot] > 0)
            sourced[fp->source[slot]]++;
        else
            fp->source[slot] = DCH_NODE_NONE;
    }
    free(sourced);
    return 0;
}

/* Copies gained and lost over dch_map_diff_copies, for the cross-check. */
typedef struct copy_count {
    unsigned bits;
    uint64_t gained, lost;
} copy_count;

static int count_copy_move(const dch_copy_move *cm, void *ctx)
{
    copy_count *c = ctx;
    const uint64_t slots = c->bits == 0 ? 1 : ((cm->hi - cm->lo) >> (64 - c->bits)) + 1;

    c->gained += cm->gain != NULL ? slots : 0;
    c->lost += cm->lose != NULL ? slots : 0;
    return 0;
}

int fill_plan_check(const fill_plan *fp, const dch_map *from, const dch_map *to)
{
    copy_count c = {0, 0, 0};

    while ((UINT32_C(1) << c.bits) < fp->P)
        c.bits++;
    if (dch_map_diff_copies(from, to, count_copy_move, &c) != DCH_OK ||
        c.gained != fp->created || c.lost != fp->dropped) {
        fprintf(stderr,
                "redis-shard: dch_map_diff_copies counts %" PRIu64 " copies gained and %" PRIu64
                " lost, the slot comparison %" PRIu64 " and %" PRIu64 "\n",
                c.gained, c.lost, fp->created, fp->dropped);
        return -1;
    }
    return 0;
}

/* ---- Filling new copies from survivors ----------------------------------- */

typedef struct filler {
    scenario *s;
    const dch_map *m;
    const fill_plan *fp;
    uint32_t src;
    uint32_t *todo; /* key indices this source fills */
    size_t ntodo;
    uint8_t *seen;  /* SCAN may return a key twice */
    uint64_t foreign;
    uint64_t written;
} filler;

static int on_source_key(const char *key, size_t len, void *ctx)
{
    filler *f = ctx;
    uint32_t i;

    if (!key_parse(key, len, &i) || i >= f->s->keys) {
        f->foreign++;
        return 0;
    }
    const uint32_t slot = dch_map_slot_of(f->m, dch_map_hash(f->m, key, len));
    if (f->seen[i] || f->fp->source[slot] != f->src)
        return 0;
    f->seen[i] = 1;
    f->todo[f->ntodo++] = i;
    return 0;
}

/* A value read from the source goes to every new copy of its slot. */
static int on_source_value(size_t k, const char *val, size_t len, void *ctx)
{
    filler *f = ctx;
    const key_batch *b = &f->s->batch[f->src];
    const uint32_t slot =
        dch_map_slot_of(f->m, dch_map_hash(f->m, b->keys[k], b->klen[k]));

    if (val == NULL || len >= VALUE_CAP) {
        fprintf(stderr, "redis-shard: %s lost %.*s while filling\n", f->s->ms[f->src].name,
                (int)b->klen[k], b->keys[k]);
        return -1;
    }
    for (uint8_t t = 0; t < f->fp->ntargets[slot]; t++) {
        const uint32_t to = f->fp->targets[(size_t)slot * f->fp->R + t];
        if (queue_set(f->s, to, b->keys[k], b->klen[k], val, len) != 0)
            return -1;
        f->written++;
        f->s->sent[f->src]++;
        f->s->received[to]++;
    }
    return 0;
}

/* Walk one source and copy its keys of the slots it fills. */
static int fill_from(filler *f)
{
    scenario *s = f->s;
    key_batch *b = &s->batch[f->src];

    f->ntodo = 0;
    /* Bounded: a shard of k keys needs about k / 1000 SCAN calls. */
    if (store_scan(s->conns[f->src], 64 + 4 * (s->keys * s->replicas / 1000), on_source_key,
                   f) != 0)
        return -1;
    for (size_t k = 0; k < f->ntodo; k++) {
        b->klen[b->n] = key_name(b->keys[b->n], f->todo[k]);
        b->kp[b->n] = b->keys[b->n];
        b->n++;
        if (b->n == PIPELINE || k + 1 == f->ntodo) {
            const int rc = store_get_many(s->conns[f->src], b->kp, b->klen, b->n,
                                          on_source_value, f);
            b->n = 0;
            if (rc != 0)
                return -1;
        }
    }
    return 0;
}

int fill_all(scenario *s, const dch_map *m, const fill_plan *fp, uint64_t *written)
{
    filler f = {s, m, fp, 0, malloc((s->keys ? s->keys : 1) * sizeof(uint32_t)), 0,
                calloc(s->keys ? s->keys : 1, 1), 0, 0};
    int rc = f.todo != NULL && f.seen != NULL ? 0 : -1;

    for (uint32_t src = 0; rc == 0 && src < s->n; src++) {
        if (s->conns[src] == NULL)
            continue;
        f.src = src;
        rc = fill_from(&f);
        /* A target's batch may hold keys of this source; send them before
         * the source's batch is reused. */
        for (uint32_t c = 0; rc == 0 && c < s->n; c++)
            if (s->conns[c] != NULL && flush_sets(s, c) != 0)
                rc = -1;
    }
    if (f.foreign > 0) {
        fprintf(stderr, "redis-shard: %" PRIu64 " keys that are not the data set's\n",
                f.foreign);
        rc = -1;
    }
    free(f.todo);
    free(f.seen);
    *written = f.written;
    return rc;
}
