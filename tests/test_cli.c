/* SPDX-License-Identifier: MIT */
/*
 * Tests of the dchctl tool, driven end to end: the program is run as an operator
 * would run it, and its files and output are checked against the library
 * (the map it wrote, loaded back; lookups and plans recomputed), every --json
 * output against a strict JSON grammar, and its exit status: 0 success, 1
 * runtime error, 2 usage error.
 *
 * The tool is DCH_TOOL when set, else the one this build tree built.
 */
#define _POSIX_C_SOURCE 200809L

#include <criterion/criterion.h>

#include "dch/dch.h"
#include "support.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/*
 * Every k-th of the many near-identical usage and help cases: all of them at
 * DCH_TEST_SCALE 1, every 4th under a reduced scale (the valgrind pass, where
 * each run of the tool costs about a second).
 */
static size_t case_stride(void)
{
    return test_scale() < 1 ? 4 : 1;
}

/* ---- Running the tool ------------------------------------------------- */

TestSuite(cli, .init = tool_fixture_init, .fini = tool_fixture_fini);

typedef tool_result result;


/* `dchctl init` of a 16 x 8 map at `map`, which must succeed. */
static void init_small_map(const char *map)
{
    result r = TOOL_RUN("init", (char *)map, "--units", "16", "--slots", "8");
    cr_assert_eq(r.status, 0, "init: %s", r.err);
    tool_result_free(&r);
}

/* ---- A strict JSON checker -------------------------------------------- */

typedef struct json {
    const char *p;
    int ok;
} json;

static void ws(json *j)
{
    while (*j->p == ' ' || *j->p == '\n' || *j->p == '\t' || *j->p == '\r')
        j->p++;
}

static void value(json *j, int depth);

static void string(json *j)
{
    if (*j->p != '"') {
        j->ok = 0;
        return;
    }
    j->p++;
    while (j->ok && *j->p != '"') {
        const unsigned char c = (unsigned char)*j->p;
        if (c == '\0' || c < 0x20) {
            j->ok = 0;
        } else if (c == '\\') {
            j->p++;
            if (*j->p == 'u') {
                for (int i = 1; i <= 4; i++)
                    if (!strchr("0123456789abcdefABCDEF", j->p[i]) || j->p[i] == '\0')
                        j->ok = 0;
                j->p += 5;
            } else if (*j->p && strchr("\"\\/bfnrt", *j->p)) {
                j->p++;
            } else {
                j->ok = 0;
            }
        } else if (c < 0x80) {
            j->p++;
        } else {
            /* UTF-8: lead byte and its continuation bytes. */
            const int n = (c & 0xE0) == 0xC0 ? 1 : (c & 0xF0) == 0xE0 ? 2 : (c & 0xF8) == 0xF0 ? 3 : -1;
            if (n < 0 || c == 0xC0 || c == 0xC1)
                j->ok = 0;
            for (int i = 1; j->ok && i <= n; i++)
                if (((unsigned char)j->p[i] & 0xC0) != 0x80)
                    j->ok = 0;
            j->p += n + 1;
        }
    }
    if (j->ok)
        j->p++;
}

static void number(json *j)
{
    const char *s = j->p;
    if (*j->p == '-')
        j->p++;
    if (*j->p == '0')
        j->p++;
    else if (*j->p >= '1' && *j->p <= '9')
        while (*j->p >= '0' && *j->p <= '9')
            j->p++;
    else
        j->ok = 0;
    if (*j->p == '.') {
        j->p++;
        if (!(*j->p >= '0' && *j->p <= '9'))
            j->ok = 0;
        while (*j->p >= '0' && *j->p <= '9')
            j->p++;
    }
    if (*j->p == 'e' || *j->p == 'E') {
        j->p++;
        if (*j->p == '+' || *j->p == '-')
            j->p++;
        if (!(*j->p >= '0' && *j->p <= '9'))
            j->ok = 0;
        while (*j->p >= '0' && *j->p <= '9')
            j->p++;
    }
    if (j->p == s)
        j->ok = 0;
}

