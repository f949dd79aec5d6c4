/* SPDX-License-Identifier: MIT */
/*
 * The ketama ring against libmemcached itself: the same servers, in the same
 * order, are pushed into a memcached_st in weighted ketama mode
 * (MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED) and into a dch_ring with
 * DCH_RING_PLACE_KETAMA, and for KEYS keys of random length and bytes the
 * server libmemcached picks (memcached_generate_hash) must be the member
 * dch_ring_lookup returns. Server counts 1, 2, 3, 10, 25, 47, 50 and 100, equal
 * and unequal weights, then after a removal, a weight change and a new
 * member that reuses the removed one's id; zero mismatches. MD5 itself is
 * compared with libhashkit's at every length up to a few blocks.
 *
 * libmemcached computes routing without connecting, so the hosts named here
 * are never contacted. Built only when pkg-config finds libmemcached.
 * DCH_TEST_SEED overrides the seed; failures print it.
 */
#include <criterion/criterion.h>
#include <libhashkit-1.0/hashkit.h>
#include <libmemcached/memcached.h>

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dch/error.h"
#include "dch/ring.h"
#include "md5.h"
#include "support.h"

#define KEYS 100000u
#define MAX_SERVERS 101u
#define MAX_KEY 250u

typedef struct server {
    char host[64];
    unsigned port;
    uint32_t weight;
    char name[80]; /* the member name: "host", or "host:port" off 11211 */
} server;

/* Server i: an address or a host name, on 11211 or another port. */
static void make_server(server *sv, unsigned i, uint32_t weight, uint64_t *rng)
{
    if (i % 3 == 0)
        snprintf(sv->host, sizeof sv->host, "10.%u.%u.%u", i / 65536u,
                 i / 256u % 256u, i % 256u + 1u);
    else
        snprintf(sv->host, sizeof sv->host, "cache-%u.example", i);
    sv->port = rng_below(rng, 2) ? 11211u : 11211u + 1u + rng_below(rng, 50000);
    sv->weight = weight;
    if (sv->port == 11211u)
        snprintf(sv->name, sizeof sv->name, "%s", sv->host);
    else
        snprintf(sv->name, sizeof sv->name, "%s:%u", sv->host, sv->port);
}

/* A libmemcached handle for the list, in weighted ketama mode. */
static memcached_st *memc_of(const server *list, unsigned n)
{
    memcached_st *m = memcached_create(NULL);
    cr_assert_not_null(m);
    cr_assert_eq(memcached_behavior_set(m, MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED, 1),
                 MEMCACHED_SUCCESS);
    for (unsigned i = 0; i < n; i++)
        cr_assert_eq(memcached_server_add_with_weight(m, list[i].host,
                                                      (in_port_t)list[i].port,
                                                      list[i].weight),
                     MEMCACHED_SUCCESS, "adding %s", list[i].name);
    cr_assert_eq(memcached_server_count(m), n);
    return m;
}

/*
 * Mismatches between libmemcached's pick and the ring's over KEYS random
 * keys; the ring's members must be exactly the list's servers.
 */
static unsigned mismatches(const dch_ring *r, const server *list, unsigned n,
                           uint64_t *rng, const char *what, uint64_t seed)
{
    memcached_st *m = memc_of(list, n);
    uint32_t id_of[MAX_SERVERS];
    for (unsigned i = 0; i < n; i++)
        cr_assert_eq(dch_ring_find_node(r, list[i].name, &id_of[i]), DCH_OK);
    unsigned bad = 0;
    char key[MAX_KEY];
    for (unsigned k = 0; k < KEYS; k++) {
        size_t len = rng_below(rng, MAX_KEY + 1u);
        for (size_t b = 0; b < len; b++)
            key[b] = (char)rng_next(rng);
        uint32_t want = memcached_generate_hash(m, key, len);
        cr_assert_lt(want, n);
        uint32_t got = dch_ring_lookup(r, key, len);
        if (got != id_of[want] && bad++ < 5)
            cr_log_error("%s (seed %#" PRIx64 "): a key of %zu bytes goes to %s "
                         "in libmemcached, %s in the ring", what, seed, len,
                         list[want].name, dch_ring_node_name(r, got));
    }
    memcached_free(m);
    return bad;
}

