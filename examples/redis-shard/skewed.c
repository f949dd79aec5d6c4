/* SPDX-License-Identifier: MIT */
/*
 * redis-shard-skewed: one round of balancing by load on live Redis shards
 * whose map lives in etcd (skewed.sh starts them).
 *
 *  1. Fetch the map from etcd (dch_etcd_fetch) and write the data set k:0 ..
 *     k:N-1 (generation 0) on its owners.
 *  2. BEFORE: R routers (threads, each with its own Redis connections, its
 *     own etcd client and its own dch_load_counter, as separate router
 *     processes would have) each run the same seeded workload: --ops
 *     operations on keys drawn with Zipf popularity (s = 1.0: key rank r is
 *     drawn with weight 1 / (r + 1)), one in ten a write. Every operation
 *     hits the router's counter with the key's hash (dch_load_hit).
 *  3. Balance: the routers' snapshots are summed (dch_load_snapshot), the
 *     map balanced by them (dch_map_balance_load) and published through
 *     etcd (dch_etcd_publish, expecting the epoch it replaces).
 *  4. Every router picks the new map up (dch_etcd_watch) and routes by it;
 *     then the keys of the slots whose primary moved travel from the old
 *     owner to the new one with the example's migrator (migrate.c: SCAN,
 *     MIGRATE, a second SCAN that must find none left).
 *  5. AFTER: the same workload again, the counters cleared first.
 *
 * Each shard's operations in each phase are read from Redis itself (INFO
 * commandstats: the calls of GET and SET, the only commands a router
 * sends). They must equal, shard by shard, what the counters predict: the
 * load of the slots the shard is the primary of, under the map of the
 * phase. The two phases' loads must be equal slot by slot (the workload is
 * deterministic). At the end every key must be on its owner under the new
 * map, and only there, with the value of its last write.
 *
 * The routers are idle during the migration here; with traffic running, a
 * router follows the rule of cluster_mode.c (the map before the newest as
 * a fallback, acknowledgements before the migrator starts).
 *
 * Usage: redis-shard-skewed --shards NAME=HOST:PORT,... --etcd URLS --key K
 *        [--keys N] [--ops M] [--routers R] [--seed S] [--loads-out FILE]
 * --loads-out writes the loads the balancing round used, as the LOADS file
 * `dchctl balance` and `dchctl show` read (a "slot load" line a slot).
 * Exit status: 0, 1 on a failed check or command, 2 on a usage error.
 */
#include "cluster.h"
#include "flight.h"
#include "keys.h"
#include "migrate.h"
#include "number.h"
#include "plan.h"
#include "route.h"
#include "store.h"

#include "dch/dch.h"
#include "dch/etcd.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SHARDS 32
#define MAX_ROUTERS 8
#define SCAN_MAX_CALLS 1000000u

typedef struct opts {
    const char *shards, *etcd, *key, *loads_out;
    uint64_t keys, ops, routers, seed;
} opts;

/* What every router reads and nobody writes during a phase. */
typedef struct scenario {
    const opts *o;
    cluster c; /* the address book (c.book, c.nbook), for views and migrate_run */
    double *cdf; /* Zipf: cdf[r] = P(rank <= r) */
    uint8_t *gen; /* each key's generation before the phase */
} scenario;

typedef struct router {
    const scenario *sc;
    uint32_t index;
    redisContext *conn[MAX_SHARDS];
    dch_etcd *etcd;
    dch_map *map, *next; /* routes by map; next: the one a watch delivered */
    view v;
    dch_load_counter *counter;
    uint8_t *wrote; /* per key: the phase of this router's last write to it (0: none) */
    uint32_t phase;
    uint64_t reads, writes, misses, damaged, failures;
} router;

static int fail(const char *what)
{
    fprintf(stderr, "redis-shard-skewed: %s\n", what);
    return 1;
}

/* ---- Options and the address book -------------------------------------- */

static int number_opt(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
    return dch__number_parse(s, 0, min, max, out) == 0 ? 0 : fail("a bad number");
}

