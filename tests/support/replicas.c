/* SPDX-License-Identifier: MIT */
/*
 * The replica promises checked from outside (replicas.h). Shares are
 * compared in integers: |c - R*P*w/W| < k is |c*W - R*P*w| < k*W.
 */
#include "replicas.h"

#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char msg[512];

static double absd(double v)
{
    return v < 0 ? -v : v;
}

#define FAILF(...) (snprintf(msg, sizeof msg, __VA_ARGS__), msg)

void rep_table_take(rep_table *t, const dch_map *m)
{
    dch_map_config cfg;
    dch_map_get_config(m, &cfg);
    const uint32_t P = dch_map_slot_count(m), R = cfg.replicas;
    if (t->slots != P || t->replicas != R) {
        free(t->ids);
        t->ids = xmalloc((size_t)P * R * sizeof *t->ids);
        t->slots = P;
        t->replicas = R;
    }
    for (uint32_t s = 0; s < P; s++) {
        uint32_t *row = t->ids + (size_t)s * R;
        const size_t n = dch_map_slot_replicas(m, s, row, R);
        for (size_t k = n; k < R; k++)
            row[k] = DCH_NODE_NONE;
    }
}

void rep_table_free(rep_table *t)
{
    free(t->ids);
    memset(t, 0, sizeof *t);
}

void rep_history_note(rep_history *h, uint32_t weight, bool zoned)
{
    if (zoned)
        h->zoned = true;
    if (weight == 0)
        return;
    if (h->weight == 0)
        h->weight = weight;
    else if (h->weight != weight)
        h->unequal = true;
}

/* Whether a and b are in one zone (no zone: a zone of one's own). */
static bool same_zone(const dch_map *m, uint32_t a, uint32_t b)
{
    const char *za = dch_map_node_zone(m, a), *zb = dch_map_node_zone(m, b);
    return a == b || (za != NULL && zb != NULL && strcmp(za, zb) == 0);
}

/* Members of positive weight (M), their zones (Z), and the largest zone's
 * weight. */
static void census(const dch_map *m, uint32_t *M, uint32_t *Z, uint64_t *zmax)
{
    const uint32_t L = dch_map_id_limit(m);
    *M = *Z = 0;
    *zmax = 0;
    for (uint32_t a = 0; a < L; a++) {
        if (dch_map_node_weight(m, a) == 0)
            continue;
        (*M)++;
        bool first = true;
        uint64_t zw = 0;
        for (uint32_t b = 0; b < L; b++) {
            if (dch_map_node_weight(m, b) == 0 || !same_zone(m, a, b))
                continue;
            if (b < a)
                first = false;
            zw += dch_map_node_weight(m, b);
        }
        *Z += first;
        if (zw > *zmax)
            *zmax = zw;
    }
}

void rep_history_after(rep_history *h, const dch_map *m)
{
    dch_map_config cfg;
    dch_map_get_config(m, &cfg);
    uint32_t M, Z;
    uint64_t zmax;
    census(m, &M, &Z, &zmax);
    const uint64_t W = dch_map_total_weight(m);
    if (M <= cfg.replicas)
        h->capped = false; /* every member holds every slot: no memory */
    else if (Z < cfg.replicas || zmax * (cfg.replicas + 1) > W)
        h->capped = true;
}

