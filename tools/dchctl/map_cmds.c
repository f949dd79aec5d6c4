/* SPDX-License-Identifier: MIT */
/*
 * The commands that keep a map in a file: init, add, remove, weight, drain,
 * undrain, verify and fingerprint, and the loading and saving of maps every
 * command shares.
 *
 * Every change loads FILE, changes a copy, writes the copy back atomically
 * (dch_map_save_file) and prints the plan it implies (dch_map_diff between
 * the two), so an operator always sees what will move. FILE is not locked:
 * two changes run at once may lose one of them.
 *
 * FILE '-' is standard input: its bytes are read whole and given to
 * dch_map_load, the loader dch_map_load_file ends in. A map written to
 * standard output (--out -, or FILE '-' without --out) leaves standard
 * output to the map's bytes alone, and the report goes to standard error,
 * so that changes chain through pipes:
 *
 *     dchctl init - | dchctl add - a | dchctl add - b | dchctl show -
 */
#define _POSIX_C_SOURCE 200809L /* isatty */
#include "cli.h"
#include "number.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- Map files -------------------------------------------------------- */

/* For DCH_EIO the system's own reason (errno, e.g. "No such file or
 * directory") says more than "input/output error"; otherwise the library's
 * message (a damaged map, a newer version). */
const char *file_error_cause(int rc, int err)
{
    return rc == DCH_EIO && err != 0 ? strerror(err) : dch_strerror(rc);
}

const char *input_name(const char *path)
{
    return is_stdio(path) ? "standard input" : path;
}

const char *output_name(const char *path)
{
    return is_stdio(path) ? "standard output" : path;
}

int report_file_error(const char *path, int rc, int err)
{
    fprintf(stderr, "dchctl: %s: %s\n", input_name(path), file_error_cause(rc, err));
    return EXIT_RUNTIME;
}

/* Twice what the largest map saves to (2^24 slots of 8 copies, 65535
 * members: about 0.5 GB). Input beyond it is no map, and reading on would
 * only hold memory. */
#define STDIN_MAP_LIMIT ((size_t)1 << 30)

/* All of standard input, in *buf (the caller frees it) and *len: DCH_OK,
 * DCH_EIO (errno says why), DCH_ENOMEM, or DCH_ECORRUPT past the limit. */
static int read_stdin(uint8_t **buf, size_t *len)
{
    uint8_t *b = NULL;
    size_t n = 0, cap = 0;
    int rc = DCH_OK;
    for (;;) {
        if (n == cap && cap >= STDIN_MAP_LIMIT) {
            rc = DCH_ECORRUPT;
            break;
        }
        uint8_t *g = grow(b, n, &cap, 1, (size_t)1 << 16);
        if (g == NULL) {
            rc = DCH_ENOMEM;
            break;
        }
        b = g;
        const size_t want = cap - n, got = fread(b + n, 1, want, stdin);
        n += got;
        if (got < want) /* end of input, or an error */
            break;
    }
    const int err = errno;
    if (rc == DCH_OK && ferror(stdin))
        rc = DCH_EIO;
    if (rc != DCH_OK) {
        free(b);
        errno = err;
        return rc;
    }
    *buf = b;
    *len = n;
    return DCH_OK;
}

int load_map(dch_map **m, const char *path)
{
    if (!is_stdio(path))
        return dch_map_load_file(m, path);
    uint8_t *buf;
    size_t len;
    int rc = read_stdin(&buf, &len);
    if (rc == DCH_OK) {
        rc = dch_map_load(m, buf, len);
        free(buf);
    }
    return rc;
}

int load(const char *path, dch_map **m)
{
    errno = 0;
    const int rc = load_map(m, path);
    return rc == DCH_OK ? 0 : report_file_error(path, rc, errno);
}

/* The map's bytes on standard output. Not on a terminal: they are binary
 * and would garble it. */
