/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for dch_map_load: any bytes must give DCH_OK,
 * DCH_ECORRUPT or DCH_EVERSION, never a crash, a leak or undefined
 * behaviour, and a map that loads must be whole: it saves and loads back to
 * the same fingerprint, every key routes to a member or to nobody, and a
 * map in transition keeps its record through the round trip.
 *
 * Each input is tried twice: as it is, and with its start (version 2, 3 or
 * 4 kept, any other made 1), length field and checksum made right, so that
 * mutations get past the checksum into the parser and the map checks
 * (otherwise almost every input stops there). A map with replicas must
 * also give every key distinct copies, all members of positive weight,
 * primary first. Maps of more than 2^20 copies are loaded but not
 * round-tripped (see try_load).
 *
 * Build: configure with CC=clang -DDCH_FUZZ=ON (see tests/fuzz/CMakeLists.txt).
 * Run:   build-fuzz/tests/fuzz/fuzz_map_load NEW_CORPUS_DIR tests/fuzz/corpus_map_load
 */
#include "dch/dch.h"
#include "support.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint8_t start[12] = {0x89, 'D', 'C', 'H', 0x0D, 0x0A, 0x1A, 0x0A, 1, 0, 0, 0};
static const uint8_t checksum_key[16] = {'d', 'c', 'h', ' ', 'm', 'a', 'p', ' ',
                                         'c', 'h', 'e', 'c', 'k', 's', 'u', 'm'};

static void check_map(const dch_map *m)
{
    size_t len;
    uint8_t *buf = map_bytes(m, &len);
    dch_map *back = NULL;
    if (dch_map_load(&back, buf, len) != DCH_OK ||
        dch_map_fingerprint(back) != dch_map_fingerprint(m) ||
        dch_map_epoch(back) != dch_map_epoch(m))
        abort();
    dch_map_transition a, b;
    const int in_a = dch_map_in_transition(m, &a), in_b = dch_map_in_transition(back, &b);
    if (in_a != in_b || (in_a && (a.target_fingerprint != b.target_fingerprint ||
                                  a.step != b.step || a.steps != b.steps ||
                                  a.step == 0 || a.step >= a.steps)))
        abort();
    /* The drains (version 4) come back in their order. */
    uint32_t ia[8], ma[8], ib[8], mb[8];
    const size_t na = dch_map_drains(m, ia, ma, 8), nb = dch_map_drains(back, ib, mb, 8);
    const size_t kept = na < 8 ? na : 8;
    if (na != nb || memcmp(ia, ib, kept * sizeof *ia) != 0 || memcmp(ma, mb, kept * sizeof *ma) != 0)
        abort();
    dch_map_free(back);
    free(buf);
    for (uint32_t k = 0; k < 64; k++) {
        const uint64_t h = dch_map_hash(m, &k, sizeof k);
        const uint32_t id = dch_map_lookup_hash(m, h);
        if (id != DCH_NODE_NONE &&
            (dch_map_node_name(m, id) == NULL || dch_map_node_weight(m, id) == 0))
            abort();
        uint32_t c[DCH_MAP_MAX_REPLICAS];
        const size_t n = dch_map_lookup_replicas_hash(m, h, c, DCH_MAP_MAX_REPLICAS);
        if (n > DCH_MAP_MAX_REPLICAS || (n > 0) != (id != DCH_NODE_NONE) || (n > 0 && c[0] != id))
            abort();
        for (size_t i = 0; i < n; i++) {
            if (dch_map_node_weight(m, c[i]) == 0)
                abort();
            for (size_t j = 0; j < i; j++)
                if (c[j] == c[i])
                    abort();
        }
    }
}

static void try_load(const uint8_t *data, size_t size)
{
    dch_map *m = NULL;
    const int rc = dch_map_load(&m, data, size);
    if (rc == DCH_OK) {
        /* The round trip of a map of more than 2^20 copies (up to 2^27:
         * 2^24 slots of 8) takes seconds under the sanitizers and coverage,
         * past libFuzzer's timeout; loading it still runs every check.
         * test_map_file* round-trip large maps outside the fuzzer. */
        dch_map_config cfg;
        dch_map_get_config(m, &cfg);
        if ((uint64_t)dch_map_slot_count(m) * cfg.replicas <= (UINT64_C(1) << 20))
            check_map(m);
        dch_map_free(m);
    } else if (rc != DCH_ECORRUPT && rc != DCH_EVERSION) {
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    try_load(data, size);
    if (size < 65)
        return 0;
    uint8_t *copy = malloc(size);
    if (copy == NULL)
        return 0;
    memcpy(copy, data, size);
    const int known = (data[8] == 2 || data[8] == 3 || data[8] == 4) && data[9] == 0 &&
                      data[10] == 0 && data[11] == 0;
    memcpy(copy, start, sizeof start);
    if (known)
        copy[8] = data[8];
    for (unsigned i = 0; i < 8; i++)
        copy[16 + i] = (uint8_t)((uint64_t)size >> (8 * i));
    const uint64_t sum = dch_siphash24(checksum_key, copy, size - 8);
    for (unsigned i = 0; i < 8; i++)
        copy[size - 8 + i] = (uint8_t)(sum >> (8 * i));
    try_load(copy, size);
    free(copy);
    return 0;
}
