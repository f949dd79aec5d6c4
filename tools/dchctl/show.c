/* SPDX-License-Identifier: MIT */
/*
 * dchctl show and lookup, what a map holds and where it sends keys. show:
 * a map's config, epoch, fingerprint and members, with how far each
 * member's slots are from its ideal share (weight / total weight), in the
 * whole map and in each unit, and with LOADS each member's load, target
 * and bound (balance.c computes them). lookup: the members that hold each key,
 * given as arguments or, with KEY '-', read from standard input a line
 * each, in bulk (a million keys a second and more).
 */
#define _POSIX_C_SOURCE 200809L /* read */
#include "cli.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Per member: the fewest and most slots it holds in a unit. */
typedef struct balance {
    uint32_t unit_min, unit_max;
    uint32_t present; /* units where it holds a slot */
} balance;

/* What show prints besides the members. */
typedef struct summary {
    dch_map_config cfg;
    uint32_t replicas;
    int extra; /* replicas or zones: members also show their copies and zone */
    uint32_t limit, P;
    /* The drained members in the order drained, and their modes. */
    uint32_t *drain_ids, *drain_modes;
    size_t ndrains;
    double W; /* the weight of the members not drained: the ideals' whole */
    double worst, worst_unit; /* largest |slots - ideal|, overall and in a unit */
    /* With LOADS: every member's load (by id) and the whole's. */
    member_load *ml;
    load_summary loads;
} summary;

/* What show_map allocated into s. */
static void summary_free(summary *s)
{
    free(s->ml);
    free(s->drain_ids);
    free(s->drain_modes);
}

/* b[id] for every id below the id limit; -1 when out of memory. */
static int measure_balance(const dch_map *m, const dch_map_config *cfg, balance *b)
{
    const uint32_t limit = dch_map_id_limit(m);
    uint32_t *cnt = calloc(limit ? limit : 1, sizeof *cnt);
    uint32_t *touched = malloc(cfg->slots_per_unit * sizeof *touched);
    if (cnt == NULL || touched == NULL) {
        free(cnt);
        free(touched);
        return -1;
    }
    for (uint32_t id = 0; id < limit; id++)
        b[id] = (balance){UINT32_MAX, 0, 0};
    for (uint32_t u = 0; u < cfg->units; u++) {
        uint32_t nt = 0;
        for (uint32_t i = 0; i < cfg->slots_per_unit; i++) {
            const uint32_t o = dch_map_slot_owner(m, u * cfg->slots_per_unit + i);
            if (o != DCH_NODE_NONE && cnt[o]++ == 0)
                touched[nt++] = o;
        }
        for (uint32_t i = 0; i < nt; i++) {
            balance *x = &b[touched[i]];
            const uint32_t c = cnt[touched[i]];
            x->unit_min = c < x->unit_min ? c : x->unit_min;
            x->unit_max = c > x->unit_max ? c : x->unit_max;
            x->present++;
            cnt[touched[i]] = 0;
        }
    }
    /* A member absent from some unit holds 0 slots there. */
    for (uint32_t id = 0; id < limit; id++)
        if (b[id].present < cfg->units)
            b[id].unit_min = 0;
    free(cnt);
    free(touched);
    return 0;
}

static double absd(double x)
{
    return x < 0 ? -x : x;
}

static double maxd(double a, double b)
{
    return a > b ? a : b;
}

/* A member's weight as the ideals count it: 0 while it is drained, as a
 * drained member serves as primary no slot. */
static double ideal_weight(const dch_map *m, uint32_t id)
{
    return dch_map_node_drained(m, id) != 0 ? 0.0 : (double)dch_map_node_weight(m, id);
}

/* The drain list into s (order and modes); -1 when out of memory. */
static int read_drains(const dch_map *m, summary *s)
{
    const size_t cap = s->limit ? s->limit : 1;
    s->drain_ids = malloc(cap * sizeof *s->drain_ids);
    s->drain_modes = malloc(cap * sizeof *s->drain_modes);
    if (s->drain_ids == NULL || s->drain_modes == NULL)
        return -1;
    /* Only members are drained, so the list fits under the id limit. */
    s->ndrains = dch_map_drains(m, s->drain_ids, s->drain_modes, cap);
    s->ndrains = s->ndrains < cap ? s->ndrains : cap;
    return 0;
}

