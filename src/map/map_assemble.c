/* SPDX-License-Identifier: MIT */
/*
 * A map built from its parts, as a loaded file describes them
 * (dch__map_assemble in map_internal.h): everything is checked before the
 * map is returned, so untrusted bytes give a valid map or an error. Also
 * the internal reads of map_internal.h for files, diffs and staging.
 */
#include "dch/error.h"

#include "map_object.h"

#include <string.h>

/* ---- What files, diffs and staging read ------------------------------- */

const uint16_t *dch__map_owner_table(const dch_map *m)
{
    return m->rd_owner;
}

const uint16_t *dch__map_base_table(const dch_map *m)
{
    return m->owner;
}

const dch_map_transition *dch__map_transition(const dch_map *m)
{
    return m->tr.steps != 0 && m->tr_epoch == m->epoch ? &m->tr : NULL;
}

/* ---- Assembly from parts -------------------------------------------- */

/* Zone key of a member for equality tests: a zone of its own is keyed by
 * its id, above every zone index. */
static uint32_t zone_key(const dch_map *m, uint32_t id)
{
    const uint32_t z = zone_of(m, id);
    return z ? z - 1 : DCH_MAP_MAX_NODES + id;
}

/* Whether the copies of every slot are min(R, M) distinct members of
 * positive weight, in min(copies, Z) distinct zones, the rest unowned
 * (map.h, "Replicas", promises 1 and 2); also counts every member's copies. */
static int copies_valid(dch_map *m)
{
    uint32_t M = 0, Z = 0;
    for (uint32_t id = 0; id < m->mt.id_limit; id++) {
        const member *mb = member_of(m, id);
        if (mb == NULL || mb->weight == 0)
            continue;
        M++;
        /* A zone counts once: at its member of lowest id. */
        uint32_t first = id;
        for (uint32_t j = 0; j < id && zone_of(m, id); j++)
            if (member_of(m, j) && entry(m, j)->weight > 0 && zone_of(m, j) == zone_of(m, id)) {
                first = j;
                break;
            }
        Z += first == id;
    }
    const uint32_t n = M < m->replicas ? M : m->replicas;
    const uint32_t want_zones = n < Z ? n : Z;
    for (uint32_t s = 0; s < m->slots; s++) {
        const uint16_t *c = m->copies + (size_t)s * m->stride;
        uint32_t zones = 0;
        for (uint32_t k = 0; k < m->stride; k++) {
            if (k >= n) {
                if (c[k] != NONE16)
                    return 0;
                continue;
            }
            const member *mb = member_of(m, c[k]);
            if (mb == NULL || mb->weight == 0)
                return 0;
            int new_zone = 1;
            for (uint32_t j = 0; j < k; j++) {
                if (c[j] == c[k])
                    return 0;
                if (zone_key(m, c[j]) == zone_key(m, c[k]))
                    new_zone = 0;
            }
            zones += (uint32_t)new_zone;
        }
        if (zones != want_zones)
            return 0;
        if (n > 0 && c[0] != m->owner[s])
            return 0;
        for (uint32_t k = 0; k < n; k++)
            m->held[c[k]]++;
    }
    return 1;
}

/*
 * The parts as such, before a map exists: id_limit within the limit and its
 * last id named, every name and zone valid, no weight or zone on a free id,
 * and the weight sum (*total) within UINT32_MAX.
 */
static int parts_valid(uint32_t id_limit, const char *const *names, const char *const *zones,
                       const uint32_t *weights, uint64_t *total)
{
    if (id_limit > DCH_MAP_MAX_NODES || (id_limit > 0 && names[id_limit - 1] == NULL))
        return 0;
    *total = 0;
    for (uint32_t id = 0; id < id_limit; id++) {
        if (names[id] == NULL ? weights[id] != 0 : dch__name_length(names[id]) == SIZE_MAX)
            return 0;
        if (zones != NULL && zones[id] != NULL &&
            (names[id] == NULL || dch__name_length(zones[id]) == SIZE_MAX))
            return 0;
        *total += weights[id];
    }
    return *total <= UINT32_MAX;
}

/* Whether every slot's primary in `table` (R entries a slot) is a member of
 * positive weight, or, when the weights sum to 0, every slot is unowned. */
static int primaries_valid(const dch_map *m, const uint16_t *table, uint64_t total,
                           uint32_t id_limit, const char *const *names,
                           const uint32_t *weights)
{
    for (uint32_t s = 0; s < m->slots; s++) {
        const uint16_t o = table[(size_t)s * m->replicas];
        if (total == 0 ? o != NONE16 : (o >= id_limit || names[o] == NULL || weights[o] == 0))
            return 0;
    }
    return 1;
}

/*
 * Add the members in id order, each at its id, with its weight and zone;
 * uniqueness of names is checked as each is placed. DCH_ENOMEM, or
 * DCH_ECORRUPT for whatever else the member table or the zones refuse.
 */
