/* SPDX-License-Identifier: MIT */
/*
 * 9. Load: balancing by measured load (dch/balance.h) against what is done
 * elsewhere. P slots (the run's --units x --slots, 65,536 by default), N =
 * 100 and 1,000 members (at most P/8), loads from keys with Zipf
 * popularity hashed to slots, from Zipf straight onto slots, and from a few
 * hot slots (load_model.h), then EPOCHS epochs of drift. Side by side: the
 * count-balanced DCH map, the same map balanced by dch_map_balance_load at
 * every epoch, the ring (--points points per weight) fed the same keys or
 * slot hashes, and the greedy baseline (load_model.c) on the map's
 * placement; beside them the floor no placement beats. Every figure is
 * exact from the loads and placements; the moved load is set against the
 * lower bound the balancing report gives. docs/analysis.md ("Load") defines
 * each model and figure and reads them.
 */
#define _POSIX_C_SOURCE 200809L

#include "sections.h"

#include "free_all.h"
#include "load_model.h"
#include "progress.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EPOCHS 30
#define WINDOW 5 /* a slot moved again within this many epochs is a repeat */
#define STREAM_LOAD UINT64_C(0x6c6f61642d736563)
#define PLAN_GOAL_MS 10.0
#define PLAN_GOAL_N 1000u
#define PLAN_GOAL_P 65536u

enum { K_COUNT, K_DCH, K_RING, K_GREEDY, KINDS };
static const char *const KIND_LABEL[KINDS] = {"count-balanced", "balanced", "ring",
                                              "greedy"};

/* One load model. */
typedef struct load_case {
    const char *label;
    an_load_source src;
    double s;
    bool skew; /* member weights 1 .. 4, else all 1 */
} load_case;

static const load_case CASES[] = {
    {"keys s=0.8", AN_LOAD_KEYS, 0.8, false},
    {"keys s=1.0", AN_LOAD_KEYS, 1.0, false},
    {"keys s=1.2", AN_LOAD_KEYS, 1.2, false},
    {"slots s=0.8", AN_LOAD_SLOTS, 0.8, false},
    {"slots s=1.0", AN_LOAD_SLOTS, 1.0, false},
    {"slots s=1.2", AN_LOAD_SLOTS, 1.2, false},
    {"16 hot slots", AN_LOAD_HOT, 0.0, false},
    {"keys s=0.8 w=1-4", AN_LOAD_KEYS, 0.8, true},
    {"keys s=1.0 w=1-4", AN_LOAD_KEYS, 1.0, true},
};
#define NCASES (sizeof CASES / sizeof CASES[0])
#define MAX_NS 2

/* The members of one N and weighting: the count-balanced map, and the
 * ring's placement of every key and every slot, by member number. */
typedef struct group {
    uint32_t n;
    bool skew;
    uint32_t *w;           /* weight of member i */
    dch_map *map;
    uint32_t *owner;       /* slot -> member, count-balanced */
    uint32_t *key_member;  /* key -> ring member */
    uint32_t *slot_member; /* slot -> ring member (its middle hash) */
} group;

/* What one scheme did over one case. */
typedef struct kind_fig {
    double ratio0, moved0, floor0, ms0;
    uint32_t copies0, above0;
    double ratio_sum, moved_share_sum, copies_sum, worst_md, ms_max;
    double moved_sum, drifted_sum; /* over the drift epochs */
    uint32_t repeats, thrash;
} kind_fig;

typedef struct case_result {
    uint32_t n;
    const load_case *lc;
    double floor0, floor_sum, drifted_share_sum;
    uint64_t total0;
    uint32_t too_heavy;
    kind_fig k[KINDS];
    double worst_ms_at; /* epoch of the slowest balancing call */
} case_result;

/* The section's shared inputs. */
typedef struct load_sec {
    an_run *r;
    uint32_t slots;
    size_t keys;
    uint64_t *key_hash;
    uint32_t *key_slot;
    an_table *epochs;
} load_sec;

static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* ---- The members --------------------------------------------------------------- */

static uint32_t map_member(const dch_map *m, uint32_t id)
{
    const char *name = dch_map_node_name(m, id);
    return name ? an_node_number(name) : DCH_NODE_NONE;
}

static uint32_t ring_member(const dch_ring *g, uint32_t id)
{
    const char *name = dch_ring_node_name(g, id);
    return name ? an_node_number(name) : DCH_NODE_NONE;
}

static int group_map(const load_sec *S, group *g)
{
    dch_map_config mc;
    dch_map_config_default(&mc);
    mc.units = S->r->opt.units;
    mc.slots_per_unit = S->r->opt.slots;
    memcpy(mc.hash_key, S->r->hash_key, sizeof mc.hash_key);
    int rc = dch_map_new(&g->map, &mc);
    const int width = an_name_width(g->n);
    for (uint32_t i = 0; i < g->n && rc == DCH_OK; i++) {
        char name[64];
        an_node_name(name, sizeof name, width, i + 1);
        rc = dch_map_add_node(g->map, name, g->w[i], NULL);
    }
    for (uint32_t s = 0; s < S->slots && rc == DCH_OK; s++) {
        g->owner[s] = map_member(g->map, dch_map_slot_owner(g->map, s));
        rc = g->owner[s] < g->n ? DCH_OK : DCH_EINVAL;
    }
    return rc;
}

