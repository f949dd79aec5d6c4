/* SPDX-License-Identifier: MIT */
/*
 * dchctl rollout: moves a cluster from the map stored in etcd to a target map
 * in steps of at most K slots into and out of any member (map_stage.h). It
 * publishes one step at a time, each by compare-and-swap from the step
 * before, and between steps runs the migrator (--exec) with the step's
 * plan; a failing migrator stops the rollout with the cluster on the step it
 * had reached.
 *
 * Three rules, each kept by a mechanism that survives a SIGKILL:
 *
 * - One rollout at a time. A rollout first claims the key: it replaces the
 *   key's owner record (KEY ".owner", see owner_rec in etcd_cmds.h) by
 *   compare-and-swap with its own, and publishes every step with
 *   dch_etcd_publish_owned, which stores nothing once another record is
 *   there. A record whose process still runs is never replaced: a second
 *   rollout exits 3 naming it. A record whose process is gone (this host,
 *   checked by pid and start time) is taken over: that is a resume.
 *
 * - One migrator at a time. The migrator runs in a process group of its
 *   own and holds the step folder's lock (workdir.c) as long as it runs,
 *   even when the rollout that started it is killed. A resume waits until
 *   that lock is free (up to --deadline) before it runs the step again or
 *   moves on, and no sweep removes a locked folder. Signals that stop the
 *   rollout (INT, TERM, HUP) are passed to the migrator's group, and the
 *   rollout waits for it to end before it exits.
 *
 * - A step is published only after the migrator of the step before ended
 *   with status 0. The folder's state file says what the last migrator did
 *   ("running EPOCH STEP PID", "done EPOCH STEP STATUS"), so a resume runs
 *   the stored step's migrator again only when it did not end well, and
 *   says which case it is.
 */
#define _POSIX_C_SOURCE 200809L
#include "etcd_cmds.h"
#include "number.h"
#include "workdir.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The migrator's process group while it runs, for the signal handler. */
static volatile sig_atomic_t migrator_group;
static volatile sig_atomic_t stop_signal;

static void forward_signal(int sig)
{
    stop_signal = sig;
    if (migrator_group > 0)
        kill(-(pid_t)migrator_group, sig);
}

typedef struct rollout {
    const command *cmd;
    const etcd_opts *o;
    dch_etcd *c;
    workdir d;
    owner_rec me;
    char owner[DCH_ETCD_OWNER_MAX + 1]; /* me as text: the claim */
    uint64_t target_fp;
    uint64_t wait_ms; /* --deadline: also the longest wait for a migrator */
    int claimed; /* the owner record is ours */
    int keep; /* finished, but the record is not marked done: keep the folder */
} rollout;

/* ---- The migrator -------------------------------------------------------- */

/* The step's files, the environment, and the plan (`dchctl diff --json`). */
static int prepare_step(const rollout *r, const dch_map *from, const dch_map *to,
                        uint32_t step, uint32_t steps)
{
    const workdir *d = &r->d;
    if (dch_map_save_file(from, d->from) != DCH_OK || dch_map_save_file(to, d->to) != DCH_OK) {
        fprintf(stderr, "dchctl rollout: cannot write the step's maps in %s\n", d->path);
        return -1;
    }
    char self[4096];
    const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) {
        fprintf(stderr, "dchctl rollout: cannot find the dchctl executable for the plan\n");
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
    if (system("\"$DCH\" diff \"$DCH_FROM\" \"$DCH_TO\" --json >\"$DCH_PLAN\"") != 0) {
        fprintf(stderr, "dchctl rollout: cannot write the plan of step %" PRIu32 "\n", step);
        return -1;
    }
    return 0;
}

/* In the child: a process group of its own, the folder's lock kept across
 * exec (a copy of the descriptor without close-on-exec), then the shell. */
