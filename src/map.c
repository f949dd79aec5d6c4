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
#include "map_internal.h"

#include <string.h>

/* Owner entry of an unowned slot; never a member id (ids stop at 65534). */
#define NONE16 DCH__MAP_UNOWNED

typedef struct member {
    char *name; /* NULL when the id is free */
    uint32_t weight;
    uint32_t slots; /* slots owned; sums to P over members when weight sum > 0 */
} member;

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

/* ---- Moves ------------------------------------------------------------ */

/*
 * Scratch for one grow or shrink, allocated before the map is touched so that
 * a failed allocation leaves the map as it was.
 */
typedef struct move {
    dch_map *m;
    uint32_t x; /* the member whose weight changes */
    uint64_t W; /* weight sum after the change, > 0 */
    int grow;
    int max_tier; /* 1: keep soft bands (equal weights); 2: hard bands allowed */
    uint32_t id_limit;
    uint32_t *cnt; /* per id: slots held in the current unit; 0 between units */
    uint32_t *present; /* ids with cnt > 0 in the current unit */
    uint32_t npresent;
    uint32_t *kmin; /* per unit: moves the bands force there */
    uint32_t *room; /* per unit: further moves x's band allows there */
    uint32_t *picks; /* counterparties chosen in the current unit, in order */
    uint32_t *order; /* slots grouped by owner, ascending within each owner */
    uint32_t *start; /* per id + 1: where each owner's run begins in order */
    uint8_t *spent; /* per id: no slot left that it may give or take */
    uint32_t *parent, *queue; /* per id: breadth-first search of the repair */
    uint32_t *band_lo, *band_hi; /* per id: soft band in a unit, new weights */
    uint8_t *entry_ok; /* per moved entry: its counterparty may hand it over */
    uint32_t *entry_seen; /* per moved entry: unit_version when entry_ok was set */
    uint32_t *unit_version; /* per unit: bumped by every take-over there */
    uint32_t *unit_stamp, *unit_held; /* per unit: cached count of one member */
    uint32_t stamp;
    uint32_t *moved; /* slots moved so far in this call */
    uint16_t *moved_with; /* for each, the counterparty */
    uint32_t nmoved;
} move;

static int move_alloc(move *mv, dch_map *m, uint32_t id_limit)
{
    const dch_allocator *a = m->cfg.allocator;
    memset(mv, 0, sizeof *mv);
    mv->m = m;
    mv->id_limit = id_limit;
    mv->cnt = dch__alloc_array(a, id_limit, sizeof *mv->cnt);
    mv->present = dch__alloc_array(a, m->spu + 1, sizeof *mv->present);
    mv->kmin = dch__alloc_array(a, m->units, sizeof *mv->kmin);
    mv->room = dch__alloc_array(a, m->units, sizeof *mv->room);
    mv->picks = dch__alloc_array(a, m->spu, sizeof *mv->picks);
    mv->order = dch__alloc_array(a, m->slots, sizeof *mv->order);
    mv->start = dch__alloc_array(a, (size_t)id_limit + 1, sizeof *mv->start);
    mv->spent = dch__alloc_array(a, id_limit, sizeof *mv->spent);
    mv->moved = dch__alloc_array(a, m->slots, sizeof *mv->moved);
    mv->moved_with = dch__alloc_array(a, m->slots, sizeof *mv->moved_with);
    mv->parent = dch__alloc_array(a, id_limit, sizeof *mv->parent);
    mv->queue = dch__alloc_array(a, id_limit, sizeof *mv->queue);
    mv->band_lo = dch__alloc_array(a, id_limit, sizeof *mv->band_lo);
    mv->band_hi = dch__alloc_array(a, id_limit, sizeof *mv->band_hi);
    mv->entry_ok = dch__alloc_array(a, m->slots, sizeof *mv->entry_ok);
    mv->entry_seen = dch__alloc_array(a, m->slots, sizeof *mv->entry_seen);
    mv->unit_version = dch__alloc_array(a, m->units, sizeof *mv->unit_version);
    mv->unit_stamp = dch__alloc_array(a, m->units, sizeof *mv->unit_stamp);
    mv->unit_held = dch__alloc_array(a, m->units, sizeof *mv->unit_held);
    if (!mv->cnt || !mv->present || !mv->kmin || !mv->room || !mv->picks ||
        !mv->order || !mv->start || !mv->spent || !mv->moved || !mv->moved_with ||
        !mv->parent || !mv->queue || !mv->band_lo || !mv->band_hi ||
        !mv->entry_ok || !mv->unit_stamp || !mv->unit_held || !mv->entry_seen ||
        !mv->unit_version) {
        dch__free(a, mv->entry_seen);
        dch__free(a, mv->unit_version);
        dch__free(a, mv->entry_ok);
        dch__free(a, mv->unit_stamp);
        dch__free(a, mv->unit_held);
        dch__free(a, mv->band_lo);
        dch__free(a, mv->band_hi);
        dch__free(a, mv->parent);
        dch__free(a, mv->queue);
        dch__free(a, mv->moved);
        dch__free(a, mv->moved_with);
        dch__free(a, mv->cnt);
        dch__free(a, mv->present);
        dch__free(a, mv->kmin);
        dch__free(a, mv->room);
        dch__free(a, mv->picks);
        dch__free(a, mv->order);
        dch__free(a, mv->start);
        dch__free(a, mv->spent);
        return DCH_ENOMEM;
    }
    memset(mv->cnt, 0, (size_t)id_limit * sizeof *mv->cnt);
    memset(mv->unit_stamp, 0, (size_t)m->units * sizeof *mv->unit_stamp);
    memset(mv->unit_version, 0, (size_t)m->units * sizeof *mv->unit_version);
    return DCH_OK;
}