static int group_ring(const load_sec *S, group *g)
{
    dch_ring_config rc;
    dch_ring_config_default(&rc);
    rc.points_per_weight = S->r->opt.points;
    memcpy(rc.hash_key, S->r->hash_key, sizeof rc.hash_key);
    dch_ring *ring = NULL;
    int err = dch_ring_new(&ring, &rc);
    const int width = an_name_width(g->n);
    for (uint32_t i = 0; i < g->n && err == DCH_OK; i++) {
        char name[64];
        an_node_name(name, sizeof name, width, i + 1);
        err = dch_ring_add_node(ring, name, g->w[i], NULL);
    }
    unsigned bits = 0;
    while ((UINT32_C(1) << bits) < S->slots)
        bits++;
    for (uint32_t s = 0; s < S->slots && err == DCH_OK; s++) {
        const uint64_t lo = bits ? (uint64_t)s << (64 - bits) : 0;
        const uint64_t mid = bits ? lo + (UINT64_C(1) << (63 - bits)) : UINT64_C(1) << 63;
        g->slot_member[s] = ring_member(ring, dch_ring_lookup_hash(ring, mid));
        err = g->slot_member[s] < g->n ? DCH_OK : DCH_EINVAL;
    }
    for (size_t k = 0; k < S->keys && err == DCH_OK; k++) {
        g->key_member[k] = ring_member(ring, dch_ring_lookup_hash(ring, S->key_hash[k]));
        err = g->key_member[k] < g->n ? DCH_OK : DCH_EINVAL;
    }
    dch_ring_free(ring);
    return err;
}

static void group_free(group *g)
{
    dch_map_free(g->map);
    AN_FREE_ALL(g->w, g->owner, g->key_member, g->slot_member);
}

static int group_new(const load_sec *S, group *g, uint32_t n, bool skew)
{
    *g = (group){n, skew, malloc(n * sizeof(uint32_t)), NULL,
                 malloc(S->slots * sizeof(uint32_t)), malloc(S->keys * sizeof(uint32_t)),
                 malloc(S->slots * sizeof(uint32_t))};
    if (g->w == NULL || g->owner == NULL || g->key_member == NULL || g->slot_member == NULL)
        return DCH_ENOMEM;
    /* Weights 1, 2, 3, 4, 1, 2, ...: deterministic, every weight as often. */
    for (uint32_t i = 0; i < n; i++)
        g->w[i] = skew ? 1 + i % 4 : 1;
    int rc = group_map(S, g);
    return rc == DCH_OK ? group_ring(S, g) : rc;
}

/* ---- One case ---------------------------------------------------------------------- */

/* One epoch's figures of one scheme. */
typedef struct epoch_fig {
    double ratio, floor, drifted, moved, moved_floor, ms;
    uint32_t copies, above_before, above_after, repeats, thrash;
} epoch_fig;

/* The working arrays of one case. */
typedef struct case_work {
    an_load_model model;
    uint64_t *load;
    uint32_t *own[KINDS]; /* K_DCH and K_GREEDY: the placement, changed */
    uint32_t *before;
    int32_t *last[KINDS]; /* epoch a slot last moved, K_DCH and K_GREEDY */
    bool *within;         /* member within its bound before the call */
    uint64_t *c, *h;
    double *ring_load;
    dch_map *bal;
    epoch_fig figs[EPOCHS + 1][KINDS];
} case_work;

static void work_free(case_work *w)
{
    an_load_model_free(&w->model);
    for (int k = 0; k < KINDS; k++)
        AN_FREE_ALL(w->own[k], w->last[k]);
    AN_FREE_ALL(w->load, w->before, w->within, w->c, w->h, w->ring_load);
    dch_map_free(w->bal);
}

static int work_new(const load_sec *S, const group *g, const load_case *lc, case_work *w)
{
    memset(w, 0, sizeof *w);
    uint32_t *slot_of = NULL;
    if (lc->src == AN_LOAD_KEYS) {
        slot_of = malloc(S->keys * sizeof *slot_of);
        if (slot_of == NULL)
            return DCH_ENOMEM;
        memcpy(slot_of, S->key_slot, S->keys * sizeof *slot_of);
    }
    const uint64_t seed = S->r->opt.seed ^ STREAM_LOAD ^ (uint64_t)(lc - CASES) * 0x9e37u ^
                          (uint64_t)g->n << 32;
    if (an_load_model_new(&w->model, lc->src, lc->s, S->slots, S->keys, slot_of, seed) != 0)
        return DCH_ENOMEM;
    w->load = malloc(S->slots * sizeof *w->load);
    w->before = malloc(S->slots * sizeof *w->before);
    w->within = malloc(g->n * sizeof *w->within);
    w->c = malloc(g->n * sizeof *w->c);
    w->h = malloc(g->n * sizeof *w->h);
    w->ring_load = malloc(g->n * sizeof *w->ring_load);
    bool ok = w->load && w->before && w->within && w->c && w->h && w->ring_load;
    for (int k = K_DCH; k <= K_GREEDY && ok; k += K_GREEDY - K_DCH) {
        w->own[k] = malloc(S->slots * sizeof(uint32_t));
        w->last[k] = malloc(S->slots * sizeof(int32_t));
        ok = w->own[k] != NULL && w->last[k] != NULL;
        for (uint32_t s = 0; ok && s < S->slots; s++) {
            w->own[k][s] = g->owner[s];
            w->last[k][s] = -WINDOW - 1;
        }
    }
    if (!ok)
        return DCH_ENOMEM;
    return dch_map_clone(&w->bal, g->map);
}

