/* SPDX-License-Identifier: MIT */
/*
 * What the files of the dchctl tool share: exit statuses, the command table's
 * entry, the options of the map commands and their parser, output helpers
 * (JSON strings, hex), map file loading and saving (standard input and
 * output included), and migration plans. The tool uses only the public API
 * of libdch, as any consumer would.
 */
#ifndef DCH_TOOL_CLI_H
#define DCH_TOOL_CLI_H

#include "dch/dch.h"

#include <stdint.h>
#include <stdio.h>

#define EXIT_RUNTIME 1
#define EXIT_USAGE 2
#define EXIT_CONFLICT 3 /* etcd: another operator moved the stored epoch */

/* ---- Commands and options (options.c) ---------------------------------- */

/* The options of the map commands; an entry of the command table lists the
 * ones it takes. OPT_JSON and OPT_DRY_RUN also add lines to its help. */
enum {
    OPT_JSON = 1 << 0,
    OPT_UNITS = 1 << 1,
    OPT_SLOTS = 1 << 2,
    OPT_KEY = 1 << 3,
    OPT_RANDOM_KEY = 1 << 4,
    OPT_FORCE = 1 << 5,
    OPT_WEIGHT = 1 << 6,
    OPT_RANGES = 1 << 7,
    OPT_DRY_RUN = 1 << 8,
    OPT_MAX_SLOTS = 1 << 9,
    OPT_WRITE_DIR = 1 << 10,
    OPT_REPLICAS = 1 << 11,
    OPT_ZONE = 1 << 12,
    OPT_OUT = 1 << 13,
    OPT_PRIMARY = 1 << 14,
    OPT_MAX_MOVES = 1 << 15,
    OPT_COUNT_SLACK = 1 << 16,
    OPT_CLEAR = 1 << 17,
};

#define MAX_ARGS 4096

/* A map command's arguments, split by parse_args. */
typedef struct args {
    int given; /* OPT_* flags present */
    const char *value[24]; /* value of each option that takes one, by bit */
    const char *pos[MAX_ARGS];
    int npos;
} args;

typedef struct command command;
struct etcd_opts;

/*
 * One command of the tool. `main` gets the arguments after the command's
 * name (its own --help is answered before); map commands share
 * run_map_command, which parses them by `options`, `min_pos` and `max_pos`
 * and calls run.map; the etcd commands parse their own (etcd_cmds.c).
 */
struct command {
    const char *name;
    const char *usage; /* arguments after the command name */
    const char *summary;
    const char *help; /* details, one option or remark a line */
    int min_pos, max_pos; /* positional arguments; max -1 means any */
    int options; /* OPT_* accepted */
    int (*main)(const command *cmd, int argc, char **argv);
    union {
        int (*map)(const command *cmd, const args *a);
        int (*etcd)(const command *cmd, const struct etcd_opts *o);
    } run;
};

/* How a command reads the option at argv[*i] (which may take argv[*i + 1]
 * as its value and move *i on): 0, or the exit status that stops the parse. */
typedef int (*option_reader)(const command *cmd, void *ctx, int argc, char **argv, int *i);

/* The tool's rule for every command: before --, an argument that starts
 * with '-' is an option (read by `option`), but for '-' alone, which is
 * standard input or output and goes to pos as stdio_arg; after --, nothing
 * is an option and '-' is a name like any other. The positional arguments
 * go to pos (room for `room`), their count to *npos and is checked against
 * cmd's min_pos and max_pos; at most one may be stdio_arg, as standard
 * input can be read only once. 0 or EXIT_USAGE. */
int read_args(const command *cmd, int argc, char **argv, option_reader option, void *ctx,
              const char **pos, int room, int *npos);

/* Print "dchctl CMD: <fmt with what>" and the command's usage; EXIT_USAGE. */
int usage_error(const command *cmd, const char *fmt, const char *what);
/* The same with any printf arguments. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 2, 3)))
#endif
int usage_fail(const command *cmd, const char *fmt, ...);

/* Parse argv as cmd's options and positional arguments, run cmd->run.map,
 * and report a failed write of stdout; returns the exit status. */
int run_map_command(const command *cmd, int argc, char **argv);

const char *opt_value(const args *a, int flag);

/* The "-" that read_args puts in pos for a '-' met before --. A caller
 * tells it from a name "-" given after -- by its address (is_stdio). */
extern const char stdio_arg[];
/* Whether arg is stdio_arg, standard input or output. */
int is_stdio(const char *arg);
/* A number the tool reads: its name in messages ("weight", "units"), its
 * range, and whether it must also be a power of two. */
typedef struct number_rule {
    const char *name;
    uint64_t min, max;
    int power_of_two;
} number_rule;

