/* SPDX-License-Identifier: MIT */
/* The library's version, as built (the header's macros give the version compiled against). */
#include "dch/dch.h"

const char *dch_version(void)
{
    return DCH_VERSION_STRING;
}

uint32_t dch_version_number(void)
{
    return DCH_VERSION_NUMBER;
}