static void value(json *j, int depth)
{
    ws(j);
    if (depth > 20) {
        j->ok = 0;
        return;
    }
    if (*j->p == '{' || *j->p == '[') {
        const char close = *j->p == '{' ? '}' : ']';
        const int object = close == '}';
        j->p++;
        ws(j);
        if (*j->p == close) {
            j->p++;
            return;
        }
        while (j->ok) {
            if (object) {
                ws(j);
                string(j);
                ws(j);
                if (*j->p != ':')
                    j->ok = 0;
                j->p++;
            }
            value(j, depth + 1);
            ws(j);
            if (*j->p == ',') {
                j->p++;
            } else if (*j->p == close) {
                j->p++;
                return;
            } else {
                j->ok = 0;
            }
        }
    } else if (*j->p == '"') {
        string(j);
    } else if (strncmp(j->p, "true", 4) == 0 || strncmp(j->p, "null", 4) == 0) {
        j->p += 4;
    } else if (strncmp(j->p, "false", 5) == 0) {
        j->p += 5;
    } else {
        number(j);
    }
}

static void assert_json(const char *text)
{
    json j = {text, 1};
    value(&j, 0);
    ws(&j);
    cr_assert(j.ok && *j.p == '\0', "not valid JSON near offset %ld: %s", (long)(j.p - text),
              text);
}

/* The string value of "field": "..." (first occurrence), copied into buf. */
static const char *json_field(const char *text, const char *field, char *buf, size_t n)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\": \"", field);
    const char *s = strstr(text, pat);
    cr_assert_not_null(s, "no %s in %s", field, text);
    s += strlen(pat);
    const char *e = strchr(s, '"');
    snprintf(buf, n, "%.*s", (int)(e - s), s);
    return buf;
}


/* ---- Library oracles -------------------------------------------------- */

static int count_moved(const dch_move *mv, void *ctx)
{
    (void)mv;
    (void)ctx;
    return 0;
}

typedef struct moved_sum {
    unsigned bits;
    unsigned long long slots;
    size_t ranges;
} moved_sum;

static int sum_moved(const dch_move *mv, void *ctx)
{
    moved_sum *s = ctx;
    s->slots += s->bits == 0 ? 1 : ((mv->hi - mv->lo) >> (64 - s->bits)) + 1;
    s->ranges++;
    return 0;
}

static moved_sum plan_of(const dch_map *a, const dch_map *b)
{
    moved_sum s = {0, 0, 0};
    while ((UINT32_C(1) << s.bits) < dch_map_slot_count(a))
        s.bits++;
    cr_assert_eq(dch_map_diff(a, b, sum_moved, &s), DCH_OK);
    return s;
}

/* ---- Tests ------------------------------------------------------------ */

