/* SPDX-License-Identifier: MIT */
/*
 * The balancing promises, checked through the public API (balancing.h).
 * Everything here is read from dch/balance.h's text, not from the code
 * that implements it.
 */
#include "balancing.h"

#include "support.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NONE DCH_NODE_NONE
#define ROW DRAIN_ROW

typedef bal_u128 u128;

static char msg[512];

/* The test itself is broken (support.h): say why and stop. */
static void die(const char *what)
{
    fprintf(stderr, "balancing: %s\n", what);
    abort();
}

static const char *say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return msg;
}

static uint32_t row_count(const uint32_t *row)
{
    uint32_t n = 0;
    while (n < ROW && row[n] != NONE)
        n++;
    return n;
}

static bool row_has(const uint32_t *row, uint32_t id)
{
    return drain_row_has(row, id);
}

static bool same_row(const uint32_t *a, const uint32_t *b)
{
    return memcmp(a, b, ROW * sizeof *a) == 0;
}

static bool same_set(const uint32_t *a, const uint32_t *b)
{
    if (row_count(a) != row_count(b))
        return false;
    for (uint32_t k = 0; k < ROW && a[k] != NONE; k++)
        if (!row_has(b, a[k]))
            return false;
    return true;
}

/* ---- The terms ---------------------------------------------------------- */

static void take_members(bal_state *s, const dch_map *m)
{
    const uint32_t lim = s->limit;
    s->bal = xcalloc(lim + 1, 1);
    s->w = xcalloc(lim + 1, sizeof *s->w);
    s->zone = xcalloc(lim + 1, sizeof *s->zone);
    s->copies = xcalloc(lim + 1, sizeof *s->copies);
    s->hs = xmalloc((lim + 1) * sizeof *s->hs);
    s->C = xcalloc(lim + 1, sizeof *s->C);
    s->h = xcalloc(lim + 1, sizeof *s->h);
    for (uint32_t i = 0; i <= lim; i++) {
        s->hs[i] = NONE;
        s->zone[i] = i;
    }
    for (uint32_t i = 0; i < lim; i++) {
        if (dch_map_node_name(m, i) == NULL)
            continue;
        s->w[i] = dch_map_node_weight(m, i);
        s->bal[i] = s->w[i] > 0 && dch_map_node_drained(m, i) == 0;
        const char *z = dch_map_node_zone(m, i);
        if (z != NULL) {
            s->zoned = true;
            for (uint32_t j = 0; j < i; j++) {
                const char *zj = dch_map_node_name(m, j) ? dch_map_node_zone(m, j) : NULL;
                if (zj != NULL && strcmp(zj, z) == 0) {
                    s->zone[i] = j;
                    break;
                }
            }
        }
        if (s->bal[i]) {
            s->members++;
            s->wsum += s->w[i];
            if (s->w[i] > s->maxw)
                s->maxw = s->w[i];
        }
    }
}

void bal_take(bal_state *s, const dch_map *m, const uint64_t *loads)
{
    memset(s, 0, sizeof *s);
    s->P = dch_map_slot_count(m);
    s->limit = dch_map_id_limit(m);
    s->L = loads;
    s->row = drain_table(m, false);
    take_members(s, m);
    u128 sum = 0;
    for (uint32_t q = 0; q < s->P; q++) {
        const uint64_t l = loads[q];
        sum += l;
        if (q == 0 || l > s->lmax) {
            s->l2 = q == 0 ? 0 : s->lmax;
            s->lmax = l;
            s->lmax_slot = q;
        } else if (l > s->l2) {
            s->l2 = l;
        }
        const uint32_t *row = s->row + (size_t)q * ROW;
        const uint32_t n = row_count(row);
        if (n > s->copies_per_slot)
            s->copies_per_slot = n;
        for (uint32_t k = 0; k < n; k++)
            if (row[k] < s->limit)
                s->copies[row[k]]++;
        const uint32_t o = row[0];
        if (o < s->limit) {
            s->C[o] += l;
            if (s->hs[o] == NONE || l > s->h[o]) {
                s->h[o] = l;
                s->hs[o] = q;
            }
        }
    }
    if (sum > UINT64_MAX)
        die("bal_take: the loads sum past UINT64_MAX");
    s->total = (uint64_t)sum;
}

void bal_free(bal_state *s)
{
    free(s->row);
    free(s->bal);
    free(s->w);
    free(s->zone);
    free(s->copies);
    free(s->hs);
    free(s->C);
    free(s->h);
    memset(s, 0, sizeof *s);
}

bal_u128 bal_target_x(const bal_state *s, uint32_t i)
{
    return (u128)s->total * s->w[i];
}

bal_u128 bal_bound_x(const bal_state *s, uint32_t i)
{
    const u128 t = bal_target_x(s, i), hx = (u128)s->h[i] * s->wsum;
    const u128 a = t + (u128)s->lmax * s->wsum;
    const u128 b = (t > hx ? t : hx) + (u128)s->l2 * s->wsum;
    return a < b ? a : b;
}

static u128 load_x(const bal_state *s, uint32_t i)
{
    return (u128)s->C[i] * s->wsum;
}

bool bal_above(const bal_state *s, uint32_t i)
{
    return i < s->limit && s->bal[i] && load_x(s, i) > bal_bound_x(s, i);
}

bool bal_below(const bal_state *s, uint32_t i)
{
    return i < s->limit && s->bal[i] && load_x(s, i) < bal_target_x(s, i);
}

