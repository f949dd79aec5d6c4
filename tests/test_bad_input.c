/* SPDX-License-Identifier: MIT */
/*
 * Bad input and failed allocations, across the whole public API.
 *
 * Bad input is one table: every public function that returns an error code,
 * with every class of bad argument (NULL pointers; empty, over-long and
 * unterminated names; unknown, freed and out-of-range ids; weights whose sum
 * passes UINT32_MAX or whose points pass the ring's limit; configs that are
 * zero, not powers of two or too large; damaged bytes; paths that cannot
 * work) and the code its header documents. Each case runs on fresh objects
 * built through a counting allocator, and after the call the objects must be
 * exactly as before: config, members (names, weights, slot counts), ids,
 * weight sum, epoch, memory, slot table, ranges and fingerprint for a map;
 * config, members, weights, points, memory and ranges for a ring; nothing
 * leaked, and an out-parameter untouched. A second table does the same for
 * the functions that answer a value (getters on non-members and NULL).
 *
 * Allocation failure: every call that allocates is run once for reference,
 * counting its allocator calls, and then once for every k with the k-th call
 * failing, both alone and with every later call failing too. The call must
 * return DCH_ENOMEM, leave its object exactly as it was, leak nothing, leave
 * its out-parameter untouched, and the same call must then succeed with the
 * reference's result (so a failure leaves no hidden state behind either).
 * Each test prints how many failure points it tried.
 *
 * DCH_TEST_SCALE (default 1.0) below 1 leaves the larger maps out of the
 * allocation sweep (the valgrind pass uses 0.05); every failure point of
 * every map that runs is always tried.
 */
#define _POSIX_C_SOURCE 200809L

#include <criterion/criterion.h>

#include "dch/dch.h"
#include "support.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <dirent.h>

/* ---- Fixtures for the bad-input table --------------------------------- */

/*
 * Members of both fixtures: alpha 1 (id 0), beta 2 (1), gamma 0 (2), delta
 * removed (id 3 free), epsilon 3 (4): a weightless member, a hole, and
 * id_limit 5 with a weight sum of 6.
 */
static const struct {
    const char *name;
    uint32_t weight;
} fixture_members[] = {{"alpha", 1}, {"beta", 2}, {"gamma", 0}, {"delta", 1}, {"epsilon", 3}};
#define FREED_ID 3u
#define WEIGHTLESS_ID 2u
#define RING_PPW 4u

/* dch_map_diff's `to`: the fixture map itself, or one of another config. */
typedef enum pair_arg { PAIR_SAME, PAIR_UNITS, PAIR_SPU, PAIR_KEY, PAIR_COUNT } pair_arg;

/* The shape of the PAIR_UNITS .. PAIR_KEY maps: units, slots per unit and
 * the first hash key byte (the fixture map's: 16, 8, 1). */
static const uint32_t other_shape[PAIR_COUNT][3] = {
    [PAIR_UNITS] = {32, 8, 1}, [PAIR_SPU] = {16, 16, 1}, [PAIR_KEY] = {16, 8, 2}};

typedef struct fixture {
    faulty fa;
    dch_allocator alloc;
    dch_map *map;
    dch_map *other[PAIR_COUNT]; /* by pair_arg, for dch_map_diff; other[PAIR_SAME] is map */
    dch_ring *ring;
    uint8_t *bytes; /* the map saved */
    size_t len;
    char dir[64]; /* a scratch directory holding the files below */
} fixture;

static void fill_map(dch_map *m)
{
    for (size_t i = 0; i < sizeof fixture_members / sizeof fixture_members[0]; i++)
        cr_assert_eq(dch_map_add_node(m, fixture_members[i].name, fixture_members[i].weight,
                                      NULL),
                     DCH_OK);
    cr_assert_eq(dch_map_remove_node(m, FREED_ID), DCH_OK);
}

static dch_map *fixture_map(fixture *fx, uint32_t units, uint32_t spu, uint8_t key0)
{
    dch_map_config cfg = map_config(units, spu);
    for (int i = 0; i < 16; i++)
        cfg.hash_key[i] = (uint8_t)(key0 + i);
    cfg.allocator = &fx->alloc;
    dch_map *m;
    cr_assert_eq(dch_map_new(&m, &cfg), DCH_OK);
    fill_map(m);
    return m;
}

static void fixture_init(fixture *fx, bool files)
{
    memset(fx, 0, sizeof *fx);
    fx->alloc = faulty_allocator(&fx->fa);
    fx->map = fixture_map(fx, 16, 8, 1);
    fx->other[PAIR_SAME] = fx->map;
    for (int p = PAIR_UNITS; p < PAIR_COUNT; p++)
        fx->other[p] = fixture_map(fx, other_shape[p][0], other_shape[p][1],
                                   (uint8_t)other_shape[p][2]);
    dch_ring_config rc;
    dch_ring_config_default(&rc);
    rc.points_per_weight = RING_PPW;
    rc.allocator = &fx->alloc;
    cr_assert_eq(dch_ring_new(&fx->ring, &rc), DCH_OK);
    for (size_t i = 0; i < sizeof fixture_members / sizeof fixture_members[0]; i++)
        cr_assert_eq(dch_ring_add_node(fx->ring, fixture_members[i].name,
                                       fixture_members[i].weight, NULL),
                     DCH_OK);
    cr_assert_eq(dch_ring_remove_node(fx->ring, FREED_ID), DCH_OK);
    cr_assert_eq(dch_map_save(fx->map, NULL, 0, &fx->len), DCH_OK);
    fx->bytes = xmalloc(fx->len);
    cr_assert_eq(dch_map_save(fx->map, fx->bytes, fx->len, &fx->len), DCH_OK);
    if (!files)
        return;
    temp_dir(fx->dir, sizeof fx->dir, "bad-input");
    char path[128];
    snprintf(path, sizeof path, "%s/good.dchmap", fx->dir);
    write_file(path, fx->bytes, fx->len);
    snprintf(path, sizeof path, "%s/truncated.dchmap", fx->dir);
    write_file(path, fx->bytes, fx->len - 1);
    uint8_t *more = xmalloc(fx->len + 1);
    memcpy(more, fx->bytes, fx->len);
    more[fx->len] = 0;
    snprintf(path, sizeof path, "%s/trailing.dchmap", fx->dir);
    write_file(path, more, fx->len + 1);
    more[8] = 6; /* format version 6, which no library reads yet */
    snprintf(path, sizeof path, "%s/version6.dchmap", fx->dir);
    write_file(path, more, fx->len);
    free(more);
    snprintf(path, sizeof path, "%s/garbage", fx->dir);
    write_file(path, "this is not a map file, only some text that is long enough", 59);
    snprintf(path, sizeof path, "%s/empty", fx->dir);
    write_file(path, "", 0);
    snprintf(path, sizeof path, "%s/a-directory", fx->dir);
    cr_assert_eq(mkdir(path, 0755), 0);
}


static void fixture_free(fixture *fx)
{
    for (int p = PAIR_UNITS; p < PAIR_COUNT; p++)
        dch_map_free(fx->other[p]);
    dch_map_free(fx->map);
    dch_ring_free(fx->ring);
    free(fx->bytes);
    cr_assert_eq(fx->fa.live, 0, "the fixtures leaked %ld blocks", fx->fa.live);
    if (fx->dir[0] == '\0')
        return;
    const char *names[] = {"good.dchmap", "truncated.dchmap", "trailing.dchmap",
                           "version6.dchmap", "garbage", "empty"};
    char path[128];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", fx->dir, names[i]);
        unlink(path);
    }
    snprintf(path, sizeof path, "%s/a-directory", fx->dir);
    rmdir(path);
    rmdir(fx->dir);
}

/* ---- The bad-input table ---------------------------------------------- */

typedef enum fn_id {
    F_MAP_NEW, F_MAP_CLONE, F_MAP_ADD, F_MAP_REMOVE, F_MAP_SET_WEIGHT, F_MAP_FIND,
    F_MAP_RANGES, F_MAP_FOREACH, F_MAP_SAVE, F_MAP_LOAD, F_MAP_LOAD_WITH, F_MAP_SAVE_FILE,
    F_MAP_LOAD_FILE, F_MAP_DIFF, F_MAP_DIFF_COPIES, F_RING_NEW, F_RING_CLONE, F_RING_ADD,
    F_RING_REMOVE, F_RING_SET_WEIGHT, F_RING_FIND, F_RING_RANGES, F_RING_FOREACH, F_RANGE_DIFF,
} fn_id;

/* Argument classes; the first of each is a valid argument. */
typedef enum obj_arg { OBJ_VALID, OBJ_NULL } obj_arg;
typedef enum out_arg { OUT_VALID, OUT_NULL } out_arg;
typedef enum name_arg {
    NAME_NEW,          /* "zeta": valid, no member has it */
    NAME_NULL,
    NAME_EMPTY,
    NAME_UNTERMINATED, /* 256 bytes, no NUL, in a block of exactly 256 */
    NAME_OVERLONG,     /* 256 bytes and a NUL */
    NAME_TAKEN,        /* "beta" */
    NAME_TAB,          /* "tab<TAB>here" */
    NAME_NEWLINE,      /* "line<LF>" */
    NAME_DEL,          /* "<DEL>" */
} name_arg;
typedef enum id_arg {
    ID_MEMBER,     /* 0, weight 1 */
    ID_WEIGHTLESS, /* 2, weight 0 */
    ID_FREED,      /* 3, removed */
    ID_LIMIT,      /* id_limit, 5 */
    ID_NONE,       /* DCH_NODE_NONE */
    ID_MAX_NODES,  /* 65535: no member has it, and it is the unowned table entry */
    ID_HUGE,       /* 2^16 */
} id_arg;
typedef enum weight_arg {
    W_ONE,
    W_SUM_OVER,    /* the weight sum becomes UINT32_MAX + 1 */
    W_MAX,         /* UINT32_MAX */
    W_POINTS_OVER, /* ring: points become DCH_RING_MAX_POINTS + points_per_weight */
} weight_arg;
typedef enum cfg_arg {
    CFG_DEFAULT, CFG_NULL, CFG_UNITS_0, CFG_UNITS_3, CFG_UNITS_MAX, CFG_SPU_0, CFG_SPU_6,
    CFG_SLOTS_2_25, CFG_SLOTS_2_62, CFG_UNITS_2_31, CFG_ALLOC_NO_REALLOC, CFG_ALLOC_NO_FREE,
    CFG_ALLOC_NO_ALLOC, CFG_PPW_0,
} cfg_arg;
typedef enum bytes_arg {
    BYTES_GOOD, BYTES_NULL, BYTES_NULL_EMPTY, BYTES_EMPTY, BYTES_11, BYTES_TRUNCATED,
    BYTES_TRAILING, BYTES_MAGIC, BYTES_VERSION_0, BYTES_VERSION_6, BYTES_VERSION_6_SHORT,
    BYTES_CHECKSUM, BYTES_HEADER_ONLY,
} bytes_arg;
typedef enum path_arg {
    PATH_GOOD, PATH_NULL, PATH_EMPTY, PATH_MISSING, PATH_NO_DIR, PATH_DIR, PATH_GARBAGE,
    PATH_EMPTY_FILE, PATH_VERSION_6, PATH_TRUNCATED, PATH_TRAILING,
} path_arg;
typedef enum buf_arg {
    BUF_ENOUGH,
    BUF_NULL_CAP, /* NULL with a capacity */
    BUF_SHORT,    /* one short of what is needed */
    BUF_ZERO,     /* a buffer with capacity 0 */
} buf_arg;
typedef enum cb_arg { CB_VALID, CB_NULL } cb_arg;
typedef enum list_arg {
    LIST_GOOD, LIST_NULL, LIST_EMPTY, LIST_NOT_FROM_0, LIST_NOT_TO_MAX, LIST_GAP, LIST_OVERLAP,
    LIST_BACKWARDS,
} list_arg;

