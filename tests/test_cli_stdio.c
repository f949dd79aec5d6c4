/* SPDX-License-Identifier: MIT */
/*
 * Tests of dchctl's standard input and output. A FILE '-' is standard input
 * for every command that reads a map, and standard output for one that
 * writes it (init's FILE, --out, or FILE '-' of a change without --out);
 * then the report goes to standard error, so changes chain through pipes.
 * `lookup MAP -` answers keys read from standard input, a line each, checked
 * here against the library key by key. And the tool ends with status 1,
 * leaving no file half written, when the reader of its output goes away.
 *
 * The tool runs through support's tool_run_in (standard input from a
 * file), and through pipeline (tools chained by pipes) and
 * run_to_closed_pipe, built from support's tool_exec, tool_wait and
 * tool_collect; each in the fixture's directory, so that "./-" names a file
 * there.
 */
#define _XOPEN_SOURCE 700 /* posix_openpt */

#include <criterion/criterion.h>

#include "cli_maps.h"
#include "dch/dch.h"
#include "support.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- Running the tool with standard input and output ------------------ */


/* n tools chained as a shell chains `a | b | c`: the first reads nothing,
 * each next one reads the output of the one before, and the run holds the
 * last one's output and every one's errors; each exit status in status[]. */
static tool_result pipeline(size_t n, char *const *const cmds[], int status[])
{
    char po[128], pe[128];
    tool_path(po, sizeof po, ".out");
    tool_path(pe, sizeof pe, ".err");
    const int o = tool_capture(po), e = tool_capture(pe);
    pid_t pid[8];
    cr_assert(n >= 1 && n <= 8);
    int in = -1;
    fflush(NULL);
    for (size_t k = 0; k < n; k++) {
        int p[2] = {-1, -1};
        if (k + 1 < n) {
            cr_assert_eq(pipe(p), 0);
            fcntl(p[0], F_SETFD, FD_CLOEXEC);
            fcntl(p[1], F_SETFD, FD_CLOEXEC);
        }
        pid[k] = fork();
        cr_assert_neq(pid[k], -1);
        if (pid[k] == 0)
            tool_exec(in, k + 1 < n ? p[1] : o, e, cmds[k]);
        if (in >= 0)
            close(in);
        if (k + 1 < n) {
            close(p[1]);
            in = p[0];
        }
    }
    close(o);
    close(e);
    for (size_t k = 0; k < n; k++)
        status[k] = tool_wait(pid[k]);
    return tool_collect(status[n - 1], po, pe);
}

/*
 * The tool with standard output a pipe whose reader reads `keep` bytes and
 * goes away. With keep 0 the read end is closed before the tool starts, so
 * its first write fails, however small. Its exit status (-1: a signal);
 * standard error in *err.
 */
static int run_to_closed_pipe(const char *in, size_t keep, char *const *args, char **err)
{
    char po[128], pe[128];
    tool_path(po, sizeof po, ".out");
    tool_path(pe, sizeof pe, ".err");
    int p[2];
    cr_assert_eq(pipe(p), 0);
    fcntl(p[0], F_SETFD, FD_CLOEXEC);
    fcntl(p[1], F_SETFD, FD_CLOEXEC);
    if (keep == 0)
        close(p[0]);
    const int i = in != NULL ? open(in, O_RDONLY | O_CLOEXEC) : -1;
    const int e = tool_capture(pe);
    fflush(NULL);
    const pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0)
        tool_exec(i, p[1], e, args);
    close(p[1]);
    for (size_t got = 0; keep > 0 && got < keep;) {
        char buf[512];
        const ssize_t n = read(p[0], buf, sizeof buf);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    if (keep > 0)
        close(p[0]);
    if (i >= 0)
        close(i);
    close(e);
    write_file(po, "", 0);
    tool_result r = tool_collect(tool_wait(pid), po, pe);
    free(r.out);
    *err = r.err;
    return r.status;
}

/* ---- Maps, keys and the library's answers ----------------------------- */

/* The roles of the tests' files, in the order of the fields of `files`,
 * and the name of each in the fixture's directory. */
static const char *const file_names[] = {
    "bad.bin", "copy.dchmap", "-", "dry.dchmap", "fleet.txt", "keys.txt", "m.dchmap",
    "no-such-dir/out.dchmap", "next.dchmap", "old.dchmap", "out.dchmap", "steps", "new.dchmap"};
#define FILE_ROLES (sizeof file_names / sizeof file_names[0])

/* The files of the tests, in the fixture's directory: one name for each
 * role, so that every test calls the same file by the same name. A role is
 * a field, and at[k] is the k-th field: char arrays have no padding between
 * them, and the assertions below keep the fields and the names in step. */
typedef union files {
    struct {
        char bad[256], copy[256], dash[256], dry[256], fleet[256], keyfile[256], map[256];
        char missing[256], next[256], old[256], out[256], steps[256], target[256];
    };
    char at[FILE_ROLES][256];
} files;
_Static_assert(sizeof(files) == FILE_ROLES * 256, "a name for every role, a role for every name");
_Static_assert(offsetof(files, target) == (FILE_ROLES - 1) * 256, "the roles are packed in order");

