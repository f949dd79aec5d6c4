/* SPDX-License-Identifier: MIT */
/*
 * The DCH equal-arc partition map.
 *
 * Follows the "distributed consistent hashing" description: the ring is cut
 * into fixed minimum arc units, every member owns a slice of every unit in
 * proportion to its weight, and a joining member takes an equal sliver from
 * every existing member. Departures from that description: removal is not
 * free (the leaver's slots are shared out over all survivors, each receiving
 * in proportion to its weight), slices are whole slots, and weights are
 * supported.
 *
 * Every call changes one member x's weight: add raises it from 0, remove
 * lowers it to 0, set_weight does either. The move is the placement
 * engine's (src/engine/, dch__move_apply in engine_move.c first;
 * docs/placement.md states it stage by stage and proves its promises):
 * stage 1 decides every count against the shares P*w/W of the new weights,
 * stages 2 to 4 choose which slots carry those counts, aiming at per-unit
 * slices of S*w/W, and stage 5 repairs any member 2 or more slots from its
 * share. With equal weights stage 5 never runs, so slots move only to x or
 * only from x; with unequal weights its moves between two other members
 * are what keeps |count - P*w/W| < 2 after every call, which no engine
 * moving only x's slots can. This file is the object around the engine:
 * members, the slot table, lookups, ranges and clones.
 * All arithmetic is exact (64-bit integers) and ties fall to the lower id,
 * so the table is a pure function of the config and the call sequence.
 */
#include "dch/map.h"

#include "dch/error.h"
#include "dch/siphash.h"

#include "alloc.h"
#include "config_functions.h"
#include "map_engine.h"
#include "map_internal.h"
#include "map_object.h"
#include "map_replicas.h"
#include "map_zones.h"
#include "members.h"
#include "range_sink.h"

#include <stddef.h>
#include <string.h>

_Static_assert(DCH_MAP_MAX_NODES == DCH__MEMBERS_MAX,
               "map ids are member-table ids; 0xffff marks an unowned slot");

static int is_pow2(uint32_t v)
{
    return v != 0 && (v & (v - 1)) == 0;
}

static unsigned log2u(uint32_t v)
{
    unsigned b = 0;
    while (v > 1) {
        v >>= 1;
        b++;
    }
    return b;
}

/* dch_map_config_default and dch_map_config_init (config_functions.h).
 * Version 1's fields, forever: a program built against a header of
 * version 1 passes a struct of that size (map.h, dch_map_config). When a
 * version 2 adds fields, the default and dch_map_get_config must keep
 * writing only these. */
DCH__CONFIG_FUNCTIONS(dch_map, dch_map_config, DCH_MAP_CONFIG_INIT, DCH_MAP_CONFIG_VERSION)

int dch_map_new(dch_map **out, const dch_map_config *cfg)
{
    dch_map_config def;
    if (out == NULL)
        return DCH_EINVAL;
    if (cfg == NULL) {
        dch_map_config_default(&def);
        cfg = &def;
    }
    if (cfg->version != DCH_MAP_CONFIG_VERSION || !is_pow2(cfg->units) || !is_pow2(cfg->slots_per_unit) ||
        cfg->replicas > DCH_MAP_MAX_REPLICAS || !dch__allocator_valid(cfg->allocator))
        return DCH_EINVAL;
    if ((uint64_t)cfg->units * cfg->slots_per_unit > DCH_MAP_MAX_SLOTS)
        return DCH_EFULL;

    const dch_allocator *a = cfg->allocator;
    dch_map *m = dch__alloc(a, sizeof *m);
    if (m == NULL)
        return DCH_ENOMEM;
    memset(m, 0, sizeof *m);
    m->cfg = *cfg;
    m->cfg.replicas = cfg->replicas ? cfg->replicas : 1;
    m->replicas = m->cfg.replicas;
    m->stride = 1;
    while (m->stride < m->replicas)
        m->stride *= 2;
    m->units = cfg->units;
    m->spu = cfg->slots_per_unit;
    m->slots = cfg->units * cfg->slots_per_unit;
    m->shift = 32u - log2u(m->slots);
    m->owner = dch__alloc_array(a, m->slots, sizeof *m->owner);
    if (m->replicas > 1)
        m->copies = dch__alloc_array(a, (size_t)m->slots * m->stride, sizeof *m->copies);
    if (m->owner == NULL || (m->replicas > 1 && m->copies == NULL)) {
        dch__free(a, m->owner);
        dch__free(a, m->copies);
        dch__free(a, m);
        return DCH_ENOMEM;
    }
    for (uint32_t s = 0; s < m->slots; s++)
        m->owner[s] = NONE16;
    for (size_t i = 0; m->copies != NULL && i < (size_t)m->slots * m->stride; i++)
        m->copies[i] = NONE16;
    dch__members_init(&m->mt, a, sizeof(member));
    dch__zones_init(&m->zones, a);
    m->rd_owner = m->owner;
    m->rd_copies = m->copies;
    *out = m;
    return DCH_OK;
}

