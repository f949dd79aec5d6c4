/* SPDX-License-Identifier: MIT */
/*
 * The dchctl tool's guards and the words of its refusals: a change that
 * moves more than half of a map's data needs --force; limits are named with
 * the value that passes them; every number is read by one strict parser
 * and refused in one wording; a mistyped command or option gets the nearest
 * one; a map given after the name is pointed out; moves and promotions are
 * counted apart, as the library's copy-level diff says; and plan
 * --write-dir writes all of its steps or none.
 */
#define _POSIX_C_SOURCE 200809L

#include <criterion/criterion.h>

#include "dch/dch.h"
#include "support.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

TestSuite(cli_guards, .init = tool_fixture_init, .fini = tool_fixture_fini);

typedef tool_result result;


/* A 16 x 8 map at path with members of the given weights (n0, n1, ...),
 * `replicas` copies a slot, saved by the library. */
static void make_map(const char *path, uint32_t replicas, const uint32_t *w, size_t n)
{
    dch_map_config cfg = map_config(16, 8);
    cfg.replicas = replicas;
    dch_map *m;
    cr_assert_eq(dch_map_new(&m, &cfg), DCH_OK);
    map_add_members(m, "n", (unsigned)n, w, n);
    cr_assert_eq(dch_map_save_file(m, path), DCH_OK);
    dch_map_free(m);
}


/* ---- The --force guard ------------------------------------------------- */

Test(cli_guards, a_change_that_moves_most_of_the_data_needs_force)
{
    char map[256];
    tool_path(map, sizeof map, "m.dchmap");
    make_map(map, 1, (const uint32_t[]){1, 1}, 2);
    size_t len;
    char *orig = slurp(map, &len);

    result r = TOOL_RUN("add", map, "x", "--weight", "1000000000");
    cr_assert_eq(r.status, 1, "%s", r.err);
    cr_assert(strstr(r.err, "this change moves 128 of 128 slots (100.0%) of the map; --force to "
                            "make it anyway") != NULL,
              "%s", r.err);
    cr_assert_str_eq(r.out, "");
    tool_result_free(&r);
    cr_assert(file_holds(map, orig, len), "a refused change wrote the map");

    /* --dry-run shows the plan, and says it would need --force. */
    r = TOOL_RUN("add", map, "x", "--weight", "1000000000", "--dry-run");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "more than half: without --dry-run it needs --force") &&
                  strstr(r.out, "plan: 128 of 128 slots move (100.0000% of the map)"),
              "%s", r.out);
    tool_result_free(&r);
    r = TOOL_RUN("add", map, "x", "--weight", "1000000000", "--dry-run", "--json");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "\"needs_force\": true") != NULL, "%s", r.out);
    tool_result_free(&r);
    cr_assert(file_holds(map, orig, len), "a dry run wrote the map");

    /* Half of the data exactly is allowed: removing one of two equals. */
    r = TOOL_RUN("remove", map, "n1", "--dry-run", "--json");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "\"needs_force\": false") != NULL, "%s", r.out);
    tool_result_free(&r);

    TOOL_EXPECT(0, "add", map, "x", "--weight", "1000000000", "--force");
    cr_assert(!file_holds(map, orig, len), "--force did not make the change");
    free(orig);

    /* weight and remove are held to the same rule: x holds nearly all. */
    TOOL_EXPECT_ERR(1, "--force to make it anyway", "weight", map, "x", "0");
    TOOL_EXPECT(1, "remove", map, "x");
}

/* Building a map is no mistake: its first member takes every slot and its
 * second may take more than half. */
Test(cli_guards, the_first_two_members_need_no_force)
{
    char map[256];
    tool_path(map, sizeof map, "m.dchmap");
    make_map(map, 1, NULL, 0);
    TOOL_EXPECT(0, "add", map, "a");
    result r = TOOL_RUN("add", map, "b", "--weight", "3");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "96 of 128 slots move") != NULL, "%s", r.out);
    tool_result_free(&r);
    /* A member of weight 0 holds no data: a with b at weight 0 is one. */
    make_map(map, 1, (const uint32_t[]){1, 0}, 2);
    TOOL_EXPECT(0, "weight", map, "n1", "5");
    /* Now two of positive weight: draining the larger needs --force. */
    TOOL_EXPECT(1, "weight", map, "n1", "0");
}

