/* SPDX-License-Identifier: MIT */
/*
 * The explorer's report: the current state as one JSON text that the page
 * draws without computing anything itself. Ranges and changes go out as
 * fractions of the hash space for drawing; every figure the page prints
 * (shares, moved, balance, spread, load, disagreement) is computed here from
 * exact range lists, with the measures dch-analysis uses.
 *
 * Figures of the current state that cost more than the last change does are
 * computed only when asked for (ex_state(1)): spread and load over client
 * views (every view
 * builds its own object from the members it sees, in name order, as
 * dch-analysis's views do; DCH also with one shared map) and the
 * disagreement with the same members joined in reverse order.
 *
 * With the hot spot on, each balancing member's load, target and bound are
 * reported with the terms of include/dch/balance.h, with the last
 * balancing's report and the slots it moved.
 */
#include "explorer.h"
#include "text.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A finite number (JSON has no NaN or infinity: they go out as null). */
static void num(an_buf *b, double v)
{
    if (isfinite(v))
        an_buf_printf(b, "%.17g", v);
    else
        an_buf_printf(b, "null");
}

static double at(uint64_t h)
{
    return ldexp((double)h, -64);
}

static int owner_json(uint32_t o)
{
    return o == DCH_NODE_NONE ? -1 : (int)o;
}

static void ranges_json(an_buf *b, const an_ranges *rs)
{
    an_buf_printf(b, "[");
    for (size_t i = 0; i < rs->n; i++) {
        an_buf_printf(b, "%s", i ? ",[" : "[");
        num(b, at(rs->v[i].lo));
        an_buf_printf(b, ",%d]", owner_json(rs->v[i].owner));
    }
    an_buf_printf(b, "]");
}

static void changes_json(an_buf *b, const an_changes *c)
{
    an_buf_printf(b, "[");
    for (size_t i = 0; i < c->n; i++) {
        an_buf_printf(b, "%s", i ? ",[" : "[");
        num(b, at(c->v[i].lo));
        an_buf_printf(b, ",");
        /* hi is inclusive: the arc ends where the next hash begins. */
        num(b, c->v[i].hi == UINT64_MAX ? 1.0 : at(c->v[i].hi + 1));
        an_buf_printf(b, ",%d,%d]", owner_json(c->v[i].from), owner_json(c->v[i].to));
    }
    an_buf_printf(b, "]");
}

static int cmp_flow(const void *pa, const void *pb)
{
    double a = an_volume_fraction(((const ex_flow *)pa)->vol);
    double b = an_volume_fraction(((const ex_flow *)pb)->vol);
    return (a < b) - (a > b);
}

/* ---- Figures of the current state -------------------------------------------- */

/* The present members' name numbers, ascending; returns how many. */
static uint32_t present(uint32_t *who)
{
    uint32_t n = 0;
    bool is[EX_MAX_NAMES] = {false};
    const an_scheme *s = &ex.sc[0];
    for (uint32_t id = 0; id < an_scheme_id_limit(s); id++) {
        uint32_t k = ex_number_of(an_scheme_name(s, id));
        if (k != DCH_NODE_NONE)
            is[k] = true;
    }
    for (uint32_t k = 0; k < EX_MAX_NAMES; k++)
        if (is[k])
            who[n++] = k;
    return n;
}

/* Ranges of s with owners numbered by position in who[0 .. n-1]. */
static int ranges_by_position(const an_scheme *s, const uint32_t *who,
                              uint32_t n, an_ranges *out)
{
    uint32_t to[EX_MAX_NAMES];
    for (uint32_t k = 0; k < EX_MAX_NAMES; k++)
        to[k] = DCH_NODE_NONE;
    for (uint32_t g = 0; g < n; g++)
        to[who[g]] = g;
    int rc = ex_ranges_by_number(s, out);
    if (rc == DCH_OK)
        rc = an_ranges_renumber(out, to, EX_MAX_NAMES);
    return rc;
}

/* A fresh scheme s holding who[order[0 .. n-1]] with their current weights,
 * added in that order. */
