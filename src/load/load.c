/* SPDX-License-Identifier: MIT */
/*
 * Per-slot load counters (include/dch/load.h states the contract;
 * docs/load.md gives the design, the race-freedom argument and the proofs
 * of exact sums and of the decay's rounding).
 *
 * Layout. `cells` holds one array of P running totals per thread index,
 * each written by its thread alone. Thread t's array starts at entry
 * PAD + t * stride, stride = P rounded up to PAD, plus PAD: between the
 * last total of one thread and the first of the next lie at least PAD
 * entries (128 bytes), and as many before the first array and after the
 * last, so no cache line of 64 or 128 bytes holds totals of two threads,
 * or a total and another object, whatever alignment the allocator gives.
 * `seen` (threads x P) and `acc` (P) belong to the snapshot side, which
 * runs one call at a time; the header is never written after creation, so
 * the hitting threads only ever read it.
 */
#include "dch/load.h"

#include "dch/error.h"

#include "alloc.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

/* 128 bytes of totals: the padding unit (cache lines are 64 bytes on
 * x86-64 and most ARM cores, 128 on some). */
#define PAD 16u

struct dch_load_counter {
    _Atomic uint64_t *block; /* the allocation holding cells */
    _Atomic uint64_t *cells; /* block + PAD: thread 0's totals */
    uint64_t *seen;          /* seen[t * P + s]: thread t's total at the last fold */
    uint64_t *acc;           /* acc[s]: slot s's accumulated load (saturating) */
    size_t stride;           /* entries from one thread's totals to the next */
    size_t block_len;        /* entries in block */
    uint32_t slots, threads;
    uint32_t shift; /* 32 - log2(P): a hash's slot is (hash >> 32) >> shift */
    dch_allocator alloc;
    bool has_alloc;
};

static const dch_allocator *alloc_of(const dch_load_counter *c)
{
    return c->has_alloc ? &c->alloc : NULL;
}

static int check_shape(uint32_t slots, uint32_t threads)
{
    if (slots == 0 || (slots & (slots - 1)) != 0 || threads == 0)
        return DCH_EINVAL;
    if (slots > DCH_LOAD_MAX_SLOTS || threads > DCH_LOAD_MAX_THREADS)
        return DCH_EFULL;
    return DCH_OK;
}

static uint32_t shift_of(uint32_t slots)
{
    uint32_t bits = 0;
    while ((UINT32_C(1) << bits) < slots)
        bits++;
    return 32u - bits;
}

/* The header's fields for the shape; the three blocks come next. Sizes are
 * counted in uint64_t so that a 32-bit size_t cannot wrap: a product that
 * does not fit is left for dch__alloc_array to refuse (DCH_ENOMEM). */
static dch_load_counter shape_of(uint32_t slots, uint32_t threads, const dch_allocator *a)
{
    dch_load_counter h;
    memset(&h, 0, sizeof h);
    const uint64_t stride = ((uint64_t)slots + PAD - 1) / PAD * PAD + PAD;
    const uint64_t block = PAD + stride * threads;
    h.stride = (size_t)stride;
    h.block_len = block <= SIZE_MAX ? (size_t)block : SIZE_MAX;
    h.slots = slots;
    h.threads = threads;
    h.shift = shift_of(slots);
    h.has_alloc = a != NULL;
    if (a != NULL)
        h.alloc = *a;
    return h;
}

int dch_load_counter_new_with(dch_load_counter **out, uint32_t slots, uint32_t threads,
                              const dch_allocator *allocator)
{
    if (out == NULL || !dch__allocator_valid(allocator))
        return DCH_EINVAL;
    const int rc = check_shape(slots, threads);
    if (rc != DCH_OK)
        return rc;
    const dch_load_counter h = shape_of(slots, threads, allocator);
    const dch_allocator *a = allocator;
    dch_load_counter *c = dch__alloc(a, sizeof *c);
    _Atomic uint64_t *block = dch__alloc_array(a, h.block_len, sizeof *block);
    /* seen and acc in one block: threads * P + P = (threads + 1) * P. */
    uint64_t *state = dch__alloc_array(a, (size_t)threads + 1, (size_t)slots * sizeof *state);
    if (c == NULL || block == NULL || state == NULL) {
        void *const blocks[] = {c, (void *)block, state};
        dch__free_all(a, blocks, 3);
        return DCH_ENOMEM;
    }
    *c = h;
    c->block = block;
    c->cells = block + PAD;
    c->seen = state;
    c->acc = state + (size_t)threads * slots;
    for (size_t i = 0; i < h.block_len; i++)
        atomic_init(&block[i], 0);
    memset(state, 0, ((size_t)threads + 1) * slots * sizeof *state);
    *out = c;
    return DCH_OK;
}

