/* SPDX-License-Identifier: MIT */
/*
 * Measurements of a partition scheme, taken exactly from its ownership ranges.
 *
 * Everything here works on range lists (dch/range.h): who owns which part of
 * the 64-bit hash space. Shares and migration are computed from those lists
 * exactly, as counts of hashes; sampled keys are then used only to confirm
 * the exact figures, never to produce them. Owners are plain numbers: within
 * one scheme they are its member ids, and lists that come from different
 * objects (client views) are renumbered to a common numbering first.
 *
 * Functions that allocate return DCH_OK or DCH_ENOMEM (DCH_EINVAL for bad
 * input) and leave their outputs untouched on failure.
 */
#ifndef DCH_ANALYSIS_METRICS_H
#define DCH_ANALYSIS_METRICS_H

#include "dch/dch.h"
#include "rng.h" /* seeded randomness: dch__rng_next, dch__rng_below */

#include <stdbool.h>

/* ---- Exact amounts of hash space ---------------------------------------- */

/**
 * A count of hashes, 0 .. 2^64 (and sums of such counts), held exactly as
 * high * 2^64 + low.
 */
typedef struct an_volume {
    uint64_t high;
    uint64_t low;
} an_volume;

/** Add the hashes lo .. hi (inclusive, lo <= hi) to *v. */
void an_volume_add_range(an_volume *v, uint64_t lo, uint64_t hi);

/** Add one volume to another. */
void an_volume_add(an_volume *v, an_volume w);

/** The volume as a fraction of the hash space (2^64 hashes give 1.0). */
double an_volume_fraction(an_volume v);

/* ---- Range lists --------------------------------------------------------- */

/** A range list the analysis owns (free with an_ranges_free). */
typedef struct an_ranges {
    dch_range *v;
    size_t n;
} an_ranges;

/** The ownership ranges of a map, in a new list. */
int an_ranges_of_map(an_ranges *out, const dch_map *m);

/** The ownership ranges of a ring, in a new list. */
int an_ranges_of_ring(an_ranges *out, const dch_ring *r);

/** A new list holding a copy of v[0 .. n-1]. */
int an_ranges_copy(an_ranges *out, const dch_range *v, size_t n);

/** Free a list and empty it; an empty list is a no-op. */
void an_ranges_free(an_ranges *rs);

/**
 * Renumber owners in place: owner o < limit becomes to[o]; DCH_NODE_NONE
 * stays. Adjacent ranges are not merged (nothing here requires it).
 *
 * @return DCH_OK, or DCH_EINVAL (an owner at or above limit; the list is
 *         then unchanged).
 */
int an_ranges_renumber(an_ranges *rs, const uint32_t *to, uint32_t limit);

/**
 * Each owner's share of the hash space: share[o] for o < limit (zero for
 * owners that own nothing). Unowned space counts for nobody.
 *
 * @return DCH_OK, DCH_EINVAL (an owner at or above limit), DCH_ENOMEM.
 */
int an_shares(const an_ranges *rs, uint32_t limit, double *share);

/** One owner's share of the hash space in a range list. */
double an_share_of(const an_ranges *rs, uint32_t owner);

/* ---- Balance ------------------------------------------------------------- */

/** How evenly the members of positive weight share the space. */
typedef struct an_balance {
    uint32_t members;   /* members of positive weight */
    double peak_to_avg; /* largest share / fair share (1.0 is perfect) */
    double min_to_avg;  /* smallest share / fair share */
    double cv;          /* coefficient of variation of share / fair share */
} an_balance;

/**
 * Balance of shares against weights: a member's fair share is its weight over
 * the sum of weights, and each member of positive weight contributes the
 * ratio share / fair share. With no member of positive weight every field is
 * zero.
 */
an_balance an_balance_of(const double *share, const uint32_t *weight,
                         uint32_t limit);

/* ---- Migration ----------------------------------------------------------- */

/** The changes between two range lists (the exact migration plan). */
typedef struct an_changes {
    dch_range_change *v;
    size_t n;
    size_t cap;
} an_changes;

/**
 * The changes from `before` to `after`, through dch_range_diff. *out must be
 * empty ({0}) or a previous result, which is replaced.
 *
 * @return DCH_OK, DCH_EINVAL (a list that is not well formed), DCH_ENOMEM.
 */
int an_changes_diff(an_changes *out, const an_ranges *before,
                    const an_ranges *after);

/**
 * Append one change in ascending order, keeping the list a diff's: a change
 * with from == to is dropped, and one that touches the last and has its
 * (from, to) pair extends it.
 *
 * @return DCH_OK, DCH_ENOMEM (the list is then unchanged).
 */
int an_changes_add(an_changes *c, const dch_range_change *ch);

/** Free a change list and empty it. */
void an_changes_free(an_changes *c);

/**
 * What one membership change moved, with `subject` the member whose
 * membership or weight changed (the joiner, the leaver, the reweighted).
 */
typedef struct an_moves {
    double moved;        /* share of the hash space whose owner changed */
    double moved_other;  /* part of it with neither old nor new owner the
                            subject: moves between bystanders */
    uint32_t donors;     /* distinct old owners (not NONE) that lost space */
    uint32_t receivers;  /* distinct new owners (not NONE) that gained space */
    double max_donation; /* most space one old owner lost */
    double max_receipt;  /* most space one new owner gained */
} an_moves;

/**
 * Summarise a change list. Owners (other than DCH_NODE_NONE) must be below
 * limit.
 *
 * @return DCH_OK, DCH_EINVAL (an owner at or above limit), DCH_ENOMEM.
 */
