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
 */
#include "explorer.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A growing string; `failed` sticks after the first failed allocation. */
typedef struct sbuf {
    char *s;
    size_t n, cap;
    bool failed;
} sbuf;

static void put(sbuf *b, const char *fmt, ...)
{
    if (b->failed)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int len = vsnprintf(b->s ? b->s + b->n : NULL,
                            b->s ? b->cap - b->n : 0, fmt, ap);
        va_end(ap);
        if (len < 0) {
            b->failed = true;
            return;
        }
        if (b->s != NULL && b->n + (size_t)len < b->cap) {
            b->n += (size_t)len;
            return;
        }
        size_t cap = b->cap ? b->cap : 4096;
        while (cap <= b->n + (size_t)len)
            cap *= 2;
        char *s = realloc(b->s, cap);
        if (s == NULL) {
            b->failed = true;
            return;
        }
        b->s = s;
        b->cap = cap;
    }
}

/* A finite number (JSON has no NaN or infinity: they go out as null). */
static void num(sbuf *b, double v)
{
    if (isfinite(v))
        put(b, "%.17g", v);
    else
        put(b, "null");
}

static double at(uint64_t h)
{
    return ldexp((double)h, -64);
}

static int owner_json(uint32_t o)
{
    return o == DCH_NODE_NONE ? -1 : (int)o;
}

static void ranges_json(sbuf *b, const an_ranges *rs)
{
    put(b, "[");
    for (size_t i = 0; i < rs->n; i++) {
        put(b, i ? ",[" : "[");
        num(b, at(rs->v[i].lo));
        put(b, ",%d]", owner_json(rs->v[i].owner));
    }
    put(b, "]");
}

