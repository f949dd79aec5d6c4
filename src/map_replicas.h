/* SPDX-License-Identifier: MIT */
/*
 * The replica engine of the DCH map: R copies of every slot, in distinct
 * zones, for maps made with dch_map_config.replicas >= 2. Internal to
 * libdch; NOTES.md ("Replicas") states the rule and the proofs of the
 * promises map.h makes.
 */
#ifndef DCH_SRC_MAP_REPLICAS_H
#define DCH_SRC_MAP_REPLICAS_H

#include "dch/common.h"

#include "map_engine.h"

#include <stdint.h>

/** What the replica engine reads and changes of a map. */
typedef struct dch__rep_view {
    uint16_t *owner; /* P primaries: owner[s] == copies[s * stride] */
    uint16_t *copies; /* P blocks of stride entries, DCH__MAP_UNOWNED past n */
    uint32_t slots, replicas, stride; /* P, R, R rounded up to a power of two */
    uint32_t id_limit;
    dch__member *members; /* weight, slots (primaries) */
    uint32_t *held; /* per id: copies held over all positions */
    uint32_t *zone; /* per id: 0 (a zone of its own) or 1 + its zone's index */
} dch__rep_view;

/**
 * Scratch for one weight change, allocated before the map changes so that
 * applying cannot fail: 72 bytes per member id, 8 per copy that can move,
 * and 4 per id for each diversity row (dch__rep_rows).
 */
typedef struct dch__rep_move {
    const dch_allocator *alloc;
    int64_t *dev; /* per id: copies*2^32 - copy share*2^32 */
    int64_t *pdev; /* per id: primaries*W - P*w */
    int64_t *share; /* per id: copy share * 2^32 */
    uint32_t *quota; /* per id: copies it gives (raise) or receives (lowering) */
    uint32_t *heap, *pos; /* per id: a binary heap of ids; the search's parents */
    uint32_t *pair; /* per id: slots it shares with the changing member */
    uint32_t *zone; /* per id: its zone key (equal keys, same zone) */
    uint32_t *stuck; /* per id: found no slot it may trade in this call */
    uint32_t *from, *mark; /* per id: the search's parent slot, visited stamp */
    uint32_t *queue; /* per id: receivers with quota; zone runs */
    uint32_t *avail; /* per id: slots it may still trade in during a pass */
    uint32_t *cap; /* per id: its copies once the planned moves are made */
    uint32_t *rowof; /* per id: its row in rows, or UINT32_MAX */
    uint32_t *rows, nrows; /* nrows rows of id_limit shared-slot counts */
    uint32_t *rec_at, *rec_from; /* per move so far: slot << 3 | position, and
                                    who held the copy before */
    uint32_t nrec, maxrec;
    /* Pools of a lowering: members tied in deviation at the boundary of the
     * plan, any of whom may receive in place of another (from[] holds a
     * member's pool). */
    int64_t pool_pre[8];
    uint32_t pool_budget[8], npools;
    /* Promise 6 on a removal: the most copies one receiver may get (0: no
     * cap); pair[] then holds each member's count before the call. */
    uint32_t most;
    uint32_t stamp;
} dch__rep_move;

/** Most entries the diversity rows of a lowering may take (16 MiB). */
#define DCH__REP_ROWS_MAX (UINT32_C(1) << 22)

/** DCH_OK or DCH_ENOMEM (nothing allocated); rows as dch__rep_rows, moves
 *  the copies that can move (x's on a lowering, the slots without x on a
 *  raise). */
int dch__rep_alloc(dch__rep_move *rm, const dch_allocator *a, uint32_t id_limit,
                   uint32_t rows, uint32_t moves);

/** The diversity rows a change needs: on a raise (grow) one per id; on a
 *  lowering of a member holding `copies`, one per member that can share a
 *  slot with it. 0 when that passes DCH__REP_ROWS_MAX entries. */
uint32_t dch__rep_rows(uint32_t id_limit, uint32_t replicas, uint32_t copies, int grow);

void dch__rep_release(dch__rep_move *rm);

/**
 * Change member x's weight to w (w != its weight), moving copies only to x
 * (raise) or only from x (lowering), then choose the primaries; updates the
 * member's weight and every member's slots and copies. Cannot fail.
 */
void dch__rep_apply(dch__rep_move *rm, const dch__rep_view *v, uint32_t x, uint32_t w);


/* ---- Shared by the replica engine's files ------------------------------ */

#include "map_internal.h"

#define DCH__REP_NONE DCH__MAP_UNOWNED
/* One copy, in the units of dev[] and share[]. */
#define DCH__REP_ONE ((int64_t)1 << 32)

/* One call in progress. */
typedef struct dch__rep_call {
    const dch__rep_view *v;
    dch__rep_move *rm;
    uint32_t x;
    uint32_t n; /* copies a slot holds after the call */
    uint32_t zones; /* distinct zones among members of positive weight, after */
    uint32_t M; /* members of positive weight, after */
    int64_t W; /* weight sum, after */
    unsigned bits; /* log2(P) */
    uint32_t key; /* keys the visiting order */
} dch__rep_call;

static inline uint16_t *rep_block(const dch__rep_call *e, uint32_t s)
{
    return e->v->copies + (size_t)s * e->v->stride;
}

static inline int rep_positive(const dch__rep_call *e, uint32_t id)
{
    return id < e->v->id_limit && e->v->members[id].name != NULL &&
           e->v->members[id].weight > 0;
}

/* Where id sits in the n copies of b; -1 when it does not. */
static inline int rep_place_of(const uint16_t *b, uint32_t n, uint32_t id)
{
    for (uint32_t k = 0; k < n; k++)
        if (b[k] == id)
            return (int)k;
    return -1;
}