/* With replicas the guard counts copies whose data moves. */
Test(cli_guards, with_replicas_the_guard_counts_copies)
{
    char map[256];
    tool_path(map, sizeof map, "r.dchmap");
    make_map(map, 2, (const uint32_t[]){1, 1, 1}, 3);
    result r = TOOL_RUN("add", map, "big", "--weight", "100");
    cr_assert_eq(r.status, 1, "%s", r.err);
    cr_assert(strstr(r.err, "this change moves the primary of ") &&
                  strstr(r.err, " of 128 slots (") && strstr(r.err, "to a member that held no copy; --force"),
              "%s", r.err);
    tool_result_free(&r);
    /* Without --force, -1 is no weight: a number has no sign. */
    TOOL_EXPECT_ERR(2, "-1: numbers take no sign", "weight", map, "n0", "-1");
    TOOL_EXPECT(0, "add", map, "small");
}

/* ---- Limits ------------------------------------------------------------ */

Test(cli_guards, a_limit_is_named_with_the_value_that_passes_it)
{
    char map[256];
    tool_path(map, sizeof map, "m.dchmap");
    make_map(map, 1, (const uint32_t[]){2, 1}, 2);
    result r = TOOL_RUN("weight", map, "n1", "4294967295");
    cr_assert_eq(r.status, 1);
    cr_assert(strstr(r.err, "the total weight would be 4294967297, above the limit of "
                            "4294967295") != NULL,
              "%s", r.err);
    tool_result_free(&r);
    r = TOOL_RUN("add", map, "x", "--weight", "4294967294", "--force");
    cr_assert_eq(r.status, 1);
    cr_assert(strstr(r.err, "the total weight would be 4294967297, above the limit") != NULL,
              "%s", r.err);
    tool_result_free(&r);
    char name[300];
    memset(name, 'x', 256);
    name[256] = '\0';
    TOOL_EXPECT_ERR(2, "a name has 1 to 255 bytes, not 256", "add", map, name);
    r = TOOL_RUN("add", map, "a", "--zone", "z\tz");
    cr_assert_eq(r.status, 2);
    cr_assert(strstr(r.err, "zone \"z\\x09z\" holds the control character 0x09 at byte 2") !=
                  NULL,
              "%s", r.err);
    tool_result_free(&r);
    r = TOOL_RUN("init", map, "--force", "--units", "65536", "--slots", "512");
    cr_assert_eq(r.status, 2);
    cr_assert(strstr(r.err, "65536 * 512 = 33554432 slots, above the limit of 16777216") != NULL,
              "%s", r.err);
    tool_result_free(&r);
}

/* ---- Numbers ----------------------------------------------------------- */

