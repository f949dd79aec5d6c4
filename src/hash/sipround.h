/* SPDX-License-Identifier: MIT */
/*
 * The SipHash-2-4 core shared by the one-shot hash (siphash.c) and the
 * incremental one (siphash_stream.c): state, key setup, the SipRound, the
 * two compression rounds per message word and the four finalisation rounds.
 * Internal to libdch. Words are assembled little-endian byte by byte, never
 * through casts, so results do not depend on alignment or host byte order.
 */
#ifndef DCH_SRC_SIPROUND_H
#define DCH_SRC_SIPROUND_H

#include <stdint.h>

typedef struct dch__sipstate {
    uint64_t v0, v1, v2, v3;
} dch__sipstate;

static inline uint64_t dch__rotl64(uint64_t x, unsigned b)
{
    return (x << b) | (x >> (64u - b));
}

static inline uint64_t dch__load_le64(const uint8_t *p)
{
    return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 |
           (uint64_t)p[3] << 24 | (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 |
           (uint64_t)p[6] << 48 | (uint64_t)p[7] << 56;
}

/* Key setup: the four constants of the paper ("somepseudorandomlygeneratedbytes"). */
static inline void dch__sip_init(dch__sipstate *s, const uint8_t key[16])
{
    const uint64_t k0 = dch__load_le64(key);
    const uint64_t k1 = dch__load_le64(key + 8);
    s->v0 = k0 ^ UINT64_C(0x736f6d6570736575);
    s->v1 = k1 ^ UINT64_C(0x646f72616e646f6d);
    s->v2 = k0 ^ UINT64_C(0x6c7967656e657261);
    s->v3 = k1 ^ UINT64_C(0x7465646279746573);
}

static inline void dch__sip_round(dch__sipstate *s)
{
    s->v0 += s->v1;
    s->v1 = dch__rotl64(s->v1, 13);
    s->v1 ^= s->v0;
    s->v0 = dch__rotl64(s->v0, 32);
    s->v2 += s->v3;
    s->v3 = dch__rotl64(s->v3, 16);
    s->v3 ^= s->v2;
    s->v0 += s->v3;
    s->v3 = dch__rotl64(s->v3, 21);
    s->v3 ^= s->v0;
    s->v2 += s->v1;
    s->v1 = dch__rotl64(s->v1, 17);
    s->v1 ^= s->v2;
    s->v2 = dch__rotl64(s->v2, 32);
}

/* Absorb one message word: two compression rounds (the "2" of 2-4). */
static inline void dch__sip_word(dch__sipstate *s, uint64_t m)
{
    s->v3 ^= m;
    dch__sip_round(s);
    dch__sip_round(s);
    s->v0 ^= m;
}

/* Four finalisation rounds (the "4"), after the caller has marked v2 (0xff
 * for 64-bit output, 0xee for the first half of 128-bit output) or v1 (0xdd
 * for the second half). */
static inline uint64_t dch__sip_finish(dch__sipstate *s)
{
    for (int i = 0; i < 4; i++)
        dch__sip_round(s);
    return s->v0 ^ s->v1 ^ s->v2 ^ s->v3;
}

#endif /* DCH_SRC_SIPROUND_H */
