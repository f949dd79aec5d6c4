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
 * Every change is one of two moves, both monotone:
 *   grow(x):   x's weight rises; slots move only from other members to x;
 *   shrink(x): x's weight falls; slots move only from x to other members.
 * Add is grow from weight 0, remove is shrink to 0, set_weight is either.
 *
 * With W the new weight sum, a member of weight w has the exact per-unit
 * share s = S*w/W and the global share q = P*w/W; its soft band in a unit is
 * [floor(s), ceil(s)] and its hard band one wider each side, which still
 * keeps |count - s| < 2. A move runs four passes (NOTES.md states them bit
 * for bit):
 *   1. per unit, the moves the bands force (kmin) and the further moves x's
 *      band allows (room); x's total is its rounded share, clamped;
 *   2. the forced moves, unit by unit, counterparties ranked by band tier,
 *      then global need, then per-unit need, then id;
 *   3. the remaining moves, each to the counterparty of greatest global need
 *      that can make it inside its soft (then hard) band, in a unit with
 *      room, starting from points spread evenly round the ring;
 *   4. repair: chains of take-overs between counterparties while one is a
 *      slot (two, with unequal weights) needier than another.
 * Ranking by global need keeps counts within a slot of their shares; the
 * bands keep every unit's slices equal. With equal weights the soft bands
 * always hold; with unequal weights only the hard bands force moves.
 * All arithmetic is exact (64-bit integers) and ties fall to the lower id,
 * so the table is a pure function of the config and the call sequence.
 */
#include "dch/map.h"

#include "dch/error.h"
#include "dch/siphash.h"

#include "alloc.h"
#include "map_engine.h"
#include "map_internal.h"

#include <string.h>

/* Owner entry of an unowned slot; never a member id (ids stop at 65534). */
#define NONE16 DCH__MAP_UNOWNED

typedef dch__member member;

struct dch_map {
    dch_map_config cfg;
    uint32_t units;
    uint32_t spu; /* slots per unit, S */
    uint32_t slots; /* P = units * spu */
    unsigned shift; /* slot = (hash >> 32) >> shift; 32 - log2(P) */
    uint16_t *owner; /* P entries */
    member *members; /* id_cap entries */
    uint16_t *by_name; /* count ids, sorted by name bytes */
    uint32_t id_cap;
    uint32_t id_limit; /* one past the highest id in use */
    uint32_t count;
    uint32_t total_weight;
    uint64_t epoch;
    size_t name_bytes; /* sum of name lengths + 1, for dch_map_memory */
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
    *out = m;
    return DCH_OK;
}

void dch_map_free(dch_map *m)
{
    if (m == NULL)
        return;
    const dch_allocator *a = m->cfg.allocator;
    for (uint32_t id = 0; id < m->id_limit; id++)
        dch__free(a, m->members[id].name);
    dch__free(a, m->members);
    dch__free(a, m->by_name);
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
    c->members = m->id_cap ? dch__alloc_array(a, m->id_cap, sizeof *c->members) : NULL;
    c->by_name = m->id_cap ? dch__alloc_array(a, m->id_cap, sizeof *c->by_name) : NULL;
    int ok = c->owner != NULL && (m->id_cap == 0 || (c->members && c->by_name));
    uint32_t copied = 0;
    if (ok) {
        memcpy(c->owner, m->owner, (size_t)m->slots * sizeof *c->owner);
        if (m->id_cap) {
            memcpy(c->members, m->members, (size_t)m->id_cap * sizeof *c->members);
            memcpy(c->by_name, m->by_name, (size_t)m->id_cap * sizeof *c->by_name);
        }
        for (; copied < m->id_limit; copied++) {
            const char *name = m->members[copied].name;
            if (name == NULL)
                continue;
            c->members[copied].name = dch__strdup(a, name, strlen(name));
            if (c->members[copied].name == NULL) {
                ok = 0;
                break;
            }
        }
    }
    if (!ok) {
        for (uint32_t id = 0; id < copied; id++)
            if (m->members[id].name != NULL)
                dch__free(a, c->members[id].name);
        dch__free(a, c->owner);
        dch__free(a, c->members);
        dch__free(a, c->by_name);
        dch__free(a, c);
        return DCH_ENOMEM;
    }
    *out = c;
    return DCH_OK;
}

/* ---- Reading ---------------------------------------------------------- */

static const member *member_of(const dch_map *m, uint32_t id)
{
    if (m == NULL || id >= m->id_limit || m->members[id].name == NULL)
        return NULL;
    return &m->members[id];
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
    return m ? m->count : 0;
}

uint32_t dch_map_id_limit(const dch_map *m)
{
    return m ? m->id_limit : 0;
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
    return (uint32_t)((hash >> 32) >> m->shift);
}

uint64_t dch_map_hash(const dch_map *m, const void *key, size_t len)
{
    return dch_siphash24(m->cfg.hash_key, key, len);
}

