/* SPDX-License-Identifier: MIT */
/*
 * check_steps ORIG TARGET K STEP... : the oracle for a rollout's steps,
 * independent of the staging code. Exit 0 when all of these hold, 1 with
 * the first failure otherwise:
 *   - step j has epoch ORIG + j, except the last: max(TARGET, ORIG + n);
 *   - steps 1 .. n-1 are in transition towards TARGET's fingerprint, step j
 *     of n; the last step is settled;
 *   - between consecutive maps (ORIG, step 1, ..., step n) a slot changes
 *     owner only if ORIG and TARGET give it different owners, and then
 *     straight from its ORIG owner to its TARGET owner (by name);
 *   - no member gives, nor receives, more than K slots in one step;
 *   - the last step routes like TARGET (fingerprint) and, when TARGET's
 *     epoch is at least ORIG + n, is TARGET byte for byte.
 */
#include "dch/dch.h"
#include "support.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *what, int step)
{
    fprintf(stderr, "check_steps: step %d: %s\n", step, what);
    return 1;
}

static const char *owner(const dch_map *m, uint32_t slot)
{
    const uint32_t id = dch_map_slot_owner(m, slot);
    return id == DCH_NODE_NONE ? "" : dch_map_node_name(m, id);
}

/* Per-member counts of one step, by name; a small map is enough. */
typedef struct tally {
    char name[DCH_NAME_MAX + 1];
    uint32_t out, in;
} tally;

static tally *find_tally(tally *t, size_t *n, const char *name)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp(t[i].name, name) == 0)
            return &t[i];
    snprintf(t[*n].name, sizeof t[*n].name, "%s", name);
    t[*n].out = t[*n].in = 0;
    return &t[(*n)++];
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: check_steps ORIG TARGET K STEP...\n");
        return 2;
    }
    dch_map *orig, *target;
    if (dch_map_load_file(&orig, argv[1]) != DCH_OK ||
        dch_map_load_file(&target, argv[2]) != DCH_OK)
        return fail("cannot load ORIG or TARGET", 0);
    const uint32_t k = (uint32_t)strtoul(argv[3], NULL, 10);
    const int n = argc - 4;
    const uint32_t P = dch_map_slot_count(orig);
    tally *t = calloc(2u * DCH_MAP_MAX_NODES + 2u, sizeof *t);
    if (t == NULL)
        return fail("out of memory", 0);
    const dch_map *prev = orig;
    dch_map *steps[4096];
    if (n > 4096)
        return fail("too many steps", 0);
    for (int j = 1; j <= n; j++) {
        dch_map *m;
        if (dch_map_load_file(&m, argv[3 + j]) != DCH_OK)
            return fail("cannot load the step map", j);
        steps[j - 1] = m;
        uint64_t want = dch_map_epoch(orig) + (uint64_t)j;
        if (j == n && dch_map_epoch(target) > want)
            want = dch_map_epoch(target);
        if (dch_map_epoch(m) != want)
            return fail("wrong epoch", j);
        dch_map_transition tr;
        const int moving = dch_map_in_transition(m, &tr);
        if (j < n && (!moving || tr.step != (uint32_t)j || tr.steps != (uint32_t)n ||
                      tr.target_fingerprint != dch_map_fingerprint(target)))
            return fail("not in transition as step j of n towards TARGET", j);
        if (j == n && moving)
            return fail("the last step is still in transition", j);
        size_t used = 0;
        for (uint32_t s = 0; s < P; s++) {
            const char *a = owner(prev, s), *b = owner(m, s);
            if (strcmp(a, b) == 0)
                continue;
            if (strcmp(a, owner(orig, s)) != 0 || strcmp(b, owner(target, s)) != 0)
                return fail("a slot moves off the plan", j);
            tally *ta = find_tally(t, &used, a);
            ta->out++;
            tally *tb = find_tally(t, &used, b);
            tb->in++;
        }
        for (size_t i = 0; i < used; i++)
            if (t[i].out > k || t[i].in > k) {
                fprintf(stderr, "check_steps: step %d: %s gives %" PRIu32 ", receives %" PRIu32
                        " (K = %" PRIu32 ")\n", j, t[i].name, t[i].out, t[i].in, k);
                return 1;
            }
        prev = m;
    }
    if (dch_map_fingerprint(prev) != dch_map_fingerprint(target))
        return fail("the last step does not route like TARGET", n);
    if (dch_map_epoch(target) >= dch_map_epoch(orig) + (uint64_t)n) {
        if (!same_map_bytes(prev, target))
            return fail("the last step is not TARGET byte for byte", n);
    }
    for (int j = 0; j < n; j++)
        dch_map_free(steps[j]);
    dch_map_free(orig);
    dch_map_free(target);
    free(t);
    printf("check_steps: %d steps, each within K = %" PRIu32 ", only planned slots, final = target\n",
           n, k);
    return 0;
}