static void move_release(move *mv)
{
    const dch_allocator *a = mv->m->cfg.allocator;
    dch__free(a, mv->cnt);
    dch__free(a, mv->present);
    dch__free(a, mv->kmin);
    dch__free(a, mv->room);
    dch__free(a, mv->picks);
    dch__free(a, mv->order);
    dch__free(a, mv->start);
    dch__free(a, mv->spent);
    dch__free(a, mv->moved);
    dch__free(a, mv->moved_with);
    dch__free(a, mv->parent);
    dch__free(a, mv->queue);
    dch__free(a, mv->band_lo);
    dch__free(a, mv->band_hi);
    dch__free(a, mv->entry_ok);
    dch__free(a, mv->entry_seen);
    dch__free(a, mv->unit_version);
    dch__free(a, mv->unit_stamp);
    dch__free(a, mv->unit_held);
}

/* Count the owners of unit u into cnt/present (x included). */
static void unit_count(move *mv, uint32_t u)
{
    const uint16_t *o = mv->m->owner + (size_t)u * mv->m->spu;
    mv->npresent = 0;
    for (uint32_t i = 0; i < mv->m->spu; i++) {
        const uint16_t id = o[i];
        if (id == NONE16)
            continue;
        if (mv->cnt[id]++ == 0)
            mv->present[mv->npresent++] = id;
    }
}

static void unit_clear(move *mv)
{
    for (uint32_t i = 0; i < mv->npresent; i++)
        mv->cnt[mv->present[i]] = 0;
    mv->npresent = 0;
}

/* How many slots of unit u member id holds. O(S). */
static uint32_t held_in_unit(const dch_map *m, uint32_t u, uint32_t id)
{
    const uint16_t *o = m->owner + (size_t)u * m->spu;
    uint32_t c = 0;
    for (uint32_t i = 0; i < m->spu; i++)
        c += o[i] == id;
    return c;
}

/* Compute every member's soft band [floor(s), ceil(s)], s = S * w / W, once
 * per move: the passes consult them per slot. */
static void compute_bands(move *mv)
{
    const dch_map *m = mv->m;
    for (uint32_t id = 0; id < mv->id_limit; id++) {
        const uint64_t num = (uint64_t)m->spu * m->members[id].weight;
        mv->band_lo[id] = (uint32_t)(num / mv->W);
        mv->band_hi[id] = mv->band_lo[id] + (num % mv->W != 0);
    }
}

/* Soft band [lo, hi] of member id. */
static void soft_band(const move *mv, uint32_t id, uint32_t *lo, uint32_t *hi)
{
    *lo = mv->band_lo[id];
    *hi = mv->band_hi[id];
}

/* count * W - share * w: the member's deviation from its share, times W. */
static int64_t deviation(uint64_t count, uint64_t share, uint64_t w, uint64_t W)
{
    return (int64_t)(count * W) - (int64_t)(share * w);
}

/* A member's deviation from its global share, oriented so that larger means
 * more in need of this move: surplus for a donor, deficit for a receiver. */
