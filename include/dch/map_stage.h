/* SPDX-License-Identifier: MIT */
/*
 * Staged changes: going from one map to another in bounded steps.
 *
 * A change of membership or weight moves a share of the data all at once:
 * adding a ninth member to eight moves 1/9 of every key. A cluster that must
 * keep serving moves it in steps instead. Given the map a cluster runs now
 * (OLD) and a target map derived from it (NEW: the same units, slots per
 * unit and hash key, a later epoch; typically a clone of OLD changed with
 * dch_map_add_node, dch_map_remove_node or dch_map_set_weight), the plan is
 * dch_map_diff(OLD, NEW): every slot whose owner's name differs. Staging cuts
 * that plan into steps 1 .. n, each a complete map that can be published,
 * saved and loaded like any other:
 *
 *   - each step moves at most K slots out of any member and at most K slots
 *     into any member (K = max_slots);
 *   - a slot moves only if the plan moves it, once, straight from its OLD
 *     owner to its NEW owner; so step i routes every slot either as OLD or
 *     as NEW does, and dch_map_diff(step i-1, step i) is exactly what step i
 *     migrates;
 *   - epochs increase by one per step: step i has OLD's epoch + i, except
 *     the last, which has the larger of NEW's epoch and OLD's epoch + n;
 *   - the last step is NEW itself: same members, ids, weights, zones,
 *     slot table and drains, so the same fingerprint, and the same bytes from dch_map_save
 *     whenever NEW's epoch is at least OLD's epoch + n (else only the
 *     epoch differs: a rollout of n steps needs n new epochs);
 *   - steps 1 .. n-1 are maps "in transition" (with no zones: they have
 *     one copy a slot, where zones change nothing): they record the target's
 *     fingerprint and their place (step i of n), dch_map_save writes them as
 *     format version 2 (map_file.h) and loading gives the record back;
 *     the last step is settled, like any map built by calls.
 *
 * Drains (map.h, "Drains") are changes like any other: the plan is
 * between the effective tables of OLD and NEW, steps 1 .. n-1 hold the
 * table the rounds reach as their base, with no drain, and the last step
 * has NEW's drains.
 *
 * Members of a step map: every member of NEW with NEW's id and weight, and
 * every member that leaves (in OLD, not in NEW, by name) with its OLD weight,
 * so a joiner exists from step 1 and a leaver until step n-1. A member whose
 * NEW weight is 0 keeps its OLD weight until step n-1 too, since a member of
 * weight 0 cannot own slots it has not handed over yet. A leaver keeps its
 * OLD id unless a member of NEW has it; then it takes the lowest id that no
 * member of NEW and no other leaver has (leavers in ascending OLD id). The
 * weight sum of a step map may therefore exceed both OLD's and NEW's.
 *
 * Order (the steps are a pure function of OLD, NEW and K): each step scans
 * the slots that still have to move in ascending slot index and takes a slot
 * when neither its from-member has given K slots nor its to-member received
 * K slots in this step; everything not taken waits for the next step. The
 * next step depends only on the current map, NEW and K, so staging from step
 * i gives the same steps i+1 .. n as staging from OLD did.
 *
 * Number of steps: with out(a) the slots the plan moves out of a and in(b)
 * the slots it moves into b, and D the largest of all of them,
 *   ceil(D / K) <= n <= max over planned moves a -> b of
 *                       ceil(out(a) / K) + ceil(in(b) / K) - 1
 *                  <= 2 * ceil(D / K) - 1,
 * and n = ceil(D / K) exactly when every planned move has one member in
 * common (one join, one leave, one weight change): docs/staging.md ("How
 * many steps", installed in share/doc/libdch) gives the proofs. A plan with
 * no moves (NEW differs from OLD only in members of weight 0, or only in
 * its epoch) has n = 1.
 *
 * Nobody: when OLD or NEW has no member of positive weight, every slot moves
 * from or to nobody, which no intermediate map can express (a map owns every
 * slot or none): n = 1 and the one step is NEW, whatever K is.
 *
 * Errors never change the inputs or *out. Allocation goes through the current
 * map's allocator, which the step maps inherit.
 */