const char *rep_check_state(const dch_map *m, const rep_table *t, const rep_history *h,
                            rep_worst *w)
{
    const uint32_t P = t->slots, R = t->replicas, L = dch_map_id_limit(m);
    const uint64_t W = dch_map_total_weight(m);
    uint32_t M, Z;
    uint64_t zmax;
    census(m, &M, &Z, &zmax);
    const uint32_t n = M < R ? M : R, want_zones = n < Z ? n : Z;
    uint32_t *copies = xcalloc(L ? L : 1, sizeof *copies);
    uint32_t *prim = xcalloc(L ? L : 1, sizeof *prim);
    const char *bad = NULL;
    for (uint32_t s = 0; s < P && bad == NULL; s++) {
        const uint32_t *row = t->ids + (size_t)s * R;
        uint32_t zones = 0;
        for (uint32_t k = 0; k < R && bad == NULL; k++) {
            const uint32_t id = row[k];
            if (k >= n) {
                if (id != DCH_NODE_NONE)
                    bad = FAILF("slot %u holds %u copies, expected min(R=%u, M=%u)", s, k + 1, R,
                                M);
                continue;
            }
            if (id == DCH_NODE_NONE || dch_map_node_weight(m, id) == 0) {
                bad = FAILF("slot %u copy %u is %u, not a member of positive weight", s, k, id);
                continue;
            }
            bool new_zone = true;
            for (uint32_t j = 0; j < k; j++) {
                if (row[j] == id)
                    bad = FAILF("slot %u holds member %u twice", s, id);
                if (same_zone(m, row[j], id))
                    new_zone = false;
            }
            zones += new_zone;
            copies[id]++;
            prim[id] += k == 0;
        }
        if (bad == NULL && zones != want_zones)
            bad = FAILF("slot %u spans %u zones, expected min(%u copies, Z=%u)", s, zones, n, Z);
        if (bad == NULL && n > 0 && dch_map_slot_owner(m, s) != row[0])
            bad = FAILF("slot %u: owner %u is not its first copy %u", s,
                        dch_map_slot_owner(m, s), row[0]);
    }
    /* Promise 4 applies with R zones or more, none over W/(R+1), after
     * every call since M was last at most R. */
    const bool cond = W > 0 && Z >= R && zmax * (R + 1) <= W && (h == NULL || !h->capped);
    /* Promise 3 applies always without zones; with zones, as 4 does. */
    const bool prim_cond =
        h == NULL || !h->zoned || (Z >= R && zmax * (R + 1) <= W && !h->capped);
    for (uint32_t id = 0; id < L && bad == NULL; id++) {
        if (dch_map_node_name(m, id) == NULL)
            continue;
        const uint64_t wt = dch_map_node_weight(m, id);
        if (dch_map_node_copies(m, id) != copies[id] || dch_map_node_slots(m, id) != prim[id]) {
            bad = FAILF("member %u reports %u copies and %u slots, the table %u and %u", id,
                        dch_map_node_copies(m, id), dch_map_node_slots(m, id), copies[id],
                        prim[id]);
            break;
        }
        if (W == 0)
            continue;
        const int64_t dp = (int64_t)prim[id] * (int64_t)W - (int64_t)P * (int64_t)wt;
        const double ap = absd((double)dp / (double)W);
        if (w != NULL && prim_cond && ap > w->primary)
            w->primary = ap;
        if (prim_cond && (dp >= 2 * (int64_t)W || dp <= -2 * (int64_t)W))
            bad = FAILF("member %u holds %u primaries, %.3f from its share %.3f (bound 2)", id,
                        prim[id], ap, (double)P * (double)wt / (double)W);
        const int64_t dc = (int64_t)copies[id] * (int64_t)W - (int64_t)R * P * (int64_t)wt;
        const double ac = absd((double)dc / (double)W);
        if (w != NULL && Z >= R && ac > w->copies_all)
            w->copies_all = ac;
        if (cond && w != NULL && ac > w->copies_cond)
            w->copies_cond = ac;
        if (cond && bad == NULL &&
            (dc >= 2 * (int64_t)R * (int64_t)W || dc <= -2 * (int64_t)R * (int64_t)W))
            bad = FAILF("member %u holds %u copies, %.3f from its share %.3f (bound 2R = %u; "
                        "%u zones, the largest with %.3f of the weight)",
                        id, copies[id], ac, (double)R * P * (double)wt / (double)W, 2 * R, Z,
                        (double)zmax / (double)W);
    }
    free(copies);
    free(prim);
    return bad;
}

/* Whether row (R ids) holds id. */
static bool holds(const uint32_t *row, uint32_t R, uint32_t id)
{
    for (uint32_t k = 0; k < R; k++)
        if (row[k] == id)
            return true;
    return false;
}

static uint32_t count_of(const uint32_t *row, uint32_t R)
{
    uint32_t n = 0;
    while (n < R && row[n] != DCH_NODE_NONE)
        n++;
    return n;
}

