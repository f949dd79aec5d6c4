/* SPDX-License-Identifier: MIT */
/*
 * A consumer of an installed libdch: includes the umbrella header, links the
 * library, and checks what it gets back, so a broken install fails here.
 * Exit status 0 only when the runtime version matches the headers and
 * SipHash-2-4 gives the paper's worked example.
 */
#include <dch/dch.h>

#include <stdio.h>
#include <string.h>

int main(void)
{
    uint8_t key[16];
    uint8_t msg[15];
    for (unsigned i = 0; i < sizeof key; i++)
        key[i] = (uint8_t)i;
    for (unsigned i = 0; i < sizeof msg; i++)
        msg[i] = (uint8_t)i;

    const char *version = dch_version();
    const uint64_t hash = dch_siphash24(key, msg, sizeof msg);
    printf("libdch %s (headers %s), siphash24 = 0x%016llx\n", version,
           DCH_VERSION_STRING, (unsigned long long)hash);

    if (strcmp(version, DCH_VERSION_STRING) != 0) {
        fprintf(stderr, "runtime version differs from the headers\n");
        return 1;
    }
    if (hash != UINT64_C(0xa129ca6149be45e5)) {
        fprintf(stderr, "siphash24 differs from 0xa129ca6149be45e5\n");
        return 1;
    }
    return 0;
}
