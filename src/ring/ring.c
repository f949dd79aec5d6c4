/* SPDX-License-Identifier: MIT */
/*
 * The classic consistent-hash ring (Karger et al., "Consistent hashing and
 * random trees", 1997) with virtual nodes, placed as ring.h specifies.
 *
 * The points (their layout, lookup and changes) are in ring_points.c, the
 * member table in members.c, ketama's continuum in ring_ketama.c; this file
 * is the object that ties them together.
 *
 * Against ketama, the usual recipe: positions are 64-bit SipHash-2-4 under a
 * shared key rather than 32-bit MD5 fragments, points are named "name#j", and
 * two points at one position are ordered by name and j rather than by
 * whatever order a sort leaves them in, so every client agrees.
 *
 * Ketama placement (DCH_RING_PLACE_KETAMA) keeps this layout and lookup but
 * not the changes: a member's point count depends on every member, so each
 * change rebuilds the whole array and index aside (ketama_prepare, from the
 * rules in ring_ketama.c) and swaps them in. Entries at one
 * position are then ordered by the members' add order, as libmemcached's are.
 */
#include "dch/ring.h"

#include "dch/error.h"
#include "dch/siphash.h"

#include "alloc.h"
#include "config_functions.h"
#include "members.h"
#include "range_sink.h"
#include "ring_ketama.h"
#include "ring_points.h"

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

_Static_assert(DCH_RING_MAX_NODES == DCH__MEMBERS_MAX,
               "ring ids are member-table ids; 0xffff marks a dropped point");

typedef struct member {
    char *name; /* first, as members.h requires; NULL when the id is free */
    uint32_t len;
    uint32_t weight;
    uint64_t seq; /* add order: ketama ties go to the smaller */
} member;
_Static_assert(offsetof(member, name) == 0, "members.h: an entry starts with its name");

struct dch_ring {
    dch_ring_config cfg;
    dch__ring_points pts;
    dch__members mt; /* entries are `member`s */
    uint64_t total_weight;
    uint64_t next_seq; /* the seq the next member added gets */
};

static const member *member_of(const dch_ring *r, uint32_t id)
{
    return r ? dch__members_get(&r->mt, id) : NULL;
}

/* dch_ring_config_default and dch_ring_config_init (config_functions.h). */
DCH__CONFIG_FUNCTIONS(dch_ring, dch_ring_config, DCH_RING_CONFIG_INIT, DCH_RING_CONFIG_VERSION)

int dch_ring_new(dch_ring **out, const dch_ring_config *cfg)
{
    dch_ring_config c;
    if (cfg == NULL)
        dch_ring_config_default(&c);
    else
        c = *cfg;
    if (out == NULL || c.version != DCH_RING_CONFIG_VERSION ||
        c.placement > DCH_RING_PLACE_KETAMA ||
        (c.placement == DCH_RING_PLACE_SIPHASH && c.points_per_weight == 0) ||
        !dch__allocator_valid(c.allocator))
        return DCH_EINVAL;
    dch_ring *r = dch__alloc(c.allocator, sizeof *r);
    if (r == NULL)
        return DCH_ENOMEM;
    memset(r, 0, sizeof *r);
    r->cfg = c;
    dch__members_init(&r->mt, c.allocator, sizeof(member));
    *out = r;
    return DCH_OK;
}

void dch_ring_free(dch_ring *r)
{
    if (r == NULL)
        return;
    dch__members_free(&r->mt);
    dch__points_free(r->cfg.allocator, &r->pts);
    dch__free(r->cfg.allocator, r);
}

int dch_ring_clone(dch_ring **out, const dch_ring *r)
{
    if (out == NULL || r == NULL)
        return DCH_EINVAL;
    const dch_allocator *a = r->cfg.allocator;
    dch_ring *c = dch__alloc(a, sizeof *c);
    if (c == NULL)
        return DCH_ENOMEM;
    *c = *r;
    if (dch__points_clone(a, &c->pts, &r->pts) != DCH_OK) {
        dch__free(a, c);
        return DCH_ENOMEM;
    }
    if (dch__members_clone(&c->mt, &r->mt) != DCH_OK) {
        dch__points_free(a, &c->pts);
        dch__free(a, c);
        return DCH_ENOMEM;
    }
    *out = c;
    return DCH_OK;
}

/* Points a weight gives; at most (2^32 - 1)^2, so sums with point counts
 * cannot overflow. In ketama mode a member's points depend on all members
 * and the continuum is rebuilt whole (ketama_prepare), so this is 0. */