typedef struct bad_case {
    const char *what;
    fn_id fn;
    obj_arg obj;  /* the map or ring; for dch_map_diff, `from` */
    obj_arg obj2; /* dch_map_diff's `to` */
    out_arg out;  /* out, id_out or count_out / len_out */
    name_arg name;
    id_arg id;
    weight_arg weight;
    cfg_arg cfg;
    bytes_arg bytes;
    path_arg path;
    buf_arg buf;
    cb_arg cb;
    pair_arg pair;
    list_arg list_a, list_b;
    int expect;
} bad_case;

static const bad_case bad_cases[] = {
    /* map.h: dch_map_new */
    {"map_new: NULL out", F_MAP_NEW, .out = OUT_NULL, .expect = DCH_EINVAL},
    {"map_new: units 0", F_MAP_NEW, .cfg = CFG_UNITS_0, .expect = DCH_EINVAL},
    {"map_new: units 3", F_MAP_NEW, .cfg = CFG_UNITS_3, .expect = DCH_EINVAL},
    {"map_new: units UINT32_MAX", F_MAP_NEW, .cfg = CFG_UNITS_MAX, .expect = DCH_EINVAL},
    {"map_new: slots_per_unit 0", F_MAP_NEW, .cfg = CFG_SPU_0, .expect = DCH_EINVAL},
    {"map_new: slots_per_unit 6", F_MAP_NEW, .cfg = CFG_SPU_6, .expect = DCH_EINVAL},
    {"map_new: 2^13 x 2^12 slots", F_MAP_NEW, .cfg = CFG_SLOTS_2_25, .expect = DCH_EFULL},
    {"map_new: 2^31 x 2^31 slots", F_MAP_NEW, .cfg = CFG_SLOTS_2_62, .expect = DCH_EFULL},
    {"map_new: 2^31 units of 1 slot", F_MAP_NEW, .cfg = CFG_UNITS_2_31, .expect = DCH_EFULL},
    {"map_new: allocator without realloc", F_MAP_NEW, .cfg = CFG_ALLOC_NO_REALLOC,
     .expect = DCH_EINVAL},
    {"map_new: allocator without free", F_MAP_NEW, .cfg = CFG_ALLOC_NO_FREE, .expect = DCH_EINVAL},
    {"map_new: allocator without alloc", F_MAP_NEW, .cfg = CFG_ALLOC_NO_ALLOC,
     .expect = DCH_EINVAL},
    /* dch_map_clone */
    {"map_clone: NULL out", F_MAP_CLONE, .out = OUT_NULL, .expect = DCH_EINVAL},
    {"map_clone: NULL map", F_MAP_CLONE, .obj = OBJ_NULL, .expect = DCH_EINVAL},
    /* dch_map_add_node */
    {"map_add_node: NULL map", F_MAP_ADD, .obj = OBJ_NULL, .expect = DCH_EINVAL},
    {"map_add_node: NULL name", F_MAP_ADD, .name = NAME_NULL, .expect = DCH_EINVAL},
    {"map_add_node: empty name", F_MAP_ADD, .name = NAME_EMPTY, .expect = DCH_EINVAL},
    {"map_add_node: 256 bytes without NUL", F_MAP_ADD, .name = NAME_UNTERMINATED,
     .expect = DCH_EINVAL},
    {"map_add_node: 256-byte name", F_MAP_ADD, .name = NAME_OVERLONG, .expect = DCH_EINVAL},
    {"map_add_node: a TAB in the name", F_MAP_ADD, .name = NAME_TAB, .expect = DCH_EINVAL},
    {"map_add_node: a newline in the name", F_MAP_ADD, .name = NAME_NEWLINE, .expect = DCH_EINVAL},
    {"map_add_node: name 0x7f", F_MAP_ADD, .name = NAME_DEL, .expect = DCH_EINVAL},
    {"map_add_node: name in use", F_MAP_ADD, .name = NAME_TAKEN, .expect = DCH_EEXIST},
    {"map_add_node: name in use, weight 0", F_MAP_ADD, .name = NAME_TAKEN, .weight = W_ONE,
     .expect = DCH_EEXIST},
    {"map_add_node: weight sum UINT32_MAX + 1", F_MAP_ADD, .weight = W_SUM_OVER,
     .expect = DCH_EFULL},
    {"map_add_node: weight UINT32_MAX", F_MAP_ADD, .weight = W_MAX, .expect = DCH_EFULL},
    {"map_add_node: bad name, NULL id_out", F_MAP_ADD, .name = NAME_EMPTY, .out = OUT_NULL,
     .expect = DCH_EINVAL},
    /* dch_map_remove_node */
    {"map_remove_node: NULL map", F_MAP_REMOVE, .obj = OBJ_NULL, .expect = DCH_EINVAL},
    {"map_remove_node: freed id", F_MAP_REMOVE, .id = ID_FREED, .expect = DCH_ENOENT},
    {"map_remove_node: id_limit", F_MAP_REMOVE, .id = ID_LIMIT, .expect = DCH_ENOENT},
    {"map_remove_node: DCH_NODE_NONE", F_MAP_REMOVE, .id = ID_NONE, .expect = DCH_ENOENT},
    {"map_remove_node: 65535", F_MAP_REMOVE, .id = ID_MAX_NODES, .expect = DCH_ENOENT},
    {"map_remove_node: 2^16", F_MAP_REMOVE, .id = ID_HUGE, .expect = DCH_ENOENT},
    /* dch_map_set_weight */
    {"map_set_weight: NULL map", F_MAP_SET_WEIGHT, .obj = OBJ_NULL, .expect = DCH_EINVAL},
    {"map_set_weight: freed id", F_MAP_SET_WEIGHT, .id = ID_FREED, .expect = DCH_ENOENT},
    {"map_set_weight: id_limit", F_MAP_SET_WEIGHT, .id = ID_LIMIT, .expect = DCH_ENOENT},
    {"map_set_weight: DCH_NODE_NONE", F_MAP_SET_WEIGHT, .id = ID_NONE, .expect = DCH_ENOENT},
    {"map_set_weight: 65535", F_MAP_SET_WEIGHT, .id = ID_MAX_NODES, .expect = DCH_ENOENT},
    {"map_set_weight: 2^16", F_MAP_SET_WEIGHT, .id = ID_HUGE, .expect = DCH_ENOENT},
    {"map_set_weight: weight sum UINT32_MAX + 1", F_MAP_SET_WEIGHT, .weight = W_SUM_OVER,
     .expect = DCH_EFULL},
    {"map_set_weight: weightless member, weight sum UINT32_MAX + 1", F_MAP_SET_WEIGHT,
     .id = ID_WEIGHTLESS, .weight = W_SUM_OVER, .expect = DCH_EFULL},
    {"map_set_weight: weight UINT32_MAX", F_MAP_SET_WEIGHT, .weight = W_MAX,
     .expect = DCH_EFULL},
    /* dch_map_find_node */
    {"map_find_node: NULL map", F_MAP_FIND, .obj = OBJ_NULL, .expect = DCH_EINVAL},
    {"map_find_node: NULL name", F_MAP_FIND, .name = NAME_NULL, .expect = DCH_EINVAL},
    {"map_find_node: NULL id_out", F_MAP_FIND, .name = NAME_TAKEN, .out = OUT_NULL,
     .expect = DCH_EINVAL},
    {"map_find_node: empty name", F_MAP_FIND, .name = NAME_EMPTY, .expect = DCH_EINVAL},
    {"map_find_node: 256 bytes without NUL", F_MAP_FIND, .name = NAME_UNTERMINATED,
     .expect = DCH_EINVAL},
    {"map_find_node: 256-byte name", F_MAP_FIND, .name = NAME_OVERLONG, .expect = DCH_EINVAL},
    {"map_find_node: a TAB in the name", F_MAP_FIND, .name = NAME_TAB, .expect = DCH_EINVAL},
    {"map_find_node: a newline in the name", F_MAP_FIND, .name = NAME_NEWLINE, .expect = DCH_EINVAL},
    {"map_find_node: name 0x7f", F_MAP_FIND, .name = NAME_DEL, .expect = DCH_EINVAL},
    {"map_find_node: unknown name", F_MAP_FIND, .name = NAME_NEW, .expect = DCH_ENOENT},
    /* dch_map_ranges */
    {"map_ranges: NULL map", F_MAP_RANGES, .obj = OBJ_NULL, .expect = DCH_EINVAL},
    {"map_ranges: NULL count_out", F_MAP_RANGES, .out = OUT_NULL, .expect = DCH_EINVAL},
    {"map_ranges: NULL out with cap > 0", F_MAP_RANGES, .buf = BUF_NULL_CAP,
     .expect = DCH_EINVAL},
    {"map_ranges: cap one short", F_MAP_RANGES, .buf = BUF_SHORT, .expect = DCH_EFULL},
    {"map_ranges: cap 0", F_MAP_RANGES, .buf = BUF_ZERO, .expect = DCH_EFULL},
    /* dch_map_foreach_range */
    {"map_foreach_range: NULL map", F_MAP_FOREACH, .obj = OBJ_NULL, .expect = DCH_EINVAL},
    {"map_foreach_range: NULL fn", F_MAP_FOREACH, .cb = CB_NULL, .expect = DCH_EINVAL},
    /* map_file.h: dch_map_save */
    {"map_save: NULL map", F_MAP_SAVE, .obj = OBJ_NULL, .expect = DCH_EINVAL},
    {"map_save: NULL len_out", F_MAP_SAVE, .out = OUT_NULL, .expect = DCH_EINVAL},
    {"map_save: cap one short", F_MAP_SAVE, .buf = BUF_SHORT, .expect = DCH_EFULL},
    {"map_save: cap 0", F_MAP_SAVE, .buf = BUF_ZERO, .expect = DCH_EFULL},
    /* dch_map_load, dch_map_load_with */
    {"map_load: NULL out", F_MAP_LOAD, .out = OUT_NULL, .expect = DCH_EINVAL},
    {"map_load: NULL buf, len > 0", F_MAP_LOAD, .bytes = BYTES_NULL, .expect = DCH_EINVAL},
    {"map_load: NULL buf, len 0", F_MAP_LOAD, .bytes = BYTES_NULL_EMPTY, .expect = DCH_ECORRUPT},
    {"map_load: no bytes", F_MAP_LOAD, .bytes = BYTES_EMPTY, .expect = DCH_ECORRUPT},
    {"map_load: 11 bytes", F_MAP_LOAD, .bytes = BYTES_11, .expect = DCH_ECORRUPT},
    {"map_load: last byte missing", F_MAP_LOAD, .bytes = BYTES_TRUNCATED,
     .expect = DCH_ECORRUPT},
    {"map_load: a byte too many", F_MAP_LOAD, .bytes = BYTES_TRAILING, .expect = DCH_ECORRUPT},
    {"map_load: bad magic", F_MAP_LOAD, .bytes = BYTES_MAGIC, .expect = DCH_ECORRUPT},
    {"map_load: version 0", F_MAP_LOAD, .bytes = BYTES_VERSION_0, .expect = DCH_EVERSION},
    {"map_load: version 6", F_MAP_LOAD, .bytes = BYTES_VERSION_6, .expect = DCH_EVERSION},
    {"map_load: version 6, 12 bytes", F_MAP_LOAD, .bytes = BYTES_VERSION_6_SHORT,
     .expect = DCH_EVERSION},
    {"map_load: bad checksum", F_MAP_LOAD, .bytes = BYTES_CHECKSUM, .expect = DCH_ECORRUPT},
    {"map_load: header only", F_MAP_LOAD, .bytes = BYTES_HEADER_ONLY, .expect = DCH_ECORRUPT},
    {"map_load_with: NULL out", F_MAP_LOAD_WITH, .out = OUT_NULL, .expect = DCH_EINVAL},
    {"map_load_with: allocator without free", F_MAP_LOAD_WITH, .cfg = CFG_ALLOC_NO_FREE,
     .expect = DCH_EINVAL},
    {"map_load_with: allocator without alloc", F_MAP_LOAD_WITH, .cfg = CFG_ALLOC_NO_ALLOC,
     .expect = DCH_EINVAL},
    {"map_load_with: bad checksum", F_MAP_LOAD_WITH, .bytes = BYTES_CHECKSUM,
     .expect = DCH_ECORRUPT},
    /* dch_map_save_file */
    {"map_save_file: NULL map", F_MAP_SAVE_FILE, .obj = OBJ_NULL, .expect = DCH_EINVAL},
    {"map_save_file: NULL path", F_MAP_SAVE_FILE, .path = PATH_NULL, .expect = DCH_EINVAL},
    {"map_save_file: empty path", F_MAP_SAVE_FILE, .path = PATH_EMPTY, .expect = DCH_EINVAL},
    {"map_save_file: missing directory", F_MAP_SAVE_FILE, .path = PATH_NO_DIR,
     .expect = DCH_EIO},
    {"map_save_file: over a directory", F_MAP_SAVE_FILE, .path = PATH_DIR, .expect = DCH_EIO},
    /* dch_map_load_file */
    {"map_load_file: NULL out", F_MAP_LOAD_FILE, .out = OUT_NULL, .expect = DCH_EINVAL},
    {"map_load_file: NULL path", F_MAP_LOAD_FILE, .path = PATH_NULL, .expect = DCH_EINVAL},
    {"map_load_file: empty path", F_MAP_LOAD_FILE, .path = PATH_EMPTY, .expect = DCH_EIO},
    {"map_load_file: missing file", F_MAP_LOAD_FILE, .path = PATH_MISSING, .expect = DCH_EIO},
    {"map_load_file: missing directory", F_MAP_LOAD_FILE, .path = PATH_NO_DIR,
     .expect = DCH_EIO},
    {"map_load_file: a directory", F_MAP_LOAD_FILE, .path = PATH_DIR, .expect = DCH_EIO},
    {"map_load_file: not a map", F_MAP_LOAD_FILE, .path = PATH_GARBAGE, .expect = DCH_ECORRUPT},
    {"map_load_file: empty file", F_MAP_LOAD_FILE, .path = PATH_EMPTY_FILE,
     .expect = DCH_ECORRUPT},
    {"map_load_file: version 6", F_MAP_LOAD_FILE, .path = PATH_VERSION_6,
     .expect = DCH_EVERSION},
    {"map_load_file: last byte missing", F_MAP_LOAD_FILE, .path = PATH_TRUNCATED,
     .expect = DCH_ECORRUPT},
    {"map_load_file: a byte too many", F_MAP_LOAD_FILE, .path = PATH_TRAILING,
     .expect = DCH_ECORRUPT},
    /* map_diff.h: dch_map_diff */
    {"map_diff: NULL from", F_MAP_DIFF, .obj = OBJ_NULL, .expect = DCH_EINVAL},
    {"map_diff: NULL to", F_MAP_DIFF, .obj2 = OBJ_NULL, .expect = DCH_EINVAL},
    {"map_diff: NULL fn", F_MAP_DIFF, .cb = CB_NULL, .expect = DCH_EINVAL},
    {"map_diff: other units", F_MAP_DIFF, .pair = PAIR_UNITS, .expect = DCH_EINVAL},
    {"map_diff: other slots per unit", F_MAP_DIFF, .pair = PAIR_SPU, .expect = DCH_EINVAL},
    {"map_diff: other hash key", F_MAP_DIFF, .pair = PAIR_KEY, .expect = DCH_EINVAL},
    /* map_diff.h: dch_map_diff_copies */
    {"map_diff_copies: NULL from", F_MAP_DIFF_COPIES, .obj = OBJ_NULL, .expect = DCH_EINVAL},
    {"map_diff_copies: NULL to", F_MAP_DIFF_COPIES, .obj2 = OBJ_NULL, .expect = DCH_EINVAL},
    {"map_diff_copies: NULL fn", F_MAP_DIFF_COPIES, .cb = CB_NULL, .expect = DCH_EINVAL},
    {"map_diff_copies: other units", F_MAP_DIFF_COPIES, .pair = PAIR_UNITS,
     .expect = DCH_EINVAL},
    {"map_diff_copies: other slots per unit", F_MAP_DIFF_COPIES, .pair = PAIR_SPU,
     .expect = DCH_EINVAL},
    {"map_diff_copies: other hash key", F_MAP_DIFF_COPIES, .pair = PAIR_KEY,
     .expect = DCH_EINVAL},
    /* ring.h: dch_ring_new */
    {"ring_new: NULL out", F_RING_NEW, .out = OUT_NULL, .expect = DCH_EINVAL},
    {"ring_new: points_per_weight 0", F_RING_NEW, .cfg = CFG_PPW_0, .expect = DCH_EINVAL},
    {"ring_new: allocator without realloc", F_RING_NEW, .cfg = CFG_ALLOC_NO_REALLOC,
     .expect = DCH_EINVAL},
    {"ring_new: allocator without free", F_RING_NEW, .cfg = CFG_ALLOC_NO_FREE,
     .expect = DCH_EINVAL},
    {"ring_new: allocator without alloc", F_RING_NEW, .cfg = CFG_ALLOC_NO_ALLOC,
     .expect = DCH_EINVAL},
    /* dch_ring_clone */
    {"ring_clone: NULL out", F_RING_CLONE, .out = OUT_NULL, .expect = DCH_EINVAL},
    {"ring_clone: NULL ring", F_RING_CLONE, .obj = OBJ_NULL, .expect = DCH_EINVAL},
    /* dch_ring_add_node */
    {"ring_add_node: NULL ring", F_RING_ADD, .obj = OBJ_NULL, .expect = DCH_EINVAL},
    {"ring_add_node: NULL name", F_RING_ADD, .name = NAME_NULL, .expect = DCH_EINVAL},
    {"ring_add_node: empty name", F_RING_ADD, .name = NAME_EMPTY, .expect = DCH_EINVAL},
    {"ring_add_node: 256 bytes without NUL", F_RING_ADD, .name = NAME_UNTERMINATED,
     .expect = DCH_EINVAL},
    {"ring_add_node: 256-byte name", F_RING_ADD, .name = NAME_OVERLONG, .expect = DCH_EINVAL},
    {"ring_add_node: a TAB in the name", F_RING_ADD, .name = NAME_TAB, .expect = DCH_EINVAL},
    {"ring_add_node: a newline in the name", F_RING_ADD, .name = NAME_NEWLINE, .expect = DCH_EINVAL},
    {"ring_add_node: name 0x7f", F_RING_ADD, .name = NAME_DEL, .expect = DCH_EINVAL},
    {"ring_add_node: name in use", F_RING_ADD, .name = NAME_TAKEN, .expect = DCH_EEXIST},
    {"ring_add_node: weight sum UINT32_MAX + 1", F_RING_ADD, .weight = W_SUM_OVER,
     .expect = DCH_EFULL},
    {"ring_add_node: weight UINT32_MAX", F_RING_ADD, .weight = W_MAX, .expect = DCH_EFULL},
    {"ring_add_node: points past the limit", F_RING_ADD, .weight = W_POINTS_OVER,
     .expect = DCH_EFULL},
    /* dch_ring_remove_node */
    {"ring_remove_node: NULL ring", F_RING_REMOVE, .obj = OBJ_NULL, .expect = DCH_EINVAL},
    {"ring_remove_node: freed id", F_RING_REMOVE, .id = ID_FREED, .expect = DCH_ENOENT},
    {"ring_remove_node: id_limit", F_RING_REMOVE, .id = ID_LIMIT, .expect = DCH_ENOENT},
    {"ring_remove_node: DCH_NODE_NONE", F_RING_REMOVE, .id = ID_NONE, .expect = DCH_ENOENT},
    {"ring_remove_node: 65535", F_RING_REMOVE, .id = ID_MAX_NODES, .expect = DCH_ENOENT},
    {"ring_remove_node: 2^16", F_RING_REMOVE, .id = ID_HUGE, .expect = DCH_ENOENT},
    /* dch_ring_set_weight */
    {"ring_set_weight: NULL ring", F_RING_SET_WEIGHT, .obj = OBJ_NULL, .expect = DCH_EINVAL},
    {"ring_set_weight: freed id", F_RING_SET_WEIGHT, .id = ID_FREED, .expect = DCH_ENOENT},
    {"ring_set_weight: id_limit", F_RING_SET_WEIGHT, .id = ID_LIMIT, .expect = DCH_ENOENT},
    {"ring_set_weight: DCH_NODE_NONE", F_RING_SET_WEIGHT, .id = ID_NONE, .expect = DCH_ENOENT},
    {"ring_set_weight: 65535", F_RING_SET_WEIGHT, .id = ID_MAX_NODES, .expect = DCH_ENOENT},
    {"ring_set_weight: 2^16", F_RING_SET_WEIGHT, .id = ID_HUGE, .expect = DCH_ENOENT},
    {"ring_set_weight: weight sum UINT32_MAX + 1", F_RING_SET_WEIGHT, .weight = W_SUM_OVER,
     .expect = DCH_EFULL},
    {"ring_set_weight: weight UINT32_MAX", F_RING_SET_WEIGHT, .weight = W_MAX,
     .expect = DCH_EFULL},
    {"ring_set_weight: points past the limit", F_RING_SET_WEIGHT, .weight = W_POINTS_OVER,
     .expect = DCH_EFULL},
    {"ring_set_weight: weightless member, points past the limit", F_RING_SET_WEIGHT,
     .id = ID_WEIGHTLESS, .weight = W_POINTS_OVER, .expect = DCH_EFULL},
    /* dch_ring_find_node */
    {"ring_find_node: NULL ring", F_RING_FIND, .obj = OBJ_NULL, .expect = DCH_EINVAL},
    {"ring_find_node: NULL name", F_RING_FIND, .name = NAME_NULL, .expect = DCH_EINVAL},
    {"ring_find_node: NULL id_out", F_RING_FIND, .name = NAME_TAKEN, .out = OUT_NULL,
     .expect = DCH_EINVAL},
    {"ring_find_node: empty name", F_RING_FIND, .name = NAME_EMPTY, .expect = DCH_EINVAL},
    {"ring_find_node: 256 bytes without NUL", F_RING_FIND, .name = NAME_UNTERMINATED,
     .expect = DCH_EINVAL},
    {"ring_find_node: 256-byte name", F_RING_FIND, .name = NAME_OVERLONG,
     .expect = DCH_EINVAL},
    {"ring_find_node: a TAB in the name", F_RING_FIND, .name = NAME_TAB, .expect = DCH_EINVAL},
    {"ring_find_node: a newline in the name", F_RING_FIND, .name = NAME_NEWLINE, .expect = DCH_EINVAL},
    {"ring_find_node: name 0x7f", F_RING_FIND, .name = NAME_DEL, .expect = DCH_EINVAL},
    {"ring_find_node: unknown name", F_RING_FIND, .name = NAME_NEW, .expect = DCH_ENOENT},
    /* dch_ring_ranges, dch_ring_foreach_range */
    {"ring_ranges: NULL ring", F_RING_RANGES, .obj = OBJ_NULL, .expect = DCH_EINVAL},
    {"ring_ranges: NULL count_out", F_RING_RANGES, .out = OUT_NULL, .expect = DCH_EINVAL},
    {"ring_ranges: NULL out with cap > 0", F_RING_RANGES, .buf = BUF_NULL_CAP,
     .expect = DCH_EINVAL},
    {"ring_ranges: cap one short", F_RING_RANGES, .buf = BUF_SHORT, .expect = DCH_EFULL},
    {"ring_ranges: cap 0", F_RING_RANGES, .buf = BUF_ZERO, .expect = DCH_EFULL},
    {"ring_foreach_range: NULL ring", F_RING_FOREACH, .obj = OBJ_NULL, .expect = DCH_EINVAL},
    {"ring_foreach_range: NULL fn", F_RING_FOREACH, .cb = CB_NULL, .expect = DCH_EINVAL},
    /* range.h: dch_range_diff */
    {"range_diff: NULL a with a count", F_RANGE_DIFF, .list_a = LIST_NULL, .expect = DCH_EINVAL},
    {"range_diff: NULL b with a count", F_RANGE_DIFF, .list_b = LIST_NULL, .expect = DCH_EINVAL},
    {"range_diff: NULL fn", F_RANGE_DIFF, .cb = CB_NULL, .expect = DCH_EINVAL},
    {"range_diff: empty a", F_RANGE_DIFF, .list_a = LIST_EMPTY, .expect = DCH_EINVAL},
    {"range_diff: b not from 0", F_RANGE_DIFF, .list_b = LIST_NOT_FROM_0, .expect = DCH_EINVAL},
    {"range_diff: a short of 2^64-1", F_RANGE_DIFF, .list_a = LIST_NOT_TO_MAX,
     .expect = DCH_EINVAL},
    {"range_diff: a gap in b", F_RANGE_DIFF, .list_b = LIST_GAP, .expect = DCH_EINVAL},
    {"range_diff: an overlap in a", F_RANGE_DIFF, .list_a = LIST_OVERLAP, .expect = DCH_EINVAL},
    {"range_diff: lo > hi in b", F_RANGE_DIFF, .list_b = LIST_BACKWARDS, .expect = DCH_EINVAL},
};

