/* SPDX-License-Identifier: MIT */
/*
 * dchctl compare-ketama: a libmemcached fleet under ketama and under DCH. The
 * fleet file lists the servers as libmemcached is given them; the ring is
 * the one libmemcached 1.1 builds (weighted ketama, MD5) and the map a DCH
 * map of the same members. Both are compared by the share of the keys each
 * server holds and by what moves, and between whom, when one server joins
 * the others and when it leaves.
 */
#include "cli.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define KETAMA_DEFAULT_PORT 11211u

/* One server of the fleet file: its ring member name and weight. */
typedef struct kserver {
    char name[DCH_NAME_MAX + 1]; /* "host", or "host:port" off 11211 */
    uint32_t weight;
} kserver;

typedef struct fleet {
    kserver *sv;
    size_t n, cap;
} fleet;

/*
 * One "host[:port] [weight]" line into a server named as libmemcached names
 * its points: "host" on port 11211 (also when no port is given), "host:port"
 * otherwise. Weight 0, or none, is 1, as in libmemcached. 0 or a message.
 */
static const char *parse_server(char *line, kserver *out)
{
    char *fields[2] = {NULL, NULL};
    int nf = 0;
    for (char *tok = strtok(line, " \t\r\n"); tok != NULL; tok = strtok(NULL, " \t\r\n")) {
        if (nf == 2)
            return "expected \"host:port weight\"";
        fields[nf++] = tok;
    }
    if (nf == 0)
        return "no host";
    /* The tool's one number parser, so a line is refused in the words an
     * argument is; the message lives until the next call. */
    static const number_rule port_rule = {"port", 1, 65535, 0};
    static char refusal[256];
    char *colon = strrchr(fields[0], ':');
    uint64_t port = KETAMA_DEFAULT_PORT, weight = 1;
    if (colon != NULL) {
        *colon = '\0';
        if (parse_number(colon + 1, &port_rule, &port) != 0)
            return number_refusal(refusal, sizeof refusal, &port_rule, colon + 1);
    }
    if (fields[0][0] == '\0')
        return "no host";
    if (nf == 2 && parse_number(fields[1], &weight_rule, &weight) != 0)
        return number_refusal(refusal, sizeof refusal, &weight_rule, fields[1]);
    out->weight = weight == 0 ? 1 : (uint32_t)weight;
    int len = port == KETAMA_DEFAULT_PORT
                  ? snprintf(out->name, sizeof out->name, "%s", fields[0])
                  : snprintf(out->name, sizeof out->name, "%s:%" PRIu64, fields[0], port);
    if (len < 0 || (size_t)len >= sizeof out->name)
        return "host:port is longer than 255 bytes";
    return NULL;
}

/* The fleet file at path, or standard input for '-'; 0 or EXIT_RUNTIME. */
static int read_fleet(const char *path, fleet *f)
{
    memset(f, 0, sizeof *f);
    FILE *in = is_stdio(path) ? stdin : fopen(path, "r");
    const char *shown = input_name(path);
    if (in == NULL) {
        fprintf(stderr, "dchctl: %s: %s\n", path, strerror(errno));
        return EXIT_RUNTIME;
    }
    char line[1024];
    unsigned lineno = 0;
    const char *bad = NULL;
    while (bad == NULL && fgets(line, sizeof line, in) != NULL) {
        lineno++;
        char *s = line + strspn(line, " \t\r\n");
        if (*s == '\0' || *s == '#')
            continue;
        kserver *sv = grow(f->sv, f->n, &f->cap, sizeof *sv, 16);
        if (sv == NULL) {
            bad = "out of memory";
            break;
        }
        f->sv = sv;
        bad = parse_server(s, &f->sv[f->n]);
        for (size_t i = 0; bad == NULL && i < f->n; i++)
            if (strcmp(f->sv[i].name, f->sv[f->n].name) == 0)
                bad = "the server is listed twice";
        if (bad == NULL && ++f->n > DCH_RING_MAX_NODES)
            bad = "more than 65535 servers, the most a ring holds";
    }
    if (bad == NULL && ferror(in))
        bad = strerror(errno);
    if (in != stdin)
        fclose(in);
    if (bad != NULL) {
        fprintf(stderr, "dchctl: %s:%u: %s\n", shown, lineno, bad);
        free(f->sv);
        return EXIT_RUNTIME;
    }
    if (f->n < 2) {
        fprintf(stderr, "dchctl: %s: needs at least 2 servers\n", shown);
        free(f->sv);
        return EXIT_RUNTIME;
    }
    return 0;
}

