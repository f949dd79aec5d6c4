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
 * engine's (map_engine.c, map_engine_slots.c, map_engine_chains.c; NOTES.md,
 * "The placement engine", states it step by step and proves its promises):
 * step 1 decides every count against the shares P*w/W of the new weights,
 * step 2 chooses which slots carry those counts, aiming at per-unit slices
 * of S*w/W, and step 3 repairs any member 2 or more slots from its share.
 * With equal weights step 3 never runs, so slots move only to x or only from
 * x; with unequal weights its moves between two other members are what
 * keeps |count - P*w/W| < 2 after every call, which no engine moving only
 * x's slots can. This file is the object around the engine: members, the
 * slot table, lookups, ranges and clones.
 * All arithmetic is exact (64-bit integers) and ties fall to the lower id,
 * so the table is a pure function of the config and the call sequence.
 */
#include "dch/map.h"

#include "dch/error.h"
#include "dch/siphash.h"

#include "alloc.h"
#include "map_engine.h"
#include "map_internal.h"
#include "members.h"
#include "range_sink.h"

#include <stddef.h>
#include <string.h>

_Static_assert(DCH_MAP_MAX_NODES == DCH__MEMBERS_MAX,
               "map ids are member-table ids; 0xffff marks an unowned slot");

/* Owner entry of an unowned slot; never a member id (ids stop at 65534). */
#define NONE16 DCH__MAP_UNOWNED

typedef dch__member member;
_Static_assert(offsetof(member, name) == 0, "members.h: an entry starts with its name");

struct dch_map {
    dch_map_config cfg;
    uint32_t units;
    uint32_t spu; /* slots per unit, S */
    uint32_t slots; /* P = units * spu */
    unsigned shift; /* slot = (hash >> 32) >> shift; 32 - log2(P) */
    uint16_t *owner; /* P entries */
    dch__members mt; /* entries are `member`s */
    uint32_t total_weight;
    uint64_t epoch;
    /* The transition record of a step map (map_stage.h), valid only while
     * the epoch is still tr_epoch: every change bumps the epoch, so a changed
     * step map reads as settled without each change having to clear it. */
    dch_map_transition tr;
    uint64_t tr_epoch;
};

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

void dch_map_config_default(dch_map_config *cfg)
{
    if (cfg == NULL)
        return;
    memset(cfg, 0, sizeof *cfg);
    cfg->units = 1024;
    cfg->slots_per_unit = 64;
    cfg->allocator = NULL;
}

int dch_map_new(dch_map **out, const dch_map_config *cfg)
{
    dch_map_config def;
    if (out == NULL)
        return DCH_EINVAL;
    if (cfg == NULL) {
        dch_map_config_default(&def);
        cfg = &def;
    }
    if (!is_pow2(cfg->units) || !is_pow2(cfg->slots_per_unit) ||
        !dch__allocator_valid(cfg->allocator))
        return DCH_EINVAL;
    if ((uint64_t)cfg->units * cfg->slots_per_unit > DCH_MAP_MAX_SLOTS)
        return DCH_EFULL;

    const dch_allocator *a = cfg->allocator;
    dch_map *m = dch__alloc(a, sizeof *m);
    if (m == NULL)
        return DCH_ENOMEM;
    memset(m, 0, sizeof *m);
    m->cfg = *cfg;
    m->units = cfg->units;
    m->spu = cfg->slots_per_unit;
    m->slots = cfg->units * cfg->slots_per_unit;
    m->shift = 32u - log2u(m->slots);
    m->owner = dch__alloc_array(a, m->slots, sizeof *m->owner);
    if (m->owner == NULL) {
        dch__free(a, m);
        return DCH_ENOMEM;
    }
    for (uint32_t s = 0; s < m->slots; s++)
        m->owner[s] = NONE16;
    dch__members_init(&m->mt, a, sizeof(member));
    *out = m;
    return DCH_OK;
}

/* Entry of id, member or not; id below the table's capacity. */
static member *entry(const dch_map *m, uint32_t id)
{
    return (member *)m->mt.entries + id;
}

void dch_map_free(dch_map *m)
{
    if (m == NULL)
        return;
    const dch_allocator *a = m->cfg.allocator;
    dch__members_free(&m->mt);
    dch__free(a, m->owner);
    dch__free(a, m);
}

