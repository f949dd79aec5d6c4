/* SPDX-License-Identifier: MIT */
/*
 * What every test program shares, so that a test file holds only the
 * behaviour it checks: the scale and seed every random test reads from the
 * environment; one random generator; memory that cannot fail; an allocator
 * that fails on request, with the sweep that fails each allocation of a call
 * in turn; maps and rings to start from, their ranges and saved bytes, and
 * random changes to them; snapshots of everything observable about a map or
 * a ring, to show that a failed call changed nothing; the tool the cli tests
 * run; scratch directories and whole-file reads.
 *
 * Nothing here uses Criterion, so the ThreadSanitizer build of the
 * concurrency test and the fuzz targets link it too. A helper that finds the
 * test itself broken (out of memory, an unreadable fixture, a sizing call
 * that does not size) prints why on stderr and aborts: the test fails, and
 * no helper ever returns half a result. test_support.c shows that each
 * helper sees what it is there to see.
 */
#ifndef DCH_TESTS_SUPPORT_H
#define DCH_TESTS_SUPPORT_H

#include "dch/dch.h"
#include "rng.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* ---- Scale and seed ---------------------------------------------------- */

/* DCH_TEST_SCALE, a positive double that scales the random work; 1.0 when
 * unset, unreadable or not positive. */
double test_scale(void);

/* n times test_scale(), at least floor_n. */
unsigned test_scaled(unsigned n, unsigned floor_n);

/* DCH_TEST_SEED (any base strtoull reads) when set, else `fallback`. A test
 * prints the seed it ran with in every failure message, so the run can be
 * repeated with DCH_TEST_SEED. */
uint64_t test_seed(uint64_t fallback);

/* ---- Random numbers ---------------------------------------------------- */

/* The tests draw from the generator the programs share (SplitMix64,
 * tools/number/rng.h): a seed gives the same numbers on every platform and
 * in every program. rng_below's modulo bias is far below what any test
 * measures. */
static inline uint64_t rng_next(uint64_t *state)
{
    return dch__rng_next(state);
}

static inline uint32_t rng_below(uint64_t *state, uint32_t n)
{
    return dch__rng_below(state, n);
}

/* The cases of a replica property test: every R from 1 to 4, zones 0 (no
 * zones) and 3, and n cases i of each, case i seeded
 * base + i + 1000 * (R * 4 + zones). Start from {.base, .n} and loop while
 * replica_case_next(&c) is true; it sets R, zones, i and seed. */
typedef struct replica_case {
    uint64_t base;
    unsigned n;
    uint32_t R, zones;
    unsigned i;
    uint64_t seed;
    bool started;
} replica_case;

bool replica_case_next(replica_case *c);

/* ---- Memory that cannot fail ------------------------------------------- */

/* malloc, calloc, realloc and strdup that abort on failure; a size of 0
 * still gives a block. xstrdup(NULL) is NULL. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
/* Room for element n of a growing array v of `size`-byte elements holding
 * *cap: doubled when full (from 64), since a default-config map has tens of
 * thousands of ranges. Returns the array, moved or not. */
void *xgrow(void *v, size_t n, size_t *cap, size_t size);

/* ---- An allocator that fails on request -------------------------------- */

/*
 * Counts its calls and the blocks it holds (`live`), and fails the call
 * numbered fail_at (from 1; 0: none), and every later one too when
 * fail_after is set. Frees never fail and are not counted as calls.
 */
typedef struct faulty {
    long calls;
    long fail_at;
    bool fail_after;
    long live;
} faulty;

/* The dch_allocator that allocates through `f`. */
dch_allocator faulty_allocator(faulty *f);

/* Restart the call count and fail from call `fail_at` (0: none). */
void faulty_arm(faulty *f, long fail_at, bool fail_after);

