/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the invariants of the map and the ring under any sequence
 * of operations the fuzzer's bytes describe.
 *
 * Input: byte 0 picks the map's shape (units 2^(b & 7), slots per unit
 * 2^(b >> 3 & 7), at most 2^12 slots, so a run stays fast), byte 1 whether
 * the ring takes part (bit 7), whether drains do (bit 6) and the ring's
 * points per weight (1 + (b & 7)), byte 2 the shared hash key. Then
 * operations, one opcode byte (taken modulo 8, or 10 with drains) and its
 * arguments each:
 *
 *   0, 1  add:        name byte, weight byte
 *   2     remove:     id byte
 *   3, 4  set_weight: id byte, weight byte
 *   5     clone both, continue with the clones
 *   6     map: save, load, continue with the loaded map; ring: clone
 *   7     ring: rebuild from its (name, weight) pairs and compare (the
 *         first 4 times; always once at the end)
 *   8     drain:   id byte, mode byte (taken modulo 4: 0 and 3 are no
 *                  mode, DCH_EINVAL)
 *   9     undrain: id byte
 *
 * A name byte b names "n<b>" below 0xE0 and a long name (207 to 238 bytes)
 * above, so names collide often (EEXIST) and long names sort among short
 * ones. An id byte is taken modulo id_limit + 2, so freed ids and ids past
 * the limit come up (ENOENT). A weight byte below 0xF0 is b % 12; from 0xF0
 * up it is one of sixteen large weights up to UINT32_MAX, so weight sums
 * overflow (EFULL) and shares become tiny.
 *
 * Every call's return code is predicted from a model of the members (names,
 * weights, lowest free id) and must match; after every step the object must
 * match the model, and:
 *
 *   map   the promises at the top of dch/map.h, for every history, in
 *         exact integers (W the weight sum, P slots, N members of positive
 *         weight, x the member the call names):
 *         - coverage: every slot owned by a member of positive weight, or
 *           none when W = 0; every member's reported slot count is the
 *           number of slots it owns;
 *         - global balance: |count * W - P * w| < 2 * W for every member;
 *         - movement: a failed call, or one that changes nothing, moves no
 *           slot. Otherwise moved slots go into x when its weight rose (add
 *           included) and out of x when it fell (remove included), except
 *           repair moves: a slot between two members other than x, or one
 *           of x's against its direction (the repair takes from the member
 *           furthest above its share and gives to the one furthest below,
 *           x included). A call may make repair moves only when, after it,
 *           some positive weight differs from another. x's moves in its
 *           direction less those against it equal |change of x's count|,
 *           so a call without repair moves moves exactly that many;
 *         - equal weights: when every positive weight is equal after the
 *           call and every positive weight set since the map last had no
 *           member of positive weight was that one value, the counts of the
 *           members of positive weight are within 2 of each other, on a
 *           join every old member gives within 4 slots of P/(N(N+1)) (N
 *           before the join), and on a removal every survivor receives
 *           within 4 slots of P/(N(N-1)) (N before the removal);
 *         - the epoch (+1 for a call that changes something, otherwise
 *           kept); ranges that cover the hash space once and agree with
 *           lookups at both ends of every range; save, load and save again
 *           give the same map and the same bytes (the loader rejects a
 *           settled map outside the global bound, so this also checks that
 *           every map the engine leaves loads); and determinism: a twin
 *           map given the same changes but never cloned, saved or loaded has
 *           the same fingerprint and epoch.
 *         Per-unit slices are not promised and not checked. The number of
 *         calls that made repair moves, and of those moves, is printed when
 *         the process exits normally (the end of a libFuzzer run or of a
 *         replay).
 *   ring  ranges cover the hash space once, owned by members of positive
 *         weight (one unowned range when there are no points), and agree
 *         with lookups at both ends and the middle of every range; the point
 *         count is points per weight times the weight sum; arcs move only
 *         to the changed member (add, raise) or only from it (remove, lower);
 *         and a ring rebuilt from the same members in reverse id order owns
 *         the same ranges by name.
 *
 *   drains  with bit 6 of byte 1, a third map gets every call the map gets
 *         (clones and loads included) and the drains too, and after every
 *         step the drain promises of dch/map.h hold on it against the twin,
 *         which has the same base (tests/support/drains.h): its base is the
 *         twin's table, its effective table the twin's with the drains
 *         applied, its readers, list, epoch and fingerprint agree, and
 *         saving and loading it keeps the drains (format version 4).
 *
 * A violation prints the step, the operation and what broke, and aborts.
 * With DCH_FUZZ_TRACE set in the environment every operation is printed as
 * it runs, which turns a reproducer into a readable sequence:
 *   DCH_FUZZ_TRACE=1 build-fuzz/tests/fuzz/fuzz_ops tests/fuzz/<input>
 *
 * Rings cost more than maps here: every change to a ring, and every full
 * walk of its ranges, passes over its 2^16-entry index. So the ring takes
 * part only when the input asks (inputs without it run several times
 * faster and explore the map further), and rings are kept small: an
 * operation that would succeed but take the ring past 2^12 points is not
 * applied to the ring (only to the map).
 */
#include "dch/dch.h"
#include "drains.h"
#include "support.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_STEPS 256
#define MAX_IDS 256 /* distinct names, so ids stay below this */
#define RING_BUDGET (1u << 12)
/* A rebuild adds every member again, each add a pass over the ring's 2^16
 * index entries: a few per input, and one at the end. */
#define MAX_REBUILDS 4

/* ---- Reporting -------------------------------------------------------- */

static int step_no;
static char op_text[400];
static int trace;

static void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "\nfuzz_ops: invariant violated at step %d (%s):\n  ", step_no, op_text);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    abort();
}

/* ---- Input ------------------------------------------------------------ */

