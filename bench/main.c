/* SPDX-License-Identifier: MIT */
/*
 * dch-bench: what libdch's lookups, changes, hashing and memory cost, each
 * measured against a peer in the same process and the same run, so that the
 * ratios hold on a shared, noisy machine where absolute times do not.
 *
 * This file reads the options, describes the machine, runs the sections in
 * their order and writes the report; bench.h states the method, and each
 * section lives in a file of its own. It uses only the public libdch API,
 * plus libsodium as the reference SipHash-2-4.
 */
#include "args.h"
#include "bench.h"
#include "outfile.h"

#include <sodium.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PROG "dch-bench"

/* Where the JSON goes without --json: beside the analysis's report, in a
 * folder git ignores (the old default, bench.json in the current folder,
 * left a stray copy at the top of the tree once). The folder is made when
 * missing; a folder named with --json must exist. */
#define DEFAULT_JSON_DIR "report"
#define DEFAULT_JSON DEFAULT_JSON_DIR "/bench.json"

#ifndef DCH_BENCH_BUILD_TYPE
#define DCH_BENCH_BUILD_TYPE "unknown"
#endif

#if defined(__clang__)
#define BENCH_COMPILER "clang " __clang_version__
#elif defined(__GNUC__)
#define BENCH_COMPILER "gcc " __VERSION__
#else
#define BENCH_COMPILER "unknown"
#endif

/* ---- Machine and options ---------------------------------------------- */

/* The first "model name" of /proc/cpuinfo, or "unknown". */
static void cpu_model(char *buf, size_t cap)
{
    snprintf(buf, cap, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f == NULL)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) != 0)
            continue;
        const char *v = strchr(line, ':');
        if (v == NULL)
            continue;
        v++;
        while (*v == ' ' || *v == '\t')
            v++;
        snprintf(buf, cap, "%s", v);
        buf[strcspn(buf, "\n")] = '\0';
        break;
    }
    fclose(f);
}

/* The 1-minute load average, or -1. */
static double load_average(void)
{
    double l = -1;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f != NULL) {
        if (fscanf(f, "%lf", &l) != 1)
            l = -1;
        fclose(f);
    }
    return l;
}

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: dch-bench [options]\n"
            "\n"
            "Measures libdch against peers within one run and prints every ratio\n"
            "with its target: lookups on precomputed hashes (DCH map, bare-array\n"
            "floor, ring, branchy binary search, Jump consistent hash) at N = 10 ..\n"
            "10,000 members and over P = 2^12 .. 2^22 slots; dch_map_lookup on keys;\n"
            "SipHash-2-4 against libsodium; add_node, remove_node and clone; memory;\n"
            "add_node and remove_node on a freshly cloned map (the publish pattern)\n"
            "against the floor of cloning it and counting its owners once, at N = 100\n"
            "to 10,000 and over P = 2^14 .. 2^22 (1,000 members, or --max-nodes);\n"
            "every copy of a hash (dch_map_lookup_replicas_hash, 3 copies) against\n"
            "its primary alone on the same map; dch_load_hit against incrementing\n"
            "a bare array; one dch_map_balance_load against one clone of the map.\n"
            "\n"
            "Options (default in brackets):\n"
            "  --lookups N    calls per trial, fewer if a trial would pass --trial-ms\n"
            "                 [10000000]\n"
            "  --trials N     trials per measurement, 1 .. %u [7]\n"
            "  --trial-ms N   longest trial of one contender, in ms [100]\n"
            "  --max-nodes N  grow to the checkpoints 10, 100, 1000, 10000 up to N\n"
            "                 [10000]\n"
            "  --only LIST    comma-separated sections: hash, lookup, change, memory,\n"
            "                 sweep, publish, replicas, worst, replica-cost, load,\n"
            "                 balance [all]\n"
            "  --cpu N        pin the process to CPU N [not pinned]\n"
            "  --seed N       seed of the hashes and keys [1]\n"
            "  --json PATH    write the results as JSON [" DEFAULT_JSON "]\n"
            "  --quick        a smoke run: 3 trials, N up to 100, P up to 2^14 (2^16\n"
            "                 for the publish section)\n"
            "  --help         print this help and exit\n"
            "\n"
            "Exit status: 0 when the run completed (targets may be missed), 1 if a\n"
            "measurement failed or a peer disagreed with libdch, 2 on bad usage\n"
            "(an unknown option, a value out of range, a --json path that cannot\n"
            "be written).\n",
            (unsigned)BENCH_MAX_TRIALS);
}

