/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the balancing promises of dch/balance.h under any
 * sequence of operations the fuzzer's bytes describe, checked by the same
 * code as the property tests (tests/support/balancing.c).
 *
 * Input: byte 0 picks the shape (units 2^(b & 7), slots per unit
 * 2^(b >> 3 & 3), at most 2^10 slots, so a run stays fast) and R
 * (1 + (b >> 5 & 3)), byte 1 the zones new members draw from (b & 3; 0:
 * none). Then operations, one opcode byte (taken modulo 10) and its
 * arguments each:
 *
 *   0, 1  add:         name byte, zone byte, weight byte
 *   2     remove:      id byte
 *   3     set_weight:  id byte, weight byte
 *   4     drain:       id byte, mode byte (1 + (b & 1))
 *   5     undrain:     id byte
 *   6, 7  balance:     config byte, loads byte, then
 *                      loads byte below 0xC0: a seed byte; the loads are
 *                      balancing.h's kind (b % BAL_LOADS_KINDS) drawn
 *                      from that seed;
 *                      from 0xC0 up: 8 load bytes; slot s gets byte
 *                      (s + s / 8) % 8 shifted left by (b & 0x3F) % 57
 *                      (a sum past UINT64_MAX must be DCH_EFULL and
 *                      change nothing)
 *   8     balance_clear
 *   9     clone, continue with the clone
 *
 * The config byte: bit 4 set, NULL (the defaults); else max_moves b & 3
 * and count_slack (b >> 2 & 3), 3 meaning no limit. A name byte b names
 * "n<b % 32>" (names collide and come back under reused ids); a zone byte
 * is taken modulo the zone count; an id byte modulo id_limit + 2; a weight
 * byte below 0xF0 is b % 8 (0 included), from 0xF0 up one of sixteen
 * weights up to 10^6.
 *
 * After every balancing call: the report and promises 1, 2, 3 and 5
 * (bal_check_call), promise 4 (the same call again changes nothing, when
 * no member was left for want of max_moves), promise 6 (epoch, fingerprint
 * and diffs of the change; clone, save and load keep everything). After
 * every other call: the layer against a twin that got every call but the
 * balancing ones (the table below is its table), and the keep/drop rule.
 * A violation prints the step and what broke, and aborts. DCH_FUZZ_TRACE
 * set in the environment prints every operation.
 */
#define FUZZ_TARGET "fuzz_balance"

#include "balancing.h"
#include "dch/dch.h"
#include "drains.h"
#include "fuzz_input.h"
#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The loads a balancing call's bytes ask for; how many bytes they took. */
static size_t loads_of(uint64_t *L, uint32_t P, const uint8_t *p, size_t left)
{
    if (left < 2)
        return 0;
    if (p[0] < 0xC0) {
        uint64_t rng = 0x9E3779B97F4A7C15u ^ p[1];
        bal_loads(L, P, p[0] % BAL_LOADS_KINDS, &rng);
        return 2;
    }
    if (left < 9)
        return 0;
    const unsigned shift = (p[0] & 0x3Fu) % 57u;
    for (uint32_t s = 0; s < P; s++)
        L[s] = (uint64_t)p[1 + (s + s / 8) % 8] << shift;
    return 9;
}

/* Loads summing past UINT64_MAX: DCH_EFULL, the map and report as they
 * were. */
static const char *too_full(dch_map *m, const uint64_t *L, const dch_balance_config *cfg)
{
    size_t len0, len1;
    uint8_t *b0 = map_bytes(m, &len0);
    const uint64_t epoch = dch_map_epoch(m);
    dch_balance_report rep, poison;
    bal_report_prepare(&rep, NULL, 0);
    poison = rep;
    const char *bad = NULL;
    if (dch_map_balance_load(m, L, dch_map_slot_count(m), cfg, &rep) != DCH_EFULL)
        bad = "loads summing past UINT64_MAX are not DCH_EFULL";
    else if (memcmp(&rep, &poison, sizeof rep) != 0)
        bad = "a refused call wrote the report";
    uint8_t *b1 = map_bytes(m, &len1);
    if (bad == NULL && (len0 != len1 || memcmp(b0, b1, len0) != 0 || dch_map_epoch(m) != epoch))
        bad = "a refused call changed the map";
    free(b0);
    free(b1);
    return bad;
}

static const char *do_balance(dch_map *m, const dch_map *twin, const uint64_t *L,
                              const dch_balance_config *cfg)
{
    bal_u128 sum = 0;
    for (uint32_t s = 0; s < dch_map_slot_count(m); s++)
        sum += L[s];
    if (sum > UINT64_MAX)
        return too_full(m, L, cfg);
    const uint32_t cap = dch_map_id_limit(m) + 1;
    dch_balance_left *left = xmalloc(cap * sizeof *left);
    dch_balance_report rep;
    bal_report_prepare(&rep, left, cap);
    dch_map *before = map_clone_of(m);
    bal_state b, a;
    bal_take(&b, m, L);
    const char *bad = NULL;
    const int rc = dch_map_balance_load(m, L, dch_map_slot_count(m), cfg, &rep);
    if (rc != DCH_OK)
        bad = "dch_map_balance_load failed";
    bal_take(&a, m, L);
    if (bad == NULL)
        bad = bal_check_call(&b, &a, m, cfg, &rep);
    if (bad == NULL)
        bad = bal_check_change(before, m);
    if (bad == NULL)
        bad = bal_check_fixed_point(m, L, cfg, &rep);
    if (bad == NULL)
        bad = bal_check_kept(m, twin);
    bal_free(&b);
    bal_free(&a);
    dch_map_free(before);
    free(left);
    return bad;
}