static uint64_t points_for(const dch_ring *r, uint32_t weight)
{
    if (r->cfg.placement == DCH_RING_PLACE_KETAMA)
        return 0;
    return (uint64_t)r->cfg.points_per_weight * weight;
}

/*
 * The continuum of the ring's members after one change -- member `id` (a new
 * member named name/len when id is not in use) at weight `weight`, 0 for a
 * removal -- built without touching the ring. libmemcached's servers are the
 * members of non-zero weight.
 */
static int ketama_prepare(const dch_ring *r, uint32_t id, const char *name,
                          size_t len, uint32_t weight, dch__ring_points *built)
{
    const dch_allocator *a = r->cfg.allocator;
    uint32_t limit = r->mt.id_limit > id ? r->mt.id_limit : id + 1;
    dch__ketama_server *s = dch__alloc_array(a, r->mt.count + 1u, sizeof *s);
    if (s == NULL)
        return DCH_ENOMEM;
    uint32_t n = 0;
    for (uint32_t i = 0; i < limit; i++) {
        const member *m = member_of(r, i);
        dch__ketama_server k;
        if (i == id)
            k = (dch__ketama_server){name, (uint32_t)len, weight,
                                     m ? m->seq : r->next_seq, i};
        else if (m != NULL)
            k = (dch__ketama_server){m->name, m->len, m->weight, m->seq, i};
        else
            continue;
        if (k.weight > 0)
            s[n++] = k;
    }
    int rc = dch__ketama_build(a, s, n, DCH_RING_MAX_POINTS, built);
    dch__free(a, s);
    return rc;
}

int dch_ring_add_node(dch_ring *r, const char *name, uint32_t weight,
                      uint32_t *id_out)
{
    if (r == NULL)
        return DCH_EINVAL;
    dch__member_add add;
    int rc = dch__members_plan(&r->mt, name, DCH__MEMBERS_ANY_ID, &add);
    if (rc != DCH_OK)
        return rc;
    if (r->total_weight + weight > UINT32_MAX ||
        r->pts.npoints + points_for(r, weight) > DCH_RING_MAX_POINTS)
        return DCH_EFULL;
    const uint32_t k = (uint32_t)points_for(r, weight);
    const bool ketama = r->cfg.placement == DCH_RING_PLACE_KETAMA && weight > 0;

    /* Everything that can fail, before anything changes. Growing the point
     * array only adds room, so a prepared ring is still the same ring. */
    const dch_allocator *a = r->cfg.allocator;
    dch__ring_points built;
    uint64_t *pos = NULL;
    rc = dch__members_reserve(&r->mt, &add);
    if (rc != DCH_OK)
        return rc;
    if (ketama)
        rc = ketama_prepare(r, add.id, name, add.len, weight, &built);
    else if (k > 0)
        rc = dch__points_prepare(a, &r->pts, r->cfg.hash_key, name, add.len, 0,
                                 k, &pos);
    if (rc != DCH_OK) {
        dch__members_cancel(&r->mt, &add);
        return rc;
    }

    member *m = dch__members_commit(&r->mt, &add);
    m->len = (uint32_t)add.len;
    m->weight = weight;
    m->seq = r->next_seq++;
    r->total_weight += weight;
    if (ketama)
        dch__points_replace(a, &r->pts, &built);
    if (k > 0) {
        dch__points_merge(&r->pts, &r->mt, pos, k, add.id, m->name);
        dch__free(a, pos);
    }
    if (id_out != NULL)
        *id_out = add.id;
    return DCH_OK;
}

/*
 * Change member id's weight from old to `weight` in the points, or report
 * why not with the ring unchanged. Lowering without ketama never allocates.
 */
static int move_points(dch_ring *r, uint32_t id, uint32_t old, uint32_t weight)
{
    const dch_allocator *a = r->cfg.allocator;
    const member *m = member_of(r, id);
    if (r->cfg.placement == DCH_RING_PLACE_KETAMA) {
        dch__ring_points built;
        int rc = ketama_prepare(r, id, m->name, m->len, weight, &built);
        if (rc == DCH_OK)
            dch__points_replace(a, &r->pts, &built);
        return rc;
    }
    const uint32_t have = (uint32_t)points_for(r, old);
    if (weight < old) {
        dch__points_drop(a, &r->pts, r->cfg.hash_key, id, m->name, m->len,
                         (uint32_t)points_for(r, weight), have);
        return DCH_OK;
    }
    const uint64_t want = points_for(r, weight);
    if (r->pts.npoints - have + want > DCH_RING_MAX_POINTS)
        return DCH_EFULL;
    const uint32_t k = (uint32_t)want - have;
    uint64_t *pos = NULL;
    int rc = dch__points_prepare(a, &r->pts, r->cfg.hash_key, m->name, m->len,
                                 have, k, &pos);
    if (rc != DCH_OK)
        return rc;
    dch__points_merge(&r->pts, &r->mt, pos, k, id, m->name);
    dch__free(a, pos);
    return DCH_OK;
}

