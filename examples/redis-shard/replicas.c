/* SPDX-License-Identifier: MIT */
/*
 * replicas: the store with R copies of every key (a map with
 * dch_map_config.replicas = R), through a shard's failure.
 *
 *   redis-shard replicas [--replicas R] [--keys N] [--hash-key HEX32]
 *                        [--leave NAME] [--no-fill] NAME=HOST:PORT...
 *
 * 1. Every write goes to every copy of its key's slot
 *    (dch_map_lookup_replicas_hash), primary first; N keys are written.
 * 2. The leaver (default: the second member) is removed from a clone of
 *    the map (dch_map_remove_node). Per slot, the copies of the new map
 *    that the old one did not have are the ones to fill
 *    (dch_map_slot_replicas of both maps, compared, and counted against
 *    dch_map_diff_copies); each is filled from a copy the old map had and
 *    that survives.
 * 3. The leaver is stopped (SHUTDOWN NOSAVE) before anything is filled,
 *    so the fill can only read surviving copies: that is the point of R.
 * 4. Each survivor that is a fill source is walked with SCAN; the keys of
 *    the slots it sources are read and written to every new copy. Only
 *    then is the new map published (here: it becomes the map writes use).
 * 5. A second generation of every tenth key is written to every copy under
 *    the new map, and every key is read back from every copy: none may be
 *    missing or hold another value, and no shard may hold a key it is not
 *    a copy of.
 *
 * The map is kept in memory: the scenario is one process, with no state
 * directory. A remove drops only the leaver's copies (map.h, replicas), so
 * no survivor has keys to delete; the scenario checks that too. --no-fill
 * skips step 4, and the check of step 5 must then fail: the test that
 * shows the checks can fail. Lines starting with '@' carry the numbers
 * as key=value pairs.
 */
#include "replicas.h"
#include "number.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- Pipelines ---------------------------------------------------------- */

int flush_sets(scenario *s, uint32_t shard)
{
    key_batch *b = &s->batch[shard];
    int rc = b->n ? store_set_many(s->conns[shard], b->kp, b->klen, b->vp, b->vlen, b->n) : 0;

    b->n = 0;
    return rc;
}

int queue_set(scenario *s, uint32_t shard, const char *key, size_t klen, const char *val,
              size_t vlen)
{
    key_batch *b = &s->batch[shard];

    memcpy(b->keys[b->n], key, klen);
    memcpy(b->vals[b->n], val, vlen);
    b->kp[b->n] = b->keys[b->n];
    b->vp[b->n] = b->vals[b->n];
    b->klen[b->n] = klen;
    b->vlen[b->n] = vlen;
    b->n++;
    return b->n == PIPELINE ? flush_sets(s, shard) : 0;
}

/* Write generation gen of every `every`-th key to every copy under m. */
int write_all_copies(scenario *s, const dch_map *m, uint32_t every, uint32_t gen,
                            uint64_t *writes)
{
    for (uint32_t i = 0; i < s->keys; i += every) {
        char key[KEY_CAP], val[VALUE_CAP];
        uint32_t ids[DCH_MAP_MAX_REPLICAS];
        const size_t klen = key_name(key, i), vlen = value_make(val, i, gen);
        const size_t n = dch_map_lookup_replicas_hash(m, dch_map_hash(m, key, klen), ids,
                                                      DCH_MAP_MAX_REPLICAS);

        s->gens[i] = gen;
        for (size_t c = 0; c < n && c < DCH_MAP_MAX_REPLICAS; c++) {
            if (queue_set(s, ids[c], key, klen, val, vlen) != 0)
                return -1;
            (*writes)++;
        }
    }
    for (uint32_t c = 0; c < s->n; c++)
        if (s->conns[c] != NULL && flush_sets(s, c) != 0)
            return -1;
    return 0;
}

/* ---- Reading every copy back -------------------------------------------- */

typedef struct reader {
    scenario *s;
    const key_batch *b;
    tally *t;
} reader;

static int on_copy(size_t k, const char *val, size_t len, void *ctx)
{
    reader *r = ctx;
    const uint32_t i = r->b->idx[k];

    r->t->reads++;
    if (val == NULL)
        r->t->lost++;
    else if (!value_is(val, len, i, r->s->gens[i]))
        r->t->damaged++;
    return 0;
}

