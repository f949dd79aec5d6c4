/* SPDX-License-Identifier: MIT */
/*
 * The ring's points (ring_points.h).
 *
 * Layout. Every point, duplicates included, sits in one array sorted by
 * (position, name bytes, j), so the first entry at or after a hash is always
 * the owner: ties are settled when points are inserted, never at lookup. An
 * entry is one uint64, the low 48 bits of its position above a 16-bit member
 * id (ids stay below DCH_RING_MAX_NODES = 0xffff, which leaves 0xffff free to
 * mark entries being dropped). The top 16 bits of a position are not stored:
 * index[b] is the first entry whose position is at least b << 48, for b in
 * 0 .. 2^16 (index[2^16] is the point count), so bucket b is the entries
 * index[b] .. index[b + 1] - 1 and an entry's position is recovered from the
 * bucket it sits in. Memory: 8 bytes a point, a 256 KiB index while there are
 * points, and O(N) for the members.
 *
 * Lookup. The hash's top 16 bits pick a bucket (about points / 65,536
 * entries), and a binary search on the low 48 bits finds the first entry at
 * or after the hash. Stopping at the bucket's end is still right: that entry
 * is the first of the next non-empty bucket, the hash's successor; stopping
 * at the array's end wraps to entry 0.
 *
 * Changes. New points are computed, sorted and merged into the array from its
 * end, in place after one realloc, and the index is shifted by the number of
 * new points below each bucket. Dropped points are marked and the array is
 * compacted in place with the index rebuilt in the same pass, so removal and
 * lowering a weight never allocate. Whatever can fail is allocated before the
 * ring is touched.
 */
#include "ring_points.h"

#include "dch/error.h"
#include "dch/siphash.h"

#include "alloc.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define BUCKET_BITS DCH__RING_BUCKET_BITS
#define BUCKETS DCH__RING_BUCKETS
#define LOW_BITS DCH__RING_LOW_BITS
#define ID_MASK DCH__RING_ID_MASK
/* The id field of an entry marked for removal: no member has this id. */
#define DROPPED 0xffffu
/* Longest point name: a name, '#', and up to 10 decimal digits of j. */
#define POINT_NAME_MAX (DCH_NAME_MAX + 1u + 10u)

static int cmp_u64(const void *pa, const void *pb)
{
    uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
    return (a > b) - (a < b);
}

/*
 * The position of point j: SipHash-2-4 of name, '#', j in decimal. `buf`
 * holds the name and '#' in its first len + 1 bytes and has room for
 * POINT_NAME_MAX.
 */
static uint64_t point_position(const uint8_t key[16], uint8_t *buf, size_t len,
                               uint32_t j)
{
    uint8_t digits[10];
    size_t nd = 0;
    do {
        digits[nd++] = (uint8_t)('0' + j % 10u);
        j /= 10u;
    } while (j != 0);
    for (size_t d = 0; d < nd; d++)
        buf[len + 1 + d] = digits[nd - 1 - d];
    return dch_siphash24(key, buf, len + 1 + nd);
}

/* Positions of points j0 .. j0 + k - 1 of `name`, sorted ascending. */
static void place_points(const uint8_t key[16], const char *name, size_t len,
                         uint32_t j0, uint32_t k, uint64_t *pos)
{
    uint8_t buf[POINT_NAME_MAX];
    memcpy(buf, name, len);
    buf[len] = '#';
    for (uint32_t t = 0; t < k; t++)
        pos[t] = point_position(key, buf, len, j0 + t);
    qsort(pos, k, sizeof *pos, cmp_u64);
}

int dch__points_prepare(const dch_allocator *a, dch__ring_points *r,
                        const uint8_t key[16], const char *name, size_t len,
                        uint32_t j0, uint32_t k, uint64_t **pos_out)
{
    uint64_t *pos = dch__alloc_array(a, k, sizeof *pos);
    if (pos == NULL)
        return DCH_ENOMEM;
    bool new_index = false;
    if (r->index == NULL) {
        r->index = dch__alloc_array(a, BUCKETS + 1u, sizeof *r->index);
        if (r->index == NULL) {
            dch__free(a, pos);
            return DCH_ENOMEM;
        }
        memset(r->index, 0, (BUCKETS + 1u) * sizeof *r->index);
        new_index = true;
    }
    uint32_t need = r->npoints + k;
    if (need > r->cap) {
        /* Last, so that nothing after it can fail: a realloc that succeeds
         * only adds room and leaves the entries as they were. */
        uint64_t *grown = dch__realloc(a, r->points, need * sizeof *grown);
        if (grown == NULL) {
            if (new_index) {
                dch__free(a, r->index);
                r->index = NULL;
            }
            dch__free(a, pos);
            return DCH_ENOMEM;
        }
        r->points = grown;
        r->cap = need;
    }
    place_points(key, name, len, j0, k, pos);
    *pos_out = pos;
    return DCH_OK;
}

