/*
 * dch publish, fetch, watch and rollout: the map shared through etcd
 * (dch-etcd, include/dch/etcd.h).
 *
 * rollout moves a cluster from the map stored in etcd to a target map in
 * steps of at most K slots into and out of any member (map_stage.h). It
 * publishes one step at a time, each by compare-and-swap from the step
 * before, and between steps runs the migrator (--exec) with the step's
 * plan; a failing migrator stops the rollout with the cluster on the step it
 * had reached. A rollout keeps no state of its own: started again, it reads
 * the stored map and goes on from there. The migrator of the stored step may
 * not have finished when the rollout stopped, so a resumed rollout first
 * runs it again for that step (the map before it comes from etcd's history):
 * a migrator must accept running twice for one step.
 */
#define _POSIX_C_SOURCE 200809L
#include "etcd_cmds.h"

#include "dch/dch.h"
#include "dch/etcd.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define EXIT_RUNTIME 1
#define EXIT_USAGE 2
#define EXIT_CONFLICT 3

typedef struct opts {
    const char *etcd, *key, *expect, *after, *count, *timeout, *max_slots, *exec, *write;
    int json;
    const char *pos[2];
    int npos;
} opts;

typedef struct etcd_command {
    const char *name;
    const char *usage;
    const char *summary;
    const char *help;
    int npos; /* positional arguments, exactly */
    int (*run)(const struct etcd_command *cmd, const opts *o);
} etcd_command;

static int run_rollout(const etcd_command *cmd, const struct opts *o);

static int usage(const etcd_command *cmd, const char *what, const char *arg)
{
    fprintf(stderr, "dch %s: %s%s\nusage: dch %s %s\n(see dch help %s)\n", cmd->name, what,
            arg ? arg : "", cmd->name, cmd->usage, cmd->name);
    return EXIT_USAGE;
}

/* The options every command may take; a command checks which it needs. */
static int parse(const etcd_command *cmd, int argc, char **argv, opts *o)
{
    static const struct {
        const char *name;
        size_t off;
    } table[] = {
        {"etcd", offsetof(opts, etcd)},         {"key", offsetof(opts, key)},
        {"expect", offsetof(opts, expect)},     {"after", offsetof(opts, after)},
        {"count", offsetof(opts, count)},       {"timeout", offsetof(opts, timeout)},
        {"max-slots", offsetof(opts, max_slots)}, {"exec", offsetof(opts, exec)},
        {"write", offsetof(opts, write)},
    };
    memset(o, 0, sizeof *o);
    int options_done = 0;
    for (int i = 0; i < argc; i++) {
        const char *s = argv[i];
        /* The tool's rule for every command: after --, nothing is an option;
         * before it, a leading '-' always is. */
        if (!options_done && strcmp(s, "--") == 0) {
            options_done = 1;
            continue;
        }
        if (!options_done && s[0] == '-' && s[1] != '-')
            return usage(cmd, "unknown option ", s);
        if (!options_done && strcmp(s, "--json") == 0) {
            if (cmd->run == run_rollout)
                return usage(cmd, "unknown option ", s);
            o->json = 1;
            continue;
        }
        if (options_done || strncmp(s, "--", 2) != 0) {
            if (o->npos == 2)
                return usage(cmd, "too many arguments", NULL);
            o->pos[o->npos++] = s;
            continue;
        }
        const char *eq = strchr(s + 2, '=');
        const size_t n = eq ? (size_t)(eq - s - 2) : strlen(s + 2);
        size_t k = 0;
        while (k < sizeof table / sizeof table[0] &&
               !(strlen(table[k].name) == n && strncmp(table[k].name, s + 2, n) == 0))
            k++;
        if (k == sizeof table / sizeof table[0])
            return usage(cmd, "unknown option ", s);
        const char **slot = (const char **)(void *)((char *)o + table[k].off);
        if (*slot != NULL)
            return usage(cmd, "option given twice: ", s);
        *slot = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
        if (*slot == NULL)
            return usage(cmd, "option needs a value: ", s);
    }
    if (o->npos != cmd->npos)
        return usage(cmd, o->npos < cmd->npos ? "missing arguments" : "too many arguments", NULL);
    if (o->etcd == NULL || o->key == NULL)
        return usage(cmd, "--etcd and --key are required", NULL);
    return 0;
}