/* s as a number of the rule: the whole string, decimal digits only (no
 * sign, fraction, exponent or space, not empty), in range; 0 and *out, or
 * -1 with *out unchanged. Every number the tool reads goes through here. */
int parse_number(const char *s, const number_rule *rule, uint64_t *out);
/* Why s was refused, into buf: `weight must be a whole number from 0 to
 * 4294967295, not "x"`, or `units must be a power of two from 1 to
 * 16777216, not "3"` (control bytes of s as \xNN). Returns buf. */
const char *number_refusal(char *buf, size_t n, const number_rule *rule, const char *s);
/* parse_number, or a usage error of cmd giving number_refusal's words:
 * 0 or EXIT_USAGE. */
int number_arg(const command *cmd, const char *s, const number_rule *rule, uint64_t *out);
/* Whether s is a valid member or zone name (`what`: "name" or "zone"): 1 ..
 * DCH_NAME_MAX bytes, no control byte (the library's rule, checked before
 * any file is read). 0, or EXIT_USAGE after saying which rule s broke. */
int check_name(const command *cmd, const char *what, const char *s);

/* The names nearest to a mistyped one, for "did you mean ...?". */
typedef struct suggestions {
    const char *typed;
    const char *name[4];
    size_t n;
    unsigned best; /* edits of the names kept; 3 while there is none */
} suggestions;
void suggest_start(suggestions *sg, const char *typed);
/* Keep name if it is among the nearest so far: at most 2 edits away, or
 * begun by what was typed (2 bytes or more). */
void suggest_consider(suggestions *sg, const char *name);
/* "; did you mean <prefix>a or <prefix>b?", or "" when none is near; buf. */
const char *suggest_text(const suggestions *sg, const char *prefix, char *buf, size_t size);

/* ---- Output (output.c) ------------------------------------------------- */

void print_hex(FILE *f, const uint8_t *b, size_t n);
/* A JSON string; bytes that are not valid UTF-8 are written as \u00XX
 * (Latin-1), so the output is always valid JSON. NULL is null. */
void json_string(FILE *f, const char *s);
/* json_string of the n bytes at s, which may hold NUL. */
void json_bytes(FILE *f, const char *s, size_t n);
/* Text for line-oriented output: control bytes as \xNN. */
void text_string(FILE *f, const char *s);
/* text_string of the n bytes at s, which may hold NUL. */
void text_bytes(FILE *f, const char *s, size_t n);
const char *or_dash(const char *s);
/* "dchctl: out of memory" on stderr; EXIT_RUNTIME. */
int out_of_memory(void);
/* v, or v moved, with room for element n (elements of `size` bytes; *cap,
 * first `first`, doubles as needed); NULL when out of memory, and then v
 * and *cap are unchanged. */
void *grow(void *v, size_t n, size_t *cap, size_t size, size_t first);
/* "dchctl: NAME: cannot write (cause)" for a failed write (err: errno),
 * but nothing for EPIPE; EXIT_RUNTIME. */
int write_error(const char *name, int err);
/* From now on a write to a closed pipe fails with EPIPE, reported like any
 * failed write, instead of killing the tool (see output.c). */
void ignore_sigpipe(void);

/* ---- Map files (map_cmds.c) -------------------------------------------- */

/* Why a file call failed: errno's reason for DCH_EIO, else the library's. */
const char *file_error_cause(int rc, int err);
/* "dchctl: PATH: cause" on stderr (PATH as input_name); EXIT_RUNTIME. */
int report_file_error(const char *path, int rc, int err);
/* How messages name a map argument: "standard input" or "standard output"
 * for stdio_arg, else the path itself. */
const char *input_name(const char *path);
const char *output_name(const char *path);
/* dch_map_load_file(m, path), or for stdio_arg all of standard input read
 * into memory and given to dch_map_load: DCH_OK or the library's code, with
 * errno set for DCH_EIO. */
int load_map(dch_map **m, const char *path);
/* Load PATH (stdio_arg: standard input); 0, or EXIT_RUNTIME after
 * reporting why not. */
int load(const char *path, dch_map **m);
/* Save m to PATH atomically (dch_map_save_file), or for stdio_arg write its
 * bytes to standard output; 0, or EXIT_RUNTIME after reporting why not. */
int save(const char *path, const dch_map *m);
/* Where a change's map goes: --out's file ('-': standard output), else
 * back to FILE (FILE '-': standard output). */
const char *destination(const args *a);
/* The rule of a member's weight: 0 .. 4294967295. */
extern const number_rule weight_rule;
/* `dchctl add node-x MAP`: when FILE (the first argument) does not exist and
 * a later one is a file or ends in .dchmap, a usage error that shows the
 * order; else 0. */
