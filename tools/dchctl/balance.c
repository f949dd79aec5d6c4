/* SPDX-License-Identifier: MIT */
/*
 * dchctl balance, and the slot loads that it and show read: a LOADS file
 * holds one "slot load" line a slot (decimal; '#' starts a comment; blank
 * lines are skipped; a slot not listed carries 0), or '-' for standard
 * input.
 *
 * balance loads MAP and LOADS, calls dch_map_balance_load on a clone, and
 * writes the clone back atomically (save: dch_map_save_file, a temporary
 * file renamed over MAP, or over --out's file), so MAP holds the old map
 * or the new one, never a mix; every refusal (a bad LOADS line, a bad
 * option) comes before the write, so a failed call leaves MAP byte for
 * byte. --dry-run writes nothing and prints what the write would make. It prints every field
 * of dch_balance_report, the members left above their bounds and why, and
 * the plan the load moves imply (dch_map_diff, as every change prints).
 * `balance MAP --clear` drops every load move (dch_map_balance_clear).
 *
 * The terms (target, bound, Lmax, L2) are balance.h's; show's load columns
 * recompute them from the map's routing for display (doubles: the library
 * compares exactly, the columns only report).
 */
#define _POSIX_C_SOURCE 200809L /* getline */
#include "cli.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* ---- LOADS files --------------------------------------------------- */

/* What read_loads keeps while it reads: the loads, the line that gave each
 * slot (0: none yet), their running sum. */
typedef struct load_reader {
    uint64_t *load;
    uint32_t *line_of;
    uint32_t P;
    uint64_t total;
    unsigned long line;
    char why[320];
} load_reader;

static const number_rule load_rule = {"load", 0, UINT64_MAX, 0};

/* Every field of one line, cut at '#', split on blanks: 0 .. 3 of them
 * (3 means "more than 2"). */
static int split_fields(char *s, char **f)
{
    char *hash = strchr(s, '#');
    if (hash != NULL)
        *hash = '\0';
    int n = 0;
    for (char *tok = strtok(s, " \t\r\n\v\f"); tok != NULL && n < 3;
         tok = strtok(NULL, " \t\r\n\v\f"))
        f[n++] = tok;
    return n;
}

/* One line into r; 0, or -1 with r->why set. */
static int take_line(load_reader *r, char *s, size_t len)
{
    char *f[3];
    if (memchr(s, '\0', len) != NULL) {
        snprintf(r->why, sizeof r->why, "a NUL byte: a LOADS file is text");
        return -1;
    }
    const int n = split_fields(s, f);
    if (n == 0)
        return 0;
    if (n != 2) {
        snprintf(r->why, sizeof r->why, "expected \"slot load\" (two decimal numbers), got %s",
                 n == 1 ? "one field" : "more than two fields");
        return -1;
    }
    static const number_rule any_slot = {"slot", 0, UINT64_MAX, 0};
    uint64_t slot, load;
    if (parse_number(f[0], &any_slot, &slot) != 0) {
        const number_rule in_map = {"slot", 0, r->P - 1, 0};
        number_refusal(r->why, sizeof r->why, &in_map, f[0]);
        return -1;
    }
    if (slot >= r->P) {
        snprintf(r->why, sizeof r->why,
                 "slot %" PRIu64 " is not in the map, whose slots are 0 .. %" PRIu32, slot,
                 r->P - 1);
        return -1;
    }
    if (r->line_of[slot] != 0) {
        snprintf(r->why, sizeof r->why, "slot %" PRIu64 " is given twice (first on line %" PRIu32 ")",
                 slot, r->line_of[slot]);
        return -1;
    }
    if (parse_number(f[1], &load_rule, &load) != 0) {
        number_refusal(r->why, sizeof r->why, &load_rule, f[1]);
        return -1;
    }
    if (load > UINT64_MAX - r->total) {
        snprintf(r->why, sizeof r->why,
                 "the loads sum past %" PRIu64 " (UINT64_MAX), the most a map balances", UINT64_MAX);
        return -1;
    }
    r->total += load;
    r->load[slot] = load;
    r->line_of[slot] = r->line > UINT32_MAX ? UINT32_MAX : (uint32_t)r->line;
    return 0;
}