static int build(int s, const uint32_t *who, const bool *take, uint32_t n,
                 bool reverse, const uint32_t *weight, an_scheme *out)
{
    char text[EX_MAX_NAMES][16];
    const char *names[EX_MAX_NAMES];
    uint32_t w[EX_MAX_NAMES];
    for (uint32_t g = 0; g < n; g++) {
        ex_name_of(text[g], sizeof text[g], who[g]);
        names[g] = text[g];
        w[g] = weight[who[g]];
    }
    return an_scheme_of_names(out, &ex.spec[s], names, w, take, n, reverse);
}

/* Spread and load over the views, for scheme s (a build per view) or, with
 * s < 0, for the live DCH map shared by every view. */
static int spread_of(int s, const uint32_t *who, uint32_t n, const bool *sees,
                     an_spread_load *out)
{
    const uint32_t views = ex.views;
    uint32_t weight[EX_MAX_NAMES];
    ex_weights_by_number(&ex.sc[0], weight);
    an_ranges *rs = calloc(views, sizeof *rs);
    if (rs == NULL)
        return DCH_ENOMEM;
    int rc = DCH_OK;
    for (uint32_t v = 0; v < views && rc == DCH_OK; v++) {
        if (s < 0) {
            rc = ranges_by_position(&ex.sc[0], who, n, &rs[v]);
            continue;
        }
        an_scheme view = {0};
        rc = build(s, who, sees + (size_t)v * n, n, false, weight, &view);
        if (rc == DCH_OK)
            rc = ranges_by_position(&view, who, n, &rs[v]);
        an_scheme_free(&view);
    }
    if (rc == DCH_OK)
        rc = an_spread_load_exact(rs, views, n, out);
    for (uint32_t v = 0; v < views; v++)
        an_ranges_free(&rs[v]);
    free(rs);
    return rc;
}

/* Where the live scheme s and the same members joined in reverse order
 * disagree, by the library's diff of the two; `keep` (if not NULL) receives
 * the reverse build's ranges and the changes from the live one to it. */
static int disagreement(int s, const uint32_t *who, uint32_t n, double *out,
                        an_ranges *keep, an_changes *keep_ch)
{
    uint32_t weight[EX_MAX_NAMES];
    ex_weights_by_number(&ex.sc[s], weight);
    an_scheme rev = {0};
    an_changes ch = {NULL, 0, 0};
    an_moves mv;
    an_ranges b = {NULL, 0};
    int rc = build(s, who, NULL, n, true, weight, &rev);
    if (rc == DCH_OK)
        rc = an_scheme_diff(&ch, &ex.sc[s], &rev, ex_numbering, NULL);
    if (rc == DCH_OK)
        rc = an_moves_of(&ch, EX_MAX_NAMES, DCH_NODE_NONE, &mv);
    if (rc == DCH_OK && keep != NULL)
        rc = ex_ranges_by_number(&rev, &b);
    if (rc == DCH_OK) {
        *out = mv.moved;
        if (keep != NULL) {
            *keep = b;
            b = (an_ranges){NULL, 0};
            an_changes_free(keep_ch);
            *keep_ch = ch;
            ch = (an_changes){NULL, 0, 0};
        }
    }
    an_changes_free(&ch);
    an_ranges_free(&b);
    an_scheme_free(&rev);
    return rc;
}

/* ---- The hot spot -------------------------------------------------------------- */

/* The slot load terms of balance.h, computed here for the page's bars. */
typedef struct hot_terms {
    uint64_t total, heaviest, second;
    uint32_t heaviest_slot;
    double weights; /* W', the balancing members' weight sum */
} hot_terms;

static hot_terms terms_of(const dch_map *m, const uint64_t *load, uint32_t P)
{
    hot_terms t = {0, 0, 0, 0, 0.0};
    for (uint32_t slot = 0; slot < P; slot++) {
        t.total += load[slot];
        if (load[slot] > t.heaviest) {
            t.second = t.heaviest;
            t.heaviest = load[slot];
            t.heaviest_slot = slot;
        } else if (load[slot] > t.second) {
            t.second = load[slot];
        }
    }
    for (uint32_t id = 0; id < dch_map_id_limit(m); id++)
        if (dch_map_node_name(m, id) != NULL && ex_balances(m, id))
            t.weights += dch_map_node_weight(m, id);
    return t;
}

