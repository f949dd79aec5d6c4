/* SPDX-License-Identifier: MIT */
/*
 * The schemes and their ring diagrams: each scheme drawn before and after
 * one join and one removal, small enough that every arc shows.
 */
#include "sections.h"

#include "diagram.h"

#include <stdio.h>
#include <string.h>

/* Ring diagrams draw rings of more points with this many, so arcs stay
 * visible; the measurements use the configured count. */
#define DIAGRAM_RING_POINTS 16u

static const char *const NAMES[] = {"node-01", "node-02", "node-03",
                                    "node-04"};
#define NNAMES 4u

/* Write the diagram of one change: `leaver` left, or (NULL) node-04 joined. */
static int write_diagram(an_run *r, const an_scheme_spec *spec,
                         const char *leaver, const an_moves *mv,
                         const an_ranges *before, const an_ranges *after,
                         const char *file, const char *title)
{
    const bool join = leaver == NULL;
    char note[256], path[4096], before_label[64], after_label[64];
    if (join)
        snprintf(note, sizeof note,
                 "%s joins: %.1f%% of the ring moves (optimum 25%%), "
                 "from %u donor%s",
                 NAMES[NNAMES - 1], 100.0 * mv->moved, (unsigned)mv->donors,
                 mv->donors == 1 ? "" : "s");
    else
        snprintf(note, sizeof note,
                 "%s leaves: %.1f%% of the ring moves (its share), "
                 "to %u receiver%s",
                 leaver, 100.0 * mv->moved, (unsigned)mv->receivers,
                 mv->receivers == 1 ? "" : "s");
    snprintf(before_label, sizeof before_label, "before: %u nodes",
             (unsigned)(join ? NNAMES - 1 : NNAMES));
    snprintf(after_label, sizeof after_label, "after: %u nodes",
             (unsigned)(join ? NNAMES : NNAMES - 1));
    an_diagram d = {title,  before_label, after_label,
                    note,   before,       after,
                    NAMES,  NNAMES,
                    spec->kind == AN_KIND_MAP ? spec->units : 0};
    an_report_path(r->report, file, path, sizeof path);
    return an_diagram_write(path, &d);
}

/* Draw one change (a join of names[nnames-1] to the others, or the removal
 * of names[leaver]) for one scheme. */
static int draw_change(an_run *r, const an_scheme_spec *spec, bool join,
                       uint32_t leaver, const char *file, const char *title)
{
    const char *const *names = NAMES;
    const uint32_t nnames = NNAMES;
    an_scheme sc;
    int rc = an_scheme_new(&sc, spec);
    if (rc != DCH_OK)
        return an_fail("diagram", rc);
    an_ranges before = {NULL, 0}, after = {NULL, 0};
    an_changes ch = {NULL, 0, 0};
    an_moves mv = {0};
    const an_name_list l = {names, nnames};
    const uint32_t subject = join ? nnames - 1 : leaver;
    uint32_t first = join ? nnames - 1 : nnames;
    for (uint32_t g = 0; g < first && rc == DCH_OK; g++)
        rc = an_scheme_add(&sc, names[g], 1, NULL);
    if (rc == DCH_OK)
        rc = an_ranges_by_name(&sc, names, nnames, &before);
    if (rc == DCH_OK)
        rc = an_scheme_change(&sc, join ? AN_OP_ADD : AN_OP_REMOVE,
                              names[subject], 1, NULL, an_position_of, &l, &ch);
    if (rc == DCH_OK)
        rc = an_ranges_by_name(&sc, names, nnames, &after);
    if (rc == DCH_OK)
        rc = an_moves_of(&ch, nnames, subject, &mv);
    if (rc == DCH_OK)
        rc = write_diagram(r, spec, join ? NULL : names[leaver], &mv, &before,
                           &after, file, title);
    an_changes_free(&ch);
    an_ranges_free(&before);
    an_ranges_free(&after);
    an_scheme_free(&sc);
    return rc == DCH_OK ? DCH_OK : an_fail("diagram", rc);
}