/* ---- Per-id arrays beside the member table ----------------------------- */

/* A copy of old (have entries) with cap entries, the rest 0; NULL if the
 * allocation fails. */
static uint32_t *side_grow(const dch_allocator *a, const uint32_t *old, uint32_t have,
                           uint32_t cap)
{
    uint32_t *p = dch__alloc_array(a, cap, sizeof *p);
    if (p != NULL) {
        if (have > 0)
            memcpy(p, old, (size_t)have * sizeof *p);
        memset(p + have, 0, (size_t)(cap - have) * sizeof *p);
    }
    return p;
}

int dch__map_side_reserve(const dch_map *m, uint32_t cap, int zoned, dch__side_add *a)
{
    const dch_allocator *al = m->cfg.allocator;
    const int held = m->replicas > 1, zone = held || zoned || m->zone_of != NULL;
    a->held = a->zone_of = NULL;
    a->cap = cap > m->side_cap ? cap : m->side_cap;
    if (held && (m->held == NULL || a->cap > m->side_cap)) {
        a->held = side_grow(al, m->held, m->held ? m->side_cap : 0, a->cap);
        if (a->held == NULL)
            return DCH_ENOMEM;
    }
    if (zone && (m->zone_of == NULL || a->cap > m->side_cap)) {
        a->zone_of = side_grow(al, m->zone_of, m->zone_of ? m->side_cap : 0, a->cap);
        if (a->zone_of == NULL) {
            dch__free(al, a->held);
            a->held = NULL;
            return DCH_ENOMEM;
        }
    }
    return DCH_OK;
}

void dch__map_side_commit(dch_map *m, dch__side_add *a, uint32_t id)
{
    const dch_allocator *al = m->cfg.allocator;
    if (a->held != NULL) {
        dch__free(al, m->held);
        m->held = a->held;
    }
    if (a->zone_of != NULL) {
        dch__free(al, m->zone_of);
        m->zone_of = a->zone_of;
    }
    if (a->held != NULL || a->zone_of != NULL)
        m->side_cap = a->cap;
    if (m->held != NULL)
        m->held[id] = 0;
    if (m->zone_of != NULL)
        m->zone_of[id] = 0;
    a->held = a->zone_of = NULL;
}

void dch__map_side_cancel(const dch_map *m, dch__side_add *a)
{
    dch__free(m->cfg.allocator, a->held);
    dch__free(m->cfg.allocator, a->zone_of);
    a->held = a->zone_of = NULL;
}

void dch_map_free(dch_map *m)
{
    if (m == NULL)
        return;
    const dch_allocator *a = m->cfg.allocator;
    dch__free(a, m->held);
    dch__free(a, m->zone_of);
    dch__members_free(&m->mt);
    dch__zones_free(&m->zones);
    dch__free(a, m->owner);
    dch__free(a, m->copies);
    dch__map_drains_free(m, &m->dr);
    dch__free(a, m);
}

void dch__map_drains_free(const dch_map *m, dch__drains *d)
{
    void *const blocks[] = {d->ids,    d->modes,       d->owner,        d->copies,
                            d->slots,  d->held,        d->mv.slot,      d->mv.below,
                            d->mv.copies};
    dch__free_all(m->cfg.allocator, blocks, sizeof blocks / sizeof *blocks);
    memset(d, 0, sizeof *d);
}

void dch__map_drains_install(dch_map *m, dch__drains *d)
{
    dch__map_drains_free(m, &m->dr);
    m->dr = *d;
    memset(d, 0, sizeof *d);
    m->rd_owner = layered(m) ? m->dr.owner : m->owner;
    m->rd_copies = layered(m) ? m->dr.copies : m->copies;
}

