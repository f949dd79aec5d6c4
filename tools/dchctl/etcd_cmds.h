/* SPDX-License-Identifier: MIT */
/*
 * What the tool's etcd commands share (etcd_cmds.c, rollout.c): their
 * options, the client made from them, and how they report.
 */
#ifndef DCH_TOOL_ETCD_CMDS_H
#define DCH_TOOL_ETCD_CMDS_H

#include "cli.h"

#include "dch/etcd.h"

/* The options every etcd command may take; a command checks which it needs. */
typedef struct etcd_opts {
    const char *etcd, *key, *expect, *after, *count, *timeout, *max_slots, *exec, *write;
    int json;
    const char *pos[2];
    int npos;
} etcd_opts;

/* Decimal u64 with no sign; 0 or -1 (also for NULL). */
int parse_u64(const char *s, uint64_t *out);
/* The client for --etcd, with --timeout (ms) as its request timeout; 0 or
 * the exit status of a refusal. */
int connect_etcd(const command *cmd, const etcd_opts *o, dch_etcd **c);
/* Report a failed call of c; EXIT_CONFLICT for DCH_ECONFLICT, else
 * EXIT_RUNTIME. */
int etcd_error(const command *cmd, dch_etcd *c, int rc);
/* Load a map file; 0, or EXIT_RUNTIME after saying why not. */
int etcd_load_file(const command *cmd, const char *path, dch_map **m);
/* "epoch E fingerprint F" or its JSON, plus the step record of a step map,
 * on f, flushed. */
void print_map_line(FILE *f, const dch_map *m, int json);

/* dchctl rollout (rollout.c). */
int run_rollout(const command *cmd, const etcd_opts *o);

#endif /* DCH_TOOL_ETCD_CMDS_H */
