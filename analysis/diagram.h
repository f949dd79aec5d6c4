/* SPDX-License-Identifier: MIT */
/*
 * Ring diagrams: a scheme's ownership before and after one change, drawn as
 * two rings side by side in a self-contained SVG file. Arcs are coloured by
 * member; the arcs whose owner changed are marked by a dark band outside
 * both rings, so the reader sees where the moved data came from and where it
 * went. Angle 0 (hash 0) is at the top and hashes grow clockwise, as in the
 * figures of the descriptions the library follows.
 */
#ifndef DCH_ANALYSIS_DIAGRAM_H
#define DCH_ANALYSIS_DIAGRAM_H

#include "metrics.h"

/** What to draw. Owners in both lists are numbers below nnames. */
typedef struct an_diagram {
    const char *title;
    const char *before_label;
    const char *after_label;
    const char *note;          /* a line under the rings; may be NULL */
    const an_ranges *before;
    const an_ranges *after;
    const char *const *names;  /* names[owner] */
    uint32_t nnames;
    uint32_t units;            /* > 0: draw this many equal unit boundaries */
} an_diagram;

/** A member's colour, "#rrggbb", the same for an owner number everywhere. */
const char *an_diagram_colour(uint32_t owner);

/**
 * Write the diagram to `path`.
 * @return DCH_OK, DCH_EINVAL (an owner out of range or a list that is not
 *         well formed), DCH_ENOMEM, DCH_EIO (the file cannot be written).
 */
int an_diagram_write(const char *path, const an_diagram *d);

#endif /* DCH_ANALYSIS_DIAGRAM_H */
