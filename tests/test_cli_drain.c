/* SPDX-License-Identifier: MIT */
/*
 * dchctl drain and undrain, and the commands that read a map with drains
 * (show, diff, plan), run as an operator would. Every file the tool writes
 * is checked against the library: a map built by the same calls
 * (dch_map_drain, dch_map_undrain, ...) must have the same fingerprint and
 * epoch, and every plan's counts are recounted slot by slot from the two
 * maps' routing (slot_owner, slot_replicas, by name). Refused commands must
 * leave the file byte for byte.
 *
 * The tool is DCH_TOOL when set, else the one this build tree built.
 */
#define _POSIX_C_SOURCE 200809L

#include <criterion/criterion.h>

#include "cli_maps.h"
#include "dch/dch.h"
#include "support.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TestSuite(cli_drain, .init = tool_fixture_init, .fini = tool_fixture_fini);

typedef tool_result result;

static const char *owner_name(const dch_map *m, uint32_t slot)
{
    const uint32_t id = dch_map_slot_owner(m, slot);
    return id == DCH_NODE_NONE ? NULL : dch_map_node_name(m, id);
}

static int same_name(const char *a, const char *b)
{
    return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* Slots whose primary differs by name, and of those the promotions (the
 * new primary held a copy in a), counted slot by slot: the oracle of the
 * plan's moved_slots and promoted_slots. */
static void count_moves(const dch_map *a, const dch_map *b, unsigned long long *moved,
                        unsigned long long *promoted)
{
    *moved = *promoted = 0;
    for (uint32_t s = 0; s < dch_map_slot_count(a); s++) {
        const char *x = owner_name(a, s), *y = owner_name(b, s);
        if (same_name(x, y))
            continue;
        (*moved)++;
        uint32_t ids[DCH_MAP_MAX_REPLICAS];
        size_t n = dch_map_slot_replicas(a, s, ids, DCH_MAP_MAX_REPLICAS);
        n = n < DCH_MAP_MAX_REPLICAS ? n : DCH_MAP_MAX_REPLICAS;
        for (size_t i = 0; i < n && n > 1 && y != NULL; i++)
            if (strcmp(dch_map_node_name(a, ids[i]), y) == 0) {
                (*promoted)++;
                break;
            }
    }
}

/* Copies (slot, member name) that b holds and a does not: created copies. */
static unsigned long long count_created(const dch_map *a, const dch_map *b)
{
    unsigned long long created = 0;
    for (uint32_t s = 0; s < dch_map_slot_count(b); s++) {
        uint32_t ia[DCH_MAP_MAX_REPLICAS], ib[DCH_MAP_MAX_REPLICAS];
        const size_t na = dch_map_slot_replicas(a, s, ia, DCH_MAP_MAX_REPLICAS);
        const size_t nb = dch_map_slot_replicas(b, s, ib, DCH_MAP_MAX_REPLICAS);
        for (size_t j = 0; j < nb && j < DCH_MAP_MAX_REPLICAS; j++) {
            int held = 0;
            for (size_t i = 0; i < na && i < DCH_MAP_MAX_REPLICAS && !held; i++)
                held = strcmp(dch_map_node_name(a, ia[i]), dch_map_node_name(b, ib[j])) == 0;
            created += !held;
        }
    }
    return created;
}

/* The file's map must be m: the same fingerprint and epoch, and the same
 * drains in the same order with the same modes. */
static void assert_file_is(const char *path, const dch_map *m, const char *what)
{
    dch_map *f = map_load_path(path);
    cr_assert_eq(dch_map_fingerprint(f), dch_map_fingerprint(m), "%s: fingerprint", what);
    cr_assert_eq(dch_map_epoch(f), dch_map_epoch(m), "%s: epoch", what);
    uint32_t fi[64], fm[64], mi[64], mm[64];
    const size_t nf = dch_map_drains(f, fi, fm, 64), nm = dch_map_drains(m, mi, mm, 64);
    cr_assert_eq(nf, nm, "%s: %zu drains, not %zu", what, nf, nm);
    for (size_t i = 0; i < nf && i < 64; i++) {
        cr_assert_str_eq(dch_map_node_name(f, fi[i]), dch_map_node_name(m, mi[i]), "%s", what);
        cr_assert_eq(fm[i], mm[i], "%s: mode of drain %zu", what, i);
    }
    dch_map_free(f);
}

/* The members of the seeded histories: a zone each of three, weights 1..3. */
static char *const NAMES[] = {"a", "b", "c", "d", "e", "f"};
#define NNAMES 6

/*
 * Seeded histories of drains (full and primary), undrains, removals,
 * joins and weights at R = 1, 2 and 3, each call made by the tool on a
 * file and by the library on its own map: after each, the file is the
 * library's map, the JSON report's drained and was_drained are the
 * member's modes, and its moved_slots, promoted_slots and copies_created
 * are what the two maps' routing gives slot by slot.
 */
Test(cli_drain, every_call_matches_the_library)
{
    const uint64_t seed = test_seed(0x647261696e);
    uint64_t rng = seed;
    const unsigned calls = test_scaled(40, 12);
    for (uint32_t R = 1; R <= 3; R++) {
        char map[256], rs[4];
        tool_path(map, sizeof map, "h.dchmap");
        snprintf(rs, sizeof rs, "%u", R);
        TOOL_EXPECT(0, "init", map, "--force", "--units", "32", "--slots", "16", "--replicas", rs);
        dch_map *m = map_with_copies(32, 16, R);
        for (unsigned i = 0; i < NNAMES; i++) {
            char w[4], z[4];
            snprintf(w, sizeof w, "%u", 1 + i % 3);
            snprintf(z, sizeof z, "z%u", i % 3);
            TOOL_EXPECT(0, "add", map, NAMES[i], "--weight", w, "--zone", z, "--force");
            cr_assert_eq(dch_map_add_node_in_zone(m, NAMES[i], z, 1 + i % 3, NULL), DCH_OK);
        }
        for (unsigned c = 0; c < calls; c++) {
            char *name = NAMES[rng_below(&rng, NNAMES)];
            uint32_t id;
            const int member = dch_map_find_node(m, name, &id) == DCH_OK;
            const uint32_t op = rng_below(&rng, 10);
            dch_map *before = map_clone_of(m);
            const uint32_t was = member ? dch_map_node_drained(m, id) : 0;
            result r;
            if (!member) { /* joins again */
                TOOL_EXPECT(0, "add", map, name, "--force");
                cr_assert_eq(dch_map_add_node(m, name, 1, NULL), DCH_OK);
                dch_map_free(before);
                continue;
            }
            if (op < 4) {
                const int primary = op < 2;
                r = primary ? TOOL_RUN("drain", map, name, "--primary", "--force", "--json")
                            : TOOL_RUN("drain", map, name, "--force", "--json");
                cr_assert_eq(dch_map_drain(m, id, primary ? DCH_DRAIN_PRIMARY : DCH_DRAIN_FULL),
                             DCH_OK);
            } else if (op < 8) {
                r = TOOL_RUN("undrain", map, name, "--force", "--json");
                if (was != 0)
                    cr_assert_eq(dch_map_undrain(m, id), DCH_OK);
            } else if (op == 8) {
                r = TOOL_RUN("remove", map, name, "--force", "--json");
                cr_assert_eq(dch_map_remove_node(m, id), DCH_OK);
            } else {
                r = TOOL_RUN("weight", map, name, "2", "--force", "--json");
                cr_assert_eq(dch_map_set_weight(m, id, 2), DCH_OK);
            }
            cr_assert_eq(r.status, 0, "seed %" PRIu64 " R %u call %u: %s", seed, R, c, r.err);
            char what[96];
            snprintf(what, sizeof what, "seed %" PRIu64 " R %u call %u (op %u, %s)", seed, R, c,
                     op, name);
            assert_file_is(map, m, what);
            unsigned long long moved, promoted;
            count_moves(before, m, &moved, &promoted);
            cr_assert_eq(json_number(r.out, "moved_slots"), moved, "%s: %s", what, r.out);
            cr_assert_eq(json_number(r.out, "promoted_slots"), promoted, "%s", what);
            cr_assert_eq(json_number(r.out, "copies_created"), count_created(before, m), "%s",
                         what);
            if (op < 8) {
                char want[64];
                const char *now = member && dch_map_find_node(m, name, &id) == DCH_OK
                                      ? (dch_map_node_drained(m, id) == DCH_DRAIN_FULL ? "\"full\""
                                         : dch_map_node_drained(m, id) ? "\"primary\""
                                                                       : "null")
                                      : "null";
                snprintf(want, sizeof want, "\"drained\": %s", now);
                cr_assert(strstr(r.out, want) != NULL, "%s: want %s in %s", what, want, r.out);
                snprintf(want, sizeof want, "\"was_drained\": %s",
                         was == DCH_DRAIN_FULL ? "\"full\"" : was ? "\"primary\"" : "null");
                cr_assert(strstr(r.out, want) != NULL, "%s: want %s in %s", what, want, r.out);
            }
            tool_result_free(&r);
            dch_map_free(before);
        }
        dch_map_free(m);
    }
}

/* A map of six members of weight 1 (R copies) in the_tool.dir/name. */
static void six_members(char *map, size_t n, const char *name, char *replicas)
{
    tool_path(map, n, name);
    TOOL_EXPECT(0, "init", map, "--units", "64", "--slots", "16", "--replicas", replicas);
    for (unsigned i = 0; i < NNAMES; i++)
        TOOL_EXPECT(0, "add", map, NAMES[i], "--force");
}

/*
 * A primary drain with two copies moves no data: every slot whose primary
 * changes is a promotion and no copy is created; the undrain that follows
 * routes every key as before (the fingerprint), and diff between the two
 * ends is empty. With one copy, --primary is a full drain and says so.
 */
Test(cli_drain, a_primary_drain_moves_no_data_and_undrain_returns_exactly)
{
    char map[256], orig[256];
    six_members(map, sizeof map, "p.dchmap", "2");
    tool_path(orig, sizeof orig, "orig.dchmap");
    TOOL_EXPECT(0, "drain", map, "c", "--out", orig, "--dry-run"); /* writes nothing */
    cr_assert(access(orig, F_OK) != 0, "--dry-run wrote --out");
    dch_map *m0 = map_load_path(map);
    result r = TOOL_RUN("drain", map, "c", "--primary", "--json");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_eq(json_number(r.out, "copies_created"), 0, "%s", r.out);
    cr_assert_eq(json_number(r.out, "copies_moved"), 0, "%s", r.out);
    const unsigned long long moved = json_number(r.out, "moved_slots");
    cr_assert_gt(moved, 0, "c was the primary of no slot?");
    cr_assert_eq(json_number(r.out, "promoted_slots"), moved, "%s", r.out);
    tool_result_free(&r);
    dch_map *m1 = map_load_path(map);
    cr_assert_eq(dch_map_node_copies(m1, 2), dch_map_node_copies(m0, 2), "c kept its copies");
    cr_assert_eq(dch_map_node_slots(m1, 2), 0, "c is the primary of nothing");
    TOOL_EXPECT(0, "undrain", map, "c");
    dch_map *m2 = map_load_path(map);
    cr_assert_eq(dch_map_fingerprint(m2), dch_map_fingerprint(m0), "undrain returns exactly");
    cr_assert_gt(dch_map_epoch(m2), dch_map_epoch(m1), "undrain raises the epoch");
    cr_assert_gt(dch_map_epoch(m1), dch_map_epoch(m0), "drain raises the epoch");
    dch_map_free(m0);
    dch_map_free(m1);
    dch_map_free(m2);

    char one[256];
    six_members(one, sizeof one, "one.dchmap", "1");
    r = TOOL_RUN("drain", one, "c", "--primary");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "drained c (primary; with one copy a slot it acts as a full drain)"),
              "%s", r.out);
    tool_result_free(&r);
}