/* The arguments a case's classes stand for, with what must stay untouched. */
typedef struct call_env {
    fixture *fx;
    char *unterminated; /* exactly 256 bytes, no NUL */
    char *overlong;     /* 256 bytes and a NUL */
    int callbacks;      /* calls made to the callback; errors must make none */
} call_env;

static const char *name_of(const call_env *e, name_arg n)
{
    switch (n) {
    case NAME_NEW: return "zeta";
    case NAME_NULL: return NULL;
    case NAME_EMPTY: return "";
    case NAME_UNTERMINATED: return e->unterminated;
    case NAME_OVERLONG: return e->overlong;
    case NAME_TAKEN: return "beta";
    case NAME_TAB: return "tab\there";
    case NAME_NEWLINE: return "line\n";
    case NAME_DEL: return "\x7f";
    }
    return NULL;
}

static uint32_t id_of(id_arg a, uint32_t limit)
{
    switch (a) {
    case ID_MEMBER: return 0;
    case ID_WEIGHTLESS: return WEIGHTLESS_ID;
    case ID_FREED: return FREED_ID;
    case ID_LIMIT: return limit;
    case ID_NONE: return DCH_NODE_NONE;
    case ID_MAX_NODES: return 65535u;
    case ID_HUGE: return 1u << 16;
    }
    return 0;
}

