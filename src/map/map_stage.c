/* SPDX-License-Identifier: MIT */
/*
 * Staged changes: the next step map from a current map towards a target, as
 * map_stage.h specifies.
 *
 * The plan is the set of slots whose owner's name differs between the
 * current map and the target. Both ends are expressed in one id space, the
 * step ids: the target's members at their target ids and the leavers at ids
 * no target member has. A move is then a slot with a from-id and a to-id,
 * and a step is one greedy round over the moves in slot order under the
 * per-member caps. A round depends only on the moves still to be made, and
 * every step applies its moves exactly as the target has them, so the moves
 * left in step i are the plan's moves minus those of rounds 1 .. i: staging
 * from step i continues the rounds that staging from the first map would
 * have made. This is what lets a rollout resume from whatever map it finds.
 *
 * Counting the steps left replays the rounds on counters. A round stops as
 * soon as every member that still has a move to give has given K (or every
 * member with a move to receive has received K), so a plan whose moves all
 * share one member costs O(K) per round rather than O(moves).
 */
#include "dch/map_stage.h"

#include "dch/error.h"
#include "dch/map_file.h"

#include "alloc.h"
#include "map_internal.h"

#include <string.h>

#define NO_ID UINT16_C(0xFFFF) /* a step id no member has */
#define END UINT32_MAX /* end of the list of moves left */

/* What a round counts for one step id. */
typedef struct tally {
    uint32_t left_out; /* moves left that leave this member */
    uint32_t left_in; /* moves left that reach it */
    uint32_t out; /* moves out of it in the current round */
    uint32_t in; /* moves into it in the current round */
    uint32_t round; /* the round `out` and `in` belong to */
} tally;

/* Scratch of one call, all from the current map's allocator. */
typedef struct stage {
    const dch_allocator *a;
    const dch_map *cur, *target;
    uint32_t k;
    uint32_t limit; /* step id limit */
    uint32_t cap; /* entries of names, weights and tally */
    const char **names; /* step id -> name, borrowed from cur or target */
    uint32_t *weights; /* step id -> weight in a step map */
    uint16_t *sid; /* cur id -> step id */
    tally *t; /* step id -> counters */
    uint32_t moves; /* the plan's moves left in cur */
    uint32_t *slot; /* moves: slot, in ascending order */
    uint16_t *from, *to; /* moves: step ids */
    uint32_t *next; /* moves: the next move left, END at the end */
    uint32_t head; /* the first move left */
    uint32_t open_from, open_to; /* members with a move left to give/receive */
    int nobody; /* an end owns nothing: one step, straight to the target */
} stage;

static void stage_free(stage *st)
{
    void *const blocks[] = {st->names, st->weights, st->sid, st->t,
                            st->slot, st->from, st->to, st->next};
    dch__free_all(st->a, blocks, sizeof blocks / sizeof *blocks);
}

int dch_map_in_transition(const dch_map *m, dch_map_transition *tr)
{
    if (m == NULL)
        return 0;
    const dch_map_transition *t = dch__map_transition(m);
    if (t == NULL)
        return 0;
    if (tr != NULL)
        *tr = *t;
    return 1;
}

/* The argument checks of map_stage.h, before anything is allocated. */
static int check_args(const dch_map *cur, const dch_map *target, uint32_t k)
{
    if (cur == NULL || target == NULL || k == 0)
        return DCH_EINVAL;
    dch_map_config a, b;
    dch_map_get_config(cur, &a);
    dch_map_get_config(target, &b);
    if (a.units != b.units || a.slots_per_unit != b.slots_per_unit ||
        memcmp(a.hash_key, b.hash_key, sizeof a.hash_key) != 0 ||
        a.replicas > 1 || b.replicas > 1 || dch__map_transition(target) != NULL)
        return DCH_EINVAL;
    const dch_map_transition *tr = dch__map_transition(cur);
    if (tr == NULL)
        return dch_map_epoch(cur) < dch_map_epoch(target) ? DCH_OK : DCH_EINVAL;
    if (tr->target_fingerprint != dch_map_fingerprint(target))
        return DCH_EINVAL;
    return dch_map_epoch(cur) == UINT64_MAX ? DCH_EFULL : DCH_OK;
}