Test(cli, an_operator_workflow_matches_the_library)
{
    char map[256], old[256], fp[64];
    tool_path(map, sizeof map, "cluster.dchmap");
    tool_path(old, sizeof old, "old.dchmap");

    result r = TOOL_RUN("init", map, "--units", "64", "--slots", "16", "--key",
                   "00112233445566778899AABBCCDDEEFF");
    cr_assert_eq(r.status, 0, "%s", r.err);
    tool_result_free(&r);
    cr_assert_eq(tool_count_files(), 1);
    dch_map *m = map_load_path(map);
    dch_map_config cfg;
    dch_map_get_config(m, &cfg);
    cr_assert(cfg.units == 64 && cfg.slots_per_unit == 16 && cfg.hash_key[1] == 0x11 &&
              cfg.hash_key[15] == 0xFF);
    cr_assert_eq(dch_map_node_count(m), 0);
    dch_map_free(m);

    r = TOOL_RUN("add", map, "alpha");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "- -> alpha: 1024/1024 slots") != NULL, "%s", r.out);
    tool_result_free(&r);
    r = TOOL_RUN("add", map, "beta", "--weight", "2", "--json");
    cr_assert_eq(r.status, 0, "%s", r.err);
    assert_json(r.out);
    m = map_load_path(map);
    uint32_t beta;
    cr_assert_eq(dch_map_find_node(m, "beta", &beta), DCH_OK);
    cr_assert_eq(dch_map_node_weight(m, beta), 2);
    cr_assert_eq(json_number(r.out, "moved_slots"), dch_map_node_slots(m, beta),
                 "the plan of an add moves the newcomer's slots");
    char want[32];
    snprintf(want, sizeof want, "%016llx", (unsigned long long)dch_map_fingerprint(m));
    cr_assert_str_eq(json_field(r.out, "fingerprint", fp, sizeof fp), want);
    tool_result_free(&r);
    cr_assert_eq(tool_count_files(), 1, "no temporary file left by a change");

    /* show --json: valid, and the library's numbers. */
    r = TOOL_RUN("show", map, "--json");
    cr_assert_eq(r.status, 0, "%s", r.err);
    assert_json(r.out);
    cr_assert_str_eq(json_field(r.out, "fingerprint", fp, sizeof fp), want);
    cr_assert_eq(json_number(r.out, "epoch"), dch_map_epoch(m));
    cr_assert_eq(json_number(r.out, "slots"), 1024);
    cr_assert_str_eq(json_field(r.out, "hash_key", fp, sizeof fp),
                     "00112233445566778899aabbccddeeff");
    cr_assert(strstr(r.out, "\"name\": \"alpha\"") && strstr(r.out, "\"name\": \"beta\""));
    tool_result_free(&r);
    r = TOOL_RUN("show", map);
    cr_assert_eq(r.status, 0);
    cr_assert(strstr(r.out, want) != NULL, "text show has the fingerprint");
    tool_result_free(&r);

    /* lookup: text and JSON agree with the library. */
    r = TOOL_RUN("lookup", map, "user:1", "user:2", "user:3", "order/9");
    cr_assert_eq(r.status, 0, "%s", r.err);
    const char *keys[] = {"user:1", "user:2", "user:3", "order/9"};
    const char *line = r.out;
    for (int k = 0; k < 4; k++) {
        char expect_line[128];
        snprintf(expect_line, sizeof expect_line, "%s\t%s\n", keys[k],
                 dch_map_node_name(m, dch_map_lookup(m, keys[k], strlen(keys[k]))));
        cr_assert_eq(strncmp(line, expect_line, strlen(expect_line)), 0, "got %s", r.out);
        line += strlen(expect_line);
    }
    cr_assert_eq(*line, '\0');
    tool_result_free(&r);
    r = TOOL_RUN("lookup", "--json", map, "user:1");
    cr_assert_eq(r.status, 0);
    assert_json(r.out);
    snprintf(want, sizeof want, "%016llx", (unsigned long long)dch_map_hash(m, "user:1", 6));
    cr_assert_str_eq(json_field(r.out, "hash", fp, sizeof fp), want);
    tool_result_free(&r);

    /* diff: the plan the library computes. */
    TOOL_EXPECT(0, "init", old, "--units", "64", "--slots", "16");
    r = TOOL_RUN("init", old, "--units", "64", "--slots", "16", "--key",
            "00112233445566778899aabbccddeeff", "--force");
    cr_assert_eq(r.status, 0, "%s", r.err);
    tool_result_free(&r);
    FILE *src = fopen(map, "rb"), *dst = fopen(old, "wb");
    char buf[8192];
    for (size_t n; (n = fread(buf, 1, sizeof buf, src)) > 0;)
        fwrite(buf, 1, n, dst);
    fclose(src);
    fclose(dst);
    TOOL_EXPECT(0, "add", map, "gamma", "--weight", "1");
    dch_map *before = map_load_path(old), *after = map_load_path(map);
    const moved_sum plan = plan_of(before, after);
    r = TOOL_RUN("diff", old, map, "--json");
    cr_assert_eq(r.status, 0, "%s", r.err);
    assert_json(r.out);
    cr_assert_eq(json_number(r.out, "moved_slots"), plan.slots);
    size_t ranges = 0;
    for (const char *s = r.out; (s = strstr(s, "\"lo\": ")) != NULL; s++)
        ranges++;
    cr_assert_eq(ranges, plan.ranges);
    tool_result_free(&r);
    r = TOOL_RUN("diff", old, map);
    cr_assert_eq(r.status, 0);
    char head[128];
    snprintf(head, sizeof head, "plan: %llu of 1024 slots move", plan.slots);
    cr_assert(strstr(r.out, head) != NULL, "%s", r.out);
    cr_assert(strstr(r.out, "alpha -> gamma: ") && strstr(r.out, "beta -> gamma: "), "%s", r.out);
    tool_result_free(&r);
    dch_map_free(before);
    dch_map_free(after);

    /* remove, weight, verify. */
    r = TOOL_RUN("remove", map, "beta");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "beta -> alpha: ") && strstr(r.out, "beta -> gamma: "), "%s", r.out);
    tool_result_free(&r);
    TOOL_EXPECT(0, "weight", map, "alpha", "0");
    dch_map_free(m);
    m = map_load_path(map);
    cr_assert_eq(dch_map_node_count(m), 2);
    cr_assert_eq(dch_map_epoch(m), 5);
    uint32_t id;
    cr_assert_eq(dch_map_find_node(m, "alpha", &id), DCH_OK);
    cr_assert_eq(dch_map_node_slots(m, id), 0, "alpha drained");
    r = TOOL_RUN("verify", map);
    cr_assert_eq(r.status, 0);
    cr_assert(strstr(r.out, ": ok:") != NULL);
    tool_result_free(&r);
    r = TOOL_RUN("verify", map, "--json");
    cr_assert_eq(r.status, 0);
    assert_json(r.out);
    cr_assert(strstr(r.out, "\"ok\": true") != NULL);
    tool_result_free(&r);
    r = TOOL_RUN("fingerprint", map);
    snprintf(want, sizeof want, "%016llx\n", (unsigned long long)dch_map_fingerprint(m));
    cr_assert_str_eq(r.out, want);
    tool_result_free(&r);
    dch_map_free(m);
    cr_assert_eq(tool_count_files(), 2, "only the two maps: no temporary files");
}

