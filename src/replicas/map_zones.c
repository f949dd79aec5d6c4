/* SPDX-License-Identifier: MIT */
/*
 * The zone names of a map (map_zones.h): a reference-counted name table.
 * Arrays grow by doubling from 4 entries and never shrink.
 */
#include "map_zones.h"

#include "dch/error.h"

#include "alloc.h"

#include <string.h>

void dch__zones_init(dch__zones *z, const dch_allocator *a)
{
    memset(z, 0, sizeof *z);
    z->alloc = a;
}

void dch__zones_free(dch__zones *z)
{
    for (uint32_t i = 0; i < z->cap; i++)
        dch__free(z->alloc, z->names[i]);
    dch__free(z->alloc, z->names);
    dch__free(z->alloc, z->refs);
    dch__zones_init(z, z->alloc);
}

int dch__zones_clone(dch__zones *dst, const dch__zones *src)
{
    dch__zones_init(dst, src->alloc);
    if (src->cap == 0)
        return DCH_OK;
    dst->names = dch__alloc_array(src->alloc, src->cap, sizeof *dst->names);
    dst->refs = dch__alloc_array(src->alloc, src->cap, sizeof *dst->refs);
    if (dst->names == NULL || dst->refs == NULL) {
        dch__free(src->alloc, dst->names);
        dch__free(src->alloc, dst->refs);
        dch__zones_init(dst, src->alloc);
        return DCH_ENOMEM;
    }
    memset(dst->names, 0, (size_t)src->cap * sizeof *dst->names);
    dst->cap = src->cap;
    memcpy(dst->refs, src->refs, (size_t)src->cap * sizeof *dst->refs);
    for (uint32_t i = 0; i < src->cap; i++) {
        if (src->names[i] == NULL)
            continue;
        dst->names[i] = dch__strdup(src->alloc, src->names[i], strlen(src->names[i]));
        if (dst->names[i] == NULL) {
            dch__zones_free(dst);
            return DCH_ENOMEM;
        }
    }
    return DCH_OK;
}

int dch__zones_reserve(const dch__zones *z, const char *name, dch__zone_add *add)
{
    memset(add, 0, sizeof *add);
    uint32_t free_index = UINT32_MAX;
    for (uint32_t i = 0; i < z->cap; i++) {
        if (z->names[i] == NULL) {
            if (free_index == UINT32_MAX)
                free_index = i;
        } else if (strcmp(z->names[i], name) == 0) {
            add->index = i;
            return DCH_OK;
        }
    }
    add->copy = dch__strdup(z->alloc, name, strlen(name));
    if (add->copy == NULL)
        return DCH_ENOMEM;
    if (free_index != UINT32_MAX) {
        add->index = free_index;
        return DCH_OK;
    }
    /* Full: grow both arrays now, so that commit cannot fail. Members are
     * at most 65535, so zones are too and the doubling cannot overflow. */
    add->cap = z->cap ? 2 * z->cap : 4;
    add->names = dch__alloc_array(z->alloc, add->cap, sizeof *add->names);
    add->refs = dch__alloc_array(z->alloc, add->cap, sizeof *add->refs);
    if (add->names == NULL || add->refs == NULL) {
        dch__zones_cancel(z, add);
        return DCH_ENOMEM;
    }
    memset(add->names, 0, (size_t)add->cap * sizeof *add->names);
    memset(add->refs, 0, (size_t)add->cap * sizeof *add->refs);
    if (z->cap > 0) {
        memcpy(add->names, z->names, (size_t)z->cap * sizeof *z->names);
        memcpy(add->refs, z->refs, (size_t)z->cap * sizeof *z->refs);
    }
    add->index = z->cap;
    return DCH_OK;
}

void dch__zones_cancel(const dch__zones *z, dch__zone_add *add)
{
    dch__free(z->alloc, add->copy);
    dch__free(z->alloc, add->names);
    dch__free(z->alloc, add->refs);
    memset(add, 0, sizeof *add);
}

uint32_t dch__zones_commit(dch__zones *z, dch__zone_add *add)
{
    if (add->names != NULL) {
        dch__free(z->alloc, z->names);
        dch__free(z->alloc, z->refs);
        z->names = add->names;
        z->refs = add->refs;
        z->cap = add->cap;
    }
    if (add->copy != NULL)
        z->names[add->index] = add->copy;
    z->refs[add->index]++;
    const uint32_t index = add->index;
    memset(add, 0, sizeof *add);
    return index;
}

void dch__zones_release(dch__zones *z, uint32_t index)
{
    if (--z->refs[index] == 0) {
        dch__free(z->alloc, z->names[index]);
        z->names[index] = NULL;
    }
}

const char *dch__zones_name(const dch__zones *z, uint32_t index)
{
    return index < z->cap ? z->names[index] : NULL;
}

size_t dch__zones_memory(const dch__zones *z)
{
    size_t bytes = (size_t)z->cap * (sizeof *z->names + sizeof *z->refs);
    for (uint32_t i = 0; i < z->cap; i++)
        if (z->names[i] != NULL)
            bytes += strlen(z->names[i]) + 1;
    return bytes;
}
