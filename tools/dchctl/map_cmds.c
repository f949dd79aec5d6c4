/* SPDX-License-Identifier: MIT */
/*
 * The commands that keep a map in a file: init, add, remove, weight, show,
 * lookup, verify and fingerprint.
 *
 * Every change loads FILE, changes a copy, writes the copy back atomically
 * (dch_map_save_file) and prints the plan it implies (dch_map_diff between
 * the two), so an operator always sees what will move. FILE is not locked:
 * two changes run at once may lose one of them.
 */
#include "cli.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* ---- Map files -------------------------------------------------------- */

/* For DCH_EIO the system's own reason (errno, e.g. "No such file or
 * directory") says more than "input/output error"; otherwise the library's
 * message (a damaged map, a newer version). */
const char *file_error_cause(int rc, int err)
{
    return rc == DCH_EIO && err != 0 ? strerror(err) : dch_strerror(rc);
}

int report_file_error(const char *path, int rc, int err)
{
    fprintf(stderr, "dchctl: %s: %s\n", path, file_error_cause(rc, err));
    return EXIT_RUNTIME;
}

int load(const char *path, dch_map **m)
{
    errno = 0;
    const int rc = dch_map_load_file(m, path);
    return rc == DCH_OK ? 0 : report_file_error(path, rc, errno);
}