static int flush_gets(scenario *s, uint32_t shard, tally *t)
{
    key_batch *b = &s->batch[shard];
    reader r = {s, b, t};
    int rc = b->n ? store_get_many(s->conns[shard], b->kp, b->klen, b->n, on_copy, &r) : 0;

    b->n = 0;
    return rc;
}

/*
 * Read every key from every copy under m: t->lost copies missing,
 * t->damaged holding another value than the key's last, and t->extra keys
 * on a shard beyond the copies it should hold (DBSIZE against the count).
 */
int read_all_copies(scenario *s, const dch_map *m, tally *t)
{
    memset(t, 0, sizeof *t);
    memset(s->expect, 0, s->n * sizeof *s->expect);
    for (uint32_t i = 0; i < s->keys; i++) {
        char key[KEY_CAP];
        uint32_t ids[DCH_MAP_MAX_REPLICAS];
        const size_t klen = key_name(key, i);
        const size_t n = dch_map_lookup_replicas_hash(m, dch_map_hash(m, key, klen), ids,
                                                      DCH_MAP_MAX_REPLICAS);

        for (size_t c = 0; c < n && c < DCH_MAP_MAX_REPLICAS; c++) {
            key_batch *b = &s->batch[ids[c]];

            if (s->conns[ids[c]] == NULL) {
                fprintf(stderr, "redis-shard: %s holds a copy but is stopped\n",
                        s->ms[ids[c]].name);
                return -1;
            }
            memcpy(b->keys[b->n], key, klen);
            b->kp[b->n] = b->keys[b->n];
            b->klen[b->n] = klen;
            b->idx[b->n++] = i;
            s->expect[ids[c]]++;
            if (b->n == PIPELINE && flush_gets(s, ids[c], t) != 0)
                return -1;
        }
    }
    for (uint32_t c = 0; c < s->n; c++)
        if (s->conns[c] != NULL && flush_gets(s, c, t) != 0)
            return -1;
    /* A shard holds expect - (its lost copies) keys of its own; anything
     * beyond that is a key it is not a copy of. Lost copies are counted
     * over all shards, so compare the totals. */
    uint64_t held = 0, expected = 0;
    for (uint32_t c = 0; c < s->n; c++) {
        if (s->conns[c] == NULL)
            continue;
        const long long size = store_dbsize(s->conns[c]);
        if (size < 0)
            return -1;
        held += (uint64_t)size;
        expected += s->expect[c];
    }
    t->extra = held + t->lost > expected ? held + t->lost - expected : 0;
    return 0;
}

/* ---- Stopping the leaver -------------------------------------------------- */

void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* SHUTDOWN NOSAVE (or SAVE), then wait (bounded) until the server refuses
 * a connection: the fill must not be able to read it. */
int stop_shard(scenario *s, uint32_t shard, int save)
{
    const member *m = &s->ms[shard];
    const int rc = save ? store_shutdown_save(s->conns[shard]) : store_shutdown(s->conns[shard]);

    store_close(s->conns[shard]);
    s->conns[shard] = NULL;
    if (rc != 0)
        return -1;
    for (int attempt = 0; attempt < 100; attempt++) {
        const struct timeval tv = {0, 200000};
        redisContext *c = redisConnectWithTimeout(m->host, m->port, tv);
        const int refused = c == NULL || c->err != 0;

        if (c != NULL)
            redisFree(c);
        if (refused)
            return 0;
        sleep_ms(100);
    }
    fprintf(stderr, "redis-shard: %s still answers after SHUTDOWN\n", m->name);
    return -1;
}

/* ---- The scenario's shards and map ---------------------------------------- */

int scenario_start(scenario *s, int argc)
{
    memset(s, 0, sizeof *s);
    s->ms = calloc((size_t)argc + 1, sizeof *s->ms);
    return s->ms != NULL ? 0 : -1;
}

int scenario_add_member(scenario *s, char *arg, const char *why)
{
    char *eq = strchr(arg, '=');

    if (arg[0] == '-' || eq == NULL)
        return usage(why);
    *eq = '\0';
    if (member_parse(&s->ms[s->n], arg, eq + 1) != 0)
        return EXIT_USAGE;
    s->n++;
    return 0;
}

