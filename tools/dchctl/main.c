/* SPDX-License-Identifier: MIT */
/*
 * dchctl: keep a DCH partition map in a file, change it, inspect it, plan the
 * migration between two versions of it, and (with dch-etcd) share it
 * through etcd. This file holds the command table, the help and the
 * dispatch; each command lives with its concern (map_cmds.c, show.c,
 * plan.c, compare_ketama.c, etcd_cmds.c, rollout.c).
 *
 * Read commands take --json. Exit status: 0 success, 1 a runtime error (a
 * file that cannot be read or written, a damaged map, a name in use or
 * missing), 2 a usage error, 3 (etcd commands) a conflict.
 *
 * dchctl does not lock FILE: two changes run at once may lose one of them.
 * Serialise changes (one operator, or a lock held around each command).
 */
#include "cli.h"

#include <string.h>

static int cmd_help(const command *cmd, const args *a);

/* A map command: its options parsed by run_map_command, then fn. */
#define MAP(fn) run_map_command, {.map = fn}

static const command commands[] = {
    {"init",
     "FILE [--units U] [--slots S] [--replicas R] [--key HEX | --random-key] [--force] [--json]",
     "create an empty map",
     "  --units U       minimum arc units, a power of two from 1 to 16777216\n"
     "                  (default 1024)\n"
     "  --slots S       slots per unit, a power of two from 1 to 16777216 (default\n"
     "                  64); units * slots may be at most 16777216 (2^24)\n"
     "  --replicas R    copies of every slot, 1 .. 8 (default 1), each on another\n"
     "                  member and, with zones, in another zone\n"
     "  --key HEX       the SipHash key every client shares, 32 hex digits\n"
     "                  (default all zero)\n"
     "  --random-key    a key from /dev/urandom\n"
     "  --force         replace FILE if it exists (by default init refuses)\n"
     "  FILE '-' writes the map to standard output (never a terminal) and the\n"
     "  report to standard error\n",
     1, 1, OPT_UNITS | OPT_SLOTS | OPT_REPLICAS | OPT_KEY | OPT_RANDOM_KEY | OPT_FORCE | OPT_JSON,
     MAP(cmd_init)},
    {"add", "FILE NAME [--weight W] [--zone Z] [--out OUT] [--dry-run] [--force] [--ranges] [--json]",
     "add a member; prints the plan",
     "  --weight W      0 .. 4294967295 (default 1); 0 adds a member that owns\n"
     "                  nothing yet\n"
     "  --zone Z        the member's failure domain: copies of a slot go to\n"
     "                  distinct zones; 1 to 255 bytes, no control character\n"
     "                  (default: a zone of its own)\n"
     "  The total weight may be at most 4294967295, and a map holds at most\n"
     "  65535 members.\n",
     2, 2, OPT_WEIGHT | OPT_ZONE | OPT_OUT | OPT_DRY_RUN | OPT_FORCE | OPT_RANGES | OPT_JSON,
     MAP(cmd_add)},
    {"remove", "FILE NAME [--out OUT] [--dry-run] [--force] [--ranges] [--json]",
     "remove a member; prints the plan", "", 2, 2,
     OPT_OUT | OPT_DRY_RUN | OPT_FORCE | OPT_RANGES | OPT_JSON, MAP(cmd_remove)},
    {"weight", "FILE NAME W [--out OUT] [--dry-run] [--force] [--ranges] [--json]",
     "set a member's weight; prints the plan",
     "  W               0 .. 4294967295; 0 drains the member but keeps it. The\n"
     "                  total weight may be at most 4294967295\n",
     3, 3, OPT_OUT | OPT_DRY_RUN | OPT_FORCE | OPT_RANGES | OPT_JSON, MAP(cmd_weight)},
    {"drain", "FILE NAME [--primary] [--out OUT] [--dry-run] [--force] [--ranges] [--json]",
     "take a member out of service, keeping its slots; prints the plan",
     "  The member keeps its weight and its place in the base table; the map\n"
     "  routes as if it were gone (a full drain: its copies go where a removal\n"
     "  would put them) and undrain gives it back exactly what it had.\n"
     "  --primary       a primary drain: the member stays a copy of every slot it\n"
     "                  holds and is the primary of none; its primaries go to\n"
     "                  the other copies, so no data moves. With one copy a\n"
     "                  slot it acts as a full drain\n"
     "  With several members drained, the full drains apply first, in the order\n"
     "  drained, then the primary ones.\n"
     "  Draining a member again in the mode in force changes nothing; in the\n"
     "  other mode, the new mode replaces the old. Removing a drained member,\n"
     "  or changing its weight, ends its drain.\n",
     2, 2, OPT_PRIMARY | OPT_OUT | OPT_DRY_RUN | OPT_FORCE | OPT_RANGES | OPT_JSON,
     MAP(cmd_drain)},
    {"undrain", "FILE NAME [--out OUT] [--dry-run] [--force] [--ranges] [--json]",
     "give a drained member back its slots; prints the plan",
     "  Undraining the member drained last, with no change since, routes every\n"
     "  key as before its drain. With other members drained after it, their\n"
     "  slots may move too (the plan shows them). A member that is not drained\n"
     "  is left as it is (exit status 0).\n",
     2, 2, OPT_OUT | OPT_DRY_RUN | OPT_FORCE | OPT_RANGES | OPT_JSON, MAP(cmd_undrain)},
    {"balance",
     "FILE LOADS [--max-moves K] [--count-slack C] [--out OUT] [--dry-run] [--ranges] [--json] | "
     "FILE --clear [--out OUT] [--dry-run]",
     "move slots so that no member carries much more than its share of the load",
     "  LOADS holds one \"slot load\" line a slot, both decimal: '#' starts a\n"
     "  comment, blank lines are skipped, a slot not listed carries 0; '-' is\n"
     "  standard input. A slot given twice or not in the map, a field that is\n"
     "  no number, a load above 18446744073709551615, or loads that sum above\n"
     "  it are refused with the line's number (exit status 1), FILE untouched.\n"
     "  Balances the map (dch_map_balance_load): every member of positive\n"
     "  weight, not drained, ends within its bound min(T + Lmax, max(T, h) +\n"
     "  L2) (T its target, the total load times its share of the weight; h\n"
     "  its heaviest slot; Lmax and L2 the two heaviest slots of the map), by\n"
     "  load moves that the map keeps above its base table; writes FILE (or\n"
     "  OUT) atomically and prints the report (every field, and the members left\n"
     "  above their bounds and why), then the plan the moves imply.\n"
     "  --max-moves K   most copies moved (promotions are free), 0 .. 4294967295;\n"
     "                  0 (default): no limit\n"
     "  --count-slack C most slots a member may hold beyond its count share after\n"
     "                  a copy move to it, 0 .. 4294967295 (default: no limit)\n"
     "  --clear         drop every load move: the map routes as its base table\n"
     "                  and drains give (no LOADS)\n"
     "  --ranges        also list every hash range that moves\n"
     "  FILE and LOADS cannot both be '-'\n",
     1, 2, OPT_MAX_MOVES | OPT_COUNT_SLACK | OPT_CLEAR | OPT_OUT | OPT_DRY_RUN | OPT_RANGES | OPT_JSON,
     MAP(cmd_balance)},
    {"show", "FILE [LOADS] [--json]", "config, epoch, fingerprint, members and their balance",
     "  columns: share% of the slots, ideal% (weight / total weight), dev (slots\n"
     "  minus ideal slots), unit (fewest..most slots held in one unit), ideal/u\n"
     "  (ideal slots per unit); with replicas, slots are the member's primaries;\n"
     "  a map with replicas or zones also shows copies (every position) and\n"
     "  zone ('-': a zone of its own)\n"
     "  Slots and copies are those the map routes by. With members drained, a\n"
     "  drains line lists them in the order drained, each row ends with its\n"
     "  drain (1:full, 2:primary: order and mode; '-' for none), a drained\n"
     "  member's ideal is 0 and the others' ideals are of the weight of the\n"
     "  members not drained\n"
     "  With LOADS (a file of \"slot load\" lines, as balance reads; '-' for\n"
     "  standard input), a load line (total, heaviest slots, max/mean and the\n"
     "  floor no placement beats) and, for each member, its load (the slots\n"
     "  it is the primary of), target, bound and load/target; '-' for a member\n"
     "  that does not balance (weight 0 or drained)\n"
     "  FILE '-' reads the map from standard input\n",
     1, 2, OPT_JSON, MAP(cmd_show)},
    {"lookup", "FILE KEY... [--json] | FILE - [--json]", "the members that hold each key",
     "  each KEY is hashed as its bytes; text output is a line per KEY:\n"
     "  KEY<tab>NAME, '-' for no owner, and with replicas a further\n"
     "  <tab>NAME for every copy, primary first (cut -f2 is the primary);\n"
     "  control bytes of KEY shown as \\xNN; --json adds the hash, slot and\n"
     "  id, and with replicas \"copies\", every copy's name, primary first.\n"
     "  A KEY that starts with '-' goes after --\n"
     "  KEY '-', alone, reads the keys from standard input, one a line; the\n"
     "  \"\\n\" or \"\\r\\n\" that ends a line (a last line needs none) is not part\n"
     "  of the key, an empty line is the empty key, and every other byte, NUL\n"
     "  included, is the key's; the answers come in order, one a line (--json:\n"
     "  one element each)\n"
     "  FILE '-' reads the map from standard input (then the keys are arguments)\n",
     2, -1, OPT_JSON, MAP(cmd_lookup)},
    {"diff", "OLD NEW [--json]", "the migration plan from OLD to NEW",
     "  totals per (from -> to) pair as slots and percent of the map, then every\n"
     "  hash range that moves; members are matched by name; '-' is no owner.\n"
     "  Both maps need the same units, slots per unit and hash key. With\n"
     "  replicas, first the copies created and dropped (matched by name per\n"
     "  slot) and the data they move; the plan is the primaries', with\n"
     "  promotions (the new primary held a copy: no data moves) counted apart.\n"
     "  Maps are compared as they route keys, drains applied, so a drain or an\n"
     "  undrain is a change like any other.\n"
     "  OLD or NEW may be '-', standard input (not both)\n",
     2, 2, OPT_JSON, MAP(cmd_diff)},
    {"plan", "OLD NEW --max-slots K [--write-dir DIR] [--json]",
     "stage the change from OLD to NEW in bounded steps",
     "  each step moves at most K slots out of and K slots into any member, only\n"
     "  slots that the plan OLD -> NEW moves, each once; prints per step its\n"
     "  epoch, slots moved, slots out of and into each member, and fingerprint.\n"
     "  The last step is NEW. NEW must be derived from OLD: the same units, slots\n"
     "  per unit and hash key, and a later epoch.\n"
     "  --max-slots K   1 .. 4294967295\n"
     "  --write-dir DIR write the steps to DIR/step-0001.dchmap, ..., all or none:\n"
     "                  into a folder beside DIR, renamed to DIR once every step\n"
     "                  is written; DIR must be missing or empty. The steps are\n"
     "                  in place before the report is printed, so a reader that\n"
     "                  goes away (| head) stops only the report (exit status 1)\n"
     "  OLD or NEW may be '-', standard input (not both)\n",
     2, 2, OPT_MAX_SLOTS | OPT_WRITE_DIR | OPT_JSON, MAP(cmd_plan)},
    {"verify", "FILE [--json]", "check a map file completely",
     "  exit status 0 when FILE is an intact map, 1 otherwise\n"
     "  FILE '-' reads the map from standard input\n",
     1, 1, OPT_JSON, MAP(cmd_verify)},
    {"fingerprint", "FILE [--json]", "print the routing fingerprint (16 hex digits)",
     "  equal fingerprints: the two maps route every key alike\n"
     "  FILE '-' reads the map from standard input\n",
     1, 1, OPT_JSON, MAP(cmd_fingerprint)},
    {"compare-ketama", "SERVERS.txt [HOST:PORT]",
     "a libmemcached ketama fleet beside a DCH map of the same servers",
     "  SERVERS.txt holds one \"host:port weight\" line per server (# starts a\n"
     "  comment; no port is 11211, no weight or 0 is 1, as in libmemcached).\n"
     "  Builds the ring libmemcached 1.1 builds (weighted ketama, MD5) and a\n"
     "  DCH map of the same servers, and prints each server's share of the keys\n"
     "  under both, then what each moves, and between whom, when HOST:PORT\n"
     "  (default: the last server listed) joins the others and when it leaves.\n"
     "  SERVERS.txt '-' reads the list from standard input.\n",
     1, 2, 0, MAP(cmd_compare_ketama)},
    {"help", "[COMMAND]", "this help, or a command's", "", 0, 1, 0, MAP(cmd_help)},
};

