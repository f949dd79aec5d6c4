/* SPDX-License-Identifier: MIT */
/*
 * The growing string and the HTML escape. Appends grow the buffer by
 * doubling, so building a page or a JSON text of n bytes costs O(n).
 */
#include "text.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void an_buf_printf(an_buf *b, const char *fmt, ...)
{
    if (b->failed)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? b->cap - b->n : 0,
                          fmt, ap);
        va_end(ap);
        if (k < 0) {
            b->failed = true;
            return;
        }
        if (b->s != NULL && b->n + (size_t)k < b->cap) {
            b->n += (size_t)k;
            return;
        }
        size_t cap = b->cap ? b->cap : 256;
        while (cap <= b->n + (size_t)k)
            cap *= 2;
        char *s = realloc(b->s, cap);
        if (s == NULL) {
            b->failed = true;
            return;
        }
        b->s = s;
        b->cap = cap;
    }
}

const char *an_buf_str(const an_buf *b)
{
    return b->failed || b->s == NULL ? "" : b->s;
}

void an_buf_free(an_buf *b)
{
    free(b->s);
    *b = (an_buf){NULL, 0, 0, false};
}

void an_html_escape(an_buf *b, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': an_buf_printf(b, "&lt;"); break;
        case '>': an_buf_printf(b, "&gt;"); break;
        case '&': an_buf_printf(b, "&amp;"); break;
        case '"': an_buf_printf(b, "&quot;"); break;
        default: an_buf_printf(b, "%c", *s);
        }
    }
}

void an_html_fputs(FILE *f, const char *s)
{
    an_buf b = {0};
    an_html_escape(&b, s);
    fputs(an_buf_str(&b), f);
    an_buf_free(&b);
}
