/* SPDX-License-Identifier: MIT */
/*
 * Incremental SipHash-2-4 (64-bit output), for digests of data that is never
 * held in one buffer, such as a map's canonical serialisation. Internal to
 * libdch. Feeding a message in any number of pieces gives exactly
 * dch_siphash24 of the whole message.
 */
#ifndef DCH_SRC_SIPHASH_STREAM_H
#define DCH_SRC_SIPHASH_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "sipround.h"

/* State between calls; the fields are private to siphash_stream.c. */
typedef struct dch__sipstream {
    dch__sipstate v;
    uint64_t total; /* bytes absorbed so far; its low byte ends the message */
    uint8_t tail[8]; /* bytes not yet forming a whole word */
    unsigned ntail; /* 0 .. 7 */
} dch__sipstream;

void dch__sipstream_init(dch__sipstream *s, const uint8_t key[16]);

/* Absorb len bytes; data may be NULL when len is 0. */
void dch__sipstream_update(dch__sipstream *s, const void *data, size_t len);

/* Little-endian helpers that absorb fixed-width integers. */
void dch__sipstream_u8(dch__sipstream *s, uint8_t v);
void dch__sipstream_u16(dch__sipstream *s, uint16_t v);
void dch__sipstream_u32(dch__sipstream *s, uint32_t v);

/* The digest of everything absorbed; the state is spent afterwards. */
uint64_t dch__sipstream_final(dch__sipstream *s);

#endif /* DCH_SRC_SIPHASH_STREAM_H */
