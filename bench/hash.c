/* SPDX-License-Identifier: MIT */
/*
 * dch-bench's hash sections: dch_siphash24 against libsodium's
 * crypto_shorthash_siphash24 (the reference SipHash-2-4) at 8 .. 1024 bytes,
 * each output checked against the reference before it is timed, and the
 * full key path, dch_map_lookup on 16-byte keys, against the hash alone.
 */
#include "bench.h"

#include <sodium.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Messages: MSG_COUNT of them, MSG_STRIDE bytes apart, up to MSG_MAX long. */
#define MSG_COUNT 256u
#define MSG_STRIDE 16u
#define MSG_MAX 1024u

static uint8_t msg_buf[(MSG_COUNT - 1) * MSG_STRIDE + MSG_MAX];

void bench_fill_messages(uint64_t *seed)
{
    for (size_t i = 0; i < sizeof msg_buf; i++)
        msg_buf[i] = (uint8_t)bench_splitmix64(seed);
}

/* On the heap, as the lookup peers are (see lookup.c). */
typedef struct hash_job {
    uint8_t key[16];
    const uint8_t *msgs; /* MSG_COUNT messages, MSG_STRIDE bytes apart */
    size_t len;
    const dch_map *map;
} hash_job;

static uint64_t load_le64(const unsigned char *p)
{
    uint64_t v = 0;
    for (unsigned i = 8; i-- > 0;)
        v = v << 8 | p[i];
    return v;
}

/* libsodium's SipHash-2-4 of one message, as the number dch_siphash24 gives. */
static inline uint64_t sodium_siphash(const uint8_t *key, const uint8_t *msg,
                                      size_t len)
{
    unsigned char out[crypto_shorthash_siphash24_BYTES];
    crypto_shorthash_siphash24(out, msg, len, key);
    return load_le64(out);
}

/* A timing loop over the messages in turn; `call` sees the job j and msg. */
#define MSG_LOOP(name, call)                                                   \
    static uint64_t name(const void *obj, const uint64_t *h, uint64_t mask,    \
                         uint64_t ops)                                         \
    {                                                                          \
        (void)h;                                                               \
        (void)mask;                                                            \
        const hash_job *j = obj;                                               \
        uint64_t acc = 0;                                                      \
        for (uint64_t i = 0; i < ops; i++) {                                   \
            const uint8_t *msg = j->msgs + (i % MSG_COUNT) * MSG_STRIDE;       \
            acc += call;                                                       \
        }                                                                      \
        return acc;                                                            \
    }

MSG_LOOP(sip_dch_loop, dch_siphash24(j->key, msg, j->len))
MSG_LOOP(sip_sodium_loop, sodium_siphash(j->key, msg, j->len))
MSG_LOOP(path_lookup_loop, dch_map_lookup(j->map, msg, j->len))

/* Exactness first: dch_siphash24 must give the reference output for every
 * message at the job's length. */
static bool same_as_sodium(const hash_job *j)
{
    for (unsigned i = 0; i < MSG_COUNT; i++) {
        const uint8_t *msg = j->msgs + i * MSG_STRIDE;
        if (dch_siphash24(j->key, msg, j->len) != sodium_siphash(j->key, msg, j->len)) {
            fprintf(stderr, "dch-bench: dch_siphash24 differs from libsodium "
                            "on a %zu-byte message\n", j->len);
            return false;
        }
    }
    return true;
}

/* dch_map_lookup of a key must be the lookup of its hash under the map's
 * key (the job's key is the map's). */
static bool lookup_is_of_hash(const hash_job *j)
{
    for (unsigned i = 0; i < MSG_COUNT; i++) {
        const uint8_t *msg = j->msgs + i * MSG_STRIDE;
        if (dch_map_lookup(j->map, msg, j->len) !=
            dch_map_lookup_hash(j->map, dch_siphash24(j->key, msg, j->len))) {
            fprintf(stderr, "dch-bench: dch_map_lookup is not the lookup of the "
                            "key's hash\n");
            return false;
        }
    }
    return true;
}

/* The targets: as fast as libsodium at 16 bytes, within 10% at 1024. */
static bench_goal siphash_goal(size_t len, double *limit)
{
    *limit = len == 16 ? 1.0 : len == 1024 ? 1.1 : 0;
    return *limit > 0 ? BENCH_GOAL_AT_MOST : BENCH_GOAL_NONE;
}