/* Where id stands in the drain list (1 = drained first), or 0. */
static size_t drain_order(const summary *s, uint32_t id)
{
    for (size_t i = 0; i < s->ndrains; i++)
        if (s->drain_ids[i] == id)
            return i + 1;
    return 0;
}

/* Worst deviations from the ideal shares over the members. */
static void summarize(const dch_map *m, const balance *b, summary *s)
{
    s->worst = s->worst_unit = 0;
    s->W = 0;
    for (uint32_t id = 0; id < s->limit; id++)
        if (dch_map_node_name(m, id) != NULL)
            s->W += ideal_weight(m, id);
    for (uint32_t id = 0; id < s->limit; id++) {
        if (dch_map_node_name(m, id) == NULL || s->W == 0)
            continue;
        const double w = ideal_weight(m, id);
        const double dev = dch_map_node_slots(m, id) - s->P * w / s->W;
        const double ideal_unit = s->cfg.slots_per_unit * w / s->W;
        s->worst = maxd(s->worst, absd(dev));
        s->worst_unit = maxd(s->worst_unit, absd(b[id].unit_min - ideal_unit));
        s->worst_unit = maxd(s->worst_unit, absd(b[id].unit_max - ideal_unit));
    }
}

static void print_head_json(const char *path, const dch_map *m, const summary *s)
{
    dch_map_transition tr;
    printf("{\"file\": ");
    json_string(stdout, path);
    printf(", \"units\": %" PRIu32 ", \"slots_per_unit\": %" PRIu32 ", \"slots\": %" PRIu32
           ", \"hash_key\": \"",
           s->cfg.units, s->cfg.slots_per_unit, s->P);
    print_hex(stdout, s->cfg.hash_key, 16);
    printf("\", \"epoch\": %" PRIu64 ", \"fingerprint\": \"%016" PRIx64
           "\", \"member_count\": %" PRIu32 ", \"total_weight\": %" PRIu32
           ", \"max_deviation_slots\": %.17g, \"max_unit_deviation_slots\": %.17g,\n",
           dch_map_epoch(m), dch_map_fingerprint(m), dch_map_node_count(m),
           dch_map_total_weight(m), s->worst, s->worst_unit);
    if (s->extra)
        printf("  \"replicas\": %" PRIu32 ",\n", s->replicas);
    if (dch_map_in_transition(m, &tr))
        printf("  \"transition\": {\"step\": %" PRIu32 ", \"steps\": %" PRIu32
               ", \"target_fingerprint\": \"%016" PRIx64 "\"},\n",
               tr.step, tr.steps, tr.target_fingerprint);
    if (s->ml != NULL)
        printf("  \"load\": {\"total\": %" PRIu64 ", \"heaviest_load\": %" PRIu64
               ", \"heaviest_slot\": %" PRIu32 ", \"second_load\": %" PRIu64
               ", \"members\": %" PRIu32 ", \"max_ratio\": %.17g, \"ratio_floor\": %.17g},\n",
               s->loads.total, s->loads.heaviest, s->loads.heaviest_slot, s->loads.second,
               s->loads.members, s->loads.max_ratio, s->loads.floor);
    printf("  \"drains\": [");
    for (size_t i = 0; i < s->ndrains; i++) {
        printf("%s{\"name\": ", i ? ", " : "");
        json_string(stdout, dch_map_node_name(m, s->drain_ids[i]));
        printf(", \"mode\": ");
        json_string(stdout, drain_mode_name(s->drain_modes[i]));
        printf("}");
    }
    printf("],\n  \"members\": [");
}

