/* SPDX-License-Identifier: MIT */
/*
 * Concurrent readers under one writer, the update pattern dch.h and map.h
 * document: readers look up in the published object without locks; the
 * writer clones it, changes the clone, publishes the clone through an atomic
 * pointer and frees the old object once no reader can still hold it.
 *
 * Reclamation is by hazard pointers, one slot per reader (see `publisher`
 * below): a reader announces the pointer it is about to use and then checks
 * that it is still the published one, retrying if not; the writer swaps in
 * the new object and waits until no slot holds the old one before freeing
 * it. With sequentially consistent atomics, either the writer's scan sees
 * the announcement or the reader's check sees the new pointer, so no reader
 * ever uses a freed object. (An epoch scheme or reference counts would do as
 * well; hazard pointers need no counter on the read path's object.)
 *
 * What the readers check, on the snapshot they loaded: every lookup returns
 * a member of positive weight of that very snapshot (dch_map_node_name
 * non-NULL), or DCH_NODE_NONE exactly when it has no weight; a lookup agrees
 * with the slot table and with a find by the member's name; and the map's
 * epoch never goes back between two loads by one reader (publication
 * order). Readers record the first failure and the main thread reports it,
 * since Criterion's assertions belong to the test's own thread.
 *
 * The last test is of another kind: load counters (dch/load.h), hit by
 * several threads at once, one thread index each, while one thread
 * snapshots and decays; it says what it checks above it.
 *
 * CI runs this file under ThreadSanitizer and fails on any report. Criterion
 * cannot start under ThreadSanitizer (it maps a shared arena at random
 * addresses, which ThreadSanitizer reserves), so the file also builds as a
 * plain program with DCH_NO_CRITERION defined: TEST, CHECK and REQUIRE below
 * stand for Criterion's Test, cr_expect and cr_assert, or for a main() that
 * runs the same tests and fails the same way. The work scales with
 * DCH_TEST_SCALE (the valgrind pass, which runs threads one at a time, uses
 * 0.05); DCH_TEST_SEED replaces the writers' seeds.
 */
#define _POSIX_C_SOURCE 200809L

#include "dch/dch.h"
#include "support.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef DCH_NO_CRITERION
static int failures;

#define TEST(name) static void name(void)
#define REPORT(...)                                                           \
    (fprintf(stderr, "%s:%d: ", __FILE__, __LINE__), fprintf(stderr, __VA_ARGS__), \
     fputc('\n', stderr), failures++)
#define CHECK(cond, ...)                                                      \
    do {                                                                      \
        if (!(cond))                                                          \
            REPORT(__VA_ARGS__);                                              \
    } while (0)
#define REQUIRE(cond, ...)                                                    \
    do {                                                                      \
        if (!(cond)) {                                                        \
            REPORT(__VA_ARGS__);                                              \
            abort();                                                          \
        }                                                                     \
    } while (0)
#else
#include <criterion/criterion.h>
#define TEST(name) Test(concurrency, name, .timeout = 600)
#define CHECK(cond, ...) cr_expect(cond, __VA_ARGS__)
#define REQUIRE(cond, ...) cr_assert(cond, __VA_ARGS__)
#endif

#define READERS 4
#define BATCH 64 /* lookups per snapshot */

/* ---- Publication with hazard pointers --------------------------------- */

typedef struct publisher {
    _Atomic(void *) current;
    _Atomic(void *) hazard[READERS];
    atomic_bool stop;
    atomic_int ready; /* readers that have read at least once */
} publisher;

/* The published object, protected from reclamation until release(). */
static void *acquire(publisher *p, int reader)
{
    void *o = atomic_load(&p->current);
    for (;;) {
        atomic_store(&p->hazard[reader], o);
        void *again = atomic_load(&p->current);
        if (again == o)
            return o;
        o = again;
    }
}

static void release(publisher *p, int reader)
{
    atomic_store(&p->hazard[reader], NULL);
}

