/* SPDX-License-Identifier: MIT */
/*
 * Diversity bookkeeping (rep_rows.h; docs/replicas.md, "Diversity bookkeeping"): the
 * rows counting the slots each pair of members shares, the mean a pair
 * shares without bias, and promise 7's bound on a pair.
 */
#include "rep_rows.h"

#include <string.h>

/* Count the rows of the ids that have one afresh from the slots (reroutes
 * and the last resort move copies without counting and clear rm->exact).
 * The repairs (splitting, relieving) call this first unless the rows are
 * exact: every other trade counts its pairs. Between the rounds of a placement the rows stay stale after
 * reroutes; harmless: the passes read them only for the crowding caps and
 * raise_hot, which steer which slot a trade uses, never whether a quota is
 * placed (the last pass has no cap), and no promise is read from them. */
void dch__rep_recount_rows(const dch__rep_call *e)
{
    const dch__rep_view *v = e->v;
    dch__rep_move *rm = e->rm;
    const uint32_t n = e->n, K = rm->ncols;
    memset(rm->rows, 0, (size_t)rm->nrows * K * sizeof *rm->rows);
    rm->exact = 1;
    for (uint32_t s = 0; s < v->slots; s++) {
        const uint16_t *b = rep_block(e, s);
        for (uint32_t i = 0; i < n; i++) {
            if (rm->rowof[b[i]] == UINT32_MAX)
                continue;
            uint32_t *row = rm->rows + (size_t)rm->rowof[b[i]] * K;
            for (uint32_t j = 0; j < n; j++)
                if (j != i)
                    row[rm->col[b[j]]]++;
        }
    }
}

/* The columns: the members of positive weight and x, in id order (every
 * holder of a copy is one: promise 1, and x during its call). */
static uint32_t number_columns(const dch__rep_call *e)
{
    dch__rep_move *rm = e->rm;
    uint32_t K = 0;
    for (uint32_t id = 0; id < e->v->id_limit; id++) {
        rm->rowof[id] = UINT32_MAX;
        rm->col[id] = id == e->x || rep_positive(e, id) ? K++ : UINT32_MAX;
    }
    return K;
}

int dch__rep_build_rows(const dch__rep_call *e, int all)
{
    const dch__rep_view *v = e->v;
    dch__rep_move *rm = e->rm;
    /* A raise's rows, kept exact by its placement, serve the relieving as
     * they are (the same members, so the same numbering). */
    if (all && rm->exact && rm->nrows > 0 && rm->nrows == rm->ncols)
        return 1;
    const uint32_t n = e->n, K = number_columns(e);
    /* As many rows as dch__rep_rows() made room for: K on a raise, the
     * co-holders of x on a lowering. */
    const uint32_t room = K ? rm->entries / K : 0;
    uint32_t rows = 0;
    rm->ncols = K;
    rm->nrows = 0;
    rm->exact = 0;
    if (rm->entries == 0)
        return 0;
    for (uint32_t id = 0; all && id < v->id_limit; id++) {
        if (rm->col[id] == UINT32_MAX)
            continue;
        if (rows == room)
            return 0;
        rm->rowof[id] = rows++;
    }
    for (uint32_t s = 0; !all && s < v->slots; s++) {
        const uint16_t *b = rep_block(e, s);
        if (rep_place_of(b, n, e->x) < 0)
            continue;
        for (uint32_t k = 0; k < n; k++)
            if (b[k] != e->x && rm->rowof[b[k]] == UINT32_MAX) {
                if (rows == room)
                    return 0;
                rm->rowof[b[k]] = rows++;
            }
    }
    rm->nrows = rows;
    dch__rep_recount_rows(e);
    return 1;
}

void dch__rep_count_pairs(const dch__rep_call *e, const uint16_t *b, uint32_t k, int up)
{
    dch__rep_move *rm = e->rm;
    const uint32_t K = rm->ncols;
    for (uint32_t i = 0; i < e->n; i++) {
        if (i == k)
            continue;
        if (rm->rowof[b[k]] != UINT32_MAX)
            rm->rows[(size_t)rm->rowof[b[k]] * K + rm->col[b[i]]] += up ? 1u : UINT32_MAX;
        if (rm->rowof[b[i]] != UINT32_MAX)
            rm->rows[(size_t)rm->rowof[b[i]] * K + rm->col[b[k]]] += up ? 1u : UINT32_MAX;
    }
}

