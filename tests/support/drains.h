/* SPDX-License-Identifier: MIT */
/*
 * The drain promises of dch/map.h ("Drains"), checked from outside through
 * the public API: shared by the property tests (test_map_drain.c) and the
 * fuzz targets (fuzz/fuzz_ops.c, fuzz/fuzz_replicas.c).
 *
 * The oracle is a second map `b` that got the same joins, removals and
 * weights as the drained map `m` and never a drain. A check returns NULL
 * when the promise holds, else a message naming what broke (in a static
 * buffer, valid until the next check).
 */
#ifndef DCH_TESTS_SUPPORT_DRAINS_H
#define DCH_TESTS_SUPPORT_DRAINS_H

#include "dch/dch.h"

#include <stdbool.h>
#include <stdint.h>

#define DRAIN_ROW DCH_MAP_MAX_REPLICAS

/* A drain list as a test keeps it: what it asked, in order. */
typedef struct drain_list {
    uint32_t n;
    uint32_t ids[256], modes[256];
} drain_list;

/* Position of id in l, or l->n. */
uint32_t drain_list_find(const drain_list *l, uint32_t id);
/* Take id out of l (if listed). */
void drain_list_drop(drain_list *l, uint32_t id);
/* Record a successful dch_map_drain(id, mode): a new drain or a new mode
 * goes to the end; the same mode changes nothing. */
void drain_list_drain(drain_list *l, uint32_t id, uint32_t mode);

/* Every slot's copies, DRAIN_ROW entries a slot, DCH_NODE_NONE past its
 * count: the effective table (base false) or the base; the caller frees. */
uint32_t *drain_table(const dch_map *m, bool base);
bool drain_same_table(const uint32_t *a, const uint32_t *b, uint32_t P);
bool drain_row_has(const uint32_t *row, uint32_t id);
/* Copies gained from table a to table b, slot by slot. */
uint64_t drain_copies_moved(const uint32_t *a, const uint32_t *b, uint32_t P);

/*
 * Everything m must be, given the oracle b and the list l: the base is
 * b's table (promise 1: drains never touch it); the effective table is b
 * with the FULL drains (every drain when R = 1) applied by
 * dch_map_remove_node on a clone in list order, then the PRIMARY drains as
 * promotions: the same copy sets, the same rows where the primary is not
 * PRIMARY-drained, elsewhere a primary that is not PRIMARY-drained when the
 * slot has such a copy; the counts, lookups and ranges agree with the
 * effective table; dch_map_drains and dch_map_node_drained report l; the
 * fingerprint is b's when l is empty and differs from it otherwise.
 */
const char *drain_check(const dch_map *m, const dch_map *b, const drain_list *l);

#endif /* DCH_TESTS_SUPPORT_DRAINS_H */