Test(cli, dry_runs_and_failed_changes_leave_the_file_as_it_was)
{
    char map[256];
    tool_path(map, sizeof map, "m.dchmap");
    init_small_map(map);
    result r = TOOL_RUN("add", map, "a");
    tool_result_free(&r);
    size_t len0;
    char *bytes0 = file_bytes(map, &len0);

    r = TOOL_RUN("add", map, "b", "--dry-run", "--ranges");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "dry run") && strstr(r.out, "0x"), "%s", r.out);
    tool_result_free(&r);
    r = TOOL_RUN("add", map, "a");
    cr_assert_eq(r.status, 1);
    cr_assert(strstr(r.err, map) && strstr(r.err, "name already in use"), "%s", r.err);
    tool_result_free(&r);
    TOOL_EXPECT_ERR(1, "no such member", "remove", map, "nobody");
    TOOL_EXPECT(1, "weight", map, "nobody", "3");
    r = TOOL_RUN("init", map);
    cr_assert_eq(r.status, 1, "init refuses to replace a map");
    cr_assert(strstr(r.err, "already exists") != NULL);
    tool_result_free(&r);

    cr_assert(file_holds(map, bytes0, len0), "the file changed");
    cr_assert_eq(tool_count_files(), 1);
    free(bytes0);
}

Test(cli, runtime_errors_exit_1_and_name_the_file_and_the_problem)
{
    char map[256], other[256], missing[256];
    tool_path(map, sizeof map, "m.dchmap");
    tool_path(other, sizeof other, "other.dchmap");
    tool_path(missing, sizeof missing, "missing.dchmap");
    result r = TOOL_RUN("show", missing);
    cr_assert_eq(r.status, 1);
    cr_assert(strstr(r.err, missing) && strstr(r.err, "No such file"), "%s", r.err);
    cr_assert_str_eq(r.out, "");
    tool_result_free(&r);

    init_small_map(map);
    r = TOOL_RUN("init", other, "--units", "32", "--slots", "8");
    tool_result_free(&r);
    r = TOOL_RUN("diff", map, other);
    cr_assert_eq(r.status, 1, "maps of different shapes have no plan");
    tool_result_free(&r);

    /* A damaged map: every command that reads it says so. */
    size_t len;
    char *bytes = file_bytes(map, &len);
    bytes[len / 2] = (char)(bytes[len / 2] ^ 0x40);
    FILE *f = fopen(map, "wb");
    fwrite(bytes, 1, len, f);
    fclose(f);
    free(bytes);
    const char *cmds[] = {"show", "verify", "fingerprint"};
    for (int k = 0; k < 3; k++) {
        r = tool_run((char *const[]){(char *)cmds[k], map, NULL});
        cr_assert_eq(r.status, 1, "%s", cmds[k]);
        cr_assert(strstr(r.err, map) && strstr(r.err, "damaged"), "%s: %s", cmds[k], r.err);
        tool_result_free(&r);
    }
    TOOL_EXPECT(1, "add", map, "x");
    r = TOOL_RUN("verify", map, "--json");
    cr_assert_eq(r.status, 1);
    assert_json(r.out);
    cr_assert(strstr(r.out, "\"ok\": false") != NULL);
    tool_result_free(&r);
}

