/* SPDX-License-Identifier: MIT */
/*
 * Error messages, generated from DCH_ERROR_LIST in include/dch/error.h so that
 * codes and messages cannot drift apart.
 */
#include "dch/error.h"

const char *dch_strerror(int code)
{
    switch (code) {
#define DCH__ERROR_CASE(name, value, message) \
    case value:                               \
        return message;
        DCH_ERROR_LIST(DCH__ERROR_CASE)
#undef DCH__ERROR_CASE
    default:
        return "unknown error";
    }
}
