/*
 * The classic consistent-hash ring (Karger et al. 1997) with virtual nodes,
 * kept beside the DCH map as its baseline. It mirrors the map's API so code
 * can switch schemes.
 *
 * Each member owns points on the 64-bit ring; a hash belongs to the member
 * owning the first point at or after it, wrapping past 2^64-1 to the lowest
 * point. Point placement is normative, so any client computes the same ring
 * from the same members without sharing state: a member named `name` with
 * weight w has points_per_weight * w points, and its point j (j = 0, 1, ...)
 * sits at dch_siphash24(hash_key, name "#" decimal(j)) -- the name's bytes,
 * '#', and j in ASCII decimal, no terminator. Two points at one position: the
 * one whose name is bytewise smaller wins, then the smaller j.
 *
 * Names, ids, weights, errors and threads follow the map's rules (map.h).
 * Weight 0 keeps a member with no points. Limits: at most DCH_RING_MAX_NODES
 * members, at most DCH_RING_MAX_POINTS points in all, weight sum at most
 * UINT32_MAX.
 */
#ifndef DCH_RING_H
#define DCH_RING_H

#include "common.h"
#include "range.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Most members a ring holds (ids 0 .. DCH_RING_MAX_NODES - 1). */
#define DCH_RING_MAX_NODES 65535u
/** Most points a ring holds in all (the sum of points_per_weight * weight). */
#define DCH_RING_MAX_POINTS (1u << 24)

/** Opaque consistent-hash ring. */
typedef struct dch_ring dch_ring;

/** Ring configuration; fixed for the ring's life. */
typedef struct dch_ring_config {
    /** Points per unit of weight, >= 1. Default 160, ketama's choice. */
    uint32_t points_per_weight;
    /** SipHash-2-4 key that every client shares. Default all zero. */
    uint8_t hash_key[16];
    /** Allocator for everything the ring holds; NULL means libc. */
    const dch_allocator *allocator;
} dch_ring_config;

/** Fill `cfg` with the defaults: 160 points per weight, zero key, libc. */
DCH_API void dch_ring_config_default(dch_ring_config *cfg);

/**
 * Create an empty ring.
 *
 * @param[out] out  the new ring, owned by the caller (free with dch_ring_free).
 * @param cfg       copied; NULL means dch_ring_config_default.
 * @return DCH_OK; DCH_EINVAL (out NULL, points_per_weight 0, or an allocator
 *         lacking a function); DCH_ENOMEM. On error *out is untouched.
 */
DCH_API int dch_ring_new(dch_ring **out, const dch_ring_config *cfg);

/** Free a ring. NULL is a no-op. */
DCH_API void dch_ring_free(dch_ring *r);

/** Deep copy, same allocator. @return DCH_OK, DCH_EINVAL, DCH_ENOMEM. */
DCH_API int dch_ring_clone(dch_ring **out, const dch_ring *r);

/**
 * Add a member with points_per_weight * weight points; it takes over the arcs
 * just before its points, from whichever members owned them.
 * O(points + new points * log(new points)).
 *
 * @return DCH_OK; DCH_EINVAL (NULL ring or name, empty or over-long name);
 *         DCH_EEXIST; DCH_EFULL (DCH_RING_MAX_NODES members, weight sum past
 *         UINT32_MAX, or total points past DCH_RING_MAX_POINTS); DCH_ENOMEM.
 */
DCH_API int dch_ring_add_node(dch_ring *r, const char *name, uint32_t weight,
                              uint32_t *id_out);

/** Remove a member and its points. @return DCH_OK, DCH_EINVAL, DCH_ENOENT, DCH_ENOMEM. */
DCH_API int dch_ring_remove_node(dch_ring *r, uint32_t id);

/**
 * Change a member's weight: points j < points_per_weight * weight are kept or
 * added, the rest removed, so raising and lowering move only that member's
 * arcs. @return DCH_OK, DCH_EINVAL, DCH_ENOENT, DCH_EFULL, DCH_ENOMEM.
 */
DCH_API int dch_ring_set_weight(dch_ring *r, uint32_t id, uint32_t weight);

/** Find a member by name. @return DCH_OK, DCH_EINVAL, DCH_ENOENT. */
DCH_API int dch_ring_find_node(const dch_ring *r, const char *name,
                               uint32_t *id_out);

/** A member's name (borrowed until it is removed), or NULL. */
DCH_API const char *dch_ring_node_name(const dch_ring *r, uint32_t id);

/** A member's weight; 0 if not a member. */
DCH_API uint32_t dch_ring_node_weight(const dch_ring *r, uint32_t id);

/** Number of members, including those of weight 0. */
DCH_API uint32_t dch_ring_node_count(const dch_ring *r);

/** One past the highest id in use (see dch_map_id_limit). */
DCH_API uint32_t dch_ring_id_limit(const dch_ring *r);

/** Total points on the ring. */
DCH_API uint32_t dch_ring_point_count(const dch_ring *r);

/** The ring's config (allocator included). */
DCH_API void dch_ring_get_config(const dch_ring *r, dch_ring_config *cfg);

/** SipHash-2-4 of a key under the ring's hash_key. */
DCH_API uint64_t dch_ring_hash(const dch_ring *r, const void *key, size_t len);

/** Owner of a hash; DCH_NODE_NONE when the ring has no points. */
DCH_API uint32_t dch_ring_lookup_hash(const dch_ring *r, uint64_t hash);

/** dch_ring_lookup_hash(r, dch_ring_hash(r, key, len)). */
DCH_API uint32_t dch_ring_lookup(const dch_ring *r, const void *key, size_t len);

/**
 * Ownership as ranges (see range.h and dch_map_ranges for the calling
 * convention). O(points).
 */
DCH_API int dch_ring_ranges(const dch_ring *r, dch_range *out, size_t cap,
                            size_t *count_out);

/** Call fn for each range in order; fn's non-zero return stops and is returned. */
DCH_API int dch_ring_foreach_range(const dch_ring *r,
                                   int (*fn)(const dch_range *rg, void *ctx),
                                   void *ctx);

/** Bytes the ring holds through its allocator. */
DCH_API size_t dch_ring_memory(const dch_ring *r);

#ifdef __cplusplus
}
#endif

#endif /* DCH_RING_H */