static int write_stdout(const dch_map *m)
{
    if (isatty(STDOUT_FILENO)) {
        fputs("dchctl: standard output is a terminal, and a map is binary: redirect it to "
              "a file or a pipe\n",
              stderr);
        return EXIT_RUNTIME;
    }
    size_t len = 0;
    int rc = dch_map_save(m, NULL, 0, &len);
    uint8_t *buf = rc == DCH_OK ? malloc(len) : NULL;
    if (rc == DCH_OK && buf == NULL)
        return out_of_memory();
    if (rc == DCH_OK)
        rc = dch_map_save(m, buf, len, &len);
    int status = 0;
    if (rc != DCH_OK) {
        fprintf(stderr, "dchctl: %s\n", dch_strerror(rc));
        status = EXIT_RUNTIME;
    } else if (fwrite(buf, 1, len, stdout) != len || fflush(stdout) != 0) {
        status = write_error("standard output", errno);
    }
    free(buf);
    return status;
}

int save(const char *path, const dch_map *m)
{
    if (is_stdio(path))
        return write_stdout(m);
    errno = 0;
    const int rc = dch_map_save_file(m, path);
    return rc == DCH_OK ? 0 : report_file_error(path, rc, errno);
}

uint32_t map_replicas(const dch_map *m)
{
    dch_map_config cfg;
    dch_map_get_config(m, &cfg);
    return cfg.replicas == 0 ? 1 : cfg.replicas;
}

const char *drain_mode_name(uint32_t mode)
{
    return mode == DCH_DRAIN_FULL ? "full" : mode == DCH_DRAIN_PRIMARY ? "primary" : NULL;
}

int map_has_zones(const dch_map *m)
{
    const uint32_t limit = dch_map_id_limit(m);
    for (uint32_t id = 0; id < limit; id++)
        if (dch_map_node_zone(m, id) != NULL)
            return 1;
    return 0;
}

/* ---- init ------------------------------------------------------------- */

static int random_key(uint8_t key[16])
{
    FILE *f = fopen("/dev/urandom", "rb");
    if (f == NULL)
        return -1;
    const size_t got = fread(key, 1, 16, f);
    fclose(f);
    return got == 16 ? 0 : -1;
}

/* The options of init, as parse_number reads them. Units and slots per
 * unit are powers of two whose product is at most DCH_MAP_MAX_SLOTS, so
 * neither alone can pass it. */
static const number_rule units_rule = {"units", 1, DCH_MAP_MAX_SLOTS, 1};
static const number_rule slots_rule = {"slots", 1, DCH_MAP_MAX_SLOTS, 1};
static const number_rule replicas_rule = {"replicas", 1, DCH_MAP_MAX_REPLICAS, 0};
const number_rule weight_rule = {"weight", 0, UINT32_MAX, 0};

/* The option `flag`, when given, into *out under rule; 0 or EXIT_USAGE. */
static int u32_option(const command *cmd, const args *a, int flag, const number_rule *rule,
                      uint32_t *out)
{
    uint64_t v;
    if (!(a->given & flag))
        return 0;
    if (number_arg(cmd, opt_value(a, flag), rule, &v) != 0)
        return EXIT_USAGE;
    *out = (uint32_t)v;
    return 0;
}

/* The config init's options ask for; 0, or the exit status of a refusal. */
static int init_config(const command *cmd, const args *a, dch_map_config *cfg)
{
    dch_map_config_default(cfg);
    if (u32_option(cmd, a, OPT_UNITS, &units_rule, &cfg->units) != 0 ||
        u32_option(cmd, a, OPT_SLOTS, &slots_rule, &cfg->slots_per_unit) != 0 ||
        u32_option(cmd, a, OPT_REPLICAS, &replicas_rule, &cfg->replicas) != 0)
        return EXIT_USAGE;
    const uint64_t slots = (uint64_t)cfg->units * cfg->slots_per_unit;
    if (slots > DCH_MAP_MAX_SLOTS)
        return usage_fail(cmd,
                          "units * slots would be %" PRIu32 " * %" PRIu32 " = %" PRIu64
                          " slots, above the limit of %u (2^24)",
                          cfg->units, cfg->slots_per_unit, slots, DCH_MAP_MAX_SLOTS);
    if ((a->given & OPT_KEY) && (a->given & OPT_RANDOM_KEY))
        return usage_error(cmd, "%s", "--key and --random-key exclude each other");
    if ((a->given & OPT_KEY) && dch__hex_parse(opt_value(a, OPT_KEY), cfg->hash_key, 16) != 0)
        return usage_error(cmd, "--key must be 32 hexadecimal digits, not \"%s\"",
                           opt_value(a, OPT_KEY));
    if ((a->given & OPT_RANDOM_KEY) && random_key(cfg->hash_key) != 0) {
        fprintf(stderr, "dchctl: /dev/urandom: cannot read a random key (%s)\n", strerror(errno));
        return EXIT_RUNTIME;
    }
    return 0;
}

