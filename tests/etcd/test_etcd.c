/* SPDX-License-Identifier: MIT */
/*
 * dch-etcd against a live etcd (tests/etcd/run_lib.sh starts one and sets
 * DCH_ETCD_URL, plus DCH_ETCD_DEAD_URL, a loopback port nobody listens on).
 * Every test works under its own key, so the tests share the member.
 */
#include <criterion/criterion.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dch/dch.h"
#include "support.h"
#include "dch/etcd.h"

static const char *live_url(void)
{
    const char *u = getenv("DCH_ETCD_URL");
    cr_assert(u != NULL && *u, "DCH_ETCD_URL is not set (run through tests/etcd/run_lib.sh)");
    return u;
}

static dch_etcd *client(const char *endpoints, uint32_t timeout_ms)
{
    dch_etcd_config cfg;
    dch_etcd_config_default(&cfg);
    cfg.endpoints = endpoints;
    if (timeout_ms) {
        cfg.request_timeout_ms = timeout_ms;
        cfg.connect_timeout_ms = timeout_ms < 1000 ? timeout_ms : 1000;
    }
    dch_etcd *c = NULL;
    cr_assert_eq(dch_etcd_new(&c, &cfg), DCH_OK);
    return c;
}

/* A key no other test (or earlier run) uses. */
static void test_key(char *buf, size_t cap, const char *name)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    snprintf(buf, cap, "/dch-test/%ld-%ld/%s", (long)getpid(), (long)ts.tv_nsec, name);
}

#define KEY_SIZE 128

/* A client of the live member, and in `key` a key for the test `name`. */
static dch_etcd *live_client(char key[KEY_SIZE], const char *name)
{
    test_key(key, KEY_SIZE, name);
    return client(live_url(), 0);
}

/* A map of `n` members named prefix-i; epoch n. */
static dch_map *map_with(unsigned n, const char *prefix)
{
    dch_map *m;
    cr_assert_eq(dch_map_new(&m, NULL), DCH_OK);
    for (unsigned i = 0; i < n; i++) {
        char name[64];
        snprintf(name, sizeof name, "%s-%u", prefix, i);
        cr_assert_eq(dch_map_add_node(m, name, 1 + i % 3, NULL), DCH_OK);
    }
    return m;
}

static dch_map *with_member(const dch_map *base, const char *name)
{
    dch_map *m;
    cr_assert_eq(dch_map_clone(&m, base), DCH_OK);
    cr_assert_eq(dch_map_add_node(m, name, 1, NULL), DCH_OK);
    return m;
}

/* map_with(n, prefix), published at key as the first version there. */
static dch_map *published(dch_etcd *c, const char *key, unsigned n, const char *prefix)
{
    dch_map *m = map_with(n, prefix);
    cr_assert_eq(dch_etcd_publish(c, key, m, 0, NULL), DCH_OK, "%s", dch_etcd_errmsg(c));
    return m;
}

Test(etcd, publish_then_fetch_gives_the_same_bytes)
{
    char key[KEY_SIZE];
    dch_etcd *c = live_client(key, "roundtrip");
    dch_map *m = map_with(5, "a");
    uint64_t stored = 99;
    cr_assert_eq(dch_etcd_publish(c, key, m, 0, &stored), DCH_OK, "%s", dch_etcd_errmsg(c));
    cr_assert_eq(stored, dch_map_epoch(m));
    dch_map *got = NULL;
    uint64_t rev = 0;
    cr_assert_eq(dch_etcd_fetch(c, key, &got, &rev), DCH_OK);
    cr_assert(rev > 0);
    cr_assert(same_map_bytes(got, m));
    dch_map_free(got);
    dch_map_free(m);
    dch_etcd_free(c);
}