/*
 * Give every member of cur its step id: its target id when the target has
 * its name, else (a leaver) its own id if no target member holds it, else
 * the lowest id that neither a target member nor another leaver holds,
 * leavers taken in ascending cur id. Fills names and weights as a step map
 * has them and sets the id limit.
 */
static int assign_ids(stage *st)
{
    const dch_map *cur = st->cur, *target = st->target;
    const uint32_t cur_limit = dch_map_id_limit(cur);
    const uint32_t tgt_limit = dch_map_id_limit(target);
    for (uint32_t id = 0; id < st->cap; id++) {
        st->names[id] = id < tgt_limit ? dch_map_node_name(target, id) : NULL;
        st->weights[id] = st->names[id] != NULL ? dch_map_node_weight(target, id) : 0;
    }
    st->limit = tgt_limit;
    /* Members of both: a target weight of 0 waits for the last step. */
    for (uint32_t c = 0; c < cur_limit; c++) {
        const char *name = dch_map_node_name(cur, c);
        uint32_t tid;
        st->sid[c] = NO_ID;
        if (name == NULL || dch_map_find_node(target, name, &tid) != DCH_OK)
            continue;
        st->sid[c] = (uint16_t)tid;
        if (st->weights[tid] == 0)
            st->weights[tid] = dch_map_node_weight(cur, c);
    }
    /* Leavers, first those whose own id is free, then the others. */
    for (int pass = 0; pass < 2; pass++) {
        uint32_t lowest = 0;
        for (uint32_t c = 0; c < cur_limit; c++) {
            const char *name = dch_map_node_name(cur, c);
            if (name == NULL || st->sid[c] != NO_ID)
                continue;
            uint32_t id = c; /* below cap, which is at least cur's id limit */
            if (pass == 0 && st->names[id] != NULL)
                continue;
            if (pass == 1) {
                while (lowest < st->cap && st->names[lowest] != NULL)
                    lowest++;
                if (lowest >= st->cap)
                    return DCH_EFULL;
                id = lowest;
            }
            st->sid[c] = (uint16_t)id;
            st->names[id] = name;
            st->weights[id] = dch_map_node_weight(cur, c);
            if (id >= st->limit)
                st->limit = id + 1;
        }
    }
    uint64_t total = 0;
    for (uint32_t id = 0; id < st->limit; id++)
        total += st->weights[id];
    return total > UINT32_MAX ? DCH_EFULL : DCH_OK;
}

