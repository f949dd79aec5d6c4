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
#include "number.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
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
    {"primary", OPT_PRIMARY, 0},   {"max-moves", OPT_MAX_MOVES, 1},
    {"count-slack", OPT_COUNT_SLACK, 1}, {"clear", OPT_CLEAR, 0},
};

const char stdio_arg[] = "-";

int is_stdio(const char *arg)
{
    return arg == stdio_arg;
}

int usage_fail(const command *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "dchctl %s: ", cmd->name);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nusage: dchctl %s %s\n(see dchctl help %s)\n", cmd->name, cmd->usage,
            cmd->name);
    return EXIT_USAGE;
}

int usage_error(const command *cmd, const char *fmt, const char *what)
{
    return usage_fail(cmd, fmt, what);
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

/* "unknown option --wieght; did you mean --weight?": the nearest options
 * that cmd takes (suggest.c's rule), or none when none is near. */
static int unknown_option(const command *cmd, const char *s)
{
    const char *eq = strchr(s + 2, '=');
    char typed[64];
    snprintf(typed, sizeof typed, "%.*s", eq ? (int)(eq - s - 2) : (int)strlen(s + 2), s + 2);
    suggestions sg;
    suggest_start(&sg, typed);
    for (size_t k = 0; k < sizeof option_defs / sizeof option_defs[0]; k++)
        if (cmd->options & option_defs[k].flag)
            suggest_consider(&sg, option_defs[k].name);
    suggest_consider(&sg, "help");
    char hint[160];
    suggest_text(&sg, "--", hint, sizeof hint);
    return usage_fail(cmd, "unknown option %s%s", s, hint);
}

/* The option argv[*i] (its value possibly in argv[*i + 1]) into the args. */
static int map_option(const command *cmd, void *ctx, int argc, char **argv, int *i)
{
    args *a = ctx;
    const char *s = argv[*i];
    if (s[1] >= '0' && s[1] <= '9')
        return usage_error(cmd, "%s: numbers take no sign (an argument that starts with '-' "
                                "goes after --)", s);
    if (s[1] != '-')
        return usage_error(cmd,
                           "unknown option %s (an argument that starts with '-' goes "
                           "after --)",
                           s);
    const option_def *d = find_option(s);
    if (d == NULL || (cmd->options & d->flag) == 0)
        return unknown_option(cmd, s);
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

/*
 * Every number the tool reads goes through here, so that all of them refuse
 * the same inputs with the same words (the explorer's too). The digits are
 * read by the parser the tool shares with the other programs (number.h).
 */
int parse_number(const char *s, const number_rule *rule, uint64_t *out)
{
    uint64_t v;
    if (dch__number_parse(s, 0, rule->min, rule->max, &v) != 0 ||
        (rule->power_of_two && (v == 0 || (v & (v - 1)) != 0)))
        return -1;
    *out = v;
    return 0;
}

/* s for a message: control bytes as \xNN (text_string's rule), cut after
 * 40 bytes, so that a refused input cannot garble the terminal. */
static void quote_input(char *buf, size_t n, const char *s)
{
    size_t k = 0;
    for (size_t i = 0; s[i] != '\0' && k + 8 < n; i++) {
        const unsigned char c = (unsigned char)s[i];
        if (i == 40) {
            k += (size_t)snprintf(buf + k, n - k, "...");
            break;
        }
        if (c < 0x20 || c == 0x7F)
            k += (size_t)snprintf(buf + k, n - k, "\\x%02x", c);
        else
            buf[k++] = (char)c;
    }
    buf[k] = '\0';
}

const char *number_refusal(char *buf, size_t n, const number_rule *rule, const char *s)
{
    char shown[64];
    quote_input(shown, sizeof shown, s);
    snprintf(buf, n, "%s must be a %s from %" PRIu64 " to %" PRIu64 ", not \"%s\"", rule->name,
             rule->power_of_two ? "power of two" : "whole number", rule->min, rule->max, shown);
    return buf;
}

int number_arg(const command *cmd, const char *s, const number_rule *rule, uint64_t *out)
{
    if (parse_number(s, rule, out) == 0)
        return 0;
    char msg[256];
    return usage_fail(cmd, "%s", number_refusal(msg, sizeof msg, rule, s));
}

/* What the library asks of a name, checked before any file is read, and
 * each refusal saying which rule the name broke: its length, or the control
 * byte it holds and where. */
int check_name(const command *cmd, const char *what, const char *s)
{
    size_t n = 0;
    for (; s[n] != '\0'; n++) {
        const unsigned char c = (unsigned char)s[n];
        if (c < 0x20 || c == 0x7F) {
            char shown[64];
            quote_input(shown, sizeof shown, s);
            return usage_fail(cmd,
                              "%s \"%s\" holds the control character 0x%02x at byte %zu: a %s "
                              "has 1 to %u bytes and no control character (TAB, newline, ...)",
                              what, shown, c, n + 1, what, DCH_NAME_MAX);
        }
    }
    if (n == 0 || n > DCH_NAME_MAX)
        return usage_fail(cmd, "a %s has 1 to %u bytes, not %zu", what, DCH_NAME_MAX, n);
    return 0;
}

/* ---- Suggestions ------------------------------------------------------ */

/* Levenshtein distance of a and b, or 3 for anything above 2 or for
 * words too long to be a command or an option. */
static unsigned edit_distance(const char *a, const char *b)
{
    enum { LONGEST = 32 };
    const size_t na = strlen(a), nb = strlen(b);
    if (na > LONGEST || nb > LONGEST || (na > nb ? na - nb : nb - na) > 2)
        return 3;
    unsigned row[LONGEST + 1];
    for (size_t j = 0; j <= nb; j++)
        row[j] = (unsigned)j;
    for (size_t i = 1; i <= na; i++) {
        unsigned diag = row[0];
        row[0] = (unsigned)i;
        for (size_t j = 1; j <= nb; j++) {
            const unsigned up = row[j];
            const unsigned sub = diag + (a[i - 1] != b[j - 1]);
            const unsigned del = up + 1, ins = row[j - 1] + 1;
            row[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
            diag = up;
        }
    }
    return row[nb] > 2 ? 3 : row[nb];
}

void suggest_start(suggestions *sg, const char *typed)
{
    memset(sg, 0, sizeof *sg);
    sg->typed = typed;
    sg->best = 3;
}

/*
 * A name is near what was typed when it is at most 2 edits away, or when
 * what was typed begins it (at least 2 bytes: "re" for "remove"), which
 * ranks with 1 edit. The nearest names are kept, ties in the order given.
 */
void suggest_consider(suggestions *sg, const char *name)
{
    const size_t n = strlen(sg->typed);
    unsigned d = edit_distance(sg->typed, name);
    if (n >= 2 && n < strlen(name) && strncmp(sg->typed, name, n) == 0 && d > 1)
        d = 1;
    if (d > 2 || d > sg->best || sg->typed[0] == '\0')
        return;
    if (d < sg->best) {
        sg->best = d;
        sg->n = 0;
    }
    if (sg->n < sizeof sg->name / sizeof sg->name[0])
        sg->name[sg->n++] = name;
}

const char *suggest_text(const suggestions *sg, const char *prefix, char *buf, size_t size)
{
    buf[0] = '\0';
    size_t k = 0;
    for (size_t i = 0; i < sg->n && k < size; i++)
        k += (size_t)snprintf(buf + k, size - k, "%s%s%s%s", i == 0 ? "; did you mean " : " or ",
                              prefix, sg->name[i], i + 1 == sg->n ? "?" : "");
    return buf;
}
