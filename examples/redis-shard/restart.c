/* SPDX-License-Identifier: MIT */
/*
 * restart: a rolling restart of every shard of a store with R copies of
 * every key (a map with dch_map_config.replicas = R, 2 by default), done
 * with primary drains, and the same restart done with weights for
 * comparison.
 *
 *   redis-shard restart [--replicas R] [--keys N] [--hash-key HEX32]
 *                       [--ops N] [--seed N] [--no-catch-up] --restart CMD
 *                       NAME=HOST:PORT...
 *
 * N keys are written to every copy of their slot. Then, for each shard x
 * in turn:
 *
 *   1. drain x (dch_map_drain, DCH_DRAIN_PRIMARY) on a clone of the map and
 *      publish it: x stays a copy of every slot it held and is the primary
 *      of none, so reads stop going to x and no data moves;
 *   2. stop x's server with SHUTDOWN SAVE (it writes its data file), and
 *      wait until its port refuses connections;
 *   3. start it again on its folder (`CMD PORT`, run by /bin/sh: the
 *      script's launcher), so it loads its data file; check that it holds
 *      every key it is a copy of;
 *   4. catch up: the writes x missed while it was down (the client wrote
 *      every other copy and noted the key for x) are written to x;
 *   5. undrain x and publish: the map routes exactly as before the drain
 *      (the fingerprint is checked), so x serves again the keys it holds.
 *
 * Between every two of these, and while x is down, a client runs --ops
 * operations (a quarter writes, the rest reads) on random keys by the map
 * published at that moment: a write goes to every copy whose server is up
 * (a copy whose server is down is noted, and written by step 4), a read
 * goes to the primary. A read that finds the primary down or the key
 * missing fails; one that finds an older value than the key's last write is
 * stale. The client runs between the steps, not beside them, so every
 * phase of the restart meets its reads and writes in a known state.
 *
 * Keys migrated are key copies a change of map creates on a member that
 * held no copy of the key's slot: what a store must copy before publishing
 * the change. The drains and undrains must create none. The comparison
 * makes the same restarts with dch_map_set_weight(x, 0) and back to x's
 * weight, on the map alone, and counts the key copies those changes
 * create, and the keys whose copies end elsewhere than at the start (x
 * comes back to other slots). At the end every key is read from every copy:
 * none may be missing or old, and no shard may hold a key it is not a copy
 * of. --no-catch-up skips step 4: a shard then serves, once undrained, the
 * values it held before its stop, and the run must fail with stale reads
 * (the test that shows the check can fail). Lines starting with '@' carry
 * the numbers as key=value pairs.
 */
#include "replicas.h"
#include "number.h"
#include "rng.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct options {
    uint64_t replicas, keys, ops, seed;
    uint8_t hash_key[16];
    const char *restart;
    int no_catch_up; /* skip step 4: the check must then find stale reads */
} options;

/* What the client and the restarts met, over the whole run. */
typedef struct counts {
    uint64_t reads, writes, failed, stale;
    uint64_t noted;     /* (shard, key) pairs a write missed while the shard was down */
    uint64_t caught_up; /* of them, written to the shard once it was back */
    uint64_t migrated;  /* key copies the published changes created */
} counts;

/* The run: the scenario, its published map and which servers are down. */
typedef struct rolling {
    scenario *s;
    const options *o;
    dch_map *published;
    uint8_t *down;   /* per shard */
    uint8_t *missed; /* shard * keys + i: a write of key i x missed */
    uint64_t rng;
    counts c;
} rolling;

/* ---- Keys migrated between two maps -------------------------------------- */

