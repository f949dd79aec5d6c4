/* SPDX-License-Identifier: MIT */
/*
 * dchctl balance and show with LOADS, run as an operator would. Every map
 * the tool writes is checked against the library: the same map balanced by
 * dch_map_balance_load with the same loads must have the same fingerprint,
 * epoch and load moves, and the JSON report must give every field of the
 * library's report. show's load columns are recounted slot by slot from
 * the map's routing. Every refusal (a bad LOADS line of each kind, a bad
 * option) must leave the map file byte for byte.
 *
 * The tool is DCH_TOOL when set, else the one this build tree built.
 */
#define _POSIX_C_SOURCE 200809L

#include <criterion/criterion.h>

#include "dch/dch.h"
#include "support.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TestSuite(cli_balance, .init = tool_fixture_init, .fini = tool_fixture_fini);

typedef tool_result result;

/* The number after "field": in text, as a double. */
static double json_double(const char *text, const char *field)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\": ", field);
    const char *s = strstr(text, pat);
    cr_assert_not_null(s, "no %s in %s", field, text);
    return strtod(s + strlen(pat), NULL);
}

/* A growing text buffer. */
typedef struct text {
    char *s;
    size_t n, cap;
} text;

static void put(text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char one[256];
    const int k = vsnprintf(one, sizeof one, fmt, ap);
    va_end(ap);
    cr_assert(k >= 0 && (size_t)k < sizeof one);
    if (t->n + (size_t)k + 1 > t->cap) {
        t->cap = (t->n + (size_t)k + 1) * 2;
        t->s = realloc(t->s, t->cap);
        cr_assert_not_null(t->s);
    }
    memcpy(t->s + t->n, one, (size_t)k + 1);
    t->n += (size_t)k;
}

/*
 * The loads as a LOADS file, in the forms the format allows: slots in a
 * shuffled order, zeros sometimes left out, blanks and tabs between the
 * fields, comments on their own lines and after a line, blank lines,
 * "\r\n" line ends. Every form must read as the same vector.
 */
static void write_loads(const char *path, const uint64_t *L, uint32_t P, uint64_t *rng)
{
    uint32_t *order = malloc(P * sizeof *order);
    cr_assert_not_null(order);
    for (uint32_t s = 0; s < P; s++)
        order[s] = s;
    for (uint32_t s = P; s > 1; s--) {
        const uint32_t j = rng_below(rng, s), x = order[s - 1];
        order[s - 1] = order[j];
        order[j] = x;
    }
    text t = {0};
    put(&t, "# slot load\n");
    for (uint32_t k = 0; k < P; k++) {
        const uint32_t s = order[k];
        if (L[s] == 0 && rng_below(rng, 2) == 0)
            continue;
        const uint32_t form = rng_below(rng, 8);
        put(&t, "%s%" PRIu32 "%s%" PRIu64 "%s%s", form == 0 ? "  " : "", s,
            form == 1 ? "\t" : " ", L[s], form == 2 ? " # a comment" : "",
            form == 3 ? "\r\n" : "\n");
        if (form == 4)
            put(&t, "\n#\n");
    }
    write_file(path, t.s ? t.s : "", t.n);
    free(t.s);
    free(order);
}

/* The kinds of load vectors: Zipf over the slots, all on one slot, zeros,
 * near-equal, a few hot slots over noise, and loads that sum to almost
 * UINT64_MAX. */
static void make_loads(uint64_t *L, uint32_t P, uint32_t kind, uint64_t *rng)
{
    memset(L, 0, P * sizeof *L);
    const uint32_t hot = rng_below(rng, P);
    for (uint32_t s = 0; s < P; s++) {
        const uint32_t r = (s + P - hot) % P; /* the rank of slot s */
        switch (kind) {
        case 0: L[s] = 1000000 / (r + 1); break;
        case 1: L[s] = s == hot ? 12345 : 0; break;
        case 2: break;
        case 3: L[s] = 1000 + rng_below(rng, 3); break;
        case 4: L[s] = rng_below(rng, 100) + (rng_below(rng, 50) == 0 ? 100000 : 0); break;
        default: L[s] = UINT64_MAX / P - rng_below(rng, 1000); break;
        }
    }
}