Test(etcd, a_stale_epoch_conflicts_and_changes_nothing)
{
    char key[KEY_SIZE];
    dch_etcd *c = live_client(key, "stale");
    dch_map *m1 = published(c, key, 3, "b"); /* epoch 3 */
    dch_map *m2 = with_member(m1, "late"); /* epoch 4 */
    /* m2 claims to start from nothing stored: a conflict. */
    uint64_t stored = 0;
    cr_assert_eq(dch_etcd_publish(c, key, m2, 0, &stored), DCH_ECONFLICT);
    cr_assert_eq(stored, 3);
    cr_assert(strstr(dch_etcd_errmsg(c), "epoch") != NULL, "%s", dch_etcd_errmsg(c));
    /* From 2, also a conflict. */
    cr_assert_eq(dch_etcd_publish(c, key, m2, 2, &stored), DCH_ECONFLICT);
    dch_map *got;
    cr_assert_eq(dch_etcd_fetch(c, key, &got, NULL), DCH_OK);
    cr_assert(same_map_bytes(got, m1));
    dch_map_free(got);
    /* From the right epoch it goes through. */
    cr_assert_eq(dch_etcd_publish(c, key, m2, 3, &stored), DCH_OK);
    cr_assert_eq(stored, 4);
    dch_map_free(m1);
    dch_map_free(m2);
    dch_etcd_free(c);
}

Test(etcd, publishing_the_stored_bytes_again_succeeds)
{
    char key[KEY_SIZE];
    dch_etcd *c = live_client(key, "again");
    dch_map *m = published(c, key, 4, "c");
    uint64_t stored = 0;
    cr_assert_eq(dch_etcd_publish(c, key, m, 0, &stored), DCH_OK, "a retried publish");
    cr_assert_eq(stored, 4);
    dch_map_free(m);
    dch_etcd_free(c);
}

Test(etcd, config_versions)
{
    dch_etcd_config a, b, c = DCH_ETCD_CONFIG_INIT;
    memset(&a, 0xA5, sizeof a);
    cr_assert_eq(dch_etcd_config_init(&a, DCH_ETCD_CONFIG_VERSION), DCH_OK);
    dch_etcd_config_default(&b);
    const dch_etcd_config *all[] = {&a, &b, &c};
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(all[i]->version, DCH_ETCD_CONFIG_VERSION, "config %d", i);
        cr_assert_null(all[i]->endpoints, "config %d", i);
        cr_assert_eq(all[i]->connect_timeout_ms, 1000u, "config %d", i);
        cr_assert_eq(all[i]->request_timeout_ms, 5000u, "config %d", i);
        cr_assert_eq(all[i]->watch_refresh_ms, 10000u, "config %d", i);
    }
    cr_assert_eq(dch_etcd_config_init(NULL, DCH_ETCD_CONFIG_VERSION), DCH_EINVAL);
    const uint32_t unknown[] = {0, 2, UINT32_MAX};
    for (int i = 0; i < 3; i++) {
        dch_etcd_config cfg, before;
        memset(&cfg, 0x5A, sizeof cfg);
        before = cfg;
        cr_assert_eq(dch_etcd_config_init(&cfg, unknown[i]), DCH_EINVAL);
        cr_assert_eq(memcmp(&cfg, &before, sizeof cfg), 0, "version %u wrote cfg", unknown[i]);
        dch_etcd_config bad = DCH_ETCD_CONFIG_INIT;
        bad.endpoints = live_url();
        bad.version = unknown[i];
        dch_etcd *e = NULL;
        cr_assert_eq(dch_etcd_new(&e, &bad), DCH_EINVAL, "version %u", unknown[i]);
        cr_assert_null(e);
    }
}