/*
 * The every-allocation sweep: one call under test, run again and again with
 * the k-th allocation failing for k = 1, 2, ... In mode SWEEP_ALONE only
 * that allocation fails, in SWEEP_LATER every later one fails too, and
 * SWEEP_BOTH tries each k both ways. With `limit` SWEEP_UNTIL_OK each way
 * ends after its first point at which the call succeeds (it needs fewer than
 * k allocations); with a limit of 0 or more the sweep ends after k = limit
 * whatever the calls return (for a limit counted in a reference run, and
 * for calls whose allocations are not all needed).
 *
 *     fault_sweep sw;
 *     for (fault_sweep_start(&sw, &fa, SWEEP_BOTH, SWEEP_UNTIL_OK); fault_sweep_next(&sw);) {
 *         int rc = the_call(...);
 *         fault_sweep_done(&sw, rc);
 *         ... rc is DCH_ENOMEM and the object is unchanged, or rc is DCH_OK
 *         ... with the reference's result ...
 *     }
 *
 * sw.at and sw.after name the point for failure messages; sw.failed counts
 * the points at which the call did not succeed; sw.leaked is how many more
 * blocks the allocator held after the call than when the point was armed.
 */
enum { SWEEP_ALONE = 1, SWEEP_LATER = 2, SWEEP_BOTH = 3 };
#define SWEEP_UNTIL_OK (-1L)

typedef struct fault_sweep {
    faulty *f;
    unsigned modes, ended;
    long limit;
    long at;     /* the allocation that fails, from 1 */
    bool after;  /* every later allocation fails too */
    long failed; /* points at which the call did not succeed */
    long live;   /* blocks held when the point was armed */
    long leaked; /* blocks held after the call, beyond `live` */
} fault_sweep;

void fault_sweep_start(fault_sweep *sw, faulty *f, unsigned modes, long limit);

/* Arm the allocator for the next point; false when the sweep is over. */
bool fault_sweep_next(fault_sweep *sw);

/* Disarm the allocator (its call count stays) after the call returned rc. */
void fault_sweep_done(fault_sweep *sw, int rc);

/* ---- Ranges and changes ------------------------------------------------ */

/* A growing list of ranges; {NULL, 0, 0} is empty. */
typedef struct range_list {
    dch_range *v;
    size_t n, cap;
} range_list;

/* A dch_map_foreach_range / dch_ring_foreach_range callback: appends the
 * range to the `range_list` at ctx. */
int ranges_push(const dch_range *r, void *ctx);

/* Field by field: dch_range has padding that memcmp would read. */
bool ranges_equal(const dch_range *a, const dch_range *b, size_t n);

/* The map's or ring's ranges, through the sizing call (cap 0: DCH_EFULL and
 * the count) and a second call that must fill exactly that many. The caller
 * frees the array. */
dch_range *map_ranges_of(const dch_map *m, size_t *count);
dch_range *ring_ranges_of(const dch_ring *r, size_t *count);

/* A growing list of range changes; {NULL, 0, 0} is empty. */
typedef struct change_list {
    dch_range_change *v;
    size_t n, cap;
} change_list;

/* A dch_range_diff callback: appends the change to the `change_list` at ctx. */
int changes_push(const dch_range_change *c, void *ctx);

/* dch_range_diff of two lists, which must succeed. The caller frees .v. */
change_list changes_between(const dch_range *a, size_t na, const dch_range *b, size_t nb);

/* ---- The fields of map files, as map_file.h documents them ------------- */

/* An n-byte little-endian integer at p (n <= 8). */
uint64_t le_read(const uint8_t *p, int n);
/* Write v at p as n little-endian bytes. */
void le_write(uint8_t *p, uint64_t v, int n);
/* The unsigned LEB128 number at p[*at]; *at moves past it. The caller
 * knows it is there (no bound is checked). */
uint32_t uleb_read(const uint8_t *p, size_t *at);
/* Write v at p as unsigned LEB128 in its shortest form; its length. */
size_t uleb_write(uint8_t *p, uint32_t v);

/* ---- Maps and rings ---------------------------------------------------- */

/* The default map config with units x slots_per_unit slots. */
dch_map_config map_config(uint32_t units, uint32_t slots_per_unit);

/* A new empty map of that shape, the default key and libc's allocator. */
dch_map *map_shaped(uint32_t units, uint32_t slots_per_unit);

/* A clone of m (dch_map_clone), to change or diff against; dies when the
 * clone fails. */
dch_map *map_clone_of(const dch_map *m);

/* Add members named prefix0, prefix1, ... (count of them) of weight 1 ..
 * max_weight drawn from rng, their ids in ids[] when ids is not NULL. */
void ring_add_members(dch_ring *r, const char *prefix, unsigned count, uint32_t max_weight,
                      uint64_t *rng, uint32_t *ids);

/* Add members named prefix0, prefix1, ... (count of them) to the map,
 * member i of weight weights[i % nweights] (1 when weights is NULL). */
