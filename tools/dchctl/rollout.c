/* SPDX-License-Identifier: MIT */
/*
 * dchctl rollout: moves a cluster from the map stored in etcd to a target map
 * in steps of at most K slots into and out of any member (map_stage.h). It
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
#include "workdir.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Run the migrator for the step from -> to, given as files and as the plan
 * `dchctl diff --json` prints; 0 when it exits with status 0. */
static int migrate(const etcd_opts *o, const workdir *d, const dch_map *from, const dch_map *to,
                   uint32_t step, uint32_t steps)
{
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
    /* The plan first, from the same dch, then the migrator. */
    const int plan_status = system("\"$DCH\" diff \"$DCH_FROM\" \"$DCH_TO\" --json >\"$DCH_PLAN\"");
    if (plan_status != 0) {
        fprintf(stderr, "dchctl rollout: cannot write the plan of step %" PRIu32 "\n", step);
        return -1;
    }
    const int status = system(o->exec);
    if (status == 0)
        return 0;
    if (status == -1)
        fprintf(stderr, "dchctl rollout: cannot run --exec (%s)\n", strerror(errno));
    else if (WIFEXITED(status))
        fprintf(stderr, "dchctl rollout: --exec exited with status %d at step %" PRIu32 "\n",
                WEXITSTATUS(status), step);
    else
        fprintf(stderr, "dchctl rollout: --exec ended by signal %d at step %" PRIu32 "\n",
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
static int remigrate(const command *cmd, const etcd_opts *o, dch_etcd *c, const workdir *d,
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
            fprintf(stderr, "dchctl rollout: warning: the map before epoch %" PRIu64
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

static int rollout_steps(const command *cmd, const etcd_opts *o, dch_etcd *c, const workdir *d,
                         dch_map *cur, const dch_map *target, uint32_t k)
{
    const uint64_t target_fp = dch_map_fingerprint(target);
    int status = 0;
    while (status == 0 &&
           (dch_map_in_transition(cur, NULL) || dch_map_fingerprint(cur) != target_fp)) {
        dch_map *next;
        int rc = dch_map_stage_next(&next, cur, target, k);
        if (rc != DCH_OK) {
            fprintf(stderr, "dchctl rollout: cannot stage from the stored epoch %" PRIu64
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
        print_map_line(stdout, next, 0);
        if (o->exec != NULL && migrate(o, d, cur, next, step, steps) != 0) {
            fprintf(stderr, "dchctl rollout: stopped; the cluster runs epoch %" PRIu64
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

int run_rollout(const command *cmd, const etcd_opts *o)
{
    uint64_t k;
    if (o->max_slots == NULL || parse_u64(o->max_slots, &k) != 0 || k == 0 || k > UINT32_MAX)
        return usage_error(cmd, "%s", "--max-slots K is required, 1 .. 4294967295");
    dch_map *target;
    int status = etcd_load_file(cmd, o->pos[0], &target);
    if (status != 0)
        return status;
    dch_etcd *c = NULL;
    dch_map *stored = NULL;
    workdir d = {.lock = -1};
    if (dch_map_in_transition(target, NULL)) {
        fprintf(stderr, "dchctl rollout: %s is a step map; the target must be settled\n",
                input_name(o->pos[0]));
        status = EXIT_RUNTIME;
    }
    if (status == 0)
        status = connect_etcd(cmd, o, &c);
    if (status == 0) {
        const int rc = dch_etcd_fetch(c, o->key, &stored, NULL);
        if (rc != DCH_OK) {
            status = etcd_error(cmd, c, rc);
            if (rc == DCH_ENOENT)
                fprintf(stderr, "dchctl rollout: publish the first map with dchctl publish\n");
        }
    }
    if (status == 0 && o->exec != NULL) {
        if (make_workdir(&d) != 0) {
            fprintf(stderr, "dchctl rollout: cannot make a temporary directory (%s)\n",
                    strerror(errno));
            status = EXIT_RUNTIME;
        } else {
            status = remigrate(cmd, o, c, &d, stored, dch_map_fingerprint(target));
        }
    }
    if (status == 0) {
        status = rollout_steps(cmd, o, c, &d, stored, target, (uint32_t)k);
        stored = NULL; /* rollout_steps frees it */
    }
    remove_workdir(&d);
    dch_map_free(stored);
    dch_etcd_free(c);
    dch_map_free(target);
    return status;
}