static an_load_state state_of(const group *g, case_work *w, const uint64_t *load,
                              uint32_t slots, const uint32_t *owner)
{
    an_load_state st = {g->n, g->w, 0, 0, 0, 0, w->c, w->h};
    an_load_state_of(&st, load, slots, owner);
    return st;
}

/* Note which members are within their bounds, and keep the placement. */
static void before_call(const an_load_state *st, case_work *w, const uint32_t *owner,
                        uint32_t slots, epoch_fig *f)
{
    for (uint32_t i = 0; i < st->n; i++)
        w->within[i] = st->c[i] * st->wsum <= an_load_bound_scaled(st, i);
    memcpy(w->before, owner, slots * sizeof *owner);
    f->drifted = (double)an_load_excess(st);
    f->above_before = an_load_above(st);
}

/* The slots that moved: repeats (again within WINDOW epochs) and thrash
 * (again, away from a member that was within its bound). */
static void count_moves(case_work *w, int k, const uint32_t *owner, uint32_t slots, int e,
                        epoch_fig *f)
{
    for (uint32_t s = 0; s < slots; s++) {
        if (owner[s] == w->before[s])
            continue;
        if (e - w->last[k][s] < WINDOW) {
            f->repeats++;
            f->thrash += w->within[w->before[s]];
        }
        w->last[k][s] = e;
    }
}

static int epoch_dch(const load_sec *S, const group *g, case_work *w, int e, epoch_fig *f,
                     case_result *res)
{
    an_load_state st = state_of(g, w, w->load, S->slots, w->own[K_DCH]);
    before_call(&st, w, w->own[K_DCH], S->slots, f);
    dch_balance_report rep;
    memset(&rep, 0, sizeof rep);
    const double t0 = cpu_ms();
    int rc = dch_map_balance_load(w->bal, w->load, S->slots, NULL, &rep);
    f->ms = cpu_ms() - t0;
    if (rc != DCH_OK)
        return rc;
    for (uint32_t s = 0; s < S->slots; s++) {
        w->own[K_DCH][s] = map_member(w->bal, dch_map_slot_owner(w->bal, s));
        if (w->own[K_DCH][s] >= g->n)
            return DCH_EINVAL;
    }
    count_moves(w, K_DCH, w->own[K_DCH], S->slots, e, f);
    f->moved = (double)rep.moved_load + (double)rep.promoted_load;
    f->moved_floor = (double)rep.moved_load_floor;
    f->copies = rep.moves;
    st = state_of(g, w, w->load, S->slots, w->own[K_DCH]);
    f->ratio = an_load_max_ratio(&st);
    f->above_after = an_load_above(&st);
    if (e == 0)
        res->too_heavy = rep.too_heavy;
    return DCH_OK;
}

static int epoch_greedy(const load_sec *S, const group *g, case_work *w, int e,
                        epoch_fig *f)
{
    an_load_state st = state_of(g, w, w->load, S->slots, w->own[K_GREEDY]);
    before_call(&st, w, w->own[K_GREEDY], S->slots, f);
    f->moved_floor = f->drifted;
    an_greedy_result gr;
    const double t0 = cpu_ms();
    int rc = an_greedy_balance(&st, w->load, S->slots, w->own[K_GREEDY], &gr);
    f->ms = cpu_ms() - t0;
    if (rc != 0)
        return DCH_ENOMEM;
    count_moves(w, K_GREEDY, w->own[K_GREEDY], S->slots, e, f);
    f->moved = (double)gr.moved_load;
    f->copies = gr.moves;
    f->ratio = an_load_max_ratio(&st);
    f->above_after = an_load_above(&st);
    return DCH_OK;
}

/* The ring's busiest member over its target, from the same items. */
static double ring_ratio(const group *g, case_work *w, bool keys)
{
    an_load_model_members(&w->model, keys ? g->key_member : g->slot_member, g->n,
                          w->ring_load);
    double total = 0.0, wsum = 0.0, best = 0.0;
    for (uint32_t i = 0; i < g->n; i++) {
        total += w->ring_load[i];
        wsum += g->w[i];
    }
    for (uint32_t i = 0; total > 0.0 && i < g->n; i++) {
        const double x = w->ring_load[i] * wsum / (total * g->w[i]);
        best = x > best ? x : best;
    }
    return best;
}

