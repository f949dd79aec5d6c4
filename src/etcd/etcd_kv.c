/* SPDX-License-Identifier: MIT */
/*
 * Publish and fetch: the map under one etcd key, written only by
 * compare-and-swap on its epoch.
 *
 * Publish reads the key (value and modification revision), checks that the
 * stored map's epoch is the caller's, then sends one transaction: "if the
 * key's mod_revision is still R, put the new map, else read the key". A key
 * that holds nothing has mod_revision 0 in etcd's comparisons, so the same
 * transaction covers the first publish. Every write moves the key's
 * mod_revision past R, so between two publishers that read the same R only
 * the first transaction applies: the check of the epoch and the write are
 * atomic together even though they are two requests.
 *
 * A transaction whose reply was lost may have applied; the retry (or the
 * caller's next publish) then finds its own bytes stored and reports success
 * instead of a conflict with itself.
 */
#include "etcd_internal.h"

#include <stdlib.h>
#include <string.h>

/* The stored key: its kv object (NULL when absent) inside a range reply. */
static json_object *range_kv(json_object *range_reply)
{
    json_object *kvs = dch__json_get(range_reply, "kvs", json_type_array);
    if (kvs == NULL || json_object_array_length(kvs) == 0)
        return NULL;
    json_object *kv = json_object_array_get_idx(kvs, 0);
    return json_object_is_type(kv, json_type_object) ? kv : NULL;
}

static bool key_ok(const char *key)
{
    return key != NULL && key[0] != '\0' && strlen(key) <= DCH__ETCD_MAX_KEY;
}

/* {"key": base64(key)} plus, when revision > 0, a read at that revision. */
static json_object *range_request(const char *key, uint64_t revision)
{
    json_object *req = dch__etcd_key_request(key);
    if (req != NULL && revision > 0) {
        char r[24];
        snprintf(r, sizeof r, "%llu", (unsigned long long)revision);
        json_object_object_add(req, "revision", json_object_new_string(r));
    }
    return req;
}

int dch__etcd_range(dch_etcd *c, const char *key, uint64_t revision, uint64_t deadline_ms,
                    json_object **reply)
{
    json_object *req = range_request(key, revision);
    if (req == NULL)
        return DCH_ENOMEM;
    const int rc = dch__etcd_call(c, "/v3/kv/range", req, deadline_ms, reply);
    json_object_put(req);
    return rc;
}

/* A read of the key within the client's request time. */
static int range(dch_etcd *c, const char *key, uint64_t revision, json_object **reply)
{
    return dch__etcd_range(c, key, revision, dch__etcd_now_ms() + c->request_ms, reply);
}

/* Whether the kv's value is exactly `bytes`. */
static bool value_equals(json_object *kv, const char *b64)
{
    json_object *v = dch__json_get(kv, "value", json_type_string);
    return v != NULL && strcmp(json_object_get_string(v), b64) == 0;
}

/* The epoch of the map stored in kv (0 when kv is NULL). */
static int stored_epoch_of(dch_etcd *c, json_object *kv, uint64_t *epoch)
{
    *epoch = 0;
    if (kv == NULL)
        return DCH_OK;
    dch_map *m;
    const int rc = dch__etcd_load_value(kv, &m);
    if (rc != DCH_OK) {
        dch__etcd_fail(c, "the key holds something that is not a map (%s)", dch_strerror(rc));
        return rc == DCH_ENOMEM ? rc : DCH_ECORRUPT;
    }
    *epoch = dch_map_epoch(m);
    dch_map_free(m);
    return DCH_OK;
}