/*
 * Merging from the end moves
 * every old entry at most once and needs no second buffer. At one position a
 * new point goes after exactly the points of bytewise smaller names; two
 * points of one member at one position are the same entry, so their order
 * (by j) needs no care.
 */
void dch__points_merge(dch__ring_points *r, const dch__members *mt,
                       const uint64_t *pos, uint32_t k, uint32_t id,
                       const char *name)
{
    uint64_t *p = r->points;
    uint32_t *index = r->index;
    uint32_t i = r->npoints, t = k, w = r->npoints + k;
    uint32_t b = BUCKETS - 1u;
    while (t > 0) {
        uint64_t np = pos[t - 1];
        bool take_new = true;
        if (i > 0) {
            /* index[0] == 0 <= i - 1, so this stops. */
            while (index[b] > i - 1)
                b--;
            uint64_t e = p[i - 1];
            uint64_t op = (uint64_t)b << LOW_BITS | e >> BUCKET_BITS;
            if (np != op) {
                take_new = np > op;
            } else {
                const uint32_t other = (uint32_t)(e & ID_MASK);
                take_new = strcmp(name, dch__members_name(mt, other)) > 0;
            }
        }
        if (take_new)
            p[--w] = pos[--t] << BUCKET_BITS | id;
        else
            p[--w] = p[--i];
    }
    uint32_t below = 0;
    for (uint32_t c = 0; c <= BUCKETS; c++) {
        while (below < k && (pos[below] >> LOW_BITS) < c)
            below++;
        index[c] += below;
    }
    r->npoints += k;
}