static int parse_u64(const char *s, uint64_t *out)
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

/* The client for --etcd, with --timeout (ms) as its request timeout. */
static int connect_etcd(const etcd_command *cmd, const opts *o, dch_etcd **c)
{
    dch_etcd_config cfg;
    dch_etcd_config_default(&cfg);
    cfg.endpoints = o->etcd;
    uint64_t t;
    if (o->timeout != NULL) {
        if (parse_u64(o->timeout, &t) != 0 || t == 0 || t > 3600000)
            return usage(cmd, "--timeout: milliseconds from 1 to 3600000, not ", o->timeout);
        cfg.request_timeout_ms = (uint32_t)t;
        if (cfg.connect_timeout_ms > t)
            cfg.connect_timeout_ms = (uint32_t)t;
    }
    const int rc = dch_etcd_new(c, &cfg);
    if (rc == DCH_EINVAL)
        return usage(cmd, "--etcd: not a comma-separated list of http:// URLs: ", o->etcd);
    if (rc != DCH_OK) {
        fprintf(stderr, "dch %s: %s\n", cmd->name, dch_strerror(rc));
        return EXIT_RUNTIME;
    }
    return 0;
}

static int etcd_error(const etcd_command *cmd, dch_etcd *c, int rc)
{
    const char *msg = dch_etcd_errmsg(c);
    fprintf(stderr, "dch %s: %s%s%s\n", cmd->name, dch_strerror(rc), msg[0] ? ": " : "", msg);
    return rc == DCH_ECONFLICT ? EXIT_CONFLICT : EXIT_RUNTIME;
}

static int load_file(const etcd_command *cmd, const char *path, dch_map **m)
{
    errno = 0;
    const int rc = dch_map_load_file(m, path);
    if (rc == DCH_OK)
        return 0;
    if (rc == DCH_EIO)
        fprintf(stderr, "dch %s: %s: %s (%s)\n", cmd->name, path, dch_strerror(rc),
                strerror(errno));
    else
        fprintf(stderr, "dch %s: %s: %s\n", cmd->name, path, dch_strerror(rc));
    return EXIT_RUNTIME;
}

/* "epoch E fingerprint F" or its JSON, plus the step record of a step map. */
static void print_map_line(const dch_map *m, int json)
{
    dch_map_transition tr;
    const int moving = dch_map_in_transition(m, &tr);
    if (json) {
        printf("{\"epoch\": %" PRIu64 ", \"fingerprint\": \"%016" PRIx64 "\"", dch_map_epoch(m),
               dch_map_fingerprint(m));
        if (moving)
            printf(", \"step\": %" PRIu32 ", \"steps\": %" PRIu32
                   ", \"target_fingerprint\": \"%016" PRIx64 "\"",
                   tr.step, tr.steps, tr.target_fingerprint);
        printf("}\n");
    } else {
        printf("epoch %" PRIu64 " fingerprint %016" PRIx64, dch_map_epoch(m),
               dch_map_fingerprint(m));
        if (moving)
            printf(" step %" PRIu32 "/%" PRIu32 " towards %016" PRIx64, tr.step, tr.steps,
                   tr.target_fingerprint);
        printf("\n");
    }
    fflush(stdout);
}

/* ---- publish, fetch, watch -------------------------------------------- */

