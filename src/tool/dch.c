/*
 * dch: keep a DCH partition map in a file, change it, inspect it, and plan
 * the migration between two versions of it.
 *
 * Every change loads FILE, changes a copy, writes the copy back atomically
 * (dch_map_save_file) and prints the plan it implies (dch_map_diff between
 * the two), so an operator always sees what will move. Read commands take
 * --json. Exit status: 0 success, 1 a runtime error (a file that cannot be
 * read or written, a damaged map, a name in use or missing), 2 a usage
 * error. Uses only the public API of libdch.
 *
 * dch does not lock FILE: two changes run at once may lose one of them.
 * Serialise changes (one operator, or a lock held around each command).
 */
#include "dch/dch.h"
#ifdef DCH_TOOL_ETCD
#include "etcd_cmds.h"
#endif

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXIT_RUNTIME 1
#define EXIT_USAGE 2

/* ---- Options ---------------------------------------------------------- */

enum {
    OPT_JSON = 1 << 0,
    OPT_UNITS = 1 << 1,
    OPT_SLOTS = 1 << 2,
    OPT_KEY = 1 << 3,
    OPT_RANDOM_KEY = 1 << 4,
    OPT_FORCE = 1 << 5,
    OPT_WEIGHT = 1 << 6,
    OPT_RANGES = 1 << 7,
    OPT_DRY_RUN = 1 << 8,
    OPT_MAX_SLOTS = 1 << 9,
    OPT_WRITE_DIR = 1 << 10,
};

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
    {"write-dir", OPT_WRITE_DIR, 1},
};

#define MAX_ARGS 4096

typedef struct args {
    int given; /* OPT_* flags present */
    const char *value[16]; /* value of each option that takes one, by bit */
    const char *pos[MAX_ARGS];
    int npos;
} args;

typedef struct command command;
typedef int (*handler)(const command *cmd, const args *a);

struct command {
    const char *name;
    const char *usage; /* arguments after the command name */
    const char *summary;
    const char *help; /* details, one option or remark a line */
    int min_pos, max_pos; /* positional arguments; max -1 means any */
    int options; /* OPT_* accepted */
    handler run;
};

