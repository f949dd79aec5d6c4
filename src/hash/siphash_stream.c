/* SPDX-License-Identifier: MIT */
/*
 * Incremental SipHash-2-4 with 64-bit output, from the same paper as
 * siphash.c (Aumasson and Bernstein, 2012). The one-shot function there
 * stays the reference; this file only adds buffering of partial words so
 * that a message can arrive in pieces. Words are assembled little-endian
 * byte by byte, never through casts.
 */
#include "siphash_stream.h"

#include "sipround.h"

#include <string.h>

void dch__sipstream_init(dch__sipstream *s, const uint8_t key[16])
{
    dch__sip_init(&s->v, key);
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
        dch__sip_word(&s->v, dch__load_le64(s->tail));
        s->ntail = 0;
    }
    for (; len >= 8; in += 8, len -= 8)
        dch__sip_word(&s->v, dch__load_le64(in));
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
    dch__sip_word(&s->v, (s->total << 56) | dch__load_le64(last));
    s->v.v2 ^= 0xff;
    return dch__sip_finish(&s->v);
}