uint32_t bal_zones(const bal_state *s, const uint32_t *row)
{
    uint32_t n = 0;
    for (uint32_t k = 0; k < ROW && row[k] != NONE; k++) {
        bool seen = false;
        for (uint32_t j = 0; j < k; j++)
            seen = seen || s->zone[row[j]] == s->zone[row[k]];
        n += !seen;
    }
    return n;
}

void bal_report_prepare(dch_balance_report *rep, dch_balance_left *left, uint32_t cap)
{
    memset(rep, 0xA5, sizeof *rep);
    rep->left = left;
    rep->left_cap = cap;
    if (left != NULL)
        memset(left, 0xA5, (size_t)cap * sizeof *left);
}

bool bal_left_for_budget(const dch_balance_report *rep)
{
    const uint32_t n = rep->left_count < rep->left_cap ? rep->left_count : rep->left_cap;
    if (n < rep->left_count)
        die("bal_left_for_budget: the report's left list was cut short");
    for (uint32_t k = 0; k < n; k++)
        if (rep->left[k].why == DCH_BALANCE_LEFT_BUDGET)
            return true;
    return false;
}

/* ---- One call: what moved ------------------------------------------------ */

/* What the slots that changed tell of one member. */
typedef struct member_moved {
    bool gave, took;
    uint32_t copy_moves; /* as a giver */
    uint64_t given, largest; /* as a giver: load given, largest slot given */
} member_moved;

/* What the slots that changed tell, per member and in all. */
typedef struct moved {
    member_moved *by; /* by member id; the caller frees it */
    uint32_t moves, promotions;
    u128 moved_load, promoted_load;
    uint32_t first_slot; /* the first slot that changed, or NONE */
} moved;

/* One changed slot q: a promotion or one copy move, from a member above
 * its bound to one below its target (promise 2), no copy twice, zones
 * never fewer (promise 3). */
static const char *one_slot(const bal_state *b, const bal_state *a, uint32_t q, moved *v)
{
    const uint32_t *rb = b->row + (size_t)q * ROW, *ra = a->row + (size_t)q * ROW;
    const uint32_t g = rb[0], r = ra[0];
    const uint64_t l = b->L[q];
    if (row_count(ra) != row_count(rb))
        return say("slot %u: its copy count changed", q);
    if (g == r)
        return say("slot %u: its copies changed but not its primary", q);
    if (!bal_above(b, g))
        return say("slot %u moved from member %u, not above its bound before the call", q, g);
    if (!bal_below(b, r))
        return say("slot %u moved to member %u, not below its target before the call", q, r);
    const bool promotion = same_set(ra, rb);
    if (!promotion) {
        if (row_has(rb, r) || row_has(ra, g))
            return say("slot %u: neither one promotion nor one copy move", q);
        for (uint32_t k = 0; k < ROW && rb[k] != NONE; k++)
            if (rb[k] != g && !row_has(ra, rb[k]))
                return say("slot %u: a copy move replaced more than the giver's copy", q);
        if (bal_zones(a, ra) < bal_zones(b, rb))
            return say("slot %u: a copy move lowered its zones from %u to %u", q,
                       bal_zones(b, rb), bal_zones(a, ra));
        v->moves++;
        v->moved_load += l;
        v->by[g].copy_moves++;
    } else {
        v->promotions++;
        v->promoted_load += l;
    }
    v->by[g].gave = true;
    v->by[r].took = true;
    v->by[g].given += l;
    if (l > v->by[g].largest)
        v->by[g].largest = l;
    if (v->first_slot == NONE)
        v->first_slot = q;
    return NULL;
}

static const char *collect(const bal_state *b, const bal_state *a, moved *v)
{
    const uint32_t lim = b->limit + 1;
    memset(v, 0, sizeof *v);
    v->by = xcalloc(lim, sizeof *v->by);
    v->first_slot = NONE;
    for (uint32_t q = 0; q < b->P; q++) {
        const uint32_t *ra = a->row + (size_t)q * ROW;
        for (uint32_t k = 0; k < ROW && ra[k] != NONE; k++)
            for (uint32_t j = 0; j < k; j++)
                if (ra[j] == ra[k])
                    return say("slot %u holds member %u twice", q, ra[k]);
        if (same_row(b->row + (size_t)q * ROW, ra))
            continue;
        const char *bad = one_slot(b, a, q, v);
        if (bad != NULL)
            return bad;
    }
    return NULL;
}

/* Promise 2 per member: givers never take, keep their heaviest slot, end
 * above their targets and give at most their excess plus one slot;
 * receivers end below T_i + L2; the whole within the total excess plus one
 * slot a giver. */
static const char *per_member(const bal_state *b, const bal_state *a, const moved *v)
{
    u128 excess = 0, slack = 0;
    for (uint32_t i = 0; i < b->limit; i++)
        if (bal_above(b, i))
            excess += (u128)b->C[i] * b->wsum - bal_bound_x(b, i);
    for (uint32_t i = 0; i < b->limit; i++) {
        if (v->by[i].gave && v->by[i].took)
            return say("member %u both gave and received", i);
        if (v->by[i].took && load_x(a, i) >= bal_target_x(a, i) + (u128)b->l2 * b->wsum)
            return say("receiver %u ends at or above T_i + L2", i);
        if (!v->by[i].gave)
            continue;
        if (a->row[(size_t)b->hs[i] * ROW] != i)
            return say("giver %u handed over its heaviest slot %u", i, b->hs[i]);
        if (load_x(a, i) <= bal_target_x(a, i))
            return say("giver %u ends at or below its target", i);
        const u128 over = (u128)b->C[i] * b->wsum - bal_bound_x(b, i);
        if ((u128)v->by[i].given * b->wsum > over + (u128)v->by[i].largest * b->wsum)
            return say("giver %u gave %llu, more than its excess plus its largest slot given",
                       i, (unsigned long long)v->by[i].given);
        slack += (u128)v->by[i].largest * b->wsum;
    }
    if ((v->moved_load + v->promoted_load) * b->wsum > excess + slack)
        return "the load moved passes the total excess plus one slot a giver";
    return NULL;
}