/* The fleet's servers but `skip` (none when skip >= n), then `last` if it
 * is < n: the ketama ring and the DCH map of those members, in that order. */
static int build_both(const fleet *f, size_t skip, size_t last, dch_ring **ring,
                      dch_map **map)
{
    dch_ring_config rc;
    dch_ring_config_default(&rc);
    rc.placement = DCH_RING_PLACE_KETAMA;
    *ring = NULL;
    *map = NULL;
    if (dch_ring_new(ring, &rc) != DCH_OK || dch_map_new(map, NULL) != DCH_OK)
        return -1;
    for (size_t k = 0; k <= f->n; k++) {
        size_t i = k < f->n ? k : last;
        if (i >= f->n || i == skip || (k < f->n && i == last))
            continue;
        if (dch_ring_add_node(*ring, f->sv[i].name, f->sv[i].weight, NULL) != DCH_OK ||
            dch_map_add_node(*map, f->sv[i].name, f->sv[i].weight, NULL) != DCH_OK)
            return -1;
    }
    return 0;
}

/* Copies of ring and map with the member `name` removed from each. */
static int remove_both(const dch_ring *r, const dch_map *m, const char *name,
                       dch_ring **ring, dch_map **map)
{
    uint32_t rid, mid;
    *ring = NULL;
    *map = NULL;
    if (dch_ring_clone(ring, r) != DCH_OK || dch_map_clone(map, m) != DCH_OK ||
        dch_ring_find_node(*ring, name, &rid) != DCH_OK ||
        dch_map_find_node(*map, name, &mid) != DCH_OK ||
        dch_ring_remove_node(*ring, rid) != DCH_OK || dch_map_remove_node(*map, mid) != DCH_OK)
        return -1;
    return 0;
}

/* Ownership with owners renumbered as indices into the fleet. */
typedef struct owned {
    dch_range *rg;
    size_t n;
} owned;

static int renumber(const fleet *f, owned *o, const char *(*name_of)(const void *, uint32_t),
                    const void *scheme)
{
    for (size_t i = 0; i < o->n; i++) {
        const char *name = o->rg[i].owner == DCH_NODE_NONE ? NULL
                                                           : name_of(scheme, o->rg[i].owner);
        uint32_t idx = DCH_NODE_NONE;
        for (size_t s = 0; name != NULL && s < f->n; s++)
            if (strcmp(f->sv[s].name, name) == 0)
                idx = (uint32_t)s;
        o->rg[i].owner = idx;
    }
    return 0;
}

static const char *ring_name(const void *r, uint32_t id)
{
    return dch_ring_node_name(r, id);
}

static const char *map_name(const void *m, uint32_t id)
{
    return dch_map_node_name(m, id);
}

static int owned_of(const fleet *f, const dch_ring *r, const dch_map *m, owned *o)
{
    size_t n = 0;
    if (r != NULL)
        (void)dch_ring_ranges(r, NULL, 0, &n);
    else
        (void)dch_map_ranges(m, NULL, 0, &n);
    o->rg = malloc(n * sizeof *o->rg);
    o->n = n;
    if (o->rg == NULL)
        return -1;
    int rc = r != NULL ? dch_ring_ranges(r, o->rg, n, &n) : dch_map_ranges(m, o->rg, n, &n);
    if (rc != DCH_OK)
        return -1;
    return renumber(f, o, r != NULL ? ring_name : map_name, r != NULL ? (const void *)r
                                                                      : (const void *)m);
}

typedef struct kmove {
    uint32_t from, to;
    double fraction;
} kmove;

typedef struct kmoves {
    kmove *mv;
    size_t n, cap;
} kmoves;

