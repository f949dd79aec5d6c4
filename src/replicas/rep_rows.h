/* SPDX-License-Identifier: MIT */
/*
 * Diversity bookkeeping (docs/replicas.md, "Diversity bookkeeping"): the rows of slots
 * shared (rm->rows, rm->rowof; read through rep_pair_cell), the unbiased
 * mean and promise 7's bound.
 */
#ifndef DCH_SRC_REP_ROWS_H
#define DCH_SRC_REP_ROWS_H

#include "rep_book.h"

/* The rows of slots shared: for every id (all) or for every member that
 * shares a slot with x (the only ones a receiver of x's copies can be
 * paired with), if the scratch has room; 0 when it has not. */
int dch__rep_build_rows(const dch__rep_call *e, int all);
/* Count the rows of the ids that have one afresh from the slots. */
void dch__rep_recount_rows(const dch__rep_call *e);
/* Count the pairs of the member at position k of block b with its
 * co-holders up or down by one. */
void dch__rep_count_pairs(const dch__rep_call *e, const uint16_t *b, uint32_t k, int up);
/* Hand position k of slot s to member `to`: record the move of its
 * occupant, and when `rows` count the occupant's pairs down and to's up,
 * so that the rows stay exact. */
void dch__rep_swap(const dch__rep_call *e, uint32_t s, uint32_t k, uint32_t to, int rows);
/* How many slots two members holding ca and cb copies share on average
 * when copies are spread without bias, rounded up. */
uint64_t dch__rep_pair_mean(const dch__rep_call *e, uint64_t ca, uint64_t cb);
/* Whether v > dch__rep_pair_mean(e, ca, cb), without dividing. */
int dch__rep_above_mean(const dch__rep_call *e, uint64_t ca, uint64_t cb, uint64_t v);
/* Whether promise 7 is made for this call: R >= 2, equal positive weights,
 * every member a zone of its own, R*P >= 16*M (map.h). */
int dch__rep_diversity_promised(const dch__rep_call *e);
/* Promise 7's bound for a member holding c copies, rounded down. */
uint64_t dch__rep_share_limit(const dch__rep_call *e, uint64_t c);
/* The most slots two members holding ca and cb copies may share. */
uint64_t dch__rep_pair_limit(const dch__rep_call *e, uint64_t ca, uint64_t cb);
/* Whether member a, not in block b, can take position k (replacing b[k])
 * with every pair it gains known and within both bounds: `bound` for a,
 * dch__rep_share_limit() for the others. */
int dch__rep_joins_within(const dch__rep_call *e, const uint16_t *b, uint32_t k, uint32_t a,
                          uint64_t bound);

#endif /* DCH_SRC_REP_ROWS_H */