/* A giver that made a copy move had no promotion left (promise 3); that
 * stays true to the end of the call (its slots and the receivers only
 * shrink), so in the final state none of its positive non-heaviest slots
 * has a co-replica below its target. */
static const char *promotions_first(const bal_state *b, const bal_state *a, const moved *v)
{
    for (uint32_t q = 0; q < a->P; q++) {
        const uint32_t *ra = a->row + (size_t)q * ROW, g = ra[0];
        if (g == NONE || g >= a->limit || !v->by[g].gave || v->by[g].copy_moves == 0 ||
            q == b->hs[g] || a->L[q] == 0)
            continue;
        for (uint32_t k = 1; k < ROW && ra[k] != NONE; k++)
            if (bal_below(a, ra[k]))
                return say("giver %u made a copy move while slot %u could still be promoted "
                           "to receiver %u",
                           g, q, ra[k]);
    }
    return NULL;
}

/* ---- One call: the report ------------------------------------------------ */

static double max_ratio(const bal_state *s)
{
    uint32_t best = NONE;
    for (uint32_t i = 0; i < s->limit; i++)
        if (s->bal[i] && (best == NONE || (u128)s->C[i] * s->w[best] >
                                               (u128)s->C[best] * s->w[i]))
            best = i;
    if (best == NONE || s->total == 0)
        return 0;
    return (double)((long double)s->C[best] * (long double)s->wsum /
                    ((long double)s->total * (long double)s->w[best]));
}

static bool near(double x, double want)
{
    return fabs(x - want) <= 1e-9 * fabs(want) + 1e-12;
}

static const char *report_totals(const bal_state *b, const bal_state *a,
                                 const dch_balance_report *rep)
{
    if (rep->total_load != b->total || rep->heaviest_load != b->lmax ||
        rep->second_load != b->l2 || rep->heaviest_slot != b->lmax_slot)
        return "the report's total, heaviest, second or heaviest_slot";
    if (rep->members != b->members)
        return say("the report counts %u members that balance, not %u", rep->members,
                   b->members);
    uint32_t heavy = 0, above0 = 0, above1 = 0;
    for (uint32_t q = 0; q < b->P && b->wsum > 0; q++)
        heavy += (u128)b->L[q] * b->wsum > (u128)b->total * b->maxw;
    if (rep->too_heavy != heavy)
        return say("the report counts %u slots too heavy, not %u", rep->too_heavy, heavy);
    u128 floor_x = 0, each = 0;
    for (uint32_t i = 0; i < b->limit; i++) {
        above0 += bal_above(b, i);
        above1 += bal_above(a, i);
        if (bal_above(b, i)) {
            floor_x += (u128)b->C[i] * b->wsum - bal_bound_x(b, i);
            each += b->C[i] - (uint64_t)(bal_bound_x(b, i) / b->wsum);
        }
    }
    if (rep->above_before != above0 || rep->above_after != above1)
        return say("the report's above_before %u / above_after %u, not %u / %u",
                   rep->above_before, rep->above_after, above0, above1);
    /* "The sum of C_i - B_i over the members above their bounds, rounded
     * up": the sum rounded up, or each term (C_i - floor(B_i), a floor
     * too, since every member above must shed whole slots). */
    const u128 fl = b->wsum ? (floor_x + b->wsum - 1) / b->wsum : 0;
    if (rep->moved_load_floor != fl && rep->moved_load_floor != each)
        return say("the report's moved_load_floor %llu, neither %llu (the sum rounded up) "
                   "nor %llu (each term rounded up)",
                   (unsigned long long)rep->moved_load_floor, (unsigned long long)fl,
                   (unsigned long long)each);
    if (!near(rep->max_ratio_before, max_ratio(b)) || !near(rep->max_ratio_after, max_ratio(a)))
        return say("the report's max ratios %.17g / %.17g, not %.17g / %.17g",
                   rep->max_ratio_before, rep->max_ratio_after, max_ratio(b), max_ratio(a));
    return NULL;
}

static const char *report_moves(const bal_state *b, const bal_state *a, const moved *v,
                                const dch_balance_report *rep)
{
    if (rep->moves != v->moves || rep->promotions != v->promotions)
        return say("the report's %u moves and %u promotions, not %u and %u", rep->moves,
                   rep->promotions, v->moves, v->promotions);
    if (rep->moved_load != v->moved_load || rep->promoted_load != v->promoted_load)
        return "the report's moved_load or promoted_load is not the load of the slots moved";
    uint32_t above1 = 0;
    for (uint32_t i = 0; i < a->limit; i++)
        above1 += bal_above(a, i);
    if (above1 == 0 && v->moved_load + v->promoted_load < rep->moved_load_floor)
        return "every member ends within its bound, moving less than moved_load_floor";
    (void)b;
    return NULL;
}

/* The members left above their bounds: all of them, ascending, their
 * loads and floor(B_i). */
