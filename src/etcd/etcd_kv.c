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
 * instead of a conflict with itself. When no attempt got a reply, the
 * outcome is unknown (DCH_EUNKNOWN), never reported as "not written".
 *
 * An owned publish (dch_etcd_publish_owned) adds a second compare to the
 * same transaction: the owner record under KEY ".owner" must be the
 * caller's, so a rollout whose key was claimed by another stores nothing.
 */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include "etcd_internal.h"

#include <stdlib.h>
#include <string.h>

/* {"key": base64(key)} plus, when revision > 0, a read at that revision. */
static json_object *range_request(const char *key, uint64_t revision, bool serializable)
{
    json_object *req = dch__etcd_key_request(key);
    bool ok = req != NULL;
    if (ok && revision > 0) {
        char r[24];
        snprintf(r, sizeof r, "%llu", (unsigned long long)revision);
        ok = dch__json_add_str(req, "revision", r);
    }
    if (ok && serializable)
        ok = dch__json_add(req, "serializable", json_object_new_boolean(1));
    if (!ok) { /* a read at the wrong revision, or a quorum read, is not asked for */
        json_object_put(req);
        return NULL;
    }
    return req;
}

int dch__etcd_range(dch_etcd *c, const char *key, uint64_t revision, bool serializable,
                    uint64_t deadline_ms, json_object **reply)
{
    json_object *req = range_request(key, revision, serializable);
    if (req == NULL)
        return DCH_ENOMEM;
    const int rc = dch__etcd_call(c, "/v3/kv/range", req, DCH__ETCD_READ, deadline_ms, reply);
    json_object_put(req);
    return rc;
}

/* A read of the key within the client's request time. */
static int range(dch_etcd *c, const char *key, uint64_t revision, json_object **reply)
{
    return dch__etcd_range(c, key, revision, false, dch__etcd_now_ms() + c->request_ms, reply);
}

/* Whether the kv's value is exactly the base64 text b64. */
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

/* ---- The key and its owner record, read together ---------------------- */

/*
 * A rollout marks the key it moves with an owner record: a caller's string
 * stored under the companion key KEY ".owner". An owned publish puts the map
 * only while the record is the caller's, in the same transaction, so of two
 * rollouts only the owner's steps are stored; the record itself changes
 * only by compare-and-swap (dch_etcd_set_owner).
 */
#define OWNER_SUFFIX ".owner"

typedef struct names {
    char *key, *okey; /* base64 of the key and of its owner key */
} names;

static void names_free(names *n)
{
    free(n->key);
    free(n->okey);
}

static int names_make(names *n, const char *key)
{
    const size_t len = strlen(key);
    char ok[DCH__ETCD_MAX_KEY + sizeof OWNER_SUFFIX];
    memcpy(ok, key, len);
    memcpy(ok + len, OWNER_SUFFIX, sizeof OWNER_SUFFIX);
    n->key = dch__b64_encode(key, len);
    n->okey = dch__b64_encode(ok, len + sizeof OWNER_SUFFIX - 1);
    if (n->key == NULL || n->okey == NULL) {
        names_free(n);
        return DCH_ENOMEM;
    }
    return DCH_OK;
}

/* {"request_range": {"key": b64key}} (serializable: the member's copy). */
static json_object *range_op(const char *b64key, bool serializable)
{
    json_object *op = json_object_new_object(), *r = json_object_new_object();
    if (op == NULL || r == NULL) {
        json_object_put(op);
        json_object_put(r);
        return NULL;
    }
    bool ok = dch__json_add_str(r, "key", b64key);
    if (ok && serializable)
        ok = dch__json_add(r, "serializable", json_object_new_boolean(1));
    if (!ok)
        json_object_put(r);
    if (!ok || !dch__json_add(op, "request_range", r)) { /* r is freed either way */
        json_object_put(op);
        return NULL;
    }
    return op;
}

/* [range key, range owner key]: what every failure branch and every read of
 * both answers with, at one revision. */
static json_object *both_ranges(const names *n, bool serializable)
{
    json_object *a = json_object_new_array();
    json_object *k = range_op(n->key, serializable), *o = range_op(n->okey, serializable);
    if (a == NULL || k == NULL || o == NULL) {
        json_object_put(a);
        json_object_put(k);
        json_object_put(o);
        return NULL;
    }
    const bool ok = dch__json_push(a, k);
    if (!ok)
        json_object_put(o);
    if (!ok || !dch__json_push(a, o)) { /* k and o are freed either way */
        json_object_put(a);
        return NULL;
    }
    return a;
}

