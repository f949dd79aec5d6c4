/* SPDX-License-Identifier: MIT */
/*
 * Range lists: the diff of two ownership lists, and the size of a range.
 *
 * A well-formed list covers 0 .. 2^64-1 exactly once in ascending order, so
 * two lists can be walked together like a merge: every step ends at the
 * nearer of the two current range ends, and within a step both owners are
 * constant. Changed steps with one (from, to) pair that touch are reported as
 * one change. Lists need not have adjacent same-owner ranges merged; the
 * output is coalesced either way. The sink that dch_map_ranges and
 * dch_ring_ranges fill is here too (range_sink.h).
 */
#include "dch/range.h"

#include "dch/error.h"

#include "range_sink.h"

#include <stdbool.h>

/* Ascending, contiguous, from 0 to 2^64-1, every range non-empty. */
static bool well_formed(const dch_range *list, size_t n)
{
    if (list == NULL || n == 0 || list[0].lo != 0)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (list[i].lo > list[i].hi)
            return false;
        if (i + 1 < n &&
            (list[i].hi == UINT64_MAX || list[i + 1].lo != list[i].hi + 1))
            return false;
    }
    return list[n - 1].hi == UINT64_MAX;
}

int dch_range_diff(const dch_range *a, size_t na, const dch_range *b,
                   size_t nb,
                   int (*fn)(const dch_range_change *change, void *ctx),
                   void *ctx)
{
    if (fn == NULL || !well_formed(a, na) || !well_formed(b, nb))
        return DCH_EINVAL;

    /* `pending` is the change being grown; it is reported once the next
     * step cannot extend it. Both lists end at 2^64-1, so they end together. */
    dch_range_change pending = {0, 0, 0, 0};
    bool have = false;
    size_t i = 0, j = 0;
    uint64_t lo = 0;
    for (;;) {
        uint64_t hi = a[i].hi < b[j].hi ? a[i].hi : b[j].hi;
        uint32_t from = a[i].owner, to = b[j].owner;
        if (from != to) {
            if (have && pending.from == from && pending.to == to) {
                pending.hi = hi;
            } else {
                if (have) {
                    int rc = fn(&pending, ctx);
                    if (rc != 0)
                        return rc;
                }
                pending = (dch_range_change){lo, hi, from, to};
                have = true;
            }
        } else if (have) {
            int rc = fn(&pending, ctx);
            if (rc != 0)
                return rc;
            have = false;
        }
        if (hi == UINT64_MAX)
            break;
        if (a[i].hi == hi)
            i++;
        if (b[j].hi == hi)
            j++;
        lo = hi + 1;
    }
    return have ? fn(&pending, ctx) : DCH_OK;
}

double dch_range_fraction(uint64_t lo, uint64_t hi)
{
    if (lo > hi)
        return 0.0;
    /* hi - lo + 1 wraps to 0 for the whole space, which is exactly 1.0.
     * Otherwise one rounding (the conversion); scaling by 2^-64 is exact. */
    uint64_t span = hi - lo;
    if (span == UINT64_MAX)
        return 1.0;
    return (double)(span + 1) * 0x1p-64;
}

int dch__range_sink_valid(const dch__range_sink *k, const size_t *count_out)
{
    return count_out != NULL && (k->out != NULL || k->cap == 0);
}

int dch__range_sink_put(const dch_range *r, void *ctx)
{
    dch__range_sink *k = ctx;
    if (k->n < k->cap)
        k->out[k->n] = *r;
    k->n++;
    return 0;
}

int dch__range_sink_close(const dch__range_sink *k, size_t *count_out)
{
    *count_out = k->n;
    return k->n > k->cap ? DCH_EFULL : DCH_OK;
}