static void write_text(const char *path, const char *t)
{
    write_file(path, t, strlen(t));
}

/* The report's fields in the tool's JSON are the library's. */
static void assert_report(const char *out, const dch_balance_report *r, const dch_map *m,
                          const char *what)
{
    static const char *const names[] = {"total_load",   "heaviest_load", "second_load",
                                        "heaviest_slot", "members",      "too_heavy",
                                        "above_before",  "above_after",  "moves",
                                        "promotions",    "moved_load",   "promoted_load",
                                        "moved_load_floor", "in_force",  "left_count"};
    const uint64_t want[] = {r->total_load,    r->heaviest_load, r->second_load, r->heaviest_slot,
                             r->members,       r->too_heavy,     r->above_before, r->above_after,
                             r->moves,         r->promotions,    r->moved_load, r->promoted_load,
                             r->moved_load_floor, r->in_force,   r->left_count};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        cr_assert_eq(json_number(out, names[i]), want[i], "%s: %s in %s", what, names[i], out);
    cr_assert_eq(json_double(out, "max_ratio_before"), r->max_ratio_before, "%s", what);
    cr_assert_eq(json_double(out, "max_ratio_after"), r->max_ratio_after, "%s", what);
    static const char *const why[] = {"?", "budget", "slack", "placement"};
    for (uint32_t i = 0; i < r->left_count && i < r->left_cap; i++) {
        char want_left[512];
        snprintf(want_left, sizeof want_left,
                 "{\"id\": %" PRIu32 ", \"name\": \"%s\", \"why\": \"%s\", \"load\": %" PRIu64
                 ", \"bound\": %" PRIu64 "}",
                 r->left[i].id, dch_map_node_name(m, r->left[i].id),
                 why[r->left[i].why <= 3 ? r->left[i].why : 0], r->left[i].load,
                 r->left[i].bound);
        cr_assert(strstr(out, want_left) != NULL, "%s: want %s in %s", what, want_left, out);
    }
}

/* Slots whose primary differs by name between a and b. */
static unsigned long long moved_primaries(const dch_map *a, const dch_map *b)
{
    unsigned long long n = 0;
    for (uint32_t s = 0; s < dch_map_slot_count(a); s++) {
        const uint32_t x = dch_map_slot_owner(a, s), y = dch_map_slot_owner(b, s);
        const char *nx = x == DCH_NODE_NONE ? "" : dch_map_node_name(a, x);
        const char *ny = y == DCH_NODE_NONE ? "" : dch_map_node_name(b, y);
        n += strcmp(nx, ny) != 0;
    }
    return n;
}

/* A map of seven members (weights 1..3, zones of three with `zones`), at
 * R copies, one drained in `drain` mode (0: none). */
static void make_map(char *map, uint32_t R, int zones, uint32_t drain)
{
    char rs[4];
    snprintf(rs, sizeof rs, "%" PRIu32, R);
    TOOL_EXPECT(0, "init", map, "--force", "--units", "64", "--slots", "16", "--replicas", rs);
    static char *const names[] = {"a", "b", "c", "d", "e", "f", "g"};
    for (unsigned i = 0; i < 7; i++) {
        char w[4], z[4];
        snprintf(w, sizeof w, "%u", 1 + i % 3);
        snprintf(z, sizeof z, "z%u", i % 3);
        if (zones)
            TOOL_EXPECT(0, "add", map, names[i], "--weight", w, "--zone", z, "--force");
        else
            TOOL_EXPECT(0, "add", map, names[i], "--weight", w, "--force");
    }
    if (drain == DCH_DRAIN_FULL)
        TOOL_EXPECT(0, "drain", map, "c", "--force");
    else if (drain == DCH_DRAIN_PRIMARY)
        TOOL_EXPECT(0, "drain", map, "c", "--primary", "--force");
}