int check_map_first(const command *cmd, const args *a);
/* The map's copies per slot (its config's replicas, 0 read as 1). */
uint32_t map_replicas(const dch_map *m);
/* Whether some member of m has a zone. */
int map_has_zones(const dch_map *m);
/* A drain mode as a word: "full", "primary", or NULL for 0 (not drained). */
const char *drain_mode_name(uint32_t mode);

/* ---- Plans (plan.c) ---------------------------------------------------- */

typedef struct transfer {
    const char *from, *to;
    uint64_t lo, hi;
    uint64_t slots;
    uint64_t promoted; /* of slots, those whose new primary held a copy: no data moves */
} transfer;

/* The ranges whose primary changes between two maps, in hash order. */
typedef struct plan {
    transfer *moves;
    size_t n, cap;
    unsigned bits; /* log2 P */
    uint32_t P;
    int failed; /* out of memory */
    const dch_map *from; /* the old map, where promotions are looked up */
    uint32_t from_replicas;
} plan;

/* What a change does to the data, from dch_map_diff_copies: every copy a
 * member gains and loses. `copied` counts the copies created from a source
 * (data that travels; a copy created in a map that held nothing has none),
 * `held` the copies the old map holds (all of its data). */
typedef struct copy_counts {
    uint64_t created, dropped, copied, held;
} copy_counts;

/* The plan from -> to (p->moves freed by the caller, also on failure);
 * 0 or EXIT_RUNTIME after reporting why not. */
int make_plan(const dch_map *from, const dch_map *to, plan *p);
/* The copies (all positions) created, dropped and copied from -> to,
 * matched per slot by member name (dch_map_diff_copies); both maps have
 * one shape. */
void copy_changes(const dch_map *from, const dch_map *to, copy_counts *c);
/* The copies line of a change or a diff with replicas: as text, "copies: C
 * created, D dropped ...: data moves for X of Y copies (Z% of the map's
 * data)"; as JSON, members (copies_created, copies_dropped, copies_moved,
 * copies_held, data_fraction) followed by ",\n  ". */
void print_copies(FILE *f, const copy_counts *c, uint32_t replicas, int json);
/* Print the plan to f: as text (totals per pair, and with `ranges` every
 * range) or as JSON members of an object the caller opened. With replicas
 * the slots that change primary are told apart: promotions (the new
 * primary held a copy: no data moves) and the rest. 0 or EXIT_RUNTIME. */
int print_plan(FILE *f, const plan *p, int json, int ranges);

/* ---- Slot loads (balance.c) -------------------------------------------- */

/* The LOADS file at path (stdio_arg: standard input) for a map of P slots:
 * one "slot load" line a slot, decimal, '#' to the end of a line a comment,
 * blank lines skipped, a slot not listed 0. A slot given twice or not below
 * P, a field that is no number, a load past UINT64_MAX or loads that sum
 * past it are refused with the line's number. 0 with *loads (P of them,
 * freed by the caller) and *total, or EXIT_RUNTIME after saying why. */
int read_loads(const char *path, uint32_t P, uint64_t **loads, uint64_t *total);

/* One member's load under a load vector (balance.h's terms): load C_i (the
 * slots it is the primary of), hottest h_i, and for a member that balances
 * (positive weight, not drained) target T_i and bound B_i. */
typedef struct member_load {
    uint64_t load, hottest;
    double target, bound;
    int balances;
} member_load;

/* The map's loads as a whole: total, Lmax (at its lowest slot), L2, the
 * members that balance, max C_i / T_i, and the floor no placement beats,
 * max(1, Lmax / max T_i). */
typedef struct load_summary {
    uint64_t total, heaviest, second;
    uint32_t heaviest_slot, members;
    double max_ratio, floor;
} load_summary;

/* ml[id] for every id below the id limit, and the summary; 0. */
int member_loads(const dch_map *m, const uint64_t *load, member_load *ml, load_summary *sum);

/* ---- Command entry points ---------------------------------------------- */

int cmd_init(const command *cmd, const args *a);
int cmd_add(const command *cmd, const args *a);
int cmd_remove(const command *cmd, const args *a);
int cmd_weight(const command *cmd, const args *a);
int cmd_drain(const command *cmd, const args *a);
int cmd_undrain(const command *cmd, const args *a);
int cmd_show(const command *cmd, const args *a);
int cmd_lookup(const command *cmd, const args *a);
int cmd_verify(const command *cmd, const args *a);
int cmd_fingerprint(const command *cmd, const args *a);
int cmd_diff(const command *cmd, const args *a);
int cmd_plan(const command *cmd, const args *a);
int cmd_compare_ketama(const command *cmd, const args *a);
int cmd_balance(const command *cmd, const args *a);

#ifdef DCH_TOOL_ETCD
/* publish, fetch, watch and rollout (etcd_cmds.c). */
extern const command etcd_commands[];
extern const size_t etcd_command_count;
#endif

#endif /* DCH_TOOL_CLI_H */
