/* SPDX-License-Identifier: MIT */
/*
 * The dch-etcd client: endpoints, bounded HTTP calls to etcd's JSON gateway
 * with failover, base64 and the reading of the gateway's JSON.
 *
 * The gateway maps etcd's protobuf messages to JSON (proto3 mapping): bytes
 * are base64, 64-bit integers are decimal strings, and fields holding their
 * default value (0, false, empty) are left out, so every reader here treats
 * an absent field as its default.
 *
 * A call goes to the current endpoint; a failure a retry may cure (no
 * connection, a timeout, a 5xx or a gRPC status such as "no leader") moves
 * to the next endpoint after a random pause of up to 50 ms doubling to 1 s,
 * until the call's deadline. An attempt's own time adapts to the cluster:
 * it starts at four times the smoothed time of the answered attempts (at
 * least 1 s) and doubles with each failure, within what is left, so a member
 * that hangs costs one short attempt while a busy cluster that answers in 3 s
 * still gets attempts long enough to answer. A fixed share of the budget
 * (half, before) let two stalled attempts eat a whole 5 s budget.
 *
 * Writes are told from reads: an attempt of a write that may have reached
 * etcd (the request went out, no reply came back, or etcd answered that it
 * timed out or lost its leader while applying) leaves the outcome unknown,
 * and unless a later attempt gets a reply the call says so (DCH_EUNKNOWN)
 * instead of "not written" (DCH_EIO).
 */
#define _POSIX_C_SOURCE 200809L
#include "config_functions.h"
#include "etcd_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pthread.h>
#include <unistd.h>

/* ---- Buffers, time, messages ------------------------------------------ */

int dch__buf_append(dch__buf *b, const void *p, size_t n)
{
    if (n > DCH__ETCD_MAX_REPLY || b->len > DCH__ETCD_MAX_REPLY - n)
        return DCH_EFULL;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *d = realloc(b->data, cap);
        if (d == NULL)
            return DCH_ENOMEM;
        b->data = d;
        b->cap = cap;
    }
    if (n > 0)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
    return DCH_OK;
}

