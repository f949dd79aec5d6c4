/* SPDX-License-Identifier: MIT */
/*
 * Forced shapes (docs/replicas.md, "Forced shapes"): a join while M < R, a
 * leave while M <= R, and a join as the only member of a new zone while
 * zones are at most n.
 */
#ifndef DCH_SRC_REP_SHAPES_H
#define DCH_SRC_REP_SHAPES_H

#include "rep_book.h"

/* M was below R: x joins every slot as its n-th copy. */
void dch__rep_append_everywhere(const dch__rep_call *e);
/* M was at most R: x leaves every slot, the copies after it move up. */
void dch__rep_drop_everywhere(const dch__rep_call *e);
/* x is the only member of a new zone and zones are at most n: x replaces,
 * in each slot, a copy of a zone the slot holds twice. */
void dch__rep_force_everywhere(const dch__rep_call *e);

#endif /* DCH_SRC_REP_SHAPES_H */