static int collect_kmove(const dch_range_change *c, void *ctx)
{
    kmoves *k = ctx;
    for (size_t i = 0; i < k->n; i++)
        if (k->mv[i].from == c->from && k->mv[i].to == c->to) {
            k->mv[i].fraction += dch_range_fraction(c->lo, c->hi);
            return 0;
        }
    kmove *mv = grow(k->mv, k->n, &k->cap, sizeof *mv, 16);
    if (mv == NULL)
        return 1;
    k->mv = mv;
    k->mv[k->n++] = (kmove){c->from, c->to, dch_range_fraction(c->lo, c->hi)};
    return 0;
}

static int kmove_cmp(const void *x, const void *y)
{
    const kmove *a = x, *b = y;
    return (a->fraction < b->fraction) - (a->fraction > b->fraction);
}

static const char *server_name(const fleet *f, uint32_t idx)
{
    return idx < f->n ? f->sv[idx].name : "-";
}

/* What moves from `before` to `after`: the total, then each (from -> to)
 * pair, largest first (at most 12, then a count of the rest). */
static int print_kmoves(const fleet *f, const char *scheme, const owned *before,
                        const owned *after)
{
    kmoves k = {NULL, 0, 0};
    if (dch_range_diff(before->rg, before->n, after->rg, after->n, collect_kmove, &k) != 0) {
        free(k.mv);
        return -1;
    }
    qsort(k.mv, k.n, sizeof *k.mv, kmove_cmp);
    double total = 0;
    for (size_t i = 0; i < k.n; i++)
        total += k.mv[i].fraction;
    printf("  %-24s %8.4f%% of the keys move, in %zu (from -> to) pair%s\n", scheme,
           100.0 * total, k.n, k.n == 1 ? "" : "s");
    for (size_t i = 0; i < k.n && i < 12; i++)
        printf("    %s -> %s: %.4f%%\n", server_name(f, k.mv[i].from),
               server_name(f, k.mv[i].to), 100.0 * k.mv[i].fraction);
    if (k.n > 12)
        printf("    ... and %zu more pairs\n", k.n - 12);
    free(k.mv);
    return 0;
}

static void shares_of(const owned *o, size_t n, double *share)
{
    for (size_t i = 0; i < n; i++)
        share[i] = 0;
    for (size_t i = 0; i < o->n; i++)
        if (o->rg[i].owner < n)
            share[o->rg[i].owner] += dch_range_fraction(o->rg[i].lo, o->rg[i].hi);
}

static void print_balance(const fleet *f, const owned *ring, const owned *map)
{
    double W = 0;
    for (size_t i = 0; i < f->n; i++)
        W += f->sv[i].weight;
    double *rs = malloc(2 * f->n * sizeof *rs);
    if (rs == NULL)
        return;
    double *ms = rs + f->n;
    shares_of(ring, f->n, rs);
    shares_of(map, f->n, ms);
    printf("balance: each server's share of the keys, and share / weight share\n");
    printf("  %-24s %10s %9s %9s %7s %9s %7s\n", "server", "weight", "ideal%", "ketama%",
           "x", "dch%", "x");
    double rmin = 1e300, rmax = 0, mmin = 1e300, mmax = 0;
    for (size_t i = 0; i < f->n; i++) {
        double ideal = f->sv[i].weight / W;
        double rx = rs[i] / ideal, mx = ms[i] / ideal;
        rmin = rx < rmin ? rx : rmin;
        rmax = rx > rmax ? rx : rmax;
        mmin = mx < mmin ? mx : mmin;
        mmax = mx > mmax ? mx : mmax;
        printf("  %-24s %10" PRIu32 " %9.4f %9.4f %7.4f %9.4f %7.4f\n", f->sv[i].name,
               f->sv[i].weight, 100.0 * ideal, 100.0 * rs[i], rx, 100.0 * ms[i], mx);
    }
    printf("  ketama (libmemcached): %.4f .. %.4f x the weight share\n", rmin, rmax);
    printf("  dch:                   %.4f .. %.4f x the weight share\n", mmin, mmax);
    free(rs);
}

