/*
 * Incremental SipHash-2-4 with 64-bit output, from the same paper as
 * siphash.c (Aumasson and Bernstein, 2012). The one-shot function there
 * stays the reference; this file only adds buffering of partial words so
 * that a message can arrive in pieces. Words are assembled little-endian
 * byte by byte, never through casts.
 */
#include "siphash_stream.h"

#include <string.h>

static inline uint64_t rotl64(uint64_t x, unsigned b)
{
    return (x << b) | (x >> (64u - b));
}

static inline uint64_t load_le64(const uint8_t *p)
{
    return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 |
           (uint64_t)p[3] << 24 | (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 |
           (uint64_t)p[6] << 48 | (uint64_t)p[7] << 56;
}

static inline void sip_round(dch__sipstream *s)
{
    s->v0 += s->v1;
    s->v1 = rotl64(s->v1, 13);
    s->v1 ^= s->v0;
    s->v0 = rotl64(s->v0, 32);
    s->v2 += s->v3;
    s->v3 = rotl64(s->v3, 16);
    s->v3 ^= s->v2;
    s->v0 += s->v3;
    s->v3 = rotl64(s->v3, 21);
    s->v3 ^= s->v0;
    s->v2 += s->v1;
    s->v1 = rotl64(s->v1, 17);
    s->v1 ^= s->v2;
    s->v2 = rotl64(s->v2, 32);
}

/* Two compression rounds per message word. */
static inline void sip_word(dch__sipstream *s, uint64_t m)
{
    s->v3 ^= m;
    sip_round(s);
    sip_round(s);
    s->v0 ^= m;
}

void dch__sipstream_init(dch__sipstream *s, const uint8_t key[16])
{
    const uint64_t k0 = load_le64(key);
    const uint64_t k1 = load_le64(key + 8);
    s->v0 = k0 ^ UINT64_C(0x736f6d6570736575);
    s->v1 = k1 ^ UINT64_C(0x646f72616e646f6d);
    s->v2 = k0 ^ UINT64_C(0x6c7967656e657261);
    s->v3 = k1 ^ UINT64_C(0x7465646279746573);
    s->total = 0;
    s->ntail = 0;
}

void dch__sipstream_update(dch__sipstream *s, const void *data, size_t len)
{
    const uint8_t *in = data;
    if (len == 0)
        return; /* data may be NULL: no memcpy from it */
    s->total += len;
    if (s->ntail > 0) {
        /* Complete the pending word first. */
        const size_t take = len < 8u - s->ntail ? len : 8u - s->ntail;
        memcpy(s->tail + s->ntail, in, take);
        s->ntail += (unsigned)take;
        in += take;
        len -= take;
        if (s->ntail < 8)
            return;
        sip_word(s, load_le64(s->tail));
        s->ntail = 0;
    }
    for (; len >= 8; in += 8, len -= 8)
        sip_word(s, load_le64(in));
    if (len > 0)
        memcpy(s->tail, in, len);
    s->ntail = (unsigned)len;
}

void dch__sipstream_u8(dch__sipstream *s, uint8_t v)
{
    dch__sipstream_update(s, &v, 1);
}

void dch__sipstream_u16(dch__sipstream *s, uint16_t v)
{
    const uint8_t b[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
    dch__sipstream_update(s, b, 2);
}

void dch__sipstream_u32(dch__sipstream *s, uint32_t v)
{
    const uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16),
                          (uint8_t)(v >> 24)};
    dch__sipstream_update(s, b, 4);
}

uint64_t dch__sipstream_final(dch__sipstream *s)
{
    /* Last block: the remaining 0..7 bytes, then the length mod 256 in the
     * top byte, exactly as the one-shot function pads. */
    uint8_t last[8] = {0};
    memcpy(last, s->tail, s->ntail);
    sip_word(s, (s->total << 56) | load_le64(last));
    s->v2 ^= 0xff;
    for (int i = 0; i < 4; i++)
        sip_round(s);
    return s->v0 ^ s->v1 ^ s->v2 ^ s->v3;
}
