/*
 * The dch tool's etcd commands (publish, fetch, watch, rollout), built into
 * the tool only when dch-etcd is: dch.c asks here for a command it does not
 * know, for the general help and for a command's help.
 */
#ifndef DCH_TOOL_ETCD_CMDS_H
#define DCH_TOOL_ETCD_CMDS_H

#include <stdio.h>

/* Whether `name` is one of the etcd commands. */
int etcd_cmd_exists(const char *name);

/* Run the command argv[0] with its arguments argv[1 .. argc-1]; returns the
 * exit status (0 ok, 1 error, 2 usage, 3 conflict: another operator moved
 * the stored epoch). */
int etcd_cmd_main(int argc, char **argv);

/* One line per command for the general help. */
void etcd_cmd_list(FILE *f);

/* The detailed help of one command; 0 when `name` is not one. */
int etcd_cmd_help(const char *name);

#endif /* DCH_TOOL_ETCD_CMDS_H */