static int usage_error(const command *cmd, const char *fmt, const char *what)
{
    fprintf(stderr, "dch %s: ", cmd->name);
    fprintf(stderr, fmt, what);
    fprintf(stderr, "\nusage: dch %s %s\n(see dch help %s)\n", cmd->name, cmd->usage,
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

/* Split argv into options and positional arguments; EXIT_USAGE on error. */
static int parse_args(const command *cmd, int argc, char **argv, args *a)
{
    memset(a, 0, sizeof *a);
    int options_done = 0;
    for (int i = 0; i < argc; i++) {
        const char *s = argv[i];
        if (!options_done && strcmp(s, "--") == 0) {
            options_done = 1;
            continue;
        }
        if (options_done || s[0] != '-') {
            if (a->npos == MAX_ARGS)
                return usage_error(cmd, "%s", "too many arguments");
            a->pos[a->npos++] = s;
            continue;
        }
        /* Before --, a leading '-' always means an option: `add FILE -x` must
         * not quietly add a member named "-x". */
        if (s[1] != '-')
            return usage_error(cmd,
                               "unknown option %s (an argument that starts with '-' goes "
                               "after --)",
                               s);
        const char *name = s + 2;
        const char *eq = strchr(name, '=');
        const size_t nlen = eq ? (size_t)(eq - name) : strlen(name);
        const option_def *d = NULL;
        for (size_t k = 0; k < sizeof option_defs / sizeof option_defs[0]; k++)
            if (strlen(option_defs[k].name) == nlen &&
                strncmp(option_defs[k].name, name, nlen) == 0)
                d = &option_defs[k];
        if (d == NULL || (cmd->options & d->flag) == 0)
            return usage_error(cmd, "unknown option %s", s);
        if (a->given & d->flag)
            return usage_error(cmd, "option %s given twice", s);
        a->given |= d->flag;
        if (d->takes_value) {
            const char *v = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
            if (v == NULL)
                return usage_error(cmd, "option %s needs a value", s);
            a->value[bit_index(d->flag)] = v;
        } else if (eq) {
            return usage_error(cmd, "option %s takes no value", s);
        }
    }
    if (a->npos < cmd->min_pos || (cmd->max_pos >= 0 && a->npos > cmd->max_pos))
        return usage_error(cmd, "%s", a->npos < cmd->min_pos ? "missing arguments"
                                                             : "too many arguments");
    return 0;
}

static const char *opt_value(const args *a, int flag)
{
    return a->value[bit_index(flag)];
}

/* Strict decimal u32: digits only, no sign, no overflow. */
static int parse_u32(const char *s, uint32_t *out)
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

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static int parse_key(const char *s, uint8_t key[16])
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

/* ---- Output helpers --------------------------------------------------- */

static void print_hex(FILE *f, const uint8_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%02x", b[i]);
}

/* Whether s is valid UTF-8 (shortest forms, no surrogates, <= U+10FFFF). */
static int valid_utf8(const unsigned char *s)
{
    while (*s) {
        const unsigned c = *s;
        unsigned n, min;
        if (c < 0x80) {
            s++;
            continue;
        } else if ((c & 0xE0) == 0xC0) {
            n = 1;
            min = 0x80;
        } else if ((c & 0xF0) == 0xE0) {
            n = 2;
            min = 0x800;
        } else if ((c & 0xF8) == 0xF0) {
            n = 3;
            min = 0x10000;
        } else {
            return 0;
        }
        unsigned cp = c & (0x3Fu >> n);
        for (unsigned i = 1; i <= n; i++) {
            if ((s[i] & 0xC0) != 0x80)
                return 0;
            cp = cp << 6 | (s[i] & 0x3Fu);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return 0;
        s += n + 1;
    }
    return 1;
}

/*
 * A JSON string. Names and keys are bytes: valid UTF-8 passes through, and a
 * string that is not valid UTF-8 has each byte >= 0x80 written as \u00XX
 * (read as Latin-1), so the output is always valid JSON. NULL is null.
 */
static void json_string(FILE *f, const char *s)
{
    if (s == NULL) {
        fputs("null", f);
        return;
    }
    const int utf8 = valid_utf8((const unsigned char *)s);
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p == '\n')
            fputs("\\n", f);
        else if (*p == '\t')
            fputs("\\t", f);
        else if (*p < 0x20 || *p == 0x7F || (*p >= 0x80 && !utf8))
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

/*
 * Text for a line-oriented output: control bytes (below 0x20, and 0x7f) are
 * written as \xNN so that a key cannot forge a column or a line. Member
 * names never hold them (the library refuses such names).
 */
static void text_string(FILE *f, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p < 0x20 || *p == 0x7F)
            fprintf(f, "\\x%02x", *p);
        else
            fputc(*p, f);
    }
}

/* Whether a member name is valid: 1 .. DCH_NAME_MAX bytes, no control byte. */
static int valid_name(const char *s)
{
    size_t n = 0;
    for (; s[n] != '\0'; n++)
        if ((unsigned char)s[n] < 0x20 || (unsigned char)s[n] == 0x7F)
            return 0;
    return n >= 1 && n <= DCH_NAME_MAX;
}

static double absd(double x)
{
    return x < 0 ? -x : x;
}

static const char *or_dash(const char *s)
{
    return s ? s : "-";
}

/* ---- Loading and saving ----------------------------------------------- */

/*
 * What went wrong with a file: for DCH_EIO the system's own reason (errno,
 * e.g. "No such file or directory"), which says more than "input/output
 * error"; otherwise the library's message (a damaged map, a newer version).
 */
static const char *file_error_cause(int rc, int err)
{
    return rc == DCH_EIO && err != 0 ? strerror(err) : dch_strerror(rc);
}

static int report_file_error(const char *path, int rc, int err)
{
    fprintf(stderr, "dch: %s: %s\n", path, file_error_cause(rc, err));
    return EXIT_RUNTIME;
}

static int load(const char *path, dch_map **m)
{
    errno = 0;
    const int rc = dch_map_load_file(m, path);
    return rc == DCH_OK ? 0 : report_file_error(path, rc, errno);
}

/* ---- Plans ------------------------------------------------------------ */

typedef struct transfer {
    const char *from, *to;
    uint64_t lo, hi;
    uint64_t slots;
} transfer;

typedef struct plan {
    transfer *moves; /* in hash order */
    size_t n, cap;
    unsigned bits; /* log2 P */
    uint32_t P;
    int failed; /* out of memory */
} plan;

static int collect_move(const dch_move *mv, void *ctx)
{
    plan *p = ctx;
    if (p->n == p->cap) {
        const size_t cap = p->cap ? 2 * p->cap : 64;
        transfer *t = realloc(p->moves, cap * sizeof *t);
        if (t == NULL) {
            p->failed = 1;
            return 1;
        }
        p->moves = t;
        p->cap = cap;
    }
    transfer *t = &p->moves[p->n++];
    t->from = mv->from;
    t->to = mv->to;
    t->lo = mv->lo;
    t->hi = mv->hi;
    t->slots = p->bits == 0 ? 1 : ((mv->hi - mv->lo) >> (64 - p->bits)) + 1;
    return 0;
}

static int name_cmp(const char *a, const char *b)
{
    if (a == NULL || b == NULL)
        return (a != NULL) - (b != NULL);
    return strcmp(a, b);
}

static int transfer_cmp(const void *x, const void *y)
{
    const transfer *a = x, *b = y;
    const int c = name_cmp(a->from, b->from);
    return c != 0 ? c : name_cmp(a->to, b->to);
}

/* Moves summed per (from, to) pair, sorted by names; the caller frees. */
static transfer *plan_totals(const plan *p, size_t *count)
{
    transfer *t = malloc((p->n ? p->n : 1) * sizeof *t);
    if (t == NULL)
        return NULL;
    if (p->n)
        memcpy(t, p->moves, p->n * sizeof *t);
    qsort(t, p->n, sizeof *t, transfer_cmp);
    size_t k = 0;
    for (size_t i = 0; i < p->n; i++) {
        if (k > 0 && transfer_cmp(&t[k - 1], &t[i]) == 0)
            t[k - 1].slots += t[i].slots;
        else
            t[k++] = t[i];
    }
    *count = k;
    return t;
}

static int make_plan(const dch_map *from, const dch_map *to, plan *p)
{
    memset(p, 0, sizeof *p);
    p->P = dch_map_slot_count(from);
    while ((UINT32_C(1) << p->bits) < p->P)
        p->bits++;
    const int rc = dch_map_diff(from, to, collect_move, p);
    if (p->failed) {
        fputs("dch: out of memory\n", stderr);
        return EXIT_RUNTIME;
    }
    if (rc != DCH_OK) {
        fputs("dch: the maps differ in units, slots per unit or hash key: no "
              "plan by hash ranges exists between them\n",
              stderr);
        return EXIT_RUNTIME;
    }
    return 0;
}

static uint64_t plan_moved(const plan *p)
{
    uint64_t s = 0;
    for (size_t i = 0; i < p->n; i++)
        s += p->moves[i].slots;
    return s;
}

/* The plan as text: totals per pair, then (with ranges) every range. */
static int print_plan_text(const plan *p, int ranges)
{
    size_t nt;
    transfer *t = plan_totals(p, &nt);
    if (t == NULL) {
        fputs("dch: out of memory\n", stderr);
        return EXIT_RUNTIME;
    }
    const uint64_t moved = plan_moved(p);
    printf("plan: %" PRIu64 " of %" PRIu32 " slots move (%.4f%% of the ring) in %zu range%s\n",
           moved, p->P, 100.0 * (double)moved / p->P, p->n, p->n == 1 ? "" : "s");
    for (size_t i = 0; i < nt; i++)
        printf("  %s -> %s: %" PRIu64 "/%" PRIu32 " slots (%.4f%%)\n", or_dash(t[i].from),
               or_dash(t[i].to), t[i].slots, p->P, 100.0 * (double)t[i].slots / p->P);
    if (ranges)
        for (size_t i = 0; i < p->n; i++)
            printf("  0x%016" PRIx64 "..0x%016" PRIx64 " %s -> %s\n", p->moves[i].lo,
                   p->moves[i].hi, or_dash(p->moves[i].from), or_dash(p->moves[i].to));
    free(t);
    return 0;
}

/* The plan as JSON members of an object that the caller opened. */
static int print_plan_json(const plan *p)
{
    size_t nt;
    transfer *t = plan_totals(p, &nt);
    if (t == NULL) {
        fputs("dch: out of memory\n", stderr);
        return EXIT_RUNTIME;
    }
    const uint64_t moved = plan_moved(p);
    printf("\"slots\": %" PRIu32 ", \"moved_slots\": %" PRIu64 ", \"moved_fraction\": %.17g,\n",
           p->P, moved, (double)moved / p->P);
    printf("  \"transfers\": [");
    for (size_t i = 0; i < nt; i++) {
        printf("%s\n    {\"from\": ", i ? "," : "");
        json_string(stdout, t[i].from);
        printf(", \"to\": ");
        json_string(stdout, t[i].to);
        printf(", \"slots\": %" PRIu64 ", \"fraction\": %.17g}", t[i].slots,
               (double)t[i].slots / p->P);
    }
    printf("%s],\n  \"ranges\": [", nt ? "\n  " : "");
    for (size_t i = 0; i < p->n; i++) {
        printf("%s\n    {\"lo\": \"0x%016" PRIx64 "\", \"hi\": \"0x%016" PRIx64 "\", \"from\": ",
               i ? "," : "", p->moves[i].lo, p->moves[i].hi);
        json_string(stdout, p->moves[i].from);
        printf(", \"to\": ");
        json_string(stdout, p->moves[i].to);
        printf("}");
    }
    printf("%s]", p->n ? "\n  " : "");
    free(t);
    return 0;
}

/* ---- Commands --------------------------------------------------------- */

static int random_key(uint8_t key[16])
{
    FILE *f = fopen("/dev/urandom", "rb");
    if (f == NULL)
        return -1;
    const size_t got = fread(key, 1, 16, f);
    fclose(f);
    return got == 16 ? 0 : -1;
}

static int cmd_init(const command *cmd, const args *a)
{
    const char *path = a->pos[0];
    dch_map_config cfg;
    dch_map_config_default(&cfg);
    if ((a->given & OPT_UNITS) &&
        (parse_u32(opt_value(a, OPT_UNITS), &cfg.units) != 0 || cfg.units == 0 ||
         (cfg.units & (cfg.units - 1)) != 0))
        return usage_error(cmd, "--units %s: not a power of two from 1 to 2^31",
                           opt_value(a, OPT_UNITS));
    if ((a->given & OPT_SLOTS) &&
        (parse_u32(opt_value(a, OPT_SLOTS), &cfg.slots_per_unit) != 0 ||
         cfg.slots_per_unit == 0 || (cfg.slots_per_unit & (cfg.slots_per_unit - 1)) != 0))
        return usage_error(cmd, "--slots %s: not a power of two from 1 to 2^31",
                           opt_value(a, OPT_SLOTS));
    if ((uint64_t)cfg.units * cfg.slots_per_unit > DCH_MAP_MAX_SLOTS)
        return usage_error(cmd, "%s", "units * slots per unit exceeds 2^24");
    if ((a->given & OPT_KEY) && (a->given & OPT_RANDOM_KEY))
        return usage_error(cmd, "%s", "--key and --random-key exclude each other");
    if ((a->given & OPT_KEY) && parse_key(opt_value(a, OPT_KEY), cfg.hash_key) != 0)
        return usage_error(cmd, "--key %s: not 32 hex digits", opt_value(a, OPT_KEY));
    if ((a->given & OPT_RANDOM_KEY) && random_key(cfg.hash_key) != 0) {
        fprintf(stderr, "dch: /dev/urandom: cannot read a random key (%s)\n", strerror(errno));
        return EXIT_RUNTIME;
    }
    if (!(a->given & OPT_FORCE)) {
        FILE *f = fopen(path, "rb");
        if (f != NULL) {
            fclose(f);
            fprintf(stderr, "dch: %s: already exists (--force replaces it)\n", path);
            return EXIT_RUNTIME;
        }
    }
    dch_map *m;
    int rc = dch_map_new(&m, &cfg);
    if (rc != DCH_OK) {
        fprintf(stderr, "dch: %s\n", dch_strerror(rc));
        return EXIT_RUNTIME;
    }
    errno = 0;
    rc = dch_map_save_file(m, path);
    int status = 0;
    if (rc != DCH_OK)
        status = report_file_error(path, rc, errno);
    else if (a->given & OPT_JSON) {
        printf("{\"file\": ");
        json_string(stdout, path);
        printf(", \"units\": %" PRIu32 ", \"slots_per_unit\": %" PRIu32
               ", \"fingerprint\": \"%016" PRIx64 "\"}\n",
               cfg.units, cfg.slots_per_unit, dch_map_fingerprint(m));
    } else
        printf("%s: new map, %" PRIu32 " units of %" PRIu32 " slots, fingerprint %016" PRIx64
               "\n",
               path, cfg.units, cfg.slots_per_unit, dch_map_fingerprint(m));
    dch_map_free(m);
    return status;
}

typedef enum change_kind { CHANGE_ADD, CHANGE_REMOVE, CHANGE_WEIGHT } change_kind;

/* Load FILE, apply one change to a copy, write it, print the plan. */
static int change(const command *cmd, const args *a, change_kind kind)
{
    const char *path = a->pos[0], *name = a->pos[1];
    uint32_t weight = 1;
    const char *wtext = kind == CHANGE_WEIGHT ? a->pos[2]
                        : (a->given & OPT_WEIGHT) ? opt_value(a, OPT_WEIGHT)
                                                  : NULL;
    if (wtext != NULL && parse_u32(wtext, &weight) != 0)
        return usage_error(cmd, "weight %s: not an integer from 0 to 4294967295", wtext);
    if (!valid_name(name))
        return usage_error(cmd, "%s",
                           "a name has 1 to 255 bytes and no control character (TAB, newline, ...)");

    dch_map *old, *m = NULL;
    int status = load(path, &old);
    if (status != 0)
        return status;
    int rc = dch_map_clone(&m, old);
    uint32_t id = 0;
    if (rc == DCH_OK) {
        if (kind == CHANGE_ADD) {
            rc = dch_map_add_node(m, name, weight, &id);
        } else {
            rc = dch_map_find_node(m, name, &id);
            if (rc == DCH_OK)
                rc = kind == CHANGE_REMOVE ? dch_map_remove_node(m, id)
                                           : dch_map_set_weight(m, id, weight);
        }
        if (rc != DCH_OK)
            fprintf(stderr, "dch: %s: %s: %s\n", path, name, dch_strerror(rc));
    } else {
        fprintf(stderr, "dch: %s\n", dch_strerror(rc));
    }
    const int dry = (a->given & OPT_DRY_RUN) != 0;
    if (rc == DCH_OK && !dry) {
        errno = 0;
        rc = dch_map_save_file(m, path);
        if (rc != DCH_OK)
            report_file_error(path, rc, errno);
    }
    plan p;
    memset(&p, 0, sizeof p);
    if (rc != DCH_OK)
        status = EXIT_RUNTIME;
    else
        status = make_plan(old, m, &p);
    if (status == 0) {
        static const char *const verbs[][2] = {{"added", "add"}, {"removed", "remove"},
                                               {"reweighted", "reweigh"}};
        const uint64_t fp = dch_map_fingerprint(m);
        if (a->given & OPT_JSON) {
            printf("{\"file\": ");
            json_string(stdout, path);
            printf(", \"change\": \"%s\", \"name\": ", cmd->name);
            json_string(stdout, name);
            printf(", \"weight\": %" PRIu32 ", \"written\": %s, \"epoch\": %" PRIu64
                   ", \"fingerprint\": \"%016" PRIx64 "\",\n  ",
                   dch_map_node_weight(m, id), dry ? "false" : "true", dch_map_epoch(m), fp);
            status = print_plan_json(&p);
            printf("}\n");
        } else {
            printf("%s%s %s", dry ? "dry run: " : "", verbs[kind][dry], name);
            if (kind != CHANGE_REMOVE)
                printf(" (weight %" PRIu32 ")", weight);
            printf(": %s %s epoch %" PRIu64 ", fingerprint %016" PRIx64 "\n", path,
                   dry ? "unchanged; the new map would be at" : "now at", dch_map_epoch(m), fp);
            status = print_plan_text(&p, (a->given & OPT_RANGES) != 0);
        }
    }
    free(p.moves);
    dch_map_free(m);
    dch_map_free(old);
    return status;
}

static int cmd_add(const command *cmd, const args *a)
{
    return change(cmd, a, CHANGE_ADD);
}

static int cmd_remove(const command *cmd, const args *a)
{
    return change(cmd, a, CHANGE_REMOVE);
}

static int cmd_weight(const command *cmd, const args *a)
{
    return change(cmd, a, CHANGE_WEIGHT);
}

/* Per member: slots, and the fewest and most slots it holds in a unit. */
typedef struct balance {
    uint32_t unit_min, unit_max;
    uint32_t present; /* units where it holds a slot */
} balance;

static int measure_balance(const dch_map *m, balance *b)
{
    dch_map_config cfg;
    dch_map_get_config(m, &cfg);
    const uint32_t limit = dch_map_id_limit(m);
    uint32_t *cnt = calloc(limit ? limit : 1, sizeof *cnt);
    uint32_t *touched = malloc(cfg.slots_per_unit * sizeof *touched);
    if (cnt == NULL || touched == NULL) {
        free(cnt);
        free(touched);
        return -1;
    }
    for (uint32_t id = 0; id < limit; id++)
        b[id] = (balance){UINT32_MAX, 0, 0};
    for (uint32_t u = 0; u < cfg.units; u++) {
        uint32_t nt = 0;
        for (uint32_t i = 0; i < cfg.slots_per_unit; i++) {
            const uint32_t o = dch_map_slot_owner(m, u * cfg.slots_per_unit + i);
            if (o != DCH_NODE_NONE && cnt[o]++ == 0)
                touched[nt++] = o;
        }
        for (uint32_t i = 0; i < nt; i++) {
            balance *x = &b[touched[i]];
            const uint32_t c = cnt[touched[i]];
            x->unit_min = c < x->unit_min ? c : x->unit_min;
            x->unit_max = c > x->unit_max ? c : x->unit_max;
            x->present++;
            cnt[touched[i]] = 0;
        }
    }
    /* A member absent from some unit holds 0 slots there. */
    for (uint32_t id = 0; id < limit; id++)
        if (b[id].present < cfg.units)
            b[id].unit_min = 0;
    free(cnt);
    free(touched);
    return 0;
}

static int cmd_show(const command *cmd, const args *a)
{
    (void)cmd;
    const char *path = a->pos[0];
    dch_map *m;
    int status = load(path, &m);
    if (status != 0)
        return status;
    dch_map_config cfg;
    dch_map_get_config(m, &cfg);
    const uint32_t limit = dch_map_id_limit(m), P = dch_map_slot_count(m);
    const double W = dch_map_total_weight(m);
    balance *b = malloc((limit ? limit : 1) * sizeof *b);
    if (b == NULL || measure_balance(m, b) != 0) {
        fputs("dch: out of memory\n", stderr);
        free(b);
        dch_map_free(m);
        return EXIT_RUNTIME;
    }
    /* Worst deviations from the ideal shares over the members. */
    double worst = 0, worst_unit = 0;
    for (uint32_t id = 0; id < limit; id++) {
        if (dch_map_node_name(m, id) == NULL || W == 0)
            continue;
        const double w = dch_map_node_weight(m, id);
        const double dev = dch_map_node_slots(m, id) - P * w / W;
        const double s = cfg.slots_per_unit * w / W;
        worst = absd(dev) > worst ? absd(dev) : worst;
        worst_unit = absd(b[id].unit_min - s) > worst_unit ? absd(b[id].unit_min - s) : worst_unit;
        worst_unit = absd(b[id].unit_max - s) > worst_unit ? absd(b[id].unit_max - s) : worst_unit;
    }
    const uint64_t fp = dch_map_fingerprint(m);
    const int json = (a->given & OPT_JSON) != 0;
    dch_map_transition tr;
    const int moving = dch_map_in_transition(m, &tr);
    if (json) {
        printf("{\"file\": ");
        json_string(stdout, path);
        printf(", \"units\": %" PRIu32 ", \"slots_per_unit\": %" PRIu32 ", \"slots\": %" PRIu32
               ", \"hash_key\": \"",
               cfg.units, cfg.slots_per_unit, P);
        print_hex(stdout, cfg.hash_key, 16);
        printf("\", \"epoch\": %" PRIu64 ", \"fingerprint\": \"%016" PRIx64
               "\", \"member_count\": %" PRIu32 ", \"total_weight\": %" PRIu32
               ", \"max_deviation_slots\": %.17g, \"max_unit_deviation_slots\": %.17g,\n",
               dch_map_epoch(m), fp, dch_map_node_count(m), dch_map_total_weight(m), worst,
               worst_unit);
        if (moving)
            printf("  \"transition\": {\"step\": %" PRIu32 ", \"steps\": %" PRIu32
                   ", \"target_fingerprint\": \"%016" PRIx64 "\"},\n",
                   tr.step, tr.steps, tr.target_fingerprint);
        printf("  \"members\": [");
    } else {
        printf("file:          %s\n", path);
        printf("units:         %" PRIu32 "\n", cfg.units);
        printf("slots/unit:    %" PRIu32 "\n", cfg.slots_per_unit);
        printf("slots:         %" PRIu32 "\n", P);
        printf("hash key:      ");
        print_hex(stdout, cfg.hash_key, 16);
        printf("\nepoch:         %" PRIu64 "\n", dch_map_epoch(m));
        printf("fingerprint:   %016" PRIx64 "\n", fp);
        printf("members:       %" PRIu32 ", total weight %" PRIu32 "\n", dch_map_node_count(m),
               dch_map_total_weight(m));
        printf("balance:       worst |slots - ideal| %.3f slots, worst per-unit %.3f slots\n",
               worst, worst_unit);
        if (moving)
            printf("transition:    step %" PRIu32 " of %" PRIu32 " towards %016" PRIx64 "\n",
                   tr.step, tr.steps, tr.target_fingerprint);
        if (limit > 0)
            printf("\n%6s %-16s %10s %9s %9s %9s %9s %10s %9s\n", "id", "name", "weight",
                   "slots", "share%", "ideal%", "dev", "unit", "ideal/u");
    }
    int first = 1;
    for (uint32_t id = 0; id < limit; id++) {
        const char *name = dch_map_node_name(m, id);
        if (name == NULL)
            continue;
        const double w = dch_map_node_weight(m, id);
        const uint32_t slots = dch_map_node_slots(m, id);
        const double ideal = W > 0 ? P * w / W : 0, ideal_unit = W > 0 ? cfg.slots_per_unit * w / W : 0;
        const uint32_t umin = b[id].present ? b[id].unit_min : 0;
        if (json) {
            printf("%s\n    {\"id\": %" PRIu32 ", \"name\": ", first ? "" : ",", id);
            json_string(stdout, name);
            printf(", \"weight\": %" PRIu32 ", \"slots\": %" PRIu32
                   ", \"share\": %.17g, \"ideal_share\": %.17g, \"deviation_slots\": %.17g"
                   ", \"unit_min\": %" PRIu32 ", \"unit_max\": %" PRIu32
                   ", \"unit_ideal\": %.17g}",
                   dch_map_node_weight(m, id), slots, (double)slots / P, W > 0 ? w / W : 0.0,
                   slots - ideal, umin, b[id].unit_max, ideal_unit);
        } else {
            printf("%6" PRIu32 " %-16s %10" PRIu32 " %9" PRIu32 " %9.4f %9.4f %+9.3f %4" PRIu32
                   "..%-4" PRIu32 " %9.3f\n",
                   id, name, dch_map_node_weight(m, id), slots, 100.0 * slots / P,
                   W > 0 ? 100.0 * w / W : 0.0, slots - ideal, umin, b[id].unit_max, ideal_unit);
        }
        first = 0;
    }
    if (json)
        printf("%s]}\n", first ? "" : "\n  ");
    free(b);
    dch_map_free(m);
    return 0;
}

static int cmd_lookup(const command *cmd, const args *a)
{
    (void)cmd;
    dch_map *m;
    int status = load(a->pos[0], &m);
    if (status != 0)
        return status;
    const int json = (a->given & OPT_JSON) != 0;
    if (json)
        printf("[");
    for (int i = 1; i < a->npos; i++) {
        const char *key = a->pos[i];
        const uint64_t h = dch_map_hash(m, key, strlen(key));
        const uint32_t id = dch_map_lookup_hash(m, h);
        const char *name = dch_map_node_name(m, id);
        if (json) {
            printf("%s\n  {\"key\": ", i > 1 ? "," : "");
            json_string(stdout, key);
            printf(", \"hash\": \"%016" PRIx64 "\", \"slot\": %" PRIu32 ", \"id\": ", h,
                   dch_map_slot_of(m, h));
            if (id == DCH_NODE_NONE)
                printf("null");
            else
                printf("%" PRIu32, id);
            printf(", \"name\": ");
            json_string(stdout, name);
            printf("}");
        } else {
            text_string(stdout, key);
            printf("\t%s\n", or_dash(name));
        }
    }
    if (json)
        printf("%s]\n", a->npos > 1 ? "\n" : "");
    dch_map_free(m);
    return 0;
}

static int cmd_diff(const command *cmd, const args *a)
{
    (void)cmd;
    dch_map *from, *to = NULL;
    int status = load(a->pos[0], &from);
    if (status != 0)
        return status;
    status = load(a->pos[1], &to);
    plan p;
    memset(&p, 0, sizeof p);
    if (status == 0)
        status = make_plan(from, to, &p);
    if (status == 0) {
        if (a->given & OPT_JSON) {
            printf("{\"old\": ");
            json_string(stdout, a->pos[0]);
            printf(", \"new\": ");
            json_string(stdout, a->pos[1]);
            printf(", \"old_fingerprint\": \"%016" PRIx64 "\", \"new_fingerprint\": \"%016" PRIx64
                   "\",\n  ",
                   dch_map_fingerprint(from), dch_map_fingerprint(to));
            status = print_plan_json(&p);
            printf("}\n");
        } else {
            printf("%s (epoch %" PRIu64 ") -> %s (epoch %" PRIu64 ")\n", a->pos[0],
                   dch_map_epoch(from), a->pos[1], dch_map_epoch(to));
            status = print_plan_text(&p, 1);
        }
    }
    free(p.moves);
    dch_map_free(from);
    dch_map_free(to);
    return status;
}

/* Slots a member gives and takes in one step. */
typedef struct member_flow {
    const char *name;
    uint64_t out, in;
} member_flow;

static int flow_cmp(const void *x, const void *y)
{
    return strcmp(((const member_flow *)x)->name, ((const member_flow *)y)->name);
}

/* The plan's moves summed per member name, sorted by name; the caller frees. */
static member_flow *plan_flows(const plan *p, size_t *count)
{
    member_flow *f = malloc((2 * p->n + 1) * sizeof *f);
    if (f == NULL)
        return NULL;
    size_t n = 0;
    for (size_t i = 0; i < p->n; i++) {
        if (p->moves[i].from != NULL)
            f[n++] = (member_flow){p->moves[i].from, p->moves[i].slots, 0};
        if (p->moves[i].to != NULL)
            f[n++] = (member_flow){p->moves[i].to, 0, p->moves[i].slots};
    }
    qsort(f, n, sizeof *f, flow_cmp);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (k > 0 && strcmp(f[k - 1].name, f[i].name) == 0) {
            f[k - 1].out += f[i].out;
            f[k - 1].in += f[i].in;
        } else {
            f[k++] = f[i];
        }
    }
    *count = k;
    return f;
}

