/* SPDX-License-Identifier: MIT */
#include "args.h"
#include "number.h"

#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

int an_arg_next(const char *prog, int argc, char **argv, int *i,
                const char *const *flags, an_arg *out)
{
    const char *arg = argv[*i];
    const char *eq = strchr(arg, '=');
    if (strncmp(arg, "--", 2) != 0 ||
        (size_t)(eq ? eq - arg : (ptrdiff_t)strlen(arg)) >= sizeof out->name) {
        fprintf(stderr, "%s: unknown argument '%s' (try --help)\n", prog, arg);
        return -1;
    }
    for (size_t k = 0; eq == NULL && flags != NULL && flags[k] != NULL; k++)
        if (strcmp(arg, flags[k]) == 0) {
            snprintf(out->name, sizeof out->name, "%s", arg);
            out->value = NULL;
            *i += 1;
            return 0;
        }
    if (eq != NULL) {
        memcpy(out->name, arg, (size_t)(eq - arg));
        out->name[eq - arg] = '\0';
        for (size_t k = 0; flags != NULL && flags[k] != NULL; k++)
            if (strcmp(out->name, flags[k]) == 0) {
                fprintf(stderr, "%s: %s takes no value\n", prog, out->name);
                return -1;
            }
        out->value = eq + 1;
        *i += 1;
        return 0;
    }
    snprintf(out->name, sizeof out->name, "%s", arg);
    if (*i + 1 >= argc) {
        fprintf(stderr, "%s: %s needs a value\n", prog, arg);
        return -1;
    }
    out->value = argv[*i + 1];
    *i += 2;
    return 0;
}

int an_arg_number(const char *prog, const char *opt, const char *s,
                  unsigned long long lo, unsigned long long hi,
                  unsigned long long *out)
{
    uint64_t v;
    if (dch__number_parse(s, DCH__NUMBER_HEX, lo, hi, &v) != 0) {
        fprintf(stderr, "%s: %s wants a number in %llu .. %llu, not '%s'\n",
                prog, opt, lo, hi, s);
        return -1;
    }
    *out = v;
    return 0;
}