static const char *report_left(const bal_state *a, const dch_balance_config *cfg,
                               const dch_balance_report *rep)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < a->limit; i++)
        n += bal_above(a, i);
    if (rep->left_count != n)
        return say("the report lists %u members left above, not %u", rep->left_count, n);
    const uint32_t shown = n < rep->left_cap ? n : rep->left_cap;
    uint32_t k = 0;
    for (uint32_t i = 0; i < a->limit && k < shown; i++) {
        if (!bal_above(a, i))
            continue;
        const dch_balance_left *e = &rep->left[k++];
        if (e->id != i)
            return say("left entry %u names member %u, not %u", k - 1, e->id, i);
        if (e->load != a->C[i] || e->bound != bal_bound_x(a, i) / a->wsum)
            return say("left entry for member %u: load %llu bound %llu", i,
                       (unsigned long long)e->load, (unsigned long long)e->bound);
        if (e->why < DCH_BALANCE_LEFT_BUDGET || e->why > DCH_BALANCE_LEFT_PLACEMENT ||
            (e->why == DCH_BALANCE_LEFT_BUDGET && cfg->max_moves == 0) ||
            (e->why == DCH_BALANCE_LEFT_SLACK && cfg->count_slack == UINT32_MAX))
            return say("member %u left above for reason %u, which this config cannot give", i,
                       e->why);
    }
    return NULL;
}

/* ---- One call: promises 1 and 5 ------------------------------------------ */

/* With zones, member i left above its bound: no receiver may take any slot
 * it could give, by promotion (it would hold a copy) or copy move (the
 * zone rule would have to bar it). */
static const char *stuck(const bal_state *a, uint32_t i)
{
    for (uint32_t q = 0; q < a->P; q++) {
        const uint32_t *ra = a->row + (size_t)q * ROW;
        if (ra[0] != i || q == a->hs[i] || a->L[q] == 0)
            continue;
        for (uint32_t r = 0; r < a->limit; r++) {
            if (!bal_below(a, r))
                continue;
            if (row_has(ra, r))
                return say("member %u ends above its bound while receiver %u holds a copy of "
                           "its slot %u (a promotion was left)",
                           i, r, q);
            uint32_t moved_row[ROW];
            memcpy(moved_row, ra, sizeof moved_row);
            moved_row[0] = r;
            if (bal_zones(a, moved_row) >= bal_zones(a, ra))
                return say("member %u ends above its bound while receiver %u could take its "
                           "slot %u without losing a zone",
                           i, r, q);
        }
    }
    return NULL;
}

static bool listed_as(const dch_balance_report *rep, uint32_t i, uint32_t why)
{
    for (uint32_t k = 0; k < rep->left_count && k < rep->left_cap; k++)
        if (rep->left[k].id == i)
            return rep->left[k].why == why;
    return false;
}

static const char *bound_kept(const bal_state *a, const dch_balance_report *rep)
{
    const bool strict = a->copies_per_slot <= 1 || !a->zoned;
    for (uint32_t i = 0; i < a->limit; i++) {
        if (!bal_above(a, i))
            continue;
        if (strict)
            return say("promise 1: member %u ends above its bound (load %llu, bound %llu)", i,
                       (unsigned long long)a->C[i],
                       (unsigned long long)(bal_bound_x(a, i) / a->wsum));
        if (!listed_as(rep, i, DCH_BALANCE_LEFT_PLACEMENT))
            return say("promise 1: member %u ends above its bound, not listed for placement",
                       i);
        const char *bad = stuck(a, i);
        if (bad != NULL)
            return bad;
    }
    return NULL;
}

/* count_slack c: no member ends more than c copies above its count share
 * n P w_i / W' unless it already was, and then it gained nothing. */
static const char *slack_kept(const bal_state *b, const bal_state *a, uint32_t c)
{
    const uint32_t n = b->copies_per_slot;
    for (uint32_t i = 0; i < a->limit; i++) {
        if (!a->bal[i])
            continue;
        const u128 share = (u128)n * a->P * a->w[i], cx = (u128)c * a->wsum;
        const bool over1 = (u128)a->copies[i] * a->wsum > share + cx;
        const bool over0 = (u128)b->copies[i] * b->wsum > share + cx;
        if (over1 && (!over0 || a->copies[i] > b->copies[i]))
            return say("member %u ends with %u copies, more than %u above its share", i,
                       a->copies[i], c);
    }
    return NULL;
}

/* Whether slot s is one giver g may hand over: its, not its heaviest, of
 * positive load. */
static bool candidate_of(const bal_state *b, uint32_t g, uint32_t s)
{
    return b->row[(size_t)s * ROW] == g && s != b->hs[g] && b->L[s] > 0;
}

/* The lightest of g's candidates but slot `skip` whose move would bring
 * load c within g's bound; *found says whether there is one. */
static uint64_t lightest_finishing(const bal_state *b, uint32_t g, uint64_t c, uint32_t skip,
                                   const bal_u128 B, bool *found)
{
    uint64_t f = 0;
    *found = false;
    for (uint32_t s = 0; s < b->P; s++) {
        const uint64_t l = b->L[s];
        if (!candidate_of(b, g, s) || s == skip)
            continue;
        /* A slot heavier than what is left finishes too (nothing is left). */
        if ((l >= c || (u128)(c - l) * b->wsum <= B) && (!*found || l < f)) {
            f = l;
            *found = true;
        }
    }
    return f;
}

