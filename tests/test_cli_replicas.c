/* SPDX-License-Identifier: MIT */
/*
 * The dchctl tool with replicas and zones, run as an operator would: `init
 * --replicas R`, `add --zone Z`, `lookup` printing every copy of a key and
 * `show` printing each member's copies and zone. Every answer is checked
 * against the library (dch_map_lookup_replicas_hash, dch_map_slot_replicas,
 * dch_map_node_copies on a map built by the same calls), every refused
 * value against its documented usage error and an unchanged file.
 *
 * The tool is DCH_TOOL when set, else the one this build tree built.
 */
#define _POSIX_C_SOURCE 200809L

#include <criterion/criterion.h>

#include "dch/dch.h"
#include "support.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

TestSuite(cli_replicas, .init = tool_fixture_init, .fini = tool_fixture_fini);

typedef tool_result result;



static uint32_t replicas_of(const dch_map *m)
{
    dch_map_config cfg;
    dch_map_get_config(m, &cfg);
    return cfg.replicas == 0 ? 1 : cfg.replicas;
}

/* A slot's copies as names, primary first: "a\tb\tc" ("-" for none). */
static void copies_text(const dch_map *m, uint64_t h, char *buf, size_t cap)
{
    uint32_t ids[DCH_MAP_MAX_REPLICAS];
    const size_t n = dch_map_lookup_replicas_hash(m, h, ids, DCH_MAP_MAX_REPLICAS);
    cr_assert_leq(n, DCH_MAP_MAX_REPLICAS);
    size_t used = 0;
    buf[0] = '\0';
    if (n == 0)
        used += (size_t)snprintf(buf, cap, "\t-");
    for (size_t i = 0; i < n && used < cap; i++)
        used += (size_t)snprintf(buf + used, cap - used, "\t%s", dch_map_node_name(m, ids[i]));
    cr_assert_lt(used, cap);
}


/* ---- Refused values ----------------------------------------------------- */

/*
 * --replicas takes 1 .. 8 and nothing else; every other value is a usage
 * error (exit 2) naming --replicas, which creates no file and, with
 * --force over an existing map, leaves it byte for byte.
 */
Test(cli_replicas, bad_replica_counts_are_usage_errors_that_change_nothing)
{
    char map[256], fresh[256];
    tool_path(map, sizeof map, "m.dchmap");
    tool_path(fresh, sizeof fresh, "fresh.dchmap");
    TOOL_EXPECT(0, "init", map, "--units", "16", "--slots", "8");
    result r;
    size_t len0;
    char *bytes0 = file_bytes(map, &len0);
    char *const bad[] = {"0", "9", "10", "-1", "x", "", "3x", " 3", "1.5", "+2",
                         "4294967297", "99999999999999999999"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        r = TOOL_RUN("init", fresh, "--replicas", bad[k]);
        cr_assert_eq(r.status, 2, "--replicas '%s': status %d", bad[k], r.status);
        cr_assert(strstr(r.err, "--replicas") && strstr(r.err, "1 to 8") &&
                      strstr(r.err, "usage"),
                  "--replicas '%s': %s", bad[k], r.err);
        tool_result_free(&r);
        cr_assert(access(fresh, F_OK) != 0, "--replicas '%s' created a file", bad[k]);
        r = TOOL_RUN("init", map, "--force", "--replicas", bad[k]);
        cr_assert_eq(r.status, 2, "--force --replicas '%s': status %d", bad[k], r.status);
        tool_result_free(&r);
    }
    TOOL_EXPECT_ERR(2, "needs a value", "init", fresh, "--replicas");
    TOOL_EXPECT(2, "init", fresh, "--replicas", "2", "--replicas", "3");
    r = TOOL_RUN("add", map, "a", "--replicas", "2");
    cr_assert_eq(r.status, 2, "--replicas belongs to init only");
    tool_result_free(&r);
    cr_assert(access(fresh, F_OK) != 0);
    cr_assert(file_holds(map, bytes0, len0), "a refused init changed the map");
    free(bytes0);
}

/*
 * A zone follows the member name rules: 1 to 255 bytes, no control byte.
 * An empty zone, one with any control byte, or one too long is a usage
 * error (exit 2) that leaves the file byte for byte; --zone belongs to add.
 */