#define NCOMMANDS (sizeof commands / sizeof commands[0])

static const command *find_command(const char *name)
{
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
#ifdef DCH_TOOL_ETCD
    for (size_t i = 0; i < etcd_command_count; i++)
        if (strcmp(etcd_commands[i].name, name) == 0)
            return &etcd_commands[i];
#endif
    return NULL;
}

/* "; did you mean add?" for a mistyped command, or "". */
static const char *command_hint(const char *typed, char *buf, size_t size)
{
    suggestions sg;
    suggest_start(&sg, typed);
    for (size_t i = 0; i < NCOMMANDS; i++)
        suggest_consider(&sg, commands[i].name);
#ifdef DCH_TOOL_ETCD
    for (size_t i = 0; i < etcd_command_count; i++)
        suggest_consider(&sg, etcd_commands[i].name);
#endif
    return suggest_text(&sg, "", buf, size);
}

static void list_commands(FILE *f, const command *c, size_t n)
{
    for (size_t i = 0; i < n; i++)
        fprintf(f, "  %-15s %s\n", c[i].name, c[i].summary);
}

static void general_help(FILE *f)
{
    fprintf(f, "usage: dchctl COMMAND [ARGS]\n\n"
               "Keep a DCH partition map in a file. Changes write FILE atomically and\n"
               "print the migration plan they imply. Exit status: 0 ok, 1 error, 2 usage.\n"
               "Arguments after -- are never options (for a NAME or KEY that starts with\n"
               "'-'). Names hold 1 to 255 bytes and no control character. Numbers are\n"
               "decimal digits only (no sign, fraction, exponent or space). A FILE '-'\n"
               "before -- is standard input, or standard output for a map written (the\n"
               "report then goes to standard error); a file called '-' is ./-.\n\n"
               "commands:\n");
    list_commands(f, commands, NCOMMANDS);
#ifdef DCH_TOOL_ETCD
    list_commands(f, etcd_commands, etcd_command_count);
#endif
    fprintf(f, "\n'dchctl help COMMAND' or 'dchctl COMMAND --help' describes one; 'dchctl --version'.\n");
}