/* The load of the slot giver g hands over first (balance.h): among its
 * candidates (its slots but its heaviest and those of load 0), the
 * lightest f whose move brings g within its bound, unless one of the 64
 * heaviest lighter ones (in the order of load, then slot, both descending)
 * and then the lightest that would finish weigh less together: then the
 * one with the least such sum (ties: the first in that order). The
 * heaviest when no candidate brings g within its bound. */
static uint64_t first_slot_load(const bal_state *b, uint32_t g)
{
    const bal_u128 B = bal_bound_x(b, g);
    bool fits, any = false;
    uint64_t heaviest = 0;
    for (uint32_t s = 0; s < b->P; s++)
        if (candidate_of(b, g, s)) {
            any = true;
            heaviest = b->L[s] > heaviest ? b->L[s] : heaviest;
        }
    const uint64_t f = lightest_finishing(b, g, b->C[g], b->P, B, &fits);
    if (!fits)
        return any ? heaviest : 0;
    uint64_t best = f, least = f;
    uint64_t prev_l = UINT64_MAX;
    uint32_t prev_s = UINT32_MAX;
    for (int k = 0; k < 64; k++) {
        /* The next lighter candidate in (load, slot) descending order. */
        uint32_t next = UINT32_MAX;
        for (uint32_t s = 0; s < b->P; s++) {
            const uint64_t l = b->L[s];
            if (!candidate_of(b, g, s) || l >= f)
                continue;
            const bool after = l < prev_l || (l == prev_l && s < prev_s);
            if (after && (next == UINT32_MAX || l > b->L[next] || (l == b->L[next] && s > next)))
                next = s;
        }
        if (next == UINT32_MAX)
            break;
        prev_l = b->L[next];
        prev_s = next;
        bool ok;
        const uint64_t rest = lightest_finishing(b, g, b->C[g] - prev_l, next, B, &ok);
        if (ok && (u128)rest + prev_l < least) {
            least = rest + prev_l;
            best = prev_l;
        }
    }
    return best;
}

/* With max_moves 1, one copy a slot and no slack limit: the one move comes
 * from the member of the largest C_i / T_i among those above their bounds
 * (ties: the lower id), it is the slot first_slot_load names, and it goes
 * to the member furthest below its target (T_i - C_i; ties: the lower
 * id). */
static const char *one_move(const bal_state *b, const bal_state *a, const moved *v)
{
    uint32_t g = NONE, r = NONE;
    for (uint32_t i = 0; i < b->limit; i++) {
        if (bal_above(b, i) &&
            (g == NONE || (u128)b->C[i] * b->w[g] > (u128)b->C[g] * b->w[i]))
            g = i;
        if (bal_below(b, i) &&
            (r == NONE || bal_target_x(b, i) - load_x(b, i) > bal_target_x(b, r) - load_x(b, r)))
            r = i;
    }
    if (g == NONE)
        return v->moves ? "a move with no member above its bound" : NULL;
    if (v->moves != 1)
        return say("max_moves 1 with member %u above its bound made %u moves", g, v->moves);
    const uint32_t q = v->first_slot;
    if (b->row[(size_t)q * ROW] != g)
        return say("max_moves 1: the move is from member %u, not %u (largest C_i/T_i)",
                   b->row[(size_t)q * ROW], g);
    const uint64_t want = first_slot_load(b, g);
    if (b->L[q] != want)
        return say("max_moves 1: member %u gave slot %u of load %llu, not one of load %llu", g,
                   q, (unsigned long long)b->L[q], (unsigned long long)want);
    if (a->row[(size_t)q * ROW] != r)
        return say("max_moves 1: slot %u went to member %u, not %u (furthest below its "
                   "target, T_i - C_i)",
                   q, a->row[(size_t)q * ROW], r);
    return NULL;
}

const char *bal_check_call(const bal_state *b, const bal_state *a, const dch_map *after,
                           const dch_balance_config *cfg, const dch_balance_report *rep)
{
    dch_balance_config def;
    if (cfg == NULL) {
        dch_balance_config_init(&def, DCH_BALANCE_CONFIG_VERSION);
        cfg = &def;
    }
    if (rep->in_force != dch_map_balance_moves(after))
        return "the report's in_force is not dch_map_balance_moves";
    const char *bad = NULL;
    if (b->wsum == 0) {
        /* Nobody balances: nobody is above a bound or below a target. */
        if (memcmp(a->row, b->row, (size_t)b->P * ROW * sizeof *a->row) != 0)
            return "a call with no member that balances changed the table";
        return rep->moves || rep->promotions || rep->members ? "a report of moves with no member"
                                                             : NULL;
    }
    moved v;
    bad = collect(b, a, &v);
    if (bad == NULL)
        bad = per_member(b, a, &v);
    if (bad == NULL)
        bad = promotions_first(b, a, &v);
    if (bad == NULL)
        bad = report_totals(b, a, rep);
    if (bad == NULL)
        bad = report_moves(b, a, &v, rep);
    if (bad == NULL)
        bad = report_left(a, cfg, rep);
    if (bad == NULL && cfg->max_moves == 0 && cfg->count_slack == UINT32_MAX)
        bad = bound_kept(a, rep);
    if (bad == NULL && cfg->max_moves > 0 && v.moves > cfg->max_moves)
        bad = say("max_moves %u, yet %u copy moves", cfg->max_moves, v.moves);
    if (bad == NULL && cfg->count_slack != UINT32_MAX)
        bad = slack_kept(b, a, cfg->count_slack);
    if (bad == NULL && cfg->max_moves == 1 && cfg->count_slack == UINT32_MAX &&
        b->copies_per_slot <= 1)
        bad = one_move(b, a, &v);
    free(v.by);
    return bad;
}

