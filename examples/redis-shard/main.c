/*
 * redis-shard: a sharded key-value store on plain Redis servers, routed by
 * libdch. Each Redis server is one shard; a DCH map (or, chosen at init, a
 * classic ring) decides which shard owns a key. join and leave change the
 * router, compute the migration plan from the library's diff, move exactly
 * the keys in the plan's ranges with MIGRATE while a second client thread
 * keeps reading and writing (flight.h states its rule), and then publish
 * the new router atomically.
 *
 * Commands (DIR is the state directory, cluster.h):
 *   redis-shard -d DIR init [--ring] [--hash-key HEX32] NAME=HOST:PORT...
 *   redis-shard -d DIR load N
 *   redis-shard -d DIR join NAME HOST:PORT [step options]
 *   redis-shard -d DIR leave NAME [step options]
 *   redis-shard -d DIR verify [HOST:PORT...]
 *
 * Every command prints what it did for people, and the same numbers on
 * lines starting with '@' as key=value pairs for scripts. Exit status: 0
 * success, 1 a failure or a broken invariant (the output says which), 2 a
 * usage error.
 */
#include "client.h"
#include "cluster.h"
#include "flight.h"
#include "keys.h"
#include "migrate.h"
#include "plan.h"
#include "route.h"
#include "store.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EXIT_USAGE 2
/* Commands per pipeline when loading and verifying. */
#define PIPELINE 1000u

static const char usage_text[] =
    "usage: redis-shard -d DIR COMMAND [ARGS]\n"
    "  init [--ring] [--hash-key HEX32] NAME=HOST:PORT...\n"
    "      create DIR for empty shards; --ring routes with a classic ring\n"
    "  load N              write keys k:0 .. k:N-1\n"
    "  join NAME HOST:PORT [step options]\n"
    "  leave NAME [step options]\n"
    "      change the router, move the keys in the plan, publish the router\n"
    "  verify [HOST:PORT...]\n"
    "      every key on its owner with its last value, nothing elsewhere;\n"
    "      the addresses given (non-members) must hold no keys\n"
    "step options:\n"
    "  --batch N         keys per MIGRATE (100)\n"
    "  --interleave N    client operations awaited after each batch (4)\n"
    "  --client-keys N   keys the concurrent client uses (2000)\n"
    "  --client-ops N    most client operations (200000)\n"
    "  --no-client       migrate without the concurrent client\n"
    "  --naive-client    the client ignores the migration (reads and writes\n"
    "                    the old owner until its donor finishes): shows that\n"
    "                    the checks catch a broken rule\n"
    "  --seed N          seed of the client's choices (1)\n"
    "  --stop-after N    fail after N batches, as a crash would; running the\n"
    "                    same step again completes it\n";

static int usage(const char *why)
{
    if (why != NULL)
        fprintf(stderr, "redis-shard: %s\n", why);
    fputs(usage_text, stderr);
    return EXIT_USAGE;
}