/* What is stored: the map's kv and the owner's kv (NULL when absent),
 * borrowed from reply, and the map's mod_revision. */
typedef struct snapshot {
    json_object *reply; /* owned */
    json_object *map, *owner;
    uint64_t mod;
} snapshot;

static void snapshot_free(snapshot *s)
{
    json_object_put(s->reply);
    *s = (snapshot){0};
}

/* The stored key: its kv object (NULL when absent) inside a range reply. */
static json_object *range_kv(json_object *range_reply)
{
    json_object *kvs = dch__json_get(range_reply, "kvs", json_type_array);
    if (kvs == NULL || json_object_array_length(kvs) == 0)
        return NULL;
    json_object *kv = json_object_array_get_idx(kvs, 0);
    return json_object_is_type(kv, json_type_object) ? kv : NULL;
}

/* The kv of responses[i].response_range of a txn reply. */
static json_object *response_kv(json_object *reply, size_t i)
{
    json_object *resps = dch__json_get(reply, "responses", json_type_array);
    json_object *r = resps && json_object_array_length(resps) > i
                         ? json_object_array_get_idx(resps, i) : NULL;
    return range_kv(dch__json_get(r, "response_range", json_type_object));
}

/* Take a txn reply whose responses are both_ranges into s (which owns it). */
static int snapshot_take(dch_etcd *c, json_object *reply, snapshot *s)
{
    *s = (snapshot){reply, response_kv(reply, 0), response_kv(reply, 1), 0};
    if (s->map != NULL && !dch__json_u64(s->map, "mod_revision", &s->mod)) {
        snapshot_free(s);
        dch__etcd_fail(c, "etcd's reply has a malformed mod_revision");
        return DCH_EIO;
    }
    return DCH_OK;
}

/* Read the key and its owner at one revision, by `deadline`. */
static int read_both(dch_etcd *c, const names *n, bool serializable, uint64_t deadline,
                     snapshot *s)
{
    json_object *req = dch__json_wrap("success", both_ranges(n, serializable));
    if (req == NULL)
        return DCH_ENOMEM;
    json_object *reply;
    const int rc = dch__etcd_call(c, "/v3/kv/txn", req, DCH__ETCD_READ, deadline, &reply);
    json_object_put(req);
    return rc == DCH_OK ? snapshot_take(c, reply, s) : rc;
}

/* The owner record of s as text (malloc'd, "" when none); NULL when out of
 * memory or when the record is not valid base64 (then "?"). */
static char *owner_text(const snapshot *s)
{
    json_object *v = dch__json_get(s->owner, "value", json_type_string);
    uint8_t *bytes;
    size_t n;
    if (v == NULL)
        return strdup("");
    if (dch__b64_decode(json_object_get_string(v), (size_t)json_object_get_string_len(v),
                        &bytes, &n) != DCH_OK)
        return strdup("?");
    char *t = realloc(bytes, n + 1);
    if (t == NULL) {
        free(bytes);
        return NULL;
    }
    t[n] = '\0';
    return t;
}

/* "another rollout owns the key" for errmsg, naming the record. */
static void fail_owned(dch_etcd *c, const snapshot *s)
{
    char *who = owner_text(s);
    if (who != NULL && who[0] != '\0')
        dch__etcd_fail(c, "the key is owned: %s", who);
    else
        dch__etcd_fail(c, "the key has no owner record (a publish outside the rollout "
                       "cleared it)");
    free(who);
}

/* ---- Publish ----------------------------------------------------------- */

/* One publish: the texts it compares and writes. A plain publish ignores
 * the owner record; an owned one needs it to be `owner`, or absent when
 * owner is NULL. */
typedef struct pub {
    names n;
    const char *b64; /* the map */
    bool owned;
    char *owner; /* base64 of the owner record, or NULL */
    uint64_t new_epoch, expected;
} pub;

/*
 * {"compare": [], "success": [{op: {}}], "failure": both_ranges(n)}: the
 * frame of a txn, with *cmps its list of compares and *body the object of
 * its one operation, for the caller to fill. Every object goes into req
 * (or a container already in req) as soon as it exists, so that freeing
 * req frees all, and the dch__json helpers free what they cannot add.
 * NULL when an allocation fails: then nothing is left allocated.
 */