/* Every line of `in` into r; 0, or -1 with r->why set (r->line the line). */
static int read_lines(load_reader *r, FILE *in)
{
    char *buf = NULL;
    size_t cap = 0;
    ssize_t got;
    int rc = 0;
    errno = 0;
    while (rc == 0 && (got = getline(&buf, &cap, in)) >= 0) {
        r->line++;
        rc = take_line(r, buf, (size_t)got);
    }
    const int err = errno;
    free(buf);
    if (rc == 0 && ferror(in)) {
        snprintf(r->why, sizeof r->why, "%s", strerror(err ? err : EIO));
        return -1;
    }
    return rc;
}

int read_loads(const char *path, uint32_t P, uint64_t **loads, uint64_t *total)
{
    load_reader r;
    memset(&r, 0, sizeof r);
    r.P = P;
    r.load = calloc(P ? P : 1, sizeof *r.load);
    r.line_of = calloc(P ? P : 1, sizeof *r.line_of);
    if (r.load == NULL || r.line_of == NULL) {
        free(r.load);
        free(r.line_of);
        return out_of_memory();
    }
    FILE *in = is_stdio(path) ? stdin : fopen(path, "r");
    int rc = -1;
    if (in == NULL) {
        fprintf(stderr, "dchctl: %s: %s\n", path, strerror(errno));
    } else {
        rc = read_lines(&r, in);
        if (rc != 0)
            fprintf(stderr, "dchctl: %s:%lu: %s\n", input_name(path), r.line, r.why);
        if (in != stdin)
            fclose(in);
    }
    free(r.line_of);
    if (rc != 0) {
        free(r.load);
        return EXIT_RUNTIME;
    }
    *loads = r.load;
    *total = r.total;
    return 0;
}

/* ---- Members' loads ------------------------------------------------ */

/* Whether member id balances (balance.h): positive weight, no drain. */
static int balances(const dch_map *m, uint32_t id)
{
    return dch_map_node_name(m, id) != NULL && dch_map_node_weight(m, id) > 0 &&
           dch_map_node_drained(m, id) == 0;
}

int member_loads(const dch_map *m, const uint64_t *load, member_load *ml, load_summary *sum)
{
    const uint32_t limit = dch_map_id_limit(m), P = dch_map_slot_count(m);
    memset(sum, 0, sizeof *sum);
    for (uint32_t id = 0; id < limit; id++)
        ml[id] = (member_load){0, 0, 0, 0, balances(m, id)};
    for (uint32_t s = 0; s < P; s++) {
        const uint64_t L = load[s];
        sum->total += L;
        if (L > sum->heaviest || s == 0) {
            sum->second = s == 0 ? 0 : sum->heaviest;
            sum->heaviest = L;
            sum->heaviest_slot = s;
        } else if (L > sum->second) {
            sum->second = L;
        }
        const uint32_t o = dch_map_slot_owner(m, s);
        if (o == DCH_NODE_NONE || o >= limit)
            continue;
        ml[o].load += L;
        ml[o].hottest = L > ml[o].hottest ? L : ml[o].hottest;
    }
    double W = 0;
    for (uint32_t id = 0; id < limit; id++)
        W += ml[id].balances ? (double)dch_map_node_weight(m, id) : 0.0;
    const double Lmax = (double)sum->heaviest, L2 = (double)sum->second;
    double max_target = 0;
    for (uint32_t id = 0; id < limit; id++) {
        member_load *x = &ml[id];
        if (!x->balances || W == 0)
            continue;
        x->target = (double)sum->total * dch_map_node_weight(m, id) / W;
        const double h = (double)x->hottest, a = x->target + Lmax;
        const double b = (x->target > h ? x->target : h) + L2;
        x->bound = a < b ? a : b;
        max_target = x->target > max_target ? x->target : max_target;
        if (x->target > 0 && (double)x->load / x->target > sum->max_ratio)
            sum->max_ratio = (double)x->load / x->target;
        sum->members++;
    }
    sum->floor = max_target > 0 && Lmax / max_target > 1 ? Lmax / max_target : 1.0;
    return 0;
}

/* ---- balance ------------------------------------------------------- */

static const char *left_why(uint32_t why)
{
    switch (why) {
    case DCH_BALANCE_LEFT_BUDGET:
        return "budget: --max-moves was spent before its turn came";
    case DCH_BALANCE_LEFT_SLACK:
        return "slack: --count-slack barred every receiver that could take a slot";
    case DCH_BALANCE_LEFT_PLACEMENT:
        return "placement: distinct copies and zones barred every receiver";
    default:
        return "unknown";
    }
}

