/* SPDX-License-Identifier: MIT */
/*
 * The state directory (see cluster.h): parsing and writing its text files,
 * and building the router from them.
 */
#include "cluster.h"
#include "number.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PATH_CAP 4096
/* A state file is small: the book is a few lines and gens at most one line
 * per key; anything larger is not ours. */
#define STATE_FILE_MAX (64u << 20)

static const char magic_line[] = "redis-shard-cluster 1";

/* The words of the state file, indexed by the enums they name. */
static const char *const scheme_words[] = {"map", "ring"};
static const char *const step_words[] = {"", "join", "leave"};

const char *scheme_name(scheme s)
{
    return scheme_words[s == SCHEME_RING];
}

/* The index i of w among words[first .. n-1], or -1. */
static int word_index(const char *w, const char *const *words, int first, int n)
{
    for (int i = first; i < n; i++)
        if (strcmp(w, words[i]) == 0)
            return i;
    return -1;
}

static int path_of(char *buf, const char *dir, const char *file)
{
    int n = snprintf(buf, PATH_CAP, "%s/%s", dir, file);

    if (n < 0 || n >= PATH_CAP) {
        fprintf(stderr, "redis-shard: path too long: %s/%s\n", dir, file);
        return -1;
    }
    return 0;
}

static int name_ok(const char *s, size_t len)
{
    if (len == 0 || len > DCH_NAME_MAX)
        return 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)s[i];

        if (ch <= ' ' || ch >= 0x7f || ch == '=' || ch == ':')
            return 0;
    }
    return 1;
}

int member_parse(member *m, const char *name, const char *addr)
{
    const char *colon = strrchr(addr, ':');
    size_t hlen = colon ? (size_t)(colon - addr) : 0;
    char *end;
    long port;

    if (!name_ok(name, strlen(name))) {
        fprintf(stderr, "redis-shard: bad member name '%s' (1 to %u printable "
                        "bytes, no spaces, '=' or ':')\n", name, DCH_NAME_MAX);
        return -1;
    }
    if (colon == NULL || hlen == 0 || hlen >= HOST_CAP ||
        !name_ok(addr, hlen)) {
        fprintf(stderr, "redis-shard: bad address '%s' (HOST:PORT)\n", addr);
        return -1;
    }
    errno = 0;
    port = strtol(colon + 1, &end, 10);
    if (errno != 0 || end == colon + 1 || *end != '\0' || port < 1 ||
        port > 65535) {
        fprintf(stderr, "redis-shard: bad port in '%s'\n", addr);
        return -1;
    }
    memset(m, 0, sizeof *m);
    memcpy(m->name, name, strlen(name));
    memcpy(m->host, addr, hlen);
    m->port = (int)port;
    return 0;
}

/* Replace `path` with `len` bytes: write a new file beside it, flush it,
 * rename it over `path`, then flush the directory so the rename itself is
 * durable. A crash leaves the old or the new file, never a partial one. */