/* Each balancing member: its load C_i, target T_i, heaviest slot h_i and
 * bound B_i = min(T_i + Lmax, max(T_i, h_i) + L2) (balance.h); returns the
 * largest C_i / T_i and the largest T_i through *ratio and *target. */
static void hot_members_json(an_buf *b, const dch_map *m, const hot_terms *t,
                             double *ratio, double *target)
{
    const uint64_t *load = ex.hot.load;
    uint64_t by[EX_MAX_NAMES], h[EX_MAX_NAMES] = {0};
    uint32_t slots[EX_MAX_NAMES] = {0};
    ex_loads_by_number(m, load, by);
    for (uint32_t slot = 0; slot < ex.hot.nslots; slot++) {
        uint32_t k = ex_number_of(dch_map_node_name(m, dch_map_slot_owner(m, slot)));
        if (k == DCH_NODE_NONE)
            continue;
        slots[k]++;
        if (load[slot] > h[k])
            h[k] = load[slot];
    }
    *ratio = *target = 0.0;
    an_buf_printf(b, "\"members\":[");
    uint32_t id_of[EX_MAX_NAMES];
    for (uint32_t k = 0; k < EX_MAX_NAMES; k++)
        id_of[k] = DCH_NODE_NONE;
    for (uint32_t id = 0; id < dch_map_id_limit(m); id++) {
        uint32_t k = ex_number_of(dch_map_node_name(m, id));
        if (k != DCH_NODE_NONE && ex_balances(m, id))
            id_of[k] = id;
    }
    for (uint32_t k = 0, first = 1; k < EX_MAX_NAMES; k++) {
        const uint32_t id = id_of[k];
        if (id == DCH_NODE_NONE)
            continue;
        const char *name = dch_map_node_name(m, id);
        double T = (double)t->total * dch_map_node_weight(m, id) / t->weights;
        double B = fmin(T + (double)t->heaviest, fmax(T, (double)h[k]) + (double)t->second);
        *ratio = fmax(*ratio, (double)by[k] / T);
        *target = fmax(*target, T);
        an_buf_printf(b, "%s{\"who\":%u,\"name\":\"%s\",\"load\":%llu,\"slots\":%u,"
                         "\"heaviest\":%llu,\"target\":",
                      first ? "" : ",", (unsigned)k, name, (unsigned long long)by[k],
                      (unsigned)slots[k], (unsigned long long)h[k]);
        num(b, T);
        an_buf_printf(b, ",\"bound\":");
        num(b, B);
        an_buf_printf(b, ",\"ratio\":");
        num(b, (double)by[k] / T);
        /* Before the last balancing (which changes no target). */
        const bool was = ex.hot.reported && ex.hot.balanced_before[k];
        an_buf_printf(b, ",\"before\":");
        if (was)
            an_buf_printf(b, "%llu", (unsigned long long)ex.hot.before[k]);
        else
            an_buf_printf(b, "null");
        an_buf_printf(b, ",\"ratioBefore\":");
        num(b, was ? (double)ex.hot.before[k] / T : NAN);
        an_buf_printf(b, "}");
        first = 0;
    }
    an_buf_printf(b, "],");
}

#define EX_MOVES_SHOWN 200u

/* The last balancing's report and the slots it moved (the first
 * EX_MOVES_SHOWN; movedCount says how many). */
