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
 * inputs pay for it), and whether drains take part (bit 4). Then
 * operations, one opcode byte (taken modulo 6, or 8 with drains) and its
 * arguments each:
 *
 *   0, 1  add:         name byte, zone byte, weight byte
 *   2     remove:      id byte
 *   3, 4  set_weight:  id byte, weight byte
 *   5     clone, continue with the clone
 *   6     drain:       id byte, mode byte (0 .. 3: 0 and 3 are no mode,
 *                      DCH_EINVAL)
 *   7     undrain:     id byte
 *
 * A name byte b names "n<b>" (names collide: EEXIST changes nothing). A
 * zone byte is taken modulo the zone count. An id byte is taken modulo
 * id_limit + 2 (ENOENT for free ids). A weight byte below 0xF0 is b % 8
 * (weight 0 drains), from 0xF0 up one of sixteen weights up to 10^6, so
 * unequal histories reach ratios of 10^6.
 *
 * After every call: promises 1-4 (rep_check_state, 4 where its condition
 * holds), 5 and 6 for the call (rep_check_move), 7 when the input asks,
 * and failed calls change nothing. With drains the replica promises are
 * checked on a twin that gets every call but the drains (they hold on the
 * base), and the drain promises (tests/support/drains.h) on the map after
 * every call: base, effective table, readers, list, fingerprint, and an
 * exact return when the last drain is undone with no call since. A violation prints the step and what
 * broke, and aborts. DCH_FUZZ_TRACE set in the environment prints every
 * operation.
 */
#define FUZZ_TARGET "fuzz_replicas"

#include "dch/dch.h"
#include "drains.h"
#include "fuzz_input.h"
#include "replicas.h"
#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool same_table(const rep_table *a, const rep_table *b)
{
    return a->slots == b->slots && a->replicas == b->replicas &&
           memcmp(a->ids, b->ids, (size_t)a->slots * a->replicas * sizeof *a->ids) == 0;
}

/* With drains: the twin that never drains, the list, and what undoing the
 * last drain must give back. */
typedef struct drains {
    dch_map *b; /* NULL when the input has no drains */
    drain_list l;
    uint32_t *before_last; /* the effective table before the last drain */
    bool fresh; /* no call since the last drain, and it was a new one */
} drains;

