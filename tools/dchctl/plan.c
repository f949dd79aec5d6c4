/* SPDX-License-Identifier: MIT */
/*
 * Migration plans: what moves between two maps (dchctl diff, and every change
 * a map command makes), and a change staged in bounded steps (dchctl plan).
 * A plan is dch_map_diff's ranges, each with its slot count; its totals sum
 * them per (from, to) pair, its flows per member.
 */
#include "cli.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static int collect_move(const dch_move *mv, void *ctx)
{
    plan *p = ctx;
    transfer *moves = grow(p->moves, p->n, &p->cap, sizeof *moves, 64);
    if (moves == NULL) {
        p->failed = 1;
        return 1;
    }
    p->moves = moves;
    transfer *t = &moves[p->n++];
    t->from = mv->from;
    t->to = mv->to;
    t->lo = mv->lo;
    t->hi = mv->hi;
    t->slots = p->bits == 0 ? 1 : ((mv->hi - mv->lo) >> (64 - p->bits)) + 1;
    return 0;
}

static int name_cmp(const char *a, const char *b)
{
    if (a == NULL || b == NULL)
        return (a != NULL) - (b != NULL);
    return strcmp(a, b);
}

static int transfer_cmp(const void *x, const void *y)
{
    const transfer *a = x, *b = y;
    const int c = name_cmp(a->from, b->from);
    return c != 0 ? c : name_cmp(a->to, b->to);
}

/* Moves summed per (from, to) pair, sorted by names; the caller frees. */
static transfer *plan_totals(const plan *p, size_t *count)
{
    transfer *t = malloc((p->n ? p->n : 1) * sizeof *t);
    if (t == NULL)
        return NULL;
    if (p->n)
        memcpy(t, p->moves, p->n * sizeof *t);
    qsort(t, p->n, sizeof *t, transfer_cmp);
    size_t k = 0;
    for (size_t i = 0; i < p->n; i++) {
        if (k > 0 && transfer_cmp(&t[k - 1], &t[i]) == 0)
            t[k - 1].slots += t[i].slots;
        else
            t[k++] = t[i];
    }
    *count = k;
    return t;
}

int make_plan(const dch_map *from, const dch_map *to, plan *p)
{
    memset(p, 0, sizeof *p);
    p->P = dch_map_slot_count(from);
    while ((UINT32_C(1) << p->bits) < p->P)
        p->bits++;
    const int rc = dch_map_diff(from, to, collect_move, p);
    if (p->failed)
        return out_of_memory();
    if (rc != DCH_OK) {
        fputs("dchctl: the maps differ in units, slots per unit or hash key: no "
              "plan by hash ranges exists between them\n",
              stderr);
        return EXIT_RUNTIME;
    }
    return 0;
}

static uint64_t plan_moved(const plan *p)
{
    uint64_t s = 0;
    for (size_t i = 0; i < p->n; i++)
        s += p->moves[i].slots;
    return s;
}

/* Totals per pair, then (with ranges) every range. */
static void print_plan_text(FILE *f, const plan *p, const transfer *t, size_t nt, int ranges)
{
    const uint64_t moved = plan_moved(p);
    fprintf(f, "plan: %" PRIu64 " of %" PRIu32 " slots move (%.4f%% of the ring) in %zu range%s\n",
            moved, p->P, 100.0 * (double)moved / p->P, p->n, p->n == 1 ? "" : "s");
    for (size_t i = 0; i < nt; i++)
        fprintf(f, "  %s -> %s: %" PRIu64 "/%" PRIu32 " slots (%.4f%%)\n", or_dash(t[i].from),
                or_dash(t[i].to), t[i].slots, p->P, 100.0 * (double)t[i].slots / p->P);
    if (ranges)
        for (size_t i = 0; i < p->n; i++)
            fprintf(f, "  0x%016" PRIx64 "..0x%016" PRIx64 " %s -> %s\n", p->moves[i].lo,
                    p->moves[i].hi, or_dash(p->moves[i].from), or_dash(p->moves[i].to));
}

static void print_from_to_json(FILE *f, const char *from, const char *to)
{
    json_string(f, from);
    fprintf(f, ", \"to\": ");
    json_string(f, to);
}