static void balance_json(an_buf *b)
{
    const dch_balance_report *r = &ex.hot.rep;
    if (!ex.hot.reported) {
        an_buf_printf(b, "null");
        return;
    }
    an_buf_printf(b,
                  "{\"moves\":%u,\"promotions\":%u,\"movedLoad\":%llu,"
                  "\"promotedLoad\":%llu,\"movedLoadFloor\":%llu,\"aboveBefore\":%u,"
                  "\"aboveAfter\":%u,\"tooHeavy\":%u,\"inForce\":%u,\"maxBefore\":",
                  (unsigned)r->moves, (unsigned)r->promotions,
                  (unsigned long long)r->moved_load, (unsigned long long)r->promoted_load,
                  (unsigned long long)r->moved_load_floor, (unsigned)r->above_before,
                  (unsigned)r->above_after, (unsigned)r->too_heavy, (unsigned)r->in_force);
    num(b, r->max_ratio_before);
    an_buf_printf(b, ",\"maxAfter\":");
    num(b, r->max_ratio_after);
    an_buf_printf(b, ",\"left\":[");
    static const char *const WHY[] = {"", "budget", "slack", "placement"};
    uint32_t nleft = r->left_count < EX_MAX_MEMBERS ? r->left_count : EX_MAX_MEMBERS;
    for (uint32_t i = 0; i < nleft; i++) {
        const dch_balance_left *l = &ex.hot.left[i];
        an_buf_printf(b, "%s{\"name\":\"%s\",\"why\":\"%s\",\"load\":%llu,\"bound\":%llu}",
                      i ? "," : "", dch_map_node_name(ex.sc[0].map, l->id),
                      l->why < 4 ? WHY[l->why] : "", (unsigned long long)l->load,
                      (unsigned long long)l->bound);
    }
    an_buf_printf(b, "],\"movedCount\":%u,\"moved\":[", (unsigned)ex.hot.nmoved);
    for (uint32_t i = 0; i < ex.hot.nmoved && i < EX_MOVES_SHOWN; i++) {
        const uint32_t *mv = &ex.hot.moved[3 * i];
        an_buf_printf(b, "%s[%u,%d,%d,%llu]", i ? "," : "", (unsigned)mv[0],
                      owner_json(mv[1]), owner_json(mv[2]),
                      (unsigned long long)ex.hot.load[mv[0]]);
    }
    an_buf_printf(b, "]}");
}

/*
 * The hot spot, or null: the slot load terms, each balancing member's load,
 * target and bound, the largest load over target and the floor no placement
 * can beat, max(1, Lmax / max T_i), and the last balancing's report.
 */
static void hot_json(an_buf *b)
{
    const dch_map *m = ex.sc[0].map;
    if (!ex.hot.on || ex.hot.nslots != dch_map_slot_count(m)) {
        an_buf_printf(b, "\"hot\":null,");
        return;
    }
    const hot_terms t = terms_of(m, ex.hot.load, ex.hot.nslots);
    an_buf_printf(b,
                  "\"hot\":{\"keys\":%u,\"zipf\":%u,\"hotSlot\":%u,\"total\":%llu,"
                  "\"heaviest\":%llu,\"heaviestSlot\":%u,\"second\":%llu,",
                  (unsigned)EX_HOT_KEYS, (unsigned)ex.hot.zipf, (unsigned)ex.hot.hot_slot,
                  (unsigned long long)t.total, (unsigned long long)t.heaviest,
                  (unsigned)t.heaviest_slot, (unsigned long long)t.second);
    double ratio, target;
    hot_members_json(b, m, &t, &ratio, &target);
    an_buf_printf(b, "\"maxRatio\":");
    num(b, target > 0.0 ? ratio : NAN);
    an_buf_printf(b, ",\"floor\":");
    num(b, target > 0.0 ? fmax(1.0, (double)t.heaviest / target) : NAN);
    an_buf_printf(b, ",\"inForce\":%u,\"balance\":", (unsigned)dch_map_balance_moves(m));
    balance_json(b);
    an_buf_printf(b, "},");
}

/* ---- The JSON text ------------------------------------------------------------ */

static const char *const KIND[] = {"add", "remove", "weight", "drain", "undrain"};

static void op_json(an_buf *b, const ex_op *op)
{
    char name[16];
    ex_name_of(name, sizeof name, op->who);
    an_buf_printf(b,
                  "{\"kind\":\"%s\",\"who\":%u,\"name\":\"%s\",\"weight\":%u,"
                  "\"prev\":%u}",
                  KIND[op->kind], (unsigned)op->who, name, (unsigned)op->weight,
                  (unsigned)op->prev);
}