typedef struct input {
    const uint8_t *p;
    size_t n, at;
} input;

static uint8_t next(input *in)
{
    return in->at < in->n ? in->p[in->at++] : 0;
}

static const uint32_t big_weights[16] = {
    UINT32_MAX, UINT32_MAX - 1, UINT32_C(1) << 31, (UINT32_C(1) << 31) - 1,
    UINT32_C(1) << 24, (UINT32_C(1) << 24) + 1, UINT32_C(1) << 20, 1000003,
    65536, 65535, 4097, 1000, 255, 100, 31, 13};

static uint32_t weight_of(uint8_t b)
{
    return b < 0xF0 ? b % 12u : big_weights[b - 0xF0];
}

/* The name a byte stands for, in buf (at least 256 bytes). */
static void name_of(uint8_t b, char *buf)
{
    if (b < 0xE0) {
        snprintf(buf, 256, "n%u", (unsigned)b);
        return;
    }
    const unsigned len = 200u + (b & 0x1Fu);
    memset(buf, 'L', len);
    snprintf(buf + len, 256 - len, "%u", (unsigned)b);
}

/* ---- The model -------------------------------------------------------- */

/* Members as the calls so far define them: what the object must report. */
typedef struct model {
    char *name[MAX_IDS];
    uint32_t weight[MAX_IDS];
    uint32_t limit, count;
    uint64_t total;
} model;

static void model_free(model *md)
{
    for (uint32_t id = 0; id < md->limit; id++)
        free(md->name[id]);
    memset(md, 0, sizeof *md);
}

static uint32_t model_find(const model *md, const char *name)
{
    for (uint32_t id = 0; id < md->limit; id++)
        if (md->name[id] && strcmp(md->name[id], name) == 0)
            return id;
    return DCH_NODE_NONE;
}

static int model_has(const model *md, uint32_t id)
{
    return id < md->limit && md->name[id] != NULL;
}

static uint32_t model_add(model *md, const char *name, uint32_t w)
{
    uint32_t id = 0;
    while (id < md->limit && md->name[id] != NULL)
        id++;
    if (id >= MAX_IDS)
        fail("model: more than %u members", MAX_IDS);
    const size_t len = strlen(name) + 1;
    md->name[id] = xmalloc(len);
    memcpy(md->name[id], name, len);
    md->weight[id] = w;
    if (id == md->limit)
        md->limit++;
    md->count++;
    md->total += w;
    return id;
}

static void model_remove(model *md, uint32_t id)
{
    free(md->name[id]);
    md->name[id] = NULL;
    md->total -= md->weight[id];
    md->weight[id] = 0;
    md->count--;
    while (md->limit > 0 && md->name[md->limit - 1] == NULL)
        md->limit--;
}

static void model_set(model *md, uint32_t id, uint32_t w)
{
    md->total = md->total - md->weight[id] + w;
    md->weight[id] = w;
}

/* ---- Map checks ------------------------------------------------------- */

typedef enum kind { K_ADD, K_REMOVE, K_WEIGHT, K_SAME } kind;

/* What a step did to one member, for the movement and spread checks. */
typedef struct change {
    kind kind;
    int ok;       /* the call succeeded */
    uint32_t x;   /* the member it named (new id for an add) */
    uint32_t was; /* x's weight before (0 for an add) */
    uint32_t now; /* x's weight after (0 for a remove) */
} change;

typedef struct map_state {
    uint32_t P, U, S;
    uint32_t *owner;  /* P entries */
    uint32_t *count;  /* MAX_IDS entries, recomputed from owner */
    uint32_t weight[MAX_IDS];
    int member[MAX_IDS];
    uint32_t limit; /* the map's id limit */
    uint64_t W;
    uint64_t epoch;
} map_state;

static void map_state_take(map_state *st, const dch_map *m)
{
    for (uint32_t s = 0; s < st->P; s++)
        st->owner[s] = dch_map_slot_owner(m, s);
    memset(st->count, 0, MAX_IDS * sizeof *st->count);
    for (uint32_t s = 0; s < st->P; s++)
        if (st->owner[s] < MAX_IDS)
            st->count[st->owner[s]]++;
    for (uint32_t id = 0; id < MAX_IDS; id++) {
        st->member[id] = dch_map_node_name(m, id) != NULL;
        st->weight[id] = dch_map_node_weight(m, id);
    }
    st->limit = dch_map_id_limit(m);
    st->W = dch_map_total_weight(m);
    st->epoch = dch_map_epoch(m);
}

static void check_map_model(const dch_map *m, const model *md)
{
    if (dch_map_node_count(m) != md->count || dch_map_id_limit(m) != md->limit ||
        dch_map_total_weight(m) != md->total)
        fail("map: %u members, id limit %u, weight %u; expected %u, %u, %llu",
             dch_map_node_count(m), dch_map_id_limit(m), dch_map_total_weight(m), md->count,
             md->limit, (unsigned long long)md->total);
    for (uint32_t id = 0; id < md->limit; id++) {
        const char *n = dch_map_node_name(m, id);
        if ((n == NULL) != (md->name[id] == NULL) || (n && strcmp(n, md->name[id]) != 0) ||
            dch_map_node_weight(m, id) != md->weight[id])
            fail("map: member %u is \"%s\" weight %u, expected \"%s\" weight %u", id,
                 n ? n : "(none)", dch_map_node_weight(m, id),
                 md->name[id] ? md->name[id] : "(none)", md->weight[id]);
    }
}