/* A map and its loads, each in a file of the_tool.dir. */
typedef struct loaded {
    char map[256], loads[256];
    dch_map *m;  /* the map in the file, as loaded */
    uint32_t P;  /* its slot count */
    uint64_t *L; /* the load of each slot, as the LOADS file gives it */
} loaded;

/* make_map's map (R, zones, drain) in the file `map`, and loads of `kind`
 * (make_loads) for its slots written to the file `loads` (write_loads). */
static loaded make_loaded(const char *map, const char *loads, uint32_t R, int zones,
                          uint32_t drain, uint32_t kind, uint64_t *rng)
{
    loaded t;
    tool_path(t.map, sizeof t.map, map);
    tool_path(t.loads, sizeof t.loads, loads);
    make_map(t.map, R, zones, drain);
    t.m = map_load_path(t.map);
    t.P = dch_map_slot_count(t.m);
    t.L = xcalloc(t.P, sizeof *t.L);
    make_loads(t.L, t.P, kind, rng);
    write_loads(t.loads, t.L, t.P, rng);
    return t;
}

static void loaded_free(loaded *t)
{
    dch_map_free(t->m);
    free(t->L);
}

/*
 * Seeded maps (R = 1, 2, 3, with and without zones, with a drain) and every
 * kind of load vector, balanced by the tool with and without budgets and
 * by the library on its own copy of the file: the file is the library's
 * map (fingerprint, epoch, load moves in force), the report is the
 * library's field by field, the plan counts the slots whose primary moved.
 * A second call with the same loads, when no budget left a member above
 * its bound, leaves the file byte for byte (the fixed point) and moves
 * nothing.
 */
Test(cli_balance, every_call_matches_the_library)
{
    const uint64_t seed = test_seed(0x62616c616e6365);
    uint64_t rng = seed;
    const unsigned rounds = test_scaled(12, 6);
    for (unsigned k = 0; k < rounds; k++) {
        const uint32_t R = 1 + k % 3, kind = rng_below(&rng, 6), drain = rng_below(&rng, 3);
        loaded t = make_loaded("b.dchmap", "loads.txt", R, k % 2, drain, kind, &rng);
        dch_map *before = map_clone_of(t.m);
        dch_balance_config cfg;
        cr_assert_eq(dch_balance_config_init(&cfg, DCH_BALANCE_CONFIG_VERSION), DCH_OK);
        char moves[16] = "0", slack[16] = "4294967295";
        if (rng_below(&rng, 3) == 0)
            snprintf(moves, sizeof moves, "%" PRIu32, cfg.max_moves = rng_below(&rng, 8));
        if (rng_below(&rng, 3) == 0)
            snprintf(slack, sizeof slack, "%" PRIu32, cfg.count_slack = rng_below(&rng, 4));
        dch_balance_left left[16];
        dch_balance_report rep;
        memset(&rep, 0, sizeof rep);
        rep.left = left;
        rep.left_cap = 16;
        cr_assert_eq(dch_map_balance_load(t.m, t.L, t.P, &cfg, &rep), DCH_OK);
        char what[128];
        snprintf(what, sizeof what, "seed %" PRIu64 " round %u (R %u, kind %u, moves %s, slack %s)",
                 seed, k, R, kind, moves, slack);
        result r = TOOL_RUN("balance", t.map, t.loads, "--max-moves", moves, "--count-slack",
                            slack, "--json");
        cr_assert_eq(r.status, 0, "%s: %s", what, r.err);
        assert_report(r.out, &rep, t.m, what);
        cr_assert_eq(json_number(r.out, "moved_slots"), moved_primaries(before, t.m), "%s", what);
        dch_map *f = map_load_path(t.map);
        cr_assert_eq(dch_map_fingerprint(f), dch_map_fingerprint(t.m), "%s: fingerprint", what);
        cr_assert_eq(dch_map_epoch(f), dch_map_epoch(t.m), "%s: epoch", what);
        cr_assert_eq(dch_map_balance_moves(f), dch_map_balance_moves(t.m), "%s", what);
        cr_assert_eq(json_number(r.out, "epoch"), dch_map_epoch(t.m), "%s", what);
        tool_result_free(&r);
        int budget = 0;
        for (uint32_t i = 0; i < rep.left_count && i < rep.left_cap; i++)
            budget |= left[i].why == DCH_BALANCE_LEFT_BUDGET;
        if (!budget) {
            size_t len;
            char *bytes = file_bytes(t.map, &len);
            r = TOOL_RUN("balance", t.map, t.loads, "--max-moves", moves, "--count-slack", slack,
                         "--json");
            cr_assert_eq(r.status, 0, "%s: %s", what, r.err);
            cr_assert_eq(json_number(r.out, "moves"), 0, "%s: fixed point", what);
            cr_assert_eq(json_number(r.out, "promotions"), 0, "%s: fixed point", what);
            cr_assert(file_holds(t.map, bytes, len), "%s: a second call changed the map", what);
            tool_result_free(&r);
            free(bytes);
        }
        dch_map_free(f);
        dch_map_free(before);
        loaded_free(&t);
    }
}

