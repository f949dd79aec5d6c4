/* SPDX-License-Identifier: MIT */
/*
 * Measurements of a partition scheme from its ownership ranges.
 *
 * Amounts of hash space are summed exactly (an_volume counts hashes in two
 * words) and turned into fractions only at the end, so a share of exactly
 * 1/4 reads as 0.25 and a move between bystanders that never happened reads
 * as exactly 0. Sampled keys are checked against the exact change lists with
 * a merge walk over sorted hashes, which costs O(keys + changes) per step.
 */
#include "metrics.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Volumes --------------------------------------------------------------- */

void an_volume_add_range(an_volume *v, uint64_t lo, uint64_t hi)
{
    /* hi - lo + 1 can be 2^64, so add hi - lo and then 1, carrying each. */
    uint64_t span = hi - lo;
    uint64_t low = v->low + span;
    v->high += low < v->low;
    v->low = low + 1;
    v->high += v->low == 0;
}

void an_volume_add(an_volume *v, an_volume w)
{
    uint64_t low = v->low + w.low;
    v->high += w.high + (low < v->low);
    v->low = low;
}

double an_volume_fraction(an_volume v)
{
    return (double)v.high + ldexp((double)v.low, -64);
}

/* ---- Range lists -------------------------------------------------------------- */

/* A library call that lists an object's ranges into out[0 .. cap-1]. */
typedef int (*ranges_call)(const void *obj, dch_range *out, size_t cap,
                           size_t *n);

static int map_ranges(const void *m, dch_range *out, size_t cap, size_t *n)
{
    return dch_map_ranges(m, out, cap, n);
}

static int ring_ranges(const void *r, dch_range *out, size_t cap, size_t *n)
{
    return dch_ring_ranges(r, out, cap, n);
}

/* Ask for the count, then fill a list of exactly that size. */
static int fetch_ranges(an_ranges *out, ranges_call call, const void *obj)
{
    size_t n = 0;
    int rc = call(obj, NULL, 0, &n);
    if (rc != DCH_OK && rc != DCH_EFULL)
        return rc;
    dch_range *v = malloc((n ? n : 1) * sizeof *v);
    if (v == NULL)
        return DCH_ENOMEM;
    rc = call(obj, v, n, &n);
    if (rc != DCH_OK) {
        free(v);
        return rc;
    }
    out->v = v;
    out->n = n;
    return DCH_OK;
}

int an_ranges_of_map(an_ranges *out, const dch_map *m)
{
    return fetch_ranges(out, map_ranges, m);
}

int an_ranges_of_ring(an_ranges *out, const dch_ring *r)
{
    return fetch_ranges(out, ring_ranges, r);
}

int an_ranges_copy(an_ranges *out, const dch_range *v, size_t n)
{
    if (v == NULL && n > 0)
        return DCH_EINVAL;
    dch_range *c = malloc((n ? n : 1) * sizeof *c);
    if (c == NULL)
        return DCH_ENOMEM;
    if (n > 0)
        memcpy(c, v, n * sizeof *c);
    out->v = c;
    out->n = n;
    return DCH_OK;
}

void an_ranges_free(an_ranges *rs)
{
    if (rs != NULL) {
        free(rs->v);
        *rs = (an_ranges){NULL, 0};
    }
}

int an_ranges_renumber(an_ranges *rs, const uint32_t *to, uint32_t limit)
{
    for (size_t i = 0; i < rs->n; i++)
        if (rs->v[i].owner != DCH_NODE_NONE && rs->v[i].owner >= limit)
            return DCH_EINVAL;
    for (size_t i = 0; i < rs->n; i++)
        if (rs->v[i].owner != DCH_NODE_NONE)
            rs->v[i].owner = to[rs->v[i].owner];
    return DCH_OK;
}

double an_share_of(const an_ranges *rs, uint32_t owner)
{
    an_volume v = {0, 0};
    for (size_t i = 0; i < rs->n; i++)
        if (rs->v[i].owner == owner)
            an_volume_add_range(&v, rs->v[i].lo, rs->v[i].hi);
    return an_volume_fraction(v);
}

int an_shares(const an_ranges *rs, uint32_t limit, double *share)
{
    for (size_t i = 0; i < rs->n; i++)
        if (rs->v[i].owner != DCH_NODE_NONE && rs->v[i].owner >= limit)
            return DCH_EINVAL;
    an_volume *vol = calloc(limit ? limit : 1, sizeof *vol);
    if (vol == NULL)
        return DCH_ENOMEM;
    for (size_t i = 0; i < rs->n; i++)
        if (rs->v[i].owner != DCH_NODE_NONE)
            an_volume_add_range(&vol[rs->v[i].owner], rs->v[i].lo,
                                rs->v[i].hi);
    for (uint32_t o = 0; o < limit; o++)
        share[o] = an_volume_fraction(vol[o]);
    free(vol);
    return DCH_OK;
}