static const char *left_why_word(uint32_t why)
{
    return why == DCH_BALANCE_LEFT_BUDGET  ? "budget"
           : why == DCH_BALANCE_LEFT_SLACK ? "slack"
           : why == DCH_BALANCE_LEFT_PLACEMENT ? "placement"
                                               : "unknown";
}

/* The JSON object's first members: the file, --out's, whether the map was
 * written (not with --dry-run). */
static void print_written_json(FILE *f, const args *a)
{
    fprintf(f, "{\"file\": ");
    json_string(f, a->pos[0]);
    if (a->given & OPT_OUT) {
        fprintf(f, ", \"out\": ");
        json_string(f, destination(a));
    }
    fprintf(f, ", \"written\": %s", (a->given & OPT_DRY_RUN) ? "false" : "true");
}

static void print_report_json(FILE *f, const args *a, const dch_map *m,
                              const dch_balance_report *r, double floor)
{
    print_written_json(f, a);
    fprintf(f, ", \"epoch\": %" PRIu64 ", \"fingerprint\": \"%016" PRIx64 "\",\n",
            dch_map_epoch(m), dch_map_fingerprint(m));
    fprintf(f,
            "  \"total_load\": %" PRIu64 ", \"heaviest_load\": %" PRIu64
            ", \"second_load\": %" PRIu64 ", \"heaviest_slot\": %" PRIu32
            ", \"members\": %" PRIu32 ", \"too_heavy\": %" PRIu32 ",\n",
            r->total_load, r->heaviest_load, r->second_load, r->heaviest_slot, r->members,
            r->too_heavy);
    fprintf(f,
            "  \"above_before\": %" PRIu32 ", \"above_after\": %" PRIu32 ", \"moves\": %" PRIu32
            ", \"promotions\": %" PRIu32 ", \"moved_load\": %" PRIu64
            ", \"promoted_load\": %" PRIu64 ", \"moved_load_floor\": %" PRIu64 ",\n",
            r->above_before, r->above_after, r->moves, r->promotions, r->moved_load,
            r->promoted_load, r->moved_load_floor);
    fprintf(f,
            "  \"max_ratio_before\": %.17g, \"max_ratio_after\": %.17g, \"ratio_floor\": %.17g"
            ", \"in_force\": %" PRIu32 ", \"left_count\": %" PRIu32 ",\n  \"left\": [",
            r->max_ratio_before, r->max_ratio_after, floor, r->in_force, r->left_count);
    const uint32_t shown = r->left_count < r->left_cap ? r->left_count : r->left_cap;
    for (uint32_t i = 0; i < shown; i++) {
        const dch_balance_left *l = &r->left[i];
        fprintf(f, "%s\n    {\"id\": %" PRIu32 ", \"name\": ", i ? "," : "", l->id);
        json_string(f, dch_map_node_name(m, l->id));
        fprintf(f, ", \"why\": \"%s\", \"load\": %" PRIu64 ", \"bound\": %" PRIu64 "}",
                left_why_word(l->why), l->load, l->bound);
    }
    fprintf(f, "%s],\n  ", shown ? "\n  " : "");
}