static void command_help(const command *c)
{
    printf("usage: dchctl %s %s\n\n%s.\n", c->name, c->usage, c->summary);
    if ((c->options & OPT_DRY_RUN) && !(c->options & OPT_FORCE))
        printf("  --dry-run       print what the command would write, write nothing\n");
    if ((c->options & OPT_DRY_RUN) && (c->options & OPT_FORCE))
        printf("Writes FILE atomically and prints the plan: totals per (from -> to) pair.\n"
               "  --dry-run       print the plan, write nothing (never needs --force)\n"
               "  --force         make a change that moves more than half of the map's\n"
               "                  data: of its slots (with replicas, of the copies it\n"
               "                  holds) more than half copied to another member.\n"
               "                  Without --force such a change is refused with exit\n"
               "                  status 1 and FILE stays as it was. A map with fewer\n"
               "                  than 2 members of positive weight needs no --force\n"
               "                  (its first members take every slot, or most)\n"
               "  --ranges        also list every hash range that moves\n"
               "  With replicas, also prints the copies created and dropped and the\n"
               "  data they move; the plan lists the primaries' moves, with the\n"
               "  promotions (the new primary held a copy: no data moves) apart.\n");
    if (c->options & OPT_OUT)
        printf("  --out OUT       write the map to OUT, atomically, and leave FILE as it\n"
               "                  was; OUT '-' is standard output (never a terminal)\n"
               "  FILE '-' reads the map from standard input and, without --out, writes\n"
               "  the new one to standard output. When the map goes to standard output,\n"
               "  the plan goes to standard error.\n");
    if (c->options & OPT_JSON)
        printf("  --json          machine-readable output\n");
    fputs(c->help, stdout);
}