static int parse_opts(opts *o, int argc, char **argv)
{
    *o = (opts){NULL, NULL, NULL, NULL, 20000, 20000, 2, 1};
    for (int i = 1; i < argc; i += 2) {
        const char *f = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int rc = 0;
        if (v == NULL)
            return fail("an option without its value");
        if (strcmp(f, "--shards") == 0)
            o->shards = v;
        else if (strcmp(f, "--etcd") == 0)
            o->etcd = v;
        else if (strcmp(f, "--key") == 0)
            o->key = v;
        else if (strcmp(f, "--loads-out") == 0)
            o->loads_out = v;
        else if (strcmp(f, "--keys") == 0)
            rc = number_opt(v, 1, 10000000, &o->keys);
        else if (strcmp(f, "--ops") == 0)
            rc = number_opt(v, 1, 100000000, &o->ops);
        else if (strcmp(f, "--routers") == 0)
            rc = number_opt(v, 1, MAX_ROUTERS, &o->routers);
        else if (strcmp(f, "--seed") == 0)
            rc = number_opt(v, 0, UINT64_MAX, &o->seed);
        else
            return fail("unknown option");
        if (rc != 0)
            return rc;
    }
    if (o->shards == NULL || o->etcd == NULL || o->key == NULL)
        return fail("--shards, --etcd and --key are required");
    return 0;
}

/* --shards NAME=HOST:PORT,... into c->book. */
static int read_book(cluster *c, const char *spec)
{
    char *copy = strdup(spec);
    c->book = calloc(MAX_SHARDS, sizeof *c->book);
    if (copy == NULL || c->book == NULL) {
        free(copy);
        return fail("out of memory");
    }
    int rc = 0;
    for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok && rc == 0;
         tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '='), *colon = strrchr(tok, ':');
        if (c->nbook == MAX_SHARDS || eq == NULL || colon == NULL || colon < eq) {
            rc = fail("--shards: NAME=HOST:PORT,...");
            break;
        }
        member *m = &c->book[c->nbook++];
        snprintf(m->name, sizeof m->name, "%.*s", (int)(eq - tok), tok);
        snprintf(m->host, sizeof m->host, "%.*s", (int)(colon - eq - 1), eq + 1);
        m->port = atoi(colon + 1);
    }
    free(copy);
    return rc;
}

static int connect_all(const cluster *c, redisContext **conn)
{
    for (size_t d = 0; d < c->nbook; d++)
        if (store_connect(&conn[d], c->book[d].host, c->book[d].port) != 0)
            return 1;
    return 0;
}

static void close_all(const cluster *c, redisContext **conn)
{
    for (size_t d = 0; d < c->nbook; d++)
        store_close(conn[d]);
}

static dch_etcd *etcd_client(const opts *o)
{
    dch_etcd_config cfg;
    dch_etcd_config_default(&cfg);
    cfg.endpoints = o->etcd;
    dch_etcd *e = NULL;
    return dch_etcd_new(&e, &cfg) == DCH_OK ? e : NULL;
}

/* ---- The workload ------------------------------------------------------ */

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* The Zipf distribution of s = 1.0 over n ranks, as a cumulative table. */
static double *zipf_table(uint32_t n)
{
    double *cdf = malloc(n * sizeof *cdf), sum = 0;
    if (cdf == NULL)
        return NULL;
    for (uint32_t r = 0; r < n; r++)
        cdf[r] = sum += 1.0 / (r + 1.0);
    for (uint32_t r = 0; r < n; r++)
        cdf[r] /= sum;
    return cdf;
}

