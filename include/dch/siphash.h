/* SPDX-License-Identifier: MIT */
/*
 * SipHash-2-4 (Aumasson and Bernstein, 2012), the keyed hash that places keys
 * and ring points.
 *
 * Output is defined by bytes, not by the host: the key and message are read
 * as little-endian 64-bit words and the result is the reference output read
 * as a little-endian integer, on every platform and at any buffer alignment.
 */
#ifndef DCH_SIPHASH_H
#define DCH_SIPHASH_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * SipHash-2-4 with 64-bit output.
 *
 * Returns the reference implementation's 8 output bytes read as a
 * little-endian integer: for key 00 01 .. 0f and the 15-byte message
 * 00 01 .. 0e it returns 0xa129ca6149be45e5.
 *
 * @param key   16 key bytes.
 * @param data  message; may be NULL when len is 0.
 * @param len   message length in bytes.
 */
DCH_API uint64_t dch_siphash24(const uint8_t key[16], const void *data,
                               size_t len);

/**
 * SipHash-2-4 with 128-bit output.
 *
 * For a keyed digest that stands in for the key itself (a deduplication or
 * cache index, a content id shared between clients), not for routing. Among
 * n keys a 64-bit hash has a collision with probability about n^2 / 2^65,
 * one in two near 5 * 10^9 keys: harmless for routing, where a collision
 * only sends two keys to the same member, but a wrong answer for a digest.
 * The 128-bit output moves that point to about 2^64 keys for one more
 * finalisation. Neither half equals dch_siphash24's output, so routing
 * (dch_map_hash, dch_ring_hash) stays defined by the 64-bit function.
 *
 * Writes the 16 bytes the reference implementation writes, in its order;
 * tests/vectors/siphash.txt holds the reference vectors it is checked
 * against.
 *
 * @param key   16 key bytes.
 * @param data  message; may be NULL when len is 0.
 * @param len   message length in bytes.
 * @param[out] out  16 output bytes.
 */
DCH_API void dch_siphash24_128(const uint8_t key[16], const void *data,
                               size_t len, uint8_t out[16]);

#ifdef __cplusplus
}
#endif

#endif /* DCH_SIPHASH_H */