/* A copy of n elements of `size` bytes at src; NULL when n is 0 or the
 * allocation fails (*ok then cleared). */
static void *dup_array(const dch_allocator *a, const void *src, size_t n, size_t size, int *ok)
{
    if (n == 0)
        return NULL;
    void *p = dch__alloc_array(a, n, size);
    if (p == NULL)
        *ok = 0;
    else
        memcpy(p, src, n * size);
    return p;
}

/* *d = a deep copy of m's drains; DCH_ENOMEM leaves nothing allocated. */
static int drains_copy(const dch_map *m, dch__drains *d)
{
    const dch_allocator *a = m->cfg.allocator;
    const dch__drains *s = &m->dr;
    int ok = 1;
    *d = *s;
    d->ids = dup_array(a, s->ids, s->n, sizeof *d->ids, &ok);
    d->modes = dup_array(a, s->modes, s->n, sizeof *d->modes, &ok);
    d->owner = dup_array(a, s->owner, s->owner ? m->slots : 0, sizeof *d->owner, &ok);
    d->copies = dup_array(a, s->copies, s->copies ? (size_t)m->slots * m->stride : 0,
                          sizeof *d->copies, &ok);
    d->slots = dup_array(a, s->slots, s->slots ? s->limit : 0, sizeof *d->slots, &ok);
    d->held = dup_array(a, s->held, s->held ? s->limit : 0, sizeof *d->held, &ok);
    const size_t blocks = (size_t)s->mv.n * m->stride;
    d->mv.slot = dup_array(a, s->mv.slot, s->mv.n, sizeof *d->mv.slot, &ok);
    d->mv.below = dup_array(a, s->mv.below, s->mv.below ? blocks : 0, sizeof *d->mv.below, &ok);
    d->mv.copies = dup_array(a, s->mv.copies, blocks, sizeof *d->mv.copies, &ok);
    if (!ok) {
        dch__map_drains_free(m, d);
        return DCH_ENOMEM;
    }
    return DCH_OK;
}

/* A deep copy of m; with_drains 0: of its base alone, with no drain. */
static int clone_map(dch_map **out, const dch_map *m, int with_drains)
{
    const dch_allocator *a = m->cfg.allocator;
    dch_map *c = dch__alloc(a, sizeof *c);
    if (c == NULL)
        return DCH_ENOMEM;
    *c = *m;
    memset(&c->dr, 0, sizeof c->dr);
    const size_t ncopies = m->copies ? (size_t)m->slots * m->stride : 0;
    c->owner = dch__alloc_array(a, m->slots, sizeof *c->owner);
    c->copies = ncopies ? dch__alloc_array(a, ncopies, sizeof *c->copies) : NULL;
    c->held = m->held ? side_grow(a, m->held, m->side_cap, m->side_cap) : NULL;
    c->zone_of = m->zone_of ? side_grow(a, m->zone_of, m->side_cap, m->side_cap) : NULL;
    /* Until cloned, c->zones and c->mt are m's: the one cleanup below frees
     * the zones only once they are c's own, and the member table is cloned
     * last, so that a failure there leaves nothing of it to free. */
    const int arrays = c->owner != NULL && (ncopies == 0 || c->copies != NULL) &&
                       (m->held == NULL || c->held != NULL) &&
                       (m->zone_of == NULL || c->zone_of != NULL) &&
                       (!with_drains || drains_copy(m, &c->dr) == DCH_OK);
    const int zones = arrays && dch__zones_clone(&c->zones, &m->zones) == DCH_OK;
    if (zones && dch__members_clone(&c->mt, &m->mt) == DCH_OK) {
        memcpy(c->owner, m->owner, (size_t)m->slots * sizeof *c->owner);
        if (ncopies)
            memcpy(c->copies, m->copies, ncopies * sizeof *c->copies);
        c->rd_owner = layered(c) ? c->dr.owner : c->owner;
        c->rd_copies = layered(c) ? c->dr.copies : c->copies;
        *out = c;
        return DCH_OK;
    }
    if (zones)
        dch__zones_free(&c->zones);
    dch__map_drains_free(m, &c->dr);
    dch__free(a, c->owner);
    dch__free(a, c->copies);
    dch__free(a, c->held);
    dch__free(a, c->zone_of);
    dch__free(a, c);
    return DCH_ENOMEM;
}

