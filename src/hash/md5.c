/* SPDX-License-Identifier: MIT */
/*
 * MD5 as RFC 1321 specifies it: 64-byte blocks of little-endian words, four
 * rounds of sixteen steps, and the padding of a 0x80 byte, zeros to 56 bytes
 * mod 64, and the message length in bits as a little-endian 64-bit number.
 * Bytes are assembled into words one at a time, so the code reads no
 * unaligned words and does not depend on the host's byte order. The constants
 * T[i] are floor(2^32 * |sin(i + 1)|), as in the RFC's section 3.4.
 */
#include "md5.h"

#include <string.h>

static const uint32_t T[64] = {
    0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a,
    0xa8304613, 0xfd469501, 0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be,
    0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821, 0xf61e2562, 0xc040b340,
    0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
    0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8,
    0x676f02d9, 0x8d2a4c8a, 0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c,
    0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70, 0x289b7ec6, 0xeaa127fa,
    0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
    0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92,
    0xffeff47d, 0x85845dd1, 0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1,
    0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391,
};

/* Left-rotation amounts, four per round (RFC 1321, section 3.4). */
static const unsigned S[4][4] = {
    {7, 12, 17, 22}, {5, 9, 14, 20}, {4, 11, 16, 23}, {6, 10, 15, 21}};

static uint32_t rotl(uint32_t x, unsigned n)
{
    return x << n | x >> (32u - n);
}

static uint32_t load32_le(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

static void store32_le(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

/* One 64-byte block into the state h[4]. */
static void md5_block(uint32_t h[4], const uint8_t *block)
{
    uint32_t x[16];
    for (unsigned i = 0; i < 16; i++)
        x[i] = load32_le(block + 4 * i);
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3];
    for (unsigned i = 0; i < 64; i++) {
        uint32_t f;
        unsigned k;
        switch (i / 16) {
        case 0: /* F(b, c, d), words in order */
            f = (b & c) | (~b & d);
            k = i;
            break;
        case 1: /* G(b, c, d), word 5i + 1 */
            f = (b & d) | (c & ~d);
            k = (5 * i + 1) % 16;
            break;
        case 2: /* H(b, c, d), word 3i + 5 */
            f = b ^ c ^ d;
            k = (3 * i + 5) % 16;
            break;
        default: /* I(b, c, d), word 7i */
            f = c ^ (b | ~d);
            k = (7 * i) % 16;
            break;
        }
        uint32_t t = d;
        d = c;
        c = b;
        b = b + rotl(a + f + x[k] + T[i], S[i / 16][i % 4]);
        a = t;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
}

void dch__md5(const void *data, size_t len, uint8_t digest[16])
{
    uint32_t h[4] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476};
    const uint8_t *p = data;
    size_t rest = len;
    for (; rest >= 64; rest -= 64, p += 64)
        md5_block(h, p);

    /* The tail, the 0x80 byte, zeros and the bit length: one block when the
     * tail leaves room for the 9 bytes, two otherwise. */
    uint8_t tail[128];
    memset(tail, 0, sizeof tail);
    if (rest > 0)
        memcpy(tail, p, rest);
    tail[rest] = 0x80;
    size_t blocks = rest < 56 ? 1 : 2;
    uint64_t bits = (uint64_t)len * 8u;
    for (unsigned i = 0; i < 8; i++)
        tail[64 * blocks - 8 + i] = (uint8_t)(bits >> (8 * i));
    md5_block(h, tail);
    if (blocks == 2)
        md5_block(h, tail + 64);

    for (unsigned i = 0; i < 4; i++)
        store32_le(digest + 4 * i, h[i]);
}