static int epoch_row(load_sec *S, const group *g, const load_case *lc, int k, int e,
                     const epoch_fig *f)
{
    return an_table_add(S->epochs, "titinnnnniiiiin", KIND_LABEL[k], (long long)g->n,
                        lc->label, (long long)e, f->ratio, f->floor, f->drifted, f->moved,
                        f->moved_floor, (long long)f->copies, (long long)f->above_before,
                        (long long)f->above_after, (long long)f->repeats,
                        (long long)f->thrash, f->ms) == 0
               ? DCH_OK
               : DCH_ENOMEM;
}

/* Fold one epoch's figures of scheme k into the case's. */
static void fold(case_result *res, int k, int e, const epoch_fig *f, uint64_t total)
{
    kind_fig *x = &res->k[k];
    if (e == 0) {
        x->ratio0 = f->ratio;
        x->moved0 = f->moved;
        x->floor0 = f->moved_floor;
        x->copies0 = f->copies;
        x->above0 = f->above_after;
        x->ms0 = f->ms;
    } else {
        x->ratio_sum += f->ratio;
        x->moved_share_sum += total ? f->moved / (double)total : 0.0;
        x->copies_sum += f->copies;
        x->moved_sum += f->moved;
        x->drifted_sum += f->drifted;
        if (f->moved > 0.0)
            x->worst_md = fmax(x->worst_md, f->drifted > 0.0 ? f->moved / f->drifted
                                                             : INFINITY);
        x->repeats += f->repeats;
        x->thrash += f->thrash;
    }
    if (f->ms > x->ms_max && k == K_DCH)
        res->worst_ms_at = e;
    x->ms_max = fmax(x->ms_max, f->ms);
}

static int run_epoch(load_sec *S, const group *g, const load_case *lc, case_work *w, int e,
                     case_result *res)
{
    if (e > 0)
        an_load_model_drift(&w->model);
    an_load_model_slots(&w->model, w->load);
    epoch_fig f[KINDS];
    memset(f, 0, sizeof f);
    an_load_state st = state_of(g, w, w->load, S->slots, g->owner);
    const double floor = an_load_floor(&st);
    const uint64_t total = st.total;
    f[K_COUNT].ratio = an_load_max_ratio(&st);
    f[K_RING].ratio = ring_ratio(g, w, lc->src == AN_LOAD_KEYS);
    int rc = epoch_dch(S, g, w, e, &f[K_DCH], res);
    if (rc == DCH_OK)
        rc = epoch_greedy(S, g, w, e, &f[K_GREEDY]);
    if (e == 0) {
        res->floor0 = floor;
        res->total0 = total;
    } else {
        res->floor_sum += floor;
        res->drifted_share_sum += total ? f[K_DCH].drifted / (double)total : 0.0;
    }
    for (int k = 0; k < KINDS && rc == DCH_OK; k++) {
        f[k].floor = floor;
        fold(res, k, e, &f[k], total);
        w->figs[e][k] = f[k];
    }
    return rc;
}

static int run_case(load_sec *S, const group *g, const load_case *lc, case_result *res)
{
    memset(res, 0, sizeof *res);
    res->n = g->n;
    res->lc = lc;
    case_work w;
    int rc = work_new(S, g, lc, &w);
    for (int e = 0; e <= EPOCHS && rc == DCH_OK; e++)
        rc = run_epoch(S, g, lc, &w, e, res);
    /* A scheme's epochs in a run of rows, so that a chart's line through
     * them is unbroken. */
    for (int k = 0; k < KINDS && rc == DCH_OK; k++)
        for (int e = 0; e <= EPOCHS && rc == DCH_OK; e++)
            rc = epoch_row(S, g, lc, k, e, &w.figs[e][k]);
    work_free(&w);
    return rc;
}

/* ---- The tables -------------------------------------------------------------------- */

static double share(double x, uint64_t total)
{
    return total ? x / (double)total : 0.0;
}

static double over(double x, double floor)
{
    return floor > 0.0 ? x / floor : x > 0.0 ? INFINITY : NAN;
}

static int static_row(an_table *t, const case_result *c)
{
    const kind_fig *d = &c->k[K_DCH], *gr = &c->k[K_GREEDY];
    return an_table_add(t, "itnnnnnnnniiiiinn", (long long)c->n, c->lc->label, c->floor0,
                        c->k[K_COUNT].ratio0, c->k[K_RING].ratio0, gr->ratio0, d->ratio0,
                        share(d->floor0, c->total0), over(d->moved0, d->floor0),
                        over(gr->moved0, gr->floor0), (long long)d->copies0,
                        (long long)gr->copies0, (long long)d->above0, (long long)gr->above0,
                        (long long)c->too_heavy, d->ms0, gr->ms0);
}

static int drift_row(an_table *t, const case_result *c)
{
    const kind_fig *d = &c->k[K_DCH], *gr = &c->k[K_GREEDY];
    const double e = EPOCHS;
    return an_table_add(t, "itnnnnnnnnnnniiiin", (long long)c->n, c->lc->label,
                        c->floor_sum / e, c->k[K_COUNT].ratio_sum / e,
                        c->k[K_RING].ratio_sum / e, gr->ratio_sum / e, d->ratio_sum / e,
                        c->drifted_share_sum / e, d->moved_share_sum / e, d->worst_md,
                        gr->worst_md, d->copies_sum / e, gr->copies_sum / e,
                        (long long)d->repeats, (long long)gr->repeats, (long long)d->thrash,
                        (long long)gr->thrash, d->ms_max);
}