const char *rep_check_move(const dch_map *m, const rep_table *t0, const rep_table *t1,
                           uint32_t x, uint32_t from, uint32_t to, const rep_history *h,
                           rep_worst *w)
{
    const uint32_t P = t1->slots, R = t1->replicas, L = dch_map_id_limit(m);
    uint32_t *got = xcalloc((size_t)L + 1, sizeof *got);
    uint64_t created = 0, dropped = 0;
    bool same_counts = true;
    const char *bad = NULL;
    for (uint32_t s = 0; s < P && bad == NULL; s++) {
        const uint32_t *a = t0->ids + (size_t)s * R, *b = t1->ids + (size_t)s * R;
        const uint32_t na = count_of(a, R), nb = count_of(b, R);
        same_counts &= na == nb;
        for (uint32_t k = 0; k < nb && bad == NULL; k++)
            if (!holds(a, R, b[k])) {
                created++;
                if (b[k] < L)
                    got[b[k]]++;
                if (to > from && b[k] != x)
                    bad = FAILF("raising %u created a copy of slot %u on %u", x, s, b[k]);
                if (to < from && b[k] == x)
                    bad = FAILF("lowering %u created a copy of slot %u on it", x, s);
            }
        for (uint32_t k = 0; k < na && bad == NULL; k++)
            if (!holds(b, R, a[k])) {
                dropped++;
                if (to < from && a[k] != x)
                    bad = FAILF("lowering %u dropped %u's copy of slot %u", x, a[k], s);
                if (to > from && a[k] == x)
                    bad = FAILF("raising %u dropped its own copy of slot %u", x, s);
                if (to > from && !holds(b, R, x))
                    bad = FAILF("raising %u dropped %u's copy of slot %u without taking it", x,
                                a[k], s);
            }
    }
    if (bad == NULL && to < from && same_counts && created != dropped)
        bad = FAILF("lowering %u dropped %llu copies and created %llu", x,
                    (unsigned long long)dropped, (unsigned long long)created);
    /* Promise 6: a removal's copies land evenly. */
    uint32_t M = 0;
    for (uint32_t id = 0; id < L; id++)
        M += dch_map_node_weight(m, id) > 0;
    if (bad == NULL && to == 0 && from > 0 && !h->unequal && !h->zoned && same_counts &&
        M > 0 && created > 0) {
        uint32_t most = 0;
        for (uint32_t id = 0; id < L; id++)
            most = got[id] > most ? got[id] : most;
        const double mean = (double)created / M;
        if (w != NULL && most - 1.25 * mean - 2 > w->recovery)
            w->recovery = most - 1.25 * mean - 2;
        /* most <= 1.25 * created / M + 2, in integers */
        if ((uint64_t)4 * most * M > 5 * created + (uint64_t)8 * M)
            bad = FAILF("removing %u: a survivor received %u new copies, mean %.2f (bound 1.25 * "
                        "mean + 2)",
                        x, most, mean);
    }
    free(got);
    return bad;
}

const char *rep_check_diversity(const dch_map *m, const rep_table *t, const rep_history *h,
                                rep_worst *w)
{
    const uint32_t P = t->slots, R = t->replicas, L = dch_map_id_limit(m);
    uint32_t M = 0;
    for (uint32_t id = 0; id < L; id++)
        M += dch_map_node_weight(m, id) > 0;
    if (h->unequal || h->zoned || R < 2 || M < 2 || (uint64_t)R * P < (uint64_t)16 * M)
        return NULL;
    uint32_t *pair = xcalloc((size_t)L * L, sizeof *pair);
    for (uint32_t s = 0; s < P; s++) {
        const uint32_t *row = t->ids + (size_t)s * R;
        const uint32_t n = count_of(row, R);
        for (uint32_t i = 0; i < n; i++)
            for (uint32_t j = 0; j < n; j++)
                pair[(size_t)row[i] * L + row[j]] += i != j;
    }
    const char *bad = NULL;
    for (uint32_t a = 0; a < L && bad == NULL; a++) {
        if (dch_map_node_weight(m, a) == 0)
            continue;
        uint64_t sum = 0;
        uint32_t most = 0, with = 0;
        for (uint32_t b = 0; b < L; b++) {
            const uint32_t p = pair[(size_t)a * L + b];
            sum += p;
            if (p > most) {
                most = p;
                with = b;
            }
        }
        const double mean = (double)sum / (M - 1);
        if (w != NULL && most - 1.5 * mean - 2 > w->diversity)
            w->diversity = most - 1.5 * mean - 2;
        /* most <= 1.5 * sum / (M - 1) + 2, in integers */
        if ((uint64_t)2 * most * (M - 1) > 3 * sum + (uint64_t)4 * (M - 1))
            bad = FAILF("member %u shares %u slots with %u, mean %.2f over %u others (bound 1.5 "
                        "* mean + 2)",
                        a, most, with, mean, M - 1);
    }
    free(pair);
    return bad;
}