/* One step of `dch plan`: its epoch, moves per member and fingerprint. */
static int print_step(const dch_map *prev, const dch_map *step, uint32_t i, uint32_t n,
                      int json)
{
    plan p;
    int status = make_plan(prev, step, &p);
    size_t nf = 0;
    member_flow *f = status == 0 ? plan_flows(&p, &nf) : NULL;
    if (status == 0 && f == NULL) {
        fputs("dch: out of memory\n", stderr);
        status = EXIT_RUNTIME;
    }
    if (status == 0) {
        const uint64_t moved = plan_moved(&p);
        if (json) {
            printf("%s\n    {\"step\": %" PRIu32 ", \"epoch\": %" PRIu64
                   ", \"fingerprint\": \"%016" PRIx64 "\", \"in_transition\": %s, "
                   "\"moved_slots\": %" PRIu64 ", \"members\": [",
                   i > 1 ? "," : "", i, dch_map_epoch(step), dch_map_fingerprint(step),
                   dch_map_in_transition(step, NULL) ? "true" : "false", moved);
            for (size_t k = 0; k < nf; k++) {
                printf("%s{\"name\": ", k ? ", " : "");
                json_string(stdout, f[k].name);
                printf(", \"out\": %" PRIu64 ", \"in\": %" PRIu64 "}", f[k].out, f[k].in);
            }
            printf("]}");
        } else {
            printf("step %" PRIu32 "/%" PRIu32 ": epoch %" PRIu64 ", %" PRIu64
                   " slots move, fingerprint %016" PRIx64 "%s\n",
                   i, n, dch_map_epoch(step), moved, dch_map_fingerprint(step),
                   i == n ? " (the target)" : "");
            for (size_t k = 0; k < nf; k++)
                printf("  %-20s out %6" PRIu64 "  in %6" PRIu64 "\n", f[k].name, f[k].out,
                       f[k].in);
        }
    }
    free(f);
    free(p.moves);
    return status;
}