static void check_coverage(const dch_map *m, const map_state *st)
{
    for (uint32_t s = 0; s < st->P; s++) {
        const uint32_t o = st->owner[s];
        if (st->W == 0 ? o != DCH_NODE_NONE
                       : (o >= MAX_IDS || !st->member[o] || st->weight[o] == 0))
            fail("coverage: slot %u owned by %u (weight sum %llu)", s, o,
                 (unsigned long long)st->W);
    }
    for (uint32_t id = 0; id < MAX_IDS; id++)
        if (dch_map_node_slots(m, id) != st->count[id])
            fail("counts: member %u reports %u slots, owns %u", id, dch_map_node_slots(m, id),
                 st->count[id]);
}

/* Calls checked, calls that made repair moves, and those moves: printed at
 * exit (see the top). */
static unsigned long long stat_calls, stat_repair_calls, stat_repair_moves;

static void print_stats(void)
{
    if (stat_calls > 0)
        fprintf(stderr,
                "fuzz_ops: %llu map calls checked, %llu made repair moves (%llu moves in "
                "all)\n",
                stat_calls, stat_repair_calls, stat_repair_moves);
}

/* Every positive weight equal (vacuously so with none). */
static int equal_weights(const map_state *st)
{
    uint32_t first = 0;
    for (uint32_t id = 0; id < MAX_IDS; id++) {
        if (!st->member[id] || st->weight[id] == 0)
            continue;
        if (first == 0)
            first = st->weight[id];
        else if (st->weight[id] != first)
            return 0;
    }
    return 1;
}

static void check_movement(const map_state *a, const map_state *b, const change *c)
{
    const int grow = c->now > c->was, shrink = c->now < c->was;
    /* against: x's slots moving against its direction, which only a repair
     * move can do (the repair takes from the member furthest above its share
     * and gives to the one furthest below, x included). */
    uint32_t moved = 0, x_moves = 0, against = 0, repairs = 0;
    for (uint32_t s = 0; s < a->P; s++) {
        const uint32_t from = a->owner[s], to = b->owner[s];
        if (from == to)
            continue;
        moved++;
        if (!c->ok || c->kind == K_SAME)
            fail("movement: slot %u moved %u -> %u in a call that changes nothing", s, from, to);
        if (from != c->x && to != c->x)
            repairs++;
        else if ((grow && to == c->x) || (shrink && from == c->x))
            x_moves++;
        else if (grow || shrink)
            against++;
        else
            fail("movement: slot %u moved %u -> %u though member %u's weight stayed %u", s,
                 from, to, c->x, c->now);
    }
    if (!c->ok || c->kind == K_SAME)
        return;
    stat_calls++;
    if (repairs + against > 0) {
        stat_repair_calls++;
        stat_repair_moves += repairs + against;
        if (equal_weights(b))
            fail("movement: %u repair moves (%u of them against member %u's direction) though "
                 "every positive weight is equal after the call",
                 repairs + against, against, c->x);
    }
    const uint32_t was = a->count[c->x], now = b->count[c->x];
    const uint32_t delta = was > now ? was - now : now - was;
    if (x_moves - against != delta || x_moves < against || moved != x_moves + against + repairs)
        fail("movement: %u slots moved, %u repair moves, %u against member %u, which went from "
             "%u to %u",
             moved, repairs, against, c->x, was, now);
}

/* |count * W - share_num| < bound * W, all exact. */
static int within(uint64_t count, uint64_t share_num, uint64_t W, uint64_t bound)
{
    const uint64_t have = count * W;
    const uint64_t dev = have > share_num ? have - share_num : share_num - have;
    return dev < bound * W;
}

/* Global balance, for every history: |count * W - P * w| < 2 * W. */
static void check_balance(const map_state *st)
{
    const uint64_t W = st->W, P = st->P;
    if (W == 0)
        return; /* nothing is owned; coverage checks that */
    for (uint32_t id = 0; id < MAX_IDS; id++) {
        if (!st->member[id])
            continue;
        if (!within(st->count[id], P * st->weight[id], W, 2))
            fail("global balance: member %u owns %u slots, share %.3f (weight %u of %llu)",
                 id, st->count[id], (double)P * st->weight[id] / (double)W, st->weight[id],
                 (unsigned long long)W);
    }
}

/* Equal weights (now and since the map last had no member of positive
 * weight): the counts of the members of positive weight within 2 of each
 * other. */
static void check_equal_counts(const map_state *st)
{
    uint32_t lo = UINT32_MAX, hi = 0, lo_id = 0, hi_id = 0;
    for (uint32_t id = 0; id < MAX_IDS; id++) {
        if (!st->member[id] || st->weight[id] == 0)
            continue;
        if (st->count[id] < lo) {
            lo = st->count[id];
            lo_id = id;
        }
        if (st->count[id] > hi) {
            hi = st->count[id];
            hi_id = id;
        }
    }
    if (lo != UINT32_MAX && hi - lo > 2)
        fail("equal weights: member %u owns %u slots, member %u owns %u (more than 2 apart)",
             hi_id, hi, lo_id, lo);
}

/* Equal weights: on a join every old member gives P/(N(N+1)), on a leave
 * every survivor receives P/(N(N-1)), each within 4 slots. */
static void check_spread(const map_state *a, const map_state *b, const change *c)
{
    if (!c->ok || a->W == 0 || b->W == 0)
        return;
    const int join = c->was == 0 && c->now > 0, leave = c->was > 0 && c->now == 0;
    if (!join && !leave)
        return;
    uint64_t n = 0; /* members of positive weight before, x included */
    for (uint32_t id = 0; id < MAX_IDS; id++)
        n += a->member[id] && a->weight[id] > 0;
    if (leave && n < 2)
        return;
    const uint64_t denom = join ? n * (n + 1) : n * (n - 1);
    for (uint32_t id = 0; id < MAX_IDS; id++) {
        if (id == c->x || !a->member[id] || a->weight[id] == 0)
            continue;
        const int64_t got = join ? (int64_t)a->count[id] - (int64_t)b->count[id]
                                 : (int64_t)b->count[id] - (int64_t)a->count[id];
        const int64_t dev = got * (int64_t)denom - (int64_t)a->P;
        if (dev <= -4 * (int64_t)denom || dev >= 4 * (int64_t)denom)
            fail("spread (%s of %u, %llu members of positive weight before): member %u %s "
                 "%lld slots, ideal %.3f",
                 join ? "join" : "leave", c->x, (unsigned long long)n, id,
                 join ? "gave" : "received", (long long)got, (double)a->P / (double)denom);
    }
}

