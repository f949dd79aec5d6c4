/* SPDX-License-Identifier: MIT */
/*
 * The record of a move's slots (rec_slot) and each member's
 * moves as a list in record order, kept as moves are recorded and as
 * chains hand records on (docs/placement.md, "Complexity").
 */
#include "engine.h"

/*
 * Each member's moves as a list in record order (rec_head, rec_next,
 * rec_tail), kept as moves are recorded and as chains hand records from one
 * member to another, so that the search reads a member's moves without
 * rebuilding every list (which cost O(moves) a search).
 */
/* Append records first .. last, already linked to each other, to id's
 * list. */
static void list_append(dch__move *mv, uint32_t id, uint32_t first, uint32_t last)
{
    mv->rec_next[last] = UINT32_MAX;
    if (mv->rec_head[id] == UINT32_MAX)
        mv->rec_head[id] = first;
    else
        mv->rec_next[mv->rec_tail[id]] = first;
    mv->rec_tail[id] = last;
}

/* Take record r out of id's list. */
void dch__list_unlink(dch__move *mv, uint32_t id, uint32_t r)
{
    uint32_t prev = UINT32_MAX, at = mv->rec_head[id];
    for (; at != r; at = mv->rec_next[at], mv->budget--)
        prev = at;
    if (prev == UINT32_MAX)
        mv->rec_head[id] = mv->rec_next[r];
    else
        mv->rec_next[prev] = mv->rec_next[r];
    if (mv->rec_tail[id] == r)
        mv->rec_tail[id] = prev;
}

/* Put record r into id's list at its place in record order. */
void dch__list_insert(dch__move *mv, uint32_t id, uint32_t r)
{
    uint32_t prev = UINT32_MAX, at = mv->rec_head[id];
    for (; at != UINT32_MAX && at < r; at = mv->rec_next[at], mv->budget--)
        prev = at;
    mv->rec_next[r] = at;
    if (prev == UINT32_MAX)
        mv->rec_head[id] = r;
    else
        mv->rec_next[prev] = r;
    if (at == UINT32_MAX)
        mv->rec_tail[id] = r;
}

/* Record a move of slot s with counterparty id. */
void dch__record(const dch__engine *g, uint32_t s, uint32_t id)
{
    dch__move *mv = g->mv;
    mv->rec_slot[mv->nrec] = s;
    list_append(mv, id, mv->nrec, mv->nrec);
    mv->nrec++;
}

/* Record n moves with counterparty id, their slots already in
 * rec_slot[nrec .. nrec + n): they join id's list as one stretch, each
 * record's next the one after it. */
void dch__record_run(const dch__engine *g, uint32_t id, uint32_t n)
{
    dch__move *mv = g->mv;
    if (n == 0)
        return;
    const uint32_t r0 = mv->nrec, last = r0 + n - 1;
    for (uint32_t r = r0; r < last; r++)
        mv->rec_next[r] = r + 1;
    list_append(mv, id, r0, last);
    mv->nrec += n;
}