/* Count the moves left and allocate everything; then list the moves. */
static int stage_init(stage *st, const dch_map *cur, const dch_map *target, uint32_t k)
{
    dch_map_config cfg;
    dch_map_get_config(cur, &cfg);
    memset(st, 0, sizeof *st);
    st->a = cfg.allocator;
    st->cur = cur;
    st->target = target;
    st->k = k;
    st->nobody = dch_map_total_weight(cur) == 0 || dch_map_total_weight(target) == 0;
    if (st->nobody)
        return DCH_OK;

    /* Every step id is below the larger id limit plus the leavers, and below
     * DCH_MAP_MAX_NODES. */
    const uint32_t cur_limit = dch_map_id_limit(cur);
    const uint32_t tgt_limit = dch_map_id_limit(target);
    uint64_t cap = (cur_limit > tgt_limit ? cur_limit : tgt_limit) +
                   (uint64_t)dch_map_node_count(cur);
    st->cap = cap > DCH_MAP_MAX_NODES ? DCH_MAP_MAX_NODES : (uint32_t)cap;
    st->names = dch__alloc_array(st->a, st->cap, sizeof *st->names);
    st->weights = dch__alloc_array(st->a, st->cap, sizeof *st->weights);
    st->t = dch__alloc_array(st->a, st->cap, sizeof *st->t);
    st->sid = cur_limit ? dch__alloc_array(st->a, cur_limit, sizeof *st->sid) : NULL;
    if (!st->names || !st->weights || !st->t || (cur_limit && !st->sid))
        return DCH_ENOMEM;
    int rc = assign_ids(st);
    if (rc != DCH_OK)
        return rc;

    const uint32_t P = dch_map_slot_count(cur);
    /* Both ends own every slot (neither weight sum is 0), so the tables hold
     * member ids only. */
    const uint16_t *oc = dch__map_owner_table(cur), *ot = dch__map_owner_table(target);
    uint32_t m = 0;
    for (uint32_t s = 0; s < P; s++)
        m += st->sid[oc[s]] != ot[s];
    st->moves = m;
    if (m > 0) {
        st->slot = dch__alloc_array(st->a, m, sizeof *st->slot);
        st->from = dch__alloc_array(st->a, m, sizeof *st->from);
        st->to = dch__alloc_array(st->a, m, sizeof *st->to);
        st->next = dch__alloc_array(st->a, m, sizeof *st->next);
        if (!st->slot || !st->from || !st->to || !st->next)
            return DCH_ENOMEM;
    }
    memset(st->t, 0, (size_t)st->cap * sizeof *st->t);
    m = 0;
    for (uint32_t s = 0; s < P; s++) {
        const uint16_t f = st->sid[oc[s]], t = ot[s];
        if (f == t)
            continue;
        st->slot[m] = s;
        st->from[m] = f;
        st->to[m] = t;
        st->next[m] = m + 1 < st->moves ? m + 1 : END;
        st->open_from += st->t[f].left_out++ == 0;
        st->open_to += st->t[t].left_in++ == 0;
        m++;
    }
    st->head = st->moves > 0 ? 0 : END;
    return DCH_OK;
}

/*
 * One round, numbered `round` from 1: walk the moves left in slot order and
 * take each whose from-member has given fewer than K and whose to-member
 * has received fewer than K in this round. Taken moves leave the list; when
 * `owner` is given, each taken slot gets its target owner there.
 */
static void run_round(stage *st, uint32_t round, uint16_t *owner)
{
    uint32_t open_from = st->open_from, open_to = st->open_to;
    uint32_t prev = END;
    for (uint32_t i = st->head; i != END && open_from > 0 && open_to > 0;) {
        tally *f = &st->t[st->from[i]], *t = &st->t[st->to[i]];
        if (f->round != round) {
            f->round = round;
            f->out = f->in = 0;
        }
        if (t->round != round) {
            t->round = round;
            t->out = t->in = 0;
        }
        const uint32_t nx = st->next[i];
        if (f->out < st->k && t->in < st->k) {
            /* Before this move both members were open in this round; each
             * closes when its cap is reached or its moves run out. */
            f->out++;
            t->in++;
            f->left_out--;
            t->left_in--;
            if (f->left_out == 0)
                st->open_from--;
            if (t->left_in == 0)
                st->open_to--;
            open_from -= f->out == st->k || f->left_out == 0;
            open_to -= t->in == st->k || t->left_in == 0;
            if (owner != NULL)
                owner[st->slot[i]] = st->to[i];
            if (prev == END)
                st->head = nx;
            else
                st->next[prev] = nx;
            st->moves--;
        } else {
            prev = i;
        }
        i = nx;
    }
}

/* Rounds until no move is left, from round `first` on. */
static uint32_t count_rounds(stage *st, uint32_t first)
{
    uint32_t r = first;
    while (st->moves > 0)
        run_round(st, r++, NULL);
    return r - first;
}

int dch_map_stage_steps(const dch_map *cur, const dch_map *target,
                        uint32_t max_slots, uint32_t *steps_out)
{
    if (steps_out == NULL)
        return DCH_EINVAL;
    int rc = check_args(cur, target, max_slots);
    if (rc != DCH_OK)
        return rc;
    stage st;
    rc = stage_init(&st, cur, target, max_slots);
    if (rc == DCH_OK) {
        const uint32_t rounds = st.nobody ? 1 : count_rounds(&st, 1);
        *steps_out = rounds > 0 ? rounds : 1;
    }
    stage_free(&st);
    return rc;
}

/* The target's layer (its drains in their order, then its load moves) put
 * in force on m (the target's base just assembled): the last step is the
 * target itself. */