/* What init made, on f: standard error when the map went to standard
 * output. */
static void print_init(FILE *f, const args *a, const dch_map *m, const dch_map_config *cfg)
{
    const char *path = a->pos[0];
    if (a->given & OPT_JSON) {
        fprintf(f, "{\"file\": ");
        json_string(f, path);
        fprintf(f, ", \"units\": %" PRIu32 ", \"slots_per_unit\": %" PRIu32
                   ", \"replicas\": %" PRIu32 ", \"fingerprint\": \"%016" PRIx64 "\"}\n",
                cfg->units, cfg->slots_per_unit, map_replicas(m), dch_map_fingerprint(m));
        return;
    }
    fprintf(f, "%s: new map, %" PRIu32 " units of %" PRIu32 " slots", output_name(path),
            cfg->units, cfg->slots_per_unit);
    if (map_replicas(m) > 1)
        fprintf(f, ", %" PRIu32 " copies of every slot", map_replicas(m));
    fprintf(f, ", fingerprint %016" PRIx64 "\n", dch_map_fingerprint(m));
}

/* FILE '-' writes the map to standard output; init's own FILE is where the
 * map goes, so it takes no --out. */
int cmd_init(const command *cmd, const args *a)
{
    const char *path = a->pos[0];
    dch_map_config cfg;
    int status = init_config(cmd, a, &cfg);
    if (status != 0)
        return status;
    if (!is_stdio(path) && !(a->given & OPT_FORCE)) {
        FILE *f = fopen(path, "rb");
        if (f != NULL) {
            fclose(f);
            fprintf(stderr, "dchctl: %s: already exists (--force replaces it)\n", path);
            return EXIT_RUNTIME;
        }
    }
    dch_map *m;
    const int rc = dch_map_new(&m, &cfg);
    if (rc != DCH_OK) {
        fprintf(stderr, "dchctl: %s\n", dch_strerror(rc));
        return EXIT_RUNTIME;
    }
    status = save(path, m);
    if (status == 0)
        print_init(is_stdio(path) ? stderr : stdout, a, m, &cfg);
    dch_map_free(m);
    return status;
}

/* ---- add, remove, weight, drain, undrain ------------------------------ */

typedef enum change_kind {
    CHANGE_ADD,
    CHANGE_REMOVE,
    CHANGE_WEIGHT,
    CHANGE_DRAIN,
    CHANGE_UNDRAIN
} change_kind;

/* The mode drain asks for (--primary or not); 0 for the other changes. */
static uint32_t drain_mode(const args *a, change_kind kind)
{
    if (kind != CHANGE_DRAIN)
        return 0;
    return (a->given & OPT_PRIMARY) ? DCH_DRAIN_PRIMARY : DCH_DRAIN_FULL;
}

/* The change itself, on m (a copy of FILE's map); the member's id in *id.
 * zone is NULL but for an add with --zone. An undrain of a member that is
 * not drained leaves m as it is, whatever the library would say of it: the
 * operator's intent (the member serves) already holds. */
static int apply_change(dch_map *m, change_kind kind, const char *name, const char *zone,
                        uint32_t weight, uint32_t mode, uint32_t *id)
{
    if (kind == CHANGE_ADD)
        return zone != NULL ? dch_map_add_node_in_zone(m, name, zone, weight, id)
                            : dch_map_add_node(m, name, weight, id);
    int rc = dch_map_find_node(m, name, id);
    if (rc != DCH_OK)
        return rc;
    switch (kind) {
    case CHANGE_REMOVE:
        return dch_map_remove_node(m, *id);
    case CHANGE_DRAIN:
        return dch_map_drain(m, *id, mode);
    case CHANGE_UNDRAIN:
        return dch_map_node_drained(m, *id) == 0 ? DCH_OK : dch_map_undrain(m, *id);
    default:
        return dch_map_set_weight(m, *id, weight);
    }
}

