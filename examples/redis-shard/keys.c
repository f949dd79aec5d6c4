/* SPDX-License-Identifier: MIT */
/*
 * Key names and self-checking values (see keys.h).
 */
#include "keys.h"

#include "dch/dch.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* The check digits are a fixed function of (i, gen), so any client can
 * recompute them; the key only has to differ from the routing key. */
static const uint8_t value_key[16] = {'r', 'e', 'd', 'i', 's', '-', 's', 'h',
                                      'a', 'r', 'd', ' ', 'v', 'a', 'l', 's'};

size_t key_name(char *buf, uint32_t i)
{
    int n = snprintf(buf, KEY_CAP, "k:%" PRIu32, i);
    return n > 0 ? (size_t)n : 0;
}

int key_parse(const char *s, size_t len, uint32_t *i_out)
{
    uint64_t v = 0;

    /* "k:" then 1 to 10 digits, no leading zero unless the number is 0. */
    if (len < 3 || len > 12 || s[0] != 'k' || s[1] != ':')
        return 0;
    if (s[2] == '0' && len > 3)
        return 0;
    for (size_t j = 2; j < len; j++) {
        if (s[j] < '0' || s[j] > '9')
            return 0;
        v = v * 10 + (uint64_t)(s[j] - '0');
    }
    if (v > UINT32_MAX)
        return 0;
    *i_out = (uint32_t)v;
    return 1;
}

size_t value_make(char *buf, uint32_t i, uint32_t gen)
{
    char head[24];
    int n = snprintf(head, sizeof head, "%" PRIu32 ".%" PRIu32, i, gen);
    uint64_t check = dch_siphash24(value_key, head, (size_t)n);

    n = snprintf(buf, VALUE_CAP, "%s.%016" PRIx64, head, check);
    return n > 0 ? (size_t)n : 0;
}

int value_is(const char *s, size_t len, uint32_t i, uint32_t gen)
{
    char want[VALUE_CAP];
    size_t n = value_make(want, i, gen);

    return len == n && memcmp(s, want, n) == 0;
}