void dch__buf_free(dch__buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

uint64_t dch__etcd_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void dch__etcd_sleep_ms(uint64_t ms)
{
    struct timespec ts = {(time_t)(ms / 1000u), (long)(ms % 1000u) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

uint64_t dch__etcd_backoff_ms(dch_etcd *c, unsigned attempt)
{
    /* xorshift64: the pause needs spread, not quality. */
    uint64_t x = c->rng ? c->rng : 0x9E3779B97F4A7C15u;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    c->rng = x;
    const uint64_t cap = 50u << (attempt < 4 ? attempt : 4); /* 50 .. 800 */
    return x % ((attempt >= 5 ? 1000u : cap) + 1u);
}

void dch__etcd_fail(dch_etcd *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->errmsg, sizeof c->errmsg, fmt, ap);
    va_end(ap);
}

/* ---- Client ----------------------------------------------------------- */

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc;

static void curl_init(void)
{
    curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* dch_etcd_config_default and dch_etcd_config_init (config_functions.h). */
DCH__CONFIG_FUNCTIONS(dch_etcd, dch_etcd_config, DCH_ETCD_CONFIG_INIT, DCH_ETCD_CONFIG_VERSION)

/* One endpoint URL: http:// or https://, a host, no spaces. */
static bool endpoint_ok(const char *s, size_t n)
{
    size_t scheme;
    if (n > 7 && strncmp(s, "http://", 7) == 0)
        scheme = 7;
    else if (n > 8 && strncmp(s, "https://", 8) == 0)
        scheme = 8;
    else
        return false;
    for (size_t i = scheme; i < n; i++)
        if ((unsigned char)s[i] <= ' ' || s[i] == 0x7f)
            return false;
    return n < 512;
}

void dch_etcd_free(dch_etcd *c)
{
    if (c == NULL)
        return;
    if (c->curl)
        curl_easy_cleanup(c->curl);
    for (size_t i = 0; i < c->nendpoints; i++)
        free(c->endpoints[i]);
    free(c);
}

int dch_etcd_new(dch_etcd **out, const dch_etcd_config *cfg)
{
    if (out == NULL || cfg == NULL || cfg->version != DCH_ETCD_CONFIG_VERSION ||
        cfg->endpoints == NULL ||
        cfg->connect_timeout_ms == 0 || cfg->request_timeout_ms == 0 ||
        cfg->watch_refresh_ms == 0)
        return DCH_EINVAL;
    /* Check every endpoint before allocating anything. */
    size_t count = 0;
    for (const char *s = cfg->endpoints;;) {
        const char *comma = strchr(s, ',');
        size_t n = comma ? (size_t)(comma - s) : strlen(s);
        if (!endpoint_ok(s, n) || ++count > DCH__ETCD_MAX_ENDPOINTS)
            return DCH_EINVAL;
        if (comma == NULL)
            break;
        s = comma + 1;
    }
    pthread_once(&curl_once, curl_init);
    if (curl_init_rc != CURLE_OK)
        return DCH_EIO;
    dch_etcd *c = calloc(1, sizeof *c);
    if (c == NULL)
        return DCH_ENOMEM;
    for (const char *s = cfg->endpoints;;) {
        const char *comma = strchr(s, ',');
        size_t n = comma ? (size_t)(comma - s) : strlen(s);
        while (n > 0 && s[n - 1] == '/') /* paths are appended with a '/' */
            n--;
        char *e = malloc(n + 1);
        if (e == NULL) {
            dch_etcd_free(c);
            return DCH_ENOMEM;
        }
        memcpy(e, s, n);
        e[n] = '\0';
        c->endpoints[c->nendpoints++] = e;
        if (comma == NULL)
            break;
        s = comma + 1;
    }
    c->curl = curl_easy_init();
    if (c->curl == NULL) {
        dch_etcd_free(c);
        return DCH_EIO;
    }
    c->connect_ms = cfg->connect_timeout_ms;
    c->request_ms = cfg->request_timeout_ms;
    c->refresh_ms = cfg->watch_refresh_ms;
    /* Distinct seeds for clients made together (racing operators). */
    c->rng = dch__etcd_now_ms() * 0x9E3779B97F4A7C15u ^ (uint64_t)(uintptr_t)c ^
             (uint64_t)getpid() << 32;
    *out = c;
    return DCH_OK;
}

const char *dch_etcd_errmsg(const dch_etcd *c)
{
    return c ? c->errmsg : "";
}

/* ---- One call --------------------------------------------------------- */

static size_t collect(char *p, size_t size, size_t n, void *ctx)
{
    dch__buf *b = ctx;
    return dch__buf_append(b, p, size * n) == DCH_OK ? size * n : 0;
}

/* gRPC status codes a later attempt (or another member) may not return:
 * 1 cancelled, 2 unknown, 4 deadline exceeded, 10 aborted, 14 unavailable
 * (etcd's "no leader", "leader changed", "request timed out" are among
 * them). The others (invalid argument, too large, ...) are final. */
static bool grpc_retryable(int64_t code)
{
    return code == 1 || code == 2 || code == 4 || code == 10 || code == 14;
}

int dch__etcd_post(dch_etcd *c, const char *url, const char *body, uint64_t budget_ms,
                   curl_write_callback write, void *ctx, CURLcode *result)
{
    struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/json");
    if (hdr == NULL)
        return DCH_ENOMEM;
    CURL *h = c->curl;
    curl_easy_reset(h);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)c->connect_ms);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)budget_ms);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, write);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, ctx);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    *result = curl_easy_perform(h);
    curl_slist_free_all(hdr);
    return DCH_OK;
}

enum { ATTEMPT_OK, ATTEMPT_RETRY, ATTEMPT_FINAL };

/* One attempt's outcome besides its class: the error code, and whether the
 * request may have reached etcd and been applied. */
typedef struct attempt_result {
    int err;
    bool maybe_applied;
} attempt_result;

