/* SPDX-License-Identifier: MIT */
/*
 * libmemcached 1.1's weighted ketama continuum (the behaviour of
 * MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED: update_continuum and ketama_server_hash
 * in src/libmemcached/hosts.cc, dispatch_host in hash.cc, hashkit_md5 in
 * src/libhashkit), restated from a reading of that source and checked
 * against the library itself by the interop test:
 *
 *   points(server) = 4 * floor(w / W * 160 / 4 * n + 1e-10)
 *
 * evaluated in single precision, left to right, each step rounded to float
 * (w the server's weight, W the sum of weights, n the number of servers).
 * Equal weights therefore give 160 points at most counts but 156 at some,
 * such as 25, 50 and 100, where w / W * 40 * n rounds to just under 40.
 * Point group g (g = 0, 1, ...) of a server hashes the string "name-g"
 * (g in decimal) with MD5 and takes four 32-bit values from the digest,
 * bytes 4k .. 4k + 3 little-endian for k = 0 .. 3. A key's hash is the first
 * four bytes of MD5(key), little-endian.
 *
 * Casts and assignments to float round every step (C11 5.2.4.2.2), so the
 * sum is float arithmetic on any host, and no step is contracted into a
 * fused multiply-add, as none is in Debian's x86-64 build. The value is
 * non-negative and far below 2^31, so conversion to an integer is the floor,
 * without libm.
 */
#include "ring_ketama.h"

#include "dch/error.h"

#include "alloc.h"
#include "md5.h"

#include <stdlib.h>
#include <string.h>

/* A name of DCH_NAME_MAX bytes, '-', and up to 10 decimal digits. */
#define KETAMA_NAME_MAX (255u + 1u + 10u)

uint32_t dch__ketama_points(uint32_t weight, uint64_t total, uint32_t servers)
{
    float pct = (float)weight / (float)total;
    float x = pct * (float)DCH__KETAMA_POINTS_PER_SERVER;
    x = x / (float)DCH__KETAMA_POINTS_PER_HASH;
    x = x * (float)servers;
    x = x + 0.0000000001F;
    return (uint32_t)x * DCH__KETAMA_POINTS_PER_HASH;
}

static uint32_t load32_le(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

void dch__ketama_place(const char *name, size_t len, uint32_t points,
                       uint32_t tag, uint64_t *out)
{
    char buf[KETAMA_NAME_MAX];
    memcpy(buf, name, len);
    buf[len] = '-';
    for (uint32_t g = 0; g < points / DCH__KETAMA_POINTS_PER_HASH; g++) {
        char digits[10];
        size_t nd = 0, n = len + 1;
        uint32_t v = g;
        do {
            digits[nd++] = (char)('0' + v % 10u);
            v /= 10u;
        } while (v != 0);
        while (nd > 0)
            buf[n++] = digits[--nd];
        uint8_t d[16];
        dch__md5(buf, n, d);
        for (unsigned k = 0; k < DCH__KETAMA_POINTS_PER_HASH; k++)
            *out++ = (uint64_t)load32_le(d + 4 * k) << 32 | tag;
    }
}

uint32_t dch__ketama_hash(const void *key, size_t len)
{
    uint8_t d[16];
    dch__md5(key, len, d);
    return load32_le(d);
}

static int cmp_seq(const void *pa, const void *pb)
{
    const dch__ketama_server *a = pa, *b = pb;
    return (a->seq > b->seq) - (a->seq < b->seq);
}

static int cmp_u64(const void *pa, const void *pb)
{
    uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
    return (a > b) - (a < b);
}

/* A server's place in add order settles ties between points of equal
 * value, the first added winning, as libmemcached's sort by (value, server
 * index) does. */
int dch__ketama_build(const dch_allocator *a, dch__ketama_server *s, uint32_t n,
                      uint32_t max_points, dch__ring_points *out)
{
    uint64_t total = 0;
    for (uint32_t i = 0; i < n; i++)
        total += s[i].weight;
    qsort(s, n, sizeof *s, cmp_seq);
    uint64_t np = 0;
    for (uint32_t i = 0; i < n; i++)
        np += dch__ketama_points(s[i].weight, total, n);
    memset(out, 0, sizeof *out);
    if (np > max_points)
        return DCH_EFULL;
    if (np == 0)
        return DCH_OK;
    out->points = dch__alloc_array(a, (size_t)np, sizeof *out->points);
    out->index = dch__alloc_array(a, DCH__RING_BUCKETS + 1u, sizeof *out->index);
    if (out->points == NULL || out->index == NULL) {
        dch__points_free(a, out);
        return DCH_ENOMEM;
    }
    /* Sort keys value << 32 | order << 16 | id (order, id < 2^16), then
     * turn each into an entry (ring_points.c) in place, noting in index[b]
     * the first entry whose bucket is at least b. */
    uint64_t *p = out->points;
    for (uint32_t i = 0, at = 0; i < n; i++) {
        uint32_t k = dch__ketama_points(s[i].weight, total, n);
        dch__ketama_place(s[i].name, s[i].len, k, i << 16 | s[i].id, p + at);
        at += k;
    }
    qsort(p, (size_t)np, sizeof *p, cmp_u64);
    uint32_t b = 0;
    for (uint32_t i = 0; i < (uint32_t)np; i++) {
        uint64_t pos = (p[i] & ~UINT64_C(0xffffffff)) | UINT64_C(0xffffffff);
        while (b <= (uint32_t)(pos >> DCH__RING_LOW_BITS))
            out->index[b++] = i;
        p[i] = pos << DCH__RING_BUCKET_BITS | (p[i] & DCH__RING_ID_MASK);
    }
    while (b <= DCH__RING_BUCKETS)
        out->index[b++] = (uint32_t)np;
    out->npoints = out->cap = (uint32_t)np;
    return DCH_OK;
}
