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
 * to the next endpoint after a pause that doubles from 50 ms to 800 ms, until
 * the call's deadline. One attempt gets at most half the request timeout, so
 * a member that hangs leaves time to try another.
 */
#define _POSIX_C_SOURCE 200809L
#include "etcd_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pthread.h>

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

uint64_t dch__etcd_backoff_ms(unsigned attempt)
{
    return 50u << (attempt < 4 ? attempt : 4);
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

void dch_etcd_config_default(dch_etcd_config *cfg)
{
    if (cfg == NULL)
        return;
    const dch_etcd_config def = DCH_ETCD_CONFIG_INIT;
    *cfg = def;
}

int dch_etcd_config_init(dch_etcd_config *cfg, uint32_t version)
{
    if (cfg == NULL || version != DCH_ETCD_CONFIG_VERSION)
        return DCH_EINVAL;
    dch_etcd_config_default(cfg);
    return DCH_OK;
}

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

static int attempt(dch_etcd *c, const char *url, const char *body, uint64_t budget_ms,
                   json_object **resp, int *err)
{
    dch__buf buf = {0};
    c->grpc_code = 0;
    CURLcode rc;
    if (dch__etcd_post(c, url, body, budget_ms, collect, &buf, &rc) != DCH_OK) {
        *err = DCH_ENOMEM;
        return ATTEMPT_FINAL;
    }
    long status = 0;
    curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &status);
    if (rc != CURLE_OK) {
        dch__etcd_fail(c, "etcd at %s: %s", url, curl_easy_strerror(rc));
        dch__buf_free(&buf);
        *err = DCH_EIO;
        return ATTEMPT_RETRY;
    }
    json_object *j = buf.data ? json_tokener_parse(buf.data) : NULL;
    if (status == 200 && j != NULL && json_object_is_type(j, json_type_object)) {
        dch__buf_free(&buf);
        *resp = j;
        return ATTEMPT_OK;
    }
    /* An error reply: {"error": "...", "code": N, "message": "..."}. */
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
    json_object_put(j);
    dch__buf_free(&buf);
    *err = DCH_EIO;
    /* The gateway gives gRPC statuses their own HTTP codes (unavailable
     * 503, deadline 504, cancelled 408), so the gRPC code decides. */
    if (grpc_retryable(code) || (status >= 500 && code == 0))
        return ATTEMPT_RETRY;
    return ATTEMPT_FINAL;
}

int dch__etcd_call(dch_etcd *c, const char *path, json_object *req, uint64_t deadline_ms,
                   json_object **resp)
{
    const char *body = json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN);
    if (body == NULL)
        return DCH_ENOMEM;
    for (unsigned failures = 0;; failures++) {
        const uint64_t now = dch__etcd_now_ms();
        if (now >= deadline_ms)
            return DCH_EIO; /* errmsg holds the last attempt's failure */
        uint64_t budget = deadline_ms - now;
        const uint64_t cap = c->request_ms / 2 > c->connect_ms ? c->request_ms / 2 : c->connect_ms;
        if (budget > cap)
            budget = cap;
        char url[600];
        snprintf(url, sizeof url, "%s%s", c->endpoints[c->current], path);
        int err = DCH_OK;
        switch (attempt(c, url, body, budget, resp, &err)) {
        case ATTEMPT_OK:
            c->errmsg[0] = '\0';
            return DCH_OK;
        case ATTEMPT_FINAL:
            return err;
        default:
            break;
        }
        c->current = (c->current + 1) % c->nendpoints;
        const uint64_t after = dch__etcd_now_ms();
        if (after < deadline_ms) {
            uint64_t pause = dch__etcd_backoff_ms(failures);
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
    json_object_object_add(req, "key", json_object_new_string(k));
    free(k);
    return req;
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
