/* SPDX-License-Identifier: MIT */
/*
 * dchctl publish, fetch and watch: the map shared through etcd (dch-etcd,
 * include/dch/etcd.h), and the table of the etcd commands (rollout.c holds
 * the fourth). They read their arguments by the tool's rule (read_args)
 * with an option table of their own: every option but --json takes a value,
 * and each lands in its field of etcd_opts.
 */
#include "etcd_cmds.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* ---- Options and reports ---------------------------------------------- */

static const struct {
    const char *name;
    size_t off;
} etcd_option_table[] = {
    {"etcd", offsetof(etcd_opts, etcd)},         {"key", offsetof(etcd_opts, key)},
    {"expect", offsetof(etcd_opts, expect)},     {"after", offsetof(etcd_opts, after)},
    {"count", offsetof(etcd_opts, count)},       {"timeout", offsetof(etcd_opts, timeout)},
    {"max-slots", offsetof(etcd_opts, max_slots)}, {"exec", offsetof(etcd_opts, exec)},
    {"write", offsetof(etcd_opts, write)},
};

#define N_ETCD_OPTIONS (sizeof etcd_option_table / sizeof etcd_option_table[0])

/* The option argv[*i] that takes a value (possibly argv[*i + 1]) into o. */
static int parse_valued(const command *cmd, int argc, char **argv, int *i, etcd_opts *o)
{
    const char *s = argv[*i];
    const char *eq = strchr(s + 2, '=');
    const size_t n = eq ? (size_t)(eq - s - 2) : strlen(s + 2);
    size_t k = 0;
    while (k < N_ETCD_OPTIONS && !(strlen(etcd_option_table[k].name) == n &&
                                   strncmp(etcd_option_table[k].name, s + 2, n) == 0))
        k++;
    if (k == N_ETCD_OPTIONS)
        return usage_error(cmd, "unknown option %s", s);
    const char **slot = (const char **)(void *)((char *)o + etcd_option_table[k].off);
    if (*slot != NULL)
        return usage_error(cmd, "option given twice: %s", s);
    *slot = eq ? eq + 1 : (*i + 1 < argc ? argv[++*i] : NULL);
    if (*slot == NULL)
        return usage_error(cmd, "option needs a value: %s", s);
    return 0;
}

static int etcd_option(const command *cmd, void *ctx, int argc, char **argv, int *i)
{
    etcd_opts *o = ctx;
    const char *s = argv[*i];
    if (s[1] != '-' || (strcmp(s, "--json") == 0 && !(cmd->options & OPT_JSON)))
        return usage_error(cmd, "unknown option %s", s);
    if (strcmp(s, "--json") == 0) {
        o->json = 1;
        return 0;
    }
    return parse_valued(cmd, argc, argv, i, o);
}

static int parse(const command *cmd, int argc, char **argv, etcd_opts *o)
{
    memset(o, 0, sizeof *o);
    const int status = read_args(cmd, argc, argv, etcd_option, o, o->pos, 2, &o->npos);
    if (status != 0)
        return status;
    if (o->etcd == NULL || o->key == NULL)
        return usage_error(cmd, "%s", "--etcd and --key are required");
    return 0;
}

static int etcd_main(const command *cmd, int argc, char **argv)
{
    etcd_opts o;
    const int status = parse(cmd, argc, argv, &o);
    return status != 0 ? status : cmd->run.etcd(cmd, &o);
}

int parse_u64(const char *s, uint64_t *out)
{
    if (s == NULL || *s < '0' || *s > '9')
        return -1;
    char *end;
    errno = 0;
    const unsigned long long v = strtoull(s, &end, 10);
    if (*end != '\0' || errno != 0)
        return -1;
    *out = (uint64_t)v;
    return 0;
}

int connect_etcd(const command *cmd, const etcd_opts *o, dch_etcd **c)
{
    dch_etcd_config cfg;
    dch_etcd_config_default(&cfg);
    cfg.endpoints = o->etcd;
    uint64_t t;
    if (o->timeout != NULL) {
        if (parse_u64(o->timeout, &t) != 0 || t == 0 || t > 3600000)
            return usage_error(cmd, "--timeout: milliseconds from 1 to 3600000, not %s",
                               o->timeout);
        cfg.request_timeout_ms = (uint32_t)t;
        if (cfg.connect_timeout_ms > t)
            cfg.connect_timeout_ms = (uint32_t)t;
    }
    const int rc = dch_etcd_new(c, &cfg);
    if (rc == DCH_EINVAL)
        return usage_error(cmd, "--etcd: not a comma-separated list of http:// URLs: %s",
                           o->etcd);
    if (rc != DCH_OK) {
        fprintf(stderr, "dchctl %s: %s\n", cmd->name, dch_strerror(rc));
        return EXIT_RUNTIME;
    }
    return 0;
}