/* The text report names every field and each member left above its bound
 * with its reason. */
Test(cli_balance, the_text_report_names_every_field)
{
    uint64_t rng = 7;
    loaded t = make_loaded("t.dchmap", "t.txt", 1, 0, 0, 0, &rng);
    result r = TOOL_RUN("balance", t.map, t.loads, "--max-moves", "1");
    cr_assert_eq(r.status, 0, "%s", r.err);
    static const char *const heads[] = {"balanced ", "load:", "members:", "above bound:",
                                        "moved:", "max/mean:", "load moves:", "left above:",
                                        "plan:"};
    for (size_t i = 0; i < sizeof heads / sizeof heads[0]; i++)
        cr_assert(strstr(r.out, heads[i]) != NULL, "no %s in %s", heads[i], r.out);
    dch_balance_left left[16];
    dch_balance_report rep = {0};
    rep.left = left;
    rep.left_cap = 16;
    dch_balance_config cfg;
    dch_balance_config_init(&cfg, DCH_BALANCE_CONFIG_VERSION);
    cfg.max_moves = 1;
    cr_assert_eq(dch_map_balance_load(t.m, t.L, t.P, &cfg, &rep), DCH_OK);
    for (uint32_t i = 0; i < rep.left_count && i < 16; i++) {
        char want[256];
        snprintf(want, sizeof want, "  %s: load %" PRIu64 ", bound %" PRIu64 "; ",
                 dch_map_node_name(t.m, left[i].id), left[i].load, left[i].bound);
        cr_assert(strstr(r.out, want) != NULL, "want %s in %s", want, r.out);
    }
    tool_result_free(&r);
    loaded_free(&t);
}

/* A LOADS file that the tool refuses, with the words and line it names. */
typedef struct bad_loads {
    const char *text;
    const char *err;
} bad_loads;

/*
 * Refusals: every kind of bad LOADS line (exit status 1, naming the file
 * and the line) and every bad use of the options (exit status 2) leaves the
 * map file byte for byte, after a balance that put load moves in force.
 */
