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