static int64_t need(const move *mv, const member *mb)
{
    const int64_t d = deviation(mb->slots, mv->m->slots, mb->weight, mv->W);
    return mv->grow ? d : -d;
}

/*
 * Band tier of moving one slot of a member that holds c in a unit: 0 if the
 * move is forced (outside the soft band), 1 if it stays inside the soft band,
 * 2 if it stays inside the hard band, 3 otherwise. Lower is better.
 */
static int tier(const move *mv, uint32_t c, uint32_t id)
{
    uint32_t lo, hi;
    soft_band(mv, id, &lo, &hi);
    if (mv->grow) { /* the member gives */
        if (c > hi)
            return 0;
        if (c > lo)
            return 1;
        return c + 1 > lo ? 2 : 3;
    }
    if (c < lo) /* the member receives */
        return 0;
    if (c < hi)
        return 1;
    return c < hi + 1 ? 2 : 3;
}

typedef struct rank {
    int tier;
    int64_t global; /* larger is better */
    int64_t local;
    uint32_t id;
} rank;

static int rank_better(const rank *a, const rank *b)
{
    if (a->tier != b->tier)
        return a->tier < b->tier;
    if (a->global != b->global)
        return a->global > b->global;
    if (a->local != b->local)
        return a->local > b->local;
    return a->id < b->id;
}

/*
 * The best counterparty for one move in the current unit: a donor present in
 * the unit (grow) or any member of positive weight (shrink), x excluded.
 */
static uint32_t pick_in_unit(const move *mv)
{
    const dch_map *m = mv->m;
    rank best = {4, 0, 0, UINT32_MAX};
    const uint32_t n = mv->grow ? mv->npresent : m->id_limit;
    for (uint32_t i = 0; i < n; i++) {
        const uint32_t id = mv->grow ? mv->present[i] : i;
        const member *mb = &m->members[id];
        if (id == mv->x || mb->weight == 0 || (mv->grow && mv->cnt[id] == 0))
            continue;
        const uint32_t c = mv->cnt[id];
        const int64_t local = deviation(c, m->spu, mb->weight, mv->W);
        rank r = {tier(mv, c, id), need(mv, mb),
                  mv->grow ? local : -local, id};
        if (rank_better(&r, &best))
            best = r;
    }
    return best.id;
}

static uint32_t min_u32(uint32_t a, uint32_t b)
{
    return a < b ? a : b;
}

static uint32_t max_u32(uint32_t a, uint32_t b)
{
    return a > b ? a : b;
}

/*
 * Pass 1: per unit, kmin = the moves the soft bands force there and room =
 * the further moves x's soft band (and the others' room) allows. Returns how
 * many moves go beyond the forced ones.
 */