static void changes_json(sbuf *b, const an_changes *c)
{
    put(b, "[");
    for (size_t i = 0; i < c->n; i++) {
        put(b, i ? ",[" : "[");
        num(b, at(c->v[i].lo));
        put(b, ",");
        /* hi is inclusive: the arc ends where the next hash begins. */
        num(b, c->v[i].hi == UINT64_MAX ? 1.0 : at(c->v[i].hi + 1));
        put(b, ",%d,%d]", owner_json(c->v[i].from), owner_json(c->v[i].to));
    }
    put(b, "]");
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
    int rc = an_scheme_new(out, &ex.spec[s]);
    for (uint32_t i = 0; i < n && rc == DCH_OK; i++) {
        uint32_t g = reverse ? n - 1 - i : i;
        if (take != NULL && !take[g])
            continue;
        char name[16];
        ex_name_of(name, sizeof name, who[g]);
        rc = an_scheme_add(out, name, weight[who[g]], NULL);
    }
    return rc;
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
 * disagree; `keep` (if not NULL) receives the reverse build's ranges and the
 * changes from the live one to it. */
static int disagreement(int s, const uint32_t *who, uint32_t n, double *out,
                        an_ranges *keep, an_changes *keep_ch)
{
    uint32_t weight[EX_MAX_NAMES];
    ex_weights_by_number(&ex.sc[s], weight);
    an_scheme rev = {0};
    an_ranges a = {NULL, 0}, b = {NULL, 0};
    an_changes ch = {NULL, 0, 0};
    an_moves mv;
    int rc = build(s, who, NULL, n, true, weight, &rev);
    if (rc == DCH_OK)
        rc = ex_ranges_by_number(&ex.sc[s], &a);
    if (rc == DCH_OK)
        rc = ex_ranges_by_number(&rev, &b);
    if (rc == DCH_OK)
        rc = an_changes_diff(&ch, &a, &b);
    if (rc == DCH_OK)
        rc = an_moves_of(&ch, EX_MAX_NAMES, DCH_NODE_NONE, &mv);
    if (rc == DCH_OK)
        *out = mv.moved;
    if (rc == DCH_OK && keep != NULL) {
        *keep = b;
        *keep_ch = ch;
        b = (an_ranges){NULL, 0};
        ch = (an_changes){NULL, 0, 0};
    }
    an_changes_free(&ch);
    an_ranges_free(&a);
    an_ranges_free(&b);
    an_scheme_free(&rev);
    return rc;
}

/* ---- The JSON text ------------------------------------------------------------ */

static const char *const KIND[] = {"add", "remove", "weight"};

static void op_json(sbuf *b, const ex_op *op)
{
    char name[16];
    ex_name_of(name, sizeof name, op->who);
    put(b, "{\"kind\":\"%s\",\"who\":%u,\"name\":\"%s\",\"weight\":%u,"
           "\"prev\":%u}",
        KIND[op->kind], (unsigned)op->who, name, (unsigned)op->weight,
        (unsigned)op->prev);
}

static void spread_json(sbuf *b, const an_spread_load *sl, bool valid)
{
    if (!valid) {
        put(b, "null");
        return;
    }
    put(b, "{\"max\":");
    num(b, sl->spread_max);
    put(b, ",\"mean\":");
    num(b, sl->spread_mean);
    put(b, ",\"load\":");
    num(b, sl->load_max);
    put(b, "}");
}

static int members_json(sbuf *b, const uint32_t *who, uint32_t n,
                        an_ranges *now)
{
    uint32_t weight[EX_MAX_NAMES];
    ex_weights_by_number(&ex.sc[0], weight);
    put(b, "\"members\":[");
    for (uint32_t g = 0; g < n; g++) {
        char name[16];
        ex_name_of(name, sizeof name, who[g]);
        put(b, "%s{\"who\":%u,\"name\":\"%s\",\"weight\":%u,\"share\":[",
            g ? "," : "", (unsigned)who[g], name, (unsigned)weight[who[g]]);
        for (int s = 0; s < EX_SCHEMES; s++) {
            put(b, s ? "," : "");
            num(b, ex_share_of(&now[s], who[g]));
        }
        put(b, "]}");
    }
    put(b, "],");
    return DCH_OK;
}

static int scheme_json(sbuf *b, int s, const an_ranges *now,
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
        put(b, "{\"label\":\"dch\",\"ranges\":");
    else
        put(b, "{\"label\":\"ring-%u\",\"ranges\":",
            (unsigned)ex.spec[s].points);
    ranges_json(b, now);
    put(b, ",\"balance\":{\"members\":%u,\"peak\":", (unsigned)bal.members);
    num(b, bal.peak_to_avg);
    put(b, ",\"min\":");
    num(b, bal.min_to_avg);
    put(b, ",\"cv\":");
    num(b, bal.cv);
    put(b, "},\"spread\":");
    spread_json(b, sl, spread_valid);
    put(b, ",\"disagree\":");
    num(b, disagree);
    put(b, ",\"change\":");
    if (!c->valid || ex.nops == 0) {
        put(b, "null}");
        return DCH_OK;
    }
    put(b, "{\"moved\":");
    num(b, c->mv.moved);
    put(b, ",\"movedOther\":");
    num(b, c->mv.moved_other);
    put(b, ",\"optimum\":");
    num(b, c->optimum);
    put(b, ",\"donors\":%u,\"receivers\":%u,\"parties\":%u,\"eligible\":%u,"
           "\"worst\":",
        (unsigned)c->mv.donors, (unsigned)c->mv.receivers,
        (unsigned)c->parties, (unsigned)c->eligible);
    num(b, c->worst);
    put(b, ",\"maxDonation\":");
    num(b, c->mv.max_donation);
    put(b, ",\"maxReceipt\":");
    num(b, c->mv.max_receipt);
    put(b, ",\"changes\":");
    changes_json(b, &c->ch);
    ex_flow flows[EX_MAX_FLOWS];
    memcpy(flows, c->flows, c->nflows * sizeof *flows);
    qsort(flows, c->nflows, sizeof *flows, cmp_flow);
    put(b, ",\"flows\":[");
    for (uint32_t i = 0; i < c->nflows; i++) {
        put(b, "%s[%d,%d,", i ? "," : "", owner_json(flows[i].from),
            owner_json(flows[i].to));
        num(b, an_volume_fraction(flows[i].vol));
        put(b, "]");
    }
    put(b, "]}}");
    return DCH_OK;
}

static void history_json(sbuf *b)
{
    put(b, "\"history\":[");
    for (uint32_t i = 0; i < ex.nops; i++) {
        const ex_step *st = &ex.steps[i];
        put(b, i ? "," : "");
        put(b, "{\"op\":");
        op_json(b, &ex.ops[i]);
        put(b, ",\"members\":%u,\"optimum\":", (unsigned)st->members);
        num(b, st->optimum);
        put(b, ",\"moved\":[");
        for (int s = 0; s < EX_SCHEMES; s++) {
            put(b, s ? "," : "");
            num(b, st->moved[s]);
        }
        put(b, "]}");
    }
    put(b, "]");
}

static int state_json(sbuf *b, bool full)
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
    if (rc == DCH_OK) {
        put(b, "{\"full\":%s,\"config\":{\"units\":%u,\"slots\":%u,\"points\":%u,"
               "\"seed\":%u,\"views\":%u,\"slotCount\":%u},",
            full ? "true" : "false", (unsigned)ex.units,
            (unsigned)ex.slots, (unsigned)ex.points, (unsigned)ex.seed,
            (unsigned)ex.views, (unsigned)(ex.units * ex.slots));
        members_json(b, who, n, now);
        put(b, "\"last\":");
        if (ex.nops > 0)
            op_json(b, &ex.ops[ex.nops - 1]);
        else
            put(b, "null");
        put(b, ",\"schemes\":[");
        for (int s = 0; s < EX_SCHEMES && rc == DCH_OK; s++) {
            put(b, s ? "," : "");
            rc = scheme_json(b, s, &now[s], &sl[s], views,
                             full ? disagree[s] : NAN);
        }
        put(b, "],\"shared\":");
        spread_json(b, &sl[EX_SCHEMES], views);
        put(b, ",\"reverse\":");
        if (full) {
            put(b, "{\"ranges\":");
            ranges_json(b, &rev);
            put(b, ",\"changes\":");
            changes_json(b, &rev_ch);
            put(b, "}");
        } else {
            put(b, "null");
        }
        put(b, ",");
        history_json(b);
        put(b, "}");
    }
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
    sbuf b = {NULL, 0, 0, false};
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
