/* SPDX-License-Identifier: MIT */
/*
 * The member table a map and a ring share (members.h): entries by id, the
 * name index, the lowest free id, and the name rule.
 *
 * Names hold no NUL and no control byte, so strcmp's order is the order of
 * their bytes as unsigned values, shorter prefix first: the order ring.h
 * and the map's name index promise. Arrays grow by doubling from 8 entries
 * up to DCH__MEMBERS_MAX, and never shrink while the table lives.
 */
#include "members.h"

#include "dch/error.h"

#include "alloc.h"

#include <string.h>

#define FIRST_CAP 8u

size_t dch__name_length(const char *name)
{
    if (name == NULL)
        return SIZE_MAX;
    /* A byte at a time: the caller's buffer may end right after its NUL. */
    size_t len = 0;
    while (len <= DCH_NAME_MAX && name[len] != '\0') {
        const unsigned char c = (unsigned char)name[len];
        if (c < 0x20 || c == 0x7f)
            return SIZE_MAX;
        len++;
    }
    return (len == 0 || len > DCH_NAME_MAX) ? SIZE_MAX : len;
}

/* The entry of id, member or not; id < t->cap. The entry is a struct whose
 * first member is the name, so its address is the name's address. */
static char **name_slot(const dch__members *t, uint32_t id)
{
    return (char **)(void *)((unsigned char *)t->entries + (size_t)id * t->entry_size);
}

void dch__members_init(dch__members *t, const dch_allocator *a,
                       size_t entry_size)
{
    memset(t, 0, sizeof *t);
    t->alloc = a;
    t->entry_size = entry_size;
}

void dch__members_free(dch__members *t)
{
    for (uint32_t id = 0; id < t->id_limit; id++)
        dch__free(t->alloc, *name_slot(t, id));
    dch__free(t->alloc, t->entries);
    dch__free(t->alloc, t->by_name);
    dch__members_init(t, t->alloc, t->entry_size);
}

int dch__members_clone(dch__members *dst, const dch__members *src)
{
    *dst = *src;
    if (src->cap == 0)
        return DCH_OK;
    dst->entries = dch__alloc_array(src->alloc, src->cap, src->entry_size);
    dst->by_name = dch__alloc_array(src->alloc, src->cap, sizeof *dst->by_name);
    dst->id_limit = 0; /* raised as names are copied, so free() undoes a part */
    if (dst->entries == NULL || dst->by_name == NULL)
        goto fail;
    memcpy(dst->entries, src->entries, (size_t)src->cap * src->entry_size);
    memcpy(dst->by_name, src->by_name, (size_t)src->count * sizeof *dst->by_name);
    for (uint32_t id = 0; id < src->id_limit; id++) {
        const char *name = *name_slot(src, id);
        *name_slot(dst, id) = NULL;
        dst->id_limit = id + 1;
        if (name == NULL)
            continue;
        *name_slot(dst, id) = dch__strdup(src->alloc, name, strlen(name));
        if (*name_slot(dst, id) == NULL)
            goto fail;
    }
    return DCH_OK;
fail:
    dch__members_free(dst);
    return DCH_ENOMEM;
}

void *dch__members_get(const dch__members *t, uint32_t id)
{
    if (t == NULL || id >= t->id_limit || *name_slot(t, id) == NULL)
        return NULL;
    return name_slot(t, id);
}

const char *dch__members_name(const dch__members *t, uint32_t id)
{
    char **name = dch__members_get(t, id);
    return name ? *name : NULL;
}