int dch_map_clone(dch_map **out, const dch_map *m)
{
    if (out == NULL || m == NULL)
        return DCH_EINVAL;
    return clone_map(out, m, 1);
}

int dch__map_clone_base(dch_map **out, const dch_map *m)
{
    return clone_map(out, m, 0);
}

/* ---- Reading ---------------------------------------------------------- */

/* The member getters mirror the ring's (ring.c) line for line, on purpose:
 * the two objects offer the same reading API, each over its own struct, and
 * a getter of one line reads best written out. */

const char *dch_map_node_name(const dch_map *m, uint32_t id)
{
    const member *mb = member_of(m, id);
    return mb ? mb->name : NULL;
}

uint32_t dch_map_node_weight(const dch_map *m, uint32_t id)
{
    const member *mb = member_of(m, id);
    return mb ? mb->weight : 0;
}

uint32_t dch__map_base_slots(const dch_map *m, uint32_t id)
{
    const member *mb = member_of(m, id);
    return mb ? mb->slots : 0;
}

uint32_t dch__map_base_copies(const dch_map *m, uint32_t id)
{
    const member *mb = member_of(m, id);
    if (mb == NULL)
        return 0;
    return m->replicas > 1 ? m->held[id] : mb->slots;
}

/* The effective counts: the base's, or the layer's (drains, load moves)
 * when one is in force. */
uint32_t dch_map_node_slots(const dch_map *m, uint32_t id)
{
    if (member_of(m, id) == NULL || !layered(m))
        return dch__map_base_slots(m, id);
    return m->dr.slots[id];
}

uint32_t dch_map_node_copies(const dch_map *m, uint32_t id)
{
    if (member_of(m, id) == NULL || !layered(m))
        return dch__map_base_copies(m, id);
    return m->replicas > 1 ? m->dr.held[id] : m->dr.slots[id];
}

const char *dch_map_node_zone(const dch_map *m, uint32_t id)
{
    const member *mb = member_of(m, id);
    return mb && zone_of(m, id) ? dch__zones_name(&m->zones, zone_of(m, id) - 1) : NULL;
}

uint32_t dch_map_node_count(const dch_map *m)
{
    return m ? m->mt.count : 0;
}

uint32_t dch_map_id_limit(const dch_map *m)
{
    return m ? m->mt.id_limit : 0;
}

uint32_t dch_map_total_weight(const dch_map *m)
{
    return m ? m->total_weight : 0;
}

void dch_map_get_config(const dch_map *m, dch_map_config *cfg)
{
    if (m != NULL && cfg != NULL)
        *cfg = m->cfg;
}

uint32_t dch_map_slot_count(const dch_map *m)
{
    return m ? m->slots : 0;
}

uint32_t dch_map_slot_owner(const dch_map *m, uint32_t slot)
{
    if (m == NULL || slot >= m->slots || m->rd_owner[slot] == NONE16)
        return DCH_NODE_NONE;
    return m->rd_owner[slot];
}

uint32_t dch_map_base_owner(const dch_map *m, uint32_t slot)
{
    if (m == NULL || slot >= m->slots || m->owner[slot] == NONE16)
        return DCH_NODE_NONE;
    return m->owner[slot];
}

/* The copies of slot s in the table (owner, copies, n copies a slot) into
 * ids (at most cap); their number. */
static size_t copies_of(const uint16_t *owner, const uint16_t *copies, uint32_t stride,
                        uint32_t n_copies, uint32_t s, uint32_t *ids, size_t cap)
{
    if (copies == NULL) {
        if (owner[s] == NONE16)
            return 0;
        if (cap > 0)
            ids[0] = owner[s];
        return 1;
    }
    const uint16_t *c = copies + (size_t)s * stride;
    const size_t n = n_copies, w = n < cap ? n : cap;
    /* The common cases unrolled: one load of the block each. */
    switch (w) {
    case 3:
        ids[2] = c[2];
        /* fall through */
    case 2:
        ids[1] = c[1];
        /* fall through */
    case 1:
        ids[0] = c[0];
        /* fall through */
    case 0:
        break;
    default:
        for (size_t k = 0; k < w; k++)
            ids[k] = c[k];
    }
    return n;
}

