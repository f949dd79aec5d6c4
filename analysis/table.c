/* SPDX-License-Identifier: MIT */
/*
 * Result tables. Cells are stored as strings (display and CSV renderings);
 * text is left-aligned and numbers right-aligned when printed, headers
 * aligned as their column. Layout for a width (text or page) is in three
 * steps: the widths of the columns (headers whole, or wrapped at their
 * spaces), the panels that fit (the key columns plus a run of the others,
 * cut at group boundaries first), then the text or HTML of each panel.
 */
#include "table.h"

#include "outfile.h"
#include "text.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef struct cell {
    char *shown; /* display rendering, NULL when empty */
    char *csv;   /* CSV rendering, NULL when empty */
    bool number;
} cell;

typedef struct column {
    char *header;
    char *key;
    char *format; /* NULL: "%g" */
} column;

typedef struct row {
    cell *cells;
    bool gap_before;
} row;

/* Groups of columns and notes: a few per table. */
#define MAX_GROUPS 8
#define MAX_NOTES 4

typedef struct group {
    size_t first; /* column */
    char *caption;
} group;

struct an_table {
    char *id;
    char *title;
    column *cols;
    size_t ncols;
    row *rows;
    size_t nrows;
    size_t cap;
    bool gap_pending;
    size_t keys;
    group groups[MAX_GROUPS];
    size_t ngroups;
    char *notes[MAX_NOTES];
    size_t nnotes;
};

static char *copy_string(const char *s)
{
    size_t n = strlen(s) + 1;
    char *c = malloc(n);
    if (c != NULL)
        memcpy(c, s, n);
    return c;
}

an_table *an_table_new(const char *id, const char *title,
                       const an_column *cols, size_t ncols)
{
    an_table *t = calloc(1, sizeof *t);
    if (t == NULL)
        return NULL;
    t->id = copy_string(id);
    t->title = copy_string(title);
    t->cols = calloc(ncols ? ncols : 1, sizeof *t->cols);
    if (t->id == NULL || t->title == NULL || t->cols == NULL) {
        an_table_free(t);
        return NULL;
    }
    t->ncols = ncols;
    t->keys = ncols > 1 ? 1 : 0;
    for (size_t c = 0; c < ncols; c++) {
        t->cols[c].header = copy_string(cols[c].header);
        t->cols[c].key = copy_string(cols[c].key);
        t->cols[c].format = cols[c].format ? copy_string(cols[c].format) : NULL;
        if (t->cols[c].header == NULL || t->cols[c].key == NULL ||
            (cols[c].format != NULL && t->cols[c].format == NULL)) {
            an_table_free(t);
            return NULL;
        }
    }
    return t;
}

void an_table_free(an_table *t)
{
    if (t == NULL)
        return;
    for (size_t r = 0; r < t->nrows; r++) {
        for (size_t c = 0; c < t->ncols; c++) {
            free(t->rows[r].cells[c].shown);
            free(t->rows[r].cells[c].csv);
        }
        free(t->rows[r].cells);
    }
    free(t->rows);
    for (size_t c = 0; t->cols != NULL && c < t->ncols; c++) {
        free(t->cols[c].header);
        free(t->cols[c].key);
        free(t->cols[c].format);
    }
    free(t->cols);
    for (size_t g = 0; g < t->ngroups; g++)
        free(t->groups[g].caption);
    for (size_t k = 0; k < t->nnotes; k++)
        free(t->notes[k]);
    free(t->title);
    free(t->id);
    free(t);
}

void an_table_keys(an_table *t, size_t n)
{
    t->keys = n < t->ncols ? n : t->ncols > 0 ? t->ncols - 1 : 0;
}

int an_table_group(an_table *t, size_t col, const char *caption)
{
    if (t->ngroups == MAX_GROUPS || col >= t->ncols || col < t->keys ||
        (t->ngroups > 0 && col <= t->groups[t->ngroups - 1].first))
        return -1;
    char *c = copy_string(caption);
    if (c == NULL)
        return -1;
    t->groups[t->ngroups++] = (group){col, c};
    return 0;
}

