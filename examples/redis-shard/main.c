/* SPDX-License-Identifier: MIT */
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
 *   redis-shard replicas [options] NAME=HOST:PORT...
 *   redis-shard restart [options] --restart CMD NAME=HOST:PORT...
 *
 * Every command prints what it did for people, and the same numbers on
 * lines starting with '@' as key=value pairs for scripts. Exit status: 0
 * success, 1 a failure or a broken invariant (the output says which), 2 a
 * usage error.
 *
 * This file holds init, the dispatch and what the commands share; load.c,
 * step.c (join and leave), verify.c, restart.c (a rolling restart by
 * drains) and replicas.c (R copies of every key
 * through a shard's failure) hold the others.
 */
#include "commands.h"
#include "number.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
    "                    same step again completes it\n"
    "usage: redis-shard replicas [--replicas R] [--keys N] [--hash-key HEX32]\n"
    "           [--leave NAME] [--no-fill] NAME=HOST:PORT...\n"
    "      R copies of every key (default 2; R + 1 shards at least), N keys\n"
    "      (20000) written to every copy; NAME (the second shard) is stopped\n"
    "      and removed, its copies filled from survivors, and every copy of\n"
    "      every key checked; --no-fill skips the fill (the check must fail)\n"
    "usage: redis-shard restart [--replicas R] [--keys N] [--hash-key HEX32]\n"
    "           [--ops N] [--seed N] [--no-catch-up] --restart CMD NAME=HOST:PORT...\n"
    "      a rolling restart with R copies (default 2): each shard in turn is\n"
    "      drained (primary), stopped with SHUTDOWN SAVE, started again by\n"
    "      `CMD PORT` on its data file, caught up and undrained, while a client\n"
    "      runs N ops (2000) between the steps; then the same restarts by\n"
    "      weight 0 and back, counted on the map; --no-catch-up skips the catch-up\n"
    "      (the check must fail with stale reads)\n";

int usage(const char *why)
{
    if (why != NULL)
        fprintf(stderr, "redis-shard: %s\n", why);
    fputs(usage_text, stderr);
    return EXIT_USAGE;
}

double now_seconds(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- Connections and routers ------------------------------------------- */

void close_all(redisContext **conns, size_t n)
{
    if (conns == NULL)
        return;
    for (size_t i = 0; i < n; i++)
        store_close(conns[i]);
    free(conns);
}

redisContext **connect_all(const cluster *c)
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

int member_of_router(const cluster *c, const char *name)
{
    uint32_t id;

    return c->scheme == SCHEME_MAP
               ? dch_map_find_node(c->map, name, &id) == DCH_OK
               : dch_ring_find_node(c->ring, name, &id) == DCH_OK;
}

/* The current router's view. */
int current_view(view *v, const cluster *c)
{
    return view_init(v, c, c->map, c->ring);
}

/* ---- Pipeline batches -------------------------------------------------- */

key_batch *key_batches_new(size_t n)
{
    key_batch *b = calloc(n ? n : 1, sizeof *b);
    if (b == NULL)
        fprintf(stderr, "redis-shard: out of memory\n");
    return b;
}

void shards_free(cluster *c, view *v, redisContext **conns, key_batch *bufs)
{
    free(bufs);
    close_all(conns, c->nbook);
    view_free(v);
    cluster_free(c);
}

/* ---- init --------------------------------------------------------------- */

int cmd_init(const char *dir, int argc, char **argv)
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
            if (dch__hex_parse(argv[++a], key, 16) != 0) {
                free(ms);
                return usage("--hash-key takes 32 hex digits");
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

int main(int argc, char **argv)
{
    const char *dir = NULL;
    int a = 1;

    if (argc > 1 && strcmp(argv[1], "replicas") == 0) {
        setvbuf(stdout, NULL, _IOLBF, 0);
        return cmd_replicas(argc - 2, argv + 2);
    }
    if (argc > 1 && strcmp(argv[1], "restart") == 0) {
        setvbuf(stdout, NULL, _IOLBF, 0);
        return cmd_restart(argc - 2, argv + 2);
    }
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