/* ---- Promises 4 and 6 ---------------------------------------------------- */

static uint32_t *layer_slots(const dch_map *m, size_t *n)
{
    *n = dch_map_balance_slots(m, NULL, 0);
    uint32_t *v = xmalloc((*n + 1) * sizeof *v);
    if (dch_map_balance_slots(m, v, *n) != *n)
        die("dch_map_balance_slots answers two counts");
    return v;
}

/* Everything a reader sees, equal in two maps. */
static const char *same_state(const dch_map *x, const dch_map *y)
{
    const uint32_t P = dch_map_slot_count(x);
    if (P != dch_map_slot_count(y))
        return "slot counts";
    uint32_t *ex = drain_table(x, false), *ey = drain_table(y, false);
    uint32_t *bx = drain_table(x, true), *by = drain_table(y, true);
    const char *bad = !drain_same_table(ex, ey, P)                      ? "the effective table"
                      : !drain_same_table(bx, by, P)                    ? "the base table"
                      : dch_map_epoch(x) != dch_map_epoch(y)            ? "the epoch"
                      : dch_map_fingerprint(x) != dch_map_fingerprint(y) ? "the fingerprint"
                      : dch_map_balance_moves(x) != dch_map_balance_moves(y)
                          ? "dch_map_balance_moves"
                          : NULL;
    free(ex);
    free(ey);
    free(bx);
    free(by);
    if (bad == NULL) {
        size_t nx, ny;
        uint32_t *sx = layer_slots(x, &nx), *sy = layer_slots(y, &ny);
        if (nx != ny || memcmp(sx, sy, nx * sizeof *sx) != 0)
            bad = "dch_map_balance_slots";
        free(sx);
        free(sy);
    }
    if (bad == NULL && !same_map_bytes(x, y))
        bad = "the saved bytes";
    return bad;
}

const char *bal_check_fixed_point(dch_map *m, const uint64_t *loads,
                                  const dch_balance_config *cfg, const dch_balance_report *rep)
{
    if (bal_left_for_budget(rep))
        return NULL;
    dch_map *before = map_clone_of(m);
    const uint32_t cap = dch_map_id_limit(m) + 1;
    dch_balance_left *left = xmalloc(cap * sizeof *left);
    dch_balance_report again;
    bal_report_prepare(&again, left, cap);
    const char *bad = NULL;
    const int rc = dch_map_balance_load(m, loads, dch_map_slot_count(m), cfg, &again);
    if (rc != DCH_OK)
        bad = say("promise 4: the second call returned %d", rc);
    else if (again.moves != 0 || again.promotions != 0 || again.moved_load != 0 ||
             again.promoted_load != 0)
        bad = say("promise 4: the second call reports %u moves and %u promotions", again.moves,
                  again.promotions);
    if (bad == NULL) {
        const char *d = same_state(before, m);
        if (d != NULL)
            bad = say("promise 4: the second call changed %s", d);
    }
    free(left);
    dch_map_free(before);
    return bad;
}

typedef struct slot_set {
    uint32_t P;
    int shift;
    uint8_t *in;
    const char *bad;
} slot_set;

/* Mark the slots [lo, hi] covers; they must be whole slots. */
static void mark(slot_set *c, uint64_t lo, uint64_t hi)
{
    const uint64_t first = c->shift == 64 ? 0 : lo >> c->shift;
    const uint64_t last = c->shift == 64 ? 0 : hi >> c->shift;
    const uint64_t span = c->shift == 64 ? 0 : UINT64_MAX >> (64 - c->shift);
    if ((lo & span) != 0 || (hi & span) != span)
        c->bad = "a diff range that is not whole slots";
    for (uint64_t q = first; q <= last && q < c->P; q++) {
        if (c->in[q])
            c->bad = "a slot listed twice by a diff";
        c->in[q] = 1;
    }
}

static int on_move(const dch_move *mv, void *ctx)
{
    mark(ctx, mv->lo, mv->hi);
    return 0;
}

static int on_copy(const dch_copy_move *cm, void *ctx)
{
    slot_set *c = ctx;
    /* One range may be reported once a change: mark it once. */
    const uint64_t first = c->shift == 64 ? 0 : cm->lo >> c->shift;
    if (first < c->P && c->in[first] == 2)
        return 0;
    mark(c, cm->lo, cm->hi);
    for (uint64_t q = first; q < c->P && (c->shift == 64 ? q == 0 : q <= cm->hi >> c->shift);
         q++)
        c->in[q] = 2;
    return 0;
}

static int log2u(uint32_t P)
{
    int k = 0;
    while ((UINT32_C(1) << k) < P)
        k++;
    return k;
}