/* JSON members of an object that the caller opened: totals and ranges. */
static void print_plan_json(FILE *f, const plan *p, const transfer *t, size_t nt)
{
    const uint64_t moved = plan_moved(p);
    fprintf(f, "\"slots\": %" PRIu32 ", \"moved_slots\": %" PRIu64 ", \"moved_fraction\": %.17g,\n",
            p->P, moved, (double)moved / p->P);
    fprintf(f, "  \"transfers\": [");
    for (size_t i = 0; i < nt; i++) {
        fprintf(f, "%s\n    {\"from\": ", i ? "," : "");
        print_from_to_json(f, t[i].from, t[i].to);
        fprintf(f, ", \"slots\": %" PRIu64 ", \"fraction\": %.17g}", t[i].slots,
                (double)t[i].slots / p->P);
    }
    fprintf(f, "%s],\n  \"ranges\": [", nt ? "\n  " : "");
    for (size_t i = 0; i < p->n; i++) {
        fprintf(f,
                "%s\n    {\"lo\": \"0x%016" PRIx64 "\", \"hi\": \"0x%016" PRIx64 "\", \"from\": ",
                i ? "," : "", p->moves[i].lo, p->moves[i].hi);
        print_from_to_json(f, p->moves[i].from, p->moves[i].to);
        fprintf(f, "}");
    }
    fprintf(f, "%s]", p->n ? "\n  " : "");
}

int print_plan(FILE *f, const plan *p, int json, int ranges)
{
    size_t nt;
    transfer *t = plan_totals(p, &nt);
    if (t == NULL)
        return out_of_memory();
    if (json)
        print_plan_json(f, p, t, nt);
    else
        print_plan_text(f, p, t, nt, ranges);
    free(t);
    return 0;
}

/* Copies gained and lost over a walk of dch_map_diff_copies. */
typedef struct copy_count {
    unsigned bits;
    uint64_t created, dropped;
} copy_count;

static int count_copy_move(const dch_copy_move *cm, void *ctx)
{
    copy_count *c = ctx;
    const uint64_t slots = c->bits == 0 ? 1 : ((cm->hi - cm->lo) >> (64 - c->bits)) + 1;
    c->created += cm->gain != NULL ? slots : 0;
    c->dropped += cm->lose != NULL ? slots : 0;
    return 0;
}

void copy_changes(const dch_map *from, const dch_map *to, uint64_t *created,
                  uint64_t *dropped)
{
    copy_count c = {0, 0, 0};
    while ((UINT32_C(1) << c.bits) < dch_map_slot_count(from))
        c.bits++;
    /* The maps have one shape (make_plan checked it), so the walk runs. */
    (void)dch_map_diff_copies(from, to, count_copy_move, &c);
    *created = c.created;
    *dropped = c.dropped;
}

/* "OLD" and "NEW" as the first members of a JSON object it opens. */
static void print_old_new_json(const char *old, const char *new)
{
    printf("{\"old\": ");
    json_string(stdout, old);
    printf(", \"new\": ");
    json_string(stdout, new);
}

int cmd_diff(const command *cmd, const args *a)
{
    (void)cmd;
    dch_map *from, *to = NULL;
    int status = load(a->pos[0], &from);
    if (status != 0)
        return status;
    status = load(a->pos[1], &to);
    plan p;
    memset(&p, 0, sizeof p);
    if (status == 0)
        status = make_plan(from, to, &p);
    /* With replicas the ranges are the primaries'; the copies are counted
     * beside them. */
    const int replicas = status == 0 && (map_replicas(from) > 1 || map_replicas(to) > 1);
    uint64_t created = 0, dropped = 0;
    if (replicas)
        copy_changes(from, to, &created, &dropped);
    if (status == 0) {
        if (a->given & OPT_JSON) {
            print_old_new_json(a->pos[0], a->pos[1]);
            printf(", \"old_fingerprint\": \"%016" PRIx64 "\", \"new_fingerprint\": \"%016" PRIx64
                   "\",\n  ",
                   dch_map_fingerprint(from), dch_map_fingerprint(to));
            if (replicas)
                printf("\"copies_created\": %" PRIu64 ", \"copies_dropped\": %" PRIu64 ",\n  ",
                       created, dropped);
            status = print_plan(stdout, &p, 1, 1);
            printf("}\n");
        } else {
            printf("%s (epoch %" PRIu64 ") -> %s (epoch %" PRIu64 ")\n", input_name(a->pos[0]),
                   dch_map_epoch(from), input_name(a->pos[1]), dch_map_epoch(to));
            if (replicas)
                printf("copies: %" PRIu64 " created, %" PRIu64
                       " dropped (the plan below is the primaries')\n",
                       created, dropped);
            status = print_plan(stdout, &p, 0, 1);
        }
    }
    free(p.moves);
    dch_map_free(from);
    dch_map_free(to);
    return status;
}

