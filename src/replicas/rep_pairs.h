/* SPDX-License-Identifier: MIT */
/*
 * The diversity passes that run after a placement (docs/replicas.md,
 * "Pair splitting" and "Pair relieving"): they move only the copies the
 * call moved. Splitting's trades keep every count (its reassignment, only
 * under promise 7's condition, moves one from a receiver to another
 * member); relieving keeps x's, but a
 * move that has u give in d's place moves one copy from u to d (both
 * within their shares' limits: can_shift in rep_relieve.c).
 */
#ifndef DCH_SRC_REP_PAIRS_H
#define DCH_SRC_REP_PAIRS_H

#include "rep_book.h"

/* After a lowering: trade receivers' new copies between x's slots where a
 * receiver shares more slots with a co-holder than promise 7 allows. */
void dch__rep_split_pairs(const dch__rep_call *e);
/* After a raise: move x's takes to other slots while the excess falls. */
void dch__rep_relieve_pairs(const dch__rep_call *e);

#endif /* DCH_SRC_REP_PAIRS_H */