/* The weight a class stands for, given the weight sum without the member. */
static uint32_t weight_of(weight_arg a, uint64_t others)
{
    switch (a) {
    case W_ONE: return 1;
    case W_SUM_OVER: return (uint32_t)(UINT64_C(1) + UINT32_MAX - others);
    case W_MAX: return UINT32_MAX;
    case W_POINTS_OVER: return (uint32_t)(DCH_RING_MAX_POINTS / RING_PPW + 1 - others);
    }
    return 1;
}

static int count_range(const dch_range *r, void *ctx)
{
    (void)r;
    ((call_env *)ctx)->callbacks++;
    return 0;
}

static int count_move(const dch_move *m, void *ctx)
{
    (void)m;
    ((call_env *)ctx)->callbacks++;
    return 0;
}

static int count_copy_move(const dch_copy_move *m, void *ctx)
{
    (void)m;
    ((call_env *)ctx)->callbacks++;
    return 0;
}

static int count_change(const dch_range_change *c, void *ctx)
{
    (void)c;
    ((call_env *)ctx)->callbacks++;
    return 0;
}

static void apply_cfg_allocator(cfg_arg c, const dch_allocator **a, dch_allocator *half)
{
    *half = faulty_allocator(NULL);
    if (c == CFG_ALLOC_NO_REALLOC)
        half->realloc = NULL;
    else if (c == CFG_ALLOC_NO_FREE)
        half->free = NULL;
    else if (c == CFG_ALLOC_NO_ALLOC)
        half->alloc = NULL;
    else
        return;
    *a = half;
}

/* A range list of a class: the good one is [0, 2^63-1] to 0, the rest to 1. */
static size_t list_of(list_arg a, dch_range *v, const dch_range **out)
{
    const uint64_t half = UINT64_C(1) << 63;
    v[0] = (dch_range){0, half - 1, 0};
    v[1] = (dch_range){half, UINT64_MAX, 1};
    *out = v;
    switch (a) {
    case LIST_GOOD: return 2;
    case LIST_NULL: *out = NULL; return 2;
    case LIST_EMPTY: return 0;
    case LIST_NOT_FROM_0: v[0].lo = 1; return 2;
    case LIST_NOT_TO_MAX: v[1].hi = UINT64_MAX - 1; return 2;
    case LIST_GAP: v[1].lo = half + 1; return 2;
    case LIST_OVERLAP: v[1].lo = half - 1; return 2;
    case LIST_BACKWARDS: v[1] = (dch_range){half, half - 1, 1}; return 2;
    }
    return 2;
}

/* A private copy of the saved map, damaged as the class says, exactly sized. */
static uint8_t *bytes_of(const fixture *fx, bytes_arg b, size_t *len)
{
    size_t n = fx->len;
    switch (b) {
    case BYTES_NULL: *len = 10; return NULL;
    case BYTES_NULL_EMPTY: *len = 0; return NULL;
    case BYTES_EMPTY: n = 0; break;
    case BYTES_11: n = 11; break;
    case BYTES_TRUNCATED: n = fx->len - 1; break;
    case BYTES_TRAILING: n = fx->len + 1; break;
    case BYTES_VERSION_6_SHORT: n = 12; break;
    case BYTES_HEADER_ONLY: n = 56; break;
    default: break;
    }
    uint8_t *p = xmalloc(n);
    memset(p, 0, n);
    memcpy(p, fx->bytes, n < fx->len ? n : fx->len);
    if (b == BYTES_MAGIC)
        p[1] = 'd';
    else if (b == BYTES_VERSION_0)
        p[8] = 0;
    else if (b == BYTES_VERSION_6 || b == BYTES_VERSION_6_SHORT)
        p[8] = 6;
    else if (b == BYTES_CHECKSUM)
        p[n - 1] ^= 1;
    *len = n;
    return p;
}

static const char *path_of(const fixture *fx, path_arg p, char *buf, size_t cap)
{
    static const char *const file[] = {
        [PATH_GOOD] = "good.dchmap",          [PATH_MISSING] = "missing.dchmap",
        [PATH_NO_DIR] = "no-such-dir/m.dchmap", [PATH_DIR] = "a-directory",
        [PATH_GARBAGE] = "garbage",           [PATH_EMPTY_FILE] = "empty",
        [PATH_VERSION_6] = "version6.dchmap", [PATH_TRUNCATED] = "truncated.dchmap",
        [PATH_TRAILING] = "trailing.dchmap",
    };
    if (p == PATH_NULL)
        return NULL;
    if (p == PATH_EMPTY)
        return "";
    snprintf(buf, cap, "%s/%s", fx->dir, file[p]);
    return buf;
}

/*
 * Make the call a case describes. *out_kept is set to false when an
 * out-parameter that must stay untouched on error was written.
 */