int dch_ring_remove_node(dch_ring *r, uint32_t id)
{
    if (r == NULL)
        return DCH_EINVAL;
    const member *m = member_of(r, id);
    if (m == NULL)
        return DCH_ENOENT;
    if (m->weight > 0) {
        int rc = move_points(r, id, m->weight, 0);
        if (rc != DCH_OK)
            return rc;
    }
    r->total_weight -= m->weight;
    dch__members_remove(&r->mt, id);
    return DCH_OK;
}

int dch_ring_set_weight(dch_ring *r, uint32_t id, uint32_t weight)
{
    if (r == NULL)
        return DCH_EINVAL;
    member *m = dch__members_get(&r->mt, id);
    if (m == NULL)
        return DCH_ENOENT;
    const uint32_t old = m->weight;
    if (weight == old)
        return DCH_OK;
    if (r->total_weight - old + weight > UINT32_MAX)
        return DCH_EFULL;
    int rc = move_points(r, id, old, weight);
    if (rc != DCH_OK)
        return rc;
    m->weight = weight;
    r->total_weight = r->total_weight - old + weight;
    return DCH_OK;
}

int dch_ring_find_node(const dch_ring *r, const char *name, uint32_t *id_out)
{
    if (r == NULL || id_out == NULL)
        return DCH_EINVAL;
    return dch__members_find(&r->mt, name, id_out);
}

/* The member getters mirror the map's (map.c) line for line, on purpose:
 * the same reading API over each object's own struct. */
const char *dch_ring_node_name(const dch_ring *r, uint32_t id)
{
    const member *m = member_of(r, id);
    return m ? m->name : NULL;
}

uint32_t dch_ring_node_weight(const dch_ring *r, uint32_t id)
{
    const member *m = member_of(r, id);
    return m ? m->weight : 0;
}

uint32_t dch_ring_node_count(const dch_ring *r)
{
    return r ? r->mt.count : 0;
}

uint32_t dch_ring_id_limit(const dch_ring *r)
{
    return r ? r->mt.id_limit : 0;
}

uint32_t dch_ring_total_weight(const dch_ring *r)
{
    return r ? (uint32_t)r->total_weight : 0;
}

uint32_t dch_ring_point_count(const dch_ring *r)
{
    return r ? r->pts.npoints : 0;
}

void dch_ring_get_config(const dch_ring *r, dch_ring_config *cfg)
{
    if (r != NULL && cfg != NULL)
        *cfg = r->cfg;
}

uint64_t dch_ring_hash(const dch_ring *r, const void *key, size_t len)
{
    if (r == NULL)
        return 0;
    if (r->cfg.placement == DCH_RING_PLACE_KETAMA)
        return (uint64_t)dch__ketama_hash(key, len) << 32;
    return dch_siphash24(r->cfg.hash_key, key, len);
}

uint32_t dch_ring_lookup_hash(const dch_ring *r, uint64_t hash)
{
    return r ? dch__points_lookup(&r->pts, hash) : DCH_NODE_NONE;
}

uint32_t dch_ring_lookup(const dch_ring *r, const void *key, size_t len)
{
    return dch_ring_lookup_hash(r, dch_ring_hash(r, key, len));
}

int dch_ring_foreach_range(const dch_ring *r,
                           int (*fn)(const dch_range *rg, void *ctx), void *ctx)
{
    if (r == NULL || fn == NULL)
        return DCH_EINVAL;
    return dch__points_foreach_range(&r->pts, fn, ctx);
}

int dch_ring_ranges(const dch_ring *r, dch_range *out, size_t cap,
                    size_t *count_out)
{
    dch__range_sink k = {out, cap, 0};
    if (r == NULL || !dch__range_sink_valid(&k, count_out))
        return DCH_EINVAL;
    (void)dch_ring_foreach_range(r, dch__range_sink_put, &k);
    return dch__range_sink_close(&k, count_out);
}

const dch__ring_points *dch__ring_points_of(const dch_ring *r)
{
    return &r->pts;
}

size_t dch_ring_memory(const dch_ring *r)
{
    if (r == NULL)
        return 0;
    return sizeof *r + dch__points_memory(&r->pts) + dch__members_memory(&r->mt);
}
