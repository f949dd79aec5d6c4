/* SPDX-License-Identifier: MIT */
/*
 * `dchctl compare-ketama`, run as an operator would: its balance table and its
 * join and removal totals are recomputed here from the library (a ketama
 * ring and a DCH map built from the same servers, shares and diffs from
 * their ranges), and bad fleet files must fail with the line they fail on.
 *
 * The tool is DCH_TOOL when set, else the one this build tree built.
 */
#define _POSIX_C_SOURCE 200809L

#include <criterion/criterion.h>

#include "dch/dch.h"
#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

TestSuite(cli_ketama, .init = tool_fixture_init, .fini = tool_fixture_fini);

/* Write the fleet file, run compare-ketama on it (and `chosen` when not
 * NULL); the exit status, with stdout and stderr in *out and *err. */
static int run(const char *fleet_text, const char *chosen, char **out, char **err)
{
    char fleet[128], po[128], pe[128];
    snprintf(fleet, sizeof fleet, "%s/fleet.txt", the_tool.dir);
    snprintf(po, sizeof po, "%s/out", the_tool.dir);
    snprintf(pe, sizeof pe, "%s/err", the_tool.dir);
    FILE *f = fopen(fleet, "w");
    cr_assert_not_null(f);
    fputs(fleet_text, f);
    fclose(f);
    fflush(NULL);
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        if (freopen(po, "w", stdout) == NULL || freopen(pe, "w", stderr) == NULL)
            _exit(127);
        execl(the_tool.tool, the_tool.tool, "compare-ketama", fleet, chosen, (char *)NULL);
        _exit(127);
    }
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status), "the tool did not exit");
    *out = slurp(po, NULL);
    *err = slurp(pe, NULL);
    cr_assert(*out != NULL && *err != NULL, "cannot read the tool's output");
    return WEXITSTATUS(status);
}

/* The number after `label` on the first line at or after `from` holding it. */
static double number_after(const char *from, const char *label)
{
    const char *p = strstr(from, label);
    cr_assert_not_null(p, "no \"%s\" in:\n%s", label, from);
    return strtod(p + strlen(label), NULL);
}

typedef struct member {
    const char *name;
    uint32_t weight;
} member;

static double share_of(const dch_range *rg, size_t n, uint32_t id)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        if (rg[i].owner == id)
            s += dch_range_fraction(rg[i].lo, rg[i].hi);
    return s;
}

static int add_fraction(const dch_range_change *c, void *ctx)
{
    *(double *)ctx += dch_range_fraction(c->lo, c->hi);
    return 0;
}

/* The share of the keys that change owner, by names (ids in the two
 * structures are equal here: members are added in the same order and the
 * removed one is last). */
static double moved(const dch_range *a, size_t na, const dch_range *b, size_t nb)
{
    double f = 0;
    cr_assert_eq(dch_range_diff(a, na, b, nb, add_fraction, &f), DCH_OK);
    return f;
}