static int run_publish(const etcd_command *cmd, const opts *o)
{
    uint64_t expect = 0;
    if (o->expect != NULL && parse_u64(o->expect, &expect) != 0)
        return usage(cmd, "--expect: not an epoch: ", o->expect);
    dch_map *m;
    int status = load_file(cmd, o->pos[0], &m);
    if (status != 0)
        return status;
    if (dch_map_epoch(m) <= expect) {
        fprintf(stderr, "dch publish: %s has epoch %" PRIu64 ", not above --expect %" PRIu64 "\n",
                o->pos[0], dch_map_epoch(m), expect);
        dch_map_free(m);
        return EXIT_RUNTIME;
    }
    dch_etcd *c;
    status = connect_etcd(cmd, o, &c);
    if (status == 0) {
        uint64_t stored = 0;
        const int rc = dch_etcd_publish(c, o->key, m, expect, &stored);
        if (rc == DCH_OK)
            print_map_line(m, o->json);
        else
            status = etcd_error(cmd, c, rc);
        dch_etcd_free(c);
    }
    dch_map_free(m);
    return status;
}

static int run_fetch(const etcd_command *cmd, const opts *o)
{
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
    errno = 0;
    const int wrc = dch_map_save_file(m, o->pos[0]);
    if (wrc != DCH_OK) {
        fprintf(stderr, "dch fetch: %s: %s (%s)\n", o->pos[0], dch_strerror(wrc),
                strerror(errno));
        status = EXIT_RUNTIME;
    } else {
        print_map_line(m, o->json);
    }
    dch_map_free(m);
    return status;
}

typedef struct watch_ctx {
    const opts *o;
    uint64_t left; /* maps still to print; 0 means no limit */
    int failed;
} watch_ctx;

static int on_map(const dch_map *m, void *ctx)
{
    watch_ctx *w = ctx;
    /* The file first, so whoever reads the line finds the map it names. */
    if (w->o->write != NULL && dch_map_save_file(m, w->o->write) != DCH_OK) {
        fprintf(stderr, "dch watch: cannot write %s (%s)\n", w->o->write, strerror(errno));
        w->failed = 1;
        return 1;
    }
    print_map_line(m, w->o->json);
    return w->left != 0 && --w->left == 0;
}

