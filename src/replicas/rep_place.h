/* SPDX-License-Identifier: MIT */
/*
 * What a raise and a lowering share when they place their plan slot by
 * slot (docs/replicas.md, "Placement" and "The slack schedule"): the
 * passes under looser and looser diversity caps, the pacing of the first
 * pass, and the urgency that picks a counterparty.
 */
#ifndef DCH_SRC_REP_PLACE_H
#define DCH_SRC_REP_PLACE_H

#include "rep_book.h"

/* Diversity passes: the caps of pass p are loosened by dch__rep_slack(p);
 * the last pass has no cap. */
#define DCH__REP_PASSES 6u

/* A placement in progress. */
typedef struct dch__rep_pace {
    uint64_t total; /* copies the plan moves */
    uint64_t left; /* of which not placed yet */
    int rows; /* the diversity rows exist */
} dch__rep_pace;

uint32_t dch__rep_slack(uint32_t pass);

/* One step of a pass's sweep of the visiting order: the k-th slot s, its
 * block b, x's position there (-1 when x holds no copy of it), and whether
 * pass 0 is ahead of its pace there (dch__rep_ahead). A sweep starts from
 * a zeroed step and ends when the order or the copies left run out. */
typedef struct dch__rep_step {
    uint32_t next; /* the step to come */
    uint32_t k, s;
    uint16_t *b;
    int at;
    int ahead;
} dch__rep_step;

/* Advance st to the next step of pass `pass`; 0 when the sweep is over. */
int dch__rep_step_next(const dch__rep_call *e, uint32_t pass, const dch__rep_pace *p,
                       dch__rep_step *st);

/* Whether the first pass is ahead of its pace at step k of the visiting
 * order: it spreads the call's trades over the whole order. */
int dch__rep_ahead(const dch__rep_pace *p, uint32_t k, uint32_t slots);

/* What member r may still trade: its quota, or 1 from its pool (pools
 * exist only during a lowering; from[] is UINT32_MAX otherwise). */
uint32_t dch__rep_wants(const dch__rep_move *rm, uint32_t r);

/* Which of a and b, both with quota left, is more urgent: the larger share
 * of its quota in the slots it can still use (avail[]), then the lower
 * id. */
int dch__rep_urgent(const dch__rep_move *rm, uint32_t a, uint32_t b);

#endif /* DCH_SRC_REP_PLACE_H */