/* A call on m and the twin b alike: op 0 add, 2 remove, 3 set_weight,
 * 4 drain, 5 undrain. */
static const char *both(dch_map *m, dch_map *b, int op, const char *name, const char *zone,
                        uint32_t x, uint32_t v)
{
    int r1, r2;
    switch (op) {
    case 0:
        r1 = dch_map_add_node_in_zone(m, name, zone, v, NULL);
        r2 = dch_map_add_node_in_zone(b, name, zone, v, NULL);
        break;
    case 2:
        r1 = dch_map_remove_node(m, x);
        r2 = dch_map_remove_node(b, x);
        break;
    case 3:
        r1 = dch_map_set_weight(m, x, v);
        r2 = dch_map_set_weight(b, x, v);
        break;
    case 4:
        r1 = dch_map_drain(m, x, v);
        r2 = dch_map_drain(b, x, v);
        break;
    default:
        r1 = dch_map_undrain(m, x);
        r2 = dch_map_undrain(b, x);
        break;
    }
    return r1 != r2 ? "a call answers otherwise with load moves" : NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    const bool trace = getenv("DCH_FUZZ_TRACE") != NULL;
    const dch_map_config cfg = fuzz_map_config(data[0]);
    const uint32_t zones = data[1] & 3;
    dch_map *m, *b;
    if (dch_map_new(&m, &cfg) != DCH_OK || dch_map_new(&b, &cfg) != DCH_OK)
        abort();
    const uint32_t P = dch_map_slot_count(m);
    uint64_t *L = xcalloc(P, sizeof *L);
    uint32_t *below = NULL;
    const char *bad = bal_check_layer(m, b, &below);
    if (bad != NULL)
        fail(-1, "new", bad);
    size_t i = 2;
    for (int step = 0; i < size; step++) {
        const uint8_t op = (uint8_t)(data[i++] % 10);
        const char *name_op = "?";
        bad = NULL;
        uint32_t *eff0 = drain_table(m, false);
        bool keep_drop = true;
        if (op <= 1 && i + 3 <= size) {
            fuzz_add a;
            fuzz_add_args(&a, data + i, 32, zones);
            i += 3;
            name_op = "add";
            bad = both(m, b, 0, a.name, a.zone, 0, a.weight);
            if (trace)
                fprintf(stderr, "%d: add %s zone %s weight %u\n", step, a.name,
                        a.zone ? a.zone : "-", a.weight);
        } else if ((op == 2 || op == 5) && i + 1 <= size) {
            const uint32_t x = data[i++] % (dch_map_id_limit(m) + 2);
            name_op = op == 2 ? "remove" : "undrain";
            bad = both(m, b, op, NULL, NULL, x, 0);
            if (trace)
                fprintf(stderr, "%d: %s %u\n", step, name_op, x);
        } else if ((op == 3 || op == 4) && i + 2 <= size) {
            const uint32_t x = data[i] % (dch_map_id_limit(m) + 2);
            const uint32_t v = op == 3 ? fuzz_weight(data[i + 1]) : 1u + (data[i + 1] & 1u);
            i += 2;
            name_op = op == 3 ? "set_weight" : "drain";
            bad = both(m, b, op, NULL, NULL, x, v);
            if (trace)
                fprintf(stderr, "%d: %s %u %u\n", step, name_op, x, v);
        } else if ((op == 6 || op == 7) && i + 1 <= size) {
            const uint8_t c = data[i++];
            const size_t used = loads_of(L, P, data + i, size - i);
            if (used == 0) {
                free(eff0);
                break;
            }
            i += used;
            dch_balance_config bc;
            dch_balance_config_init(&bc, DCH_BALANCE_CONFIG_VERSION);
            bc.max_moves = c & 3u;
            bc.count_slack = (c >> 2 & 3u) == 3 ? UINT32_MAX : (c >> 2 & 3u);
            name_op = "balance";
            if (trace)
                fprintf(stderr, "%d: balance max_moves %u count_slack %u (%s)\n", step,
                        bc.max_moves, bc.count_slack, c & 0x10 ? "NULL" : "cfg");
            bad = do_balance(m, b, L, c & 0x10 ? NULL : &bc);
            keep_drop = false;
        } else if (op == 8) {
            name_op = "balance_clear";
            dch_map *before = map_clone_of(m);
            if (dch_map_balance_clear(m) != DCH_OK)
                bad = "dch_map_balance_clear failed";
            else
                bad = bal_check_change(before, m);
            uint32_t *eff = drain_table(m, false);
            if (bad == NULL && !drain_same_table(eff, below, P))
                bad = "dch_map_balance_clear does not give the table below";
            free(eff);
            dch_map_free(before);
            keep_drop = false;
            if (trace)
                fprintf(stderr, "%d: balance_clear\n", step);
        } else if (op == 9) {
            fuzz_clone(&m);
            name_op = "clone";
            bad = bal_check_kept(m, b);
            if (trace)
                fprintf(stderr, "%d: clone\n", step);
        } else {
            free(eff0);
            break; /* arguments cut short */
        }
        if (bad != NULL)
            fail(step, name_op, bad);
        uint32_t *below0 = below;
        below = NULL;
        bad = bal_check_layer(m, b, &below);
        if (bad == NULL && keep_drop)
            bad = bal_check_keep_drop(eff0, below0, below, m);
        free(below0);
        free(eff0);
        if (bad != NULL)
            fail(step, name_op, bad);
    }
    free(below);
    free(L);
    dch_map_free(m);
    dch_map_free(b);
    return 0;
}