static int run_watch(const etcd_command *cmd, const opts *o)
{
    uint64_t after = 0, count = 0, duration = 0;
    if (o->after != NULL && parse_u64(o->after, &after) != 0)
        return usage(cmd, "--after: not an epoch: ", o->after);
    if (o->count != NULL && (parse_u64(o->count, &count) != 0 || count == 0))
        return usage(cmd, "--count: not a positive number: ", o->count);
    /* --timeout bounds each request and, for watch, the whole watch. */
    if (o->timeout != NULL && (parse_u64(o->timeout, &duration) != 0 || duration == 0 ||
                               duration > 3600000))
        return usage(cmd, "--timeout: milliseconds from 1 to 3600000, not ", o->timeout);
    opts per_request = *o;
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

/* ---- rollout ---------------------------------------------------------- */

typedef struct workdir {
    char path[4096];
    char from[4200], to[4200], plan[4200];
} workdir;

static int make_workdir(workdir *d)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(d->path, sizeof d->path, "%s/dch-rollout-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (mkdtemp(d->path) == NULL)
        return -1;
    snprintf(d->from, sizeof d->from, "%s/from.dchmap", d->path);
    snprintf(d->to, sizeof d->to, "%s/to.dchmap", d->path);
    snprintf(d->plan, sizeof d->plan, "%s/plan.json", d->path);
    return 0;
}

static void remove_workdir(const workdir *d)
{
    unlink(d->from);
    unlink(d->to);
    unlink(d->plan);
    rmdir(d->path);
}

/* Run the migrator for the step from -> to, given as files and as the plan
 * `dch diff --json` prints; 0 when it exits with status 0. */
static int migrate(const opts *o, const workdir *d, const dch_map *from, const dch_map *to,
                   uint32_t step, uint32_t steps)
{
    if (dch_map_save_file(from, d->from) != DCH_OK || dch_map_save_file(to, d->to) != DCH_OK) {
        fprintf(stderr, "dch rollout: cannot write the step's maps in %s\n", d->path);
        return -1;
    }
    char self[4096];
    const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) {
        fprintf(stderr, "dch rollout: cannot find the dch executable for the plan\n");
        return -1;
    }
    self[n] = '\0';
    char buf[32];
    snprintf(buf, sizeof buf, "%" PRIu32, step);
    setenv("DCH_STEP", buf, 1);
    snprintf(buf, sizeof buf, "%" PRIu32, steps);
    setenv("DCH_STEPS", buf, 1);
    snprintf(buf, sizeof buf, "%" PRIu64, dch_map_epoch(to));
    setenv("DCH_EPOCH", buf, 1);
    setenv("DCH_FROM", d->from, 1);
    setenv("DCH_TO", d->to, 1);
    setenv("DCH_PLAN", d->plan, 1);
    setenv("DCH", self, 1);
    fflush(stdout);
    /* The plan first, from the same dch, then the migrator. */
    const int plan_status = system("\"$DCH\" diff \"$DCH_FROM\" \"$DCH_TO\" --json >\"$DCH_PLAN\"");
    if (plan_status != 0) {
        fprintf(stderr, "dch rollout: cannot write the plan of step %" PRIu32 "\n", step);
        return -1;
    }
    const int status = system(o->exec);
    if (status == 0)
        return 0;
    if (status == -1)
        fprintf(stderr, "dch rollout: cannot run --exec (%s)\n", strerror(errno));
    else if (WIFEXITED(status))
        fprintf(stderr, "dch rollout: --exec exited with status %d at step %" PRIu32 "\n",
                WEXITSTATUS(status), step);
    else
        fprintf(stderr, "dch rollout: --exec ended by signal %d at step %" PRIu32 "\n",
                WIFSIGNALED(status) ? WTERMSIG(status) : 0, step);
    return -1;
}

/* Step number and count of `next`, made from cur: a step map records them;
 * the last step is step n, where n is what cur recorded (1 from OLD). */
static void step_of(const dch_map *cur, const dch_map *next, uint32_t *step, uint32_t *steps)
{
    dch_map_transition tr;
    if (dch_map_in_transition(next, &tr)) {
        *step = tr.step;
        *steps = tr.steps;
    } else if (dch_map_in_transition(cur, &tr)) {
        *step = *steps = tr.steps;
    } else {
        *step = *steps = 1;
    }
}

/* A resumed rollout: run the migrator again for the step stored in etcd
 * when that step belongs to this rollout (it heads for the target, or it is
 * the target and the map before it was a step towards it). */
static int remigrate(const etcd_command *cmd, const opts *o, dch_etcd *c, const workdir *d,
                     const dch_map *stored, uint64_t target_fp)
{
    dch_map_transition tr;
    const int moving = dch_map_in_transition(stored, &tr);
    if (moving && tr.target_fingerprint != target_fp)
        return 0; /* another rollout's step: staging refuses it below */
    if (!moving && dch_map_fingerprint(stored) != target_fp)
        return 0; /* settled elsewhere: a new rollout, nothing to redo */
    dch_map *prev;
    const int rc = dch_etcd_fetch_previous(c, o->key, &prev);
    if (rc == DCH_ENOENT || rc == DCH_ECORRUPT || rc == DCH_EVERSION) {
        if (moving)
            fprintf(stderr, "dch rollout: warning: the map before epoch %" PRIu64
                    " is gone from etcd's history; its migration is not run again\n",
                    dch_map_epoch(stored));
        return 0;
    }
    if (rc != DCH_OK)
        return etcd_error(cmd, c, rc);
    dch_map_transition ptr;
    const int prev_moving = dch_map_in_transition(prev, &ptr);
    const int ours = moving || (prev_moving && ptr.target_fingerprint == target_fp);
    int status = 0;
    if (ours && dch_map_epoch(prev) < dch_map_epoch(stored)) {
        uint32_t step, steps;
        step_of(prev, stored, &step, &steps);
        printf("resume: migrating step %" PRIu32 "/%" PRIu32 " (epoch %" PRIu64 ") again\n", step,
               steps, dch_map_epoch(stored));
        if (migrate(o, d, prev, stored, step, steps) != 0)
            status = EXIT_RUNTIME;
    }
    dch_map_free(prev);
    return status;
}

