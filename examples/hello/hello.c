/* SPDX-License-Identifier: MIT */
/*
 * libdch in five minutes: make a map, add members, look up keys, remove a
 * member, and print what moved. Uses only the public API (dch/dch.h).
 *
 *   cc -std=c11 hello.c $(pkg-config --cflags --libs dch) -o hello && ./hello
 *
 * It checks what it prints: after the removal, every key that changed
 * owner was on the member that left, and the slots that moved are exactly
 * the leaver's (exit status 1 otherwise), so it runs as a test too.
 */
#include <stdio.h>
#include <string.h>

#include <dch/dch.h>

#define KEYS 12

/* Print one moved hash range: [lo, hi] went from `from` to `to`. */
static int print_move(const dch_move *mv, void *ctx)
{
    unsigned *ranges = ctx;
    if (*ranges < 5)
        printf("  0x%016llx..0x%016llx  %s -> %s\n", (unsigned long long)mv->lo,
               (unsigned long long)mv->hi, mv->from, mv->to);
    (*ranges)++;
    return 0;
}

static const char *owner_of(const dch_map *m, const char *key)
{
    uint32_t id = dch_map_lookup(m, key, strlen(key));
    const char *name = dch_map_node_name(m, id);
    return name ? name : "(nobody)";
}

int main(void)
{
    /* 1. A map with the defaults: 1024 units of 64 slots, one copy a slot.
     *    Every client of a cluster must share the hash key (here all zero). */
    dch_map_config cfg = DCH_MAP_CONFIG_INIT;
    dch_map *map = NULL;
    int rc = dch_map_new(&map, &cfg);
    if (rc != DCH_OK) {
        fprintf(stderr, "dch_map_new: %s\n", dch_strerror(rc));
        return 1;
    }

    /* 2. Four members of equal weight: each holds a quarter of every unit. */
    const char *names[] = {"cache-a", "cache-b", "cache-c", "cache-d"};
    uint32_t ids[4];
    for (int i = 0; i < 4; i++) {
        rc = dch_map_add_node(map, names[i], 1, &ids[i]);
        if (rc != DCH_OK) {
            fprintf(stderr, "add %s: %s\n", names[i], dch_strerror(rc));
            dch_map_free(map);
            return 1;
        }
    }

    /* 3. Look up keys: one hash and one table read each. */
    const char *keys[KEYS] = {"user:1", "user:2", "user:3", "user:4", "cart:17", "cart:18",
                              "order/9", "order/10", "session-x", "session-y", "img.png",
                              "feed:home"};
    const char *before[KEYS];
    printf("4 members, %u slots; who owns what:\n", dch_map_slot_count(map));
    for (int k = 0; k < KEYS; k++) {
        before[k] = owner_of(map, keys[k]);
        printf("  %-10s -> %s\n", keys[k], before[k]);
    }

    /* 4. Remove cache-c on a copy, as a cluster would (the published map
     *    stays as it is until the new one is ready): its slots are shared
     *    out over the three others; no other slot moves. */
    dch_map *next = NULL;
    uint32_t gone_slots = dch_map_node_slots(map, ids[2]);
    if (dch_map_clone(&next, map) != DCH_OK || dch_map_remove_node(next, ids[2]) != DCH_OK) {
        fprintf(stderr, "removing cache-c failed\n");
        dch_map_free(next);
        dch_map_free(map);
        return 1;
    }

    /* 5. What moved: the hash ranges whose owner changed, by name. */
    unsigned ranges = 0;
    printf("\ncache-c leaves (it held %u slots); the first ranges that move:\n", gone_slots);
    dch_map_diff(map, next, print_move, &ranges);
    printf("  ... %u ranges in all\n\nkeys after the removal:\n", ranges);
    int bad = 0;
    for (int k = 0; k < KEYS; k++) {
        const char *now = owner_of(next, keys[k]);
        int moved = strcmp(now, before[k]) != 0;
        printf("  %-10s -> %s%s\n", keys[k], now, moved ? "  (moved)" : "");
        /* Only the leaver's keys may move. */
        if (moved && strcmp(before[k], "cache-c") != 0)
            bad = 1;
    }
    uint32_t total = 0;
    for (int i = 0; i < 4; i++)
        if (i != 2)
            total += dch_map_node_slots(next, ids[i]) - dch_map_node_slots(map, ids[i]);
    printf("\nthe three others gained %u slots: the %u cache-c held\n", total, gone_slots);
    if (total != gone_slots)
        bad = 1;

    dch_map_free(next);
    dch_map_free(map);
    return bad;
}