static void print_head_text(const char *path, const dch_map *m, const summary *s)
{
    dch_map_transition tr;
    printf("file:          %s\n", input_name(path));
    printf("units:         %" PRIu32 "\n", s->cfg.units);
    printf("slots/unit:    %" PRIu32 "\n", s->cfg.slots_per_unit);
    printf("slots:         %" PRIu32 "\n", s->P);
    printf("hash key:      ");
    print_hex(stdout, s->cfg.hash_key, 16);
    printf("\nepoch:         %" PRIu64 "\n", dch_map_epoch(m));
    printf("fingerprint:   %016" PRIx64 "\n", dch_map_fingerprint(m));
    printf("members:       %" PRIu32 ", total weight %" PRIu32 "\n", dch_map_node_count(m),
           dch_map_total_weight(m));
    printf("balance:       worst |slots - ideal| %.3f slots, worst per-unit %.3f slots\n",
           s->worst, s->worst_unit);
    if (s->extra)
        printf("replicas:      %" PRIu32 " cop%s of every slot\n", s->replicas,
               s->replicas == 1 ? "y" : "ies");
    if (dch_map_in_transition(m, &tr))
        printf("transition:    step %" PRIu32 " of %" PRIu32 " towards %016" PRIx64 "\n",
               tr.step, tr.steps, tr.target_fingerprint);
    if (s->ndrains > 0) {
        printf("drains:        ");
        for (size_t i = 0; i < s->ndrains; i++) {
            printf("%s", i ? ", " : "");
            text_string(stdout, dch_map_node_name(m, s->drain_ids[i]));
            printf(" (%s)", or_dash(drain_mode_name(s->drain_modes[i])));
        }
        printf(", in the order drained\n");
    }
    if (s->ml != NULL)
        printf("load:          total %" PRIu64 "; heaviest slot %" PRIu32 " carries %" PRIu64
               ", the second heaviest %" PRIu64 "; max/mean %.4f (no placement beats %.4f)\n",
               s->loads.total, s->loads.heaviest_slot, s->loads.heaviest, s->loads.second,
               s->loads.max_ratio, s->loads.floor);
    if (s->limit > 0)
        printf("\n%6s %-16s %10s %9s %9s %9s %9s %10s %9s%s%s%s\n", "id", "name", "weight", "slots",
               "share%", "ideal%", "dev", "unit", "ideal/u", s->extra ? "    copies zone" : "",
               s->ndrains > 0 ? " drained" : "",
               s->ml != NULL ? "                 load               target"
                               "                bound load/target"
                             : "");
}

/* A member's drain at the end of its row: " 1:full", " 2:primary" (order
 * and mode), " -" for a member not drained; nothing when none is. */
static void print_drain_cell(const summary *s, uint32_t id, uint32_t mode)
{
    const size_t order = drain_order(s, id);
    if (s->ndrains == 0)
        return;
    if (order == 0)
        printf(" -");
    else
        printf(" %zu:%s", order, or_dash(drain_mode_name(mode)));
}

/* A member's load cells at the end of its row (text) or its load members
 * (JSON); nothing without LOADS. Target, bound and ratio are '-' (null)
 * for a member that does not balance. */
static void print_load_cells(const summary *s, uint32_t id, int json)
{
    if (s->ml == NULL)
        return;
    const member_load *x = &s->ml[id];
    const int t = x->balances && x->target > 0;
    if (json) {
        printf(", \"load\": %" PRIu64, x->load);
        if (x->balances)
            printf(", \"target\": %.17g, \"bound\": %.17g", x->target, x->bound);
        else
            printf(", \"target\": null, \"bound\": null");
        if (t)
            printf(", \"load_ratio\": %.17g", (double)x->load / x->target);
        else
            printf(", \"load_ratio\": null");
        return;
    }
    printf(" %20" PRIu64, x->load);
    if (x->balances)
        printf(" %20.1f %20.1f", x->target, x->bound);
    else
        printf(" %20s %20s", "-", "-");
    if (t)
        printf(" %11.4f", (double)x->load / x->target);
    else
        printf(" %11s", "-");
}