static int rollout_steps(const etcd_command *cmd, const opts *o, dch_etcd *c, const workdir *d,
                         dch_map *cur, const dch_map *target, uint32_t k)
{
    const uint64_t target_fp = dch_map_fingerprint(target);
    int status = 0;
    while (status == 0 &&
           (dch_map_in_transition(cur, NULL) || dch_map_fingerprint(cur) != target_fp)) {
        dch_map *next;
        int rc = dch_map_stage_next(&next, cur, target, k);
        if (rc != DCH_OK) {
            fprintf(stderr, "dch rollout: cannot stage from the stored epoch %" PRIu64
                    " to the target: %s (a step of another rollout, a map with another"
                    " config, or a target epoch not above the stored one)\n",
                    dch_map_epoch(cur), dch_strerror(rc));
            status = EXIT_RUNTIME;
            break;
        }
        rc = dch_etcd_publish(c, o->key, next, dch_map_epoch(cur), NULL);
        if (rc != DCH_OK) {
            status = etcd_error(cmd, c, rc);
            dch_map_free(next);
            break;
        }
        uint32_t step, steps;
        step_of(cur, next, &step, &steps);
        printf("step %" PRIu32 "/%" PRIu32 " published: ", step, steps);
        print_map_line(next, 0);
        if (o->exec != NULL && migrate(o, d, cur, next, step, steps) != 0) {
            fprintf(stderr, "dch rollout: stopped; the cluster runs epoch %" PRIu64
                    "; run the same rollout again to go on from there\n",
                    dch_map_epoch(next));
            status = EXIT_RUNTIME;
        }
        dch_map_free(cur);
        cur = next;
    }
    if (status == 0)
        printf("done: epoch %" PRIu64 " fingerprint %016" PRIx64 "\n", dch_map_epoch(cur),
               dch_map_fingerprint(cur));
    dch_map_free(cur);
    return status;
}

static int run_rollout(const etcd_command *cmd, const opts *o)
{
    uint64_t k;
    if (o->max_slots == NULL || parse_u64(o->max_slots, &k) != 0 || k == 0 || k > UINT32_MAX)
        return usage(cmd, "--max-slots K is required, 1 .. 4294967295", NULL);
    dch_map *target;
    int status = load_file(cmd, o->pos[0], &target);
    if (status != 0)
        return status;
    dch_etcd *c = NULL;
    dch_map *stored = NULL;
    workdir d = {{0}, {0}, {0}, {0}};
    int have_dir = 0;
    if (dch_map_in_transition(target, NULL)) {
        fprintf(stderr, "dch rollout: %s is a step map; the target must be settled\n", o->pos[0]);
        status = EXIT_RUNTIME;
    }
    if (status == 0)
        status = connect_etcd(cmd, o, &c);
    if (status == 0) {
        const int rc = dch_etcd_fetch(c, o->key, &stored, NULL);
        if (rc != DCH_OK) {
            status = etcd_error(cmd, c, rc);
            if (rc == DCH_ENOENT)
                fprintf(stderr, "dch rollout: publish the first map with dch publish\n");
        }
    }
    if (status == 0 && o->exec != NULL) {
        if (make_workdir(&d) != 0) {
            fprintf(stderr, "dch rollout: cannot make a temporary directory (%s)\n",
                    strerror(errno));
            status = EXIT_RUNTIME;
        } else {
            have_dir = 1;
            status = remigrate(cmd, o, c, &d, stored, dch_map_fingerprint(target));
        }
    }
    if (status == 0) {
        status = rollout_steps(cmd, o, c, &d, stored, target, (uint32_t)k);
        stored = NULL; /* rollout_steps frees it */
    }
    if (have_dir)
        remove_workdir(&d);
    dch_map_free(stored);
    dch_etcd_free(c);
    dch_map_free(target);
    return status;
}