static void check_ranges_of_map(const dch_map *m)
{
    size_t n = 0;
    if (dch_map_ranges(m, NULL, 0, &n) != DCH_EFULL || n == 0)
        fail("map ranges: sizing call gave %zu ranges", n);
    dch_range *r = xmalloc(n * sizeof *r);
    size_t n2 = 0;
    if (dch_map_ranges(m, r, n, &n2) != DCH_OK || n2 != n)
        fail("map ranges: %zu then %zu ranges", n, n2);
    if (r[0].lo != 0 || r[n - 1].hi != UINT64_MAX)
        fail("map ranges: do not span 0 .. 2^64-1");
    for (size_t i = 0; i < n; i++) {
        if (r[i].lo > r[i].hi || (i > 0 && r[i].lo != r[i - 1].hi + 1))
            fail("map ranges: range %zu [%llx, %llx] leaves a gap or overlaps", i,
                 (unsigned long long)r[i].lo, (unsigned long long)r[i].hi);
        if (i > 0 && r[i].owner == r[i - 1].owner)
            fail("map ranges: ranges %zu and %zu have one owner and are not merged", i - 1, i);
        if (dch_map_lookup_hash(m, r[i].lo) != r[i].owner ||
            dch_map_lookup_hash(m, r[i].hi) != r[i].owner)
            fail("map ranges: range %zu owned by %u, lookups give %u and %u", i, r[i].owner,
                 dch_map_lookup_hash(m, r[i].lo), dch_map_lookup_hash(m, r[i].hi));
    }
    free(r);
}

/* Save, load, and compare: the loaded map is the same map. */
static dch_map *save_and_load(const dch_map *m)
{
    size_t len = 0;
    uint8_t *buf = map_bytes(m, &len);
    dch_map *back = NULL;
    const int rc = dch_map_load(&back, buf, len);
    if (rc != DCH_OK)
        fail("load of a saved map: %s", dch_strerror(rc));
    if (dch_map_fingerprint(back) != dch_map_fingerprint(m) ||
        dch_map_epoch(back) != dch_map_epoch(m))
        fail("load: fingerprint or epoch differs from the saved map");
    size_t len2 = 0;
    uint8_t *again = xmalloc(len);
    if (dch_map_save(back, again, len, &len2) != DCH_OK || len2 != len ||
        memcmp(buf, again, len) != 0)
        fail("save of a loaded map gives other bytes");
    free(again);
    free(buf);
    return back;
}

/* ---- Ring checks ------------------------------------------------------ */

/* One walk: a ring's walk visits all 2^16 index buckets, the cost of a step. */
static dch_range *ring_ranges(const dch_ring *r, size_t *n)
{
    range_list c = {NULL, 0, 0};
    if (dch_ring_foreach_range(r, ranges_push, &c) != DCH_OK || c.n == 0)
        fail("ring ranges: the walk failed or gave no range");
    *n = c.n;
    return c.v;
}

static void check_ring_model(const dch_ring *r, const model *md, uint32_t ppw)
{
    if (dch_ring_node_count(r) != md->count || dch_ring_id_limit(r) != md->limit ||
        dch_ring_total_weight(r) != md->total ||
        dch_ring_point_count(r) != (uint64_t)ppw * md->total)
        fail("ring: %u members, id limit %u, weight %u, %u points; expected %u, %u, %llu, %llu",
             dch_ring_node_count(r), dch_ring_id_limit(r), dch_ring_total_weight(r),
             dch_ring_point_count(r), md->count, md->limit, (unsigned long long)md->total,
             (unsigned long long)(ppw * md->total));
    for (uint32_t id = 0; id < md->limit; id++) {
        const char *name = dch_ring_node_name(r, id);
        if ((name == NULL) != (md->name[id] == NULL) ||
            (name && strcmp(name, md->name[id]) != 0) ||
            dch_ring_node_weight(r, id) != md->weight[id])
            fail("ring: member %u differs from the model", id);
    }
}

/* Ranges that cover the hash space once, owned by members of positive
 * weight, each looked up to its owner at both ends and in the middle. */
static void check_ring(const dch_ring *r, const model *md, uint32_t ppw, const dch_range *rg,
                       size_t n)
{
    check_ring_model(r, md, ppw);
    if (rg[0].lo != 0 || rg[n - 1].hi != UINT64_MAX)
        fail("ring ranges: do not span 0 .. 2^64-1");
    if (md->total == 0 && (n != 1 || rg[0].owner != DCH_NODE_NONE))
        fail("ring ranges: a ring without points has %zu ranges", n);
    for (size_t i = 0; i < n; i++) {
        if (rg[i].lo > rg[i].hi || (i > 0 && rg[i].lo != rg[i - 1].hi + 1))
            fail("ring ranges: range %zu leaves a gap or overlaps", i);
        if (i > 0 && rg[i].owner == rg[i - 1].owner)
            fail("ring ranges: ranges %zu and %zu have one owner and are not merged", i - 1, i);
        const uint32_t o = rg[i].owner;
        if (md->total > 0 && (!model_has(md, o) || md->weight[o] == 0))
            fail("ring ranges: range %zu owned by %u, not a member of positive weight", i, o);
        const uint64_t mid = rg[i].lo + (rg[i].hi - rg[i].lo) / 2;
        if (dch_ring_lookup_hash(r, rg[i].lo) != o || dch_ring_lookup_hash(r, rg[i].hi) != o ||
            dch_ring_lookup_hash(r, mid) != o)
            fail("ring ranges: range %zu [%llx, %llx] owned by %u, lookups give %u, %u, %u", i,
                 (unsigned long long)rg[i].lo, (unsigned long long)rg[i].hi, o,
                 dch_ring_lookup_hash(r, rg[i].lo), dch_ring_lookup_hash(r, mid),
                 dch_ring_lookup_hash(r, rg[i].hi));
    }
}