/* One member's row (JSON: an element after `first` ones or not). */
static void print_member(const dch_map *m, const summary *s, const balance *b, uint32_t id,
                         int json, int first)
{
    const double w = ideal_weight(m, id), W = s->W;
    const uint32_t mode = dch_map_node_drained(m, id);
    const uint32_t slots = dch_map_node_slots(m, id);
    const double ideal = W > 0 ? s->P * w / W : 0;
    const double ideal_unit = W > 0 ? s->cfg.slots_per_unit * w / W : 0;
    const uint32_t umin = b->present ? b->unit_min : 0;
    if (json) {
        printf("%s\n    {\"id\": %" PRIu32 ", \"name\": ", first ? "" : ",", id);
        json_string(stdout, dch_map_node_name(m, id));
        printf(", \"weight\": %" PRIu32 ", \"slots\": %" PRIu32
               ", \"share\": %.17g, \"ideal_share\": %.17g, \"deviation_slots\": %.17g"
               ", \"unit_min\": %" PRIu32 ", \"unit_max\": %" PRIu32 ", \"unit_ideal\": %.17g",
               dch_map_node_weight(m, id), slots, (double)slots / s->P, W > 0 ? w / W : 0.0,
               slots - ideal, umin, b->unit_max, ideal_unit);
        if (s->extra) {
            printf(", \"copies\": %" PRIu32 ", \"zone\": ", dch_map_node_copies(m, id));
            json_string(stdout, dch_map_node_zone(m, id));
        }
        printf(", \"drained\": ");
        json_string(stdout, drain_mode_name(mode));
        if (mode != 0)
            printf(", \"drain_order\": %zu", drain_order(s, id));
        print_load_cells(s, id, 1);
        printf("}");
    } else {
        printf("%6" PRIu32 " %-16s %10" PRIu32 " %9" PRIu32 " %9.4f %9.4f %+9.3f %4" PRIu32
               "..%-4" PRIu32 " %9.3f",
               id, dch_map_node_name(m, id), dch_map_node_weight(m, id), slots,
               100.0 * slots / s->P, W > 0 ? 100.0 * w / W : 0.0, slots - ideal, umin,
               b->unit_max, ideal_unit);
        if (s->extra)
            printf(" %9" PRIu32 " %s", dch_map_node_copies(m, id),
                   or_dash(dch_map_node_zone(m, id)));
        print_drain_cell(s, id, mode);
        print_load_cells(s, id, 0);
        printf("\n");
    }
}

/* With LOADS (a->pos[1]): every member's load into s->ml and s->loads; 0,
 * or the exit status after saying why not. */
static int show_loads(const args *a, const dch_map *m, summary *s)
{
    if (a->npos < 2)
        return 0;
    uint64_t *load, total;
    const int status = read_loads(a->pos[1], s->P, &load, &total);
    if (status != 0)
        return status;
    s->ml = calloc(s->limit + 1, sizeof *s->ml);
    if (s->ml == NULL) {
        free(load);
        return out_of_memory();
    }
    member_loads(m, load, s->ml, &s->loads);
    free(load);
    return 0;
}

/* Every part of show but the loading of the map; 0 or the exit status. */
static int show_map(const args *a, const dch_map *m, summary *s, balance *b)
{
    const char *path = a->pos[0];
    dch_map_get_config(m, &s->cfg);
    s->replicas = map_replicas(m);
    s->extra = s->replicas > 1 || map_has_zones(m);
    s->limit = dch_map_id_limit(m);
    s->P = dch_map_slot_count(m);
    if (measure_balance(m, &s->cfg, b) != 0 || read_drains(m, s) != 0)
        return out_of_memory();
    const int status = show_loads(a, m, s);
    if (status != 0)
        return status;
    summarize(m, b, s);
    const int json = (a->given & OPT_JSON) != 0;
    if (json)
        print_head_json(path, m, s);
    else
        print_head_text(path, m, s);
    int first = 1;
    for (uint32_t id = 0; id < s->limit; id++) {
        if (dch_map_node_name(m, id) != NULL) {
            print_member(m, s, &b[id], id, json, first);
            first = 0;
        }
    }
    if (json)
        printf("%s]}\n", first ? "" : "\n  ");
    return 0;
}