static void spread_json(an_buf *b, const an_spread_load *sl, bool valid)
{
    if (!valid) {
        an_buf_printf(b, "null");
        return;
    }
    an_buf_printf(b, "{\"max\":");
    num(b, sl->spread_max);
    an_buf_printf(b, ",\"mean\":");
    num(b, sl->spread_mean);
    an_buf_printf(b, ",\"load\":");
    num(b, sl->load_max);
    an_buf_printf(b, "}");
}

static int members_json(an_buf *b, const uint32_t *who, uint32_t n,
                        an_ranges *now)
{
    uint32_t weight[EX_MAX_NAMES];
    ex_weights_by_number(&ex.sc[0], weight);
    an_buf_printf(b, "\"members\":[");
    for (uint32_t g = 0; g < n; g++) {
        char name[16];
        ex_name_of(name, sizeof name, who[g]);
        uint32_t id = DCH_NODE_NONE;
        dch_map_find_node(ex.sc[0].map, name, &id);
        an_buf_printf(b,
                      "%s{\"who\":%u,\"name\":\"%s\",\"weight\":%u,\"drained\":%s,"
                      "\"share\":[",
                      g ? "," : "", (unsigned)who[g], name, (unsigned)weight[who[g]],
                      dch_map_node_drained(ex.sc[0].map, id) ? "true" : "false");
        for (int s = 0; s < EX_SCHEMES; s++) {
            an_buf_printf(b, "%s", s ? "," : "");
            num(b, an_share_of(&now[s], who[g]));
        }
        an_buf_printf(b, "]}");
    }
    an_buf_printf(b, "],");
    return DCH_OK;
}

/*
 * DCH's drained members, in the order drained: each one's base share (the
 * arcs it owns in the base table, dch_map_base_owner) and who serves those
 * arcs now (the effective owner, dch_map_slot_owner), in name order.
 */
static void drains_json(an_buf *b)
{
    const dch_map *m = ex.sc[0].map;
    uint32_t ids[EX_MAX_MEMBERS];
    size_t n = dch_map_drains(m, ids, NULL, EX_MAX_MEMBERS);
    const uint32_t P = dch_map_slot_count(m);
    n = n < EX_MAX_MEMBERS ? n : EX_MAX_MEMBERS;
    an_buf_printf(b, "\"drains\":[");
    for (size_t i = 0; i < n; i++) {
        uint32_t by[EX_MAX_NAMES] = {0}, base = 0;
        for (uint32_t slot = 0; slot < P; slot++) {
            if (dch_map_base_owner(m, slot) != ids[i])
                continue;
            base++;
            const uint32_t k = ex_number_of(dch_map_node_name(m, dch_map_slot_owner(m, slot)));
            if (k != DCH_NODE_NONE)
                by[k]++;
        }
        an_buf_printf(b, "%s{\"name\":\"%s\",\"base\":", i ? "," : "",
                      dch_map_node_name(m, ids[i]));
        num(b, (double)base / P);
        an_buf_printf(b, ",\"servedBy\":[");
        for (uint32_t k = 0, first = 1; k < EX_MAX_NAMES; k++) {
            char name[16];
            if (by[k] == 0)
                continue;
            ex_name_of(name, sizeof name, k);
            an_buf_printf(b, "%s{\"who\":%u,\"name\":\"%s\",\"share\":", first ? "" : ",",
                          (unsigned)k, name);
            num(b, (double)by[k] / P);
            an_buf_printf(b, "}");
            first = 0;
        }
        an_buf_printf(b, "]}");
    }
    an_buf_printf(b, "],");
}