int scenario_open(scenario *s, uint32_t keys, uint32_t replicas, const uint8_t hash_key[16],
                  dch_map **m)
{
    dch_map_config cfg;

    s->keys = keys;
    s->replicas = replicas;
    s->conns = calloc(s->n, sizeof *s->conns);
    s->batch = key_batches_new(s->n);
    s->gens = calloc(s->keys, sizeof *s->gens);
    s->expect = calloc(s->n, sizeof *s->expect);
    s->sent = calloc(s->n, sizeof *s->sent);
    s->received = calloc(s->n, sizeof *s->received);
    if (!s->conns || !s->batch || !s->gens || !s->expect || !s->sent || !s->received)
        return -1;
    dch_map_config_default(&cfg);
    memcpy(cfg.hash_key, hash_key, sizeof cfg.hash_key);
    cfg.replicas = s->replicas;
    if (dch_map_new(m, &cfg) != DCH_OK)
        return -1;
    for (uint32_t i = 0; i < s->n; i++) {
        uint32_t id;
        long long size;

        if (dch_map_add_node(*m, s->ms[i].name, 1, &id) != DCH_OK || id != i) {
            fprintf(stderr, "redis-shard: cannot add %s (a name given twice?)\n", s->ms[i].name);
            return -1;
        }
        if (store_connect(&s->conns[i], s->ms[i].host, s->ms[i].port) != 0)
            return -1;
        /* The scenarios count every key a shard holds. */
        if ((size = store_dbsize(s->conns[i])) != 0) {
            if (size > 0)
                fprintf(stderr, "redis-shard: %s holds %lld keys; shards must start empty\n",
                        s->ms[i].name, size);
            return -1;
        }
    }
    return 0;
}

void scenario_free(scenario *s)
{
    free(s->batch);
    close_all(s->conns, s->n);
    free(s->gens);
    free(s->expect);
    free(s->sent);
    free(s->received);
    free(s->ms);
}

/* ---- The command ------------------------------------------------------------ */

typedef struct options {
    uint64_t replicas, keys;
    uint8_t hash_key[16];
    const char *leave;
    int no_fill;
} options;

/* Options and members; EXIT_USAGE on a bad one, else 0. */
static int parse_options(options *o, scenario *s, int argc, char **argv)
{
    memset(o, 0, sizeof *o);
    o->replicas = 2;
    o->keys = 20000;
    for (int a = 0; a < argc; a++) {
        const char *v = a + 1 < argc ? argv[a + 1] : NULL;

        if (strcmp(argv[a], "--no-fill") == 0) {
            o->no_fill = 1;
        } else if (strcmp(argv[a], "--replicas") == 0 && v) {
            if (dch__number_parse(v, 0, 0, DCH_MAP_MAX_REPLICAS, &o->replicas) != 0 || o->replicas < 2)
                return usage("--replicas takes 2 .. 8");
            a++;
        } else if (strcmp(argv[a], "--keys") == 0 && v) {
            if (dch__number_parse(v, 0, 0, 10000000, &o->keys) != 0 || o->keys == 0)
                return usage("--keys takes 1 .. 10000000");
            a++;
        } else if (strcmp(argv[a], "--hash-key") == 0 && v) {
            if (dch__hex_parse(v, o->hash_key, 16) != 0)
                return usage("--hash-key takes 32 hex digits");
            a++;
        } else if (strcmp(argv[a], "--leave") == 0 && v) {
            o->leave = v;
            a++;
        } else if (scenario_add_member(s, argv[a], "replicas takes NAME=HOST:PORT arguments")) {
            return EXIT_USAGE;
        }
    }
    if (s->n < o->replicas + 1)
        return usage("replicas needs more shards than copies (R + 1 at least)");
    if (o->leave == NULL)
        o->leave = s->ms[1].name;
    return 0;
}

static void print_tally(const char *when, const tally *t, uint64_t copies)
{
    printf("%s: %" PRIu64 " copies read: %" PRIu64 " missing, %" PRIu64
           " with another value, %" PRIu64 " keys where no copy belongs\n",
           when, t->reads, t->lost, t->damaged, t->extra);
    printf("@replicas check=%s copies=%" PRIu64 " reads=%" PRIu64 " lost=%" PRIu64
           " damaged=%" PRIu64 " extra=%" PRIu64 "\n",
           when, copies, t->reads, t->lost, t->damaged, t->extra);
}

