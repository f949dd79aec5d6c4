/* SPDX-License-Identifier: MIT */
/*
 * The explorer's engine: the state behind explorer/index.html, compiled with
 * the library to WebAssembly. The page only draws what report.c reports.
 *
 * Three schemes receive every change side by side: a DCH map (dch_map), a
 * ring with `points` points per unit of weight and a ring with one
 * (dch_ring), built and measured through analysis/scheme.h and
 * analysis/metrics.h, the code dch-analysis runs. So a figure on the page is
 * the figure dch-analysis prints for the same scenario: the same hash key
 * from the same seed (an_hash_key_of_seed), the same names (node-01, ...),
 * the same client views (an_views_of_seed), the same exact measures taken
 * from ownership ranges and from the library's diff of the schemes before
 * and after a change (an_scheme_change).
 *
 * The state is the config and the history of changes. Undo drops the last
 * change and replays the rest on fresh objects; a DCH map is a pure function
 * of its config and its calls, so the replay gives back the very map that
 * was there. A change that fails in any scheme is undone the same way, so
 * the page never shows schemes that disagree about who is a member. A new
 * setup (units, slots, ring points) replays the whole history too, measuring
 * every change again, so changing it loses nothing.
 *
 * The hot spot (ex_hot) is a load on the DCH map's slots, and ex_balance
 * balances the map by it (dch_map_balance_load). Balancing is not a change
 * of the history: a change drops the load moves first and is made and
 * measured on the count-balanced map, so undo and a replay stay exact
 * (docs/explorer.md, "A hot spot").
 *
 * Owners are numbered by name for the whole page: node-NN is number NN - 1
 * in every scheme, whatever id the scheme gave it, so a move in a plan and
 * the colour of a member mean the same everywhere.
 *
 * Every ex_ call that returns int gives DCH_OK or a negative DCH_E* code;
 * ex_message() then says what was refused in words a learner can act on.
 */
#include "explorer.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

ex_world ex;

static const char *const LABEL[EX_SCHEMES] = {"dch", "ring-P", "ring-1"};

/* ---- Small helpers ------------------------------------------------------ */

static int refuse(int rc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ex.message, sizeof ex.message, fmt, ap);
    va_end(ap);
    return rc;
}

void ex_name_of(char *buf, size_t n, uint32_t who)
{
    an_node_name(buf, n, 2, who + 1);
}

/* The name number of a scheme member, or DCH_NODE_NONE for a foreign name. */
uint32_t ex_number_of(const char *name)
{
    const uint32_t k = an_node_number(name);
    return k < EX_MAX_NAMES ? k : DCH_NODE_NONE;
}

/* weight[k] of name number k in scheme s (0 for non-members). */
void ex_weights_by_number(const an_scheme *s, uint32_t *weight)
{
    memset(weight, 0, EX_MAX_NAMES * sizeof *weight);
    for (uint32_t id = 0; id < an_scheme_id_limit(s); id++) {
        uint32_t k = ex_number_of(an_scheme_name(s, id));
        if (k != DCH_NODE_NONE)
            weight[k] = an_scheme_weight(s, id);
    }
}

uint32_t ex_numbering(const char *name, const void *ctx)
{
    (void)ctx;
    return ex_number_of(name);
}

/* A scheme's ranges with owners renumbered by name. */
int ex_ranges_by_number(const an_scheme *s, an_ranges *out)
{
    return an_scheme_ranges_named(s, ex_numbering, NULL, out);
}

void ex_loads_by_number(const dch_map *m, const uint64_t *load, uint64_t *by)
{
    memset(by, 0, EX_MAX_NAMES * sizeof *by);
    const uint32_t P = dch_map_slot_count(m);
    for (uint32_t slot = 0; slot < P; slot++) {
        uint32_t k = ex_number_of(dch_map_node_name(m, dch_map_slot_owner(m, slot)));
        if (k != DCH_NODE_NONE)
            by[k] += load[slot];
    }
}

