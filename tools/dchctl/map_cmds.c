/* SPDX-License-Identifier: MIT */
/*
 * The commands that keep a map in a file: init, add, remove, weight, verify
 * and fingerprint, and the loading and saving of maps every command shares.
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

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
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

/* Where a change's map goes: --out's file ('-': standard output), else
 * back to FILE (FILE '-': standard output). */
static const char *destination(const args *a)
{
    if (!(a->given & OPT_OUT))
        return a->pos[0];
    const char *out = opt_value(a, OPT_OUT);
    return strcmp(out, "-") == 0 ? stdio_arg : out;
}

/* A change's report on f: the changed map, its member and the plan from
 * the old one; with replicas also the copies created and dropped (the
 * plan's ranges are the primaries'). */
static int print_change(FILE *f, const command *cmd, const args *a, change_kind kind,
                        const dch_map *old, const dch_map *m, uint32_t id, uint32_t weight,
                        const plan *p)
{
    static const char *const verbs[][2] = {{"added", "add"}, {"removed", "remove"},
                                           {"reweighted", "reweigh"}};
    const char *name = a->pos[1];
    const int dry = (a->given & OPT_DRY_RUN) != 0;
    const uint64_t fp = dch_map_fingerprint(m);
    const int replicas = map_replicas(m) > 1;
    uint64_t created = 0, dropped = 0;
    if (replicas)
        copy_changes(old, m, &created, &dropped);
    const char *zone = dch_map_node_zone(m, id);
    if (a->given & OPT_JSON) {
        fprintf(f, "{\"file\": ");
        json_string(f, a->pos[0]);
        if (a->given & OPT_OUT) {
            fprintf(f, ", \"out\": ");
            json_string(f, destination(a));
        }
        fprintf(f, ", \"change\": \"%s\", \"name\": ", cmd->name);
        json_string(f, name);
        if (kind == CHANGE_ADD && zone != NULL) {
            fprintf(f, ", \"zone\": ");
            json_string(f, zone);
        }
        fprintf(f, ", \"weight\": %" PRIu32 ", \"written\": %s, \"epoch\": %" PRIu64
                   ", \"fingerprint\": \"%016" PRIx64 "\",\n  ",
                dch_map_node_weight(m, id), dry ? "false" : "true", dch_map_epoch(m), fp);
        if (replicas)
            fprintf(f, "\"replicas\": %" PRIu32 ", \"copies_created\": %" PRIu64
                       ", \"copies_dropped\": %" PRIu64 ",\n  ",
                    map_replicas(m), created, dropped);
        const int status = print_plan(f, p, 1, 1);
        fprintf(f, "}\n");
        return status;
    }
    fprintf(f, "%s%s %s", dry ? "dry run: " : "", verbs[kind][dry], name);
    if (kind == CHANGE_ADD && zone != NULL)
        fprintf(f, " in zone %s", zone);
    if (kind != CHANGE_REMOVE)
        fprintf(f, " (weight %" PRIu32 ")", weight);
    fprintf(f, ": %s %s epoch %" PRIu64 ", fingerprint %016" PRIx64 "\n",
            output_name(destination(a)), dry ? "unchanged; the new map would be at" : "now at",
            dch_map_epoch(m), fp);
    if (replicas)
        fprintf(f, "copies: %" PRIu64 " created, %" PRIu64 " dropped (%" PRIu32
                   " copies of every slot; the plan below is the primaries')\n",
                created, dropped, map_replicas(m));
    return print_plan(f, p, 0, (a->given & OPT_RANGES) != 0);
}

/* A change's arguments that are wrong whatever FILE holds; 0 or the exit
 * status of a usage error. */
static int check_change(const command *cmd, const args *a, change_kind kind, uint32_t *weight)
{
    const char *name = a->pos[1];
    const char *wtext = kind == CHANGE_WEIGHT ? a->pos[2]
                        : (a->given & OPT_WEIGHT) ? opt_value(a, OPT_WEIGHT)
                                                  : NULL;
    if (wtext != NULL && parse_u32(wtext, weight) != 0)
        return usage_error(cmd, "weight %s: not an integer from 0 to 4294967295", wtext);
    if (is_stdio(name))
        return usage_error(cmd, "%s", "a NAME '-' goes after -- ('-' alone is standard input)");
    if (!valid_name(name))
        return usage_error(cmd, "%s",
                           "a name has 1 to 255 bytes and no control character (TAB, newline, ...)");
    const char *zone = (a->given & OPT_ZONE) ? opt_value(a, OPT_ZONE) : NULL;
    if (zone != NULL && !valid_name(zone))
        return usage_error(cmd, "%s",
                           "a zone has 1 to 255 bytes and no control character (TAB, newline, ...)");
    if ((a->given & OPT_OUT) && opt_value(a, OPT_OUT)[0] == '\0')
        return usage_error(cmd, "%s", "--out needs a file name ('-': standard output)");
    return 0;
}

/* Load FILE, apply one change to a copy, write it (to FILE or --out), print
 * the plan: on standard error when the map went to standard output. */
static int change(const command *cmd, const args *a, change_kind kind)
{
    const char *path = a->pos[0], *name = a->pos[1], *dest = destination(a);
    const char *zone = (a->given & OPT_ZONE) ? opt_value(a, OPT_ZONE) : NULL;
    const int dry = (a->given & OPT_DRY_RUN) != 0;
    uint32_t weight = 1;
    int status = check_change(cmd, a, kind, &weight);
    if (status != 0)
        return status;
    dch_map *old, *m = NULL;
    status = load(path, &old);
    if (status != 0)
        return status;
    uint32_t id = 0;
    int rc = dch_map_clone(&m, old);
    if (rc != DCH_OK)
        fprintf(stderr, "dchctl: %s\n", dch_strerror(rc));
    else if ((rc = apply_change(m, kind, name, zone, weight, &id)) != DCH_OK)
        fprintf(stderr, "dchctl: %s: %s: %s\n", input_name(path), name, dch_strerror(rc));
    status = rc != DCH_OK ? EXIT_RUNTIME : 0;
    if (status == 0 && !dry)
        status = save(dest, m);
    plan p;
    memset(&p, 0, sizeof p);
    if (status == 0)
        status = make_plan(old, m, &p);
    if (status == 0)
        status = print_change(is_stdio(dest) && !dry ? stderr : stdout, cmd, a, kind, old, m,
                              id, weight, &p);
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