int cmd_show(const command *cmd, const args *a)
{
    (void)cmd;
    dch_map *m;
    int status = load(a->pos[0], &m);
    if (status != 0)
        return status;
    const uint32_t limit = dch_map_id_limit(m);
    balance *b = malloc((limit ? limit : 1) * sizeof *b);
    summary s;
    memset(&s, 0, sizeof s);
    status = b == NULL ? out_of_memory() : show_map(a, m, &s, b);
    summary_free(&s);
    free(b);
    dch_map_free(m);
    return status;
}

/* ---- lookup ----------------------------------------------------------- */

/* Where lookup's answers go, and how. */
typedef struct answers {
    const dch_map *m;
    int json;
    size_t count; /* answers printed so far (JSON: commas between them) */
} answers;

/* One key's answer in JSON: the primary as id and name, and with replicas
 * every copy, primary first, as "copies". */
static void print_answer_json(const answers *o, const char *key, size_t len, uint64_t h,
                              const uint32_t *ids, size_t n)
{
    const dch_map *m = o->m;
    const uint32_t id = n > 0 ? ids[0] : DCH_NODE_NONE;
    printf("%s\n  {\"key\": ", o->count == 0 ? "" : ",");
    json_bytes(stdout, key, len);
    printf(", \"hash\": \"%016" PRIx64 "\", \"slot\": %" PRIu32 ", \"id\": ", h,
           dch_map_slot_of(m, h));
    if (id == DCH_NODE_NONE)
        printf("null");
    else
        printf("%" PRIu32, id);
    printf(", \"name\": ");
    json_string(stdout, dch_map_node_name(m, id));
    if (map_replicas(m) > 1) {
        printf(", \"copies\": [");
        for (size_t i = 0; i < n; i++) {
            printf("%s", i ? ", " : "");
            json_string(stdout, dch_map_node_name(m, ids[i]));
        }
        printf("]");
    }
    printf("}");
}

/*
 * One key's answer. Text: KEY, then a column per copy, primary first (one
 * column with one copy per slot, "-" when no member owns anything),
 * tab-separated.
 */
static void answer(answers *o, const char *key, size_t len)
{
    const uint64_t h = dch_map_hash(o->m, key, len);
    uint32_t ids[DCH_MAP_MAX_REPLICAS];
    size_t n = dch_map_lookup_replicas_hash(o->m, h, ids, DCH_MAP_MAX_REPLICAS);
    n = n < DCH_MAP_MAX_REPLICAS ? n : DCH_MAP_MAX_REPLICAS;
    if (o->json) {
        print_answer_json(o, key, len, h, ids, n);
    } else {
        text_bytes(stdout, key, len);
        if (n == 0)
            fputs("\t-", stdout);
        for (size_t c = 0; c < n; c++) {
            putc('\t', stdout);
            fputs(or_dash(dch_map_node_name(o->m, ids[c])), stdout);
        }
        putc('\n', stdout);
    }
    o->count++;
}

/* Standard input cut into keys, a line each. */
typedef struct key_reader {
    char *buf;
    size_t cap, start, end; /* the bytes not yet cut: buf[start .. end) */
    int eof;
    int drained; /* the last read took all there was: the next may wait */
} key_reader;

#define KEY_READ_SIZE ((size_t)1 << 20)

/*
 * Read more of standard input behind what is left of the last block. The
 * reads are read(2) of up to a megabyte, not stdio's, for their short
 * counts: a short read means the writer has sent all it has for now, and the
 * next read may wait for it, so the answers so far are flushed first. From
 * a file that never happens but at the end; from a pipe it costs a write
 * per pipe buffer; typed at a terminal, each line is answered at once.
 * 0, or -1 with errno set: a failed read or flush, or no memory.
 */
