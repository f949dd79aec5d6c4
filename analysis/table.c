/* SPDX-License-Identifier: MIT */
/*
 * Result tables. Cells are stored as strings (display and CSV renderings);
 * text is left-aligned and numbers right-aligned when printed.
 */
#include "table.h"

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

struct an_table {
    char *id;
    char *title;
    column *cols;
    size_t ncols;
    row *rows;
    size_t nrows;
    size_t cap;
    bool gap_pending;
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
    free(t->title);
    free(t->id);
    free(t);
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

void an_table_print(const an_table *t, FILE *f)
{
    size_t *width = calloc(t->ncols, sizeof *width);
    if (width == NULL)
        return;
    for (size_t c = 0; c < t->ncols; c++) {
        width[c] = strlen(t->cols[c].header);
        for (size_t r = 0; r < t->nrows; r++) {
            const char *s = t->rows[r].cells[c].shown;
            if (s != NULL && strlen(s) > width[c])
                width[c] = strlen(s);
        }
    }
    size_t total = 0;
    for (size_t c = 0; c < t->ncols; c++)
        total += width[c] + (c ? 2 : 0);
    fprintf(f, "\n%s\n", t->title);
    for (size_t c = 0; c < t->ncols; c++)
        fprintf(f, "%s%*s", c ? "  " : "", (int)width[c], t->cols[c].header);
    fputc('\n', f);
    for (size_t i = 0; i < total; i++)
        fputc('-', f);
    fputc('\n', f);
    for (size_t r = 0; r < t->nrows; r++) {
        if (t->rows[r].gap_before)
            fputc('\n', f);
        for (size_t c = 0; c < t->ncols; c++) {
            const cell *x = &t->rows[r].cells[c];
            const char *s = x->shown ? x->shown : "";
            int w = (int)width[c];
            fprintf(f, "%s", c ? "  " : "");
            if (x->number || c + 1 < t->ncols)
                fprintf(f, x->number ? "%*s" : "%-*s", w, s);
            else
                fputs(s, f); /* no trailing blanks after the last column */
        }
        fputc('\n', f);
    }
    free(width);
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

int an_table_write_csv(const an_table *t, const char *path)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return -1;
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
    return fclose(f) == 0 ? 0 : -1;
}

void an_table_write_html(const an_table *t, FILE *f)
{
    fputs("<table>\n<thead><tr>", f);
    for (size_t c = 0; c < t->ncols; c++) {
        fputs("<th>", f);
        an_html_fputs(f, t->cols[c].header);
        fputs("</th>", f);
    }
    fputs("</tr></thead>\n<tbody>\n", f);
    for (size_t r = 0; r < t->nrows; r++) {
        fputs(t->rows[r].gap_before ? "<tr class=\"group\">" : "<tr>", f);
        for (size_t c = 0; c < t->ncols; c++) {
            const cell *x = &t->rows[r].cells[c];
            fputs(x->number ? "<td class=\"n\">" : "<td>", f);
            an_html_fputs(f, x->shown ? x->shown : "");
            fputs("</td>", f);
        }
        fputs("</tr>\n", f);
    }
    fputs("</tbody>\n</table>\n", f);
}