static double now_seconds(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int parse_count(const char *s, uint64_t max, uint64_t *out)
{
    char *end;
    unsigned long long v;

    if (*s < '0' || *s > '9')
        return -1;
    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0' || v > max)
        return -1;
    *out = v;
    return 0;
}

/* ---- Connections ------------------------------------------------------ */

static void close_all(redisContext **conns, size_t n)
{
    if (conns == NULL)
        return;
    for (size_t i = 0; i < n; i++)
        store_close(conns[i]);
    free(conns);
}

static redisContext **connect_all(const cluster *c)
{
    redisContext **conns = calloc(c->nbook ? c->nbook : 1, sizeof *conns);

    if (conns == NULL) {
        fprintf(stderr, "redis-shard: out of memory\n");
        return NULL;
    }
    for (size_t i = 0; i < c->nbook; i++) {
        if (store_connect(&conns[i], c->book[i].host, c->book[i].port) != 0) {
            close_all(conns, c->nbook);
            return NULL;
        }
    }
    return conns;
}

static int member_of_router(const cluster *c, const char *name)
{
    uint32_t id;

    return c->scheme == SCHEME_MAP
               ? dch_map_find_node(c->map, name, &id) == DCH_OK
               : dch_ring_find_node(c->ring, name, &id) == DCH_OK;
}

/* The current router's view. */
static int current_view(view *v, const cluster *c)
{
    return view_init(v, c, c->map, c->ring);
}

/* ---- init --------------------------------------------------------------- */

static int hex_digit(char ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    return -1;
}

static int cmd_init(const char *dir, int argc, char **argv)
{
    scheme s = SCHEME_MAP;
    uint8_t key[16];
    int have_key = 0, status = 1;
    member *ms = calloc((size_t)argc + 1, sizeof *ms);
    size_t n = 0;

    if (ms == NULL)
        return 1;
    for (int a = 0; a < argc; a++) {
        if (strcmp(argv[a], "--ring") == 0) {
            s = SCHEME_RING;
        } else if (strcmp(argv[a], "--hash-key") == 0 && a + 1 < argc) {
            const char *h = argv[++a];

            if (strlen(h) != 32) {
                free(ms);
                return usage("--hash-key takes 32 lowercase hex digits");
            }
            for (int i = 0; i < 16; i++) {
                int hi = hex_digit(h[2 * i]), lo = hex_digit(h[2 * i + 1]);

                if (hi < 0 || lo < 0) {
                    free(ms);
                    return usage("--hash-key takes 32 lowercase hex digits");
                }
                key[i] = (uint8_t)(hi * 16 + lo);
            }
            have_key = 1;
        } else {
            char *eq = strchr(argv[a], '=');

            if (eq == NULL) {
                free(ms);
                return usage("init takes NAME=HOST:PORT arguments");
            }
            *eq = '\0';
            if (member_parse(&ms[n], argv[a], eq + 1) != 0) {
                free(ms);
                return EXIT_USAGE;
            }
            n++;
        }
    }
    if (n == 0) {
        free(ms);
        return usage("init needs at least one member");
    }
    if (!have_key) {
        FILE *r = fopen("/dev/urandom", "rb");

        if (r == NULL || fread(key, 1, sizeof key, r) != sizeof key) {
            fprintf(stderr, "redis-shard: cannot read /dev/urandom; give "
                            "--hash-key\n");
            if (r != NULL)
                fclose(r);
            free(ms);
            return 1;
        }
        fclose(r);
    }
    /* Shards must start empty: the store counts and moves every key it
     * finds, and must not take over someone else's data. */
    for (size_t i = 0; i < n; i++) {
        redisContext *conn;
        long long size;

        if (store_connect(&conn, ms[i].host, ms[i].port) != 0)
            goto out;
        size = store_dbsize(conn);
        store_close(conn);
        if (size != 0) {
            if (size > 0)
                fprintf(stderr, "redis-shard: %s:%d holds %lld keys; shards "
                                "must start empty\n", ms[i].host, ms[i].port,
                        size);
            goto out;
        }
    }
    if (cluster_create(dir, s, key, ms, n) != 0)
        goto out;
    printf("created %s: %s over %zu shards\n", dir, scheme_name(s), n);
    status = 0;
out:
    free(ms);
    return status;
}

/* ---- load ---------------------------------------------------------------- */

typedef struct batchbuf {
    char (*keys)[KEY_CAP];
    char (*vals)[VALUE_CAP];
    const char **kp, **vp;
    size_t *klen, *vlen;
    uint32_t *idx;
    size_t n;
} batchbuf;

static void batchbuf_free(batchbuf *b)
{
    free(b->keys);
    free(b->vals);
    free(b->kp);
    free(b->vp);
    free(b->klen);
    free(b->vlen);
    free(b->idx);
    memset(b, 0, sizeof *b);
}

static int batchbuf_init(batchbuf *b)
{
    memset(b, 0, sizeof *b);
    b->keys = malloc(PIPELINE * sizeof *b->keys);
    b->vals = malloc(PIPELINE * sizeof *b->vals);
    b->kp = malloc(PIPELINE * sizeof *b->kp);
    b->vp = malloc(PIPELINE * sizeof *b->vp);
    b->klen = malloc(PIPELINE * sizeof *b->klen);
    b->vlen = malloc(PIPELINE * sizeof *b->vlen);
    b->idx = malloc(PIPELINE * sizeof *b->idx);
    if (!b->keys || !b->vals || !b->kp || !b->vp || !b->klen || !b->vlen ||
        !b->idx) {
        batchbuf_free(b);
        fprintf(stderr, "redis-shard: out of memory\n");
        return -1;
    }
    return 0;
}

static int cmd_load(const char *dir, int argc, char **argv)
{
    cluster c;
    view v;
    redisContext **conns = NULL;
    batchbuf *bufs = NULL;
    uint64_t n, *per_shard = NULL;
    double t0;
    int status = 1;

    if (argc != 1 || parse_count(argv[0], UINT32_MAX, &n) != 0 || n == 0)
        return usage("load takes a key count from 1 to 4294967295");
    if (cluster_load(&c, dir) != 0)
        return 1;
    if (c.keys != 0) {
        fprintf(stderr, "redis-shard: %s already holds %" PRIu32 " keys\n",
                dir, c.keys);
        cluster_free(&c);
        return 1;
    }
    if (current_view(&v, &c) != 0) {
        cluster_free(&c);
        return 1;
    }
    conns = connect_all(&c);
    bufs = calloc(c.nbook, sizeof *bufs);
    per_shard = calloc(c.nbook, sizeof *per_shard);
    if (conns == NULL || bufs == NULL || per_shard == NULL)
        goto out;
    for (size_t s = 0; s < c.nbook; s++)
        if (batchbuf_init(&bufs[s]) != 0)
            goto out;
    t0 = now_seconds();
    /* Keys are grouped by owner and sent PIPELINE at a time per shard. */
    for (uint64_t i = 0; i <= n; i++) {
        for (size_t s = 0; s < c.nbook; s++) {
            batchbuf *b = &bufs[s];

            if (b->n == PIPELINE || (i == n && b->n > 0)) {
                if (store_set_many(conns[s], b->kp, b->klen, b->vp, b->vlen,
                                   b->n) != 0)
                    goto out;
                per_shard[s] += b->n;
                b->n = 0;
            }
        }
        if (i < n) {
            uint32_t k = (uint32_t)i;
            char key[KEY_CAP];
            size_t klen = key_name(key, k);
            int s = view_owner(&v, view_hash(&v, key, klen));
            batchbuf *b;

            if (s < 0) {
                fprintf(stderr, "redis-shard: the router owns nothing\n");
                goto out;
            }
            b = &bufs[s];
            memcpy(b->keys[b->n], key, klen + 1);
            b->klen[b->n] = klen;
            b->vlen[b->n] = value_make(b->vals[b->n], k, 0);
            b->kp[b->n] = b->keys[b->n];
            b->vp[b->n] = b->vals[b->n];
            b->n++;
        }
    }
    c.keys = (uint32_t)n;
    free(c.gens);
    c.gens = calloc(n, sizeof *c.gens);
    /* gens first: the book's key count must never exceed what gens covers. */
    if (c.gens == NULL || cluster_save_gens(&c, dir) != 0 ||
        cluster_save_book(&c, dir) != 0)
        goto out;
    printf("loaded %" PRIu64 " keys in %.3f s (%s)\n", n, now_seconds() - t0,
           scheme_name(c.scheme));
    for (size_t s = 0; s < c.nbook; s++) {
        printf("  %-8s %s:%-5d %8" PRIu64 " keys\n", c.book[s].name,
               c.book[s].host, c.book[s].port, per_shard[s]);
        printf("@load scheme=%s name=%s keys=%" PRIu64 "\n",
               scheme_name(c.scheme), c.book[s].name, per_shard[s]);
    }
    status = 0;
out:
    if (bufs != NULL)
        for (size_t s = 0; s < c.nbook; s++)
            batchbuf_free(&bufs[s]);
    free(bufs);
    free(per_shard);
    close_all(conns, c.nbook);
    view_free(&v);
    cluster_free(&c);
    return status;
}

/* ---- join and leave ------------------------------------------------------ */

typedef struct step_options {
    migrate_config mig;
    client_config cli;
    int client;
} step_options;

static int parse_step_options(step_options *o, int argc, char **argv)
{
    o->mig.batch = 100;
    o->mig.interleave = 4;
    o->mig.stop_after = 0;
    o->cli.keys = 2000;
    o->cli.max_ops = 200000;
    o->cli.seed = 1;
    o->cli.naive = 0;
    o->client = 1;
    for (int a = 0; a < argc; a++) {
        uint64_t v;

        if (strcmp(argv[a], "--no-client") == 0) {
            o->client = 0;
            continue;
        }
        if (strcmp(argv[a], "--naive-client") == 0) {
            o->cli.naive = 1;
            continue;
        }
        if (a + 1 >= argc)
            return usage("a step option lacks its value");
        if (strcmp(argv[a], "--batch") == 0 &&
            parse_count(argv[a + 1], 100000, &v) == 0 && v > 0)
            o->mig.batch = (unsigned)v;
        else if (strcmp(argv[a], "--interleave") == 0 &&
                 parse_count(argv[a + 1], 1000, &v) == 0)
            o->mig.interleave = (unsigned)v;
        else if (strcmp(argv[a], "--client-keys") == 0 &&
                 parse_count(argv[a + 1], UINT32_MAX, &v) == 0)
            o->cli.keys = (uint32_t)v;
        else if (strcmp(argv[a], "--client-ops") == 0 &&
                 parse_count(argv[a + 1], UINT64_MAX, &v) == 0)
            o->cli.max_ops = v;
        else if (strcmp(argv[a], "--stop-after") == 0 &&
                 parse_count(argv[a + 1], UINT64_MAX, &v) == 0)
            o->mig.stop_after = v;
        else if (strcmp(argv[a], "--seed") == 0 &&
                 parse_count(argv[a + 1], UINT64_MAX, &v) == 0)
            o->cli.seed = v;
        else
            return usage("bad step option");
        a++;
    }
    if (!o->client)
        o->mig.interleave = 0;
    return 0;
}

/* Exact expectations from the data set, counted key by key: how many keys
 * each shard holds under either router, and must send and receive by the
 * plan. */
typedef struct expectation {
    uint64_t in_ranges;
    uint64_t *sends, *receives;
    uint64_t *old_count, *new_count;
    uint64_t plan_mismatches; /* keys the plan and the routers disagree on */
} expectation;

static int expect_keys(expectation *e, const cluster *c, const view *old,
                       const view *new, const plan *p)
{
    memset(e, 0, sizeof *e);
    e->sends = calloc(c->nbook, sizeof *e->sends);
    e->receives = calloc(c->nbook, sizeof *e->receives);
    e->old_count = calloc(c->nbook, sizeof *e->old_count);
    e->new_count = calloc(c->nbook, sizeof *e->new_count);
    if (!e->sends || !e->receives || !e->old_count || !e->new_count) {
        fprintf(stderr, "redis-shard: out of memory\n");
        return -1;
    }
    for (uint32_t i = 0; i < c->keys; i++) {
        char key[KEY_CAP];
        size_t klen = key_name(key, i);
        uint64_t h = view_hash(old, key, klen);
        const move *m = plan_find(p, h);
        int o = view_owner(old, h), n = view_owner(new, h);

        if (o < 0 || n < 0) {
            e->plan_mismatches++;
            continue;
        }
        e->old_count[o]++;
        e->new_count[n]++;
        if (m != NULL) {
            e->in_ranges++;
            e->sends[m->from]++;
            e->receives[m->to]++;
        }
        if ((m != NULL) != (o != n) || (m && (m->from != o || m->to != n)))
            e->plan_mismatches++;
    }
    return 0;
}

static void expectation_free(expectation *e)
{
    free(e->sends);
    free(e->receives);
    free(e->old_count);
    free(e->new_count);
    memset(e, 0, sizeof *e);
}

typedef struct step {
    const char *op, *name;
    cluster *c;
    view old, new;
    plan p;
    expectation e;
    migrate_result r;
    client cl;
    client_stats cst; /* the client's counts, kept after it is freed */
    int client_ran;
    long long *before, *after;
    /* Keys that had already moved when the step began: a step run again
     * after it stopped part-way. */
    uint64_t resumed;
    double seconds;
    int failures;
} step;

static void fail(step *s, const char *what, uint64_t count)
{
    if (count == 0)
        return;
    fprintf(stderr, "redis-shard: %s %s: %s (%" PRIu64 ")\n", s->op, s->name,
            what, count);
    s->failures++;
}

/* The invariants a step must keep; each broken one is reported. */
static void check_step(step *s)
{
    const cluster *c = s->c;
    const client_stats *cs = &s->cst;

    fail(s, "keys left on a donor after its pass", s->r.left_behind);
    fail(s, "keys on a donor that the old router places elsewhere", s->r.strays);
    fail(s, "keys the plan and the new router send apart",
         s->r.disagreements + s->e.plan_mismatches);
    /* A fresh step moves exactly the keys in the plan's ranges; one run
     * again moves what the first run left, and the end state shows both. */
    if (!s->resumed && s->r.moved != s->e.in_ranges)
        fail(s, "keys moved differ from the keys in the moved ranges", 1);
    for (size_t b = 0; b < c->nbook; b++) {
        long long delta = s->after[b] - s->before[b];
        long long want = (long long)s->r.received[b] - (long long)s->r.sent[b];

        if (!s->resumed && (s->r.sent[b] != s->e.sends[b] ||
                            s->r.received[b] != s->e.receives[b]))
            fail(s, "a shard's keys sent or received differ from the plan", 1);
        if (delta != want)
            fail(s, "a shard's key count changed by other than what moved", 1);
        if (s->after[b] != (long long)s->e.new_count[b])
            fail(s, "a shard's key count differs from the new router's", 1);
    }
    fail(s, "client reads that found the key nowhere", cs->misses);
    fail(s, "client reads that returned an older value", cs->stale);
    fail(s, "client writes lost", cs->lost);
    fail(s, "client keys still on their donor", cs->doubled);
}

static void print_step(const step *s)
{
    const cluster *c = s->c;
    const client_stats *cs = &s->cst;
    const char *sch = scheme_name(c->scheme);
    size_t donors = 0, receivers = 0;
    double predicted = s->p.fraction * (double)c->keys;

    for (size_t b = 0; b < c->nbook; b++) {
        donors += s->p.sends[b] > 0.0;
        receivers += s->p.receives[b] > 0.0;
    }
    printf("== %s %s (%s, %" PRIu32 " keys)\n", s->op, s->name, sch, c->keys);
    printf("plan: %zu ranges, %zu donors -> %zu receivers, %.4f%% of the hash "
           "space\n", s->p.n, donors, receivers, 100.0 * s->p.fraction);
    printf("      predicts %.1f keys (fraction x keys); %" PRIu64 " keys hash "
           "into the moved ranges\n", predicted, s->e.in_ranges);
    if (s->resumed)
        printf("resumed: %" PRIu64 " keys had moved in an earlier run\n",
               s->resumed);
    printf("moved %" PRIu64 " keys in %" PRIu64 " MIGRATE batches, %.3f s\n",
           s->r.moved, s->r.batches, s->seconds);
    printf("  %-8s %-21s %10s %9s %9s %17s\n", "shard", "address",
           "predicted", "in ranges", "moved", "keys before/after");
    for (size_t b = 0; b < c->nbook; b++) {
        double pr = (s->p.receives[b] - s->p.sends[b]) * (double)c->keys;
        long long ex = (long long)s->e.receives[b] - (long long)s->e.sends[b];
        long long mv = (long long)s->r.received[b] - (long long)s->r.sent[b];
        char addr[HOST_CAP + 8];

        snprintf(addr, sizeof addr, "%s:%d", c->book[b].host, c->book[b].port);
        printf("  %-8s %-21s %+10.1f %+9lld %+9lld %8lld/%-8lld\n",
               c->book[b].name, addr, pr, ex, mv, s->before[b], s->after[b]);
    }
    if (s->client_ran) {
        printf("client: %" PRIu64 " reads and %" PRIu64 " writes on %" PRIu64
               " moving and %" PRIu64 " staying keys during the step\n",
               cs->reads, cs->writes, cs->keys_moving, cs->keys_staying);
        printf("        donor unfinished: %" PRIu64 " reads on the donor, %"
               PRIu64 " on the receiver after a miss; %" PRIu64
               " writes on the donor, %" PRIu64 " on the receiver\n",
               cs->donor_reads, cs->fallback_reads, cs->donor_writes,
               cs->receiver_writes);
        printf("        donor finished: %" PRIu64 " operations; staying keys: %"
               PRIu64 "\n", cs->finished_ops, cs->staying_ops);
        printf("        misses %" PRIu64 ", stale reads %" PRIu64
               ", lost writes %" PRIu64 ", keys left on a donor %" PRIu64 "\n",
               cs->misses, cs->stale, cs->lost, cs->doubled);
    }
    if (s->r.waits_timed_out > 0)
        printf("note: %" PRIu64 " waits for the client timed out\n",
               s->r.waits_timed_out);
    printf("@step scheme=%s op=%s name=%s keys=%" PRIu32 " ranges=%zu "
           "fraction=%.9f predicted=%.1f in_ranges=%" PRIu64 " moved=%" PRIu64
           " resumed=%" PRIu64 " batches=%" PRIu64 " seconds=%.3f"
           " left_behind=%" PRIu64 " failures=%d\n",
           sch, s->op, s->name, c->keys, s->p.n, s->p.fraction, predicted,
           s->e.in_ranges, s->r.moved, s->resumed, s->r.batches, s->seconds,
           s->r.left_behind, s->failures);
    for (size_t b = 0; b < c->nbook; b++)
        printf("@shard scheme=%s op=%s name=%s predicted_sent=%.1f "
               "predicted_received=%.1f expected_sent=%" PRIu64
               " expected_received=%" PRIu64 " sent=%" PRIu64 " received=%"
               PRIu64 " before=%lld after=%lld\n",
               sch, s->op, c->book[b].name, s->p.sends[b] * (double)c->keys,
               s->p.receives[b] * (double)c->keys, s->e.sends[b],
               s->e.receives[b], s->r.sent[b], s->r.received[b], s->before[b],
               s->after[b]);
    if (s->client_ran)
        printf("@client scheme=%s op=%s reads=%" PRIu64 " writes=%" PRIu64
               " donor_reads=%" PRIu64 " fallback_reads=%" PRIu64
               " donor_writes=%" PRIu64 " receiver_writes=%" PRIu64
               " finished_ops=%" PRIu64 " staying_ops=%" PRIu64
               " misses=%" PRIu64 " stale=%" PRIu64 " lost=%" PRIu64
               " doubled=%" PRIu64 "\n",
               sch, s->op, cs->reads, cs->writes, cs->donor_reads,
               cs->fallback_reads, cs->donor_writes, cs->receiver_writes,
               cs->finished_ops, cs->staying_ops, cs->misses, cs->stale,
               cs->lost, cs->doubled);
    printf("result: %s\n", s->failures ? "FAILED" : "ok");
}

static int sizes(const cluster *c, redisContext **conns, long long *out)
{
    for (size_t b = 0; b < c->nbook; b++)
        if ((out[b] = store_dbsize(conns[b])) < 0)
            return -1;
    return 0;
}

/* Carry out a step from c's router to `next` (a changed clone of it, map or
 * ring as the scheme says). The book must already hold every member of
 * both. Publishing is the caller's. */
static int run_step(step *s, const step_options *o, dch_map *next_map,
                    dch_ring *next_ring)
{
    cluster *c = s->c;
    redisContext **conns = NULL;
    flight f;
    int flight_up = 0, rc = -1;
    double t0;

    if (current_view(&s->old, c) != 0 ||
        view_init(&s->new, c, next_map, next_ring) != 0 ||
        plan_build(&s->p, c, &s->old, &s->new) != 0 ||
        expect_keys(&s->e, c, &s->old, &s->new, &s->p) != 0)
        return -1;
    s->before = calloc(c->nbook, sizeof *s->before);
    s->after = calloc(c->nbook, sizeof *s->after);
    conns = connect_all(c);
    if (s->before == NULL || s->after == NULL || conns == NULL ||
        sizes(c, conns, s->before) != 0)
        goto out;
    for (size_t b = 0; b < c->nbook; b++)
        if (s->before[b] > (long long)s->e.old_count[b])
            s->resumed += (uint64_t)s->before[b] - s->e.old_count[b];
    if (flight_init(&f, &s->old, &s->new, c->nbook) != 0)
        goto out;
    flight_up = 1;
    t0 = now_seconds();
    if (o->client) {
        if (client_start(&s->cl, c, c->gens, &s->p, &f, &o->cli) != 0)
            goto out;
    } else {
        f.client_stopped = 1;
    }
    rc = migrate_run(c, &s->p, &f, conns, &o->mig, &s->r);
    if (client_finish(&s->cl) != 0)
        rc = -1;
    s->seconds = now_seconds() - t0;
    if (rc == 0 && (sizes(c, conns, s->after) != 0 ||
                    (s->cl.npicked > 0 && client_check(&s->cl, conns) != 0)))
        rc = -1;
out:
    s->cst = s->cl.st;
    s->client_ran = s->cl.npicked > 0;
    if (flight_up) {
        client_free(&s->cl);
        flight_destroy(&f);
    }
    close_all(conns, c->nbook);
    return rc;
}

static void step_free(step *s)
{
    view_free(&s->old);
    view_free(&s->new);
    plan_free(&s->p);
    expectation_free(&s->e);
    migrate_result_free(&s->r);
    free(s->before);
    free(s->after);
}

/* Publish the new router and clear the pending step: for the map, the map
 * file (unless next_map is NULL: already published) and then the book; for
 * the ring, the book alone, in one write. A leaver's address goes in the
 * same book write. */
static int publish(cluster *c, const char *dir, const char *name,
                   const dch_map *next_map, int joining)
{
    if (c->scheme == SCHEME_MAP && next_map != NULL &&
        cluster_save_map(next_map, dir) != 0)
        return -1;
    c->pending = STEP_NONE;
    if (!joining)
        cluster_drop_member(c, name);
    return cluster_save_book(c, dir);
}

/* Whether a step may start. Another step that has not been published
 * forbids it. The same step may run again; if its router was published but
 * the book not yet cleared, the book is finished here and *done set. */
static int step_gate(cluster *c, const char *dir, step_op op,
                     const char *name, int *done)
{
    static const char *const names[] = {"", "join", "leave"};
    int in_router = member_of_router(c, name);

    *done = 0;
    if (c->pending == STEP_NONE)
        return 0;
    if (c->pending != op || strcmp(c->pending_name, name) != 0) {
        fprintf(stderr, "redis-shard: the %s of %s did not finish; run it "
                        "again first\n", names[c->pending], c->pending_name);
        return -1;
    }
    if (op == STEP_JOIN ? in_router : !in_router) {
        *done = 1;
        printf("%s %s was published; its book is now complete\n",
               names[op], name);
        return publish(c, dir, name, NULL, op == STEP_JOIN);
    }
    return 0;
}

/* Shared tail of join and leave: migrate, publish, check, report.
 *
 * The new router is published as soon as every donor has finished, because
 * from then on the keys are where it says, even if a count disagrees with
 * the plan (that is reported and fails the command). A step that stops
 * before every donor finished publishes nothing: keys are then split between
 * the two routers, and running the same step again completes it, since the
 * new router is a function of the old one and the step. */
static int step_and_publish(cluster *c, const char *dir, step *s,
                            const step_options *o, dch_map *next_map,
                            dch_ring *next_ring, int joining)
{
    int rc = run_step(s, o, next_map, next_ring);
    /* The client's writes are on the shards whatever happened. */
    int saved = cluster_save_gens(c, dir);

    if (rc == 0) {
        check_step(s);
        print_step(s);
    }
    if (rc != 0 || s->r.left_behind != 0) {
        fprintf(stderr, "redis-shard: %s %s did not finish; the old router "
                        "is still published; run the same step again\n",
                s->op, s->name);
        return 1;
    }
    if (publish(c, dir, s->name, next_map, joining) != 0 || saved != 0)
        return 1;
    return s->failures != 0;
}

static int reachable(const member *m)
{
    redisContext *conn;
    long long size;

    if (store_connect(&conn, m->host, m->port) != 0)
        return 0;
    size = store_dbsize(conn);
    store_close(conn);
    return size >= 0;
}

static int cmd_join(const char *dir, int argc, char **argv)
{
    cluster c;
    step s;
    step_options o;
    member m;
    dch_map *next_map = NULL;
    dch_ring *next_ring = NULL;
    int at, rc, done, status = 1;

    if (argc < 2)
        return usage("join takes NAME HOST:PORT");
    if (member_parse(&m, argv[0], argv[1]) != 0)
        return EXIT_USAGE;
    if (parse_step_options(&o, argc - 2, argv + 2) != 0)
        return EXIT_USAGE;
    if (cluster_load(&c, dir) != 0)
        return 1;
    memset(&s, 0, sizeof s);
    s.op = "join";
    s.name = m.name;
    s.c = &c;
    if (step_gate(&c, dir, STEP_JOIN, m.name, &done) != 0 || done) {
        status = done ? 0 : 1;
        goto out;
    }
    at = cluster_find(&c, m.name);
    if (at >= 0 && (c.pending != STEP_JOIN || strcmp(c.book[at].host, m.host) != 0 ||
                    c.book[at].port != m.port)) {
        fprintf(stderr, "redis-shard: %s is already a member%s\n", m.name,
                c.pending == STEP_JOIN ? " (joining at another address)" : "");
        goto out;
    }
    /* The joiner must answer before its address is written anywhere. */
    if (!reachable(&m))
        goto out;
    /* Its address and the pending step are on disk before any key moves. */
    c.pending = STEP_JOIN;
    memcpy(c.pending_name, m.name, sizeof m.name);
    if (at < 0 && cluster_add_member(&c, &m) != 0)
        goto out;
    if (cluster_save_book(&c, dir) != 0)
        goto out;
    if (c.scheme == SCHEME_MAP) {
        rc = dch_map_clone(&next_map, c.map);
        if (rc == DCH_OK)
            rc = dch_map_add_node(next_map, m.name, 1, NULL);
    } else {
        rc = dch_ring_clone(&next_ring, c.ring);
        if (rc == DCH_OK)
            rc = dch_ring_add_node(next_ring, m.name, 1, NULL);
    }
    if (rc != DCH_OK) {
        fprintf(stderr, "redis-shard: adding %s: %s\n", m.name, dch_strerror(rc));
        goto out;
    }
    status = step_and_publish(&c, dir, &s, &o, next_map, next_ring, 1);
out:
    step_free(&s);
    dch_map_free(next_map);
    dch_ring_free(next_ring);
    cluster_free(&c);
    return status;
}

static int cmd_leave(const char *dir, int argc, char **argv)
{
    cluster c;
    step s;
    step_options o;
    dch_map *next_map = NULL;
    dch_ring *next_ring = NULL;
    uint32_t id;
    int rc, done, status = 1;

    if (argc < 1)
        return usage("leave takes NAME");
    if (parse_step_options(&o, argc - 1, argv + 1) != 0)
        return EXIT_USAGE;
    if (cluster_load(&c, dir) != 0)
        return 1;
    memset(&s, 0, sizeof s);
    s.op = "leave";
    s.name = argv[0];
    s.c = &c;
    if (step_gate(&c, dir, STEP_LEAVE, argv[0], &done) != 0 || done) {
        status = done ? 0 : 1;
        goto out;
    }
    if (c.scheme == SCHEME_MAP) {
        rc = dch_map_find_node(c.map, argv[0], &id);
        if (rc == DCH_OK && dch_map_node_count(c.map) < 2)
            goto last;
        if (rc == DCH_OK)
            rc = dch_map_clone(&next_map, c.map);
        if (rc == DCH_OK)
            rc = dch_map_remove_node(next_map, id);
    } else {
        rc = dch_ring_find_node(c.ring, argv[0], &id);
        if (rc == DCH_OK && dch_ring_node_count(c.ring) < 2)
            goto last;
        if (rc == DCH_OK)
            rc = dch_ring_clone(&next_ring, c.ring);
        if (rc == DCH_OK)
            rc = dch_ring_remove_node(next_ring, id);
    }
    if (rc != DCH_OK) {
        fprintf(stderr, "redis-shard: removing %s: %s\n", argv[0],
                dch_strerror(rc));
        goto out;
    }
    /* The pending step is on disk before any key moves. */
    c.pending = STEP_LEAVE;
    memcpy(c.pending_name, argv[0], strlen(argv[0]) + 1);
    if (cluster_save_book(&c, dir) != 0)
        goto out;
    status = step_and_publish(&c, dir, &s, &o, next_map, next_ring, 0);
    goto out;
last:
    fprintf(stderr, "redis-shard: %s is the last member; its keys would have "
                    "nowhere to go\n", argv[0]);
out:
    step_free(&s);
    dch_map_free(next_map);
    dch_ring_free(next_ring);
    cluster_free(&c);
    return status;
}

/* ---- verify -------------------------------------------------------------- */

typedef struct verifier {
    const cluster *c;
    const view *v;
    int shard;            /* book index being scanned, -1 for a non-member */
    uint64_t misplaced;   /* keys on a shard that does not own them */
    uint64_t foreign;     /* keys that are not the data set's */
    uint64_t lost;        /* data set keys missing from their owner */
    uint64_t damaged;     /* values that are not the key's last value */
    const uint32_t *idx;  /* the batch being read back */
} verifier;

static int on_scanned(const char *key, size_t len, void *ctx)
{
    verifier *vf = ctx;
    uint32_t i;

    if (!key_parse(key, len, &i) || i >= vf->c->keys)
        vf->foreign++;
    else if (vf->shard < 0 ||
             view_owner(vf->v, view_hash(vf->v, key, len)) != vf->shard)
        vf->misplaced++;
    return 0;
}

static int on_read(size_t k, const char *val, size_t len, void *ctx)
{
    verifier *vf = ctx;
    uint32_t i = vf->idx[k];

    if (val == NULL)
        vf->lost++;
    else if (!value_is(val, len, i, vf->c->gens[i]))
        vf->damaged++;
    return 0;
}

static int cmd_verify(const char *dir, int argc, char **argv)
{
    cluster c;
    view v;
    verifier vf;
    redisContext **conns = NULL;
    batchbuf *bufs = NULL;
    long long *size = NULL, total = 0;
    double t0 = now_seconds();
    int status = 1;

    for (int a = 0; a < argc; a++) {
        member m;

        if (member_parse(&m, "extra", argv[a]) != 0)
            return EXIT_USAGE;
    }
    if (cluster_load(&c, dir) != 0)
        return 1;
    if (current_view(&v, &c) != 0) {
        cluster_free(&c);
        return 1;
    }
    memset(&vf, 0, sizeof vf);
    vf.c = &c;
    vf.v = &v;
    conns = connect_all(&c);
    size = calloc(c.nbook, sizeof *size);
    bufs = calloc(c.nbook, sizeof *bufs);
    if (conns == NULL || size == NULL || bufs == NULL)
        goto out;

    /* Every key on every member: ours, and on its owner. SCAN may report a
     * key twice, so totals come from DBSIZE. */
    for (size_t b = 0; b < c.nbook; b++) {
        vf.shard = member_of_router(&c, c.book[b].name) ? (int)b : -1;
        if ((size[b] = store_dbsize(conns[b])) < 0 ||
            store_scan(conns[b], 1000000u, on_scanned, &vf) != 0)
            goto out;
        total += size[b];
    }
    /* Non-members named on the command line must hold nothing of ours. */
    for (int a = 0; a < argc; a++) {
        member m;
        redisContext *extra;
        int rc;

        member_parse(&m, "extra", argv[a]);
        if (store_connect(&extra, m.host, m.port) != 0)
            goto out;
        vf.shard = -1;
        rc = store_scan(extra, 1000000u, on_scanned, &vf);
        store_close(extra);
        if (rc != 0)
            goto out;
    }
    /* Every key of the data set, read back from its owner. */
    for (size_t b = 0; b < c.nbook; b++)
        if (batchbuf_init(&bufs[b]) != 0)
            goto out;
    for (uint64_t i = 0; i <= c.keys; i++) {
        for (size_t b = 0; b < c.nbook; b++) {
            batchbuf *bb = &bufs[b];

            if (bb->n == PIPELINE || (i == c.keys && bb->n > 0)) {
                vf.idx = bb->idx;
                if (store_get_many(conns[b], bb->kp, bb->klen, bb->n, on_read,
                                   &vf) != 0)
                    goto out;
                bb->n = 0;
            }
        }
        if (i < c.keys) {
            char key[KEY_CAP];
            size_t klen = key_name(key, (uint32_t)i);
            int o = view_owner(&v, view_hash(&v, key, klen));
            batchbuf *bb;

            if (o < 0) {
                vf.lost++;
                continue;
            }
            bb = &bufs[o];
            memcpy(bb->keys[bb->n], key, klen + 1);
            bb->kp[bb->n] = bb->keys[bb->n];
            bb->klen[bb->n] = klen;
            bb->idx[bb->n] = (uint32_t)i;
            bb->n++;
        }
    }

    printf("verify %s (%s, %" PRIu32 " keys) in %.3f s\n", dir,
           scheme_name(c.scheme), c.keys, now_seconds() - t0);
    for (size_t b = 0; b < c.nbook; b++) {
        printf("  %-8s %s:%-5d %8lld keys\n", c.book[b].name, c.book[b].host,
               c.book[b].port, size[b]);
        printf("@shard-size scheme=%s name=%s keys=%lld\n",
               scheme_name(c.scheme), c.book[b].name, size[b]);
    }
    printf("  lost %" PRIu64 ", damaged %" PRIu64 ", misplaced %" PRIu64
           ", foreign %" PRIu64 ", stored %lld of %" PRIu32 "\n",
           vf.lost, vf.damaged, vf.misplaced, vf.foreign, total, c.keys);
    printf("@verify scheme=%s keys=%" PRIu32 " stored=%lld lost=%" PRIu64
           " damaged=%" PRIu64 " misplaced=%" PRIu64 " foreign=%" PRIu64 "\n",
           scheme_name(c.scheme), c.keys, total, vf.lost, vf.damaged,
           vf.misplaced, vf.foreign);
    /* With nothing lost, every key is on its owner; a total above the key
     * count then means copies elsewhere. */
    status = vf.lost || vf.damaged || vf.misplaced || vf.foreign ||
             total != (long long)c.keys;
    printf("result: %s\n", status ? "FAILED" : "ok");
out:
    if (bufs != NULL)
        for (size_t b = 0; b < c.nbook; b++)
            batchbuf_free(&bufs[b]);
    free(bufs);
    free(size);
    close_all(conns, c.nbook);
    view_free(&v);
    cluster_free(&c);
    return status;
}

int main(int argc, char **argv)
{
    const char *dir = NULL;
    int a = 1;

    if (a + 1 < argc && strcmp(argv[a], "-d") == 0) {
        dir = argv[a + 1];
        a += 2;
    }
    if (dir == NULL || a >= argc)
        return usage(dir == NULL ? "give the state directory with -d DIR"
                                 : "give a command");
    /* Output goes to pipes in scripts; keep it in order with stderr. */
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (strcmp(argv[a], "init") == 0)
        return cmd_init(dir, argc - a - 1, argv + a + 1);
    if (strcmp(argv[a], "load") == 0)
        return cmd_load(dir, argc - a - 1, argv + a + 1);
    if (strcmp(argv[a], "join") == 0)
        return cmd_join(dir, argc - a - 1, argv + a + 1);
    if (strcmp(argv[a], "leave") == 0)
        return cmd_leave(dir, argc - a - 1, argv + a + 1);
    if (strcmp(argv[a], "verify") == 0)
        return cmd_verify(dir, argc - a - 1, argv + a + 1);
    return usage("unknown command");
}
