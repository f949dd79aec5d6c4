/* SPDX-License-Identifier: MIT */
/*
 * dchctl publish, fetch and watch: the map shared through etcd (dch-etcd,
 * include/dch/etcd.h), and the table of the etcd commands (rollout.c holds
 * the fourth). They read their arguments by the tool's rule (read_args)
 * with an option table of their own: every option but the flags --json,
 * --force (publish) and --take-over (rollout) takes a value, and each lands
 * in its field of etcd_opts. Exit statuses: 0, 1 (nothing written), 2
 * (usage), 3 (a conflict), 4 (a write whose outcome is unknown).
 */
#define _DEFAULT_SOURCE /* gethostname(), gmtime_r() */
#include "etcd_cmds.h"
#include "number.h"
#include "workdir.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <pwd.h>
#include <time.h>
#include <unistd.h>

/* ---- Options and reports ---------------------------------------------- */

static const struct {
    const char *name;
    size_t off;
} etcd_option_table[] = {
    {"etcd", offsetof(etcd_opts, etcd)},         {"key", offsetof(etcd_opts, key)},
    {"expect", offsetof(etcd_opts, expect)},     {"after", offsetof(etcd_opts, after)},
    {"count", offsetof(etcd_opts, count)},       {"timeout", offsetof(etcd_opts, timeout)},
    {"max-slots", offsetof(etcd_opts, max_slots)}, {"exec", offsetof(etcd_opts, exec)},
    {"write", offsetof(etcd_opts, write)},       {"deadline", offsetof(etcd_opts, deadline)},
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
    /* Flags of one command each: --force (publish), --take-over (rollout). */
    int *flag = strcmp(s, "--force") == 0 && strcmp(cmd->name, "publish") == 0 ? &o->force
                : strcmp(s, "--take-over") == 0 && strcmp(cmd->name, "rollout") == 0
                    ? &o->take_over : NULL;
    if (flag != NULL) {
        if (*flag)
            return usage_error(cmd, "option given twice: %s", s);
        *flag = 1;
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

uint64_t deadline_ms(const etcd_opts *o)
{
    /* --timeout is the old name of --deadline (watch has its own meaning
     * for it and passes it as NULL here). */
    const char *v = o->deadline != NULL ? o->deadline : o->timeout;
    uint64_t t;
    if (v == NULL)
        return DEFAULT_DEADLINE_MS;
    if (dch__number_parse(v, 0, 1, 3600000, &t) != 0)
        return 0;
    return t;
}

int connect_etcd(const command *cmd, const etcd_opts *o, dch_etcd **c)
{
    dch_etcd_config cfg;
    dch_etcd_config_default(&cfg);
    cfg.endpoints = o->etcd;
    if (o->deadline != NULL && o->timeout != NULL)
        return usage_error(cmd, "%s", "--deadline and --timeout are one option: give one");
    const uint64_t t = deadline_ms(o);
    if (t == 0)
        return usage_error(cmd, "--deadline: milliseconds from 1 to 3600000, not %s",
                           o->deadline != NULL ? o->deadline : o->timeout);
    cfg.request_timeout_ms = (uint32_t)t;
    if (cfg.connect_timeout_ms > t)
        cfg.connect_timeout_ms = (uint32_t)t;
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
    return rc == DCH_ECONFLICT ? EXIT_CONFLICT : rc == DCH_EUNKNOWN ? EXIT_UNKNOWN : EXIT_RUNTIME;
}

int same_map(const dch_map *a, const dch_map *b)
{
    size_t na, nb;
    dch_map_save(a, NULL, 0, &na);
    dch_map_save(b, NULL, 0, &nb);
    uint8_t *x = na == nb ? malloc(na) : NULL, *y = x ? malloc(nb) : NULL;
    int same = 0;
    if (x != NULL && y != NULL && dch_map_save(a, x, na, &na) == DCH_OK &&
        dch_map_save(b, y, nb, &nb) == DCH_OK)
        same = memcmp(x, y, na) == 0;
    free(x);
    free(y);
    return same;
}

int read_back(const command *cmd, const etcd_opts *o, const dch_map *mine)
{
    etcd_opts quick = *o;
    quick.deadline = "5000"; /* a fresh, short deadline: an answer, or a clear "cannot" */
    quick.timeout = NULL;
    dch_etcd *c;
    if (connect_etcd(cmd, &quick, &c) != 0)
        return 0;
    dch_map *m;
    const int rc = dch_etcd_fetch(c, o->key, &m, NULL);
    int same = 0;
    if (rc == DCH_OK) {
        same = dch_map_epoch(m) == dch_map_epoch(mine) && same_map(m, mine);
        fprintf(stderr, "dchctl %s: read back: etcd stores ", cmd->name);
        print_map_line(stderr, m, 0);
        dch_map_free(m);
    } else {
        fprintf(stderr, "dchctl %s: read back: cannot read the key either: %s%s%s\n", cmd->name,
                dch_strerror(rc), dch_etcd_errmsg(c)[0] ? ": " : "", dch_etcd_errmsg(c));
    }
    dch_etcd_free(c);
    return same;
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

/* ---- Owner records ------------------------------------------------------ */

/* The value of " name=" in text up to the next space (or, for folder, the
 * end), into buf; 0 or -1. */
static int field(const char *text, const char *name, char *buf, size_t cap, int to_end)
{
    char pat[32];
    snprintf(pat, sizeof pat, " %s=", name);
    const char *p = strstr(text, pat);
    if (p == NULL)
        return -1;
    p += strlen(pat);
    const size_t n = to_end ? strlen(p) : strcspn(p, " ");
    if (n >= cap)
        return -1;
    memcpy(buf, p, n);
    buf[n] = '\0';
    return 0;
}

int owner_parse(const char *text, owner_rec *r)
{
    char num[32], state[16];
    memset(r, 0, sizeof *r);
    if (strncmp(text, "rollout ", 8) != 0 || field(text, "token", r->token, sizeof r->token, 0) ||
        field(text, "target", num, sizeof num, 0) || field(text, "state", state, sizeof state, 0))
        return -1;
    r->target = strtoull(num, NULL, 16);
    r->done = strcmp(state, "done") == 0;
    if (field(text, "host", r->host, sizeof r->host, 0) ||
        field(text, "boot", r->boot, sizeof r->boot, 0) ||
        field(text, "user", r->user, sizeof r->user, 0) ||
        field(text, "at", r->at, sizeof r->at, 0) || field(text, "pid", num, sizeof num, 0))
        return -1;
    r->pid = strtol(num, NULL, 10);
    if (field(text, "start", num, sizeof num, 0))
        return -1;
    r->start = strtoull(num, NULL, 10);
    if (field(text, "folder", r->folder, sizeof r->folder, 1))
        r->folder[0] = '\0';
    return 0;
}

int owner_format(const owner_rec *r, char *buf, size_t cap)
{
    const int n = snprintf(buf, cap,
                           "rollout token=%s target=%016" PRIx64 " state=%s host=%s boot=%s"
                           " pid=%ld start=%llu user=%s at=%s folder=%s",
                           r->token, r->target, r->done ? "done" : "running", r->host, r->boot,
                           r->pid, r->start, r->user, r->at, r->folder);
    return n > 0 && (size_t)n < cap && (size_t)n <= DCH_ETCD_OWNER_MAX ? 0 : -1;
}

/* Field 22 of /proc/PID/stat, the process's start time in clock ticks since
 * boot; 0 when there is no such process. */
static unsigned long long start_time(long pid)
{
    char path[64], line[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    read_first_line(path, line, sizeof line);
    const char *p = strrchr(line, ')'); /* the command name may hold spaces */
    if (p == NULL)
        return 0;
    unsigned long long v = 0;
    for (int i = 2; i < 22 && p != NULL; i++) /* field 2 ends at p */
        p = strchr(p + 1, ' ');
    if (p != NULL)
        v = strtoull(p + 1, NULL, 10);
    return v;
}

/* Words that go into a space-separated record: spaces and '=' replaced. */
static void word(char *s)
{
    for (; *s; s++)
        if (*s == ' ' || *s == '=' || (unsigned char)*s < ' ')
            *s = '_';
}

void owner_self(owner_rec *r, uint64_t target, const char *folder)
{
    memset(r, 0, sizeof *r);
    uint64_t x = 0;
    FILE *u = fopen("/dev/urandom", "rb");
    if (u == NULL || fread(&x, sizeof x, 1, u) != 1)
        x = (uint64_t)time(NULL) * 0x9E3779B97F4A7C15u ^ (uint64_t)getpid();
    if (u != NULL)
        fclose(u);
    snprintf(r->token, sizeof r->token, "%016" PRIx64, x);
    r->target = target;
    if (gethostname(r->host, sizeof r->host - 1) != 0 || r->host[0] == '\0')
        snprintf(r->host, sizeof r->host, "unknown");
    word(r->host);
    read_first_line("/proc/sys/kernel/random/boot_id", r->boot, sizeof r->boot);
    word(r->boot);
    r->pid = (long)getpid();
    r->start = start_time(r->pid);
    const struct passwd *pw = getpwuid(geteuid());
    const char *user = pw != NULL ? pw->pw_name : getenv("USER");
    snprintf(r->user, sizeof r->user, "%s", user && *user ? user : "?");
    word(r->user);
    const time_t now = time(NULL);
    struct tm tm;
    if (gmtime_r(&now, &tm) == NULL ||
        strftime(r->at, sizeof r->at, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
        snprintf(r->at, sizeof r->at, "?");
    snprintf(r->folder, sizeof r->folder, "%s", folder ? folder : "");
}

int owner_alive(const owner_rec *r)
{
    char host[256] = "";
    char boot[40] = "";
    if (gethostname(host, sizeof host - 1) != 0)
        return -1;
    word(host);
    read_first_line("/proc/sys/kernel/random/boot_id", boot, sizeof boot);
    word(boot);
    if (strcmp(host, r->host) != 0)
        return -1;
    if (strcmp(boot, r->boot) != 0)
        return 0; /* this host rebooted since: the process is gone */
    return r->pid > 0 && start_time(r->pid) == r->start ? 1 : 0;
}

void owner_describe(FILE *f, const owner_rec *r)
{
    fprintf(f, "rollout %s (pid %ld on %s, by %s, started %s)", r->token, r->pid, r->host,
            r->user, r->at);
}

/* ---- publish, fetch, watch -------------------------------------------- */

/* After DCH_EUNKNOWN from removing the owner record `was`: read it back
 * with a fresh client (as read_back does); 0 when it is gone (the removal
 * applied: the publish goes on), else EXIT_UNKNOWN after saying what to run. */
static int release_unknown(const command *cmd, const etcd_opts *o, const char *was)
{
    etcd_opts quick = *o;
    quick.deadline = "5000";
    quick.timeout = NULL;
    dch_etcd *c;
    char now[DCH_ETCD_OWNER_MAX + 1];
    int rc = DCH_EIO;
    if (connect_etcd(cmd, &quick, &c) == 0) {
        rc = dch_etcd_fetch_owner(c, o->key, now, sizeof now, NULL);
        dch_etcd_free(c);
    }
    if (rc == DCH_OK && now[0] == '\0') {
        fprintf(stderr, "dchctl publish: read back: the owner record is removed after all; "
                        "going on\n");
        return 0;
    }
    fprintf(stderr, "dchctl publish: read back: the owner record is %s; the map was not "
            "written. Run the same command again (with --force if a rollout owns the key)\n",
            rc != DCH_OK ? "unknown (cannot read it)" : strcmp(now, was) == 0 ? "still there"
                                                       : "another one now");
    return EXIT_UNKNOWN;
}

/* A manual publish and the owner record: refused (exit 3) while a rollout
 * that has not finished owns the key, unless --force; otherwise the record
 * is removed first, so that a rollout still running (forced) stops at its
 * next step with a conflict instead of publishing over this map. 0 when
 * removed, -1 when there is none, else the exit status. */
static int release_owner(const command *cmd, const etcd_opts *o, dch_etcd *c)
{
    char text[DCH_ETCD_OWNER_MAX + 1];
    dch_map *stored = NULL;
    int rc = dch_etcd_fetch_owner(c, o->key, text, sizeof text, &stored);
    if (rc == DCH_ECORRUPT || rc == DCH_EVERSION)
        rc = dch_etcd_fetch_owner(c, o->key, text, sizeof text, NULL); /* publish says */
    if (rc != DCH_OK)
        return etcd_error(cmd, c, rc);
    owner_rec r;
    const int rollout = text[0] != '\0' && owner_parse(text, &r) == 0;
    if (text[0] != '\0' && !(rollout && r.done) && !o->force) {
        fprintf(stderr, "dchctl publish: a conflict: ");
        if (rollout)
            owner_describe(stderr, &r);
        else
            fprintf(stderr, "an owner record (%s)", text);
        fprintf(stderr, " owns %s and has not finished; the stored map is ", o->key);
        if (stored != NULL)
            print_map_line(stderr, stored, 0);
        else
            fprintf(stderr, "none\n");
        fprintf(stderr, "dchctl publish: resume that rollout, or publish with --force (a "
                        "rollout still running then stops with exit status 3)\n");
        dch_map_free(stored);
        return EXIT_CONFLICT;
    }
    dch_map_free(stored);
    if (text[0] == '\0')
        return -1;
    rc = dch_etcd_set_owner(c, o->key, text, NULL);
    if (rc == DCH_OK)
        return 0;
    const int status = etcd_error(cmd, c, rc);
    return rc == DCH_EUNKNOWN ? release_unknown(cmd, o, text) : status;
}

/* After DCH_EUNKNOWN: what is stored, and what to run next. */
static int publish_unknown(const command *cmd, const etcd_opts *o, const dch_map *m)
{
    if (read_back(cmd, o, m)) {
        fprintf(stderr, "dchctl publish: the map is stored after all\n");
        print_map_line(stdout, m, o->json);
        return 0;
    }
    fprintf(stderr, "dchctl publish: the outcome is unknown: the write may still be applied. "
                    "Run the same command again: it succeeds if the map is stored, and stores "
                    "it if the epoch is still %s\n", o->expect ? o->expect : "0");
    return EXIT_UNKNOWN;
}

static int run_publish(const command *cmd, const etcd_opts *o)
{
    uint64_t expect = 0;
    if (o->expect != NULL && dch__number_parse(o->expect, 0, 0, UINT64_MAX, &expect) != 0)
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
    dch_etcd *c = NULL;
    status = connect_etcd(cmd, o, &c);
    uint64_t stored = 0;
    int rc = DCH_OK, released = 0;
    if (status == 0) { /* as nobody: the key must have no owner record */
        rc = dch_etcd_publish_owned(c, o->key, m, expect, NULL, &stored);
        if (rc == DCH_ECONFLICT) { /* an owner record, or another epoch */
            char why[sizeof "" + 768];
            snprintf(why, sizeof why, "%s", dch_etcd_errmsg(c));
            status = release_owner(cmd, o, c);
            released = status == 0;
            if (status == 0)
                rc = dch_etcd_publish_owned(c, o->key, m, expect, NULL, &stored);
            else if (status == -1) { /* no record: the epoch was the conflict */
                fprintf(stderr, "dchctl publish: %s: %s\n", dch_strerror(rc), why);
                status = EXIT_CONFLICT;
            }
        }
    }
    if (status == 0) {
        if (rc == DCH_OK)
            print_map_line(stdout, m, o->json);
        else
            status = etcd_error(cmd, c, rc);
        if (rc == DCH_EUNKNOWN)
            status = publish_unknown(cmd, o, m);
        else if (rc != DCH_OK && released) /* exit 1 says nothing was written: not so */
            fprintf(stderr, "dchctl publish: the map was not written, but the owner record "
                    "of %s was removed (a rollout that owned the key stops at its next "
                    "step)\n", o->key);
    }
    if (c != NULL)
        dch_etcd_free(c);
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
    if (o->after != NULL && dch__number_parse(o->after, 0, 0, UINT64_MAX, &after) != 0)
        return usage_error(cmd, "--after: not an epoch: %s", o->after);
    if (o->count != NULL && dch__number_parse(o->count, 0, 1, UINT64_MAX, &count) != 0)
        return usage_error(cmd, "--count: not a positive number: %s", o->count);
    /* --timeout bounds each request and, for watch, the whole watch. */
    if (o->timeout != NULL && dch__number_parse(o->timeout, 0, 1, 3600000, &duration) != 0)
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

#define DEADLINE_HELP                                                              \
    "  --deadline MS   give up on a request to etcd after MS milliseconds, retries\n" \
    "                  over the members included (default 20000; --timeout is its\n" \
    "                  old name); attempts get longer and pauses random as it tries\n"

const command etcd_commands[] = {
    {"publish", "--etcd URLS --key KEY FILE [--expect EPOCH] [--deadline MS] [--force] [--json]",
     "store FILE's map in etcd if the stored epoch is EPOCH",
     COMMON_HELP
     "  --expect EPOCH  the epoch the change started from (default 0: nothing\n"
     "                  stored); any other stored epoch is a conflict, exit status 3\n"
     DEADLINE_HELP
     "  --force         publish even while a rollout that has not finished owns the\n"
     "                  key (that rollout then stops with exit status 3)\n"
     "  A publish removes the key's owner record; while an unfinished rollout owns\n"
     "  the key, it is refused with exit status 3 unless --force.\n"
     "  exit status 1: the map was not written (etcd down or refusing; a message\n"
     "  says when the owner record was removed first); exit status 4:\n"
     "  the write was sent and no answer came, so it may or may not be applied;\n"
     "  the key is read back and shown: run the same command again (it succeeds\n"
     "  if the map is stored)\n"
     "  FILE '-' reads the map from standard input\n",
     1, 1, OPT_JSON, etcd_main, {.etcd = run_publish}},
    {"fetch", "--etcd URLS --key KEY FILE [--deadline MS] [--json]",
     "write the map stored in etcd to FILE",
     COMMON_HELP DEADLINE_HELP
     "  FILE '-' writes the map to standard output (never a terminal) and the\n"
     "  line to standard error\n",
     1, 1, OPT_JSON, etcd_main, {.etcd = run_fetch}},
    {"watch", "--etcd URLS --key KEY [--after EPOCH] [--count N] [--timeout MS] [--deadline MS] [--write FILE] [--json]",
     "print a line for each newer map stored in etcd",
     COMMON_HELP
     "  one line per epoch: epoch, fingerprint, and step i/n towards the target\n"
     "  fingerprint for a step map; epochs only grow; broken connections and\n"
     "  restarted members are retried, re-reading the key each time\n"
     "  --after EPOCH   print only maps above EPOCH (default 0)\n"
     "  --count N       stop after N maps (exit status 1 if the time runs out first)\n"
     "  --timeout MS    stop after MS milliseconds (default: never)\n"
     "  --deadline MS   each read of the key gives up after MS milliseconds\n"
     "                  (default 20000; the watch then tries again)\n"
     "  --write FILE    also write each map to FILE, atomically, before its line\n",
     0, 0, OPT_JSON, etcd_main, {.etcd = run_watch}},
    {"rollout", "--etcd URLS --key KEY NEW --max-slots K [--exec CMD] [--deadline MS] [--take-over]",
     "move the stored map to NEW in steps of at most K slots per member",
     COMMON_HELP
     "  --max-slots K   most slots a step moves into, or out of, any member\n"
     "  --exec CMD      run CMD (with /bin/sh, in a process group of its own) after\n"
     "                  publishing each step; it gets DCH_FROM and DCH_TO (the maps\n"
     "                  before and after the step), DCH_PLAN (their plan, as dchctl\n"
     "                  diff --json), DCH_STEP, DCH_STEPS and DCH_EPOCH; a non-zero\n"
     "                  exit stops the rollout\n"
     DEADLINE_HELP
     "                  and the longest wait for a stopped rollout's migrator\n"
     "  --take-over     take the key from a rollout started on another host (which\n"
     "                  cannot be checked from here): only when it is dead\n"
     "  The rollout first claims the key (its owner record, KEY.owner); while\n"
     "  another rollout runs, or the key is at a step towards another target, or\n"
     "  the map moved since NEW was made, it exits with status 3 and says which.\n"
     "  Each step is published by compare-and-swap from the step before it, only\n"
     "  after the step before's migrator ended with status 0.\n"
     "  Run again after a stop or a crash, it goes on from the epoch stored in\n"
     "  etcd: it waits for a migrator of the stopped rollout still running, then\n"
     "  runs CMD again for the stored step unless that step's migrator ended with\n"
     "  status 0 (so CMD must accept running twice). Run again when done, it\n"
     "  says so and runs nothing. exit status 4: a step was sent and its outcome\n"
     "  is unknown; run the same rollout again.\n"
     "  NEW '-' reads the target map from standard input\n",
     1, 1, 0, etcd_main, {.etcd = run_rollout}},
};

const size_t etcd_command_count = sizeof etcd_commands / sizeof etcd_commands[0];
