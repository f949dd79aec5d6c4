/* SPDX-License-Identifier: MIT */
/*
 * join and leave: one membership change carried out on the shards. The
 * router is cloned and changed, the plan taken from the library's diff, the
 * keys moved by the migrator while the concurrent client runs, every count
 * compared with the plan, and the new router published (see
 * step_and_publish for when).
 */
#include "client.h"
#include "commands.h"
#include "flight.h"
#include "migrate.h"
#include "plan.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
            dch__number_parse(argv[a + 1], 0, 0, 100000, &v) == 0 && v > 0)
            o->mig.batch = (unsigned)v;
        else if (strcmp(argv[a], "--interleave") == 0 &&
                 dch__number_parse(argv[a + 1], 0, 0, 1000, &v) == 0)
            o->mig.interleave = (unsigned)v;
        else if (strcmp(argv[a], "--client-keys") == 0 &&
                 dch__number_parse(argv[a + 1], 0, 0, UINT32_MAX, &v) == 0)
            o->cli.keys = (uint32_t)v;
        else if (strcmp(argv[a], "--client-ops") == 0 &&
                 dch__number_parse(argv[a + 1], 0, 0, UINT64_MAX, &v) == 0)
            o->cli.max_ops = v;
        else if (strcmp(argv[a], "--stop-after") == 0 &&
                 dch__number_parse(argv[a + 1], 0, 0, UINT64_MAX, &v) == 0)
            o->mig.stop_after = v;
        else if (strcmp(argv[a], "--seed") == 0 &&
                 dch__number_parse(argv[a + 1], 0, 0, UINT64_MAX, &v) == 0)
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
    printf("plan: %zu ranges (%.4f%% of the hash space), donors %zu, "
           "receivers %zu\n", s->p.n, 100.0 * s->p.fraction, donors, receivers);
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
static const char *const step_names[] = {"", "join", "leave"};

static int step_gate(cluster *c, const char *dir, step_op op,
                     const char *name, int *done)
{
    int in_router = member_of_router(c, name);

    *done = 0;
    if (c->pending == STEP_NONE)
        return 0;
    if (c->pending != op || strcmp(c->pending_name, name) != 0) {
        fprintf(stderr, "redis-shard: the %s of %s did not finish; run it "
                        "again first\n", step_names[c->pending], c->pending_name);
        return -1;
    }
    if (op == STEP_JOIN ? in_router : !in_router) {
        *done = 1;
        printf("%s %s was published; its book is now complete\n",
               step_names[op], name);
        return publish(c, dir, name, NULL, op == STEP_JOIN);
    }
    return 0;
}

/* Shared head of join and leave: the step named and the gate passed.
 * Nonzero when the command ends here, *status then what it returns (0
 * when the gate finished an earlier run of the same step). */
static int step_open(step *s, cluster *c, const char *dir, step_op op,
                     const char *name, int *status)
{
    int done;

    memset(s, 0, sizeof *s);
    s->op = step_names[op];
    s->name = name;
    s->c = c;
    if (step_gate(c, dir, op, name, &done) != 0 || done) {
        *status = done ? 0 : 1;
        return -1;
    }
    return 0;
}

/* Shared end of join and leave, on every path once step_open has run:
 * everything the step and the command hold is freed. */
static void step_close(step *s, cluster *c, dch_map *next_map, dch_ring *next_ring)
{
    step_free(s);
    dch_map_free(next_map);
    dch_ring_free(next_ring);
    cluster_free(c);
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

/* next_router's answer when the leaver is the last member. */
#define LAST_MEMBER 1

/*
 * The cluster's router after one change, on a clone (the published one is
 * left as it is): `name` joins with weight 1, or leaves. Sets *next_map or
 * *next_ring, whichever the scheme uses. @return DCH_OK, a library error,
 * or LAST_MEMBER (nothing made) when the leaver is the only member.
 */
static int next_router(const cluster *c, const char *name, int joining, dch_map **next_map,
                       dch_ring **next_ring)
{
    const int map = c->scheme == SCHEME_MAP;
    uint32_t id = 0;
    int rc = DCH_OK;
    if (!joining) {
        rc = map ? dch_map_find_node(c->map, name, &id) : dch_ring_find_node(c->ring, name, &id);
        if (rc == DCH_OK &&
            (map ? dch_map_node_count(c->map) : dch_ring_node_count(c->ring)) < 2)
            return LAST_MEMBER;
    }
    if (rc == DCH_OK)
        rc = map ? dch_map_clone(next_map, c->map) : dch_ring_clone(next_ring, c->ring);
    if (rc != DCH_OK)
        return rc;
    if (map)
        return joining ? dch_map_add_node(*next_map, name, 1, NULL)
                       : dch_map_remove_node(*next_map, id);
    return joining ? dch_ring_add_node(*next_ring, name, 1, NULL)
                   : dch_ring_remove_node(*next_ring, id);
}

int cmd_join(const char *dir, int argc, char **argv)
{
    cluster c;
    step s;
    step_options o;
    member m;
    dch_map *next_map = NULL;
    dch_ring *next_ring = NULL;
    int at, rc, status = 1;

    if (argc < 2)
        return usage("join takes NAME HOST:PORT");
    if (member_parse(&m, argv[0], argv[1]) != 0)
        return EXIT_USAGE;
    if (parse_step_options(&o, argc - 2, argv + 2) != 0)
        return EXIT_USAGE;
    if (cluster_load(&c, dir) != 0)
        return 1;
    if (step_open(&s, &c, dir, STEP_JOIN, m.name, &status) != 0)
        goto out;
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
    rc = next_router(&c, m.name, 1, &next_map, &next_ring);
    if (rc != DCH_OK) {
        fprintf(stderr, "redis-shard: adding %s: %s\n", m.name, dch_strerror(rc));
        goto out;
    }
    status = step_and_publish(&c, dir, &s, &o, next_map, next_ring, 1);
out:
    step_close(&s, &c, next_map, next_ring);
    return status;
}

int cmd_leave(const char *dir, int argc, char **argv)
{
    cluster c;
    step s;
    step_options o;
    dch_map *next_map = NULL;
    dch_ring *next_ring = NULL;
    int rc, status = 1;

    if (argc < 1)
        return usage("leave takes NAME");
    if (parse_step_options(&o, argc - 1, argv + 1) != 0)
        return EXIT_USAGE;
    if (cluster_load(&c, dir) != 0)
        return 1;
    if (step_open(&s, &c, dir, STEP_LEAVE, argv[0], &status) != 0)
        goto out;
    rc = next_router(&c, argv[0], 0, &next_map, &next_ring);
    if (rc == LAST_MEMBER)
        goto last;
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
    step_close(&s, &c, next_map, next_ring);
    return status;
}