static int parse_sections(const char *s, unsigned *out)
{
    static const struct {
        const char *name;
        unsigned bit;
    } names[] = {{"hash", SEC_HASH},     {"lookup", SEC_LOOKUP},
                 {"change", SEC_CHANGE}, {"memory", SEC_MEMORY},
                 {"sweep", SEC_SWEEP},   {"publish", SEC_PUBLISH},
                 {"replicas", SEC_REPLICAS}, {"worst", SEC_WORST},
                 {"replica-cost", SEC_REPLICA_COST}, {"load", SEC_LOAD},
                 {"balance", SEC_BALANCE}};
    unsigned bits = 0;
    while (*s) {
        const size_t len = strcspn(s, ",");
        bool known = false;
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
            if (strlen(names[i].name) == len && strncmp(s, names[i].name, len) == 0) {
                bits |= names[i].bit;
                known = true;
            }
        if (!known) {
            fprintf(stderr, "dch-bench: --only: unknown section '%.*s'\n", (int)len, s);
            return -1;
        }
        s += len + (s[len] == ',');
    }
    if (bits == 0) {
        fprintf(stderr, "dch-bench: --only needs at least one section\n");
        return -1;
    }
    *out = bits;
    return 0;
}

/* The numeric options, their ranges, and their defaults. */
enum { OPT_LOOKUPS, OPT_TRIALS, OPT_TRIAL_MS, OPT_MAX_NODES, OPT_CPU, OPT_SEED, NOPTS };
static const struct num_option {
    const char *name;
    unsigned long long lo, hi, dflt;
} num_options[NOPTS] = {
    [OPT_LOOKUPS] = {"--lookups", 1, UINT64_C(1) << 40, 10000000},
    [OPT_TRIALS] = {"--trials", 1, BENCH_MAX_TRIALS, 7},
    [OPT_TRIAL_MS] = {"--trial-ms", 1, 60000, 100},
    [OPT_MAX_NODES] = {"--max-nodes", 10, 10000, 10000},
    [OPT_CPU] = {"--cpu", 0, CPU_SETSIZE - 1, 0},
    [OPT_SEED] = {"--seed", 0, ULLONG_MAX, 1},
};

/* The string options: --json (a path) and --only (a list of sections). */
static int string_option(const char *name, const char *value, options *o)
{
    if (strcmp(name, "--json") == 0) {
        if (value[0] == '\0') {
            fprintf(stderr, "dch-bench: --json needs a path\n");
            return -1;
        }
        o->json = value;
        return 0;
    }
    if (strcmp(name, "--only") == 0)
        return parse_sections(value, &o->sections);
    fprintf(stderr, "dch-bench: unknown option '%s' (try --help)\n", name);
    return -1;
}

/* @return 0 to run, 1 after --help, -1 on bad usage. */
static int parse_args(int argc, char **argv, options *o)
{
    unsigned long long v[NOPTS];
    bool given[NOPTS] = {false};
    for (size_t k = 0; k < NOPTS; k++)
        v[k] = num_options[k].dflt;
    *o = (options){0, 0, 0, DEFAULT_JSON, false, 0, -1, 0, SEC_ALL};
    static const char *const flags[] = {"--quick", NULL};
    for (int i = 1; i < argc;) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 1;
        }
        an_arg a;
        if (an_arg_next(PROG, argc, argv, &i, flags, &a) != 0)
            return -1;
        if (a.value == NULL) { /* --quick */
            o->quick = true;
            continue;
        }
        size_t k = 0;
        while (k < NOPTS && strcmp(a.name, num_options[k].name) != 0)
            k++;
        if (k == NOPTS) {
            if (string_option(a.name, a.value, o) != 0)
                return -1;
        } else if (an_arg_number(PROG, a.name, a.value, num_options[k].lo,
                                 num_options[k].hi, &v[k]) != 0) {
            return -1;
        } else {
            given[k] = true;
        }
    }
    /* A smoke run: 3 trials, N up to 100, unless asked otherwise. */
    if (o->quick && !given[OPT_TRIALS])
        v[OPT_TRIALS] = 3;
    if (o->quick && !given[OPT_MAX_NODES])
        v[OPT_MAX_NODES] = 100;
    o->lookups = v[OPT_LOOKUPS];
    o->trials = (unsigned)v[OPT_TRIALS];
    o->trial_ms = (unsigned)v[OPT_TRIAL_MS];
    o->max_nodes = (uint32_t)v[OPT_MAX_NODES];
    o->cpu = given[OPT_CPU] ? (int)v[OPT_CPU] : -1;
    o->seed = v[OPT_SEED];
    return 0;
}

