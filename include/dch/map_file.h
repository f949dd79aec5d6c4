/* SPDX-License-Identifier: MIT */
/*
 * Map files: a dch_map as bytes, and its routing fingerprint.
 *
 * A map is shared by shipping it, not by replaying the calls that built it
 * (see map.h). dch_map_save writes a map as a self-checking byte string and
 * dch_map_load reads one back, checking every field and every invariant of
 * the map before returning it, so bytes from anywhere (a disk, a network, an
 * attacker) give either a valid map or an error, never a crash or a map that
 * breaks its contract. dch_map_save_file and dch_map_load_file do the same
 * with a file, replacing it atomically (dch_map_load_with and
 * dch_map_load_file_with take an allocator). dch_map_fingerprint digests what
 * decides routing, so two clients know in one comparison that they route
 * every key the same way.
 *
 * Format, version 1 (a settled map with one copy a slot and no zone), 2 (a
 * map in transition, see map_stage.h), 3 (a settled map with replicas or
 * zones, see map.h), 4 (with drains) and 5 (with load moves, balance.h).
 * All integers are little-endian; uleb is unsigned LEB128 (7 bits per
 * byte, low group first, high bit set on every byte but the last) in its
 * shortest form, so its last byte is non-zero unless the value is 0 and it
 * is one byte long (an id takes at most 3 bytes, 65535 being FF FF 03, and
 * a run length at most 4).
 *
 *   offset size  field
 *   0      8     magic 89 44 43 48 0D 0A 1A 0A ("\x89DCH\r\n\x1a\n")
 *   8      4     u32 format version, 1 to 5
 *   12     4     u32 N, member count, 0 .. DCH_MAP_MAX_NODES
 *   16     8     u64 file length in bytes, checksum included
 *   24     4     u32 units, a power of two
 *   28     4     u32 slots per unit, a power of two; P = units * slots per
 *                unit is at most DCH_MAP_MAX_SLOTS
 *   32     16    hash key
 *   48     8     u64 epoch
 *   56           versions 3 to 5: u32 R, copies of every slot (replicas),
 *                1 .. DCH_MAP_MAX_REPLICAS
 *                N member records, ids strictly ascending, each:
 *                  u16 id (0 .. 65534), u32 weight, u32 slots owned (as
 *                  primary), versions 3 to 5: u32 copies held (all
 *                  positions), then u8 name length L (1 .. 255), L name
 *                  bytes (none below 0x20, no 0x7f), versions 3 to 5: u8
 *                  zone length Z (0 .. 255; 0: a zone of its own), Z zone
 *                  bytes (the name rules)
 *                the table, n entries a slot: in versions 1 and 2, n = 1,
 *                  the slot's owner (65535 for unowned); in versions 3 to 5,
 *                  n = min(R, members of positive weight), the slot's
 *                  copies primary first (n = 0 when every weight is 0):
 *                  u8 encoding, 0 (raw) or 1 (runs)
 *                  raw:  P * n u16 entries, slot by slot
 *                  runs: u32 runs (1 .. P), then runs of (n uleb entries,
 *                        uleb length >= 1) in slot order, each the entries
 *                        of `length` consecutive slots; adjacent runs have
 *                        different entries and the lengths sum to P
 *                version 2 only, the transition record (16 bytes):
 *                  u64 target fingerprint, u32 step i, u32 steps n,
 *                  1 <= i < n
 *                versions 4 and 5, the drains (map.h, "Drains"): D entries
 *                  in the order drained, each u16 id (a member, at most
 *                  once) and u8 mode (1 PRIMARY, 2 FULL), then u32 D (>= 1
 *                  in version 4); the table and the counts above are the
 *                  base's
 *                version 5 only, the load moves (balance.h): M entries in
 *                  ascending slot order, each u32 slot and w u16 copies
 *                  (primary first), then u32 w (the copies a slot holds
 *                  under the drains, 1 .. DCH_MAP_MAX_REPLICAS), then u32
 *                  M >= 1
 *   len-8  8     u64 checksum: SipHash-2-4 under the 16 ASCII bytes
 *                "dch map checksum" of bytes 0 .. len-9
 *
 * The writer uses runs when they are strictly smaller than the raw table and
 * is deterministic, so saving a loaded map gives the same bytes. It writes
 * the oldest version that holds the map: version 1 for every settled map
 * with one copy a slot and no member in a zone, so a library that reads only
 * version 1 reads every such map (and gives DCH_EVERSION for the others);
 * version 2 for a step map (which has one copy a slot and no zone); version
 * 3 for every other settled map; version 4 for a map with a drain in force;
 * version 5 for a map with a load move in force. Versions 1 and 2 load as
 * maps with one copy a slot and no zone, versions 1 to 3 with no drain,
 * versions 1 to 4 with no load move. The checksum catches accidental damage; it is
 * not a signature, so bytes from an untrusted source still need
 * authenticating elsewhere.
 *
 * Load checks, and the error each failure gives: bad magic or fewer than 12
 * bytes, DCH_ECORRUPT; a version other than 1 to 5, DCH_EVERSION; then,
 * all as DCH_ECORRUPT, a length field other than the byte count, a bad
 * checksum, any field out of its range above (the step of a transition
 * record and R included), a record or run reaching past the table or a
 * table ending before the checksum, a duplicate name, an invalid zone, a
 * slot owned by a non-member or a member of weight 0 (or any owned slot
 * when every weight is 0, or an unowned one otherwise), a weight sum above
 * UINT32_MAX, a stored slot or copy count that is not the member's count
 * in the table, and, for a settled map (versions 1 and 3) with one copy a
 * slot or no member in a zone, a member 2 or more slots from its share
 * P*w/W: map.h promises every such map a call leaves within that bound,
 * so one outside it was not built by this library (with replicas and
 * zones map.h promises the bound only under a condition on the zones'
 * weights, so such a map is not held to it). A map in transition (version
 * 2) sits between two such maps and is not held to the bound. In version 3
 * also: a slot whose copies repeat a member, hold a member of weight 0, or
 * fall in fewer than min(n, zones) zones (map.h's replica promises 1 and
 * 2; a member without a zone is a zone of its own), and a file with R = 1 and no zone, which the writer
 * writes as version 1. In version 4 also: a drain count of 0 or one that
 * does not fit the file, a drain of a non-member, a member drained twice,
 * and a mode other than 1 and 2. In version 5 also: the drains' checks
 * (with 0 drains allowed), a move count of 0, w out of its range or other
 * than the copies a slot holds under the drains, moves that do not fit the
 * file, slots not strictly ascending below P, and a move that a balancing
 * call could not have left in force (docs/balance.md, "The layer"): copies
 * equal to the slot's under the drains, repeating a member, spanning fewer
 * zones, or handing the slot to a member of weight 0 or under a drain.
 */