/* What the last change did to one scheme: moved, who took part, the plan. */
static void change_json(an_buf *b, const ex_change *c)
{
    an_buf_printf(b, "{\"moved\":");
    num(b, c->mv.moved);
    an_buf_printf(b, ",\"movedOther\":");
    num(b, c->mv.moved_other);
    an_buf_printf(b, ",\"optimum\":");
    num(b, c->optimum);
    an_buf_printf(b,
                  ",\"donors\":%u,\"receivers\":%u,\"parties\":%u,"
                  "\"eligible\":%u,\"worst\":",
                  (unsigned)c->mv.donors, (unsigned)c->mv.receivers,
                  (unsigned)c->parties, (unsigned)c->eligible);
    num(b, c->worst);
    an_buf_printf(b, ",\"maxDonation\":");
    num(b, c->mv.max_donation);
    an_buf_printf(b, ",\"maxReceipt\":");
    num(b, c->mv.max_receipt);
    an_buf_printf(b, ",\"changes\":");
    changes_json(b, &c->ch);
    ex_flow flows[EX_MAX_FLOWS];
    memcpy(flows, c->flows, c->nflows * sizeof *flows);
    qsort(flows, c->nflows, sizeof *flows, cmp_flow);
    an_buf_printf(b, ",\"flows\":[");
    for (uint32_t i = 0; i < c->nflows; i++) {
        an_buf_printf(b, "%s[%d,%d,", i ? "," : "", owner_json(flows[i].from),
                      owner_json(flows[i].to));
        num(b, an_volume_fraction(flows[i].vol));
        an_buf_printf(b, "]");
    }
    an_buf_printf(b, "]}");
}

static int scheme_json(an_buf *b, int s, const an_ranges *now,
                       const an_spread_load *sl, bool spread_valid,
                       double disagree)
{
    const ex_change *c = &ex.last[s];
    uint32_t limit = EX_MAX_NAMES;
    double share[EX_MAX_NAMES];
    uint32_t weight[EX_MAX_NAMES];
    int rc = an_shares(now, limit, share);
    if (rc != DCH_OK)
        return rc;
    ex_weights_by_number(&ex.sc[s], weight);
    an_balance bal = an_balance_of(share, weight, limit);

    /* Labels as dch-analysis writes them: dch, ring-<points>, ring-1. */
    if (s == 0)
        an_buf_printf(b, "{\"label\":\"dch\",\"ranges\":");
    else
        an_buf_printf(b, "{\"label\":\"ring-%u\",\"ranges\":",
                      (unsigned)ex.spec[s].points);
    ranges_json(b, now);
    an_buf_printf(b, ",\"balance\":{\"members\":%u,\"peak\":", (unsigned)bal.members);
    num(b, bal.peak_to_avg);
    an_buf_printf(b, ",\"min\":");
    num(b, bal.min_to_avg);
    an_buf_printf(b, ",\"cv\":");
    num(b, bal.cv);
    an_buf_printf(b, "},\"spread\":");
    spread_json(b, sl, spread_valid);
    an_buf_printf(b, ",\"disagree\":");
    num(b, disagree);
    an_buf_printf(b, ",\"change\":");
    if (!c->valid || ex.nops == 0) {
        an_buf_printf(b, "null}");
        return DCH_OK;
    }
    change_json(b, c);
    an_buf_printf(b, "}");
    return DCH_OK;
}

static void history_json(an_buf *b)
{
    an_buf_printf(b, "\"history\":[");
    for (uint32_t i = 0; i < ex.nops; i++) {
        const ex_step *st = &ex.steps[i];
        an_buf_printf(b, "%s", i ? "," : "");
        an_buf_printf(b, "{\"op\":");
        op_json(b, &ex.ops[i]);
        an_buf_printf(b, ",\"members\":%u,\"optimum\":", (unsigned)st->members);
        num(b, st->optimum);
        an_buf_printf(b, ",\"moved\":[");
        for (int s = 0; s < EX_SCHEMES; s++) {
            an_buf_printf(b, "%s", s ? "," : "");
            num(b, st->moved[s]);
        }
        an_buf_printf(b, "]}");
    }
    an_buf_printf(b, "]");
}