bool ex_balances(const dch_map *m, uint32_t id)
{
    return dch_map_node_weight(m, id) > 0 && dch_map_node_drained(m, id) == 0;
}

static void free_state(void)
{
    for (int s = 0; s < EX_SCHEMES; s++) {
        an_scheme_free(&ex.sc[s]);
        an_changes_free(&ex.last[s].ch);
        ex.last[s].valid = false;
    }
}

static int fresh_schemes(void)
{
    free_state();
    for (int s = 0; s < EX_SCHEMES; s++) {
        int rc = an_scheme_new(&ex.sc[s], &ex.spec[s]);
        if (rc != DCH_OK)
            return rc;
    }
    return DCH_OK;
}

/* ---- The hot spot and balancing by load ------------------------------------ */

/* Forget the last balancing's report (the map is not touched). */
static void forget_balance(void)
{
    free(ex.hot.moved);
    ex.hot.moved = NULL;
    ex.hot.nmoved = 0;
    ex.hot.reported = false;
}

/* Key k's weight under Zipf popularity of exponent zipf / 10: 2^32 / k^s,
 * exact in integers for s = 0 and s = 1. */
static uint64_t zipf_weight(uint32_t k, uint32_t zipf)
{
    const uint64_t top = UINT64_C(1) << 32;
    if (zipf == 0)
        return top;
    if (zipf == 10)
        return top / k;
    return (uint64_t)llround(ldexp(pow((double)k, -(double)zipf / 10.0), 32));
}

/*
 * The hot spot's slot loads for the DCH map's slot count and hash key:
 * EX_HOT_KEYS keys of Zipf popularity hashed to their slots, so a slot sums
 * many keys, and one slot drawn from the seed that takes an eighth of the
 * keys' load on top. A key weighs at most 2^32, so the sum stays below
 * 2^49: exact in a double, as the page reads it.
 */
static int hot_fill(uint32_t zipf)
{
    const dch_map *m = ex.sc[0].map;
    const uint32_t P = dch_map_slot_count(m);
    uint64_t *load = calloc(P, sizeof *load);
    if (load == NULL)
        return DCH_ENOMEM;
    uint64_t keys = 0;
    for (uint32_t k = 1; k <= EX_HOT_KEYS; k++) {
        char key[24];
        int n = snprintf(key, sizeof key, "key-%u", (unsigned)k);
        const uint64_t w = zipf_weight(k, zipf);
        load[dch_map_slot_of(m, dch_map_hash(m, key, (size_t)n))] += w;
        keys += w;
    }
    uint64_t rng = ex.seed * UINT64_C(0x9e3779b97f4a7c15) + 2;
    ex.hot.hot_slot = dch__rng_below(&rng, P);
    load[ex.hot.hot_slot] += keys / 8;
    free(ex.hot.load);
    ex.hot.load = load;
    ex.hot.nslots = P;
    ex.hot.zipf = zipf;
    return DCH_OK;
}

/* Drop the load moves in force before a change of the history; says
 * whether there were any, for restore_balance. */
static bool drop_balance(void)
{
    if (!ex.ready || dch_map_balance_moves(ex.sc[0].map) == 0)
        return false;
    return dch_map_balance_clear(ex.sc[0].map) == DCH_OK;
}

/* After a refused change rebuilt the schemes: the load moves that were in
 * force again. A balancing is a pure function of the map and the loads, and
 * a second one with the same loads changes nothing (balance.h, promises 4
 * and 7), so one call from the count-balanced map gives them back. */
static void restore_balance(bool was)
{
    if (was && ex.hot.on && ex.hot.nslots == dch_map_slot_count(ex.sc[0].map))
        (void)dch_map_balance_load(ex.sc[0].map, ex.hot.load, ex.hot.nslots, NULL, NULL);
}

/* After a change of the history or of the setup: no report (the load
 * moves were dropped), and the loads of the slot count now in force. */
static int hot_after_change(void)
{
    forget_balance();
    if (!ex.hot.on || ex.hot.nslots == dch_map_slot_count(ex.sc[0].map))
        return DCH_OK;
    int rc = hot_fill(ex.hot.zipf);
    if (rc != DCH_OK) {
        free(ex.hot.load);
        ex.hot.load = NULL;
        ex.hot.on = false;
    }
    return rc;
}