/*
 * A file that is not there is reported as such by every command that reads
 * one, as text and in --json (which keeps the system's reason), never as a
 * bare "input/output error".
 */
Test(cli, a_missing_file_is_named_as_missing_by_every_reading_command)
{
    char missing[256], map[256];
    tool_path(missing, sizeof missing, "missing.dchmap");
    tool_path(map, sizeof map, "m.dchmap");
    init_small_map(map);
    result r;
    char *const cases[][6] = {
        {"show", missing, NULL},           {"lookup", missing, "k", NULL},
        {"diff", missing, map, NULL},      {"diff", map, missing, NULL},
        {"verify", missing, NULL},         {"fingerprint", missing, NULL},
        {"add", missing, "a", NULL},       {"remove", missing, "a", NULL},
        {"weight", missing, "a", "2", NULL},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        r = tool_run(cases[k]);
        cr_assert_eq(r.status, 1, "%s: status %d", cases[k][0], r.status);
        cr_assert(strstr(r.err, missing) && strstr(r.err, "No such file or directory"),
                  "%s: %s", cases[k][0], r.err);
        cr_assert(strstr(r.err, "input/output") == NULL, "%s: %s", cases[k][0], r.err);
        tool_result_free(&r);
    }
    r = TOOL_RUN("verify", missing, "--json");
    cr_assert_eq(r.status, 1);
    assert_json(r.out);
    cr_assert(strstr(r.out, "\"ok\": false") && strstr(r.out, "No such file or directory"),
              "verify --json drops the reason: %s", r.out);
    tool_result_free(&r);
    cr_assert_eq(tool_count_files(), 1, "no command created the missing file");
}

/*
 * Names are checked before anything is read or written: a control character
 * or an unquoted leading '-' is a usage error that leaves the file as it was,
 * while `--` lets a name or key start with '-'. Keys with control bytes are
 * printed escaped, so every lookup answer stays one line of two columns.
 */
Test(cli, names_with_control_characters_or_a_leading_dash_are_refused)
{
    char map[256];
    tool_path(map, sizeof map, "m.dchmap");
    init_small_map(map);
    result r;
    size_t len0;
    char *bytes0 = file_bytes(map, &len0);
    for (unsigned b = 1; b < 0x20; b += (unsigned)case_stride()) {
        char name[4] = {'n', (char)b, 'x', '\0'};
        r = tool_run((char *const[]){"add", map, "--", name, NULL});
        cr_assert_eq(r.status, 2, "byte 0x%02x: status %d", b, r.status);
        cr_assert(strstr(r.err, "control character") != NULL, "byte 0x%02x: %s", b, r.err);
        tool_result_free(&r);
    }
    r = TOOL_RUN("add", map, "-x");
    cr_assert_eq(r.status, 2);
    cr_assert(strstr(r.err, "unknown option -x") && strstr(r.err, "after --"), "%s", r.err);
    tool_result_free(&r);
    cr_assert(file_holds(map, bytes0, len0), "a refused name changed the file");
    free(bytes0);

    TOOL_EXPECT(0, "add", map, "--", "-x");
    r = TOOL_RUN("lookup", map, "--", "-key", "tab\tkey", "nl\nkey");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_str_eq(r.out, "-key\t-x\ntab\\x09key\t-x\nnl\\x0akey\t-x\n");
    tool_result_free(&r);
    dch_map *m = map_load_path(map);
    uint32_t id;
    cr_assert_eq(dch_map_find_node(m, "-x", &id), DCH_OK);
    cr_assert_eq(dch_map_node_count(m), 1);
    dch_map_free(m);
}