Test(etcd, bad_arguments_are_einval)
{
    char key[KEY_SIZE];
    dch_etcd *c = live_client(key, "args");
    dch_map *m = map_with(2, "d");
    cr_assert_eq(dch_etcd_publish(c, key, m, 2, NULL), DCH_EINVAL, "epoch not above expected");
    cr_assert_eq(dch_etcd_publish(c, "", m, 0, NULL), DCH_EINVAL);
    cr_assert_eq(dch_etcd_publish(NULL, key, m, 0, NULL), DCH_EINVAL);
    cr_assert_eq(dch_etcd_publish(c, key, NULL, 0, NULL), DCH_EINVAL);
    dch_map *out = (dch_map *)&out;
    cr_assert_eq(dch_etcd_fetch(c, key, &out, NULL), DCH_ENOENT);
    cr_assert_eq(out, (dch_map *)&out, "untouched on error");
    cr_assert_eq(dch_etcd_fetch(c, key, NULL, NULL), DCH_EINVAL);
    dch_etcd_config cfg;
    dch_etcd_config_default(&cfg);
    dch_etcd *bad = (dch_etcd *)&bad;
    const char *malformed[] = {NULL, "", "127.0.0.1:2379", "http://a,", "http://a b",
                               "ftp://x"};
    for (size_t i = 0; i < sizeof malformed / sizeof *malformed; i++) {
        cfg.endpoints = malformed[i];
        cr_assert_eq(dch_etcd_new(&bad, &cfg), DCH_EINVAL, "endpoints %zu", i);
    }
    cr_assert_eq(bad, (dch_etcd *)&bad);
    dch_etcd_free(NULL);
    dch_map_free(m);
    dch_etcd_free(c);
}

/* ---- Racing operators ------------------------------------------------- */

#define RACERS 4
#define ROUNDS 25

typedef struct racer {
    const char *key;
    pthread_barrier_t *start;
    const dch_map *mine;
    uint64_t expected;
    int rc;
    uint64_t stored;
    char msg[256];
} racer;

/* A client of the live member for a thread, which cannot assert: the
 * dch_etcd_new code. */
static int thread_client(dch_etcd **c)
{
    dch_etcd_config cfg;
    dch_etcd_config_default(&cfg);
    cfg.endpoints = getenv("DCH_ETCD_URL");
    return dch_etcd_new(c, &cfg);
}

/* Threads report through their struct; only the test's thread asserts. */
static void *race(void *arg)
{
    racer *r = arg;
    dch_etcd *c = NULL;
    const int made = thread_client(&c);
    pthread_barrier_wait(r->start);
    if (made != DCH_OK) {
        r->rc = made;
        return NULL;
    }
    r->rc = dch_etcd_publish(c, r->key, r->mine, r->expected, &r->stored);
    snprintf(r->msg, sizeof r->msg, "%s", dch_etcd_errmsg(c));
    dch_etcd_free(c);
    return NULL;
}