/* Publish `next`; returns the old object once no reader holds it. */
static void *publish(publisher *p, void *next)
{
    void *old = atomic_exchange(&p->current, next);
    for (int i = 0; i < READERS; i++)
        while (atomic_load(&p->hazard[i]) == old)
            sched_yield();
    return old;
}

typedef struct reader reader;

/* What a reader checks on each object it acquires. */
typedef void reader_check(reader *rd, const void *obj);

struct reader {
    publisher *pub;
    int index;
    reader_check *check;
    unsigned long snapshots, lookups, versions;
    uint64_t key;        /* the next key to look up */
    uint64_t last_epoch; /* of the last map read */
    const void *last;    /* the last object read */
    char error[256];     /* the first failure, empty if none */
};

#define READER_FAIL(rd, ...)                                                  \
    do {                                                                      \
        if ((rd)->error[0] == '\0')                                           \
            snprintf((rd)->error, sizeof (rd)->error, __VA_ARGS__);           \
    } while (0)

/* A reader's thread: check the published object, again and again, until
 * the writer stops. */
static void *reader_main(void *arg)
{
    reader *rd = arg;
    publisher *p = rd->pub;
    while (!atomic_load(&p->stop)) {
        const void *obj = acquire(p, rd->index);
        rd->check(rd, obj);
        rd->last = obj;
        release(p, rd->index);
        if (rd->snapshots++ == 0)
            atomic_fetch_add(&p->ready, 1);
        /* Readers outnumber the cores: let the writer run. */
        sched_yield();
    }
    return NULL;
}

/* Publish `first` and start the readers on it. */
static void start_readers(publisher *p, void *first, reader *rd, pthread_t *th,
                          reader_check *check)
{
    atomic_init(&p->current, first);
    for (int i = 0; i < READERS; i++)
        atomic_init(&p->hazard[i], NULL);
    atomic_init(&p->stop, false);
    atomic_init(&p->ready, 0);
    for (int i = 0; i < READERS; i++) {
        rd[i] = (reader){.pub = p, .index = i, .check = check, .key = (uint64_t)i << 48};
        REQUIRE(pthread_create(&th[i], NULL, reader_main, &rd[i]) == 0,
                "cannot start a reader");
    }
    /* Publish only once every reader has read, so that they overlap. */
    while (atomic_load(&p->ready) < READERS)
        sched_yield();
}

static void stop_readers(publisher *p, reader *rd, pthread_t *th, const char *what)
{
    atomic_store(&p->stop, true);
    for (int i = 0; i < READERS; i++)
        REQUIRE(pthread_join(th[i], NULL) == 0, "cannot join a reader");
    for (int i = 0; i < READERS; i++) {
        CHECK(rd[i].error[0] == '\0', "%s reader %d: %s", what, i, rd[i].error);
        fprintf(stderr, "%s reader %d: %lu snapshots, %lu lookups, %lu versions seen\n", what,
                i, rd[i].snapshots, rd[i].lookups, rd[i].versions);
    }
}

/* The writer's random stream and the serial of the next new member. */
typedef struct writer {
    uint64_t seed, rng;
    unsigned serial;
} writer;

typedef enum change_kind { CHANGE_ADD, CHANGE_REMOVE, CHANGE_WEIGHT } change_kind;

/*
 * The change a writer makes to a map or ring of n members: an add while
 * there are few members (its name in `name`), else the removal or a new
 * weight of a random member.
 */
static change_kind pick_change(writer *w, uint32_t n, char name[32])
{
    const uint32_t r = rng_below(&w->rng, 100);
    if (n < 3 || (r < 40 && n < 24)) {
        snprintf(name, 32, "node-%u", w->serial++);
        return CHANGE_ADD;
    }
    return r < 70 ? CHANGE_REMOVE : CHANGE_WEIGHT;
}