#ifndef DCH_MAP_FILE_H
#define DCH_MAP_FILE_H

#include "common.h"
#include "map.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The format version of a settled map with one copy a slot and no zone,
 *  the one dch_map_save writes for it. */
#define DCH_MAP_FORMAT_VERSION 1u
/**
 * The format version of a map in transition (map_stage.h): version 1 with a
 * transition record after the slot table. dch_map_load reads both.
 */
#define DCH_MAP_FORMAT_VERSION_STEP 2u
/**
 * The format version of a settled map with more than one copy a slot or a
 * member in a zone: version 1 with R, zones, copy counts and every slot's
 * copies. dch_map_load reads it.
 */
#define DCH_MAP_FORMAT_VERSION_REPLICAS 3u
/**
 * The format version of a map with a drain in force (map.h, "Drains"):
 * version 3 (the base table, with R, zones and copy counts) with the
 * drains after the table. dch_map_load reads it.
 */
#define DCH_MAP_FORMAT_VERSION_DRAINS 4u
/**
 * The format version of a map with a load move in force (balance.h):
 * version 4 (with a drain count of 0 allowed) with the load moves after
 * the drains. dch_map_load reads it.
 */
#define DCH_MAP_FORMAT_VERSION_BALANCE 5u

/**
 * Serialise a map.
 *
 * Always sets *len_out to the size of the serialisation; writes it to buf
 * only when buf is not NULL, so a first call with buf = NULL sizes the
 * buffer. Deterministic: the same map state gives the same bytes.
 * O(P * R + N), R the copies a slot.
 *
 * @param m        the map.
 * @param buf      where to write; NULL to only measure.
 * @param cap      bytes available at buf.
 * @param[out] len_out  bytes the serialisation takes.
 * @return DCH_OK; DCH_EINVAL (NULL m or len_out); DCH_EFULL (buf given and
 *         cap below *len_out: nothing is written; the same code as a short
 *         array for dch_map_ranges).
 */
DCH_API int dch_map_save(const dch_map *m, void *buf, size_t cap,
                         size_t *len_out);

/**
 * Build a map from bytes written by dch_map_save, with libc allocation.
 * Same as dch_map_load_with(out, buf, len, NULL).
 */
DCH_API int dch_map_load(dch_map **out, const void *buf, size_t len);