/* Copies an effective slot holds. */
static uint32_t rd_ncopies(const dch_map *m)
{
    return layered(m) ? m->dr.ncopies : m->ncopies;
}

size_t dch_map_slot_replicas(const dch_map *m, uint32_t slot, uint32_t *ids, size_t cap)
{
    if (m == NULL || slot >= m->slots || (ids == NULL && cap > 0))
        return 0;
    return copies_of(m->rd_owner, m->rd_copies, m->stride, rd_ncopies(m), slot, ids, cap);
}

size_t dch_map_base_replicas(const dch_map *m, uint32_t slot, uint32_t *ids, size_t cap)
{
    if (m == NULL || slot >= m->slots || (ids == NULL && cap > 0))
        return 0;
    return copies_of(m->owner, m->copies, m->stride, m->ncopies, slot, ids, cap);
}

size_t dch_map_lookup_replicas_hash(const dch_map *m, uint64_t hash, uint32_t *ids,
                                    size_t cap)
{
    if (m == NULL || (ids == NULL && cap > 0))
        return 0;
    return copies_of(m->rd_owner, m->rd_copies, m->stride, rd_ncopies(m),
                     (uint32_t)((hash >> 32) >> m->shift), ids, cap);
}

uint32_t dch_map_slot_of(const dch_map *m, uint64_t hash)
{
    /* Two shifts so that P = 1 (shift 32) stays defined. */
    return m ? (uint32_t)((hash >> 32) >> m->shift) : 0;
}

uint64_t dch_map_hash(const dch_map *m, const void *key, size_t len)
{
    return m ? dch_siphash24(m->cfg.hash_key, key, len) : 0;
}

uint32_t dch_map_lookup_hash(const dch_map *m, uint64_t hash)
{
    /* Every slot is owned exactly when some member has weight, so the test
     * comes before the load and does not wait for it. The NULL test is one
     * predictable branch. */
    if (m == NULL || m->total_weight == 0 || m->dr.unowned)
        return DCH_NODE_NONE;
    return m->rd_owner[(hash >> 32) >> m->shift];
}

uint32_t dch_map_lookup(const dch_map *m, const void *key, size_t len)
{
    return dch_map_lookup_hash(m, dch_map_hash(m, key, len));
}

uint64_t dch_map_epoch(const dch_map *m)
{
    return m ? m->epoch : 0;
}

size_t dch_map_memory(const dch_map *m)
{
    if (m == NULL)
        return 0;
    const size_t ncopies = m->copies ? (size_t)m->slots * m->stride : 0;
    const size_t arrays = (size_t)(m->held != NULL) + (size_t)(m->zone_of != NULL);
    const size_t side = (size_t)m->side_cap * sizeof(uint32_t) * arrays;
    const dch__drains *d = &m->dr;
    const size_t drains = (size_t)d->n * 2 * sizeof(uint32_t) +
                          (d->owner ? (size_t)m->slots * sizeof *d->owner : 0) +
                          (d->copies ? ncopies * sizeof *d->copies : 0) +
                          (size_t)((d->slots != NULL) + (d->held != NULL)) * d->limit *
                              sizeof(uint32_t) +
                          (size_t)d->mv.n * (sizeof *d->mv.slot + 2 * m->stride * sizeof(uint16_t));
    return sizeof *m + (size_t)m->slots * sizeof *m->owner +
           ncopies * sizeof *m->copies + dch__members_memory(&m->mt) + side +
           dch__zones_memory(&m->zones) + drains;
}

/* First hash of slot s; slots are contiguous arcs covering the ring once. */
static uint64_t slot_lo(const dch_map *m, uint32_t s)
{
    const unsigned bits = 32u - m->shift;
    return bits == 0 ? 0 : (uint64_t)s << (64u - bits);
}

int dch_map_foreach_range(const dch_map *m,
                          int (*fn)(const dch_range *r, void *ctx), void *ctx)
{
    if (m == NULL || fn == NULL)
        return DCH_EINVAL;
    uint32_t s = 0;
    while (s < m->slots) {
        uint32_t e = s + 1;
        while (e < m->slots && m->rd_owner[e] == m->rd_owner[s])
            e++;
        dch_range r;
        r.lo = slot_lo(m, s);
        r.hi = e == m->slots ? UINT64_MAX : slot_lo(m, e) - 1;
        r.owner = m->rd_owner[s] == NONE16 ? DCH_NODE_NONE : m->rd_owner[s];
        int rc = fn(&r, ctx);
        if (rc != 0)
            return rc;
        s = e;
    }
    return DCH_OK;
}