/* The files of the running test, named by the suite's init. */
static files fx;

static void files_init(void)
{
    tool_fixture_init();
    for (size_t k = 0; k < FILE_ROLES; k++)
        tool_path(fx.at[k], sizeof fx.at[k], file_names[k]);
}

TestSuite(cli_stdio, .init = files_init, .fini = tool_fixture_fini);

/* A 16 x 8 map of `replicas` copies with members m0 .. m<n-1> of weight 1
 * .. 3 (in zones z0 .. z2 when zoned), saved at path by the library. */
static dch_map *make_map(const char *path, uint32_t replicas, unsigned n, bool zoned)
{
    dch_map *m = map_with_copies(16, 8, replicas);
    map_add_cycled_members(m, "m", n, zoned ? 3 : 0);
    cr_assert_eq(dch_map_save_file(m, path), DCH_OK);
    return m;
}

/* The map a test changes: make_map's, at fx.map, and the bytes saved
 * there, to show what the file held before. */
typedef struct saved {
    dch_map *m;
    uint8_t *bytes;
    size_t len;
} saved;

static saved saved_map(uint32_t replicas, unsigned n, bool zoned)
{
    saved s = {make_map(fx.map, replicas, n, zoned), NULL, 0};
    s.bytes = map_bytes(s.m, &s.len);
    return s;
}

/* Whether fx.map still holds the bytes it was saved with. */
static bool saved_unchanged(const saved *s)
{
    return file_holds(fx.map, s->bytes, s->len);
}

static void saved_free(saved *s)
{
    free(s->bytes);
    dch_map_free(s->m);
}

/* A clone of m with one more member, `name` of weight 2, saved at path. */
static dch_map *one_more(const dch_map *m, const char *name, const char *path)
{
    dch_map *n = map_clone_of(m);
    cr_assert_eq(dch_map_add_node(n, name, 2, NULL), DCH_OK);
    cr_assert_eq(dch_map_save_file(n, path), DCH_OK);
    return n;
}

static dch_map *load_bytes(const char *bytes, size_t len, const char *what)
{
    dch_map *m = NULL;
    cr_assert_eq(dch_map_load(&m, bytes, len), DCH_OK, "%s: not a map (%zu bytes)", what, len);
    return m;
}

static bool has_member(const dch_map *m, const char *name)
{
    uint32_t id;
    return dch_map_find_node(m, name, &id) == DCH_OK;
}

/* A growing byte buffer. */
typedef struct bytes {
    char *p;
    size_t n, cap;
} bytes;

static void put(bytes *b, const void *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        b->cap = 2 * (b->n + n + 1);
        b->p = xrealloc(b->p, b->cap);
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

static void put_str(bytes *b, const char *s)
{
    put(b, s, strlen(s));
}

/* What lookup prints for a key, from the library's own lookups (not the
 * tool's call): the key with control bytes as \xNN, then a tab and a name
 * for every copy, primary first ("-" for no owner). */
static void expect_answer(bytes *b, const dch_map *m, const char *key, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        const unsigned char c = (unsigned char)key[i];
        char esc[8];
        snprintf(esc, sizeof esc, "\\x%02x", c);
        if (c < 0x20 || c == 0x7f)
            put_str(b, esc);
        else
            put(b, &key[i], 1);
    }
    dch_map_config cfg;
    dch_map_get_config(m, &cfg);
    uint32_t ids[DCH_MAP_MAX_REPLICAS];
    size_t n = 1;
    if (cfg.replicas > 1)
        n = dch_map_slot_replicas(m, dch_map_slot_of(m, dch_map_hash(m, key, len)), ids,
                                  DCH_MAP_MAX_REPLICAS);
    else
        ids[0] = dch_map_lookup(m, key, len);
    for (size_t c = 0; c < n; c++) {
        const char *name = dch_map_node_name(m, ids[c]);
        put_str(b, "\t");
        put_str(b, name != NULL ? name : "-");
    }
    put_str(b, "\n");
}

/* Fail at the first line where the tool's answers and the library's part. */
static void assert_same_answers(const tool_result *r, const bytes *want, uint64_t seed)
{
    if (r->outlen == want->n && memcmp(r->out, want->p, want->n) == 0)
        return;
    size_t at = 0, line = 1;
    while (at < r->outlen && at < want->n && r->out[at] == want->p[at])
        line += r->out[at++] == '\n';
    cr_assert_fail("seed %llu: answer line %zu differs from the library's (%zu bytes vs %zu)\n"
                   "tool:    %.80s\nlibrary: %.80s",
                   (unsigned long long)seed, line, r->outlen, want->n, r->out + at,
                   want->p + at);
}

/*
 * n random keys: any bytes but "\n" (NUL, TAB, "\r", bytes that are not
 * UTF-8), 0 to 40 of them, written a line each, ended by "\n" or "\r\n" at
 * random ("\r\n" always after a key that ends in "\r", which "\n" alone
 * would lose), the last one nonempty and unended. The keys go to *keys,
 * each followed by its length as a size_t, for walking.
 */