/* Whether an error reply to a write leaves it possibly applied: etcd times
 * a proposal out ("request timed out", "leader changed") after proposing
 * it, and the proposal may still commit. "no leader" refuses before. */
static bool reply_maybe_applied(int64_t code, long status, const char *msg)
{
    if (msg != NULL && strstr(msg, "no leader") != NULL)
        return false;
    return grpc_retryable(code) || (status >= 500 && code == 0);
}

/* The class of an error reply (status not 200, or no JSON object). */
static int error_reply(dch_etcd *c, const char *url, long status, json_object *j,
                       attempt_result *r)
{
    const char *msg = "no JSON reply";
    int64_t code = 0;
    json_object *v;
    if (j && json_object_object_get_ex(j, "message", &v))
        msg = json_object_get_string(v);
    else if (j && json_object_object_get_ex(j, "error", &v))
        msg = json_object_get_string(v);
    if (j && json_object_object_get_ex(j, "code", &v))
        code = json_object_get_int64(v);
    c->grpc_code = code;
    dch__etcd_fail(c, "etcd at %s: HTTP %ld: %s", url, status, msg);
    r->err = DCH_EIO;
    r->maybe_applied = reply_maybe_applied(code, status, msg);
    /* The gateway gives gRPC statuses their own HTTP codes (unavailable
     * 503, deadline 504, cancelled 408), so the gRPC code decides. */
    if (grpc_retryable(code) || (status >= 500 && code == 0))
        return ATTEMPT_RETRY;
    r->maybe_applied = false; /* a final refusal: nothing was applied */
    return ATTEMPT_FINAL;
}

static int attempt(dch_etcd *c, const char *url, const char *body, uint64_t budget_ms,
                   json_object **resp, attempt_result *r)
{
    dch__buf buf = {0};
    c->grpc_code = 0;
    r->maybe_applied = false;
    CURLcode rc;
    if (dch__etcd_post(c, url, body, budget_ms, collect, &buf, &rc) != DCH_OK) {
        r->err = DCH_ENOMEM;
        return ATTEMPT_FINAL;
    }
    long status = 0, sent = 0;
    curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_getinfo(c->curl, CURLINFO_REQUEST_SIZE, &sent);
    if (rc != CURLE_OK) {
        dch__etcd_fail(c, "etcd at %s: %s after %llu ms", url, curl_easy_strerror(rc),
                       (unsigned long long)budget_ms);
        if (rc != CURLE_OPERATION_TIMEDOUT)
            dch__etcd_fail(c, "etcd at %s: %s", url, curl_easy_strerror(rc));
        dch__buf_free(&buf);
        r->err = DCH_EIO;
        /* Bytes of the request went out on a connection: etcd may have it. */
        r->maybe_applied = sent > 0;
        return ATTEMPT_RETRY;
    }
    json_object *j = buf.data ? json_tokener_parse(buf.data) : NULL;
    dch__buf_free(&buf);
    if (status == 200 && j != NULL && json_object_is_type(j, json_type_object)) {
        *resp = j;
        return ATTEMPT_OK;
    }
    const int cls = error_reply(c, url, status, j, r);
    json_object_put(j);
    return cls;
}

/* The time one attempt may take: four times the smoothed answer time (at
 * least 1 s and the connect timeout), doubled per failure, within `left`;
 * an attempt that would leave less than half its time for the next one
 * takes all that is left. */
static uint64_t attempt_budget(const dch_etcd *c, unsigned failures, uint64_t left)
{
    uint64_t base = c->latency_ms * 4;
    if (base < 1000)
        base = 1000;
    if (base < c->connect_ms)
        base = c->connect_ms;
    const uint64_t b = base << (failures < 6 ? failures : 6);
    return b >= left || left - b < base / 2 ? left : b;
}

/* Smooth the time of an answered attempt into c->latency_ms (1/4 weight). */
static void note_latency(dch_etcd *c, uint64_t took)
{
    c->latency_ms = c->latency_ms == 0 ? took : (3 * c->latency_ms + took) / 4;
}