static uint64_t plan_units(move *mv)
{
    dch_map *m = mv->m;
    const member *xm = &m->members[mv->x];
    uint32_t xlo, xhi;
    soft_band(mv, mv->x, &xlo, &xhi);

    /* Shrink: members absent from a unit hold 0 there, so the receivers'
     * floors and ceilings are summed once and corrected per unit. */
    uint64_t lo_sum = 0, hi_sum = 0, lo1_sum = 0;
    if (!mv->grow) {
        for (uint32_t id = 0; id < m->id_limit; id++) {
            const member *mb = &m->members[id];
            if (id == mv->x || mb->weight == 0)
                continue;
            uint32_t lo, hi;
            soft_band(mv, id, &lo, &hi);
            lo_sum += lo;
            hi_sum += hi;
            lo1_sum += lo > 0 ? lo - 1 : 0;
        }
    }

    /* Soft bands force moves with equal weights, and with unequal weights
     * from 8 slots per unit up as far as x's global target allows: a member
     * left above its soft ceiling where a light member is absent keeps that
     * surplus once the light member leaves (no monotone move can take it
     * back), so slices should stay soft for the global shares to survive
     * later changes; but with unequal weights many members can cross an
     * integer share at once and their soft bands alone can ask for more
     * moves than x's share calls for. Below 8 slots a unit's shares are a
     * slot or two and only the hard bands force. kmin holds the moves soft
     * bands force, unit_held (free until the repair) those hard bands force. */
    const int soft = mv->max_tier == 1 || m->spu >= 8;
    uint32_t *hard_min = mv->unit_held;
    uint64_t sum_soft = 0, sum_hard = 0;
    for (uint32_t u = 0; u < m->units; u++) {
        const uint16_t *o = m->owner + (size_t)u * m->spu;
        /* Others' holdings, in all and capped at their floor, floor - 1,
         * ceiling and ceiling + 1, counted slot by slot: min(c, L) is the
         * number of a member's 1st, 2nd, ... slots in the unit that are at
         * most L. */
        uint32_t held = 0, held_lo = 0, held_lo1 = 0, held_hi = 0, held_hi1 = 0;
        uint32_t cx = 0;
        for (uint32_t i = 0; i < m->spu; i++) {
            const uint32_t id = o[i];
            if (id == NONE16)
                continue;
            if (id == mv->x) {
                cx++;
                continue;
            }
            const uint32_t c = ++mv->cnt[id];
            const uint32_t lo = mv->band_lo[id], hi = mv->band_hi[id];
            held++;
            held_lo += c <= lo;
            held_lo1 += c + 1 <= lo;
            held_hi += c <= hi;
            held_hi1 += c <= hi + 1;
        }
        for (uint32_t i = 0; i < m->spu; i++)
            if (o[i] != NONE16)
                mv->cnt[o[i]] = 0;
        uint32_t kmin, khard, kmax;
        if (mv->grow) {
            /* x must reach its floor and others must shed what is above
             * their hard bands; others above their soft ceilings shed as far
             * as x's ceiling allows; x may rise to its ceiling while others
             * stay at or above their floors. */
            const uint32_t must_soft = soft ? held - held_hi : 0;
            const uint32_t must_hard = held - held_hi1;
            const uint32_t can = held - held_lo;
            const uint32_t need_x = xlo > cx ? xlo - cx : 0;
            const uint32_t space = xhi > cx ? xhi - cx : 0;
            khard = min_u32(held, max_u32(need_x, must_hard));
            kmin = min_u32(held, max_u32(khard, min_u32(must_soft, space)));
            kmax = max_u32(kmin, min_u32(space, can));
        } else {
            /* x must shed what is above its ceiling and others must be
             * filled up to their hard bands; others below their soft floors
             * are filled as far as x's floor allows; x may fall to its floor
             * while others stay at or below their ceilings. */
            const uint32_t must_soft = soft ? (uint32_t)(lo_sum - held_lo) : 0;
            const uint32_t must_hard = (uint32_t)(lo1_sum - held_lo1);
            const uint32_t can = (uint32_t)(hi_sum - held_hi);
            const uint32_t excess = cx > xhi ? cx - xhi : 0;
            const uint32_t spare = cx > xlo ? cx - xlo : 0;
            khard = max_u32(excess, min_u32(must_hard, cx));
            kmin = max_u32(khard, min_u32(must_soft, spare));
            kmax = max_u32(kmin, min_u32(spare, can));
        }
        mv->kmin[u] = kmin;
        hard_min[u] = khard;
        mv->room[u] = kmax; /* the upper bound until the minimum is settled */
        sum_soft += kmin;
        sum_hard += khard;
    }

    /* x's global target: its share rounded to nearest, half up. */
    const uint64_t target =
        (2 * (uint64_t)m->slots * xm->weight + mv->W) / (2 * mv->W);
    uint64_t total;
    if (mv->grow)
        total = target > xm->slots ? target - xm->slots : 0;
    else
        total = xm->slots > target ? xm->slots - target : 0;

    /* With unequal weights, soft-forced moves beyond the hard-forced ones
     * are kept, unit by unit in ring order, only while they fit in total. */
    if (mv->max_tier > 1 && sum_soft > total) {
        uint64_t budget = total > sum_hard ? total - sum_hard : 0;
        for (uint32_t u = 0; u < m->units; u++) {
            const uint32_t more = mv->kmin[u] - hard_min[u];
            const uint32_t take = (uint32_t)(budget < more ? budget : more);
            mv->kmin[u] = hard_min[u] + take;
            budget -= take;
        }
    }
    uint64_t sum_min = 0, sum_room = 0;
    for (uint32_t u = 0; u < m->units; u++) {
        mv->room[u] -= mv->kmin[u];
        sum_min += mv->kmin[u];
        sum_room += mv->room[u];
    }
    if (total < sum_min)
        total = sum_min;
    if (total > sum_min + sum_room)
        total = sum_min + sum_room;
    return total - sum_min;
}