/* A goal's row: met, or missed by how much. No cell holds a comma, so the
 * CSV needs no quoting. */
static int goal_row(an_table *t, const char *goal, double target, double measured,
                    const char *where, bool at_most)
{
    char verdict[64];
    if (isnan(measured))
        snprintf(verdict, sizeof verdict, "not measured at this size");
    else if (at_most ? measured <= target : measured >= target)
        snprintf(verdict, sizeof verdict, "met");
    else if (target > 0.0 && isfinite(measured))
        snprintf(verdict, sizeof verdict, "missed by %.1f%%",
                 100.0 * fabs(measured - target) / target);
    else
        snprintf(verdict, sizeof verdict, "missed");
    return an_table_add(t, "tnntt", goal, target, measured, where, verdict);
}

/* The worst of the goals' figures over every case, and where. */
typedef struct goal_figs {
    double g1, g2, g2_total, g4;
    uint32_t thrash;
    char w1[64], w2[64], w2t[64], w3[64], w4[64];
} goal_figs;

static void worst_at(double x, double *worst, char *where, const case_result *c)
{
    if (!isnan(x) && (isnan(*worst) || x > *worst)) {
        *worst = x;
        snprintf(where, 64, "N=%u %s", (unsigned)c->n, c->lc->label);
    }
}

/* The four goals of issue 26 from the results of every case; the second
 * both per epoch (the worst) and over the epochs (total moved over total
 * drifted, the worst case). */
static int goals(an_table *t, const load_sec *S, const case_result *res, size_t nres)
{
    goal_figs g = {0.0, 0.0, 0.0, NAN, 0, "-", "-", "-", "every case", "-"};
    for (size_t i = 0; i < nres; i++) {
        const case_result *c = &res[i];
        const kind_fig *d = &c->k[K_DCH];
        if (c->lc->src != AN_LOAD_HOT)
            worst_at(over(d->moved0, d->floor0), &g.g1, g.w1, c);
        worst_at(d->worst_md, &g.g2, g.w2, c);
        if (d->moved_sum > 0.0)
            worst_at(over(d->moved_sum, d->drifted_sum), &g.g2_total, g.w2t, c);
        if (d->thrash > 0 && g.thrash == 0)
            snprintf(g.w3, sizeof g.w3, "N=%u %s", (unsigned)c->n, c->lc->label);
        g.thrash += d->thrash;
        if (c->n == PLAN_GOAL_N && S->slots == PLAN_GOAL_P) {
            const double before = g.g4;
            worst_at(d->ms_max, &g.g4, g.w4, c);
            if (g.g4 != before)
                snprintf(g.w4 + strlen(g.w4), sizeof g.w4 - strlen(g.w4), " epoch %.0f",
                         c->worst_ms_at);
        }
    }
    int bad = goal_row(t, "moved load / lower bound: one call on each Zipf case", 1.5, g.g1,
                       g.w1, true);
    bad |= goal_row(t, "moved / drifted across bounds: worst drift epoch", 2.0, g.g2, g.w2,
                    true);
    bad |= goal_row(t, "moved / drifted across bounds: sum over the epochs", 2.0,
                    g.g2_total, g.w2t, true);
    bad |= goal_row(t, "slots moved twice in 5 epochs from a member within bound", 0.0,
                    g.thrash, g.w3, true);
    bad |= goal_row(t, "plan time in ms: slowest call at N=1000 P=65536", PLAN_GOAL_MS,
                    g.g4, g.w4, true);
    return bad ? DCH_ENOMEM : DCH_OK;
}

/* ---- The page -------------------------------------------------------------------- */

static const case_result *find(const case_result *res, size_t nres, uint32_t n,
                               const char *label)
{
    for (size_t i = 0; i < nres; i++)
        if (res[i].n == n && strcmp(res[i].lc->label, label) == 0)
            return &res[i];
    return NULL;
}