static int write_atomic(const char *dir, const char *file, const char *data,
                        size_t len)
{
    char path[PATH_CAP], tmp[PATH_CAP];
    int fd, n;
    size_t done = 0;

    if (path_of(path, dir, file) != 0)
        return -1;
    n = snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    if (n < 0 || n >= (int)sizeof tmp)
        return -1;
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0666);
    if (fd < 0) {
        fprintf(stderr, "redis-shard: create %s: %s\n", tmp, strerror(errno));
        return -1;
    }
    while (done < len) {
        ssize_t w = write(fd, data + done, len - done);

        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        done += (size_t)w;
    }
    if (done != len || fsync(fd) != 0) {
        fprintf(stderr, "redis-shard: write %s: %s\n", tmp, strerror(errno));
        close(fd);
        unlink(tmp);
        return -1;
    }
    if (close(fd) != 0 || rename(tmp, path) != 0) {
        fprintf(stderr, "redis-shard: replace %s: %s\n", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    fd = open(dir, O_RDONLY);
    if (fd >= 0) {
        /* Some file systems refuse fsync on a directory; the rename stands. */
        (void)fsync(fd);
        close(fd);
    }
    return 0;
}

/* Read a whole state file into a NUL-terminated buffer. Returns 0, 1 when
 * the file does not exist, or -1. */
static int read_all(const char *dir, const char *file, char **out)
{
    char path[PATH_CAP];
    FILE *f;
    char *buf = NULL;
    size_t len = 0, cap = 0;

    if (path_of(path, dir, file) != 0)
        return -1;
    f = fopen(path, "rb");
    if (f == NULL) {
        if (errno == ENOENT)
            return 1;
        fprintf(stderr, "redis-shard: open %s: %s\n", path, strerror(errno));
        return -1;
    }
    for (;;) {
        size_t got;

        if (len + 1 >= cap) {
            char *nb;

            cap = cap ? cap * 2 : 4096;
            if (cap > STATE_FILE_MAX || (nb = realloc(buf, cap)) == NULL) {
                fprintf(stderr, "redis-shard: %s: too large\n", path);
                free(buf);
                fclose(f);
                return -1;
            }
            buf = nb;
        }
        got = fread(buf + len, 1, cap - len - 1, f);
        len += got;
        if (got == 0)
            break;
    }
    if (ferror(f)) {
        fprintf(stderr, "redis-shard: read %s: %s\n", path, strerror(errno));
        free(buf);
        fclose(f);
        return -1;
    }
    fclose(f);
    buf[len] = '\0';
    *out = buf;
    return 0;
}

/* A decimal number up to UINT32_MAX (the shared parser, number.h). */
static int parse_u32(const char *s, uint32_t *out)
{
    uint64_t v;
    if (dch__number_parse(s, 0, 0, UINT32_MAX, &v) != 0)
        return -1;
    *out = (uint32_t)v;
    return 0;
}

void cluster_map_config(const cluster *c, dch_map_config *cfg)
{
    dch_map_config_default(cfg);
    memcpy(cfg->hash_key, c->hash_key, 16);
}

void cluster_ring_config(const cluster *c, dch_ring_config *cfg)
{
    dch_ring_config_default(cfg);
    memcpy(cfg->hash_key, c->hash_key, 16);
}

int cluster_find(const cluster *c, const char *name)
{
    for (size_t i = 0; i < c->nbook; i++)
        if (strcmp(c->book[i].name, name) == 0)
            return (int)i;
    return -1;
}

int cluster_add_member(cluster *c, const member *m)
{
    member *nb;

    if (cluster_find(c, m->name) >= 0) {
        fprintf(stderr, "redis-shard: member %s already exists\n", m->name);
        return -1;
    }
    nb = realloc(c->book, (c->nbook + 1) * sizeof *nb);
    if (nb == NULL) {
        fprintf(stderr, "redis-shard: out of memory\n");
        return -1;
    }
    c->book = nb;
    c->book[c->nbook++] = *m;
    return 0;
}

void cluster_drop_member(cluster *c, const char *name)
{
    int i = cluster_find(c, name);

    if (i < 0)
        return;
    memmove(&c->book[i], &c->book[i + 1],
            (c->nbook - (size_t)i - 1) * sizeof *c->book);
    c->nbook--;
}

void cluster_free(cluster *c)
{
    free(c->book);
    free(c->gens);
    dch_map_free(c->map);
    dch_ring_free(c->ring);
    memset(c, 0, sizeof *c);
}

/* One line of DIR/cluster; `line` is NUL-terminated and is cut in place. */
static int parse_line(cluster *c, char *line, int *seen_scheme)
{
    char *save = NULL;
    char *word = strtok_r(line, " ", &save);
    char *a = word ? strtok_r(NULL, " ", &save) : NULL;
    char *b = a ? strtok_r(NULL, " ", &save) : NULL;
    char *extra = b ? strtok_r(NULL, " ", &save) : NULL;

    if (word == NULL)
        return 0; /* blank line */
    if (extra != NULL || a == NULL)
        return -1;
    if (strcmp(word, "scheme") == 0 && b == NULL) {
        int i = word_index(a, scheme_words, 0, 2);

        if (i < 0)
            return -1;
        c->scheme = (scheme)i;
        *seen_scheme = 1;
        return 0;
    }
    if (strcmp(word, "hash-key") == 0 && b == NULL)
        return dch__hex_parse(a, c->hash_key, 16);
    if (strcmp(word, "keys") == 0 && b == NULL)
        return parse_u32(a, &c->keys);
    if (strcmp(word, "member") == 0 && b != NULL) {
        member m;

        if (member_parse(&m, a, b) != 0)
            return -1;
        return cluster_add_member(c, &m);
    }
    if (strcmp(word, "pending") == 0 && b != NULL && c->pending == STEP_NONE &&
        strlen(b) <= DCH_NAME_MAX) {
        int i = word_index(a, step_words, STEP_JOIN, 3);

        if (i < 0)
            return -1;
        c->pending = (step_op)i;
        memcpy(c->pending_name, b, strlen(b) + 1);
        return 0;
    }
    return -1;
}

static int load_book(cluster *c, const char *dir)
{
    char *text = NULL, *line, *save = NULL;
    int rc = read_all(dir, "cluster", &text), seen_scheme = 0, first = 1;

    if (rc == 1)
        fprintf(stderr, "redis-shard: %s holds no cluster (run init)\n", dir);
    if (rc != 0)
        return -1;
    for (line = strtok_r(text, "\n", &save); line != NULL;
         line = strtok_r(NULL, "\n", &save)) {
        if (first) {
            first = 0;
            if (strcmp(line, magic_line) != 0)
                break;
            continue;
        }
        if (parse_line(c, line, &seen_scheme) != 0) {
            fprintf(stderr, "redis-shard: %s/cluster: bad line: %s\n", dir,
                    line);
            free(text);
            return -1;
        }
    }
    free(text);
    if (first || line != NULL || !seen_scheme ||
        (c->pending != STEP_NONE && cluster_find(c, c->pending_name) < 0)) {
        fprintf(stderr, "redis-shard: %s/cluster is not a cluster file\n", dir);
        return -1;
    }
    return 0;
}

static int load_gens(cluster *c, const char *dir)
{
    char *text = NULL, *line, *save = NULL;
    int rc;

    if (c->keys == 0)
        return 0;
    c->gens = calloc(c->keys, sizeof *c->gens);
    if (c->gens == NULL) {
        fprintf(stderr, "redis-shard: out of memory\n");
        return -1;
    }
    rc = read_all(dir, "gens", &text);
    if (rc != 0)
        return rc == 1 ? 0 : -1;
    for (line = strtok_r(text, "\n", &save); line != NULL;
         line = strtok_r(NULL, "\n", &save)) {
        char *sp = strchr(line, ' ');
        uint32_t i, g;

        if (sp == NULL)
            break;
        *sp = '\0';
        if (parse_u32(line, &i) != 0 || parse_u32(sp + 1, &g) != 0 ||
            i >= c->keys)
            break;
        c->gens[i] = g;
    }
    free(text);
    if (line != NULL) {
        fprintf(stderr, "redis-shard: %s/gens: bad line\n", dir);
        return -1;
    }
    return 0;
}

static int build_router(cluster *c, const char *dir)
{
    if (c->scheme == SCHEME_MAP) {
        char path[PATH_CAP];
        dch_map_config cfg;
        int rc;

        if (path_of(path, dir, "map.dchmap") != 0)
            return -1;
        rc = dch_map_load_file(&c->map, path);
        if (rc != DCH_OK) {
            fprintf(stderr, "redis-shard: %s: %s\n", path, dch_strerror(rc));
            return -1;
        }
        dch_map_get_config(c->map, &cfg);
        if (memcmp(cfg.hash_key, c->hash_key, 16) != 0) {
            fprintf(stderr, "redis-shard: %s: hash key differs from the "
                            "cluster's\n", path);
            return -1;
        }
        for (uint32_t id = 0; id < dch_map_id_limit(c->map); id++) {
            const char *name = dch_map_node_name(c->map, id);

            if (name != NULL && cluster_find(c, name) < 0) {
                fprintf(stderr, "redis-shard: map member %s has no address\n",
                        name);
                return -1;
            }
        }
        return 0;
    } else {
        dch_ring_config cfg;
        int rc;

        cluster_ring_config(c, &cfg);
        rc = dch_ring_new(&c->ring, &cfg);
        for (size_t i = 0; rc == DCH_OK && i < c->nbook; i++)
            if (c->pending != STEP_JOIN ||
                strcmp(c->book[i].name, c->pending_name) != 0)
                rc = dch_ring_add_node(c->ring, c->book[i].name, 1, NULL);
        if (rc != DCH_OK) {
            fprintf(stderr, "redis-shard: building the ring: %s\n",
                    dch_strerror(rc));
            return -1;
        }
        return 0;
    }
}

int cluster_load(cluster *c, const char *dir)
{
    memset(c, 0, sizeof *c);
    if (load_book(c, dir) != 0 || build_router(c, dir) != 0 ||
        load_gens(c, dir) != 0) {
        cluster_free(c);
        return -1;
    }
    return 0;
}

/* Write text built by `fill` into DIR/file atomically. */
static int save_text(const char *dir, const char *file,
                     void (*fill)(FILE *f, const cluster *c),
                     const cluster *c)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    int rc;

    if (f == NULL) {
        fprintf(stderr, "redis-shard: out of memory\n");
        return -1;
    }
    fill(f, c);
    if (fclose(f) != 0) {
        fprintf(stderr, "redis-shard: out of memory\n");
        free(text);
        return -1;
    }
    rc = write_atomic(dir, file, text, len);
    free(text);
    return rc;
}