Test(etcd, racing_operators_from_one_epoch_exactly_one_wins)
{
    char key[KEY_SIZE];
    dch_etcd *c = live_client(key, "race");
    dch_map *base = published(c, key, 6, "e");
    unsigned lost_in_txn = 0;
    for (int round = 0; round < ROUNDS; round++) {
        dch_map *mine[RACERS];
        racer r[RACERS];
        pthread_t th[RACERS];
        pthread_barrier_t start;
        pthread_barrier_init(&start, NULL, RACERS);
        for (int i = 0; i < RACERS; i++) {
            char name[64];
            snprintf(name, sizeof name, "op%d-round%d", i, round);
            mine[i] = with_member(base, name);
            r[i] = (racer){.key = key, .start = &start, .mine = mine[i],
                           .expected = dch_map_epoch(base)};
            pthread_create(&th[i], NULL, race, &r[i]);
        }
        int winner = -1;
        for (int i = 0; i < RACERS; i++)
            pthread_join(th[i], NULL);
        pthread_barrier_destroy(&start);
        for (int i = 0; i < RACERS; i++) {
            if (r[i].rc == DCH_OK) {
                cr_assert_eq(winner, -1, "round %d: operators %d and %d both won", round,
                             winner, i);
                winner = i;
            } else {
                cr_assert_eq(r[i].rc, DCH_ECONFLICT, "round %d: operator %d: %s (%s)", round, i,
                             dch_strerror(r[i].rc), r[i].msg);
                cr_assert_eq(r[i].stored, dch_map_epoch(base) + 1,
                             "round %d: the loser sees the winner's epoch", round);
                lost_in_txn += strstr(r[i].msg, "another publish won") != NULL;
            }
        }
        cr_assert_neq(winner, -1, "round %d: nobody won", round);
        dch_map *got;
        cr_assert_eq(dch_etcd_fetch(c, key, &got, NULL), DCH_OK);
        cr_assert(same_map_bytes(got, mine[winner]), "round %d: stored map is not the winner's",
                  round);
        dch_map_free(base);
        base = got;
        for (int i = 0; i < RACERS; i++)
            dch_map_free(mine[i]);
    }
    /* How many losers passed the epoch check and lost in the transaction:
     * the case the mod_revision guard exists for. */
    fprintf(stderr, "race: %u of %d losers lost in the transaction\n", lost_in_txn,
            ROUNDS * (RACERS - 1));
    cr_assert(lost_in_txn > 0, "no race reached the transaction: the test did not test it");
    dch_map_free(base);
    dch_etcd_free(c);
}

/* ---- Unreachable etcd ------------------------------------------------- */

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

Test(etcd, unreachable_etcd_fails_in_time_with_a_message)
{
    const char *dead = getenv("DCH_ETCD_DEAD_URL");
    cr_assert(dead != NULL);
    dch_etcd *c = client(dead, 800);
    dch_map *m = map_with(2, "f");
    const uint64_t t0 = now_ms();
    uint64_t stored = 7;
    cr_assert_eq(dch_etcd_publish(c, "/dch-test/dead", m, 0, &stored), DCH_EIO);
    const uint64_t took = now_ms() - t0;
    cr_assert(took >= 700 && took < 6000, "took %llu ms", (unsigned long long)took);
    cr_assert_eq(stored, 7, "untouched on error");
    cr_assert(strstr(dch_etcd_errmsg(c), dead) != NULL, "%s", dch_etcd_errmsg(c));
    dch_map_free(m);
    dch_etcd_free(c);
}

Test(etcd, a_dead_member_in_the_list_is_skipped)
{
    char key[128], both[512];
    test_key(key, sizeof key, "failover");
    snprintf(both, sizeof both, "%s,%s", getenv("DCH_ETCD_DEAD_URL"), live_url());
    dch_etcd *c = client(both, 0);
    dch_map *m = map_with(3, "g");
    cr_assert_eq(dch_etcd_publish(c, key, m, 0, NULL), DCH_OK, "%s", dch_etcd_errmsg(c));
    dch_map_free(m);
    dch_etcd_free(c);
}

/* ---- Watch ------------------------------------------------------------ */

#define WATCHED 30

typedef struct publisher {
    const char *key;
    dch_map *m; /* made by the test's thread */
    uint64_t last_epoch;
    int rc;
} publisher;

static void *publish_many(void *arg)
{
    publisher *p = arg;
    dch_etcd *c = NULL;
    p->rc = thread_client(&c);
    uint64_t expected = 0;
    for (int i = 0; i < WATCHED && p->rc == DCH_OK; i++) {
        p->rc = dch_etcd_publish(c, p->key, p->m, expected, NULL);
        expected = dch_map_epoch(p->m);
        char name[32];
        snprintf(name, sizeof name, "w-extra-%d", i);
        if (p->rc == DCH_OK && i + 1 < WATCHED)
            p->rc = dch_map_add_node(p->m, name, 1, NULL);
    }
    p->last_epoch = expected;
    dch_etcd_free(c);
    return NULL;
}

typedef struct seen {
    uint64_t last, final;
    unsigned count;
    int backwards;
} seen;

