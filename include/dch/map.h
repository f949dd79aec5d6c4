/* SPDX-License-Identifier: MIT */
/*
 * The DCH partition map: distributed consistent hashing with equal arcs.
 *
 * The 64-bit hash space is cut into `units` minimum arc units of
 * `slots_per_unit` slots each, P = units * slots_per_unit slots in all. Slot s
 * covers hashes [s * 2^64 / P, (s + 1) * 2^64 / P), so a hash's slot is its
 * top log2(P) bits and lookup is a shift and one table read. Every slot is
 * owned by one member, and every member owns a slice of every unit in
 * proportion to its weight. When a member joins, every existing member hands
 * it an equal sliver; when one leaves, its slots are shared out over all the
 * survivors. Nothing else moves (but for the repair moves below, which equal
 * weights never need), so migration is the minimum.
 *
 * The slot table is a pure function of the config and the sequence of calls
 * that built it (ties are broken by id, arithmetic is exact). Two clients
 * therefore agree only if they applied the same calls in the same order: in a
 * cluster, share the map itself (see dch_map_epoch), do not rebuild it.
 *
 * Members: names are non-empty NUL-terminated strings of at most DCH_NAME_MAX
 * bytes with no control byte (none below 0x20, no 0x7f: tools print names in
 * lines and tab-separated columns), unique within a map. Ids are small integers, the lowest free one is
 * given on add, and an id is stable while its member stays. A member of
 * weight 0 is kept but owns nothing.
 *
 * Promises, after every call, for every config and history (W the weight
 * sum, P slots, U units of S slots, N members of positive weight;
 * docs/placement.md, "Proofs of the promises", installed in
 * share/doc/libdch, proves each):
 *  - Coverage: with W > 0 every slot is owned by a member of positive weight;
 *    with W = 0 none is.
 *  - Global balance: every member holds within 2 slots of its share:
 *    |slots - P*w/W| < 2.
 *  - Movement: a call that raises x's weight (add included) moves slots only
 *    to x, and one that lowers it (remove included) only from x, unless that
 *    alone would leave a member 2 or more slots from its share; then single
 *    slots also move from the member furthest above its share to the one
 *    furthest below until every member is inside the bound (repair moves).
 *    No engine that moves only x's slots can keep any constant bound
 *    (docs/placement.md gives the counterexample: members owning nothing
 *    leave and nothing moves). While every positive weight is equal there
 *    are no repair moves, every member's count is within 2 of every
 *    other's, and in a join (a removal) every old member gives (every
 *    survivor receives) within 4 slots of P/(N(N+1)) (of P/(N(N-1))).
 *  - Determinism: integer arithmetic and ties to the lower id, so the table
 *    is a pure function of the config and the calls.
 * Per-unit slices are pursued inside the global bound, not promised: with
 * equal weights the engine aims at floor or ceil of S/N slots of every unit
 * while N <= S, and at most ceil(S/N) + 1 while N > S; docs/placement.md says
 * how far each is proven, tested and measured.
 *
 * Replicas. A map made with dch_map_config.replicas = R >= 2 keeps R copies
 * of every slot: dch_map_slot_replicas lists them, primary first, and the
 * primary is what dch_map_slot_owner, dch_map_lookup_hash, dch_map_node_slots
 * and dch_map_diff report (dch_map_node_copies counts all positions,
 * dch_map_diff_copies in map_diff.h lists the copies a change moves). A
 * member may name a zone (a failure domain: a rack, a host); a member with
 * none is a zone of its own. The engine is its own (docs/replicas.md,
 * "Proofs of the promises", installed in share/doc/libdch, proves each
 * promise); with R = 1 everything is as above and zones change nothing.
 * With M members of positive weight, Z zones among them, and a member's
 * copy share R*P*w/W, after every call and for every history:
 *  1. Distinct: every slot holds n = min(R, M) distinct members of positive
 *     weight.
 *  2. Zones: a slot's copies lie in min(n, Z) distinct zones: all distinct
 *     while Z >= n, every zone present otherwise.
 *  3. Primaries: every member is the primary of within 2 slots of its
 *     share, |slots - P*w/W| < 2, as with one copy: always while no member
 *     has a zone, and with zones under the condition of 4. (With zones a
 *     light member can hold its zone's only copy of a slot that a heavy
 *     member of the same zone needs, and a call on a third member cannot
 *     move it: docs/replicas.md shows such a state.)
 *  4. Copies: every member holds within 2R copies of its copy share,
 *     |copies - R*P*w/W| < 2R, provided every call since the map last had
 *     at most R members of positive weight has left at least R zones, none
 *     with more than W/(R+1) of the weight. Otherwise minimal movement (5)
 *     comes first: a zone whose share nears P (one copy a slot) cannot gain
 *     in a slot without evicting a member that has not changed, and the
 *     copies stay where the calls left them (docs/replicas.md gives the
 *     example and the measured deviations).
 *  5. Minimal movement: a call that raises x's weight (add included)
 *     creates copies only on x and drops only those x replaces; a call that
 *     lowers it (remove included) drops only x's copies and, unless n
 *     changes, creates exactly as many on other members. When n changes (M
 *     crosses R) x joins or leaves every slot and nothing else moves. Which
 *     copy is the primary may change anywhere (promotion moves no data).
 *  6. Even recovery: while every positive weight ever set has been equal
 *     and no member has a zone, the copies a removal re-creates land evenly:
 *     no survivor receives more than 1.25 times the mean plus 2.
 *  7. Diversity: under the same condition, with R >= 2 and at least 16
 *     copies a member on average (R*P >= 16*M), the members sharing a
 *     member's slots share about equally many: the most any one shares is
 *     at most 1.5 times the mean plus 2, so a failed member's reads and
 *     re-copies fall on all survivors. A resource limit: this holds while
 *     every call's diversity counters have fit in 2^22 entries (16 MiB),
 *     K the larger of M before and after the call: a call raising a
 *     weight (add included) fits when K <= 2,048; one lowering member x's
 *     weight (remove included), x holding c copies before it, fits when
 *     min((R-1)*c, K-1) * K <= 2^22: always while K <= 2,048, and at
 *     the default 65,536 slots with c at most R over x's share for every
 *     R <= 7 and for R = 8 while K <= 9,362 (docs/replicas.md, "Diversity
 *     bookkeeping"). Members of weight 0 count for nothing.
 *  8. Determinism, as above; clones, saves and loads keep R, the zones and
 *     every copy (map file format version 3, map_file.h).
 * A slot's copies sit in one block of 2, 4, 8 or 16 bytes aligned to its
 * size, so dch_map_lookup_replicas_hash reads one cache line. Changes with
 * replicas allocate 76 bytes per member id and 8 per copy that can move,
 * plus diversity counters of 4 bytes per pair of members of positive
 * weight involved (at most 16 MiB; beyond that, as 7 says, diversity is
 * pursued without them), and cost
 * O(P * R^2 + N^2) and more when zones constrain the slots; staging
 * (map_stage.h) handles one copy only.
 *
 * Drains (docs/drains.md, installed in share/doc/libdch, proves each
 * promise). A member may be drained for maintenance without leaving: the
 * map keeps the engine's table, the BASE, on which every promise above
 * holds as it is, and the list of drained members in the order drained.
 * Lookups, dch_map_slot_owner, dch_map_slot_replicas, dch_map_node_slots,
 * dch_map_node_copies, ranges, diffs and staging report the EFFECTIVE
 * table: the base, then every FULL drain in the order drained, each
 * exactly the removal dch_map_remove_node would make on the table so far,
 * then every PRIMARY drain in the order drained, promotions only (with
 * one copy a slot a PRIMARY drain acts as a FULL one), then the load
 * moves that balancing keeps above the drains (balance.h). With no drain
 * and no load move in force the effective table is the base; a lookup is
 * one table read either way. Promises 2 to 6 below speak of a map with no
 * load move in force: a drain may drop a load move (its slot moved below
 * it), which an undrain does not bring back. dch_map_base_owner and
 * dch_map_base_replicas read the base. A drained member keeps its weight,
 * its zone and its place in the base; removing it or changing its weight
 * ends its drain. Promises, after every
 * call and for every history:
 *  1. Base untouched: dch_map_drain and dch_map_undrain never change the
 *     base.
 *  2. FULL is a removal without the removal: with no other drain in force,
 *     after dch_map_drain(m, x, DCH_DRAIN_FULL) the effective table equals,
 *     copy for copy, the table dch_map_remove_node(x) gives on a clone of m.
 *  3. PRIMARY moves no data (R >= 2): every slot keeps its set of copies,
 *     only their order changes, and x is the primary of no slot that has a
 *     copy on a member not under a PRIMARY drain. The slots x was primary of
 *     go to their other copies with the least largest gain any choice
 *     allows; docs/drains.md says when that is at most 1.25 times the mean
 *     plus 2 (with R = 2 every new primary is forced).
 *  4. Exact return: the effective table is a pure function of the base and
 *     the ordered list, so dch_map_undrain(x) of the member drained last
 *     (and not drained before in the other mode), with no call since, gives
 *     back bit for bit the effective table from before its drain (the base
 *     when no drain is left). Undrain of another member gives what the
 *     remaining drains give: its slots return, and slots of members drained
 *     after it may move too (docs/drains.md measures how many).
 *  5. No second migration: dch_map_remove_node(x) of a member under FULL
 *     drain, the only drain in force, with no call since its drain, leaves
 *     the effective table unchanged (with other drains in force removals
 *     need not commute: docs/drains.md).
 *  6. Other calls while drained keep the effective table that pure
 *     function of the new base and the list; docs/drains.md gives the
 *     extra copies they were measured to move.
 *  7. Clones, saves (map file format version 4) and loads keep the list;
 *     every drain and undrain that changes the list bumps the epoch; the
 *     fingerprint covers the list (a map with none keeps its old one).
 * Each drain or undrain, and each other call while a drain is in force,
 * builds the new effective table on a clone of the base before anything
 * changes: O(P * R + N) memory and the cost of one removal per FULL drain.
 *
 * Changes allocate their scratch up front and free it before returning:
 * 140 bytes per member id, 8 per unit, 8 per slot of a unit (and 4 more)
 * and 12 per slot that can move (at most 768 KiB at the default 65,536
 * slots, most of it never touched), which is what lets a failed allocation
 * leave the map as it was.
 *
 * Limits: at most DCH_MAP_MAX_NODES members, at most DCH_MAP_MAX_SLOTS slots,
 * and the sum of all weights at most UINT32_MAX.
 *
 * NULL, as for the ring (ring.h): every function accepts a NULL map. Getters
 * and lookups return 0, NULL or DCH_NODE_NONE for it, functions that return
 * an error code return DCH_EINVAL, and functions that return nothing do
 * nothing. Each declaration below says which.
 *
 * Threads: every function that takes `const dch_map *` only reads (there is no
 * lazy state), so any number of threads may look up in a map that nobody
 * changes. To change a map under readers: dch_map_clone it, change the clone,
 * publish the clone through an atomic pointer, and free the old map once no
 * reader can still hold it.
 */
