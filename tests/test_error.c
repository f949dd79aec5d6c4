/* SPDX-License-Identifier: MIT */
/*
 * Error codes and their messages, checked against the single list they are
 * generated from (DCH_ERROR_LIST): codes are distinct, DCH_OK is 0 and every
 * other code is negative, and dch_strerror gives each code its own message and
 * never returns NULL.
 */
#include <criterion/criterion.h>

#include <limits.h>
#include <string.h>

#include "dch/error.h"

typedef struct listed_error {
    const char *name;
    int code;
    const char *message;
} listed_error;

static const listed_error errors[] = {
#define LISTED(name, value, message) {#name, name, message},
    DCH_ERROR_LIST(LISTED)
#undef LISTED
};
#define ERROR_COUNT (sizeof errors / sizeof errors[0])

Test(error, ok_is_zero_and_every_other_code_is_negative)
{
    cr_assert(DCH_OK == 0);
    cr_assert(ERROR_COUNT >= 2);
    cr_assert(strcmp(errors[0].name, "DCH_OK") == 0 && errors[0].code == 0,
              "DCH_OK must open the list");
    for (size_t i = 1; i < ERROR_COUNT; i++)
        cr_assert(errors[i].code < 0, "%s is %d, not negative", errors[i].name,
                  errors[i].code);
}

Test(error, codes_are_distinct)
{
    for (size_t i = 0; i < ERROR_COUNT; i++)
        for (size_t j = i + 1; j < ERROR_COUNT; j++)
            cr_assert(errors[i].code != errors[j].code, "%s and %s are both %d",
                      errors[i].name, errors[j].name, errors[i].code);
}

Test(error, every_code_has_its_own_message)
{
    for (size_t i = 0; i < ERROR_COUNT; i++) {
        const char *msg = dch_strerror(errors[i].code);
        cr_assert(msg != NULL, "%s has no message", errors[i].name);
        cr_assert(msg[0] != '\0', "%s has an empty message", errors[i].name);
        cr_assert(strcmp(msg, errors[i].message) == 0,
                  "%s gives \"%s\", the list says \"%s\"", errors[i].name, msg,
                  errors[i].message);
        for (size_t j = 0; j < i; j++)
            cr_assert(strcmp(msg, dch_strerror(errors[j].code)) != 0,
                      "%s and %s share the message \"%s\"", errors[i].name,
                      errors[j].name, msg);
    }
}

Test(error, unknown_codes_get_a_message_of_their_own)
{
    const int unknown[] = {1, 2, 42, -100, -1000, INT_MAX, INT_MIN, INT_MIN + 1};
    for (size_t u = 0; u < sizeof unknown / sizeof unknown[0]; u++) {
        int listed = 0;
        for (size_t i = 0; i < ERROR_COUNT; i++)
            listed |= errors[i].code == unknown[u];
        if (listed)
            continue;
        const char *msg = dch_strerror(unknown[u]);
        cr_assert(msg != NULL, "code %d gives NULL", unknown[u]);
        cr_assert(msg[0] != '\0', "code %d gives an empty message", unknown[u]);
        for (size_t i = 0; i < ERROR_COUNT; i++)
            cr_assert(strcmp(msg, errors[i].message) != 0,
                      "unknown code %d reads as %s", unknown[u], errors[i].name);
    }
}

Test(error, never_returns_null_around_the_listed_codes)
{
    int lowest = 0;
    for (size_t i = 0; i < ERROR_COUNT; i++)
        if (errors[i].code < lowest)
            lowest = errors[i].code;
    for (int code = lowest - 8; code <= 8; code++)
        cr_assert(dch_strerror(code) != NULL, "code %d gives NULL", code);
}
