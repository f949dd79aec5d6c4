/* SPDX-License-Identifier: MIT */
/*
 * Redis commands over hiredis (see store.h). Commands are always sent as
 * argument vectors, never formatted strings, so key and value bytes need no
 * quoting.
 */
#include "store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

/* Long enough for a MIGRATE of a full batch on a loaded machine, short
 * enough that a dead server fails a run instead of hanging it. */
static const struct timeval store_timeout = {5, 0};
#define MIGRATE_TIMEOUT_MS "5000"

/* Conditional write: a script runs atomically on the server. */
static const char set_if_exists_script[] =
    "if redis.call('EXISTS', KEYS[1]) == 1 then "
    "redis.call('SET', KEYS[1], ARGV[1]) return 1 end return 0";

static void report(const redisContext *c, const char *what, const char *detail)
{
    fprintf(stderr, "redis-shard: %s:%d: %s: %s\n",
            c->tcp.host ? c->tcp.host : "?", c->tcp.port, what, detail);
}

/* Send one command and take its reply; NULL (reported) on a connection
 * error or an error reply. */
static redisReply *command(redisContext *c, const char *what, int argc,
                           const char **argv, const size_t *lens)
{
    redisReply *r = redisCommandArgv(c, argc, argv, lens);

    if (r == NULL) {
        report(c, what, c->errstr[0] ? c->errstr : "no reply");
        return NULL;
    }
    if (r->type == REDIS_REPLY_ERROR) {
        report(c, what, r->str);
        freeReplyObject(r);
        return NULL;
    }
    return r;
}

static int next_reply(redisContext *c, const char *what, redisReply **out)
{
    void *r = NULL;

    if (redisGetReply(c, &r) != REDIS_OK || r == NULL) {
        report(c, what, c->errstr[0] ? c->errstr : "no reply");
        return -1;
    }
    *out = r;
    return 0;
}

int store_connect(redisContext **out, const char *host, int port)
{
    redisContext *c = redisConnectWithTimeout(host, port, store_timeout);

    if (c == NULL) {
        fprintf(stderr, "redis-shard: %s:%d: cannot allocate a connection\n",
                host, port);
        return -1;
    }
    if (c->err) {
        fprintf(stderr, "redis-shard: %s:%d: connect: %s\n", host, port,
                c->errstr);
        redisFree(c);
        return -1;
    }
    if (redisSetTimeout(c, store_timeout) != REDIS_OK) {
        report(c, "set timeout", c->errstr);
        redisFree(c);
        return -1;
    }
    *out = c;
    return 0;
}

void store_close(redisContext *c)
{
    if (c != NULL)
        redisFree(c);
}

long long store_dbsize(redisContext *c)
{
    const char *argv[] = {"DBSIZE"};
    size_t lens[] = {6};
    redisReply *r = command(c, "DBSIZE", 1, argv, lens);
    long long n = -1;

    if (r == NULL)
        return -1;
    if (r->type == REDIS_REPLY_INTEGER && r->integer >= 0)
        n = r->integer;
    else
        report(c, "DBSIZE", "unexpected reply");
    freeReplyObject(r);
    return n;
}

static int expect_ok(redisContext *c, const char *what, redisReply *r)
{
    int ok = r->type == REDIS_REPLY_STATUS && strcmp(r->str, "OK") == 0;

    if (!ok)
        report(c, what, "unexpected reply");
    freeReplyObject(r);
    return ok ? 0 : -1;
}

int store_set(redisContext *c, const char *key, size_t klen, const char *val,
              size_t vlen)
{
    const char *argv[] = {"SET", key, val};
    size_t lens[] = {3, klen, vlen};
    redisReply *r = command(c, "SET", 3, argv, lens);

    return r == NULL ? -1 : expect_ok(c, "SET", r);
}