Test(cli_ketama, shares_and_moves_match_the_library)
{
    /* The chosen server is listed last, so the join order equals the file's
     * and ids agree between the structures built here. */
    const char *text = "# fleet\n"
                       "10.0.0.1:11211 1\n"
                       "  10.0.0.2        3\n"
                       "cache-3:11300 0\n"
                       "cache-4:11211 2   \n"
                       "\n"
                       "cache-5:11400 2\n";
    const member want[] = {{"10.0.0.1", 1}, {"10.0.0.2", 3}, {"cache-3:11300", 1},
                           {"cache-4", 2}, {"cache-5:11400", 2}};
    const unsigned n = 5;
    char *out, *err;
    cr_assert_eq(run(text, NULL, &out, &err), 0, "%s", err);

    dch_ring_config rc;
    dch_ring_config_default(&rc);
    rc.placement = DCH_RING_PLACE_KETAMA;
    dch_ring *r;
    dch_map *m;
    cr_assert_eq(dch_ring_new(&r, &rc), DCH_OK);
    cr_assert_eq(dch_map_new(&m, NULL), DCH_OK);
    size_t nr0 = 0, nm0 = 0;
    dch_range *r0 = NULL, *m0 = NULL;
    for (unsigned i = 0; i < n; i++) {
        if (i == n - 1) {
            r0 = ring_ranges_of(r, &nr0);
            m0 = map_ranges_of(m, &nm0);
        }
        cr_assert_eq(dch_ring_add_node(r, want[i].name, want[i].weight, NULL), DCH_OK);
        cr_assert_eq(dch_map_add_node(m, want[i].name, want[i].weight, NULL), DCH_OK);
    }
    size_t nr1, nm1;
    dch_range *r1 = ring_ranges_of(r, &nr1), *m1 = map_ranges_of(m, &nm1);

    /* Balance rows: "name weight ideal% ketama% x dch% x". */
    for (unsigned i = 0; i < n; i++) {
        char row[64];
        snprintf(row, sizeof row, "\n  %s ", want[i].name);
        const char *p = strstr(out, row);
        cr_assert_not_null(p, "no row for %s in:\n%s", want[i].name, out);
        char *end;
        double w = strtod(p + strlen(row), &end);
        double ideal = strtod(end, &end);
        double ketama = strtod(end, &end);
        (void)strtod(end, &end);
        double dch = strtod(end, &end);
        cr_assert_eq(w, want[i].weight, "%s: weight", want[i].name);
        cr_assert_float_eq(ideal, 100.0 * want[i].weight / 9.0, 1e-4, "%s", want[i].name);
        cr_assert_float_eq(ketama, 100.0 * share_of(r1, nr1, i), 1e-4, "%s", want[i].name);
        cr_assert_float_eq(dch, 100.0 * share_of(m1, nm1, i), 1e-4, "%s", want[i].name);
    }

    /* Join of the last server, then its removal, under each scheme. */
    const char *join = strstr(out, "join of cache-5:11400");
    const char *removal = strstr(out, "removal of cache-5:11400");
    cr_assert(join != NULL && removal != NULL && join < removal, "%s", out);
    double want_ring = 100.0 * moved(r0, nr0, r1, nr1);
    double want_map = 100.0 * moved(m0, nm0, m1, nm1);
    cr_assert_float_eq(number_after(join, "ketama (libmemcached):"), want_ring, 1e-4);
    cr_assert_float_eq(number_after(join, "dch:"), want_map, 1e-4);
    /* The removal from the full fleet in file order undoes the join. */
    cr_assert_float_eq(number_after(removal, "ketama (libmemcached):"), want_ring, 1e-4);
    cr_assert(strstr(removal, "dch:") != NULL);
    /* The joiner takes at least its weight share under DCH. */
    cr_assert_geq(want_map, 100.0 * 2 / 9 - 0.01);
    /* Under ketama the weight change of the others' shares moves keys among
     * them too: the ring moves more than the joiner gains. */
    cr_assert_gt(want_ring, 100.0 * share_of(r1, nr1, n - 1) + 0.01);

    free(out);
    free(err);

    /* The removal of a server in the middle of the list: the full map with
     * it removed (a map depends on its history, so not the others' map
     * built afresh); under DCH only its keys move. */
    cr_assert_eq(run(text, "10.0.0.2", &out, &err), 0, "%s", err);
    dch_ring *rr;
    dch_map *mr;
    cr_assert_eq(dch_ring_clone(&rr, r), DCH_OK);
    cr_assert_eq(dch_map_clone(&mr, m), DCH_OK);
    cr_assert_eq(dch_ring_remove_node(rr, 1), DCH_OK);
    cr_assert_eq(dch_map_remove_node(mr, 1), DCH_OK);
    size_t nr2, nm2;
    dch_range *r2 = ring_ranges_of(rr, &nr2), *m2 = map_ranges_of(mr, &nm2);
    removal = strstr(out, "removal of 10.0.0.2:");
    cr_assert_not_null(removal, "%s", out);
    cr_assert_float_eq(number_after(removal, "ketama (libmemcached):"),
                       100.0 * moved(r1, nr1, r2, nr2), 1e-4);
    const char *dch_part = strstr(removal, "dch:");
    cr_assert_not_null(dch_part);
    cr_assert_float_eq(number_after(dch_part, "dch:"), 100.0 * moved(m1, nm1, m2, nm2), 1e-4);
    cr_assert_float_eq(number_after(dch_part, "dch:"), 100.0 * share_of(m1, nm1, 1), 1e-4);
    for (const char *line = strchr(dch_part, '\n'); line != NULL && line[1] != '\0';
         line = strchr(line + 1, '\n'))
        cr_assert(strncmp(line + 1, "    10.0.0.2 -> ", 16) == 0, "a DCH move not from the "
                  "leaver: %.60s", line + 1);
    free(r2);
    free(m2);
    dch_ring_free(rr);
    dch_map_free(mr);

    free(r0);
    free(m0);
    free(r1);
    free(m1);
    dch_ring_free(r);
    dch_map_free(m);
    free(out);
    free(err);
}

Test(cli_ketama, a_chosen_server_is_found_by_host_and_port)
{
    char *out, *err;
    const char *text = "a:11211 1\nb:11212 1\nc 1\n";
    cr_assert_eq(run(text, "a:11211", &out, &err), 0, "%s", err);
    cr_assert_not_null(strstr(out, "removal of a:\n"), "%s", out);
    free(out);
    free(err);
    cr_assert_eq(run(text, "b:11212", &out, &err), 0, "%s", err);
    cr_assert_not_null(strstr(out, "removal of b:11212:\n"), "%s", out);
    free(out);
    free(err);
    cr_assert_eq(run(text, "b:11213", &out, &err), 2);
    cr_assert_not_null(strstr(err, "b:11213 is not in the server list"), "%s", err);
    free(out);
    free(err);
}

Test(cli_ketama, bad_fleet_files_fail_naming_the_line)
{
    const struct {
        const char *text, *message;
    } cases[] = {
        {"a:1 1\nb:0 1\n", ":2: port must be a whole number from 1 to 65535, not \"0\""},
        {"a:1 1\nb:70000 1\n", ":2: port must be a whole number from 1 to 65535, not \"70000\""},
        {"a:1 1\n\nb:2 x\n", ":3: weight must be a whole number from 0 to 4294967295, not \"x\""},
        {"a:1 1\nb:2 +1\n", ":2: weight must be a whole number from 0 to 4294967295, not \"+1\""},
        {"a:1 1\nb:2 1 extra\n", ":2: expected \"host:port weight\""},
        {"a:1 1\n:5 1\n", ":2: no host"},
        {"a:11211 1\na 2\n", ":2: the server is listed twice"},
        {"# one\na:1 1\n", "needs at least 2 servers"},
    };
    /* Under a reduced DCH_TEST_SCALE (the valgrind pass, where each run of
     * the tool costs seconds) every third case. */
    const size_t stride = test_scale() < 1 ? 3 : 1;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i += stride) {
        char *out, *err;
        cr_assert_eq(run(cases[i].text, NULL, &out, &err), 1, "case %zu", i);
        cr_assert_not_null(strstr(err, cases[i].message), "case %zu: %s", i, err);
        cr_assert_str_eq(out, "", "case %zu prints nothing on stdout", i);
        free(out);
        free(err);
    }
}
