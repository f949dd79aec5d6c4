/* SPDX-License-Identifier: MIT */
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
 * order, so clients that compare rings should compare names, as
 * dch_ring_diff (ring_diff.h) does.
 *
 * Ketama placement (cfg.placement = DCH_RING_PLACE_KETAMA) replaces the
 * above with the continuum of libmemcached 1.1 (its weighted ketama mode,
 * MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED with its MD5 key hash), so the ring
 * routes every key to the server libmemcached picks. The rules, from
 * libmemcached 1.1.4's src/libmemcached/hosts.cc (update_continuum,
 * ketama_server_hash), hash.cc (dispatch_host) and src/libhashkit/md5.cc:
 *  - The servers are the members of non-zero weight, in the order they were
 *    added (libmemcached's server list order; a removed member leaves the
 *    order, and a member added later goes to its end). n is their number, W
 *    the sum of their weights.
 *  - A server of weight w has 4 * floor(w / W * 160 / 4 * n + 1e-10) points,
 *    evaluated in single-precision float, left to right. Equal weights give
 *    160 points at most n but 156 at some, such as n = 25, 50 and 100.
 *  - Point group g = 0, 1, ... of a member hashes the string "name-g" (g in
 *    decimal) with MD5 (RFC 1321); bytes 4k .. 4k+3 of the digest, read
 *    little-endian, are the 32-bit values of four points, k = 0 .. 3.
 *    libmemcached names a server "host-g" when its port is 11211 and
 *    "host:port-g" otherwise, so the member name must be "host" for port
 *    11211 and "host:port" for any other port.
 *  - A key's 32-bit hash is the first 4 bytes of MD5(key), little-endian; it
 *    belongs to the first point at or after it, wrapping to the lowest.
 *  - Points of equal value: the server added first wins, as libmemcached's
 *    sort by (value, server index) decides.
 * On the 64-bit ring a point of value v sits at v * 2^32 + 2^32 - 1, and
 * dch_ring_hash returns a key's 32-bit hash h as h * 2^32, so a 64-bit hash
 * belongs to the owner of its top 32 bits, whatever its low bits; ranges
 * therefore have bounds of the form v * 2^32 + 2^32 - 1. Where libmemcached
 * differs: it counts weight 0 as weight 1 (a member of weight 0 here has no
 * points and is not a server: give weight 1 to mirror such a server), and
 * Debian's build aborts on an assertion with more than 100 servers, while
 * this ring applies the same rules to any number. hash_key and
 * points_per_weight are not used. Every change rebuilds the continuum, as
 * libmemcached does, since one member's weight or arrival changes the others'
 * point counts: add, remove and set_weight cost O(points log points) and may
 * return DCH_ENOMEM, and they can move arcs between members other than the
 * one changed.
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
 * NULL, as for the map (map.h): every function accepts a NULL ring. Getters
 * and lookups return 0, NULL or DCH_NODE_NONE for it, functions that return
 * an error code return DCH_EINVAL, and functions that return nothing do
 * nothing. Each declaration below says which.
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

/** Placement by SipHash-2-4 of "name#j" (the default; see above). */
#define DCH_RING_PLACE_SIPHASH 0u
/** Placement as libmemcached 1.1's weighted ketama continuum (see above). */
#define DCH_RING_PLACE_KETAMA 1u

/** Opaque consistent-hash ring. */
typedef struct dch_ring dch_ring;

/** The layout of dch_ring_config that these headers describe. */
#define DCH_RING_CONFIG_VERSION 1u

/**
 * Ring configuration; fixed for the ring's life. Versioned as
 * dch_map_config is: `version` first, new fields only at the end, each
 * raising DCH_RING_CONFIG_VERSION; dch_ring_config_default and
 * dch_ring_get_config write the fields of version 1 only, and always will.
 */
typedef struct dch_ring_config {
    /** DCH_RING_CONFIG_VERSION (the layout the caller was built with). */
    uint32_t version;
    /** Points per unit of weight, >= 1 (unused by ketama placement).
     *  Default 160, ketama's choice. */
    uint32_t points_per_weight;
    /** SipHash-2-4 key that every client shares. Default all zero. */
    uint8_t hash_key[16];
    /** Allocator for everything the ring holds; NULL means libc. */
    const dch_allocator *allocator;
    /** DCH_RING_PLACE_SIPHASH (default) or DCH_RING_PLACE_KETAMA. */
    uint32_t placement;
} dch_ring_config;