static void random_keys(const char *path, size_t n, uint64_t *rng, bytes *keys)
{
    bytes file = {NULL, 0, 0};
    for (size_t k = 0; k < n; k++) {
        char key[41];
        size_t len = rng_below(rng, 41);
        if (k + 1 == n && len == 0)
            len = 1;
        for (size_t i = 0; i < len; i++) {
            const uint32_t r = rng_below(rng, 8);
            key[i] = (char)(r < 5 ? 'a' + rng_below(rng, 26) : rng_below(rng, 256));
            if (key[i] == '\n')
                key[i] = 'n';
        }
        put(&file, key, len);
        if (k + 1 < n)
            put_str(&file, (len > 0 && key[len - 1] == '\r') || rng_below(rng, 2) ? "\r\n" : "\n");
        put(keys, &len, sizeof len);
        put(keys, key, len);
    }
    write_file(path, file.p, file.n);
    free(file.p);
}

/* ---- Reading a map from standard input -------------------------------- */

/* Standard output after its first line, which names the input. */
static const char *after_first_line(const char *s)
{
    const char *nl = strchr(s, '\n');
    return nl != NULL ? nl + 1 : s;
}

Test(cli_stdio, every_reading_command_takes_the_map_from_standard_input)
{
    dch_map *m = make_map(fx.map, 1, 5, false), *n = one_more(m, "late", fx.next);
    const char *servers = "10.0.0.1:11211 1\n10.0.0.2 2\n10.0.0.3:11212\n";
    write_file(fx.fleet, servers, strlen(servers));
    /* Each command on a file, then on standard input: the same answer, but
     * the first line of some, which names the input. */
    struct {
        char *file[8], *dash[8];
        const char *in;
        bool named;
    } cases[] = {
        {{"show", fx.map}, {"show", "-"}, fx.map, true},
        {{"show", fx.map, "--json"}, {"show", "-", "--json"}, fx.map, false},
        {{"lookup", fx.map, "a", "b", "", "ccc"}, {"lookup", "-", "a", "b", "", "ccc"}, fx.map,
         false},
        {{"verify", fx.map}, {"verify", "-"}, fx.map, false},
        {{"fingerprint", fx.map}, {"fingerprint", "-"}, fx.map, false},
        {{"fingerprint", fx.map, "--json"}, {"fingerprint", "-", "--json"}, fx.map, false},
        {{"diff", fx.map, fx.next}, {"diff", "-", fx.next}, fx.map, true},
        {{"diff", fx.map, fx.next}, {"diff", fx.map, "-"}, fx.next, true},
        {{"plan", fx.map, fx.next, "--max-slots", "3"},
         {"plan", "-", fx.next, "--max-slots", "3"}, fx.map, true},
        {{"plan", fx.map, fx.next, "--max-slots", "3"},
         {"plan", fx.map, "-", "--max-slots", "3"}, fx.next, true},
        {{"compare-ketama", fx.fleet}, {"compare-ketama", "-"}, fx.fleet, false},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        tool_result a = tool_run_in(NULL, cases[k].file), b = tool_run_in(cases[k].in, cases[k].dash);
        cr_assert_eq(a.status, 0, "case %zu on a file: %s", k, a.err);
        cr_assert_eq(b.status, 0, "case %zu on standard input: %s", k, b.err);
        if (strcmp(cases[k].file[0], "verify") == 0) {
            cr_assert(strncmp(b.out, "standard input: ok: ", 20) == 0, "%s", b.out);
            cr_assert_str_eq(strstr(a.out, ": ok: "), strstr(b.out, ": ok: "));
        } else if (strstr(b.out, "\"file\": \"-\"") != NULL) {
            cr_assert_str_eq(strchr(a.out, ','), strchr(b.out, ','), "case %zu", k);
        } else if (cases[k].named) {
            cr_assert(strstr(b.out, "standard input") != NULL, "case %zu: %s", k, b.out);
            cr_assert_str_eq(after_first_line(a.out), after_first_line(b.out), "case %zu", k);
        } else {
            cr_assert_str_eq(a.out, b.out, "case %zu", k);
        }
        tool_result_free(&a);
        tool_result_free(&b);
    }
    dch_map_free(m);
    dch_map_free(n);
}

/* Bytes on standard input that are no map fail every reader with status 1
 * and a message naming standard input, and nothing on standard output. */