int an_table_note(an_table *t, const char *text)
{
    if (t->nnotes == MAX_NOTES)
        return -1;
    char *c = copy_string(text);
    if (c == NULL)
        return -1;
    t->notes[t->nnotes++] = c;
    return 0;
}

int an_table_row(an_table *t)
{
    if (t->nrows == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 16;
        row *rows = realloc(t->rows, cap * sizeof *rows);
        if (rows == NULL)
            return -1;
        t->rows = rows;
        t->cap = cap;
    }
    cell *cells = calloc(t->ncols, sizeof *cells);
    if (cells == NULL)
        return -1;
    t->rows[t->nrows++] = (row){cells, t->gap_pending};
    t->gap_pending = false;
    return 0;
}

void an_table_gap(an_table *t)
{
    if (t->nrows > 0)
        t->gap_pending = true;
}

static int set_cell(an_table *t, size_t col, const char *shown,
                    const char *csv, bool number)
{
    if (t->nrows == 0 || col >= t->ncols)
        return -1;
    cell *c = &t->rows[t->nrows - 1].cells[col];
    char *s = copy_string(shown);
    char *v = copy_string(csv);
    if (s == NULL || v == NULL) {
        free(s);
        free(v);
        return -1;
    }
    free(c->shown);
    free(c->csv);
    *c = (cell){s, v, number};
    return 0;
}

int an_table_text(an_table *t, size_t col, const char *text)
{
    return set_cell(t, col, text, text, false);
}

int an_table_num(an_table *t, size_t col, double v)
{
    if (col >= t->ncols)
        return -1;
    char shown[64], csv[64];
    if (isnan(v)) {
        snprintf(shown, sizeof shown, "-");
        csv[0] = '\0';
    } else if (isinf(v)) {
        snprintf(shown, sizeof shown, "%s", v > 0 ? "inf" : "-inf");
        snprintf(csv, sizeof csv, "%s", v > 0 ? "inf" : "-inf");
    } else {
        const char *fmt = t->cols[col].format ? t->cols[col].format : "%g";
        snprintf(shown, sizeof shown, fmt, v);
        snprintf(csv, sizeof csv, "%.10g", v);
    }
    return set_cell(t, col, shown, csv, true);
}

int an_table_int(an_table *t, size_t col, long long v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", v);
    return set_cell(t, col, buf, buf, true);
}

int an_table_add(an_table *t, const char *kinds, ...)
{
    if (strlen(kinds) > t->ncols || an_table_row(t) != 0)
        return -1;
    int rc = 0;
    va_list ap;
    va_start(ap, kinds);
    for (size_t c = 0; kinds[c] != '\0'; c++) {
        if (kinds[c] == 't')
            rc |= an_table_text(t, c, va_arg(ap, const char *));
        else if (kinds[c] == 'i')
            rc |= an_table_int(t, c, va_arg(ap, long long));
        else if (kinds[c] == 'n')
            rc |= an_table_num(t, c, va_arg(ap, double));
    }
    va_end(ap);
    return rc;
}

const char *an_table_id(const an_table *t)
{
    return t->id;
}

const char *an_table_title(const an_table *t)
{
    return t->title;
}

/* ---- Layout ------------------------------------------------------------------ */

/* The page's column fits a table of about this many characters of cells
 * plus two for each cell's padding (1,068 px of 13 px sans-serif). */
#define HTML_WIDTH 128

/* The longest word of s (runs between spaces). */
static size_t longest_word(const char *s)
{
    size_t best = 0, run = 0;
    for (;; s++) {
        if (*s == ' ' || *s == '\0') {
            best = run > best ? run : best;
            run = 0;
            if (*s == '\0')
                return best;
        } else {
            run++;
        }
    }
}

/* A column holds numbers: right-aligned, and its header too. */
static bool numeric(const an_table *t, size_t c)
{
    for (size_t r = 0; r < t->nrows; r++)
        if (t->rows[r].cells[c].shown != NULL)
            return t->rows[r].cells[c].number;
    return false;
}

/* Column widths: headers whole, or (wrap) cut at their spaces, so a column
 * is as wide as its longest word or its widest cell. */