#ifndef DCH_MAP_H
#define DCH_MAP_H

#include "common.h"
#include "range.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Most members a map holds (ids 0 .. DCH_MAP_MAX_NODES - 1). */
#define DCH_MAP_MAX_NODES 65535u
/** Most slots (units * slots_per_unit) a map may have. */
#define DCH_MAP_MAX_SLOTS (1u << 24)
/** Most copies of every slot (dch_map_config.replicas); see "Replicas" above. */
#define DCH_MAP_MAX_REPLICAS 8u

/** Opaque partition map. */
typedef struct dch_map dch_map;

/** The layout of dch_map_config that these headers describe. */
#define DCH_MAP_CONFIG_VERSION 1u

/**
 * Map configuration; fixed for the map's life.
 *
 * Versioned so that it can grow without breaking programs built against an
 * older header: `version` comes first and says which layout the caller
 * has. New fields go at the end only, and every new field raises
 * DCH_MAP_CONFIG_VERSION; the library keeps reading every older version.
 * Fill one with DCH_MAP_CONFIG_INIT, dch_map_config_init or
 * dch_map_config_default, then change what differs. dch_map_config_default
 * and dch_map_get_config write the fields of version 1 only, and always
 * will, so that a program built against an older header is never written
 * past its struct; fields added later get _init and getters of their own.
 * DCH_MAP_CONFIG_INIT uses designated initializers: C99 and later, or C++20.
 */