static void print_report_text(FILE *f, const args *a, const dch_map *m,
                              const dch_balance_report *r, double floor)
{
    if (a->given & OPT_DRY_RUN)
        fprintf(f, "dry run: balance %s: unchanged; the new map would be at", output_name(a->pos[0]));
    else
        fprintf(f, "balanced %s: now at", output_name(destination(a)));
    fprintf(f, " epoch %" PRIu64 ", fingerprint %016" PRIx64 "\n", dch_map_epoch(m),
            dch_map_fingerprint(m));
    fprintf(f,
            "load:          total %" PRIu64 "; heaviest slot %" PRIu32 " carries %" PRIu64
            ", the second heaviest %" PRIu64 "\n",
            r->total_load, r->heaviest_slot, r->heaviest_load, r->second_load);
    fprintf(f,
            "members:       %" PRIu32 " balance (positive weight, not drained); %" PRIu32
            " slot%s heavier than every target\n",
            r->members, r->too_heavy, r->too_heavy == 1 ? "" : "s");
    fprintf(f, "above bound:   %" PRIu32 " member%s before, %" PRIu32 " after\n", r->above_before,
            r->above_before == 1 ? "" : "s", r->above_after);
    fprintf(f,
            "moved:         %" PRIu32 " copy move%s (load %" PRIu64 "), %" PRIu32
            " promotion%s (load %" PRIu64 "); ending within every bound moves at least %" PRIu64
            "\n",
            r->moves, r->moves == 1 ? "" : "s", r->moved_load, r->promotions,
            r->promotions == 1 ? "" : "s", r->promoted_load, r->moved_load_floor);
    fprintf(f,
            "max/mean:      %.4f before, %.4f after (no placement beats %.4f: the heaviest "
            "slot over the largest target)\n",
            r->max_ratio_before, r->max_ratio_after, floor);
    fprintf(f, "load moves:    %" PRIu32 " in force\n", r->in_force);
    fprintf(f, "left above:    %" PRIu32 " member%s\n", r->left_count,
            r->left_count == 1 ? "" : "s");
    const uint32_t shown = r->left_count < r->left_cap ? r->left_count : r->left_cap;
    for (uint32_t i = 0; i < shown; i++) {
        const dch_balance_left *l = &r->left[i];
        fputs("  ", f);
        text_string(f, dch_map_node_name(m, l->id));
        fprintf(f, ": load %" PRIu64 ", bound %" PRIu64 "; %s\n", l->load, l->bound,
                left_why(l->why));
    }
}

/* The options of balance as a config; 0 or EXIT_USAGE. */
static int balance_config(const command *cmd, const args *a, dch_balance_config *cfg)
{
    static const number_rule moves_rule = {"max-moves", 0, UINT32_MAX, 0};
    static const number_rule slack_rule = {"count-slack", 0, UINT32_MAX, 0};
    uint64_t v;
    dch_balance_config_init(cfg, DCH_BALANCE_CONFIG_VERSION);
    if (a->given & OPT_CLEAR) {
        if (a->npos != 1 || (a->given & (OPT_MAX_MOVES | OPT_COUNT_SLACK)))
            return usage_error(cmd, "%s",
                               "--clear takes the map alone (no LOADS, --max-moves or "
                               "--count-slack)");
        return 0;
    }
    if (a->npos != 2)
        return usage_error(cmd, "%s", "missing arguments: LOADS, or --clear");
    if (is_stdio(a->pos[0]) && is_stdio(a->pos[1]))
        return usage_error(cmd, "%s", "MAP and LOADS cannot both be standard input");
    if ((a->given & OPT_MAX_MOVES) &&
        number_arg(cmd, opt_value(a, OPT_MAX_MOVES), &moves_rule, &v) != 0)
        return EXIT_USAGE;
    if (a->given & OPT_MAX_MOVES)
        cfg->max_moves = (uint32_t)v;
    if ((a->given & OPT_COUNT_SLACK) &&
        number_arg(cmd, opt_value(a, OPT_COUNT_SLACK), &slack_rule, &v) != 0)
        return EXIT_USAGE;
    if (a->given & OPT_COUNT_SLACK)
        cfg->count_slack = (uint32_t)v;
    return 0;
}

/* The clone m balanced by the loads of a->pos[1] (rep filled), or cleared
 * with --clear (rep zeroed); 0 or EXIT_RUNTIME. */
static int rebalance(const args *a, dch_map *m, const dch_balance_config *cfg,
                     dch_balance_report *rep, double *floor)
{
    *floor = 1.0;
    if (a->given & OPT_CLEAR) {
        const int rc = dch_map_balance_clear(m);
        if (rc != DCH_OK)
            fprintf(stderr, "dchctl: %s\n", dch_strerror(rc));
        return rc == DCH_OK ? 0 : EXIT_RUNTIME;
    }
    uint64_t *load, total;
    int status = read_loads(a->pos[1], dch_map_slot_count(m), &load, &total);
    if (status != 0)
        return status;
    const int rc = dch_map_balance_load(m, load, dch_map_slot_count(m), cfg, rep);
    if (rc != DCH_OK) {
        fprintf(stderr, "dchctl: %s: %s\n", input_name(a->pos[0]), dch_strerror(rc));
        status = EXIT_RUNTIME;
    }
    /* The floor no placement beats, from the targets before the call (the
     * targets do not depend on placement). */
    member_load *ml = calloc(dch_map_id_limit(m) + 1, sizeof *ml);
    load_summary sum;
    if (ml != NULL && status == 0 && member_loads(m, load, ml, &sum) == 0)
        *floor = sum.floor;
    free(ml);
    free(load);
    return status;
}