static json_object *txn_new(const names *n, const char *op, json_object **cmps,
                            json_object **body)
{
    json_object *req = json_object_new_object(), *ok = NULL, *step = NULL;
    const bool built = req != NULL &&
                       dch__json_add(req, "compare", *cmps = json_object_new_array()) &&
                       dch__json_add(req, "success", ok = json_object_new_array()) &&
                       dch__json_add(req, "failure", both_ranges(n, false)) &&
                       dch__json_push(ok, step = json_object_new_object()) &&
                       dch__json_add(step, op, *body = json_object_new_object());
    if (!built) {
        json_object_put(req);
        return NULL;
    }
    return req;
}

/* Push onto cmps the compare "the owner record is `value`", or, when
 * value is NULL, "there is no owner record" (its version is 0). */
static bool push_owner_compare(json_object *cmps, const names *n, const char *value)
{
    json_object *cmp = json_object_new_object();
    return dch__json_push(cmps, cmp) && dch__json_add_str(cmp, "key", n->okey) &&
           dch__json_add_str(cmp, "result", "EQUAL") &&
           (value != NULL ? dch__json_add_str(cmp, "target", "VALUE") &&
                                dch__json_add_str(cmp, "value", value)
                          : dch__json_add_str(cmp, "target", "VERSION") &&
                                dch__json_add_str(cmp, "version", "0"));
}

/* "if the map's mod_revision is R [and the owner is ours], put the map;
 * else read both". NULL when it cannot be built whole: half a txn (no
 * compare, "value": null) is never sent. */
static json_object *publish_txn(const pub *p, uint64_t mod_revision)
{
    char rev[24];
    snprintf(rev, sizeof rev, "%llu", (unsigned long long)mod_revision);
    json_object *cmps, *put, *cmp = NULL;
    json_object *req = txn_new(&p->n, "request_put", &cmps, &put);
    const bool built = req != NULL && dch__json_push(cmps, cmp = json_object_new_object()) &&
                       dch__json_add_str(cmp, "key", p->n.key) &&
                       dch__json_add_str(cmp, "target", "MOD") &&
                       dch__json_add_str(cmp, "result", "EQUAL") &&
                       dch__json_add_str(cmp, "mod_revision", rev) &&
                       (!p->owned || push_owner_compare(cmps, &p->n, p->owner)) &&
                       dch__json_add_str(put, "key", p->n.key) &&
                       dch__json_add_str(put, "value", p->b64);
    if (!built) {
        json_object_put(req);
        return NULL;
    }
    return req;
}

enum { DECIDE_WRITE = 1 };

/* What a snapshot means for p: DCH_OK (already stored, by its owner),
 * DECIDE_WRITE (the stored epoch is the expected one: send the txn), or an
 * error (DCH_ECONFLICT, DCH_ECORRUPT, ...). */
static int decide(dch_etcd *c, const pub *p, const snapshot *s, bool raced, uint64_t *stored)
{
    const bool owned = !p->owned ||
                       (p->owner != NULL ? value_equals(s->owner, p->owner) : s->owner == NULL);
    if (s->map != NULL && value_equals(s->map, p->b64) && owned) {
        *stored = p->new_epoch;
        return DCH_OK;
    }
    const int rc = stored_epoch_of(c, s->map, stored);
    if (rc != DCH_OK)
        return rc;
    if (!owned) {
        fail_owned(c, s);
        return DCH_ECONFLICT;
    }
    if (*stored != p->expected) {
        if (raced) /* the compare failed: a publish came between read and write */
            dch__etcd_fail(c, "another publish won: the stored epoch is %llu, not %llu "
                           "(etcd at %s answered)", (unsigned long long)*stored,
                           (unsigned long long)p->expected, c->answered ? c->answered : "?");
        else
            dch__etcd_fail(c, "the stored epoch is %llu, not %llu (etcd at %s answered)",
                           (unsigned long long)*stored, (unsigned long long)p->expected,
                           c->answered ? c->answered : "?");
        return DCH_ECONFLICT;
    }
    return DECIDE_WRITE;
}

/* Send the txn `req` (taken, freed here; NULL: it could not be built) as a
 * write; on DCH_OK, *reply is etcd's answer (the caller frees it) and
 * *succeeded whether its compare held. */
static int call_txn(dch_etcd *c, json_object *req, uint64_t deadline, json_object **reply,
                    bool *succeeded)
{
    if (req == NULL)
        return DCH_ENOMEM;
    int rc = dch__etcd_call(c, "/v3/kv/txn", req, DCH__ETCD_WRITE, deadline, reply);
    json_object_put(req);
    if (rc != DCH_OK)
        return rc;
    json_object *s;
    *succeeded = json_object_object_get_ex(*reply, "succeeded", &s) && json_object_get_boolean(s);
    return DCH_OK;
}