/* The JSON text of the state from its measured parts. */
static int write_state(an_buf *b, bool full, bool views, const uint32_t *who,
                       uint32_t n, an_ranges *now, const an_spread_load *sl,
                       const double *disagree, const an_ranges *rev,
                       const an_changes *rev_ch)
{
    an_buf_printf(b,
                  "{\"full\":%s,\"config\":{\"units\":%u,\"slots\":%u,"
                  "\"points\":%u,\"seed\":%u,\"views\":%u,"
                  "\"slotCount\":%u},",
                  full ? "true" : "false", (unsigned)ex.units,
                  (unsigned)ex.slots, (unsigned)ex.points, (unsigned)ex.seed,
                  (unsigned)ex.views, (unsigned)(ex.units * ex.slots));
    /* The engine's bounds, so the page checks its fields against them. */
    an_buf_printf(b,
                  "\"limits\":{\"weight\":%u,\"points\":%u,\"views\":%u,"
                  "\"members\":%u},",
                  (unsigned)EX_MAX_WEIGHT, (unsigned)EX_MAX_POINTS,
                  (unsigned)EX_MAX_VIEWS, (unsigned)EX_MAX_MEMBERS);
    members_json(b, who, n, now);
    drains_json(b);
    hot_json(b);
    an_buf_printf(b, "\"last\":");
    if (ex.nops > 0)
        op_json(b, &ex.ops[ex.nops - 1]);
    else
        an_buf_printf(b, "null");
    an_buf_printf(b, ",\"schemes\":[");
    int rc = DCH_OK;
    for (int s = 0; s < EX_SCHEMES && rc == DCH_OK; s++) {
        an_buf_printf(b, "%s", s ? "," : "");
        rc = scheme_json(b, s, &now[s], &sl[s], views,
                         full ? disagree[s] : NAN);
    }
    an_buf_printf(b, "],\"shared\":");
    spread_json(b, &sl[EX_SCHEMES], views);
    an_buf_printf(b, ",\"reverse\":");
    if (full) {
        an_buf_printf(b, "{\"ranges\":");
        ranges_json(b, rev);
        an_buf_printf(b, ",\"changes\":");
        changes_json(b, rev_ch);
        an_buf_printf(b, "}");
    } else {
        an_buf_printf(b, "null");
    }
    an_buf_printf(b, ",");
    history_json(b);
    an_buf_printf(b, "}");
    return rc;
}

static int state_json(an_buf *b, bool full)
{
    uint32_t who[EX_MAX_NAMES];
    uint32_t n = present(who);
    bool views = full && n > 0;
    an_ranges now[EX_SCHEMES] = {{NULL, 0}};
    an_spread_load sl[EX_SCHEMES + 1];
    double disagree[EX_SCHEMES] = {0.0};
    an_ranges rev = {NULL, 0};
    an_changes rev_ch = {NULL, 0, 0};
    bool *sees = views ? an_views_of_seed(ex.seed, ex.views, n) : NULL;
    int rc = !views || sees != NULL ? DCH_OK : DCH_ENOMEM;
    for (int s = 0; s < EX_SCHEMES && rc == DCH_OK; s++)
        rc = ex_ranges_by_number(&ex.sc[s], &now[s]);
    for (int s = 0; s < EX_SCHEMES && rc == DCH_OK && views; s++)
        rc = spread_of(s, who, n, sees, &sl[s]);
    if (rc == DCH_OK && views)
        rc = spread_of(-1, who, n, sees, &sl[EX_SCHEMES]);
    for (int s = 0; s < EX_SCHEMES && rc == DCH_OK && full; s++)
        rc = disagreement(s, who, n, &disagree[s], s == 0 ? &rev : NULL,
                          s == 0 ? &rev_ch : NULL);
    if (rc == DCH_OK)
        rc = write_state(b, full, views, who, n, now, sl, disagree, &rev, &rev_ch);
    free(sees);
    for (int s = 0; s < EX_SCHEMES; s++)
        an_ranges_free(&now[s]);
    an_ranges_free(&rev);
    an_changes_free(&rev_ch);
    return rc;
}

const char *ex_state(int full)
{
    free(ex.json);
    ex.json = NULL;
    if (!ex.ready) {
        snprintf(ex.message, sizeof ex.message, "not set up: reset first");
        return NULL;
    }
    an_buf b = {0};
    int rc = state_json(&b, full != 0);
    if (rc == DCH_OK && b.failed)
        rc = DCH_ENOMEM;
    if (rc != DCH_OK) {
        free(b.s);
        snprintf(ex.message, sizeof ex.message, "measuring failed: %s",
                 dch_strerror(rc));
        return NULL;
    }
    ex.json = b.s;
    return ex.json;
}