Test(cli_balance, refusals_leave_the_map_byte_for_byte)
{
    char map[256], loads[256], good[256];
    tool_path(map, sizeof map, "r.dchmap");
    tool_path(loads, sizeof loads, "bad.txt");
    tool_path(good, sizeof good, "good.txt");
    make_map(map, 2, 0, 0);
    write_text(good, "0 500\n1 400\n2 300\n3 200\n");
    TOOL_EXPECT(0, "balance", map, good);
    size_t len0;
    char *bytes0 = file_bytes(map, &len0);
    static const bad_loads bad[] = {
        {"0 1\n# c\n0 2\n", "bad.txt:3: slot 0 is given twice (first on line 1)"},
        {"1024 1\n", "bad.txt:1: slot 1024 is not in the map, whose slots are 0 .. 1023"},
        {"99999999999999999999 1\n", "bad.txt:1: slot must be a whole number from 0 to 1023"},
        {"x 1\n", "bad.txt:1: slot must be a whole number from 0 to 1023, not \"x\""},
        {"1 y\n", "bad.txt:1: load must be a whole number"},
        {"1 -2\n", "bad.txt:1: load must be a whole number"},
        {"1 2.5\n", "bad.txt:1: load must be a whole number"},
        {"\n\n1 18446744073709551616\n", "bad.txt:3: load must be a whole number from 0 to "
                                        "18446744073709551615, not \"18446744073709551616\""},
        {"1 18446744073709551615\n2 0\n3 1\n", "bad.txt:3: the loads sum past"},
        {"1\n", "bad.txt:1: expected \"slot load\""},
        {"1 2 3\n", "bad.txt:1: expected \"slot load\""},
        {"1 2\n3 4 # fine\n+5 1\n", "bad.txt:3: slot must be a whole number"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_file(loads, bad[i].text, strlen(bad[i].text));
        TOOL_EXPECT_ERR(1, bad[i].err, "balance", map, loads);
        cr_assert(file_holds(map, bytes0, len0), "bad LOADS %zu changed the map", i);
        TOOL_EXPECT_ERR(1, bad[i].err + strlen("bad.txt"), "show", map, loads);
    }
    write_file(loads, "1 2\n\0 3\n", 8);
    TOOL_EXPECT_ERR(1, "bad.txt:2: a NUL byte", "balance", map, loads);
    TOOL_EXPECT_ERR(1, "missing.txt: No such file", "balance", map, "missing.txt");
    TOOL_EXPECT_ERR(2, "missing arguments", "balance", map);
    TOOL_EXPECT_ERR(2, "too many arguments", "balance", map, good, good);
    TOOL_EXPECT_ERR(2, "--clear takes the map alone", "balance", map, good, "--clear");
    TOOL_EXPECT_ERR(2, "--clear takes the map alone", "balance", map, "--clear", "--max-moves",
                    "3");
    TOOL_EXPECT_ERR(2, "max-moves must be a whole number from 0 to 4294967295", "balance", map,
                    good, "--max-moves", "4294967296");
    TOOL_EXPECT_ERR(2, "count-slack must be a whole number", "balance", map, good,
                    "--count-slack", "-1");
    TOOL_EXPECT_ERR(2, "did you mean --max-moves", "balance", map, good, "--max-move", "1");
    TOOL_EXPECT_ERR(2, "given twice", "balance", map, good, "--clear", "--clear");
    TOOL_EXPECT_ERR(2, "standard input) given twice", "balance", "-", "-");
    TOOL_EXPECT_ERR(2, "the map first", "balance", "missing.dchmap", map);
    TOOL_EXPECT_ERR(1, "missing.dchmap: No such file", "balance", "missing.dchmap", good);
    cr_assert(file_holds(map, bytes0, len0), "a refused balance changed the map");
    free(bytes0);
}

/*
 * --clear drops every load move: the map routes as its base and drains
 * give (the fingerprint of the map before any balance), in a later epoch;
 * the report counts the moves dropped. A second --clear changes nothing.
 */
Test(cli_balance, clear_drops_every_load_move)
{
    char map[256], loads[256];
    tool_path(map, sizeof map, "c.dchmap");
    tool_path(loads, sizeof loads, "c.txt");
    make_map(map, 1, 0, 0);
    dch_map *m0 = map_load_path(map);
    write_text(loads, "5 1000\n6 900\n7 800\n8 700\n9 600\n");
    result r = TOOL_RUN("balance", map, loads, "--json");
    cr_assert_eq(r.status, 0, "%s", r.err);
    const unsigned long long in_force = json_number(r.out, "in_force");
    tool_result_free(&r);
    dch_map *m1 = map_load_path(map);
    cr_assert_eq(dch_map_balance_moves(m1), in_force);
    r = TOOL_RUN("balance", map, "--clear", "--json");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_eq(json_number(r.out, "dropped"), in_force, "%s", r.out);
    cr_assert_eq(json_number(r.out, "in_force"), 0, "%s", r.out);
    tool_result_free(&r);
    dch_map *m2 = map_load_path(map);
    cr_assert_eq(dch_map_balance_moves(m2), 0);
    cr_assert_eq(dch_map_fingerprint(m2), dch_map_fingerprint(m0), "clear routes as the base");
    if (in_force > 0)
        cr_assert_gt(dch_map_epoch(m2), dch_map_epoch(m1), "clear raises the epoch");
    r = TOOL_RUN("balance", map, "--clear");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, ": 0 load moves dropped;"), "%s", r.out);
    tool_result_free(&r);
    dch_map *m3 = map_load_path(map);
    cr_assert_eq(dch_map_epoch(m3), dch_map_epoch(m2), "a clear with nothing to drop");
    dch_map_free(m0);
    dch_map_free(m1);
    dch_map_free(m2);
    dch_map_free(m3);
}