static void widths(const an_table *t, bool wrap, size_t *w)
{
    for (size_t c = 0; c < t->ncols; c++) {
        const char *h = t->cols[c].header;
        w[c] = wrap ? longest_word(h) : strlen(h);
        for (size_t r = 0; r < t->nrows; r++) {
            const char *s = t->rows[r].cells[c].shown;
            if (s != NULL && strlen(s) > w[c])
                w[c] = strlen(s);
        }
    }
}

/* The width of the keys and columns [a, b) with `sep` between columns. */
static size_t span(const an_table *t, const size_t *w, size_t a, size_t b,
                   size_t sep)
{
    size_t total = 0, n = 0;
    for (size_t c = 0; c < t->keys; c++, n++)
        total += w[c];
    for (size_t c = a; c < b; c++, n++)
        total += w[c];
    return total + (n ? n - 1 : 0) * sep;
}

/* One panel: the key columns and columns [first, end). */
typedef struct panel {
    size_t first, end;
    bool whole; /* it holds whole groups only, so another may join it */
} panel;

/* The start of the group after the one column c belongs to. */
static size_t group_end(const an_table *t, size_t c)
{
    for (size_t g = 0; g < t->ngroups; g++)
        if (t->groups[g].first > c)
            return t->groups[g].first;
    return t->ncols;
}

static bool group_starts(const an_table *t, size_t c)
{
    for (size_t g = 0; g < t->ngroups; g++)
        if (t->groups[g].first == c)
            return true;
    return c == t->keys;
}

/* The captions of the groups in panel p, joined, to buf: a panel that
 * starts inside a group is its continuation. */
static void panel_caption(const an_table *t, const panel *p, char *buf, size_t n)
{
    size_t k = 0;
    buf[0] = '\0';
    for (size_t g = 0; g < t->ngroups; g++) {
        const group *gr = &t->groups[g];
        const size_t end = g + 1 < t->ngroups ? t->groups[g + 1].first : t->ncols;
        const bool starts_here = gr->first >= p->first && gr->first < p->end;
        const bool goes_on = gr->first < p->first && end > p->first;
        if (!starts_here && !goes_on)
            continue;
        k += (size_t)snprintf(buf + k, k < n ? n - k : 0, "%s%s%s", k ? "; " : "",
                              gr->caption, goes_on ? " (continued)" : "");
        if (k >= n)
            k = n - 1;
    }
    if (k == 0 && !group_starts(t, p->first))
        snprintf(buf, n, "(continued)");
}

/* Cut the columns after the keys into panels no wider than `width`: whole
 * groups side by side while they fit, a group too wide alone cut into as
 * many columns as fit (at least one a panel). @return the number of panels
 * written to p (room for ncols). */
static size_t cut(const an_table *t, const size_t *w, size_t width, size_t sep,
                  panel *p)
{
    size_t n = 0;
    for (size_t c = t->keys; c < t->ncols;) {
        const size_t end = group_end(t, c);
        if (n > 0 && p[n - 1].whole && span(t, w, p[n - 1].first, end, sep) <= width) {
            p[n - 1].end = end;
            c = end;
            continue;
        }
        const size_t start = c;
        while (c < end) {
            size_t e = c + 1;
            while (e < end && span(t, w, c, e + 1, sep) <= width)
                e++;
            p[n++] = (panel){c, e, c == start && e == end};
            c = e;
        }
    }
    return n;
}

/* ---- Text ------------------------------------------------------------------- */

/* Line `line` of header h wrapped at its spaces into `width` columns, to buf.
 * @return the number of lines h takes. */
static size_t header_line(const char *h, size_t width, size_t line, char *buf,
                          size_t n)
{
    size_t lines = 0;
    buf[0] = '\0';
    while (*h) {
        /* Take words while they fit. */
        const char *start = h, *end = h;
        for (const char *p = h;;) {
            const char *q = p;
            while (*q && *q != ' ')
                q++;
            if (end != start && (size_t)(q - start) > width)
                break;
            end = q;
            if (*q == '\0')
                break;
            p = q + 1;
        }
        if (lines == line)
            snprintf(buf, n, "%.*s", (int)(end - start), start);
        lines++;
        h = *end ? end + 1 : end;
    }
    return lines ? lines : 1;
}

