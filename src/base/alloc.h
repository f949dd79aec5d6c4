/* SPDX-License-Identifier: MIT */
/*
 * Allocation through an object's dch_allocator (libc when none is given).
 * Internal to libdch.
 */
#ifndef DCH_SRC_ALLOC_H
#define DCH_SRC_ALLOC_H

#include "dch/common.h"

/** Non-zero when `a` is NULL or names all three functions. */
int dch__allocator_valid(const dch_allocator *a);

void *dch__alloc(const dch_allocator *a, size_t size);
void *dch__realloc(const dch_allocator *a, void *ptr, size_t size);
void dch__free(const dch_allocator *a, void *ptr);

/** n * size bytes, or NULL when the product overflows or allocation fails. */
void *dch__alloc_array(const dch_allocator *a, size_t n, size_t size);

/** Free each of the n blocks (NULL entries included) of an object's
 *  scratch, for the functions that hold several at once. */
void dch__free_all(const dch_allocator *a, void *const *blocks, size_t n);

/** Copy of a NUL-terminated string of length len. */
char *dch__strdup(const dch_allocator *a, const char *s, size_t len);

#endif /* DCH_SRC_ALLOC_H */