/** A dch_ring_config with the defaults (see dch_ring_config_default). */
#define DCH_RING_CONFIG_INIT                                                   \
    {                                                                          \
        .version = DCH_RING_CONFIG_VERSION, .points_per_weight = 160,          \
        .hash_key = {0}, .allocator = NULL, .placement = DCH_RING_PLACE_SIPHASH \
    }

/**
 * Fill `cfg` with the defaults for the layout `version` names.
 *
 * @param[out] cfg   the config to fill.
 * @param version    DCH_RING_CONFIG_VERSION (as the caller's header has it).
 * @return DCH_OK; DCH_EINVAL if cfg is NULL or the version is not one this
 *         library knows (0 included), and then cfg is left untouched.
 */
DCH_API int dch_ring_config_init(dch_ring_config *cfg, uint32_t version);

/** Fill `cfg` with the defaults: 160 points per weight, zero key, libc,
 *  SipHash placement, version DCH_RING_CONFIG_VERSION. NULL is a no-op. */
DCH_API void dch_ring_config_default(dch_ring_config *cfg);

/**
 * Create an empty ring.
 *
 * @param[out] out  the new ring, owned by the caller (free with dch_ring_free).
 * @param cfg       copied; NULL means dch_ring_config_default.
 * @return DCH_OK; DCH_EINVAL (out NULL, a cfg->version this library does
 *         not know (0 included), an unknown placement,
 *         points_per_weight 0 with SipHash placement, or an allocator
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
 * of memory. Ketama placement rebuilds the continuum instead (see above).
 *
 * @return DCH_OK, DCH_EINVAL (NULL ring), DCH_ENOENT (id is not a member),
 *         DCH_ENOMEM (ketama placement only).
 */
DCH_API int dch_ring_remove_node(dch_ring *r, uint32_t id);

/**
 * Change a member's weight: points j < points_per_weight * weight are kept or
 * added, the rest removed, so arcs move only to the member (weight raised) or
 * only from it (weight lowered). Weight 0 keeps the member with no points;
 * setting the current weight changes nothing. Raising costs
 * O(points + new points * log(new points)); lowering costs
 * O(points + dropped points * log(points)) and never allocates. Ketama
 * placement rebuilds the continuum instead (see above).
 *
 * @return DCH_OK, DCH_EINVAL (NULL ring), DCH_ENOENT (id is not a member),
 *         DCH_EFULL (weight sum past UINT32_MAX or total points past
 *         DCH_RING_MAX_POINTS), DCH_ENOMEM (raising only, or any change
 *         with ketama placement).
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
 * SipHash-2-4 of a key under the ring's hash_key; with ketama placement the
 * key's 32-bit ketama hash h as h * 2^32. key may be NULL if len is 0.
 * Returns 0 for a NULL ring.
 */
DCH_API uint64_t dch_ring_hash(const dch_ring *r, const void *key, size_t len);

/**
 * The member that owns a hash: the owner of the first point at or after it,
 * wrapping to the lowest point. DCH_NODE_NONE when the ring has no points
 * (or r is NULL). O(log(points in the hash's bucket)), about 2 memory reads.
 */
DCH_API uint32_t dch_ring_lookup_hash(const dch_ring *r, uint64_t hash);

/** dch_ring_lookup_hash(r, dch_ring_hash(r, key, len)); DCH_NODE_NONE for a
 *  NULL ring. */
DCH_API uint32_t dch_ring_lookup(const dch_ring *r, const void *key, size_t len);

/**
 * The distinct members met walking clockwise from a hash, the owner first:
 * the members of the points at or after the hash in ring order (ties as the
 * lookup settles them), wrapping once, each written the first time it is
 * met. ids[0] is dch_ring_lookup_hash(r, hash). This is the classic
 * replica placement ("the next R distinct members"); a zone-aware placement
 * filters this walk. Writes at most `cap` ids and returns how many it wrote:
 * min(cap, members with points). Returns 0 for a NULL ring, a NULL ids, cap
 * 0 or a ring without points.
 *
 * Cost: the lookup, then one step a point walked, each a scan of the ids
 * written so far: O(log(points in the bucket) + w * min(cap, N)) for w
 * points walked. With members of similar weight w is about cap while cap is
 * small against N; a cap at or above the members with points walks every
 * point, O(points * N). Allocates nothing.
 */
DCH_API size_t dch_ring_successors_hash(const dch_ring *r, uint64_t hash,
                                        uint32_t *ids, size_t cap);

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