int etcd_error(const command *cmd, dch_etcd *c, int rc)
{
    const char *msg = dch_etcd_errmsg(c);
    fprintf(stderr, "dchctl %s: %s%s%s\n", cmd->name, dch_strerror(rc), msg[0] ? ": " : "", msg);
    return rc == DCH_ECONFLICT ? EXIT_CONFLICT : EXIT_RUNTIME;
}

int etcd_load_file(const command *cmd, const char *path, dch_map **m)
{
    errno = 0;
    const int rc = load_map(m, path);
    if (rc == DCH_OK)
        return 0;
    if (rc == DCH_EIO)
        fprintf(stderr, "dchctl %s: %s: %s (%s)\n", cmd->name, input_name(path),
                dch_strerror(rc), strerror(errno));
    else
        fprintf(stderr, "dchctl %s: %s: %s\n", cmd->name, input_name(path), dch_strerror(rc));
    return EXIT_RUNTIME;
}

void print_map_line(FILE *f, const dch_map *m, int json)
{
    dch_map_transition tr;
    const int moving = dch_map_in_transition(m, &tr);
    if (json) {
        fprintf(f, "{\"epoch\": %" PRIu64 ", \"fingerprint\": \"%016" PRIx64 "\"",
                dch_map_epoch(m), dch_map_fingerprint(m));
        if (moving)
            fprintf(f, ", \"step\": %" PRIu32 ", \"steps\": %" PRIu32
                       ", \"target_fingerprint\": \"%016" PRIx64 "\"",
                    tr.step, tr.steps, tr.target_fingerprint);
        fprintf(f, "}\n");
    } else {
        fprintf(f, "epoch %" PRIu64 " fingerprint %016" PRIx64, dch_map_epoch(m),
                dch_map_fingerprint(m));
        if (moving)
            fprintf(f, " step %" PRIu32 "/%" PRIu32 " towards %016" PRIx64, tr.step, tr.steps,
                    tr.target_fingerprint);
        fprintf(f, "\n");
    }
    fflush(f);
}

/* ---- publish, fetch, watch -------------------------------------------- */

static int run_publish(const command *cmd, const etcd_opts *o)
{
    uint64_t expect = 0;
    if (o->expect != NULL && parse_u64(o->expect, &expect) != 0)
        return usage_error(cmd, "--expect: not an epoch: %s", o->expect);
    dch_map *m;
    int status = etcd_load_file(cmd, o->pos[0], &m);
    if (status != 0)
        return status;
    if (dch_map_epoch(m) <= expect) {
        fprintf(stderr, "dchctl publish: %s has epoch %" PRIu64 ", not above --expect %" PRIu64 "\n",
                input_name(o->pos[0]), dch_map_epoch(m), expect);
        dch_map_free(m);
        return EXIT_RUNTIME;
    }
    dch_etcd *c;
    status = connect_etcd(cmd, o, &c);
    if (status == 0) {
        uint64_t stored = 0;
        const int rc = dch_etcd_publish(c, o->key, m, expect, &stored);
        if (rc == DCH_OK)
            print_map_line(stdout, m, o->json);
        else
            status = etcd_error(cmd, c, rc);
        dch_etcd_free(c);
    }
    dch_map_free(m);
    return status;
}

/* OUT '-' writes the map to standard output, and the line to standard
 * error. */
static int run_fetch(const command *cmd, const etcd_opts *o)
{
    const char *out = o->pos[0];
    if (is_stdio(out))
        ignore_sigpipe(); /* fetch starts no other program (output.c) */
    dch_etcd *c;
    int status = connect_etcd(cmd, o, &c);
    if (status != 0)
        return status;
    dch_map *m;
    const int rc = dch_etcd_fetch(c, o->key, &m, NULL);
    if (rc != DCH_OK) {
        status = etcd_error(cmd, c, rc);
        dch_etcd_free(c);
        return status;
    }
    dch_etcd_free(c);
    if (is_stdio(out)) {
        status = save(out, m);
    } else {
        errno = 0;
        const int wrc = dch_map_save_file(m, out);
        if (wrc != DCH_OK) {
            fprintf(stderr, "dchctl fetch: %s: %s (%s)\n", out, dch_strerror(wrc),
                    strerror(errno));
            status = EXIT_RUNTIME;
        }
    }
    if (status == 0)
        print_map_line(is_stdio(out) ? stderr : stdout, m, o->json);
    dch_map_free(m);
    return status;
}

typedef struct watch_ctx {
    const etcd_opts *o;
    uint64_t left; /* maps still to print; 0 means no limit */
    int failed;
} watch_ctx;

static int on_map(const dch_map *m, void *ctx)
{
    watch_ctx *w = ctx;
    /* The file first, so whoever reads the line finds the map it names. */
    if (w->o->write != NULL && dch_map_save_file(m, w->o->write) != DCH_OK) {
        fprintf(stderr, "dchctl watch: cannot write %s (%s)\n", w->o->write, strerror(errno));
        w->failed = 1;
        return 1;
    }
    print_map_line(stdout, m, w->o->json);
    return w->left != 0 && --w->left == 0;
}