typedef struct dch_map_config {
    /** DCH_MAP_CONFIG_VERSION (the layout the caller was built with). */
    uint32_t version;
    /** Minimum arc units: a power of two >= 1. Default 1024. */
    uint32_t units;
    /** Slots per unit: a power of two >= 1. Default 64. */
    uint32_t slots_per_unit;
    /** SipHash-2-4 key that every client of the map shares. Default all zero. */
    uint8_t hash_key[16];
    /** Allocator for everything the map holds; NULL means libc. */
    const dch_allocator *allocator;
    /** Copies of every slot, 1 .. DCH_MAP_MAX_REPLICAS. Default 1; 0 is read
     *  as 1. */
    uint32_t replicas;
} dch_map_config;

/** A dch_map_config with the defaults (see dch_map_config_default). */
#define DCH_MAP_CONFIG_INIT                                                    \
    {                                                                          \
        .version = DCH_MAP_CONFIG_VERSION, .units = 1024, .slots_per_unit = 64, \
        .hash_key = {0}, .allocator = NULL, .replicas = 1                       \
    }

/**
 * Fill `cfg` with the defaults for the layout `version` names.
 *
 * @param[out] cfg   the config to fill.
 * @param version    DCH_MAP_CONFIG_VERSION (as the caller's header has it).
 * @return DCH_OK; DCH_EINVAL if cfg is NULL or the version is not one this
 *         library knows (0 included), and then cfg is left untouched.
 */