static dch_ring *ring_of(const server *list, unsigned n)
{
    dch_ring_config cfg;
    dch_ring_config_default(&cfg);
    cfg.placement = DCH_RING_PLACE_KETAMA;
    dch_ring *r = NULL;
    cr_assert_eq(dch_ring_new(&r, &cfg), DCH_OK);
    for (unsigned i = 0; i < n; i++)
        cr_assert_eq(dch_ring_add_node(r, list[i].name, list[i].weight, NULL),
                     DCH_OK, "adding %s", list[i].name);
    return r;
}

/* Initial list, a removal, a weight change, and a member that takes the
 * freed id but joins the end of the order. */
static void run_case(unsigned n, bool unequal, uint64_t seed)
{
    uint64_t rng = seed;
    server list[MAX_SERVERS];
    for (unsigned i = 0; i < n; i++)
        make_server(&list[i], i, unequal ? 1u + rng_below(&rng, rng_below(&rng, 2) ? 4 : 200) : 1u,
                    &rng);
    char what[96];
    dch_ring *r = ring_of(list, n);
    snprintf(what, sizeof what, "%u servers, %s weights", n, unequal ? "unequal" : "equal");
    cr_assert_eq(mismatches(r, list, n, &rng, what, seed), 0, "%s: seed %#" PRIx64, what, seed);
    if (n == 1) {
        dch_ring_free(r);
        return;
    }

    unsigned gone = rng_below(&rng, n);
    uint32_t id;
    cr_assert_eq(dch_ring_find_node(r, list[gone].name, &id), DCH_OK);
    cr_assert_eq(dch_ring_remove_node(r, id), DCH_OK);
    memmove(&list[gone], &list[gone + 1], (n - gone - 1) * sizeof list[0]);
    n--;
    snprintf(what, sizeof what, "%u servers after a removal", n);
    cr_assert_eq(mismatches(r, list, n, &rng, what, seed), 0, "%s: seed %#" PRIx64, what, seed);

    unsigned changed = rng_below(&rng, n);
    list[changed].weight = list[changed].weight * 3u + 1u;
    cr_assert_eq(dch_ring_find_node(r, list[changed].name, &id), DCH_OK);
    cr_assert_eq(dch_ring_set_weight(r, id, list[changed].weight), DCH_OK);
    snprintf(what, sizeof what, "%u servers after a weight change", n);
    cr_assert_eq(mismatches(r, list, n, &rng, what, seed), 0, "%s: seed %#" PRIx64, what, seed);

    make_server(&list[n], 1000u + n, unequal ? 7u : 1u, &rng);
    cr_assert_eq(dch_ring_add_node(r, list[n].name, list[n].weight, NULL), DCH_OK);
    n++;
    snprintf(what, sizeof what, "%u servers after a join", n);
    cr_assert_eq(mismatches(r, list, n, &rng, what, seed), 0, "%s: seed %#" PRIx64, what, seed);
    dch_ring_free(r);
}