/* Move slot s (in unit u) between x and member id, in the move's direction. */
static void move_slot(move *mv, uint32_t s, uint32_t id)
{
    dch_map *m = mv->m;
    if (mv->grow) {
        m->members[id].slots--;
        m->members[mv->x].slots++;
        m->owner[s] = (uint16_t)mv->x;
    } else {
        m->members[id].slots++;
        m->members[mv->x].slots--;
        m->owner[s] = (uint16_t)id;
    }
    mv->moved[mv->nmoved] = s;
    mv->moved_with[mv->nmoved++] = (uint16_t)id;
}

/*
 * Pass 2: the forced moves, unit by unit. Counterparties are ranked by band
 * tier, then global need; a donor gives its first slots in the unit, x gives
 * its last ones.
 */
static void apply_forced(move *mv)
{
    dch_map *m = mv->m;
    for (uint32_t u = 0; u < m->units; u++) {
        const uint32_t k = mv->kmin[u];
        if (k == 0)
            continue;
        unit_count(mv, u);
        uint32_t npicks = 0;
        for (uint32_t j = 0; j < k; j++) {
            const uint32_t id = pick_in_unit(mv);
            if (mv->grow) {
                mv->cnt[id]--;
                m->members[id].slots--;
                m->members[mv->x].slots++;
            } else {
                if (mv->cnt[id]++ == 0)
                    mv->present[mv->npresent++] = id;
                m->members[id].slots++;
                m->members[mv->x].slots--;
            }
            mv->picks[npicks++] = id;
        }
        uint16_t *o = m->owner + (size_t)u * m->spu;
        if (mv->grow) {
            unit_clear(mv);
            for (uint32_t j = 0; j < npicks; j++)
                mv->cnt[mv->picks[j]]++;
            for (uint32_t i = 0; i < m->spu; i++) {
                const uint16_t id = o[i];
                if (id != NONE16 && id != mv->x && mv->cnt[id] > 0) {
                    mv->cnt[id]--;
                    o[i] = (uint16_t)mv->x;
                    mv->moved[mv->nmoved] = u * m->spu + i;
                    mv->moved_with[mv->nmoved++] = id;
                }
            }
        } else {
            uint32_t j = 0;
            for (uint32_t i = m->spu; i-- > 0 && j < npicks;) {
                if (o[i] == mv->x) {
                    o[i] = (uint16_t)mv->picks[j++];
                    mv->moved[mv->nmoved] = u * m->spu + i;
                    mv->moved_with[mv->nmoved++] = o[i];
                }
            }
            unit_clear(mv);
        }
    }
}

/*
 * Group slots by owner into order/start: the donors' slots for a grow, x's
 * slots for a shrink (then start is unused). Ascending within each owner.
 */
static void index_slots(move *mv)
{
    dch_map *m = mv->m;
    if (!mv->grow) {
        uint32_t n = 0;
        for (uint32_t s = 0; s < m->slots; s++)
            if (m->owner[s] == mv->x)
                mv->order[n++] = s;
        mv->start[0] = 0;
        mv->start[1] = n;
        return;
    }
    memset(mv->start, 0, ((size_t)mv->id_limit + 1) * sizeof *mv->start);
    for (uint32_t s = 0; s < m->slots; s++)
        mv->start[m->owner[s] + 1u]++;
    for (uint32_t id = 0; id < mv->id_limit; id++)
        mv->start[id + 1] += mv->start[id];
    /* cnt is zero here; use it as the fill cursor, then zero it again. */
    for (uint32_t s = 0; s < m->slots; s++) {
        const uint16_t id = m->owner[s];
        mv->order[mv->start[id] + mv->cnt[id]++] = s;
    }
    memset(mv->cnt, 0, (size_t)mv->id_limit * sizeof *mv->cnt);
}

/* The counterparty with the greatest global need that is not spent. */
static uint32_t pick_global(const move *mv)
{
    const dch_map *m = mv->m;
    uint32_t best = UINT32_MAX;
    int64_t best_need = 0;
    for (uint32_t id = 0; id < m->id_limit; id++) {
        const member *mb = &m->members[id];
        if (id == mv->x || mb->weight == 0 || mv->spent[id] ||
            (mv->grow && mb->slots == 0))
            continue;
        const int64_t n = need(mv, mb);
        if (best == UINT32_MAX || n > best_need) {
            best = id;
            best_need = n;
        }
    }
    return best;
}