/* The library's balance of a copy of m by the loads L (default config):
 * the map the tool must write. */
static dch_map *balanced_copy(const dch_map *m, const uint64_t *L)
{
    dch_map *c = map_clone_of(m);
    cr_assert_eq(dch_map_balance_load(c, L, dch_map_slot_count(c), NULL, NULL), DCH_OK);
    return c;
}

/*
 * --dry-run writes nothing and reports the map the write would make (its
 * epoch and fingerprint, "written": false); --out writes the balanced map
 * to another file or to standard output and leaves FILE byte for byte;
 * --clear takes both. Every map written or announced is the library's.
 */
Test(cli_balance, dry_run_and_out_write_only_where_asked)
{
    char map[256], loads[256], out[256], want[160];
    tool_path(map, sizeof map, "d.dchmap");
    tool_path(loads, sizeof loads, "d.txt");
    tool_path(out, sizeof out, "d-out.dchmap");
    make_map(map, 2, 0, 0);
    dch_map *m0 = map_load_path(map);
    uint64_t *L = xcalloc(dch_map_slot_count(m0), sizeof *L);
    for (uint32_t s = 0; s < 16; s++)
        L[s] = 1000 - 10 * s; /* one unit's slots carry nearly all the load */
    text t = {0};
    for (uint32_t s = 0; s < 16; s++)
        put(&t, "%" PRIu32 " %" PRIu64 "\n", s, L[s]);
    write_text(loads, t.s);
    free(t.s);
    dch_map *want_map = balanced_copy(m0, L);
    cr_assert_gt(dch_map_balance_moves(want_map), 0, "the loads must call for load moves");
    size_t len;
    char *bytes = file_bytes(map, &len);

    result r = TOOL_RUN("balance", map, loads, "--dry-run", "--json");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "\"written\": false") != NULL, "%s", r.out);
    snprintf(want, sizeof want, "\"fingerprint\": \"%016" PRIx64 "\"",
             dch_map_fingerprint(want_map));
    cr_assert(strstr(r.out, want) != NULL, "want %s in %s", want, r.out);
    cr_assert_eq(json_number(r.out, "epoch"), dch_map_epoch(want_map));
    cr_assert_eq(json_number(r.out, "in_force"), dch_map_balance_moves(want_map));
    cr_assert(file_holds(map, bytes, len), "--dry-run wrote the map");
    tool_result_free(&r);
    r = TOOL_RUN("balance", map, loads, "--dry-run");
    cr_assert_eq(r.status, 0, "%s", r.err);
    snprintf(want, sizeof want, "unchanged; the new map would be at epoch %" PRIu64
             ", fingerprint %016" PRIx64 "\n", dch_map_epoch(want_map),
             dch_map_fingerprint(want_map));
    cr_assert(strncmp(r.out, "dry run: balance ", 17) == 0, "%s", r.out);
    cr_assert(strstr(r.out, want) != NULL, "want %s in %s", want, r.out);
    cr_assert(file_holds(map, bytes, len), "--dry-run wrote the map");
    tool_result_free(&r);

    r = TOOL_RUN("balance", map, loads, "--out", out, "--json");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "\"written\": true") != NULL, "%s", r.out);
    cr_assert(strstr(r.out, "\"out\": ") != NULL, "%s", r.out);
    cr_assert(file_holds(map, bytes, len), "--out wrote FILE");
    dch_map *o = map_load_path(out);
    cr_assert_eq(dch_map_fingerprint(o), dch_map_fingerprint(want_map));
    cr_assert_eq(dch_map_epoch(o), dch_map_epoch(want_map));
    tool_result_free(&r);
    r = TOOL_RUN("balance", map, loads, "--out", "-");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.err, "balanced standard output: now at") != NULL, "%s", r.err);
    cr_assert(r.outlen > 0 && file_holds(out, r.out, r.outlen), "--out - gave another map");
    cr_assert(file_holds(map, bytes, len), "--out - wrote FILE");
    tool_result_free(&r);

    /* --clear: a dry run drops nothing, --out writes the base's routing. */
    size_t olen;
    char *obytes = file_bytes(out, &olen);
    r = TOOL_RUN("balance", out, "--clear", "--dry-run");
    cr_assert_eq(r.status, 0, "%s", r.err);
    snprintf(want, sizeof want, ": %" PRIu32 " load move%s would be dropped; unchanged;",
             dch_map_balance_moves(want_map), dch_map_balance_moves(want_map) == 1 ? "" : "s");
    cr_assert(strstr(r.out, want) != NULL, "want %s in %s", want, r.out);
    cr_assert(file_holds(out, obytes, olen), "--clear --dry-run wrote the map");
    tool_result_free(&r);
    TOOL_EXPECT(0, "balance", out, "--clear", "--out", map);
    cr_assert(file_holds(out, obytes, olen), "--clear --out wrote FILE");
    dch_map *c = map_load_path(map);
    cr_assert_eq(dch_map_balance_moves(c), 0);
    cr_assert_eq(dch_map_fingerprint(c), dch_map_fingerprint(m0), "cleared: the base's routing");
    dch_map_free(c);
    dch_map_free(o);
    dch_map_free(want_map);
    dch_map_free(m0);
    free(obytes);
    free(bytes);
    free(L);
}