/*
 * Whether the slot b holds the zones it must once position k holds id
 * (k == n: id is added); map_replicas.c.
 */
int dch__rep_zones_check(const dch__rep_call *e, const uint16_t *b, uint32_t n, uint32_t k,
                         uint32_t id);

static inline int rep_zones_ok(const dch__rep_call *e, const uint16_t *b, uint32_t n,
                               uint32_t k, uint32_t id)
{
    /* Every member a zone of its own: distinct members are enough. */
    return e->zones == e->M || dch__rep_zones_check(e, b, n, k, id);
}

/* Whether a comes first: the larger dev (max heap) or the smaller (min
 * heap), ties to the lower id. */
static inline int rep_first(const dch__rep_call *e, int max, uint32_t a, uint32_t b)
{
    const int64_t da = e->rm->dev[a], db = e->rm->dev[b];
    if (da != db)
        return max ? da > db : da < db;
    return a < b;
}

/*
 * Slot k of the call's visiting order: a permutation of the P slots mixed
 * by odd multiplications and xor-shifts on log2(P) bits (each step is a
 * bijection), keyed by the call. Consecutive calls must not visit in
 * rotations of one sequence: a member takes its copies in the first part
 * of the order, and shared orders would make the members' slot sets
 * correlated, which is what diversity forbids.
 */
static inline uint32_t rep_visit(const dch__rep_call *e, uint32_t k)
{
    const uint32_t mask = e->v->slots - 1;
    const unsigned r = (e->bits + 1) / 2;
    uint32_t h = k;
    h = (h * UINT32_C(0x9E3779B1) + e->key) & mask;
    h ^= h >> r;
    h = (h * UINT32_C(0x85EBCA6B) + (e->key >> 16)) & mask;
    h ^= h >> r;
    h = (h * UINT32_C(0xC2B2AE35)) & mask;
    return h;
}

/* Move one copy at position k of slot s from `from` to `to`. */
static inline void rep_trade(const dch__rep_call *e, uint32_t s, uint32_t k, uint32_t to)
{
    uint16_t *b = rep_block(e, s);
    const uint32_t from = b[k];
    b[k] = (uint16_t)to;
    e->v->held[from]--;
    e->v->held[to]++;
}

/* Note that this call moved the copy at position k of slot s, which
 * `from` held: dch__rep_augment may still reroute it. */
static inline void rep_record(const dch__rep_call *e, uint32_t s, uint32_t k, uint32_t from)
{
    dch__rep_move *rm = e->rm;
    if (rm->nrec < rm->maxrec) {
        rm->rec_at[rm->nrec] = s << 3 | k;
        rm->rec_from[rm->nrec] = from;
        rm->nrec++;
    }
}


/*
 * The fewest copies member id may keep, and what its primaries need to
 * come within 2 of its share: its primary share P*w/W rounded up, less
 * one, so that it can still be the primary of all but at most one slot of
 * its share. Copy shares are never below that where zones leave
 * room; when fewer zones than copies make a zone's members share a floor of
 * P copies, the rule alone could drain one of them. Over a zone these sum
 * to at most the zone's primary share, which one copy a slot can hold.
 */
static inline uint32_t rep_keep(const dch__rep_call *e, uint32_t id)
{
    const uint64_t w = e->v->members[id].weight, P = e->v->slots;
    if (w == 0)
        return 0;
    return (uint32_t)((P * w + (uint64_t)e->W - 1) / (uint64_t)e->W - 1);
}

/* The count of slots member a shares with member c in the rows; NULL when
 * neither has a row (then neither shares a slot with x, so the question
 * does not arise). */
static inline uint32_t *rep_pair_cell(const dch__rep_call *e, uint32_t a, uint32_t c)
{
    const dch__rep_move *rm = e->rm;
    if (rm->rowof[a] != UINT32_MAX)
        return rm->rows + (size_t)rm->rowof[a] * e->v->id_limit + c;
    if (rm->rowof[c] != UINT32_MAX)
        return rm->rows + (size_t)rm->rowof[c] * e->v->id_limit + a;
    return NULL;
}

/* Diversity (map_replicas_pairs.c). The rows of slots shared: for every
 * id (all) or for every member that shares a slot with x (the only ones a
 * receiver of x's copies can be paired with), if the scratch has room; 0
 * when it has not. */
int dch__rep_build_rows(const dch__rep_call *e, int all);
/* Count the pairs of the member at position k of block b with its
 * co-holders up or down by one. */
void dch__rep_count_pairs(const dch__rep_call *e, const uint16_t *b, uint32_t k, int up);
/* The repairs after a lowering's and a raise's placement. */
void dch__rep_split_pairs(const dch__rep_call *e);
void dch__rep_relieve_pairs(const dch__rep_call *e);

/* Step 1, placing the copies (map_replicas_copies.c): x takes copies on a
 * raise, gives them on a lowering. */
void dch__rep_grow(const dch__rep_call *e);
void dch__rep_shrink(const dch__rep_call *e);

/* One augmenting path for member d's quota (map_replicas_reroute.c); 1
 * when applied. */
int dch__rep_augment(const dch__rep_call *e, int grow, uint32_t d);

/* Step 2 (map_replicas_primaries.c). */
void dch__rep_balance_primaries(const dch__rep_call *e);
void dch__rep_order_secondaries(const dch__rep_call *e);
/** A fixed pseudo-random key of member id in slot s. */
uint32_t dch__rep_order_key(uint32_t s, uint32_t id);

#endif /* DCH_SRC_MAP_REPLICAS_H */
