/* SPDX-License-Identifier: MIT */
/*
 * One balancing call on working copies of the effective table
 * (docs/balance.md, "The call"). Internal to libdch.
 */
#ifndef DCH_SRC_BALANCE_RUN_H
#define DCH_SRC_BALANCE_RUN_H

#include "dch/balance.h"

#include "balance_math.h"
#include "map_object.h"

/* A member's part in the call. */
enum { BAL_NONE, BAL_GIVER, BAL_RECEIVER };

typedef struct dch__bal_member {
    uint64_t load; /* C_i, as the call goes */
    uint64_t heavy_load; /* the load of its heaviest slot */
    uint32_t heavy; /* its heaviest slot; P for none */
    uint32_t weight; /* 0: does not balance */
    uint32_t count; /* copies it holds */
    uint8_t role; /* BAL_*: a giver while above its bound, a receiver
                   * while below its target */
    uint8_t why; /* a giver that could not give: DCH_BALANCE_LEFT_* */
    uint32_t first, ncand; /* a giver's candidates: cand[first ..+ ncand) */
} dch__bal_member;

typedef struct dch__bal {
    const dch_map *m;
    const uint64_t *load; /* L(s) */
    dch__bal_terms t;
    uint32_t P, ncopies, stride, limit;
    uint32_t copies_p; /* ncopies * P, for count shares */
    uint32_t max_moves, slack;
    uint16_t *own; /* the working primaries */
    uint16_t *cp; /* the working copies (NULL with one copy a slot) */
    dch__bal_member *mb; /* limit entries */
    uint32_t *cand; /* every giver's candidate slots, each giver's run
                     * ascending by (load, slot) */
    uint8_t *gone; /* per candidate: given away */
    uint32_t *recv, nrecv; /* receivers, ascending ids */
    uint32_t *givers, ngivers; /* givers, ascending ids */
    uint32_t moves, promotions;
    uint64_t moved_load, promoted_load;
} dch__bal;

/**
 * Fill b from m's effective table and the loads: the terms, the members'
 * loads, heaviest slots, counts and roles, the givers' candidate slots
 * (every slot a giver is primary of but its heaviest, of positive load).
 * b->m, load, max_moves and slack are set by the caller. DCH_EFULL when
 * the loads sum past UINT64_MAX; DCH_ENOMEM. dch__bal_free frees b either
 * way.
 */
int dch__bal_setup(dch__bal *b);

/** Every member that balances: its heaviest slot on b's working table (the
 *  lowest slot of the largest load among those it is primary of; P and 0
 *  for none), read again after the moves for the report. */
void dch__bal_read_heaviest(dch__bal *b);

/** Make the moves (docs/balance.md, "The call"), on b's working table. */
void dch__bal_run(dch__bal *b);

void dch__bal_free(dch__bal *b);

#endif /* DCH_SRC_BALANCE_RUN_H */
