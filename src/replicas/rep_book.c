/* SPDX-License-Identifier: MIT */
/*
 * Replica bookkeeping (rep_book.h): zones, the visiting order, trades and
 * their record, the copies a member keeps, heaps by deviation.
 */
#include "rep_book.h"

int dch__rep_zones_check(const dch__rep_call *e, const uint16_t *b, uint32_t n, uint32_t k,
                         uint32_t id)
{
    uint32_t keys[DCH_MAP_MAX_REPLICAS + 1], nk = 0, distinct = 0;
    const uint32_t count = k == n ? n + 1 : n;
    for (uint32_t i = 0; i < count; i++) {
        const uint32_t key = e->rm->zone[i == k ? id : b[i]];
        int seen = 0;
        for (uint32_t j = 0; j < nk; j++)
            seen |= keys[j] == key;
        keys[nk++] = key;
        distinct += !seen;
    }
    return distinct == (count < e->zones ? count : e->zones);
}

/*
 * The visiting order mixes the slot index by odd multiplications and
 * xor-shifts on log2(P) bits (each step is a bijection), keyed by the
 * call. Consecutive calls must not visit in rotations of one sequence: a
 * member takes its copies in the first part of the order, and shared
 * orders would make the members' slot sets correlated, which is what
 * diversity forbids.
 */
uint32_t dch__rep_visit(const dch__rep_call *e, uint32_t k)
{
    const uint32_t mask = e->v->slots - 1;
    const unsigned r = (e->bits + 1) / 2;
    uint32_t h = k;
    h = (h * UINT32_C(0x9E3779B1) + e->key) & mask;
    h ^= h >> r;
    h = (h * UINT32_C(0x85EBCA6B) + (e->key >> 16)) & mask;
    h ^= h >> r;
    h = (h * UINT32_C(0xC2B2AE35)) & mask;
    return h;
}

void dch__rep_trade(const dch__rep_call *e, uint32_t s, uint32_t k, uint32_t to)
{
    uint16_t *b = rep_block(e, s);
    const uint32_t from = b[k];
    b[k] = (uint16_t)to;
    e->v->held[from]--;
    e->v->held[to]++;
}

void dch__rep_record(const dch__rep_call *e, uint32_t s, uint32_t k, uint32_t from)
{
    dch__rep_move *rm = e->rm;
    /* Never full: maxrec is the copies that can move (map.c,
     * change_alloc): held[x] on a lowering, P - held[x] on a raise. Each
     * record is a distinct slot where x leaves (lowering) or enters
     * (raise); reroutes and relieving rewrite records in place. The test
     * only keeps a broken count from writing past the array. */
    if (rm->nrec < rm->maxrec) {
        rm->rec_at[rm->nrec] = s << 3 | k;
        rm->rec_from[rm->nrec] = from;
        rm->nrec++;
    }
}

/*
 * The fewest copies member id may keep, and what its primaries need to
 * come within 2 of its share: its primary share P*w/W rounded up, less
 * one, so that it can still be the primary of all but at most one slot of
 * its share. Copy shares are never below that where zones leave room;
 * when fewer zones than copies make a zone's members share a floor of P
 * copies, the rule alone could drain one of them. Over a zone these sum
 * to at most the zone's primary share, which one copy a slot can hold.
 */
uint32_t dch__rep_keep(const dch__rep_call *e, uint32_t id)
{
    const uint64_t w = e->v->members[id].weight, P = e->v->slots;
    if (w == 0)
        return 0;
    return (uint32_t)((P * w + (uint64_t)e->W - 1) / (uint64_t)e->W - 1);
}

void dch__rep_sift_down(const dch__rep_call *e, int max, uint32_t n, uint32_t i)
{
    uint32_t *h = e->rm->heap;
    for (;;) {
        uint32_t best = i;
        const uint32_t l = 2 * i + 1, r = l + 1;
        if (l < n && rep_first(e, max, h[l], h[best]))
            best = l;
        if (r < n && rep_first(e, max, h[r], h[best]))
            best = r;
        if (best == i)
            return;
        const uint32_t t = h[i];
        h[i] = h[best];
        h[best] = t;
        i = best;
    }
}

uint32_t dch__rep_build_heap(const dch__rep_call *e, int max)
{
    uint32_t n = 0;
    for (uint32_t id = 0; id < e->v->id_limit; id++)
        if (id != e->x && rep_positive(e, id) && !e->rm->stuck[id])
            e->rm->heap[n++] = id;
    for (uint32_t i = n / 2; i-- > 0;)
        dch__rep_sift_down(e, max, n, i);
    return n;
}
