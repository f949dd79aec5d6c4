/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the replica promises of dch/map.h ("Replicas") under any
 * sequence of operations the fuzzer's bytes describe, checked by the same
 * code as the property tests (tests/support/replicas.c).
 *
 * Input: byte 0 picks the shape (units 2^(b & 7), slots per unit
 * 2^(b >> 3 & 3), at most 2^10 slots, so a run stays fast) and R
 * (1 + (b >> 5 & 3), plus 4 when byte 1 has bit 3: R = 1 .. 8), byte 1
 * the zones new members draw from (0: none, else 1 .. 7) and whether the
 * diversity promise is checked (bit 7; it counts every pair, so only some
 * inputs pay for it). Then operations, one
 * opcode byte (taken modulo 6) and its arguments each:
 *
 *   0, 1  add:         name byte, zone byte, weight byte
 *   2     remove:      id byte
 *   3, 4  set_weight:  id byte, weight byte
 *   5     clone, continue with the clone
 *
 * A name byte b names "n<b>" (names collide: EEXIST changes nothing). A
 * zone byte is taken modulo the zone count. An id byte is taken modulo
 * id_limit + 2 (ENOENT for free ids). A weight byte below 0xF0 is b % 8
 * (weight 0 drains), from 0xF0 up one of sixteen weights up to 10^6, so
 * unequal histories reach ratios of 10^6.
 *
 * After every call: promises 1-4 (rep_check_state, 4 where its condition
 * holds), 5 and 6 for the call (rep_check_move), 7 when the input asks,
 * and failed calls change nothing. A violation prints the step and what
 * broke, and aborts. DCH_FUZZ_TRACE set in the environment prints every
 * operation.
 */
#include "dch/dch.h"
#include "replicas.h"
#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint32_t big_weights[16] = {9,      10,     16,     25,     50,     99,
                                         100,    255,    1000,   4096,   10000,  65535,
                                         100000, 250000, 999999, 1000000};

static uint32_t weight_of(uint8_t b)
{
    return b < 0xF0 ? b % 8u : big_weights[b - 0xF0];
}

static void fail(int step, const char *op, const char *what)
{
    fprintf(stderr, "fuzz_replicas: step %d (%s): %s\n", step, op, what);
    abort();
}

static bool same_table(const rep_table *a, const rep_table *b)
{
    return a->slots == b->slots && a->replicas == b->replicas &&
           memcmp(a->ids, b->ids, (size_t)a->slots * a->replicas * sizeof *a->ids) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    const bool trace = getenv("DCH_FUZZ_TRACE") != NULL;
    dch_map_config cfg =
        map_config(UINT32_C(1) << (data[0] & 7), UINT32_C(1) << (data[0] >> 3 & 3));
    cfg.replicas = 1u + (data[0] >> 5 & 3u) + (data[1] & 8u ? 4u : 0u);
    const uint32_t zones = data[1] & 7;
    const bool diversity = (data[1] & 0x80) != 0;
    dch_map *m;
    if (dch_map_new(&m, &cfg) != DCH_OK)
        abort();
    rep_table t0 = {0}, t1 = {0};
    rep_history h = {0};
    size_t i = 2;
    for (int step = 0; i < size; step++) {
        const uint8_t op = data[i++] % 6;
        rep_table_take(&t0, m);
        const uint64_t epoch = dch_map_epoch(m);
        uint32_t x = DCH_NODE_NONE, from = 0, to = 0;
        int rc = DCH_OK;
        const char *name_op = "?";
        if (op <= 1 && i + 3 <= size) {
            char name[8], zone[8];
            snprintf(name, sizeof name, "n%u", data[i]);
            snprintf(zone, sizeof zone, "z%u", zones ? data[i + 1] % zones : 0);
            to = weight_of(data[i + 2]);
            i += 3;
            name_op = "add";
            rc = dch_map_add_node_in_zone(m, name, zones ? zone : NULL, to, &x);
            if (rc == DCH_OK)
                rep_history_note(&h, to, zones > 0);
            else
                x = DCH_NODE_NONE;
            if (trace)
                fprintf(stderr, "%d: add %s zone %s weight %u -> %d id %u\n", step, name,
                        zones ? zone : "-", to, rc, x);
        } else if (op == 2 && i + 1 <= size) {
            x = data[i++] % (dch_map_id_limit(m) + 2);
            from = dch_map_node_weight(m, x);
            name_op = "remove";
            rc = dch_map_remove_node(m, x);
            if (trace)
                fprintf(stderr, "%d: remove %u -> %d\n", step, x, rc);
        } else if ((op == 3 || op == 4) && i + 2 <= size) {
            x = data[i] % (dch_map_id_limit(m) + 2);
            to = weight_of(data[i + 1]);
            i += 2;
            from = dch_map_node_weight(m, x);
            name_op = "set_weight";
            rc = dch_map_set_weight(m, x, to);
            if (rc == DCH_OK)
                rep_history_note(&h, to, false);
            if (trace)
                fprintf(stderr, "%d: set_weight %u %u -> %d (copies %u, slots %u)\n", step, x, to,
                        rc, dch_map_node_copies(m, x), dch_map_node_slots(m, x));
        } else if (op == 5) {
            dch_map *c;
            if (dch_map_clone(&c, m) != DCH_OK)
                abort();
            dch_map_free(m);
            m = c;
            name_op = "clone";
            if (trace)
                fprintf(stderr, "%d: clone\n", step);
        } else {
            break; /* arguments cut short */
        }
        rep_table_take(&t1, m);
        if (rc != DCH_OK) {
            if (!same_table(&t0, &t1) || dch_map_epoch(m) != epoch)
                fail(step, name_op, "a failed call changed the map");
            continue;
        }
        rep_history_after(&h, m);
        const char *bad = rep_check_state(m, &t1, &h, NULL);
        if (bad == NULL && x != DCH_NODE_NONE && from != to)
            bad = rep_check_move(m, &t0, &t1, x, from, to, &h, NULL);
        if (bad == NULL && op == 5 && !same_table(&t0, &t1))
            bad = "a clone differs from its original";
        if (bad == NULL && diversity)
            bad = rep_check_diversity(m, &t1, &h, NULL);
        if (bad != NULL)
            fail(step, name_op, bad);
    }
    rep_table_free(&t0);
    rep_table_free(&t1);
    dch_map_free(m);
    return 0;
}