/* Heap order of pick_global: greater need first, then the lower id. */
static int heap_before(const move *mv, uint32_t a, uint32_t b)
{
    const int64_t na = need(mv, &mv->m->members[a]), nb = need(mv, &mv->m->members[b]);
    return na != nb ? na > nb : a < b;
}

static void heap_down(const move *mv, uint32_t *h, uint32_t n, uint32_t i)
{
    for (;;) {
        const uint32_t l = 2 * i + 1, r = l + 1;
        uint32_t best = i;
        if (l < n && heap_before(mv, h[l], h[best]))
            best = l;
        if (r < n && heap_before(mv, h[r], h[best]))
            best = r;
        if (best == i)
            return;
        const uint32_t t = h[i];
        h[i] = h[best];
        h[best] = t;
        i = best;
    }
}

/* The counterparties pick_global would consider, as a heap in its order. */
static uint32_t heap_build(const move *mv, uint32_t *h)
{
    const dch_map *m = mv->m;
    uint32_t n = 0;
    for (uint32_t id = 0; id < m->id_limit; id++) {
        const member *mb = &m->members[id];
        if (id == mv->x || mb->weight == 0 || mv->spent[id] ||
            (mv->grow && mb->slots == 0))
            continue;
        h[n++] = id;
    }
    for (uint32_t i = n / 2; i-- > 0;)
        heap_down(mv, h, n, i);
    return n;
}

/*
 * Try to make one move with counterparty id, scanning the candidate slots
 * (the donor's for a grow, x's for a shrink) from the first at or after
 * slot `from`, wrapping. A slot qualifies when its unit has room left and
 * the counterparty's band tier there is at most max_tier.
 */
static int place_one(move *mv, uint32_t id, uint32_t from, int max_tier)
{
    dch_map *m = mv->m;
    const uint32_t owner = mv->grow ? id : mv->x;
    const uint32_t *list = mv->order + (mv->grow ? mv->start[id] : 0);
    const uint32_t n = mv->grow ? mv->start[id + 1] - mv->start[id] : mv->start[1];
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        const uint32_t mid = lo + (hi - lo) / 2;
        if (list[mid] < from)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == n)
        lo = 0; /* every slot is before `from`: wrap */
    for (uint32_t k = 0, at = lo; k < n; k++, at = at + 1 == n ? 0 : at + 1) {
        const uint32_t s = list[at];
        const uint32_t u = s / m->spu;
        if (m->owner[s] != owner || mv->room[u] == 0)
            continue;
        const uint32_t c = held_in_unit(m, u, id);
        if (tier(mv, c, id) > max_tier)
            continue;
        move_slot(mv, s, id);
        mv->room[u]--;
        return 1;
    }
    return 0;
}

/*
 * Pass 3: the moves beyond the forced ones, driven by global need. Each goes
 * to the counterparty furthest from its global share that can make it inside
 * its soft band (then its hard band), in a unit where x's band has room,
 * starting from a point that spreads the moves evenly round the ring. Moves
 * not placed inside soft bands continue, in order, inside hard bands.
 */
static void apply_extra(move *mv, uint64_t extra)
{
    dch_map *m = mv->m;
    if (extra == 0)
        return;
    index_slots(mv);
    uint64_t e = 0;
    for (int max_tier = 1; max_tier <= mv->max_tier && e < extra; max_tier++) {
        memset(mv->spent, 0, mv->id_limit);
        /* pick_global's choice, kept in a heap: a move changes only the
         * need of the member that made it, which then sinks (or leaves, when
         * it has nothing left to give); a spent member leaves. */
        uint32_t *heap = mv->queue, nheap = heap_build(mv, heap);
        while (e < extra && nheap > 0) {
            const uint32_t id = heap[0];
            const uint64_t unit = ((2 * e + 1) * m->units) / (2 * extra);
            if (place_one(mv, id, (uint32_t)unit * m->spu, max_tier)) {
                e++;
                if (mv->grow && m->members[id].slots == 0)
                    heap[0] = heap[--nheap];
            } else {
                mv->spent[id] = 1;
                heap[0] = heap[--nheap];
            }
            heap_down(mv, heap, nheap, 0);
        }
    }
}

/*
 * Whether moved entry i's counterparty can hand it over, staying within its
 * soft band widened by `slack`: for a grow it gets its slot back, for a
 * shrink it gives x's slot back.
 */