/* A group's caption has no word wider than its columns: the last one
 * widens if need be. */
static void fit_groups(const an_table *t, size_t *w)
{
    for (size_t g = 0; g < t->ngroups; g++) {
        const size_t a = t->groups[g].first, b = group_end(t, a);
        size_t width = 2 * (b - a - 1);
        for (size_t c = a; c < b; c++)
            width += w[c];
        const size_t need = longest_word(t->groups[g].caption);
        if (need > width)
            w[b - 1] += need - width;
    }
}

/* Over the columns of panel p, the captions of their groups (wrapped to the
 * width of each group's columns) and a line under each. */
static void print_groups(const an_table *t, FILE *f, const size_t *w, const panel *p)
{
    enum { MAX_SEGMENTS = 32 };
    struct {
        size_t width;
        char caption[256];
    } seg[MAX_SEGMENTS];
    size_t n = 0, lead = 0, lines = 1;
    for (size_t c = 0; c < t->keys; c++)
        lead += w[c] + 2;
    for (size_t c = p->first; c < p->end && n < MAX_SEGMENTS; n++) {
        size_t end = group_end(t, c);
        end = end < p->end ? end : p->end;
        const panel one = {c, end, true};
        panel_caption(t, &one, seg[n].caption, sizeof seg[n].caption);
        seg[n].width = 2 * (end - c - 1);
        for (; c < end; c++)
            seg[n].width += w[c];
        char buf[256];
        const size_t l = header_line(seg[n].caption, seg[n].width, 0, buf, sizeof buf);
        lines = l > lines ? l : lines;
    }
    for (size_t line = 0; line <= lines; line++) {
        char text[512];
        size_t k = (size_t)snprintf(text, sizeof text, "%*s", (int)lead, "");
        for (size_t i = 0; i < n && k < sizeof text; i++) {
            char buf[256] = "";
            if (line < lines)
                header_line(seg[i].caption, seg[i].width, line, buf, sizeof buf);
            else if (seg[i].caption[0] != '\0') { /* the line under the group */
                const size_t m = seg[i].width < sizeof buf ? seg[i].width : sizeof buf - 1;
                memset(buf, '-', m);
                buf[m] = '\0';
            }
            k += (size_t)snprintf(text + k, sizeof text - k, "%s%-*s", i ? "  " : "",
                                  (int)seg[i].width, buf);
        }
        k = k < sizeof text ? k : sizeof text - 1;
        while (k > 0 && text[k - 1] == ' ')
            k--;
        fprintf(f, "%.*s\n", (int)k, text);
    }
}

static void print_panel(const an_table *t, FILE *f, const size_t *w, bool wrap,
                        const panel *p)
{
    if (t->ngroups > 0)
        print_groups(t, f, w, p);
    /* The panel's columns: the keys, then [first, end). */
    size_t cols[64], nc = 0;
    for (size_t c = 0; c < t->keys && nc < 64; c++)
        cols[nc++] = c;
    for (size_t c = p->first; c < p->end && nc < 64; c++)
        cols[nc++] = c;
    char buf[256];
    size_t lines = 1;
    for (size_t k = 0; wrap && k < nc; k++) {
        const size_t c = cols[k];
        const size_t l = header_line(t->cols[c].header, w[c], 0, buf, sizeof buf);
        lines = l > lines ? l : lines;
    }
    /* Headers sit on the bottom lines, aligned as their column. */
    for (size_t line = 0; line < lines; line++) {
        char text[512];
        size_t k = 0;
        for (size_t i = 0; i < nc; i++) {
            const size_t c = cols[i];
            const char *h = t->cols[c].header;
            size_t hl = 1;
            if (wrap)
                hl = header_line(h, w[c], 0, buf, sizeof buf);
            const size_t skip = lines - hl;
            buf[0] = '\0';
            if (line >= skip) {
                if (wrap)
                    header_line(h, w[c], line - skip, buf, sizeof buf);
                else
                    snprintf(buf, sizeof buf, "%s", h);
            }
            const bool right = numeric(t, c);
            k += (size_t)snprintf(text + k, k < sizeof text ? sizeof text - k : 0,
                                  right ? "%s%*s" : "%s%-*s", i ? "  " : "",
                                  (int)w[c], buf);
            if (k >= sizeof text)
                k = sizeof text - 1;
        }
        while (k > 0 && text[k - 1] == ' ')
            k--;
        fprintf(f, "%.*s\n", (int)k, text);
    }
    const size_t width = span(t, w, p->first, p->end, 2);
    for (size_t i = 0; i < width; i++)
        fputc('-', f);
    fputc('\n', f);
    for (size_t r = 0; r < t->nrows; r++) {
        if (t->rows[r].gap_before)
            fputc('\n', f);
        for (size_t i = 0; i < nc; i++) {
            const size_t c = cols[i];
            const cell *x = &t->rows[r].cells[c];
            const char *s = x->shown ? x->shown : "";
            fputs(i ? "  " : "", f);
            if (x->number || i + 1 < nc)
                fprintf(f, x->number ? "%*s" : "%-*s", (int)w[c], s);
            else
                fputs(s, f); /* no trailing blanks after the last column */
        }
        fputc('\n', f);
    }
}

