/* SPDX-License-Identifier: MIT */
/*
 * One interface over the two schemes the analysis compares: a DCH map or a
 * classic ring, behind the same add / remove / reweight / lookup / ranges
 * calls, so every measurement runs the same code on both.
 *
 * Ids are each scheme's own (the lowest free id on add): compare members of
 * different schemes, or of different objects, by name.
 */
#ifndef DCH_ANALYSIS_SCHEME_H
#define DCH_ANALYSIS_SCHEME_H

#include "metrics.h"

/** Which library object a scheme is. */
typedef enum an_kind { AN_KIND_MAP, AN_KIND_RING } an_kind;

/** How to build one scheme. */
typedef struct an_scheme_spec {
    const char *label;      /* short name used in tables and files */
    an_kind kind;
    uint32_t units;         /* map: minimum arc units */
    uint32_t slots_per_unit; /* map: slots per unit */
    uint32_t points;        /* ring: points per unit of weight */
    uint8_t hash_key[16];   /* both: the shared SipHash key */
    uint32_t placement;     /* ring: DCH_RING_PLACE_SIPHASH or _KETAMA */
} an_scheme_spec;

/** A live scheme object. */
typedef struct an_scheme {
    an_scheme_spec spec;
    dch_map *map;   /* set when spec.kind is AN_KIND_MAP */
    dch_ring *ring; /* set when spec.kind is AN_KIND_RING */
} an_scheme;

/** An empty scheme object built from spec (copied). @return as dch_map_new / dch_ring_new. */
int an_scheme_new(an_scheme *s, const an_scheme_spec *spec);

/**
 * A new scheme built from nothing: names[i], of weight weights[i] (1 when
 * weights is NULL), added for every i with take[i] (every i when take is
 * NULL), in order or in reverse. *out is set only on success.
 * @return as an_scheme_new and an_scheme_add.
 */
int an_scheme_of_names(an_scheme *out, const an_scheme_spec *spec,
                       const char *const *names, const uint32_t *weights,
                       const bool *take, uint32_t n, bool reverse);

/** A deep copy. @return DCH_OK, DCH_ENOMEM. */
int an_scheme_clone(an_scheme *out, const an_scheme *s);

/** Free the object; a zeroed or freed scheme is a no-op. */
void an_scheme_free(an_scheme *s);

/** Add a member. @return as dch_map_add_node / dch_ring_add_node. */
int an_scheme_add(an_scheme *s, const char *name, uint32_t weight,
                  uint32_t *id_out);

/** Remove a member. @return as dch_map_remove_node / dch_ring_remove_node. */
int an_scheme_remove(an_scheme *s, uint32_t id);

/** Change a member's weight. @return as dch_map_set_weight / dch_ring_set_weight. */
int an_scheme_set_weight(an_scheme *s, uint32_t id, uint32_t weight);

/**
 * A membership change: a join, a removal or a new weight, by name; or a
 * maintenance drain and its end. A map drains the member (DCH_DRAIN_FULL)
 * and undrains it; a ring has no drain, and there a drain is the member's
 * removal and an undrain its join again under the same name and `weight`.
 */
typedef enum an_op {
    AN_OP_ADD,
    AN_OP_REMOVE,
    AN_OP_WEIGHT,
    AN_OP_DRAIN,
    AN_OP_UNDRAIN
} an_op;

/**
 * Apply one change to member `name` (`weight` is the joiner's or the new
 * one; for a ring's undrain, the weight it joins again with); the member's
 * id goes to *id.
 * @return as an_scheme_add, an_scheme_find then an_scheme_remove or
 *         an_scheme_set_weight.
 */
int an_scheme_apply(an_scheme *s, an_op op, const char *name, uint32_t weight,
                    uint32_t *id);

/** Find a member by name. @return DCH_OK, DCH_EINVAL, DCH_ENOENT. */
int an_scheme_find(const an_scheme *s, const char *name, uint32_t *id_out);

/** A member's name (borrowed), or NULL. */
const char *an_scheme_name(const an_scheme *s, uint32_t id);

/** A member's weight; 0 for a non-member. */
uint32_t an_scheme_weight(const an_scheme *s, uint32_t id);

/** One past the highest id in use. */
uint32_t an_scheme_id_limit(const an_scheme *s);

/** Number of members. */
uint32_t an_scheme_count(const an_scheme *s);

/** Owner of each of hash[0 .. n-1], written to owner[0 .. n-1]. */
void an_scheme_lookup_many(const an_scheme *s, const uint64_t *hash, size_t n,
                           uint32_t *owner);

/** The scheme's ownership ranges, in a new list. */
int an_scheme_ranges(const an_scheme *s, an_ranges *out);

/**
 * Numbers members by name for range and change lists: the number of `name`,
 * or DCH_NODE_NONE for a name it does not know. Two objects numbered by one
 * such function share one numbering.
 */
typedef uint32_t (*an_numbering)(const char *name, const void *ctx);

/**
 * The scheme's ownership ranges with every owner renumbered by number(name,
 * ctx).
 * @return DCH_OK, DCH_ENOMEM, or DCH_EINVAL from an_ranges_renumber.
 */
int an_scheme_ranges_named(const an_scheme *s, an_numbering number,
                           const void *ctx, an_ranges *out);

/**
 * The exact migration plan from `from` to `to` (two objects of one spec),
 * compared by member name (dch_map_diff, dch_ring_diff), with each name
 * numbered by number(name, ctx). A NULL number means the objects' own ids:
 * a name's id in `to`, or in `from` for one that left, which is one
 * numbering when `to` descends from `from`. Nobody is DCH_NODE_NONE.
 *
 * The list is what dch_range_diff gives for the two range lists numbered the
 * same way: maximal per (from, to) pair, without moves between two names
 * that both number to DCH_NODE_NONE. *out is replaced, as by an_changes_diff.
 *
 * @return DCH_OK, DCH_EINVAL (a map and a ring, or objects the library will
 *         not compare), DCH_ENOMEM; *out is unchanged on failure.
 */
int an_scheme_diff(an_changes *out, const an_scheme *from, const an_scheme *to,
                   an_numbering number, const void *ctx);

/**
 * Apply one change (as an_scheme_apply) and take its exact plan (as
 * an_scheme_diff from the scheme before to the scheme after, numbered by
 * number and ctx) into *out. The change is made on a copy that replaces *s
 * only on success, so a failed call leaves *s and *out as they were.
 *
 * @return DCH_OK, DCH_ENOMEM, or the error of an_scheme_apply.
 */
int an_scheme_change(an_scheme *s, an_op op, const char *name, uint32_t weight,
                     uint32_t *id, an_numbering number, const void *ctx,
                     an_changes *out);

/**
 * Weights by id: weight[id] for id < an_scheme_id_limit (0 for free ids).
 * `weight` must hold that many entries.
 */
void an_scheme_weights(const an_scheme *s, uint32_t *weight);

#endif /* DCH_ANALYSIS_SCHEME_H */