const char *destination(const args *a)
{
    if (!(a->given & OPT_OUT))
        return a->pos[0];
    const char *out = opt_value(a, OPT_OUT);
    return strcmp(out, "-") == 0 ? stdio_arg : out;
}

/* Members of positive weight: those that hold data. */
static uint32_t weighted_members(const dch_map *m)
{
    uint32_t n = 0;
    const uint32_t limit = dch_map_id_limit(m);
    for (uint32_t id = 0; id < limit; id++)
        n += dch_map_node_name(m, id) != NULL && dch_map_node_weight(m, id) > 0;
    return n;
}

/* What the guard measures of a change: slots whose primary changes (the
 * plan's; with one copy, slots that change owner) and copies of data. */
typedef struct change_size {
    uint64_t primaries, promoted, slots;
    copy_counts copies;
    uint32_t replicas;
} change_size;

static change_size size_of(const dch_map *m, const plan *p, const copy_counts *c)
{
    change_size z = {0, 0, p->P, *c, map_replicas(m)};
    for (size_t i = 0; i < p->n; i++) {
        z.primaries += p->moves[i].slots;
        z.promoted += p->moves[i].promoted;
    }
    return z;
}

/*
 * The guard against a change that moves most of a map: one after which
 * more than half of its slots have another primary that held no copy of
 * them (with one copy, another owner), or more than half of the copies it
 * holds are copied to another member, needs --force. Promotions do not
 * count: they move no data, and adding a member in a zone of its own
 * commonly promotes a copy in a third of the slots. A map with fewer than 2 members of positive weight is
 * exempt: its first member takes every slot and its second often more than
 * half, and that is how a map is built, not a mistake.
 * 0: no need; 1: for the primaries; 2: for the copies.
 */
static int needs_force(const dch_map *old, const change_size *z)
{
    if (weighted_members(old) < 2)
        return 0;
    if (2 * (z->primaries - z->promoted) > z->slots)
        return 1;
    return 2 * z->copies.copied > z->copies.held ? 2 : 0;
}

/* "this change moves 65536 of 65536 slots (100.0%) of the map". */
static void print_data_moved(FILE *f, const change_size *z, int why)
{
    const uint64_t part = why == 2 ? z->copies.copied : z->primaries - z->promoted;
    const uint64_t whole = why == 2 ? z->copies.held : z->slots;
    const double pct = whole > 0 ? 100.0 * (double)part / (double)whole : 0.0;
    if (why == 2)
        fprintf(f, "this change moves %" PRIu64 " of the %" PRIu64 " copies (%.1f%%) of the map",
                part, whole, pct);
    else if (z->replicas > 1)
        fprintf(f, "this change moves the primary of %" PRIu64 " of %" PRIu64
                   " slots (%.1f%%) of the map to a member that held no copy",
                part, whole, pct);
    else
        fprintf(f, "this change moves %" PRIu64 " of %" PRIu64 " slots (%.1f%%) of the map", part,
                whole, pct);
}

/* What a change did, and the guard's verdict, for its report. */
typedef struct change_report {
    change_kind kind;
    const dch_map *m;
    uint32_t id, weight;
    uint32_t was_drained; /* the member's drain mode before the change (0: none) */
    const plan *p;
    change_size size;
    int needs_force; /* needs_force's answer */
} change_report;

static void print_change_json(FILE *f, const command *cmd, const args *a, const change_report *r)
{
    const dch_map *m = r->m;
    const char *zone = dch_map_node_zone(m, r->id);
    fprintf(f, "{\"file\": ");
    json_string(f, a->pos[0]);
    if (a->given & OPT_OUT) {
        fprintf(f, ", \"out\": ");
        json_string(f, destination(a));
    }
    fprintf(f, ", \"change\": \"%s\", \"name\": ", cmd->name);
    json_string(f, a->pos[1]);
    if (r->kind == CHANGE_ADD && zone != NULL) {
        fprintf(f, ", \"zone\": ");
        json_string(f, zone);
    }
    if (r->kind == CHANGE_DRAIN || r->kind == CHANGE_UNDRAIN) {
        fprintf(f, ", \"drained\": ");
        json_string(f, drain_mode_name(dch_map_node_drained(m, r->id)));
        fprintf(f, ", \"was_drained\": ");
        json_string(f, drain_mode_name(r->was_drained));
    }
    fprintf(f, ", \"weight\": %" PRIu32 ", \"written\": %s, \"epoch\": %" PRIu64
               ", \"fingerprint\": \"%016" PRIx64 "\", \"needs_force\": %s,\n  ",
            dch_map_node_weight(m, r->id), (a->given & OPT_DRY_RUN) ? "false" : "true",
            dch_map_epoch(m), dch_map_fingerprint(m), r->needs_force != 0 ? "true" : "false");
    if (map_replicas(m) > 1)
        fprintf(f, "\"replicas\": %" PRIu32 ", ", map_replicas(m));
    print_copies(f, &r->size.copies, map_replicas(m), 1);
}