Test(cli_replicas, bad_zone_names_are_usage_errors_that_change_nothing)
{
    char map[256];
    tool_path(map, sizeof map, "m.dchmap");
    TOOL_EXPECT(0, "init", map, "--units", "16", "--slots", "8", "--replicas", "2");
    result r;
    TOOL_EXPECT(0, "add", map, "a", "--zone", "z1");
    size_t len0;
    char *bytes0 = file_bytes(map, &len0);

    const size_t stride = test_scale() < 1 ? 4 : 1;
    for (unsigned b = 1; b <= 0x20; b += (unsigned)stride) {
        const char byte = b == 0x20 ? 0x7F : (char)b;
        char zone[4] = {'z', byte, 'x', '\0'};
        r = TOOL_RUN("add", map, "b", "--zone", zone);
        cr_assert_eq(r.status, 2, "zone byte 0x%02x: status %d", (unsigned char)byte, r.status);
        cr_assert(strstr(r.err, "a zone has 1 to 255 bytes and no control character") &&
                      strstr(r.err, "usage"),
                  "zone byte 0x%02x: %s", (unsigned char)byte, r.err);
        tool_result_free(&r);
    }
    char longest[257];
    memset(longest, 'z', 256);
    longest[256] = '\0';
    char *const bad[] = {"", longest};
    for (size_t k = 0; k < 2; k++) {
        r = TOOL_RUN("add", map, "b", "--zone", bad[k]);
        cr_assert_eq(r.status, 2, "zone %zu: status %d", k, r.status);
        cr_assert(strstr(r.err, "a zone has") != NULL, "%s", r.err);
        tool_result_free(&r);
        TOOL_EXPECT(2, "add", map, "b", "--dry-run", "--zone", bad[k]);
    }
    TOOL_EXPECT_ERR(2, "needs a value", "add", map, "b", "--zone");
    TOOL_EXPECT(2, "add", map, "b", "--zone", "z1", "--zone", "z2");
    r = TOOL_RUN("remove", map, "a", "--zone", "z1");
    cr_assert_eq(r.status, 2, "--zone belongs to add only");
    tool_result_free(&r);
    TOOL_EXPECT(2, "weight", map, "a", "2", "--zone", "z1");

    cr_assert(file_holds(map, bytes0, len0), "a refused zone changed the map");
    free(bytes0);

    /* The longest zone the rules allow is taken. */
    longest[255] = '\0';
    TOOL_EXPECT(0, "add", map, "b", "--zone", longest);
}

/* ---- What the tool writes and prints ------------------------------------ */

/* init --replicas R writes a map of R copies, and says so. */
Test(cli_replicas, init_writes_the_copies_asked_for)
{
    for (uint32_t R = 1; R <= DCH_MAP_MAX_REPLICAS; R++) {
        char map[256], name[32], rs[4];
        snprintf(name, sizeof name, "r%u.dchmap", R);
        snprintf(rs, sizeof rs, "%u", R);
        tool_path(map, sizeof map, name);
        result r = TOOL_RUN("init", map, "--units", "8", "--slots", "8", "--replicas", rs, "--json");
        cr_assert_eq(r.status, 0, "R %u: %s", R, r.err);
        char want[32];
        snprintf(want, sizeof want, "\"replicas\": %u,", R);
        cr_assert(strstr(r.out, want) != NULL, "R %u: %s", R, r.out);
        tool_result_free(&r);
        dch_map *m = map_load_path(map);
        cr_assert_eq(replicas_of(m), R, "the file of init --replicas %u", R);
        dch_map_free(m);
    }
}

/*
 * lookup prints KEY, then every copy of its slot, primary first, each
 * after a TAB, exactly as dch_map_lookup_replicas_hash gives them; with
 * fewer members than copies, as many columns as members; with none, '-'.
 * The JSON answer's "copies" lists the same names.
 */
