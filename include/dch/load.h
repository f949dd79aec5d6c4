/* SPDX-License-Identifier: MIT */
/*
 * Per-slot load counters: what a server counts in its request path, so that
 * a map can be judged (and balanced) by the load its slots carry rather than
 * by how many slots each member holds.
 *
 * A counter has P slots, P a power of two as a map's slot count is, and a
 * hash falls in the slot a map of P slots gives it (dch_map_slot_of): its
 * top log2(P) bits, (uint32_t)((hash >> 32) >> (32 - log2 P)). A server
 * makes one counter with the P of its map and a thread index for each of
 * its request threads; each request calls dch_load_hit with its thread's
 * index, the key's hash and an amount (1 for a request, or bytes, or
 * microseconds). A monitoring thread calls dch_load_snapshot, which gives
 * every slot's accumulated load, and dch_load_decay, which scales every
 * slot's accumulated load by num/den (7/8 every second, say) so that it
 * follows the recent load.
 *
 * How (docs/load.md, installed in share/doc/libdch, gives the design and
 * proves each promise below): every thread index owns an array of P
 * running totals, written by that thread alone with a relaxed atomic load
 * and store (plain loads and stores on x86-64 and ARMv8: no locked
 * instruction, no fence), at least 128 bytes away from any other thread's
 * array, so that no cache line is shared between two hitting threads. The
 * snapshot side keeps, for every thread and slot, the running total it last
 * read, and for every slot the accumulated load; a snapshot adds to each
 * slot what every thread's total has grown since it was last read (a fold).
 *
 * Promises (N(s) the sum of every amount hit on slot s, by every thread,
 * since the counter was made):
 *  1. Exact sums: without decay, a snapshot taken after every hit it is to
 *     count happens before it (the hitting threads joined, or synchronised
 *     with the snapshot's thread through a mutex or a release/acquire pair)
 *     gives min(N(s), UINT64_MAX) for every slot s, provided no thread adds
 *     2^64 or more to one slot between two consecutive folds (dch_load_snapshot
 *     and dch_load_decay each fold once). A snapshot running concurrently
 *     with hits counts each hit either in it or in a later fold, never
 *     twice, never lost: every slot's load in a snapshot is at least its
 *     load in the snapshot before (unless a decay came between).
 *  2. Decay: dch_load_decay(c, num, den) first folds, then replaces every
 *     slot's accumulated load a by floor(a * num / den), computed exactly
 *     (no intermediate overflow, no floating point): rounded toward zero.
 *     Hits counted after the decay's fold are not scaled by it.
 *  3. Saturation, not wrap: a slot's accumulated load stops at UINT64_MAX
 *     (and stays there until a decay lowers it); it never wraps to a small
 *     number. The running totals behind it wrap modulo 2^64, which is why
 *     the limit of 1 is per fold: a thread that adds 2^64 or more to one
 *     slot between two folds has that sum counted modulo 2^64.
 *  4. Data-race freedom (C11): hits of distinct thread indices run
 *     concurrently with each other and with one snapshot or decay, with no
 *     lock and no read-modify-write instruction.
 *
 * Threads, which this object's functions obey instead of dch.h's general
 * rule (a call on a non-const object runs alone):
 *  - dch_load_hit with thread index t may run concurrently with any hit of
 *    another index and with dch_load_snapshot or dch_load_decay, but one OS
 *    thread at a time uses index t: two threads that hit with the same
 *    index concurrently lose amounts (each thread's load and store of a
 *    total are two steps). To hand index t from one thread to another, make
 *    the first thread's last hit happen before the second's first one (a
 *    mutex, a thread join, a release/acquire pair).
 *  - dch_load_snapshot and dch_load_decay run one at a time: calls from
 *    different threads must be ordered by happens-before (a mutex, say).
 *  - The counter must be shared with the hitting threads after
 *    dch_load_counter_new returns (thread creation, a mutex, a release
 *    store), and freed after every other call on it has returned and
 *    happens before the free.
 *  - The getters only read what is fixed at creation, and may run at any
 *    time.
 * Each 64-bit total is an _Atomic uint64_t: lock-free on every 64-bit
 * target and on the usual 32-bit ones (ATOMIC_LLONG_LOCK_FREE is 2); where
 * it is not, the atomics library serialises each load and store.
 *
 * Cost: a hit is two bounds checks, a multiply, two shifts, one load and
 * one store of the thread's own cache line (dch-bench --only load measures it against
 * incrementing a bare array: docs/benchmark.md). A snapshot or a decay reads
 * every thread's every total: O(threads * P) with no allocation. Memory,
 * allocated at creation and never again: 16 bytes a slot a thread (the
 * thread's totals and the last value read of each), 8 bytes a slot, and
 * 128 bytes of padding a thread and 128 more (more while P < 16), plus a
 * small header; 1 MiB a thread at P = 65,536 (dch_load_memory gives the
 * exact figure).
 *
 * Errors: DCH_OK or a negative DCH_E* code (error.h); a call that fails
 * changes nothing. NULL: every function accepts a NULL counter; getters
 * return 0, functions returning an error code return DCH_EINVAL, and
 * dch_load_counter_free does nothing.
 */
