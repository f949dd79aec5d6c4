/* SPDX-License-Identifier: MIT */
/*
 * SipHash-2-4 against three independent oracles: the reference vectors in
 * tests/vectors/siphash.txt, the worked example of the paper, and libsodium on
 * random messages at random (misaligned) offsets.
 *
 * DCH_SIPHASH_VECTORS, when set, names the vector file to read instead of
 * tests/vectors/siphash.txt, so a check can hand the test a damaged copy and see it fail.
 * DCH_TEST_SEED, when set, replaces the default seed of the random tests.
 */
#include <criterion/criterion.h>
#include <sodium.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dch/siphash.h"
#include "support.h"

#define VECTOR_LINES 64 /* message lengths 0 .. 63 for each variant */
#define DEFAULT_SEED UINT64_C(0x5eed0d0c5a1f0001)

static void reference_key(uint8_t key[16])
{
    for (unsigned i = 0; i < 16; i++)
        key[i] = (uint8_t)i;
}

static void store_le64(uint8_t out[8], uint64_t v)
{
    for (unsigned i = 0; i < 8; i++)
        out[i] = (uint8_t)(v >> (8 * i));
}

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

/* Decode exactly `n` bytes of lowercase hex; 0 on success. */
static int decode_hex(const char *hex, uint8_t *out, size_t n)
{
    if (strlen(hex) != 2 * n)
        return -1;
    for (size_t i = 0; i < n; i++) {
        const int hi = hex_value(hex[2 * i]);
        const int lo = hex_value(hex[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        out[i] = (uint8_t)(hi << 4 | lo);
    }
    return 0;
}

static const char *vector_path(void)
{
    const char *env = getenv("DCH_SIPHASH_VECTORS");
    return (env != NULL && env[0] != '\0') ? env : DCH_SOURCE_DIR "/tests/vectors/siphash.txt";
}

/*
 * Check every line of `variant` (output of `out_len` bytes) in the vector
 * file. Each line's message length must be 0..63 and appear once, so the
 * variant is complete exactly when all 64 lengths were seen.
 */
static void check_vector_file(const char *variant, size_t out_len)
{
    const char *path = vector_path();
    FILE *f = fopen(path, "r");
    cr_assert(f != NULL, "cannot open the SipHash vector file %s", path);

    uint8_t key[16];
    reference_key(key);
    uint8_t msg[VECTOR_LINES];
    for (unsigned i = 0; i < VECTOR_LINES; i++)
        msg[i] = (uint8_t)i;

    uint64_t seen = 0; /* bit n: the line for length n was checked */
    unsigned lines = 0;
    unsigned lineno = 0;
    char line[256];
    while (fgets(line, sizeof line, f) != NULL) {
        lineno++;
        cr_assert(strchr(line, '\n') != NULL || feof(f),
                  "%s:%u: line too long", path, lineno);
        if (line[0] == '#' || strspn(line, " \t\r\n") == strlen(line))
            continue;

        char tag[32];
        char hex[80];
        unsigned len;
        char extra;
        const int fields = sscanf(line, "%31s %u %79s %c", tag, &len, hex, &extra);
        if (fields >= 1 && strcmp(tag, variant) != 0)
            continue;
        cr_assert(fields == 3, "%s:%u: malformed line: %s", path, lineno, line);
        cr_assert(len < VECTOR_LINES, "%s:%u: message length %u out of range",
                  path, lineno, len);
        cr_assert(!(seen >> len & 1), "%s:%u: length %u listed twice", path,
                  lineno, len);

        uint8_t want[16];
        cr_assert(decode_hex(hex, want, out_len) == 0,
                  "%s:%u: output is not %zu bytes of lowercase hex: %s", path,
                  lineno, out_len, hex);

        uint8_t got[16];
        if (out_len == 8)
            store_le64(got, dch_siphash24(key, msg, len));
        else
            dch_siphash24_128(key, msg, len, got);
        cr_assert(memcmp(got, want, out_len) == 0,
                  "%s:%u: %s of the %u-byte message differs from the vector %s",
                  path, lineno, variant, len, hex);

        seen |= UINT64_C(1) << len;
        lines++;
    }
    cr_assert(!ferror(f), "error reading %s", path);
    fclose(f);
    cr_assert(lines == VECTOR_LINES && seen == UINT64_MAX,
              "%s: %u lines of %s, need one for each length 0..%u", path, lines,
              variant, VECTOR_LINES - 1);
}

Test(siphash, matches_every_reference_vector_64)
{
    check_vector_file("siphash-2-4-64", 8);
}

Test(siphash, matches_every_reference_vector_128)
{
    check_vector_file("siphash-2-4-128", 16);
}

Test(siphash, gives_the_paper_example)
{
    uint8_t key[16];
    uint8_t msg[15];
    reference_key(key);
    for (unsigned i = 0; i < sizeof msg; i++)
        msg[i] = (uint8_t)i;
    const uint64_t h = dch_siphash24(key, msg, sizeof msg);
    cr_assert(h == UINT64_C(0xa129ca6149be45e5), "got 0x%016" PRIx64, h);
}

Test(siphash, empty_message_may_be_null)
{
    uint8_t key[16];
    reference_key(key);
    const uint8_t byte = 0x55;
    cr_assert(dch_siphash24(key, NULL, 0) == dch_siphash24(key, &byte, 0));
    /* The first 64-bit vector: 310e0edd47db6f72 read little-endian. */
    cr_assert(dch_siphash24(key, NULL, 0) == UINT64_C(0x726fdb47dd0e0e31));

    uint8_t a[16];
    uint8_t b[16];
    dch_siphash24_128(key, NULL, 0, a);
    dch_siphash24_128(key, &byte, 0, b);
    cr_assert(memcmp(a, b, sizeof a) == 0);
}

#define MAX_LEN 1024
#define MESSAGES 10000

/*
 * Messages of every length 0..1024 once, then random lengths, each at a random
 * offset 0..15 into its buffer and with a random key at a random offset, so
 * loads are misaligned in every way. Outputs are compared as bytes:
 * libsodium writes the 64-bit result little-endian.
 */
Test(siphash, agrees_with_libsodium_on_random_misaligned_input)
{
    cr_assert(sodium_init() >= 0, "libsodium failed to initialise");
    cr_assert(crypto_shorthash_siphash24_BYTES == 8 &&
              crypto_shorthash_siphashx24_BYTES == 16);

    const uint64_t seed = test_seed(DEFAULT_SEED);
    uint64_t rng = seed;
    static uint8_t buf[MAX_LEN + 16];
    uint8_t keybuf[16 + 16];

    for (unsigned i = 0; i < MESSAGES; i++) {
        const size_t len = i <= MAX_LEN ? i : (size_t)(rng_next(&rng) % (MAX_LEN + 1));
        const size_t off = (size_t)(rng_next(&rng) % 16);
        const size_t koff = (size_t)(rng_next(&rng) % 16);
        for (size_t j = 0; j < len; j++)
            buf[off + j] = (uint8_t)rng_next(&rng);
        for (size_t j = 0; j < 16; j++)
            keybuf[koff + j] = (uint8_t)rng_next(&rng);
        const uint8_t *msg = buf + off;
        const uint8_t *key = keybuf + koff;

        uint8_t want[16];
        uint8_t got[16];
        crypto_shorthash_siphash24(want, msg, len, key);
        store_le64(got, dch_siphash24(key, msg, len));
        cr_assert(memcmp(got, want, 8) == 0,
                  "seed %" PRIu64 " message %u: 64-bit output differs "
                  "(length %zu, offset %zu, key offset %zu)",
                  seed, i, len, off, koff);

        crypto_shorthash_siphashx24(want, msg, len, key);
        dch_siphash24_128(key, msg, len, got);
        cr_assert(memcmp(got, want, 16) == 0,
                  "seed %" PRIu64 " message %u: 128-bit output differs "
                  "(length %zu, offset %zu, key offset %zu)",
                  seed, i, len, off, koff);
    }
}

Test(siphash, result_does_not_depend_on_alignment)
{
    uint8_t key[16];
    reference_key(key);
    uint8_t msg[100];
    for (unsigned i = 0; i < sizeof msg; i++)
        msg[i] = (uint8_t)(i * 7 + 3);
    const uint64_t want = dch_siphash24(key, msg, sizeof msg);
    uint8_t want128[16];
    dch_siphash24_128(key, msg, sizeof msg, want128);

    uint8_t buf[sizeof msg + 8];
    for (size_t off = 0; off < 8; off++) {
        memcpy(buf + off, msg, sizeof msg);
        cr_assert(dch_siphash24(key, buf + off, sizeof msg) == want,
                  "offset %zu", off);
        uint8_t got[16];
        dch_siphash24_128(key, buf + off, sizeof msg, got);
        cr_assert(memcmp(got, want128, 16) == 0, "offset %zu", off);
    }
}