/* ---- Applying and measuring one change ------------------------------------- */

static const an_op AS_OP[] = {[EX_ADD] = AN_OP_ADD,
                              [EX_REMOVE] = AN_OP_REMOVE,
                              [EX_WEIGHT] = AN_OP_WEIGHT,
                              [EX_DRAIN] = AN_OP_DRAIN,
                              [EX_UNDRAIN] = AN_OP_UNDRAIN};

static int apply_one(an_scheme *s, const ex_op *op)
{
    char name[16];
    uint32_t id;
    ex_name_of(name, sizeof name, op->who);
    return an_scheme_apply(s, AS_OP[op->kind], name, op->weight, &id);
}

static void add_flow(ex_change *c, const dch_range_change *ch)
{
    for (uint32_t i = 0; i < c->nflows; i++)
        if (c->flows[i].from == ch->from && c->flows[i].to == ch->to) {
            an_volume_add_range(&c->flows[i].vol, ch->lo, ch->hi);
            return;
        }
    if (c->nflows == EX_MAX_FLOWS)
        return; /* the page lists the largest few; the totals are in mv */
    ex_flow f = {ch->from, ch->to, {0, 0}};
    an_volume_add_range(&f.vol, ch->lo, ch->hi);
    c->flows[c->nflows++] = f;
}

/*
 * What the change must move (the subject's fair share gained or lost,
 * or all a leaver held, as dch-analysis counts it), and how it ought to be
 * shared: every other member gives (join, weight raised) or receives
 * (removal, weight lowered) in proportion to its weight.
 */
static void judge(ex_change *c, const ex_op *op, const uint32_t *w0,
                  const uint32_t *w1)
{
    double total0 = 0.0, total1 = 0.0, others = 0.0;
    for (uint32_t k = 0; k < EX_MAX_NAMES; k++) {
        total0 += w0[k];
        total1 += w1[k];
        if (k != op->who)
            others += w1[k];
    }
    double t0 = total0 > 0.0 ? w0[op->who] / total0 : 0.0;
    double t1 = total1 > 0.0 ? w1[op->who] / total1 : 0.0;
    /* A drain leaves as a removal does, an undrain comes back as a join
     * does, though DCH's weights do not change. Do the others give (true)
     * or receive (false)? */
    const bool leaves = op->kind == EX_REMOVE || op->kind == EX_DRAIN;
    const bool gives = op->kind == EX_UNDRAIN || (!leaves && t1 > t0);
    an_volume flow[EX_MAX_NAMES], left = {0, 0}, came = {0, 0};
    memset(flow, 0, sizeof flow);
    for (size_t i = 0; i < c->ch.n; i++) {
        const dch_range_change *ch = &c->ch.v[i];
        uint32_t k = gives ? ch->from : ch->to;
        if (k != DCH_NODE_NONE && k != op->who)
            an_volume_add_range(&flow[k], ch->lo, ch->hi);
        if (ch->from == op->who)
            an_volume_add_range(&left, ch->lo, ch->hi);
        if (ch->to == op->who)
            an_volume_add_range(&came, ch->lo, ch->hi);
    }
    /* Every hash a leaver held moves, so what it gave is its whole share;
     * a member back from its drain takes back what it held. */
    c->optimum = leaves                   ? an_volume_fraction(left)
                 : op->kind == EX_UNDRAIN ? an_volume_fraction(came)
                                          : fabs(t1 - t0);
    c->parties = c->eligible = 0;
    c->worst = 0.0;
    for (uint32_t k = 0; k < EX_MAX_NAMES; k++) {
        if (k == op->who || w1[k] == 0)
            continue;
        c->eligible++;
        double f = an_volume_fraction(flow[k]);
        double ideal = others > 0.0 ? c->optimum * w1[k] / others : 0.0;
        if (f > 0.0)
            c->parties++;
        if (ideal > 0.0 && f / ideal > c->worst)
            c->worst = f / ideal;
    }
}