DCH_API int dch_map_config_init(dch_map_config *cfg, uint32_t version);

/**
 * Fill `cfg` with the defaults: 1024 units of 64 slots (65,536 slots, a
 * 128 KiB table that stays cache-resident), a zero hash key, libc
 * allocation, one copy of every slot, and version 1 (the fields of version
 * 1 only, whatever DCH_MAP_CONFIG_VERSION becomes: see above). NULL is a
 * no-op.
 */
DCH_API void dch_map_config_default(dch_map_config *cfg);

/**
 * Create an empty map.
 *
 * @param[out] out  the new map, owned by the caller (free with dch_map_free).
 * @param cfg       the config, copied; NULL means dch_map_config_default.
 * @return DCH_OK; DCH_EINVAL if out is NULL, cfg->version is not a version
 *         this library knows (0 included), units or slots_per_unit is not a
 *         power of two, replicas is above DCH_MAP_MAX_REPLICAS, or an
 *         allocator lacks a function; DCH_EFULL if
 *         units * slots_per_unit exceeds DCH_MAP_MAX_SLOTS; DCH_ENOMEM.
 *         On error *out is left untouched.
 */
DCH_API int dch_map_new(dch_map **out, const dch_map_config *cfg);

/** Free a map and everything it holds. NULL is a no-op. */
DCH_API void dch_map_free(dch_map *m);

/**
 * Deep copy of a map, with the same allocator, members, ids, slot table and
 * epoch. O(P + N).
 *
 * @return DCH_OK, DCH_EINVAL (a NULL argument), DCH_ENOMEM.
 */
DCH_API int dch_map_clone(dch_map **out, const dch_map *m);