Test(cli_stdio, bad_map_bytes_on_standard_input_are_runtime_errors)
{
    saved good = saved_map(1, 3, false);
    cr_assert_eq(dch_map_save_file(good.m, fx.next), DCH_OK);
    const size_t len = good.len;
    char *const cases[][7] = {
        {"show", "-", NULL},           {"lookup", "-", "k", NULL},
        {"verify", "-", NULL},         {"fingerprint", "-", NULL},
        {"diff", "-", fx.next, NULL},     {"diff", fx.next, "-", NULL},
        {"plan", "-", fx.next, "--max-slots", "2", NULL},
        {"add", "-", "x", NULL},       {"remove", "-", "m0", NULL},
        {"weight", "-", "m0", "5", NULL}, {"add", "-", "x", "--out", "-", NULL},
    };
    /* Empty, not a map, cut short, a flipped byte, a byte too many; each
     * command under a reduced scale (valgrind) meets one or two of them. */
    const size_t stride = test_scale() < 1 ? 4 : 1;
    for (int damage = 0; damage < 5; damage++) {
        uint8_t *b = xmalloc(len + 1);
        memcpy(b, good.bytes, len);
        b[len] = 0;
        size_t n = damage == 0 ? 0 : damage == 2 ? len - 1 : damage == 4 ? len + 1 : len;
        if (damage == 1) {
            n = 18;
            memcpy(b, "this is not a map\n", n);
        }
        if (damage == 3)
            b[len / 2] ^= 0x10;
        write_file(fx.bad, b, n);
        free(b);
        for (size_t k = (size_t)damage % stride; k < sizeof cases / sizeof cases[0]; k += stride) {
            tool_result r = tool_run_in(fx.bad, cases[k]);
            cr_assert_eq(r.status, 1, "damage %d, %s: status %d", damage, cases[k][0], r.status);
            cr_assert(strstr(r.err, "dchctl: standard input: ") != NULL, "damage %d, %s: %s",
                      damage, cases[k][0], r.err);
            cr_assert_eq(r.outlen, 0, "damage %d, %s wrote %s", damage, cases[k][0], r.out);
            tool_result_free(&r);
        }
    }
    write_file(fx.bad, "garbage", 7);
    tool_result r = TOOL_RUN_IN(fx.bad, "verify", "-", "--json");
    cr_assert_eq(r.status, 1);
    cr_assert(strstr(r.out, "\"file\": \"-\", \"ok\": false") != NULL, "%s", r.out);
    tool_result_free(&r);
    saved_free(&good);
}

/* ---- Writing a map to standard output ----------------------------------- */

/* A change made with the map on standard input writes to standard output
 * the very bytes it writes to a file, and its report to standard error. */
Test(cli_stdio, changes_read_and_write_standard_streams_as_they_do_files)
{
    saved start = saved_map(3, 6, true);
    char *const changes[][6] = {
        {"add", "NEW", "x", "--zone", "z1", NULL},
        {"remove", "NEW", "m2", NULL},
        {"weight", "NEW", "m4", "7", NULL},
    };
    for (size_t k = 0; k < 3; k++) {
        char *file[8] = {0}, *dash[8] = {0}, *to_out[8] = {0};
        for (int i = 0; changes[k][i] != NULL; i++) {
            const bool at = strcmp(changes[k][i], "NEW") == 0;
            file[i] = at ? fx.copy : changes[k][i];
            dash[i] = to_out[i] = at ? "-" : changes[k][i];
        }
        write_file(fx.copy, start.bytes, start.len);
        tool_result f = tool_run_in(NULL, file);
        cr_assert_eq(f.status, 0, "%s on a file: %s", file[0], f.err);
        size_t want_len;
        char *want = slurp(fx.copy, &want_len);

        tool_result s = tool_run_in(fx.map, dash);
        cr_assert_eq(s.status, 0, "%s - : %s", file[0], s.err);
        cr_assert(s.outlen == want_len && memcmp(s.out, want, want_len) == 0,
                  "%s -: standard output is not the map the file got", file[0]);
        cr_assert(strstr(s.err, "plan: ") && strstr(s.err, "standard output now at epoch"),
                  "%s -: the report is not on standard error: %s", file[0], s.err);

        /* FILE '-' with --out OUT: the map to OUT, the report to stdout. */
        int i = 0;
        while (to_out[i] != NULL)
            i++;
        to_out[i] = "--out";
        to_out[i + 1] = fx.out;
        tool_result o = tool_run_in(fx.map, to_out);
        cr_assert_eq(o.status, 0, "%s - --out: %s", file[0], o.err);
        cr_assert(file_holds(fx.out, want, want_len), "%s - --out OUT: OUT is not the map",
                  file[0]);
        cr_assert(strstr(o.out, "plan: ") && strstr(o.out, fx.out), "%s", o.out);
        cr_assert(saved_unchanged(&start), "the input map changed");
        free(want);
        tool_result_free(&f);
        tool_result_free(&s);
        tool_result_free(&o);
    }
    tool_result j = TOOL_RUN_IN(fx.map, "add", "-", "y", "--json");
    cr_assert_eq(j.status, 0, "%s", j.err);
    cr_assert(strstr(j.err, "{\"file\": \"-\", \"change\": \"add\"") != NULL, "%s", j.err);
    dch_map *got = load_bytes(j.out, j.outlen, "add - --json");
    cr_assert(has_member(got, "y"), "no member %s", "y");
    dch_map_free(got);
    tool_result_free(&j);
    saved_free(&start);
}

/* --out writes the new map to another file, atomically, or with '-' to
 * standard output, and leaves FILE as it was. */