/* ---- Balance ---------------------------------------------------------------------- */

an_balance an_balance_of(const double *share, const uint32_t *weight,
                         uint32_t limit)
{
    an_balance b = {0, 0.0, 0.0, 0.0};
    double total = 0.0;
    for (uint32_t o = 0; o < limit; o++)
        total += weight[o];
    if (total <= 0.0)
        return b;
    double sum = 0.0, sum2 = 0.0;
    for (uint32_t o = 0; o < limit; o++) {
        if (weight[o] == 0)
            continue;
        double ratio = share[o] / (weight[o] / total);
        if (b.members == 0 || ratio > b.peak_to_avg)
            b.peak_to_avg = ratio;
        if (b.members == 0 || ratio < b.min_to_avg)
            b.min_to_avg = ratio;
        b.members++;
        sum += ratio;
        sum2 += ratio * ratio;
    }
    double mean = sum / b.members;
    double var = sum2 / b.members - mean * mean;
    b.cv = var > 0.0 && mean > 0.0 ? sqrt(var) / mean : 0.0;
    return b;
}

/* ---- Migration -------------------------------------------------------------------- */

int an_changes_add(an_changes *c, const dch_range_change *ch)
{
    if (ch->from == ch->to)
        return DCH_OK;
    if (c->n > 0) {
        dch_range_change *last = &c->v[c->n - 1];
        if (last->hi + 1 == ch->lo && last->from == ch->from &&
            last->to == ch->to) {
            last->hi = ch->hi;
            return DCH_OK;
        }
    }
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 64;
        dch_range_change *v = realloc(c->v, cap * sizeof *v);
        if (v == NULL)
            return DCH_ENOMEM;
        c->v = v;
        c->cap = cap;
    }
    c->v[c->n++] = *ch;
    return DCH_OK;
}

static int push_change(const dch_range_change *ch, void *ctx)
{
    return an_changes_add(ctx, ch);
}

int an_changes_diff(an_changes *out, const an_ranges *before,
                    const an_ranges *after)
{
    an_changes c = {NULL, 0, 0};
    int rc = dch_range_diff(before->v, before->n, after->v, after->n,
                            push_change, &c);
    if (rc != DCH_OK) {
        free(c.v);
        return rc;
    }
    an_changes_free(out);
    *out = c;
    return DCH_OK;
}

void an_changes_free(an_changes *c)
{
    if (c != NULL) {
        free(c->v);
        *c = (an_changes){NULL, 0, 0};
    }
}

int an_moves_of(const an_changes *c, uint32_t limit, uint32_t subject,
                an_moves *out)
{
    for (size_t i = 0; i < c->n; i++) {
        const dch_range_change *ch = &c->v[i];
        if ((ch->from != DCH_NODE_NONE && ch->from >= limit) ||
            (ch->to != DCH_NODE_NONE && ch->to >= limit))
            return DCH_EINVAL;
    }
    an_volume *given = calloc(limit ? limit : 1, sizeof *given);
    an_volume *got = calloc(limit ? limit : 1, sizeof *got);
    if (given == NULL || got == NULL) {
        free(given);
        free(got);
        return DCH_ENOMEM;
    }
    an_volume moved = {0, 0}, other = {0, 0};
    for (size_t i = 0; i < c->n; i++) {
        const dch_range_change *ch = &c->v[i];
        an_volume_add_range(&moved, ch->lo, ch->hi);
        if (ch->from != subject && ch->to != subject)
            an_volume_add_range(&other, ch->lo, ch->hi);
        if (ch->from != DCH_NODE_NONE)
            an_volume_add_range(&given[ch->from], ch->lo, ch->hi);
        if (ch->to != DCH_NODE_NONE)
            an_volume_add_range(&got[ch->to], ch->lo, ch->hi);
    }
    an_moves m = {an_volume_fraction(moved), an_volume_fraction(other), 0, 0,
                  0.0, 0.0};
    for (uint32_t o = 0; o < limit; o++) {
        double g = an_volume_fraction(given[o]);
        double r = an_volume_fraction(got[o]);
        if (g > 0.0) {
            m.donors++;
            if (g > m.max_donation)
                m.max_donation = g;
        }
        if (r > 0.0) {
            m.receivers++;
            if (r > m.max_receipt)
                m.max_receipt = r;
        }
    }
    free(given);
    free(got);
    *out = m;
    return DCH_OK;
}

/* ---- Sampled keys ------------------------------------------------------------------ */

static int cmp_u64(const void *pa, const void *pb)
{
    uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
    return (a > b) - (a < b);
}