/*
 * Drains in force and what changes nothing: a drain repeated in its mode
 * and an undrain of a member that is not drained exit 0 with a note and
 * leave the routing and the epoch as they were; a drain in the other mode
 * replaces the mode. A removal of the member drained last (full, no call
 * since) moves nothing and says that it ends the drain.
 */
Test(cli_drain, repeats_notes_and_the_removal_after_a_drain)
{
    char map[256];
    six_members(map, sizeof map, "n.dchmap", "2");
    TOOL_EXPECT(0, "drain", map, "b");
    dch_map *m0 = map_load_path(map);
    result r = TOOL_RUN("drain", map, "b");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "note: b was drained (full) already: nothing changed"), "%s", r.out);
    tool_result_free(&r);
    r = TOOL_RUN("undrain", map, "a");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "note: a was not drained: nothing changed"), "%s", r.out);
    tool_result_free(&r);
    assert_file_is(map, m0, "after two changes that change nothing");
    dch_map_free(m0);

    r = TOOL_RUN("remove", map, "b", "--json");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_eq(json_number(r.out, "moved_slots"), 0, "removing the drained b moved: %s", r.out);
    cr_assert_eq(json_number(r.out, "copies_created"), 0, "%s", r.out);
    tool_result_free(&r);

    TOOL_EXPECT(0, "drain", map, "c", "--primary");
    r = TOOL_RUN("drain", map, "c");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "note: c was drained (primary): the full drain replaces it"), "%s",
              r.out);
    tool_result_free(&r);
    r = TOOL_RUN("weight", map, "c", "3", "--force");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "note: c was drained (full): its new weight ends the drain"), "%s",
              r.out);
    tool_result_free(&r);
    dch_map *m = map_load_path(map);
    uint32_t id;
    cr_assert_eq(dch_map_find_node(m, "c", &id), DCH_OK);
    cr_assert_eq(dch_map_node_drained(m, id), 0);
    dch_map_free(m);
}

