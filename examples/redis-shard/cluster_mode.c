/* SPDX-License-Identifier: MIT */
/*
 * redis-shard-cluster: the sharded store of redis-shard run as a cluster
 * whose map lives in etcd (dch-etcd) and changes in bounded steps.
 *
 *   load     write the data set k:0 .. k:N-1 (generation 0) under a map
 *   router   a router with its client: follows the map in etcd, reads and
 *            writes its own keys by the rule below, checks every read
 *   migrate  the migrator `dchctl rollout --exec` runs after each step: waits
 *            until every router routes by the step, then moves the step's
 *            keys from their old owner to their new one with MIGRATE
 *   check    every data-set key on its owner under a map with its value,
 *            nothing else anywhere
 *
 * Every command takes the shards as --shards NAME=HOST:PORT,... (the names
 * are the map's member names; a joiner is listed from the start).
 *
 * The router's rule. A router keeps the newest map it has seen (cur) and the
 * one before it (prev). For a key owned by o under prev and n under cur:
 * o == n: use n. o != n: write with "set if the key exists" on o (atomic,
 * one Lua script), else on n; read on o, else on n. Why it loses nothing and
 * reads nothing stale: MIGRATE moves a key atomically and nobody writes a key
 * onto o that o lacks, so a key missing on o is on n (or was never written).
 * This holds only if nobody migrates the keys of a step before every router
 * has the step as cur; a router therefore acknowledges each map it switches
 * to (here a file per router, DIR/NAME holding the epoch; a deployment would
 * keep these in etcd), and the migrator waits for every acknowledgement. A
 * router holds its lock for a whole operation and swaps maps under it, so an
 * acknowledgement also means no operation by the older map is in flight.
 * Since a slot moves at most once in a rollout, straight from its old owner
 * to its new one, prev may be any earlier map of the rollout.
 */
#include "keys.h"
#include "store.h"
#include "number.h"

#include "dch/dch.h"
#include "dch/etcd.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_SHARDS 32
#define SCAN_MAX_CALLS 1000000u

typedef struct shard {
    char name[DCH_NAME_MAX + 1];
    char host[64];
    int port;
    redisContext *conn;
} shard;

typedef struct opts {
    const char *shards, *map, *keys, *etcd, *key, *name, *acks, *routers, *seconds, *stop;
    const char *naive; /* "1": the router ignores prev, to show the checks catch it */
} opts;

static shard book[MAX_SHARDS];
static size_t nbook;

static int fail(const char *what)
{
    fprintf(stderr, "redis-shard-cluster: %s\n", what);
    return 1;
}

static int parse_opts(opts *o, int argc, char **argv)
{
    memset(o, 0, sizeof *o);
    static const struct {
        const char *flag;
        size_t off;
    } t[] = {
        {"--shards", offsetof(opts, shards)},   {"--map", offsetof(opts, map)},
        {"--keys", offsetof(opts, keys)},       {"--etcd", offsetof(opts, etcd)},
        {"--key", offsetof(opts, key)},         {"--name", offsetof(opts, name)},
        {"--acks", offsetof(opts, acks)},       {"--routers", offsetof(opts, routers)},
        {"--seconds", offsetof(opts, seconds)}, {"--stop", offsetof(opts, stop)},
        {"--naive", offsetof(opts, naive)},
    };
    for (int i = 0; i < argc; i += 2) {
        size_t k = 0;
        while (k < sizeof t / sizeof t[0] && strcmp(t[k].flag, argv[i]) != 0)
            k++;
        if (k == sizeof t / sizeof t[0] || i + 1 >= argc)
            return fail("unknown option or option without its value");
        *(const char **)(void *)((char *)o + t[k].off) = argv[i + 1];
    }
    return 0;
}