int dch_map_ranges(const dch_map *m, dch_range *out, size_t cap,
                   size_t *count_out)
{
    dch__range_sink k = {out, cap, 0};
    if (m == NULL || !dch__range_sink_valid(&k, count_out))
        return DCH_EINVAL;
    (void)dch_map_foreach_range(m, dch__range_sink_put, &k);
    return dch__range_sink_close(&k, count_out);
}

/* ---- Names ------------------------------------------------------------ */

int dch_map_find_node(const dch_map *m, const char *name, uint32_t *id_out)
{
    if (m == NULL || id_out == NULL)
        return DCH_EINVAL;
    return dch__members_find(&m->mt, name, id_out);
}

/*
 * Whether changing x's weight to w moves slots between members, and so needs
 * move scratch: only when another member has weight (otherwise x alone owns
 * everything or nothing). With replicas the replica engine runs on every
 * change of weight, since copy counts and zones decide what moves.
 */
static int needs_move(const dch_map *m, uint32_t x, uint32_t w)
{
    const uint32_t others = m->total_weight - entry(m, x)->weight;
    return w != entry(m, x)->weight && (others > 0 || m->replicas > 1);
}

/* Scratch of one change: the engine's for 1 replica, the replica engine's
 * for more. */
typedef struct change {
    dch__move mv;
    dch__rep_move rm;
} change;

static dch__rep_view rep_view(dch_map *m)
{
    dch__rep_view v;
    v.owner = m->owner;
    v.copies = m->copies;
    v.slots = m->slots;
    v.replicas = m->replicas;
    v.stride = m->stride;
    v.id_limit = m->mt.id_limit;
    v.members = m->mt.entries;
    v.held = m->held;
    v.zone = m->zone_of;
    return v;
}

/* Scratch for changing x's weight to w in a map with id_limit ids. */
static int change_alloc(change *c, const dch_map *m, uint32_t id_limit, uint32_t x,
                        uint32_t w)
{
    const member *xm = member_of(m, x);
    const uint32_t weight = xm ? xm->weight : 0;
    if (m->replicas > 1)
        return dch__rep_alloc(&c->rm, m->cfg.allocator, id_limit,
                              dch__rep_rows(m->mt.entries, m->mt.id_limit, x, m->replicas,
                                            xm ? m->held[x] : 0, w > weight),
                              w > weight ? m->slots - (xm ? m->held[x] : 0)
                                         : (xm ? m->held[x] : 0));
    return dch__move_alloc(&c->mv, m->cfg.allocator, id_limit, m->units, m->spu,
                           dch__move_bound(m->mt.entries, m->mt.id_limit, m->slots, x, w,
                                           m->total_weight));
}

static void change_release(const dch_map *m, change *c)
{
    if (m->replicas > 1)
        dch__rep_release(&c->rm);
    else
        dch__move_release(&c->mv);
}

/*
 * Change x's weight to w (x already a member). With R = 1 slots move only
 * to x (a raise) or only from x (a lowering), but for the repair moves of
 * stage 5 (docs/placement.md, "Stage 5: repair"); with R >= 2 the replica
 * engine moves them (docs/replicas.md).
 * Cannot fail: c was allocated by the caller when needs_move() said so.
 * The caller checked that the weight sum stays within UINT32_MAX.
 */
static void reweigh(dch_map *m, uint32_t x, uint32_t w, change *c)
{
    member *xm = entry(m, x);
    const uint32_t others = m->total_weight - xm->weight;
    if (w == xm->weight)
        return;
    if (m->replicas > 1) {
        const dch__rep_view v = rep_view(m);
        dch__rep_apply(&c->rm, &v, x, w);
        m->ncopies = copy_count(m);
    } else if (others == 0) {
        /* x is the only member that can own slots: all or nothing. */
        const uint16_t o = w > 0 ? (uint16_t)x : NONE16;
        for (uint32_t s = 0; s < m->slots; s++)
            m->owner[s] = o;
        xm->slots = w > 0 ? m->slots : 0;
        xm->weight = w;
    } else {
        dch__map_view v;
        v.owner = m->owner;
        v.units = m->units;
        v.spu = m->spu;
        v.slots = m->slots;
        v.id_limit = m->mt.id_limit;
        v.total_weight = m->total_weight;
        v.members = m->mt.entries;
        dch__move_apply(&c->mv, &v, x, w);
    }
    m->total_weight = others + w;
}