/* Mark one entry of member `id` at `pos`; the caller knows it is there. */
static void mark_point(dch__ring_points *r, uint64_t pos, uint32_t id)
{
    const uint64_t *p = r->points;
    uint32_t b = (uint32_t)(pos >> LOW_BITS);
    uint32_t lo = r->index[b], hi = r->index[b + 1];
    uint64_t key = pos << BUCKET_BITS;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (p[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (; lo < r->index[b + 1] && (p[lo] >> BUCKET_BITS) == (key >> BUCKET_BITS); lo++) {
        if ((p[lo] & ID_MASK) == id) {
            r->points[lo] = key | DROPPED;
            return;
        }
    }
}

/*
 * Remove every entry whose id field is `victim`, rebuilding the index in the
 * same pass, then give back the room: an empty ring holds no array or index,
 * and a failed shrink only keeps spare room.
 */
static void compact(const dch_allocator *a, dch__ring_points *r, uint32_t victim)
{
    uint64_t *p = r->points;
    uint32_t *index = r->index;
    uint32_t w = 0, start = 0;
    for (uint32_t b = 0; b < BUCKETS; b++) {
        uint32_t end = index[b + 1];
        index[b] = w;
        for (uint32_t i = start; i < end; i++)
            if ((p[i] & ID_MASK) != victim)
                p[w++] = p[i];
        start = end;
    }
    index[BUCKETS] = w;
    r->npoints = w;
    if (w == 0) {
        dch__free(a, r->points);
        dch__free(a, r->index);
        r->points = NULL;
        r->index = NULL;
        r->cap = 0;
    } else if (w < r->cap) {
        uint64_t *shrunk = dch__realloc(a, r->points, w * sizeof *shrunk);
        if (shrunk != NULL) {
            r->points = shrunk;
            r->cap = w;
        }
    }
}

/* Dropping all of a member's points needs no positions: its id marks them. */
void dch__points_drop(const dch_allocator *a, dch__ring_points *p,
                      const uint8_t key[16], uint32_t id, const char *name,
                      size_t len, uint32_t j0, uint32_t j1)
{
    if (j0 == j1)
        return;
    if (j0 > 0) {
        uint8_t buf[POINT_NAME_MAX];
        memcpy(buf, name, len);
        buf[len] = '#';
        for (uint32_t j = j0; j < j1; j++)
            mark_point(p, point_position(key, buf, len, j), id);
        compact(a, p, DROPPED);
    } else {
        compact(a, p, id);
    }
}


int dch__points_clone(const dch_allocator *a, dch__ring_points *dst,
                      const dch__ring_points *src)
{
    memset(dst, 0, sizeof *dst);
    if (src->npoints == 0)
        return DCH_OK;
    dst->points = dch__alloc_array(a, src->npoints, sizeof *dst->points);
    dst->index = dch__alloc_array(a, BUCKETS + 1u, sizeof *dst->index);
    if (dst->points == NULL || dst->index == NULL) {
        dch__points_free(a, dst);
        return DCH_ENOMEM;
    }
    memcpy(dst->points, src->points, src->npoints * sizeof *dst->points);
    memcpy(dst->index, src->index, (BUCKETS + 1u) * sizeof *dst->index);
    dst->npoints = dst->cap = src->npoints;
    return DCH_OK;
}

void dch__points_free(const dch_allocator *a, dch__ring_points *p)
{
    dch__free(a, p->points);
    dch__free(a, p->index);
    memset(p, 0, sizeof *p);
}

size_t dch__points_memory(const dch__ring_points *p)
{
    size_t bytes = (size_t)p->cap * sizeof *p->points;
    if (p->index != NULL)
        bytes += (BUCKETS + 1u) * sizeof *p->index;
    return bytes;
}

void dch__points_replace(const dch_allocator *a, dch__ring_points *p,
                         dch__ring_points *built)
{
    dch__points_free(a, p);
    *p = *built;
}

uint32_t dch__points_first(const dch__ring_points *r, uint64_t hash)
{
    const uint64_t *p = r->points;
    uint32_t b = (uint32_t)(hash >> LOW_BITS);
    uint32_t lo = r->index[b];
    uint32_t len = r->index[b + 1] - lo;
    /* Id bits zero: the first entry >= key is the first whose low 48 bits
     * are >= the hash's, the winner of any tie. */
    uint64_t key = hash << BUCKET_BITS;
    while (len > 0) {
        uint32_t half = len / 2;
        if (p[lo + half] < key) {
            lo += half + 1;
            len -= half + 1;
        } else {
            len = half;
        }
    }
    return lo == r->npoints ? 0 : lo;
}

uint32_t dch__points_lookup(const dch__ring_points *r, uint64_t hash)
{
    if (r->npoints == 0)
        return DCH_NODE_NONE;
    return (uint32_t)(r->points[dch__points_first(r, hash)] & ID_MASK);
}

void dch__points_cursor_init(dch__points_cursor *c, const dch__ring_points *p)
{
    memset(c, 0, sizeof *c);
    c->p = p;
}

/* Entry i owns (position of entry i - 1, its own position]; entry 0 owns
 * [0, its position] and the arc past the last point. A later entry at an
 * earlier entry's position owns nothing and is skipped. */
bool dch__points_cursor_next(dch__points_cursor *c, dch_range *arc)
{
    const dch__ring_points *r = c->p;
    if (c->done)
        return false;
    if (r->npoints == 0) {
        *arc = (dch_range){0, UINT64_MAX, DCH_NODE_NONE};
        c->done = true;
        return true;
    }
    while (c->i < r->npoints) {
        const uint32_t i = c->i++;
        /* index[BUCKETS] == npoints > i, so this stops inside the index. */
        while (r->index[c->b + 1] <= i)
            c->b++;
        const uint64_t pos = (uint64_t)c->b << LOW_BITS | r->points[i] >> BUCKET_BITS;
        if (c->started && pos == c->last)
            continue;
        *arc = (dch_range){c->lo, pos, (uint32_t)(r->points[i] & ID_MASK)};
        c->started = true;
        c->last = pos;
        c->lo = pos + 1;
        return true;
    }
    c->done = true;
    if (c->last == UINT64_MAX)
        return false;
    *arc = (dch_range){c->lo, UINT64_MAX, (uint32_t)(r->points[0] & ID_MASK)};
    return true;
}

/* Adjacent arcs of one owner are merged before fn sees them. */
int dch__points_foreach_range(const dch__ring_points *r,
                              int (*fn)(const dch_range *rg, void *ctx),
                              void *ctx)
{
    dch__points_cursor c;
    dch__points_cursor_init(&c, r);
    dch_range cur, arc;
    (void)dch__points_cursor_next(&c, &cur); /* there is always one arc */
    while (dch__points_cursor_next(&c, &arc)) {
        if (arc.owner == cur.owner) {
            cur.hi = arc.hi;
            continue;
        }
        int rc = fn(&cur, ctx);
        if (rc != 0)
            return rc;
        cur = arc;
    }
    return fn(&cur, ctx);
}
