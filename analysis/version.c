/* SPDX-License-Identifier: MIT */
/* Prints the version of the libdch it is linked with and of the headers it was built against. */
#include <dch/dch.h>

#include <stdio.h>

int main(void)
{
    printf("libdch %s (headers %s)\n", dch_version(), DCH_VERSION_STRING);
    return 0;
}