/* The scenario once the shards are connected and the map built. */
static int run(scenario *s, const options *o, dch_map *m)
{
    uint64_t writes = 0, filled = 0, expect_fill = 0, rewrites = 0;
    tally t;
    dch_map *next = NULL;
    fill_plan fp;
    uint32_t leaver;
    int failed = 0;

    if (write_all_copies(s, m, 1, 0, &writes) != 0 || read_all_copies(s, m, &t) != 0)
        return 1;
    printf("wrote %" PRIu32 " keys, %" PRIu64 " copies (%" PRIu32 " per key) on %zu shards\n",
           s->keys, writes, s->replicas, s->n);
    print_tally("written", &t, writes);
    failed |= t.lost || t.damaged || t.extra || t.reads != writes;

    if (dch_map_find_node(m, o->leave, &leaver) != DCH_OK) {
        fprintf(stderr, "redis-shard: no shard %s\n", o->leave);
        return 1;
    }
    if (dch_map_clone(&next, m) != DCH_OK || dch_map_remove_node(next, leaver) != DCH_OK ||
        plan_fill(&fp, m, next, leaver) != 0) {
        fprintf(stderr, "redis-shard: cannot compute the map without %s\n", o->leave);
        dch_map_free(next);
        return 1;
    }
    for (uint32_t i = 0; i < s->keys; i++) {
        char key[KEY_CAP];
        const size_t klen = key_name(key, i);
        expect_fill += fp.ntargets[dch_map_slot_of(m, dch_map_hash(m, key, klen))];
    }
    printf("%s leaves: %" PRIu64 " slot copies created, %" PRIu64 " dropped (%" PRIu64
           " of them not %s's); %" PRIu64 " key copies to fill\n",
           o->leave, fp.created, fp.dropped, fp.dropped_elsewhere, o->leave, expect_fill);
    failed |= fp.dropped_elsewhere != 0 || fp.created != fp.dropped;
    failed |= fill_plan_check(&fp, m, next) != 0;

    double t0 = now_seconds();
    if (stop_shard(s, leaver, 0) != 0)
        failed = 1;
    else
        printf("stopped %s (SHUTDOWN NOSAVE): its data is gone\n", o->leave);
    if (!failed && !o->no_fill && fill_all(s, next, &fp, &filled) != 0)
        failed = 1;
    const double fill_seconds = now_seconds() - t0;
    printf("filled %" PRIu64 " key copies from surviving copies in %.3f s%s\n", filled,
           fill_seconds, o->no_fill ? " (--no-fill: none)" : "");
    printf("@replicas fill leaver=%s created_slots=%" PRIu64 " dropped_slots=%" PRIu64
           " dropped_elsewhere=%" PRIu64 " expected=%" PRIu64 " filled=%" PRIu64
           " seconds=%.6f\n",
           o->leave, fp.created, fp.dropped, fp.dropped_elsewhere, expect_fill, filled,
           fill_seconds);
    failed |= !o->no_fill && filled != expect_fill;
    for (uint32_t c = 0; c < s->n; c++)
        if (c != leaver)
            printf("@replicas shard name=%s sent=%" PRIu64 " received=%" PRIu64 "\n",
                   s->ms[c].name, s->sent[c], s->received[c]);

    /* Publish: from here on, writes and reads use the new map. */
    printf("published epoch %" PRIu64 ", fingerprint %016" PRIx64 "\n", dch_map_epoch(next),
           dch_map_fingerprint(next));
    if (!failed && (write_all_copies(s, next, 10, 1, &rewrites) != 0 ||
                    read_all_copies(s, next, &t) != 0))
        failed = 1;
    else if (!failed) {
        uint64_t copies = 0;
        for (uint32_t c = 0; c < s->n; c++)
            copies += s->expect[c];
        printf("rewrote every tenth key: %" PRIu64 " copies\n", rewrites);
        print_tally("after", &t, copies);
        failed |= t.lost || t.damaged || t.extra || copies != (uint64_t)s->keys * s->replicas;
    }
    fill_plan_free(&fp);
    dch_map_free(next);
    printf("%s\n", failed ? "FAILED: copies are missing or wrong" : "every key on every copy");
    return failed ? 1 : 0;
}

int cmd_replicas(int argc, char **argv)
{
    scenario s;
    options o;
    dch_map *m = NULL;
    int status;

    if (scenario_start(&s, argc) != 0)
        return 1;
    status = parse_options(&o, &s, argc, argv);
    if (status == 0 &&
        scenario_open(&s, (uint32_t)o.keys, (uint32_t)o.replicas, o.hash_key, &m) != 0)
        status = 1;
    if (status == 0)
        status = run(&s, &o, m);
    scenario_free(&s);
    dch_map_free(m);
    return status;
}