static int ring_move_ok(const dch_range_change *ch, void *ctx)
{
    const change *c = ctx;
    if (!c->ok || c->kind == K_SAME)
        fail("ring: [%llx, %llx] moved %u -> %u in a call that changes nothing",
             (unsigned long long)ch->lo, (unsigned long long)ch->hi, ch->from, ch->to);
    if (c->now > c->was ? ch->to != c->x : ch->from != c->x)
        fail("ring monotone: [%llx, %llx] moved %u -> %u, member %u weight %u -> %u",
             (unsigned long long)ch->lo, (unsigned long long)ch->hi, ch->from, ch->to, c->x,
             c->was, c->now);
    return 0;
}

/* The same members, added in reverse id order, own the same ranges. */
static void check_ring_rebuild(const dch_ring *r, const model *md, const dch_range *rg,
                               size_t n)
{
    dch_ring_config cfg;
    dch_ring_config_default(&cfg);
    dch_ring_get_config(r, &cfg);
    dch_ring *b = NULL;
    if (dch_ring_new(&b, &cfg) != DCH_OK)
        fail("ring rebuild: new failed");
    for (uint32_t id = md->limit; id-- > 0;)
        if (md->name[id] && dch_ring_add_node(b, md->name[id], md->weight[id], NULL) != DCH_OK)
            fail("ring rebuild: add \"%s\" failed", md->name[id]);
    size_t nb;
    dch_range *rb = ring_ranges(b, &nb);
    if (nb != n)
        fail("ring rebuild: %zu ranges, the ring has %zu", nb, n);
    for (size_t i = 0; i < n; i++) {
        const char *x = rg[i].owner == DCH_NODE_NONE ? "" : dch_ring_node_name(r, rg[i].owner);
        const char *y = rb[i].owner == DCH_NODE_NONE ? "" : dch_ring_node_name(b, rb[i].owner);
        if (rg[i].lo != rb[i].lo || rg[i].hi != rb[i].hi || x == NULL || y == NULL ||
            strcmp(x, y) != 0)
            fail("ring rebuild: range %zu differs (owners \"%s\" and \"%s\")", i, x ? x : "?",
                 y ? y : "?");
    }
    free(rb);
    dch_ring_free(b);
}

/* ---- One run ---------------------------------------------------------- */

typedef struct run {
    dch_map *map, *twin; /* twin: the same changes, never cloned or loaded */
    dch_map *dm; /* with drains: the same changes and the drains; else NULL */
    drain_list dl;
    dch_ring *ring;
    int with_ring;
    uint32_t ppw;
    model mm, rm; /* members of the map and of the ring */
    map_state before, after;
    dch_range *rg; /* the ring's ranges after the last change */
    size_t nrg;
    size_t ring_memory;
    /* Since the map last had no member of positive weight: the one positive
     * weight set (0: none yet), and whether every positive weight set was it. */
    uint32_t equal_value;
    int equal_history;
} run;

static void note_weight(run *R, uint32_t w)
{
    if (w == 0)
        return;
    if (R->equal_value == 0)
        R->equal_value = w;
    else if (w != R->equal_value)
        R->equal_history = 0;
}

/*
 * The code an add must return, from the model: EEXIST, EFULL or OK. When the
 * name is taken and the weight would also pass a limit, the headers do not
 * say which error wins, so *alt names the other one.
 */
static int expect_add(const model *md, const char *name, uint32_t w, uint64_t ppw, int *alt)
{
    const int full =
        md->total + w > UINT32_MAX || (ppw && (md->total + w) * ppw > DCH_RING_MAX_POINTS);
    const int taken = model_find(md, name) != DCH_NODE_NONE;
    *alt = taken && full ? DCH_EFULL : DCH_OK;
    return taken ? DCH_EEXIST : full ? DCH_EFULL : DCH_OK;
}

static int expect_set(const model *md, uint32_t id, uint32_t w, uint64_t ppw)
{
    if (!model_has(md, id))
        return DCH_ENOENT;
    const uint64_t total = md->total - md->weight[id] + w;
    if (w != md->weight[id] && (total > UINT32_MAX || (ppw && total * ppw > DCH_RING_MAX_POINTS)))
        return DCH_EFULL;
    return DCH_OK;
}

static void expect_rc(const char *what, int rc, int want, int alt)
{
    if (rc != want && (alt == DCH_OK || rc != alt))
        fail("%s returned %d (%s), expected %d (%s)", what, rc, dch_strerror(rc), want,
             dch_strerror(want));
}

/* An add of name (weight w) answered DCH_OK and id: the model takes the
 * member, whose id must be the lowest free one. */
static void model_added(model *md, const char *what, const char *name, uint32_t w, uint32_t id,
                        change *c)
{
    c->x = model_add(md, name, w);
    if (id != c->x)
        fail("%s add: id %u, expected the lowest free id %u", what, id, c->x);
    c->now = w;
}

/* A removal of id sel answered rc: DCH_OK exactly when the model holds sel,
 * which then leaves it (its weight in c->was). */
