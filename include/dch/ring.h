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
 * one whose name is bytewise smaller wins, then the smaller j. Who owns what
 * therefore depends only on the config and the set of (name, weight) pairs,
 * not on the order of the calls that built the ring; ids do depend on that
 * order, so clients that compare rings should compare names.
 *
 * Members: names are non-empty NUL-terminated strings of at most DCH_NAME_MAX
 * bytes with no control byte (none below 0x20, no 0x7f: tools print names in
 * lines and tab-separated columns), unique within a ring. Ids are small integers, the lowest free one is
 * given on add, and an id is stable while its member stays. A member of
 * weight 0 is kept but has no points.
 *
 * Limits: at most DCH_RING_MAX_NODES members, at most DCH_RING_MAX_POINTS
 * points in all, and the sum of all weights at most UINT32_MAX; calls that
 * would pass one fail with DCH_EFULL.
 *
 * Cost: a lookup is one read of a 2^16-entry index on the hash's top 16 bits
 * and a binary search over the few points in that bucket. Memory is 8 bytes a
 * point, a 256 KiB index while the ring has points, and O(members).
 *
 * Threads: as for the map (map.h): functions taking `const dch_ring *` only
 * read, so any number of threads may look up in a ring that nobody changes;
 * to change it under readers, clone, change the clone, and publish it.
 *
 * Errors: a call that fails leaves the ring exactly as it was.
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
/**
 * Most points a ring holds in all (the sum of points_per_weight * weight):
 * 2^24, 128 MiB of points. With the default 160 points per weight that is a
 * weight sum of 104,857.
 */
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

/** Fill `cfg` with the defaults: 160 points per weight, zero key, libc. NULL is a no-op. */
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

/**
 * Deep copy of a ring, with the same config (allocator included), members,
 * ids and points. O(points + N).
 *
 * @param[out] out  the copy, owned by the caller; untouched on error.
 * @return DCH_OK, DCH_EINVAL (a NULL argument), DCH_ENOMEM.
 */
DCH_API int dch_ring_clone(dch_ring **out, const dch_ring *r);

/**
 * Add a member with points_per_weight * weight points; it takes over the arcs
 * just before its points, from whichever members owned them, and nothing
 * else moves. The member gets the lowest free id. The name is copied.
 * O(points + new points * log(new points) + N).
 *
 * @param name    non-empty, NUL within the first DCH_NAME_MAX + 1 bytes, no
 *                byte below 0x20 and no 0x7f.
 * @param weight  0 .. UINT32_MAX; 0 adds a member with no points.
 * @param[out] id_out  the new member's id; may be NULL.
 * @return DCH_OK; DCH_EINVAL (NULL ring or name, empty or over-long name, or
 *         a name holding a control byte);
 *         DCH_EEXIST (name in use); DCH_EFULL (DCH_RING_MAX_NODES members
 *         already, weight sum past UINT32_MAX, or total points past
 *         DCH_RING_MAX_POINTS); DCH_ENOMEM.
 */
DCH_API int dch_ring_add_node(dch_ring *r, const char *name, uint32_t weight,
                              uint32_t *id_out);

/**
 * Remove a member and its points: each of its arcs goes to the member owning
 * the next point after it, and nothing else moves. The id becomes free.
 * O(points + N). Points are filtered in place, so this never fails for lack
 * of memory.
 *
 * @return DCH_OK, DCH_EINVAL (NULL ring), DCH_ENOENT (id is not a member).
 */
DCH_API int dch_ring_remove_node(dch_ring *r, uint32_t id);

/**
 * Change a member's weight: points j < points_per_weight * weight are kept or
 * added, the rest removed, so arcs move only to the member (weight raised) or
 * only from it (weight lowered). Weight 0 keeps the member with no points;
 * setting the current weight changes nothing. Raising costs
 * O(points + new points * log(new points)); lowering costs
 * O(points + dropped points * log(points)) and never allocates.
 *
 * @return DCH_OK, DCH_EINVAL (NULL ring), DCH_ENOENT (id is not a member),
 *         DCH_EFULL (weight sum past UINT32_MAX or total points past
 *         DCH_RING_MAX_POINTS), DCH_ENOMEM (raising only).
 */
