/* SPDX-License-Identifier: MIT */
/*
 * SVG ring diagrams, written by hand (no renderer needed). Each range becomes
 * an annular sector; a sector longer than half a turn is split in two, since
 * one SVG arc command cannot draw a full circle.
 */
#include "diagram.h"

#include "outfile.h"

#include <math.h>
#include <stdio.h>

static const double PI = 3.14159265358979323846;

static const char *const PALETTE[] = {
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
    "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#86bcb6",
};

const char *an_diagram_colour(uint32_t owner)
{
    if (owner == DCH_NODE_NONE)
        return "#eeeeee";
    return PALETTE[owner % (sizeof PALETTE / sizeof PALETTE[0])];
}

/* Start and end of a range as fractions of the turn. */
static double frac_of(uint64_t h)
{
    return ldexp((double)h, -64);
}

static double end_frac(uint64_t hi)
{
    return hi == UINT64_MAX ? 1.0 : frac_of(hi + 1);
}

static void point(double cx, double cy, double r, double f, double *x,
                  double *y)
{
    double a = 2.0 * PI * f - PI / 2.0;
    *x = cx + r * cos(a);
    *y = cy + r * sin(a);
}

static void sector(FILE *f, double cx, double cy, double r0, double r1,
                   double f0, double f1, const char *fill)
{
    if (f1 - f0 > 0.5) {
        double mid = (f0 + f1) / 2.0;
        sector(f, cx, cy, r0, r1, f0, mid, fill);
        sector(f, cx, cy, r0, r1, mid, f1, fill);
        return;
    }
    double x0, y0, x1, y1, x2, y2, x3, y3;
    point(cx, cy, r1, f0, &x0, &y0);
    point(cx, cy, r1, f1, &x1, &y1);
    point(cx, cy, r0, f1, &x2, &y2);
    point(cx, cy, r0, f0, &x3, &y3);
    fprintf(f,
            "<path fill=\"%s\" d=\"M%.2f %.2fA%.1f %.1f 0 0 1 %.2f %.2f"
            "L%.2f %.2fA%.1f %.1f 0 0 0 %.2f %.2fZ\"/>\n",
            fill, x0, y0, r1, r1, x1, y1, x2, y2, r0, r0, x3, y3);
}

static int check(const an_ranges *rs, uint32_t nnames)
{
    if (rs->n == 0 || rs->v[0].lo != 0 || rs->v[rs->n - 1].hi != UINT64_MAX)
        return DCH_EINVAL;
    for (size_t i = 0; i < rs->n; i++)
        if (rs->v[i].owner != DCH_NODE_NONE && rs->v[i].owner >= nnames)
            return DCH_EINVAL;
    return DCH_OK;
}

static void xml_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        default: fputc(*s, f);
        }
    }
}

/* One ring: the owners' sectors, the moved band, the unit boundaries. */
static void ring(FILE *f, double cx, double cy, const an_ranges *rs,
                 const an_changes *moved, uint32_t units, const char *label)
{
    const double r0 = 105.0, r1 = 165.0;
    for (size_t i = 0; i < rs->n; i++)
        sector(f, cx, cy, r0, r1, frac_of(rs->v[i].lo), end_frac(rs->v[i].hi),
               an_diagram_colour(rs->v[i].owner));
    for (size_t i = 0; i < moved->n; i++)
        sector(f, cx, cy, r1 + 3.0, r1 + 13.0, frac_of(moved->v[i].lo),
               end_frac(moved->v[i].hi), "#222222");
    if (units > 1 && units <= 256) {
        for (uint32_t u = 0; u < units; u++) {
            double x0, y0, x1, y1;
            point(cx, cy, r0 - 6.0, (double)u / units, &x0, &y0);
            point(cx, cy, r1 + 18.0, (double)u / units, &x1, &y1);
            fprintf(f,
                    "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" "
                    "stroke=\"#555\" stroke-width=\"0.8\" stroke-dasharray=\"3 2\"/>\n",
                    x0, y0, x1, y1);
        }
    }
    fprintf(f,
            "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" "
            "font-size=\"14\">",
            cx, cy + 5.0);
    xml_text(f, label);
    fputs("</text>\n", f);
}

int an_diagram_write(const char *path, const an_diagram *d)
{
    int rc = check(d->before, d->nnames);
    if (rc == DCH_OK)
        rc = check(d->after, d->nnames);
    if (rc != DCH_OK)
        return rc;
    an_changes moved = {NULL, 0, 0};
    rc = an_changes_diff(&moved, d->before, d->after);
    if (rc != DCH_OK)
        return rc;
    an_outfile out;
    if (an_outfile_open(&out, path) != 0) {
        an_changes_free(&moved);
        return DCH_EIO;
    }
    FILE *f = out.f;
    const double w = 900.0, h = 520.0;
    fprintf(f,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
            "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
            "font-family=\"sans-serif\">\n"
            "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
            "<text x=\"%.0f\" y=\"28\" text-anchor=\"middle\" font-size=\"18\">",
            w, h, w, h, w / 2.0);
    xml_text(f, d->title);
    fputs("</text>\n", f);
    fputs("<g stroke=\"none\">\n", f);
    ring(f, 235.0, 245.0, d->before, &moved, d->units, d->before_label);
    ring(f, 665.0, 245.0, d->after, &moved, d->units, d->after_label);
    fputs("</g>\n", f);

    /* Legend: one swatch per member, then the moved band. */
    double x = 40.0, y = 455.0;
    for (uint32_t g = 0; g < d->nnames; g++) {
        if (x > w - 120.0) {
            x = 40.0;
            y += 22.0;
        }
        fprintf(f,
                "<rect x=\"%.0f\" y=\"%.0f\" width=\"14\" height=\"14\" "
                "fill=\"%s\"/>\n<text x=\"%.0f\" y=\"%.0f\" font-size=\"13\">",
                x, y - 11.0, an_diagram_colour(g), x + 19.0, y);
        xml_text(f, d->names[g]);
        fputs("</text>\n", f);
        x += 100.0;
    }
    fprintf(f,
            "<rect x=\"%.0f\" y=\"%.0f\" width=\"14\" height=\"14\" "
            "fill=\"#222222\"/>\n<text x=\"%.0f\" y=\"%.0f\" "
            "font-size=\"13\">moved</text>\n",
            x, y - 11.0, x + 19.0, y);
    if (d->note != NULL) {
        fprintf(f, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\" "
                   "font-size=\"13\" fill=\"#333\">",
                w / 2.0, y + 30.0);
        xml_text(f, d->note);
        fputs("</text>\n", f);
    }
    fputs("</svg>\n", f);
    an_changes_free(&moved);
    return an_outfile_commit(&out) == 0 ? DCH_OK : DCH_EIO;
}