/* --shards NAME=HOST:PORT,... into the book, each connected. */
static int open_book(const char *spec)
{
    if (spec == NULL)
        return fail("--shards is required");
    char *copy = strdup(spec);
    if (copy == NULL)
        return fail("out of memory");
    int rc = 0;
    for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok && rc == 0;
         tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '='), *colon = strrchr(tok, ':');
        if (nbook == MAX_SHARDS || eq == NULL || colon == NULL || colon < eq) {
            rc = fail("--shards: NAME=HOST:PORT,...");
            break;
        }
        shard *s = &book[nbook++];
        snprintf(s->name, sizeof s->name, "%.*s", (int)(eq - tok), tok);
        snprintf(s->host, sizeof s->host, "%.*s", (int)(colon - eq - 1), eq + 1);
        s->port = atoi(colon + 1);
        if (store_connect(&s->conn, s->host, s->port) != 0)
            rc = 1;
    }
    free(copy);
    return rc;
}

static void close_book(void)
{
    for (size_t i = 0; i < nbook; i++)
        store_close(book[i].conn);
}

/* The book index of the member owning `key` under m, or -1. */
static int owner_of(const dch_map *m, const char *key, size_t len)
{
    const uint32_t id = dch_map_lookup(m, key, len);
    if (id == DCH_NODE_NONE)
        return -1;
    const char *name = dch_map_node_name(m, id);
    for (size_t i = 0; i < nbook; i++)
        if (strcmp(book[i].name, name) == 0)
            return (int)i;
    return -1;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* ---- load and check --------------------------------------------------- */

static int load_map_and_count(const opts *o, dch_map **m, uint32_t *n)
{
    if (o->map == NULL || o->keys == NULL)
        return fail("--map and --keys are required");
    uint64_t v;
    if (dch__number_parse(o->keys, 0, 0, UINT32_MAX, &v) != 0)
        return fail("--keys wants a whole number");
    *n = (uint32_t)v;
    if (dch_map_load_file(m, o->map) != DCH_OK)
        return fail("cannot load --map");
    return 0;
}

/* The keys 0 .. n-1 in order, each with its name and its owner's place in
 * the book: fn on each until one returns nonzero, which is returned; a key
 * with no owner in the book fails. */
typedef int key_fn(void *ctx, uint32_t i, const char *k, size_t kl, int owner);

static int each_key(const dch_map *m, uint32_t n, key_fn *fn, void *ctx)
{
    for (uint32_t i = 0; i < n; i++) {
        char k[KEY_CAP];
        const size_t kl = key_name(k, i);
        const int s = owner_of(m, k, kl);
        const int rc = s < 0 ? fail("a key has no owner in the book") : fn(ctx, i, k, kl, s);
        if (rc != 0)
            return rc;
    }
    return 0;
}

static int load_key(void *ctx, uint32_t i, const char *k, size_t kl, int owner)
{
    (void)ctx;
    char v[VALUE_CAP];
    const size_t vl = value_make(v, i, 0);
    return store_set(book[owner].conn, k, kl, v, vl);
}

static int cmd_load(const opts *o)
{
    dch_map *m;
    uint32_t n;
    if (load_map_and_count(o, &m, &n) != 0)
        return 1;
    const int rc = each_key(m, n, load_key, NULL);
    dch_map_free(m);
    if (rc == 0)
        printf("@ loaded=%" PRIu32 "\n", n);
    return rc != 0;
}

typedef struct scan_ctx {
    const dch_map *m;
    int shard;
    uint32_t n;
    uint64_t seen, misplaced, foreign, lost, damaged;
} scan_ctx;

static int on_check_key(const char *key, size_t len, void *ctx)
{
    scan_ctx *s = ctx;
    uint32_t i;
    s->seen++;
    if (!key_parse(key, len, &i) || i >= s->n)
        s->foreign++;
    else if (owner_of(s->m, key, len) != s->shard)
        s->misplaced++;
    return 0;
}

static int read_key(void *ctx, uint32_t i, const char *k, size_t kl, int owner)
{
    scan_ctx *s = ctx;
    char v[VALUE_CAP];
    size_t vl;
    const int r = store_get(book[owner].conn, k, kl, v, sizeof v, &vl);
    if (r < 0)
        return -1;
    if (r == 0)
        s->lost++;
    else if (!value_is(v, vl, i, 0))
        s->damaged++;
    return 0;
}

static int cmd_check(const opts *o)
{
    dch_map *m;
    uint32_t n;
    if (load_map_and_count(o, &m, &n) != 0)
        return 1;
    scan_ctx s = {m, 0, n, 0, 0, 0, 0, 0};
    int rc = 0;
    for (size_t d = 0; d < nbook && rc == 0; d++) {
        s.shard = (int)d;
        rc = store_scan(book[d].conn, SCAN_MAX_CALLS, on_check_key, &s);
    }
    if (rc == 0)
        rc = each_key(m, n, read_key, &s);
    dch_map_free(m);
    printf("@ keys=%" PRIu32 " found=%" PRIu64 " lost=%" PRIu64 " damaged=%" PRIu64
           " misplaced=%" PRIu64 " foreign=%" PRIu64 "\n",
           n, s.seen, s.lost, s.damaged, s.misplaced, s.foreign);
    return rc != 0 || s.lost || s.damaged || s.misplaced || s.foreign || s.seen != n;
}

/* ---- router ----------------------------------------------------------- */

typedef struct router {
    const opts *o;
    pthread_mutex_t mu;
    dch_map *cur, *prev; /* under mu */
    uint64_t epochs, backwards;
    volatile int stop; /* set by the main thread, read by the watcher */
    int watch_failed;
    FILE *log;
} router;

/* Record the epoch this router now routes by, atomically. */
static int acknowledge(const router *r, uint64_t epoch)
{
    char path[4096], tmp[4200];
    snprintf(path, sizeof path, "%s/%s", r->o->acks, r->o->name);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (f == NULL)
        return -1;
    fprintf(f, "%" PRIu64 "\n", epoch);
    if (fclose(f) != 0)
        return -1;
    return rename(tmp, path);
}

static int on_map(const dch_map *m, void *ctx)
{
    router *r = ctx;
    dch_map *copy;
    if (dch_map_clone(&copy, m) != DCH_OK) {
        r->watch_failed = 1;
        return 1;
    }
    pthread_mutex_lock(&r->mu); /* waits for the operation in flight */
    if (r->cur != NULL && dch_map_epoch(copy) <= dch_map_epoch(r->cur))
        r->backwards++;
    dch_map_free(r->prev);
    r->prev = r->cur;
    r->cur = copy;
    r->epochs++;
    pthread_mutex_unlock(&r->mu);
    fprintf(r->log, "%" PRIu64 "\n", dch_map_epoch(copy));
    fflush(r->log);
    if (acknowledge(r, dch_map_epoch(copy)) != 0) {
        r->watch_failed = 1;
        return 1;
    }
    return r->stop;
}

static void *watcher(void *arg)
{
    router *r = arg;
    dch_etcd_config cfg;
    dch_etcd_config_default(&cfg);
    cfg.endpoints = r->o->etcd;
    dch_etcd *c;
    if (dch_etcd_new(&c, &cfg) != DCH_OK) {
        r->watch_failed = 1;
        return NULL;
    }
    /* Short watches in a loop, so the stop flag is seen within 300 ms. */
    while (!r->stop && !r->watch_failed) {
        pthread_mutex_lock(&r->mu);
        const uint64_t after = r->cur ? dch_map_epoch(r->cur) : 0;
        pthread_mutex_unlock(&r->mu);
        dch_etcd_watch(c, r->o->key, after, 300, on_map, r);
    }
    dch_etcd_free(c);
    return NULL;
}

typedef struct client_stats {
    uint64_t reads, writes, fallback_reads, donor_writes, receiver_writes;
    uint64_t stale, misses, lost, failures;
} client_stats;

static void client_key(char *buf, size_t cap, const char *router_name, uint32_t i)
{
    snprintf(buf, cap, "c:%s:%" PRIu32, router_name, i);
}

/* One operation on key i by the rule (the caller holds the lock). */
static void operate(router *r, uint32_t i, uint32_t *gens, int write, client_stats *st)
{
    char k[300], v[320], got[400];
    client_key(k, sizeof k, r->o->name, i);
    const size_t kl = strlen(k);
    const int n = owner_of(r->cur, k, kl);
    const int naive = r->o->naive != NULL && strcmp(r->o->naive, "1") == 0;
    const int o = r->prev && !naive ? owner_of(r->prev, k, kl) : n;
    if (n < 0 || o < 0) {
        st->failures++;
        return;
    }
    if (write) {
        snprintf(v, sizeof v, "%s=%" PRIu32, k, gens[i] + 1);
        int rc;
        if (o != n) {
            rc = store_set_if_exists(book[o].conn, k, kl, v, strlen(v));
            if (rc == 1)
                st->donor_writes++;
            else if (rc == 0 && (rc = store_set(book[n].conn, k, kl, v, strlen(v))) == 0)
                st->receiver_writes++;
        } else {
            rc = store_set(book[n].conn, k, kl, v, strlen(v));
        }
        if (rc < 0) {
            st->failures++;
            return;
        }
        gens[i]++;
        st->writes++;
        return;
    }
    size_t gl = 0;
    int found = store_get(book[o].conn, k, kl, got, sizeof got, &gl);
    if (found == 0 && o != n) {
        found = store_get(book[n].conn, k, kl, got, sizeof got, &gl);
        st->fallback_reads += found == 1;
    }
    if (found < 0) {
        st->failures++;
        return;
    }
    st->reads++;
    snprintf(v, sizeof v, "%s=%" PRIu32, k, gens[i]);
    if (found == 0 && gens[i] != 0)
        st->misses++;
    else if (found == 1 && (gens[i] == 0 || gl != strlen(v) || memcmp(got, v, gl) != 0))
        st->stale++;
}

/* After the run: the last write of each key on its owner under cur, and
 * nowhere else; then the keys are deleted so the data set stands alone. */
static void final_check(router *r, const uint32_t *gens, uint32_t nkeys, client_stats *st)
{
    for (uint32_t i = 0; i < nkeys; i++) {
        char k[300], v[320], got[400];
        client_key(k, sizeof k, r->o->name, i);
        const size_t kl = strlen(k);
        const int n = owner_of(r->cur, k, kl);
        for (size_t d = 0; d < nbook; d++) {
            size_t gl = 0;
            const int found = store_get(book[d].conn, k, kl, got, sizeof got, &gl);
            snprintf(v, sizeof v, "%s=%" PRIu32, k, gens[i]);
            if ((int)d == n && gens[i] != 0 &&
                (found != 1 || gl != strlen(v) || memcmp(got, v, gl) != 0))
                st->lost++;
            if ((int)d != n && found != 0)
                st->lost++; /* a copy away from its owner */
            redisReply *rep = redisCommand(book[d].conn, "DEL %b", k, kl);
            freeReplyObject(rep);
        }
    }
}

static int cmd_router(const opts *o)
{
    if (!o->etcd || !o->key || !o->name || !o->acks || !o->seconds || !o->keys || !o->stop)
        return fail("router needs --etcd --key --name --acks --keys --seconds --stop");
    uint64_t nkeys64;
    if (dch__number_parse(o->keys, 0, 0, UINT32_MAX, &nkeys64) != 0)
        return fail("--keys wants a whole number");
    const uint32_t nkeys = (uint32_t)nkeys64;
    const double seconds = atof(o->seconds);
    uint32_t *gens = calloc(nkeys ? nkeys : 1, sizeof *gens);
    char logpath[4096];
    snprintf(logpath, sizeof logpath, "%s/%s.epochs", o->acks, o->name);
    router r = {.o = o, .log = fopen(logpath, "w")};
    if (gens == NULL || r.log == NULL)
        return fail("cannot start the router");
    pthread_mutex_init(&r.mu, NULL);
    pthread_t th;
    pthread_create(&th, NULL, watcher, &r);
    client_stats st = {0};
    uint64_t rng = 0x9e3779b97f4a7c15u ^ (uint64_t)getpid();
    const double end = now_s() + seconds;
    while (now_s() < end && access(o->stop, F_OK) != 0 && !r.watch_failed) {
        pthread_mutex_lock(&r.mu);
        if (r.cur == NULL) {
            pthread_mutex_unlock(&r.mu);
            sleep_ms(10);
            continue;
        }
        rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
        operate(&r, (uint32_t)(rng % nkeys), gens, (int)(rng >> 32 & 1), &st);
        pthread_mutex_unlock(&r.mu);
    }
    r.stop = 1;
    pthread_join(th, NULL);
    if (r.cur != NULL)
        final_check(&r, gens, nkeys, &st);
    printf("@ router=%s epochs=%" PRIu64 " backwards=%" PRIu64 " reads=%" PRIu64
           " writes=%" PRIu64 " fallback_reads=%" PRIu64 " donor_writes=%" PRIu64
           " receiver_writes=%" PRIu64 " stale=%" PRIu64 " misses=%" PRIu64 " lost=%" PRIu64
           " failures=%" PRIu64 "\n",
           o->name, r.epochs, r.backwards, st.reads, st.writes, st.fallback_reads,
           st.donor_writes, st.receiver_writes, st.stale, st.misses, st.lost, st.failures);
    fclose(r.log);
    dch_map_free(r.cur);
    dch_map_free(r.prev);
    free(gens);
    pthread_mutex_destroy(&r.mu);
    return r.watch_failed || r.backwards || st.stale || st.misses || st.lost || st.failures ||
           st.reads == 0;
}

/* ---- migrate ---------------------------------------------------------- */

/* Wait (at most 30 s) until every router acknowledged `epoch`. */
static int wait_for_routers(const opts *o, uint64_t epoch)
{
    const double end = now_s() + 30;
    char *copy = strdup(o->routers);
    if (copy == NULL)
        return -1;
    int rc = 0;
    for (char *save = NULL, *name = strtok_r(copy, ",", &save); name && rc == 0;
         name = strtok_r(NULL, ",", &save)) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", o->acks, name);
        for (;;) {
            unsigned long long e = 0;
            FILE *f = fopen(path, "r");
            if (f != NULL) {
                if (fscanf(f, "%llu", &e) != 1)
                    e = 0;
                fclose(f);
            }
            if (e >= epoch)
                break;
            if (now_s() > end) {
                fprintf(stderr, "redis-shard-cluster: router %s did not reach epoch %" PRIu64
                        "\n", name, epoch);
                rc = -1;
                break;
            }
            sleep_ms(10);
        }
    }
    free(copy);
    return rc;
}