static int call_case(const bad_case *c, call_env *e, bool *out_kept)
{
    fixture *fx = e->fx;
    dch_map *const map = c->obj == OBJ_NULL ? NULL : fx->map;
    dch_ring *const ring = c->obj == OBJ_NULL ? NULL : fx->ring;
    const char *name = name_of(e, c->name);
    /* Out-parameters start as sentinels that must survive an error. */
    dch_map *map_out = (dch_map *)e;
    dch_ring *ring_out = (dch_ring *)e;
    uint32_t id_out = 0xabcdef;
    size_t count_out = 12345;
    int rc = DCH_OK;
    *out_kept = true;

    switch (c->fn) {
    case F_MAP_NEW:
    case F_RING_NEW: {
        dch_map_config mc;
        dch_map_config_default(&mc);
        dch_ring_config rcfg;
        dch_ring_config_default(&rcfg);
        dch_allocator half;
        switch (c->cfg) {
        case CFG_UNITS_0: mc.units = 0; break;
        case CFG_UNITS_3: mc.units = 3; break;
        case CFG_UNITS_MAX: mc.units = UINT32_MAX; break;
        case CFG_SPU_0: mc.slots_per_unit = 0; break;
        case CFG_SPU_6: mc.slots_per_unit = 6; break;
        case CFG_SLOTS_2_25: mc.units = 1u << 13; mc.slots_per_unit = 1u << 12; break;
        case CFG_SLOTS_2_62: mc.units = 1u << 31; mc.slots_per_unit = 1u << 31; break;
        case CFG_UNITS_2_31: mc.units = 1u << 31; mc.slots_per_unit = 1; break;
        case CFG_PPW_0: rcfg.points_per_weight = 0; break;
        default: break;
        }
        apply_cfg_allocator(c->cfg, &mc.allocator, &half);
        apply_cfg_allocator(c->cfg, &rcfg.allocator, &half);
        half.ctx = &fx->fa;
        if (c->fn == F_MAP_NEW) {
            rc = dch_map_new(c->out == OUT_NULL ? NULL : &map_out,
                             c->cfg == CFG_NULL ? NULL : &mc);
            *out_kept = map_out == (dch_map *)e;
        } else {
            rc = dch_ring_new(c->out == OUT_NULL ? NULL : &ring_out,
                              c->cfg == CFG_NULL ? NULL : &rcfg);
            *out_kept = ring_out == (dch_ring *)e;
        }
        break;
    }
    case F_MAP_CLONE:
        rc = dch_map_clone(c->out == OUT_NULL ? NULL : &map_out, map);
        *out_kept = map_out == (dch_map *)e;
        break;
    case F_MAP_ADD: {
        const uint32_t w = weight_of(c->weight, dch_map_total_weight(fx->map));
        rc = dch_map_add_node(map, name, w, c->out == OUT_NULL ? NULL : &id_out);
        *out_kept = id_out == 0xabcdef;
        break;
    }
    case F_MAP_REMOVE:
        rc = dch_map_remove_node(map, id_of(c->id, dch_map_id_limit(fx->map)));
        break;
    case F_MAP_SET_WEIGHT: {
        const uint32_t id = id_of(c->id, dch_map_id_limit(fx->map));
        const uint32_t w = weight_of(c->weight, (uint64_t)dch_map_total_weight(fx->map) -
                                                    dch_map_node_weight(fx->map, id));
        rc = dch_map_set_weight(map, id, w);
        break;
    }
    case F_MAP_FIND:
        rc = dch_map_find_node(map, name, c->out == OUT_NULL ? NULL : &id_out);
        *out_kept = id_out == 0xabcdef;
        break;
    case F_MAP_RANGES:
    case F_RING_RANGES: {
        size_t need = 0;
        if (c->fn == F_MAP_RANGES)
            (void)dch_map_ranges(fx->map, NULL, 0, &need);
        else
            (void)dch_ring_ranges(fx->ring, NULL, 0, &need);
        dch_range *buf = xmalloc((need + 1) * sizeof *buf);
        memset(buf, 0xa5, (need + 1) * sizeof *buf);
        dch_range *out = buf;
        size_t cap = need;
        if (c->buf == BUF_NULL_CAP) {
            out = NULL;
            cap = 5;
        } else if (c->buf == BUF_SHORT) {
            cap = need - 1;
        } else if (c->buf == BUF_ZERO) {
            cap = 0;
        }
        size_t *count = c->out == OUT_NULL ? NULL : &count_out;
        rc = c->fn == F_MAP_RANGES ? dch_map_ranges(map, out, cap, count)
                                   : dch_ring_ranges(ring, out, cap, count);
        if (rc == DCH_EFULL) {
            /* Documented: the first cap ranges written, the count set. */
            range_list want = {NULL, 0, 0};
            if (c->fn == F_MAP_RANGES)
                (void)dch_map_foreach_range(fx->map, ranges_push, &want);
            else
                (void)dch_ring_foreach_range(fx->ring, ranges_push, &want);
            cr_expect_eq(count_out, need, "%s: count_out %zu, there are %zu", c->what,
                         count_out, need);
            for (size_t i = 0; i < cap; i++)
                cr_expect(buf[i].lo == want.v[i].lo && buf[i].hi == want.v[i].hi &&
                              buf[i].owner == want.v[i].owner,
                          "%s: range %zu not written", c->what, i);
            free(want.v);
        }
        free(buf);
        break;
    }
    case F_MAP_FOREACH:
        rc = dch_map_foreach_range(map, c->cb == CB_NULL ? NULL : count_range, e);
        break;
    case F_RING_FOREACH:
        rc = dch_ring_foreach_range(ring, c->cb == CB_NULL ? NULL : count_range, e);
        break;
    case F_MAP_SAVE: {
        size_t cap = fx->len;
        if (c->buf == BUF_SHORT)
            cap = fx->len - 1;
        else if (c->buf == BUF_ZERO)
            cap = 0;
        uint8_t *buf = xmalloc(fx->len);
        memset(buf, 0xa5, fx->len);
        rc = dch_map_save(map, buf, cap, c->out == OUT_NULL ? NULL : &count_out);
        /* Documented: nothing is written when the buffer is short. */
        for (size_t i = 0; i < fx->len; i++)
            if (buf[i] != 0xa5) {
                *out_kept = false;
                break;
            }
        free(buf);
        break;
    }
    case F_MAP_LOAD:
    case F_MAP_LOAD_WITH: {
        size_t len;
        uint8_t *bytes = bytes_of(fx, c->bytes, &len);
        dch_map **out = c->out == OUT_NULL ? NULL : &map_out;
        if (c->fn == F_MAP_LOAD) {
            rc = dch_map_load(out, bytes, len);
        } else {
            const dch_allocator *a = &fx->alloc;
            dch_allocator half;
            apply_cfg_allocator(c->cfg, &a, &half);
            half.ctx = &fx->fa;
            rc = dch_map_load_with(out, bytes, len, a);
        }
        *out_kept = map_out == (dch_map *)e;
        free(bytes);
        break;
    }
    case F_MAP_SAVE_FILE: {
        char buf[128];
        const int before = dir_count(fx->dir, false);
        rc = dch_map_save_file(map, path_of(fx, c->path, buf, sizeof buf));
        /* No temporary file or new file left behind, no directory replaced. */
        cr_expect_eq(dir_count(fx->dir, false), before, "%s: files left behind", c->what);
        struct stat st;
        snprintf(buf, sizeof buf, "%s/a-directory", fx->dir);
        cr_expect(stat(buf, &st) == 0 && S_ISDIR(st.st_mode), "%s: directory replaced",
                  c->what);
        break;
    }
    case F_MAP_LOAD_FILE: {
        char buf[128];
        rc = dch_map_load_file(c->out == OUT_NULL ? NULL : &map_out,
                               path_of(fx, c->path, buf, sizeof buf));
        *out_kept = map_out == (dch_map *)e;
        break;
    }
    case F_MAP_DIFF:
    case F_MAP_DIFF_COPIES: {
        dch_map *to = fx->other[c->pair];
        if (c->fn == F_MAP_DIFF)
            rc = dch_map_diff(map, c->obj2 == OBJ_NULL ? NULL : to,
                              c->cb == CB_NULL ? NULL : count_move, e);
        else
            rc = dch_map_diff_copies(map, c->obj2 == OBJ_NULL ? NULL : to,
                                     c->cb == CB_NULL ? NULL : count_copy_move, e);
        break;
    }
    case F_RING_CLONE:
        rc = dch_ring_clone(c->out == OUT_NULL ? NULL : &ring_out, ring);
        *out_kept = ring_out == (dch_ring *)e;
        break;
    case F_RING_ADD: {
        const uint32_t w = weight_of(c->weight, dch_ring_total_weight(fx->ring));
        rc = dch_ring_add_node(ring, name, w, c->out == OUT_NULL ? NULL : &id_out);
        *out_kept = id_out == 0xabcdef;
        break;
    }
    case F_RING_REMOVE:
        rc = dch_ring_remove_node(ring, id_of(c->id, dch_ring_id_limit(fx->ring)));
        break;
    case F_RING_SET_WEIGHT: {
        const uint32_t id = id_of(c->id, dch_ring_id_limit(fx->ring));
        const uint32_t w = weight_of(c->weight, (uint64_t)dch_ring_total_weight(fx->ring) -
                                                    dch_ring_node_weight(fx->ring, id));
        rc = dch_ring_set_weight(ring, id, w);
        break;
    }
    case F_RING_FIND:
        rc = dch_ring_find_node(ring, name, c->out == OUT_NULL ? NULL : &id_out);
        *out_kept = id_out == 0xabcdef;
        break;
    case F_RANGE_DIFF: {
        dch_range va[2], vb[2];
        const dch_range *a, *b;
        const size_t na = list_of(c->list_a, va, &a), nb = list_of(c->list_b, vb, &b);
        rc = dch_range_diff(a, na, b, nb, c->cb == CB_NULL ? NULL : count_change, e);
        break;
    }
    }
    return rc;
}

Test(bad_input, every_bad_argument_gets_its_documented_code_and_changes_nothing)
{
    call_env e;
    e.unterminated = xmalloc(DCH_NAME_MAX + 1);
    memset(e.unterminated, 'u', DCH_NAME_MAX + 1);
    e.overlong = xmalloc(DCH_NAME_MAX + 2);
    memset(e.overlong, 'o', DCH_NAME_MAX + 1);
    e.overlong[DCH_NAME_MAX + 1] = '\0';
    const size_t n = sizeof bad_cases / sizeof bad_cases[0];
    unsigned failed = 0;
    for (size_t i = 0; i < n; i++) {
        const bad_case *c = &bad_cases[i];
        fixture fx;
        fixture_init(&fx, true);
        e.fx = &fx;
        e.callbacks = 0;
        map_snap ms;
        ring_snap rs;
        map_snap_take(&ms, fx.map);
        ring_snap_take(&rs, fx.ring);
        const long live = fx.fa.live;
        bool out_kept;
        const int rc = call_case(c, &e, &out_kept);
        const char *map_diff = map_snap_differs(&ms, fx.map, true);
        const char *ring_diff = ring_snap_differs(&rs, fx.ring, true);
        const bool ok = rc == c->expect && out_kept && map_diff == NULL && ring_diff == NULL &&
                        fx.fa.live == live && e.callbacks == 0;
        failed += !ok;
        cr_expect_eq(rc, c->expect, "%s: returned %d (%s), documented %d (%s)", c->what, rc,
                     dch_strerror(rc), c->expect, dch_strerror(c->expect));
        cr_expect(out_kept, "%s: wrote its out-parameter or buffer on error", c->what);
        cr_expect(map_diff == NULL, "%s: changed the map's %s", c->what, map_diff);
        cr_expect(ring_diff == NULL, "%s: changed the ring's %s", c->what, ring_diff);
        cr_expect_eq(fx.fa.live, live, "%s: leaked %ld blocks", c->what, fx.fa.live - live);
        cr_expect_eq(e.callbacks, 0, "%s: called the callback %d times", c->what, e.callbacks);
        map_snap_free(&ms);
        ring_snap_free(&rs);
        fixture_free(&fx);
    }
    free(e.unterminated);
    free(e.overlong);
    fprintf(stderr, "bad input: %zu cases, %u failed\n", n, failed);
}

/* ---- Functions that answer a value ------------------------------------ */

typedef enum query_id {
    Q_MAP_NAME, Q_MAP_WEIGHT, Q_MAP_SLOTS, Q_MAP_SLOT_OWNER, Q_MAP_FINGERPRINT,
    Q_RING_NAME, Q_RING_WEIGHT, Q_RING_COUNT, Q_RING_ID_LIMIT, Q_RING_TOTAL, Q_RING_POINTS,
    Q_RING_MEMORY, Q_RING_HASH, Q_RING_LOOKUP_HASH, Q_RING_LOOKUP,
} query_id;

typedef struct query_case {
    const char *what;
    query_id q;
    obj_arg obj;
    id_arg id;     /* for the id getters */
    uint32_t slot; /* for slot_owner; UINT32_MAX stands for P */
    uint64_t expect; /* names: 0 stands for NULL */
} query_case;

static const query_case query_cases[] = {
    {"map_node_name: freed id", Q_MAP_NAME, .id = ID_FREED, .expect = 0},
    {"map_node_name: id_limit", Q_MAP_NAME, .id = ID_LIMIT, .expect = 0},
    {"map_node_name: DCH_NODE_NONE", Q_MAP_NAME, .id = ID_NONE, .expect = 0},
    {"map_node_name: 65535", Q_MAP_NAME, .id = ID_MAX_NODES, .expect = 0},
    {"map_node_name: 2^16", Q_MAP_NAME, .id = ID_HUGE, .expect = 0},
    {"map_node_weight: freed id", Q_MAP_WEIGHT, .id = ID_FREED, .expect = 0},
    {"map_node_weight: id_limit", Q_MAP_WEIGHT, .id = ID_LIMIT, .expect = 0},
    {"map_node_weight: DCH_NODE_NONE", Q_MAP_WEIGHT, .id = ID_NONE, .expect = 0},
    {"map_node_weight: 65535", Q_MAP_WEIGHT, .id = ID_MAX_NODES, .expect = 0},
    {"map_node_slots: freed id", Q_MAP_SLOTS, .id = ID_FREED, .expect = 0},
    {"map_node_slots: id_limit", Q_MAP_SLOTS, .id = ID_LIMIT, .expect = 0},
    {"map_node_slots: DCH_NODE_NONE", Q_MAP_SLOTS, .id = ID_NONE, .expect = 0},
    {"map_node_slots: 65535", Q_MAP_SLOTS, .id = ID_MAX_NODES, .expect = 0},
    {"map_node_slots: weightless member", Q_MAP_SLOTS, .id = ID_WEIGHTLESS, .expect = 0},
    {"map_slot_owner: slot P", Q_MAP_SLOT_OWNER, .slot = UINT32_MAX, .expect = DCH_NODE_NONE},
    {"map_slot_owner: slot UINT32_MAX - 1", Q_MAP_SLOT_OWNER, .slot = UINT32_MAX - 1,
     .expect = DCH_NODE_NONE},
    {"map_fingerprint: NULL map", Q_MAP_FINGERPRINT, .obj = OBJ_NULL, .expect = 0},
    {"ring_node_name: NULL ring", Q_RING_NAME, .obj = OBJ_NULL, .expect = 0},
    {"ring_node_name: freed id", Q_RING_NAME, .id = ID_FREED, .expect = 0},
    {"ring_node_name: id_limit", Q_RING_NAME, .id = ID_LIMIT, .expect = 0},
    {"ring_node_name: DCH_NODE_NONE", Q_RING_NAME, .id = ID_NONE, .expect = 0},
    {"ring_node_name: 65535", Q_RING_NAME, .id = ID_MAX_NODES, .expect = 0},
    {"ring_node_weight: NULL ring", Q_RING_WEIGHT, .obj = OBJ_NULL, .expect = 0},
    {"ring_node_weight: freed id", Q_RING_WEIGHT, .id = ID_FREED, .expect = 0},
    {"ring_node_weight: DCH_NODE_NONE", Q_RING_WEIGHT, .id = ID_NONE, .expect = 0},
    {"ring_node_weight: 2^16", Q_RING_WEIGHT, .id = ID_HUGE, .expect = 0},
    {"ring_node_count: NULL ring", Q_RING_COUNT, .obj = OBJ_NULL, .expect = 0},
    {"ring_id_limit: NULL ring", Q_RING_ID_LIMIT, .obj = OBJ_NULL, .expect = 0},
    {"ring_total_weight: NULL ring", Q_RING_TOTAL, .obj = OBJ_NULL, .expect = 0},
    {"ring_point_count: NULL ring", Q_RING_POINTS, .obj = OBJ_NULL, .expect = 0},
    {"ring_memory: NULL ring", Q_RING_MEMORY, .obj = OBJ_NULL, .expect = 0},
    {"ring_hash: NULL ring", Q_RING_HASH, .obj = OBJ_NULL, .expect = 0},
    {"ring_lookup_hash: NULL ring", Q_RING_LOOKUP_HASH, .obj = OBJ_NULL,
     .expect = DCH_NODE_NONE},
    {"ring_lookup: NULL ring", Q_RING_LOOKUP, .obj = OBJ_NULL, .expect = DCH_NODE_NONE},
};