static int can_hand_over(const move *mv, uint32_t i, uint32_t slack)
{
    const dch_map *m = mv->m;
    const uint32_t s = mv->moved[i], from = mv->moved_with[i];
    if (m->owner[s] != (mv->grow ? mv->x : from))
        return 0;
    const uint32_t cf = held_in_unit(m, s / m->spu, from);
    return mv->grow ? cf < mv->band_hi[from] + slack : cf + slack > mv->band_lo[from];
}

/*
 * Whether `to` can take over moved entry i, staying within its soft band
 * widened by `slack`: for a grow it gives x a slot of that unit instead, for
 * a shrink it receives x's slot. Its count in the unit is cached per stamp.
 */
static int can_take(move *mv, uint32_t i, uint32_t to, uint32_t slack)
{
    const dch_map *m = mv->m;
    const uint32_t u = mv->moved[i] / m->spu;
    if (mv->unit_stamp[u] != mv->stamp) {
        mv->unit_stamp[u] = mv->stamp;
        mv->unit_held[u] = held_in_unit(m, u, to);
    }
    const uint32_t ct = mv->unit_held[u];
    if (mv->grow)
        return ct > 0 && ct + slack > mv->band_lo[to];
    return ct < mv->band_hi[to] + slack;
}

/* Hand moved entry i from its counterparty to `to` (see can_take). */
static void take_over(move *mv, uint32_t i, uint32_t to)
{
    dch_map *m = mv->m;
    const uint32_t s = mv->moved[i], from = mv->moved_with[i];
    mv->unit_version[s / m->spu]++;
    if (mv->grow) {
        /* `from` gets its slot back; `to` gives its first slot in the unit. */
        const uint32_t u = s / m->spu;
        uint16_t *o = m->owner + (size_t)u * m->spu;
        uint32_t t = 0;
        while (o[t] != to)
            t++;
        m->owner[s] = (uint16_t)from;
        o[t] = (uint16_t)mv->x;
        m->members[from].slots++;
        m->members[to].slots--;
        mv->moved[i] = u * m->spu + t;
    } else {
        m->owner[s] = (uint16_t)to;
        m->members[from].slots--;
        m->members[to].slots++;
    }
    mv->moved_with[i] = (uint16_t)to;
}

/*
 * Pass 4: shift moves between counterparties until no shift brings the one
 * most in need (a) closer to its global share at the expense of one with
 * at least a slot less need (b). A shift is a chain a <- c1 <- ... <- b
 * found by breadth-first search: each member takes over one moved entry of
 * the next in a unit where both stay within their soft bands (slack 0) or
 * hard bands (slack 1), so a gains a move, b loses one and the members
 * between keep their totals. x's per-unit counts never change, every moved
 * slot still moves to or from x, and each shift lowers the sum of squared
 * deviations, so the pass ends.
 */