/* The rank drawn by x: the first r with u < cdf[r], u uniform in [0, 1). */
static uint32_t zipf_pick(const double *cdf, uint32_t n, uint64_t x)
{
    const double u = (double)(x >> 11) * 0x1p-53;
    uint32_t lo = 0, hi = n - 1;
    while (lo < hi) {
        const uint32_t mid = lo + (hi - lo) / 2;
        if (u < cdf[mid])
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* One operation on key i, by r's map: counted, then sent to the owner. */
static void operate(router *r, uint32_t i, int write)
{
    char k[KEY_CAP], v[VALUE_CAP];
    const size_t kl = key_name(k, i);
    const uint64_t h = dch_map_hash(r->map, k, kl);
    const int s = view_owner(&r->v, h);
    if (s < 0 || dch_load_hit(r->counter, 0, h, 1) != DCH_OK) {
        r->failures++;
        return;
    }
    if (write) {
        const size_t vl = value_make(v, i, r->phase);
        if (store_set(r->conn[s], k, kl, v, vl) != 0) {
            r->failures++;
            return;
        }
        r->wrote[i] = (uint8_t)r->phase;
        r->writes++;
        return;
    }
    size_t vl = 0;
    const int found = store_get(r->conn[s], k, kl, v, sizeof v, &vl);
    if (found < 0)
        r->failures++;
    else if (found == 0)
        r->misses++;
    /* Another router may have written the key in this phase already. */
    else if (!value_is(v, vl, i, r->sc->gen[i]) && !value_is(v, vl, i, r->phase))
        r->damaged++;
    r->reads++;
}

/* A phase of r's workload: the same keys in the same order every phase. */
static void *run_phase(void *arg)
{
    router *r = arg;
    const opts *o = r->sc->o;
    uint64_t rng = o->seed * 0x100000001b3u + r->index;
    for (uint64_t k = 0; k < o->ops; k++) {
        const uint32_t i = zipf_pick(r->sc->cdf, (uint32_t)o->keys, splitmix(&rng));
        operate(r, i, splitmix(&rng) % 10 == 0);
    }
    return NULL;
}

static int on_map(const dch_map *m, void *ctx)
{
    router *r = ctx;
    dch_map_free(r->next);
    r->next = NULL;
    return dch_map_clone(&r->next, m) == DCH_OK ? 1 : -1;
}

/* Wait (at most 10 s) for a map newer than r's and route by it. */
static void *pick_up(void *arg)
{
    router *r = arg;
    const int rc = dch_etcd_watch(r->etcd, r->sc->o->key, dch_map_epoch(r->map), 10000, on_map, r);
    if (rc != 1 || r->next == NULL) {
        r->failures++;
        return NULL;
    }
    view_free(&r->v);
    dch_map_free(r->map);
    r->map = r->next;
    r->next = NULL;
    if (view_init(&r->v, &r->sc->c, r->map, NULL) != 0)
        r->failures++;
    return NULL;
}

/* fn on every router, each in its own thread, joined. */
static int all_routers(router *rt, uint32_t n, void *(*fn)(void *))
{
    pthread_t th[MAX_ROUTERS];
    uint32_t started = 0;
    for (; started < n; started++)
        if (pthread_create(&th[started], NULL, fn, &rt[started]) != 0)
            break;
    for (uint32_t i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    return started == n ? 0 : fail("cannot start a router thread");
}

static int router_open(router *r, const scenario *sc, uint32_t index, uint32_t P)
{
    memset(r, 0, sizeof *r);
    r->sc = sc;
    r->index = index;
    r->etcd = etcd_client(sc->o);
    r->wrote = calloc(sc->o->keys, 1);
    if (r->etcd == NULL || r->wrote == NULL || connect_all(&sc->c, r->conn) != 0)
        return fail("a router cannot start");
    uint64_t rev;
    if (dch_etcd_fetch(r->etcd, sc->o->key, &r->map, &rev) != DCH_OK)
        return fail("a router cannot fetch the map");
    if (dch_map_slot_count(r->map) != P || view_init(&r->v, &sc->c, r->map, NULL) != 0)
        return fail("a router's map is not the coordinator's");
    return dch_load_counter_new(&r->counter, P, 1) == DCH_OK ? 0 : fail("a load counter");
}

static void router_close(router *r)
{
    if (r->sc != NULL)
        close_all(&r->sc->c, r->conn);
    dch_etcd_free(r->etcd);
    view_free(&r->v);
    dch_map_free(r->map);
    dch_map_free(r->next);
    dch_load_counter_free(r->counter);
    free(r->wrote);
}

/* ---- Measuring --------------------------------------------------------- */

/* `name`'s calls in an INFO commandstats reply ("cmdstat_get:calls=N,..."). */
static uint64_t calls_of(const char *info, const char *name)
{
    char want[64];
    snprintf(want, sizeof want, "cmdstat_%s:calls=", name);
    const char *p = strstr(info, want);
    return p != NULL ? strtoull(p + strlen(want), NULL, 10) : 0;
}

/* Each shard's GET and SET calls so far, from Redis. */
static int redis_ops(const cluster *c, redisContext **conn, uint64_t *ops)
{
    for (size_t d = 0; d < c->nbook; d++) {
        redisReply *rep = redisCommand(conn[d], "INFO commandstats");
        if (rep == NULL || rep->type != REDIS_REPLY_STRING) {
            freeReplyObject(rep);
            return fail("INFO commandstats failed");
        }
        ops[d] = calls_of(rep->str, "get") + calls_of(rep->str, "set");
        freeReplyObject(rep);
    }
    return 0;
}

/* The sum of the routers' snapshots, slot by slot. */
static int sum_loads(router *rt, uint32_t n, uint32_t P, uint64_t *loads)
{
    uint64_t *one = malloc(P * sizeof *one);
    if (one == NULL)
        return fail("out of memory");
    memset(loads, 0, P * sizeof *loads);
    for (uint32_t k = 0; k < n; k++) {
        dch_load_snapshot(rt[k].counter, one);
        for (uint32_t s = 0; s < P; s++)
            loads[s] += one[s];
    }
    free(one);
    return 0;
}

/* Each shard's load under m: the loads of the slots it is the primary of. */
static void shard_loads(const scenario *sc, const dch_map *m, const uint64_t *loads,
                        uint64_t *out)
{
    memset(out, 0, sc->c.nbook * sizeof *out);
    for (uint32_t s = 0; s < dch_map_slot_count(m); s++) {
        const uint32_t id = dch_map_slot_owner(m, s);
        const int d = id == DCH_NODE_NONE ? -1 : cluster_find(&sc->c, dch_map_node_name(m, id));
        if (d >= 0)
            out[d] += loads[s];
    }
}

/* What a phase measured: per shard, the operations Redis counted and the
 * load the counters give it. */
typedef struct phase_result {
    uint64_t redis[MAX_SHARDS], counted[MAX_SHARDS], total;
    size_t hottest;
} phase_result;

/* One phase: the routers' workload between two readings of Redis's
 * counts; the counters' loads (summed) into loads. */
static int run_workload(scenario *sc, router *rt, redisContext **conn, const dch_map *m,
                        uint64_t *loads, phase_result *pr)
{
    const uint32_t n = (uint32_t)sc->o->routers, P = dch_map_slot_count(m);
    uint64_t before[MAX_SHARDS], after[MAX_SHARDS];
    if (redis_ops(&sc->c, conn, before) != 0 || all_routers(rt, n, run_phase) != 0 ||
        redis_ops(&sc->c, conn, after) != 0 || sum_loads(rt, n, P, loads) != 0)
        return 1;
    shard_loads(sc, m, loads, pr->counted);
    pr->total = 0;
    pr->hottest = 0;
    for (size_t d = 0; d < sc->c.nbook; d++) {
        pr->redis[d] = after[d] - before[d];
        pr->total += pr->redis[d];
        if (pr->redis[d] > pr->redis[pr->hottest])
            pr->hottest = d;
    }
    int rc = 0;
    for (uint32_t k = 0; k < n; k++) {
        rc |= rt[k].failures || rt[k].misses || rt[k].damaged;
        for (uint32_t i = 0; i < sc->o->keys; i++)
            if (rt[k].wrote[i] > sc->gen[i])
                sc->gen[i] = rt[k].wrote[i];
    }
    if (rc != 0)
        return fail("a router's read failed, missed or was damaged");
    for (size_t d = 0; d < sc->c.nbook; d++)
        if (pr->redis[d] != pr->counted[d])
            return fail("Redis counted other operations than the load counters");
    return 0;
}

/* ---- Balancing, publishing, migrating ---------------------------------- */

/* The loads as a LOADS file: a "slot load" line for every loaded slot. */
static int write_loads(const char *path, const uint64_t *loads, uint32_t P)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return fail("cannot write --loads-out");
    fprintf(f, "# slot load: the operations the routers counted before balancing\n");
    for (uint32_t s = 0; s < P; s++)
        if (loads[s] != 0)
            fprintf(f, "%" PRIu32 " %" PRIu64 "\n", s, loads[s]);
    return fclose(f) == 0 ? 0 : fail("cannot write --loads-out");
}

static void print_balance(const dch_balance_report *r)
{
    printf("balancing: total load %" PRIu64 ", heaviest slot %" PRIu64 " (%.2f%%), second %" PRIu64
           "; members above their bounds %" PRIu32 " before, %" PRIu32 " after\n",
           r->total_load, r->heaviest_load,
           r->total_load ? 100.0 * (double)r->heaviest_load / (double)r->total_load : 0.0,
           r->second_load, r->above_before, r->above_after);
    printf("           %" PRIu32 " copy moves (load %" PRIu64 "), %" PRIu32
           " promotions (load %" PRIu64 "), at least %" PRIu64
           " had to move; max/mean %.4f before, %.4f after; %" PRIu32 " load moves in force\n",
           r->moves, r->moved_load, r->promotions, r->promoted_load, r->moved_load_floor,
           r->max_ratio_before, r->max_ratio_after, r->in_force);
}

/* Balance a clone of m by loads and publish it; *next is the new map. */
static int balance_and_publish(const scenario *sc, dch_etcd *e, const dch_map *m,
                               const uint64_t *loads, dch_map **next, dch_balance_report *rep)
{
    if (dch_map_clone(next, m) != DCH_OK)
        return fail("out of memory");
    memset(rep, 0, sizeof *rep);
    int rc = dch_map_balance_load(*next, loads, dch_map_slot_count(m), NULL, rep);
    if (rc != DCH_OK)
        return fail(dch_strerror(rc));
    print_balance(rep);
    if (dch_map_epoch(*next) == dch_map_epoch(m))
        return fail("balancing changed nothing: no skew to correct");
    uint64_t stored;
    rc = dch_etcd_publish(e, sc->o->key, *next, dch_map_epoch(m), &stored);
    if (rc != DCH_OK)
        return fail(dch_etcd_errmsg(e));
    printf("published: epoch %" PRIu64 " -> %" PRIu64 " (fingerprint %016" PRIx64 ")\n",
           dch_map_epoch(m), stored, dch_map_fingerprint(*next));
    return 0;
}

/* Move the keys of every slot whose primary changed from m to next. */
static int migrate(scenario *sc, redisContext **conn, const dch_map *m, const dch_map *next)
{
    view vo, vn;
    plan p;
    flight f;
    migrate_result res;
    const migrate_config cfg = {100, 0, 0};
    memset(&res, 0, sizeof res);
    if (view_init(&vo, &sc->c, m, NULL) != 0)
        return 1;
    int rc = view_init(&vn, &sc->c, next, NULL);
    if (rc == 0 && (rc = plan_build(&p, &sc->c, &vo, &vn)) == 0) {
        rc = flight_init(&f, &vo, &vn, sc->c.nbook);
        if (rc == 0) {
            rc = migrate_run(&sc->c, &p, &f, conn, &cfg, &res);
            flight_destroy(&f);
        }
        printf("migrated: %" PRIu64 " keys in %" PRIu64 " MIGRATE batches (%.4f%% of the hash "
               "space changed primary); left behind %" PRIu64 "\n",
               res.moved, res.batches, 100.0 * p.fraction, res.left_behind);
        /* A shard is donor and receiver at once here, so a later donor's
         * walk meets the keys an earlier one sent it: migrate.c counts them
         * as strays. check_keys finds any key truly out of place. */
        printf("@ migrated=%" PRIu64 " left=%" PRIu64 " received_before_walk=%" PRIu64
               " disagreements=%" PRIu64 "\n",
               res.moved, res.left_behind, res.strays, res.disagreements);
        rc |= res.left_behind != 0 || res.disagreements != 0;
        plan_free(&p);
        migrate_result_free(&res);
        view_free(&vn);
    }
    view_free(&vo);
    return rc != 0 ? fail("the migration failed") : 0;
}

/* ---- The end ----------------------------------------------------------- */

typedef struct check_ctx {
    const scenario *sc;
    const dch_map *m;
    int shard;
    uint64_t seen, misplaced, foreign;
} check_ctx;

static int on_key(const char *key, size_t len, void *ctx)
{
    check_ctx *x = ctx;
    uint32_t i;
    x->seen++;
    if (!key_parse(key, len, &i) || i >= x->sc->o->keys) {
        x->foreign++;
        return 0;
    }
    const uint32_t id = dch_map_lookup(x->m, key, len);
    x->misplaced += cluster_find(&x->sc->c, dch_map_node_name(x->m, id)) != x->shard;
    return 0;
}

/* Every key on its owner under m with its last value, nothing elsewhere. */
static int check_keys(const scenario *sc, redisContext **conn, const dch_map *m)
{
    check_ctx x = {sc, m, 0, 0, 0, 0};
    uint64_t lost = 0, damaged = 0;
    for (size_t d = 0; d < sc->c.nbook; d++) {
        x.shard = (int)d;
        if (store_scan(conn[d], SCAN_MAX_CALLS, on_key, &x) != 0)
            return 1;
    }
    for (uint32_t i = 0; i < sc->o->keys; i++) {
        char k[KEY_CAP], v[VALUE_CAP];
        const size_t kl = key_name(k, i);
        const int d = cluster_find(&sc->c, dch_map_node_name(m, dch_map_lookup(m, k, kl)));
        size_t vl = 0;
        const int found = d < 0 ? -1 : store_get(conn[d], k, kl, v, sizeof v, &vl);
        if (found < 0)
            return fail("a read of the check failed");
        lost += found == 0;
        damaged += found == 1 && !value_is(v, vl, i, sc->gen[i]);
    }
    printf("check: %" PRIu64 " keys of %" PRIu64 " found; lost %" PRIu64 ", damaged %" PRIu64
           ", misplaced %" PRIu64 ", foreign %" PRIu64 "\n",
           x.seen, sc->o->keys, lost, damaged, x.misplaced, x.foreign);
    printf("@ keys=%" PRIu64 " found=%" PRIu64 " lost=%" PRIu64 " damaged=%" PRIu64
           " misplaced=%" PRIu64 " foreign=%" PRIu64 "\n",
           sc->o->keys, x.seen, lost, damaged, x.misplaced, x.foreign);
    return lost || damaged || x.misplaced || x.foreign || x.seen != sc->o->keys;
}

static double share(uint64_t part, uint64_t whole)
{
    return whole ? (double)part / (double)whole : 0.0;
}

/* Each shard's ideal share (its target over the total: w_i / W) and its
 * bound under m as a share (balance.h: min(T + Lmax, max(T, h) + L2) over
 * the total, h its heaviest slot under m). */
static void shard_bounds(const scenario *sc, const dch_map *m, const uint64_t *loads,
                         const dch_balance_report *rep, double *ideal, double *bound)
{
    double W = 0, h[MAX_SHARDS] = {0};
    for (size_t d = 0; d < sc->c.nbook; d++) {
        uint32_t id;
        if (dch_map_find_node(m, sc->c.book[d].name, &id) == DCH_OK)
            W += dch_map_node_weight(m, id);
    }
    for (uint32_t s = 0; s < dch_map_slot_count(m); s++) {
        const uint32_t id = dch_map_slot_owner(m, s);
        const int d = id == DCH_NODE_NONE ? -1 : cluster_find(&sc->c, dch_map_node_name(m, id));
        if (d >= 0 && (double)loads[s] > h[d])
            h[d] = (double)loads[s];
    }
    const double total = (double)rep->total_load;
    for (size_t d = 0; d < sc->c.nbook; d++) {
        uint32_t id;
        ideal[d] = dch_map_find_node(m, sc->c.book[d].name, &id) == DCH_OK && W > 0
                       ? dch_map_node_weight(m, id) / W
                       : 0.0;
        const double T = total * ideal[d], a = T + (double)rep->heaviest_load;
        const double b = (T > h[d] ? T : h[d]) + (double)rep->second_load;
        bound[d] = total > 0 ? (a < b ? a : b) / total : 0.0;
    }
}

/* The table of operations per shard, and the hottest shard's share; the
 * number of shards whose operations after balancing passed their bounds
 * (none may: promise 1 of balance.h, measured by Redis). */
static int print_shares(const scenario *sc, const dch_map *m, const uint64_t *loads,
                         const phase_result *b, const phase_result *a,
                         const dch_balance_report *rep)
{
    double ideal[MAX_SHARDS], bound[MAX_SHARDS], ideal_max = 0;
    int above = 0;
    shard_bounds(sc, m, loads, rep, ideal, bound);
    printf("\n%-8s %10s %8s %10s %8s %8s %8s\n", "shard", "before", "share", "after", "share",
           "ideal", "bound");
    for (size_t d = 0; d < sc->c.nbook; d++) {
        ideal_max = ideal[d] > ideal_max ? ideal[d] : ideal_max;
        printf("%-8s %10" PRIu64 " %7.2f%% %10" PRIu64 " %7.2f%% %7.2f%% %7.2f%%\n",
               sc->c.book[d].name, b->redis[d], 100 * share(b->redis[d], b->total), a->redis[d],
               100 * share(a->redis[d], a->total), 100 * ideal[d], 100 * bound[d]);
        above += (double)a->redis[d] > bound[d] * (double)a->total * (1 + 1e-12);
    }
    const double hot = share(rep->heaviest_load, rep->total_load);
    const double floor = hot > ideal_max ? hot : ideal_max;
    const double before = share(b->redis[b->hottest], b->total);
    const double after = share(a->redis[a->hottest], a->total);
    printf("\nhottest shard: %s with %.2f%% of the operations before balancing, %s with %.2f%% "
           "after (ideal %.2f%%; the hottest slot alone carries %.2f%%, so no placement goes "
           "below %.2f%%)\n",
           sc->c.book[b->hottest].name, 100 * before, sc->c.book[a->hottest].name, 100 * after,
           100 * ideal_max, 100 * hot, 100 * floor);
    printf("@ hottest_before=%.6f hottest_after=%.6f ideal=%.6f floor=%.6f ops_before=%" PRIu64
           " ops_after=%" PRIu64 " above_bound=%d\n",
           before, after, ideal_max, floor, b->total, a->total, above);
    return above;
}

/* ---- main -------------------------------------------------------------- */

static int load_data(const scenario *sc, redisContext **conn, const dch_map *m)
{
    for (uint32_t i = 0; i < sc->o->keys; i++) {
        char k[KEY_CAP], v[VALUE_CAP];
        const size_t kl = key_name(k, i), vl = value_make(v, i, 0);
        const int d = cluster_find(&sc->c, dch_map_node_name(m, dch_map_lookup(m, k, kl)));
        if (d < 0 || store_set(conn[d], k, kl, v, vl) != 0)
            return fail("cannot write the data set");
    }
    return 0;
}

/* Everything after the setup: the two phases around one balancing round. */
static int scenario_run(scenario *sc, router *rt, redisContext **conn, dch_etcd *e,
                        dch_map *m)
{
    const uint32_t P = dch_map_slot_count(m), n = (uint32_t)sc->o->routers;
    uint64_t *loads = malloc(P * sizeof *loads), *again = malloc(P * sizeof *again);
    dch_map *next = NULL;
    phase_result b, a;
    dch_balance_report rep;
    int rc = loads == NULL || again == NULL ? fail("out of memory") : 0;
    if (rc == 0)
        rc = run_workload(sc, rt, conn, m, loads, &b);
    if (rc == 0 && sc->o->loads_out != NULL)
        rc = write_loads(sc->o->loads_out, loads, P);
    if (rc == 0)
        rc = balance_and_publish(sc, e, m, loads, &next, &rep);
    if (rc == 0 && all_routers(rt, n, pick_up) == 0)
        for (uint32_t k = 0; k < n; k++)
            if (rt[k].failures || dch_map_fingerprint(rt[k].map) != dch_map_fingerprint(next))
                rc = fail("a router did not pick the new map up");
    if (rc == 0)
        rc = migrate(sc, conn, m, next);
    for (uint32_t k = 0; rc == 0 && k < n; k++) {
        rt[k].phase = 2;
        dch_load_decay(rt[k].counter, 0, 1); /* the after phase counts afresh */
    }
    if (rc == 0)
        rc = run_workload(sc, rt, conn, next, again, &a);
    if (rc == 0 && memcmp(loads, again, P * sizeof *loads) != 0)
        rc = fail("the second phase's loads differ from the first's");
    if (rc == 0 && print_shares(sc, next, loads, &b, &a, &rep) != 0)
        rc = fail("a shard carries more than its bound after balancing");
    if (rc == 0)
        rc = check_keys(sc, conn, next);
    dch_map_free(next);
    free(loads);
    free(again);
    return rc;
}

int main(int argc, char **argv)
{
    opts o;
    if (parse_opts(&o, argc, argv) != 0)
        return 2;
    scenario sc = {&o, {0}, NULL, NULL};
    redisContext *conn[MAX_SHARDS] = {0};
    router rt[MAX_ROUTERS];
    memset(rt, 0, sizeof rt);
    dch_map *m = NULL;
    dch_etcd *e = NULL;
    uint64_t rev;
    int rc = read_book(&sc.c, o.shards);
    if (rc == 0 && (sc.cdf = zipf_table((uint32_t)o.keys)) == NULL)
        rc = fail("out of memory");
    if (rc == 0 && (sc.gen = calloc(o.keys, 1)) == NULL)
        rc = fail("out of memory");
    if (rc == 0 && ((e = etcd_client(&o)) == NULL || dch_etcd_fetch(e, o.key, &m, &rev) != DCH_OK))
        rc = fail("cannot fetch the map from etcd");
    if (rc == 0)
        rc = connect_all(&sc.c, conn);
    if (rc == 0)
        rc = load_data(&sc, conn, m);
    for (uint32_t k = 0; rc == 0 && k < o.routers; k++) {
        rc = router_open(&rt[k], &sc, k, dch_map_slot_count(m));
        rt[k].phase = 1;
    }
    if (rc == 0) {
        printf("skewed: %" PRIu64 " keys with Zipf popularity (s = 1.0), %" PRIu64
               " routers of %" PRIu64 " operations each (one in ten a write), %zu shards\n",
               o.keys, o.routers, o.ops, sc.c.nbook);
        rc = scenario_run(&sc, rt, conn, e, m);
    }
    for (uint32_t k = 0; k < o.routers; k++)
        router_close(&rt[k]);
    close_all(&sc.c, conn);
    dch_etcd_free(e);
    dch_map_free(m);
    free(sc.c.book);
    free(sc.cdf);
    free(sc.gen);
    return rc != 0;
}