int dch__map_base_add(dch_map *m, const char *name, const char *zone, uint32_t weight,
                      uint32_t *id_out)
{
    if (m == NULL)
        return DCH_EINVAL;
    const int zoned = zone != NULL && zone[0] != '\0';
    if (zoned && dch__name_length(zone) == SIZE_MAX)
        return DCH_EINVAL;
    dch__member_add add;
    int rc = dch__members_plan(&m->mt, name, DCH__MEMBERS_ANY_ID, &add);
    if (rc != DCH_OK)
        return rc;
    if ((uint64_t)m->total_weight + weight > UINT32_MAX)
        return DCH_EFULL;

    /* Everything that can fail, before anything changes. */
    if (dch__members_reserve(&m->mt, &add) != DCH_OK)
        return DCH_ENOMEM;
    dch__zone_add zadd;
    if (zoned && dch__zones_reserve(&m->zones, zone, &zadd) != DCH_OK) {
        dch__members_cancel(&m->mt, &add);
        return DCH_ENOMEM;
    }
    dch__side_add side;
    if (dch__map_side_reserve(m, add.cap, zoned, &side) != DCH_OK) {
        if (zoned)
            dch__zones_cancel(&m->zones, &zadd);
        dch__members_cancel(&m->mt, &add);
        return DCH_ENOMEM;
    }
    change c;
    const int moving = weight > 0 && (m->total_weight > 0 || m->replicas > 1);
    if (moving && change_alloc(&c, m, add.limit, add.id, weight) != DCH_OK) {
        dch__map_side_cancel(m, &side);
        if (zoned)
            dch__zones_cancel(&m->zones, &zadd);
        dch__members_cancel(&m->mt, &add);
        return DCH_ENOMEM;
    }

    (void)dch__members_commit(&m->mt, &add);
    dch__map_side_commit(m, &side, add.id);
    if (zoned)
        m->zone_of[add.id] = 1 + dch__zones_commit(&m->zones, &zadd);
    reweigh(m, add.id, weight, moving ? &c : NULL);
    if (moving)
        change_release(m, &c);
    m->epoch++;
    if (id_out != NULL)
        *id_out = add.id;
    return DCH_OK;
}

int dch__map_base_remove(dch_map *m, uint32_t id)
{
    if (m == NULL)
        return DCH_EINVAL;
    if (member_of(m, id) == NULL)
        return DCH_ENOENT;
    change c;
    const int moving = needs_move(m, id, 0);
    if (moving && change_alloc(&c, m, m->mt.id_limit, id, 0) != DCH_OK)
        return DCH_ENOMEM;
    reweigh(m, id, 0, moving ? &c : NULL);
    if (moving)
        change_release(m, &c);
    if (zone_of(m, id)) {
        dch__zones_release(&m->zones, zone_of(m, id) - 1);
        m->zone_of[id] = 0;
    }
    dch__members_remove(&m->mt, id);
    m->epoch++;
    return DCH_OK;
}

int dch__map_base_set_weight(dch_map *m, uint32_t id, uint32_t weight)
{
    if (m == NULL)
        return DCH_EINVAL;
    const member *mb = member_of(m, id);
    if (mb == NULL)
        return DCH_ENOENT;
    if (weight == mb->weight)
        return DCH_OK;
    if ((uint64_t)m->total_weight - mb->weight + weight > UINT32_MAX)
        return DCH_EFULL;
    change c;
    const int moving = needs_move(m, id, weight);
    if (moving && change_alloc(&c, m, m->mt.id_limit, id, weight) != DCH_OK)
        return DCH_ENOMEM;
    reweigh(m, id, weight, moving ? &c : NULL);
    if (moving)
        change_release(m, &c);
    m->epoch++;
    return DCH_OK;
}