Test(cli_stdio, out_writes_elsewhere_and_leaves_the_file_alone)
{
    saved start = saved_map(1, 4, false);
    write_file(fx.copy, start.bytes, start.len);
    tool_result r = TOOL_RUN_IN(NULL, "add", fx.copy, "x", "--weight", "2");
    tool_result_free(&r);
    size_t want_len;
    char *want = slurp(fx.copy, &want_len);

    write_file(fx.out, "old contents", 12); /* replaced whole */
    r = TOOL_RUN_IN(NULL, "add", fx.map, "x", "--weight", "2", "--out", fx.out, "--json");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "\"out\": \"") && strstr(r.out, "\"written\": true"), "%s", r.out);
    cr_assert(file_holds(fx.out, want, want_len), "--out FILE is not the changed map");
    tool_result_free(&r);
    r = TOOL_RUN_IN(NULL, "add", fx.map, "x", "--weight", "2", "--out", "-");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(r.outlen == want_len && memcmp(r.out, want, want_len) == 0, "--out -");
    cr_assert(strstr(r.err, "standard output now at epoch") != NULL, "%s", r.err);
    tool_result_free(&r);
    r = TOOL_RUN_IN(NULL, "add", fx.map, "x", "--out", fx.missing);
    cr_assert_eq(r.status, 1);
    cr_assert(strstr(r.err, fx.missing) != NULL, "%s", r.err);
    tool_result_free(&r);
    /* --dry-run writes nothing, to OUT or to standard output. */
    r = TOOL_RUN_IN(NULL, "add", fx.map, "x", "--out", fx.dry, "--dry-run");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "dry run: ") != NULL, "%s", r.out);
    tool_result_free(&r);
    r = TOOL_RUN_IN(fx.map, "add", "-", "x", "--dry-run");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strncmp(r.out, "dry run: add x", 14) == 0, "no map, the report: %s", r.out);
    tool_result_free(&r);
    TOOL_EXPECT_IN(2, NULL, "add", fx.map, "x", "--out", "");

    cr_assert(saved_unchanged(&start), "FILE changed");
    cr_assert_eq(tool_count_files(), 3, "m, copy and out: no temporary or dry-run file is left");
    free(want);
    saved_free(&start);
}

Test(cli_stdio, init_dash_writes_the_new_map_to_standard_output)
{
    tool_result f = TOOL_RUN_IN(NULL, "init", fx.map, "--units", "32", "--slots", "4", "--replicas", "2");
    cr_assert_eq(f.status, 0, "%s", f.err);
    tool_result s = TOOL_RUN_IN(NULL, "init", "-", "--units", "32", "--slots", "4", "--replicas", "2");
    cr_assert_eq(s.status, 0, "%s", s.err);
    cr_assert(file_holds(fx.map, s.out, s.outlen), "init - and init FILE differ");
    cr_assert(strncmp(s.err, "standard output: new map, 32 units of 4 slots", 45) == 0, "%s",
              s.err);
    dch_map *m = load_bytes(s.out, s.outlen, "init -");
    cr_assert_eq(dch_map_slot_count(m), 128);
    cr_assert_eq(dch_map_node_count(m), 0);
    dch_map_free(m);
    tool_result_free(&f);
    tool_result_free(&s);
    cr_assert_eq(tool_count_files(), 1, "init - made no file");
}

/* The pipeline of the help, and a longer one, agree with the same changes
 * made on a file: equal fingerprints. */
Test(cli_stdio, changes_chain_through_pipes)
{
    char *const *const spec[] = {
        (char *const[]){"init", "-", NULL},
        (char *const[]){"add", "-", "node-a", NULL},
        (char *const[]){"add", "-", "node-b", NULL},
        (char *const[]){"show", "-", NULL},
    };
    int st[8];
    tool_result r = pipeline(4, spec, st);
    for (int k = 0; k < 4; k++)
        cr_assert_eq(st[k], 0, "stage %d: %s", k, r.err);
    cr_assert(strstr(r.out, "file:          standard input\n") && strstr(r.out, " node-a ") &&
                  strstr(r.out, " node-b ") && strstr(r.out, "members:       2,"),
              "%s", r.out);
    tool_result_free(&r);

    char *const *const chain[] = {
        (char *const[]){"init", "-", "--units", "16", "--slots", "8", "--replicas", "2", NULL},
        (char *const[]){"add", "-", "a", "--zone", "z1", NULL},
        (char *const[]){"add", "-", "b", "--weight", "3", "--zone", "z2", NULL},
        (char *const[]){"add", "-", "c", "--zone", "z1", NULL},
        (char *const[]){"remove", "-", "a", NULL},
        (char *const[]){"weight", "-", "b", "2", NULL},
        (char *const[]){"fingerprint", "-", NULL},
    };
    r = pipeline(7, chain, st);
    for (int k = 0; k < 7; k++)
        cr_assert_eq(st[k], 0, "stage %d: %s", k, r.err);
    for (int k = 0; k < 6; k++) {
        char *args[12] = {0};
        for (int i = 0; chain[k][i] != NULL; i++)
            args[i] = strcmp(chain[k][i], "-") == 0 ? fx.map : chain[k][i];
        tool_result f = tool_run_in(NULL, args);
        cr_assert_eq(f.status, 0, "%s: %s", args[0], f.err);
        tool_result_free(&f);
    }
    dch_map *m;
    cr_assert_eq(dch_map_load_file(&m, fx.map), DCH_OK);
    char want[32];
    snprintf(want, sizeof want, "%016llx\n", (unsigned long long)dch_map_fingerprint(m));
    cr_assert_str_eq(r.out, want, "the pipeline and the file disagree");
    tool_result_free(&r);
    dch_map_free(m);

    /* A stage that fails sends nothing down the pipe: the next one fails
     * too, naming standard input, rather than reading half a map. */
    char *const *const broken[] = {
        (char *const[]){"init", "-", NULL},
        (char *const[]){"remove", "-", "nobody", NULL},
        (char *const[]){"show", "-", NULL},
    };
    r = pipeline(3, broken, st);
    cr_assert(st[0] == 0 && st[1] == 1 && st[2] == 1, "statuses %d %d %d", st[0], st[1], st[2]);
    cr_assert(strstr(r.err, "no such member") && strstr(r.err, "standard input"), "%s", r.err);
    tool_result_free(&r);
}