/* Every number goes through one parser: the whole string, digits only. */
Test(cli_guards, numbers_are_read_strictly_and_refused_in_one_wording)
{
    char map[256], want[256];
    tool_path(map, sizeof map, "m.dchmap");
    make_map(map, 1, (const uint32_t[]){1}, 1);
    const char *bad[] = {"",   "-1",   "+1",  "1.5",   "1e3",         " 1",
                         "1 ", "0x10", "1,0", "heavy", "4294967296", "99999999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        result r = TOOL_RUN("weight", map, "n0", "--", (char *)bad[i]);
        cr_assert_eq(r.status, 2, "\"%s\": %d", bad[i], r.status);
        snprintf(want, sizeof want,
                 "dchctl weight: weight must be a whole number from 0 to 4294967295, not \"%s\"\n",
                 bad[i]);
        cr_assert(strncmp(r.err, want, strlen(want)) == 0, "\"%s\": %s", bad[i], r.err);
        tool_result_free(&r);
    }
    struct {
        char *args[8];
        const char *message;
    } cases[] = {
        {{"add", map, "a", "--weight=", NULL},
         "weight must be a whole number from 0 to 4294967295, not \"\""},
        {{"init", "x.dchmap", "--units", "3", NULL},
         "units must be a power of two from 1 to 16777216, not \"3\""},
        {{"init", "x.dchmap", "--slots", "0", NULL},
         "slots must be a power of two from 1 to 16777216, not \"0\""},
        {{"init", "x.dchmap", "--replicas", "9", NULL},
         "replicas must be a whole number from 1 to 8, not \"9\""},
        {{"plan", map, map, "--max-slots", "0", NULL},
         "max-slots must be a whole number from 1 to 4294967295, not \"0\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        result r = tool_run(cases[i].args);
        cr_assert_eq(r.status, 2, "case %zu: %d", i, r.status);
        cr_assert(strstr(r.err, cases[i].message) && strstr(r.err, "usage:"), "case %zu: %s", i,
                  r.err);
        tool_result_free(&r);
    }
    /* Leading zeros are digits like any other. */
    TOOL_EXPECT(0, "weight", map, "n0", "007");
}

/* ---- Suggestions ------------------------------------------------------- */

Test(cli_guards, a_mistyped_command_or_option_gets_the_nearest_one)
{
    struct {
        char *args[6];
        const char *message;
    } cases[] = {
        {{"ad", "m.dchmap", "x", NULL}, "dchctl: no command ad; did you mean add?\n"},
        {{"fingerprnt", NULL}, "dchctl: no command fingerprnt; did you mean fingerprint?\n"},
        {{"shwo", NULL}, "dchctl: no command shwo; did you mean show?\n"},
        {{"frobnicate", NULL}, "dchctl: no command frobnicate\n"},
        {{"help", "lokup", NULL}, "no command lokup; did you mean lookup?\n"},
        {{"add", "m.dchmap", "x", "--wieght", "2", NULL},
         "unknown option --wieght; did you mean --weight?\n"},
        {{"remove", "m.dchmap", "x", "--dry", NULL},
         "unknown option --dry; did you mean --dry-run?\n"},
        {{"show", "m.dchmap", "--weight", NULL}, "unknown option --weight\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        result r = tool_run(cases[i].args);
        cr_assert_eq(r.status, 2, "case %zu: %d", i, r.status);
        cr_assert(strstr(r.err, cases[i].message) != NULL, "case %zu: %s", i, r.err);
        cr_assert(strstr(r.err, "usage:") != NULL, "case %zu: no usage pointer: %s", i, r.err);
        cr_assert(strstr(r.err, "commands:") == NULL, "case %zu: the whole help: %s", i, r.err);
        tool_result_free(&r);
    }
}

/* ---- A map after the name ---------------------------------------------- */

Test(cli_guards, a_map_given_after_the_name_is_pointed_out)
{
    char map[256], want[600];
    tool_path(map, sizeof map, "m.dchmap");
    make_map(map, 1, (const uint32_t[]){1}, 1);
    result r = TOOL_RUN("add", "node-x", map);
    cr_assert_eq(r.status, 2, "%s", r.err);
    snprintf(want, sizeof want,
             "node-x: no such map file; did you mean `dchctl add %s node-x` (the map first)?",
             map);
    cr_assert(strstr(r.err, want) != NULL, "%s", r.err);
    tool_result_free(&r);
    r = TOOL_RUN("weight", "n0", map, "3");
    cr_assert_eq(r.status, 2, "%s", r.err);
    snprintf(want, sizeof want, "did you mean `dchctl weight %s n0 3`", map);
    cr_assert(strstr(r.err, want) != NULL, "%s", r.err);
    tool_result_free(&r);
    r = TOOL_RUN("lookup", "user:1", map);
    cr_assert_eq(r.status, 2, "%s", r.err);
    snprintf(want, sizeof want, "did you mean `dchctl lookup %s user:1`", map);
    cr_assert(strstr(r.err, want) != NULL, "%s", r.err);
    tool_result_free(&r);
    /* Named like a map, even when missing too. */
    TOOL_EXPECT_ERR(2, "(the map first)", "remove", "n0", "other.dchmap");
    /* Nothing looks like a map: the file's own error, exit 1. */
    TOOL_EXPECT_ERR(1, "No such file or directory", "add", "no-such-map", "node-x");
}

/* ---- Moves and promotions ---------------------------------------------- */

/* The library's oracle: slots whose primary changes, those of them whose
 * new primary held a copy (promotions), and copies a member gains while the
 * old map held the slot (data that moves). */
typedef struct oracle {
    unsigned long long moved, promoted, copied, held;
} oracle;

static bool holds(const dch_map *m, uint32_t slot, const char *name)
{
    uint32_t ids[DCH_MAP_MAX_REPLICAS];
    const size_t n = dch_map_slot_replicas(m, slot, ids, DCH_MAP_MAX_REPLICAS);
    for (size_t i = 0; i < n && i < DCH_MAP_MAX_REPLICAS; i++)
        if (strcmp(dch_map_node_name(m, ids[i]), name) == 0)
            return true;
    return false;
}

static oracle oracle_of(const dch_map *a, const dch_map *b)
{
    oracle o = {0, 0, 0, 0};
    for (uint32_t s = 0; s < dch_map_slot_count(a); s++) {
        const uint32_t pa = dch_map_slot_owner(a, s), pb = dch_map_slot_owner(b, s);
        const char *na = dch_map_node_name(a, pa), *nb = dch_map_node_name(b, pb);
        if (nb != NULL && (na == NULL || strcmp(na, nb) != 0)) {
            o.moved++;
            o.promoted += holds(a, s, nb);
        }
        uint32_t ids[DCH_MAP_MAX_REPLICAS];
        const size_t n = dch_map_slot_replicas(b, s, ids, DCH_MAP_MAX_REPLICAS);
        for (size_t i = 0; dch_map_slot_replicas(a, s, NULL, 0) > 0 && i < n; i++)
            o.copied += !holds(a, s, dch_map_node_name(b, ids[i]));
        o.held += dch_map_slot_replicas(a, s, NULL, 0);
    }
    return o;
}


Test(cli_guards, promotions_are_counted_apart_from_moves)
{
    char map[256], old[256];
    tool_path(map, sizeof map, "r.dchmap");
    tool_path(old, sizeof old, "old.dchmap");
    dch_map_config cfg = map_config(64, 16);
    cfg.replicas = 3;
    dch_map *a;
    cr_assert_eq(dch_map_new(&a, &cfg), DCH_OK);
    const char *zones[] = {"rack-a", "rack-a", "rack-b"};
    for (int i = 0; i < 3; i++) {
        char name[8];
        snprintf(name, sizeof name, "r%d", i + 1);
        cr_assert_eq(dch_map_add_node_in_zone(a, name, zones[i], 1, NULL), DCH_OK);
    }
    cr_assert_eq(dch_map_save_file(a, old), DCH_OK);
    cr_assert_eq(dch_map_save_file(a, map), DCH_OK);
    result r = TOOL_RUN("add", map, "r4", "--zone", "rack-c", "--json");
    cr_assert_eq(r.status, 0, "%s", r.err);
    dch_map *b;
    cr_assert_eq(dch_map_load_file(&b, map), DCH_OK);
    const oracle o = oracle_of(a, b);
    cr_assert(o.promoted > 0 && o.promoted < o.moved, "the case shows nothing");
    cr_assert_eq(json_number(r.out, "moved_slots"), o.moved);
    cr_assert_eq(json_number(r.out, "promoted_slots"), o.promoted, "%s", r.out);
    cr_assert_eq(json_number(r.out, "copies_moved"), o.copied, "%s", r.out);
    cr_assert_eq(json_number(r.out, "copies_held"), o.held, "%s", r.out);
    tool_result_free(&r);

    char want[200];
    r = TOOL_RUN("diff", old, map);
    cr_assert_eq(r.status, 0, "%s", r.err);
    snprintf(want, sizeof want, ": %llu to a member that receives the data, %llu promotions",
             o.moved - o.promoted, o.promoted);
    cr_assert(strstr(r.out, want) != NULL, "%s", r.out);
    snprintf(want, sizeof want, "data moves for %llu of the %llu copies held", o.copied, o.held);
    cr_assert(strstr(r.out, want) != NULL, "%s", r.out);
    cr_assert(strstr(r.out, "ring") == NULL, "%s", r.out);
    tool_result_free(&r);
    dch_map_free(a);
    dch_map_free(b);
}

/* ---- plan --write-dir: all or nothing ---------------------------------- */

Test(cli_guards, plan_writes_into_a_new_or_empty_folder_or_not_at_all)
{
    char old[256], target[256], steps[256], full[256], junk[300];
    tool_path(old, sizeof old, "old.dchmap");
    tool_path(target, sizeof target, "new.dchmap");
    tool_path(steps, sizeof steps, "steps");
    tool_path(full, sizeof full, "full");
    make_map(old, 1, (const uint32_t[]){1, 1, 1}, 3);
    make_map(target, 1, (const uint32_t[]){1, 1, 1, 1}, 4);

    /* A folder that holds something is refused before anything is made. */
    cr_assert_eq(mkdir(full, 0755), 0);
    snprintf(junk, sizeof junk, "%s/step-0001.dchmap", full);
    write_file(junk, "old", 3);
    TOOL_EXPECT_ERR(1, "not empty", "plan", old, target, "--max-slots", "4", "--write-dir", full);
    cr_assert_eq(dir_count(full, true), 1);
    cr_assert_eq(dir_count(the_tool.dir, true), 3, "a temporary folder was left");

    /* A plan that cannot be staged (the maps swapped) makes no folder. */
    TOOL_EXPECT(1, "plan", target, old, "--max-slots", "4", "--write-dir", steps);
    cr_assert_eq(dir_count(the_tool.dir, true), 3, "a failed plan left a folder");

    /* A new folder, then an empty one, get every step. */
    TOOL_EXPECT(0, "plan", old, target, "--max-slots", "4", "--write-dir", steps);
    const int n = dir_count(steps, true);
    cr_assert(n > 2, "%d steps", n);
    cr_assert_eq(dir_count(the_tool.dir, true), 4);
    remove_dir(steps);
    cr_assert_eq(mkdir(steps, 0750), 0);
    TOOL_EXPECT(0, "plan", old, target, "--max-slots", "4", "--write-dir", steps);
    cr_assert_eq(dir_count(steps, true), n);
    struct stat st;
    cr_assert_eq(stat(steps, &st), 0);
    cr_assert_eq(st.st_mode & 0777, 0750, "the empty folder's mode is kept");
}