/* What a writer calls on a map or a ring, through `void *`. */
typedef struct member_calls {
    uint32_t (*count)(const void *o);
    uint32_t (*random_member)(const void *o, uint64_t *rng);
    uint32_t (*weight)(const void *o, uint32_t id);
    int (*add)(void *o, const char *name, uint32_t weight);
    int (*remove)(void *o, uint32_t id);
    int (*set_weight)(void *o, uint32_t id, uint32_t weight);
    int (*clone)(void **out, const void *o);
    void (*free)(void *o);
} member_calls;

/* kind_calls, the member_calls of dch_map (kind map) or dch_ring (ring),
 * whose calls are named alike but for the kind. */
#define MEMBER_CALLS(kind)                                                           \
    static uint32_t kind##_count(const void *o)                                      \
    {                                                                                \
        return dch_##kind##_node_count(o);                                           \
    }                                                                                \
    static uint32_t kind##_random(const void *o, uint64_t *rng)                      \
    {                                                                                \
        return kind##_random_member(o, rng);                                         \
    }                                                                                \
    static uint32_t kind##_weight(const void *o, uint32_t id)                        \
    {                                                                                \
        return dch_##kind##_node_weight(o, id);                                      \
    }                                                                                \
    static int kind##_add(void *o, const char *name, uint32_t weight)                \
    {                                                                                \
        return dch_##kind##_add_node(o, name, weight, NULL);                         \
    }                                                                                \
    static int kind##_remove(void *o, uint32_t id)                                   \
    {                                                                                \
        return dch_##kind##_remove_node(o, id);                                      \
    }                                                                                \
    static int kind##_set_weight(void *o, uint32_t id, uint32_t weight)              \
    {                                                                                \
        return dch_##kind##_set_weight(o, id, weight);                               \
    }                                                                                \
    static int kind##_clone(void **out, const void *o)                               \
    {                                                                                \
        dch_##kind *c = NULL;                                                        \
        const int rc = dch_##kind##_clone(&c, o);                                    \
        *out = c;                                                                    \
        return rc;                                                                   \
    }                                                                                \
    static void kind##_free(void *o)                                                 \
    {                                                                                \
        dch_##kind##_free(o);                                                        \
    }                                                                                \
    static const member_calls kind##_calls = {kind##_count,  kind##_random,          \
                                              kind##_weight, kind##_add,             \
                                              kind##_remove, kind##_set_weight,      \
                                              kind##_clone,  kind##_free}

MEMBER_CALLS(map);
MEMBER_CALLS(ring);

/* One change to a map or a ring that always changes it (and so a map's
 * epoch): an add (pick_change), or a random member's removal or a new
 * weight, never its old one. */
static void change(const member_calls *mc, void *o, writer *w)
{
    char name[32];
    const change_kind kind = pick_change(w, mc->count(o), name);
    if (kind == CHANGE_ADD) {
        REQUIRE(mc->add(o, name, 1 + rng_below(&w->rng, 4)) == DCH_OK, "add");
        return;
    }
    const uint32_t id = mc->random_member(o, &w->rng);
    if (kind == CHANGE_REMOVE) {
        REQUIRE(mc->remove(o, id) == DCH_OK, "remove");
    } else {
        const uint32_t wt = (mc->weight(o, id) + 1 + rng_below(&w->rng, 3)) % 5;
        REQUIRE(mc->set_weight(o, id, wt) == DCH_OK, "set_weight");
    }
}

/* What a publication test publishes: a map or a ring (its calls), what
 * the readers check, and for a map its epoch, which must grow by one a
 * version (NULL: no epoch). */
typedef struct publication {
    const char *what;
    const member_calls *calls;
    reader_check *check;
    uint64_t (*epoch)(const void *o);
} publication;

/*
 * The writer (seeded test_seed(seed)) changes `first` 8 times, then
 * publishes `versions` versions after it, each a clone of the current one
 * with one change, while the readers run pub->check. Only the writer
 * changes `current`, so it may read its own published object without
 * announcing it.
 */