static int run_watch(const command *cmd, const etcd_opts *o)
{
    uint64_t after = 0, count = 0, duration = 0;
    if (o->after != NULL && parse_u64(o->after, &after) != 0)
        return usage_error(cmd, "--after: not an epoch: %s", o->after);
    if (o->count != NULL && (parse_u64(o->count, &count) != 0 || count == 0))
        return usage_error(cmd, "--count: not a positive number: %s", o->count);
    /* --timeout bounds each request and, for watch, the whole watch. */
    if (o->timeout != NULL && (parse_u64(o->timeout, &duration) != 0 || duration == 0 ||
                               duration > 3600000))
        return usage_error(cmd, "--timeout: milliseconds from 1 to 3600000, not %s", o->timeout);
    etcd_opts per_request = *o;
    per_request.timeout = NULL;
    dch_etcd *c;
    int status = connect_etcd(cmd, &per_request, &c);
    if (status != 0)
        return status;
    watch_ctx w = {o, count, 0};
    const int rc = dch_etcd_watch(c, o->key, after, (uint32_t)duration, on_map, &w);
    if (rc < 0)
        status = etcd_error(cmd, c, rc);
    else if (w.failed)
        status = EXIT_RUNTIME;
    else if (count != 0 && w.left != 0)
        status = EXIT_RUNTIME; /* the time ran out before --count maps came */
    dch_etcd_free(c);
    return status;
}

/* ---- Table ------------------------------------------------------------ */

#define COMMON_HELP                                                                \
    "  --etcd URLS     etcd members, comma-separated http:// URLs; a call moves on\n" \
    "                  to the next member when one fails\n"                          \
    "  --key KEY       the etcd key that holds the map\n"

const command etcd_commands[] = {
    {"publish", "--etcd URLS --key KEY FILE [--expect EPOCH] [--timeout MS] [--json]",
     "store FILE's map in etcd if the stored epoch is EPOCH",
     COMMON_HELP
     "  --expect EPOCH  the epoch the change started from (default 0: nothing\n"
     "                  stored); any other stored epoch is a conflict, exit status 3\n"
     "  --timeout MS    give up after MS milliseconds (default 5000); etcd down:\n"
     "                  exit status 1 and nothing is written\n"
     "  FILE '-' reads the map from standard input\n",
     1, 1, OPT_JSON, etcd_main, {.etcd = run_publish}},
    {"fetch", "--etcd URLS --key KEY FILE [--timeout MS] [--json]",
     "write the map stored in etcd to FILE",
     COMMON_HELP "  --timeout MS    give up after MS milliseconds (default 5000)\n"
     "  FILE '-' writes the map to standard output (never a terminal) and the\n"
     "  line to standard error\n",
     1, 1, OPT_JSON, etcd_main, {.etcd = run_fetch}},
    {"watch", "--etcd URLS --key KEY [--after EPOCH] [--count N] [--timeout MS] [--write FILE] [--json]",
     "print a line for each newer map stored in etcd",
     COMMON_HELP
     "  one line per epoch: epoch, fingerprint, and step i/n towards the target\n"
     "  fingerprint for a step map; epochs only grow; broken connections and\n"
     "  restarted members are retried, re-reading the key each time\n"
     "  --after EPOCH   print only maps above EPOCH (default 0)\n"
     "  --count N       stop after N maps (exit status 1 if the time runs out first)\n"
     "  --timeout MS    stop after MS milliseconds (default: never)\n"
     "  --write FILE    also write each map to FILE, atomically, before its line\n",
     0, 0, OPT_JSON, etcd_main, {.etcd = run_watch}},
    {"rollout", "--etcd URLS --key KEY NEW --max-slots K [--exec CMD] [--timeout MS]",
     "move the stored map to NEW in steps of at most K slots per member",
     COMMON_HELP
     "  --max-slots K   most slots a step moves into, or out of, any member\n"
     "  --exec CMD      run CMD (with /bin/sh) after publishing each step; it gets\n"
     "                  DCH_FROM and DCH_TO (the maps before and after the step),\n"
     "                  DCH_PLAN (their plan, as dchctl diff --json), DCH_STEP,\n"
     "                  DCH_STEPS and DCH_EPOCH; a non-zero exit stops the rollout\n"
     "  --timeout MS    each etcd request's limit (default 5000)\n"
     "  Each step is published by compare-and-swap from the step before it (exit\n"
     "  status 3 if another operator moved the epoch). Run again after a stop or\n"
     "  a crash, it goes on from the epoch stored in etcd, first running CMD\n"
     "  again for the stored step, so CMD must accept running twice.\n"
     "  NEW '-' reads the target map from standard input\n",
     1, 1, 0, etcd_main, {.etcd = run_rollout}},
};

const size_t etcd_command_count = sizeof etcd_commands / sizeof etcd_commands[0];