/**
 * Add a member.
 *
 * The member gets the lowest free id. With a positive weight it takes about
 * its share of every unit: how many slots each existing member gives is
 * decided by how far it is above its share (furthest first), and which
 * slots, unit by unit, by per-unit shares and the count left to give. The
 * slots that move are exactly the ones it now owns (but for repair moves,
 * see the top of this header). The name is copied.
 * With R = 1: O(P + N log N + (m + a) log(S N) + r (P + N)) for m slots
 * moved, N ids (the id limit), a <= P receivers set aside in the units a
 * lowering gives (none here) and r repair moves (none with equal
 * weights); docs/placement.md, "Complexity", proves it. That is within a
 * log factor of cloning the map (O(P + N)) but for repair; not the
 * constant factor of 10 the project aims at (dch-bench --only worst
 * measures the worst call against it).
 *
 * @param name    non-empty, NUL within the first DCH_NAME_MAX + 1 bytes, no
 *                byte below 0x20 and no 0x7f.
 * @param weight  0 .. UINT32_MAX; 0 adds a member that owns nothing.
 * @param[out] id_out  the new member's id; may be NULL.
 * @return DCH_OK; DCH_EINVAL (NULL map or name, empty or over-long name, or
 *         a name holding a control byte);
 *         DCH_EEXIST (name in use); DCH_EFULL (DCH_MAP_MAX_NODES members
 *         already, or the weight sum would pass UINT32_MAX); DCH_ENOMEM.
 */
DCH_API int dch_map_add_node(dch_map *m, const char *name, uint32_t weight,
                             uint32_t *id_out);

/**
 * Add a member in a failure domain (zone): dch_map_add_node with a zone.
 * Copies of a slot go to distinct zones (see "Replicas" above). A zone is
 * a name that members share; it is copied, and kept while a member has it.
 * With one copy per slot zones are recorded but change nothing.
 *
 * @param zone  NULL or "": the member is a zone of its own; otherwise a
 *              name under the member name rules (non-empty, at most
 *              DCH_NAME_MAX bytes, no control byte).
 * @return as dch_map_add_node; DCH_EINVAL also for an invalid zone name.
 */
DCH_API int dch_map_add_node_in_zone(dch_map *m, const char *name, const char *zone,
                                     uint32_t weight, uint32_t *id_out);

/**
 * Remove a member. Its slots are shared out over all the remaining members of
 * positive weight, the counts to those furthest below their shares first
 * (which slots go to whom, unit by unit, by per-unit shares); no
 * other slot moves (but for repair moves, see the top of this header). When
 * no member of positive weight remains, every slot becomes unowned. The id
 * becomes free. With R = 1: O(P + N log N + (m + a) log(S N) + r (P + N)),
 * as dch_map_add_node, with a <= P receivers set aside.
 *
 * @return DCH_OK, DCH_EINVAL (NULL map), DCH_ENOENT (id is not a member),
 *         DCH_ENOMEM.
 */
DCH_API int dch_map_remove_node(dch_map *m, uint32_t id);

/**
 * Change a member's weight. Slots move only to the member (weight raised) or
 * only from it (weight lowered), never between other members but for repair
 * moves (see the top of this header). Weight 0 drains the member but keeps
 * it. Setting the current weight changes nothing. With R = 1:
 * O(P + N log N + (m + a) log(S N) + r (P + N)), as dch_map_add_node and
 * dch_map_remove_node.
 *
 * @return DCH_OK, DCH_EINVAL (NULL map), DCH_ENOENT, DCH_EFULL (the weight sum
 *         would pass UINT32_MAX), DCH_ENOMEM.
 */
DCH_API int dch_map_set_weight(dch_map *m, uint32_t id, uint32_t weight);

/**
 * Find a member by name. O(log N).
 *
 * @return DCH_OK, DCH_EINVAL (a NULL argument or a name that is empty,
 *         longer than DCH_NAME_MAX or holds a control byte), DCH_ENOENT.
 */
DCH_API int dch_map_find_node(const dch_map *m, const char *name,
                              uint32_t *id_out);

/**
 * A member's name, or NULL if `id` is not a member (or m is NULL). Borrowed:
 * valid until the member is removed or the map freed.
 */
DCH_API const char *dch_map_node_name(const dch_map *m, uint32_t id);