static void run_publication(const publication *pub, void *first, uint64_t seed,
                            unsigned versions)
{
    writer w = {test_seed(seed), 0, 0};
    w.rng = w.seed;
    for (int i = 0; i < 8; i++)
        change(pub->calls, first, &w);
    publisher p;
    reader rd[READERS];
    pthread_t th[READERS];
    start_readers(&p, first, rd, th, pub->check);
    void *cur = first;
    for (unsigned v = 0; v < versions; v++) {
        void *nv;
        REQUIRE(pub->calls->clone(&nv, cur) == DCH_OK, "clone");
        change(pub->calls, nv, &w);
        REQUIRE(pub->epoch == NULL || pub->epoch(nv) == pub->epoch(cur) + 1, "seed %llu: epoch",
                (unsigned long long)w.seed);
        void *old = publish(&p, nv);
        REQUIRE(old == cur, "publish returned another object");
        pub->calls->free(old);
        cur = nv;
    }
    stop_readers(&p, rd, th, pub->what);
    pub->calls->free(cur);
    fprintf(stderr, "%s: %u versions published, seed %llu\n", pub->what, versions,
            (unsigned long long)w.seed);
}

/* ---- The map ---------------------------------------------------------- */

static void check_map_snapshot(reader *rd, const dch_map *m, uint64_t *key)
{
    const uint32_t W = dch_map_total_weight(m);
    for (int i = 0; i < BATCH; i++, ++*key) {
        const uint32_t id = dch_map_lookup(m, key, sizeof *key);
        const uint64_t h = dch_map_hash(m, key, sizeof *key);
        rd->lookups++;
        if (dch_map_slot_owner(m, dch_map_slot_of(m, h)) != id)
            READER_FAIL(rd, "key %llu: lookup %u disagrees with the slot table",
                        (unsigned long long)*key, id);
        if (id == DCH_NODE_NONE) {
            if (W != 0)
                READER_FAIL(rd, "key %llu: no owner in a map of weight %u",
                            (unsigned long long)*key, W);
            continue;
        }
        const char *name = dch_map_node_name(m, id);
        uint32_t found = DCH_NODE_NONE;
        if (name == NULL || dch_map_node_weight(m, id) == 0)
            READER_FAIL(rd, "key %llu: owner %u is not a member of positive weight of the "
                        "map it was read from (epoch %llu)",
                        (unsigned long long)*key, id, (unsigned long long)dch_map_epoch(m));
        else if (dch_map_find_node(m, name, &found) != DCH_OK || found != id)
            READER_FAIL(rd, "member %u \"%s\" is found as %u", id, name, found);
    }
}

static int range_owner_ok(const dch_range *r, void *ctx)
{
    const dch_map *m = ctx;
    return r->owner != DCH_NODE_NONE && dch_map_node_name(m, r->owner) == NULL;
}

static void check_map(reader *rd, const void *obj)
{
    const dch_map *m = obj;
    const uint64_t epoch = dch_map_epoch(m);
    if (epoch < rd->last_epoch)
        READER_FAIL(rd, "epoch went back from %llu to %llu", (unsigned long long)rd->last_epoch,
                    (unsigned long long)epoch);
    rd->versions += epoch != rd->last_epoch;
    rd->last_epoch = epoch;
    check_map_snapshot(rd, m, &rd->key);
    if (rd->snapshots % 16 == 0 && dch_map_foreach_range(m, range_owner_ok, (void *)m) != 0)
        READER_FAIL(rd, "a range of epoch %llu is owned by a non-member",
                    (unsigned long long)epoch);
}

static uint64_t map_epoch(const void *m)
{
    return dch_map_epoch(m);
}

TEST(map_readers_always_see_a_whole_published_map)
{
    const publication pub = {"map", &map_calls, check_map, map_epoch};
    run_publication(&pub, map_shaped(256, 16), 2024, test_scaled(3000, 20));
}