/* Every read command answers --json, and its numbers match the library. */
Test(cli, every_read_command_takes_json)
{
    char map[256], other[256];
    tool_path(map, sizeof map, "m.dchmap");
    tool_path(other, sizeof other, "o.dchmap");
    init_small_map(map);
    result r = TOOL_RUN("add", map, "a");
    tool_result_free(&r);
    r = TOOL_RUN("init", other, "--units", "16", "--slots", "8");
    tool_result_free(&r);
    char *const cases[][5] = {
        {"show", map, "--json", NULL},     {"lookup", map, "k", "--json", NULL},
        {"diff", other, map, "--json", NULL}, {"verify", map, "--json", NULL},
        {"fingerprint", map, "--json", NULL},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        r = tool_run(cases[k]);
        cr_assert_eq(r.status, 0, "%s --json: %s", cases[k][0], r.err);
        assert_json(r.out);
        tool_result_free(&r);
    }
    dch_map *m = map_load_path(map);
    char want[32], fp[32];
    snprintf(want, sizeof want, "%016llx", (unsigned long long)dch_map_fingerprint(m));
    r = TOOL_RUN("fingerprint", map, "--json");
    cr_assert_str_eq(json_field(r.out, "fingerprint", fp, sizeof fp), want);
    cr_assert_eq(json_number(r.out, "epoch"), dch_map_epoch(m));
    tool_result_free(&r);
    dch_map_free(m);
}

Test(cli, usage_errors_exit_2)
{
    char map[256];
    tool_path(map, sizeof map, "m.dchmap");
    init_small_map(map);
    result r;
    char *const cases[][8] = {
        {NULL},
        {"frobnicate", NULL},
        {"add", map, NULL},
        {"add", map, "a", "b", NULL},
        {"add", map, "a", "--weight", "heavy", NULL},
        {"add", map, "a", "--weight", "-1", NULL},
        {"add", map, "a", "--weight", "4294967296", NULL},
        {"add", map, "a", "--weight", NULL},
        {"add", map, "a", "--colour", "red", NULL},
        {"add", map, "", NULL},
        {"weight", map, "a", NULL},
        {"show", map, "--json=yes", NULL},
        {"show", map, "--json", "--json", NULL},
        {"lookup", map, NULL},
        {"init", "x", "--units", "3", NULL},
        {"init", "x", "--slots", "0", NULL},
        {"init", "x", "--units", "65536", "--slots", "512", NULL},
        {"init", "x", "--key", "0011", NULL},
        {"init", "x", "--key", "00112233445566778899aabbccddeefg", NULL},
        {"init", "x", "--key", "00112233445566778899aabbccddeeff", "--random-key", NULL},
        {"help", "frobnicate", NULL},
        {"diff", map, NULL},
        {"add", map, "-x", NULL},
        {"add", map, "-", NULL},
        {"remove", map, "-x", NULL},
        {"lookup", map, "-k", NULL},
        {"add", map, "tab\there", NULL},
        {"add", map, "--", "line\n", NULL},
        {"add", map, "--", "\x7f", NULL},
        {"weight", map, "bell\a", "2", NULL},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k += case_stride()) {
        r = tool_run(cases[k]);
        cr_assert_eq(r.status, 2, "case %zu: status %d, stderr %s", k, r.status, r.err);
        cr_assert(strstr(r.err, "usage") != NULL, "case %zu: %s", k, r.err);
        tool_result_free(&r);
    }
    cr_assert_eq(tool_count_files(), 1, "no usage error created a file");
}

Test(cli, help_and_version)
{
    result r = TOOL_RUN("--help");
    cr_assert_eq(r.status, 0);
    const char *cmds[] = {"init", "add", "remove", "weight", "show", "lookup", "diff", "verify"};
    for (int k = 0; k < 8; k++)
        cr_assert(strstr(r.out, cmds[k]) != NULL, "--help lacks %s", cmds[k]);
    tool_result_free(&r);
    for (size_t k = 0; k < 8; k += case_stride()) {
        r = tool_run((char *const[]){"help", (char *)cmds[k], NULL});
        cr_assert_eq(r.status, 0);
        char want[64];
        snprintf(want, sizeof want, "usage: dchctl %s ", cmds[k]);
        cr_assert(strncmp(r.out, want, strlen(want)) == 0, "%s", r.out);
        tool_result_free(&r);
        r = tool_run((char *const[]){(char *)cmds[k], "--help", NULL});
        cr_assert_eq(r.status, 0);
        cr_assert(strncmp(r.out, want, strlen(want)) == 0, "%s", r.out);
        tool_result_free(&r);
    }
    r = TOOL_RUN("--version");
    cr_assert_eq(r.status, 0);
    char want[64];
    snprintf(want, sizeof want, "dchctl %s\n", dch_version());
    cr_assert_str_eq(r.out, want);
    tool_result_free(&r);
}

