/* SPDX-License-Identifier: MIT */
/*
 * dch-etcd internals shared by its files: the client, one HTTP call to
 * etcd's JSON gateway with retries over the endpoints, base64 and the JSON
 * field readers. Not part of the public API.
 */
#ifndef DCH_ETCD_INTERNAL_H
#define DCH_ETCD_INTERNAL_H

#include "dch/etcd.h"
#include "dch/map_file.h"

#include <curl/curl.h>
#include <json-c/json.h>
#include <stdbool.h>

/* Most endpoints a client takes, and the longest key. */
#define DCH__ETCD_MAX_ENDPOINTS 16
#define DCH__ETCD_MAX_KEY 1024
/* Most bytes one reply (or one watch message) may take: a map of 2^24 raw
 * slots is 32 MiB, 43 MiB in base64. */
#define DCH__ETCD_MAX_REPLY ((size_t)64 << 20)

struct dch_etcd {
    CURL *curl;
    char *endpoints[DCH__ETCD_MAX_ENDPOINTS];
    size_t nendpoints;
    size_t current; /* the endpoint the next attempt goes to */
    uint32_t connect_ms, request_ms, refresh_ms;
    int64_t grpc_code; /* gRPC status of the last error reply, 0 if none */
    uint64_t latency_ms; /* smoothed time of the answered attempts; 0 before one */
    uint64_t rng; /* xorshift state for the jitter of the pauses */
    const char *answered; /* the endpoint of the last reply (NULL before one) */
    char errmsg[768];
};

/* A growable byte buffer, always NUL-terminated when data is not NULL. */
typedef struct dch__buf {
    char *data;
    size_t len, cap;
} dch__buf;

int dch__buf_append(dch__buf *b, const void *p, size_t n);
void dch__buf_free(dch__buf *b);

uint64_t dch__etcd_now_ms(void);
void dch__etcd_sleep_ms(uint64_t ms);
/* The pause after the attempt-th consecutive failure: a random time up to
 * 50 ms doubling to 1 s ("full jitter", so that clients that failed together
 * do not retry together). */
uint64_t dch__etcd_backoff_ms(dch_etcd *c, unsigned attempt);

void dch__etcd_fail(dch_etcd *c, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* What a call does to etcd's state: a read can be retried blindly; a write
 * (a transaction that may put) is retried too, since every write of this
 * library is a compare-and-swap that applies at most once, but an attempt
 * that may have reached etcd makes the outcome unknown until a later
 * attempt gets a reply. */
typedef enum dch__etcd_kind { DCH__ETCD_READ, DCH__ETCD_WRITE } dch__etcd_kind;

/*
 * POST `req` to `path` (e.g. "/v3/kv/range"), moving over the endpoints
 * until one answers or `deadline_ms` (dch__etcd_now_ms time) passes. Each
 * attempt gets a time of its own that starts from what answers took so far
 * and doubles with each failure, within what is left; failures are followed
 * by a jittered pause. *resp is the parsed reply, owned by the caller, and
 * c->answered names the member that gave it.
 * DCH_OK; DCH_EIO (nothing applied: unreachable within the deadline, or a
 * refusal that a retry cannot cure; c->errmsg says which, how many attempts
 * and how long); DCH_EUNKNOWN (a write only: some attempt was sent and no
 * attempt got a reply, so it may be applied); DCH_ENOMEM.
 */
int dch__etcd_call(dch_etcd *c, const char *path, json_object *req, dch__etcd_kind kind,
                   uint64_t deadline_ms, json_object **resp);

/*
 * One POST of `body` (JSON) to `url` on c's handle, with c's connect
 * timeout and budget_ms for the whole transfer; the reply's bytes go to
 * write(ctx). Every request of the client, calls and watch streams, goes
 * out here. DCH_ENOMEM when the request cannot be made; else DCH_OK, with
 * curl's result in *result.
 */
int dch__etcd_post(dch_etcd *c, const char *url, const char *body, uint64_t budget_ms,
                   curl_write_callback write, void *ctx, CURLcode *result);

/* {"key": base64(key)}, the start of every request about a key; NULL when
 * out of memory. */
json_object *dch__etcd_key_request(const char *key);

/* Read the key (at `revision`, or the latest when 0) by `deadline_ms`;
 * *reply is the range reply, owned by the caller. As dch__etcd_call.
 * `serializable` reads the member's own copy, which may lag behind. */
int dch__etcd_range(dch_etcd *c, const char *key, uint64_t revision, bool serializable,
                    uint64_t deadline_ms, json_object **reply);

/* Base64 (RFC 4648, padded), as etcd's gateway encodes bytes. The encoder
 * returns a malloc'd string or NULL; the decoder DCH_OK, DCH_ECORRUPT or
 * DCH_ENOMEM, with *out malloc'd (never NULL on success). */
char *dch__b64_encode(const void *p, size_t n);
int dch__b64_decode(const char *s, size_t slen, uint8_t **out, size_t *outlen);

/* A 64-bit field of a reply: the gateway writes int64 as a decimal string;
 * an absent field is 0 (proto3 leaves defaults out). false when malformed. */
bool dch__json_u64(json_object *o, const char *field, uint64_t *out);
/* A member object or array of o, or NULL. */
json_object *dch__json_get(json_object *o, const char *field, json_type type);
/* Request builders: add v to object o as field (add) or to array a (push);
 * v may be NULL (a failed json_object_new_*). They always take v (freeing
 * it when it cannot be added) and return false when nothing was added, so
 * a builder that sees false frees its request and sends nothing: json-c
 * would otherwise send "value": null, or a txn without its compare. add_str
 * adds json_object_new_string(s). */
bool dch__json_add(json_object *o, const char *field, json_object *v);
bool dch__json_add_str(json_object *o, const char *field, const char *s);
bool dch__json_push(json_object *a, json_object *v);
/* A new object {field: v}, taking v as dch__json_add does; NULL when
 * nothing could be made (v is freed then). */
json_object *dch__json_wrap(const char *field, json_object *v);

/* Decode a base64 map value and load it. */
int dch__etcd_load_value(json_object *kv, dch_map **out);

#endif /* DCH_ETCD_INTERNAL_H */
