/* SPDX-License-Identifier: MIT */
/*
 * Argument parsing: the rule every command keeps (before --, a leading '-'
 * always means an option, so `add FILE -x` cannot quietly add a member
 * named "-x"; after --, nothing is an option), and the map commands'
 * options: one table of every option, each command accepting the subset
 * its table entry lists.
 *
 * A '-' alone before -- stands for standard input (or output, where the
 * argument names a map to write). read_args marks it by giving its place
 * in pos the address of stdio_arg rather than of argv's string, so a '-'
 * after -- stays a plain name or key and no command needs to know where
 * the -- was; a file called "-" is ./- anywhere.
 */
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct option_def {
    const char *name;
    int flag;
    int takes_value;
} option_def;

static const option_def option_defs[] = {
    {"json", OPT_JSON, 0},         {"units", OPT_UNITS, 1},
    {"slots", OPT_SLOTS, 1},       {"key", OPT_KEY, 1},
    {"random-key", OPT_RANDOM_KEY, 0}, {"force", OPT_FORCE, 0},
    {"weight", OPT_WEIGHT, 1},     {"ranges", OPT_RANGES, 0},
    {"dry-run", OPT_DRY_RUN, 0},   {"max-slots", OPT_MAX_SLOTS, 1},
    {"write-dir", OPT_WRITE_DIR, 1}, {"replicas", OPT_REPLICAS, 1},
    {"zone", OPT_ZONE, 1},         {"out", OPT_OUT, 1},
};

const char stdio_arg[] = "-";

int is_stdio(const char *arg)
{
    return arg == stdio_arg;
}

int usage_error(const command *cmd, const char *fmt, const char *what)
{
    fprintf(stderr, "dchctl %s: ", cmd->name);
    fprintf(stderr, fmt, what);
    fprintf(stderr, "\nusage: dchctl %s %s\n(see dchctl help %s)\n", cmd->name, cmd->usage,
            cmd->name);
    return EXIT_USAGE;
}

static int bit_index(int flag)
{
    int i = 0;
    while ((1 << i) != flag)
        i++;
    return i;
}

const char *opt_value(const args *a, int flag)
{
    return a->value[bit_index(flag)];
}

/* The option named by s ("--name" or "--name=value"); NULL if none is. */
static const option_def *find_option(const char *s)
{
    const char *name = s + 2;
    const char *eq = strchr(name, '=');
    const size_t nlen = eq ? (size_t)(eq - name) : strlen(name);
    for (size_t k = 0; k < sizeof option_defs / sizeof option_defs[0]; k++)
        if (strlen(option_defs[k].name) == nlen && strncmp(option_defs[k].name, name, nlen) == 0)
            return &option_defs[k];
    return NULL;
}

/* The option argv[*i] (its value possibly in argv[*i + 1]) into the args. */
static int map_option(const command *cmd, void *ctx, int argc, char **argv, int *i)
{
    args *a = ctx;
    const char *s = argv[*i];
    if (s[1] != '-')
        return usage_error(cmd,
                           "unknown option %s (an argument that starts with '-' goes "
                           "after --)",
                           s);
    const option_def *d = find_option(s);
    if (d == NULL || (cmd->options & d->flag) == 0)
        return usage_error(cmd, "unknown option %s", s);
    if (a->given & d->flag)
        return usage_error(cmd, "option %s given twice", s);
    a->given |= d->flag;
    const char *eq = strchr(s + 2, '=');
    if (d->takes_value) {
        const char *v = eq ? eq + 1 : (*i + 1 < argc ? argv[++*i] : NULL);
        if (v == NULL)
            return usage_error(cmd, "option %s needs a value", s);
        a->value[bit_index(d->flag)] = v;
    } else if (eq) {
        return usage_error(cmd, "option %s takes no value", s);
    }
    return 0;
}

int read_args(const command *cmd, int argc, char **argv, option_reader option, void *ctx,
              const char **pos, int room, int *npos)
{
    int options_done = 0;
    for (int i = 0; i < argc; i++) {
        const char *s = argv[i];
        if (!options_done && strcmp(s, "--") == 0) {
            options_done = 1;
        } else if (options_done || s[0] != '-' || s[1] == '\0') {
            if (*npos == room)
                return usage_error(cmd, "%s", "too many arguments");
            pos[(*npos)++] = !options_done && s[0] == '-' ? stdio_arg : s;
        } else {
            const int status = option(cmd, ctx, argc, argv, &i);
            if (status != 0)
                return status;
        }
    }
    if (*npos < cmd->min_pos || (cmd->max_pos >= 0 && *npos > cmd->max_pos))
        return usage_error(cmd, "%s", *npos < cmd->min_pos ? "missing arguments"
                                                           : "too many arguments");
    int dashes = 0;
    for (int k = 0; k < *npos; k++)
        dashes += is_stdio(pos[k]);
    if (dashes > 1)
        return usage_error(cmd, "%s",
                           "'-' (standard input) given twice: it can be read only once "
                           "(a file called - is ./-)");
    return 0;
}

int run_map_command(const command *cmd, int argc, char **argv)
{
    ignore_sigpipe();
    args *a = malloc(sizeof *a);
    if (a == NULL)
        return out_of_memory();
    memset(a, 0, sizeof *a);
    int status = read_args(cmd, argc, argv, map_option, a, a->pos, MAX_ARGS, &a->npos);
    if (status == 0)
        status = cmd->run.map(cmd, a);
    free(a);
    if (fflush(stdout) != 0 && status == 0)
        status = write_error("standard output", errno);
    return status;
}

int parse_u32(const char *s, uint32_t *out)
{
    if (*s == '\0')
        return -1;
    uint64_t v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        v = v * 10 + (uint64_t)(*s - '0');
        if (v > UINT32_MAX)
            return -1;
    }
    *out = (uint32_t)v;
    return 0;
}

int valid_name(const char *s)
{
    size_t n = 0;
    for (; s[n] != '\0'; n++)
        if ((unsigned char)s[n] < 0x20 || (unsigned char)s[n] == 0x7F)
            return 0;
    return n >= 1 && n <= DCH_NAME_MAX;
}

static int hex_digit(char c)
{
    static const char digits[] = "0123456789abcdef";
    const char *p = c != '\0' ? strchr(digits, tolower((unsigned char)c)) : NULL;
    return p != NULL ? (int)(p - digits) : -1;
}

int parse_key(const char *s, uint8_t key[16])
{
    if (strlen(s) != 32)
        return -1;
    for (int i = 0; i < 16; i++) {
        const int hi = hex_digit(s[2 * i]), lo = hex_digit(s[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        key[i] = (uint8_t)(hi << 4 | lo);
    }
    return 0;
}