/* ---- The ring --------------------------------------------------------- */

static int ring_range_owner_ok(const dch_range *r, void *ctx)
{
    const dch_ring *ring = ctx;
    return r->owner != DCH_NODE_NONE && dch_ring_node_name(ring, r->owner) == NULL;
}

static void check_ring(reader *rd, const void *obj)
{
    const dch_ring *r = obj;
    rd->versions += obj != rd->last;
    const uint32_t points = dch_ring_point_count(r);
    for (int i = 0; i < BATCH; i++, rd->key++) {
        const uint32_t id = dch_ring_lookup(r, &rd->key, sizeof rd->key);
        rd->lookups++;
        if (id == DCH_NODE_NONE ? points != 0
                                : dch_ring_node_name(r, id) == NULL ||
                                      dch_ring_node_weight(r, id) == 0)
            READER_FAIL(rd, "key %llu: owner %u is not a member of positive weight of the "
                        "ring it was read from (%u points)",
                        (unsigned long long)rd->key, id, points);
    }
    if (rd->snapshots % 64 == 0 &&
        dch_ring_foreach_range(r, ring_range_owner_ok, (void *)r) != 0)
        READER_FAIL(rd, "a range is owned by a non-member");
}

TEST(ring_readers_always_see_a_whole_published_ring)
{
    dch_ring_config cfg;
    dch_ring_config_default(&cfg);
    cfg.points_per_weight = 40;
    dch_ring *first;
    REQUIRE(dch_ring_new(&first, &cfg) == DCH_OK, "ring_new");
    const publication pub = {"ring", &ring_calls, check_ring, NULL};
    run_publication(&pub, first, 2025, test_scaled(2000, 20));
}

/* ---- Shared reading without a writer ---------------------------------- */

/*
 * Everything a reader can ask of one map and one ring, folded into a digest.
 * Threads that share the objects must all get the digest a lone thread
 * gets: the const functions only read (map.h: "there is no lazy state").
 */
typedef struct shared {
    const dch_map *map, *map2;
    const dch_ring *ring;
    unsigned rounds;
    uint64_t digest[READERS];
} shared;

static uint64_t mix(uint64_t d, uint64_t v)
{
    d ^= v + UINT64_C(0x9e3779b97f4a7c15) + (d << 6) + (d >> 2);
    return d;
}

static int fold_range(const dch_range *r, void *ctx)
{
    uint64_t *d = ctx;
    *d = mix(mix(mix(*d, r->lo), r->hi), r->owner);
    return 0;
}

static uint64_t name_hash(const char *name)
{
    static const uint8_t key[16] = {7};
    return name ? dch_siphash24(key, name, strlen(name)) : 0;
}

static int fold_move(const dch_move *mv, void *ctx)
{
    uint64_t *d = ctx;
    *d = mix(mix(*d, mv->lo), mv->hi);
    *d = mix(mix(*d, name_hash(mv->from)), name_hash(mv->to));
    return 0;
}

static uint64_t read_everything(const shared *s)
{
    uint64_t d = 0;
    for (uint64_t k = 0; k < 256; k++) {
        d = mix(d, dch_map_lookup(s->map, &k, sizeof k));
        d = mix(d, dch_ring_lookup(s->ring, &k, sizeof k));
    }
    (void)dch_map_foreach_range(s->map, fold_range, &d);
    (void)dch_ring_foreach_range(s->ring, fold_range, &d);
    (void)dch_map_diff(s->map, s->map2, fold_move, &d);
    d = mix(d, dch_map_fingerprint(s->map));
    size_t len;
    (void)dch_map_save(s->map, NULL, 0, &len);
    uint8_t *buf = malloc(len);
    if (buf != NULL && dch_map_save(s->map, buf, len, &len) == DCH_OK)
        d = mix(d, dch_siphash24((const uint8_t *)"0123456789abcdef", buf, len));
    free(buf);
    for (uint32_t id = 0; id < dch_map_id_limit(s->map); id++) {
        const char *name = dch_map_node_name(s->map, id);
        uint32_t found = DCH_NODE_NONE;
        if (name != NULL)
            (void)dch_map_find_node(s->map, name, &found);
        d = mix(mix(d, found), dch_map_node_slots(s->map, id));
    }
    for (uint32_t id = 0; id < dch_ring_id_limit(s->ring); id++) {
        const char *name = dch_ring_node_name(s->ring, id);
        uint32_t found = DCH_NODE_NONE;
        if (name != NULL)
            (void)dch_ring_find_node(s->ring, name, &found);
        d = mix(d, found);
    }
    return d;
}

