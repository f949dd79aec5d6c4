/* SPDX-License-Identifier: MIT */
/*
 * Replica placements as pieces of the hash space, and what the replica
 * section (section_replicas.c) measures on them; see replica_figures.h.
 */
#include "replica_figures.h"

#include "dch/dch.h"

#include <math.h>
#include <stdlib.h>

#define TWO_64 18446744073709551616.0
void an_placement_free(an_placement *p)
{
    free(p->lo);
    free(p->hi);
    free(p->ids);
    *p = (an_placement){0};
}

int an_placement_push(an_placement *p, uint64_t lo, uint64_t hi,
                          const uint32_t *ids, size_t n)
{
    if (p->n == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 1024;
        uint64_t *l = realloc(p->lo, cap * sizeof *l);
        if (l != NULL)
            p->lo = l;
        uint64_t *h = realloc(p->hi, cap * sizeof *h);
        if (h != NULL)
            p->hi = h;
        uint32_t *d = realloc(p->ids, cap * AN_COPIES * sizeof *d);
        if (d != NULL)
            p->ids = d;
        if (l == NULL || h == NULL || d == NULL)
            return DCH_ENOMEM;
        p->cap = cap;
    }
    p->lo[p->n] = lo;
    p->hi[p->n] = hi;
    for (size_t k = 0; k < AN_COPIES; k++)
        p->ids[p->n * AN_COPIES + k] = k < n ? ids[k] : DCH_NODE_NONE;
    p->n++;
    return DCH_OK;
}

double an_width_of(uint64_t lo, uint64_t hi)
{
    return ((double)(hi - lo) + 1.0) / TWO_64;
}

/* Zones are few (at most 8, the size of used_zone), walks short. */
size_t an_pick_zones(const uint32_t *walk, size_t n, bool complete,
                         unsigned zones, uint32_t *out)
{
    size_t k = 0;
    bool used_zone[8] = {false};
    for (size_t i = 0; i < n && k < AN_COPIES; i++) {
        const unsigned z = walk[i] % zones;
        if (!used_zone[z]) {
            used_zone[z] = true;
            out[k++] = walk[i];
        }
    }
    if (k == AN_COPIES)
        return k;
    if (!complete)
        return 0;
    const size_t first = k;
    for (size_t i = 0; i < n && k < AN_COPIES; i++) {
        bool taken = false;
        for (size_t q = 0; q < first; q++)
            taken = taken || out[q] == walk[i];
        if (!taken)
            out[k++] = walk[i];
    }
    return k;
}



an_state_figs an_state_of(const an_placement *p, const bool *present,
                           uint32_t nodes, unsigned zones, double *copies)
{
    bool zone_there[8] = {false};
    unsigned zp = 0, members = 0;
    for (uint32_t i = 0; i < nodes; i++) {
        copies[i] = 0.0;
        if (present[i]) {
            members++;
            zp += !zone_there[i % zones];
            zone_there[i % zones] = true;
        }
    }
    an_state_figs f = {0.0, INFINITY, 0.0};
    double total = 0.0;
    for (size_t k = 0; k < p->n; k++) {
        const double w = an_width_of(p->lo[k], p->hi[k]);
        const uint32_t *ids = p->ids + k * AN_COPIES;
        bool seen[8] = {false};
        unsigned c = 0, d = 0;
        for (size_t q = 0; q < AN_COPIES && ids[q] != DCH_NODE_NONE; q++, c++) {
            if (ids[q] < nodes)
                copies[ids[q]] += w;
            total += w;
            d += !seen[ids[q] % zones];
            seen[ids[q] % zones] = true;
        }
        if (d < (c < zp ? c : zp))
            f.violations += w;
    }
    const double mean = members ? total / members : 0.0;
    f.copy_min = members ? INFINITY : 0.0;
    for (uint32_t i = 0; i < nodes; i++)
        if (present[i] && mean > 0.0) {
            f.copy_max = fmax(f.copy_max, copies[i] / mean);
            f.copy_min = fmin(f.copy_min, copies[i] / mean);
        }
    return f;
}

static bool holds(const uint32_t *ids, uint32_t id)
{
    for (size_t q = 0; q < AN_COPIES; q++)
        if (ids[q] == id)
            return true;
    return false;
}