/* ---- Usage ------------------------------------------------------------ */

Test(cli_stdio, standard_input_is_read_once_and_dash_after_dashdash_is_a_name)
{
    dch_map *m = make_map(fx.map, 1, 3, false);
    char *const twice[][7] = {
        {"diff", "-", "-", NULL},
        {"plan", "-", "-", "--max-slots", "4", NULL},
        {"lookup", "-", "-", NULL},
        {"add", "-", "-", NULL},
        {"lookup", fx.map, "k", "-", NULL},
        {"add", fx.map, "-", NULL},
    };
    for (size_t k = 0; k < sizeof twice / sizeof twice[0]; k++) {
        tool_result r = tool_run_in(fx.map, twice[k]);
        cr_assert_eq(r.status, 2, "case %zu: status %d", k, r.status);
        cr_assert(strstr(r.err, "usage: dchctl ") != NULL, "case %zu: %s", k, r.err);
        cr_assert(k >= 4 || strstr(r.err, "'-' (standard input) given twice") != NULL, "%s",
                  r.err);
        cr_assert_eq(r.outlen, 0);
        tool_result_free(&r);
    }
    /* After --, '-' is a key or a name, and ./- a file called "-". */
    tool_result r = TOOL_RUN_IN(NULL, "lookup", fx.map, "--", "-");
    bytes want = {NULL, 0, 0};
    expect_answer(&want, m, "-", 1);
    cr_assert_str_eq(r.out, want.p);
    tool_result_free(&r);
    write_file(fx.dash, "", 0);
    r = TOOL_RUN_IN(NULL, "init", "./-", "--force");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strncmp(r.out, "./-: new map", 12) == 0, "%s", r.out);
    tool_result_free(&r);
    r = TOOL_RUN_IN(NULL, "add", "--", "-", "-");
    cr_assert_eq(r.status, 0, "add -- - - adds member - to the file -: %s", r.err);
    tool_result_free(&r);
    dch_map *d;
    cr_assert_eq(dch_map_load_file(&d, fx.dash), DCH_OK);
    cr_assert(has_member(d, "-"), "no member %s", "-");
    dch_map_free(d);
    free(want.p);
    dch_map_free(m);
}

Test(cli_stdio, help_tells_of_dash_and_out)
{
    const char *cmds[] = {"init", "add", "remove", "weight", "show", "lookup",
                          "diff", "plan", "verify", "fingerprint", "compare-ketama"};
    /* Every command but under a reduced scale (valgrind), a run a second. */
    for (size_t k = 0; k < sizeof cmds / sizeof cmds[0]; k += test_scale() < 1 ? 3 : 1) {
        tool_result r = TOOL_RUN_IN(NULL, "help", (char *)cmds[k]);
        cr_assert_eq(r.status, 0);
        cr_assert(strstr(r.out, "'-'") != NULL, "help %s: %s", cmds[k], r.out);
        cr_assert((k < 1 || k > 3) || strstr(r.out, "--out OUT") != NULL, "help %s", cmds[k]);
        tool_result_free(&r);
    }
}

/* ---- lookup MAP - ----------------------------------------------------- */

/* Every line of standard input answered in order, as the library places
 * each key, in maps of one copy and of three copies in zones. */