/** A member's weight; 0 if `id` is not a member (or m is NULL). */
DCH_API uint32_t dch_map_node_weight(const dch_map *m, uint32_t id);

/** How many slots a member owns; 0 if `id` is not a member (or m is NULL).
 *  With replicas, the slots it is the primary of. */
DCH_API uint32_t dch_map_node_slots(const dch_map *m, uint32_t id);

/** How many copies a member holds over all positions (primaries included);
 *  dch_map_node_slots when replicas is 1; 0 if `id` is not a member (or m
 *  is NULL). */
DCH_API uint32_t dch_map_node_copies(const dch_map *m, uint32_t id);

/** A member's zone; NULL if it is a zone of its own or not a member (or m
 *  is NULL). Borrowed: valid until the member is removed or the map freed. */
DCH_API const char *dch_map_node_zone(const dch_map *m, uint32_t id);

/** Number of members, including those of weight 0; 0 for NULL. */
DCH_API uint32_t dch_map_node_count(const dch_map *m);

/**
 * One past the highest id in use (0 for an empty map or NULL): every member's id is
 * below it, so `for (id = 0; id < dch_map_id_limit(m); id++)` with a
 * dch_map_node_name check visits every member.
 */
DCH_API uint32_t dch_map_id_limit(const dch_map *m);

/** Sum of all members' weights; 0 for NULL. */
DCH_API uint32_t dch_map_total_weight(const dch_map *m);

/** Copy the map's config (allocator included) to *cfg, as version 1 (its
 *  fields only, whatever DCH_MAP_CONFIG_VERSION becomes). NULL m or cfg:
 *  no-op. */
DCH_API void dch_map_get_config(const dch_map *m, dch_map_config *cfg);

/** P, the number of slots (units * slots_per_unit); 0 for NULL. */
DCH_API uint32_t dch_map_slot_count(const dch_map *m);

/** Owner of slot `slot` (its primary, with replicas); DCH_NODE_NONE if
 *  unowned, slot >= P or m is NULL. */
DCH_API uint32_t dch_map_slot_owner(const dch_map *m, uint32_t slot);

/**
 * The copies of a slot, primary first: writes min(cap, n) member ids to
 * ids and returns n, the slot's copy count: min(replicas, members of
 * positive weight). 0 for a slot out of range or a NULL map. ids may be
 * NULL when cap is 0. O(replicas).
 */
DCH_API size_t dch_map_slot_replicas(const dch_map *m, uint32_t slot, uint32_t *ids,
                                     size_t cap);

/** The slot a hash falls in: its top log2(P) bits; 0 for a NULL map. */
DCH_API uint32_t dch_map_slot_of(const dch_map *m, uint64_t hash);

/**
 * SipHash-2-4 of a key under the map's hash_key. key may be NULL if len is 0.
 * Returns 0 for a NULL map.
 */
DCH_API uint64_t dch_map_hash(const dch_map *m, const void *key, size_t len);

/**
 * The member that owns a hash: O(1), a shift and one table read.
 * DCH_NODE_NONE when no member has a positive weight (or m is NULL).
 */
DCH_API uint32_t dch_map_lookup_hash(const dch_map *m, uint64_t hash);

/** dch_map_lookup_hash(m, dch_map_hash(m, key, len)); DCH_NODE_NONE for a
 *  NULL map. */
DCH_API uint32_t dch_map_lookup(const dch_map *m, const void *key, size_t len);

/**
 * Every copy of a hash, primary first: dch_map_slot_replicas of its slot.
 * O(replicas), one table read: a slot's copies sit together in a block of
 * 2, 4, 8 or 16 bytes aligned to its size, so they share a cache line
 * whenever the allocator returns 16-byte aligned memory (libc does).
 * Returns 0 for a NULL map.
 */
DCH_API size_t dch_map_lookup_replicas_hash(const dch_map *m, uint64_t hash,
                                            uint32_t *ids, size_t cap);