/* " (full)" or " (primary)": the mode the drain leaves in force. */
static void print_drain_mode(FILE *f, const change_report *r)
{
    const uint32_t now = dch_map_node_drained(r->m, r->id);
    fprintf(f, " (%s", or_dash(drain_mode_name(now)));
    if (now == DCH_DRAIN_PRIMARY && map_replicas(r->m) == 1)
        fputs("; with one copy a slot it acts as a full drain", f);
    fputc(')', f);
}

/* A drain or undrain that changes nothing says so, and why; a removal or
 * a weight that ends a drain says that. */
static void print_drain_note(FILE *f, const args *a, const change_report *r)
{
    const uint32_t now = dch_map_node_drained(r->m, r->id);
    if (r->kind == CHANGE_DRAIN && r->was_drained == now)
        fprintf(f, "note: %s was drained (%s) already: nothing changed\n", a->pos[1],
                drain_mode_name(now));
    else if (r->kind == CHANGE_DRAIN && r->was_drained != 0)
        fprintf(f, "note: %s was drained (%s): the %s drain replaces it\n", a->pos[1],
                drain_mode_name(r->was_drained), drain_mode_name(now));
    else if (r->kind == CHANGE_UNDRAIN && r->was_drained == 0)
        fprintf(f, "note: %s was not drained: nothing changed\n", a->pos[1]);
    else if ((r->kind == CHANGE_REMOVE || r->kind == CHANGE_WEIGHT) && r->was_drained != 0 &&
             (r->kind == CHANGE_REMOVE || now == 0))
        fprintf(f, "note: %s was drained (%s): its %s ends the drain\n", a->pos[1],
                drain_mode_name(r->was_drained),
                r->kind == CHANGE_REMOVE ? "removal" : "new weight");
}

/* A change's report on f: the changed map, its member, the data it moves
 * and the plan from the old one; with replicas the copies created and
 * dropped (the plan's ranges are the primaries'). */
static int print_change(FILE *f, const command *cmd, const args *a, const change_report *r)
{
    static const char *const verbs[][2] = {{"added", "add"},         {"removed", "remove"},
                                           {"reweighted", "reweigh"}, {"drained", "drain"},
                                           {"undrained", "undrain"}};
    if (a->given & OPT_JSON) {
        print_change_json(f, cmd, a, r);
        const int status = print_plan(f, r->p, 1, 1);
        fprintf(f, "}\n");
        return status;
    }
    const int dry = (a->given & OPT_DRY_RUN) != 0;
    const char *zone = dch_map_node_zone(r->m, r->id);
    fprintf(f, "%s%s %s", dry ? "dry run: " : "", verbs[r->kind][dry], a->pos[1]);
    if (r->kind == CHANGE_ADD && zone != NULL)
        fprintf(f, " in zone %s", zone);
    if (r->kind == CHANGE_DRAIN)
        print_drain_mode(f, r);
    else if (r->kind != CHANGE_REMOVE && r->kind != CHANGE_UNDRAIN)
        fprintf(f, " (weight %" PRIu32 ")", r->weight);
    fprintf(f, ": %s %s epoch %" PRIu64 ", fingerprint %016" PRIx64 "\n",
            output_name(destination(a)), dry ? "unchanged; the new map would be at" : "now at",
            dch_map_epoch(r->m), dch_map_fingerprint(r->m));
    print_drain_note(f, a, r);
    if (map_replicas(r->m) > 1)
        print_copies(f, &r->size.copies, map_replicas(r->m), 0);
    if (r->needs_force && dry) {
        fputs("note: ", f);
        print_data_moved(f, &r->size, r->needs_force);
        fputs(", more than half: without --dry-run it needs --force\n", f);
    }
    return print_plan(f, r->p, 0, (a->given & OPT_RANGES) != 0);
}