static int stage_error(const char *old, const char *target, int rc)
{
    fprintf(stderr, "dch: cannot stage %s -> %s: %s%s\n", old, target, dch_strerror(rc),
            rc == DCH_EINVAL ? " (the maps need the same units, slots per unit and hash "
                               "key, a target of a later epoch, and no target in transition)"
                             : "");
    return EXIT_RUNTIME;
}

/* Write step i to DIR/step-NNNN.dchmap. */
static int write_step(const char *dir, uint32_t i, const dch_map *step)
{
    const size_t cap = strlen(dir) + 32;
    char *path = malloc(cap);
    if (path == NULL) {
        fputs("dch: out of memory\n", stderr);
        return EXIT_RUNTIME;
    }
    snprintf(path, cap, "%s/step-%04" PRIu32 ".dchmap", dir, i);
    errno = 0;
    const int rc = dch_map_save_file(step, path);
    const int status = rc == DCH_OK ? 0 : report_file_error(path, rc, errno);
    free(path);
    return status;
}

static int cmd_plan(const command *cmd, const args *a)
{
    uint32_t k;
    if (!(a->given & OPT_MAX_SLOTS))
        return usage_error(cmd, "%s", "--max-slots is required");
    if (parse_u32(opt_value(a, OPT_MAX_SLOTS), &k) != 0 || k == 0)
        return usage_error(cmd, "--max-slots %s: not an integer from 1 to 4294967295",
                           opt_value(a, OPT_MAX_SLOTS));
    const int json = (a->given & OPT_JSON) != 0;
    const char *dir = (a->given & OPT_WRITE_DIR) ? opt_value(a, OPT_WRITE_DIR) : NULL;
    dch_map *old, *target = NULL;
    int status = load(a->pos[0], &old);
    if (status != 0)
        return status;
    status = load(a->pos[1], &target);
    uint32_t n = 0;
    if (status == 0) {
        const int rc = dch_map_stage_steps(old, target, k, &n);
        if (rc != DCH_OK)
            status = stage_error(a->pos[0], a->pos[1], rc);
    }
    if (status == 0) {
        if (json) {
            printf("{\"old\": ");
            json_string(stdout, a->pos[0]);
            printf(", \"new\": ");
            json_string(stdout, a->pos[1]);
            printf(", \"max_slots\": %" PRIu32 ", \"old_epoch\": %" PRIu64
                   ", \"new_epoch\": %" PRIu64 ", \"target_fingerprint\": \"%016" PRIx64
                   "\", \"step_count\": %" PRIu32 ",\n  \"steps\": [",
                   k, dch_map_epoch(old), dch_map_epoch(target), dch_map_fingerprint(target), n);
        } else {
            printf("%s (epoch %" PRIu64 ") -> %s (epoch %" PRIu64 ", fingerprint %016" PRIx64
                   "): %" PRIu32 " step%s of at most %" PRIu32
                   " slots into and out of each member\n",
                   a->pos[0], dch_map_epoch(old), a->pos[1], dch_map_epoch(target),
                   dch_map_fingerprint(target), n, n == 1 ? "" : "s", k);
        }
    }
    dch_map *prev = old;
    for (uint32_t i = 1; status == 0 && i <= n; i++) {
        dch_map *step;
        const int rc = dch_map_stage_next(&step, prev, target, k);
        if (rc != DCH_OK) {
            status = stage_error(a->pos[0], a->pos[1], rc);
            break;
        }
        status = print_step(prev, step, i, n, json);
        if (status == 0 && dir != NULL)
            status = write_step(dir, i, step);
        if (prev != old)
            dch_map_free(prev);
        prev = step;
    }
    if (status == 0 && json)
        printf("%s]}\n", n ? "\n  " : "");
    if (prev != old)
        dch_map_free(prev);
    dch_map_free(old);
    dch_map_free(target);
    return status;
}