/*
 * Standard input: LOADS '-' reads the loads from it; MAP '-' reads the map
 * from it and writes the balanced map to standard output, the report to
 * standard error; both give the map a file gives.
 */
Test(cli_balance, standard_input_and_output)
{
    char map[256], copy[256], loads[256], out[256];
    tool_path(map, sizeof map, "s.dchmap");
    tool_path(copy, sizeof copy, "s2.dchmap");
    tool_path(loads, sizeof loads, "s.txt");
    tool_path(out, sizeof out, "s.out");
    make_map(map, 2, 1, 0);
    size_t len;
    char *bytes = file_bytes(map, &len);
    write_file(copy, bytes, len);
    write_text(loads, "0 100\n1 90\n2 80\n3 70\n4 60\n# end\n");
    TOOL_EXPECT(0, "balance", map, loads);
    result r = TOOL_RUN_IN(loads, "balance", copy, "-", "--json");
    cr_assert_eq(r.status, 0, "%s", r.err);
    tool_result_free(&r);
    size_t n1, n2;
    char *b1 = file_bytes(map, &n1), *b2 = file_bytes(copy, &n2);
    cr_assert(n1 == n2 && memcmp(b1, b2, n1) == 0, "LOADS '-' gave another map");
    r = TOOL_RUN_IN(copy, "balance", "-", loads);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.err, "balanced standard output:") != NULL, "%s", r.err);
    write_file(out, r.out, r.outlen);
    dch_map *a = map_load_path(map), *b = map_load_path(out);
    cr_assert_eq(dch_map_fingerprint(a), dch_map_fingerprint(b));
    cr_assert_eq(dch_map_epoch(a), dch_map_epoch(b), "a second call at the fixed point");
    tool_result_free(&r);
    dch_map_free(a);
    dch_map_free(b);
    free(b1);
    free(b2);
    free(bytes);
}