uint64_t bench_splitmix64(uint64_t *s)
{
    uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* Keep a core busy for a while so that it leaves any low-power state. */
static void warm_up(bench *b)
{
    const double end = bench_now_ns() + 2e8;
    uint64_t s = b->o.seed, acc = 0;
    while (bench_now_ns() < end)
        for (int i = 0; i < 10000; i++)
            acc += bench_splitmix64(&s);
    b->sink += acc;
}

/* The sections in the order they run, each with the --only bits that ask
 * for it (the growth to each N serves five); a section that fails stops
 * the rest. */
static const struct {
    unsigned asked_by;
    void (*run)(bench *b);
} SECTIONS[] = {
    {SEC_HASH, bench_section_siphash},
    {SEC_HASH | SEC_LOOKUP | SEC_CHANGE | SEC_MEMORY | SEC_PUBLISH, bench_section_growth},
    {SEC_SWEEP, bench_section_sweep},
    {SEC_PUBLISH, bench_section_publish_sweep},
    {SEC_REPLICAS, bench_section_replicas},
    {SEC_WORST, bench_section_worst},
    {SEC_REPLICA_COST, bench_section_replica_cost},
    {SEC_LOAD, bench_section_load},
    {SEC_BALANCE, bench_section_balance},
};

int main(int argc, char **argv)
{
    static bench b;
    const int pr = parse_args(argc, argv, &b.o);
    if (pr != 0)
        return pr > 0 ? 0 : 2;
    if (sodium_init() < 0) {
        fprintf(stderr, "dch-bench: libsodium failed to initialise\n");
        return 1;
    }
    if (b.o.cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET((size_t)b.o.cpu, &set);
        if (sched_setaffinity(0, sizeof set, &set) != 0) {
            fprintf(stderr, "dch-bench: cannot pin to CPU %d: %s\n", b.o.cpu,
                    strerror(errno));
            return 2;
        }
    }
    /* A path that cannot be written is found now, not after the run: a
     * temporary file beside it, removed at once, so the file already there
     * stays whole until the new one replaces it. */
    if (strcmp(b.o.json, DEFAULT_JSON) == 0 && mkdir(DEFAULT_JSON_DIR, 0777) != 0 &&
        errno != EEXIST) {
        fprintf(stderr, "dch-bench: cannot make %s: %s\n", DEFAULT_JSON_DIR,
                strerror(errno));
        return 2;
    }
    an_outfile probe;
    if (an_outfile_open(&probe, b.o.json) != 0) {
        fprintf(stderr, "dch-bench: cannot write %s: %s\n", b.o.json, strerror(errno));
        return 2;
    }
    an_outfile_abort(&probe);
    b.last_cpu = -1;
    b.rep = bench_report_new();
    b.hashes = malloc(HASHES_MAX * sizeof *b.hashes);
    if (b.rep == NULL || b.hashes == NULL) {
        fprintf(stderr, "dch-bench: out of memory\n");
        return 1;
    }
    uint64_t s = b.o.seed;
    for (uint32_t i = 0; i < HASHES_MAX; i++)
        b.hashes[i] = bench_splitmix64(&s);
    bench_fill_messages(&s);

    char model[256], date[32], g[32];
    cpu_model(model, sizeof model);
    const time_t t = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
    const int start_cpu = sched_getcpu();
    const double load0 = load_average();
    dch_ring_config rcfg;
    dch_ring_config_default(&rcfg);

    printf("dch-bench: libdch %s (%s build), compiler %s\n", dch_version(),
           DCH_BENCH_BUILD_TYPE, BENCH_COMPILER);
    printf("%s, CPU: %s, %ld online, started on CPU %d%s, load average %.2f\n", date,
           model, sysconf(_SC_NPROCESSORS_ONLN), start_cpu,
           b.o.cpu >= 0 ? " (pinned)" : "", load0);
    printf("%u trials per figure, median [min .. max] of thread CPU time; up to %s "
           "calls per trial, at most %u ms per contender per trial\n", b.o.trials,
           bench_grouped(g, sizeof g, b.o.lookups), b.o.trial_ms);
    printf("ring: %u points per weight. Figures are this machine's in this run: "
           "compare the ratios.\n", (unsigned)rcfg.points_per_weight);
    fflush(stdout);

    bench_report_info(b.rep, "program", "dch-bench");
    bench_report_info(b.rep, "libdch_version", dch_version());
    bench_report_info(b.rep, "build_type", DCH_BENCH_BUILD_TYPE);
    bench_report_info(b.rep, "compiler", BENCH_COMPILER);
    bench_report_info(b.rep, "date", date);
    bench_report_info(b.rep, "cpu_model", model);
    bench_report_info_num(b.rep, "cpus_online", (double)sysconf(_SC_NPROCESSORS_ONLN));
    bench_report_info_num(b.rep, "start_cpu", start_cpu);
    bench_report_info_num(b.rep, "pinned_cpu", b.o.cpu);
    bench_report_info_num(b.rep, "load_average_start", load0);
    bench_report_info_num(b.rep, "trials", b.o.trials);
    bench_report_info_num(b.rep, "lookups", (double)b.o.lookups);
    bench_report_info_num(b.rep, "trial_ms", b.o.trial_ms);
    bench_report_info_num(b.rep, "max_nodes", b.o.max_nodes);
    bench_report_info_num(b.rep, "seed", (double)b.o.seed);
    bench_report_info_num(b.rep, "quick", b.o.quick);
    bench_report_info_num(b.rep, "ring_points_per_weight", rcfg.points_per_weight);

    /* A smoke run proves the program runs; its timings judge nothing. */
    bench_report_set_smoke(b.rep, b.o.quick);
    const double t0 = bench_now_ns();
    warm_up(&b);
    for (size_t i = 0; i < sizeof SECTIONS / sizeof SECTIONS[0] && !b.failed; i++)
        if (b.o.sections & SECTIONS[i].asked_by)
            SECTIONS[i].run(&b);
    bench_note_unmeasured(&b);
    bench_publish_unmeasured(&b);

    char seen[256] = "";
    size_t k = 0;
    for (int c = 0; c < CPU_SETSIZE && k + 8 < sizeof seen; c++)
        if (b.cpu_seen[c])
            k += (size_t)snprintf(seen + k, sizeof seen - k, "%s%d", k ? "," : "", c);
    const double load1 = load_average();
    const double secs = (bench_now_ns() - t0) / 1e9;
    bench_report_info(b.rep, "cpus_seen", seen);
    bench_report_info_num(b.rep, "cpu_migrations", b.migrations);
    bench_report_info_num(b.rep, "load_average_end", load1);
    bench_report_info_num(b.rep, "seconds", secs);
    /* Timings are CPU time; the share of wall time they had says how busy
     * the machine was with other work. */
    const double share = b.wall_ns > 0 ? b.cpu_ns / b.wall_ns : 1;
    bench_report_info(b.rep, "clock", "CLOCK_THREAD_CPUTIME_ID");
    bench_report_info_num(b.rep, "cpu_share_of_wall", share);

    size_t measured, met, smoke;
    bench_report_tally(b.rep, &measured, &met, &smoke);
    printf("\n== Checks: ratios within this run (x), and absolute figures ==\n");
    bench_report_print_checks(b.rep, stdout);
    printf("\ntargets met: %zu of %zu measured", met, measured);
    if (smoke > 0)
        printf(" (%zu more measured as smoke, not judged at this size)", smoke);
    printf("; ran on CPUs %s (%u moves between timed runs), load average %.2f -> "
           "%.2f, %.0f s\n", seen[0] ? seen : "?", b.migrations, load0, load1, secs);
    printf("timings are the thread's CPU time; timed runs had the CPU %.0f%% of "
           "their wall time\n", 100 * share);
    if (bench_report_write_json(b.rep, b.o.json) != 0) {
        fprintf(stderr, "dch-bench: cannot write %s: %s\n", b.o.json, strerror(errno));
        b.failed = 1;
    } else {
        printf("results: %s\n", b.o.json);
    }
    free(b.hashes);
    bench_report_free(b.rep);
    return b.failed ? 1 : 0;
}