static int cmd_help(const command *cmd, const args *a)
{
    if (a->npos == 0) {
        general_help(stdout);
        return 0;
    }
    const command *c = find_command(a->pos[0]);
    char hint[160];
    if (c == NULL)
        return usage_fail(cmd, "no command %s%s", a->pos[0],
                          command_hint(a->pos[0], hint, sizeof hint));
    command_help(c);
    return 0;
}

static int is_help(const char *s)
{
    return strcmp(s, "--help") == 0 || strcmp(s, "-h") == 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        general_help(stderr);
        return EXIT_USAGE;
    }
    const char *name = argv[1];
    if (is_help(name)) {
        general_help(stdout);
        return 0;
    }
    if (strcmp(name, "--version") == 0) {
        printf("dchctl %s\n", dch_version());
        return 0;
    }
    const command *c = find_command(name);
    if (c == NULL) {
        /* One line and a pointer, not the whole help: the nearest command
         * is what a typo needs. */
        char hint[160];
        fprintf(stderr,
                "dchctl: no command %s%s\n"
                "usage: dchctl COMMAND [ARGS] ('dchctl help' lists the commands)\n",
                name, command_hint(name, hint, sizeof hint));
        return EXIT_USAGE;
    }
    for (int i = 2; i < argc && strcmp(argv[i], "--") != 0; i++) {
        if (is_help(argv[i])) {
            command_help(c);
            return 0;
        }
    }
    return c->main(c, argc - 2, argv + 2);
}