void map_add_members(dch_map *m, const char *prefix, unsigned count, const uint32_t *weights,
                     size_t nweights);

/* The map saved (dch_map_save: the sizing call with no buffer answers
 * DCH_OK and the length, then the same length is written); the caller frees
 * it. */
uint8_t *map_bytes(const dch_map *m, size_t *len);

/* Whether two maps save to the same bytes. */
bool same_map_bytes(const dch_map *a, const dch_map *b);

/*
 * One random change to a map. A draw r in [0, 100): with no member, or r
 * below add_below, add a member named from a pool of `names` ("n0", "n1",
 * ...: names come back after a removal, usually under another id; adding a
 * present name fails and changes nothing); else, r below remove_below,
 * remove a random member; else give one a new weight. weight(rng, r, adding)
 * gives the weights.
 */
typedef struct map_change_rule {
    uint32_t add_below, remove_below, names;
    uint32_t (*weight)(uint64_t *rng, uint32_t r, bool adding);
} map_change_rule;

void map_random_change(dch_map *m, uint64_t *rng, const map_change_rule *rule);

/*
 * One random change to a map, members in zones: with no member or half of
 * the time, add a member named from a pool of `names` ("n0", "n1", ...; a
 * present name fails and changes nothing) in zone "z0" .. "z<zones-1>" (or
 * in none, a quarter of the time and always when zones is 0); else remove a
 * random member (a fifth of the time) or give one a new weight. Weights: 0
 * an eighth of the time, else 1 .. 8, rarely 100 .. 999.
 */
void map_random_zoned_change(dch_map *m, uint64_t *rng, uint32_t names, uint32_t zones);

/* A present member's id, drawn uniformly from the id range until one is a
 * member; the map or ring must have one. */
uint32_t map_random_member(const dch_map *m, uint64_t *rng);
uint32_t ring_random_member(const dch_ring *r, uint64_t *rng);

/* ---- Snapshots --------------------------------------------------------- */

/* Taken before a call, compared with the object after it (the _differs
 * functions take a second snapshot and free it), freed by the caller. */

/* What a map and a ring share: members (names, weights), id limit, member
 * count, weight sum, memory held and ranges. */
typedef struct member_snap {
    uint32_t limit, count, total;
    size_t memory;
    char **names;
    uint32_t *weights;
    range_list rg;
} member_snap;

/* Everything observable about a map: config, members and their slot
 * counts, slot table, epoch and fingerprint. */
typedef struct map_snap {
    dch_map_config cfg;
    member_snap mb;
    uint32_t slots;
    uint64_t epoch, fingerprint;
    uint32_t *owner, *counts;
} map_snap;

void map_snap_take(map_snap *s, const dch_map *m);
void map_snap_free(map_snap *s);

/* NULL when `m` matches the snapshot (its memory too when `memory` is set),
 * else what differs. */
const char *map_snap_differs(const map_snap *s, const dch_map *m, bool memory);

/* Everything observable about a ring: config, members and point count. */
typedef struct ring_snap {
    dch_ring_config cfg;
    member_snap mb;
    uint32_t points;
} ring_snap;

void ring_snap_take(ring_snap *s, const dch_ring *r);
void ring_snap_free(ring_snap *s);
const char *ring_snap_differs(const ring_snap *s, const dch_ring *r, bool memory);

/* ---- The tool and scratch files ---------------------------------------- */

/* The dchctl tool to run: $DCH_TOOL when set, else the one this build tree
 * built (DCH_TOOL_PATH, from CMake). Aborts when there is none, or it is
 * not executable. */
const char *test_tool_path(void);

/* The whole file, NUL-terminated, its length in *len when len is not NULL;
 * NULL when it cannot be opened or read. The caller frees it. */
char *slurp(const char *path, size_t *len);

/*
 * The fixture of the tests that run the tool: the tool (test_tool_path())
 * and a fresh scratch directory, /tmp/dchctl-XXXXXX, made by
 * tool_fixture_init and removed with what it holds by tool_fixture_fini
 * (a Criterion suite's .init and .fini).
 */
typedef struct tool_fixture {
    const char *tool;
    char dir[64];
} tool_fixture;

extern tool_fixture the_tool;
void tool_fixture_init(void);
void tool_fixture_fini(void);