/* Call fn for each piece of the overlay of a and b (both cover the hash
 * space in order): the copies there before, after, and its width. */
static void overlay(const an_placement *a, const an_placement *b,
                    void (*fn)(const uint32_t *before, const uint32_t *after,
                               double w, void *ctx),
                    void *ctx)
{
    size_t i = 0, j = 0;
    uint64_t at = 0;
    while (i < a->n && j < b->n) {
        const uint64_t end = a->hi[i] < b->hi[j] ? a->hi[i] : b->hi[j];
        fn(a->ids + i * AN_COPIES, b->ids + j * AN_COPIES, an_width_of(at, end), ctx);
        if (end == UINT64_MAX)
            break;
        at = end + 1;
        i += a->hi[i] == end;
        j += b->hi[j] == end;
    }
}

typedef struct tally {
    double total;
    double *got; /* per member number, below nodes; NULL: the total only */
    uint32_t nodes;
    uint32_t failed;
} tally;

static void credit(tally *t, uint32_t id, double w)
{
    t->total += w;
    if (t->got != NULL && id < t->nodes)
        t->got[id] += w;
}

static void count_new(const uint32_t *before, const uint32_t *after, double w,
                      void *ctx)
{
    for (size_t q = 0; q < AN_COPIES && after[q] != DCH_NODE_NONE; q++)
        if (!holds(before, after[q]))
            credit(ctx, after[q], w);
}

double an_new_copies(const an_placement *a, const an_placement *b, double *gain,
                     uint32_t nodes)
{
    tally t = {0.0, gain, nodes, DCH_NODE_NONE};
    overlay(a, b, count_new, &t);
    return t.total;
}

static void count_primary(const uint32_t *before, const uint32_t *after, double w,
                          void *ctx)
{
    const tally *t = ctx;
    if (before[0] == t->failed && after[0] != DCH_NODE_NONE)
        credit(ctx, after[0], w);
}

void an_new_primaries(const an_placement *a, const an_placement *b,
                      uint32_t failed, double *got, uint32_t nodes)
{
    for (uint32_t i = 0; i < nodes; i++)
        got[i] = 0.0;
    tally t = {0.0, got, nodes, failed};
    overlay(a, b, count_primary, &t);
}

typedef struct primary_tally {
    an_primary_change pc;
    uint32_t failed;
} primary_tally;

static void count_primary_change(const uint32_t *before, const uint32_t *after,
                                 double w, void *ctx)
{
    primary_tally *t = ctx;
    if (t->failed != DCH_NODE_NONE && before[0] != t->failed)
        return;
    if (after[0] == DCH_NODE_NONE || after[0] == before[0])
        return;
    t->pc.changed += w;
    if (holds(before, after[0]))
        t->pc.promoted += w;
}

an_primary_change an_primary_changes(const an_placement *a, const an_placement *b,
                                     uint32_t failed)
{
    primary_tally t = {{0.0, 0.0}, failed};
    overlay(a, b, count_primary_change, &t);
    return t.pc;
}

an_spread an_spread_of(const double *got, const bool *present, uint32_t nodes,
                        uint32_t failed)
{
    double total = 0.0, most = 0.0;
    uint32_t survivors = 0;
    an_spread s = {0.0, 0};
    for (uint32_t i = 0; i < nodes; i++) {
        if (!present[i] || i == failed)
            continue;
        survivors++;
        total += got[i];
        most = fmax(most, got[i]);
        s.receivers += got[i] > 0.0;
    }
    s.max_over_mean = total > 0.0 ? most / (total / survivors) : NAN;
    return s;
}

/* Who serves the failed member's reads: the next copy of every piece it is
 * the first copy of. */
void an_read_load(const an_placement *p, uint32_t failed, uint32_t nodes,
                      double *got)
{
    for (uint32_t i = 0; i < nodes; i++)
        got[i] = 0.0;
    for (size_t k = 0; k < p->n; k++) {
        const uint32_t *ids = p->ids + k * AN_COPIES;
        if (ids[0] == failed && ids[1] != DCH_NODE_NONE && ids[1] < nodes)
            got[ids[1]] += an_width_of(p->lo[k], p->hi[k]);
    }
}

