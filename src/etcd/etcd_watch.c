/* SPDX-License-Identifier: MIT */
/*
 * Watch: follow the map under a key, never stepping back an epoch.
 *
 * Each round reads the key (so the latest map is delivered even if every
 * change happened while no stream was open), then opens etcd's watch stream
 * at the revision after that read and delivers the maps of its PUT events.
 * The stream is newline-separated JSON messages, {"result": {...}}. A round
 * ends when the stream breaks, etcd cancels the watch (compaction), or the
 * refresh time passes; the next round starts on the next endpoint after a
 * pause, again with a read. Epochs only grow in what is delivered: a map at
 * or below the last delivered epoch is dropped, whatever order etcd (or
 * two members after a failover) shows them in.
 */
#include "etcd_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct watch_state {
    dch_etcd_watch_fn fn;
    void *ctx;
    uint64_t delivered; /* the highest epoch delivered (or after_epoch) */
    int stop; /* fn's non-zero return, once it stopped the watch */
    bool ended; /* etcd cancelled the watch, or sent garbage */
    size_t messages; /* messages of the current stream */
    dch__buf line;
    int oom;
} watch_state;

/* Offer one stored value to the callback. */
static void offer(watch_state *w, json_object *kv)
{
    dch_map *m;
    const int rc = dch__etcd_load_value(kv, &m);
    if (rc == DCH_ENOMEM)
        w->oom = 1;
    if (rc != DCH_OK)
        return; /* not a map: a router keeps the map it has */
    if (dch_map_epoch(m) > w->delivered) {
        w->delivered = dch_map_epoch(m);
        w->stop = w->fn(m, w->ctx);
    }
    dch_map_free(m);
}

static void on_message(watch_state *w, const char *text)
{
    json_object *j = json_tokener_parse(text);
    json_object *result = dch__json_get(j, "result", json_type_object);
    if (result == NULL) {
        w->ended = true; /* an error message: the stream is over */
        json_object_put(j);
        return;
    }
    json_object *canceled;
    if (json_object_object_get_ex(result, "canceled", &canceled) &&
        json_object_get_boolean(canceled))
        w->ended = true;
    json_object *events = dch__json_get(result, "events", json_type_array);
    const size_t n = events ? json_object_array_length(events) : 0;
    for (size_t i = 0; i < n && w->stop == 0; i++) {
        json_object *ev = json_object_array_get_idx(events, i);
        if (dch__json_get(ev, "type", json_type_string) != NULL)
            continue; /* DELETE: only PUT, the default type, is left out */
        json_object *kv = dch__json_get(ev, "kv", json_type_object);
        if (kv != NULL)
            offer(w, kv);
    }
    json_object_put(j);
}

static size_t on_bytes(char *p, size_t size, size_t n, void *ctx)
{
    watch_state *w = ctx;
    const size_t total = size * n;
    for (size_t i = 0; i < total; i++) {
        if (p[i] != '\n') {
            /* Bytes up to the next newline in one append. */
            size_t j = i;
            while (j < total && p[j] != '\n')
                j++;
            if (dch__buf_append(&w->line, p + i, j - i) != DCH_OK) {
                w->ended = true;
                return 0;
            }
            i = j - 1;
            continue;
        }
        if (w->line.len > 0) {
            w->messages++;
            on_message(w, w->line.data);
        }
        w->line.len = 0;
        if (w->stop != 0 || w->ended)
            return 0; /* aborts the transfer */
    }
    return total;
}

/* Read the key, deliver its map if newer; the read's revision in *rev. */
static int read_key(dch_etcd *c, const char *key, watch_state *w, uint64_t deadline,
                    uint64_t *rev)
{
    json_object *reply;
    uint64_t until = dch__etcd_now_ms() + c->request_ms;
    if (deadline != 0 && deadline < until)
        until = deadline;
    const int rc = dch__etcd_range(c, key, 0, false, until, &reply);
    if (rc != DCH_OK)
        return rc;
    *rev = 0;
    dch__json_u64(dch__json_get(reply, "header", json_type_object), "revision", rev);
    json_object *kvs = dch__json_get(reply, "kvs", json_type_array);
    if (kvs != NULL && json_object_array_length(kvs) > 0)
        offer(w, json_object_array_get_idx(kvs, 0));
    json_object_put(reply);
    return DCH_OK;
}

