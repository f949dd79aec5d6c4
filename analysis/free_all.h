/* SPDX-License-Identifier: MIT */
/*
 * Freeing a structure's arrays in one statement: AN_FREE_ALL(a->x, a->y)
 * frees each pointer named, in order, NULL ones too (as free does), so a
 * structure's free function lists its arrays once instead of a free() a
 * line.
 */
#ifndef DCH_ANALYSIS_FREE_ALL_H
#define DCH_ANALYSIS_FREE_ALL_H

#include <stddef.h>
#include <stdlib.h>

/** free() each of p[0 .. n-1]. */
static inline void an_free_each(void *const *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(p[i]);
}

/* The pointers become a compound literal; sizeof does not evaluate them. */
#define AN_FREE_ALL(...)                                                                  \
    an_free_each((void *const[]){__VA_ARGS__},                                            \
                 sizeof((void *const[]){__VA_ARGS__}) / sizeof(void *))

#endif /* DCH_ANALYSIS_FREE_ALL_H */
