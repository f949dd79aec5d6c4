/* SPDX-License-Identifier: MIT */
/*
 * The few Redis commands the example needs, over hiredis's blocking API.
 *
 * One connection is one redisContext and must be used by one thread at a
 * time. Every function returns 0 (or a count, or a flag) on success and -1
 * on any failure: a connection error, a timeout, or an error reply; it then
 * prints what happened to stderr, naming the server, so callers only
 * propagate the -1.
 */
#ifndef REDIS_SHARD_STORE_H
#define REDIS_SHARD_STORE_H

#include <stddef.h>
#include <stdint.h>

#include <hiredis/hiredis.h>

/** Connect to host:port with a 5-second connect and command timeout. */
int store_connect(redisContext **out, const char *host, int port);

/** Close a connection; NULL is a no-op. */
void store_close(redisContext *c);

/** DBSIZE: the number of keys, or -1. */
long long store_dbsize(redisContext *c);

/** SET key value. */
int store_set(redisContext *c, const char *key, size_t klen, const char *val,
              size_t vlen);

/**
 * SET key value only if key exists, atomically on the server (one Lua
 * script, so no other command runs between the check and the write).
 * Returns 1 when written, 0 when the key does not exist, -1 on failure.
 */
int store_set_if_exists(redisContext *c, const char *key, size_t klen,
                        const char *val, size_t vlen);

/**
 * GET key into buf (cap bytes; a longer value fails). Returns 1 with
 * *len_out set when the key exists, 0 when it does not, -1 on failure.
 */
int store_get(redisContext *c, const char *key, size_t klen, char *buf,
              size_t cap, size_t *len_out);

/**
 * Pipelined SETs: sends n commands, then reads the n replies; all must be
 * OK.
 */
int store_set_many(redisContext *c, const char *const *keys,
                   const size_t *klens, const char *const *vals,
                   const size_t *vlens, size_t n);

/**
 * Pipelined GETs: sends n commands, then calls fn(i, value, len, ctx) for
 * reply i, value NULL for a missing key. A non-zero return from fn is
 * remembered and returned once every reply has been read.
 */
int store_get_many(redisContext *c, const char *const *keys,
                   const size_t *klens, size_t n,
                   int (*fn)(size_t i, const char *val, size_t len, void *ctx),
                   void *ctx);

/**
 * Walk the whole keyspace with SCAN, calling fn(key, len, ctx) for each key
 * returned. SCAN returns every key present for the whole walk at least once
 * and may return a key more than once. A non-zero return from fn stops the
 * walk and is returned. The walk is bounded: it fails after `max_calls`
 * SCAN calls.
 */
int store_scan(redisContext *c, unsigned max_calls,
               int (*fn)(const char *key, size_t len, void *ctx), void *ctx);

/**
 * SHUTDOWN NOSAVE: stop the server, keeping nothing. The server closes the
 * connection instead of replying, so only an error reply fails; the
 * connection is then unusable (close it).
 */
int store_shutdown(redisContext *c);

/**
 * SHUTDOWN SAVE: stop the server after it writes its data file (its RDB
 * file in its folder, even with no save points configured), from which a
 * server started again on that folder loads every key. As store_shutdown,
 * the connection is unusable afterwards.
 */
int store_shutdown_save(redisContext *c);

/**
 * MIGRATE the n keys to host:port (database 0), moving them: each key is
 * written on the target and then deleted here, and the server runs no other
 * command in between, so a key is never seen missing from both. Fails on an
 * error reply, which includes a key that already exists on the target.
 * Keys that do not exist here are skipped by the server.
 */
int store_migrate(redisContext *c, const char *host, int port,
                  const char *const *keys, const size_t *klens, size_t n);

#endif /* REDIS_SHARD_STORE_H */