static void fill_book(FILE *f, const cluster *c)
{
    fprintf(f, "%s\nscheme %s\nhash-key ", magic_line, scheme_name(c->scheme));
    for (int i = 0; i < 16; i++)
        fprintf(f, "%02x", c->hash_key[i]);
    fprintf(f, "\nkeys %" PRIu32 "\n", c->keys);
    for (size_t i = 0; i < c->nbook; i++)
        fprintf(f, "member %s %s:%d\n", c->book[i].name, c->book[i].host,
                c->book[i].port);
    if (c->pending != STEP_NONE)
        fprintf(f, "pending %s %s\n",
                step_words[c->pending], c->pending_name);
}

static void fill_gens(FILE *f, const cluster *c)
{
    for (uint32_t i = 0; i < c->keys; i++)
        if (c->gens[i] != 0)
            fprintf(f, "%" PRIu32 " %" PRIu32 "\n", i, c->gens[i]);
}

int cluster_save_book(const cluster *c, const char *dir)
{
    return save_text(dir, "cluster", fill_book, c);
}

int cluster_save_gens(const cluster *c, const char *dir)
{
    return save_text(dir, "gens", fill_gens, c);
}

int cluster_save_map(const dch_map *m, const char *dir)
{
    char path[PATH_CAP];
    int rc;

    if (path_of(path, dir, "map.dchmap") != 0)
        return -1;
    rc = dch_map_save_file(m, path);
    if (rc != DCH_OK) {
        fprintf(stderr, "redis-shard: write %s: %s (%s)\n", path,
                dch_strerror(rc), strerror(errno));
        return -1;
    }
    return 0;
}