/* A change's arguments that are wrong whatever FILE holds; 0 or the exit
 * status of a usage error. */
static int check_change(const command *cmd, const args *a, change_kind kind, uint32_t *weight)
{
    const char *name = a->pos[1];
    const char *wtext = kind == CHANGE_WEIGHT ? a->pos[2]
                        : (a->given & OPT_WEIGHT) ? opt_value(a, OPT_WEIGHT)
                                                  : NULL;
    uint64_t w;
    if (wtext != NULL && number_arg(cmd, wtext, &weight_rule, &w) != 0)
        return EXIT_USAGE;
    if (wtext != NULL)
        *weight = (uint32_t)w;
    if (is_stdio(name))
        return usage_error(cmd, "%s", "a NAME '-' goes after -- ('-' alone is standard input)");
    if (check_name(cmd, "name", name) != 0)
        return EXIT_USAGE;
    const char *zone = (a->given & OPT_ZONE) ? opt_value(a, OPT_ZONE) : NULL;
    if (zone != NULL && check_name(cmd, "zone", zone) != 0)
        return EXIT_USAGE;
    if ((a->given & OPT_OUT) && opt_value(a, OPT_OUT)[0] == '\0')
        return usage_error(cmd, "%s", "--out needs a file name ('-': standard output)");
    return 0;
}

/*
 * The limits a change may pass, named with the value that passes them
 * (the library answers only "over a documented limit"): the members a map
 * holds and the sum of the weights. 0, or EXIT_RUNTIME after saying which.
 */
static int check_limits(const char *path, const dch_map *old, change_kind kind,
                        const char *name, uint32_t weight)
{
    uint32_t id;
    const int present = dch_map_find_node(old, name, &id) == DCH_OK;
    if (kind == CHANGE_ADD && !present && dch_map_node_count(old) >= DCH_MAP_MAX_NODES) {
        fprintf(stderr, "dchctl: %s: the map has %" PRIu32 " members, the most a map holds (%u)\n",
                input_name(path), dch_map_node_count(old), DCH_MAP_MAX_NODES);
        return EXIT_RUNTIME;
    }
    uint64_t total = dch_map_total_weight(old);
    if (kind == CHANGE_ADD && !present)
        total += weight;
    else if (kind == CHANGE_WEIGHT && present)
        total = total - dch_map_node_weight(old, id) + weight;
    if (total > UINT32_MAX) {
        fprintf(stderr,
                "dchctl: %s: %s: the total weight would be %" PRIu64
                ", above the limit of %" PRIu32 "\n",
                input_name(path), name, total, UINT32_MAX);
        return EXIT_RUNTIME;
    }
    return 0;
}

/*
 * `dchctl add node-x MAP`: a FILE that does not exist, and after it an
 * argument that is a file or is named like a map (*.dchmap), reads as a
 * map put after the name. A usage error that shows the order, rather than
 * "No such file or directory". 0 when the arguments do not look swapped.
 */
int check_map_first(const command *cmd, const args *a)
{
    const char *path = a->pos[0];
    struct stat st;
    if (is_stdio(path) || stat(path, &st) == 0 || errno != ENOENT)
        return 0;
    for (int i = 1; i < a->npos; i++) {
        const char *s = a->pos[i];
        const size_t n = strlen(s);
        const int named = n > 7 && strcmp(s + n - 7, ".dchmap") == 0;
        if (is_stdio(s) || (!named && (stat(s, &st) != 0 || !S_ISREG(st.st_mode))))
            continue;
        char order[1024];
        size_t len = (size_t)snprintf(order, sizeof order, "dchctl %s %s", cmd->name, s);
        for (int k = 0; k < a->npos && len < sizeof order; k++)
            if (k != i)
                len += (size_t)snprintf(order + len, sizeof order - len, " %s", a->pos[k]);
        return usage_fail(cmd, "%s: no such map file; did you mean `%s` (the map first)?", path,
                          order);
    }
    return 0;
}

