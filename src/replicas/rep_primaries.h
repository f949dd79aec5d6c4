/* SPDX-License-Identifier: MIT */
/*
 * Primaries (docs/replicas.md, "Primaries"): hand-over of a leaving
 * member's primaries, promotions and promotion chains, the order of the
 * secondaries.
 */
#ifndef DCH_SRC_REP_PRIMARIES_H
#define DCH_SRC_REP_PRIMARIES_H

#include "rep_book.h"

/* Where a lowering moved x's primary copy, the slot's primary becomes the
 * copy of least dch__rep_order_key. */
void dch__rep_hand_over_primaries(const dch__rep_call *e);
/* Balance every member's primaries against its share P*w/W. */
void dch__rep_balance_primaries(const dch__rep_call *e);
/* Sort positions 1 .. n-1 of every slot by dch__rep_order_key. */
void dch__rep_order_secondaries(const dch__rep_call *e);
/** A fixed pseudo-random key of member id in slot s. */
uint32_t dch__rep_order_key(uint32_t s, uint32_t id);

#endif /* DCH_SRC_REP_PRIMARIES_H */