typedef struct shared_reader {
    shared *s;
    int index;
} shared_reader;

static void *shared_read(void *arg)
{
    shared_reader *sr = arg;
    uint64_t d = 0;
    for (unsigned r = 0; r < sr->s->rounds; r++)
        d = mix(d, read_everything(sr->s));
    sr->s->digest[sr->index] = d;
    return NULL;
}

TEST(threads_sharing_unchanged_objects_read_what_one_thread_reads)
{
    dch_map *m, *m2;
    dch_ring *r;
    REQUIRE(dch_map_new(&m, NULL) == DCH_OK, "map_new");
    REQUIRE(dch_ring_new(&r, NULL) == DCH_OK, "ring_new");
    for (int i = 0; i < 12; i++) {
        char name[16];
        snprintf(name, sizeof name, "n%d", i);
        REQUIRE(dch_map_add_node(m, name, 1, NULL) == DCH_OK, "add");
        REQUIRE(dch_ring_add_node(r, name, 1 + (uint32_t)i % 2, NULL) == DCH_OK, "add");
    }
    REQUIRE(dch_map_clone(&m2, m) == DCH_OK, "clone");
    REQUIRE(dch_map_add_node(m2, "joiner", 1, NULL) == DCH_OK, "add");
    shared s = {m, m2, r, test_scaled(20, 2), {0}};
    uint64_t alone = 0;
    for (unsigned i = 0; i < s.rounds; i++)
        alone = mix(alone, read_everything(&s));
    pthread_t th[READERS];
    shared_reader sr[READERS];
    for (int i = 0; i < READERS; i++) {
        sr[i] = (shared_reader){&s, i};
        REQUIRE(pthread_create(&th[i], NULL, shared_read, &sr[i]) == 0, "cannot start a reader");
    }
    for (int i = 0; i < READERS; i++)
        REQUIRE(pthread_join(th[i], NULL) == 0, "cannot join a reader");
    for (int i = 0; i < READERS; i++)
        CHECK(s.digest[i] == alone, "reader %d read something else", i);
    dch_map_free(m);
    dch_map_free(m2);
    dch_ring_free(r);
}

/* ---- Load counters ---------------------------------------------------- */

/*
 * dch/load.h's threads: hitters, one per thread index, hit while this
 * thread snapshots and decays. Phase 1 decays as it goes; each snapshot
 * must hold, slot by slot, at least the last one (scaled down by a decay
 * between them, rounded toward zero) and at most everything that will be
 * hit. Then the hitters are joined, a decay by 0 clears every load, and
 * phase 2 hits again from new threads on the same indices (the join orders
 * the handover, as load.h asks) while this thread only snapshots: each
 * snapshot must count at least every amount the hitters had published
 * (release) before it read them (acquire), and after the joins one last
 * snapshot must equal the amounts hit, slot by slot, exactly.
 */
#define LOAD_SLOTS 1024u
#define LOAD_SHIFT 54 /* 64 - log2(LOAD_SLOTS): a hash's slot */
#define LOAD_HITTERS 3