#define CASE(n)                                                          \
    Test(ketama_interop, routes_as_libmemcached_with_##n##_servers)      \
    {                                                                    \
        uint64_t seed = test_seed(UINT64_C(0x6b6574616d610000) + n);       \
        run_case(n, false, seed);                                        \
        run_case(n, true, seed ^ UINT64_C(0xffff0000));                  \
    }
CASE(1)
CASE(2)
CASE(3)
CASE(10)
CASE(25)
CASE(47)
CASE(50)
CASE(100)

/*
 * "tie-184" and "tie-434" (port 11211) each have a point of value
 * 0x4e201d73. A key landing on the arc that ends there goes to the server
 * added first, in libmemcached as in the ring, whichever order is used.
 */
Test(ketama_interop, tied_points_go_to_the_server_added_first)
{
    uint64_t seed = test_seed(UINT64_C(0x746965));
    uint64_t rng = seed;
    for (unsigned first = 0; first < 2; first++) {
        server list[2];
        memset(list, 0, sizeof list);
        for (unsigned i = 0; i < 2; i++) {
            unsigned which = (i ^ first) ? 434u : 184u;
            snprintf(list[i].host, sizeof list[i].host, "tie-%u", which);
            snprintf(list[i].name, sizeof list[i].name, "tie-%u", which);
            list[i].port = 11211u;
            list[i].weight = 1u;
        }
        dch_ring *r = ring_of(list, 2);
        dch_range arc = {0, 0, 0};
        size_t nr = 0;
        (void)dch_ring_ranges(r, NULL, 0, &nr);
        dch_range *rg = malloc(nr * sizeof *rg);
        cr_assert_not_null(rg);
        cr_assert_eq(dch_ring_ranges(r, rg, nr, &nr), DCH_OK);
        uint64_t tie = UINT64_C(0x4e201d73) << 32 | 0xffffffffu;
        for (size_t i = 0; i < nr; i++)
            if (rg[i].lo <= tie && tie <= rg[i].hi)
                arc = rg[i];
        free(rg);
        uint32_t first_id;
        cr_assert_eq(dch_ring_find_node(r, list[0].name, &first_id), DCH_OK);
        cr_assert_eq(arc.owner, first_id, "the ring gives the tie to %s", list[0].name);
        memcached_st *m = memc_of(list, 2);
        char key[16];
        unsigned found = 0;
        for (unsigned tries = 0; tries < 1000000u && found < 3; tries++) {
            snprintf(key, sizeof key, "k%" PRIx64, rng_next(&rng) >> 20);
            uint64_t h = dch_ring_hash(r, key, strlen(key));
            if (h < (arc.lo & ~UINT64_C(0xffffffff)) || h > arc.hi)
                continue;
            found++;
            cr_assert_eq(memcached_generate_hash(m, key, strlen(key)), 0u,
                         "libmemcached gives the tie to %s (seed %#" PRIx64 ")",
                         list[1].name, seed);
            cr_assert_eq(dch_ring_lookup(r, key, strlen(key)), first_id);
        }
        cr_assert_eq(found, 3, "no key found on the tied arc (seed %#" PRIx64 ")", seed);
        memcached_free(m);
        dch_ring_free(r);
    }
}

Test(ketama_interop, md5_matches_libhashkit_at_every_length)
{
    uint64_t seed = test_seed(UINT64_C(0x6d6435));
    uint64_t rng = seed;
    unsigned char buf[300];
    for (size_t len = 0; len <= sizeof buf; len++) {
        for (size_t b = 0; b < len; b++)
            buf[b] = (unsigned char)rng_next(&rng);
        unsigned char want[16];
        uint8_t got[16];
        libhashkit_md5_signature(buf, len, want);
        dch__md5(buf, len, got);
        cr_assert_arr_eq(got, want, 16, "MD5 of %zu bytes differs (seed %#" PRIx64 ")",
                         len, seed);
    }
}

/*
 * Past 100 servers libmemcached's continuum is over its fixed size; Debian's
 * build asserts on it. In a child: if adding the 101st server aborts, that is
 * the documented behaviour; if it does not, routing must still agree.
 */
Test(ketama_interop, past_100_servers_aborts_or_agrees)
{
    uint64_t seed = test_seed(UINT64_C(0x313031));
    fflush(NULL);
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        /* Silence the assertion's backtrace on stderr. */
        if (freopen("/dev/null", "w", stderr) == NULL)
            _exit(3);
        uint64_t rng = seed;
        server list[MAX_SERVERS];
        for (unsigned i = 0; i < MAX_SERVERS; i++)
            make_server(&list[i], i, 1u + rng_below(&rng, 3), &rng);
        memcached_st *m = memc_of(list, MAX_SERVERS);
        memcached_free(m);
        dch_ring *r = ring_of(list, MAX_SERVERS);
        unsigned bad = mismatches(r, list, MAX_SERVERS, &rng, "101 servers", seed);
        dch_ring_free(r);
        _exit(bad == 0 ? 0 : 1);
    }
    int status = 0;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    if (WIFSIGNALED(status)) {
        cr_assert_eq(WTERMSIG(status), SIGABRT, "the child died of signal %d",
                     WTERMSIG(status));
        cr_log_info("libmemcached aborts when a 101st server is added");
    } else {
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                  "with 101 servers the ring and libmemcached disagree (seed %#" PRIx64 ")",
                  seed);
        cr_log_info("libmemcached accepts 101 servers and agrees with the ring");
    }
}