/* ---- Table ------------------------------------------------------------ */

#define COMMON_HELP                                                                \
    "  --etcd URLS     etcd members, comma-separated http:// URLs; a call moves on\n" \
    "                  to the next member when one fails\n"                          \
    "  --key KEY       the etcd key that holds the map\n"

static const etcd_command etcd_commands[] = {
    {"publish", "--etcd URLS --key KEY FILE [--expect EPOCH] [--timeout MS] [--json]",
     "store FILE's map in etcd if the stored epoch is EPOCH",
     COMMON_HELP
     "  --expect EPOCH  the epoch the change started from (default 0: nothing\n"
     "                  stored); any other stored epoch is a conflict, exit status 3\n"
     "  --timeout MS    give up after MS milliseconds (default 5000); etcd down:\n"
     "                  exit status 1 and nothing is written\n",
     1, run_publish},
    {"fetch", "--etcd URLS --key KEY FILE [--timeout MS] [--json]",
     "write the map stored in etcd to FILE",
     COMMON_HELP "  --timeout MS    give up after MS milliseconds (default 5000)\n", 1, run_fetch},
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
     0, run_watch},
    {"rollout", "--etcd URLS --key KEY NEW --max-slots K [--exec CMD] [--timeout MS]",
     "move the stored map to NEW in steps of at most K slots per member",
     COMMON_HELP
     "  --max-slots K   most slots a step moves into, or out of, any member\n"
     "  --exec CMD      run CMD (with /bin/sh) after publishing each step; it gets\n"
     "                  DCH_FROM and DCH_TO (the maps before and after the step),\n"
     "                  DCH_PLAN (their plan, as dch diff --json), DCH_STEP,\n"
     "                  DCH_STEPS and DCH_EPOCH; a non-zero exit stops the rollout\n"
     "  --timeout MS    each etcd request's limit (default 5000)\n"
     "  Each step is published by compare-and-swap from the step before it (exit\n"
     "  status 3 if another operator moved the epoch). Run again after a stop or\n"
     "  a crash, it goes on from the epoch stored in etcd, first running CMD\n"
     "  again for the stored step, so CMD must accept running twice.\n",
     1, run_rollout},
};

#define NETCD (sizeof etcd_commands / sizeof etcd_commands[0])

static const etcd_command *find(const char *name)
{
    for (size_t i = 0; i < NETCD; i++)
        if (strcmp(etcd_commands[i].name, name) == 0)
            return &etcd_commands[i];
    return NULL;
}

int etcd_cmd_exists(const char *name)
{
    return find(name) != NULL;
}

void etcd_cmd_list(FILE *f)
{
    for (size_t i = 0; i < NETCD; i++)
        fprintf(f, "  %-15s %s\n", etcd_commands[i].name, etcd_commands[i].summary);
}

int etcd_cmd_help(const char *name)
{
    const etcd_command *c = find(name);
    if (c == NULL)
        return 0;
    printf("usage: dch %s %s\n\n%s.\n", c->name, c->usage, c->summary);
    if (c->run != run_rollout)
        printf("  --json          machine-readable output\n");
    fputs(c->help, stdout);
    return 1;
}

int etcd_cmd_main(int argc, char **argv)
{
    const etcd_command *cmd = find(argv[0]);
    if (cmd == NULL)
        return EXIT_USAGE;
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            etcd_cmd_help(cmd->name);
            return 0;
        }
    opts o;
    const int status = parse(cmd, argc - 1, argv + 1, &o);
    return status != 0 ? status : cmd->run(cmd, &o);
}
