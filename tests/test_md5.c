/* SPDX-License-Identifier: MIT */
/*
 * MD5 against the test suite of RFC 1321 (appendix A.5), kept as data in
 * tests/golden/md5-rfc1321.txt, and against the well-known digest of a
 * million 'a's, which runs through 15,625 blocks. The digests at every
 * padding boundary are checked against libmemcached's own MD5 by the interop
 * test.
 *
 * DCH_MD5_VECTORS, when set, names the vector file to read instead, so a
 * check can hand the test a damaged copy and see it fail.
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "md5.h"
#include "support.h"

#define RFC_VECTORS 7

static void to_hex(const uint8_t d[16], char out[33])
{
    static const char digits[] = "0123456789abcdef";
    for (unsigned i = 0; i < 16; i++) {
        out[2 * i] = digits[d[i] >> 4];
        out[2 * i + 1] = digits[d[i] & 15];
    }
    out[32] = '\0';
}

Test(md5, matches_the_rfc_1321_test_suite)
{
    const char *env = getenv("DCH_MD5_VECTORS");
    const char *path = env ? env : DCH_SOURCE_DIR "/tests/golden/md5-rfc1321.txt";
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "cannot open %s", path);
    char line[256];
    unsigned lineno = 0, checked = 0, bad = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        lineno++;
        line[strcspn(line, "\r\n")] = '\0';
        if (line[0] == '#' || line[0] == '\0')
            continue;
        /* "<32 hex digits> <message>"; an editor may have eaten the space
         * after the digest of the empty message. */
        cr_assert(strlen(line) >= 32 && (line[32] == ' ' || line[32] == '\0'),
                  "%s:%u: malformed line", path, lineno);
        const char *msg = line[32] == ' ' ? line + 33 : line + 32;
        uint8_t d[16];
        char hex[33];
        dch__md5(msg, strlen(msg), d);
        to_hex(d, hex);
        if (memcmp(hex, line, 32) != 0) {
            cr_log_error("%s:%u: MD5(\"%s\") is %s, the file says %.32s",
                         path, lineno, msg, hex, line);
            bad++;
        }
        checked++;
    }
    fclose(f);
    cr_assert_eq(bad, 0, "%u of %u vectors differ", bad, checked);
    cr_assert_eq(checked, RFC_VECTORS, "%s holds %u vectors, the RFC has %u",
                 path, checked, RFC_VECTORS);
}

Test(md5, digests_a_million_as)
{
    size_t n = 1000000;
    char *buf = xmalloc(n);
    memset(buf, 'a', n);
    uint8_t d[16];
    char hex[33];
    dch__md5(buf, n, d);
    free(buf);
    to_hex(d, hex);
    cr_assert_str_eq(hex, "7707d6ae4e027c70eea2a935c2296f21");
}

Test(md5, takes_null_for_an_empty_message)
{
    uint8_t d[16];
    char hex[33];
    dch__md5(NULL, 0, d);
    to_hex(d, hex);
    cr_assert_str_eq(hex, "d41d8cd98f00b204e9800998ecf8427e");
}