/* Per slot, the copies of b on members (by name) that held no copy in a. */
static uint32_t created_copies(const dch_map *a, const dch_map *b, uint32_t slot)
{
    uint32_t ia[DCH_MAP_MAX_REPLICAS], ib[DCH_MAP_MAX_REPLICAS], created = 0;
    size_t na = dch_map_slot_replicas(a, slot, ia, DCH_MAP_MAX_REPLICAS);
    size_t nb = dch_map_slot_replicas(b, slot, ib, DCH_MAP_MAX_REPLICAS);

    na = na < DCH_MAP_MAX_REPLICAS ? na : DCH_MAP_MAX_REPLICAS;
    nb = nb < DCH_MAP_MAX_REPLICAS ? nb : DCH_MAP_MAX_REPLICAS;
    for (size_t j = 0; j < nb; j++) {
        int held = 0;
        for (size_t i = 0; i < na && !held; i++)
            held = strcmp(dch_map_node_name(a, ia[i]), dch_map_node_name(b, ib[j])) == 0;
        created += !held;
    }
    return created;
}

/* Key copies the change a -> b creates, over the data set's keys. */
static uint64_t keys_migrated(const scenario *s, const dch_map *a, const dch_map *b)
{
    uint64_t n = 0;

    for (uint32_t i = 0; i < s->keys; i++) {
        char key[KEY_CAP];
        const size_t klen = key_name(key, i);

        n += created_copies(a, b, dch_map_slot_of(a, dch_map_hash(a, key, klen)));
    }
    return n;
}

/* ---- The client ------------------------------------------------------------ */

/* A write of key i's next generation to every copy under the published
 * map; a copy whose server is down is noted for the catch-up. */
static int client_write(rolling *r, uint32_t i)
{
    scenario *s = r->s;
    char key[KEY_CAP], val[VALUE_CAP];
    uint32_t ids[DCH_MAP_MAX_REPLICAS];
    const size_t klen = key_name(key, i);
    const uint32_t gen = ++s->gens[i];
    const size_t vlen = value_make(val, i, gen);
    const size_t n = dch_map_lookup_replicas_hash(r->published, dch_map_hash(r->published, key, klen),
                                                  ids, DCH_MAP_MAX_REPLICAS);

    r->c.writes++;
    for (size_t c = 0; c < n && c < DCH_MAP_MAX_REPLICAS; c++) {
        if (r->down[ids[c]]) {
            uint8_t *m = &r->missed[(size_t)ids[c] * s->keys + i];
            r->c.noted += !*m; /* a key written twice while down is caught up once */
            *m = 1;
        } else if (store_set(s->conns[ids[c]], key, klen, val, vlen) != 0) {
            return -1;
        }
    }
    return 0;
}

/* A read of key i from its primary under the published map. */
static void client_read(rolling *r, uint32_t i)
{
    scenario *s = r->s;
    char key[KEY_CAP], val[VALUE_CAP];
    size_t len;
    const size_t klen = key_name(key, i);
    const uint32_t p = dch_map_lookup_hash(r->published, dch_map_hash(r->published, key, klen));

    r->c.reads++;
    if (p == DCH_NODE_NONE || r->down[p]) {
        r->c.failed++;
        return;
    }
    const int got = store_get(s->conns[p], key, klen, val, sizeof val, &len);
    if (got != 1)
        r->c.failed++;
    else if (!value_is(val, len, i, s->gens[i]))
        r->c.stale++;
}

/* --ops operations on random keys, a quarter of them writes. */
static int client_burst(rolling *r)
{
    for (uint64_t k = 0; k < r->o->ops; k++) {
        const uint32_t i = (uint32_t)(dch__rng_next(&r->rng) % r->s->keys);

        if (dch__rng_next(&r->rng) % 4 == 0) {
            if (client_write(r, i) != 0)
                return -1;
        } else {
            client_read(r, i);
        }
    }
    return 0;
}

/* ---- One shard's restart ------------------------------------------------- */

/* Publish next (taken): the keys it migrates are counted, then it is the
 * map the client uses. */
static void publish(rolling *r, dch_map *next)
{
    const uint64_t migrated = keys_migrated(r->s, r->published, next);

    r->c.migrated += migrated;
    printf("  published epoch %" PRIu64 ": %" PRIu64 " keys migrated\n", dch_map_epoch(next),
           migrated);
    dch_map_free(r->published);
    r->published = next;
}