static int measure_one(int s, const ex_op *op, ex_step *step)
{
    an_scheme *sc = &ex.sc[s];
    ex_change *c = &ex.last[s];
    uint32_t w0[EX_MAX_NAMES], w1[EX_MAX_NAMES];
    char name[16];
    ex_name_of(name, sizeof name, op->who);
    ex_weights_by_number(sc, w0);
    int rc = an_scheme_change(sc, AS_OP[op->kind], name, op->weight, NULL,
                              ex_numbering, NULL, &c->ch);
    if (rc == DCH_OK)
        rc = an_moves_of(&c->ch, EX_MAX_NAMES, op->who, &c->mv);
    if (rc == DCH_OK) {
        ex_weights_by_number(sc, w1);
        judge(c, op, w0, w1);
        c->nflows = 0;
        for (size_t i = 0; i < c->ch.n; i++)
            add_flow(c, &c->ch.v[i]);
        c->valid = true;
        step->moved[s] = c->mv.moved;
        step->optimum = c->optimum;
        step->members = an_scheme_count(sc);
    }
    return rc;
}

/* Rebuild every scheme from the first n changes, measuring the last one. */
static int replay(uint32_t n)
{
    int rc = fresh_schemes();
    for (uint32_t i = 0; i < n && rc == DCH_OK; i++)
        for (int s = 0; s < EX_SCHEMES && rc == DCH_OK; s++)
            rc = i + 1 < n ? apply_one(&ex.sc[s], &ex.ops[i])
                           : measure_one(s, &ex.ops[i], &ex.steps[i]);
    return rc;
}

/*
 * Rebuild every scheme from the whole history, measuring every change, so
 * that each step's figures (the migration chart) are those of the setup now
 * in force.
 */
static int replay_measured(void)
{
    int rc = fresh_schemes();
    for (uint32_t i = 0; i < ex.nops && rc == DCH_OK; i++)
        for (int s = 0; s < EX_SCHEMES && rc == DCH_OK; s++)
            rc = measure_one(s, &ex.ops[i], &ex.steps[i]);
    return rc;
}

/* Append a change and apply it to every scheme; on failure the history and
 * the schemes are as they were. */
static int push(ex_op op)
{
    if (!ex.ready)
        return refuse(DCH_EINVAL, "the explorer is not set up (reset first)");
    if (ex.nops == EX_MAX_OPS)
        return refuse(DCH_EFULL, "the history is full (%u changes): reset",
                      (unsigned)EX_MAX_OPS);
    char name[16];
    uint32_t id;
    ex_name_of(name, sizeof name, op.who);
    if (op.kind != EX_ADD && an_scheme_find(&ex.sc[0], name, &id) != DCH_OK)
        return refuse(DCH_ENOENT, "%s is not a member", name);
    const bool drained = op.kind != EX_ADD && dch_map_node_drained(ex.sc[0].map, id) != 0;
    /* A ring's drain is a removal, so a drained member has no weight there
     * to change or remove: only its undrain is taken. */
    if (drained && op.kind != EX_UNDRAIN)
        return refuse(DCH_EINVAL, "%s is drained: undrain it first", name);
    if (!drained && op.kind == EX_UNDRAIN)
        return refuse(DCH_EINVAL, "%s is not drained", name);
    if (op.kind == EX_WEIGHT)
        op.prev = an_scheme_weight(&ex.sc[0], id);
    if (op.kind == EX_DRAIN || op.kind == EX_UNDRAIN)
        op.weight = an_scheme_weight(&ex.sc[0], id);
    ex.ops[ex.nops] = op;
    /* The change is made and measured on the count-balanced map. */
    const bool balanced = drop_balance();
    int rc = DCH_OK;
    for (int s = 0; s < EX_SCHEMES && rc == DCH_OK; s++)
        rc = measure_one(s, &op, &ex.steps[ex.nops]);
    if (rc == DCH_OK) {
        ex.nops++;
        forget_balance();
        return DCH_OK;
    }
    int again = replay(ex.nops);
    if (again != DCH_OK)
        rc = again;
    restore_balance(balanced);
    return refuse(rc, "the library refused the change: %s", dch_strerror(rc));
}