static void exec_migrator(const rollout *r)
{
    setpgid(0, 0);
    const int flags = fcntl(r->d.lock, F_GETFD);
    if (flags >= 0)
        fcntl(r->d.lock, F_SETFD, flags & ~FD_CLOEXEC);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    execl("/bin/sh", "sh", "-c", r->o->exec, (char *)NULL);
    _exit(127);
}

/* Run the migrator and wait for it, passing INT, TERM and HUP on to its
 * group; its wait status, or -1 when it could not start. */
static int run_migrator(const rollout *r, uint64_t epoch, uint32_t step)
{
    fflush(stdout);
    fflush(stderr);
    const pid_t pid = fork();
    if (pid == 0)
        exec_migrator(r);
    if (pid < 0)
        return -1;
    setpgid(pid, pid); /* also here, so the group exists before any signal */
    char line[128];
    snprintf(line, sizeof line, "running %" PRIu64 " %" PRIu32 " %ld", epoch, step, (long)pid);
    workdir_state_write(&r->d, line);
    struct sigaction fwd = {.sa_handler = forward_signal}, old[3];
    sigemptyset(&fwd.sa_mask);
    const int sigs[3] = {SIGINT, SIGTERM, SIGHUP};
    migrator_group = (sig_atomic_t)pid;
    for (int i = 0; i < 3; i++)
        sigaction(sigs[i], &fwd, &old[i]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    migrator_group = 0;
    for (int i = 0; i < 3; i++)
        sigaction(sigs[i], &old[i], NULL);
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    snprintf(line, sizeof line, "done %" PRIu64 " %" PRIu32 " %d", epoch, step, code);
    workdir_state_write(&r->d, line);
    return status;
}

/* Run the migrator for the step from -> to; 0 when it exits with status 0
 * (and the rollout was not asked to stop meanwhile). */
static int migrate(const rollout *r, const dch_map *from, const dch_map *to, uint32_t step,
                   uint32_t steps)
{
    if (prepare_step(r, from, to, step, steps) != 0)
        return -1;
    const int status = run_migrator(r, dch_map_epoch(to), step);
    if (status == -1)
        fprintf(stderr, "dchctl rollout: cannot run --exec (%s)\n", strerror(errno));
    else if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
        fprintf(stderr, "dchctl rollout: --exec exited with status %d at step %" PRIu32 "\n",
                WEXITSTATUS(status), step);
    else if (WIFSIGNALED(status))
        fprintf(stderr, "dchctl rollout: --exec ended by signal %d at step %" PRIu32 "\n",
                WTERMSIG(status), step);
    if (stop_signal != 0)
        fprintf(stderr, "dchctl rollout: stopped by signal %d after the migrator of step %" PRIu32
                " ended\n", (int)stop_signal, step);
    return status == 0 && stop_signal == 0 ? 0 : -1;
}

/* ---- Steps ------------------------------------------------------------- */

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

/* Who owns the key and where it is, after a conflict of ours. */
static void report_owner(rollout *r)
{
    char text[DCH_ETCD_OWNER_MAX + 1];
    dch_map *m = NULL;
    if (dch_etcd_fetch_owner(r->c, r->o->key, text, sizeof text, &m) != DCH_OK)
        return;
    owner_rec rec;
    fprintf(stderr, "dchctl rollout: the key is owned by ");
    if (text[0] == '\0')
        fprintf(stderr, "nobody (a manual publish removed the record)");
    else if (owner_parse(text, &rec) == 0)
        owner_describe(stderr, &rec);
    else
        fprintf(stderr, "%s", text);
    fprintf(stderr, "; it stores ");
    if (m != NULL)
        print_map_line(stderr, m, 0);
    else
        fprintf(stderr, "no map\n");
    dch_map_free(m);
}

/* Publish `next` from cur as the owner; 0 or the exit status. An unknown
 * outcome is read back: stored means published. */
static int publish_step(rollout *r, const dch_map *cur, const dch_map *next)
{
    const int rc = dch_etcd_publish_owned(r->c, r->o->key, next, dch_map_epoch(cur), r->owner,
                                          NULL);
    if (rc == DCH_OK)
        return 0;
    const int status = etcd_error(r->cmd, r->c, rc);
    if (rc == DCH_ECONFLICT) {
        fprintf(stderr, "dchctl rollout: a conflict: the map or its owner record changed "
                        "while this rollout ran\n");
        report_owner(r);
        return status;
    }
    if (rc != DCH_EUNKNOWN)
        return status;
    if (read_back(r->cmd, r->o, next)) {
        fprintf(stderr, "dchctl rollout: the step is stored after all; going on\n");
        return 0;
    }
    fprintf(stderr, "dchctl rollout: the outcome of epoch %" PRIu64 " is unknown (it may still "
            "be stored); run the same rollout again: it goes on from whatever etcd stores\n",
            dch_map_epoch(next));
    return status;
}

static uint64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Replace our record by `done`, trying again on DCH_EIO and DCH_EUNKNOWN
 * (an unknown outcome read back first) until --deadline has passed: a
 * record left running makes the next run check the last migrator. */
static int mark_done(rollout *r, const char *done)
{
    const uint64_t until = mono_ms() + r->wait_ms;
    for (;;) {
        const int rc = dch_etcd_set_owner(r->c, r->o->key, r->owner, done);
        char now[DCH_ETCD_OWNER_MAX + 1];
        if (rc == DCH_OK || (rc == DCH_EUNKNOWN &&
                             dch_etcd_fetch_owner(r->c, r->o->key, now, sizeof now, NULL) ==
                                 DCH_OK && strcmp(now, done) == 0))
            return DCH_OK;
        if ((rc != DCH_EIO && rc != DCH_EUNKNOWN) || mono_ms() >= until)
            return rc;
        const struct timespec pause = {0, 500 * 1000000L};
        nanosleep(&pause, NULL);
    }
}

/* The rollout reached the target: mark its owner record done, so that a
 * run again says so and runs nothing. 0. When the record cannot be marked,
 * the step folder stays (unlocked; its state says the last migrator ended
 * with status 0), so that the next run finds that state and runs nothing;
 * removing it would make that run start the last migrator again. */
static int finish(rollout *r, const dch_map *cur)
{
    char done[DCH_ETCD_OWNER_MAX + 1];
    owner_rec d = r->me;
    d.done = 1;
    if (owner_format(&d, done, sizeof done) == 0) {
        const int rc = mark_done(r, done);
        r->keep = rc != DCH_OK && rc != DCH_ECONFLICT && r->d.lock >= 0;
        if (rc != DCH_OK)
            fprintf(stderr, "dchctl rollout: warning: the owner record is not marked done "
                    "(%s: %s)", dch_strerror(rc), dch_etcd_errmsg(r->c));
        if (r->keep)
            fprintf(stderr, "; the step folder %s stays, saying the last migrator ended with "
                    "status 0: a run again finds that, marks the record and runs nothing\n",
                    r->d.path);
        else if (rc != DCH_OK)
            fprintf(stderr, "; a run again checks the last migrator\n");
    }
    printf("done: epoch %" PRIu64 " fingerprint %016" PRIx64 "\n", dch_map_epoch(cur),
           dch_map_fingerprint(cur));
    return 0;
}

static int rollout_steps(rollout *r, dch_map *cur, const dch_map *target, uint32_t k)
{
    int status = 0;
    while (status == 0 &&
           (dch_map_in_transition(cur, NULL) || dch_map_fingerprint(cur) != r->target_fp)) {
        dch_map *next;
        const int rc = dch_map_stage_next(&next, cur, target, k);
        if (rc != DCH_OK) {
            fprintf(stderr, "dchctl rollout: cannot stage from the stored epoch %" PRIu64
                    " to the target: %s (a map with another config, or replicas)\n",
                    dch_map_epoch(cur), dch_strerror(rc));
            status = EXIT_RUNTIME;
            break;
        }
        status = publish_step(r, cur, next);
        if (status != 0) {
            dch_map_free(next);
            break;
        }
        uint32_t step, steps;
        step_of(cur, next, &step, &steps);
        printf("step %" PRIu32 "/%" PRIu32 " published: ", step, steps);
        print_map_line(stdout, next, 0);
        if (r->o->exec != NULL && migrate(r, cur, next, step, steps) != 0) {
            fprintf(stderr, "dchctl rollout: stopped; the cluster runs epoch %" PRIu64
                    "; run the same rollout again to go on from there\n",
                    dch_map_epoch(next));
            status = EXIT_RUNTIME;
        }
        dch_map_free(cur);
        cur = next;
    }
    if (status == 0)
        status = finish(r, cur);
    dch_map_free(cur);
    return status;
}

/* ---- Claiming the key, resuming --------------------------------------- */

/* Whether the owner record `text` (parsed into rec when it is a rollout's)
 * lets this rollout claim the key; 0, or the exit status after saying why
 * not. A running rollout is never displaced; one on another host only with
 * --take-over. */
static int check_owner(const rollout *r, const char *text, const owner_rec *rec, int is_rec,
                       const dch_map *stored)
{
    if (text[0] == '\0' || (is_rec && rec->done))
        return 0;
    const int alive = is_rec ? owner_alive(rec) : -1;
    if (alive == 0 || (alive == -1 && r->o->take_over))
        return 0;
    fprintf(stderr, "dchctl rollout: a conflict: ");
    if (is_rec)
        owner_describe(stderr, rec);
    else
        fprintf(stderr, "an owner record that is not a rollout's (%s)", text);
    if (alive == 1)
        fprintf(stderr, " is running and owns %s", r->o->key);
    else
        fprintf(stderr, " owns %s and cannot be checked from here", r->o->key);
    if (is_rec && rec->target != r->target_fp)
        fprintf(stderr, " (a rollout to another target, %016" PRIx64 ")", rec->target);
    fprintf(stderr, "; etcd stores ");
    print_map_line(stderr, stored, 0);
    if (alive == -1)
        fprintf(stderr, "dchctl rollout: if that rollout is dead, run again with --take-over\n");
    return EXIT_CONFLICT;
}

/* What the stored map means for a rollout to the target: 0 go on, -1 done
 * already (nothing to run), or the exit status of a conflict. */
static int check_stored(const rollout *r, const dch_map *stored, const dch_map *target,
                        const owner_rec *rec, int is_rec)
{
    dch_map_transition tr;
    const int moving = dch_map_in_transition(stored, &tr);
    if (moving && tr.target_fingerprint != r->target_fp) {
        fprintf(stderr, "dchctl rollout: a conflict: the key is at step %" PRIu32 "/%" PRIu32
                " of a rollout to another target (%016" PRIx64 "); finish that rollout first"
                " (run it again with its own target)\n", tr.step, tr.steps,
                tr.target_fingerprint);
        return EXIT_CONFLICT;
    }
    if (moving)
        return 0;
    if (dch_map_fingerprint(stored) == r->target_fp) {
        if (is_rec && !rec->done && rec->target == r->target_fp)
            return 0; /* stopped after its last publish: its last migrator is checked */
        printf("done already: etcd stores the target, ");
        print_map_line(stdout, stored, 0);
        printf("nothing to run\n");
        return -1;
    }
    if (dch_map_epoch(stored) >= dch_map_epoch(target)) {
        fprintf(stderr, "dchctl rollout: a conflict: etcd stores epoch %" PRIu64 ", not below "
                "the target's epoch %" PRIu64 ": the map moved since the target was made "
                "from it (fetch it and make the target again)\n", dch_map_epoch(stored),
                dch_map_epoch(target));
        return EXIT_CONFLICT;
    }
    return 0;
}

/* Store r->me as the key's owner in place of `text`; 0 or the exit status. */
static int claim(rollout *r, const char *text)
{
    if (owner_format(&r->me, r->owner, sizeof r->owner) != 0) {
        fprintf(stderr, "dchctl rollout: the owner record is too long (a long TMPDIR?)\n");
        return EXIT_RUNTIME;
    }
    const int rc = dch_etcd_set_owner(r->c, r->o->key, text[0] ? text : NULL, r->owner);
    r->claimed = rc == DCH_OK;
    if (rc == DCH_OK)
        return 0;
    const int status = etcd_error(r->cmd, r->c, rc);
    if (rc == DCH_ECONFLICT) {
        fprintf(stderr, "dchctl rollout: a conflict: another rollout claimed the key first\n");
        report_owner(r);
    } else if (rc == DCH_EUNKNOWN) {
        char now[DCH_ETCD_OWNER_MAX + 1];
        if (dch_etcd_fetch_owner(r->c, r->o->key, now, sizeof now, NULL) == DCH_OK &&
            strcmp(now, r->owner) == 0) {
            r->claimed = 1;
            return 0;
        }
        fprintf(stderr, "dchctl rollout: whether this rollout owns the key is unknown; "
                        "nothing was published: run the same rollout again\n");
    }
    return status;
}

static void say_waiting(const workdir *d, void *ctx)
{
    const rollout *r = ctx;
    char state[256];
    workdir_state_read(d, state, sizeof state);
    unsigned long long epoch = 0;
    unsigned step = 0;
    long pid = 0;
    if (sscanf(state, "running %llu %u %ld", &epoch, &step, &pid) == 3)
        fprintf(stderr, "dchctl rollout: waiting for the migrator of step %u (epoch %llu, pid %ld,"
                " process group %ld) of the stopped rollout to end, up to %" PRIu64 " ms\n",
                step, epoch, pid, pid, r->wait_ms);
    else
        fprintf(stderr, "dchctl rollout: waiting for a process of the stopped rollout that "
                "holds %s, up to %" PRIu64 " ms\n", d->path, r->wait_ms);
}

/* Take the stopped rollout's folder once its migrator is gone: 0 (taken,
 * or *gone when it is not there), or the exit status. (*gone is apart
 * from the status: EXIT_RUNTIME is 1 too, and a refusal taken for "gone"
 * would start the step again beside a migrator that may still run.) */
static int adopt(rollout *r, const char *folder, int *gone)
{
    const int rc = adopt_workdir(&r->d, folder, r->wait_ms, say_waiting, r);
    *gone = rc == 1;
    if (rc >= 0)
        return 0;
    const int err = errno;
    if (err == EINVAL) { /* the record names a path a resume must not touch */
        fprintf(stderr, "dchctl rollout: the step folder %s of the stored rollout cannot be "
                "adopted: it is not TMP/dch-rollout-* with TMP this rollout's temporary "
                "directory ($TMPDIR, else /tmp); nothing in it was touched: resume with the "
                "TMPDIR of the stopped rollout\n", folder);
        return EXIT_RUNTIME;
    }
    if (err != ETIMEDOUT) { /* not gone: its migrator may still run */
        fprintf(stderr, "dchctl rollout: the step folder %s of the stored rollout cannot be "
                "adopted: %s; resume as its user\n", folder,
                err == EPERM ? "another user owns it" : strerror(err));
        return EXIT_RUNTIME;
    }
    char state[256];
    workdir_state_read(&r->d, state, sizeof state);
    fprintf(stderr, "dchctl rollout: %s is still held after %" PRIu64 " ms (%s): a migrator "
            "of the stopped rollout runs (%s); wait for it or stop it (kill -- -PID), then run "
            "the same rollout again\n", folder, r->wait_ms, strerror(errno),
            state[0] ? state : "no state");
    return EXIT_RUNTIME;
}

/* Claim the key and set up the step folder: the stopped rollout's, once
 * free, when this host has it (so its migrator is waited for and its state
 * read), else a new one. 0 or the exit status. */
static int take_key(rollout *r, const char *text, const owner_rec *rec, int is_rec)
{
    const int inherit = is_rec && !rec->done && rec->folder[0] != '\0' && owner_alive(rec) == 0;
    if (!inherit && r->o->exec != NULL && make_workdir(&r->d) != 0) {
        fprintf(stderr, "dchctl rollout: cannot make a temporary directory (%s)\n",
                strerror(errno));
        return EXIT_RUNTIME;
    }
    owner_self(&r->me, r->target_fp, inherit ? rec->folder : r->d.lock >= 0 ? r->d.path : "");
    int status = claim(r, text);
    if (status != 0 || !inherit)
        return status;
    int gone;
    status = adopt(r, rec->folder, &gone);
    if (status != 0 || !gone)
        return status;
    /* The folder is gone: a new one, named in the record for the next resume. */
    if (r->o->exec == NULL)
        return 0;
    if (make_workdir(&r->d) != 0) {
        fprintf(stderr, "dchctl rollout: cannot make a temporary directory (%s)\n",
                strerror(errno));
        return EXIT_RUNTIME;
    }
    const char *was = r->owner;
    char old[DCH_ETCD_OWNER_MAX + 1];
    snprintf(old, sizeof old, "%s", was);
    snprintf(r->me.folder, sizeof r->me.folder, "%s", r->d.path);
    return claim(r, old);
}

/* Why the stored step's migrator runs again, from the folder's state; NULL
 * when it ended well and need not. */
static const char *why_again(const rollout *r, uint64_t epoch, int inherited)
{
    static char why[160];
    char state[256];
    workdir_state_read(&r->d, state, sizeof state);
    unsigned long long e = 0;
    unsigned step = 0;
    int code = 0;
    if (!inherited)
        return "again: the stopped rollout left no step folder here to say how its "
               "migrator ended";
    if (sscanf(state, "done %llu %u %d", &e, &step, &code) == 3 && e == epoch) {
        if (code == 0)
            return NULL;
        snprintf(why, sizeof why, "again: its migrator exited with status %d", code);
        return why;
    }
    if (sscanf(state, "running %llu", &e) == 1 && e == epoch)
        return "again: its migrator did not finish under the stopped rollout";
    return "(its migrator had not started when the rollout stopped)";
}

/* The maps of the stored step from the inherited folder, when etcd no
 * longer has the map before it: from.dchmap and to.dchmap when to.dchmap
 * is the stored map byte for byte (the migrator had started), or
 * to.dchmap and the stored map when the stored map is the step staged from
 * to.dchmap (stopped after the publish, before the migrator started). 0,
 * with *from and *to to free; -1 when the folder cannot tell. */
static int maps_from_folder(const rollout *r, const dch_map *stored, const dch_map *target,
                            uint32_t k, dch_map **from, dch_map **to)
{
    dch_map *a = NULL, *b = NULL, *staged = NULL;
    *from = *to = NULL;
    if (load_map(&b, r->d.to) != DCH_OK)
        return -1;
    if (same_map(b, stored) && load_map(&a, r->d.from) == DCH_OK &&
        dch_map_epoch(a) < dch_map_epoch(stored)) {
        *from = a;
        *to = b;
        return 0;
    }
    dch_map_free(a);
    if (dch_map_epoch(b) < dch_map_epoch(stored) &&
        dch_map_stage_next(&staged, b, target, k) == DCH_OK && same_map(staged, stored)) {
        *from = b;
        *to = staged;
        return 0;
    }
    dch_map_free(staged);
    dch_map_free(b);
    return -1;
}

/* The step before the stored map: from etcd's history, else (compacted)
 * from the inherited folder. 0 with *from, *to to free, or the exit
 * status: without both, the stored step's migrator cannot run again, and
 * going on would publish the next step before it ended well. */
static int step_maps(rollout *r, const dch_map *stored, const dch_map *target, uint32_t k,
                     int inherited, dch_map **from, dch_map **to)
{
    *to = NULL;
    const int rc = dch_etcd_fetch_previous(r->c, r->o->key, from);
    if (rc == DCH_OK)
        return 0;
    if (rc != DCH_ENOENT && rc != DCH_ECORRUPT && rc != DCH_EVERSION)
        return etcd_error(r->cmd, r->c, rc);
    if (inherited && maps_from_folder(r, stored, target, k, from, to) == 0) {
        printf("resume: the map before epoch %" PRIu64 " is gone from etcd's history; the "
               "step's maps come from the step folder %s\n", dch_map_epoch(stored), r->d.path);
        return 0;
    }
    fprintf(stderr, "dchctl rollout: the map before epoch %" PRIu64 " is gone from etcd's "
            "history (compacted) and the step folder %s does not hold that step's maps: its "
            "migrator cannot run again, and no later step is published. Run that step's "
            "migration by hand (its map: dchctl fetch), then write \"done %" PRIu64 " 0 0\" to "
            "%s and run the same rollout again\n", dch_map_epoch(stored), r->d.path,
            dch_map_epoch(stored), r->d.state);
    return EXIT_RUNTIME;
}

/* A resumed rollout: run the migrator again for the stored step when it
 * belongs to this rollout and did not end well. */
static int resume(rollout *r, const dch_map *stored, const dch_map *target, uint32_t k,
                  int inherited)
{
    dch_map_transition tr;
    const int moving = dch_map_in_transition(stored, &tr);
    if (r->o->exec == NULL || (!moving && dch_map_fingerprint(stored) != r->target_fp) ||
        (moving && tr.step == 0))
        return 0;
    const char *why = why_again(r, dch_map_epoch(stored), inherited);
    if (why == NULL) {
        printf("resume: the migrator of epoch %" PRIu64 " ended well before the stop\n",
               dch_map_epoch(stored));
        return 0;
    }
    dch_map *prev, *to;
    int status = step_maps(r, stored, target, k, inherited, &prev, &to);
    if (status != 0)
        return status;
    if (dch_map_epoch(prev) < dch_map_epoch(stored)) {
        uint32_t step, steps;
        step_of(prev, stored, &step, &steps);
        printf("resume: migrating step %" PRIu32 "/%" PRIu32 " (epoch %" PRIu64 ") %s\n", step,
               steps, dch_map_epoch(stored), why);
        if (migrate(r, prev, to != NULL ? to : stored, step, steps) != 0)
            status = EXIT_RUNTIME;
    }
    dch_map_free(prev);
    dch_map_free(to);
    return status;
}

/* A rollout to another target found settled on the target X of a stopped
 * rollout whose last migrator did not end with status 0 (the inherited
 * folder's state says so): X is half migrated, and staging from it would
 * move a cluster that does not run it yet. 0, or EXIT_CONFLICT after
 * saying so. */
static int check_unfinished(const rollout *r, const dch_map *stored, int inherited)
{
    if (!inherited || dch_map_in_transition(stored, NULL) ||
        dch_map_fingerprint(stored) == r->target_fp)
        return 0;
    char state[256];
    workdir_state_read(&r->d, state, sizeof state);
    unsigned long long e = 0;
    unsigned step = 0;
    int code = 0;
    int unfinished; /* ended with another status, or never ended (killed) */
    if (sscanf(state, "done %llu %u %d", &e, &step, &code) == 3)
        unfinished = e == dch_map_epoch(stored) && code != 0;
    else
        unfinished = sscanf(state, "running %llu", &e) == 1 && e == dch_map_epoch(stored);
    if (unfinished) {
        fprintf(stderr, "dchctl rollout: a conflict: the last migrator of the stopped rollout "
                "to %016" PRIx64 " (epoch %" PRIu64 ") did not end with status 0 (its state: "
                "%s); finish "
                "the rollout to %016" PRIx64 " first (run it again), then this one\n",
                dch_map_fingerprint(stored), dch_map_epoch(stored), state,
                dch_map_fingerprint(stored));
        return EXIT_CONFLICT;
    }
    return 0;
}

/* Give the key back to the stopped rollout whose record `text` this one
 * replaced, and leave its folder (unlocked) as it was, so that running
 * that rollout again resumes it. */
static void give_back(rollout *r, const char *text)
{
    const int rc = dch_etcd_set_owner(r->c, r->o->key, r->owner, text);
    if (rc == DCH_OK)
        r->claimed = 0;
    else
        fprintf(stderr, "dchctl rollout: warning: the owner record stays this rollout's (%s: "
                "%s)\n", dch_strerror(rc), dch_etcd_errmsg(r->c));
    if (r->d.lock >= 0)
        close(r->d.lock);
    r->d.lock = -1;
}

/* Read the owner record and the stored map, and decide; 0 go on, -1
 * nothing to do, or the exit status. */
static int start(rollout *r, const dch_map *target, char *text, owner_rec *rec, int *is_rec,
                 dch_map **stored)
{
    int rc = dch_etcd_fetch_owner(r->c, r->o->key, text, DCH_ETCD_OWNER_MAX + 1, stored);
    if (rc == DCH_OK && *stored == NULL) {
        fprintf(stderr, "dchctl rollout: the key holds no map; publish the first map with "
                        "dchctl publish\n");
        return EXIT_RUNTIME;
    }
    if (rc != DCH_OK)
        return etcd_error(r->cmd, r->c, rc);
    *is_rec = text[0] != '\0' && owner_parse(text, rec) == 0;
    rc = check_owner(r, text, rec, *is_rec, *stored);
    return rc != 0 ? rc : check_stored(r, *stored, target, rec, *is_rec);
}

int run_rollout(const command *cmd, const etcd_opts *o)
{
    uint64_t k;
    if (o->max_slots == NULL || dch__number_parse(o->max_slots, 0, 1, UINT32_MAX, &k) != 0)
        return usage_error(cmd, "%s", "--max-slots K is required, 1 .. 4294967295");
    dch_map *target;
    int status = etcd_load_file(cmd, o->pos[0], &target);
    if (status != 0)
        return status;
    rollout r = {.cmd = cmd, .o = o, .d = {.lock = -1}, .wait_ms = deadline_ms(o),
                 .target_fp = dch_map_fingerprint(target)};
    dch_map *stored = NULL;
    if (dch_map_in_transition(target, NULL)) {
        fprintf(stderr, "dchctl rollout: %s is a step map; the target must be settled\n",
                input_name(o->pos[0]));
        status = EXIT_RUNTIME;
    }
    if (status == 0)
        status = connect_etcd(cmd, o, &r.c);
    char text[DCH_ETCD_OWNER_MAX + 1] = "";
    owner_rec rec;
    int is_rec = 0;
    if (status == 0)
        status = start(&r, target, text, &rec, &is_rec, &stored);
    if (status == 0)
        status = take_key(&r, text, &rec, is_rec);
    const int inherited = is_rec && r.d.lock >= 0 && strcmp(r.d.path, rec.folder) == 0;
    if (status == 0 && (status = check_unfinished(&r, stored, inherited)) != 0)
        give_back(&r, text);
    if (status == 0)
        status = resume(&r, stored, target, (uint32_t)k, inherited);
    if (status == 0) {
        status = rollout_steps(&r, stored, target, (uint32_t)k);
        stored = NULL; /* rollout_steps frees it */
    }
    /* A rollout that stops after its claim leaves its folder (unlocked) for
     * the resume, which reads from it how the last migrator ended; any
     * later rollout's sweep removes it otherwise. */
    if ((status > 0 || r.keep) && r.claimed && r.d.lock >= 0) {
        close(r.d.lock);
        r.d.lock = -1;
    }
    remove_workdir(&r.d);
    dch_map_free(stored);
    dch_etcd_free(r.c);
    dch_map_free(target);
    return status < 0 ? 0 : status;
}