/* Run `CMD PORT` through /bin/sh; 0 when it exits 0. */
static int run_restart(const char *cmd, int port)
{
    char line[4096];

    if ((size_t)snprintf(line, sizeof line, "%s %d", cmd, port) >= sizeof line)
        return -1;
    fflush(stdout);
    const int status = system(line);
    return status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* Start shard x again on its folder and reconnect; check it loaded every
 * key it is a copy of (the count under the published map, which is
 * x's copies before it stopped: a primary drain keeps them). */
static int start_again(rolling *r, uint32_t x, uint64_t *loaded)
{
    scenario *s = r->s;
    uint64_t held = 0;

    if (run_restart(r->o->restart, s->ms[x].port) != 0) {
        fprintf(stderr, "redis-shard: %s: the restart command failed\n", s->ms[x].name);
        return -1;
    }
    for (int attempt = 0; store_connect(&s->conns[x], s->ms[x].host, s->ms[x].port) != 0;
         attempt++) {
        if (attempt == 50)
            return -1;
        sleep_ms(100);
    }
    const long long size = store_dbsize(s->conns[x]);
    for (uint32_t i = 0; i < s->keys; i++) {
        char key[KEY_CAP];
        uint32_t ids[DCH_MAP_MAX_REPLICAS];
        const size_t klen = key_name(key, i);
        const size_t n = dch_map_lookup_replicas_hash(
            r->published, dch_map_hash(r->published, key, klen), ids, DCH_MAP_MAX_REPLICAS);

        for (size_t c = 0; c < n && c < DCH_MAP_MAX_REPLICAS; c++)
            held += ids[c] == x;
    }
    *loaded = size < 0 ? 0 : (uint64_t)size;
    r->down[x] = 0;
    return size < 0 || (uint64_t)size != held ? -1 : 0;
}

/* Write to x every key it missed while down, at the key's last generation. */
static int catch_up(rolling *r, uint32_t x)
{
    scenario *s = r->s;

    for (uint32_t i = 0; i < s->keys; i++) {
        uint8_t *m = &r->missed[(size_t)x * s->keys + i];
        char key[KEY_CAP], val[VALUE_CAP];

        if (!*m)
            continue;
        const size_t klen = key_name(key, i), vlen = value_make(val, i, s->gens[i]);
        if (store_set(s->conns[x], key, klen, val, vlen) != 0)
            return -1;
        *m = 0;
        r->c.caught_up++;
    }
    return 0;
}

/* Steps 1 to 5 for shard x; 0, or -1 when a step failed (reported). */
static int restart_one(rolling *r, uint32_t x)
{
    scenario *s = r->s;
    const uint64_t fp = dch_map_fingerprint(r->published);
    dch_map *next = NULL;
    uint64_t loaded = 0, caught = r->c.caught_up;

    printf("%s:\n", s->ms[x].name);
    if (dch_map_clone(&next, r->published) != DCH_OK ||
        dch_map_drain(next, x, DCH_DRAIN_PRIMARY) != DCH_OK) {
        dch_map_free(next);
        return -1;
    }
    publish(r, next);
    if (client_burst(r) != 0 || stop_shard(s, x, 1) != 0)
        return -1;
    r->down[x] = 1;
    printf("  stopped (SHUTDOWN SAVE)\n");
    if (client_burst(r) != 0 || start_again(r, x, &loaded) != 0) {
        fprintf(stderr, "redis-shard: %s did not come back with its %" PRIu64 " keys\n",
                s->ms[x].name, loaded);
        return -1;
    }
    if ((!r->o->no_catch_up && catch_up(r, x) != 0) || client_burst(r) != 0)
        return -1;
    printf("  started again: %" PRIu64 " keys loaded from its data file, %" PRIu64
           " missed writes caught up\n",
           loaded, r->c.caught_up - caught);
    next = NULL;
    if (dch_map_clone(&next, r->published) != DCH_OK || dch_map_undrain(next, x) != DCH_OK) {
        dch_map_free(next);
        return -1;
    }
    publish(r, next);
    if (dch_map_fingerprint(r->published) != fp) {
        fprintf(stderr, "redis-shard: after %s's undrain the map routes otherwise\n",
                s->ms[x].name);
        return -1;
    }
    printf("@restart shard name=%s loaded=%" PRIu64 " caught_up=%" PRIu64 "\n", s->ms[x].name,
           loaded, r->c.caught_up - caught);
    return client_burst(r);
}

/* ---- The comparison: weight 0 and back ------------------------------------ */

/* The same restarts made with weights, on the map alone: the key copies
 * they create, and the keys whose copies end elsewhere than in m. */
static int by_weight(const scenario *s, const dch_map *m, uint64_t *migrated, uint64_t *moved)
{
    dch_map *cur = NULL;
    int rc = dch_map_clone(&cur, m) == DCH_OK ? 0 : -1;

    *migrated = *moved = 0;
    for (uint32_t x = 0; rc == 0 && x < s->n; x++) {
        const uint32_t w = dch_map_node_weight(cur, x);
        dch_map *a = NULL, *b = NULL;

        rc = dch_map_clone(&a, cur) == DCH_OK && dch_map_set_weight(a, x, 0) == DCH_OK &&
                     dch_map_clone(&b, a) == DCH_OK && dch_map_set_weight(b, x, w) == DCH_OK
                 ? 0
                 : -1;
        if (rc == 0) {
            const uint64_t out = keys_migrated(s, cur, a), back = keys_migrated(s, a, b);
            printf("  %s weight 0 and back to %" PRIu32 ": %" PRIu64 " + %" PRIu64
                   " keys migrated\n",
                   s->ms[x].name, w, out, back);
            *migrated += out + back;
            dch_map_free(cur);
            cur = b;
            b = NULL;
        }
        dch_map_free(a);
        dch_map_free(b);
    }
    if (rc == 0)
        for (uint32_t i = 0; i < s->keys; i++) {
            char key[KEY_CAP];
            const size_t klen = key_name(key, i);
            *moved += created_copies(m, cur, dch_map_slot_of(m, dch_map_hash(m, key, klen))) > 0;
        }
    dch_map_free(cur);
    return rc;
}

/* ---- The command ------------------------------------------------------------ */

/* Options and members; EXIT_USAGE on a bad one, else 0. */
static int parse_options(options *o, scenario *s, int argc, char **argv)
{
    memset(o, 0, sizeof *o);
    o->replicas = 2;
    o->keys = 20000;
    o->ops = 2000;
    o->seed = 1;
    for (int a = 0; a < argc; a++) {
        const char *v = a + 1 < argc ? argv[a + 1] : NULL;
        int bad = 0;

        if (strcmp(argv[a], "--replicas") == 0 && v)
            bad = dch__number_parse(v, 0, 2, DCH_MAP_MAX_REPLICAS, &o->replicas) != 0;
        else if (strcmp(argv[a], "--keys") == 0 && v)
            bad = dch__number_parse(v, 0, 1, 10000000, &o->keys) != 0;
        else if (strcmp(argv[a], "--ops") == 0 && v)
            bad = dch__number_parse(v, 0, 0, 100000000, &o->ops) != 0;
        else if (strcmp(argv[a], "--seed") == 0 && v)
            bad = dch__number_parse(v, 0, 0, UINT64_MAX, &o->seed) != 0;
        else if (strcmp(argv[a], "--hash-key") == 0 && v)
            bad = dch__hex_parse(v, o->hash_key, 16) != 0;
        else if (strcmp(argv[a], "--restart") == 0 && v)
            o->restart = v;
        else if (strcmp(argv[a], "--no-catch-up") == 0) {
            o->no_catch_up = 1;
            continue;
        } else {
            if (scenario_add_member(s, argv[a], "restart takes --restart CMD and NAME=HOST:PORT "
                                                "arguments") != 0)
                return EXIT_USAGE;
            continue;
        }
        if (bad)
            return usage("restart: --replicas takes 2 .. 8, --keys 1 .. 10000000, --ops "
                         "0 .. 100000000, --hash-key 32 hex digits");
        a++;
    }
    if (o->restart == NULL)
        return usage("restart needs --restart CMD (it starts a server again: CMD PORT)");
    if (s->n < o->replicas + 1)
        return usage("restart needs more shards than copies (R + 1 at least)");
    return 0;
}

/* The run once the shards are connected and the map built. */
static int run(rolling *r, dch_map *m)
{
    scenario *s = r->s;
    uint64_t writes = 0, wmigrated = 0, wmoved = 0;
    tally t;
    int failed = 0;

    if (write_all_copies(s, m, 1, 0, &writes) != 0 || dch_map_clone(&r->published, m) != DCH_OK)
        return 1;
    printf("wrote %" PRIu32 " keys, %" PRIu64 " copies (%" PRIu32 " per key) on %zu shards\n",
           s->keys, writes, s->replicas, s->n);
    for (uint32_t x = 0; x < s->n && !failed; x++)
        failed = restart_one(r, x) != 0;
    if (!failed && read_all_copies(s, r->published, &t) != 0)
        failed = 1;
    if (!failed) {
        printf("after: %" PRIu64 " copies read: %" PRIu64 " missing, %" PRIu64
               " with another value, %" PRIu64 " keys where no copy belongs\n",
               t.reads, t.lost, t.damaged, t.extra);
        failed = t.lost || t.damaged || t.extra ||
                 t.reads != (uint64_t)s->keys * s->replicas;
    }
    printf("drains: %" PRIu64 " keys migrated; the client made %" PRIu64 " reads (%" PRIu64
           " failed, %" PRIu64 " stale) and %" PRIu64 " writes (%" PRIu64
           " key copies missed while down, %" PRIu64 " caught up)\n",
           r->c.migrated, r->c.reads, r->c.failed, r->c.stale, r->c.writes, r->c.noted,
           r->c.caught_up);
    printf("@restart drain migrated=%" PRIu64 " reads=%" PRIu64 " failed=%" PRIu64
           " stale=%" PRIu64 " writes=%" PRIu64 " noted=%" PRIu64 " caught_up=%" PRIu64 "\n",
           r->c.migrated, r->c.reads, r->c.failed, r->c.stale, r->c.writes, r->c.noted,
           r->c.caught_up);
    printf("the same restarts by weight 0 and back:\n");
    if (by_weight(s, m, &wmigrated, &wmoved) != 0)
        failed = 1;
    printf("weights: %" PRIu64 " keys migrated; %" PRIu64
           " keys end on other copies than at the start\n",
           wmigrated, wmoved);
    printf("@restart weight migrated=%" PRIu64 " moved_keys=%" PRIu64 "\n", wmigrated, wmoved);
    failed |= r->c.migrated != 0 || r->c.failed != 0 || r->c.stale != 0 ||
              r->c.caught_up != r->c.noted;
    printf("%s\n", failed ? "FAILED" : "rolling restart: no key migrated, no read failed or stale");
    return failed ? 1 : 0;
}

int cmd_restart(int argc, char **argv)
{
    scenario s;
    options o;
    rolling r;
    dch_map *m = NULL;
    int status;

    memset(&r, 0, sizeof r);
    if (scenario_start(&s, argc) != 0)
        return 1;
    status = parse_options(&o, &s, argc, argv);
    if (status != 0)
        goto out;
    status = 1;
    if (scenario_open(&s, (uint32_t)o.keys, (uint32_t)o.replicas, o.hash_key, &m) != 0)
        goto out;
    r = (rolling){&s, &o, NULL, calloc(s.n, 1), calloc(s.n * (size_t)s.keys, 1), o.seed,
                  {0, 0, 0, 0, 0, 0, 0}};
    if (r.down != NULL && r.missed != NULL)
        status = run(&r, m);
out:
    scenario_free(&s);
    free(r.down);
    free(r.missed);
    dch_map_free(r.published);
    dch_map_free(m);
    return status;
}