typedef struct load_hitter {
    dch_load_counter *c;
    uint32_t index;
    uint64_t seed;
    unsigned hits;
    const atomic_bool *go;
    _Atomic uint64_t done; /* the amounts hit so far, stored after them */
    atomic_int *finished;
    int failed;
} load_hitter;

/* The i-th hit of a hitter: its hash and amount, from its seed alone. */
static uint64_t load_draw(uint64_t *rng, uint64_t *amount)
{
    const uint64_t h = rng_next(rng);
    *amount = 1 + rng_below(rng, 1000);
    return h;
}

static void *load_hitter_main(void *arg)
{
    load_hitter *h = arg;
    while (!atomic_load(h->go))
        sched_yield();
    uint64_t rng = h->seed, sum = 0;
    for (unsigned i = 0; i < h->hits; i++) {
        uint64_t a;
        const uint64_t hash = load_draw(&rng, &a);
        h->failed |= dch_load_hit(h->c, h->index, hash, a) != DCH_OK;
        sum += a;
        if (i % 256 == 255) {
            atomic_store_explicit(&h->done, sum, memory_order_release);
            sched_yield(); /* two cores: let the snapshots in */
        }
    }
    atomic_store_explicit(&h->done, sum, memory_order_release);
    atomic_fetch_add(h->finished, 1);
    return NULL;
}

/* Every slot's total of what hitters seeded base + 1 .. base + LOAD_HITTERS
 * hit, added to want. */
static void load_expected(uint64_t base, unsigned hits, uint64_t *want)
{
    for (int k = 0; k < LOAD_HITTERS; k++) {
        uint64_t rng = base + 1 + (uint64_t)k;
        for (unsigned i = 0; i < hits; i++) {
            uint64_t a;
            const uint64_t h = load_draw(&rng, &a);
            want[h >> LOAD_SHIFT] += a;
        }
    }
}

/* What this thread does while the hitters run. */
typedef struct load_watch {
    dch_load_counter *c;
    load_hitter *hs;
    const uint64_t *most; /* no slot may ever hold more */
    bool decays;
    uint64_t rng;
    unsigned snapshots, decays_done;
    uint64_t prev[LOAD_SLOTS], out[LOAD_SLOTS];
} load_watch;

static void load_watch_once(load_watch *w)
{
    uint64_t published = 0, total = 0;
    for (int k = 0; k < LOAD_HITTERS; k++)
        published += atomic_load_explicit(&w->hs[k].done, memory_order_acquire);
    REQUIRE(dch_load_snapshot(w->c, w->out) == DCH_OK, "snapshot");
    w->snapshots++;
    for (uint32_t s = 0; s < LOAD_SLOTS; s++) {
        CHECK(w->out[s] >= w->prev[s] && w->out[s] <= w->most[s],
              "slot %u: %llu after %llu, at most %llu", s, (unsigned long long)w->out[s],
              (unsigned long long)w->prev[s], (unsigned long long)w->most[s]);
        total += w->out[s];
    }
    CHECK(w->decays || total >= published,
          "a snapshot counts %llu, the hitters had published %llu before it",
          (unsigned long long)total, (unsigned long long)published);
    memcpy(w->prev, w->out, sizeof w->prev);
    if (w->decays && rng_below(&w->rng, 4) == 0) {
        const uint32_t den = 1 + rng_below(&w->rng, 16), num = rng_below(&w->rng, den + 1);
        REQUIRE(dch_load_decay(w->c, num, den) == DCH_OK, "decay");
        w->decays_done++;
        for (uint32_t s = 0; s < LOAD_SLOTS; s++)
            w->prev[s] = w->prev[s] / den * num + w->prev[s] % den * num / den;
    }
}