/* Refusals: usage errors (exit 2) and runtime errors (exit 1) leave the
 * file byte for byte. */
Test(cli_drain, refusals_change_nothing)
{
    char map[256], out[256];
    six_members(map, sizeof map, "r.dchmap", "2");
    tool_path(out, sizeof out, "out.dchmap");
    TOOL_EXPECT(0, "drain", map, "a");
    size_t len0;
    char *bytes0 = file_bytes(map, &len0);
    TOOL_EXPECT_ERR(1, "zz", "drain", map, "zz");
    TOOL_EXPECT_ERR(1, "zz", "undrain", map, "zz");
    TOOL_EXPECT_ERR(2, "unknown option --primary", "undrain", map, "a", "--primary");
    TOOL_EXPECT_ERR(2, "did you mean --primary", "drain", map, "b", "--primry");
    TOOL_EXPECT_ERR(2, "missing arguments", "drain", map);
    TOOL_EXPECT_ERR(2, "too many arguments", "undrain", map, "a", "b");
    TOOL_EXPECT_ERR(2, "control character", "drain", map, "a\tb");
    TOOL_EXPECT_ERR(2, "given twice", "drain", map, "b", "--primary", "--primary");
    TOOL_EXPECT_ERR(2, "the map first", "drain", "missing.dchmap", map);
    TOOL_EXPECT(0, "drain", map, "b", "--dry-run");
    TOOL_EXPECT(0, "undrain", map, "a", "--out", out);
    cr_assert(file_holds(map, bytes0, len0), "a refused drain or undrain changed the map");
    dch_map *o = map_load_path(out);
    uint32_t ids[8], modes[8];
    cr_assert_eq(dch_map_drains(o, ids, modes, 8), 0, "--out holds the undrained map");
    dch_map_free(o);
    free(bytes0);

    /* The --force guard: a full drain of the member of weight 3 beside one
     * of weight 1 moves 3/4 of the map. */
    char two[256];
    tool_path(two, sizeof two, "two.dchmap");
    TOOL_EXPECT(0, "init", two, "--units", "16", "--slots", "16");
    TOOL_EXPECT(0, "add", two, "x");
    TOOL_EXPECT(0, "add", two, "y", "--weight", "3", "--force");
    char *b2 = file_bytes(two, &len0);
    TOOL_EXPECT_ERR(1, "--force to make it anyway", "drain", two, "y");
    cr_assert(file_holds(two, b2, len0), "a refused drain changed the map");
    TOOL_EXPECT(0, "drain", two, "y", "--force");
    free(b2);
}