void dch__rep_swap(const dch__rep_call *e, uint32_t s, uint32_t k, uint32_t to, int rows)
{
    const uint16_t *b = rep_block(e, s);
    dch__rep_record(e, s, k, b[k]);
    if (rows)
        dch__rep_count_pairs(e, b, k, 0);
    dch__rep_trade(e, s, k, to);
    if (rows)
        dch__rep_count_pairs(e, b, k, 1);
}

/*
 * How many slots two members holding ca and cb copies share on average
 * when copies are spread without bias: ca * (n - 1) * cb / (n*P - max),
 * rounded up (the smaller member's co-holders are the others' copies in
 * proportion). With equal counts c this is c * (n - 1) / (M - 1).
 */
uint64_t dch__rep_pair_mean(const dch__rep_call *e, uint64_t ca, uint64_t cb)
{
    const uint64_t T = (uint64_t)e->n * e->v->slots, mx = ca > cb ? ca : cb;
    if (e->n < 2 || T <= mx)
        return 0;
    return (ca * cb * (e->n - 1) + T - mx - 1) / (T - mx);
}

/* Whether v > dch__rep_pair_mean(e, ca, cb), by one product instead of a
 * 64-bit division: v > ceil(q / D) exactly when (v - 1) * D >= q. The
 * passes ask this of every pair in every slot they weigh, and most pairs
 * are at or below their mean. Products stay below 2^51 (counts <= 2^24). */
int dch__rep_above_mean(const dch__rep_call *e, uint64_t ca, uint64_t cb, uint64_t v)
{
    const uint64_t T = (uint64_t)e->n * e->v->slots, mx = ca > cb ? ca : cb;
    if (e->n < 2 || T <= mx)
        return v > 0;
    return v > 0 && (v - 1) * (T - mx) >= ca * cb * (e->n - 1);
}

int dch__rep_diversity_promised(const dch__rep_call *e)
{
    const dch__rep_view *v = e->v;
    if (e->n < 2 || e->zones != e->M || (uint64_t)v->replicas * v->slots < 16 * (uint64_t)e->M)
        return 0;
    for (uint32_t id = 0, weight = 0; id < v->id_limit; id++) {
        if (!rep_positive(e, id))
            continue;
        if (weight != 0 && v->members[id].weight != weight)
            return 0;
        weight = v->members[id].weight;
    }
    return 1;
}

/*
 * Promise 7's bound for a member holding c copies: the most slots it may
 * share with any one other member, 1.5 times its mean over the M - 1
 * others (c * (n - 1) / (M - 1)) plus 2, rounded down.
 */
uint64_t dch__rep_share_limit(const dch__rep_call *e, uint64_t c)
{
    const uint64_t others = e->M > 1 ? e->M - 1 : 1;
    return (3 * c * (e->n - 1) + 4 * others) / (2 * others);
}

/* The most slots two members holding ca and cb copies may share: within
 * the bound of each. */
uint64_t dch__rep_pair_limit(const dch__rep_call *e, uint64_t ca, uint64_t cb)
{
    const uint64_t la = dch__rep_share_limit(e, ca), lb = dch__rep_share_limit(e, cb);
    return la < lb ? la : lb;
}

/* Whether member a, not in block b, can take position k (replacing b[k])
 * with every pair it gains known and within both bounds: `bound` for a
 * (its dch__rep_share_limit() once the move is made), dch__rep_share_limit() for the others. */
int dch__rep_joins_within(const dch__rep_call *e, const uint16_t *b, uint32_t k, uint32_t a,
                        uint64_t bound)
{
    for (uint32_t i = 0; i < e->n; i++) {
        if (i == k)
            continue;
        const uint32_t *c = rep_pair_cell(e, a, b[i]);
        if (c == NULL || *c + 1 > bound || *c + 1 > dch__rep_share_limit(e, e->v->held[b[i]]))
            return 0;
    }
    return 1;
}