static uint64_t run_query(const query_case *c, const fixture *fx)
{
    const dch_map *m = c->obj == OBJ_NULL ? NULL : fx->map;
    const dch_ring *r = c->obj == OBJ_NULL ? NULL : fx->ring;
    const uint32_t mid = id_of(c->id, dch_map_id_limit(fx->map));
    const uint32_t rid = id_of(c->id, dch_ring_id_limit(fx->ring));
    switch (c->q) {
    case Q_MAP_NAME: return dch_map_node_name(m, mid) != NULL;
    case Q_MAP_WEIGHT: return dch_map_node_weight(m, mid);
    case Q_MAP_SLOTS: return dch_map_node_slots(m, mid);
    case Q_MAP_SLOT_OWNER:
        return dch_map_slot_owner(m, c->slot == UINT32_MAX ? dch_map_slot_count(m) : c->slot);
    case Q_MAP_FINGERPRINT: return dch_map_fingerprint(m);
    case Q_RING_NAME: return dch_ring_node_name(r, rid) != NULL;
    case Q_RING_WEIGHT: return dch_ring_node_weight(r, rid);
    case Q_RING_COUNT: return dch_ring_node_count(r);
    case Q_RING_ID_LIMIT: return dch_ring_id_limit(r);
    case Q_RING_TOTAL: return dch_ring_total_weight(r);
    case Q_RING_POINTS: return dch_ring_point_count(r);
    case Q_RING_MEMORY: return dch_ring_memory(r);
    case Q_RING_HASH: return dch_ring_hash(r, "key", 3);
    case Q_RING_LOOKUP_HASH: return dch_ring_lookup_hash(r, 12345);
    case Q_RING_LOOKUP: return dch_ring_lookup(r, "key", 3);
    }
    return 0;
}

Test(bad_input, getters_answer_their_documented_value_for_non_members_and_null)
{
    fixture fx;
    fixture_init(&fx, false);
    map_snap ms;
    ring_snap rs;
    map_snap_take(&ms, fx.map);
    ring_snap_take(&rs, fx.ring);
    const size_t n = sizeof query_cases / sizeof query_cases[0];
    for (size_t i = 0; i < n; i++) {
        const query_case *c = &query_cases[i];
        const uint64_t got = run_query(c, &fx);
        cr_expect_eq(got, c->expect, "%s: gave %llu, documented %llu", c->what,
                     (unsigned long long)got, (unsigned long long)c->expect);
    }
    cr_expect_null(map_snap_differs(&ms, fx.map, true), "a getter changed the map");
    cr_expect_null(ring_snap_differs(&rs, fx.ring, true), "a getter changed the ring");

    /* The documented no-ops. */
    dch_ring_config cfg, before;
    dch_ring_config_default(&cfg);
    cfg.points_per_weight = 99;
    before = cfg;
    dch_ring_get_config(NULL, &cfg);
    cr_expect(memcmp(&cfg, &before, sizeof cfg) == 0, "ring_get_config(NULL, cfg) wrote cfg");
    dch_ring_get_config(fx.ring, NULL);
    dch_ring_config_default(NULL);
    dch_ring_free(NULL);
    dch_map_free(NULL);

    /* dch_strerror: never NULL, "unknown error" for codes it does not know
     * (the lowest listed code comes from the list, so a new code moves it). */
    int lowest = DCH_OK;
#define DCH__LOWEST(name, value, message) lowest = (value) < lowest ? (value) : lowest;
    DCH_ERROR_LIST(DCH__LOWEST)
#undef DCH__LOWEST
    const int unknown[] = {1, 42, lowest - 1, -1000, INT32_MIN, INT32_MAX};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++)
        cr_expect_str_eq(dch_strerror(unknown[i]), "unknown error", "code %d", unknown[i]);
    for (int code = DCH_OK; code >= lowest; code--) {
        cr_expect_not_null(dch_strerror(code));
        cr_expect_str_neq(dch_strerror(code), "unknown error", "code %d", code);
    }
    /* NULL data is the empty message when len is 0. */
    const uint8_t key[16] = {1};
    cr_expect_eq(dch_siphash24(key, NULL, 0), dch_siphash24(key, "", 0));
    fprintf(stderr, "getters: %zu cases\n", n);
    map_snap_free(&ms);
    ring_snap_free(&rs);
    fixture_free(&fx);
}

/* ---- Limits that are valid up to the edge ----------------------------- */

/*
 * The name rule byte by byte: "a<b>z" is a valid name exactly when b is not a
 * control byte (b >= 0x20 and b != 0x7f), for the map and the ring alike; a
 * refused name changes neither, and a valid one can be found again.
 */
Test(bad_input, names_with_a_control_byte_are_refused_and_change_nothing)
{
    fixture fx;
    fixture_init(&fx, false);
    unsigned accepted = 0;
    for (unsigned b = 1; b <= 0xff; b++) {
        const char name[4] = {'a', (char)b, 'z', '\0'};
        const bool valid = b >= 0x20 && b != 0x7f;
        map_snap ms;
        ring_snap rs;
        map_snap_take(&ms, fx.map);
        ring_snap_take(&rs, fx.ring);
        uint32_t id = DCH_NODE_NONE, found = DCH_NODE_NONE;
        const int rm = dch_map_add_node(fx.map, name, 1, &id);
        const int fm = dch_map_find_node(fx.map, name, &found);
        if (valid) {
            cr_assert_eq(rm, DCH_OK, "byte 0x%02x: map_add_node returned %d", b, rm);
            cr_assert_eq(fm, DCH_OK, "byte 0x%02x: map_find_node returned %d", b, fm);
            cr_assert_eq(found, id, "byte 0x%02x", b);
            cr_assert_eq(dch_map_remove_node(fx.map, id), DCH_OK);
        } else {
            cr_assert_eq(rm, DCH_EINVAL, "byte 0x%02x: map_add_node returned %d", b, rm);
            cr_assert_eq(fm, DCH_EINVAL, "byte 0x%02x: map_find_node returned %d", b, fm);
            cr_assert_eq(id, DCH_NODE_NONE, "byte 0x%02x: id written on error", b);
            const char *d = map_snap_differs(&ms, fx.map, true);
            cr_assert(d == NULL, "byte 0x%02x: a refused name changed the map's %s", b, d);
        }
        id = found = DCH_NODE_NONE;
        const int rr = dch_ring_add_node(fx.ring, name, 1, &id);
        const int fr = dch_ring_find_node(fx.ring, name, &found);
        if (valid) {
            cr_assert_eq(rr, DCH_OK, "byte 0x%02x: ring_add_node returned %d", b, rr);
            cr_assert_eq(fr, DCH_OK, "byte 0x%02x: ring_find_node returned %d", b, fr);
            cr_assert_eq(found, id, "byte 0x%02x", b);
            cr_assert_eq(dch_ring_remove_node(fx.ring, id), DCH_OK);
            accepted++;
        } else {
            cr_assert_eq(rr, DCH_EINVAL, "byte 0x%02x: ring_add_node returned %d", b, rr);
            cr_assert_eq(fr, DCH_EINVAL, "byte 0x%02x: ring_find_node returned %d", b, fr);
            cr_assert_eq(id, DCH_NODE_NONE, "byte 0x%02x: id written on error", b);
            const char *d = ring_snap_differs(&rs, fx.ring, true);
            cr_assert(d == NULL, "byte 0x%02x: a refused name changed the ring's %s", b, d);
        }
        map_snap_free(&ms);
        ring_snap_free(&rs);
    }
    cr_assert_eq(accepted, 0xff - 0x20, "bytes 0x20 .. 0xff but 0x7f are valid");
    fixture_free(&fx);
}

Test(bad_input, the_longest_name_and_the_largest_weight_sum_are_accepted)
{
    fixture fx;
    fixture_init(&fx, false);
    /* 255 bytes in a block of exactly 256. */
    char *longest = xmalloc(DCH_NAME_MAX + 1);
    memset(longest, 'n', DCH_NAME_MAX);
    longest[DCH_NAME_MAX] = '\0';
    uint32_t id, found;
    cr_assert_eq(dch_map_add_node(fx.map, longest, 0, &id), DCH_OK);
    cr_assert_eq(dch_map_find_node(fx.map, longest, &found), DCH_OK);
    cr_assert_eq(found, id);
    cr_assert_str_eq(dch_map_node_name(fx.map, id), longest);
    cr_assert_eq(dch_ring_add_node(fx.ring, longest, 1, &id), DCH_OK);
    cr_assert_eq(dch_ring_find_node(fx.ring, longest, &found), DCH_OK);
    cr_assert_eq(found, id);

    /* The map: a weight sum of exactly UINT32_MAX, and one more is refused. */
    const uint32_t room = UINT32_MAX - dch_map_total_weight(fx.map);
    cr_assert_eq(dch_map_add_node(fx.map, "heavy", room - 1, &id), DCH_OK);
    cr_assert_eq(dch_map_set_weight(fx.map, id, room), DCH_OK);
    cr_assert_eq(dch_map_total_weight(fx.map), UINT32_MAX);
    map_snap ms;
    map_snap_take(&ms, fx.map);
    cr_assert_eq(dch_map_add_node(fx.map, "one-more", 1, NULL), DCH_EFULL);
    cr_assert_eq(dch_map_set_weight(fx.map, 0, 2), DCH_EFULL);
    cr_assert_null(map_snap_differs(&ms, fx.map, true));
    map_snap_free(&ms);
    /* Every slot is owned by a member of positive weight, as always. */
    for (uint32_t s = 0; s < dch_map_slot_count(fx.map); s++) {
        const uint32_t o = dch_map_slot_owner(fx.map, s);
        cr_assert(dch_map_node_weight(fx.map, o) > 0, "slot %u owned by %u", s, o);
    }
    free(longest);
    fixture_free(&fx);
}

/*
 * A map file (map_file.h's format, written here byte by byte) holding
 * DCH_MAP_MAX_NODES members of weight 0 in a one-slot map: adding members one
 * by one would take minutes under valgrind.
 */
static uint8_t *full_map_file(size_t *len_out)
{
    const uint32_t n = DCH_MAP_MAX_NODES;
    const size_t len = 56 + (size_t)n * (11 + 5) + 1 + 2 + 8;
    uint8_t *p = xmalloc(len);
    memset(p, 0, len);
    const uint8_t magic[8] = {0x89, 'D', 'C', 'H', 0x0D, 0x0A, 0x1A, 0x0A};
    memcpy(p, magic, 8);
    p[8] = 1;                                      /* version */
    for (int i = 0; i < 4; i++)
        p[12 + i] = (uint8_t)(n >> (8 * i));       /* members */
    for (int i = 0; i < 8; i++)
        p[16 + i] = (uint8_t)((uint64_t)len >> (8 * i));
    p[24] = 1;                                     /* 1 unit */
    p[28] = 1;                                     /* of 1 slot */
    size_t at = 56;
    for (uint32_t id = 0; id < n; id++) {
        p[at] = (uint8_t)id;
        p[at + 1] = (uint8_t)(id >> 8);            /* weight 0, 0 slots */
        p[at + 10] = 5;
        snprintf((char *)p + at + 11, 6, "%05u", id); /* the NUL lands on the next record */
        at += 16;
    }
    p[at++] = 0;                                   /* raw table */
    p[at++] = 0xff;
    p[at++] = 0xff;                                /* unowned */
    const uint8_t key[16] = {'d', 'c', 'h', ' ', 'm', 'a', 'p', ' ',
                             'c', 'h', 'e', 'c', 'k', 's', 'u', 'm'};
    const uint64_t sum = dch_siphash24(key, p, at);
    for (int i = 0; i < 8; i++)
        p[at + (size_t)i] = (uint8_t)(sum >> (8 * i));
    *len_out = len;
    return p;
}