Test(cli_replicas, lookup_prints_every_copy_as_the_library_places_them)
{
    const uint64_t seed = test_seed(0x7265706c);
    uint64_t rng = seed;
    char map[256];
    tool_path(map, sizeof map, "m.dchmap");
    dch_map_config cfg = map_config(32, 16);
    cfg.replicas = 3;
    dch_map *m;
    cr_assert_eq(dch_map_new(&m, &cfg), DCH_OK);

    enum { KEYS = 40 };
    char keys[KEYS][24];
    char *argv[KEYS + 4] = {"lookup", map};
    for (int k = 0; k < KEYS; k++) {
        snprintf(keys[k], sizeof keys[k], "key:%" PRIu64, rng_next(&rng) % 1000000);
        argv[2 + k] = keys[k];
    }
    argv[2 + KEYS] = NULL;
    const char *names[] = {"n0", "n1", "n2", "n3", "n4", "n5", "n6"};
    const char *zones[] = {"east", "west", "north"};
    /* 0 members, then 1, 2 (fewer than R), then up to 7 in three zones. */
    for (int members = 0; members <= 7; members++) {
        if (members > 0)
            cr_assert_eq(dch_map_add_node_in_zone(m, names[members - 1], zones[rng_below(&rng, 3)],
                                                  1 + rng_below(&rng, 3), NULL),
                         DCH_OK);
        cr_assert_eq(dch_map_save_file(m, map), DCH_OK);
        result r = tool_run(argv);
        cr_assert_eq(r.status, 0, "%s", r.err);
        const char *line = r.out;
        for (int k = 0; k < KEYS; k++) {
            char want[256], cols[200];
            copies_text(m, dch_map_hash(m, keys[k], strlen(keys[k])), cols, sizeof cols);
            snprintf(want, sizeof want, "%s%s\n", keys[k], cols);
            cr_assert_eq(strncmp(line, want, strlen(want)), 0,
                         "seed %" PRIu64 ", %d members, key %s: want %s got %.*s", seed, members,
                         keys[k], want, (int)strcspn(line, "\n") + 1, line);
            line += strlen(want);
            size_t tabs = 0;
            for (const char *c = want; *c; c++)
                tabs += *c == '\t';
            const size_t copies = members < 3 ? (size_t)members : 3;
            cr_assert_eq(tabs, copies ? copies : 1, "one column per copy");
        }
        cr_assert_eq(*line, '\0', "seed %" PRIu64 ": more output than keys", seed);
        tool_result_free(&r);
    }

    /* JSON: "copies" holds the same names, primary first. */
    char *const json_argv[] = {"lookup", map, "--json", keys[0], keys[1], NULL};
    result r = tool_run(json_argv);
    cr_assert_eq(r.status, 0, "%s", r.err);
    for (int k = 0; k < 2; k++) {
        uint32_t ids[DCH_MAP_MAX_REPLICAS];
        const size_t n =
            dch_map_lookup_replicas_hash(m, dch_map_hash(m, keys[k], strlen(keys[k])), ids, 8);
        char want[256];
        int used = snprintf(want, sizeof want, "\"copies\": [");
        for (size_t i = 0; i < n; i++)
            used += snprintf(want + used, sizeof want - (size_t)used, "%s\"%s\"", i ? ", " : "",
                             dch_map_node_name(m, ids[i]));
        snprintf(want + used, sizeof want - (size_t)used, "]");
        char key_field[64];
        snprintf(key_field, sizeof key_field, "{\"key\": \"%s\"", keys[k]);
        const char *entry = strstr(r.out, key_field);
        cr_assert_not_null(entry, "%s", r.out);
        const char *end = strchr(entry, '}');
        const char *found = strstr(entry, want);
        cr_assert(found != NULL && found < end, "seed %" PRIu64 ": want %s in %s", seed, want,
                  r.out);
        char primary[64];
        snprintf(primary, sizeof primary, "\"name\": \"%s\"", dch_map_node_name(m, ids[0]));
        found = strstr(entry, primary);
        cr_assert(found != NULL && found < end, "name is the primary: %s", r.out);
    }
    tool_result_free(&r);
    dch_map_free(m);
}

/* With one copy per slot, lookup keeps its two columns and JSON its keys. */
Test(cli_replicas, one_copy_keeps_the_old_lookup_output)
{
    char map[256];
    tool_path(map, sizeof map, "m.dchmap");
    dch_map_config cfg = map_config(16, 8);
    dch_map *m;
    cr_assert_eq(dch_map_new(&m, &cfg), DCH_OK);
    cr_assert_eq(dch_map_add_node_in_zone(m, "a", "z1", 1, NULL), DCH_OK);
    cr_assert_eq(dch_map_add_node_in_zone(m, "b", "z2", 1, NULL), DCH_OK);
    cr_assert_eq(dch_map_save_file(m, map), DCH_OK);
    result r = TOOL_RUN("lookup", map, "user:1", "user:2");
    cr_assert_eq(r.status, 0, "%s", r.err);
    char want[128];
    snprintf(want, sizeof want, "user:1\t%s\nuser:2\t%s\n",
             dch_map_node_name(m, dch_map_lookup(m, "user:1", 6)),
             dch_map_node_name(m, dch_map_lookup(m, "user:2", 6)));
    cr_assert_str_eq(r.out, want);
    tool_result_free(&r);
    r = TOOL_RUN("lookup", map, "user:1", "--json");
    cr_assert(strstr(r.out, "copies") == NULL, "%s", r.out);
    tool_result_free(&r);
    dch_map_free(m);
}