/* One stream from revision `from`, for at most budget_ms. */
static int stream(dch_etcd *c, const char *key, uint64_t from, uint64_t budget_ms,
                  watch_state *w)
{
    char rev[24];
    snprintf(rev, sizeof rev, "%llu", (unsigned long long)from);
    json_object *create = dch__etcd_key_request(key);
    if (!dch__json_add_str(create, "start_revision", rev)) {
        json_object_put(create);
        return DCH_ENOMEM;
    }
    json_object *req = dch__json_wrap("create_request", create);
    if (req == NULL)
        return DCH_ENOMEM;
    const char *body = json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN);
    char url[600];
    snprintf(url, sizeof url, "%s/v3/watch", c->endpoints[c->current]);
    w->line.len = 0;
    w->ended = false;
    w->messages = 0;
    CURLcode rc;
    const int made = body != NULL ? dch__etcd_post(c, url, body, budget_ms, on_bytes, w, &rc)
                                  : DCH_ENOMEM;
    json_object_put(req);
    if (made != DCH_OK)
        return DCH_ENOMEM;
    if (w->stop == 0 && rc != CURLE_OK && rc != CURLE_OPERATION_TIMEDOUT)
        dch__etcd_fail(c, "etcd watch at %s: %s", url, curl_easy_strerror(rc));
    /* A stream that was created and ran its full time is healthy; anything
     * else (a connect timeout included) is a failure. */
    return rc == CURLE_OPERATION_TIMEDOUT && !w->ended && w->messages > 0 ? DCH_OK : DCH_EIO;
}

int dch_etcd_watch(dch_etcd *c, const char *key, uint64_t after_epoch, uint32_t timeout_ms,
                   dch_etcd_watch_fn fn, void *ctx)
{
    if (c == NULL || key == NULL || key[0] == '\0' || strlen(key) > DCH__ETCD_MAX_KEY ||
        fn == NULL)
        return DCH_EINVAL;
    watch_state w = {.fn = fn, .ctx = ctx, .delivered = after_epoch};
    const uint64_t deadline = timeout_ms ? dch__etcd_now_ms() + timeout_ms : 0;
    unsigned failures = 0;
    int rc = DCH_OK;
    for (;;) {
        uint64_t now = dch__etcd_now_ms();
        if (deadline != 0 && now >= deadline)
            break;
        uint64_t rev = 0;
        rc = read_key(c, key, &w, deadline, &rev);
        if (rc == DCH_ENOMEM || w.oom) {
            rc = DCH_ENOMEM;
            break;
        }
        if (w.stop != 0)
            break;
        if (rc == DCH_OK) {
            now = dch__etcd_now_ms();
            /* The read may end past the deadline: compare before
             * subtracting, or deadline - now wraps and the stream would
             * run a whole refresh_ms past --timeout. */
            uint64_t budget = c->refresh_ms;
            if (deadline != 0)
                budget = now >= deadline ? 0 : deadline - now < budget ? deadline - now : budget;
            if (budget == 0)
                break;
            rc = stream(c, key, rev + 1, budget, &w);
            if (w.oom) {
                rc = DCH_ENOMEM;
                break;
            }
            if (w.stop != 0)
                break;
        }
        if (rc == DCH_OK) {
            failures = 0;
            continue;
        }
        /* A failure: pause, then the next member. */
        c->current = (c->current + 1) % c->nendpoints;
        uint64_t pause = dch__etcd_backoff_ms(c, failures++);
        now = dch__etcd_now_ms();
        if (deadline != 0 && (now >= deadline || deadline - now < pause))
            pause = now >= deadline ? 0 : deadline - now;
        dch__etcd_sleep_ms(pause);
    }
    dch__buf_free(&w.line);
    if (w.stop != 0)
        return w.stop;
    return rc == DCH_ENOMEM ? rc : DCH_OK;
}