/* What --clear did, on f. */
static void print_clear(FILE *f, const args *a, const dch_map *m, uint32_t dropped)
{
    if (a->given & OPT_JSON) {
        print_written_json(f, a);
        fprintf(f, ", \"epoch\": %" PRIu64 ", \"fingerprint\": \"%016" PRIx64
                   "\", \"dropped\": %" PRIu32 ", \"in_force\": %" PRIu32 ",\n  ",
                dch_map_epoch(m), dch_map_fingerprint(m), dropped, dch_map_balance_moves(m));
        return;
    }
    if (a->given & OPT_DRY_RUN)
        fprintf(f, "dry run: clear %s: %" PRIu32 " load move%s would be dropped; unchanged; the "
                   "new map would be at",
                output_name(a->pos[0]), dropped, dropped == 1 ? "" : "s");
    else
        fprintf(f, "cleared %s: %" PRIu32 " load move%s dropped; now at",
                output_name(destination(a)), dropped, dropped == 1 ? "" : "s");
    fprintf(f, " epoch %" PRIu64 ", fingerprint %016" PRIx64 "\n", dch_map_epoch(m),
            dch_map_fingerprint(m));
}

/* The report, then the plan from old to m. */
static int print_balance(const args *a, const dch_map *old, const dch_map *m,
                         const dch_balance_report *rep, double floor)
{
    /* The report goes to standard error when the map goes to standard
     * output, as every change's. */
    const int dry = (a->given & OPT_DRY_RUN) != 0;
    FILE *f = is_stdio(destination(a)) && !dry ? stderr : stdout;
    const int json = (a->given & OPT_JSON) != 0;
    plan p;
    memset(&p, 0, sizeof p);
    int status = make_plan(old, m, &p);
    if (status != 0)
        return status;
    if (a->given & OPT_CLEAR)
        print_clear(f, a, m, dch_map_balance_moves(old));
    else if (json)
        print_report_json(f, a, m, rep, floor);
    else
        print_report_text(f, a, m, rep, floor);
    if (!json && map_replicas(m) > 1) {
        copy_counts c;
        copy_changes(old, m, &c);
        print_copies(f, &c, map_replicas(m), 0);
    }
    status = print_plan(f, &p, json, (a->given & OPT_RANGES) != 0);
    if (json)
        fprintf(f, "}\n");
    free(p.moves);
    return status;
}

int cmd_balance(const command *cmd, const args *a)
{
    dch_balance_config cfg;
    /* `balance LOADS MAP`: only a second argument named like a map reads
     * as a map put second (a LOADS file is a file too). */
    const char *second = a->npos == 2 ? a->pos[1] : "";
    const size_t n = strlen(second);
    int status = n > 7 && strcmp(second + n - 7, ".dchmap") == 0 ? check_map_first(cmd, a) : 0;
    if (status == 0)
        status = balance_config(cmd, a, &cfg);
    dch_map *old, *m = NULL;
    if (status != 0 || (status = load(a->pos[0], &old)) != 0)
        return status;
    dch_balance_report rep;
    memset(&rep, 0, sizeof rep);
    rep.left_cap = dch_map_id_limit(old);
    rep.left = calloc(rep.left_cap + 1, sizeof *rep.left);
    double floor = 1.0;
    int rc = rep.left == NULL ? DCH_ENOMEM : dch_map_clone(&m, old);
    if (rc != DCH_OK) {
        fprintf(stderr, "dchctl: %s\n", dch_strerror(rc));
        status = EXIT_RUNTIME;
    }
    if (status == 0)
        status = rebalance(a, m, &cfg, &rep, &floor);
    if (status == 0 && !(a->given & OPT_DRY_RUN))
        status = save(destination(a), m);
    if (status == 0)
        status = print_balance(a, old, m, &rep, floor);
    free(rep.left);
    dch_map_free(m);
    dch_map_free(old);
    return status;
}