static int cmd_verify(const command *cmd, const args *a)
{
    (void)cmd;
    const char *path = a->pos[0];
    dch_map *m;
    errno = 0;
    const int rc = dch_map_load_file(&m, path);
    const int err = errno;
    if (a->given & OPT_JSON) {
        printf("{\"file\": ");
        json_string(stdout, path);
        if (rc == DCH_OK)
            printf(", \"ok\": true, \"epoch\": %" PRIu64 ", \"fingerprint\": \"%016" PRIx64
                   "\", \"member_count\": %" PRIu32 ", \"slots\": %" PRIu32 "}\n",
                   dch_map_epoch(m), dch_map_fingerprint(m), dch_map_node_count(m),
                   dch_map_slot_count(m));
        else {
            printf(", \"ok\": false, \"error\": ");
            json_string(stdout, file_error_cause(rc, err));
            printf(", \"code\": %d}\n", rc);
        }
    } else if (rc == DCH_OK) {
        printf("%s: ok: epoch %" PRIu64 ", fingerprint %016" PRIx64 ", %" PRIu32
               " members, %" PRIu32 " slots\n",
               path, dch_map_epoch(m), dch_map_fingerprint(m), dch_map_node_count(m),
               dch_map_slot_count(m));
    }
    if (rc != DCH_OK)
        return report_file_error(path, rc, err);
    dch_map_free(m);
    return 0;
}