static int keep_drains(dch_map *m, const dch_map *target)
{
    return dch__map_copy_layer(m, target);
}

/* The target itself with `epoch`, settled, through cur's allocator; with
 * its drains, the effective table the plan heads for. */
static int make_last(dch_map **out, const stage *st, uint64_t epoch)
{
    const dch_map *target = st->target;
    const uint32_t limit = dch_map_id_limit(target);
    const char **names = NULL, **zones = NULL;
    uint32_t *weights = NULL;
    if (limit > 0) {
        names = dch__alloc_array(st->a, limit, sizeof *names);
        zones = dch__alloc_array(st->a, limit, sizeof *zones);
        weights = dch__alloc_array(st->a, limit, sizeof *weights);
    }
    int rc = DCH_ENOMEM;
    if (limit == 0 || (names && zones && weights)) {
        for (uint32_t id = 0; id < limit; id++) {
            names[id] = dch_map_node_name(target, id);
            zones[id] = dch_map_node_zone(target, id);
            weights[id] = dch_map_node_weight(target, id);
        }
        dch_map_config cfg;
        dch_map_get_config(st->cur, &cfg);
        rc = dch__map_assemble(out, &cfg, epoch, limit, names, zones, weights,
                               dch__map_base_table(target), NULL);
    }
    if (rc == DCH_OK) {
        rc = keep_drains(*out, target);
        if (rc != DCH_OK)
            dch_map_free(*out);
    }
    dch__free(st->a, names);
    dch__free(st->a, zones);
    dch__free(st->a, weights);
    return rc;
}

/*
 * The next step: the first round applied to cur's table. When it leaves no
 * move, that is the target (settled, its epoch at least the target's); else
 * step base + 1 of base + 1 + the rounds left after it.
 */
static int make_next(dch_map **out, stage *st, uint32_t base, uint64_t epoch)
{
    const uint64_t last_epoch = epoch > dch_map_epoch(st->target) ? epoch
                                                                  : dch_map_epoch(st->target);
    if (st->nobody || st->moves == 0)
        return make_last(out, st, last_epoch);
    const uint32_t P = dch_map_slot_count(st->cur);
    uint16_t *owner = dch__alloc_array(st->a, P, sizeof *owner);
    if (owner == NULL)
        return DCH_ENOMEM;
    /* Both ends own every slot here (neither weight sum is 0), so cur's
     * table holds member ids only. */
    const uint16_t *oc = dch__map_owner_table(st->cur);
    for (uint32_t s = 0; s < P; s++)
        owner[s] = st->sid[oc[s]];
    run_round(st, 1, owner);
    const uint32_t left = count_rounds(st, 2);
    int rc;
    if (left == 0) {
        rc = make_last(out, st, last_epoch);
    } else if ((uint64_t)base + 1 + left > UINT32_MAX) {
        rc = DCH_EFULL;
    } else {
        const dch_map_transition tr = {dch_map_fingerprint(st->target), base + 1,
                                       base + 1 + left};
        dch_map_config cfg;
        dch_map_get_config(st->cur, &cfg);
        rc = dch__map_assemble(out, &cfg, epoch, st->limit, st->names, NULL, st->weights,
                               owner, &tr);
    }
    dch__free(st->a, owner);
    return rc;
}

int dch_map_stage_next(dch_map **out, const dch_map *cur, const dch_map *target,
                       uint32_t max_slots)
{
    if (out == NULL)
        return DCH_EINVAL;
    int rc = check_args(cur, target, max_slots);
    if (rc != DCH_OK)
        return rc;
    const dch_map_transition *tr = dch__map_transition(cur);
    const uint32_t base = tr != NULL ? tr->step : 0;
    const uint64_t epoch = dch_map_epoch(cur) + 1;
    stage st;
    rc = stage_init(&st, cur, target, max_slots);
    dch_map *m = NULL;
    if (rc == DCH_OK)
        rc = make_next(&m, &st, base, epoch);
    stage_free(&st);
    if (rc == DCH_OK)
        *out = m;
    return rc;
}