/* ---- dchctl plan: bounded steps ------------------------------------------ */

/* Slots a member gives and takes in one step. */
typedef struct member_flow {
    const char *name;
    uint64_t out, in;
} member_flow;

static int flow_cmp(const void *x, const void *y)
{
    return strcmp(((const member_flow *)x)->name, ((const member_flow *)y)->name);
}

/* The plan's moves summed per member name, sorted by name; the caller frees. */
static member_flow *plan_flows(const plan *p, size_t *count)
{
    member_flow *f = malloc((2 * p->n + 1) * sizeof *f);
    if (f == NULL)
        return NULL;
    size_t n = 0;
    for (size_t i = 0; i < p->n; i++) {
        if (p->moves[i].from != NULL)
            f[n++] = (member_flow){p->moves[i].from, p->moves[i].slots, 0};
        if (p->moves[i].to != NULL)
            f[n++] = (member_flow){p->moves[i].to, 0, p->moves[i].slots};
    }
    qsort(f, n, sizeof *f, flow_cmp);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (k > 0 && strcmp(f[k - 1].name, f[i].name) == 0) {
            f[k - 1].out += f[i].out;
            f[k - 1].in += f[i].in;
        } else {
            f[k++] = f[i];
        }
    }
    *count = k;
    return f;
}

static void print_step_json(const dch_map *step, uint32_t i, uint64_t moved,
                            const member_flow *f, size_t nf)
{
    printf("%s\n    {\"step\": %" PRIu32 ", \"epoch\": %" PRIu64 ", \"fingerprint\": \"%016" PRIx64
           "\", \"in_transition\": %s, \"moved_slots\": %" PRIu64 ", \"members\": [",
           i > 1 ? "," : "", i, dch_map_epoch(step), dch_map_fingerprint(step),
           dch_map_in_transition(step, NULL) ? "true" : "false", moved);
    for (size_t k = 0; k < nf; k++) {
        printf("%s{\"name\": ", k ? ", " : "");
        json_string(stdout, f[k].name);
        printf(", \"out\": %" PRIu64 ", \"in\": %" PRIu64 "}", f[k].out, f[k].in);
    }
    printf("]}");
}

static void print_step_text(const dch_map *step, uint32_t i, uint32_t n, uint64_t moved,
                            const member_flow *f, size_t nf)
{
    printf("step %" PRIu32 "/%" PRIu32 ": epoch %" PRIu64 ", %" PRIu64
           " slots move, fingerprint %016" PRIx64 "%s\n",
           i, n, dch_map_epoch(step), moved, dch_map_fingerprint(step),
           i == n ? " (the target)" : "");
    for (size_t k = 0; k < nf; k++)
        printf("  %-20s out %6" PRIu64 "  in %6" PRIu64 "\n", f[k].name, f[k].out, f[k].in);
}

/* One step of `dchctl plan`: its epoch, moves per member and fingerprint. */
static int print_step(const dch_map *prev, const dch_map *step, uint32_t i, uint32_t n,
                      int json)
{
    plan p;
    int status = make_plan(prev, step, &p);
    size_t nf = 0;
    member_flow *f = status == 0 ? plan_flows(&p, &nf) : NULL;
    if (status == 0 && f == NULL)
        status = out_of_memory();
    if (status == 0 && json)
        print_step_json(step, i, plan_moved(&p), f, nf);
    else if (status == 0)
        print_step_text(step, i, n, plan_moved(&p), f, nf);
    free(f);
    free(p.moves);
    return status;
}