int store_set_if_exists(redisContext *c, const char *key, size_t klen,
                        const char *val, size_t vlen)
{
    const char *argv[] = {"EVAL", set_if_exists_script, "1", key, val};
    size_t lens[] = {4, sizeof set_if_exists_script - 1, 1, klen, vlen};
    redisReply *r = command(c, "EVAL set-if-exists", 5, argv, lens);
    int res = -1;

    if (r == NULL)
        return -1;
    if (r->type == REDIS_REPLY_INTEGER && (r->integer == 0 || r->integer == 1))
        res = (int)r->integer;
    else
        report(c, "EVAL set-if-exists", "unexpected reply");
    freeReplyObject(r);
    return res;
}

static int take_value(redisContext *c, redisReply *r, char *buf, size_t cap,
                      size_t *len_out)
{
    if (r->type == REDIS_REPLY_NIL)
        return 0;
    if (r->type != REDIS_REPLY_STRING || r->len >= cap) {
        report(c, "GET", "unexpected reply");
        return -1;
    }
    memcpy(buf, r->str, r->len);
    buf[r->len] = '\0';
    *len_out = r->len;
    return 1;
}

int store_get(redisContext *c, const char *key, size_t klen, char *buf,
              size_t cap, size_t *len_out)
{
    const char *argv[] = {"GET", key};
    size_t lens[] = {3, klen};
    redisReply *r = command(c, "GET", 2, argv, lens);
    int res;

    if (r == NULL)
        return -1;
    res = take_value(c, r, buf, cap, len_out);
    freeReplyObject(r);
    return res;
}

int store_set_many(redisContext *c, const char *const *keys,
                   const size_t *klens, const char *const *vals,
                   const size_t *vlens, size_t n)
{
    int status = 0;

    for (size_t i = 0; i < n; i++) {
        const char *argv[] = {"SET", keys[i], vals[i]};
        size_t lens[] = {3, klens[i], vlens[i]};

        if (redisAppendCommandArgv(c, 3, argv, lens) != REDIS_OK) {
            report(c, "SET (pipelined)", "cannot queue the command");
            return -1;
        }
    }
    /* Every queued reply is read, even after a bad one, so the connection
     * stays in step. */
    for (size_t i = 0; i < n; i++) {
        redisReply *r;

        if (next_reply(c, "SET (pipelined)", &r) != 0)
            return -1;
        if (r->type == REDIS_REPLY_ERROR) {
            report(c, "SET (pipelined)", r->str);
            freeReplyObject(r);
            status = -1;
        } else if (expect_ok(c, "SET (pipelined)", r) != 0) {
            status = -1;
        }
    }
    return status;
}

int store_get_many(redisContext *c, const char *const *keys,
                   const size_t *klens, size_t n,
                   int (*fn)(size_t i, const char *val, size_t len, void *ctx),
                   void *ctx)
{
    int status = 0;

    for (size_t i = 0; i < n; i++) {
        const char *argv[] = {"GET", keys[i]};
        size_t lens[] = {3, klens[i]};

        if (redisAppendCommandArgv(c, 2, argv, lens) != REDIS_OK) {
            report(c, "GET (pipelined)", "cannot queue the command");
            return -1;
        }
    }
    for (size_t i = 0; i < n; i++) {
        redisReply *r;
        int rc = 0;

        if (next_reply(c, "GET (pipelined)", &r) != 0)
            return -1;
        if (r->type == REDIS_REPLY_NIL)
            rc = fn(i, NULL, 0, ctx);
        else if (r->type == REDIS_REPLY_STRING)
            rc = fn(i, r->str, r->len, ctx);
        else {
            report(c, "GET (pipelined)",
                   r->type == REDIS_REPLY_ERROR ? r->str : "unexpected reply");
            rc = -1;
        }
        freeReplyObject(r);
        if (rc != 0 && status == 0)
            status = rc;
    }
    return status;
}