/* Time two contenders against each other and record both. */
static void time_pair(bench *b, contender *c, const char *section, uint64_t n,
                      uint64_t p, uint64_t len)
{
    bench_run_group(b, c, 2, 0);
    bench_record(b, section, &c[0], "independent", n, p, len);
    bench_record(b, section, &c[1], "independent", n, p, len);
}

/* One row of the SipHash table: job->len bytes. @return 0, or -1 when
 * dch_siphash24 is not exact. */
static int siphash_row(bench *b, const hash_job *job)
{
    const size_t len = job->len;
    if (!same_as_sodium(job))
        return -1;
    contender c[2] = {{"dch_siphash24", sip_dch_loop, job, 0, {0}},
                      {"libsodium siphash24", sip_sodium_loop, job, 0, {0}}};
    time_pair(b, c, "siphash", 0, 0, len);
    char key_s[64], label[96], s0[64], s1[64], s2[64];
    snprintf(key_s, sizeof key_s, "siphash_dch_over_sodium_%zu", len);
    snprintf(label, sizeof label, "dch_siphash24 / libsodium, %zu-byte input", len);
    double limit;
    const bench_goal goal = siphash_goal(len, &limit);
    bench_check_ratio(b, key_s, label, &c[0], &c[1], goal, limit);
    double r[BENCH_MAX_TRIALS];
    bench_ratios(b, &c[0], &c[1], r);
    const double med = bench_stat_of(c[0].ns, b->o.trials).median;
    printf("  %6zu  %-26s %-26s %-26s %.2f\n", len,
           bench_stat_text(s0, sizeof s0, c[0].ns, b->o.trials),
           bench_stat_text(s1, sizeof s1, c[1].ns, b->o.trials),
           bench_stat_text(s2, sizeof s2, r, b->o.trials), (double)len / med);
    return 0;
}

void bench_section_siphash(bench *b)
{
    static const size_t lens[] = {8, 16, 64, 1024};
    hash_job *job = malloc(sizeof *job);
    if (job == NULL) {
        b->failed = 1;
        return;
    }
    for (unsigned i = 0; i < 16; i++)
        job->key[i] = (uint8_t)(b->hashes[i] >> 7);
    job->msgs = msg_buf;
    job->map = NULL;
    printf("\nSipHash-2-4: dch_siphash24 against libsodium's "
           "crypto_shorthash_siphash24 (throughput, ns per hash)\n");
    printf("  %6s  %-26s %-26s %-26s %s\n", "bytes", "dch_siphash24", "libsodium",
           "dch / libsodium", "GB/s (dch)");
    for (size_t li = 0; li < sizeof lens / sizeof lens[0] && !b->failed; li++) {
        job->len = lens[li];
        if (siphash_row(b, job) != 0)
            b->failed = 1;
    }
    free(job);
}

void bench_section_path(bench *b, const dch_map *m, uint32_t n)
{
    dch_map_config cfg;
    dch_map_get_config(m, &cfg);
    hash_job *job = malloc(sizeof *job);
    if (job == NULL) {
        b->failed = 1;
        return;
    }
    memcpy(job->key, cfg.hash_key, sizeof job->key);
    job->msgs = msg_buf;
    job->len = 16;
    job->map = m;
    if (!lookup_is_of_hash(job)) {
        b->failed = 1;
        free(job);
        return;
    }
    contender c[2] = {{"dch_map_lookup", path_lookup_loop, job, 0, {0}},
                      {"dch_siphash24", sip_dch_loop, job, 0, {0}}};
    time_pair(b, c, "path", n, dch_map_slot_count(m), 16);
    free(job);
    char label[96], s0[64], s1[64];
    snprintf(label, sizeof label,
             "dch_map_lookup (16-byte key) / dch_siphash24 alone, N=%u", (unsigned)n);
    bench_check_ratio(b, "path_lookup_over_siphash", label, &c[0], &c[1],
                      BENCH_GOAL_AT_MOST, 1.2);
    printf("  full path, 16-byte keys, N = %u: dch_map_lookup %s ns, "
           "dch_siphash24 alone %s ns\n", (unsigned)n,
           bench_stat_text(s0, sizeof s0, c[0].ns, b->o.trials),
           bench_stat_text(s1, sizeof s1, c[1].ns, b->o.trials));
}