/* Whether the copies of `slot` include the member named `name`. */
static int holds(const dch_map *m, uint32_t slot, const char *name)
{
    uint32_t ids[DCH_MAP_MAX_REPLICAS];
    const size_t n = dch_map_slot_replicas(m, slot, ids, DCH_MAP_MAX_REPLICAS);
    for (size_t i = 0; i < n; i++)
        if (strcmp(dch_map_node_name(m, ids[i]), name) == 0)
            return 1;
    return 0;
}

/* Copies created and dropped between two maps, matched per slot by name. */
static void count_copy_changes(const dch_map *a, const dch_map *b, uint64_t *created,
                               uint64_t *dropped)
{
    *created = *dropped = 0;
    for (uint32_t s = 0; s < dch_map_slot_count(a); s++) {
        uint32_t ia[DCH_MAP_MAX_REPLICAS], ib[DCH_MAP_MAX_REPLICAS];
        const size_t na = dch_map_slot_replicas(a, s, ia, DCH_MAP_MAX_REPLICAS);
        const size_t nb = dch_map_slot_replicas(b, s, ib, DCH_MAP_MAX_REPLICAS);
        for (size_t j = 0; j < nb; j++)
            *created += !holds(a, s, dch_map_node_name(b, ib[j]));
        for (size_t i = 0; i < na; i++)
            *dropped += !holds(b, s, dch_map_node_name(a, ia[i]));
    }
}

/*
 * add --zone places the member in its zone: the file the tool writes holds
 * the copies the library places for the same calls, every slot's copies in
 * distinct zones, and each change prints the copies it created and dropped.
 * show then lists each member's copies and zone as the library counts them.
 */
