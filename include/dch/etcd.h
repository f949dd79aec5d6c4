/* SPDX-License-Identifier: MIT */
/*
 * dch-etcd: share a map through etcd.
 *
 * A companion library (target dch::etcd, library dch-etcd; it needs libcurl
 * and json-c, the core library needs neither). It keeps one map under one
 * etcd key and speaks etcd v3's JSON gateway over HTTP (/v3/kv/range,
 * /v3/kv/txn, /v3/watch), so it needs no gRPC.
 *
 * The value stored under the key is exactly what dch_map_save writes; the
 * map's epoch (bytes 48..55) is the version every party compares.
 *
 * Epochs and compare-and-swap. dch_etcd_publish succeeds only if the map
 * stored under the key has the epoch the caller started from (0 when the key
 * holds nothing), and the new map's epoch is above it. The check and the
 * write are one etcd transaction: publish reads the key, checks the stored
 * epoch, then writes under the condition that the key's modification
 * revision is still the one it read. etcd revisions grow with every write,
 * so of two operators who both read epoch E at revision R, the first write
 * moves the key past R and the second transaction fails: it gets
 * DCH_ECONFLICT and the epoch now stored. A publish of a map whose bytes
 * equal the stored value succeeds without writing, which makes a retried or
 * resumed publish harmless.
 *
 * Owners. Byte-equal success means that two operators publishing the same
 * map both succeed. A rollout, which must be the only one moving a key,
 * claims the key first: dch_etcd_set_owner stores an owner record (any
 * string the caller picks, e.g. "token host pid") under the companion key
 * KEY ".owner" by compare-and-swap, so of two claimants one wins, and
 * dch_etcd_publish_owned stores a map only while the record is the
 * caller's (checked in the same transaction as the map's revision).
 * dch_etcd_fetch_owner reads the record and the map at one revision.
 *
 * Outcomes. A publish or a claim that fails with DCH_EIO wrote nothing.
 * One that fails with DCH_EUNKNOWN sent its transaction and got no reply
 * in time (a member stopped mid-call, a quorum that cannot commit): etcd
 * may have applied it, or may apply it later. Read the key to see; the
 * same call again is safe (it succeeds if its write is already stored).
 *
 * Watching. dch_etcd_watch reads the key, then follows etcd's watch stream
 * from the revision after that read; whenever the stream breaks (a member
 * stops, the connection drops, etcd compacts) it reads the key again before
 * watching again, so the latest map is never missed. It delivers only maps
 * whose epoch is above every epoch it delivered before, so a router never
 * steps back.
 *
 * Endpoints. The config names one or more members; a call that cannot reach
 * one (refused, timed out, no leader) moves on to the next, with a random
 * pause after each failure (up to 50 ms doubling to 1 s), until its
 * deadline (request_timeout_ms). Each attempt gets a time of its own: four
 * times the smoothed time etcd took to answer so far (at least 1 s),
 * doubled after each failure, within what is left, so a busy cluster gets
 * long attempts and a hung member costs a short one. Every call is bounded:
 * connect and request timeouts, and a watch deadline. dch_etcd_errmsg says
 * which member failed, how, and how many attempts were made in how long.
 *
 * Threads: a dch_etcd handle is used by one thread at a time; distinct
 * handles are independent. Create one per thread.
 */
#ifndef DCH_ETCD_H
#define DCH_ETCD_H

#include "error.h"
#include "map.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Opaque etcd client. */
typedef struct dch_etcd dch_etcd;

/** The layout of dch_etcd_config that this header describes. */
#define DCH_ETCD_CONFIG_VERSION 1u

/**
 * Client settings. Versioned as dch_map_config is: `version` first, new
 * fields only at the end, each raising DCH_ETCD_CONFIG_VERSION;
 * dch_etcd_config_default writes the fields of version 1 only, and always
 * will.
 */
typedef struct dch_etcd_config {
    /** DCH_ETCD_CONFIG_VERSION (the layout the caller was built with). */
    uint32_t version;
    /**
     * Comma-separated member URLs, e.g.
     * "http://127.0.0.1:2379,http://127.0.0.1:22379". Only http:// and
     * https:// URLs; copied by dch_etcd_new.
     */
    const char *endpoints;
    /** Most time one connection attempt may take, in ms. Default 1000. */
    uint32_t connect_timeout_ms;
    /**
     * Most time a publish, a fetch or a claim may take, in ms, retries over
     * the endpoints included (the call's deadline). Default 5000.
     */
    uint32_t request_timeout_ms;
    /**
     * How long one watch stream stays open before the watcher reads the key
     * again and reopens it, in ms: the bound on how long a silently dead
     * connection can hide a change. Default 10000.
     */
    uint32_t watch_refresh_ms;
} dch_etcd_config;

