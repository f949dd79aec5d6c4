/* SPDX-License-Identifier: MIT */
/*
 * Replica bookkeeping, the bottom layer of the replica engine
 * (docs/replicas.md, "Layers"): one call in progress, the slot blocks and
 * who holds what, the zones a slot must keep, the visiting order, the
 * heaps of members by deviation, and the record of the copies a call
 * moved. Everything in src/replicas/ uses this; it uses nothing above it.
 */
#ifndef DCH_SRC_REP_BOOK_H
#define DCH_SRC_REP_BOOK_H

#include "map_internal.h"
#include "map_replicas.h"

#include <stdint.h>

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

/* The copies of slot s (stride entries, the first n in use). */
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
 * (k == n: id is added): min(n', zones) distinct zones, n' the copies it
 * then has. The caller ensures id is not in b.
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

/* The count of slots member a shares with member c in the rows; NULL when
 * neither has a row (then neither shares a slot with x, so the question
 * does not arise) or the other has no column (it has weight 0 and holds
 * nothing). The rows are keyed by a dense index, rowof[] and col[]
 * (rep_rows.c). */
static inline uint32_t *rep_pair_cell(const dch__rep_call *e, uint32_t a, uint32_t c)
{
    const dch__rep_move *rm = e->rm;
    if (rm->rowof[a] != UINT32_MAX && rm->col[c] != UINT32_MAX)
        return rm->rows + (size_t)rm->rowof[a] * rm->ncols + rm->col[c];
    if (rm->rowof[c] != UINT32_MAX && rm->col[a] != UINT32_MAX)
        return rm->rows + (size_t)rm->rowof[c] * rm->ncols + rm->col[a];
    return NULL;
}

/* Slot k of the call's visiting order (a permutation of the P slots). */
uint32_t dch__rep_visit(const dch__rep_call *e, uint32_t k);

/* Move one copy at position k of slot s from its holder to `to`. */
void dch__rep_trade(const dch__rep_call *e, uint32_t s, uint32_t k, uint32_t to);

/* Note that this call moved the copy at position k of slot s, which
 * `from` held: the reroutes and the pair passes may still move it. */
void dch__rep_record(const dch__rep_call *e, uint32_t s, uint32_t k, uint32_t from);

/* The fewest copies member id may keep (its primary share rounded up, less
 * one). */
uint32_t dch__rep_keep(const dch__rep_call *e, uint32_t id);

/* Heaps of ids by deviation (rm->heap): the members of positive weight
 * other than x that are not stuck, max or min first; the heap's size. */
uint32_t dch__rep_build_heap(const dch__rep_call *e, int max);
void dch__rep_sift_down(const dch__rep_call *e, int max, uint32_t n, uint32_t i);

#endif /* DCH_SRC_REP_BOOK_H */