/* Print s in lines of at most `width` columns, cut at spaces. */
static void print_wrapped(FILE *f, const char *s, size_t width)
{
    while (*s) {
        size_t n = strlen(s);
        if (n > width) {
            n = width;
            while (n > 0 && s[n] != ' ')
                n--;
            if (n == 0)
                n = strcspn(s, " ");
        }
        fprintf(f, "%.*s\n", (int)n, s);
        s += n;
        while (*s == ' ')
            s++;
    }
}

/* A column width and a panel for each column of t, zeroed; 0, or -1 with
 * nothing allocated. */
static int layout_new(const an_table *t, size_t **w, panel **p)
{
    *w = calloc(t->ncols ? t->ncols : 1, sizeof **w);
    *p = calloc(t->ncols ? t->ncols : 1, sizeof **p);
    if (*w == NULL || *p == NULL) {
        free(*w);
        free(*p);
        return -1;
    }
    return 0;
}

void an_table_print_width(const an_table *t, FILE *f, size_t width)
{
    size_t *w;
    panel *p;
    if (layout_new(t, &w, &p) != 0)
        return;
    /* Whole headers if the table fits so, else wrapped ones; panels only
     * if even that is too wide. */
    bool wrap = false;
    widths(t, false, w);
    fit_groups(t, w);
    if (span(t, w, t->keys, t->ncols, 2) > width) {
        wrap = true;
        widths(t, true, w);
        fit_groups(t, w);
    }
    size_t np = 1;
    p[0] = (panel){t->keys, t->ncols, true};
    if (span(t, w, t->keys, t->ncols, 2) > width)
        np = cut(t, w, width, 2, p);
    fputc('\n', f);
    print_wrapped(f, t->title, width);
    for (size_t i = 0; i < np; i++) {
        /* Groups name themselves over their columns; a table without them
         * marks a panel that goes on from the one before. */
        if (i > 0)
            fputs(t->ngroups > 0 ? "\n" : "\n(continued)\n", f);
        print_panel(t, f, w, wrap, &p[i]);
    }
    for (size_t k = 0; k < t->nnotes; k++)
        print_wrapped(f, t->notes[k], width);
    free(w);
    free(p);
}

void an_table_print(const an_table *t, FILE *f)
{
    an_table_print_width(t, f, AN_TABLE_TEXT_WIDTH);
}

