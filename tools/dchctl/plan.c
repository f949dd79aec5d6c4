/* SPDX-License-Identifier: MIT */
/*
 * Migration plans: what moves between two maps (dchctl diff, and every change
 * a map command makes), and a change staged in bounded steps (dchctl plan).
 * A plan is dch_map_diff's ranges, each with its slot count; its totals sum
 * them per (from, to) pair, its flows per member.
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, fsync, dirent */
#include "cli.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * Of the slots [first, first + n), those whose new primary `to` held a copy
 * in the old map: promotions, which move no data. Only a map with replicas
 * has any (with one copy the only old holder is the old primary).
 */
static uint64_t count_promoted(const plan *p, uint64_t first, uint64_t n, const char *to)
{
    if (to == NULL || p->from_replicas < 2)
        return 0;
    uint64_t promoted = 0;
    for (uint64_t s = first; s < first + n; s++) {
        uint32_t ids[DCH_MAP_MAX_REPLICAS];
        size_t k = dch_map_slot_replicas(p->from, (uint32_t)s, ids, DCH_MAP_MAX_REPLICAS);
        k = k < DCH_MAP_MAX_REPLICAS ? k : DCH_MAP_MAX_REPLICAS;
        for (size_t i = 0; i < k; i++) {
            const char *held = dch_map_node_name(p->from, ids[i]);
            if (held != NULL && strcmp(held, to) == 0) {
                promoted++;
                break;
            }
        }
    }
    return promoted;
}

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
    t->promoted = count_promoted(p, p->bits == 0 ? 0 : mv->lo >> (64 - p->bits), t->slots, mv->to);
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
        if (k > 0 && transfer_cmp(&t[k - 1], &t[i]) == 0) {
            t[k - 1].slots += t[i].slots;
            t[k - 1].promoted += t[i].promoted;
        } else
            t[k++] = t[i];
    }
    *count = k;
    return t;
}