/* Send the txn for snapshot s; on a failed compare, s becomes the state the
 * failure branch read. DCH_OK when written, DECIDE_WRITE to decide again. */
static int send_txn(dch_etcd *c, const pub *p, snapshot *s, uint64_t deadline,
                    uint64_t *stored)
{
    json_object *reply;
    bool succeeded;
    int rc = call_txn(c, publish_txn(p, s->mod), deadline, &reply, &succeeded);
    if (rc != DCH_OK)
        return rc;
    if (succeeded) {
        json_object_put(reply);
        *stored = p->new_epoch;
        return DCH_OK;
    }
    snapshot_free(s);
    rc = snapshot_take(c, reply, s);
    return rc == DCH_OK ? DECIDE_WRITE : rc;
}

/*
 * Read, decide, write; the first read is serializable (the member's own
 * copy, which needs no quorum round and answers while a quorum is busy),
 * and any answer other than "write" is confirmed by a linearizable read
 * before it is reported, since a lagging member may show an older map. A
 * failed compare reads the key in the same transaction, and that read
 * (current by construction) is decided on again: our own bytes mean an
 * earlier attempt applied; the expected epoch at a newer revision means
 * the first read was stale, and the write is tried once more.
 */
static int publish(dch_etcd *c, const pub *p, uint64_t *stored)
{
    const uint64_t deadline = dch__etcd_now_ms() + c->request_ms;
    snapshot s;
    int rc = read_both(c, &p->n, true, deadline, &s);
    if (rc != DCH_OK)
        return rc;
    rc = decide(c, p, &s, false, stored);
    if (rc != DECIDE_WRITE) { /* DCH_OK too: a lagging member's "stored" is no proof */
        snapshot_free(&s);
        rc = read_both(c, &p->n, false, deadline, &s);
        if (rc != DCH_OK)
            return rc;
        rc = decide(c, p, &s, false, stored);
    }
    for (int round = 0; rc == DECIDE_WRITE && round < 4; round++) {
        rc = send_txn(c, p, &s, deadline, stored);
        if (rc == DECIDE_WRITE)
            rc = decide(c, p, &s, true, stored);
    }
    if (rc == DECIDE_WRITE) { /* four rounds lost to writers of our epoch */
        dch__etcd_fail(c, "another publish won: the stored epoch is %llu",
                       (unsigned long long)*stored);
        rc = DCH_ECONFLICT;
    }
    snapshot_free(&s);
    return rc;
}

static bool key_ok(const char *key)
{
    return key != NULL && key[0] != '\0' && strlen(key) <= DCH__ETCD_MAX_KEY;
}

static bool owner_ok(const char *owner)
{
    return owner != NULL && owner[0] != '\0' && strlen(owner) <= DCH_ETCD_OWNER_MAX;
}

/* The base64 of m's bytes, or NULL when out of memory. */
static char *map_b64(const dch_map *m)
{
    size_t n;
    dch_map_save(m, NULL, 0, &n);
    uint8_t *bytes = malloc(n);
    if (bytes == NULL)
        return NULL;
    dch_map_save(m, bytes, n, &n);
    char *b64 = dch__b64_encode(bytes, n);
    free(bytes);
    return b64;
}

static int publish_as(dch_etcd *c, const char *key, const dch_map *m, uint64_t expected_epoch,
                      bool owned, const char *owner, uint64_t *stored_epoch)
{
    pub p = {.new_epoch = dch_map_epoch(m), .expected = expected_epoch, .owned = owned};
    int rc = names_make(&p.n, key);
    if (rc != DCH_OK)
        return rc;
    char *b64 = map_b64(m);
    p.b64 = b64;
    p.owner = owner ? dch__b64_encode(owner, strlen(owner)) : NULL;
    uint64_t stored = 0;
    rc = b64 == NULL || (owner && p.owner == NULL) ? DCH_ENOMEM : publish(c, &p, &stored);
    free(b64);
    free(p.owner);
    names_free(&p.n);
    if (stored_epoch != NULL && (rc == DCH_OK || rc == DCH_ECONFLICT))
        *stored_epoch = stored;
    return rc;
}

int dch_etcd_publish(dch_etcd *c, const char *key, const dch_map *m, uint64_t expected_epoch,
                     uint64_t *stored_epoch)
{
    if (c == NULL || !key_ok(key) || m == NULL || dch_map_epoch(m) <= expected_epoch)
        return DCH_EINVAL;
    return publish_as(c, key, m, expected_epoch, false, NULL, stored_epoch);
}