static void model_removed(model *md, const char *what, uint32_t sel, int rc, change *c)
{
    char call[32];
    snprintf(call, sizeof call, "%s remove", what);
    expect_rc(call, rc, model_has(md, sel) ? DCH_OK : DCH_ENOENT, DCH_OK);
    if (rc == DCH_OK) {
        c->was = md->weight[sel];
        model_remove(md, sel);
    }
}

/* A weight change of sel to w answered DCH_OK: the model takes it (the
 * same weight again changes nothing: K_SAME). */
static void model_weighed(model *md, uint32_t sel, uint32_t w, change *c)
{
    c->was = md->weight[sel];
    c->now = w;
    if (c->was == w)
        c->kind = K_SAME;
    model_set(md, sel, w);
}

/* One step on the map (and its twin): call, check the code, update the model. */
static change map_step(run *R, int op, const char *name, uint32_t sel, uint32_t w)
{
    change c = {K_SAME, 0, DCH_NODE_NONE, 0, 0};
    int rc, want;
    if (op == 0) {
        c.kind = K_ADD;
        int alt;
        want = expect_add(&R->mm, name, w, 0, &alt);
        uint32_t id = 77777;
        rc = dch_map_add_node(R->map, name, w, &id);
        expect_rc("map add", rc, want, alt);
        expect_rc("twin add", dch_map_add_node(R->twin, name, w, NULL), rc, DCH_OK);
        if (R->dm)
            expect_rc("drained add", dch_map_add_node(R->dm, name, w, NULL), rc, DCH_OK);
        if (rc == DCH_OK) {
            model_added(&R->mm, "map", name, w, id, &c);
            note_weight(R, w);
        } else if (id != 77777) {
            fail("map add: failed but wrote the id");
        }
    } else if (op == 1) {
        c.kind = K_REMOVE;
        c.x = sel;
        rc = dch_map_remove_node(R->map, sel);
        model_removed(&R->mm, "map", sel, rc, &c);
        expect_rc("twin remove", dch_map_remove_node(R->twin, sel), rc, DCH_OK);
        if (R->dm)
            expect_rc("drained remove", dch_map_remove_node(R->dm, sel), rc, DCH_OK);
        if (rc == DCH_OK)
            drain_list_drop(&R->dl, sel); /* removal ends a drain */
    } else {
        c.kind = K_WEIGHT;
        c.x = sel;
        want = expect_set(&R->mm, sel, w, 0);
        rc = dch_map_set_weight(R->map, sel, w);
        expect_rc("map set_weight", rc, want, DCH_OK);
        expect_rc("twin set_weight", dch_map_set_weight(R->twin, sel, w), want, DCH_OK);
        if (R->dm)
            expect_rc("drained set_weight", dch_map_set_weight(R->dm, sel, w), want, DCH_OK);
        if (rc == DCH_OK && R->mm.weight[sel] != w)
            drain_list_drop(&R->dl, sel); /* a new weight ends a drain */
        if (rc == DCH_OK) {
            model_weighed(&R->mm, sel, w, &c);
            note_weight(R, w);
        }
    }
    c.ok = rc == DCH_OK;
    return c;
}

static void check_map_step(run *R, const change *c)
{
    map_state_take(&R->after, R->map);
    check_map_model(R->map, &R->mm);
    check_coverage(R->map, &R->after);
    check_movement(&R->before, &R->after, c);
    const uint64_t want_epoch = R->before.epoch + (c->ok && c->kind != K_SAME);
    if (R->after.epoch != want_epoch)
        fail("epoch %llu, expected %llu", (unsigned long long)R->after.epoch,
             (unsigned long long)want_epoch);
    check_balance(&R->after);
    if (R->after.W == 0) {
        /* No member of positive weight: the next history starts afresh. */
        R->equal_value = 0;
        R->equal_history = 1;
    }
    if (R->equal_history && equal_weights(&R->after)) {
        check_equal_counts(&R->after);
        check_spread(&R->before, &R->after, c);
    }
    check_ranges_of_map(R->map);
    if (dch_map_fingerprint(R->map) != dch_map_fingerprint(R->twin) ||
        dch_map_epoch(R->map) != dch_map_epoch(R->twin))
        fail("determinism: the map and its twin differ");
    const char *bad = R->dm ? drain_check(R->dm, R->twin, &R->dl) : NULL;
    if (bad != NULL)
        fail("drains: %s", bad);
    map_state tmp = R->before;
    R->before = R->after;
    R->after = tmp;
}

/* A drain (mode 1 .. 2; 0 and 3 are no mode) or an undrain (undo) of id
 * sel on the drained map: the code and the epoch, then the list. */
static void drain_step(run *R, int undo, uint32_t sel, uint32_t mode)
{
    const uint64_t epoch = dch_map_epoch(R->dm);
    const uint32_t at = drain_list_find(&R->dl, sel);
    const int member = model_has(&R->mm, sel);
    int rc, want;
    int changes;
    if (undo) {
        rc = dch_map_undrain(R->dm, sel);
        want = member ? DCH_OK : DCH_ENOENT;
        changes = rc == DCH_OK && at < R->dl.n;
        if (changes)
            drain_list_drop(&R->dl, sel);
    } else {
        rc = dch_map_drain(R->dm, sel, mode);
        want = mode != DCH_DRAIN_PRIMARY && mode != DCH_DRAIN_FULL ? DCH_EINVAL
               : member                                        ? DCH_OK
                                                               : DCH_ENOENT;
        changes = rc == DCH_OK && !(at < R->dl.n && R->dl.modes[at] == mode);
        if (rc == DCH_OK)
            drain_list_drain(&R->dl, sel, mode);
    }
    expect_rc(undo ? "undrain" : "drain", rc, want, DCH_OK);
    if (dch_map_epoch(R->dm) != epoch + (uint64_t)changes)
        fail("drains: the epoch moved by %llu", (unsigned long long)(dch_map_epoch(R->dm) - epoch));
    const char *bad = drain_check(R->dm, R->twin, &R->dl);
    if (bad != NULL)
        fail("drains: %s", bad);
}

