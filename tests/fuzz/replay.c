/* SPDX-License-Identifier: MIT */
/*
 * Runs a libFuzzer target's entry point over committed inputs without
 * libFuzzer, so that every build (any compiler, under the sanitizers and
 * under valgrind) replays the fuzz corpora as an ordinary test.
 *
 * Usage: replay PATH...   each PATH a file or a directory of files (read in
 * name order, dot files skipped). A target reports a failure by aborting;
 * the replay prints each input's name first, so the failing one is the last
 * name printed. Exits non-zero when an input cannot be read or none was run.
 */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "support.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
    size_t len = 0;
    char *text = slurp(path, &len);
    if (text == NULL) {
        perror(path);
        return -1;
    }
    fprintf(stderr, "replay %s (%zu bytes)\n", path, len);
    /* An exact-size copy, so that a sanitizer sees any read past the end. */
    uint8_t *exact = xmalloc(len);
    memcpy(exact, text, len);
    free(text);
    LLVMFuzzerTestOneInput(exact, len);
    free(exact);
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_dir(const char *dir, unsigned *runs)
{
    DIR *d = opendir(dir);
    if (d == NULL) {
        perror(dir);
        return -1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    for (struct dirent *e; rc == 0 && (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.')
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            char **grown = realloc(names, cap * sizeof *names);
            if (grown == NULL) {
                rc = -1;
                break;
            }
            names = grown;
        }
        const size_t len = strlen(dir) + strlen(e->d_name) + 2;
        if ((names[n] = malloc(len)) == NULL) {
            rc = -1;
            break;
        }
        snprintf(names[n++], len, "%s/%s", dir, e->d_name);
    }
    closedir(d);
    if (n > 0)
        qsort(names, n, sizeof *names, by_name);
    for (size_t i = 0; i < n; i++) {
        if (rc == 0) {
            if (run_file(names[i]) != 0)
                rc = -1;
            else
                ++*runs;
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv)
{
    unsigned runs = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            perror(argv[i]);
            return 1;
        }
        if (S_ISDIR(st.st_mode) ? run_dir(argv[i], &runs) != 0 : run_file(argv[i]) != 0)
            return 1;
        if (!S_ISDIR(st.st_mode))
            runs++;
    }
    if (runs == 0) {
        fprintf(stderr, "replay: no input was run\n");
        return 1;
    }
    fprintf(stderr, "replay: %u inputs, no failure\n", runs);
    return 0;
}