static const char *diffs(const dch_map *x, const dch_map *y, const uint32_t *ex,
                         const uint32_t *ey, uint32_t P)
{
    slot_set prim = {P, 64 - log2u(P), xcalloc(P, 1), NULL};
    slot_set cop = {P, 64 - log2u(P), xcalloc(P, 1), NULL};
    const char *bad = NULL;
    if (dch_map_diff(x, y, on_move, &prim) != DCH_OK ||
        dch_map_diff_copies(x, y, on_copy, &cop) != DCH_OK)
        bad = "a diff failed";
    bad = bad ? bad : prim.bad ? prim.bad : cop.bad;
    for (uint32_t q = 0; q < P && bad == NULL; q++) {
        const uint32_t *rx = ex + (size_t)q * ROW, *ry = ey + (size_t)q * ROW;
        const bool owner = rx[0] != ry[0], set = !same_set(rx, ry);
        if (owner != (prim.in[q] != 0))
            bad = say("dch_map_diff %s slot %u", owner ? "misses" : "lists", q);
        else if (set != (cop.in[q] != 0))
            bad = say("dch_map_diff_copies %s slot %u", set ? "misses" : "lists", q);
    }
    free(prim.in);
    free(cop.in);
    return bad;
}

const char *bal_check_change(const dch_map *before, const dch_map *after)
{
    const uint32_t P = dch_map_slot_count(after);
    uint32_t *ex = drain_table(before, false), *ey = drain_table(after, false);
    const bool changed = !drain_same_table(ex, ey, P);
    const char *bad = NULL;
    if (dch_map_epoch(after) != dch_map_epoch(before) + changed)
        bad = say("the epoch went from %llu to %llu, the table %s",
                  (unsigned long long)dch_map_epoch(before),
                  (unsigned long long)dch_map_epoch(after), changed ? "changed" : "did not");
    else if ((dch_map_fingerprint(after) != dch_map_fingerprint(before)) != changed)
        bad = changed ? "the table changed, the fingerprint did not"
                      : "the fingerprint changed, the table did not";
    if (bad == NULL)
        bad = diffs(before, after, ex, ey, P);
    free(ex);
    free(ey);
    return bad;
}

/* Whether map_bytes(m) loads. */
static bool loads_back(const dch_map *m)
{
    size_t len = 0;
    uint8_t *bytes = map_bytes(m, &len);
    dch_map *l = NULL;
    const bool ok = dch_map_load(&l, bytes, len) == DCH_OK;
    dch_map_free(l);
    free(bytes);
    return ok;
}

const char *bal_check_kept(const dch_map *m, const dch_map *twin)
{
    dch_map *c = map_clone_of(m);
    const char *bad = same_state(m, c);
    if (bad != NULL)
        bad = say("promise 6: a clone differs in %s", bad);
    dch_map_free(c);
    size_t len = 0;
    uint8_t *bytes = bad || (twin != NULL && !loads_back(twin)) ? NULL : map_bytes(m, &len);
    if (bytes != NULL) {
        dch_map *l = NULL;
        const int rc = dch_map_load(&l, bytes, len);
        if (rc != DCH_OK)
            bad = say("promise 6: the saved map does not load (%d)", rc);
        else if ((bad = same_state(m, l)) != NULL)
            bad = say("promise 6: a saved and loaded map differs in %s", bad);
        else if ((dch_map_balance_moves(m) > 0) != (le_read(bytes + 8, 4) == 5))
            bad = say("a map with %u load moves saves as format version %u",
                      dch_map_balance_moves(m), (unsigned)le_read(bytes + 8, 4));
        dch_map_free(l);
    }
    free(bytes);
    return bad;
}

const char *bal_check_layer(const dch_map *m, const dch_map *twin, uint32_t **below)
{
    const uint32_t P = dch_map_slot_count(m);
    dch_map *c = map_clone_of(m);
    const uint32_t moves = dch_map_balance_moves(m);
    const uint64_t epoch = dch_map_epoch(m);
    const char *bad = NULL;
    if (dch_map_balance_clear(c) != DCH_OK)
        bad = "dch_map_balance_clear failed";
    else if (dch_map_epoch(c) != epoch + (moves > 0))
        bad = say("dch_map_balance_clear with %u moves in force took the epoch from %llu to "
                  "%llu",
                  moves, (unsigned long long)epoch, (unsigned long long)dch_map_epoch(c));
    else if (dch_map_balance_moves(c) != 0 || dch_map_balance_slots(c, NULL, 0) != 0)
        bad = "load moves in force after dch_map_balance_clear";
    uint32_t *eff = drain_table(m, false), *low = drain_table(c, false);
    uint32_t *b0 = drain_table(m, true), *b1 = drain_table(c, true);
    if (bad == NULL && !drain_same_table(b0, b1, P))
        bad = "dch_map_balance_clear changed the base";
    size_t n;
    uint32_t *slots = layer_slots(m, &n);
    size_t k = 0;
    for (uint32_t q = 0; q < P && bad == NULL; q++) {
        if (same_row(eff + (size_t)q * ROW, low + (size_t)q * ROW))
            continue;
        if (k >= n || slots[k] != q)
            bad = say("slot %u differs from the table below, not listed by "
                      "dch_map_balance_slots",
                      q);
        k++;
    }
    if (bad == NULL && (k != n || n != moves))
        bad = say("%zu slots differ from the table below; balance_slots lists %zu, "
                  "balance_moves says %u",
                  k, n, moves);
    if (bad == NULL && twin != NULL) {
        uint32_t *tb = drain_table(twin, true), *te = drain_table(twin, false);
        if (!drain_same_table(b0, tb, P))
            bad = "the base is not the base of the map that never balanced";
        else if (!drain_same_table(low, te, P))
            bad = "the table below is not the table of the map that never balanced";
        free(tb);
        free(te);
    }
    uint64_t e1 = dch_map_epoch(c);
    if (bad == NULL && (dch_map_balance_clear(c) != DCH_OK || dch_map_epoch(c) != e1))
        bad = "a second dch_map_balance_clear changed the epoch";
    free(slots);
    free(eff);
    free(b0);
    free(b1);
    dch_map_free(c);
    if (below != NULL && bad == NULL)
        *below = low;
    else
        free(low);
    return bad;
}

