/* SPDX-License-Identifier: MIT */
/*
 * What the tool's etcd commands share (etcd_cmds.c, rollout.c): their
 * options, the client made from them, and how they report.
 */
#ifndef DCH_TOOL_ETCD_CMDS_H
#define DCH_TOOL_ETCD_CMDS_H

#include "cli.h"

#include "dch/etcd.h"

/* etcd: a write was sent and no answer came back; it may or may not be
 * applied (DCH_EUNKNOWN). 3 is EXIT_CONFLICT (cli.h). */
#define EXIT_UNKNOWN 4

/* The options every etcd command may take; a command checks which it needs. */
typedef struct etcd_opts {
    const char *etcd, *key, *expect, *after, *count, *timeout, *max_slots, *exec, *write;
    const char *deadline;
    int json, force, take_over;
    const char *pos[2];
    int npos;
} etcd_opts;

/* The client for --etcd, with --deadline (or its old name --timeout; ms)
 * as each request's deadline, retries included; 0 or the exit status of a
 * refusal. */
int connect_etcd(const command *cmd, const etcd_opts *o, dch_etcd **c);
/* The deadline --deadline gives (ms), DEFAULT_DEADLINE_MS when absent;
 * 0 when malformed. */
uint64_t deadline_ms(const etcd_opts *o);
#define DEFAULT_DEADLINE_MS 20000u
/* Report a failed call of c; EXIT_CONFLICT for DCH_ECONFLICT, EXIT_UNKNOWN
 * for DCH_EUNKNOWN, else EXIT_RUNTIME. */
int etcd_error(const command *cmd, dch_etcd *c, int rc);
/* After DCH_EUNKNOWN: read the key again with a fresh client (a short
 * deadline of its own) and print what is stored. 1 when it is `mine` byte
 * for byte (the write applied), 0 when it is not or cannot be read. */
int read_back(const command *cmd, const etcd_opts *o, const dch_map *mine);
/* 1 when a and b have the same bytes (what etcd would store), else 0. */
int same_map(const dch_map *a, const dch_map *b);

/*
 * The owner record of a rollout (dch_etcd_set_owner), one line:
 *   rollout token=T target=FP state=running|done host=H boot=B pid=P
 *   start=S user=U at=TIME folder=PATH
 * token is random, target the fingerprint of NEW, start the process's start
 * time (so a reused pid is not taken for it), boot the kernel's boot id,
 * folder the step folder (last, as a path may hold spaces).
 */
typedef struct owner_rec {
    char token[17];
    uint64_t target;
    int done;
    char host[256], boot[40], user[64], at[32];
    long pid;
    unsigned long long start;
    char folder[4096];
} owner_rec;

/* 0 when text is a rollout's record, -1 otherwise. */
int owner_parse(const char *text, owner_rec *r);
/* The record as text (cap >= DCH_ETCD_OWNER_MAX + 1); -1 when too long. */
int owner_format(const owner_rec *r, char *buf, size_t cap);
/* This process's record for a rollout to `target` (state running). */
void owner_self(owner_rec *r, uint64_t target, const char *folder);
/* 1 when r's process runs (this host, same boot, same start time), 0 when
 * it does not, -1 when nobody here can tell (another host). */
int owner_alive(const owner_rec *r);
/* "rollout T (pid P on H, by U, started AT)" on f. */
void owner_describe(FILE *f, const owner_rec *r);
/* Load a map file; 0, or EXIT_RUNTIME after saying why not. */
int etcd_load_file(const command *cmd, const char *path, dch_map **m);
/* "epoch E fingerprint F" or its JSON, plus the step record of a step map,
 * on f, flushed. */
void print_map_line(FILE *f, const dch_map *m, int json);

/* dchctl rollout (rollout.c). */
int run_rollout(const command *cmd, const etcd_opts *o);

#endif /* DCH_TOOL_ETCD_CMDS_H */