Test(cli_stdio, lookup_answers_each_line_of_standard_input_as_the_library)
{
    const uint64_t seed = test_seed(0x5eedc11);
    uint64_t rng = seed;
    const size_t n = test_scaled(20000, 2000);
    for (uint32_t replicas = 1; replicas <= 3; replicas += 2) {
        dch_map *m = make_map(fx.map, replicas, 7, replicas > 1);
        bytes keys = {NULL, 0, 0}, want = {NULL, 0, 0};
        random_keys(fx.keyfile, n, &rng, &keys);
        for (size_t at = 0; at < keys.n;) {
            size_t len;
            memcpy(&len, keys.p + at, sizeof len);
            expect_answer(&want, m, keys.p + at + sizeof len, len);
            at += sizeof len + len;
        }
        tool_result r = TOOL_RUN_IN(fx.keyfile, "lookup", fx.map, "-");
        cr_assert_eq(r.status, 0, "seed %llu: %s", (unsigned long long)seed, r.err);
        assert_same_answers(&r, &want, seed);
        tool_result_free(&r);
        r = TOOL_RUN_IN(fx.keyfile, "lookup", fx.map, "-", "--json");
        cr_assert_eq(r.status, 0, "%s", r.err);
        size_t answers = 0;
        for (const char *p = r.out; (p = strstr(p, "{\"key\": ")) != NULL; p++)
            answers++;
        cr_assert_eq(answers, n, "--json: %zu answers to %zu keys", answers, n);
        cr_assert(r.out[0] == '[' && strcmp(r.out + r.outlen - 4, "}\n]\n") == 0);
        tool_result_free(&r);
        free(keys.p);
        free(want.p);
        dch_map_free(m);
    }
}

/* The line endings: "\n" and "\r\n" end a line, an empty line is the empty
 * key, a "\r" without "\n" is the key's, and a last line needs no "\n". The
 * answers to keys on standard input are those to the same keys given as
 * arguments. */
Test(cli_stdio, lookup_reads_empty_and_crlf_lines_as_documented)
{
    dch_map *m = make_map(fx.map, 1, 9, false);
    static const char lines[] = "\n\r\na\r\nb\n\nc\rd\ne\r";
    write_file(fx.keyfile, lines, sizeof lines - 1);
    const char *keys[] = {"", "", "a", "b", "", "c\rd", "e\r"};
    bytes want = {NULL, 0, 0};
    for (int k = 0; k < 7; k++)
        expect_answer(&want, m, keys[k], strlen(keys[k]));
    tool_result r = TOOL_RUN_IN(fx.keyfile, "lookup", fx.map, "-");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_str_eq(r.out, want.p);
    tool_result_free(&r);
    r = TOOL_RUN_IN(NULL, "lookup", fx.map, "", "", "a", "b", "", "c\rd", "e\r");
    cr_assert_str_eq(r.out, want.p, "arguments and standard input differ");
    tool_result_free(&r);

    write_file(fx.keyfile, "", 0);
    r = TOOL_RUN_IN(fx.keyfile, "lookup", fx.map, "-");
    cr_assert(r.status == 0 && r.outlen == 0, "no key, no answer: %s", r.out);
    tool_result_free(&r);
    r = TOOL_RUN_IN(fx.keyfile, "lookup", fx.map, "-", "--json");
    cr_assert_str_eq(r.out, "[]\n");
    tool_result_free(&r);
    write_file(fx.keyfile, "nul\0key\n", 8);
    r = TOOL_RUN_IN(fx.keyfile, "lookup", fx.map, "-", "--json");
    cr_assert(strstr(r.out, "{\"key\": \"nul\\u0000key\", ") != NULL, "%s", r.out);
    tool_result_free(&r);
    free(want.p);
    dch_map_free(m);
}

/* ---- When the reader goes away ---------------------------------------- */

Test(cli_stdio, a_reader_that_goes_away_ends_the_tool_with_status_1)
{
    saved start = saved_map(1, 4, false);
    uint64_t rng = 7;
    bytes keys = {NULL, 0, 0};
    random_keys(fx.keyfile, 20000, &rng, &keys);
    char *err;
    /* Closed at once, and after a first block has been read. */
    for (size_t keep = 0; keep <= 4096; keep += 4096) {
        const int st = run_to_closed_pipe(fx.keyfile, keep,
                                          (char *const[]){"lookup", fx.map, "-", NULL}, &err);
        cr_assert_eq(st, 1, "keep %zu: status %d (-1: killed by a signal)", keep, st);
        cr_assert_str_eq(err, "", "a reader that went away needs no message");
        free(err);
    }
    char *const cases[][6] = {
        {"show", fx.map, NULL},
        {"add", fx.map, "x", "--out", "-", NULL},
        {"add", "-", "x", NULL},
        {"init", "-", NULL},
        {"fingerprint", "-", NULL},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const int st = run_to_closed_pipe(fx.map, 0, cases[k], &err);
        cr_assert_eq(st, 1, "%s %s: status %d", cases[k][0], cases[k][1], st);
        free(err);
    }
    /* The map goes to --out FILE whole; only the report fails. */
    const int st = run_to_closed_pipe(
        NULL, 0, (char *const[]){"add", fx.map, "y", "--out", fx.out, NULL}, &err);
    cr_assert_eq(st, 1, "status %d", st);
    free(err);
    dch_map *o;
    cr_assert_eq(dch_map_load_file(&o, fx.out), DCH_OK, "--out FILE is not a whole map");
    cr_assert(has_member(o, "y"), "no member %s", "y");
    dch_map_free(o);
    cr_assert(saved_unchanged(&start), "FILE changed");
    cr_assert_eq(tool_count_files(), 3, "map, keys and out: nothing else");
    free(keys.p);
    saved_free(&start);
}

