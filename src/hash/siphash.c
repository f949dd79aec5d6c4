/* SPDX-License-Identifier: MIT */
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

#include "sipround.h"

#include <string.h>

static inline void store_le64(uint8_t *p, uint64_t v)
{
    for (unsigned i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* Initialise and absorb the whole message and its final length word; leaves
 * the state ready for finalisation. */
static inline void sip_absorb(dch__sipstate *s, const uint8_t key[16],
                              const uint8_t *in, size_t len, int wide)
{
    dch__sip_init(s, key);
    if (wide)
        s->v1 ^= 0xee;
    const uint8_t *end = in + (len - (len % 8));
    for (; in != end; in += 8)
        dch__sip_word(s, dch__load_le64(in));
    /* Last block: the remaining 0..7 bytes, then len mod 256 in the top byte. */
    uint8_t tail[8] = {0};
    if (len % 8 != 0)
        memcpy(tail, in, len % 8);
    dch__sip_word(s, ((uint64_t)len << 56) | dch__load_le64(tail));
}

uint64_t dch_siphash24(const uint8_t key[16], const void *data, size_t len)
{
    static const uint8_t empty[1] = {0};
    dch__sipstate s;
    sip_absorb(&s, key, len ? (const uint8_t *)data : empty, len, 0);
    s.v2 ^= 0xff;
    return dch__sip_finish(&s);
}

void dch_siphash24_128(const uint8_t key[16], const void *data, size_t len,
                       uint8_t out[16])
{
    static const uint8_t empty[1] = {0};
    dch__sipstate s;
    sip_absorb(&s, key, len ? (const uint8_t *)data : empty, len, 1);
    s.v2 ^= 0xee;
    store_le64(out, dch__sip_finish(&s));
    s.v1 ^= 0xdd;
    store_le64(out + 8, dch__sip_finish(&s));
}
