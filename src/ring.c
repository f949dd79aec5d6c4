/*
 * The classic consistent-hash ring (Karger et al., "Consistent hashing and
 * random trees", 1997) with virtual nodes, placed as ring.h specifies.
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
 *
 * Against ketama, the usual recipe: positions are 64-bit SipHash-2-4 under a
 * shared key rather than 32-bit MD5 fragments, points are named "name#j", and
 * two points at one position are ordered by name and j rather than by
 * whatever order a sort leaves them in, so every client agrees.
 *
 * Ketama placement (DCH_RING_PLACE_KETAMA) keeps this layout and lookup but
 * not the changes: a member's point count depends on every member, so each
 * change rebuilds the whole array and index aside (ketama_prepare, from the
 * rules in ring_ketama.c) and swaps them in (ketama_commit). Entries at one
 * position are then ordered by the members' add order, as libmemcached's are.
 */
#include "dch/ring.h"

#include "alloc.h"
#include "dch/error.h"
#include "dch/siphash.h"
#include "ring_ketama.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define BUCKET_BITS 16u
#define BUCKETS (1u << BUCKET_BITS)
#define LOW_BITS 48u
#define ID_MASK UINT64_C(0xffff)
/* The id field of an entry marked for removal: no member has this id. */
#define DROPPED 0xffffu
/* Longest point name: a name, '#', and up to 10 decimal digits of j. */
#define POINT_NAME_MAX (DCH_NAME_MAX + 1u + 10u)

typedef struct member {
    char *name; /* NULL when the id is free */
    uint32_t len;
    uint32_t weight;
    uint64_t seq; /* add order: ketama ties go to the smaller */
} member;

struct dch_ring {
    dch_ring_config cfg;
    /* Sorted entries (see the file comment); room for `cap`. */
    uint64_t *points;
    uint32_t npoints;
    uint32_t cap;
    /* BUCKETS + 1 offsets into points; NULL exactly when npoints == 0. */
    uint32_t *index;
    /* Indexed by id, member_cap slots; ids at or past id_limit are free. */
    member *members;
    /* The ids of the `count` members, ordered by name bytes. */
    uint32_t *by_name;
    uint32_t member_cap;
    uint32_t count;
    uint32_t id_limit;
    uint64_t total_weight;
    size_t name_bytes;
    uint64_t next_seq; /* the seq the next member added gets */
};

static int name_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
    int c = memcmp(a, b, alen < blen ? alen : blen);
    if (c != 0)
        return c;
    return (alen > blen) - (alen < blen);
}

/*
 * Binary search of by_name: returns the slot where `name` is or would be
 * inserted, and whether it is there.
 */
