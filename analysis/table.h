/* SPDX-License-Identifier: MIT */
/*
 * Result tables: filled once, then printed as aligned text, written as CSV
 * and emitted as HTML, so the terminal, the CSV files and the web report
 * always show the same numbers.
 *
 * Every table fits its medium: the text in AN_TABLE_TEXT_WIDTH columns (a
 * terminal of 100), the HTML in the report page's column. A table too wide
 * for one line of text first wraps its headers at their spaces; if that is
 * not enough it is printed as panels, each with the row's key columns
 * (an_table_keys) and a group of the others (an_table_group, or as many
 * columns as fit). The HTML does the same against the page's width, and
 * shows the groups as a header row when the table fits whole. The CSV is
 * always the one whole table.
 *
 * Each numeric cell keeps two renderings: the column's display format (for
 * text and HTML) and a full-precision one for CSV (%.10g), so files that feed
 * charts and tests are not rounded for the eye.
 */
#ifndef DCH_ANALYSIS_TABLE_H
#define DCH_ANALYSIS_TABLE_H

#include <stddef.h>
#include <stdio.h>

typedef struct an_table an_table;

/**
 * One column: its header for people, its name in the CSV header line (plain
 * snake_case, for programs), and the printf format that displays a double
 * ("%.4f"; NULL means "%g").
 */
typedef struct an_column {
    const char *header;
    const char *key;
    const char *format;
} an_column;

/**
 * A new empty table. `id` names its files (id.csv) and must be a plain file
 * stem; `title` heads the printed table. Everything is copied, the
 * columns' strings included.
 *
 * @return the table, or NULL when out of memory.
 */
an_table *an_table_new(const char *id, const char *title,
                       const an_column *cols, size_t ncols);

/** Free a table. NULL is a no-op. */
void an_table_free(an_table *t);

/** Printed lines of text are at most this wide (a terminal's 100 columns). */
#define AN_TABLE_TEXT_WIDTH 100

/**
 * The first `n` columns identify a row (e.g. scheme and N) and are repeated
 * in every panel of a table printed in parts. Default 1.
 */
void an_table_keys(an_table *t, size_t n);

/**
 * The columns from `col` on (up to the next group) form a group with
 * `caption` (copied): a header over them in the HTML, and the place a table
 * too wide for one panel is split. Groups are declared in column order,
 * after the key columns. @return 0 or -1 (no memory, or out of order).
 */
int an_table_group(an_table *t, size_t col, const char *caption);

/** A line under the table (a legend of its abbreviations), copied. @return 0 or -1. */
int an_table_note(an_table *t, const char *text);

/** Start a new row; the cells of the previous row that were not set stay empty. @return 0 or -1 (no memory). */
int an_table_row(an_table *t);

/** Start a visual group: a blank line in the text output, nothing in CSV. */
void an_table_gap(an_table *t);

/** Set a text cell of the current row (copied). @return 0 or -1. */
int an_table_text(an_table *t, size_t col, const char *text);

/** Set a numeric cell of the current row with the column's format. @return 0 or -1. */
int an_table_num(an_table *t, size_t col, double v);

/** Set an integer cell of the current row. @return 0 or -1. */
int an_table_int(an_table *t, size_t col, long long v);

/**
 * Add a row of cells from the arguments, one per character of `kinds`: 't'
 * a text (const char *), 'i' an integer (long long), 'n' a number (double,
 * in the column's format), '-' an empty cell (no argument).
 * @return 0 or -1 (no memory, or more kinds than columns).
 */
int an_table_add(an_table *t, const char *kinds, ...);

/** The table's id (its file stem). */
const char *an_table_id(const an_table *t);

/** The table's title. */
const char *an_table_title(const an_table *t);

/** Print the title and the aligned table, in AN_TABLE_TEXT_WIDTH columns. */
void an_table_print(const an_table *t, FILE *f);

/** Print as an_table_print does, in `width` columns. */
void an_table_print_width(const an_table *t, FILE *f, size_t width);

/** Write the table as CSV (header line, then rows), whole or not at all
 *  (outfile.h). @return 0 or -1. */
int an_table_write_csv(const an_table *t, const char *path);

/** Write the table as HTML (escaped): each <table> in a <div class="scroll">,
 *  one per panel, then its notes. */
void an_table_write_html(const an_table *t, FILE *f);

#endif /* DCH_ANALYSIS_TABLE_H */
