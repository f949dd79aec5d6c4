/*
 * SipHash-2-4, written from Aumasson and Bernstein, "SipHash: a fast
 * short-input PRF" (2012), with the 128-bit output variant as the reference
 * code defines it (v1 ^= 0xee at initialisation, v1 ^= 0xdd before the second
 * finalisation).
 *
 * Portability: message and key bytes are loaded with explicit little-endian
 * byte assembly, never through casts, so the result is the same at any
 * alignment and on any host byte order. No rounds are dropped.
 */
#include "dch/siphash.h"

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

static inline void store_le64(uint8_t *p, uint64_t v)
{
    for (unsigned i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

typedef struct sip_state {
    uint64_t v0, v1, v2, v3;
} sip_state;

static inline void sip_round(sip_state *s)
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

/* Initialise, absorb the whole message (2 rounds per word) and the final
 * length word; leaves the state ready for finalisation. */
static inline void sip_absorb(sip_state *s, const uint8_t key[16],
                              const uint8_t *in, size_t len, int wide)
{
    const uint64_t k0 = load_le64(key);
    const uint64_t k1 = load_le64(key + 8);
    s->v0 = k0 ^ UINT64_C(0x736f6d6570736575);
    s->v1 = k1 ^ UINT64_C(0x646f72616e646f6d);
    s->v2 = k0 ^ UINT64_C(0x6c7967656e657261);
    s->v3 = k1 ^ UINT64_C(0x7465646279746573);
    if (wide)
        s->v1 ^= 0xee;

    const uint8_t *end = in + (len - (len % 8));
    for (; in != end; in += 8) {
        const uint64_t m = load_le64(in);
        s->v3 ^= m;
        sip_round(s);
        sip_round(s);
        s->v0 ^= m;
    }

    /* Last block: the remaining 0..7 bytes, then len mod 256 in the top byte. */
    uint8_t tail[8] = {0};
    if (len % 8 != 0)
        memcpy(tail, in, len % 8);
    const uint64_t b = ((uint64_t)len << 56) | load_le64(tail);
    s->v3 ^= b;
    sip_round(s);
    sip_round(s);
    s->v0 ^= b;
}

/* Four finalisation rounds; the caller has already marked the state. */
static inline uint64_t sip_finish(sip_state *s)
{
    for (int i = 0; i < 4; i++)
        sip_round(s);
    return s->v0 ^ s->v1 ^ s->v2 ^ s->v3;
}

uint64_t dch_siphash24(const uint8_t key[16], const void *data, size_t len)
{
    static const uint8_t empty[1] = {0};
    sip_state s;
    sip_absorb(&s, key, len ? (const uint8_t *)data : empty, len, 0);
    s.v2 ^= 0xff;
    return sip_finish(&s);
}

void dch_siphash24_128(const uint8_t key[16], const void *data, size_t len,
                       uint8_t out[16])
{
    static const uint8_t empty[1] = {0};
    sip_state s;
    sip_absorb(&s, key, len ? (const uint8_t *)data : empty, len, 1);
    s.v2 ^= 0xee;
    store_le64(out, sip_finish(&s));
    s.v1 ^= 0xdd;
    store_le64(out + 8, sip_finish(&s));
}