int store_scan(redisContext *c, unsigned max_calls,
               int (*fn)(const char *key, size_t len, void *ctx), void *ctx)
{
    char cursor[32] = "0";

    for (unsigned call = 0; call < max_calls; call++) {
        const char *argv[] = {"SCAN", cursor, "COUNT", "1000"};
        size_t lens[] = {4, strlen(cursor), 5, 4};
        redisReply *r = command(c, "SCAN", 4, argv, lens);
        redisReply *keys;
        int rc = 0;

        if (r == NULL)
            return -1;
        if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
            r->element[0]->type != REDIS_REPLY_STRING ||
            r->element[0]->len >= sizeof cursor ||
            r->element[1]->type != REDIS_REPLY_ARRAY) {
            report(c, "SCAN", "unexpected reply");
            freeReplyObject(r);
            return -1;
        }
        memcpy(cursor, r->element[0]->str, r->element[0]->len);
        cursor[r->element[0]->len] = '\0';
        keys = r->element[1];
        for (size_t i = 0; i < keys->elements && rc == 0; i++) {
            if (keys->element[i]->type != REDIS_REPLY_STRING) {
                report(c, "SCAN", "a key that is not a string");
                rc = -1;
            } else {
                rc = fn(keys->element[i]->str, keys->element[i]->len, ctx);
            }
        }
        freeReplyObject(r);
        if (rc != 0)
            return rc;
        if (strcmp(cursor, "0") == 0)
            return 0;
    }
    report(c, "SCAN", "too many calls: the keyspace did not end");
    return -1;
}

/* SHUTDOWN NOSAVE or SHUTDOWN SAVE: the server closes the connection
 * instead of replying, so only an error reply fails. */
static int shutdown_with(redisContext *c, const char *how)
{
    const char *argv[] = {"SHUTDOWN", how};
    size_t lens[] = {8, strlen(how)};
    redisReply *r = redisCommandArgv(c, 2, argv, lens);

    if (r != NULL && r->type == REDIS_REPLY_ERROR) {
        report(c, "SHUTDOWN", r->str);
        freeReplyObject(r);
        return -1;
    }
    if (r != NULL)
        freeReplyObject(r);
    return 0;
}

int store_shutdown(redisContext *c)
{
    return shutdown_with(c, "NOSAVE");
}

int store_shutdown_save(redisContext *c)
{
    return shutdown_with(c, "SAVE");
}

int store_migrate(redisContext *c, const char *host, int port,
                  const char *const *keys, const size_t *klens, size_t n)
{
    char portbuf[16];
    const char **argv;
    size_t *lens;
    redisReply *r;
    int res = -1;

    if (n == 0)
        return 0;
    if (n > (size_t)INT32_MAX - 7) {
        report(c, "MIGRATE", "too many keys for one command");
        return -1;
    }
    argv = malloc((n + 7) * sizeof *argv);
    lens = malloc((n + 7) * sizeof *lens);
    if (argv == NULL || lens == NULL) {
        free(argv);
        free(lens);
        report(c, "MIGRATE", "out of memory");
        return -1;
    }
    snprintf(portbuf, sizeof portbuf, "%d", port);
    /* MIGRATE host port "" 0 timeout KEYS k1 .. kn: with KEYS the key
     * argument is empty; without COPY the keys leave this server; without
     * REPLACE a key that already exists on the target is an error. */
    argv[0] = "MIGRATE";
    argv[1] = host;
    argv[2] = portbuf;
    argv[3] = "";
    argv[4] = "0";
    argv[5] = MIGRATE_TIMEOUT_MS;
    argv[6] = "KEYS";
    for (size_t i = 0; i < 7; i++)
        lens[i] = strlen(argv[i]);
    for (size_t i = 0; i < n; i++) {
        argv[7 + i] = keys[i];
        lens[7 + i] = klens[i];
    }
    r = command(c, "MIGRATE", (int)(n + 7), argv, lens);
    if (r != NULL) {
        /* NOKEY: none of the keys was here, which the caller's own count
         * of what it moved then shows. */
        if (r->type == REDIS_REPLY_STATUS &&
            (strcmp(r->str, "OK") == 0 || strcmp(r->str, "NOKEY") == 0))
            res = 0;
        else
            report(c, "MIGRATE", "unexpected reply");
        freeReplyObject(r);
    }
    free(argv);
    free(lens);
    return res;
}