static int cmd_fingerprint(const command *cmd, const args *a)
{
    (void)cmd;
    dch_map *m;
    const int status = load(a->pos[0], &m);
    if (status != 0)
        return status;
    if (a->given & OPT_JSON) {
        printf("{\"file\": ");
        json_string(stdout, a->pos[0]);
        printf(", \"fingerprint\": \"%016" PRIx64 "\", \"epoch\": %" PRIu64 "}\n",
               dch_map_fingerprint(m), dch_map_epoch(m));
    } else {
        printf("%016" PRIx64 "\n", dch_map_fingerprint(m));
    }
    dch_map_free(m);
    return 0;
}

/* ---- compare-ketama: a libmemcached fleet under ketama and under DCH -- */

#define KETAMA_DEFAULT_PORT 11211u

/* One server of the fleet file: its ring member name and weight. */
typedef struct kserver {
    char name[DCH_NAME_MAX + 1]; /* "host", or "host:port" off 11211 */
    uint32_t weight;
} kserver;

typedef struct fleet {
    kserver *sv;
    size_t n, cap;
} fleet;

/*
 * One "host[:port] [weight]" line into a server named as libmemcached names
 * its points: "host" on port 11211 (also when no port is given), "host:port"
 * otherwise. Weight 0, or none, is 1, as in libmemcached. 0 or a message.
 */
static const char *parse_server(char *line, kserver *out)
{
    char *fields[2] = {NULL, NULL};
    int nf = 0;
    for (char *tok = strtok(line, " \t\r\n"); tok != NULL; tok = strtok(NULL, " \t\r\n")) {
        if (nf == 2)
            return "expected \"host:port weight\"";
        fields[nf++] = tok;
    }
    if (nf == 0)
        return "no host";
    char *colon = strrchr(fields[0], ':');
    uint32_t port = KETAMA_DEFAULT_PORT;
    if (colon != NULL) {
        *colon = '\0';
        if (parse_u32(colon + 1, &port) != 0 || port == 0 || port > 65535)
            return "the port is not a number from 1 to 65535";
    }
    if (fields[0][0] == '\0')
        return "no host";
    out->weight = 1;
    if (nf == 2 && (parse_u32(fields[1], &out->weight) != 0))
        return "the weight is not an integer from 0 to 4294967295";
    if (out->weight == 0)
        out->weight = 1;
    int len = port == KETAMA_DEFAULT_PORT
                  ? snprintf(out->name, sizeof out->name, "%s", fields[0])
                  : snprintf(out->name, sizeof out->name, "%s:%" PRIu32, fields[0], port);
    if (len < 0 || (size_t)len >= sizeof out->name)
        return "host:port is longer than 255 bytes";
    return NULL;
}

static int read_fleet(const char *path, fleet *f)
{
    memset(f, 0, sizeof *f);
    FILE *in = fopen(path, "r");
    if (in == NULL) {
        fprintf(stderr, "dch: %s: %s\n", path, strerror(errno));
        return EXIT_RUNTIME;
    }
    char line[1024];
    unsigned lineno = 0;
    const char *bad = NULL;
    while (bad == NULL && fgets(line, sizeof line, in) != NULL) {
        lineno++;
        char *s = line + strspn(line, " \t\r\n");
        if (*s == '\0' || *s == '#')
            continue;
        if (f->n == f->cap) {
            size_t cap = f->cap ? 2 * f->cap : 16;
            kserver *g = realloc(f->sv, cap * sizeof *g);
            if (g == NULL) {
                bad = "out of memory";
                break;
            }
            f->sv = g;
            f->cap = cap;
        }
        bad = parse_server(s, &f->sv[f->n]);
        for (size_t i = 0; bad == NULL && i < f->n; i++)
            if (strcmp(f->sv[i].name, f->sv[f->n].name) == 0)
                bad = "the server is listed twice";
        if (bad == NULL && ++f->n > DCH_RING_MAX_NODES)
            bad = "too many servers";
    }
    fclose(in);
    if (bad != NULL) {
        fprintf(stderr, "dch: %s:%u: %s\n", path, lineno, bad);
        free(f->sv);
        return EXIT_RUNTIME;
    }
    if (f->n < 2) {
        fprintf(stderr, "dch: %s: needs at least 2 servers\n", path);
        free(f->sv);
        return EXIT_RUNTIME;
    }
    return 0;
}

/* The fleet's servers but `skip` (none when skip >= n), then `last` if it
 * is < n: the ketama ring and the DCH map of those members, in that order. */
static int build_both(const fleet *f, size_t skip, size_t last, dch_ring **ring,
                      dch_map **map)
{
    dch_ring_config rc;
    dch_ring_config_default(&rc);
    rc.placement = DCH_RING_PLACE_KETAMA;
    *ring = NULL;
    *map = NULL;
    if (dch_ring_new(ring, &rc) != DCH_OK || dch_map_new(map, NULL) != DCH_OK)
        return -1;
    for (size_t k = 0; k <= f->n; k++) {
        size_t i = k < f->n ? k : last;
        if (i >= f->n || i == skip || (k < f->n && i == last))
            continue;
        if (dch_ring_add_node(*ring, f->sv[i].name, f->sv[i].weight, NULL) != DCH_OK ||
            dch_map_add_node(*map, f->sv[i].name, f->sv[i].weight, NULL) != DCH_OK)
            return -1;
    }
    return 0;
}

/* Copies of ring and map with the member `name` removed from each. */
static int remove_both(const dch_ring *r, const dch_map *m, const char *name,
                       dch_ring **ring, dch_map **map)
{
    uint32_t rid, mid;
    *ring = NULL;
    *map = NULL;
    if (dch_ring_clone(ring, r) != DCH_OK || dch_map_clone(map, m) != DCH_OK ||
        dch_ring_find_node(*ring, name, &rid) != DCH_OK ||
        dch_map_find_node(*map, name, &mid) != DCH_OK ||
        dch_ring_remove_node(*ring, rid) != DCH_OK || dch_map_remove_node(*map, mid) != DCH_OK)
        return -1;
    return 0;
}

/* Ownership with owners renumbered as indices into the fleet. */
typedef struct owned {
    dch_range *rg;
    size_t n;
} owned;

static int renumber(const fleet *f, owned *o, const char *(*name_of)(const void *, uint32_t),
                    const void *scheme)
{
    for (size_t i = 0; i < o->n; i++) {
        const char *name = o->rg[i].owner == DCH_NODE_NONE ? NULL
                                                           : name_of(scheme, o->rg[i].owner);
        uint32_t idx = DCH_NODE_NONE;
        for (size_t s = 0; name != NULL && s < f->n; s++)
            if (strcmp(f->sv[s].name, name) == 0)
                idx = (uint32_t)s;
        o->rg[i].owner = idx;
    }
    return 0;
}

static const char *ring_name(const void *r, uint32_t id)
{
    return dch_ring_node_name(r, id);
}

static const char *map_name(const void *m, uint32_t id)
{
    return dch_map_node_name(m, id);
}

static int owned_of(const fleet *f, const dch_ring *r, const dch_map *m, owned *o)
{
    size_t n = 0;
    if (r != NULL)
        (void)dch_ring_ranges(r, NULL, 0, &n);
    else
        (void)dch_map_ranges(m, NULL, 0, &n);
    o->rg = malloc(n * sizeof *o->rg);
    o->n = n;
    if (o->rg == NULL)
        return -1;
    int rc = r != NULL ? dch_ring_ranges(r, o->rg, n, &n) : dch_map_ranges(m, o->rg, n, &n);
    if (rc != DCH_OK)
        return -1;
    return renumber(f, o, r != NULL ? ring_name : map_name, r != NULL ? (const void *)r
                                                                      : (const void *)m);
}

typedef struct kmove {
    uint32_t from, to;
    double fraction;
} kmove;

typedef struct kmoves {
    kmove *mv;
    size_t n, cap;
} kmoves;

