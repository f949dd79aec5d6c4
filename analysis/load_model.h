/* SPDX-License-Identifier: MIT */
/*
 * Load models for the Load section (section_load.c): items (keys, or the
 * slots themselves) with a popularity, summed into slot loads, and the
 * drift of those loads from epoch to epoch; then the figures of a placement
 * under such loads (each member's load, target and bound, in the terms of
 * dch/balance.h) and the greedy baseline balancing is compared with.
 * docs/analysis.md ("Load") defines every model and figure.
 *
 * Everything is exact integer arithmetic but the drift factors: loads are
 * uint64_t, and a member's target T_i = Λ w_i / W' is compared through
 * C_i W' against Λ w_i, which stays below 2^64 while Λ < 2^48 and W' < 2^16
 * (the models keep Λ near 2^36).
 */
#ifndef DCH_ANALYSIS_LOAD_MODEL_H
#define DCH_ANALYSIS_LOAD_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** What the loads are drawn from. */
typedef enum an_load_source {
    AN_LOAD_KEYS,  /* keys with Zipf popularity, hashed to slots */
    AN_LOAD_SLOTS, /* Zipf popularity straight onto slots */
    AN_LOAD_HOT    /* near-even slots and a few hot ones */
} an_load_source;

/** Hot slots of AN_LOAD_HOT, and the share of Λ each carries. */
#define AN_LOAD_HOT_SLOTS 16u
#define AN_LOAD_HOT_SHARE 0.004

/** The total popularity a model starts from: about 2^36. */
#define AN_LOAD_SCALE 68719476736.0

/** A standard normal draw (Box-Muller, one of the pair) from a SplitMix64
 *  stream. */
double an_normal(uint64_t *rng);

/**
 * Items with a popularity each, and the drift of their slots' loads. Rank r
 * (0 the hottest) has popularity pop[r]; item_at[r] is the item that holds
 * it, slot_of[item] the item's slot. A slot's load is round(mult[s] * the
 * sum of the popularities of its items).
 */
typedef struct an_load_model {
    uint32_t slots;
    size_t items;
    size_t hot;         /* ranks dealt out again each epoch: items / 100 */
    uint64_t *pop;      /* by rank, descending */
    uint32_t *item_at;  /* rank -> item */
    uint32_t *slot_of;  /* item -> slot */
    uint64_t *cold;     /* per slot: popularity of its items of rank >= hot */
    double *mult;       /* per slot: the drift factor so far (1 at epoch 0) */
    uint64_t rng;       /* the drift's stream */
} an_load_model;

/**
 * A model over `slots` slots: `items` keys whose hashes are hashes[i]
 * (slot_of[i] given, the map's dch_map_slot_of), or with hashes NULL items
 * = slots items, item i on slot i. Zipf popularity 1 / (rank+1)^s scaled
 * to a total near AN_LOAD_SCALE, ranks dealt to items by a seeded shuffle
 * (AN_LOAD_KEYS, AN_LOAD_SLOTS); or (AN_LOAD_HOT) every slot a popularity
 * drawn evenly from [0.5, 1.5] times the mean, and AN_LOAD_HOT_SLOTS of
 * them AN_LOAD_HOT_SHARE of the total each. slot_of is taken (freed with
 * the model, also on failure). @return 0, or -1 when out of memory.
 */
int an_load_model_new(an_load_model *m, an_load_source src, double s, uint32_t slots,
                      size_t items, uint32_t *slot_of, uint64_t seed);

void an_load_model_free(an_load_model *m);

/** The slot loads now, to load[0 .. slots-1]. */
void an_load_model_slots(const an_load_model *m, uint64_t *load);

/**
 * One epoch of drift: the `hot` hottest ranks are dealt out again among
 * their items (a seeded shuffle: the hottest items trade popularity), then
 * every slot's factor is multiplied by exp(0.1 Z), Z standard normal.
 */
void an_load_model_drift(an_load_model *m);

/**
 * Each member's load when item i goes to member member_of[i] (a ring's
 * placement), to out[0 .. members-1], in the model's units (factors
 * included, not rounded).
 */
void an_load_model_members(const an_load_model *m, const uint32_t *member_of,
                           uint32_t members, double *out);

/* ---- A placement's figures -------------------------------------------------- */

/**
 * A placement of slots on members 0 .. n-1 of weights w (all positive):
 * owner[s] is slot s's member. The figures the balancing calls and the
 * report use (dch/balance.h): C_i, h_i, Λ, Lmax, L2.
 */
typedef struct an_load_state {
    uint32_t n;
    const uint32_t *w;
    uint64_t wsum;     /* W' */
    uint64_t total;    /* Λ */
    uint64_t lmax, l2; /* heaviest and second heaviest slot loads */
    uint64_t *c;       /* C_i */
    uint64_t *h;       /* h_i */
} an_load_state;

/** Fill st (c and h: n entries each, owned by the caller). */
void an_load_state_of(an_load_state *st, const uint64_t *load, uint32_t slots,
                      const uint32_t *owner);

/** B_i W' (exact): min(Λ w_i + Lmax W', max(Λ w_i, h_i W') + L2 W'). */
uint64_t an_load_bound_scaled(const an_load_state *st, uint32_t i);

/** Sum over members of max(0, C_i - B_i), each term rounded up: the load
 *  above the bounds (dch_balance_report.moved_load_floor). */
uint64_t an_load_excess(const an_load_state *st);

/** Members above their bounds. */
uint32_t an_load_above(const an_load_state *st);

/** max_i C_i / T_i (0 when Λ = 0). */
double an_load_max_ratio(const an_load_state *st);

/** The floor no placement beats: max(1, Lmax / max_i T_i). */
double an_load_floor(const an_load_state *st);

/** What one greedy pass did. */
typedef struct an_greedy_result {
    uint32_t moves;
    uint64_t moved_load;
} an_greedy_result;

/**
 * The greedy baseline: while a member is above its bound, move the
 * heaviest slot of the member of largest C_i / T_i (the lowest slot among
 * equals; ties between members: the lower number) to the member of least
 * C_i / T_i, unless that leaves the receiver at or above the giver's load
 * ratio before the move (no progress: the pass stops), and at most `slots`
 * moves. owner[] is changed in place; st is left describing the result.
 * @return 0, or -1 when out of memory (owner unchanged).
 */
int an_greedy_balance(an_load_state *st, const uint64_t *load, uint32_t slots,
                      uint32_t *owner, an_greedy_result *out);

#endif /* DCH_ANALYSIS_LOAD_MODEL_H */