static json_object *txn_request(const char *key, uint64_t mod_revision, const char *value_b64)
{
    char *k = dch__b64_encode(key, strlen(key));
    char rev[24];
    snprintf(rev, sizeof rev, "%llu", (unsigned long long)mod_revision);
    json_object *req = json_object_new_object();
    json_object *cmp = json_object_new_object();
    json_object *put = json_object_new_object();
    json_object *put_op = json_object_new_object();
    json_object *get_op = json_object_new_object();
    json_object *get = json_object_new_object();
    json_object *cmps = json_object_new_array();
    json_object *ok = json_object_new_array();
    json_object *fail = json_object_new_array();
    if (!k || !req || !cmp || !put || !put_op || !get_op || !get || !cmps || !ok || !fail) {
        free(k);
        json_object_put(req);
        json_object_put(cmp);
        json_object_put(put);
        json_object_put(put_op);
        json_object_put(get_op);
        json_object_put(get);
        json_object_put(cmps);
        json_object_put(ok);
        json_object_put(fail);
        return NULL;
    }
    json_object_object_add(cmp, "key", json_object_new_string(k));
    json_object_object_add(cmp, "target", json_object_new_string("MOD"));
    json_object_object_add(cmp, "result", json_object_new_string("EQUAL"));
    json_object_object_add(cmp, "mod_revision", json_object_new_string(rev));
    json_object_array_add(cmps, cmp);
    json_object_object_add(put, "key", json_object_new_string(k));
    json_object_object_add(put, "value", json_object_new_string(value_b64));
    json_object_object_add(put_op, "request_put", put);
    json_object_array_add(ok, put_op);
    json_object_object_add(get, "key", json_object_new_string(k));
    json_object_object_add(get_op, "request_range", get);
    json_object_array_add(fail, get_op);
    json_object_object_add(req, "compare", cmps);
    json_object_object_add(req, "success", ok);
    json_object_object_add(req, "failure", fail);
    free(k);
    return req;
}

/* Decide from the key as stored (kv, NULL if absent) after a failed
 * compare: our own bytes mean an earlier attempt of ours applied. */
static int after_lost_race(dch_etcd *c, json_object *kv, const char *b64, uint64_t new_epoch,
                           uint64_t *stored)
{
    if (kv != NULL && value_equals(kv, b64)) {
        *stored = new_epoch;
        return DCH_OK;
    }
    const int rc = stored_epoch_of(c, kv, stored);
    if (rc != DCH_OK)
        return rc;
    dch__etcd_fail(c, "another publish won: the stored epoch is %llu",
                   (unsigned long long)*stored);
    return DCH_ECONFLICT;
}

static int publish(dch_etcd *c, const char *key, const char *b64, uint64_t new_epoch,
                   uint64_t expected, uint64_t *stored)
{
    json_object *reply = NULL;
    int rc = range(c, key, 0, &reply);
    if (rc != DCH_OK)
        return rc;
    json_object *kv = range_kv(reply);
    uint64_t mod_revision = 0;
    if (kv != NULL && !dch__json_u64(kv, "mod_revision", &mod_revision)) {
        json_object_put(reply);
        dch__etcd_fail(c, "etcd's reply has a malformed mod_revision");
        return DCH_EIO;
    }
    if (kv != NULL && value_equals(kv, b64)) {
        json_object_put(reply);
        *stored = new_epoch;
        return DCH_OK;
    }
    rc = stored_epoch_of(c, kv, stored);
    json_object_put(reply);
    if (rc != DCH_OK)
        return rc;
    if (*stored != expected) {
        dch__etcd_fail(c, "the stored epoch is %llu, not %llu", (unsigned long long)*stored,
                       (unsigned long long)expected);
        return DCH_ECONFLICT;
    }
    json_object *req = txn_request(key, mod_revision, b64);
    if (req == NULL)
        return DCH_ENOMEM;
    rc = dch__etcd_call(c, "/v3/kv/txn", req, dch__etcd_now_ms() + c->request_ms, &reply);
    json_object_put(req);
    if (rc != DCH_OK)
        return rc;
    json_object *succeeded;
    if (json_object_object_get_ex(reply, "succeeded", &succeeded) &&
        json_object_get_boolean(succeeded)) {
        json_object_put(reply);
        *stored = new_epoch;
        return DCH_OK;
    }
    /* The failure branch read the key: responses[0].response_range. */
    json_object *resps = dch__json_get(reply, "responses", json_type_array);
    json_object *r0 = resps && json_object_array_length(resps) > 0
                          ? json_object_array_get_idx(resps, 0) : NULL;
    json_object *rr = dch__json_get(r0, "response_range", json_type_object);
    rc = after_lost_race(c, range_kv(rr), b64, new_epoch, stored);
    json_object_put(reply);
    return rc;
}

