/* SPDX-License-Identifier: MIT */
/*
 * Augmenting reroutes (docs/replicas.md, "Augmenting reroutes").
 */
#ifndef DCH_SRC_REP_REROUTE_H
#define DCH_SRC_REP_REROUTE_H

#include "rep_book.h"

/* One augmenting path for member d's quota, on a raise (grow) or a
 * lowering; 1 when applied. Changes only d's and x's counts, by one. */
int dch__rep_augment(const dch__rep_call *e, int grow, uint32_t d);

#endif /* DCH_SRC_REP_REROUTE_H */