static void lead(an_buf *h, const load_sec *S, const case_result *res, size_t nres,
                 const uint32_t *ns, size_t nn)
{
    const uint32_t lo = ns[0], hi = ns[nn - 1];
    char members[48];
    snprintf(members, sizeof members, lo == hi ? "%u" : "%u or %u", (unsigned)lo,
             (unsigned)hi);
    an_buf_printf(h,
                  "<p class=\"lead\">Slot counts are balanced to within 2 slots; load "
                  "is not. Over %u slots and %s members, with loads from %zu keys "
                  "of Zipf popularity, from Zipf straight onto slots and from %u hot "
                  "slots, then %d epochs of drift, one call of "
                  "<code>dch_map_balance_load</code> an epoch is set against the "
                  "count-balanced map, %s and a greedy baseline, beside the floor no "
                  "placement beats. ",
                  (unsigned)S->slots, members, S->keys,
                  AN_LOAD_HOT_SLOTS, EPOCHS, S->r->label[1]);
    const case_result *k10 = find(res, nres, lo, "keys s=1.0"),
                      *k08 = find(res, nres, lo, "keys s=0.8"),
                      *sk8 = find(res, nres, lo, "keys s=0.8 w=1-4"),
                      *sk10 = find(res, nres, lo, "keys s=1.0 w=1-4"),
                      *hot = find(res, nres, lo, "16 hot slots"),
                      *big = find(res, nres, hi, "keys s=0.8");
    if (k10 && k08 && sk8 && sk10 && hot && big)
        an_buf_printf(
            h,
            "Balancing helps where the imbalance is placement: at N=%u the busiest "
            "member goes from %.3f to %.3f times its target with keys s=0.8 (floor "
            "%.3f), from %.3f to %.3f with %u hot slots (floor %.3f), from %.3f to %.3f "
            "with s=0.8 and weights 1 to 4 (floor %.3f); and every member ends within "
            "its bound. Where one slot is hotter than a member's target it cannot: "
            "with keys s=1.0 at N=%u the floor is %.3f and the count-balanced map is "
            "already %.1f%% above it (%.3f); at N=%u even s=0.8 puts %.1f targets on "
            "one slot. There only spreading the hot slot's reads over its copies could "
            "lower the peak, and a member's heaviest slot never moves (with weights 1 "
            "to 4 and s=1.0 the hottest slot stays on its light member: %.3f against "
            "a floor of %.3f, which assumes it on the heaviest).</p>",
            (unsigned)lo, k08->k[K_COUNT].ratio0, k08->k[K_DCH].ratio0, k08->floor0,
            hot->k[K_COUNT].ratio0, hot->k[K_DCH].ratio0, AN_LOAD_HOT_SLOTS, hot->floor0,
            sk8->k[K_COUNT].ratio0, sk8->k[K_DCH].ratio0, sk8->floor0, (unsigned)lo,
            k10->floor0, 100.0 * (k10->k[K_COUNT].ratio0 / k10->floor0 - 1.0),
            k10->k[K_COUNT].ratio0, (unsigned)hi, big->floor0, sk10->k[K_DCH].ratio0,
            sk10->floor0);
    else
        an_buf_printf(h, "</p>");
    an_buf_printf(
        h,
        "<p><b>How to read it.</b> A member's load is the sum of its slots' loads, "
        "its target T<sub>i</sub> its weight's share of the total, and max/mean the "
        "largest load over target; the floor is max(1, heaviest slot / largest "
        "target). <i>balanced</i> is the map after <code>dch_map_balance_load</code> "
        "(every epoch, keeping its earlier moves), <i>greedy</i> moves the hottest "
        "slot of the most loaded member to the least loaded until no member is above "
        "its bound B<sub>i</sub> (or a move no longer helps), %s gets the same keys "
        "(or each slot's middle hash). The <i>lower bound</i> on moved load is the "
        "load above the bounds before the call (the report's "
        "<code>moved_load_floor</code>); in drift, <i>drifted</i> is that same "
        "amount after each epoch's drift, before balancing. A repeat is a slot moved "
        "again within %d epochs; thrash a repeat away from a member that was within "
        "its bound. Plan time is CPU time of one call. Every epoch of every scheme is "
        "in <a href=\"load_epochs.csv\">load_epochs.csv</a>.</p>",
        S->r->label[1], WINDOW);
}

/* The charts: the static case at each N, the drift of one case, and what
 * each balancing moved and cost per epoch. */
static void charts(an_run *r, const uint32_t *ns, size_t nn)
{
    static const char *const bar_colour[4] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728"};
    static const char *const bar_title[4] = {"count-balanced", "ring", "greedy",
                                             "balanced"};
    for (size_t i = 0; i < nn; i++) {
        char stem[32], caption[200], x[4][64];
        an_series sr[5];
        snprintf(stem, sizeof stem, "load_static_%u", (unsigned)ns[i]);
        snprintf(caption, sizeof caption,
                 "Busiest member over its target, divided by the floor no placement "
                 "beats (1: the floor), N = %u, after one balancing call",
                 (unsigned)ns[i]);
        sr[0] = (an_series){NULL, "1", NULL, NULL, AN_REFERENCE_STYLE, AN_REFERENCE_COLOUR,
                            "the floor"};
        for (int k = 0; k < 4; k++) {
            snprintf(x[k], sizeof x[k], "($%d/$3)%s every ::%zu::%zu", 4 + k,
                     k == 0 ? ":xtic(2)" : "", i * NCASES, i * NCASES + NCASES - 1);
            sr[1 + k] = (an_series){k == 0 ? "load.csv" : "", x[k], NULL, NULL, NULL,
                                    bar_colour[k], bar_title[k]};
        }
        an_report_chart(r->report, &(an_chart){
            stem, caption, NULL, "max / mean load, over the floor",
            "set style data histograms\nset style histogram clustered gap 1\n"
            "set style fill solid 0.9 border -1\nset boxwidth 0.9\n"
            "set yrange [0.9:*]\nset xtics noenhanced rotate by -20\n", sr, 5});
    }
}