/* Run LOAD_HITTERS hitters seeded base + 1 .. while watching them. */
static void load_phase(load_watch *w, uint64_t base, unsigned hits, const char *what)
{
    load_hitter hs[LOAD_HITTERS];
    pthread_t th[LOAD_HITTERS];
    atomic_bool go;
    atomic_int finished;
    atomic_init(&go, false);
    atomic_init(&finished, 0);
    for (int k = 0; k < LOAD_HITTERS; k++) {
        hs[k] = (load_hitter){.c = w->c, .index = (uint32_t)k, .seed = base + 1 + (uint64_t)k,
                              .hits = hits, .go = &go, .finished = &finished};
        atomic_init(&hs[k].done, 0);
        REQUIRE(pthread_create(&th[k], NULL, load_hitter_main, &hs[k]) == 0,
                "cannot start a hitter");
    }
    w->hs = hs;
    w->snapshots = w->decays_done = 0;
    atomic_store(&go, true);
    while (atomic_load(&finished) < LOAD_HITTERS)
        load_watch_once(w);
    load_watch_once(w);
    for (int k = 0; k < LOAD_HITTERS; k++) {
        REQUIRE(pthread_join(th[k], NULL) == 0, "cannot join a hitter");
        CHECK(!hs[k].failed, "hitter %d: a hit failed", k);
    }
    fprintf(stderr, "load %s: %d threads of %u hits, %u snapshots and %u decays beside them\n",
            what, LOAD_HITTERS, hits, w->snapshots, w->decays_done);
}

TEST(load_counters_sum_every_hit_while_threads_hit_concurrently)
{
    const uint64_t seed = test_seed(2026);
    const unsigned hits = test_scaled(200000, 2000);
    static load_watch w;
    static uint64_t most[LOAD_SLOTS], want[LOAD_SLOTS];
    memset(&w, 0, sizeof w);
    REQUIRE(dch_load_counter_new(&w.c, LOAD_SLOTS, LOAD_HITTERS) == DCH_OK, "new");
    w.rng = seed;
    /* Phase 1: hits, snapshots and decays. */
    memset(most, 0, sizeof most);
    load_expected(seed, hits, most);
    w.most = most;
    w.decays = true;
    load_phase(&w, seed, hits, "phase 1");
    /* Cleared, then phase 2: hits and snapshots; the sums must be exact. */
    REQUIRE(dch_load_decay(w.c, 0, 1) == DCH_OK, "decay");
    REQUIRE(dch_load_snapshot(w.c, w.out) == DCH_OK, "snapshot");
    for (uint32_t s = 0; s < LOAD_SLOTS; s++)
        CHECK(w.out[s] == 0, "slot %u holds %llu after a decay by 0", s,
              (unsigned long long)w.out[s]);
    memset(want, 0, sizeof want);
    load_expected(seed + 100, hits, want);
    memset(w.prev, 0, sizeof w.prev);
    w.most = want;
    w.decays = false;
    load_phase(&w, seed + 100, hits, "phase 2");
    REQUIRE(dch_load_snapshot(w.c, w.out) == DCH_OK, "snapshot");
    uint64_t total = 0, sum = 0;
    for (uint32_t s = 0; s < LOAD_SLOTS; s++) {
        CHECK(w.out[s] == want[s], "seed %llu: slot %u holds %llu, the hits sum to %llu",
              (unsigned long long)seed, s, (unsigned long long)w.out[s],
              (unsigned long long)want[s]);
        total += w.out[s];
        sum += want[s];
    }
    fprintf(stderr, "load: %llu counted of %llu hit, seed %llu\n", (unsigned long long)total,
            (unsigned long long)sum, (unsigned long long)seed);
    dch_load_counter_free(w.c);
}

#ifdef DCH_NO_CRITERION
int main(void)
{
    map_readers_always_see_a_whole_published_map();
    ring_readers_always_see_a_whole_published_ring();
    threads_sharing_unchanged_objects_read_what_one_thread_reads();
    load_counters_sum_every_hit_while_threads_hit_concurrently();
    fprintf(stderr, "concurrency: 4 tests, %d failures\n", failures);
    return failures == 0 ? 0 : 1;
}
#endif
