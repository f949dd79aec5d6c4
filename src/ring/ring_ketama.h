/* SPDX-License-Identifier: MIT */
/*
 * The rules of libmemcached's weighted ketama continuum, internal to libdch:
 * how many points a server gets, where they sit, and where a key lands. The
 * ring (ring.c) builds its continuum from these in DCH_RING_PLACE_KETAMA
 * mode; ring.h states the rules for users.
 */
#ifndef DCH_SRC_RING_KETAMA_H
#define DCH_SRC_RING_KETAMA_H

#include "dch/common.h"

#include "ring_points.h"

#include <stddef.h>
#include <stdint.h>

/* Average points per server; libmemcached's MEMCACHED_POINTS_PER_SERVER_KETAMA. */
#define DCH__KETAMA_POINTS_PER_SERVER 160u
/* Points one MD5 digest yields. */
#define DCH__KETAMA_POINTS_PER_HASH 4u

/*
 * Points of a server of weight `weight` (> 0) among `servers` servers whose
 * weights sum to `total` (>= weight): a multiple of 4, computed in single
 * precision exactly as libmemcached does.
 */
uint32_t dch__ketama_points(uint32_t weight, uint64_t total, uint32_t servers);

/*
 * The 32-bit values of the first `points` points (a multiple of 4) of a
 * server named name/len (len <= DCH_NAME_MAX), each written to out[] as
 * (uint64_t)value << 32 | tag, in point order. `tag` must fit in 32 bits.
 */
void dch__ketama_place(const char *name, size_t len, uint32_t points,
                       uint32_t tag, uint64_t *out);

/* A key's 32-bit ketama hash: the first 4 bytes of MD5(key), little-endian. */
uint32_t dch__ketama_hash(const void *key, size_t len);

/* A libmemcached server: a ring member of positive weight. */
typedef struct dch__ketama_server {
    const char *name;
    uint32_t len;
    uint32_t weight;
    uint64_t seq; /* add order: ties between points go to the smaller */
    uint32_t id;
} dch__ketama_server;

/*
 * The continuum of n servers (n < 2^16, s reordered by seq here), built
 * into *out as ring_points.c lays points out. Each point is entered at
 * value << 32 | 0xffffffff, so a 64-bit hash looks up to the owner of its
 * top 32 bits; points of equal value are ordered by add order.
 * @return DCH_OK, DCH_EFULL (more than max_points points; nothing
 *         allocated), DCH_ENOMEM (nothing allocated).
 */
int dch__ketama_build(const dch_allocator *a, dch__ketama_server *s, uint32_t n,
                      uint32_t max_points, dch__ring_points *out);

#endif /* DCH_SRC_RING_KETAMA_H */
