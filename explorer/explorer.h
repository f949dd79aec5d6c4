/* SPDX-License-Identifier: MIT */
/*
 * The explorer's engine state, shared by engine.c (changes, undo, history)
 * and report.c (the JSON the page draws). Private to explorer/.
 */
#ifndef DCH_EXPLORER_H
#define DCH_EXPLORER_H

#include "metrics.h"
#include "scheme.h"

#include <stdbool.h>

#define EX_SCHEMES 3
/* node-01 .. node-99: two digits, as dch-analysis names up to 99 nodes. */
#define EX_MAX_NAMES 99u
#define EX_MAX_MEMBERS 48u
#define EX_MAX_WEIGHT 16u
#define EX_MAX_POINTS 1000u
#define EX_MAX_OPS 400u
#define EX_MAX_VIEWS 16u
#define EX_MAX_FLOWS 64u

/* A drain is DCH's (dch_map_drain, DCH_DRAIN_FULL); a ring has none, and
 * there it is the member's removal and an undrain its join again with its
 * weight (an_op's rule, scheme.h). */
enum ex_kind { EX_ADD, EX_REMOVE, EX_WEIGHT, EX_DRAIN, EX_UNDRAIN };

/* One change of the history; `who` is a name number. */
typedef struct ex_op {
    enum ex_kind kind;
    uint32_t who;
    uint32_t weight; /* the weight added with, or set; a drain's member's */
    uint32_t prev;   /* EX_WEIGHT: the weight before */
} ex_op;

/* One member's exact loss to another in the last change. */
typedef struct ex_flow {
    uint32_t from, to;
    an_volume vol;
} ex_flow;

/* What the last change did to one scheme. */
typedef struct ex_change {
    bool valid;
    an_moves mv;
    double optimum;    /* share that must move (the fair share gained or lost;
                          DCH moves whole slots, so its move may differ from
                          it by less than a slot) */
    uint32_t parties;  /* other members that gave (join, raise) or got */
    uint32_t eligible; /* other members of positive weight */
    double worst;      /* largest flow of one other member over its ideal */
    ex_flow flows[EX_MAX_FLOWS];
    uint32_t nflows;
    an_changes ch; /* the exact plan, by name number */
} ex_change;

/* What each join moved, kept for the migration chart. */
typedef struct ex_step {
    uint32_t members; /* after the change */
    double moved[EX_SCHEMES];
    double optimum;
} ex_step;

/*
 * The hot spot (ex_hot) and the last balancing by load (ex_balance) on the
 * DCH map. The load is a function of the hash key and the slot count only
 * (which keys fall in which slot), so a change of the members keeps it; a
 * balancing's load moves are the map's, and a change of the history drops
 * them first (undo replays the history, which holds no balancing).
 */
#define EX_HOT_KEYS 65536u
#define EX_MAX_ZIPF 20u /* tenths */
typedef struct ex_hotspot {
    bool on;
    uint64_t *load;    /* load[s] for every slot s, while on */
    uint32_t nslots;   /* entries of load */
    uint32_t zipf;     /* the Zipf exponent, in tenths */
    uint32_t hot_slot; /* the slot given an eighth of the keys' load on top */
    bool reported;     /* rep and what follows describe the last ex_balance */
    dch_balance_report rep;
    dch_balance_left left[EX_MAX_MEMBERS];
    uint64_t before[EX_MAX_NAMES]; /* each name number's load before it */
    bool balanced_before[EX_MAX_NAMES]; /* which of them balanced then */
    uint32_t *moved;   /* slot, from, to (name numbers): nmoved triples */
    uint32_t nmoved;
} ex_hotspot;

typedef struct ex_world {
    bool ready;
    uint32_t units, slots, points, seed, views;
    an_scheme_spec spec[EX_SCHEMES];
    an_scheme sc[EX_SCHEMES];
    ex_op ops[EX_MAX_OPS];
    ex_step steps[EX_MAX_OPS];
    uint32_t nops;
    ex_change last[EX_SCHEMES];
    ex_hotspot hot;
    char message[256];
    char *json;
} ex_world;

/* The one state of the page (the page is single-threaded). */
extern ex_world ex;

/* Shared by the engine and the report. */
void ex_name_of(char *buf, size_t n, uint32_t who);
uint32_t ex_number_of(const char *name);
uint32_t ex_numbering(const char *name, const void *ctx); /* an an_numbering */
void ex_weights_by_number(const an_scheme *s, uint32_t *weight);
int ex_ranges_by_number(const an_scheme *s, an_ranges *out);
/* by[k]: the load of the slots name number k is the primary of, under the
 * slot loads `load` (one per slot of m). */
