/* SPDX-License-Identifier: MIT */
/*
 * libdch: shared definitions for every public header.
 *
 * DCH_API marks the exported symbols; everything else in the library is built
 * with hidden visibility, so a shared libdch exports only dch_ names.
 */
#ifndef DCH_COMMON_H
#define DCH_COMMON_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32) && defined(DCH_SHARED_BUILD)
#define DCH_API __declspec(dllexport)
#elif defined(__GNUC__) || defined(__clang__)
#define DCH_API __attribute__((visibility("default")))
#else
#define DCH_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** The id no member has: lookups return it when no member has a positive weight. */
#define DCH_NODE_NONE UINT32_MAX

/** Longest member name, in bytes, not counting the terminating NUL. */
#define DCH_NAME_MAX 255u

/**
 * A caller-supplied allocator, used for every allocation of the object whose
 * config names it (clones inherit it). `realloc` follows C's realloc contract
 * (NULL ptr allocates; on failure the old block is untouched and NULL is
 * returned); `free` accepts NULL. `ctx` is passed back unchanged. The allocator
 * must outlive every object that uses it.
 */
typedef struct dch_allocator {
    void *(*alloc)(void *ctx, size_t size);
    void *(*realloc)(void *ctx, void *ptr, size_t size);
    void (*free)(void *ctx, void *ptr);
    void *ctx;
} dch_allocator;

#ifdef __cplusplus
}
#endif

#endif /* DCH_COMMON_H */
