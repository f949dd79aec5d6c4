/* SPDX-License-Identifier: MIT */
/*
 * Copy shares (docs/replicas.md, "Shares"): every member's part of the
 * n*P copies, zones water-filled between their bounds.
 */
#ifndef DCH_SRC_REP_SHARES_H
#define DCH_SRC_REP_SHARES_H

#include "rep_book.h"

/* Zone keys (rm->zone), the zone count (e->zones) and every member's copy
 * share (rm->share, scaled by 2^32). Uses pdev[], queue[], from[] and
 * mark[] as scratch. */
void dch__rep_plan_shares(dch__rep_call *e);

#endif /* DCH_SRC_REP_SHARES_H */