typedef struct mover {
    const dch_map *from, *to;
    int donor;
    char (*keys)[300];
    int *dest;
    size_t n, cap;
    uint64_t strays;
} mover;

static int on_move_key(const char *key, size_t len, void *ctx)
{
    mover *mv = ctx;
    const int a = owner_of(mv->from, key, len), b = owner_of(mv->to, key, len);
    if (a != mv->donor) {
        /* A key that does not belong here by the old map must belong here
         * by the new one (a router wrote it on its new owner). */
        mv->strays += b != mv->donor;
        return 0;
    }
    if (b == mv->donor || len >= 300)
        return 0;
    if (mv->n == mv->cap) {
        const size_t cap = mv->cap ? mv->cap * 2 : 1024;
        void *k = realloc(mv->keys, cap * sizeof *mv->keys), *d;
        if (k == NULL)
            return -1;
        mv->keys = k;
        d = realloc(mv->dest, cap * sizeof *mv->dest);
        if (d == NULL)
            return -1;
        mv->dest = d;
        mv->cap = cap;
    }
    memcpy(mv->keys[mv->n], key, len);
    mv->keys[mv->n][len] = '\0';
    mv->dest[mv->n++] = b;
    return 0;
}

static int cmd_migrate(const opts *o)
{
    const char *from_path = getenv("DCH_FROM"), *to_path = getenv("DCH_TO");
    const char *epoch_text = getenv("DCH_EPOCH");
    if (!from_path || !to_path || !epoch_text || !o->acks || !o->routers)
        return fail("migrate runs under dchctl rollout --exec, with --acks and --routers");
    uint64_t epoch;
    if (dch__number_parse(epoch_text, 0, 0, UINT64_MAX, &epoch) != 0)
        return fail("DCH_EPOCH is not a number");
    dch_map *from, *to;
    if (dch_map_load_file(&from, from_path) != DCH_OK || dch_map_load_file(&to, to_path) != DCH_OK)
        return fail("cannot load DCH_FROM or DCH_TO");
    int rc = wait_for_routers(o, epoch);
    uint64_t moved = 0, left = 0, strays = 0;
    for (size_t d = 0; d < nbook && rc == 0; d++) {
        mover mv = {from, to, (int)d, NULL, NULL, 0, 0, 0};
        rc = store_scan(book[d].conn, SCAN_MAX_CALLS, on_move_key, &mv);
        for (size_t t = 0; t < nbook && rc == 0; t++) {
            const char *batch[100];
            size_t lens[100], nb = 0;
            for (size_t i = 0; i <= mv.n && rc == 0; i++) {
                if (i < mv.n && mv.dest[i] == (int)t) {
                    batch[nb] = mv.keys[i];
                    lens[nb++] = strlen(mv.keys[i]);
                }
                if (nb == 100 || (i == mv.n && nb > 0)) {
                    rc = store_migrate(book[d].conn, book[t].host, book[t].port, batch, lens, nb);
                    moved += nb;
                    nb = 0;
                }
            }
        }
        strays += mv.strays;
        /* A second walk must find none of the moving keys left. */
        mover again = {from, to, (int)d, NULL, NULL, 0, 0, 0};
        if (rc == 0)
            rc = store_scan(book[d].conn, SCAN_MAX_CALLS, on_move_key, &again);
        left += again.n;
        free(mv.keys);
        free(mv.dest);
        free(again.keys);
        free(again.dest);
    }
    printf("@ step=%s epoch=%s moved=%" PRIu64 " left=%" PRIu64 " strays=%" PRIu64 "\n",
           getenv("DCH_STEP") ? getenv("DCH_STEP") : "?", epoch_text, moved, left, strays);
    dch_map_free(from);
    dch_map_free(to);
    return rc != 0 || left != 0 || strays != 0;
}

int main(int argc, char **argv)
{
    opts o;
    if (argc < 2 || parse_opts(&o, argc - 2, argv + 2) != 0) {
        fprintf(stderr, "usage: redis-shard-cluster load|check|router|migrate --shards "
                        "NAME=HOST:PORT,... [options]\n");
        return 2;
    }
    if (open_book(o.shards) != 0) {
        close_book();
        return 1;
    }
    int rc = 2;
    if (strcmp(argv[1], "load") == 0)
        rc = cmd_load(&o);
    else if (strcmp(argv[1], "check") == 0)
        rc = cmd_check(&o);
    else if (strcmp(argv[1], "router") == 0)
        rc = cmd_router(&o);
    else if (strcmp(argv[1], "migrate") == 0)
        rc = cmd_migrate(&o);
    else
        fprintf(stderr, "redis-shard-cluster: no command %s\n", argv[1]);
    close_book();
    return rc;
}