/* The four fleets compared: all servers in file order; the others; the
 * others, then the chosen server added last (its join); all, then the
 * chosen server removed (its removal: a DCH map depends on its history, so
 * this is not the map of the others built afresh). */
enum { FULL, BASE, JOIN, GONE, NSCENES };

typedef struct scene {
    dch_ring *ring;
    dch_map *map;
    owned ring_owned, map_owned;
} scene;

static int build_scenes(const fleet *f, size_t chosen, scene s[NSCENES])
{
    if (build_both(f, f->n, f->n, &s[FULL].ring, &s[FULL].map) != 0 ||
        build_both(f, chosen, f->n, &s[BASE].ring, &s[BASE].map) != 0 ||
        build_both(f, f->n, chosen, &s[JOIN].ring, &s[JOIN].map) != 0 ||
        remove_both(s[FULL].ring, s[FULL].map, f->sv[chosen].name, &s[GONE].ring,
                    &s[GONE].map) != 0)
        return -1;
    for (int i = 0; i < NSCENES; i++)
        if (owned_of(f, s[i].ring, NULL, &s[i].ring_owned) != 0 ||
            owned_of(f, NULL, s[i].map, &s[i].map_owned) != 0)
            return -1;
    return 0;
}

static void free_scenes(scene s[NSCENES])
{
    for (int i = 0; i < NSCENES; i++) {
        free(s[i].ring_owned.rg);
        free(s[i].map_owned.rg);
        dch_ring_free(s[i].ring);
        dch_map_free(s[i].map);
    }
}

/* The index of the server the second argument names (default: the last
 * one listed), or f->n when it names none. */
static size_t chosen_server(const fleet *f, const args *a)
{
    if (a->npos < 2)
        return f->n - 1;
    kserver want;
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", a->pos[1]);
    const char *bad = parse_server(buf, &want);
    size_t chosen = f->n;
    for (size_t i = 0; bad == NULL && i < f->n; i++)
        if (strcmp(f->sv[i].name, want.name) == 0)
            chosen = i;
    return chosen;
}

static int print_comparison(const fleet *f, size_t chosen, const scene s[NSCENES])
{
    const kserver *c = &f->sv[chosen];
    double W = 0;
    for (size_t i = 0; i < f->n; i++)
        W += f->sv[i].weight;
    printf("servers: %zu, total weight %.0f; ketama as libmemcached 1.1 (weighted, MD5)\n",
           f->n, W);
    if (f->n > 100)
        printf("note: libmemcached's continuum holds 100 servers (Debian's build aborts "
               "past it); the same rules are applied here\n");
    printf("chosen server: %s, weight %" PRIu32 ", %.4f%% of the weight\n\n", c->name,
           c->weight, 100.0 * c->weight / W);
    print_balance(f, &s[FULL].ring_owned, &s[FULL].map_owned);
    printf("\njoin of %s (the others, then it):\n", c->name);
    if (print_kmoves(f, "ketama (libmemcached):", &s[BASE].ring_owned, &s[JOIN].ring_owned) != 0 ||
        print_kmoves(f, "dch:", &s[BASE].map_owned, &s[JOIN].map_owned) != 0)
        return -1;
    printf("\nremoval of %s:\n", c->name);
    if (print_kmoves(f, "ketama (libmemcached):", &s[FULL].ring_owned, &s[GONE].ring_owned) != 0 ||
        print_kmoves(f, "dch:", &s[FULL].map_owned, &s[GONE].map_owned) != 0)
        return -1;
    return 0;
}

int cmd_compare_ketama(const command *cmd, const args *a)
{
    fleet f;
    int status = read_fleet(a->pos[0], &f);
    if (status != 0)
        return status;
    const size_t chosen = chosen_server(&f, a);
    if (chosen == f.n) {
        free(f.sv);
        return usage_error(cmd, "%s is not in the server list", a->pos[1]);
    }
    scene s[NSCENES];
    memset(s, 0, sizeof s);
    status = 0;
    if (build_scenes(&f, chosen, s) != 0 || print_comparison(&f, chosen, s) != 0)
        status = out_of_memory();
    free_scenes(s);
    free(f.sv);
    return status;
}