/*
 * show: a drains line in the order drained, a drained column (order and
 * mode, '-' for the others), and in JSON drains[] and each member's
 * drained and drain_order; a drained member's ideal is 0, so the balance
 * line measures the others against the weight that is not drained. Slots
 * and copies are the routing's.
 */
Test(cli_drain, show_marks_the_drained_members_in_order)
{
    char map[256];
    six_members(map, sizeof map, "s.dchmap", "2");
    TOOL_EXPECT(0, "drain", map, "e", "--primary");
    TOOL_EXPECT(0, "drain", map, "b");
    result r = TOOL_RUN("show", map);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "drains:        e (primary), b (full), in the order drained\n"), "%s",
              r.out);
    cr_assert(strstr(r.out, " drained\n"), "no drained column: %s", r.out);
    dch_map *m = map_load_path(map);
    for (uint32_t id = 0; id < NNAMES; id++) {
        /* Each row: "    id name ... copies zone drain". */
        char head[32];
        snprintf(head, sizeof head, "\n%6u %-16s", id, NAMES[id]);
        const char *row = strstr(r.out, head);
        cr_assert_not_null(row, "no row for %s: %s", NAMES[id], r.out);
        const char *end = strchr(row + 1, '\n');
        const char *want = id == 4 ? " 1:primary" : id == 1 ? " 2:full" : " -";
        cr_assert(end - row > (long)strlen(want) &&
                      strncmp(end - strlen(want), want, strlen(want)) == 0,
                  "row of %s: %.*s", NAMES[id], (int)(end - row), row);
        char slots[32];
        snprintf(slots, sizeof slots, " %9u ", dch_map_node_slots(m, id));
        cr_assert(strstr(row, slots) != NULL && strstr(row, slots) < end, "%s's slots",
                  NAMES[id]);
    }
    cr_assert_eq(dch_map_node_slots(m, 1), 0);
    cr_assert_eq(dch_map_node_slots(m, 4), 0);
    tool_result_free(&r);

    r = TOOL_RUN("show", map, "--json");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "\"drains\": [{\"name\": \"e\", \"mode\": \"primary\"}, "
                            "{\"name\": \"b\", \"mode\": \"full\"}]"),
              "%s", r.out);
    cr_assert(strstr(r.out, "\"name\": \"e\", \"weight\": 1") != NULL, "%s", r.out);
    cr_assert(strstr(r.out, "\"drained\": \"primary\", \"drain_order\": 1}"), "%s", r.out);
    cr_assert(strstr(r.out, "\"drained\": \"full\", \"drain_order\": 2}"), "%s", r.out);
    cr_assert(strstr(r.out, "\"drained\": null}"), "%s", r.out);
    /* Four members share the primaries, each near 1/4 of them: a drained
     * member counted against its weight would be a whole 1/6 below. */
    const char *dev = strstr(r.out, "\"max_deviation_slots\": ");
    cr_assert_not_null(dev);
    const double worst = strtod(dev + strlen("\"max_deviation_slots\": "), NULL);
    cr_assert_lt(worst, (double)dch_map_slot_count(m) / 6 * 3 / 4,
                 "a drained member reads as imbalance: %g", worst);
    tool_result_free(&r);
    dch_map_free(m);

    /* No drain: no drains line and no column. */
    char plain[256];
    six_members(plain, sizeof plain, "plain.dchmap", "1");
    r = TOOL_RUN("show", plain);
    cr_assert(strstr(r.out, "drain") == NULL, "%s", r.out);
    tool_result_free(&r);
}

