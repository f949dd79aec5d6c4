/* SPDX-License-Identifier: MIT */
/*
 * Output helpers of the dchctl tool: JSON strings that are always valid JSON
 * whatever bytes a name or key holds, text that a key cannot break into
 * forged columns or lines, hex, the growth of the arrays that collect what
 * the library reports through callbacks, and failed writes.
 */
#define _POSIX_C_SOURCE 200809L /* SIGPIPE */
#include "cli.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

void print_hex(FILE *f, const uint8_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%02x", b[i]);
}

/* Whether the bytes s .. end are valid UTF-8 (shortest forms, no
 * surrogates, <= U+10FFFF). */
static int valid_utf8(const unsigned char *s, const unsigned char *end)
{
    while (s < end) {
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
        if ((size_t)(end - s) <= n)
            return 0;
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
    if (s == NULL)
        fputs("null", f);
    else
        json_bytes(f, s, strlen(s));
}

void json_bytes(FILE *f, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + n;
    const int utf8 = valid_utf8(p, end);
    fputc('"', f);
    for (; p < end; p++) {
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

void text_string(FILE *f, const char *s)
{
    text_bytes(f, s, strlen(s));
}

/* Control bytes (below 0x20, and 0x7f) are written as \xNN so that a key
 * cannot forge a column or a line. Member names never hold them (the
 * library refuses such names). The bytes between control bytes go out as
 * one run: `lookup MAP -` prints a million keys a second through here. */
void text_bytes(FILE *f, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + n;
    while (p < end) {
        const unsigned char *run = p;
        while (p < end && *p >= 0x20 && *p != 0x7F)
            p++;
        fwrite(run, 1, (size_t)(p - run), f);
        if (p < end)
            fprintf(f, "\\x%02x", *p++);
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

/* A reader that went away (EPIPE: `dchctl show m | head`) ended the
 * output on purpose and needs no message; any other failure gets one. */
int write_error(const char *name, int err)
{
    if (err != EPIPE)
        fprintf(stderr, "dchctl: %s: cannot write (%s)\n", name, strerror(err));
    return EXIT_RUNTIME;
}

/*
 * Killed by SIGPIPE, the tool would end silently with a status outside its
 * contract (0, 1, 2) when the reader of its output goes away (`| head`).
 * Ignored, the write fails with EPIPE, and the tool stops there and exits
 * with status 1, having written no file half (files are written to a
 * temporary name and renamed). Only commands that start no other program
 * call this: a child would inherit the ignored signal.
 */
void ignore_sigpipe(void)
{
    signal(SIGPIPE, SIG_IGN);
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