void ex_loads_by_number(const dch_map *m, const uint64_t *load, uint64_t *by);
/* Does member `id` of m balance (positive weight, not drained)? */
bool ex_balances(const dch_map *m, uint32_t id);



/* ---- The calls the page makes (exported from the WebAssembly module) ----
 *
 * Members are named node-01, node-02, ... in the order they join; `who` is
 * a name's number less one (node-01 is 0). Every call that returns int gives
 * DCH_OK or a negative DCH_E* code, and on failure leaves the history and the
 * schemes as they were; ex_message() then says why, in words for the page.
 */

/**
 * Start again with an empty history: DCH with `units` x `slots` slots (powers
 * of two, at most 2^20 slots), a ring with `points` points per unit of weight
 * (1 .. EX_MAX_POINTS) and a one-point ring, all under the hash key of
 * `seed` (as dch-analysis --seed derives it). Keeps the number of client
 * views.
 */
int ex_reset(uint32_t units, uint32_t slots, uint32_t points, uint32_t seed);

/**
 * Change the setup (as ex_reset takes it, with the same seed) and keep the
 * history: every change is replayed and measured again on the new schemes.
 * If the replay is refused, the setup and the schemes are as they were.
 */
int ex_setup(uint32_t units, uint32_t slots, uint32_t points);

/** Add the next unused name with this weight (0 .. EX_MAX_WEIGHT). */
int ex_add(uint32_t weight);

/** Remove member `who`. DCH_ENOENT if it is not a member. */
int ex_remove(uint32_t who);

/** Set member `who`'s weight (0 .. EX_MAX_WEIGHT). */
int ex_set_weight(uint32_t who, uint32_t weight);

/**
 * Drain member `who` for maintenance (DCH: a full drain, its slots served
 * by the others as its removal would, its place in the base kept; the rings:
 * its removal). DCH_ENOENT if it is not a member, DCH_EINVAL if it is
 * drained already. While drained, a member can only be undrained.
 */
int ex_drain(uint32_t who);

/** End member `who`'s drain (DCH: undrain, the rings: its join again with
 *  its weight). DCH_EINVAL if it is not drained. */
int ex_undrain(uint32_t who);

/** Drop the last change (the rest is replayed). DCH_ENOENT if none. */
int ex_undo(void);

/**
 * Reset with the current setup, then `steps` changes drawn from `seed`: four
 * joins, then joins (half), removals (a quarter) and weight changes to 0 .. 4
 * (a quarter), each a change of its own in the history.
 */
int ex_random_history(uint32_t seed, uint32_t steps);

/**
 * Put the hot spot on the DCH map (on = 1) or take it off (0): a load for
 * every slot, from EX_HOT_KEYS keys ("key-1", ...) of Zipf popularity with
 * exponent s = zipf / 10 (key k weighs 2^32 / k^s, rounded; 0 .. 
 * EX_MAX_ZIPF) hashed to their slots, and one slot drawn from the seed that
 * takes an eighth of the keys' load on top. A new load (on, or another
 * exponent) drops the load moves in force and the last report; so does
 * taking it off. Deterministic: a function of the seed, the slot count and
 * the exponent. Setting what is set already does nothing.
 */
int ex_hot(int on, uint32_t zipf);

/**
 * Balance the DCH map by the hot spot's load (dch_map_balance_load, no
 * budget) and keep its report and the slots it moved, for the state.
 * DCH_EINVAL without the hot spot; the library's errors otherwise (the map
 * is then unchanged).
 */
int ex_balance(void);

/** Drop every load move (dch_map_balance_clear): the count-balanced map. */
int ex_balance_clear(void);

/** Client views for spread and load, 1 .. EX_MAX_VIEWS (default 8). */
int ex_set_views(uint32_t views);

/** Free everything the engine holds; a later ex_reset starts afresh. */
void ex_free(void);

/** Why the last refused call was refused. */
const char *ex_message(void);

/**
 * The current state as JSON, or NULL (ex_message says why); borrowed until
 * the next call. With full = 0 the costly figures (spread, load and the
 * reverse order, which build a scheme per view) are null, so the page can
 * draw the change at once and ask for them next.
 */
const char *ex_state(int full);

#endif /* DCH_EXPLORER_H */