static void charts_drift(an_run *r, uint32_t n)
{
    char sel[4][96], ys[2][96];
    an_series sr[6];
    const char *const run = "keys s=0.8";
    snprintf(sel[0], sizeof sel[0], "($2 == %u && strcol(3) eq '%s' ? $4 : 1/0)",
             (unsigned)n, run);
    sr[0] = (an_series){"load_epochs.csv", sel[0], "$6", "balanced", AN_REFERENCE_STYLE,
                        AN_REFERENCE_COLOUR, "floor"};
    static const int order[4] = {K_RING, K_COUNT, K_GREEDY, K_DCH};
    static const char *const colour[KINDS] = {"#1f77b4", "#d62728", "#ff7f0e", "#2ca02c"};
    static const char *const style[KINDS] = {"linespoints pt 6 ps 0.8 lw 2",
                                             "linespoints pt 7 ps 0.6 lw 2",
                                             "linespoints pt 4 ps 0.8 lw 2",
                                             "linespoints pt 5 ps 0.6 lw 2"};
    for (int i = 0; i < 4; i++)
        sr[1 + i] = (an_series){"", sel[0], "$5", KIND_LABEL[order[i]], style[order[i]],
                                colour[order[i]], KIND_LABEL[order[i]]};
    char caption[160];
    snprintf(caption, sizeof caption,
             "Busiest member over its target through %d epochs of drift, N = %u, keys "
             "of Zipf s = 0.8",
             EPOCHS, (unsigned)n);
    an_report_chart(r->report, &(an_chart){"load_drift", caption, "epoch",
                                           "max / mean load", NULL, sr, 5});
    /* Moved load over drifted, every drift epoch of every case: goal 2. */
    snprintf(ys[0], sizeof ys[0], "($4 > 0 && $7 > 0 ? $8 / $7 : 1/0)");
    snprintf(ys[1], sizeof ys[1], "($4 > 0 && $7 > 0 && $8 > 0 ? $8 / $7 : 1/0)");
    sr[0] = (an_series){NULL, "2", NULL, NULL, AN_REFERENCE_STYLE, AN_REFERENCE_COLOUR,
                        "goal: 2"};
    sr[1] = (an_series){"load_epochs.csv", "4", ys[1], "greedy", "points pt 4 ps 0.8",
                        colour[K_GREEDY], "greedy"};
    sr[2] = (an_series){"", "4", ys[0], "balanced", "points pt 7 ps 0.5",
                        colour[K_DCH], "balanced"};
    an_report_chart(r->report, &(an_chart){
        "load_moved",
        "Load moved in an epoch over the load drifted across bounds, every case and "
        "drift epoch (log scale)",
        "epoch", "moved / drifted", "set logscale y\n", sr, 3});
    sr[1] = (an_series){"load_epochs.csv", "4", "($4 > 0 && $10 > 0 ? $10 : 1/0)",
                        "greedy", "points pt 4 ps 0.8", colour[K_GREEDY], "greedy"};
    sr[2] = (an_series){"", "4", "($4 > 0 && $10 > 0 ? $10 : 1/0)", "balanced",
                        "points pt 7 ps 0.5", colour[K_DCH], "balanced"};
    an_report_chart(r->report, &(an_chart){
        "load_copies", "Copies moved in each drift epoch, every case (log scale)", "epoch",
        "copies moved", "set logscale y\n", sr + 1, 2});
    sr[0] = (an_series){NULL, "10", NULL, NULL, AN_REFERENCE_STYLE, AN_REFERENCE_COLOUR,
                        "goal at N = 1000: 10 ms"};
    sr[1] = (an_series){"load_epochs.csv", "4", "($2 >= 1000 ? $15 : 1/0)", "greedy",
                        "points pt 4 ps 0.8", colour[K_GREEDY], "greedy, N = 1000"};
    sr[2] = (an_series){"", "4", "($2 >= 1000 ? $15 : 1/0)", "balanced",
                        "points pt 7 ps 0.5", colour[K_DCH], "balanced, N = 1000"};
    sr[3] = (an_series){"", "4", "($2 < 1000 ? $15 : 1/0)", "balanced",
                        "points pt 6 ps 0.7", "#ff9896", "balanced, smaller N"};
    an_report_chart(r->report, &(an_chart){
        "load_plan", "Plan time of each call, every case (CPU ms, log scale)", "epoch",
        "ms", "set logscale y\n", sr, 4});
}

/* ---- The section ----------------------------------------------------------------- */

/* Every key's hash and slot, by the map's hash (the ring is given the same
 * hashes): "key-0", "key-1", ... */
static int hash_keys(load_sec *S)
{
    dch_map_config mc;
    dch_map_config_default(&mc);
    mc.units = S->r->opt.units;
    mc.slots_per_unit = S->r->opt.slots;
    memcpy(mc.hash_key, S->r->hash_key, sizeof mc.hash_key);
    dch_map *m = NULL;
    int rc = dch_map_new(&m, &mc);
    S->key_hash = malloc(S->keys * sizeof *S->key_hash);
    S->key_slot = malloc(S->keys * sizeof *S->key_slot);
    if (rc == DCH_OK && (S->key_hash == NULL || S->key_slot == NULL))
        rc = DCH_ENOMEM;
    for (size_t k = 0; k < S->keys && rc == DCH_OK; k++) {
        char name[32];
        const int len = snprintf(name, sizeof name, "key-%zu", k);
        S->key_hash[k] = dch_map_hash(m, name, (size_t)len);
        S->key_slot[k] = dch_map_slot_of(m, S->key_hash[k]);
    }
    dch_map_free(m);
    return rc;
}