static int collect_kmove(const dch_range_change *c, void *ctx)
{
    kmoves *k = ctx;
    for (size_t i = 0; i < k->n; i++)
        if (k->mv[i].from == c->from && k->mv[i].to == c->to) {
            k->mv[i].fraction += dch_range_fraction(c->lo, c->hi);
            return 0;
        }
    if (k->n == k->cap) {
        size_t cap = k->cap ? 2 * k->cap : 16;
        kmove *g = realloc(k->mv, cap * sizeof *g);
        if (g == NULL)
            return 1;
        k->mv = g;
        k->cap = cap;
    }
    k->mv[k->n++] = (kmove){c->from, c->to, dch_range_fraction(c->lo, c->hi)};
    return 0;
}

static int kmove_cmp(const void *x, const void *y)
{
    const kmove *a = x, *b = y;
    return (a->fraction < b->fraction) - (a->fraction > b->fraction);
}

static const char *server_name(const fleet *f, uint32_t idx)
{
    return idx < f->n ? f->sv[idx].name : "-";
}

/* What moves from `before` to `after`: the total, then each (from -> to)
 * pair, largest first (at most 12, then a count of the rest). */
static int print_kmoves(const fleet *f, const char *scheme, const owned *before,
                        const owned *after)
{
    kmoves k = {NULL, 0, 0};
    if (dch_range_diff(before->rg, before->n, after->rg, after->n, collect_kmove, &k) != 0) {
        free(k.mv);
        return -1;
    }
    qsort(k.mv, k.n, sizeof *k.mv, kmove_cmp);
    double total = 0;
    for (size_t i = 0; i < k.n; i++)
        total += k.mv[i].fraction;
    printf("  %-24s %8.4f%% of the keys move, in %zu (from -> to) pair%s\n", scheme,
           100.0 * total, k.n, k.n == 1 ? "" : "s");
    for (size_t i = 0; i < k.n && i < 12; i++)
        printf("    %s -> %s: %.4f%%\n", server_name(f, k.mv[i].from),
               server_name(f, k.mv[i].to), 100.0 * k.mv[i].fraction);
    if (k.n > 12)
        printf("    ... and %zu more pairs\n", k.n - 12);
    free(k.mv);
    return 0;
}

static void shares_of(const owned *o, size_t n, double *share)
{
    for (size_t i = 0; i < n; i++)
        share[i] = 0;
    for (size_t i = 0; i < o->n; i++)
        if (o->rg[i].owner < n)
            share[o->rg[i].owner] += dch_range_fraction(o->rg[i].lo, o->rg[i].hi);
}

static void print_balance(const fleet *f, const owned *ring, const owned *map)
{
    double W = 0;
    for (size_t i = 0; i < f->n; i++)
        W += f->sv[i].weight;
    double *rs = malloc(2 * f->n * sizeof *rs);
    if (rs == NULL)
        return;
    double *ms = rs + f->n;
    shares_of(ring, f->n, rs);
    shares_of(map, f->n, ms);
    printf("balance: each server's share of the keys, and share / weight share\n");
    printf("  %-24s %10s %9s %9s %7s %9s %7s\n", "server", "weight", "ideal%", "ketama%",
           "x", "dch%", "x");
    double rmin = 1e300, rmax = 0, mmin = 1e300, mmax = 0;
    for (size_t i = 0; i < f->n; i++) {
        double ideal = f->sv[i].weight / W;
        double rx = rs[i] / ideal, mx = ms[i] / ideal;
        rmin = rx < rmin ? rx : rmin;
        rmax = rx > rmax ? rx : rmax;
        mmin = mx < mmin ? mx : mmin;
        mmax = mx > mmax ? mx : mmax;
        printf("  %-24s %10" PRIu32 " %9.4f %9.4f %7.4f %9.4f %7.4f\n", f->sv[i].name,
               f->sv[i].weight, 100.0 * ideal, 100.0 * rs[i], rx, 100.0 * ms[i], mx);
    }
    printf("  ketama (libmemcached): %.4f .. %.4f x the weight share\n", rmin, rmax);
    printf("  dch:                   %.4f .. %.4f x the weight share\n", mmin, mmax);
    free(rs);
}

static int cmd_compare_ketama(const command *cmd, const args *a)
{
    fleet f;
    int status = read_fleet(a->pos[0], &f);
    if (status != 0)
        return status;
    size_t chosen = f.n - 1;
    if (a->npos == 2) {
        kserver want;
        char buf[1024];
        snprintf(buf, sizeof buf, "%s", a->pos[1]);
        const char *bad = parse_server(buf, &want);
        chosen = f.n;
        for (size_t i = 0; bad == NULL && i < f.n; i++)
            if (strcmp(f.sv[i].name, want.name) == 0)
                chosen = i;
        if (chosen == f.n) {
            free(f.sv);
            return usage_error(cmd, "%s is not in the server list", a->pos[1]);
        }
    }
    /* Full: the fleet in file order. Join: the others, then the chosen
     * server added last. Removal: the full fleet, then the chosen server
     * removed (a DCH map depends on its history, so this is not the map of
     * the others built afresh). */
    dch_ring *full_r = NULL, *base_r = NULL, *join_r = NULL, *gone_r = NULL;
    dch_map *full_m = NULL, *base_m = NULL, *join_m = NULL, *gone_m = NULL;
    owned o[8] = {{NULL, 0}};
    status = EXIT_RUNTIME;
    if (build_both(&f, f.n, f.n, &full_r, &full_m) != 0 ||
        build_both(&f, chosen, f.n, &base_r, &base_m) != 0 ||
        build_both(&f, f.n, chosen, &join_r, &join_m) != 0 ||
        remove_both(full_r, full_m, f.sv[chosen].name, &gone_r, &gone_m) != 0 ||
        owned_of(&f, full_r, NULL, &o[0]) != 0 || owned_of(&f, NULL, full_m, &o[1]) != 0 ||
        owned_of(&f, base_r, NULL, &o[2]) != 0 || owned_of(&f, NULL, base_m, &o[3]) != 0 ||
        owned_of(&f, join_r, NULL, &o[4]) != 0 || owned_of(&f, NULL, join_m, &o[5]) != 0 ||
        owned_of(&f, gone_r, NULL, &o[6]) != 0 || owned_of(&f, NULL, gone_m, &o[7]) != 0) {
        fputs("dch: out of memory\n", stderr);
        goto done;
    }
    double W = 0;
    for (size_t i = 0; i < f.n; i++)
        W += f.sv[i].weight;
    printf("servers: %zu, total weight %.0f; ketama as libmemcached 1.1 (weighted, MD5)\n",
           f.n, W);
    if (f.n > 100)
        printf("note: libmemcached's continuum holds 100 servers (Debian's build aborts "
               "past it); the same rules are applied here\n");
    printf("chosen server: %s, weight %" PRIu32 ", %.4f%% of the weight\n\n",
           f.sv[chosen].name, f.sv[chosen].weight, 100.0 * f.sv[chosen].weight / W);
    print_balance(&f, &o[0], &o[1]);
    printf("\njoin of %s (the others, then it):\n", f.sv[chosen].name);
    if (print_kmoves(&f, "ketama (libmemcached):", &o[2], &o[4]) != 0 ||
        print_kmoves(&f, "dch:", &o[3], &o[5]) != 0)
        goto nomem;
    printf("\nremoval of %s:\n", f.sv[chosen].name);
    if (print_kmoves(&f, "ketama (libmemcached):", &o[0], &o[6]) != 0 ||
        print_kmoves(&f, "dch:", &o[1], &o[7]) != 0)
        goto nomem;
    status = 0;
    goto done;
nomem:
    fputs("dch: out of memory\n", stderr);
done:
    for (int i = 0; i < 8; i++)
        free(o[i].rg);
    dch_ring_free(full_r);
    dch_ring_free(base_r);
    dch_ring_free(join_r);
    dch_ring_free(gone_r);
    dch_map_free(full_m);
    dch_map_free(base_m);
    dch_map_free(join_m);
    dch_map_free(gone_m);
    free(f.sv);
    return status;
}

