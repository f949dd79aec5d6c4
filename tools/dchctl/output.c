/* SPDX-License-Identifier: MIT */
/*
 * Output helpers of the dchctl tool: JSON strings that are always valid JSON
 * whatever bytes a name or key holds, text that a key cannot break into
 * forged columns or lines, hex, and the growth of the arrays that collect
 * what the library reports through callbacks.
 */
#include "cli.h"

#include <stdlib.h>

void print_hex(FILE *f, const uint8_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%02x", b[i]);
}

/* Whether s is valid UTF-8 (shortest forms, no surrogates, <= U+10FFFF). */
static int valid_utf8(const unsigned char *s)
{
    while (*s) {
        const unsigned c = *s;
        unsigned n, min;
        if (c < 0x80) {
            s++;
            continue;
        } else if ((c & 0xE0) == 0xC0) {
            n = 1;
            min = 0x80;
        } else if ((c & 0xF0) == 0xE0) {
            n = 2;
            min = 0x800;
        } else if ((c & 0xF8) == 0xF0) {
            n = 3;
            min = 0x10000;
        } else {
            return 0;
        }
        unsigned cp = c & (0x3Fu >> n);
        for (unsigned i = 1; i <= n; i++) {
            if ((s[i] & 0xC0) != 0x80)
                return 0;
            cp = cp << 6 | (s[i] & 0x3Fu);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return 0;
        s += n + 1;
    }
    return 1;
}

/*
 * Names and keys are bytes: valid UTF-8 passes through, and a string that
 * is not valid UTF-8 has each byte >= 0x80 written as \u00XX (read as
 * Latin-1).
 */
void json_string(FILE *f, const char *s)
{
    if (s == NULL) {
        fputs("null", f);
        return;
    }
    const int utf8 = valid_utf8((const unsigned char *)s);
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p == '\n')
            fputs("\\n", f);
        else if (*p == '\t')
            fputs("\\t", f);
        else if (*p < 0x20 || *p == 0x7F || (*p >= 0x80 && !utf8))
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

/* Control bytes (below 0x20, and 0x7f) are written as \xNN so that a key
 * cannot forge a column or a line. Member names never hold them (the
 * library refuses such names). */
void text_string(FILE *f, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p < 0x20 || *p == 0x7F)
            fprintf(f, "\\x%02x", *p);
        else
            fputc(*p, f);
    }
}

const char *or_dash(const char *s)
{
    return s ? s : "-";
}

int out_of_memory(void)
{
    fputs("dchctl: out of memory\n", stderr);
    return EXIT_RUNTIME;
}

void *grow(void *v, size_t n, size_t *cap, size_t size, size_t first)
{
    if (n < *cap)
        return v;
    const size_t c = *cap ? 2 * *cap : first;
    void *g = realloc(v, c * size);
    if (g != NULL)
        *cap = c;
    return g;
}