DCH_API int dch_ring_set_weight(dch_ring *r, uint32_t id, uint32_t weight);

/**
 * Find a member by name. O(log N).
 *
 * @param[out] id_out  the member's id; untouched unless DCH_OK.
 * @return DCH_OK, DCH_EINVAL (a NULL argument or a name that is empty,
 *         longer than DCH_NAME_MAX or holds a control byte), DCH_ENOENT.
 */
DCH_API int dch_ring_find_node(const dch_ring *r, const char *name,
                               uint32_t *id_out);

/**
 * A member's name, or NULL if `id` is not a member (or r is NULL). Borrowed:
 * valid until the member is removed or the ring freed.
 */
DCH_API const char *dch_ring_node_name(const dch_ring *r, uint32_t id);

/** A member's weight; 0 if `id` is not a member (or r is NULL). */
DCH_API uint32_t dch_ring_node_weight(const dch_ring *r, uint32_t id);

/** Number of members, including those of weight 0; 0 for NULL. */
DCH_API uint32_t dch_ring_node_count(const dch_ring *r);

/**
 * One past the highest id in use (0 for an empty ring or NULL): every
 * member's id is below it, so `for (id = 0; id < dch_ring_id_limit(r); id++)`
 * with a dch_ring_node_name check visits every member.
 */
DCH_API uint32_t dch_ring_id_limit(const dch_ring *r);

/** Sum of all members' weights; 0 for NULL. */
DCH_API uint32_t dch_ring_total_weight(const dch_ring *r);

/** Points on the ring, the sum of points_per_weight * weight; 0 for NULL. */
DCH_API uint32_t dch_ring_point_count(const dch_ring *r);

/** Copy the ring's config (allocator included) to *cfg. NULL r or cfg: no-op. */
DCH_API void dch_ring_get_config(const dch_ring *r, dch_ring_config *cfg);

/**
 * SipHash-2-4 of a key under the ring's hash_key. key may be NULL if len is
 * 0. Returns 0 for a NULL ring.
 */
DCH_API uint64_t dch_ring_hash(const dch_ring *r, const void *key, size_t len);

/**
 * The member that owns a hash: the owner of the first point at or after it,
 * wrapping to the lowest point. DCH_NODE_NONE when the ring has no points
 * (or r is NULL). O(log(points in the hash's bucket)), about 2 memory reads.
 */
DCH_API uint32_t dch_ring_lookup_hash(const dch_ring *r, uint64_t hash);

/** dch_ring_lookup_hash(r, dch_ring_hash(r, key, len)). */
DCH_API uint32_t dch_ring_lookup(const dch_ring *r, const void *key, size_t len);

/**
 * Ownership as ranges (see range.h): ascending, adjacent arcs of one owner
 * merged, covering the hash space exactly once; one range [0, 2^64-1] owned
 * by DCH_NODE_NONE when the ring has no points. Exact: every hash in a range
 * looks up to its owner. Writes at most `cap` ranges to `out` and always sets
 * *count_out to the number of ranges there are, so a first call with
 * out = NULL, cap = 0 sizes the array. O(points).
 *
 * @return DCH_OK, DCH_EINVAL (NULL r or count_out, or out NULL with cap > 0),
 *         DCH_EFULL (cap too small: the first cap ranges were written).
 */
DCH_API int dch_ring_ranges(const dch_ring *r, dch_range *out, size_t cap,
                            size_t *count_out);

/**
 * Call fn for each range of dch_ring_ranges in order, without allocating.
 * A non-zero return from fn stops the walk and is returned. O(points).
 *
 * @return DCH_OK, DCH_EINVAL (NULL r or fn), or fn's non-zero value.
 */
DCH_API int dch_ring_foreach_range(const dch_ring *r,
                                   int (*fn)(const dch_range *rg, void *ctx),
                                   void *ctx);

/**
 * Bytes the ring holds through its allocator (points, index, members, names);
 * 0 for NULL.
 */
DCH_API size_t dch_ring_memory(const dch_ring *r);

#ifdef __cplusplus
}
#endif

#endif /* DCH_RING_H */