static void repair(move *mv, uint32_t slack)
{
    dch_map *m = mv->m;
    uint32_t *via = mv->cnt; /* entry each member was reached through; cnt
                              * is free between units and zeroed after */
    for (uint32_t i = 0; i < mv->nmoved; i++)
        mv->entry_seen[i] = mv->unit_version[mv->moved[i] / m->spu] - 1;
    unsigned failures = 0;
    const int64_t gap = (int64_t)mv->W * (mv->max_tier == 1 ? 1 : 2);
    memset(mv->spent, 0, mv->id_limit);
    for (;;) {
        const uint32_t a = pick_global(mv);
        /* Each search costs O(members * moves * S); after a few members in
         * need that no chain can help, the rest are given up on. */
        if (a == UINT32_MAX || failures >= 4)
            break;
        const int64_t need_a = need(mv, &m->members[a]);
        /* Nothing to gain unless some counterparty has a slot less need
         * (two slots with unequal weights, whose bound is looser: searches
         * that cannot succeed are what repairs cost). */
        int64_t least = need_a;
        for (uint32_t i = 0; i < mv->nmoved; i++) {
            const int64_t nb = need(mv, &m->members[mv->moved_with[i]]);
            least = nb < least ? nb : least;
        }
        if (need_a - least <= gap)
            break;
        for (uint32_t id = 0; id < mv->id_limit; id++)
            via[id] = UINT32_MAX;
        for (uint32_t i = 0; i < mv->nmoved; i++) {
            const uint32_t u = mv->moved[i] / m->spu;
            if (mv->entry_seen[i] != mv->unit_version[u]) {
                mv->entry_seen[i] = mv->unit_version[u];
                mv->entry_ok[i] = (uint8_t)can_hand_over(mv, i, slack);
            }
        }
        uint32_t head = 0, tail = 0, found = UINT32_MAX;
        mv->queue[tail++] = a;
        via[a] = mv->nmoved; /* visited, reached through no entry */
        /* The search expands at most 32 members: enough for the chains
         * balance needs, and it bounds the cost at 32 * (moves + P). */
        while (head < tail && head < 32 && found == UINT32_MAX) {
            const uint32_t c = mv->queue[head++];
            mv->stamp++;
            for (uint32_t i = 0; i < mv->nmoved; i++) {
                const uint32_t b = mv->moved_with[i];
                if (via[b] != UINT32_MAX || b == c || !mv->entry_ok[i] ||
                    !can_take(mv, i, c, slack))
                    continue;
                via[b] = i;
                mv->parent[b] = c;
                mv->queue[tail++] = b;
                if (need_a - need(mv, &m->members[b]) > gap) {
                    found = b;
                    break;
                }
            }
        }
        if (found == UINT32_MAX) {
            mv->spent[a] = 1;
            failures++;
            continue;
        }
        /* Shift from the far end. Each step is checked again, as steps
         * before it may have touched the same unit; a chain that no longer
         * holds stops there, every step taken still a valid move. */
        uint32_t b = found;
        for (;;) {
            if (b == a || !can_hand_over(mv, via[b], slack))
                break;
            mv->stamp++;
            if (!can_take(mv, via[b], mv->parent[b], slack))
                break;
            take_over(mv, via[b], mv->parent[b]);
            b = mv->parent[b];
        }
        if (b != a) {
            mv->spent[a] = 1;
            failures++;
        } else {
            memset(mv->spent, 0, mv->id_limit);
        }
    }
    memset(mv->cnt, 0, (size_t)mv->id_limit * sizeof *mv->cnt);
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

/* Whether every positive weight is equal once x weighs w. */
static int equal_weights(const dch_map *m, uint32_t x, uint32_t w)
{
    uint32_t seen = w;
    for (uint32_t id = 0; id < m->id_limit; id++) {
        const uint32_t v = id == x ? w : m->members[id].weight;
        if (m->members[id].name == NULL || v == 0)
            continue;
        if (seen == 0)
            seen = v;
        else if (v != seen)
            return 0;
    }
    return 1;
}

/*
 * Change x's weight to w (x already a member), moving slots monotonically.
 * Cannot fail: mv was allocated by the caller when needs_move() said so.
 * The caller checked that the weight sum stays within UINT32_MAX.
 */
static void reweigh(dch_map *m, uint32_t x, uint32_t w, move *mv)
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
    } else {
        mv->grow = w > xm->weight;
        mv->max_tier = equal_weights(m, x, w) ? 1 : 2;
        mv->x = x;
        mv->W = (uint64_t)others + w;
        xm->weight = w; /* the bands use the new weights */
        compute_bands(mv);
        const uint64_t extra = plan_units(mv);
        apply_forced(mv);
        apply_extra(mv, extra);
        repair(mv, 0);
        if (mv->max_tier > 1)
            repair(mv, 1);
    }
    xm->weight = w;
    m->total_weight = others + w;
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
    move mv;
    const int moving = weight > 0 && m->total_weight > 0;
    if (copy == NULL || (moving && move_alloc(&mv, m, limit) != DCH_OK)) {
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
        move_release(&mv);
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
    move mv;
    const int moving = needs_move(m, id, 0);
    if (moving && move_alloc(&mv, m, m->id_limit) != DCH_OK)
        return DCH_ENOMEM;
    reweigh(m, id, 0, moving ? &mv : NULL);
    if (moving)
        move_release(&mv);

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
    move mv;
    const int moving = needs_move(m, id, weight);
    if (moving && move_alloc(&mv, m, m->id_limit) != DCH_OK)
        return DCH_ENOMEM;
    reweigh(m, id, weight, moving ? &mv : NULL);
    if (moving)
        move_release(&mv);
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
    m->epoch = epoch;
    if (tr != NULL) {
        m->tr = *tr;
        m->tr_epoch = epoch;
    }
    *out = m;
    return DCH_OK;
}