int an_keys_sorted(uint64_t **out, size_t n, const uint8_t hash_key[16])
{
    uint64_t *h = malloc((n ? n : 1) * sizeof *h);
    if (h == NULL)
        return DCH_ENOMEM;
    char buf[32];
    for (size_t i = 0; i < n; i++) {
        int len = snprintf(buf, sizeof buf, "key-%zu", i);
        h[i] = dch_siphash24(hash_key, buf, (size_t)len);
    }
    qsort(h, n, sizeof *h, cmp_u64);
    *out = h;
    return DCH_OK;
}

an_key_moves an_key_moves_check(const uint64_t *hash, const uint32_t *before,
                                const uint32_t *after, size_t n,
                                const an_changes *c, uint32_t subject)
{
    an_key_moves k = {n, 0, 0, 0};
    size_t j = 0;
    for (size_t i = 0; i < n; i++) {
        /* Changes are ascending and disjoint, and so are the hashes. */
        while (j < c->n && c->v[j].hi < hash[i])
            j++;
        bool in = j < c->n && c->v[j].lo <= hash[i];
        if (before[i] != after[i]) {
            k.moved++;
            if (before[i] != subject && after[i] != subject)
                k.moved_other++;
        }
        if (in ? before[i] != c->v[j].from || after[i] != c->v[j].to
               : before[i] != after[i])
            k.mismatched++;
    }
    return k;
}

double an_binomial_z(double p, size_t hits, size_t n)
{
    if (n == 0)
        return 0.0;
    double f = (double)hits / (double)n;
    double var = p * (1.0 - p) / (double)n;
    if (var <= 0.0)
        return f == p ? 0.0 : (f > p ? INFINITY : -INFINITY);
    return (f - p) / sqrt(var);
}

/* ---- Spread and load ------------------------------------------------------------------ */

static bool well_formed(const an_ranges *rs)
{
    if (rs->n == 0 || rs->v[0].lo != 0 || rs->v[rs->n - 1].hi != UINT64_MAX)
        return false;
    for (size_t i = 0; i < rs->n; i++) {
        if (rs->v[i].lo > rs->v[i].hi)
            return false;
        if (i + 1 < rs->n && rs->v[i + 1].lo != rs->v[i].hi + 1)
            return false;
    }
    return true;
}

int an_spread_load_exact(const an_ranges *views, size_t nviews, uint32_t nodes,
                         an_spread_load *out)
{
    if (views == NULL || nviews == 0 || nodes == 0)
        return DCH_EINVAL;
    for (size_t v = 0; v < nviews; v++) {
        if (!well_formed(&views[v]))
            return DCH_EINVAL;
        for (size_t i = 0; i < views[v].n; i++)
            if (views[v].v[i].owner != DCH_NODE_NONE &&
                views[v].v[i].owner >= nodes)
                return DCH_EINVAL;
    }
    size_t *pos = calloc(nviews, sizeof *pos);
    uint32_t *seen = malloc(nviews * sizeof *seen);
    an_volume *load = calloc(nodes, sizeof *load);
    if (pos == NULL || seen == NULL || load == NULL) {
        free(pos);
        free(seen);
        free(load);
        return DCH_ENOMEM;
    }
    /* Walk all views together: each step is the longest run from `lo` over
     * which no view changes owner, so the set of owners is constant on it. */
    an_volume spread_vol = {0, 0}; /* sum over hashes of distinct owners */
    size_t spread_max = 0;
    uint64_t lo = 0;
    for (;;) {
        uint64_t hi = UINT64_MAX;
        for (size_t v = 0; v < nviews; v++)
            if (views[v].v[pos[v]].hi < hi)
                hi = views[v].v[pos[v]].hi;
        size_t distinct = 0;
        for (size_t v = 0; v < nviews; v++) {
            uint32_t o = views[v].v[pos[v]].owner;
            if (o == DCH_NODE_NONE)
                continue;
            size_t d = 0;
            while (d < distinct && seen[d] != o)
                d++;
            if (d == distinct)
                seen[distinct++] = o;
        }
        for (size_t d = 0; d < distinct; d++) {
            an_volume_add_range(&load[seen[d]], lo, hi);
            an_volume_add_range(&spread_vol, lo, hi);
        }
        if (distinct > spread_max)
            spread_max = distinct;
        if (hi == UINT64_MAX)
            break;
        for (size_t v = 0; v < nviews; v++)
            if (views[v].v[pos[v]].hi == hi)
                pos[v]++;
        lo = hi + 1;
    }
    double load_max = 0.0;
    for (uint32_t o = 0; o < nodes; o++) {
        double f = an_volume_fraction(load[o]);
        if (f > load_max)
            load_max = f;
    }
    out->spread_max = (double)spread_max;
    out->spread_mean = an_volume_fraction(spread_vol);
    out->load_max = load_max * nodes;
    free(pos);
    free(seen);
    free(load);
    return DCH_OK;
}