static int on_map(const dch_map *m, void *ctx)
{
    seen *s = ctx;
    if (dch_map_epoch(m) <= s->last)
        s->backwards = 1;
    s->last = dch_map_epoch(m);
    s->count++;
    return s->last == s->final ? 42 : 0;
}

Test(etcd, watch_delivers_rising_epochs_up_to_the_last)
{
    char key[128];
    test_key(key, sizeof key, "watch");
    publisher p = {key, map_with(3, "w"), 0, DCH_OK};
    seen s = {0, 3 + WATCHED - 1, 0, 0};
    pthread_t th;
    pthread_create(&th, NULL, publish_many, &p);
    dch_etcd *c = client(live_url(), 0);
    const int rc = dch_etcd_watch(c, key, 0, 15000, on_map, &s);
    pthread_join(th, NULL);
    dch_map_free(p.m);
    cr_assert_eq(p.rc, DCH_OK, "the publisher: %s", dch_strerror(p.rc));
    cr_assert_eq(p.last_epoch, s.final);
    cr_assert_eq(rc, 42, "the watch ended before the last map (got %llu): %s",
                 (unsigned long long)s.last, dch_etcd_errmsg(c));
    cr_assert(!s.backwards);
    cr_assert(s.count >= 1 && s.count <= WATCHED);
    /* Started after everything, with after_epoch = final - 1: just the last. */
    s = (seen){s.final - 1, s.final, 0, 0};
    cr_assert_eq(dch_etcd_watch(c, key, s.final - 1, 5000, on_map, &s), 42);
    cr_assert_eq(s.count, 1);
    /* Nothing newer: the watch runs out its time and returns DCH_OK. */
    const uint64_t t0 = now_ms();
    s = (seen){s.final, s.final + 1, 0, 0};
    cr_assert_eq(dch_etcd_watch(c, key, s.last, 600, on_map, &s), DCH_OK);
    cr_assert_eq(s.count, 0);
    cr_assert(now_ms() - t0 < 3000);
    dch_etcd_free(c);
}

Test(etcd, watch_and_publish_pass_over_a_value_that_is_not_a_map)
{
    char key[128], cmd[1024];
    test_key(key, sizeof key, "garbage");
    const char *ctl = getenv("ETCDCTL");
    cr_assert(ctl != NULL);
    snprintf(cmd, sizeof cmd, "'%s' --endpoints='%s' put '%s' 'not a map' >/dev/null", ctl,
             live_url(), key);
    cr_assert_eq(system(cmd), 0);
    dch_etcd *c = client(live_url(), 0);
    dch_map *m = map_with(2, "h"), *got = NULL;
    cr_assert_eq(dch_etcd_fetch(c, key, &got, NULL), DCH_ECORRUPT);
    cr_assert_eq(dch_etcd_publish(c, key, m, 0, NULL), DCH_ECORRUPT);
    seen s = {0, 99, 0, 0};
    cr_assert_eq(dch_etcd_watch(c, key, 0, 500, on_map, &s), DCH_OK);
    cr_assert_eq(s.count, 0);
    dch_map_free(m);
    dch_etcd_free(c);
}

Test(etcd, fetch_previous_reads_the_version_before)
{
    char key[KEY_SIZE];
    dch_etcd *c = live_client(key, "previous");
    dch_map *m1 = published(c, key, 3, "p"), *m2 = with_member(m1, "p-more"), *got;
    cr_assert_eq(dch_etcd_fetch_previous(c, key, &got), DCH_ENOENT);
    cr_assert_eq(dch_etcd_publish(c, key, m2, 3, NULL), DCH_OK);
    cr_assert_eq(dch_etcd_fetch_previous(c, key, &got), DCH_OK);
    cr_assert(same_map_bytes(got, m1));
    dch_map_free(got);
    dch_map_free(m1);
    dch_map_free(m2);
    dch_etcd_free(c);
}