/* What one run of the tool gave: its exit status (-1: a signal ended it)
 * and all it wrote (standard output NUL-terminated beyond outlen bytes). */
typedef struct tool_result {
    int status;
    char *out, *err;
    size_t outlen;
} tool_result;

/*
 * Run the tool (the_tool) with args (NULL-terminated, at most 62) in
 * the_tool.dir (so "./-" names a file there), standard input from /dev/null,
 * its output captured through files in the_tool.dir. Aborts, saying why,
 * when the tool cannot be run, does not exit normally, or reports a
 * sanitizer or valgrind finding: the test fails then whatever it checks.
 */
tool_result tool_run(char *const *args);
/* tool_run with standard input from the file `in` (NULL: /dev/null); a
 * signal that ends the tool is status -1 here, not an abort. */
tool_result tool_run_in(const char *in, char *const *args);

/* tool_run and tool_run_in with the arguments listed. */
#define TOOL_RUN(...) tool_run((char *const[]){__VA_ARGS__, NULL})
#define TOOL_RUN_IN(in, ...) tool_run_in(in, (char *const[]){__VA_ARGS__, NULL})

/* tool_run_in, requiring exit status `status`: otherwise the test stops
 * (abort) after printing the command and its standard error. */
void tool_expect(int status, const char *in, char *const *args);
#define TOOL_EXPECT(status, ...) tool_expect(status, NULL, (char *const[]){__VA_ARGS__, NULL})
#define TOOL_EXPECT_IN(status, in, ...) \
    tool_expect(status, in, (char *const[]){__VA_ARGS__, NULL})

/* tool_run, requiring exit status `status` and `text` in standard error:
 * otherwise the test stops (abort) after printing the command and what it
 * wrote there. */
void tool_expect_err(int status, const char *text, char *const *args);
#define TOOL_EXPECT_ERR(status, text, ...) \
    tool_expect_err(status, text, (char *const[]){__VA_ARGS__, NULL})

/* the_tool.dir/name, into buf (n bytes). */
void tool_path(char *buf, size_t n, const char *name);

/* Names in dir but . and .. and tool_run's captures (.stdout, .stderr);
 * hidden ones (a leftover temporary file, say) only when `hidden`. Dies
 * when dir cannot be read. tool_count_files: the_tool.dir's, not hidden. */
int dir_count(const char *dir, bool hidden);
int tool_count_files(void);

/* slurp for a file that must be there: dies when it cannot be read. */
char *file_bytes(const char *path, size_t *len);

/* Whether the file at path holds exactly these len bytes. */
bool file_holds(const char *path, const void *bytes, size_t len);

/* The number after "field": in a JSON text; dies when the field is not
 * there. */
unsigned long long json_number(const char *text, const char *field);

/* The map in the file at path; dies when it does not load. */
dch_map *map_load_path(const char *path);

/* The pieces of tool_run, for a test that wires the tool's descriptors
 * itself (pipes between tools, a reader that goes away). */
/* In a forked child: in, out and err (close-on-exec descriptors; in -1:
 * /dev/null) as standard input, output and error, the_tool.dir as working
 * directory, then the tool with args. Does not return. */
void tool_exec(int in, int out, int err, char *const *args);
/* The exit status of pid, -1 when a signal ended it. */
int tool_wait(pid_t pid);
/* A close-on-exec capture file at path, created empty; aborts if it cannot. */
int tool_capture(const char *path);
/* The captures po and pe of a finished run, read and removed, which aborts
 * as tool_run does on a tool that could not run or a sanitizer finding. */
tool_result tool_collect(int status, const char *po, const char *pe);
void tool_result_free(tool_result *r);

/* A new empty directory /tmp/dch-<name>-XXXXXX; its path in dir (size
 * bytes). Aborts when it cannot. */
void temp_dir(char *dir, size_t size, const char *name);

/* A scratch directory (temp_dir) and the path of one file in it. */
typedef struct scratch {
    char dir[64];
    char path[192];
} scratch;

/* Make the directory /tmp/dch-<name>-XXXXXX and name `file` in it. */
void scratch_make(scratch *s, const char *name, const char *file);

/* Remove `dir` and everything in it. */
void remove_dir(const char *dir);

/* Create or replace `path` with `len` bytes; aborts when it cannot. */
void write_file(const char *path, const void *p, size_t len);

#endif