int dch_map_clone(dch_map **out, const dch_map *m)
{
    if (out == NULL || m == NULL)
        return DCH_EINVAL;
    const dch_allocator *a = m->cfg.allocator;
    dch_map *c = dch__alloc(a, sizeof *c);
    if (c == NULL)
        return DCH_ENOMEM;
    *c = *m;
    c->owner = dch__alloc_array(a, m->slots, sizeof *c->owner);
    if (c->owner == NULL || dch__members_clone(&c->mt, &m->mt) != DCH_OK) {
        dch__free(a, c->owner);
        dch__free(a, c);
        return DCH_ENOMEM;
    }
    memcpy(c->owner, m->owner, (size_t)m->slots * sizeof *c->owner);
    *out = c;
    return DCH_OK;
}

/* ---- Reading ---------------------------------------------------------- */

static const member *member_of(const dch_map *m, uint32_t id)
{
    return m ? dch__members_get(&m->mt, id) : NULL;
}

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

uint32_t dch_map_node_slots(const dch_map *m, uint32_t id)
{
    const member *mb = member_of(m, id);
    return mb ? mb->slots : 0;
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
    if (m == NULL || slot >= m->slots || m->owner[slot] == NONE16)
        return DCH_NODE_NONE;
    return m->owner[slot];
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
    if (m == NULL || m->total_weight == 0)
        return DCH_NODE_NONE;
    return m->owner[(hash >> 32) >> m->shift];
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
    return sizeof *m + (size_t)m->slots * sizeof *m->owner +
           dch__members_memory(&m->mt);
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
        while (e < m->slots && m->owner[e] == m->owner[s])
            e++;
        dch_range r;
        r.lo = slot_lo(m, s);
        r.hi = e == m->slots ? UINT64_MAX : slot_lo(m, e) - 1;
        r.owner = m->owner[s] == NONE16 ? DCH_NODE_NONE : m->owner[s];
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
 * everything or nothing).
 */
static int needs_move(const dch_map *m, uint32_t x, uint32_t w)
{
    const uint32_t others = m->total_weight - entry(m, x)->weight;
    return w != entry(m, x)->weight && others > 0;
}

/*
 * Change x's weight to w (x already a member), moving slots monotonically.
 * Cannot fail: mv was allocated by the caller when needs_move() said so.
 * The caller checked that the weight sum stays within UINT32_MAX.
 */
static void reweigh(dch_map *m, uint32_t x, uint32_t w, dch__move *mv)
{
    member *xm = entry(m, x);
    const uint32_t others = m->total_weight - xm->weight;
    if (w == xm->weight)
        return;
    if (others == 0) {
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
        v.members = m->mt.entries;
        dch__move_apply(mv, &v, x, w);
    }
    m->total_weight = others + w;
}

/* Scratch for changing x's weight to w in a map with id_limit ids. */
static int move_alloc(dch__move *mv, const dch_map *m, uint32_t id_limit, uint32_t x,
                      uint32_t w)
{
    const member *xm = member_of(m, x);
    const uint32_t held = xm ? xm->slots : 0;
    const uint32_t weight = xm ? xm->weight : 0;
    return dch__move_alloc(mv, m->cfg.allocator, id_limit, m->units, m->spu,
                           w > weight ? m->slots - held : held);
}

int dch_map_add_node(dch_map *m, const char *name, uint32_t weight,
                     uint32_t *id_out)
{
    if (m == NULL)
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
    dch__move mv;
    const int moving = weight > 0 && m->total_weight > 0;
    if (moving && move_alloc(&mv, m, add.limit, add.id, weight) != DCH_OK) {
        dch__members_cancel(&m->mt, &add);
        return DCH_ENOMEM;
    }

    (void)dch__members_commit(&m->mt, &add);
    reweigh(m, add.id, weight, moving ? &mv : NULL);
    if (moving)
        dch__move_release(&mv);
    m->epoch++;
    if (id_out != NULL)
        *id_out = add.id;
    return DCH_OK;
}