Test(cli, random_keys_differ_and_odd_names_stay_valid_json)
{
    char a[256], b[256], ka[64], kb[64];
    tool_path(a, sizeof a, "a.dchmap");
    tool_path(b, sizeof b, "b.dchmap");
    TOOL_EXPECT(0, "init", a, "--units", "4", "--slots", "4", "--random-key");
    result r = TOOL_RUN("init", b, "--units", "4", "--slots", "4", "--random-key");
    tool_result_free(&r);
    r = TOOL_RUN("show", a, "--json");
    json_field(r.out, "hash_key", ka, sizeof ka);
    tool_result_free(&r);
    r = TOOL_RUN("show", b, "--json");
    json_field(r.out, "hash_key", kb, sizeof kb);
    tool_result_free(&r);
    cr_assert_str_neq(ka, kb, "two random keys are equal");
    cr_assert_str_neq(ka, "00000000000000000000000000000000");

    /* Quotes, backslashes, UTF-8, invalid UTF-8, and names that look like options. */
    char *const names[] = {"q\"uote", "back\\slash", "caf\xc3\xa9", "bad\xff\xfe", "--", "-"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        r = tool_run((char *const[]){"add", a, "--json", "--", names[k], NULL});
        cr_assert_eq(r.status, 0, "name %zu: %s", k, r.err);
        assert_json(r.out);
        tool_result_free(&r);
    }
    r = TOOL_RUN("show", a, "--json");
    assert_json(r.out);
    cr_assert(strstr(r.out, "caf\xc3\xa9") != NULL, "valid UTF-8 passes through");
    cr_assert(strstr(r.out, "bad\\u00ff\\u00fe") != NULL, "%s", r.out);
    tool_result_free(&r);
    r = TOOL_RUN("lookup", a, "--json", "k\xff", "x");
    assert_json(r.out);
    tool_result_free(&r);
    dch_map *m = map_load_path(a);
    cr_assert_eq(dch_map_node_count(m), sizeof names / sizeof names[0]);
    cr_assert_eq(dch_map_diff(m, m, count_moved, NULL), DCH_OK);
    dch_map_free(m);
}

/* Sum of "key": N over every occurrence in text. */
static unsigned long long json_sum(const char *text, const char *field)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\": ", field);
    unsigned long long sum = 0;
    for (const char *s = strstr(text, pat); s != NULL; s = strstr(s + 1, pat))
        sum += strtoull(s + strlen(pat), NULL, 10);
    return sum;
}