/**
 * Ownership as ranges (see range.h): ascending, adjacent slots of one owner
 * merged, covering the hash space exactly once. Writes at most `cap` ranges
 * to `out` and always sets *count_out to the number of ranges there are, so a
 * first call with out = NULL, cap = 0 sizes the array. O(P).
 *
 * @return DCH_OK, DCH_EINVAL (NULL m or count_out, or out NULL with cap > 0),
 *         DCH_EFULL (cap too small: the first cap ranges were written).
 */
DCH_API int dch_map_ranges(const dch_map *m, dch_range *out, size_t cap,
                           size_t *count_out);

/**
 * Call fn for each range of dch_map_ranges in order, without allocating.
 * A non-zero return from fn stops the walk and is returned. O(P).
 *
 * @return DCH_OK, DCH_EINVAL (NULL m or fn), or fn's non-zero value.
 */
DCH_API int dch_map_foreach_range(const dch_map *m,
                                  int (*fn)(const dch_range *r, void *ctx),
                                  void *ctx);

/** dch_map_drain's modes: x stops being a primary (promotions only, no
 *  copy moves; with one copy a slot, as DCH_DRAIN_FULL). */
#define DCH_DRAIN_PRIMARY 1u
/** x holds nothing: its copies go where a removal would put them. */
#define DCH_DRAIN_FULL 2u

/**
 * Drain a member (see "Drains" above): it goes to the end of the list in
 * `mode`. Draining a member already drained in the same mode changes
 * nothing (nor the epoch); in the other mode, the old drain ends and the
 * new one goes to the end of the list. A member of weight 0 may be drained:
 * it holds nothing, so the effective table does not change, but the list
 * and the epoch do. Bumps the epoch when the list changes.
 *
 * @return DCH_OK, DCH_EINVAL (NULL map, mode neither DCH_DRAIN_PRIMARY nor
 *         DCH_DRAIN_FULL), DCH_ENOENT (id is not a member), DCH_ENOMEM.
 *         Nothing changes on error.
 */
DCH_API int dch_map_drain(dch_map *m, uint32_t id, uint32_t mode);

/**
 * End a member's drain: the effective table becomes what the remaining
 * drains, in their order, give. A member that is not drained: DCH_OK and
 * nothing changes (nor the epoch). Bumps the epoch otherwise.
 *
 * @return DCH_OK, DCH_EINVAL (NULL map), DCH_ENOENT (id is not a member),
 *         DCH_ENOMEM. Nothing changes on error.
 */
DCH_API int dch_map_undrain(dch_map *m, uint32_t id);

/** The mode of a member's drain as it was asked (DCH_DRAIN_PRIMARY stays
 *  so with one copy a slot, where it acts as DCH_DRAIN_FULL); 0 when it is
 *  not drained, not a member, or m is NULL. */
DCH_API uint32_t dch_map_node_drained(const dch_map *m, uint32_t id);

/**
 * The drains in force, in the order drained: writes min(cap, n) member ids
 * to ids and their modes to modes and returns n, how many there are. ids
 * or modes may be NULL (that list is not written); 0 for a NULL map.
 */
DCH_API size_t dch_map_drains(const dch_map *m, uint32_t *ids, uint32_t *modes, size_t cap);

/** The primary of a slot in the base table (see "Drains"): what
 *  dch_map_slot_owner reports when no drain is in force. */
DCH_API uint32_t dch_map_base_owner(const dch_map *m, uint32_t slot);

/** The copies of a slot in the base table, as dch_map_slot_replicas
 *  reports them when no drain is in force. */
DCH_API size_t dch_map_base_replicas(const dch_map *m, uint32_t slot, uint32_t *ids,
                                     size_t cap);

/**
 * The map's epoch: 0 for a new map, incremented by every call that changes
 * members, weights, slots, drains or load moves (balance.h). Clients that
 * share a map compare epochs to tell which copy is newer. 0 for NULL.
 */
DCH_API uint64_t dch_map_epoch(const dch_map *m);

/** Bytes the map holds through its allocator (table, members, names); 0 for
 *  NULL. */
DCH_API size_t dch_map_memory(const dch_map *m);

#ifdef __cplusplus
}
#endif

#endif /* DCH_MAP_H */