int make_plan(const dch_map *from, const dch_map *to, plan *p)
{
    memset(p, 0, sizeof *p);
    p->from = from;
    p->from_replicas = map_replicas(from);
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

static uint64_t plan_promoted(const plan *p)
{
    uint64_t s = 0;
    for (size_t i = 0; i < p->n; i++)
        s += p->moves[i].promoted;
    return s;
}

/* The head line. With one copy every slot that changes owner moves its
 * data; with replicas a change of primary may be a promotion, which moves
 * none, so the line says which are which. */
static void print_plan_head_text(FILE *f, const plan *p)
{
    const uint64_t moved = plan_moved(p), promoted = plan_promoted(p);
    const double pct = 100.0 * (double)moved / p->P;
    if (p->from_replicas < 2) {
        fprintf(f, "plan: %" PRIu64 " of %" PRIu32 " slots move (%.4f%% of the map) in %zu range%s\n",
                moved, p->P, pct, p->n, p->n == 1 ? "" : "s");
        return;
    }
    fprintf(f,
            "plan: %" PRIu64 " of %" PRIu32 " slots change primary (%.4f%% of the map) in %zu "
            "range%s: %" PRIu64 " to a member that receives the data, %" PRIu64
            " promotion%s (the new primary held a copy: no data moves)\n",
            moved, p->P, pct, p->n, p->n == 1 ? "" : "s", moved - promoted, promoted,
            promoted == 1 ? "" : "s");
}

/* Totals per pair, then (with ranges) every range. */
static void print_plan_text(FILE *f, const plan *p, const transfer *t, size_t nt, int ranges)
{
    print_plan_head_text(f, p);
    for (size_t i = 0; i < nt; i++) {
        fprintf(f, "  %s -> %s: %" PRIu64 "/%" PRIu32 " slots (%.4f%%)", or_dash(t[i].from),
                or_dash(t[i].to), t[i].slots, p->P, 100.0 * (double)t[i].slots / p->P);
        if (t[i].promoted > 0)
            fprintf(f, ", %" PRIu64 " of them promotion%s", t[i].promoted,
                    t[i].promoted == 1 ? "" : "s");
        fputc('\n', f);
    }
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
    fprintf(f,
            "\"slots\": %" PRIu32 ", \"moved_slots\": %" PRIu64 ", \"moved_fraction\": %.17g"
            ", \"promoted_slots\": %" PRIu64 ",\n",
            p->P, moved, (double)moved / p->P, plan_promoted(p));
    fprintf(f, "  \"transfers\": [");
    for (size_t i = 0; i < nt; i++) {
        fprintf(f, "%s\n    {\"from\": ", i ? "," : "");
        print_from_to_json(f, t[i].from, t[i].to);
        fprintf(f, ", \"slots\": %" PRIu64 ", \"fraction\": %.17g, \"promoted_slots\": %" PRIu64 "}",
                t[i].slots, (double)t[i].slots / p->P, t[i].promoted);
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
typedef struct copy_walk {
    unsigned bits;
    copy_counts c;
} copy_walk;

static int count_copy_move(const dch_copy_move *cm, void *ctx)
{
    copy_walk *w = ctx;
    const uint64_t slots = w->bits == 0 ? 1 : ((cm->hi - cm->lo) >> (64 - w->bits)) + 1;
    w->c.created += cm->gain != NULL ? slots : 0;
    w->c.copied += cm->gain != NULL && cm->source != NULL ? slots : 0;
    w->c.dropped += cm->lose != NULL ? slots : 0;
    return 0;
}

void copy_changes(const dch_map *from, const dch_map *to, copy_counts *c)
{
    copy_walk w;
    memset(&w, 0, sizeof w);
    while ((UINT32_C(1) << w.bits) < dch_map_slot_count(from))
        w.bits++;
    /* The maps have one shape (make_plan checked it), so the walk runs. */
    (void)dch_map_diff_copies(from, to, count_copy_move, &w);
    const uint32_t limit = dch_map_id_limit(from);
    for (uint32_t id = 0; id < limit; id++)
        if (dch_map_node_name(from, id) != NULL)
            w.c.held += dch_map_node_copies(from, id);
    *c = w.c;
}

void print_copies(FILE *f, const copy_counts *c, uint32_t replicas, int json)
{
    const double fraction = c->held > 0 ? (double)c->copied / (double)c->held : 0.0;
    if (json) {
        fprintf(f,
                "\"copies_created\": %" PRIu64 ", \"copies_dropped\": %" PRIu64
                ", \"copies_moved\": %" PRIu64 ", \"copies_held\": %" PRIu64
                ", \"data_fraction\": %.17g,\n  ",
                c->created, c->dropped, c->copied, c->held, fraction);
        return;
    }
    fprintf(f,
            "copies: %" PRIu64 " created, %" PRIu64 " dropped (%" PRIu32
            " copies of every slot): data moves for %" PRIu64 " of the %" PRIu64
            " copies held (%.4f%% of the map's data)\n",
            c->created, c->dropped, replicas, c->copied, c->held, 100.0 * fraction);
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
    /* With replicas the ranges are the primaries'; the copies, which say
     * what data moves, are counted beside them. */
    uint32_t replicas = 1;
    if (status == 0)
        replicas = map_replicas(to) > map_replicas(from) ? map_replicas(to) : map_replicas(from);
    copy_counts c;
    memset(&c, 0, sizeof c);
    if (status == 0 && replicas > 1)
        copy_changes(from, to, &c);
    const int json = (a->given & OPT_JSON) != 0;
    if (status == 0 && json) {
        print_old_new_json(a->pos[0], a->pos[1]);
        printf(", \"old_fingerprint\": \"%016" PRIx64 "\", \"new_fingerprint\": \"%016" PRIx64
               "\",\n  ",
               dch_map_fingerprint(from), dch_map_fingerprint(to));
    } else if (status == 0) {
        printf("%s (epoch %" PRIu64 ") -> %s (epoch %" PRIu64 ")\n", input_name(a->pos[0]),
               dch_map_epoch(from), input_name(a->pos[1]), dch_map_epoch(to));
    }
    if (status == 0 && replicas > 1)
        print_copies(stdout, &c, replicas, json);
    if (status == 0)
        status = print_plan(stdout, &p, json, 1);
    if (status == 0 && json)
        printf("}\n");
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

/* ---- plan --write-dir: all the steps or none -------------------------- */

/*
 * The steps are written into a folder of their own beside DIR (same
 * parent, so the same file system), .BASE.dchctl-XXXXXX, and only when
 * every step is written is that folder renamed to DIR: rename(2) puts a
 * folder in place of a missing or an empty one in one step, so a reader of
 * DIR sees no step or all of them, and a plan that fails (a full disk, a
 * reader of the report that went away, a bad map) leaves DIR as it was. A
 * DIR that holds anything is refused: the steps of an older plan would mix
 * with the new ones. A plan killed while writing leaves only its hidden
 * folder behind, which can be deleted.
 */
typedef struct step_dir {
    char target[4096]; /* DIR without trailing slashes */
    char tmp[4200];
    mode_t mode; /* DIR's, or for a new DIR 0777 less the umask */
} step_dir;

/* Whether the folder at path holds nothing; -1 when it cannot be read. */
static int folder_empty(const char *path)
{
    DIR *d = opendir(path);
    if (d == NULL)
        return -1;
    int empty = 1;
    for (struct dirent *e; empty && (e = readdir(d)) != NULL;)
        empty = strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0;
    closedir(d);
    return empty;
}

static int dir_error(const char *path, const char *what)
{
    fprintf(stderr, "dchctl: %s: %s\n", path, what);
    return EXIT_RUNTIME;
}

/* Check DIR (missing, or an empty folder) and make the folder beside it. */
static int step_dir_open(const char *dir, step_dir *d)
{
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    if (n == 0 || n >= sizeof d->target)
        return dir_error(dir, "not a usable folder name");
    memcpy(d->target, dir, n);
    d->target[n] = '\0';
    struct stat st;
    if (stat(d->target, &st) == 0) {
        if (!S_ISDIR(st.st_mode))
            return dir_error(d->target, "not a folder");
        const int empty = folder_empty(d->target);
        if (empty < 0)
            return dir_error(d->target, strerror(errno));
        if (!empty)
            return dir_error(d->target, "not empty: plan --write-dir writes its steps into a "
                                        "new or empty folder, all at once, so that no step of "
                                        "another plan mixes with them");
        d->mode = st.st_mode & 07777;
    } else if (errno == ENOENT) {
        const mode_t mask = umask(0);
        umask(mask);
        d->mode = 0777 & ~mask;
    } else {
        return dir_error(d->target, strerror(errno));
    }
    const char *slash = strrchr(d->target, '/');
    const int plen = slash == NULL ? 1 : slash == d->target ? 1 : (int)(slash - d->target);
    snprintf(d->tmp, sizeof d->tmp, "%.*s/.%s.dchctl-XXXXXX", plen,
             slash == NULL ? "." : d->target, slash == NULL ? d->target : slash + 1);
    if (mkdtemp(d->tmp) == NULL)
        return dir_error(d->tmp, strerror(errno));
    return 0;
}

/* Remove the folder beside DIR and all it holds (it is ours alone). */
static void step_dir_discard(const step_dir *d)
{
    DIR *dp = opendir(d->tmp);
    if (dp != NULL) {
        for (struct dirent *e; (e = readdir(dp)) != NULL;) {
            char path[4500];
            if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
                snprintf(path, sizeof path, "%s/%s", d->tmp, e->d_name) < (int)sizeof path)
                unlink(path);
        }
        closedir(dp);
    }
    rmdir(d->tmp);
}

/* Put the written steps in place as DIR, and make the rename durable. */
static int step_dir_commit(const step_dir *d)
{
    if (chmod(d->tmp, d->mode) != 0 || rename(d->tmp, d->target) != 0) {
        const int err = errno;
        step_dir_discard(d);
        return dir_error(d->target, err == ENOTEMPTY || err == EEXIST
                                        ? "no longer empty: the steps were not put in place"
                                        : strerror(err));
    }
    char parent[4096];
    const char *slash = strrchr(d->target, '/');
    snprintf(parent, sizeof parent, "%.*s", slash == NULL ? 1 : slash == d->target ? 1
                                                                 : (int)(slash - d->target),
             slash == NULL ? "." : d->target);
    const int fd = open(parent, O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
        (void)fsync(fd); /* a failure here loses durability, not the steps */
        close(fd);
    }
    return 0;
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

/*
 * Steps 1 .. n from old to target: with a dir, each written there, else
 * each printed (until the reader of the output goes away: the rest would
 * go nowhere). The steps are staged twice when both are asked for, so that
 * the files are all in place before the first line is printed.
 */
static int run_steps(const args *a, const dch_map *old, const dch_map *target, uint32_t k,
                     uint32_t n, const char *dir)
{
    dch_map *prev = NULL; /* the step before, once there is one */
    int status = 0;
    for (uint32_t i = 1; status == 0 && i <= n && (dir != NULL || !ferror(stdout)); i++) {
        const dch_map *from = prev != NULL ? prev : old;
        dch_map *step;
        const int rc = dch_map_stage_next(&step, from, target, k);
        if (rc != DCH_OK) {
            status = stage_error(a->pos[0], a->pos[1], rc);
            break;
        }
        status = dir != NULL ? write_step(dir, i, step)
                             : print_step(from, step, i, n, (a->given & OPT_JSON) != 0);
        dch_map_free(prev);
        prev = step;
    }
    dch_map_free(prev);
    return status;
}

/* With --write-dir, every step written and put in place as DIR, or none. */
static int write_steps(const args *a, const dch_map *old, const dch_map *target, uint32_t k,
                       uint32_t n)
{
    step_dir d;
    int status = step_dir_open(opt_value(a, OPT_WRITE_DIR), &d);
    if (status != 0)
        return status;
    status = run_steps(a, old, target, k, n, d.tmp);
    if (status != 0) {
        step_dir_discard(&d);
        return status;
    }
    return step_dir_commit(&d);
}

int cmd_plan(const command *cmd, const args *a)
{
    static const number_rule max_slots_rule = {"max-slots", 1, UINT32_MAX, 0};
    uint64_t k64;
    if (!(a->given & OPT_MAX_SLOTS))
        return usage_error(cmd, "%s", "--max-slots is required");
    if (number_arg(cmd, opt_value(a, OPT_MAX_SLOTS), &max_slots_rule, &k64) != 0)
        return EXIT_USAGE;
    const uint32_t k = (uint32_t)k64;
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
    if (status == 0 && (a->given & OPT_WRITE_DIR))
        status = write_steps(a, old, target, k, n);
    if (status == 0) {
        print_plan_head(a, old, target, k, n);
        status = run_steps(a, old, target, k, n, NULL);
    }
    if (status == 0 && (a->given & OPT_JSON))
        printf("%s]}\n", n ? "\n  " : "");
    else if (status == 0 && (a->given & OPT_WRITE_DIR) && n > 0)
        printf("wrote step-0001.dchmap .. step-%04" PRIu32 ".dchmap to %s\n", n,
               opt_value(a, OPT_WRITE_DIR));
    dch_map_free(old);
    dch_map_free(target);
    return status;
}
