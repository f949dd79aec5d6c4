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
    fprintf(stderr, "dch: %s: %s\n", path, file_error_cause(rc, err));
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
    if ((uint64_t)cfg->units * cfg->slots_per_unit > DCH_MAP_MAX_SLOTS)
        return usage_error(cmd, "%s", "units * slots per unit exceeds 2^24");
    if ((a->given & OPT_KEY) && (a->given & OPT_RANDOM_KEY))
        return usage_error(cmd, "%s", "--key and --random-key exclude each other");
    if ((a->given & OPT_KEY) && parse_key(opt_value(a, OPT_KEY), cfg->hash_key) != 0)
        return usage_error(cmd, "--key %s: not 32 hex digits", opt_value(a, OPT_KEY));
    if ((a->given & OPT_RANDOM_KEY) && random_key(cfg->hash_key) != 0) {
        fprintf(stderr, "dch: /dev/urandom: cannot read a random key (%s)\n", strerror(errno));
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
            fprintf(stderr, "dch: %s: already exists (--force replaces it)\n", path);
            return EXIT_RUNTIME;
        }
    }
    dch_map *m;
    const int rc = dch_map_new(&m, &cfg);
    if (rc != DCH_OK) {
        fprintf(stderr, "dch: %s\n", dch_strerror(rc));
        return EXIT_RUNTIME;
    }
    status = save(path, m);
    if (status == 0 && (a->given & OPT_JSON)) {
        printf("{\"file\": ");
        json_string(stdout, path);
        printf(", \"units\": %" PRIu32 ", \"slots_per_unit\": %" PRIu32
               ", \"fingerprint\": \"%016" PRIx64 "\"}\n",
               cfg.units, cfg.slots_per_unit, dch_map_fingerprint(m));
    } else if (status == 0) {
        printf("%s: new map, %" PRIu32 " units of %" PRIu32 " slots, fingerprint %016" PRIx64
               "\n",
               path, cfg.units, cfg.slots_per_unit, dch_map_fingerprint(m));
    }
    dch_map_free(m);
    return status;
}

/* ---- add, remove, weight ---------------------------------------------- */

typedef enum change_kind { CHANGE_ADD, CHANGE_REMOVE, CHANGE_WEIGHT } change_kind;

/* Whether a member name is valid: 1 .. DCH_NAME_MAX bytes, no control byte. */
static int valid_name(const char *s)
{
    size_t n = 0;
    for (; s[n] != '\0'; n++)
        if ((unsigned char)s[n] < 0x20 || (unsigned char)s[n] == 0x7F)
            return 0;
    return n >= 1 && n <= DCH_NAME_MAX;
}

/* The change itself, on m (a copy of FILE's map); the member's id in *id. */
static int apply_change(dch_map *m, change_kind kind, const char *name, uint32_t weight,
                        uint32_t *id)
{
    if (kind == CHANGE_ADD)
        return dch_map_add_node(m, name, weight, id);
    int rc = dch_map_find_node(m, name, id);
    if (rc == DCH_OK)
        rc = kind == CHANGE_REMOVE ? dch_map_remove_node(m, *id)
                                   : dch_map_set_weight(m, *id, weight);
    return rc;
}

/* The changed map, its member and the plan from the old one, printed. */
static int print_change(const command *cmd, const args *a, change_kind kind, const dch_map *m,
                        uint32_t id, uint32_t weight, const plan *p)
{
    static const char *const verbs[][2] = {{"added", "add"}, {"removed", "remove"},
                                           {"reweighted", "reweigh"}};
    const char *path = a->pos[0], *name = a->pos[1];
    const int dry = (a->given & OPT_DRY_RUN) != 0;
    const uint64_t fp = dch_map_fingerprint(m);
    if (a->given & OPT_JSON) {
        printf("{\"file\": ");
        json_string(stdout, path);
        printf(", \"change\": \"%s\", \"name\": ", cmd->name);
        json_string(stdout, name);
        printf(", \"weight\": %" PRIu32 ", \"written\": %s, \"epoch\": %" PRIu64
               ", \"fingerprint\": \"%016" PRIx64 "\",\n  ",
               dch_map_node_weight(m, id), dry ? "false" : "true", dch_map_epoch(m), fp);
        const int status = print_plan(p, 1, 1);
        printf("}\n");
        return status;
    }
    printf("%s%s %s", dry ? "dry run: " : "", verbs[kind][dry], name);
    if (kind != CHANGE_REMOVE)
        printf(" (weight %" PRIu32 ")", weight);
    printf(": %s %s epoch %" PRIu64 ", fingerprint %016" PRIx64 "\n", path,
           dry ? "unchanged; the new map would be at" : "now at", dch_map_epoch(m), fp);
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
    dch_map *old, *m = NULL;
    int status = load(path, &old);
    if (status != 0)
        return status;
    uint32_t id = 0;
    int rc = dch_map_clone(&m, old);
    if (rc != DCH_OK)
        fprintf(stderr, "dch: %s\n", dch_strerror(rc));
    else if ((rc = apply_change(m, kind, name, weight, &id)) != DCH_OK)
        fprintf(stderr, "dch: %s: %s: %s\n", path, name, dch_strerror(rc));
    status = rc != DCH_OK ? EXIT_RUNTIME : 0;
    if (status == 0 && !(a->given & OPT_DRY_RUN))
        status = save(path, m);
    plan p;
    memset(&p, 0, sizeof p);
    if (status == 0)
        status = make_plan(old, m, &p);
    if (status == 0)
        status = print_change(cmd, a, kind, m, id, weight, &p);
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

static void print_lookup_json(const dch_map *m, const char *key, uint64_t h, uint32_t id,
                              int first)
{
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
    printf("}");
}

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
        const uint32_t id = dch_map_lookup_hash(m, h);
        if (json) {
            print_lookup_json(m, key, h, id, i == 1);
        } else {
            text_string(stdout, key);
            printf("\t%s\n", or_dash(dch_map_node_name(m, id)));
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
