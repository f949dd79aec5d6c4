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

#include "md5.h"

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