static uint32_t members_now(void)
{
    return ex.ready ? an_scheme_count(&ex.sc[0]) : 0;
}

static uint32_t names_used(void)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < ex.nops; i++)
        n += ex.ops[i].kind == EX_ADD;
    return n;
}

/* ---- The page's calls ----------------------------------------------------- */

static bool pow2(uint32_t v)
{
    return v != 0 && (v & (v - 1)) == 0;
}

/* Refuse a setup the page cannot draw or replay fast; DCH_OK otherwise. */
static int check_setup(uint32_t units, uint32_t slots, uint32_t points)
{
    if (!pow2(units) || !pow2(slots) || units > 4096 || slots > 1024 ||
        (uint64_t)units * slots > (1u << 20))
        return refuse(DCH_EINVAL, "units and slots per unit must be powers "
                                  "of two with at most 2^20 slots in all");
    if (points == 0 || points > EX_MAX_POINTS)
        return refuse(DCH_EINVAL, "ring points per node must be a whole "
                                  "number from 1 to %u", (unsigned)EX_MAX_POINTS);
    return DCH_OK;
}

/* The three schemes' specs for a setup (the history is not touched). */
static void configure(uint32_t units, uint32_t slots, uint32_t points,
                      uint32_t seed)
{
    ex.units = units;
    ex.slots = slots;
    ex.points = points;
    ex.seed = seed;
    uint8_t key[16];
    an_hash_key_of_seed(seed, key);
    for (int s = 0; s < EX_SCHEMES; s++) {
        an_scheme_spec *sp = &ex.spec[s];
        sp->label = LABEL[s];
        sp->kind = s == 0 ? AN_KIND_MAP : AN_KIND_RING;
        sp->units = units;
        sp->slots_per_unit = slots;
        sp->points = s == 1 ? points : 1;
        memcpy(sp->hash_key, key, sizeof key);
    }
}

int ex_reset(uint32_t units, uint32_t slots, uint32_t points, uint32_t seed)
{
    int rc = check_setup(units, slots, points);
    if (rc != DCH_OK)
        return rc;
    configure(units, slots, points, seed);
    if (ex.views == 0)
        ex.views = 8;
    ex.nops = 0;
    ex.ready = false;
    rc = fresh_schemes();
    if (rc == DCH_OK) {
        ex.hot.nslots = 0; /* the seed may be another: fill again */
        rc = hot_after_change();
    }
    if (rc != DCH_OK)
        return refuse(rc, "%s", dch_strerror(rc));
    ex.ready = true;
    return DCH_OK;
}

int ex_setup(uint32_t units, uint32_t slots, uint32_t points)
{
    if (!ex.ready)
        return refuse(DCH_EINVAL, "the explorer is not set up (reset first)");
    int rc = check_setup(units, slots, points);
    if (rc != DCH_OK)
        return rc;
    const uint32_t was[3] = {ex.units, ex.slots, ex.points};
    const bool balanced = drop_balance();
    configure(units, slots, points, ex.seed);
    rc = replay_measured();
    if (rc == DCH_OK)
        rc = hot_after_change();
    if (rc == DCH_OK)
        return DCH_OK;
    configure(was[0], was[1], was[2], ex.seed);
    int again = replay_measured();
    if (again != DCH_OK)
        rc = again;
    restore_balance(balanced);
    return refuse(rc, "the history cannot be replayed on this setup: %s",
                  dch_strerror(rc));
}

int ex_add(uint32_t weight)
{
    if (weight > EX_MAX_WEIGHT)
        return refuse(DCH_EINVAL, "weights here go from 0 to %u",
                      (unsigned)EX_MAX_WEIGHT);
    if (members_now() >= EX_MAX_MEMBERS)
        return refuse(DCH_EFULL, "at most %u members here",
                      (unsigned)EX_MAX_MEMBERS);
    uint32_t who = names_used();
    if (who >= EX_MAX_NAMES)
        return refuse(DCH_EFULL, "all names node-01 .. node-%u were used: "
                                 "reset to start again", (unsigned)EX_MAX_NAMES);
    return push((ex_op){EX_ADD, who, weight, 0});
}

