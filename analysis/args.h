/* SPDX-License-Identifier: MIT */
/*
 * Command-line options shared by dch-analysis and dch-bench: every option is
 * "--name value" or "--name=value", except the flags a program lists, which
 * take no value. Messages go to stderr, prefixed with the program's name.
 */
#ifndef DCH_ANALYSIS_ARGS_H
#define DCH_ANALYSIS_ARGS_H

typedef struct an_arg {
    char name[32];     /* "--name", as typed */
    const char *value; /* borrowed from argv; NULL for a flag */
} an_arg;

/**
 * Read the option at argv[*i] into *out and advance *i past it (and past its
 * value when that is the next word). `flags` is a NULL-terminated list of
 * names that take no value.
 * @return 0, or -1 after a message: not an option, or a value missing.
 */
int an_arg_next(const char *prog, int argc, char **argv, int *i,
                const char *const *flags, an_arg *out);

/**
 * A whole decimal (or 0x hexadecimal) number in lo .. hi, as the shared
 * parser reads it (tools/number/number.h: no sign, space or octal).
 * @return 0 with *out set, or -1 after a message naming `opt`.
 */
int an_arg_number(const char *prog, const char *opt, const char *s,
                  unsigned long long lo, unsigned long long hi,
                  unsigned long long *out);

#endif