static int stage_error(const char *old, const char *target, int rc)
{
    fprintf(stderr, "dchctl: cannot stage %s -> %s: %s%s\n", input_name(old), input_name(target),
            dch_strerror(rc),
            rc == DCH_EINVAL ? " (the maps need the same units, slots per unit and hash "
                               "key, a target of a later epoch, and no target in transition)"
                             : "");
    return EXIT_RUNTIME;
}

/* Write step i to DIR/step-NNNN.dchmap. */
static int write_step(const char *dir, uint32_t i, const dch_map *step)
{
    const size_t cap = strlen(dir) + 32;
    char *path = malloc(cap);
    if (path == NULL)
        return out_of_memory();
    snprintf(path, cap, "%s/step-%04" PRIu32 ".dchmap", dir, i);
    const int status = save(path, step);
    free(path);
    return status;
}

static void print_plan_head(const args *a, const dch_map *old, const dch_map *target,
                            uint32_t k, uint32_t n)
{
    if (a->given & OPT_JSON) {
        print_old_new_json(a->pos[0], a->pos[1]);
        printf(", \"max_slots\": %" PRIu32 ", \"old_epoch\": %" PRIu64 ", \"new_epoch\": %" PRIu64
               ", \"target_fingerprint\": \"%016" PRIx64 "\", \"step_count\": %" PRIu32
               ",\n  \"steps\": [",
               k, dch_map_epoch(old), dch_map_epoch(target), dch_map_fingerprint(target), n);
    } else {
        printf("%s (epoch %" PRIu64 ") -> %s (epoch %" PRIu64 ", fingerprint %016" PRIx64
               "): %" PRIu32 " step%s of at most %" PRIu32
               " slots into and out of each member\n",
               input_name(a->pos[0]), dch_map_epoch(old), input_name(a->pos[1]),
               dch_map_epoch(target),
               dch_map_fingerprint(target), n, n == 1 ? "" : "s", k);
    }
}

/* Steps 1 .. n from old to target: each printed and, with a dir, written. */
static int run_steps(const args *a, const dch_map *old, const dch_map *target, uint32_t k,
                     uint32_t n)
{
    const char *dir = (a->given & OPT_WRITE_DIR) ? opt_value(a, OPT_WRITE_DIR) : NULL;
    dch_map *prev = NULL; /* the step before, once there is one */
    int status = 0;
    for (uint32_t i = 1; status == 0 && i <= n; i++) {
        const dch_map *from = prev != NULL ? prev : old;
        dch_map *step;
        const int rc = dch_map_stage_next(&step, from, target, k);
        if (rc != DCH_OK) {
            status = stage_error(a->pos[0], a->pos[1], rc);
            break;
        }
        status = print_step(from, step, i, n, (a->given & OPT_JSON) != 0);
        if (status == 0 && dir != NULL)
            status = write_step(dir, i, step);
        dch_map_free(prev);
        prev = step;
    }
    dch_map_free(prev);
    return status;
}

int cmd_plan(const command *cmd, const args *a)
{
    uint32_t k;
    if (!(a->given & OPT_MAX_SLOTS))
        return usage_error(cmd, "%s", "--max-slots is required");
    if (parse_u32(opt_value(a, OPT_MAX_SLOTS), &k) != 0 || k == 0)
        return usage_error(cmd, "--max-slots %s: not an integer from 1 to 4294967295",
                           opt_value(a, OPT_MAX_SLOTS));
    dch_map *old, *target = NULL;
    int status = load(a->pos[0], &old);
    if (status != 0)
        return status;
    status = load(a->pos[1], &target);
    uint32_t n = 0;
    if (status == 0) {
        const int rc = dch_map_stage_steps(old, target, k, &n);
        if (rc != DCH_OK)
            status = stage_error(a->pos[0], a->pos[1], rc);
    }
    if (status == 0) {
        print_plan_head(a, old, target, k, n);
        status = run_steps(a, old, target, k, n);
    }
    if (status == 0 && (a->given & OPT_JSON))
        printf("%s]}\n", n ? "\n  " : "");
    dch_map_free(old);
    dch_map_free(target);
    return status;
}
