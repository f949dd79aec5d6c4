/* SPDX-License-Identifier: MIT */
#include "number.h"

#include <stddef.h>

/* The value of digit c in `base` (10 or 16), or -1. */
static int digit(char c, unsigned base)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (base == 16 && c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (base == 16 && c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int dch__number_parse(const char *s, unsigned flags, uint64_t min, uint64_t max,
                      uint64_t *out)
{
    if (s == NULL)
        return -1;
    unsigned base = 10;
    if ((flags & DCH__NUMBER_HEX) && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s += 2;
    }
    if (*s == '\0')
        return -1;
    /* Invariant: v <= max, so v * base + d is checked against overflow
     * before it is formed. */
    uint64_t v = 0;
    for (; *s != '\0'; s++) {
        const int d = digit(*s, base);
        if (d < 0 || v > (UINT64_MAX - (uint64_t)d) / base)
            return -1;
        v = v * base + (uint64_t)d;
        if (v > max)
            return -1;
    }
    if (v < min)
        return -1;
    *out = v;
    return 0;
}

int dch__hex_parse(const char *s, uint8_t *out, size_t n)
{
    if (s == NULL)
        return -1;
    /* Every digit is checked before the first byte is written. */
    for (size_t i = 0; i < 2 * n; i++)
        if (digit(s[i], 16) < 0)
            return -1;
    if (s[2 * n] != '\0')
        return -1;
    for (size_t i = 0; i < n; i++)
        out[i] = (uint8_t)(digit(s[2 * i], 16) << 4 | digit(s[2 * i + 1], 16));
    return 0;
}