int ex_remove(uint32_t who)
{
    return push((ex_op){EX_REMOVE, who, 0, 0});
}

int ex_set_weight(uint32_t who, uint32_t weight)
{
    if (weight > EX_MAX_WEIGHT)
        return refuse(DCH_EINVAL, "weights here go from 0 to %u",
                      (unsigned)EX_MAX_WEIGHT);
    return push((ex_op){EX_WEIGHT, who, weight, 0});
}

int ex_drain(uint32_t who)
{
    return push((ex_op){EX_DRAIN, who, 0, 0});
}

int ex_undrain(uint32_t who)
{
    return push((ex_op){EX_UNDRAIN, who, 0, 0});
}

int ex_undo(void)
{
    if (!ex.ready || ex.nops == 0)
        return refuse(DCH_ENOENT, "nothing to undo");
    int rc = replay(ex.nops - 1);
    if (rc != DCH_OK)
        return refuse(rc, "%s", dch_strerror(rc));
    ex.nops--;
    forget_balance(); /* the replay holds no load move */
    return DCH_OK;
}

int ex_random_history(uint32_t seed, uint32_t steps)
{
    int rc = ex_reset(ex.units, ex.slots, ex.points, ex.seed);
    uint64_t rng = seed * UINT64_C(0x9e3779b97f4a7c15) + 1;
    for (uint32_t i = 0; i < steps && rc == DCH_OK; i++) {
        uint32_t n = members_now(), r = dch__rng_below(&rng, 100);
        if (i < 4 || n < 2 || r < 50) {
            rc = ex_add(dch__rng_below(&rng, 4) == 0 ? 2 : 1);
            continue;
        }
        /* A member chosen uniformly: the k-th present name number. */
        uint32_t k = dch__rng_below(&rng, n), who = 0;
        for (uint32_t id = 0; id < an_scheme_id_limit(&ex.sc[0]); id++) {
            const char *nm = an_scheme_name(&ex.sc[0], id);
            if (nm != NULL && k-- == 0)
                who = ex_number_of(nm);
        }
        if (r < 75) {
            rc = ex_remove(who);
        } else {
            /* 0 .. 4, never the weight it has, so every step changes. */
            uint32_t now = 0, w = dch__rng_below(&rng, 4);
            uint32_t id;
            char name[16];
            ex_name_of(name, sizeof name, who);
            if (an_scheme_find(&ex.sc[0], name, &id) == DCH_OK)
                now = an_scheme_weight(&ex.sc[0], id);
            rc = ex_set_weight(who, w >= now ? w + 1 : w);
        }
    }
    return rc;
}

/* ---- The page's calls on the hot spot --------------------------------------- */

int ex_hot(int on, uint32_t zipf)
{
    if (!ex.ready)
        return refuse(DCH_EINVAL, "the explorer is not set up (reset first)");
    if (zipf > EX_MAX_ZIPF)
        return refuse(DCH_EINVAL, "the Zipf exponent goes from 0 to %u tenths",
                      (unsigned)EX_MAX_ZIPF);
    if (!on && !ex.hot.on)
        return DCH_OK;
    if (on && ex.hot.on && zipf == ex.hot.zipf)
        return DCH_OK;
    /* A new load: the load moves made for the old one go. */
    int rc = on ? hot_fill(zipf) : DCH_OK;
    if (rc == DCH_OK)
        rc = dch_map_balance_clear(ex.sc[0].map);
    if (rc != DCH_OK)
        return refuse(rc, "%s", dch_strerror(rc));
    forget_balance();
    ex.hot.on = on != 0;
    if (!on) {
        free(ex.hot.load);
        ex.hot.load = NULL;
        ex.hot.nslots = 0;
    }
    return DCH_OK;
}