Test(cli_replicas, add_with_zones_matches_the_library_and_show_lists_copies)
{
    char map[256];
    tool_path(map, sizeof map, "m.dchmap");
    TOOL_EXPECT(0, "init", map, "--units", "16", "--slots", "8", "--replicas", "2");
    result r;
    dch_map_config cfg = map_config(16, 8);
    cfg.replicas = 2;
    dch_map *lib;
    cr_assert_eq(dch_map_new(&lib, &cfg), DCH_OK);
    const char *names[] = {"a", "b", "c", "d", "e"};
    const char *zones[] = {"z1", "z1", "z2", "z2", NULL};
    for (int i = 0; i < 5; i++) {
        cr_assert_eq(dch_map_add_node_in_zone(lib, names[i], zones[i], 1, NULL), DCH_OK);
        dch_map *before = map_load_path(map);
        r = zones[i] ? TOOL_RUN("add", map, (char *)names[i], "--zone", (char *)zones[i])
                     : TOOL_RUN("add", map, (char *)names[i]);
        cr_assert_eq(r.status, 0, "%s", r.err);
        dch_map *after = map_load_path(map);
        uint64_t created, dropped;
        count_copy_changes(before, after, &created, &dropped);
        char want[96];
        snprintf(want, sizeof want, "copies: %" PRIu64 " created, %" PRIu64 " dropped", created,
                 dropped);
        cr_assert(strstr(r.out, want) != NULL, "add %s: want %s in %s", names[i], want, r.out);
        if (zones[i] != NULL) {
            snprintf(want, sizeof want, "added %s in zone %s", names[i], zones[i]);
            cr_assert(strstr(r.out, want) != NULL, "%s", r.out);
        }
        tool_result_free(&r);
        dch_map_free(before);
        dch_map_free(after);
    }
    dch_map *m = map_load_path(map);
    cr_assert_eq(replicas_of(m), 2);
    for (uint32_t s = 0; s < dch_map_slot_count(m); s++) {
        uint32_t a[DCH_MAP_MAX_REPLICAS], b[DCH_MAP_MAX_REPLICAS];
        const size_t na = dch_map_slot_replicas(m, s, a, DCH_MAP_MAX_REPLICAS);
        const size_t nb = dch_map_slot_replicas(lib, s, b, DCH_MAP_MAX_REPLICAS);
        cr_assert_eq(na, 2, "slot %u", s);
        cr_assert_eq(na, nb, "slot %u", s);
        for (size_t i = 0; i < na; i++)
            cr_assert_str_eq(dch_map_node_name(m, a[i]), dch_map_node_name(lib, b[i]),
                             "slot %u copy %zu", s, i);
        const char *z0 = dch_map_node_zone(m, a[0]), *z1 = dch_map_node_zone(m, a[1]);
        cr_assert(z0 == NULL || z1 == NULL || strcmp(z0, z1) != 0,
                  "slot %u: both copies in zone %s", s, z0);
    }

    /* show: a copies and a zone column, the library's numbers. */
    r = TOOL_RUN("show", map);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "replicas:      2 copies of every slot\n") != NULL, "%s", r.out);
    cr_assert(strstr(r.out, "copies zone\n") != NULL, "%s", r.out);
    for (uint32_t id = 0; id < dch_map_id_limit(m); id++) {
        char tail[64];
        snprintf(tail, sizeof tail, " %9u %s\n", dch_map_node_copies(m, id),
                 dch_map_node_zone(m, id) ? dch_map_node_zone(m, id) : "-");
        char head[32];
        snprintf(head, sizeof head, "\n%6u %-16s", id, dch_map_node_name(m, id));
        const char *line = strstr(r.out, head);
        cr_assert_not_null(line, "no row for %u: %s", id, r.out);
        const char *eol = strchr(line + 1, '\n');
        cr_assert(eol != NULL && (size_t)(eol + 1 - line) > strlen(tail) &&
                      strncmp(eol + 1 - strlen(tail), tail, strlen(tail)) == 0,
                  "row of %u does not end in '%s': %s", id, tail, r.out);
    }
    tool_result_free(&r);
    r = TOOL_RUN("show", map, "--json");
    cr_assert_eq(r.status, 0);
    cr_assert(strstr(r.out, "\"replicas\": 2,") != NULL, "%s", r.out);
    for (uint32_t id = 0; id < dch_map_id_limit(m); id++) {
        char want[96];
        snprintf(want, sizeof want, "\"copies\": %u, \"zone\": ", dch_map_node_copies(m, id));
        cr_assert(strstr(r.out, want) != NULL, "%s", r.out);
    }
    cr_assert(strstr(r.out, "\"zone\": \"z1\"") && strstr(r.out, "\"zone\": null"), "%s",
              r.out);
    tool_result_free(&r);

    /* remove: the copies it prints are the ones that change. */
    r = TOOL_RUN("remove", map, "c", "--json");
    cr_assert_eq(r.status, 0, "%s", r.err);
    dch_map *after = map_load_path(map);
    uint64_t created, dropped;
    count_copy_changes(m, after, &created, &dropped);
    char want[96];
    snprintf(want, sizeof want, "\"copies_created\": %" PRIu64 ", \"copies_dropped\": %" PRIu64,
             created, dropped);
    cr_assert(strstr(r.out, want) != NULL, "want %s in %s", want, r.out);
    cr_assert_eq(dropped, dch_map_node_copies(m, 2), "a leaver's copies are dropped");
    tool_result_free(&r);

    /* diff counts the same copies between the two files. */
    char old[256];
    tool_path(old, sizeof old, "old.dchmap");
    cr_assert_eq(dch_map_save_file(m, old), DCH_OK);
    r = TOOL_RUN("diff", old, map, "--json");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, want) != NULL, "want %s in %s", want, r.out);
    tool_result_free(&r);
    r = TOOL_RUN("diff", old, map);
    snprintf(want, sizeof want, "copies: %" PRIu64 " created, %" PRIu64 " dropped", created,
             dropped);
    cr_assert(strstr(r.out, want) != NULL, "want %s in %s", want, r.out);
    tool_result_free(&r);
    dch_map_free(after);
    dch_map_free(m);
    dch_map_free(lib);
}

/* A map without replicas or zones keeps show's old columns. */
Test(cli_replicas, show_without_replicas_or_zones_keeps_its_columns)
{
    char map[256];
    tool_path(map, sizeof map, "m.dchmap");
    result r = TOOL_RUN("init", map, "--units", "16", "--slots", "8");
    tool_result_free(&r);
    r = TOOL_RUN("add", map, "a");
    tool_result_free(&r);
    r = TOOL_RUN("show", map);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "replicas:") == NULL && strstr(r.out, "copies") == NULL, "%s", r.out);
    cr_assert(strstr(r.out, " ideal/u\n") != NULL, "%s", r.out);
    tool_result_free(&r);
    r = TOOL_RUN("show", map, "--json");
    cr_assert(strstr(r.out, "replicas") == NULL && strstr(r.out, "zone") == NULL, "%s", r.out);
    tool_result_free(&r);
}
