/* SPDX-License-Identifier: MIT */
/*
 * The replica promises of dch/map.h ("Replicas"), checked from outside
 * through the public API only, in exact integers: shared by the property
 * tests (test_map_replicas.c) and the fuzz target (fuzz/fuzz_replicas.c),
 * so both hold the engine to the same statement.
 *
 * A check returns NULL when the promise holds, else a message naming what
 * broke (in a static buffer, valid until the next check).
 */
#ifndef DCH_TESTS_SUPPORT_REPLICAS_H
#define DCH_TESTS_SUPPORT_REPLICAS_H

#include "dch/dch.h"

#include <stdbool.h>
#include <stdint.h>

/* Every slot's copies: P rows of R ids, DCH_NODE_NONE past a slot's count. */
typedef struct rep_table {
    uint32_t slots, replicas;
    uint32_t *ids;
} rep_table;

/* Take m's copies into t (t's array is reused or grown). */
void rep_table_take(rep_table *t, const dch_map *m);
void rep_table_free(rep_table *t);

/* What a history has been, for the promises that hold only while it is so. */
typedef struct rep_history {
    uint32_t weight; /* the one positive weight ever set, 0 if none yet */
    bool unequal; /* two different positive weights have been set */
    bool zoned; /* a member with a zone has been added */
    bool capped; /* a call since M last was at most R left fewer than R zones
                    or a zone with more than W/(R+1) of the weight */
} rep_history;

/* Note a weight set (add or set_weight) and whether the member has a zone. */
void rep_history_note(rep_history *h, uint32_t weight, bool zoned);

/* Note the map a call left (for h->capped). */
void rep_history_after(rep_history *h, const dch_map *m);

/* Worst values seen, for reports. */
typedef struct rep_worst {
    double primary; /* max |slots - P*w/W| */
    double copies_cond; /* max |copies - R*P*w/W| where promise 4 applies */
    double copies_all; /* the same wherever Z >= R (caps and forced zones may pass it) */
    double recovery; /* max (most received - 1.25 * mean - 2) over removals checked */
    double diversity; /* max (most shared - 1.5 * mean - 2) over members checked */
} rep_worst;

/*
 * Promises 1-3 and 4 on the map as it is (t its table): every slot holds
 * min(R, M) distinct members of positive weight, primary first, in
 * min(copies, Z) distinct zones; dch_map_node_copies and dch_map_node_slots
 * agree with the table; every member's primaries within 2 of P*w/W
 * (with zones in the history, h, only where copies are promised, below);
 * and, when every call since the map last had at most R members of positive
 * weight has left at least R zones, none with more than W/(R+1) of the
 * weight (h->capped false; h NULL: judge the map alone), every member's
 * copies within 2R of R*P*w/W.
 */
const char *rep_check_state(const dch_map *m, const rep_table *t, const rep_history *h,
                            rep_worst *w);

/*
 * Promises 5 and 6 for one call that changed member x's weight from `from`
 * to `to` (t0 before, t1 after): on a raise copies appear only on x and
 * disappear only where x replaced them; on a lowering only x's copies go,
 * and as many are created as dropped while the copy count of a slot stays.
 * With equal weights and no zones in the whole history (h), a removal's new
 * copies land evenly: the most any survivor gets is at most 1.25 times the
 * mean plus 2.
 */
const char *rep_check_move(const dch_map *m, const rep_table *t0, const rep_table *t1,
                           uint32_t x, uint32_t from, uint32_t to, const rep_history *h,
                           rep_worst *w);

/*
 * Promise 7: with equal weights and no zones in the whole history, R >= 2
 * and at least 16 copies a member on average (R*P >= 16*M), every member's
 * most frequent co-holder shares at most 1.5 times the mean plus 2 of its
 * slots. O(P * R^2 + N^2) time, N^2 counters.
 */
const char *rep_check_diversity(const dch_map *m, const rep_table *t, const rep_history *h,
                                rep_worst *w);

#endif /* DCH_TESTS_SUPPORT_REPLICAS_H */