int an_moves_of(const an_changes *c, uint32_t limit, uint32_t subject,
                an_moves *out);

/* ---- Sampled keys -------------------------------------------------------- */

/**
 * n sample keys "key-0", "key-1", ... hashed with SipHash-2-4 under
 * hash_key, sorted ascending, in a new array (free with free()).
 */
int an_keys_sorted(uint64_t **out, size_t n, const uint8_t hash_key[16]);

/** What the lookups of sampled keys say about one change. */
typedef struct an_key_moves {
    size_t keys;        /* keys checked */
    size_t moved;       /* keys whose looked-up owner changed */
    size_t moved_other; /* of those, neither owner is the subject */
    size_t mismatched;  /* keys where the lookups and the change list
                           disagree about the move (0 when they agree) */
} an_key_moves;

/**
 * Check sampled keys against a change list: key i has hash[i] (ascending),
 * looked-up owner before[i] before the change and after[i] after it. A key
 * matches when it lies in a change with from = before[i] and to = after[i],
 * or in no change and before[i] = after[i]. O(n + changes).
 */
an_key_moves an_key_moves_check(const uint64_t *hash, const uint32_t *before,
                                const uint32_t *after, size_t n,
                                const an_changes *c, uint32_t subject);

/**
 * How far a sampled fraction lies from the exact one, in standard errors of
 * a binomial sample of n keys: (hits/n - p) / sqrt(p (1 - p) / n). When p is
 * 0 or 1 the sample cannot vary: 0 if it agrees exactly, else +-INFINITY.
 */
double an_binomial_z(double p, size_t hits, size_t n);

/* ---- Karger's spread and load --------------------------------------------- */

/** Spread and load over a set of client views. */
typedef struct an_spread_load {
    double spread_max;  /* most distinct owners one hash (key) is sent to */
    double spread_mean; /* mean over hashes (keys) of that count */
    double load_max;    /* most hash space (keys) one owner receives from any
                           view, over the fair share 1/nodes */
} an_spread_load;

/**
 * Exact spread and load over `nviews` range lists whose owners are all
 * renumbered to 0 .. nodes-1 (DCH_NODE_NONE counts as nobody).
 *
 * @return DCH_OK, DCH_EINVAL (no views, nodes 0, an owner out of range, or a
 *         list that is not well formed), DCH_ENOMEM.
 */
int an_spread_load_exact(const an_ranges *views, size_t nviews, uint32_t nodes,
                         an_spread_load *out);

/** Spread and load counted over sampled keys, one key at a time. */
typedef struct an_key_spread {
    uint32_t nodes;
    size_t keys;
    size_t spread_max;
    uint64_t spread_sum;
    uint64_t *load; /* nodes counters: keys some view sends to the node */
} an_key_spread;

/** Start counting over nodes 0 .. nodes-1. @return DCH_OK, DCH_EINVAL, DCH_ENOMEM. */
int an_key_spread_init(an_key_spread *ks, uint32_t nodes);

/**
 * Count one key, which the views send to owners[0 .. nviews-1] (numbers below
 * nodes, or DCH_NODE_NONE). O(nviews^2).
 */
void an_key_spread_add(an_key_spread *ks, const uint32_t *owners,
                       size_t nviews);

/** The counts so far as spread and load (load relative to keys / nodes). */
an_spread_load an_key_spread_result(const an_key_spread *ks);

/** Free the counters. */
void an_key_spread_free(an_key_spread *ks);

/* ---- Reference sequences -------------------------------------------------- */

/** 1/2 + 1/3 + ... + 1/n: the least total a sequence of joins from one node to
 *  n nodes can move, with every join moving exactly 1/N. 0 for n < 2. */
double an_harmonic_migration(uint32_t n);

/** 1 / 2^ceil(log2 n): what the n-th node moves on a plain ring whose joins
 *  each halve a largest arc (the DCH description's 1/2, 1/4, 1/4, 1/8 ...). */
double an_halving_step(uint32_t n);

/** Sum of an_halving_step(k) for k = 2 .. n. 0 for n < 2. */
double an_halving_migration(uint32_t n);

/* ---- A scenario's seeded choices ---------------------------------------------- */

/** The width that keeps node-01 .. node-<max> in numeric order by name. */
int an_name_width(uint32_t max);

/** Member i's name: "node-" and i zero-padded to `width` digits. */
void an_node_name(char *buf, size_t n, int width, uint32_t i);

/**
 * The inverse of an_node_name: i - 1 for "node-<i>" (i >= 1, digits only),
 * else DCH_NODE_NONE. So node-01 is 0 in every numbering built from it.
 */
uint32_t an_node_number(const char *name);

/**
 * The cluster's SipHash key of a run with this seed: two values of a stream
 * of its own, little-endian. Another seed places ring points elsewhere, so
 * every program that claims to measure "the same scenario" derives its key
 * here.
 */
void an_hash_key_of_seed(uint64_t seed, uint8_t key[16]);

/**
 * Client views for spread and load: views x nodes flags in a new array (free
 * with free()), view v seeing node g when out[v * nodes + g] is true. Each
 * node is seen with probability 1/2 and every view sees at least one; the
 * draw is a pure function of (seed, views, nodes). NULL when out of memory
 * or when views or nodes is 0.
 */
bool *an_views_of_seed(uint64_t seed, uint32_t views, uint32_t nodes);

#endif /* DCH_ANALYSIS_METRICS_H */