static int add_members(dch_map *m, uint32_t id_limit, const char *const *names,
                       const char *const *zones, const uint32_t *weights)
{
    for (uint32_t id = 0; id < id_limit; id++) {
        if (names[id] == NULL)
            continue;
        dch__member_add add;
        int rc = dch__members_plan(&m->mt, names[id], id, &add);
        if (rc == DCH_OK)
            rc = dch__members_reserve(&m->mt, &add);
        const char *zone = zones ? zones[id] : NULL;
        dch__zone_add zadd;
        if (rc == DCH_OK && zone != NULL &&
            (rc = dch__zones_reserve(&m->zones, zone, &zadd)) != DCH_OK)
            dch__members_cancel(&m->mt, &add);
        dch__side_add side;
        if (rc == DCH_OK &&
            (rc = dch__map_side_reserve(m, add.cap, zone != NULL, &side)) != DCH_OK) {
            if (zone != NULL)
                dch__zones_cancel(&m->zones, &zadd);
            dch__members_cancel(&m->mt, &add);
        }
        if (rc != DCH_OK)
            return rc == DCH_ENOMEM ? rc : DCH_ECORRUPT;
        member *mb = dch__members_commit(&m->mt, &add);
        dch__map_side_commit(m, &side, id);
        mb->weight = weights[id];
        if (zone != NULL)
            m->zone_of[id] = 1 + dch__zones_commit(&m->zones, &zadd);
    }
    return DCH_OK;
}

/* Copy `table` (R entries a slot) into the map's owner and copy tables and
 * count every member's primaries and, with R >= 2, the copies. */
static void fill_tables(dch_map *m, const uint16_t *table)
{
    const uint32_t R = m->replicas;
    for (uint32_t s = 0; s < m->slots; s++)
        m->owner[s] = table[(size_t)s * R];
    for (uint32_t s = 0; R > 1 && s < m->slots; s++)
        for (uint32_t k = 0; k < m->stride; k++)
            m->copies[(size_t)s * m->stride + k] = k < R ? table[(size_t)s * R + k] : NONE16;
    for (uint32_t s = 0; s < m->slots; s++)
        if (m->owner[s] != NONE16)
            entry(m, m->owner[s])->slots++;
    if (R > 1)
        m->ncopies = copy_count(m);
}

/* Whether some member has a zone. */
static int zoned(const char *const *zones, uint32_t id_limit)
{
    for (uint32_t id = 0; zones != NULL && id < id_limit; id++)
        if (zones[id] != NULL)
            return 1;
    return 0;
}

/* The global bound every call keeps on a settled map (map.h): each member's
 * primaries within 2 slots of its share, |slots*W - P*w| < 2*W. With
 * replicas and zones map.h promises it only under a condition on the
 * zones' weights (Replicas, promises 3 and 4): a zone's only copy of a
 * slot can keep a heavy member below its share. Such a map is not held
 * to it, so that every map the engine builds loads. */
static int within_bound(const dch_map *m, uint64_t total, uint32_t id_limit)
{
    for (uint32_t id = 0; total > 0 && id < id_limit; id++) {
        const int64_t d = (int64_t)entry(m, id)->slots * (int64_t)total -
                          (int64_t)m->slots * entry(m, id)->weight;
        if (d >= 2 * (int64_t)total || d <= -2 * (int64_t)total)
            return 0;
    }
    return 1;
}

int dch__map_assemble(dch_map **out, const dch_map_config *cfg, uint64_t epoch,
                      uint32_t id_limit, const char *const *names,
                      const char *const *zones, const uint32_t *weights,
                      const uint16_t *table, const dch_map_transition *tr)
{
    if (out == NULL || cfg == NULL || table == NULL ||
        (id_limit > 0 && (names == NULL || weights == NULL)))
        return DCH_EINVAL;
    uint64_t total;
    if (!parts_valid(id_limit, names, zones, weights, &total))
        return DCH_ECORRUPT;

    dch_map *m;
    int rc = dch_map_new(&m, cfg);
    if (rc != DCH_OK)
        return rc;
    /* Staging keeps to one copy (map_stage.h). */
    if ((tr != NULL && m->replicas > 1) ||
        !primaries_valid(m, table, total, id_limit, names, weights))
        rc = DCH_ECORRUPT;
    if (rc == DCH_OK)
        rc = add_members(m, id_limit, names, zones, weights);
    if (rc == DCH_OK) {
        m->total_weight = (uint32_t)total;
        fill_tables(m, table);
        /* A step map is between two settled maps and need not keep the
         * global bound. */
        const int bound = tr == NULL && (m->replicas == 1 || !zoned(zones, id_limit));
        if ((m->replicas > 1 && !copies_valid(m)) ||
            (bound && !within_bound(m, total, id_limit)))
            rc = DCH_ECORRUPT;
    }
    if (rc != DCH_OK) {
        dch_map_free(m);
        return rc;
    }
    m->epoch = epoch;
    if (tr != NULL) {
        m->tr = *tr;
        m->tr_epoch = epoch;
    }
    *out = m;
    return DCH_OK;
}
