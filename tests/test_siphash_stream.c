/* SPDX-License-Identifier: MIT */
/*
 * Incremental SipHash-2-4 against two oracles: libsodium's one-shot
 * crypto_shorthash_siphash24 and libdch's own dch_siphash24, on random
 * messages cut into random pieces (empty pieces included), and the integer
 * helpers against explicit little-endian bytes.
 *
 * DCH_TEST_SEED, when set, replaces the default seed.
 */
#include <criterion/criterion.h>
#include <sodium.h>

#include <stdlib.h>
#include <string.h>

#include "dch/siphash.h"
#include "support.h"
#include "siphash_stream.h"

static uint64_t sodium_siphash(const uint8_t key[16], const uint8_t *msg, size_t len)
{
    uint8_t out[crypto_shorthash_siphash24_BYTES];
    crypto_shorthash_siphash24(out, msg, len, key);
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | out[i];
    return v;
}

Test(siphash_stream, pieces_of_any_size_give_the_one_shot_digest)
{
    cr_assert(sodium_init() >= 0);
    const uint64_t seed = test_seed(UINT64_C(0x5eed5e7ea3000001));
    uint64_t rng = seed;
    uint8_t msg[600];
    for (int round = 0; round < 2000; round++) {
        uint8_t key[16];
        for (int i = 0; i < 16; i++)
            key[i] = (uint8_t)rng_next(&rng);
        const size_t len = (size_t)(rng_next(&rng) % sizeof msg);
        for (size_t i = 0; i < len; i++)
            msg[i] = (uint8_t)rng_next(&rng);
        dch__sipstream st;
        dch__sipstream_init(&st, key);
        size_t at = 0;
        while (at < len) {
            /* Pieces of 0 .. 19 bytes cross word boundaries in every way. */
            size_t piece = (size_t)(rng_next(&rng) % 20);
            if (piece > len - at)
                piece = len - at;
            dch__sipstream_update(&st, piece ? msg + at : NULL, piece);
            at += piece;
        }
        const uint64_t got = dch__sipstream_final(&st);
        cr_assert_eq(got, sodium_siphash(key, msg, len), "seed %llu round %d len %zu",
                     (unsigned long long)seed, round, len);
        cr_assert_eq(got, dch_siphash24(key, msg, len), "seed %llu round %d",
                     (unsigned long long)seed, round);
    }
}

Test(siphash_stream, empty_message_matches_the_reference)
{
    uint8_t key[16];
    for (int i = 0; i < 16; i++)
        key[i] = (uint8_t)i;
    dch__sipstream st;
    dch__sipstream_init(&st, key);
    dch__sipstream_update(&st, NULL, 0);
    /* The first line of the reference vectors: 64-bit output, empty input. */
    cr_assert_eq(dch__sipstream_final(&st), UINT64_C(0x726fdb47dd0e0e31));
}

Test(siphash_stream, integers_are_absorbed_little_endian)
{
    uint8_t key[16] = {0};
    key[3] = 7;
    const uint8_t bytes[] = {0xAB, 0x34, 0x12, 0x78, 0x56, 0x34, 0x12};
    dch__sipstream st;
    dch__sipstream_init(&st, key);
    dch__sipstream_u8(&st, 0xAB);
    dch__sipstream_u16(&st, 0x1234);
    dch__sipstream_u32(&st, 0x12345678);
    cr_assert_eq(dch__sipstream_final(&st), dch_siphash24(key, bytes, sizeof bytes));
}