/* The message of a call that ran out of time, from the last failure. */
static void gave_up(dch_etcd *c, bool unknown, const char *maybe_url, unsigned attempts,
                    uint64_t took)
{
    char last[sizeof c->errmsg];
    memcpy(last, c->errmsg, sizeof last);
    if (unknown)
        dch__etcd_fail(c, "the request reached etcd at %s and no answer came back, so it may "
                       "or may not be applied (last failure: %s; %u attempt%s in %llu ms)",
                       maybe_url, last, attempts, attempts == 1 ? "" : "s",
                       (unsigned long long)took);
    else
        dch__etcd_fail(c, "%s (gave up after %u attempt%s in %llu ms)", last, attempts,
                       attempts == 1 ? "" : "s", (unsigned long long)took);
}

int dch__etcd_call(dch_etcd *c, const char *path, json_object *req, dch__etcd_kind kind,
                   uint64_t deadline_ms, json_object **resp)
{
    const char *body = json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN);
    if (body == NULL)
        return DCH_ENOMEM;
    const uint64_t t0 = dch__etcd_now_ms();
    const char *maybe_url = NULL; /* a member that may have applied the write */
    for (unsigned failures = 0;; failures++) {
        const uint64_t now = dch__etcd_now_ms();
        if (now >= deadline_ms || (failures > 0 && deadline_ms - now < 20)) {
            gave_up(c, maybe_url != NULL, maybe_url, failures, now - t0);
            return maybe_url != NULL ? DCH_EUNKNOWN : DCH_EIO;
        }
        const uint64_t budget = attempt_budget(c, failures, deadline_ms - now);
        const char *endpoint = c->endpoints[c->current];
        char url[600];
        snprintf(url, sizeof url, "%s%s", endpoint, path);
        attempt_result r = {DCH_OK, false};
        switch (attempt(c, url, body, budget, resp, &r)) {
        case ATTEMPT_OK:
            note_latency(c, dch__etcd_now_ms() - now);
            c->answered = endpoint;
            c->errmsg[0] = '\0';
            return DCH_OK;
        case ATTEMPT_FINAL:
            if (maybe_url != NULL && r.err == DCH_EIO) { /* an earlier attempt may apply */
                gave_up(c, true, maybe_url, failures + 1, dch__etcd_now_ms() - t0);
                return DCH_EUNKNOWN;
            }
            return r.err;
        default:
            break;
        }
        if (kind == DCH__ETCD_WRITE && r.maybe_applied)
            maybe_url = endpoint;
        c->current = (c->current + 1) % c->nendpoints;
        const uint64_t after = dch__etcd_now_ms();
        if (after < deadline_ms) {
            const uint64_t pause = dch__etcd_backoff_ms(c, failures);
            dch__etcd_sleep_ms(pause < deadline_ms - after ? pause : deadline_ms - after);
        }
    }
}

/* ---- Base64 ----------------------------------------------------------- */

static const char b64_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *dch__b64_encode(const void *p, size_t n)
{
    const uint8_t *in = p;
    char *out = malloc((n + 2) / 3 * 4 + 1);
    if (out == NULL)
        return NULL;
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        const uint32_t b0 = in[i];
        const uint32_t b1 = i + 1 < n ? in[i + 1] : 0;
        const uint32_t b2 = i + 2 < n ? in[i + 2] : 0;
        const uint32_t v = b0 << 16 | b1 << 8 | b2;
        out[o++] = b64_alphabet[v >> 18 & 63];
        out[o++] = b64_alphabet[v >> 12 & 63];
        out[o++] = i + 1 < n ? b64_alphabet[v >> 6 & 63] : '=';
        out[o++] = i + 2 < n ? b64_alphabet[v & 63] : '=';
    }
    out[o] = '\0';
    return out;
}

static int b64_value(char ch)
{
    if (ch >= 'A' && ch <= 'Z')
        return ch - 'A';
    if (ch >= 'a' && ch <= 'z')
        return ch - 'a' + 26;
    if (ch >= '0' && ch <= '9')
        return ch - '0' + 52;
    if (ch == '+')
        return 62;
    if (ch == '/')
        return 63;
    return -1;
}