#ifndef DCH_LOAD_H
#define DCH_LOAD_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Most slots a load counter has: DCH_MAP_MAX_SLOTS, as a map. */
#define DCH_LOAD_MAX_SLOTS (1u << 24)
/** Most thread indices a load counter has (0 .. DCH_LOAD_MAX_THREADS - 1). */
#define DCH_LOAD_MAX_THREADS 1024u

/** Opaque per-slot load counter. */
typedef struct dch_load_counter dch_load_counter;

/**
 * Make a counter of `slots` slots, every load 0, for thread indices 0 ..
 * threads - 1. Same as dch_load_counter_new_with(out, slots, threads, NULL).
 */
DCH_API int dch_load_counter_new(dch_load_counter **out, uint32_t slots,
                                 uint32_t threads);

/**
 * Make a counter of `slots` slots, every load 0, for thread indices 0 ..
 * threads - 1, allocating through `allocator` (NULL: libc). Three
 * allocations, all made here: hits, snapshots and decays allocate nothing.
 *
 * @param[out] out   the new counter (free with dch_load_counter_free).
 * @param slots      P: a power of two, 1 .. DCH_LOAD_MAX_SLOTS; the P of the
 *                   map whose slots are counted (dch_map_slot_count).
 * @param threads    thread indices, 1 .. DCH_LOAD_MAX_THREADS.
 * @param allocator  as dch_map_config's: it must outlive the counter.
 * @return DCH_OK; DCH_EINVAL if out is NULL, slots is 0 or not a power of
 *         two, threads is 0, or the allocator lacks a function; DCH_EFULL
 *         if slots exceeds DCH_LOAD_MAX_SLOTS or threads exceeds
 *         DCH_LOAD_MAX_THREADS; DCH_ENOMEM (nothing is left allocated).
 *         On error *out is left untouched.
 */
DCH_API int dch_load_counter_new_with(dch_load_counter **out, uint32_t slots,
                                      uint32_t threads, const dch_allocator *allocator);

/** Free a counter and everything it holds. NULL is a no-op. */
DCH_API void dch_load_counter_free(dch_load_counter *c);

/** P, the number of slots; 0 for NULL. */
DCH_API uint32_t dch_load_slot_count(const dch_load_counter *c);

/** The number of thread indices; 0 for NULL. */
DCH_API uint32_t dch_load_thread_count(const dch_load_counter *c);

/** Bytes the counter holds through its allocator; 0 for NULL. */
DCH_API size_t dch_load_memory(const dch_load_counter *c);

/**
 * Count `amount` of load on the slot of `hash`, as thread index `thread`.
 * One relaxed atomic load and store of the thread's own total, no lock and
 * no loop: wait-free where 64-bit atomics are lock-free (see "Threads"
 * above for who may call it when).
 * amount 0 is allowed and counts nothing.
 *
 * @return DCH_OK; DCH_EINVAL if c is NULL or thread >= the thread count
 *         (and then nothing is counted).
 */
DCH_API int dch_load_hit(dch_load_counter *c, uint32_t thread, uint64_t hash,
                         uint64_t amount);

/**
 * Fold every thread's hits since the last fold into the accumulated loads
 * and write them to out_loads[0 .. P-1], slot by slot (promise 1 says what
 * they hold). Runs concurrently with hits, not with another snapshot or
 * decay. O(threads * P).
 *
 * @param out_loads  room for dch_load_slot_count(c) values.
 * @return DCH_OK; DCH_EINVAL if c or out_loads is NULL (and then nothing is
 *         folded).
 */
DCH_API int dch_load_snapshot(dch_load_counter *c, uint64_t *out_loads);

/**
 * Fold as dch_load_snapshot does, then scale every slot's accumulated load
 * a to floor(a * num / den), exactly. num = den folds only; num = 0 clears
 * every load (hits not yet folded when the fold reads a thread's total are
 * kept for the next fold). Runs concurrently with hits, not with a
 * snapshot or another decay. O(threads * P).
 *
 * @return DCH_OK; DCH_EINVAL if c is NULL, den is 0 or num > den (and then
 *         nothing is folded or scaled).
 */
DCH_API int dch_load_decay(dch_load_counter *c, uint32_t num, uint32_t den);

#ifdef __cplusplus
}
#endif

#endif /* DCH_LOAD_H */