/* The member counts: 100 and 1,000, at most P/8 each, without repeats. */
static size_t member_counts(uint32_t slots, uint32_t *ns)
{
    static const uint32_t WANTED[MAX_NS] = {100, 1000};
    size_t nn = 0;
    for (size_t i = 0; i < MAX_NS; i++) {
        uint32_t n = WANTED[i] < slots / 8 ? WANTED[i] : slots / 8;
        n = n < 2 ? 2 : n;
        if (nn == 0 || ns[nn - 1] != n)
            ns[nn++] = n;
    }
    return nn;
}

/* Every case at every N, each group's map and ring built once. */
static int run_all(load_sec *S, const uint32_t *ns, size_t nn, case_result *res,
                   size_t *nres)
{
    an_progress p;
    an_progress_begin(&p, "load");
    int rc = DCH_OK;
    *nres = 0;
    for (size_t i = 0; i < nn && rc == DCH_OK; i++) {
        for (int skew = 0; skew < 2 && rc == DCH_OK; skew++) {
            group g;
            rc = group_new(S, &g, ns[i], skew != 0);
            for (size_t c = 0; c < NCASES && rc == DCH_OK; c++) {
                if (CASES[c].skew != (skew != 0))
                    continue;
                an_progress_update(&p, CASES[c].label, (double)(i * NCASES + c),
                                   (double)(nn * NCASES));
                rc = run_case(S, &g, &CASES[c], &res[*nres]);
                *nres += rc == DCH_OK;
            }
            group_free(&g);
        }
    }
    an_progress_end(&p);
    return rc;
}

/* Results in the tables' order: by N, then as CASES lists them. */
static int by_n_then_case(const void *a, const void *b)
{
    const case_result *x = a, *y = b;
    if (x->n != y->n)
        return x->n < y->n ? -1 : 1;
    return (x->lc > y->lc) - (x->lc < y->lc);
}

static int page(load_sec *S, case_result *res, size_t nres, const uint32_t *ns, size_t nn)
{
    an_run *r = S->r;
    qsort(res, nres, sizeof *res, by_n_then_case);
    an_table *st = an_table_for(AN_TABLE_LOAD, "9a. Load: one balancing call, P = %u",
                                (unsigned)S->slots);
    an_table *dt = an_table_for(AN_TABLE_LOAD_DRIFT, "9b. Load: %d epochs of drift",
                                EPOCHS);
    an_table *gt = an_table_for(AN_TABLE_LOAD_GOALS, "9c. Load: the goals");
    int rc = st && dt && gt ? DCH_OK : DCH_ENOMEM;
    for (size_t i = 0; i < nres && rc == DCH_OK; i++) {
        if (i > 0 && res[i].n != res[i - 1].n) {
            an_table_gap(st);
            an_table_gap(dt);
        }
        if (static_row(st, &res[i]) != 0 || drift_row(dt, &res[i]) != 0)
            rc = DCH_ENOMEM;
    }
    if (rc == DCH_OK)
        rc = goals(gt, S, res, nres);
    an_buf h = {0};
    if (rc == DCH_OK)
        lead(&h, S, res, nres, ns, nn);
    if (rc == DCH_OK && an_section_begin(r, "load", an_buf_str(&h)) != 0)
        rc = DCH_ENOMEM;
    an_buf_free(&h);
    if (rc == DCH_OK) {
        const int a = an_report_table(r->report, gt);
        const int b = an_report_table(r->report, st);
        gt = st = NULL;
        charts(r, ns, nn);
        const int c = an_report_table(r->report, dt);
        dt = NULL;
        charts_drift(r, ns[0]);
        rc = a || b || c ? DCH_ENOMEM : DCH_OK;
    }
    an_table_free(st);
    an_table_free(dt);
    an_table_free(gt);
    return rc;
}

int an_section_load(an_run *r)
{
    load_sec S = {r, r->opt.units * r->opt.slots, r->opt.keys, NULL, NULL,
                  an_table_for(AN_TABLE_LOAD_EPOCHS, "9. Load: every epoch")};
    uint32_t ns[MAX_NS];
    const size_t nn = member_counts(S.slots, ns);
    case_result *res = calloc(nn * NCASES, sizeof *res);
    int rc = S.epochs != NULL && res != NULL ? DCH_OK : DCH_ENOMEM;
    if (rc == DCH_OK)
        rc = hash_keys(&S);
    size_t nres = 0;
    if (rc == DCH_OK)
        rc = run_all(&S, ns, nn, res, &nres);
    if (rc == DCH_OK)
        rc = page(&S, res, nres, ns, nn);
    if (rc == DCH_OK) {
        char path[4096];
        an_report_path(r->report, "load_epochs.csv", path, sizeof path);
        rc = an_table_write_csv(S.epochs, path) == 0 ? DCH_OK : DCH_EIO;
    }
    an_table_free(S.epochs);
    free(res);
    free(S.key_hash);
    free(S.key_slot);
    return rc == DCH_OK ? DCH_OK : an_fail("load", rc);
}