/* May member x still be handed a slot (balance.h: a member of positive
 * weight, not drained)? Asked of a move's primary and of each copy the
 * table below lacks. */
static bool may_serve(const dch_map *m, uint32_t x)
{
    return dch_map_node_name(m, x) != NULL && dch_map_node_weight(m, x) > 0 &&
           dch_map_node_drained(m, x) == 0;
}

const char *bal_check_keep_drop(const uint32_t *eff0, const uint32_t *below0,
                                const uint32_t *below1, const dch_map *after)
{
    const uint32_t P = dch_map_slot_count(after);
    uint32_t *eff1 = drain_table(after, false);
    const char *bad = NULL;
    for (uint32_t q = 0; q < P && bad == NULL; q++) {
        const size_t o = (size_t)q * ROW;
        const uint32_t *e0 = eff0 + o, *l0 = below0 + o, *l1 = below1 + o, *e1 = eff1 + o;
        if (same_row(e0, l0)) {
            if (!same_row(e1, l1))
                bad = say("slot %u had no load move and now has one", q);
            continue;
        }
        bool serve = true;
        uint32_t why = NONE;
        for (uint32_t k = 0; k < ROW && e0[k] != NONE; k++)
            if (!may_serve(after, e0[k]) && (k == 0 || !row_has(l1, e0[k]))) {
                serve = false;
                why = e0[k];
            }
        if (!same_row(l0, l1) && same_set(l0, l1)) {
            if (!same_row(e1, l1) && !(serve && same_row(e1, e0)))
                bad = say("slot %u is neither its load move nor the table below", q);
        } else if (same_row(l0, l1) && serve) {
            if (!same_row(e1, e0))
                bad = say("slot %u lost its load move (%u %u %u, below %u %u %u, now %u %u %u) "
                          "though its copies below are unchanged and every member it names "
                          "may serve",
                          q, e0[0], e0[1], e0[2], l0[0], l0[1], l0[2], e1[0], e1[1], e1[2]);
        } else if (!same_row(e1, l1)) {
            if (serve)
                bad = say("slot %u kept a load move though its copies below changed", q);
            else
                bad = say("slot %u kept a load move though member %u it names may not serve "
                          "(%s, weight %u, drain mode %u)",
                          q, why, dch_map_node_name(after, why) ? "a member" : "not a member",
                          dch_map_node_weight(after, why), dch_map_node_drained(after, why));
        }
    }
    free(eff1);
    return bad;
}

/* ---- Load vectors ------------------------------------------------------ */

static void shuffle(uint32_t *v, uint32_t n, uint64_t *rng)
{
    for (uint32_t i = n; i > 1; i--) {
        const uint32_t j = rng_below(rng, i), t = v[i - 1];
        v[i - 1] = v[j];
        v[j] = t;
    }
}

static void zipf(uint64_t *out, uint32_t P, uint64_t *rng)
{
    const double s = 0.8 + 0.4 * (double)rng_below(rng, 1001) / 1000.0;
    const double top = (double)(UINT64_C(1) << (20 + rng_below(rng, 20)));
    uint32_t *rank = xmalloc(P * sizeof *rank);
    for (uint32_t i = 0; i < P; i++)
        rank[i] = i;
    shuffle(rank, P, rng);
    for (uint32_t i = 0; i < P; i++)
        out[i] = (uint64_t)(top / pow((double)rank[i] + 1.0, s));
    free(rank);
}

void bal_loads(uint64_t *out, uint32_t P, unsigned kind, uint64_t *rng)
{
    const uint64_t cap = UINT64_MAX / P; /* every slot at most this: the sum fits */
    const uint64_t base = rng_next(rng) >> (8 + rng_below(rng, 48));
    for (uint32_t i = 0; i < P; i++)
        out[i] = 0;
    switch (kind) {
    case BAL_LOADS_ZERO:
        break;
    case BAL_LOADS_ONE_SLOT:
        out[rng_below(rng, P)] = rng_below(rng, 4) == 0 ? UINT64_MAX : 1 + base;
        break;
    case BAL_LOADS_NEAR_EQUAL:
        for (uint32_t i = 0; i < P; i++)
            out[i] = 1000 + base % 100000 + rng_below(rng, 3);
        break;
    case BAL_LOADS_ZIPF:
        zipf(out, P, rng);
        break;
    case BAL_LOADS_HEAVY_TAIL:
        for (uint32_t i = 0; i < P; i++)
            out[i] = (rng_next(rng) >> (24 + rng_below(rng, 40))) % cap;
        break;
    case BAL_LOADS_HOT: {
        const uint32_t hot = 1 + rng_below(rng, 4);
        for (uint32_t i = 0; i < P; i++)
            out[i] = rng_below(rng, 100);
        for (uint32_t k = 0; k < hot; k++)
            out[rng_below(rng, P)] = 1000 * P + rng_below(rng, 100000 * P);
        break;
    }
    case BAL_LOADS_HUGE:
        for (uint32_t i = 0; i < P; i++)
            out[i] = cap - (rng_next(rng) % (cap / 4 + 1));
        break;
    default:
        for (uint32_t i = 0; i < P; i++)
            out[i] = rng_below(rng, 8) == 0 ? 1 + rng_below(rng, 5) : 0;
        break;
    }
}