int save(const char *path, const dch_map *m)
{
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

/* Whether the option `flag` is absent or a power of two from 1 to 2^31. */
static int power_of_two_option(const args *a, int flag, uint32_t *out)
{
    return !(a->given & flag) ||
           (parse_u32(opt_value(a, flag), out) == 0 && *out != 0 && (*out & (*out - 1)) == 0);
}

/* The config init's options ask for; 0, or the exit status of a refusal. */
static int init_config(const command *cmd, const args *a, dch_map_config *cfg)
{
    dch_map_config_default(cfg);
    if (!power_of_two_option(a, OPT_UNITS, &cfg->units))
        return usage_error(cmd, "--units %s: not a power of two from 1 to 2^31",
                           opt_value(a, OPT_UNITS));
    if (!power_of_two_option(a, OPT_SLOTS, &cfg->slots_per_unit))
        return usage_error(cmd, "--slots %s: not a power of two from 1 to 2^31",
                           opt_value(a, OPT_SLOTS));
    if ((a->given & OPT_REPLICAS) &&
        (parse_u32(opt_value(a, OPT_REPLICAS), &cfg->replicas) != 0 || cfg->replicas < 1 ||
         cfg->replicas > DCH_MAP_MAX_REPLICAS))
        return usage_error(cmd, "--replicas %s: not an integer from 1 to 8",
                           opt_value(a, OPT_REPLICAS));
    if ((uint64_t)cfg->units * cfg->slots_per_unit > DCH_MAP_MAX_SLOTS)
        return usage_error(cmd, "%s", "units * slots per unit exceeds 2^24");
    if ((a->given & OPT_KEY) && (a->given & OPT_RANDOM_KEY))
        return usage_error(cmd, "%s", "--key and --random-key exclude each other");
    if ((a->given & OPT_KEY) && parse_key(opt_value(a, OPT_KEY), cfg->hash_key) != 0)
        return usage_error(cmd, "--key %s: not 32 hex digits", opt_value(a, OPT_KEY));
    if ((a->given & OPT_RANDOM_KEY) && random_key(cfg->hash_key) != 0) {
        fprintf(stderr, "dchctl: /dev/urandom: cannot read a random key (%s)\n", strerror(errno));
        return EXIT_RUNTIME;
    }
    return 0;
}

int cmd_init(const command *cmd, const args *a)
{
    const char *path = a->pos[0];
    dch_map_config cfg;
    int status = init_config(cmd, a, &cfg);
    if (status != 0)
        return status;
    if (!(a->given & OPT_FORCE)) {
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
    if (status == 0 && (a->given & OPT_JSON)) {
        printf("{\"file\": ");
        json_string(stdout, path);
        printf(", \"units\": %" PRIu32 ", \"slots_per_unit\": %" PRIu32
               ", \"replicas\": %" PRIu32 ", \"fingerprint\": \"%016" PRIx64 "\"}\n",
               cfg.units, cfg.slots_per_unit, map_replicas(m), dch_map_fingerprint(m));
    } else if (status == 0) {
        printf("%s: new map, %" PRIu32 " units of %" PRIu32 " slots", path, cfg.units,
               cfg.slots_per_unit);
        if (map_replicas(m) > 1)
            printf(", %" PRIu32 " copies of every slot", map_replicas(m));
        printf(", fingerprint %016" PRIx64 "\n", dch_map_fingerprint(m));
    }
    dch_map_free(m);
    return status;
}

/* ---- add, remove, weight ---------------------------------------------- */

typedef enum change_kind { CHANGE_ADD, CHANGE_REMOVE, CHANGE_WEIGHT } change_kind;

/* The change itself, on m (a copy of FILE's map); the member's id in *id.
 * zone is NULL but for an add with --zone. */
static int apply_change(dch_map *m, change_kind kind, const char *name, const char *zone,
                        uint32_t weight, uint32_t *id)
{
    if (kind == CHANGE_ADD)
        return zone != NULL ? dch_map_add_node_in_zone(m, name, zone, weight, id)
                            : dch_map_add_node(m, name, weight, id);
    int rc = dch_map_find_node(m, name, id);
    if (rc == DCH_OK)
        rc = kind == CHANGE_REMOVE ? dch_map_remove_node(m, *id)
                                   : dch_map_set_weight(m, *id, weight);
    return rc;
}

/* The changed map, its member and the plan from the old one, printed;
 * with replicas also the copies created and dropped (the plan's ranges are
 * the primaries'). */
static int print_change(const command *cmd, const args *a, change_kind kind, const dch_map *old,
                        const dch_map *m, uint32_t id, uint32_t weight, const plan *p)
{
    static const char *const verbs[][2] = {{"added", "add"}, {"removed", "remove"},
                                           {"reweighted", "reweigh"}};
    const char *path = a->pos[0], *name = a->pos[1];
    const int dry = (a->given & OPT_DRY_RUN) != 0;
    const uint64_t fp = dch_map_fingerprint(m);
    const int replicas = map_replicas(m) > 1;
    uint64_t created = 0, dropped = 0;
    if (replicas)
        copy_changes(old, m, &created, &dropped);
    const char *zone = dch_map_node_zone(m, id);
    if (a->given & OPT_JSON) {
        printf("{\"file\": ");
        json_string(stdout, path);
        printf(", \"change\": \"%s\", \"name\": ", cmd->name);
        json_string(stdout, name);
        if (kind == CHANGE_ADD && zone != NULL) {
            printf(", \"zone\": ");
            json_string(stdout, zone);
        }
        printf(", \"weight\": %" PRIu32 ", \"written\": %s, \"epoch\": %" PRIu64
               ", \"fingerprint\": \"%016" PRIx64 "\",\n  ",
               dch_map_node_weight(m, id), dry ? "false" : "true", dch_map_epoch(m), fp);
        if (replicas)
            printf("\"replicas\": %" PRIu32 ", \"copies_created\": %" PRIu64
                   ", \"copies_dropped\": %" PRIu64 ",\n  ",
                   map_replicas(m), created, dropped);
        const int status = print_plan(p, 1, 1);
        printf("}\n");
        return status;
    }
    printf("%s%s %s", dry ? "dry run: " : "", verbs[kind][dry], name);
    if (kind == CHANGE_ADD && zone != NULL)
        printf(" in zone %s", zone);
    if (kind != CHANGE_REMOVE)
        printf(" (weight %" PRIu32 ")", weight);
    printf(": %s %s epoch %" PRIu64 ", fingerprint %016" PRIx64 "\n", path,
           dry ? "unchanged; the new map would be at" : "now at", dch_map_epoch(m), fp);
    if (replicas)
        printf("copies: %" PRIu64 " created, %" PRIu64 " dropped (%" PRIu32
               " copies of every slot; the plan below is the primaries')\n",
               created, dropped, map_replicas(m));
    return print_plan(p, 0, (a->given & OPT_RANGES) != 0);
}

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
    const char *zone = (a->given & OPT_ZONE) ? opt_value(a, OPT_ZONE) : NULL;
    if (zone != NULL && !valid_name(zone))
        return usage_error(cmd, "%s",
                           "a zone has 1 to 255 bytes and no control character (TAB, newline, ...)");
    dch_map *old, *m = NULL;
    int status = load(path, &old);
    if (status != 0)
        return status;
    uint32_t id = 0;
    int rc = dch_map_clone(&m, old);
    if (rc != DCH_OK)
        fprintf(stderr, "dchctl: %s\n", dch_strerror(rc));
    else if ((rc = apply_change(m, kind, name, zone, weight, &id)) != DCH_OK)
        fprintf(stderr, "dchctl: %s: %s: %s\n", path, name, dch_strerror(rc));
    status = rc != DCH_OK ? EXIT_RUNTIME : 0;
    if (status == 0 && !(a->given & OPT_DRY_RUN))
        status = save(path, m);
    plan p;
    memset(&p, 0, sizeof p);
    if (status == 0)
        status = make_plan(old, m, &p);
    if (status == 0)
        status = print_change(cmd, a, kind, old, m, id, weight, &p);
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

/* ---- lookup, verify, fingerprint -------------------------------------- */

/* One key's answer in JSON: the primary as id and name, and with replicas
 * every copy, primary first, as "copies". */
static void print_lookup_json(const dch_map *m, const char *key, uint64_t h, const uint32_t *ids,
                              size_t n, int first)
{
    const uint32_t id = n > 0 ? ids[0] : DCH_NODE_NONE;
    printf("%s\n  {\"key\": ", first ? "" : ",");
    json_string(stdout, key);
    printf(", \"hash\": \"%016" PRIx64 "\", \"slot\": %" PRIu32 ", \"id\": ", h,
           dch_map_slot_of(m, h));
    if (id == DCH_NODE_NONE)
        printf("null");
    else
        printf("%" PRIu32, id);
    printf(", \"name\": ");
    json_string(stdout, dch_map_node_name(m, id));
    if (map_replicas(m) > 1) {
        printf(", \"copies\": [");
        for (size_t i = 0; i < n; i++) {
            printf("%s", i ? ", " : "");
            json_string(stdout, dch_map_node_name(m, ids[i]));
        }
        printf("]");
    }
    printf("}");
}

/*
 * Text: KEY, then a column per copy, primary first (one column with one
 * copy per slot, "-" when no member owns anything), tab-separated.
 */
int cmd_lookup(const command *cmd, const args *a)
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
        uint32_t ids[DCH_MAP_MAX_REPLICAS];
        size_t n = dch_map_lookup_replicas_hash(m, h, ids, DCH_MAP_MAX_REPLICAS);
        n = n < DCH_MAP_MAX_REPLICAS ? n : DCH_MAP_MAX_REPLICAS;
        if (json) {
            print_lookup_json(m, key, h, ids, n, i == 1);
        } else {
            text_string(stdout, key);
            if (n == 0)
                printf("\t-");
            for (size_t c = 0; c < n; c++)
                printf("\t%s", or_dash(dch_map_node_name(m, ids[c])));
            printf("\n");
        }
    }
    if (json)
        printf("%s]\n", a->npos > 1 ? "\n" : "");
    dch_map_free(m);
    return 0;
}

int cmd_verify(const command *cmd, const args *a)
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