/**
 * Build a map from bytes written by dch_map_save, allocating through
 * `allocator`.
 *
 * The bytes are treated as hostile: nothing is read outside buf[0 .. len-1]
 * and every check listed at the top of this header passes before the map is
 * returned. The map has the saved config (replicas included), members,
 * ids, zones, slot table, every slot's copies and epoch, and the transition record of a version 2 file
 * (dch_map_in_transition); its config names `allocator`.
 *
 * @param[out] out  the map, owned by the caller; untouched on error.
 * @param buf       the bytes; may be NULL when len is 0.
 * @param len       their number.
 * @param allocator for the map and the scratch of the load; NULL means libc.
 * @return DCH_OK; DCH_EINVAL (NULL out, NULL buf with len > 0, an allocator
 *         lacking a function); DCH_ECORRUPT (damaged, truncated, or not a
 *         map file); DCH_EVERSION (a format version this library does not
 *         read); DCH_ENOMEM. O(len + P + N log N).
 */
DCH_API int dch_map_load_with(dch_map **out, const void *buf, size_t len,
                              const dch_allocator *allocator);

/**
 * Write a map to a file, atomically.
 *
 * The bytes go to a new file beside `path` (`path` followed by
 * ".<pid>.<n>.tmp", created exclusively), which is flushed to disk and then
 * renamed over `path`; the directory is flushed after the rename. A crash at
 * any point leaves either the old file or the new one, complete, at `path`,
 * and possibly a stray temporary file, never a partial map. A file that
 * already exists at `path` keeps its permission bits; a new one gets 0666
 * less the umask. Everything is allocated before the first file operation.
 * On failure the temporary file is removed and `path` is untouched, except
 * when only the final flush of the directory fails: the new map is then in
 * place but its rename may not survive a power loss. POSIX only.
 *
 * @return DCH_OK; DCH_EINVAL (a NULL argument or an empty path); DCH_EIO
 *         (a system call failed; errno says which way); DCH_ENOMEM (nothing
 *         was written).
 */
DCH_API int dch_map_save_file(const dch_map *m, const char *path);

/**
 * Read a map from a file written by dch_map_save_file, with libc allocation.
 * Same as dch_map_load_file_with(out, path, NULL).
 */
DCH_API int dch_map_load_file(dch_map **out, const char *path);

/**
 * Read a map from a file written by dch_map_save_file (or any file holding
 * exactly what dch_map_save writes), allocating through `allocator`, as
 * dch_map_load_with does for bytes.
 *
 * Reads no more than the length the file's header announces, which may be
 * at most what the largest possible map takes, plus one byte to check that
 * nothing follows; works on pipes. The file's bytes are held, through
 * `allocator`, only while the map is built.
 *
 * @param[out] out  the map, owned by the caller; untouched on error.
 * @param path      the file.
 * @param allocator for the map and the bytes read; NULL means libc.
 * @return DCH_OK; DCH_EINVAL (a NULL out or path, or an allocator lacking a
 *         function); DCH_EIO (the file cannot be opened or read; errno says
 *         why); DCH_ECORRUPT (including data after the map, or a file
 *         ending early); DCH_EVERSION; DCH_ENOMEM.
 */
DCH_API int dch_map_load_file_with(dch_map **out, const char *path,
                                   const dch_allocator *allocator);

/**
 * A 64-bit digest of everything that decides routing: the config (units,
 * slots per unit, hash key, and with replicas R), the members (id, weight,
 * name, and with replicas zone), the table (every slot's owner, and with
 * replicas every slot's copies; the base table, map.h "Drains") and the
 * drains in force, but not the epoch, the allocator or the file encoding. Two maps with equal fingerprints route every key to the
 * same id and name, and with replicas to the same copies in the same order
 * (barring a 2^-64 accident; the digest is not meant to resist forgery).
 *
 * Definition with one copy a slot (R = 1; zones then change nothing and are
 * not digested): SipHash-2-4, under the 16 ASCII bytes "dch fingerprint1", of
 *   u32 units, u32 slots per unit, the 16 hash key bytes, u32 N,
 *   for each member by ascending id: u16 id, u32 weight, u8 name length L,
 *   L name bytes;
 *   then the P slot owners as u16 (65535 for unowned), in slot order.
 * With R >= 2: SipHash-2-4, under "dch fingerprintR", of
 *   u32 units, u32 slots per unit, the 16 hash key bytes, u32 R, u32 N,
 *   for each member by ascending id: u16 id, u32 weight, u8 name length L,
 *   L name bytes, u8 zone length Z (0 for none), Z zone bytes;
 *   then R u16 a slot in slot order: its copies primary first, 65535 past
 *   its copy count.
 * Either way, when a drain is in force: then u32 D and, for each drain in
 * the order drained, u16 id and u8 mode (a map with no drain digests as
 * before drains existed). Every integer little-endian. Returns 0 for a NULL map. O(P * R + N).
 */
DCH_API uint64_t dch_map_fingerprint(const dch_map *m);

#ifdef __cplusplus
}
#endif

#endif /* DCH_MAP_FILE_H */