int dch_load_counter_new(dch_load_counter **out, uint32_t slots, uint32_t threads)
{
    return dch_load_counter_new_with(out, slots, threads, NULL);
}

void dch_load_counter_free(dch_load_counter *c)
{
    if (c == NULL)
        return;
    const dch_allocator *a = alloc_of(c);
    void *const blocks[] = {(void *)c->block, c->seen};
    dch__free_all(a, blocks, 2);
    /* The allocator is read from c, so c goes last, through a copy. */
    const dch_allocator copy = c->alloc;
    dch__free(c->has_alloc ? &copy : NULL, c);
}

uint32_t dch_load_slot_count(const dch_load_counter *c)
{
    return c ? c->slots : 0;
}

uint32_t dch_load_thread_count(const dch_load_counter *c)
{
    return c ? c->threads : 0;
}

size_t dch_load_memory(const dch_load_counter *c)
{
    if (c == NULL)
        return 0;
    return sizeof *c + c->block_len * sizeof *c->block +
           ((size_t)c->threads + 1) * c->slots * sizeof *c->seen;
}

int dch_load_hit(dch_load_counter *c, uint32_t thread, uint64_t hash, uint64_t amount)
{
    if (c == NULL || thread >= c->threads)
        return DCH_EINVAL;
    /* The slot as dch_map_slot_of computes it: two shifts keep P = 1
     * (shift 32) defined. Only this thread stores to this total (load.h,
     * "Threads"), so the relaxed load reads its own last store and the
     * store loses nothing; the snapshot side only loads it. */
    _Atomic uint64_t *t = c->cells + (size_t)thread * c->stride + ((hash >> 32) >> c->shift);
    atomic_store_explicit(t, atomic_load_explicit(t, memory_order_relaxed) + amount,
                          memory_order_relaxed);
    return DCH_OK;
}

/* a + d, or UINT64_MAX when that does not fit. */
static uint64_t add_saturating(uint64_t a, uint64_t d)
{
    const uint64_t r = a + d;
    return r < a ? UINT64_MAX : r;
}

/*
 * Add to acc what every thread's totals have grown since `seen`. A total
 * only grows (mod 2^64), and this thread's loads of one total never read
 * an older value than it read before (read-read coherence, the folds being
 * ordered), so cur - seen (mod 2^64) is exactly the sum of the amounts
 * stored between the two reads, when that sum is below 2^64
 * (docs/load.md, "Exact sums").
 */
static void fold(dch_load_counter *c)
{
    const size_t p = c->slots;
    for (size_t t = 0; t < c->threads; t++) {
        _Atomic uint64_t *cells = c->cells + t * c->stride;
        uint64_t *seen = c->seen + t * p;
        for (size_t s = 0; s < p; s++) {
            const uint64_t cur = atomic_load_explicit(&cells[s], memory_order_relaxed);
            c->acc[s] = add_saturating(c->acc[s], cur - seen[s]);
            seen[s] = cur;
        }
    }
}

int dch_load_snapshot(dch_load_counter *c, uint64_t *out_loads)
{
    if (c == NULL || out_loads == NULL)
        return DCH_EINVAL;
    fold(c);
    memcpy(out_loads, c->acc, (size_t)c->slots * sizeof *out_loads);
    return DCH_OK;
}

/*
 * floor(a * num / den) without a 128-bit product: a = q * den + r with
 * r < den, so a * num / den = q * num + r * num / den, where q * num <= a
 * (num <= den) and r * num < den^2 < 2^64 (den < 2^32); q * num is a whole
 * number, so the floor falls on the second term alone (docs/load.md,
 * "Decay").
 */
static uint64_t scale(uint64_t a, uint32_t num, uint32_t den)
{
    const uint64_t q = a / den, r = a % den;
    return q * num + r * num / den;
}

int dch_load_decay(dch_load_counter *c, uint32_t num, uint32_t den)
{
    if (c == NULL || den == 0 || num > den)
        return DCH_EINVAL;
    fold(c);
    if (num == den)
        return DCH_OK;
    for (size_t s = 0; s < c->slots; s++)
        c->acc[s] = num == 0 ? 0 : scale(c->acc[s], num, den);
    return DCH_OK;
}