/* A map is binary: it is not written to a terminal. */
Test(cli_stdio, a_map_is_not_written_to_a_terminal)
{
    const int master = posix_openpt(O_RDWR | O_NOCTTY);
    if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0)
        cr_skip_test("no pseudo-terminal here");
    const int tty = open(ptsname(master), O_RDWR | O_NOCTTY | O_CLOEXEC);
    cr_assert_geq(tty, 0);
    char pe[128];
    tool_path(pe, sizeof pe, ".err");
    const int e = tool_capture(pe);
    fflush(NULL);
    const pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0)
        tool_exec(-1, tty, e, (char *const[]){"init", "-", NULL});
    close(tty);
    close(e);
    const int st = tool_wait(pid);
    char *err = slurp(pe, NULL);
    cr_assert_eq(st, 1, "status %d", st);
    cr_assert(strstr(err, "standard output is a terminal") != NULL, "%s", err);
    free(err);
    close(master);
}

/* The etcd commands, when built, read the map from standard input too (an
 * etcd is not needed to see them refuse bad bytes, naming the input). */
Test(cli_stdio, etcd_commands_read_standard_input)
{
    tool_result h = TOOL_RUN_IN(NULL, "--help");
    const bool etcd = strstr(h.out, "publish") != NULL;
    tool_result_free(&h);
    if (!etcd)
        cr_skip_test("dchctl has no etcd commands in this build");
    write_file(fx.bad, "not a map", 9);
    char *const cases[][10] = {
        {"publish", "--etcd", "http://127.0.0.1:9", "--key", "k", "-", NULL},
        {"rollout", "--etcd", "http://127.0.0.1:9", "--key", "k", "-", "--max-slots", "4", NULL},
    };
    for (size_t k = 0; k < 2; k++) {
        tool_result r = tool_run_in(fx.bad, cases[k]);
        cr_assert_eq(r.status, 1, "%s: status %d", cases[k][0], r.status);
        cr_assert(strstr(r.err, ": standard input: ") != NULL, "%s: %s", cases[k][0], r.err);
        tool_result_free(&r);
    }
    tool_result r = TOOL_RUN_IN(NULL, "help", "fetch");
    cr_assert(strstr(r.out, "FILE '-' writes the map to standard output") != NULL, "%s", r.out);
    tool_result_free(&r);
}

/*
 * `dchctl plan OLD NEW --write-dir DIR | head`: the steps are written whole
 * or not at all. They are put in place before the report, so a reader that
 * goes away stops the report alone (status 1, no message) and DIR holds
 * every step, each the library's; nothing else is left beside it.
 */
Test(cli_stdio, a_plan_whose_reader_goes_away_writes_all_its_steps)
{
    dch_map *a = make_map(fx.old, 1, 4, false), *b = one_more(a, "m9", fx.target);
    uint32_t n;
    cr_assert_eq(dch_map_stage_steps(a, b, 1, &n), DCH_OK);
    /* Steps of 1 slot: a report longer than stdio's buffer, so that a
     * report written before the steps would fail before the last one. */
    cr_assert(n > 20, "%u steps: too few to stop half-way", n);
    char *err;
    /* The reader closed before the tool starts: its first write fails. (A
     * reader that reads a little first would see the whole small report,
     * written at exit in one go.) */
    for (size_t keep = 0; keep == 0; keep++) {
        const int st = run_to_closed_pipe(NULL, keep,
                                          (char *const[]){"plan", fx.old, fx.target,
                                                          "--max-slots", "1", "--write-dir",
                                                          fx.steps, NULL},
                                          &err);
        cr_assert_eq(st, 1, "keep %zu: status %d (-1: killed by a signal)", keep, st);
        cr_assert_str_eq(err, "", "a reader that went away needs no message");
        free(err);
        cr_assert_eq(tool_count_files(), 3, "old, new and steps: nothing else");
        DIR *d = opendir(the_tool.dir);
        for (struct dirent *e; (e = readdir(d)) != NULL;)
            cr_assert(strncmp(e->d_name, ".steps", 6) != 0, "%s left behind", e->d_name);
        closedir(d);
        dch_map *prev = a;
        for (uint32_t i = 1; i <= n; i++) {
            char path[300];
            dch_map *want, *got;
            snprintf(path, sizeof path, "%s/step-%04u.dchmap", fx.steps, i);
            cr_assert_eq(dch_map_stage_next(&want, prev, b, 1), DCH_OK);
            cr_assert_eq(dch_map_load_file(&got, path), DCH_OK, "keep %zu: no step %u", keep, i);
            cr_assert(same_map_bytes(got, want), "keep %zu: step %u differs", keep, i);
            dch_map_free(got);
            if (prev != a)
                dch_map_free(prev);
            prev = want;
        }
        dch_map_free(prev);
        remove_dir(fx.steps);
    }
    dch_map_free(a);
    dch_map_free(b);
}