int dch__b64_decode(const char *s, size_t slen, uint8_t **out, size_t *outlen)
{
    if (slen % 4 != 0)
        return DCH_ECORRUPT;
    size_t pad = 0;
    if (slen >= 1 && s[slen - 1] == '=')
        pad++;
    if (slen >= 2 && s[slen - 2] == '=')
        pad++;
    const size_t n = slen / 4 * 3 - pad;
    uint8_t *d = malloc(n ? n : 1);
    if (d == NULL)
        return DCH_ENOMEM;
    size_t o = 0;
    for (size_t i = 0; i < slen; i += 4) {
        uint32_t v = 0;
        for (size_t k = 0; k < 4; k++) {
            const bool padded = i + k >= slen - pad;
            const int x = padded ? 0 : b64_value(s[i + k]);
            if (x < 0) {
                free(d);
                return DCH_ECORRUPT;
            }
            v = v << 6 | (uint32_t)x;
        }
        const uint8_t bytes[3] = {(uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
        for (size_t k = 0; k < 3 && o < n; k++)
            d[o++] = bytes[k];
    }
    *out = d;
    *outlen = n;
    return DCH_OK;
}

/* ---- JSON ------------------------------------------------------------- */

bool dch__json_u64(json_object *o, const char *field, uint64_t *out)
{
    json_object *v;
    if (o == NULL || !json_object_object_get_ex(o, field, &v)) {
        *out = 0;
        return true;
    }
    if (json_object_is_type(v, json_type_int)) {
        *out = json_object_get_uint64(v);
        return true;
    }
    if (!json_object_is_type(v, json_type_string))
        return false;
    const char *s = json_object_get_string(v);
    if (*s < '0' || *s > '9')
        return false;
    char *end;
    errno = 0;
    const unsigned long long x = strtoull(s, &end, 10);
    if (*end != '\0' || errno != 0)
        return false;
    *out = (uint64_t)x;
    return true;
}

json_object *dch__etcd_key_request(const char *key)
{
    char *k = dch__b64_encode(key, strlen(key));
    json_object *req = json_object_new_object();
    if (k == NULL || req == NULL) {
        free(k);
        json_object_put(req);
        return NULL;
    }
    const bool ok = dch__json_add_str(req, "key", k);
    free(k);
    if (!ok) {
        json_object_put(req);
        return NULL;
    }
    return req;
}

bool dch__json_add(json_object *o, const char *field, json_object *v)
{
    if (v == NULL)
        return false;
    if (o == NULL || json_object_object_add(o, field, v) != 0) {
        json_object_put(v);
        return false;
    }
    return true;
}

bool dch__json_add_str(json_object *o, const char *field, const char *s)
{
    return dch__json_add(o, field, json_object_new_string(s));
}

json_object *dch__json_wrap(const char *field, json_object *v)
{
    json_object *o = json_object_new_object();
    if (!dch__json_add(o, field, v)) { /* v is freed */
        json_object_put(o);
        return NULL;
    }
    return o;
}

bool dch__json_push(json_object *a, json_object *v)
{
    if (v == NULL)
        return false;
    if (a == NULL || json_object_array_add(a, v) != 0) {
        json_object_put(v);
        return false;
    }
    return true;
}

json_object *dch__json_get(json_object *o, const char *field, json_type type)
{
    json_object *v;
    if (o == NULL || !json_object_object_get_ex(o, field, &v) || !json_object_is_type(v, type))
        return NULL;
    return v;
}

int dch__etcd_load_value(json_object *kv, dch_map **out)
{
    json_object *v = dch__json_get(kv, "value", json_type_string);
    if (v == NULL)
        return DCH_ECORRUPT; /* an empty value is left out: not a map */
    uint8_t *bytes;
    size_t n;
    int rc = dch__b64_decode(json_object_get_string(v), (size_t)json_object_get_string_len(v),
                             &bytes, &n);
    if (rc != DCH_OK)
        return rc;
    rc = dch_map_load(out, bytes, n);
    free(bytes);
    return rc;
}