/* A scheme as its diagram draws it: small enough to see each arc, with
 * `drawn` saying how when it differs from the measured scheme. */
static void diagram_spec(const an_run *r, int s, an_scheme_spec *spec, char *drawn,
                         size_t n)
{
    *spec = r->spec[s];
    drawn[0] = '\0';
    if (spec->kind == AN_KIND_MAP) {
        spec->units = 8;
        spec->slots_per_unit = 8;
    } else if (spec->points > DIAGRAM_RING_POINTS) {
        spec->points = DIAGRAM_RING_POINTS;
        snprintf(drawn, n, " (drawn with %u points per node)", DIAGRAM_RING_POINTS);
    }
}

/* One diagram per scheme of the same change: node-04 joining three nodes,
 * or node-02 leaving four. */
static int draw_every_scheme(an_run *r, bool join)
{
    for (int s = 0; s < AN_SCHEMES; s++) {
        an_scheme_spec spec;
        char file[96], title[160], drawn[64];
        diagram_spec(r, s, &spec, drawn, sizeof drawn);
        snprintf(file, sizeof file, "diagram_%s_%s.svg",
                 join ? "join" : "remove", r->label[s]);
        snprintf(title, sizeof title, "%s%s: %s", r->label[s], drawn,
                 join ? "node-04 joins three nodes" : "node-02 leaves four nodes");
        int rc = draw_change(r, &spec, join, join ? 0 : 1, file, title);
        if (rc != DCH_OK)
            return rc;
        an_report_image(r->report, file, title);
    }
    return DCH_OK;
}

int an_section_schemes(an_run *r)
{
    const an_options *o = &r->opt;
    char html[4096];
    snprintf(html, sizeof html,
             "<p class=\"lead\">Four schemes route the same keys, each measured "
             "through the public API of libdch only. The diagrams draw each one "
             "before and after one join and one removal: a DCH joiner takes an "
             "equal sliver from every member and a leaver's slots go to all the "
             "others, while on a ring a joiner takes whatever arcs its points land "
             "in.</p><ul>"
             "<li><b>dch</b>: the DCH partition map with its defaults here, "
             "%u minimum arc units of %u slots (P = %u slots). Every member "
             "owns a slice of every unit in proportion to its weight; the "
             "table of slot owners is shared state that clients copy.</li>"
             "<li><b>%s</b>: the classic consistent-hash ring with %u points "
             "per unit of weight (ketama's choice is 160). Every client "
             "computes it alone from the member names.</li>"
             "<li><b>ring-1</b>: the plain ring that " AN_DCH_DESCRIPTION
             " compares DCH with, one point per node.</li>"
             "<li><b>libmemcached</b>: ketama exactly as libmemcached 1.1 "
             "builds it in its weighted mode (libdch's ring with ketama "
             "placement: MD5 points named after the servers, point counts "
             "from each server's weight share, in single precision). Its "
             "point counts depend on every member, so a join, a leave or a "
             "weight change can move keys between members it does not "
             "touch.</li></ul>"
             "<p>The diagrams draw each scheme before and after one change "
             "(hash 0 at the top, hashes growing clockwise). Arcs are "
             "coloured by member; the dark band outside the rings marks the "
             "arcs that changed owner. So that the arcs are visible, the DCH "
             "map is drawn with 8 units of 8 slots (dashed lines are unit "
             "boundaries) and %s with %u points per node instead of %u; the "
             "algorithms are the same at any size, and every section below "
             "measures the full-size schemes.</p>",
             (unsigned)o->units, (unsigned)o->slots,
             (unsigned)(o->units * o->slots), r->label[1],
             (unsigned)o->points, r->label[1],
             (unsigned)(o->points < DIAGRAM_RING_POINTS ? o->points : DIAGRAM_RING_POINTS),
             (unsigned)o->points);
    if (an_section_begin(r, "schemes", html) != 0)
        return DCH_ENOMEM;
    int rc = draw_every_scheme(r, true);
    return rc == DCH_OK ? draw_every_scheme(r, false) : rc;
}