/** A dch_etcd_config with the defaults (endpoints NULL: set them). */
#define DCH_ETCD_CONFIG_INIT                                                 \
    {                                                                        \
        .version = DCH_ETCD_CONFIG_VERSION, .endpoints = NULL,               \
        .connect_timeout_ms = 1000, .request_timeout_ms = 5000,              \
        .watch_refresh_ms = 10000                                            \
    }

/**
 * Fill `cfg` with the defaults for the layout `version` names (endpoints
 * NULL).
 *
 * @param[out] cfg   the config to fill.
 * @param version    DCH_ETCD_CONFIG_VERSION (as the caller's header has it).
 * @return DCH_OK; DCH_EINVAL if cfg is NULL or the version is not one this
 *         library knows (0 included), and then cfg is left untouched.
 */
DCH_API int dch_etcd_config_init(dch_etcd_config *cfg, uint32_t version);

/** Fill `cfg` with the defaults, version DCH_ETCD_CONFIG_VERSION;
 *  endpoints is set to NULL. NULL is a no-op. */
DCH_API void dch_etcd_config_default(dch_etcd_config *cfg);

/**
 * Create a client. Nothing is sent until the first call.
 *
 * @param[out] out  the client, owned by the caller; untouched on error.
 * @param cfg       the settings; endpoints must hold 1 to 16 URLs.
 * @return DCH_OK; DCH_EINVAL (NULL argument, a cfg->version this library does
 *         not know (0 included), no endpoint or a malformed
 *         one, a zero timeout); DCH_ENOMEM; DCH_EIO (libcurl failed to
 *         start).
 */
DCH_API int dch_etcd_new(dch_etcd **out, const dch_etcd_config *cfg);

/** Free a client. NULL is a no-op. */
DCH_API void dch_etcd_free(dch_etcd *c);

/**
 * A sentence on the last failure of a call on this client (which endpoint,
 * what went wrong), or "" after a success. Borrowed until the next call on
 * the client.
 */
DCH_API const char *dch_etcd_errmsg(const dch_etcd *c);

/**
 * Publish `m` under `key` if the stored map's epoch is `expected_epoch`.
 *
 * @param c               the client.
 * @param key             the etcd key, 1 to 1024 bytes.
 * @param m               the map; its epoch must be above expected_epoch.
 * @param expected_epoch  the epoch of the map the caller started from; 0
 *                        when the key is expected to hold nothing.
 * @param[out] stored_epoch  may be NULL; the epoch stored when the call
 *                        returns: m's on success, the other operator's on
 *                        DCH_ECONFLICT.
 * The owner record (see Owners above) is neither checked nor changed.
 *
 * @return DCH_OK (m is stored, or already was, byte for byte);
 *         DCH_ECONFLICT (the stored epoch is not expected_epoch, or another
 *         publish won the race; nothing was written); DCH_EINVAL (NULL
 *         argument, bad key, epoch not above expected_epoch); DCH_ECORRUPT
 *         (the key holds something that is not a map; nothing written);
 *         DCH_EIO (etcd unreachable or refusing within the request timeout;
 *         nothing was written); DCH_EUNKNOWN (the transaction was sent and
 *         no reply came: it may be applied, now or later; publishing the
 *         same map again succeeds if it was); DCH_ENOMEM.
 */
DCH_API int dch_etcd_publish(dch_etcd *c, const char *key, const dch_map *m,
                             uint64_t expected_epoch, uint64_t *stored_epoch);

/** Most bytes of an owner record. */
#define DCH_ETCD_OWNER_MAX 1024u

/**
 * dch_etcd_publish for the owner of the key: `m` is stored only if, in the
 * same transaction, the owner record under KEY ".owner" is `owner` byte for
 * byte. A map already stored byte for byte is a success only for the owner,
 * so a retried publish of the owner succeeds and a second operator with the
 * same map does not. The record itself is not changed.
 *
 * @param owner  the caller's owner record, 1 to DCH_ETCD_OWNER_MAX bytes;
 *               or NULL: the key must have no owner record (a publish by
 *               nobody in particular that never overrides an owner).
 * @return the codes of dch_etcd_publish; DCH_ECONFLICT also when the owner
 *         record is another one (or absent, or for a NULL owner present;
 *         dch_etcd_errmsg names it, dch_etcd_fetch_owner reads it), and
 *         then nothing was written.
 */