int dch_map_remove_node(dch_map *m, uint32_t id)
{
    if (m == NULL)
        return DCH_EINVAL;
    if (member_of(m, id) == NULL)
        return DCH_ENOENT;
    dch__move mv;
    const int moving = needs_move(m, id, 0);
    if (moving && move_alloc(&mv, m, m->mt.id_limit, id, 0) != DCH_OK)
        return DCH_ENOMEM;
    reweigh(m, id, 0, moving ? &mv : NULL);
    if (moving)
        dch__move_release(&mv);
    dch__members_remove(&m->mt, id);
    m->epoch++;
    return DCH_OK;
}

int dch_map_set_weight(dch_map *m, uint32_t id, uint32_t weight)
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
    dch__move mv;
    const int moving = needs_move(m, id, weight);
    if (moving && move_alloc(&mv, m, m->mt.id_limit, id, weight) != DCH_OK)
        return DCH_ENOMEM;
    reweigh(m, id, weight, moving ? &mv : NULL);
    if (moving)
        dch__move_release(&mv);
    m->epoch++;
    return DCH_OK;
}

/* ---- Assembly from parts (map files) ---------------------------------- */

const uint16_t *dch__map_owner_table(const dch_map *m)
{
    return m->owner;
}

const dch_map_transition *dch__map_transition(const dch_map *m)
{
    return m->tr.steps != 0 && m->tr_epoch == m->epoch ? &m->tr : NULL;
}

int dch__map_assemble(dch_map **out, const dch_map_config *cfg, uint64_t epoch,
                      uint32_t id_limit, const char *const *names,
                      const uint32_t *weights, const uint16_t *owner,
                      const dch_map_transition *tr)
{
    if (out == NULL || cfg == NULL || owner == NULL ||
        (id_limit > 0 && (names == NULL || weights == NULL)))
        return DCH_EINVAL;
    if (id_limit > DCH_MAP_MAX_NODES || (id_limit > 0 && names[id_limit - 1] == NULL))
        return DCH_ECORRUPT;
    uint64_t total = 0;
    for (uint32_t id = 0; id < id_limit; id++) {
        if (names[id] == NULL ? weights[id] != 0 : dch__name_length(names[id]) == SIZE_MAX)
            return DCH_ECORRUPT;
        total += weights[id];
    }
    if (total > UINT32_MAX)
        return DCH_ECORRUPT;

    dch_map *m;
    int rc = dch_map_new(&m, cfg);
    if (rc != DCH_OK)
        return rc;
    for (uint32_t s = 0; s < m->slots; s++) {
        const uint16_t o = owner[s];
        if (total == 0 ? o != NONE16 : (o >= id_limit || names[o] == NULL || weights[o] == 0)) {
            dch_map_free(m);
            return DCH_ECORRUPT;
        }
    }
    /* Members in id order; uniqueness is checked as each name is placed. */
    for (uint32_t id = 0; id < id_limit; id++) {
        if (names[id] == NULL)
            continue;
        dch__member_add add;
        rc = dch__members_plan(&m->mt, names[id], id, &add);
        if (rc == DCH_OK)
            rc = dch__members_reserve(&m->mt, &add);
        if (rc != DCH_OK) {
            dch_map_free(m);
            return rc == DCH_ENOMEM ? rc : DCH_ECORRUPT;
        }
        member *mb = dch__members_commit(&m->mt, &add);
        mb->weight = weights[id];
    }
    m->total_weight = (uint32_t)total;
    memcpy(m->owner, owner, (size_t)m->slots * sizeof *owner);
    for (uint32_t s = 0; s < m->slots; s++)
        if (owner[s] != NONE16)
            entry(m, owner[s])->slots++;
    /* A settled map keeps the global bound every call keeps (map.h); a
     * step map is between two such maps and need not. */
    for (uint32_t id = 0; tr == NULL && total > 0 && id < id_limit; id++) {
        const int64_t d = (int64_t)entry(m, id)->slots * (int64_t)total -
                          (int64_t)m->slots * entry(m, id)->weight;
        if (d >= 2 * (int64_t)total || d <= -2 * (int64_t)total) {
            dch_map_free(m);
            return DCH_ECORRUPT;
        }
    }
    m->epoch = epoch;
    if (tr != NULL) {
        m->tr = *tr;
        m->tr_epoch = epoch;
    }
    *out = m;
    return DCH_OK;
}