uint32_t dch_map_lookup_hash(const dch_map *m, uint64_t hash)
{
    /* Every slot is owned exactly when some member has weight, so the test
     * comes before the load and does not wait for it. */
    if (m->total_weight == 0)
        return DCH_NODE_NONE;
    return m->owner[(hash >> 32) >> m->shift];
}

uint32_t dch_map_lookup(const dch_map *m, const void *key, size_t len)
{
    return dch_map_lookup_hash(m, dch_siphash24(m->cfg.hash_key, key, len));
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
           (size_t)m->id_cap * (sizeof *m->members + sizeof *m->by_name) +
           m->name_bytes;
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

typedef struct range_sink {
    dch_range *out;
    size_t cap;
    size_t n;
} range_sink;

static int sink_range(const dch_range *r, void *ctx)
{
    range_sink *k = ctx;
    if (k->n < k->cap)
        k->out[k->n] = *r;
    k->n++;
    return 0;
}

int dch_map_ranges(const dch_map *m, dch_range *out, size_t cap,
                   size_t *count_out)
{
    if (m == NULL || count_out == NULL || (out == NULL && cap > 0))
        return DCH_EINVAL;
    range_sink k = {out, cap, 0};
    (void)dch_map_foreach_range(m, sink_range, &k);
    *count_out = k.n;
    return k.n > cap ? DCH_EFULL : DCH_OK;
}

/* ---- Names ------------------------------------------------------------ */

/* Position of `name` in by_name, or where it would be inserted; *found set. */
static uint32_t name_position(const dch_map *m, const char *name, int *found)
{
    uint32_t lo = 0, hi = m->count;
    while (lo < hi) {
        const uint32_t mid = lo + (hi - lo) / 2;
        const int c = strcmp(m->members[m->by_name[mid]].name, name);
        if (c == 0) {
            *found = 1;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = 0;
    return lo;
}

int dch_map_find_node(const dch_map *m, const char *name, uint32_t *id_out)
{
    if (m == NULL || id_out == NULL || dch__name_length(name) == SIZE_MAX)
        return DCH_EINVAL;
    int found;
    const uint32_t pos = name_position(m, name, &found);
    if (!found)
        return DCH_ENOENT;
    *id_out = m->by_name[pos];
    return DCH_OK;
}

/*
 * Whether changing x's weight to w moves slots between members, and so needs
 * move scratch: only when another member has weight (otherwise x alone owns
 * everything or nothing).
 */
static int needs_move(const dch_map *m, uint32_t x, uint32_t w)
{
    const uint32_t others = m->total_weight - m->members[x].weight;
    return w != m->members[x].weight && others > 0;
}

/*
 * Change x's weight to w (x already a member), moving slots monotonically.
 * Cannot fail: mv was allocated by the caller when needs_move() said so.
 * The caller checked that the weight sum stays within UINT32_MAX.
 */
static void reweigh(dch_map *m, uint32_t x, uint32_t w, dch__move *mv)
{
    member *xm = &m->members[x];
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
        v.id_limit = m->id_limit;
        v.members = m->members;
        dch__move_apply(mv, &v, x, w);
    }
    m->total_weight = others + w;
}

/* Scratch for changing x's weight to w in a map with id_limit ids. */
static int move_alloc(dch__move *mv, const dch_map *m, uint32_t id_limit, uint32_t x,
                      uint32_t w)
{
    const uint32_t held = x < m->id_limit ? m->members[x].slots : 0;
    const uint32_t weight = x < m->id_limit ? m->members[x].weight : 0;
    return dch__move_alloc(mv, m->cfg.allocator, id_limit, m->units, m->spu,
                           w > weight ? m->slots - held : held);
}

/* Grow an id-indexed array pair to hold `need` ids, all-or-nothing. */
static int reserve_ids(dch_map *m, uint32_t need, member **members_out,
                       uint16_t **by_name_out)
{
    *members_out = NULL;
    *by_name_out = NULL;
    if (need <= m->id_cap)
        return DCH_OK;
    uint32_t cap = m->id_cap ? m->id_cap : 4;
    while (cap < need)
        cap = cap > DCH_MAP_MAX_NODES / 2 ? DCH_MAP_MAX_NODES : cap * 2;
    const dch_allocator *a = m->cfg.allocator;
    member *mb = dch__alloc_array(a, cap, sizeof *mb);
    uint16_t *bn = dch__alloc_array(a, cap, sizeof *bn);
    if (mb == NULL || bn == NULL) {
        dch__free(a, mb);
        dch__free(a, bn);
        return DCH_ENOMEM;
    }
    if (m->id_cap) {
        memcpy(mb, m->members, (size_t)m->id_cap * sizeof *mb);
        memcpy(bn, m->by_name, (size_t)m->id_cap * sizeof *bn);
    }
    memset(mb + m->id_cap, 0, (size_t)(cap - m->id_cap) * sizeof *mb);
    *members_out = mb;
    *by_name_out = bn;
    return (int)cap;
}

int dch_map_add_node(dch_map *m, const char *name, uint32_t weight,
                     uint32_t *id_out)
{
    if (m == NULL)
        return DCH_EINVAL;
    const size_t len = dch__name_length(name);
    if (len == SIZE_MAX)
        return DCH_EINVAL;
    int found;
    const uint32_t pos = name_position(m, name, &found);
    if (found)
        return DCH_EEXIST;
    if (m->count >= DCH_MAP_MAX_NODES ||
        (uint64_t)m->total_weight + weight > UINT32_MAX)
        return DCH_EFULL;

    uint32_t id = 0;
    while (id < m->id_limit && m->members[id].name != NULL)
        id++;
    const uint32_t limit = id < m->id_limit ? m->id_limit : id + 1;

    /* Everything that can fail, before anything changes. */
    const dch_allocator *a = m->cfg.allocator;
    member *new_members;
    uint16_t *new_by_name;
    const int cap = reserve_ids(m, limit, &new_members, &new_by_name);
    if (cap < 0)
        return cap;
    char *copy = dch__strdup(a, name, len);
    dch__move mv;
    const int moving = weight > 0 && m->total_weight > 0;
    if (copy == NULL || (moving && move_alloc(&mv, m, limit, id, weight) != DCH_OK)) {
        dch__free(a, copy);
        dch__free(a, new_members);
        dch__free(a, new_by_name);
        return DCH_ENOMEM;
    }

    if (new_members != NULL) {
        dch__free(a, m->members);
        dch__free(a, m->by_name);
        m->members = new_members;
        m->by_name = new_by_name;
        m->id_cap = (uint32_t)cap;
    }
    m->members[id].name = copy;
    m->members[id].weight = 0;
    m->members[id].slots = 0;
    memmove(m->by_name + pos + 1, m->by_name + pos,
            (size_t)(m->count - pos) * sizeof *m->by_name);
    m->by_name[pos] = (uint16_t)id;
    m->count++;
    m->id_limit = limit;
    m->name_bytes += len + 1;

    reweigh(m, id, weight, moving ? &mv : NULL);
    if (moving)
        dch__move_release(&mv);
    m->epoch++;
    if (id_out != NULL)
        *id_out = id;
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
    if (moving && move_alloc(&mv, m, m->id_limit, id, 0) != DCH_OK)
        return DCH_ENOMEM;
    reweigh(m, id, 0, moving ? &mv : NULL);
    if (moving)
        dch__move_release(&mv);

    member *mb = &m->members[id];
    int found;
    const uint32_t pos = name_position(m, mb->name, &found);
    memmove(m->by_name + pos, m->by_name + pos + 1,
            (size_t)(m->count - pos - 1) * sizeof *m->by_name);
    m->name_bytes -= strlen(mb->name) + 1;
    dch__free(m->cfg.allocator, mb->name);
    mb->name = NULL;
    m->count--;
    while (m->id_limit > 0 && m->members[m->id_limit - 1].name == NULL)
        m->id_limit--;
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
    if (moving && move_alloc(&mv, m, m->id_limit, id, weight) != DCH_OK)
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
    member *mb;
    uint16_t *bn;
    const int cap = reserve_ids(m, id_limit, &mb, &bn);
    if (cap < 0) {
        dch_map_free(m);
        return cap;
    }
    if (mb != NULL) {
        m->members = mb;
        m->by_name = bn;
        m->id_cap = (uint32_t)cap;
    }
    for (uint32_t id = 0; id < id_limit; id++) {
        if (names[id] == NULL)
            continue;
        int found;
        const uint32_t pos = name_position(m, names[id], &found);
        const size_t len = strlen(names[id]);
        char *copy = found ? NULL : dch__strdup(m->cfg.allocator, names[id], len);
        if (copy == NULL) {
            m->id_limit = id; /* free what was placed so far */
            dch_map_free(m);
            return found ? DCH_ECORRUPT : DCH_ENOMEM;
        }
        memmove(m->by_name + pos + 1, m->by_name + pos,
                (size_t)(m->count - pos) * sizeof *m->by_name);
        m->by_name[pos] = (uint16_t)id;
        m->members[id].name = copy;
        m->members[id].weight = weights[id];
        m->count++;
        m->name_bytes += len + 1;
    }
    m->id_limit = id_limit;
    m->total_weight = (uint32_t)total;
    memcpy(m->owner, owner, (size_t)m->slots * sizeof *owner);
    for (uint32_t s = 0; s < m->slots; s++)
        if (owner[s] != NONE16)
            m->members[owner[s]].slots++;
    /* A settled map keeps the global bound every call keeps (map.h); a
     * step map is between two such maps and need not. */
    for (uint32_t id = 0; tr == NULL && total > 0 && id < id_limit; id++) {
        const int64_t d = (int64_t)m->members[id].slots * (int64_t)total -
                          (int64_t)m->slots * m->members[id].weight;
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