DCH_API int dch_etcd_publish_owned(dch_etcd *c, const char *key, const dch_map *m,
                                   uint64_t expected_epoch, const char *owner,
                                   uint64_t *stored_epoch);

/**
 * Replace the owner record of `key` by compare-and-swap: if the record is
 * `expected_owner` (NULL: there is none), store `owner` (NULL: remove the
 * record). The map under `key` is not touched. A record that is already
 * `owner` is a success (a retried claim whose reply was lost).
 *
 * @return DCH_OK; DCH_ECONFLICT (the record is neither expected_owner nor
 *         owner; dch_etcd_errmsg names it; nothing written); DCH_EINVAL
 *         (NULL client, bad key, a record of 0 or more than
 *         DCH_ETCD_OWNER_MAX bytes); DCH_EIO (nothing written);
 *         DCH_EUNKNOWN (sent, no reply: the record may have changed);
 *         DCH_ENOMEM.
 */
DCH_API int dch_etcd_set_owner(dch_etcd *c, const char *key, const char *expected_owner,
                               const char *owner);

/**
 * Read the owner record of `key` and, when `map` is not NULL, the map
 * stored under it, at one revision (a linearizable read).
 *
 * @param[out] owner  the record, NUL-terminated; "" when there is none.
 * @param cap         owner's size; DCH_ETCD_OWNER_MAX + 1 always suffices.
 * @param[out] map    may be NULL; the stored map, owned by the caller, or
 *                    NULL when the key holds none.
 * @return DCH_OK; DCH_EFULL (cap too small; nothing written to owner);
 *         DCH_ECORRUPT or DCH_EVERSION (the key holds something else than a
 *         map this library reads); DCH_EINVAL (NULL client, owner or key,
 *         cap 0); DCH_EIO; DCH_ENOMEM. Outputs are untouched on error.
 */
DCH_API int dch_etcd_fetch_owner(dch_etcd *c, const char *key, char *owner, size_t cap,
                                 dch_map **map);

/**
 * Read the map stored under `key` (a linearizable read).
 *
 * @param[out] out       the map, owned by the caller; untouched on error.
 * @param[out] revision  may be NULL; etcd's revision at the read.
 * @return DCH_OK; DCH_ENOENT (the key holds nothing); DCH_ECORRUPT or
 *         DCH_EVERSION (it holds something else than a map this library
 *         reads); DCH_EINVAL; DCH_EIO; DCH_ENOMEM.
 */
DCH_API int dch_etcd_fetch(dch_etcd *c, const char *key, dch_map **out,
                           uint64_t *revision);

/**
 * Read the stored map under `key` as it was just before its last change,
 * from etcd's history.
 *
 * @return DCH_OK; DCH_ENOENT (no earlier version, or etcd compacted it
 *         away); the other codes of dch_etcd_fetch.
 */
DCH_API int dch_etcd_fetch_previous(dch_etcd *c, const char *key, dch_map **out);

/**
 * Called by dch_etcd_watch with each newer map. The map is borrowed for the
 * call only (clone it to keep it). Must not use the same client. Return 0
 * to go on watching, anything else to stop.
 */
typedef int (*dch_etcd_watch_fn)(const dch_map *m, void *ctx);

/**
 * Follow the map under `key`, calling `fn` with every map whose epoch is
 * above `after_epoch` and above every epoch delivered before, in increasing
 * epoch order (maps that were replaced before the watcher saw them are
 * skipped; the latest is always delivered). Values that are not maps and
 * deletions are ignored. Broken connections and unreachable members are
 * retried, with pauses, until the deadline.
 *
 * @param timeout_ms  how long to watch; 0 means until fn stops it.
 * @return DCH_OK when the time is up; fn's non-zero value when it stopped
 *         the watch; DCH_EINVAL (NULL argument, bad key); DCH_ENOMEM.
 */
DCH_API int dch_etcd_watch(dch_etcd *c, const char *key, uint64_t after_epoch,
                           uint32_t timeout_ms, dch_etcd_watch_fn fn, void *ctx);

#ifdef __cplusplus
}
#endif

#endif /* DCH_ETCD_H */
