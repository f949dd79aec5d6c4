/* SPDX-License-Identifier: MIT */
/*
 * Allocation through a caller's dch_allocator, falling back to libc. Every
 * allocation an object makes goes through here, which is what lets tests fail
 * the k-th allocation of any call.
 */
#include "alloc.h"

#include <stdlib.h>
#include <string.h>

int dch__allocator_valid(const dch_allocator *a)
{
    return a == NULL || (a->alloc != NULL && a->realloc != NULL && a->free != NULL);
}

void *dch__alloc(const dch_allocator *a, size_t size)
{
    if (size == 0)
        size = 1;
    return a ? a->alloc(a->ctx, size) : malloc(size);
}

void *dch__realloc(const dch_allocator *a, void *ptr, size_t size)
{
    if (size == 0)
        size = 1;
    return a ? a->realloc(a->ctx, ptr, size) : realloc(ptr, size);
}

void dch__free(const dch_allocator *a, void *ptr)
{
    if (ptr == NULL)
        return;
    if (a)
        a->free(a->ctx, ptr);
    else
        free(ptr);
}

void *dch__alloc_array(const dch_allocator *a, size_t n, size_t size)
{
    if (size != 0 && n > SIZE_MAX / size)
        return NULL;
    return dch__alloc(a, n * size);
}

char *dch__strdup(const dch_allocator *a, const char *s, size_t len)
{
    char *copy = dch__alloc(a, len + 1);
    if (copy != NULL) {
        memcpy(copy, s, len);
        copy[len] = '\0';
    }
    return copy;
}

void dch__free_all(const dch_allocator *a, void *const *blocks, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dch__free(a, blocks[i]);
}