static int cmd_help(const command *cmd, const args *a);

static const command commands[] = {
    {"init", "FILE [--units U] [--slots S] [--key HEX | --random-key] [--force] [--json]",
     "create an empty map",
     "  --units U       minimum arc units, a power of two (default 1024)\n"
     "  --slots S       slots per unit, a power of two (default 64);\n"
     "                  units * slots may be at most 2^24\n"
     "  --key HEX       the SipHash key every client shares, 32 hex digits\n"
     "                  (default all zero)\n"
     "  --random-key    a key from /dev/urandom\n"
     "  --force         replace FILE if it exists (by default init refuses)\n",
     1, 1, OPT_UNITS | OPT_SLOTS | OPT_KEY | OPT_RANDOM_KEY | OPT_FORCE | OPT_JSON, cmd_init},
    {"add", "FILE NAME [--weight W] [--dry-run] [--ranges] [--json]",
     "add a member; prints the plan",
     "  --weight W      0 .. 4294967295 (default 1); 0 adds a member that owns\n"
     "                  nothing yet\n",
     2, 2, OPT_WEIGHT | OPT_DRY_RUN | OPT_RANGES | OPT_JSON, cmd_add},
    {"remove", "FILE NAME [--dry-run] [--ranges] [--json]",
     "remove a member; prints the plan", "", 2, 2, OPT_DRY_RUN | OPT_RANGES | OPT_JSON,
     cmd_remove},
    {"weight", "FILE NAME W [--dry-run] [--ranges] [--json]",
     "set a member's weight; prints the plan", "  W               0 drains the member but keeps it\n",
     3, 3, OPT_DRY_RUN | OPT_RANGES | OPT_JSON, cmd_weight},
    {"show", "FILE [--json]", "config, epoch, fingerprint, members and their balance",
     "  columns: share% of the slots, ideal% (weight / total weight), dev (slots\n"
     "  minus ideal slots), unit (fewest..most slots held in one unit), ideal/u\n"
     "  (ideal slots per unit)\n",
     1, 1, OPT_JSON, cmd_show},
    {"lookup", "FILE KEY... [--json]", "the member that owns each key",
     "  each KEY is hashed as its bytes; text output is KEY<tab>NAME, '-' for\n"
     "  no owner, control bytes of KEY shown as \\xNN; --json adds the hash,\n"
     "  slot and id. A KEY that starts with '-' goes after --\n",
     2, -1, OPT_JSON, cmd_lookup},
    {"diff", "OLD NEW [--json]", "the migration plan from OLD to NEW",
     "  totals per (from -> to) pair as slots and percent of the ring, then every\n"
     "  hash range that moves; members are matched by name; '-' is no owner.\n"
     "  Both maps need the same units, slots per unit and hash key.\n",
     2, 2, OPT_JSON, cmd_diff},
    {"plan", "OLD NEW --max-slots K [--write-dir DIR] [--json]",
     "stage the change from OLD to NEW in bounded steps",
     "  each step moves at most K slots out of and K slots into any member, only\n"
     "  slots that the plan OLD -> NEW moves, each once; prints per step its\n"
     "  epoch, slots moved, slots out of and into each member, and fingerprint.\n"
     "  The last step is NEW. NEW must be derived from OLD: the same units, slots\n"
     "  per unit and hash key, and a later epoch.\n"
     "  --max-slots K   1 .. 4294967295\n"
     "  --write-dir DIR write each step to DIR/step-0001.dchmap, ... (DIR exists)\n",
     2, 2, OPT_MAX_SLOTS | OPT_WRITE_DIR | OPT_JSON, cmd_plan},
    {"verify", "FILE [--json]", "check a map file completely",
     "  exit status 0 when FILE is an intact map, 1 otherwise\n", 1, 1, OPT_JSON, cmd_verify},
    {"fingerprint", "FILE [--json]", "print the routing fingerprint (16 hex digits)",
     "  equal fingerprints: the two maps route every key alike\n", 1, 1, OPT_JSON,
     cmd_fingerprint},
    {"compare-ketama", "SERVERS.txt [HOST:PORT]",
     "a libmemcached ketama fleet beside a DCH map of the same servers",
     "  SERVERS.txt holds one \"host:port weight\" line per server (# starts a\n"
     "  comment; no port is 11211, no weight or 0 is 1, as in libmemcached).\n"
     "  Builds the ring libmemcached 1.1 builds (weighted ketama, MD5) and a\n"
     "  DCH map of the same servers, and prints each server's share of the keys\n"
     "  under both, then what each moves, and between whom, when HOST:PORT\n"
     "  (default: the last server listed) joins the others and when it leaves.\n",
     1, 2, 0, cmd_compare_ketama},
    {"help", "[COMMAND]", "this help, or a command's", "", 0, 1, 0, cmd_help},
};

#define NCOMMANDS (sizeof commands / sizeof commands[0])

static const command *find_command(const char *name)
{
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

static void general_help(FILE *f)
{
    fprintf(f, "usage: dch COMMAND [ARGS]\n\n"
               "Keep a DCH partition map in a file. Changes write FILE atomically and\n"
               "print the migration plan they imply. Exit status: 0 ok, 1 error, 2 usage.\n"
               "Arguments after -- are never options (for a NAME or KEY that starts with\n"
               "'-'). Names hold 1 to 255 bytes and no control character.\n\n"
               "commands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(f, "  %-15s %s\n", commands[i].name, commands[i].summary);
#ifdef DCH_TOOL_ETCD
    etcd_cmd_list(f);
#endif
    fprintf(f, "\n'dch help COMMAND' or 'dch COMMAND --help' describes one; 'dch --version'.\n");
}

static void command_help(const command *c)
{
    printf("usage: dch %s %s\n\n%s.\n", c->name, c->usage, c->summary);
    if (c->options & OPT_DRY_RUN)
        printf("Writes FILE atomically and prints the plan: totals per (from -> to) pair.\n"
               "  --dry-run       print the plan, write nothing\n"
               "  --ranges        also list every hash range that moves\n");
    if (c->options & OPT_JSON)
        printf("  --json          machine-readable output\n");
    fputs(c->help, stdout);
}

static int cmd_help(const command *cmd, const args *a)
{
    if (a->npos == 0) {
        general_help(stdout);
        return 0;
    }
    const command *c = find_command(a->pos[0]);
#ifdef DCH_TOOL_ETCD
    if (c == NULL && etcd_cmd_help(a->pos[0]))
        return 0;
#endif
    if (c == NULL)
        return usage_error(cmd, "no command %s", a->pos[0]);
    command_help(c);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        general_help(stderr);
        return EXIT_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
        general_help(stdout);
        return 0;
    }
    if (strcmp(name, "--version") == 0) {
        printf("dch %s\n", dch_version());
        return 0;
    }
#ifdef DCH_TOOL_ETCD
    if (etcd_cmd_exists(name))
        return etcd_cmd_main(argc - 1, argv + 1);
#endif
    const command *c = find_command(name);
    if (c == NULL) {
        fprintf(stderr, "dch: no command %s\n\n", name);
        general_help(stderr);
        return EXIT_USAGE;
    }
    for (int i = 2; i < argc && strcmp(argv[i], "--") != 0; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            command_help(c);
            return 0;
        }
    }
    args *a = malloc(sizeof *a);
    if (a == NULL) {
        fputs("dch: out of memory\n", stderr);
        return EXIT_RUNTIME;
    }
    int status = parse_args(c, argc - 2, argv + 2, a);
    if (status == 0)
        status = c->run(c, a);
    free(a);
    if (fflush(stdout) != 0 && status == 0) {
        fprintf(stderr, "dch: cannot write output (%s)\n", strerror(errno));
        status = EXIT_RUNTIME;
    }
    return status;
}