#ifndef DCH_MAP_STAGE_H
#define DCH_MAP_STAGE_H

#include "common.h"
#include "map.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * What a map in transition records: the target it is heading for and its
 * place on the way. A settled map has no record.
 */
typedef struct dch_map_transition {
    /** dch_map_fingerprint of the target (the last step). */
    uint64_t target_fingerprint;
    /** This map's step, 1 .. steps - 1. */
    uint32_t step;
    /** n, the number of steps of the plan, at least 2. */
    uint32_t steps;
} dch_map_transition;

/**
 * Whether a map is in transition (a step map other than the last).
 *
 * A map made by dch_map_stage_next, or loaded from the bytes of one, is in
 * transition; any later change to it (dch_map_add_node, dch_map_remove_node,
 * dch_map_set_weight that changes something) makes it settled, as its epoch
 * no longer names that step. dch_map_clone copies the record.
 *
 * @param m       the map; NULL gives 0.
 * @param[out] tr the record when the map is in transition; may be NULL;
 *                untouched when the map is settled.
 * @return 1 in transition, 0 settled.
 */
DCH_API int dch_map_in_transition(const dch_map *m, dch_map_transition *tr);

/**
 * How many steps are left from `cur` to `target` with at most `max_slots`
 * moved into and out of any member per step: n for a settled cur (OLD), and
 * n - i for step i. O(P + N log N + moves * steps) at most, with N the
 * members; a plan whose moves all go into one member or all come out of one
 * (one join, leave or weight change) takes O(P + N log N + moves).
 *
 * @param cur       the current map: OLD (settled), or a step map heading
 *                  for `target`.
 * @param target    NEW: settled, same units, slots per unit and hash key as
 *                  cur, an epoch above cur's when cur is settled.
 * @param max_slots K, at least 1.
 * @param[out] steps_out  the steps left, at least 1; untouched on error.
 * @return DCH_OK; DCH_EINVAL (a NULL argument, max_slots 0, configs that
 *         differ, a map with more than one replica (staging moves single
 *         owners), a target in transition, a settled cur whose epoch is not
 *         below the target's, or a cur in transition towards another
 *         fingerprint); DCH_EFULL (the union of the two memberships passes
 *         DCH_MAP_MAX_NODES ids or a weight sum of UINT32_MAX, or an epoch
 *         would pass UINT64_MAX); DCH_ENOMEM.
 */
DCH_API int dch_map_stage_steps(const dch_map *cur, const dch_map *target,
                                uint32_t max_slots, uint32_t *steps_out);

/**
 * The next step from `cur` towards `target`.
 *
 * From a settled cur (OLD) this is step 1; from step i it is step i + 1.
 * The step is in transition (dch_map_in_transition) unless it is the last,
 * which is the target as described at the top of this header. Staging the
 * whole plan is a loop:
 *
 *     const dch_map *cur = old;  dch_map *next;
 *     do {
 *         rc = dch_map_stage_next(&next, cur, target, k);   // check rc
 *         publish(next);  migrate(dch_map_diff(cur, next));
 *         cur = next;     // free the previous step when done with it
 *     } while (dch_map_in_transition(next, NULL));
 *
 * The number n recorded in a step is counted with the max_slots of the call
 * that made it; calling with another K part-way changes the steps still to
 * come and the n they record, never the steps already made.
 *
 * @param[out] out  the step map, owned by the caller (dch_map_free), with
 *                  cur's allocator; untouched on error.
 * @param cur       as for dch_map_stage_steps.
 * @param target    as for dch_map_stage_steps.
 * @param max_slots K, at least 1.
 * @return DCH_OK; the errors of dch_map_stage_steps. Costs what
 *         dch_map_stage_steps does (it counts the steps left to record n),
 *         plus O(P) to build the step.
 */
DCH_API int dch_map_stage_next(dch_map **out, const dch_map *cur,
                               const dch_map *target, uint32_t max_slots);

#ifdef __cplusplus
}
#endif

#endif /* DCH_MAP_STAGE_H */