int cluster_create(const char *dir, scheme s, const uint8_t hash_key[16],
                   const member *members, size_t n)
{
    cluster c;
    char path[PATH_CAP];
    int rc = -1;

    memset(&c, 0, sizeof c);
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "redis-shard: mkdir %s: %s\n", dir, strerror(errno));
        return -1;
    }
    if (path_of(path, dir, "cluster") != 0)
        return -1;
    if (access(path, F_OK) == 0) {
        fprintf(stderr, "redis-shard: %s already holds a cluster\n", dir);
        return -1;
    }
    c.scheme = s;
    memcpy(c.hash_key, hash_key, 16);
    for (size_t i = 0; i < n; i++)
        if (cluster_add_member(&c, &members[i]) != 0)
            goto out;
    if (s == SCHEME_MAP) {
        dch_map_config cfg;
        int drc;

        cluster_map_config(&c, &cfg);
        drc = dch_map_new(&c.map, &cfg);
        for (size_t i = 0; drc == DCH_OK && i < n; i++)
            drc = dch_map_add_node(c.map, members[i].name, 1, NULL);
        if (drc != DCH_OK) {
            fprintf(stderr, "redis-shard: building the map: %s\n",
                    dch_strerror(drc));
            goto out;
        }
        /* The book goes first: every member of a published map must have
         * an address. */
        if (cluster_save_book(&c, dir) != 0 || cluster_save_map(c.map, dir) != 0)
            goto out;
    } else if (cluster_save_book(&c, dir) != 0) {
        goto out;
    }
    rc = 0;
out:
    cluster_free(&c);
    return rc;
}
