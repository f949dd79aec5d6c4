/* SPDX-License-Identifier: MIT */
/*
 * The member table of a map and of a ring: names, the name index, ids.
 * Internal to libdch.
 *
 * Entries are indexed by id and have a size the owner chooses; each starts
 * with `char *name`, NULL while the id is free, and the rest (weight, slot
 * count, add order) belongs to the owner. An id is the lowest free one when
 * its member is added and stays while the member stays. by_name lists the
 * members' ids in ascending name-byte order, for O(log N) lookup by name.
 *
 * Adding is split so that an owner can make a whole change all-or-nothing:
 * dch__members_plan checks the name and picks the id without allocating,
 * dch__members_reserve allocates everything the add needs without touching
 * the table, and dch__members_commit (cannot fail) or dch__members_cancel
 * ends it. Between reserve and commit the owner allocates its own scratch;
 * if that fails it cancels and the table is as it was.
 */
#ifndef DCH_SRC_MEMBERS_H
#define DCH_SRC_MEMBERS_H

#include "dch/common.h"

#include <stddef.h>
#include <stdint.h>

/** Most members a table holds: ids stay below 0xffff, which owners may use
 *  as a mark (no id). */
#define DCH__MEMBERS_MAX 65535u

/** For dch__members_plan: give the lowest free id. */
#define DCH__MEMBERS_ANY_ID UINT32_MAX

/**
 * Length of a valid member name: returns 1 .. DCH_NAME_MAX, or SIZE_MAX when
 * the name is NULL, empty, has no NUL within its first DCH_NAME_MAX + 1
 * bytes, or holds a control byte (below 0x20, or 0x7f). Names are printed
 * one per line and in tab-separated columns by tools, so a TAB or a newline
 * inside one would forge a column or a record. Never reads past the NUL or
 * past DCH_NAME_MAX + 1 bytes.
 */
size_t dch__name_length(const char *name);

typedef struct dch__members {
    const dch_allocator *alloc;
    void *entries; /* cap entries of entry_size bytes */
    uint16_t *by_name; /* the count member ids, ascending by name bytes */
    size_t entry_size;
    uint32_t cap;
    uint32_t count;
    uint32_t id_limit; /* one past the highest id in use */
    size_t name_bytes; /* sum of name lengths + 1 */
} dch__members;

/** One add in progress: filled by plan, then reserve. */
typedef struct dch__member_add {
    uint32_t id; /* the new member's id */
    uint32_t limit; /* id_limit once it is added */
    uint32_t pos; /* its place in by_name */
    size_t len; /* its name's length */
    const char *name;
    char *copy; /* reserved copy of the name */
    void *entries; /* reserved larger arrays; NULL when the table has room */
    uint16_t *by_name;
    uint32_t cap;
} dch__member_add;

/** An empty table of entries of entry_size bytes (a struct whose first
 *  member is `char *name`). Allocates nothing. */
void dch__members_init(dch__members *t, const dch_allocator *a,
                       size_t entry_size);

/** Free every name and both arrays; t is then empty. */
void dch__members_free(dch__members *t);

/**
 * Deep copy of src into *dst (which is overwritten, not freed), names
 * included. DCH_OK or DCH_ENOMEM; on failure nothing stays allocated and
 * *dst is an empty table.
 */
int dch__members_clone(dch__members *dst, const dch__members *src);

/** The entry of member `id`, NULL when id is not a member (or t is NULL). */
void *dch__members_get(const dch__members *t, uint32_t id);

/** The name of member `id`, NULL when id is not a member. */
const char *dch__members_name(const dch__members *t, uint32_t id);

/**
 * The id of the member named `name`.
 * @return DCH_OK, DCH_EINVAL (an invalid name, see dch__name_length),
 *         DCH_ENOENT.
 */
int dch__members_find(const dch__members *t, const char *name,
                      uint32_t *id_out);

/**
 * First step of an add: check `name` and choose the id, allocating nothing.
 * id is DCH__MEMBERS_ANY_ID for the lowest free id, or a free id below
 * DCH__MEMBERS_MAX to use that one.
 * @return DCH_OK, DCH_EINVAL (invalid name), DCH_EEXIST (name in use),
 *         DCH_EFULL (DCH__MEMBERS_MAX members already).
 */
int dch__members_plan(const dch__members *t, const char *name, uint32_t id,
                      dch__member_add *add);

/** Second step: allocate the name's copy and any larger arrays. The table
 *  is not touched. DCH_OK, or DCH_ENOMEM with nothing allocated. */
int dch__members_reserve(const dch__members *t, dch__member_add *add);

/** Give back what reserve allocated (after DCH_OK from it). */
void dch__members_cancel(const dch__members *t, dch__member_add *add);

/** Last step: install the member. Cannot fail. Returns its entry, all zero
 *  but the name. */
void *dch__members_commit(dch__members *t, dch__member_add *add);

/** Remove member `id` (which must be one): frees its name and zeroes its
 *  entry. Never allocates. */
void dch__members_remove(dch__members *t, uint32_t id);

/** Bytes the table holds through its allocator. */
size_t dch__members_memory(const dch__members *t);

#endif /* DCH_SRC_MEMBERS_H */