int dch_etcd_publish(dch_etcd *c, const char *key, const dch_map *m, uint64_t expected_epoch,
                     uint64_t *stored_epoch)
{
    if (c == NULL || !key_ok(key) || m == NULL || dch_map_epoch(m) <= expected_epoch)
        return DCH_EINVAL;
    size_t n;
    dch_map_save(m, NULL, 0, &n);
    uint8_t *bytes = malloc(n);
    if (bytes == NULL)
        return DCH_ENOMEM;
    dch_map_save(m, bytes, n, &n);
    char *b64 = dch__b64_encode(bytes, n);
    free(bytes);
    if (b64 == NULL)
        return DCH_ENOMEM;
    uint64_t stored = 0;
    const int rc = publish(c, key, b64, dch_map_epoch(m), expected_epoch, &stored);
    free(b64);
    if (stored_epoch != NULL && (rc == DCH_OK || rc == DCH_ECONFLICT))
        *stored_epoch = stored;
    return rc;
}

/* Load the map of kv; DCH_ENOENT when kv is NULL. */
static int load_kv(dch_etcd *c, json_object *kv, dch_map **out)
{
    if (kv == NULL) {
        dch__etcd_fail(c, "the key holds no map");
        return DCH_ENOENT;
    }
    const int rc = dch__etcd_load_value(kv, out);
    if (rc != DCH_OK && rc != DCH_ENOMEM)
        dch__etcd_fail(c, "the key holds something that is not a map (%s)", dch_strerror(rc));
    return rc;
}

/* The checks and the read that both fetches start with. */
static int fetch_range(dch_etcd *c, const char *key, dch_map **out, json_object **reply)
{
    if (c == NULL || !key_ok(key) || out == NULL)
        return DCH_EINVAL;
    return range(c, key, 0, reply);
}

int dch_etcd_fetch(dch_etcd *c, const char *key, dch_map **out, uint64_t *revision)
{
    json_object *reply;
    int rc = fetch_range(c, key, out, &reply);
    if (rc != DCH_OK)
        return rc;
    uint64_t rev = 0;
    dch__json_u64(dch__json_get(reply, "header", json_type_object), "revision", &rev);
    rc = load_kv(c, range_kv(reply), out);
    json_object_put(reply);
    if (rc == DCH_OK && revision != NULL)
        *revision = rev;
    return rc;
}

int dch_etcd_fetch_previous(dch_etcd *c, const char *key, dch_map **out)
{
    json_object *reply;
    int rc = fetch_range(c, key, out, &reply);
    if (rc != DCH_OK)
        return rc;
    json_object *kv = range_kv(reply);
    uint64_t mod = 0;
    if (kv == NULL || !dch__json_u64(kv, "mod_revision", &mod) || mod <= 1) {
        json_object_put(reply);
        dch__etcd_fail(c, "the key has no earlier version");
        return DCH_ENOENT;
    }
    json_object_put(reply);
    rc = range(c, key, mod - 1, &reply);
    if (rc == DCH_EIO && c->grpc_code == 11) { /* OutOfRange: compacted */
        dch__etcd_fail(c, "etcd compacted the key's earlier version away");
        return DCH_ENOENT;
    }
    if (rc != DCH_OK)
        return rc;
    rc = load_kv(c, range_kv(reply), out);
    json_object_put(reply);
    return rc;
}