/* Position of `name` in by_name, or where it would be inserted; *found set. */
static uint32_t name_position(const dch__members *t, const char *name, int *found)
{
    uint32_t lo = 0, hi = t->count;
    while (lo < hi) {
        const uint32_t mid = lo + (hi - lo) / 2;
        const int c = strcmp(*name_slot(t, t->by_name[mid]), name);
        if (c == 0) {
            *found = 1;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = 0;
    return lo;
}

int dch__members_find(const dch__members *t, const char *name,
                      uint32_t *id_out)
{
    if (dch__name_length(name) == SIZE_MAX)
        return DCH_EINVAL;
    int found;
    const uint32_t pos = name_position(t, name, &found);
    if (!found)
        return DCH_ENOENT;
    *id_out = t->by_name[pos];
    return DCH_OK;
}

int dch__members_plan(const dch__members *t, const char *name, uint32_t id,
                      dch__member_add *add)
{
    const size_t len = dch__name_length(name);
    if (len == SIZE_MAX)
        return DCH_EINVAL;
    int found;
    const uint32_t pos = name_position(t, name, &found);
    if (found)
        return DCH_EEXIST;
    if (t->count >= DCH__MEMBERS_MAX)
        return DCH_EFULL;
    if (id == DCH__MEMBERS_ANY_ID) {
        /* A hole below id_limit, else id_limit (no hole when count == id_limit). */
        id = t->count == t->id_limit ? t->id_limit : 0;
        while (id < t->id_limit && *name_slot(t, id) != NULL)
            id++;
    }
    memset(add, 0, sizeof *add);
    add->id = id;
    add->limit = id < t->id_limit ? t->id_limit : id + 1;
    add->pos = pos;
    add->len = len;
    add->name = name;
    return DCH_OK;
}

int dch__members_reserve(const dch__members *t, dch__member_add *add)
{
    const dch_allocator *a = t->alloc;
    add->entries = NULL;
    add->by_name = NULL;
    add->cap = t->cap;
    if (add->limit > t->cap) {
        uint32_t cap = t->cap ? t->cap : FIRST_CAP;
        while (cap < add->limit)
            cap = cap > DCH__MEMBERS_MAX / 2 ? DCH__MEMBERS_MAX : cap * 2;
        add->entries = dch__alloc_array(a, cap, t->entry_size);
        add->by_name = dch__alloc_array(a, cap, sizeof *add->by_name);
        add->cap = cap;
    }
    add->copy = dch__strdup(a, add->name, add->len);
    if (add->copy == NULL || (add->limit > t->cap && (add->entries == NULL ||
                                                      add->by_name == NULL))) {
        dch__members_cancel(t, add);
        return DCH_ENOMEM;
    }
    return DCH_OK;
}

void dch__members_cancel(const dch__members *t, dch__member_add *add)
{
    dch__free(t->alloc, add->copy);
    dch__free(t->alloc, add->entries);
    dch__free(t->alloc, add->by_name);
    add->copy = NULL;
    add->entries = NULL;
    add->by_name = NULL;
}

void *dch__members_commit(dch__members *t, dch__member_add *add)
{
    if (add->entries != NULL) {
        if (t->cap > 0) {
            memcpy(add->entries, t->entries, (size_t)t->cap * t->entry_size);
            memcpy(add->by_name, t->by_name, (size_t)t->count * sizeof *t->by_name);
        }
        memset((unsigned char *)add->entries + (size_t)t->cap * t->entry_size, 0,
               (size_t)(add->cap - t->cap) * t->entry_size);
        dch__free(t->alloc, t->entries);
        dch__free(t->alloc, t->by_name);
        t->entries = add->entries;
        t->by_name = add->by_name;
        t->cap = add->cap;
    }
    char **entry = name_slot(t, add->id);
    memset(entry, 0, t->entry_size);
    *entry = add->copy;
    memmove(t->by_name + add->pos + 1, t->by_name + add->pos,
            (size_t)(t->count - add->pos) * sizeof *t->by_name);
    t->by_name[add->pos] = (uint16_t)add->id;
    t->count++;
    t->id_limit = add->limit;
    t->name_bytes += add->len + 1;
    add->copy = NULL;
    add->entries = NULL;
    add->by_name = NULL;
    return entry;
}

void dch__members_remove(dch__members *t, uint32_t id)
{
    char **entry = name_slot(t, id);
    int found;
    const uint32_t pos = name_position(t, *entry, &found);
    memmove(t->by_name + pos, t->by_name + pos + 1,
            (size_t)(t->count - pos - 1) * sizeof *t->by_name);
    t->count--;
    t->name_bytes -= strlen(*entry) + 1;
    dch__free(t->alloc, *entry);
    memset(entry, 0, t->entry_size);
    while (t->id_limit > 0 && *name_slot(t, t->id_limit - 1) == NULL)
        t->id_limit--;
}

size_t dch__members_memory(const dch__members *t)
{
    return (size_t)t->cap * (t->entry_size + sizeof *t->by_name) + t->name_bytes;
}