static uint32_t name_slot(const dch_ring *r, const char *name, size_t len,
                          bool *found)
{
    uint32_t lo = 0, hi = r->count;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        const member *m = &r->members[r->by_name[mid]];
        int c = name_cmp(m->name, m->len, name, len);
        if (c == 0) {
            *found = true;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = false;
    return lo;
}

static const member *member_of(const dch_ring *r, uint32_t id)
{
    if (r == NULL || id >= r->id_limit || r->members[id].name == NULL)
        return NULL;
    return &r->members[id];
}

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
static uint64_t point_position(const dch_ring *r, uint8_t *buf, size_t len,
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
    return dch_siphash24(r->cfg.hash_key, buf, len + 1 + nd);
}

/* Positions of points j0 .. j0 + k - 1 of `name`, sorted ascending. */
static void place_points(const dch_ring *r, const char *name, size_t len,
                         uint32_t j0, uint32_t k, uint64_t *pos)
{
    uint8_t buf[POINT_NAME_MAX];
    memcpy(buf, name, len);
    buf[len] = '#';
    for (uint32_t t = 0; t < k; t++)
        pos[t] = point_position(r, buf, len, j0 + t);
    qsort(pos, k, sizeof *pos, cmp_u64);
}

/*
 * Everything an insertion of k points needs, allocated without touching what
 * the ring holds: on success the sorted positions are in *pos_out (the caller
 * frees them), the index exists and points has room for npoints + k. On
 * failure the ring is as it was.
 */
static int prepare_points(dch_ring *r, const char *name, size_t len,
                          uint32_t j0, uint32_t k, uint64_t **pos_out)
{
    const dch_allocator *a = r->cfg.allocator;
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
    place_points(r, name, len, j0, k, pos);
    *pos_out = pos;
    return DCH_OK;
}

/*
 * Merge k sorted positions of member `id` (named name/len) into the array,
 * which has room for them, and shift the index. Merging from the end moves
 * every old entry at most once and needs no second buffer. At one position a
 * new point goes after exactly the points of bytewise smaller names; two
 * points of one member at one position are the same entry, so their order
 * (by j) needs no care.
 */
static void merge_points(dch_ring *r, const uint64_t *pos, uint32_t k,
                         uint32_t id, const char *name, size_t len)
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
                const member *om = &r->members[e & ID_MASK];
                take_new = name_cmp(name, len, om->name, om->len) > 0;
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
static void mark_point(dch_ring *r, uint64_t pos, uint32_t id)
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
static void compact(dch_ring *r, uint32_t victim)
{
    const dch_allocator *a = r->cfg.allocator;
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

/* Drop points j0 .. j1 - 1 of member `id`. Never allocates. */
static void drop_points(dch_ring *r, uint32_t id, uint32_t j0, uint32_t j1)
{
    if (j0 == j1)
        return;
    if (j0 > 0) {
        const member *m = &r->members[id];
        uint8_t buf[POINT_NAME_MAX];
        memcpy(buf, m->name, m->len);
        buf[m->len] = '#';
        for (uint32_t j = j0; j < j1; j++)
            mark_point(r, point_position(r, buf, m->len, j), id);
        compact(r, DROPPED);
    } else {
        compact(r, id);
    }
}

void dch_ring_config_default(dch_ring_config *cfg)
{
    if (cfg == NULL)
        return;
    memset(cfg, 0, sizeof *cfg);
    cfg->points_per_weight = 160;
}

int dch_ring_new(dch_ring **out, const dch_ring_config *cfg)
{
    dch_ring_config c;
    if (cfg == NULL)
        dch_ring_config_default(&c);
    else
        c = *cfg;
    if (out == NULL || c.placement > DCH_RING_PLACE_KETAMA ||
        (c.placement == DCH_RING_PLACE_SIPHASH && c.points_per_weight == 0) ||
        !dch__allocator_valid(c.allocator))
        return DCH_EINVAL;
    dch_ring *r = dch__alloc(c.allocator, sizeof *r);
    if (r == NULL)
        return DCH_ENOMEM;
    memset(r, 0, sizeof *r);
    r->cfg = c;
    *out = r;
    return DCH_OK;
}

void dch_ring_free(dch_ring *r)
{
    if (r == NULL)
        return;
    const dch_allocator *a = r->cfg.allocator;
    for (uint32_t id = 0; id < r->id_limit; id++)
        dch__free(a, r->members[id].name);
    dch__free(a, r->members);
    dch__free(a, r->by_name);
    dch__free(a, r->points);
    dch__free(a, r->index);
    dch__free(a, r);
}

int dch_ring_clone(dch_ring **out, const dch_ring *r)
{
    if (out == NULL || r == NULL)
        return DCH_EINVAL;
    const dch_allocator *a = r->cfg.allocator;
    dch_ring *c = dch__alloc(a, sizeof *c);
    if (c == NULL)
        return DCH_ENOMEM;
    memset(c, 0, sizeof *c);
    c->cfg = r->cfg;
    /* Every pointer starts NULL, so dch_ring_free undoes a partial copy;
     * id_limit is raised only as names are copied. */
    if (r->npoints > 0) {
        c->points = dch__alloc_array(a, r->npoints, sizeof *c->points);
        c->index = dch__alloc_array(a, BUCKETS + 1u, sizeof *c->index);
        if (c->points == NULL || c->index == NULL)
            goto fail;
        memcpy(c->points, r->points, r->npoints * sizeof *c->points);
        memcpy(c->index, r->index, (BUCKETS + 1u) * sizeof *c->index);
        c->npoints = c->cap = r->npoints;
    }
    if (r->member_cap > 0) {
        c->members = dch__alloc_array(a, r->member_cap, sizeof *c->members);
        c->by_name = dch__alloc_array(a, r->member_cap, sizeof *c->by_name);
        if (c->members == NULL || c->by_name == NULL)
            goto fail;
        memset(c->members, 0, r->member_cap * sizeof *c->members);
        c->member_cap = r->member_cap;
        for (uint32_t id = 0; id < r->id_limit; id++) {
            const member *m = &r->members[id];
            c->id_limit = id + 1;
            if (m->name == NULL)
                continue;
            c->members[id].name = dch__strdup(a, m->name, m->len);
            if (c->members[id].name == NULL)
                goto fail;
            c->members[id].len = m->len;
            c->members[id].weight = m->weight;
            c->members[id].seq = m->seq;
        }
        memcpy(c->by_name, r->by_name, r->count * sizeof *c->by_name);
    }
    c->count = r->count;
    c->total_weight = r->total_weight;
    c->name_bytes = r->name_bytes;
    c->next_seq = r->next_seq;
    *out = c;
    return DCH_OK;
fail:
    dch_ring_free(c);
    return DCH_ENOMEM;
}

/* Points a weight gives; at most (2^32 - 1)^2, so sums with point counts
 * cannot overflow. In ketama mode a member's points depend on all members
 * and the continuum is rebuilt whole (ketama_prepare), so this is 0. */
static uint64_t points_for(const dch_ring *r, uint32_t weight)
{
    if (r->cfg.placement == DCH_RING_PLACE_KETAMA)
        return 0;
    return (uint64_t)r->cfg.points_per_weight * weight;
}

/* A continuum built aside by ketama_prepare, for ketama_commit to install. */
typedef struct ketama_plan {
    uint64_t *points; /* NULL when there are no points */
    uint32_t npoints;
    uint32_t *index; /* BUCKETS + 1 offsets; NULL when there are no points */
} ketama_plan;

typedef struct ketama_server {
    const char *name;
    uint32_t len;
    uint32_t weight;
    uint64_t seq;
    uint32_t id;
} ketama_server;

static int cmp_seq(const void *pa, const void *pb)
{
    const ketama_server *a = pa, *b = pb;
    return (a->seq > b->seq) - (a->seq < b->seq);
}

/*
 * The continuum of the ring's members after one change -- member `id` (a new
 * member named name/len when id is not in use) at weight `weight`, 0 for a
 * removal -- built without touching the ring. libmemcached's servers are the
 * members of non-zero weight in add order; a server's position in that order
 * settles ties between points of equal value, the first added winning, as
 * libmemcached's sort by (value, server index) does. Each point is entered
 * as position value << 32 | 0xffffffff, so a 64-bit hash looks up to the
 * owner of its top 32 bits.
 */
static int ketama_prepare(const dch_ring *r, uint32_t id, const char *name,
                          size_t len, uint32_t weight, ketama_plan *plan)
{
    const dch_allocator *a = r->cfg.allocator;
    uint32_t limit = r->id_limit > id ? r->id_limit : id + 1;
    ketama_server *s = dch__alloc_array(a, r->count + 1u, sizeof *s);
    if (s == NULL)
        return DCH_ENOMEM;
    uint32_t n = 0;
    uint64_t total = 0;
    for (uint32_t i = 0; i < limit; i++) {
        const member *m = member_of(r, i);
        ketama_server k;
        if (i == id)
            k = (ketama_server){name, (uint32_t)len, weight,
                                m ? m->seq : r->next_seq, i};
        else if (m != NULL)
            k = (ketama_server){m->name, m->len, m->weight, m->seq, i};
        else
            continue;
        if (k.weight == 0)
            continue;
        s[n++] = k;
        total += k.weight;
    }
    qsort(s, n, sizeof *s, cmp_seq);
    uint64_t np = 0;
    for (uint32_t i = 0; i < n; i++)
        np += dch__ketama_points(s[i].weight, total, n);
    *plan = (ketama_plan){NULL, 0, NULL};
    if (np > DCH_RING_MAX_POINTS) {
        dch__free(a, s);
        return DCH_EFULL;
    }
    if (np > 0) {
        plan->points = dch__alloc_array(a, (size_t)np, sizeof *plan->points);
        plan->index = dch__alloc_array(a, BUCKETS + 1u, sizeof *plan->index);
        if (plan->points == NULL || plan->index == NULL) {
            dch__free(a, plan->points);
            dch__free(a, plan->index);
            dch__free(a, s);
            return DCH_ENOMEM;
        }
    }
    /* Sort keys value << 32 | order << 16 | id (order, id < 2^16), then
     * turn each into an entry (see the file comment) in place, noting in
     * index[b] the first entry whose bucket is at least b. */
    uint64_t *p = plan->points;
    for (uint32_t i = 0, at = 0; i < n; i++) {
        uint32_t k = dch__ketama_points(s[i].weight, total, n);
        dch__ketama_place(s[i].name, s[i].len, k, i << 16 | s[i].id, p + at);
        at += k;
    }
    dch__free(a, s);
    if (np > 0)
        qsort(p, (size_t)np, sizeof *p, cmp_u64);
    uint32_t b = 0;
    for (uint32_t i = 0; i < (uint32_t)np; i++) {
        uint64_t pos = (p[i] & ~UINT64_C(0xffffffff)) | UINT64_C(0xffffffff);
        while (b <= (uint32_t)(pos >> LOW_BITS))
            plan->index[b++] = i;
        p[i] = pos << BUCKET_BITS | (p[i] & ID_MASK);
    }
    if (np > 0)
        while (b <= BUCKETS)
            plan->index[b++] = (uint32_t)np;
    plan->npoints = (uint32_t)np;
    return DCH_OK;
}

/* Install a prepared continuum; cannot fail. */
static void ketama_commit(dch_ring *r, ketama_plan *plan)
{
    const dch_allocator *a = r->cfg.allocator;
    dch__free(a, r->points);
    dch__free(a, r->index);
    r->points = plan->points;
    r->index = plan->index;
    r->npoints = r->cap = plan->npoints;
}

int dch_ring_add_node(dch_ring *r, const char *name, uint32_t weight,
                      uint32_t *id_out)
{
    if (r == NULL)
        return DCH_EINVAL;
    size_t len = dch__name_length(name);
    if (len == SIZE_MAX)
        return DCH_EINVAL;
    bool found;
    uint32_t slot = name_slot(r, name, len, &found);
    if (found)
        return DCH_EEXIST;
    if (r->count >= DCH_RING_MAX_NODES ||
        r->total_weight + weight > UINT32_MAX ||
        r->npoints + points_for(r, weight) > DCH_RING_MAX_POINTS)
        return DCH_EFULL;
    uint32_t k = (uint32_t)points_for(r, weight);

    /* The lowest free id: a hole below id_limit, else id_limit itself
     * (no hole exactly when count == id_limit). */
    uint32_t id = r->count == r->id_limit ? r->id_limit : 0;
    while (id < r->id_limit && r->members[id].name != NULL)
        id++;

    const dch_allocator *a = r->cfg.allocator;
    member *members = NULL;
    uint32_t *by_name = NULL;
    char *copy = NULL;
    uint64_t *pos = NULL;
    ketama_plan plan;
    bool ketama = r->cfg.placement == DCH_RING_PLACE_KETAMA && weight > 0;
    int rc = DCH_ENOMEM;
    uint32_t cap = r->member_cap;
    if (id >= cap) {
        cap = cap < 8u ? 8u : cap * 2u;
        if (cap > DCH_RING_MAX_NODES)
            cap = DCH_RING_MAX_NODES;
        members = dch__alloc_array(a, cap, sizeof *members);
        by_name = dch__alloc_array(a, cap, sizeof *by_name);
        if (members == NULL || by_name == NULL)
            goto fail;
    }
    copy = dch__strdup(a, name, len);
    if (copy == NULL)
        goto fail;
    if (ketama) {
        rc = ketama_prepare(r, id, name, len, weight, &plan);
        if (rc != DCH_OK)
            goto fail;
    } else if (k > 0 && prepare_points(r, name, len, 0, k, &pos) != DCH_OK) {
        goto fail;
    }

    if (members != NULL) {
        memset(members, 0, cap * sizeof *members);
        if (r->member_cap > 0) {
            memcpy(members, r->members, r->member_cap * sizeof *members);
            memcpy(by_name, r->by_name, r->count * sizeof *by_name);
        }
        dch__free(a, r->members);
        dch__free(a, r->by_name);
        r->members = members;
        r->by_name = by_name;
        r->member_cap = cap;
    }
    r->members[id] = (member){copy, (uint32_t)len, weight, r->next_seq++};
    memmove(&r->by_name[slot + 1], &r->by_name[slot],
            (r->count - slot) * sizeof *r->by_name);
    r->by_name[slot] = id;
    r->count++;
    if (id == r->id_limit)
        r->id_limit++;
    r->total_weight += weight;
    r->name_bytes += len + 1;
    if (ketama)
        ketama_commit(r, &plan);
    if (k > 0) {
        merge_points(r, pos, k, id, name, len);
        dch__free(a, pos);
    }
    if (id_out != NULL)
        *id_out = id;
    return DCH_OK;
fail:
    dch__free(a, copy);
    dch__free(a, members);
    dch__free(a, by_name);
    return rc;
}

int dch_ring_remove_node(dch_ring *r, uint32_t id)
{
    if (r == NULL)
        return DCH_EINVAL;
    const member *m = member_of(r, id);
    if (m == NULL)
        return DCH_ENOENT;
    if (r->cfg.placement == DCH_RING_PLACE_KETAMA) {
        if (m->weight > 0) {
            ketama_plan plan;
            int rc = ketama_prepare(r, id, m->name, m->len, 0, &plan);
            if (rc != DCH_OK)
                return rc;
            ketama_commit(r, &plan);
        }
    } else if (m->weight > 0) {
        compact(r, id);
    }
    bool found;
    uint32_t slot = name_slot(r, m->name, m->len, &found);
    memmove(&r->by_name[slot], &r->by_name[slot + 1],
            (r->count - slot - 1) * sizeof *r->by_name);
    r->count--;
    r->total_weight -= m->weight;
    r->name_bytes -= (size_t)m->len + 1;
    dch__free(r->cfg.allocator, r->members[id].name);
    r->members[id] = (member){NULL, 0, 0, 0};
    while (r->id_limit > 0 && r->members[r->id_limit - 1].name == NULL)
        r->id_limit--;
    return DCH_OK;
}

int dch_ring_set_weight(dch_ring *r, uint32_t id, uint32_t weight)
{
    if (r == NULL)
        return DCH_EINVAL;
    const member *m = member_of(r, id);
    if (m == NULL)
        return DCH_ENOENT;
    uint32_t old = m->weight;
    if (weight == old)
        return DCH_OK;
    if (r->total_weight - old + weight > UINT32_MAX)
        return DCH_EFULL;
    if (r->cfg.placement == DCH_RING_PLACE_KETAMA) {
        ketama_plan plan;
        int rc = ketama_prepare(r, id, m->name, m->len, weight, &plan);
        if (rc != DCH_OK)
            return rc;
        ketama_commit(r, &plan);
        r->members[id].weight = weight;
        r->total_weight = r->total_weight - old + weight;
        return DCH_OK;
    }
    uint32_t have = (uint32_t)points_for(r, old);
    if (weight > old) {
        uint64_t want = points_for(r, weight);
        if (r->npoints - have + want > DCH_RING_MAX_POINTS)
            return DCH_EFULL;
        uint32_t k = (uint32_t)want - have;
        uint64_t *pos = NULL;
        int rc = prepare_points(r, m->name, m->len, have, k, &pos);
        if (rc != DCH_OK)
            return rc;
        merge_points(r, pos, k, id, m->name, m->len);
        dch__free(r->cfg.allocator, pos);
    } else {
        drop_points(r, id, (uint32_t)points_for(r, weight), have);
    }
    r->members[id].weight = weight;
    r->total_weight = r->total_weight - old + weight;
    return DCH_OK;
}

int dch_ring_find_node(const dch_ring *r, const char *name, uint32_t *id_out)
{
    if (r == NULL || id_out == NULL)
        return DCH_EINVAL;
    size_t len = dch__name_length(name);
    if (len == SIZE_MAX)
        return DCH_EINVAL;
    bool found;
    uint32_t slot = name_slot(r, name, len, &found);
    if (!found)
        return DCH_ENOENT;
    *id_out = r->by_name[slot];
    return DCH_OK;
}

const char *dch_ring_node_name(const dch_ring *r, uint32_t id)
{
    const member *m = member_of(r, id);
    return m ? m->name : NULL;
}

uint32_t dch_ring_node_weight(const dch_ring *r, uint32_t id)
{
    const member *m = member_of(r, id);
    return m ? m->weight : 0;
}

uint32_t dch_ring_node_count(const dch_ring *r)
{
    return r ? r->count : 0;
}

uint32_t dch_ring_id_limit(const dch_ring *r)
{
    return r ? r->id_limit : 0;
}

uint32_t dch_ring_total_weight(const dch_ring *r)
{
    return r ? (uint32_t)r->total_weight : 0;
}

uint32_t dch_ring_point_count(const dch_ring *r)
{
    return r ? r->npoints : 0;
}

void dch_ring_get_config(const dch_ring *r, dch_ring_config *cfg)
{
    if (r != NULL && cfg != NULL)
        *cfg = r->cfg;
}

uint64_t dch_ring_hash(const dch_ring *r, const void *key, size_t len)
{
    if (r == NULL)
        return 0;
    if (r->cfg.placement == DCH_RING_PLACE_KETAMA)
        return (uint64_t)dch__ketama_hash(key, len) << 32;
    return dch_siphash24(r->cfg.hash_key, key, len);
}

uint32_t dch_ring_lookup_hash(const dch_ring *r, uint64_t hash)
{
    if (r == NULL || r->npoints == 0)
        return DCH_NODE_NONE;
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
    if (lo == r->npoints)
        lo = 0;
    return (uint32_t)(p[lo] & ID_MASK);
}

uint32_t dch_ring_lookup(const dch_ring *r, const void *key, size_t len)
{
    return dch_ring_lookup_hash(r, dch_ring_hash(r, key, len));
}

/* Coalesces adjacent arcs of one owner before handing them to fn. */
typedef struct range_emitter {
    int (*fn)(const dch_range *rg, void *ctx);
    void *ctx;
    dch_range cur;
    bool have;
} range_emitter;

static int emit(range_emitter *em, uint64_t lo, uint64_t hi, uint32_t owner)
{
    if (em->have && em->cur.owner == owner) {
        em->cur.hi = hi;
        return 0;
    }
    int rc = em->have ? em->fn(&em->cur, em->ctx) : 0;
    em->cur = (dch_range){lo, hi, owner};
    em->have = true;
    return rc;
}

int dch_ring_foreach_range(const dch_ring *r,
                           int (*fn)(const dch_range *rg, void *ctx), void *ctx)
{
    if (r == NULL || fn == NULL)
        return DCH_EINVAL;
    if (r->npoints == 0) {
        dch_range all = {0, UINT64_MAX, DCH_NODE_NONE};
        return fn(&all, ctx);
    }
    /* Entry i owns (position of entry i - 1, its own position]; entry 0
     * owns [0, its position] and the arc past the last point. A later entry
     * at an earlier entry's position owns nothing and is skipped. */
    range_emitter em = {fn, ctx, {0, 0, 0}, false};
    const uint64_t *p = r->points;
    uint64_t lo = 0, last = 0;
    bool started = false;
    for (uint32_t b = 0; b < BUCKETS; b++) {
        for (uint32_t i = r->index[b]; i < r->index[b + 1]; i++) {
            uint64_t pos = (uint64_t)b << LOW_BITS | p[i] >> BUCKET_BITS;
            if (started && pos == last)
                continue;
            int rc = emit(&em, lo, pos, (uint32_t)(p[i] & ID_MASK));
            if (rc != 0)
                return rc;
            started = true;
            last = pos;
            lo = pos + 1;
        }
    }
    if (last != UINT64_MAX) {
        int rc = emit(&em, lo, UINT64_MAX, (uint32_t)(p[0] & ID_MASK));
        if (rc != 0)
            return rc;
    }
    return fn(&em.cur, ctx);
}

typedef struct range_sink {
    dch_range *out;
    size_t cap;
    size_t count;
} range_sink;

static int collect(const dch_range *rg, void *ctx)
{
    range_sink *s = ctx;
    if (s->count < s->cap)
        s->out[s->count] = *rg;
    s->count++;
    return 0;
}

int dch_ring_ranges(const dch_ring *r, dch_range *out, size_t cap,
                    size_t *count_out)
{
    if (r == NULL || count_out == NULL || (out == NULL && cap > 0))
        return DCH_EINVAL;
    range_sink s = {out, cap, 0};
    (void)dch_ring_foreach_range(r, collect, &s);
    *count_out = s.count;
    return s.count > cap ? DCH_EFULL : DCH_OK;
}

size_t dch_ring_memory(const dch_ring *r)
{
    if (r == NULL)
        return 0;
    size_t bytes = sizeof *r + (size_t)r->cap * sizeof *r->points;
    if (r->index != NULL)
        bytes += (BUCKETS + 1u) * sizeof *r->index;
    bytes += (size_t)r->member_cap * (sizeof *r->members + sizeof *r->by_name);
    return bytes + r->name_bytes;
}