/* Each step file of a plan routes every slot as OLD or as NEW does, and the
 * last one as NEW (fingerprint). */
static void check_steps(const char *dir, const dch_map *old, const dch_map *new, unsigned n)
{
    for (unsigned i = 1; i <= n; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/step-%04u.dchmap", dir, i);
        dch_map *st = map_load_path(path);
        for (uint32_t s = 0; s < dch_map_slot_count(st); s++) {
            const char *x = owner_name(st, s);
            cr_assert(same_name(x, owner_name(old, s)) || same_name(x, owner_name(new, s)),
                      "step %u slot %u: %s is neither OLD's nor NEW's owner", i, s, x);
        }
        if (i == n)
            cr_assert_eq(dch_map_fingerprint(st), dch_map_fingerprint(new), "the last step");
        dch_map_free(st);
    }
}

/*
 * diff and plan compare maps as they route: diff OLD DRAINED counts exactly
 * the slots the drain moves (slot by slot), the plan stages it in steps of
 * at most K that each route every slot as one end does and end on the
 * drained map; the undrain stages back the same way.
 */
Test(cli_drain, diff_and_plan_work_across_drains)
{
    char map[256], drained[256], back[256], d1[256], d2[256];
    six_members(map, sizeof map, "d.dchmap", "1");
    tool_path(drained, sizeof drained, "drained.dchmap");
    tool_path(back, sizeof back, "back.dchmap");
    tool_path(d1, sizeof d1, "steps1");
    tool_path(d2, sizeof d2, "steps2");
    TOOL_EXPECT(0, "drain", map, "d", "--out", drained);
    TOOL_EXPECT(0, "undrain", drained, "d", "--out", back);
    dch_map *m0 = map_load_path(map), *m1 = map_load_path(drained), *m2 = map_load_path(back);
    unsigned long long moved, promoted;
    count_moves(m0, m1, &moved, &promoted);
    cr_assert_eq(moved, dch_map_node_slots(m0, 3), "a full drain moves the member's slots");
    result r = TOOL_RUN("diff", map, drained, "--json");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_eq(json_number(r.out, "moved_slots"), moved, "%s", r.out);
    tool_result_free(&r);
    r = TOOL_RUN("diff", map, back);
    cr_assert(strstr(r.out, "plan: 0 of 1024 slots move"), "undrain returns: %s", r.out);
    tool_result_free(&r);

    char *K = "40";
    r = TOOL_RUN("plan", map, drained, "--max-slots", K, "--write-dir", d1, "--json");
    cr_assert_eq(r.status, 0, "%s", r.err);
    const unsigned n1 = (unsigned)json_number(r.out, "step_count");
    cr_assert_eq(n1, (moved + 39) / 40, "one member in every move: ceil(D/K) steps");
    tool_result_free(&r);
    check_steps(d1, m0, m1, n1);
    r = TOOL_RUN("plan", drained, back, "--max-slots", K, "--write-dir", d2, "--json");
    cr_assert_eq(r.status, 0, "%s", r.err);
    const unsigned n2 = (unsigned)json_number(r.out, "step_count");
    tool_result_free(&r);
    check_steps(d2, m1, m2, n2);
    dch_map_free(m0);
    dch_map_free(m1);
    dch_map_free(m2);
}