/* The slots whose primary changed from before[] to now, as triples into
 * moved (room for every slot); returns how many. */
static uint32_t record_moves(const dch_map *m, const uint32_t *before, uint32_t *moved)
{
    const uint32_t P = dch_map_slot_count(m);
    uint32_t n = 0;
    for (uint32_t slot = 0; slot < P; slot++) {
        uint32_t k = ex_number_of(dch_map_node_name(m, dch_map_slot_owner(m, slot)));
        if (k == before[slot])
            continue;
        moved[3 * n] = slot;
        moved[3 * n + 1] = before[slot];
        moved[3 * n + 2] = k;
        n++;
    }
    return n;
}

/* Each name number's load and whether it balances, on the map as it is. */
static void balance_before(const dch_map *m, uint64_t *load, bool *balances)
{
    ex_loads_by_number(m, ex.hot.load, load);
    memset(balances, 0, EX_MAX_NAMES * sizeof *balances);
    for (uint32_t id = 0; id < dch_map_id_limit(m); id++) {
        uint32_t k = ex_number_of(dch_map_node_name(m, id));
        if (k != DCH_NODE_NONE)
            balances[k] = ex_balances(m, id);
    }
}

int ex_balance(void)
{
    if (!ex.ready || !ex.hot.on)
        return refuse(DCH_EINVAL, "put the hot spot on first: balancing needs a load");
    dch_map *m = ex.sc[0].map;
    const uint32_t P = dch_map_slot_count(m);
    /* Everything is allocated before the call, so that a refusal leaves the
     * map and the last report as they were. */
    uint32_t *owner = malloc((size_t)P * sizeof *owner);
    uint32_t *moved = malloc((size_t)P * 3 * sizeof *moved);
    int rc = owner != NULL && moved != NULL ? DCH_OK : DCH_ENOMEM;
    for (uint32_t slot = 0; slot < P && rc == DCH_OK; slot++)
        owner[slot] = ex_number_of(dch_map_node_name(m, dch_map_slot_owner(m, slot)));
    uint64_t before[EX_MAX_NAMES];
    bool balances[EX_MAX_NAMES];
    balance_before(m, before, balances);
    dch_balance_report rep;
    memset(&rep, 0, sizeof rep);
    rep.left = ex.hot.left;
    rep.left_cap = EX_MAX_MEMBERS;
    if (rc == DCH_OK)
        rc = dch_map_balance_load(m, ex.hot.load, P, NULL, &rep);
    if (rc != DCH_OK) {
        free(owner);
        free(moved);
        return refuse(rc, "the library refused to balance: %s", dch_strerror(rc));
    }
    forget_balance();
    ex.hot.nmoved = record_moves(m, owner, moved);
    ex.hot.moved = moved;
    free(owner);
    ex.hot.rep = rep;
    memcpy(ex.hot.before, before, sizeof before);
    memcpy(ex.hot.balanced_before, balances, sizeof balances);
    ex.hot.reported = true;
    return DCH_OK;
}

int ex_balance_clear(void)
{
    if (!ex.ready)
        return refuse(DCH_EINVAL, "the explorer is not set up (reset first)");
    int rc = dch_map_balance_clear(ex.sc[0].map);
    if (rc != DCH_OK)
        return refuse(rc, "%s", dch_strerror(rc));
    forget_balance();
    return DCH_OK;
}

int ex_set_views(uint32_t views)
{
    if (views == 0 || views > EX_MAX_VIEWS)
        return refuse(DCH_EINVAL, "views must be 1 .. %u",
                      (unsigned)EX_MAX_VIEWS);
    ex.views = views;
    return DCH_OK;
}

void ex_free(void)
{
    free_state();
    forget_balance();
    free(ex.hot.load);
    ex.hot.load = NULL;
    ex.hot.nslots = 0;
    ex.hot.on = false;
    free(ex.json);
    ex.json = NULL;
    ex.ready = false;
    ex.nops = 0;
}

const char *ex_message(void)
{
    return ex.message;
}