/*
 * show MAP LOADS: each member's load is the sum of the loads of the slots
 * it is the primary of, its target the total load times its share of the
 * weight of the members that balance, its bound min(T + Lmax, max(T, h) +
 * L2); a drained member has no target or bound. The text rows end with
 * the four columns.
 */
Test(cli_balance, show_gives_each_members_load)
{
    uint64_t rng = test_seed(0x73686f77);
    loaded t = make_loaded("w.dchmap", "w.txt", 2, 0, DCH_DRAIN_FULL, 4, &rng);
    uint64_t total = 0, lmax = 0, l2 = 0;
    for (uint32_t s = 0; s < t.P; s++) {
        total += t.L[s];
        if (t.L[s] > lmax) {
            l2 = lmax;
            lmax = t.L[s];
        } else if (t.L[s] > l2) {
            l2 = t.L[s];
        }
    }
    double W = 0;
    for (uint32_t id = 0; id < dch_map_id_limit(t.m); id++)
        if (dch_map_node_drained(t.m, id) == 0)
            W += dch_map_node_weight(t.m, id);
    result r = TOOL_RUN("show", t.map, t.loads, "--json");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_eq(json_number(r.out, "total"), total, "%s", r.out);
    cr_assert_eq(json_number(r.out, "heaviest_load"), lmax);
    cr_assert_eq(json_number(r.out, "second_load"), l2);
    for (uint32_t id = 0; id < dch_map_id_limit(t.m); id++) {
        uint64_t c = 0, h = 0;
        for (uint32_t s = 0; s < t.P; s++)
            if (dch_map_slot_owner(t.m, s) == id) {
                c += t.L[s];
                h = t.L[s] > h ? t.L[s] : h;
            }
        char head[64];
        snprintf(head, sizeof head, "{\"id\": %" PRIu32 ", \"name\": \"%s\"", id,
                 dch_map_node_name(t.m, id));
        const char *row = strstr(r.out, head);
        cr_assert_not_null(row, "%s", r.out);
        cr_assert_eq(json_number(row, "load"), c, "%s's load", dch_map_node_name(t.m, id));
        if (dch_map_node_drained(t.m, id) != 0) {
            cr_assert(strstr(row, "\"target\": null, \"bound\": null") != NULL, "%s", row);
            continue;
        }
        const double T = (double)total * dch_map_node_weight(t.m, id) / W;
        const double a = T + (double)lmax, b = (T > (double)h ? T : (double)h) + (double)l2;
        cr_assert_float_eq(json_double(row, "target"), T, 1e-6 * (T + 1), "%s", row);
        cr_assert_float_eq(json_double(row, "bound"), a < b ? a : b, 1e-6 * (a + 1), "%s", row);
    }
    tool_result_free(&r);
    r = TOOL_RUN("show", t.map, t.loads);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, " load               target                bound load/target\n"),
              "%s", r.out);
    cr_assert(strstr(r.out, "load:          total ") != NULL, "%s", r.out);
    tool_result_free(&r);
    r = TOOL_RUN("show", t.map);
    cr_assert(strstr(r.out, "load/target") == NULL, "no LOADS, no load columns: %s", r.out);
    tool_result_free(&r);
    loaded_free(&t);
}