Test(bad_input, a_full_map_refuses_one_more_member_and_changes_nothing)
{
    size_t len;
    uint8_t *bytes = full_map_file(&len);
    dch_map *m;
    cr_assert_eq(dch_map_load(&m, bytes, len), DCH_OK);
    free(bytes);
    cr_assert_eq(dch_map_node_count(m), DCH_MAP_MAX_NODES);
    map_snap ms;
    map_snap_take(&ms, m);
    uint32_t id = 77;
    cr_assert_eq(dch_map_add_node(m, "one-more", 0, &id), DCH_EFULL);
    cr_assert_eq(dch_map_add_node(m, "one-more", 1, &id), DCH_EFULL);
    cr_assert_eq(dch_map_add_node(m, "00007", 1, &id), DCH_EEXIST);
    cr_assert_eq(id, 77);
    cr_assert_null(map_snap_differs(&ms, m, true));
    map_snap_free(&ms);
    /* A freed id is given again, and the map is full again. */
    cr_assert_eq(dch_map_remove_node(m, 4242), DCH_OK);
    cr_assert_eq(dch_map_add_node(m, "newcomer", 1, &id), DCH_OK);
    cr_assert_eq(id, 4242);
    cr_assert_eq(dch_map_slot_owner(m, 0), 4242);
    cr_assert_eq(dch_map_add_node(m, "one-more", 1, NULL), DCH_EFULL);
    dch_map_free(m);
}

/* ---- Allocation failure ----------------------------------------------- */

static dch_map *alloc_map(faulty *fa, const dch_allocator *a, uint32_t units, uint32_t spu,
                          uint32_t members, bool equal)
{
    faulty_arm(fa, 0, false);
    dch_map_config cfg = map_config(units, spu);
    cfg.hash_key[0] = 7;
    cfg.allocator = a;
    dch_map *m;
    cr_assert_eq(dch_map_new(&m, &cfg), DCH_OK);
    static const uint32_t unequal[] = {1, 2, 3, 4, 5};
    map_add_members(m, "m", members, equal ? NULL : unequal, 5);
    /* A weightless member and a hole, when there is room for them. */
    if (members >= 3) {
        cr_assert_eq(dch_map_set_weight(m, 1, 0), DCH_OK);
        cr_assert_eq(dch_map_remove_node(m, 2), DCH_OK);
    }
    return m;
}

typedef enum map_op {
    M_ADD, M_ADD_IDLE, M_REMOVE, M_REMOVE_IDLE, M_RAISE, M_LOWER, M_DRAIN, M_REVIVE,
    M_CLONE, M_LOAD_WITH, M_OP_COUNT
} map_op;
static const char *const map_op_names[M_OP_COUNT] = {
    "add", "add weightless", "remove", "remove weightless", "raise", "lower", "drain",
    "revive", "clone", "load_with"};

/* A member of weight 2 or more, to lower; DCH_NODE_NONE if there is none. */
static uint32_t heavy_member(const dch_map *m)
{
    for (uint32_t id = 0; id < dch_map_id_limit(m); id++)
        if (dch_map_node_weight(m, id) >= 2)
            return id;
    return DCH_NODE_NONE;
}

/* Whether op applies to a map built by alloc_map: id 0 of positive weight,
 * id 1 weightless (with 3 members or more). */
static bool map_op_applies(map_op op, const dch_map *m)
{
    switch (op) {
    case M_REMOVE: case M_RAISE: case M_DRAIN: return dch_map_node_weight(m, 0) > 0;
    case M_REMOVE_IDLE: case M_REVIVE:
        return dch_map_node_name(m, 1) != NULL && dch_map_node_weight(m, 1) == 0;
    case M_LOWER: return heavy_member(m) != DCH_NODE_NONE;
    default: return true;
    }
}

static int run_map_op(dch_map *m, map_op op, const uint8_t *bytes, size_t len,
                      const dch_allocator *a, dch_map **out)
{
    switch (op) {
    case M_ADD: return dch_map_add_node(m, "joiner", 2, NULL);
    case M_ADD_IDLE: return dch_map_add_node(m, "idle", 0, NULL);
    case M_REMOVE: return dch_map_remove_node(m, 0);
    case M_REMOVE_IDLE: return dch_map_remove_node(m, 1);
    case M_RAISE: return dch_map_set_weight(m, 0, dch_map_node_weight(m, 0) + 3);
    case M_LOWER: {
        const uint32_t id = heavy_member(m);
        return dch_map_set_weight(m, id, dch_map_node_weight(m, id) / 2);
    }
    case M_DRAIN: return dch_map_set_weight(m, 0, 0);
    case M_REVIVE: return dch_map_set_weight(m, 1, 4);
    case M_CLONE: return dch_map_clone(out, m);
    case M_LOAD_WITH: return dch_map_load_with(out, bytes, len, a);
    case M_OP_COUNT: break;
    }
    return DCH_EINVAL;
}

typedef struct sweep_shape {
    uint32_t units, spu, members;
    bool equal;
    double min_scale; /* runs when DCH_TEST_SCALE is at least this */
} sweep_shape;

/* The maps the sweep covers. The default config's table (65,536 slots) makes
 * every step there cost milliseconds, so the valgrind pass (scale 0.05)
 * covers the smaller shapes only. */
static const sweep_shape map_shapes[] = {
    {64, 16, 5, false, 0},     {4, 4, 3, true, 0},      {1, 1, 2, false, 0},
    {1024, 64, 9, true, 0.1},  {1024, 64, 0, true, 0.1}, {256, 4, 12, false, 0.1},
    {16, 8, 1, false, 0.1},    {1024, 64, 4, false, 1},  {64, 16, 40, true, 1},
    {128, 32, 20, false, 1},
};

Test(bad_input, every_failed_allocation_of_a_map_call_changes_nothing, .timeout = 600)
{
    faulty fa = {0, 0, false, 0};
    const dch_allocator a = faulty_allocator(&fa);
    size_t nshapes = 0;
    unsigned long points = 0;
    for (size_t si = 0; si < sizeof map_shapes / sizeof map_shapes[0]; si++) {
        const sweep_shape sh = map_shapes[si];
        if (test_scale() < sh.min_scale)
            continue;
        nshapes++;
        dch_map *base = alloc_map(&fa, &a, sh.units, sh.spu, sh.members, sh.equal);
        size_t len;
        cr_assert_eq(dch_map_save(base, NULL, 0, &len), DCH_OK);
        uint8_t *bytes = xmalloc(len);
        cr_assert_eq(dch_map_save(base, bytes, len, &len), DCH_OK);
        for (map_op op = 0; op < M_OP_COUNT; op++) {
            if (!map_op_applies(op, base))
                continue;
            /* The reference: the call with nothing failing. */
            dch_map *ref, *ref_out = NULL;
            faulty_arm(&fa, 0, false);
            cr_assert_eq(dch_map_clone(&ref, base), DCH_OK);
            faulty_arm(&fa, 0, false);
            cr_assert_eq(run_map_op(ref, op, bytes, len, &a, &ref_out), DCH_OK, "%s",
                         map_op_names[op]);
            /* Calls that allocate nothing (removing a weightless member, or
             * the last one of positive weight) have no failure point. */
            const long calls = fa.calls;
            map_snap want;
            map_snap_take(&want, ref_out ? ref_out : ref);
            fault_sweep sw;
            for (fault_sweep_start(&sw, &fa, SWEEP_BOTH, calls); fault_sweep_next(&sw);) {
                const long k = sw.at;
                dch_map *m, *out = (dch_map *)&fa;
                faulty_arm(&fa, 0, false);
                cr_assert_eq(dch_map_clone(&m, base), DCH_OK);
                map_snap before;
                map_snap_take(&before, m);
                const long live = fa.live;
                faulty_arm(&fa, k, sw.after);
                const int rc = run_map_op(m, op, bytes, len, &a, &out);
                fault_sweep_done(&sw, rc);
                points++;
                cr_assert_eq(rc, DCH_ENOMEM,
                             "%ux%u, %u members: %s with allocation %ld of %ld failing%s: "
                             "returned %d",
                             sh.units, sh.spu, sh.members, map_op_names[op], k, calls,
                             sw.after ? " (and later ones)" : "", rc);
                const char *why = map_snap_differs(&before, m, true);
                cr_assert_null(why, "%ux%u, %u members: %s, allocation %ld failing: %s changed",
                               sh.units, sh.spu, sh.members, map_op_names[op], k, why);
                cr_assert_eq(fa.live, live, "%s, allocation %ld failing: %ld blocks leaked",
                             map_op_names[op], k, fa.live - live);
                cr_assert(out == (dch_map *)&fa, "%s: out written on failure",
                          map_op_names[op]);
                /* The same call now succeeds, with the reference's result. */
                cr_assert_eq(run_map_op(m, op, bytes, len, &a, &out), DCH_OK);
                const char *diff = map_snap_differs(&want, op >= M_CLONE ? out : m, true);
                cr_assert_null(diff, "%s after a failure at %ld: %s differs from the reference",
                               map_op_names[op], k, diff);
                if (op >= M_CLONE)
                    dch_map_free(out);
                map_snap_free(&before);
                dch_map_free(m);
            }
            map_snap_free(&want);
            dch_map_free(ref_out);
            dch_map_free(ref);
        }
        free(bytes);
        dch_map_free(base);
        cr_assert_eq(fa.live, 0, "%ld blocks leaked", fa.live);
    }
    fprintf(stderr, "map calls: %lu allocation failure points over %zu maps\n", points, nshapes);
}

Test(bad_input, every_failed_allocation_of_map_new_and_save_file_is_clean)
{
    faulty fa = {0, 0, false, 0};
    const dch_allocator a = faulty_allocator(&fa);
    /* 2^20 slots only at full scale: the table is filled slot by slot. */
    const uint32_t shapes[][2] = {{1024, 64}, {1, 1}, {16, 8}, {4096, 256}};
    const size_t nshapes = test_scale() >= 1.0 ? 4 : 3;
    unsigned long points = 0;
    for (size_t si = 0; si < nshapes; si++) {
        dch_map_config cfg = map_config(shapes[si][0], shapes[si][1]);
        cfg.allocator = &a;
        fault_sweep sw;
        for (fault_sweep_start(&sw, &fa, SWEEP_BOTH, SWEEP_UNTIL_OK); fault_sweep_next(&sw);) {
            const long k = sw.at;
            dch_map *m = (dch_map *)&fa;
            const int rc = dch_map_new(&m, &cfg);
            fault_sweep_done(&sw, rc);
            if (rc == DCH_OK) {
                cr_assert_eq(dch_map_slot_count(m), cfg.units * cfg.slots_per_unit);
                dch_map_free(m);
                cr_assert_eq(fa.live, 0);
                cr_assert_gt(k, 2, "map_new allocates the map and its table");
                continue;
            }
            points++;
            cr_assert_eq(rc, DCH_ENOMEM, "map_new, allocation %ld failing: %d", k, rc);
            cr_assert(m == (dch_map *)&fa, "map_new wrote out on failure");
            cr_assert_eq(fa.live, 0, "map_new leaked at allocation %ld", k);
        }
    }

    /* dch_map_save_file: the default config, members, in a scratch dir. */
    scratch sc;
    scratch_make(&sc, "bad-input", "m.dchmap");
    dch_map *m = alloc_map(&fa, &a, 1024, 64, 9, true);
    fault_sweep sw;
    for (fault_sweep_start(&sw, &fa, SWEEP_BOTH, SWEEP_UNTIL_OK); fault_sweep_next(&sw);) {
        const int rc = dch_map_save_file(m, sc.path);
        fault_sweep_done(&sw, rc);
        cr_assert_eq(sw.leaked, 0, "save_file leaked at allocation %ld", sw.at);
        if (rc == DCH_OK) {
            dch_map *back;
            cr_assert_eq(dch_map_load_file(&back, sc.path), DCH_OK);
            cr_assert_eq(dch_map_fingerprint(back), dch_map_fingerprint(m));
            dch_map_free(back);
            unlink(sc.path);
            continue;
        }
        points++;
        cr_assert_eq(rc, DCH_ENOMEM);
        cr_assert_eq(dir_count(sc.dir, false), 0, "save_file left a file at allocation %ld", sw.at);
    }
    dch_map_free(m);
    rmdir(sc.dir);
    cr_assert_eq(fa.live, 0);
    fprintf(stderr, "map_new and save_file: %lu allocation failure points\n", points);
}