Test(cli, plan_prints_and_writes_the_steps_the_library_stages)
{
    char old[256], target[256];
    tool_path(old, sizeof old, "old.dchmap");
    tool_path(target, sizeof target, "new.dchmap");
    dch_map *a = map_shaped(64, 16), *b;
    map_add_members(a, "n", 5, NULL, 0);
    cr_assert_eq(dch_map_clone(&b, a), DCH_OK);
    cr_assert_eq(dch_map_remove_node(b, 2), DCH_OK);
    cr_assert_eq(dch_map_add_node(b, "n5", 2, NULL), DCH_OK);
    cr_assert_eq(dch_map_save_file(a, old), DCH_OK);
    cr_assert_eq(dch_map_save_file(b, target), DCH_OK);
    uint32_t n;
    cr_assert_eq(dch_map_stage_steps(a, b, 40, &n), DCH_OK);
    cr_assert(n > 2);

    char steps[256];
    tool_path(steps, sizeof steps, "steps");
    result r = TOOL_RUN("plan", old, target, "--max-slots", "40", "--write-dir", steps);
    cr_assert_eq(r.status, 0, "%s", r.err);
    char want[64];
    snprintf(want, sizeof want, "%u steps of at most 40 slots", n);
    cr_assert(strstr(r.out, want) != NULL, "%s", r.out);
    snprintf(want, sizeof want, "step %u/%u: epoch", n, n);
    cr_assert(strstr(r.out, want) != NULL, "%s", r.out);
    tool_result_free(&r);
    cr_assert_eq(tool_count_files(), 3, "the two maps and the steps' folder, nothing beside");
    cr_assert_eq(dir_count(steps, false), (int)n, "one file per step");

    /* Each file is the library's step, byte for byte. */
    dch_map *prev = a;
    for (uint32_t i = 1; i <= n; i++) {
        dch_map *step;
        cr_assert_eq(dch_map_stage_next(&step, prev, b, 40), DCH_OK);
        char path[256], name[32];
        snprintf(name, sizeof name, "steps/step-%04u.dchmap", i);
        tool_path(path, sizeof path, name);
        size_t len, flen;
        cr_assert_eq(dch_map_save(step, NULL, 0, &len), DCH_OK);
        uint8_t *bytes = malloc(len);
        cr_assert_eq(dch_map_save(step, bytes, len, &len), DCH_OK);
        char *file = file_bytes(path, &flen);
        cr_assert(flen == len && memcmp(file, bytes, len) == 0, "%s differs", name);
        free(file);
        free(bytes);
        if (prev != a)
            dch_map_free(prev);
        prev = step;
    }
    cr_assert_eq(dch_map_fingerprint(prev), dch_map_fingerprint(b));
    dch_map_free(prev);

    r = TOOL_RUN("plan", old, target, "--max-slots=40", "--json");
    cr_assert_eq(r.status, 0, "%s", r.err);
    assert_json(r.out);
    cr_assert_eq(json_number(r.out, "step_count"), n);
    const moved_sum whole = plan_of(a, b);
    cr_assert_eq(json_sum(r.out, "moved_slots"), whole.slots, "the steps move the plan");
    cr_assert_eq(json_sum(r.out, "out"), whole.slots);
    cr_assert_eq(json_sum(r.out, "in"), whole.slots);
    tool_result_free(&r);

    /* Usage errors exit 2, maps that cannot be staged 1. */
    char *const bad[][6] = {{"plan", old, target, NULL},
                            {"plan", old, target, "--max-slots", "0", NULL},
                            {"plan", old, target, "--max-slots", "x", NULL},
                            {"plan", old, "--max-slots", "4", NULL}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        r = tool_run(bad[i]);
        cr_assert_eq(r.status, 2, "case %zu: %s", i, r.err);
        tool_result_free(&r);
    }
    TOOL_EXPECT_ERR(1, "cannot stage", "plan", target, old, "--max-slots", "4");
    dch_map_free(a);
    dch_map_free(b);
}

/* With replicas and zones every --json answer stays valid JSON, names of
 * any bytes included. */
Test(cli, replicated_maps_answer_valid_json)
{
    char map[256], old[256];
    tool_path(map, sizeof map, "r.dchmap");
    tool_path(old, sizeof old, "old.dchmap");
    result r = TOOL_RUN("init", map, "--units", "16", "--slots", "8", "--replicas", "3", "--json");
    cr_assert_eq(r.status, 0, "%s", r.err);
    assert_json(r.out);
    tool_result_free(&r);
    char *const adds[][2] = {{"q\"uote", "z\\1"}, {"caf\xc3\xa9", "z\xff"}, {"c", "z\\1"},
                             {"d", "zone d"}};
    for (size_t k = 0; k < sizeof adds / sizeof adds[0]; k++) {
        r = tool_run((char *const[]){"add", map, "--json", "--zone", adds[k][1], "--", adds[k][0],
                                     NULL});
        cr_assert_eq(r.status, 0, "add %zu: %s", k, r.err);
        assert_json(r.out);
        tool_result_free(&r);
    }
    dch_map *m = map_load_path(map);
    cr_assert_eq(dch_map_save_file(m, old), DCH_OK);
    dch_map_free(m);
    r = TOOL_RUN("remove", map, "c", "--json");
    cr_assert_eq(r.status, 0, "%s", r.err);
    assert_json(r.out);
    tool_result_free(&r);
    char *const reads[][6] = {{"show", map, "--json", NULL},
                              {"lookup", map, "--json", "k1", "k\xff", NULL},
                              {"diff", old, map, "--json", NULL}};
    for (size_t k = 0; k < sizeof reads / sizeof reads[0]; k++) {
        r = tool_run(reads[k]);
        cr_assert_eq(r.status, 0, "%s: %s", reads[k][0], r.err);
        assert_json(r.out);
        cr_assert(strstr(r.out, k == 0 ? "\"zone\": \"z\\\\1\"" : "copies") != NULL, "%s: %s",
                  reads[k][0], r.out);
        tool_result_free(&r);
    }
}