/* A CSV field, quoted only when it holds a comma, quote or line break. */
static void csv_field(FILE *f, const char *s)
{
    if (strpbrk(s, ",\"\n\r") == NULL) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void write_csv(FILE *f, const void *ctx)
{
    const an_table *t = ctx;
    for (size_t c = 0; c < t->ncols; c++) {
        if (c)
            fputc(',', f);
        csv_field(f, t->cols[c].key);
    }
    fputc('\n', f);
    for (size_t r = 0; r < t->nrows; r++) {
        for (size_t c = 0; c < t->ncols; c++) {
            if (c)
                fputc(',', f);
            const char *s = t->rows[r].cells[c].csv;
            csv_field(f, s ? s : "");
        }
        fputc('\n', f);
    }
}

int an_table_write_csv(const an_table *t, const char *path)
{
    return an_outfile_write(path, write_csv, t);
}

/* ---- HTML ------------------------------------------------------------------- */

/* A header cell. It wraps at its spaces only: a hyphen is written as a
 * non-breaking one, so "old->old" or "(N-1)" stays whole. */
static void html_header_cell(FILE *f, const char *attr, const char *text)
{
    fprintf(f, "<th%s>", attr);
    for (const char *s = text; *s; s++) {
        if (*s == '-') {
            fputs("&#8209;", f);
        } else {
            const char c[2] = {*s, '\0'};
            an_html_fputs(f, c);
        }
    }
    fputs("</th>", f);
}

/* One <table> of the keys and columns [first, end). A table with groups
 * has a first header row that names the groups over their columns (a
 * group cut between panels says so); one cut without groups has a caption
 * when it goes on from the panel before. */
static void html_panel(const an_table *t, FILE *f, const panel *p)
{
    fputs("<div class=\"scroll\">\n<table>\n", f);
    char caption[512];
    panel_caption(t, p, caption, sizeof caption);
    if (t->ngroups == 0 && caption[0] != '\0') {
        fputs("<caption>", f);
        an_html_fputs(f, caption);
        fputs("</caption>\n", f);
    }
    fputs("<thead>", f);
    if (t->ngroups > 0) {
        fputs("<tr>", f);
        if (t->keys > 0)
            fprintf(f, "<th colspan=\"%zu\"></th>", t->keys);
        for (size_t c = p->first; c < p->end;) {
            size_t end = group_end(t, c);
            end = end < p->end ? end : p->end;
            const panel one = {c, end, true};
            char attr[48], cap[512];
            panel_caption(t, &one, cap, sizeof cap);
            snprintf(attr, sizeof attr, " colspan=\"%zu\" class=\"group\"", end - c);
            html_header_cell(f, attr, cap);
            c = end;
        }
        fputs("</tr>\n", f);
    }
    fputs("<tr>", f);
    for (size_t c = 0; c < t->ncols; c++)
        if (c < t->keys || (c >= p->first && c < p->end))
            html_header_cell(f, "", t->cols[c].header);
    fputs("</tr></thead>\n<tbody>\n", f);
    for (size_t r = 0; r < t->nrows; r++) {
        fputs(t->rows[r].gap_before ? "<tr class=\"group\">" : "<tr>", f);
        for (size_t c = 0; c < t->ncols; c++) {
            if (c >= t->keys && (c < p->first || c >= p->end))
                continue;
            const cell *x = &t->rows[r].cells[c];
            fputs(x->number ? "<td class=\"n\">" : "<td>", f);
            an_html_fputs(f, x->shown ? x->shown : "");
            fputs("</td>", f);
        }
        fputs("</tr>\n", f);
    }
    fputs("</tbody>\n</table>\n</div>\n", f);
}

void an_table_write_html(const an_table *t, FILE *f)
{
    size_t *w;
    panel *p;
    if (layout_new(t, &w, &p) != 0)
        return;
    /* Headers wrap in the page, so a column is as wide as its longest
     * header word or cell; a table wider than the page is cut as in text. */
    widths(t, true, w);
    size_t np = 1;
    p[0] = (panel){t->keys, t->ncols, true};
    if (span(t, w, t->keys, t->ncols, 2) + 2 > HTML_WIDTH)
        np = cut(t, w, HTML_WIDTH - 2, 2, p);
    for (size_t i = 0; i < np; i++)
        html_panel(t, f, &p[i]);
    for (size_t k = 0; k < t->nnotes; k++) {
        fputs("<p class=\"note\">", f);
        an_html_fputs(f, t->notes[k]);
        fputs("</p>\n", f);
    }
    free(w);
    free(p);
}