/* ---- The ring --------------------------------------------------------- */

static dch_ring *alloc_ring(faulty *fa, const dch_allocator *a, uint32_t ppw, uint32_t members)
{
    faulty_arm(fa, 0, false);
    dch_ring_config cfg;
    dch_ring_config_default(&cfg);
    cfg.points_per_weight = ppw;
    cfg.allocator = a;
    dch_ring *r;
    cr_assert_eq(dch_ring_new(&r, &cfg), DCH_OK);
    for (uint32_t i = 0; i < members; i++) {
        char name[16];
        snprintf(name, sizeof name, "r%u", i);
        cr_assert_eq(dch_ring_add_node(r, name, 1 + i % 4, NULL), DCH_OK);
    }
    if (members >= 3) {
        cr_assert_eq(dch_ring_set_weight(r, 1, 0), DCH_OK);
        cr_assert_eq(dch_ring_remove_node(r, 2), DCH_OK);
    }
    return r;
}

typedef enum ring_op { R_ADD, R_ADD_IDLE, R_RAISE, R_REVIVE, R_CLONE, R_OP_COUNT } ring_op;
static const char *const ring_op_names[R_OP_COUNT] = {"add", "add weightless", "raise",
                                                      "revive", "clone"};

static int run_ring_op(dch_ring *r, ring_op op, dch_ring **out)
{
    switch (op) {
    case R_ADD: return dch_ring_add_node(r, "joiner", 2, NULL);
    case R_ADD_IDLE: return dch_ring_add_node(r, "idle", 0, NULL);
    case R_RAISE: return dch_ring_set_weight(r, 0, dch_ring_node_weight(r, 0) + 2);
    case R_REVIVE: return dch_ring_set_weight(r, 1, 3);
    case R_CLONE: return dch_ring_clone(out, r);
    case R_OP_COUNT: break;
    }
    return DCH_EINVAL;
}

Test(bad_input, every_failed_allocation_of_a_ring_call_changes_nothing, .timeout = 600)
{
    faulty fa = {0, 0, false, 0};
    const dch_allocator a = faulty_allocator(&fa);
    /* Points per weight, members, and the least DCH_TEST_SCALE that runs it:
     * every ring with points holds a 256 KiB index, copied by every clone,
     * so the valgrind pass (0.05) takes the small ones. */
    const struct {
        uint32_t ppw, members;
        double min_scale;
    } shapes[] = {{1, 3, 0}, {160, 0, 0}, {7, 12, 0}, {160, 9, 0.1}, {7, 30, 0.1}, {160, 1, 0.1}};
    size_t nshapes = 0;
    unsigned long points = 0;

    fault_sweep new_sweep;
    for (fault_sweep_start(&new_sweep, &fa, SWEEP_BOTH, SWEEP_UNTIL_OK);
         fault_sweep_next(&new_sweep);) {
        dch_ring_config cfg;
        dch_ring_config_default(&cfg);
        cfg.allocator = &a;
        dch_ring *r = (dch_ring *)&fa;
        const int rc = dch_ring_new(&r, &cfg);
        fault_sweep_done(&new_sweep, rc);
        if (rc == DCH_OK) {
            dch_ring_free(r);
            continue;
        }
        points++;
        cr_assert_eq(rc, DCH_ENOMEM);
        cr_assert(r == (dch_ring *)&fa, "ring_new wrote out on failure");
        cr_assert_eq(fa.live, 0);
    }

    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
        if (test_scale() < shapes[si].min_scale)
            continue;
        nshapes++;
        const uint32_t ppw = shapes[si].ppw, members = shapes[si].members;
        dch_ring *base = alloc_ring(&fa, &a, ppw, members);
        for (ring_op op = 0; op < R_OP_COUNT; op++) {
            if ((op == R_RAISE && members < 1) || (op == R_REVIVE && members < 3))
                continue;
            dch_ring *ref, *ref_out = NULL;
            faulty_arm(&fa, 0, false);
            cr_assert_eq(dch_ring_clone(&ref, base), DCH_OK);
            faulty_arm(&fa, 0, false);
            cr_assert_eq(run_ring_op(ref, op, &ref_out), DCH_OK);
            const long calls = fa.calls;
            cr_assert_gt(calls, 0, "%s allocates", ring_op_names[op]);
            ring_snap want;
            ring_snap_take(&want, ref_out ? ref_out : ref);
            fault_sweep sw;
            for (fault_sweep_start(&sw, &fa, SWEEP_BOTH, calls); fault_sweep_next(&sw);) {
                const long k = sw.at;
                dch_ring *r, *out = (dch_ring *)&fa;
                faulty_arm(&fa, 0, false);
                cr_assert_eq(dch_ring_clone(&r, base), DCH_OK);
                ring_snap before;
                ring_snap_take(&before, r);
                const long live = fa.live;
                faulty_arm(&fa, k, sw.after);
                const int rc = run_ring_op(r, op, &out);
                fault_sweep_done(&sw, rc);
                points++;
                cr_assert_eq(rc, DCH_ENOMEM, "ppw %u, %u members: %s, allocation %ld of %ld "
                             "failing: returned %d", ppw, members, ring_op_names[op], k,
                             calls, rc);
                const char *why = ring_snap_differs(&before, r, true);
                cr_assert_null(why, "%s, allocation %ld failing: %s changed",
                               ring_op_names[op], k, why);
                cr_assert_eq(fa.live, live, "%s, allocation %ld failing: leaked",
                             ring_op_names[op], k);
                cr_assert(out == (dch_ring *)&fa, "%s wrote out on failure",
                          ring_op_names[op]);
                cr_assert_eq(run_ring_op(r, op, &out), DCH_OK);
                const char *diff = ring_snap_differs(&want, op == R_CLONE ? out : r, true);
                cr_assert_null(diff, "%s after a failure at %ld: %s differs",
                               ring_op_names[op], k, diff);
                if (op == R_CLONE)
                    dch_ring_free(out);
                ring_snap_free(&before);
                dch_ring_free(r);
            }
            ring_snap_free(&want);
            dch_ring_free(ref_out);
            dch_ring_free(ref);
        }
        dch_ring_free(base);
        cr_assert_eq(fa.live, 0, "%ld blocks leaked", fa.live);
    }
    fprintf(stderr, "ring calls: %lu allocation failure points over %zu rings\n", points,
            nshapes);
}

/*
 * ring.h: removal "never fails for lack of memory", and lowering a weight
 * only gives memory back. With every allocator call failing, both succeed
 * with the same ownership as with a working allocator.
 */
Test(bad_input, ring_removal_and_lowering_succeed_with_every_allocation_failing)
{
    faulty fa = {0, 0, false, 0};
    const dch_allocator a = faulty_allocator(&fa);
    dch_ring *base = alloc_ring(&fa, &a, 40, 9);
    const struct {
        const char *what;
        uint32_t id, weight; /* weight UINT32_MAX: remove */
    } ops[] = {{"remove", 0, UINT32_MAX}, {"remove the last point holder", 3, UINT32_MAX},
               {"lower", 4, 1}, {"drain", 5, 0}, {"remove weightless", 1, UINT32_MAX}};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        dch_ring *ref, *r;
        faulty_arm(&fa, 0, false);
        cr_assert_eq(dch_ring_clone(&ref, base), DCH_OK);
        cr_assert_eq(dch_ring_clone(&r, base), DCH_OK);
        const int want = ops[i].weight == UINT32_MAX ? dch_ring_remove_node(ref, ops[i].id)
                                                     : dch_ring_set_weight(ref, ops[i].id,
                                                                           ops[i].weight);
        cr_assert_eq(want, DCH_OK);
        ring_snap ws;
        ring_snap_take(&ws, ref);
        faulty_arm(&fa, 1, true);
        const int rc = ops[i].weight == UINT32_MAX ? dch_ring_remove_node(r, ops[i].id)
                                                   : dch_ring_set_weight(r, ops[i].id,
                                                                         ops[i].weight);
        faulty_arm(&fa, 0, false);
        cr_assert_eq(rc, DCH_OK, "%s with no memory: %d", ops[i].what, rc);
        const char *diff = ring_snap_differs(&ws, r, false);
        cr_assert_null(diff, "%s with no memory: %s differs", ops[i].what, diff);
        /* The ring goes on working: an add afterwards matches the reference. */
        cr_assert_eq(dch_ring_add_node(r, "later", 2, NULL), DCH_OK);
        cr_assert_eq(dch_ring_add_node(ref, "later", 2, NULL), DCH_OK);
        ring_snap_free(&ws);
        ring_snap_take(&ws, ref);
        cr_assert_null(ring_snap_differs(&ws, r, false));
        ring_snap_free(&ws);
        dch_ring_free(ref);
        dch_ring_free(r);
    }
    dch_ring_free(base);
    cr_assert_eq(fa.live, 0);
}

/* ---- Calls that must not allocate ------------------------------------- */

static int stop_at_once(const dch_range *r, void *ctx)
{
    (void)r;
    (void)ctx;
    return 1;
}

static int any_move(const dch_move *m, void *ctx)
{
    (void)m;
    ++*(int *)ctx;
    return 0;
}

Test(bad_input, reading_functions_never_call_the_allocator)
{
    faulty fa = {0, 0, false, 0};
    const dch_allocator a = faulty_allocator(&fa);
    dch_map *m = alloc_map(&fa, &a, 64, 16, 9, false);
    dch_map *m2 = alloc_map(&fa, &a, 64, 16, 10, false);
    dch_ring *r = alloc_ring(&fa, &a, 40, 9);
    faulty_arm(&fa, 0, false);
    const long live = fa.live;
    uint32_t id;
    size_t n = 0;
    /* Everything on a const object, including the documented allocation-free
     * walks (foreach_range, dch_map_diff). */
    cr_assert_eq(dch_map_find_node(m, "m5", &id), DCH_OK);
    cr_assert_eq(dch_map_lookup(m, "key", 3) < dch_map_id_limit(m), 1);
    cr_assert_eq(dch_map_ranges(m, NULL, 0, &n), DCH_EFULL);
    cr_assert_eq(dch_map_foreach_range(m, stop_at_once, NULL), 1);
    int moves = 0;
    cr_assert_eq(dch_map_diff(m, m2, any_move, &moves), DCH_OK);
    cr_assert_gt(moves, 0);
    size_t len;
    cr_assert_eq(dch_map_save(m, NULL, 0, &len), DCH_OK);
    (void)dch_map_fingerprint(m);
    cr_assert_eq(dch_ring_find_node(r, "r5", &id), DCH_OK);
    (void)dch_ring_lookup(r, "key", 3);
    cr_assert_eq(dch_ring_ranges(r, NULL, 0, &n), DCH_EFULL);
    cr_assert_eq(dch_ring_foreach_range(r, stop_at_once, NULL), 1);
    cr_assert_eq(fa.calls, 0, "reading made %ld allocator calls", fa.calls);
    cr_assert_eq(fa.live, live);
    dch_map_free(m);
    dch_map_free(m2);
    dch_ring_free(r);
    cr_assert_eq(fa.live, 0);
}
