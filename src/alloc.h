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

/** Copy of a NUL-terminated string of length len. */
char *dch__strdup(const dch_allocator *a, const char *s, size_t len);

/**
 * Length of a valid member name: returns 1 .. DCH_NAME_MAX, or SIZE_MAX when
 * the name is NULL, empty, has no NUL within its first DCH_NAME_MAX + 1
 * bytes, or holds a control byte (below 0x20, or 0x7f). Names are printed
 * one per line and in tab-separated columns by tools, so a TAB or a newline
 * inside one would forge a column or a record. Never reads past the NUL or
 * past DCH_NAME_MAX + 1 bytes.
 */
size_t dch__name_length(const char *name);

#endif /* DCH_SRC_ALLOC_H */
