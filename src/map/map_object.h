/* SPDX-License-Identifier: MIT */
/*
 * The map object itself: what map.c (the object, its reading and its
 * changes) and map_assemble.c (a map built from a file's parts) both see.
 * Internal to libdch.
 */
#ifndef DCH_SRC_MAP_OBJECT_H
#define DCH_SRC_MAP_OBJECT_H

#include "dch/map.h"
#include "dch/map_stage.h"

#include "map_engine.h"
#include "map_internal.h"
#include "map_zones.h"
#include "members.h"

#include <stddef.h>

/* Owner entry of an unowned slot; never a member id (ids stop at 65534). */
#define NONE16 DCH__MAP_UNOWNED

typedef dch__member member;

/* The load moves in force (balance.h; docs/balance.md, "The layer"): n
 * entries in ascending slot order, each slot's copies as the table below
 * the moves (the base, then the drains) gave them when the move was made,
 * `below`, and the copies the move serves instead, `copies`: n blocks of
 * `stride` entries each (one entry with one copy a slot), primary first,
 * DCH__MAP_UNOWNED past the copy count. A move's copies always differ from
 * its below. below is NULL in a list read from a file, whose moves are
 * checked against the table below instead (dch__drains_build). */
typedef struct dch__moves {
    uint32_t n;
    uint32_t *slot;
    uint16_t *below, *copies;
} dch__moves;

/* The layer above the base: the drains in force and the load moves, and the
 * effective table they give; all zero (every pointer NULL) while neither is
 * in force (owner NULL says so). */
typedef struct dch__drains {
    uint32_t n; /* drains in force */
    uint32_t *ids, *modes; /* n entries each, in the order drained */
    dch__moves mv; /* load moves, applied after every drain */
    uint16_t *owner; /* P entries: the effective primaries */
    uint16_t *copies; /* replicas >= 2: P blocks of stride, as the base's */
    uint32_t *slots, *held; /* per id below limit: effective primaries, copies */
    uint32_t limit;
    uint32_t ncopies; /* copies an effective slot holds */
    int unowned; /* the effective table owns no slot (every weighted member
                  * drained FULL) */
} dch__drains;
_Static_assert(offsetof(member, name) == 0, "members.h: an entry starts with its name");

struct dch_map {
    dch_map_config cfg;
    uint32_t units;
    uint32_t spu; /* slots per unit, S */
    uint32_t slots; /* P = units * spu */
    unsigned shift; /* slot = (hash >> 32) >> shift; 32 - log2(P) */
    uint16_t *owner; /* P entries: the primaries */
    /* replicas >= 2: P blocks of `stride` entries (replicas rounded up to a
     * power of two), a slot's copies primary first, DCH__MAP_UNOWNED past
     * its copy count; owner[s] is copies[s * stride]. NULL for 1 replica. */
    uint16_t *copies;
    uint32_t replicas, stride;
    uint32_t ncopies; /* copies a slot holds: min(replicas, members of positive weight) */
    dch__members mt; /* entries are `member`s */
    /* Per id, beside the member table and never shorter than its id limit
     * (side_cap entries each): held[] the copies a member holds over all
     * positions (replicas >= 2), zone_of[] 0 (a zone of its own) or 1 + its
     * zone's index (replicas >= 2, or once some member had a zone). NULL
     * while not needed, so that a map of one copy and no zones spends 16
     * bytes a member id on its entries. */
    uint32_t *held, *zone_of;
    uint32_t side_cap;
    dch__zones zones;
    uint32_t total_weight;
    uint64_t epoch;
    /* The transition record of a step map (map_stage.h), valid only while
     * the epoch is still tr_epoch: every change bumps the epoch, so a changed
     * step map reads as settled without each change having to clear it. */
    dch_map_transition tr;
    uint64_t tr_epoch;
    /* Drains (map.h, "Drains"; docs/drains.md): owner, copies, held and
     * the members' slot counts above are the BASE, which only the engine
     * changes. What readers see is the EFFECTIVE table: rd_owner and
     * rd_copies point to the base arrays while no drain is in force and to
     * dr's arrays otherwise, so a lookup stays one table read. */
    const uint16_t *rd_owner, *rd_copies;
    dch__drains dr;
};

/* Whether a layer (a drain or a load move) is in force: the readers then
 * see its effective table rather than the base. */
static inline int layered(const dch_map *m)
{
    return m->dr.owner != NULL;
}

/* Copies a slot of m's own table holds (ncopies is kept only with
 * replicas): with one copy a slot, 1 while some member has weight. */
static inline uint32_t slot_copies(const dch_map *m)
{
    return m->replicas > 1 ? m->ncopies : m->total_weight > 0;
}

/* Entry of id, member or not; id below the table's capacity. */
static inline member *entry(const dch_map *m, uint32_t id)
{
    return (member *)m->mt.entries + id;
}

static inline const member *member_of(const dch_map *m, uint32_t id)
{
    return m ? dch__members_get(&m->mt, id) : NULL;
}

/* id's zone: 0 (its own) or 1 + the index of its zone. */
static inline uint32_t zone_of(const dch_map *m, uint32_t id)
{
    return m->zone_of ? m->zone_of[id] : 0;
}

/* The per-id arrays an add needs, reserved before anything changes (the
 * member table's capacity after the add is cap; zoned: the new member has
 * a zone), then installed or dropped. */
typedef struct dch__side_add {
    uint32_t *held, *zone_of; /* new arrays, or NULL where the old ones do */
    uint32_t cap;
} dch__side_add;

/** DCH_OK or DCH_ENOMEM (nothing allocated). */
int dch__map_side_reserve(const dch_map *m, uint32_t cap, int zoned, dch__side_add *a);
/** Install what was reserved; id's entries are set to 0 (no copies, a zone
 *  of its own). */
void dch__map_side_commit(dch_map *m, dch__side_add *a, uint32_t id);
void dch__map_side_cancel(const dch_map *m, dch__side_add *a);

/* Free the arrays of d (from m's allocator) and zero it. */
void dch__map_drains_free(const dch_map *m, dch__drains *d);
/* Put d in force on m (freeing m's old drains) and point the readers at
 * its effective table (at the base when d->n is 0); d is zeroed. */
void dch__map_drains_install(dch_map *m, dch__drains *d);
/* A deep copy of m's base, with no drain in force: DCH_OK, DCH_ENOMEM. */
int dch__map_clone_base(dch_map **out, const dch_map *m);

/* The engine's calls on the base alone (map.c), with the arguments,
 * errors and guarantees of dch_map_add_node_in_zone, dch_map_remove_node
 * and dch_map_set_weight; they leave the drains as they are, and the
 * public calls (drain_calls.c) wrap them. */
int dch__map_base_add(dch_map *m, const char *name, const char *zone, uint32_t weight,
                      uint32_t *id_out);
int dch__map_base_remove(dch_map *m, uint32_t id);
int dch__map_base_set_weight(dch_map *m, uint32_t id, uint32_t weight);

/* Copies a slot holds (every slot holds as many). */
static inline uint32_t copy_count(const dch_map *m)
{
    uint32_t n = 0;
    while (n < m->replicas && m->copies[n] != NONE16)
        n++;
    return n;
}

#endif /* DCH_SRC_MAP_OBJECT_H */
