/* SPDX-License-Identifier: MIT */
/*
 * Load models, a placement's load figures and the greedy baseline
 * (load_model.h; docs/analysis.md, "Load", defines them).
 */
#include "load_model.h"

#include "free_all.h"
#include "rng.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A uniform draw in (0, 1): 53 bits, never 0, so that log() is finite. */
static double uniform01(uint64_t *rng)
{
    return ((double)(dch__rng_next(rng) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

double an_normal(uint64_t *rng)
{
    const double u1 = uniform01(rng), u2 = uniform01(rng);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* Fisher-Yates over a[0 .. n-1], from the seeded stream. */
static void shuffle(uint32_t *a, size_t n, uint64_t *rng)
{
    for (size_t i = n; i > 1; i--) {
        const size_t j = dch__rng_below(rng, (uint32_t)i);
        const uint32_t t = a[i - 1];
        a[i - 1] = a[j];
        a[j] = t;
    }
}

static int desc_u64(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x < y) - (x > y);
}

/* Popularity by rank: Zipf 1/(r+1)^s, or the hot-slot model; descending. */
static void popularity(an_load_model *m, an_load_source src, double s, uint64_t *rng)
{
    const size_t n = m->items;
    if (src != AN_LOAD_HOT) {
        double h = 0.0;
        for (size_t r = n; r > 0; r--) /* smallest first: a sum that keeps its bits */
            h += pow((double)r, -s);
        for (size_t r = 0; r < n; r++) {
            const double p = AN_LOAD_SCALE / h * pow((double)(r + 1), -s);
            m->pop[r] = p < 1.0 ? 1u : (uint64_t)llround(p);
        }
        return;
    }
    const size_t hot = n < AN_LOAD_HOT_SLOTS ? n : AN_LOAD_HOT_SLOTS;
    const double even = AN_LOAD_SCALE * (1.0 - (double)hot * AN_LOAD_HOT_SHARE) / (double)n;
    for (size_t r = 0; r < n; r++) {
        const double p = r < hot ? AN_LOAD_SCALE * AN_LOAD_HOT_SHARE
                                 : even * (0.5 + uniform01(rng));
        m->pop[r] = (uint64_t)llround(p);
    }
    qsort(m->pop + hot, n - hot, sizeof *m->pop, desc_u64);
}

int an_load_model_new(an_load_model *m, an_load_source src, double s, uint32_t slots,
                      size_t items, uint32_t *slot_of, uint64_t seed)
{
    if (slot_of == NULL)
        items = slots;
    *m = (an_load_model){slots, items, items / 100, malloc(items * sizeof(uint64_t)),
                         malloc(items * sizeof(uint32_t)), slot_of,
                         calloc(slots, sizeof(uint64_t)), malloc(slots * sizeof(double)),
                         seed};
    if (m->slot_of == NULL)
        m->slot_of = malloc(items * sizeof(uint32_t));
    if (m->pop == NULL || m->item_at == NULL || m->slot_of == NULL || m->cold == NULL ||
        m->mult == NULL) {
        an_load_model_free(m);
        return -1;
    }
    if (slot_of == NULL)
        for (uint32_t i = 0; i < slots; i++)
            m->slot_of[i] = i;
    for (size_t i = 0; i < items; i++)
        m->item_at[i] = (uint32_t)i;
    popularity(m, src, s, &m->rng);
    shuffle(m->item_at, items, &m->rng);
    for (size_t r = m->hot; r < items; r++)
        m->cold[m->slot_of[m->item_at[r]]] += m->pop[r];
    for (uint32_t i = 0; i < slots; i++)
        m->mult[i] = 1.0;
    return 0;
}

void an_load_model_free(an_load_model *m)
{
    AN_FREE_ALL(m->pop, m->item_at, m->slot_of, m->cold, m->mult);
    memset(m, 0, sizeof *m);
}

void an_load_model_slots(const an_load_model *m, uint64_t *load)
{
    memcpy(load, m->cold, m->slots * sizeof *load);
    for (size_t r = 0; r < m->hot; r++)
        load[m->slot_of[m->item_at[r]]] += m->pop[r];
    for (uint32_t i = 0; i < m->slots; i++)
        load[i] = (uint64_t)llround((double)load[i] * m->mult[i]);
}

void an_load_model_drift(an_load_model *m)
{
    shuffle(m->item_at, m->hot, &m->rng);
    for (uint32_t i = 0; i < m->slots; i++)
        m->mult[i] *= exp(0.1 * an_normal(&m->rng));
}

void an_load_model_members(const an_load_model *m, const uint32_t *member_of,
                           uint32_t members, double *out)
{
    for (uint32_t i = 0; i < members; i++)
        out[i] = 0.0;
    for (size_t r = 0; r < m->items; r++) {
        const uint32_t item = m->item_at[r];
        out[member_of[item]] += (double)m->pop[r] * m->mult[m->slot_of[item]];
    }
}

/* ---- A placement's figures ------------------------------------------------------ */

void an_load_state_of(an_load_state *st, const uint64_t *load, uint32_t slots,
                      const uint32_t *owner)
{
    st->wsum = 0;
    for (uint32_t i = 0; i < st->n; i++) {
        st->wsum += st->w[i];
        st->c[i] = st->h[i] = 0;
    }
    st->total = st->lmax = st->l2 = 0;
    for (uint32_t s = 0; s < slots; s++) {
        const uint64_t l = load[s];
        const uint32_t o = owner[s];
        st->total += l;
        st->c[o] += l;
        st->h[o] = l > st->h[o] ? l : st->h[o];
        if (l > st->lmax) {
            st->l2 = st->lmax;
            st->lmax = l;
        } else if (l > st->l2) {
            st->l2 = l;
        }
    }
    if (slots < 2)
        st->l2 = 0;
}

uint64_t an_load_bound_scaled(const an_load_state *st, uint32_t i)
{
    const uint64_t t = st->total * st->w[i], hw = st->h[i] * st->wsum;
    const uint64_t first = t + st->lmax * st->wsum;
    const uint64_t second = (t > hw ? t : hw) + st->l2 * st->wsum;
    return first < second ? first : second;
}

uint64_t an_load_excess(const an_load_state *st)
{
    uint64_t sum = 0;
    for (uint32_t i = 0; i < st->n; i++) {
        const uint64_t cw = st->c[i] * st->wsum, bw = an_load_bound_scaled(st, i);
        if (cw > bw)
            sum += (cw - bw + st->wsum - 1) / st->wsum;
    }
    return sum;
}

uint32_t an_load_above(const an_load_state *st)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < st->n; i++)
        k += st->c[i] * st->wsum > an_load_bound_scaled(st, i);
    return k;
}

double an_load_max_ratio(const an_load_state *st)
{
    if (st->total == 0)
        return 0.0;
    double best = 0.0;
    for (uint32_t i = 0; i < st->n; i++) {
        const double r = (double)st->c[i] * (double)st->wsum /
                         ((double)st->total * (double)st->w[i]);
        best = r > best ? r : best;
    }
    return best;
}

double an_load_floor(const an_load_state *st)
{
    uint32_t wmax = 0;
    for (uint32_t i = 0; i < st->n; i++)
        wmax = st->w[i] > wmax ? st->w[i] : wmax;
    if (st->total == 0 || wmax == 0)
        return 1.0;
    const double f = (double)st->lmax * (double)st->wsum / ((double)st->total * wmax);
    return f > 1.0 ? f : 1.0;
}

/* ---- The greedy baseline --------------------------------------------------------- */

/* Is C_a / w_a above C_b / w_b? (exact: loads below 2^48, weights below 2^16) */
static bool ratio_above(const an_load_state *st, uint64_t ca, uint32_t a, uint64_t cb,
                        uint32_t b)
{
    return ca * st->w[b] > cb * st->w[a];
}

/* Slots of each member as doubly linked lists over the slot numbers. */
typedef struct slot_lists {
    uint32_t *head, *next, *prev;
} slot_lists;

#define NIL UINT32_MAX

static void list_push(slot_lists *l, uint32_t member, uint32_t s)
{
    l->prev[s] = NIL;
    l->next[s] = l->head[member];
    if (l->head[member] != NIL)
        l->prev[l->head[member]] = s;
    l->head[member] = s;
}

static void list_drop(slot_lists *l, uint32_t member, uint32_t s)
{
    if (l->prev[s] != NIL)
        l->next[l->prev[s]] = l->next[s];
    else
        l->head[member] = l->next[s];
    if (l->next[s] != NIL)
        l->prev[l->next[s]] = l->prev[s];
}

/* The heaviest slot of a member (the lowest among equals), NIL for none. */
static uint32_t heaviest(const slot_lists *l, uint32_t member, const uint64_t *load)
{
    uint32_t best = NIL;
    for (uint32_t s = l->head[member]; s != NIL; s = l->next[s])
        if (best == NIL || load[s] > load[best] || (load[s] == load[best] && s < best))
            best = s;
    return best;
}

/* One greedy move, or false when the pass is over. */
static bool greedy_step(an_load_state *st, slot_lists *l, const uint64_t *load,
                        uint32_t *owner, an_greedy_result *out)
{
    uint32_t g = 0, c = 0;
    bool any_above = false;
    for (uint32_t i = 0; i < st->n; i++) {
        any_above = any_above || st->c[i] * st->wsum > an_load_bound_scaled(st, i);
        if (ratio_above(st, st->c[i], i, st->c[g], g))
            g = i;
        if (ratio_above(st, st->c[c], c, st->c[i], i))
            c = i;
    }
    const uint32_t s = any_above ? heaviest(l, g, load) : NIL;
    if (s == NIL || g == c || load[s] == 0 ||
        !ratio_above(st, st->c[g], g, st->c[c] + load[s], c))
        return false;
    list_drop(l, g, s);
    list_push(l, c, s);
    owner[s] = c;
    st->c[g] -= load[s];
    st->c[c] += load[s];
    const uint32_t hg = heaviest(l, g, load);
    st->h[g] = hg == NIL ? 0 : load[hg];
    st->h[c] = load[s] > st->h[c] ? load[s] : st->h[c];
    out->moves++;
    out->moved_load += load[s];
    return true;
}

int an_greedy_balance(an_load_state *st, const uint64_t *load, uint32_t slots,
                      uint32_t *owner, an_greedy_result *out)
{
    slot_lists l = {malloc(st->n * sizeof(uint32_t)), malloc(slots * sizeof(uint32_t)),
                    malloc(slots * sizeof(uint32_t))};
    int rc = l.head && l.next && l.prev ? 0 : -1;
    *out = (an_greedy_result){0, 0};
    if (rc == 0) {
        for (uint32_t i = 0; i < st->n; i++)
            l.head[i] = NIL;
        for (uint32_t s = slots; s > 0; s--)
            list_push(&l, owner[s - 1], s - 1);
        while (out->moves < slots && greedy_step(st, &l, load, owner, out)) {
        }
    }
    free(l.head);
    free(l.next);
    free(l.prev);
    return rc;
}