/* Apply the change to a clone of old (in *m); 0 or EXIT_RUNTIME. */
static int make_change(const args *a, change_kind kind, const dch_map *old, dch_map **m,
                       uint32_t weight, uint32_t *id)
{
    const char *path = a->pos[0], *name = a->pos[1];
    const char *zone = (a->given & OPT_ZONE) ? opt_value(a, OPT_ZONE) : NULL;
    int status = check_limits(path, old, kind, name, weight);
    if (status != 0)
        return status;
    int rc = dch_map_clone(m, old);
    if (rc != DCH_OK)
        fprintf(stderr, "dchctl: %s\n", dch_strerror(rc));
    else if ((rc = apply_change(*m, kind, name, zone, weight, drain_mode(a, kind), id)) !=
             DCH_OK)
        fprintf(stderr, "dchctl: %s: %s: %s\n", input_name(path), name, dch_strerror(rc));
    return rc != DCH_OK ? EXIT_RUNTIME : 0;
}

/* Load FILE, apply one change to a copy, hold it to the guard, write it (to
 * FILE or --out), print the plan: on standard error when the map went to
 * standard output. */
static int change(const command *cmd, const args *a, change_kind kind)
{
    const char *dest = destination(a);
    const int dry = (a->given & OPT_DRY_RUN) != 0;
    change_report r;
    memset(&r, 0, sizeof r);
    r.kind = kind;
    r.weight = 1;
    int status = check_map_first(cmd, a);
    if (status == 0)
        status = check_change(cmd, a, kind, &r.weight);
    dch_map *old, *m = NULL;
    if (status != 0 || (status = load(a->pos[0], &old)) != 0)
        return status;
    status = make_change(a, kind, old, &m, r.weight, &r.id);
    if (status == 0 && kind != CHANGE_ADD)
        r.was_drained = dch_map_node_drained(old, r.id);
    plan p;
    memset(&p, 0, sizeof p);
    if (status == 0)
        status = make_plan(old, m, &p);
    if (status == 0) {
        copy_counts c;
        copy_changes(old, m, &c);
        r.size = size_of(m, &p, &c);
        r.needs_force = needs_force(old, &r.size);
    }
    if (status == 0 && r.needs_force && !dry && !(a->given & OPT_FORCE)) {
        fprintf(stderr, "dchctl: %s: ", input_name(a->pos[0]));
        print_data_moved(stderr, &r.size, r.needs_force);
        fputs("; --force to make it anyway (--dry-run shows its plan)\n", stderr);
        status = EXIT_RUNTIME;
    }
    if (status == 0 && !dry)
        status = save(dest, m);
    r.m = m;
    r.p = &p;
    if (status == 0)
        status = print_change(is_stdio(dest) && !dry ? stderr : stdout, cmd, a, &r);
    free(p.moves);
    dch_map_free(m);
    dch_map_free(old);
    return status;
}

int cmd_add(const command *cmd, const args *a)
{
    return change(cmd, a, CHANGE_ADD);
}

int cmd_remove(const command *cmd, const args *a)
{
    return change(cmd, a, CHANGE_REMOVE);
}

int cmd_weight(const command *cmd, const args *a)
{
    return change(cmd, a, CHANGE_WEIGHT);
}

int cmd_drain(const command *cmd, const args *a)
{
    return change(cmd, a, CHANGE_DRAIN);
}

int cmd_undrain(const command *cmd, const args *a)
{
    return change(cmd, a, CHANGE_UNDRAIN);
}

/* ---- verify, fingerprint ---------------------------------------------- */

int cmd_verify(const command *cmd, const args *a)
{
    (void)cmd;
    const char *path = a->pos[0];
    dch_map *m;
    errno = 0;
    const int rc = load_map(&m, path);
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
               input_name(path), dch_map_epoch(m), dch_map_fingerprint(m), dch_map_node_count(m),
               dch_map_slot_count(m));
    }
    if (rc != DCH_OK)
        return report_file_error(path, rc, err);
    dch_map_free(m);
    return 0;
}

int cmd_fingerprint(const command *cmd, const args *a)
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
