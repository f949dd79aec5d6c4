/* SPDX-License-Identifier: MIT */
/*
 * Text the analysis writes: a growing string (HTML paragraphs, gnuplot
 * scripts, the explorer's JSON) and the one HTML escape every page uses.
 */
#ifndef DCH_ANALYSIS_TEXT_H
#define DCH_ANALYSIS_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/**
 * A growing string. Zero-initialise it ({0}); after the first failed
 * allocation `failed` sticks and further appends do nothing, so a writer
 * checks once at the end.
 */
typedef struct an_buf {
    char *s;
    size_t n, cap;
    bool failed;
} an_buf;

/** Append printf-style text. */
void an_buf_printf(an_buf *b, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/** The text so far; "" when empty or after a failure (borrowed). */
const char *an_buf_str(const an_buf *b);

/** Free the text and empty the buffer. */
void an_buf_free(an_buf *b);

/** Append s with &, <, > and " written as HTML entities. */
void an_html_escape(an_buf *b, const char *s);

/** Write s to f escaped as an_html_escape does. */
void an_html_fputs(FILE *f, const char *s);

#endif /* DCH_ANALYSIS_TEXT_H */