int dch_etcd_publish_owned(dch_etcd *c, const char *key, const dch_map *m,
                           uint64_t expected_epoch, const char *owner, uint64_t *stored_epoch)
{
    if (c == NULL || !key_ok(key) || m == NULL || dch_map_epoch(m) <= expected_epoch ||
        (owner != NULL && !owner_ok(owner)))
        return DCH_EINVAL;
    return publish_as(c, key, m, expected_epoch, true, owner, stored_epoch);
}

/* ---- The owner record --------------------------------------------------- */

/* "if the owner record is `expected` (none: version 0), put `owner` (or
 * delete the record when owner is NULL); else read both". NULL when it
 * cannot be built whole: a txn missing its compare would be an
 * unconditional put or delete. */
static json_object *owner_txn(const names *n, const char *expected, const char *owner)
{
    json_object *cmps, *w;
    json_object *req = txn_new(n, owner != NULL ? "request_put" : "request_delete_range",
                               &cmps, &w);
    const bool built = req != NULL && push_owner_compare(cmps, n, expected) &&
                       dch__json_add_str(w, "key", n->okey) &&
                       (owner == NULL || dch__json_add_str(w, "value", owner));
    if (!built) {
        json_object_put(req);
        return NULL;
    }
    return req;
}

/* Send owner_txn; a failed compare that finds `owner` already stored is a
 * success (an earlier attempt applied). */
static int set_owner(dch_etcd *c, const names *n, const char *expected, const char *owner)
{
    json_object *reply;
    bool succeeded;
    int rc = call_txn(c, owner_txn(n, expected, owner), dch__etcd_now_ms() + c->request_ms,
                      &reply, &succeeded);
    if (rc != DCH_OK)
        return rc;
    if (succeeded) {
        json_object_put(reply);
        return DCH_OK;
    }
    snapshot s;
    rc = snapshot_take(c, reply, &s);
    if (rc != DCH_OK)
        return rc;
    const bool done = owner != NULL ? value_equals(s.owner, owner) : s.owner == NULL;
    if (!done) {
        char *who = owner_text(&s);
        dch__etcd_fail(c, "the owner record changed: it is now %s",
                       who == NULL ? "?" : who[0] ? who : "absent");
        free(who);
    }
    snapshot_free(&s);
    return done ? DCH_OK : DCH_ECONFLICT;
}

int dch_etcd_set_owner(dch_etcd *c, const char *key, const char *expected_owner,
                       const char *owner)
{
    if (c == NULL || !key_ok(key) || (expected_owner != NULL && !owner_ok(expected_owner)) ||
        (owner != NULL && !owner_ok(owner)))
        return DCH_EINVAL;
    names n;
    int rc = names_make(&n, key);
    if (rc != DCH_OK)
        return rc;
    char *e = expected_owner ? dch__b64_encode(expected_owner, strlen(expected_owner)) : NULL;
    char *o = owner ? dch__b64_encode(owner, strlen(owner)) : NULL;
    if ((expected_owner && e == NULL) || (owner && o == NULL))
        rc = DCH_ENOMEM;
    else
        rc = set_owner(c, &n, e, o);
    free(e);
    free(o);
    names_free(&n);
    return rc;
}

int dch_etcd_fetch_owner(dch_etcd *c, const char *key, char *owner, size_t cap, dch_map **map)
{
    if (c == NULL || !key_ok(key) || owner == NULL || cap == 0)
        return DCH_EINVAL;
    names n;
    int rc = names_make(&n, key);
    if (rc != DCH_OK)
        return rc;
    snapshot s;
    rc = read_both(c, &n, false, dch__etcd_now_ms() + c->request_ms, &s);
    names_free(&n);
    if (rc != DCH_OK)
        return rc;
    char *who = owner_text(&s);
    dch_map *m = NULL;
    if (who == NULL)
        rc = DCH_ENOMEM;
    else if (strlen(who) >= cap)
        rc = DCH_EFULL;
    else if (map != NULL && s.map != NULL)
        rc = dch__etcd_load_value(s.map, &m);
    if (rc != DCH_OK && rc != DCH_ENOMEM && rc != DCH_EFULL)
        dch__etcd_fail(c, "the key holds something that is not a map (%s)", dch_strerror(rc));
    if (rc == DCH_OK) {
        memcpy(owner, who, strlen(who) + 1);
        if (map != NULL)
            *map = m;
    }
    free(who);
    snapshot_free(&s);
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