int an_key_spread_init(an_key_spread *ks, uint32_t nodes)
{
    if (ks == NULL || nodes == 0)
        return DCH_EINVAL;
    uint64_t *load = calloc(nodes, sizeof *load);
    if (load == NULL)
        return DCH_ENOMEM;
    *ks = (an_key_spread){nodes, 0, 0, 0, load};
    return DCH_OK;
}

void an_key_spread_add(an_key_spread *ks, const uint32_t *owners,
                       size_t nviews)
{
    size_t distinct = 0;
    for (size_t v = 0; v < nviews; v++) {
        uint32_t o = owners[v];
        if (o == DCH_NODE_NONE || o >= ks->nodes)
            continue;
        bool dup = false;
        for (size_t u = 0; u < v && !dup; u++)
            dup = owners[u] == o;
        if (dup)
            continue;
        distinct++;
        ks->load[o]++;
    }
    ks->keys++;
    ks->spread_sum += distinct;
    if (distinct > ks->spread_max)
        ks->spread_max = distinct;
}

an_spread_load an_key_spread_result(const an_key_spread *ks)
{
    an_spread_load r = {0.0, 0.0, 0.0};
    if (ks->keys == 0)
        return r;
    uint64_t most = 0;
    for (uint32_t o = 0; o < ks->nodes; o++)
        if (ks->load[o] > most)
            most = ks->load[o];
    r.spread_max = (double)ks->spread_max;
    r.spread_mean = (double)ks->spread_sum / (double)ks->keys;
    r.load_max = (double)most * ks->nodes / (double)ks->keys;
    return r;
}

void an_key_spread_free(an_key_spread *ks)
{
    if (ks == NULL)
        return;
    free(ks->load);
    ks->load = NULL;
}

/* ---- Reference sequences ---------------------------------------------------------------- */

double an_harmonic_migration(uint32_t n)
{
    double s = 0.0;
    for (uint32_t k = 2; k <= n; k++)
        s += 1.0 / k;
    return s;
}

double an_halving_step(uint32_t n)
{
    unsigned bits = 0;
    while (bits < 32 && (UINT64_C(1) << bits) < n)
        bits++;
    return ldexp(1.0, -(int)bits);
}

double an_halving_migration(uint32_t n)
{
    double s = 0.0;
    for (uint32_t k = 2; k <= n; k++)
        s += an_halving_step(k);
    return s;
}


/* ---- The scenario's names ------------------------------------------------------------- */

int an_name_width(uint32_t max)
{
    int d = 1;
    for (; max >= 10; max /= 10)
        d++;
    return d < 2 ? 2 : d;
}

void an_node_name(char *buf, size_t n, int width, uint32_t i)
{
    /* Widths come from an_name_width of a uint32_t, so 64 bytes always fit. */
    if (snprintf(buf, n, "node-%0*u", width, (unsigned)i) >= (int)n)
        buf[0] = '\0';
}

uint32_t an_node_number(const char *name)
{
    if (name == NULL || strncmp(name, "node-", 5) != 0)
        return DCH_NODE_NONE;
    uint64_t v = 0;
    const char *p = name + 5;
    for (; *p >= '0' && *p <= '9' && v <= UINT32_MAX; p++)
        v = v * 10 + (uint64_t)(*p - '0');
    if (p == name + 5 || *p != '\0' || v == 0 || v > UINT32_MAX)
        return DCH_NODE_NONE;
    return (uint32_t)(v - 1);
}

/* ---- A scenario's seeded choices ------------------------------------------------------- */

/* Independent streams, one per use, derived from a run's seed. */
#define STREAM_HASH_KEY UINT64_C(0x6b65792d68617368)
#define STREAM_VIEWS UINT64_C(0x76696577732d2d31)

void an_hash_key_of_seed(uint64_t seed, uint8_t key[16])
{
    uint64_t s = seed ^ STREAM_HASH_KEY;
    for (int i = 0; i < 2; i++) {
        uint64_t v = dch__rng_next(&s);
        for (int j = 0; j < 8; j++)
            key[8 * i + j] = (uint8_t)(v >> (8 * j));
    }
}

bool *an_views_of_seed(uint64_t seed, uint32_t views, uint32_t nodes)
{
    if (views == 0 || nodes == 0)
        return NULL;
    bool *sees = calloc((size_t)views * nodes, sizeof *sees);
    if (sees == NULL)
        return NULL;
    uint64_t rng = seed ^ STREAM_VIEWS;
    for (uint32_t v = 0; v < views; v++) {
        uint32_t count = 0;
        for (uint32_t g = 0; g < nodes; g++) {
            sees[(size_t)v * nodes + g] = (dch__rng_next(&rng) >> 63) != 0;
            count += sees[(size_t)v * nodes + g];
        }
        if (count == 0)
            sees[(size_t)v * nodes + dch__rng_below(&rng, nodes)] = true;
    }
    return sees;
}