static int fill_keys(key_reader *r)
{
    if (r->start > 0) {
        memmove(r->buf, r->buf + r->start, r->end - r->start);
        r->end -= r->start;
        r->start = 0;
    }
    if (r->end == r->cap) { /* one line fills the buffer: double it */
        char *g = realloc(r->buf, 2 * r->cap);
        if (g == NULL) {
            errno = ENOMEM;
            return -1;
        }
        r->buf = g;
        r->cap *= 2;
    }
    if (r->drained && fflush(stdout) != 0)
        return -1; /* ferror(stdout) tells the caller it was no read */
    ssize_t got;
    do
        got = read(STDIN_FILENO, r->buf + r->end, r->cap - r->end);
    while (got < 0 && errno == EINTR);
    if (got < 0)
        return -1;
    r->drained = (size_t)got < r->cap - r->end;
    r->eof = got == 0;
    r->end += (size_t)got;
    return 0;
}

/*
 * The next key, in place in the buffer (valid until the next call): a line
 * without its "\n" or "\r\n"; an empty line is the empty key, and a last
 * line without "\n" is a key too. 1, 0 at the end of input, or -1 with
 * errno set (a failed read, no memory, or the flush of fill_keys).
 */
static int next_key(key_reader *r, const char **key, size_t *len)
{
    for (;;) {
        char *s = r->buf + r->start;
        const char *nl = memchr(s, '\n', r->end - r->start);
        if (nl != NULL || (r->eof && r->start < r->end)) {
            size_t n = nl != NULL ? (size_t)(nl - s) : r->end - r->start;
            r->start += n + (nl != NULL);
            if (nl != NULL && n > 0 && s[n - 1] == '\r')
                n--;
            *key = s;
            *len = n;
            return 1;
        }
        if (r->eof)
            return 0;
        if (fill_keys(r) != 0)
            return -1;
    }
}

/* Answers stay in a buffer of their own until it fills: a write per 256
 * KiB, not per 4 KiB (a pipe's st_blksize, stdio's choice). Static, as
 * stdout uses it until the tool exits. */
static char answer_buf[(size_t)1 << 18];

/* lookup MAP -: every line of standard input answered, as a key given as
 * an argument is. Stops at the first failed write (the reader went away). */
static int lookup_stream(answers *o)
{
    key_reader r = {malloc(KEY_READ_SIZE), KEY_READ_SIZE, 0, 0, 0, 0};
    if (r.buf == NULL)
        return out_of_memory();
    const char *key;
    size_t len;
    int got;
    while ((got = next_key(&r, &key, &len)) == 1) {
        answer(o, key, len);
        if (ferror(stdout))
            break;
    }
    const int err = errno; /* of the failed write or read, if one failed */
    free(r.buf);
    if (ferror(stdout))
        return write_error("standard output", err);
    if (got < 0 && err == ENOMEM)
        return out_of_memory();
    if (got < 0) {
        fprintf(stderr, "dchctl: standard input: %s\n", strerror(err));
        return EXIT_RUNTIME;
    }
    return 0;
}

int cmd_lookup(const command *cmd, const args *a)
{
    for (int i = 1; i < a->npos; i++)
        if (is_stdio(a->pos[i]) && a->npos > 2)
            return usage_error(cmd, "%s",
                               "KEY '-' (keys from standard input) must be the only KEY; a "
                               "key '-' goes after --");
    dch_map *m;
    int status = check_map_first(cmd, a);
    if (status != 0 || (status = load(a->pos[0], &m)) != 0)
        return status;
    answers o = {m, (a->given & OPT_JSON) != 0, 0};
    const int stream = is_stdio(a->pos[1]);
    if (stream) /* before anything is written, as setvbuf must be */
        setvbuf(stdout, answer_buf, _IOFBF, sizeof answer_buf);
    if (o.json)
        printf("[");
    if (stream)
        status = lookup_stream(&o);
    else
        for (int i = 1; i < a->npos; i++)
            answer(&o, a->pos[i], strlen(a->pos[i]));
    if (o.json && status == 0)
        printf("%s]\n", o.count > 0 ? "\n" : "");
    dch_map_free(m);
    return status;
}