/* A drain or undrain (op 6 or 7) of id x in mode `mode` on m. */
static const char *drain_op(dch_map *m, drains *d, int op, uint32_t x, uint32_t mode)
{
    const bool member = dch_map_node_name(m, x) != NULL;
    const uint64_t epoch = dch_map_epoch(m);
    const uint32_t at = drain_list_find(&d->l, x), P = dch_map_slot_count(m);
    uint32_t *before = drain_table(m, false);
    const char *bad = NULL;
    if (op == 6) {
        const bool valid = mode == DCH_DRAIN_PRIMARY || mode == DCH_DRAIN_FULL;
        const int rc = dch_map_drain(m, x, mode);
        const bool same = at < d->l.n && d->l.modes[at] == mode;
        if (rc != (!valid ? DCH_EINVAL : member ? DCH_OK : DCH_ENOENT))
            bad = "drain returned another code";
        else if (dch_map_epoch(m) != epoch + (rc == DCH_OK && !same))
            bad = "drain: the epoch";
        if (bad == NULL && rc == DCH_OK && !same) {
            /* A change of mode is no fresh drain: x was in the list. */
            d->fresh = at == d->l.n;
            drain_list_drain(&d->l, x, mode);
            free(d->before_last);
            d->before_last = before;
            before = NULL;
        }
    } else {
        const bool last = d->fresh && d->l.n > 0 && at == d->l.n - 1;
        const int rc = dch_map_undrain(m, x);
        if (rc != (member ? DCH_OK : DCH_ENOENT))
            bad = "undrain returned another code";
        else if (dch_map_epoch(m) != epoch + (rc == DCH_OK && at < d->l.n))
            bad = "undrain: the epoch";
        if (bad == NULL && rc == DCH_OK && at < d->l.n) {
            drain_list_drop(&d->l, x);
            uint32_t *after = drain_table(m, false);
            if (last && !drain_same_table(after, d->before_last, P))
                bad = "undrain of the last drain is not an exact return";
            free(after);
            d->fresh = false;
        }
    }
    free(before);
    return bad;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    const bool trace = getenv("DCH_FUZZ_TRACE") != NULL;
    dch_map_config cfg = fuzz_map_config(data[0]);
    cfg.replicas += data[1] & 8u ? 4u : 0u;
    const uint32_t zones = data[1] & 7;
    const bool diversity = (data[1] & 0x80) != 0;
    drains d;
    memset(&d, 0, sizeof d);
    dch_map *m;
    if (dch_map_new(&m, &cfg) != DCH_OK ||
        ((data[1] & 0x10) != 0 && dch_map_new(&d.b, &cfg) != DCH_OK))
        abort();
    const uint32_t nops = d.b ? 8 : 6;
    rep_table t0 = {0}, t1 = {0};
    rep_history h = {0};
    size_t i = 2;
    for (int step = 0; i < size; step++) {
        const uint8_t op = (uint8_t)(data[i++] % nops);
        /* The replica promises hold on the base: the twin's, with drains. */
        rep_table_take(&t0, d.b ? d.b : m);
        const uint64_t epoch = dch_map_epoch(m);
        uint32_t x = DCH_NODE_NONE, from = 0, to = 0;
        int rc = DCH_OK;
        const char *name_op = "?", *bad = NULL;
        if (op <= 1 && i + 3 <= size) {
            fuzz_add a;
            fuzz_add_args(&a, data + i, 256, zones);
            to = a.weight;
            i += 3;
            name_op = "add";
            rc = dch_map_add_node_in_zone(m, a.name, a.zone, to, &x);
            if (d.b && dch_map_add_node_in_zone(d.b, a.name, a.zone, to, NULL) != rc)
                bad = "add answers otherwise with drains";
            if (rc == DCH_OK)
                rep_history_note(&h, to, zones > 0);
            else
                x = DCH_NODE_NONE;
            if (trace)
                fprintf(stderr, "%d: add %s zone %s weight %u -> %d id %u\n", step, a.name,
                        a.zone ? a.zone : "-", to, rc, x);
        } else if (op == 2 && i + 1 <= size) {
            x = data[i++] % (dch_map_id_limit(m) + 2);
            from = dch_map_node_weight(m, x);
            name_op = "remove";
            rc = dch_map_remove_node(m, x);
            if (d.b && dch_map_remove_node(d.b, x) != rc)
                bad = "remove answers otherwise with drains";
            if (rc == DCH_OK)
                drain_list_drop(&d.l, x);
            if (trace)
                fprintf(stderr, "%d: remove %u -> %d\n", step, x, rc);
        } else if ((op == 3 || op == 4) && i + 2 <= size) {
            x = data[i] % (dch_map_id_limit(m) + 2);
            to = fuzz_weight(data[i + 1]);
            i += 2;
            from = dch_map_node_weight(m, x);
            name_op = "set_weight";
            rc = dch_map_set_weight(m, x, to);
            if (d.b && dch_map_set_weight(d.b, x, to) != rc)
                bad = "set_weight answers otherwise with drains";
            if (rc == DCH_OK)
                rep_history_note(&h, to, false);
            if (rc == DCH_OK && to != from)
                drain_list_drop(&d.l, x);
            if (trace)
                fprintf(stderr, "%d: set_weight %u %u -> %d (copies %u, slots %u)\n", step, x, to,
                        rc, dch_map_node_copies(m, x), dch_map_node_slots(m, x));
        } else if (op == 5) {
            fuzz_clone(&m);
            name_op = "clone";
            if (trace)
                fprintf(stderr, "%d: clone\n", step);
        } else if (op >= 6 && i + (op == 6 ? 2u : 1u) <= size) {
            x = data[i++] % (dch_map_id_limit(m) + 2);
            const uint32_t mode = op == 6 ? data[i++] % 4u : 0;
            name_op = op == 6 ? "drain" : "undrain";
            if (trace)
                fprintf(stderr, "%d: %s %u mode %u\n", step, name_op, x, mode);
            bad = drain_op(m, &d, op, x, mode);
            x = DCH_NODE_NONE; /* the base does not change */
        } else {
            break; /* arguments cut short */
        }
        if (bad != NULL)
            fail(step, name_op, bad);
        if (op <= 4 && rc == DCH_OK)
            d.fresh = false;
        const dch_map *base = d.b ? d.b : m; /* m may be a clone now */
        rep_table_take(&t1, base);
        if (rc != DCH_OK) {
            if (!same_table(&t0, &t1) || dch_map_epoch(m) != epoch)
                fail(step, name_op, "a failed call changed the map");
            continue;
        }
        rep_history_after(&h, base);
        bad = rep_check_state(base, &t1, &h, NULL);
        if (bad == NULL && x != DCH_NODE_NONE && from != to)
            bad = rep_check_move(base, &t0, &t1, x, from, to, &h, NULL);
        if (bad == NULL && op == 5 && !same_table(&t0, &t1))
            bad = "a clone differs from its original";
        if (bad == NULL && diversity)
            bad = rep_check_diversity(base, &t1, &h, NULL);
        if (bad == NULL && d.b != NULL)
            bad = drain_check(m, d.b, &d.l);
        if (bad != NULL)
            fail(step, name_op, bad);
    }
    rep_table_free(&t0);
    rep_table_free(&t1);
    dch_map_free(m);
    dch_map_free(d.b);
    free(d.before_last);
    return 0;
}
