/* SPDX-License-Identifier: MIT */
/*
 * Collecting ranges into a caller's array, for dch_map_ranges and
 * dch_ring_ranges. Internal to libdch.
 */
#ifndef DCH_SRC_RANGE_SINK_H
#define DCH_SRC_RANGE_SINK_H

#include "dch/range.h"

#include <stddef.h>

/** Writes the first cap ranges to out and counts them all. */
typedef struct dch__range_sink {
    dch_range *out;
    size_t cap;
    size_t n;
} dch__range_sink;

/** Zero when count_out is NULL or out is NULL with cap > 0. */
int dch__range_sink_valid(const dch__range_sink *k, const size_t *count_out);

/** A foreach_range callback: keeps the range if there is room; returns 0. */
int dch__range_sink_put(const dch_range *r, void *ctx);

/** Sets *count_out to every range seen: DCH_OK, or DCH_EFULL when they
 *  did not all fit (the first cap were written). */
int dch__range_sink_close(const dch__range_sink *k, size_t *count_out);

#endif /* DCH_SRC_RANGE_SINK_H */
