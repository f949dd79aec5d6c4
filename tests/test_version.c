/* SPDX-License-Identifier: MIT */
/*
 * The version the library reports at run time matches the generated header it
 * was built with, in the form MAJOR.MINOR.PATCH.
 */
#include <criterion/criterion.h>

#include <stdio.h>
#include <string.h>

#include "dch/dch.h"

Test(version, runtime_version_matches_the_header)
{
    const char *v = dch_version();
    cr_assert(v != NULL);
    cr_assert(strcmp(v, DCH_VERSION_STRING) == 0, "dch_version() is \"%s\", header says \"%s\"",
              v, DCH_VERSION_STRING);
}

Test(version, string_is_major_minor_patch)
{
    char expect[64];
    snprintf(expect, sizeof expect, "%d.%d.%d", DCH_VERSION_MAJOR, DCH_VERSION_MINOR,
             DCH_VERSION_PATCH);
    cr_assert(strcmp(DCH_VERSION_STRING, expect) == 0, "\"%s\" is not \"%s\"",
              DCH_VERSION_STRING, expect);
    cr_assert(DCH_VERSION_MAJOR >= 0 && DCH_VERSION_MINOR >= 0 && DCH_VERSION_PATCH >= 0);
}

Test(version, number_is_major_minor_patch_and_matches_the_library)
{
    cr_assert_eq(DCH_VERSION_NUMBER,
                 DCH_VERSION_MAJOR * 10000 + DCH_VERSION_MINOR * 100 + DCH_VERSION_PATCH);
    cr_assert_eq(dch_version_number(), (uint32_t)DCH_VERSION_NUMBER, "library %u, header %u",
                 dch_version_number(), (unsigned)DCH_VERSION_NUMBER);
    /* Usable in #if, as a program guarding a newer call would. */
#if DCH_VERSION_NUMBER < 200
#error "DCH_VERSION_NUMBER is below 0.2.0"
#endif
    cr_assert(DCH_VERSION_MINOR < 100 && DCH_VERSION_PATCH < 100,
              "MINOR and PATCH must stay below 100 for the number to be unique");
}