static void ring_step(run *R, int op, const char *name, uint32_t sel, uint32_t w)
{
    change c = {K_SAME, 0, DCH_NODE_NONE, 0, 0};
    int rc, want;
    if (!R->with_ring)
        return;
    /* Calls that would succeed past the budget are left out (see top). */
    if (op == 0) {
        int alt;
        want = expect_add(&R->rm, name, w, R->ppw, &alt);
        if (want == DCH_OK && (R->rm.total + w) * R->ppw > RING_BUDGET)
            return;
        c.kind = K_ADD;
        uint32_t id = 77777;
        rc = dch_ring_add_node(R->ring, name, w, &id);
        expect_rc("ring add", rc, want, alt);
        if (rc == DCH_OK) {
            model_added(&R->rm, "ring", name, w, id, &c);
            if (w == 0)
                c.kind = K_SAME;
        }
    } else if (op == 1) {
        c.kind = K_REMOVE;
        c.x = sel;
        rc = dch_ring_remove_node(R->ring, sel);
        model_removed(&R->rm, "ring", sel, rc, &c);
        if (rc == DCH_OK && c.was == 0)
            c.kind = K_SAME;
    } else {
        want = expect_set(&R->rm, sel, w, R->ppw);
        if (want == DCH_OK && (R->rm.total - R->rm.weight[sel] + w) * R->ppw > RING_BUDGET)
            return;
        c.kind = K_WEIGHT;
        c.x = sel;
        rc = dch_ring_set_weight(R->ring, sel, w);
        expect_rc("ring set_weight", rc, want, DCH_OK);
        if (rc == DCH_OK)
            model_weighed(&R->rm, sel, w, &c);
    }
    c.ok = rc == DCH_OK;
    if (!c.ok || c.kind == K_SAME) {
        /* No arc may have moved (and after an error nothing at all may
         * have changed). The full walk costs 2^16 buckets, so compare what
         * it would: members, point count, memory after an error, and the
         * owner at both ends and the middle of every range before. */
        check_ring_model(R->ring, &R->rm, R->ppw);
        if (!c.ok && dch_ring_memory(R->ring) != R->ring_memory)
            fail("ring: a failed call changed the memory held");
        R->ring_memory = dch_ring_memory(R->ring);
        for (size_t i = 0; i < R->nrg; i++) {
            const dch_range *g = &R->rg[i];
            const uint64_t mid = g->lo + (g->hi - g->lo) / 2;
            if (dch_ring_lookup_hash(R->ring, g->lo) != g->owner ||
                dch_ring_lookup_hash(R->ring, mid) != g->owner ||
                dch_ring_lookup_hash(R->ring, g->hi) != g->owner)
                fail("ring: a call that changes nothing moved [%llx, %llx] from %u",
                     (unsigned long long)g->lo, (unsigned long long)g->hi, g->owner);
        }
        return;
    }
    size_t n;
    dch_range *rg = ring_ranges(R->ring, &n);
    check_ring(R->ring, &R->rm, R->ppw, rg, n);
    const int d = dch_range_diff(R->rg, R->nrg, rg, n, ring_move_ok, &c);
    if (d != DCH_OK)
        fail("ring: range diff returned %d", d);
    free(R->rg);
    R->rg = rg;
    R->nrg = n;
    R->ring_memory = dch_ring_memory(R->ring);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    trace = getenv("DCH_FUZZ_TRACE") != NULL;
    static int stats_registered;
    if (!stats_registered) {
        stats_registered = 1;
        (void)atexit(print_stats);
    }
    input in = {data, size, 0};
    const uint8_t shape = next(&in), ppw_byte = next(&in), key_byte = next(&in);
    unsigned ulog = shape & 7u, slog = (shape >> 3) & 7u;
    if (ulog + slog > 12)
        ulog = 12 - slog;

    static run R; /* large; zeroed below for every input */
    memset(&R, 0, sizeof R);
    R.equal_history = 1;
    R.ppw = 1u + (ppw_byte & 7u);
    R.with_ring = (ppw_byte & 0x80u) != 0;
    const int with_drains = (ppw_byte & 0x40u) != 0;

    dch_map_config mc;
    dch_map_config_default(&mc);
    mc.units = 1u << ulog;
    mc.slots_per_unit = 1u << slog;
    for (unsigned i = 0; i < 16; i++)
        mc.hash_key[i] = (uint8_t)(key_byte * (i + 1) + i);
    dch_ring_config rc;
    dch_ring_config_default(&rc);
    rc.points_per_weight = R.ppw;
    memcpy(rc.hash_key, mc.hash_key, 16);
    step_no = 0;
    snprintf(op_text, sizeof op_text, "setup");
    if (dch_map_new(&R.map, &mc) != DCH_OK || dch_map_new(&R.twin, &mc) != DCH_OK ||
        dch_ring_new(&R.ring, &rc) != DCH_OK ||
        (with_drains && dch_map_new(&R.dm, &mc) != DCH_OK))
        fail("new failed");
    if (trace)
        fprintf(stderr, "map %u x %u, ring %s %u points per weight, key byte %u\n", mc.units,
                mc.slots_per_unit, R.with_ring ? "on," : "off,", R.ppw, key_byte);
    R.before.P = R.after.P = mc.units * mc.slots_per_unit;
    R.before.U = R.after.U = mc.units;
    R.before.S = R.after.S = mc.slots_per_unit;
    R.before.owner = xcalloc(R.before.P, sizeof(uint32_t));
    R.after.owner = xcalloc(R.after.P, sizeof(uint32_t));
    R.before.count = xcalloc(MAX_IDS, sizeof(uint32_t));
    R.after.count = xcalloc(MAX_IDS, sizeof(uint32_t));
    map_state_take(&R.before, R.map);
    R.rg = ring_ranges(R.ring, &R.nrg);
    R.ring_memory = dch_ring_memory(R.ring);

    unsigned rebuilds = 0;
    for (step_no = 1; step_no <= MAX_STEPS && in.at < in.n; step_no++) {
        const unsigned op = next(&in) % (with_drains ? 10u : 8u);
        char name[256];
        if (op <= 1) {
            const uint8_t nb = next(&in);
            const uint32_t w = weight_of(next(&in));
            name_of(nb, name);
            snprintf(op_text, sizeof op_text, "add \"%.40s%s\" (name byte %u) weight %u", name,
                     strlen(name) > 40 ? "..." : "", nb, w);
            if (trace)
                fprintf(stderr, "step %d: %s\n", step_no, op_text);
            const change c = map_step(&R, 0, name, 0, w);
            check_map_step(&R, &c);
            ring_step(&R, 0, name, 0, w);
        } else if (op == 2) {
            const uint8_t b = next(&in);
            const uint32_t mid = b % (R.mm.limit + 2), rid = b % (R.rm.limit + 2);
            snprintf(op_text, sizeof op_text, "remove id byte %u (map id %u, ring id %u)", b,
                     mid, rid);
            if (trace)
                fprintf(stderr, "step %d: %s\n", step_no, op_text);
            const change c = map_step(&R, 1, NULL, mid, 0);
            check_map_step(&R, &c);
            ring_step(&R, 1, NULL, rid, 0);
        } else if (op <= 4) {
            const uint8_t b = next(&in);
            const uint32_t w = weight_of(next(&in));
            const uint32_t mid = b % (R.mm.limit + 2), rid = b % (R.rm.limit + 2);
            snprintf(op_text, sizeof op_text,
                     "set_weight id byte %u (map id %u, ring id %u) weight %u", b, mid, rid, w);
            if (trace)
                fprintf(stderr, "step %d: %s\n", step_no, op_text);
            const change c = map_step(&R, 2, NULL, mid, w);
            check_map_step(&R, &c);
            ring_step(&R, 2, NULL, rid, w);
        } else if (op == 5 || op == 6) {
            snprintf(op_text, sizeof op_text, op == 5 ? "clone" : "save and load");
            if (trace)
                fprintf(stderr, "step %d: %s\n", step_no, op_text);
            dch_map *m2 = NULL;
            if (op == 5) {
                if (dch_map_clone(&m2, R.map) != DCH_OK)
                    fail("map clone failed");
                if (dch_map_fingerprint(m2) != dch_map_fingerprint(R.map) ||
                    dch_map_epoch(m2) != dch_map_epoch(R.map) ||
                    dch_map_memory(m2) != dch_map_memory(R.map))
                    fail("clone differs from its map");
            } else {
                m2 = save_and_load(R.map);
            }
            dch_map_free(R.map);
            R.map = m2;
            if (R.dm != NULL) {
                dch_map *d2 = NULL;
                if (op == 5 && dch_map_clone(&d2, R.dm) != DCH_OK)
                    fail("drained map: clone failed");
                if (op == 6)
                    d2 = save_and_load(R.dm);
                dch_map_free(R.dm);
                R.dm = d2;
            }
            const change c = {K_SAME, 1, DCH_NODE_NONE, 0, 0};
            check_map_step(&R, &c);
            if (!R.with_ring)
                continue;
            dch_ring *r2 = NULL;
            if (dch_ring_clone(&r2, R.ring) != DCH_OK)
                fail("ring clone failed");
            dch_ring_free(R.ring);
            R.ring = r2;
            size_t n;
            dch_range *rg = ring_ranges(R.ring, &n);
            check_ring(R.ring, &R.rm, R.ppw, rg, n);
            if (n != R.nrg)
                fail("ring clone: %zu ranges, the ring has %zu", n, R.nrg);
            for (size_t i = 0; i < n; i++)
                if (rg[i].lo != R.rg[i].lo || rg[i].hi != R.rg[i].hi ||
                    rg[i].owner != R.rg[i].owner)
                    fail("ring clone: range %zu differs from the ring's", i);
            free(rg);
            R.ring_memory = dch_ring_memory(R.ring);
        } else if (op >= 8) {
            const uint8_t b = next(&in);
            const uint32_t mid = b % (R.mm.limit + 2), mode = op == 8 ? next(&in) % 4u : 0;
            snprintf(op_text, sizeof op_text, "%s id byte %u (id %u) mode %u",
                     op == 8 ? "drain" : "undrain", b, mid, mode);
            if (trace)
                fprintf(stderr, "step %d: %s\n", step_no, op_text);
            drain_step(&R, op == 9, mid, mode);
        } else if (R.with_ring && rebuilds < MAX_REBUILDS) {
            rebuilds++;
            snprintf(op_text, sizeof op_text, "rebuild the ring and compare");
            if (trace)
                fprintf(stderr, "step %d: %s\n", step_no, op_text);
            check_ring_rebuild(R.ring, &R.rm, R.rg, R.nrg);
        }
    }
    snprintf(op_text, sizeof op_text, "end of input");
    if (R.with_ring)
        check_ring_rebuild(R.ring, &R.rm, R.rg, R.nrg);

    free(R.rg);
    free(R.before.owner);
    free(R.after.owner);
    free(R.before.count);
    free(R.after.count);
    model_free(&R.mm);
    model_free(&R.rm);
    dch_map_free(R.map);
    dch_map_free(R.twin);
    dch_map_free(R.dm);
    dch_ring_free(R.ring);
    return 0;
}
