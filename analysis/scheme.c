/* SPDX-License-Identifier: MIT */
/*
 * The scheme interface: each call forwards to the map or the ring. Lookups of
 * many keys test the kind once, outside the loop, so sampling a million keys
 * costs what the library's own lookup costs.
 */
#include "scheme.h"

#include <stdlib.h>
#include <string.h>

int an_scheme_new(an_scheme *s, const an_scheme_spec *spec)
{
    an_scheme n = {*spec, NULL, NULL};
    dch_map_config mc;
    dch_ring_config rc_;
    int rc;
    /* Each library's defaults, then the spec's fields and the shared key. */
    if (spec->kind == AN_KIND_MAP) {
        dch_map_config_default(&mc);
        mc.units = spec->units;
        mc.slots_per_unit = spec->slots_per_unit;
        memcpy(mc.hash_key, spec->hash_key, sizeof mc.hash_key);
        rc = dch_map_new(&n.map, &mc);
    } else {
        dch_ring_config_default(&rc_);
        rc_.points_per_weight = spec->points;
        rc_.placement = spec->placement;
        memcpy(rc_.hash_key, spec->hash_key, sizeof rc_.hash_key);
        rc = dch_ring_new(&n.ring, &rc_);
    }
    if (rc == DCH_OK)
        *s = n;
    return rc;
}

int an_scheme_of_names(an_scheme *out, const an_scheme_spec *spec,
                       const char *const *names, const uint32_t *weights,
                       const bool *take, uint32_t n, bool reverse)
{
    an_scheme s;
    int rc = an_scheme_new(&s, spec);
    for (uint32_t i = 0; i < n && rc == DCH_OK; i++) {
        const uint32_t g = reverse ? n - 1 - i : i;
        if (take == NULL || take[g])
            rc = an_scheme_add(&s, names[g], weights ? weights[g] : 1, NULL);
    }
    if (rc == DCH_OK)
        *out = s;
    else
        an_scheme_free(&s);
    return rc;
}

int an_scheme_clone(an_scheme *out, const an_scheme *s)
{
    an_scheme n = {s->spec, NULL, NULL};
    int rc = s->map ? dch_map_clone(&n.map, s->map)
                    : dch_ring_clone(&n.ring, s->ring);
    if (rc == DCH_OK)
        *out = n;
    return rc;
}

void an_scheme_free(an_scheme *s)
{
    if (s == NULL)
        return;
    dch_map_free(s->map);
    dch_ring_free(s->ring);
    s->map = NULL;
    s->ring = NULL;
}

int an_scheme_add(an_scheme *s, const char *name, uint32_t weight,
                  uint32_t *id_out)
{
    return s->map ? dch_map_add_node(s->map, name, weight, id_out)
                  : dch_ring_add_node(s->ring, name, weight, id_out);
}

int an_scheme_remove(an_scheme *s, uint32_t id)
{
    return s->map ? dch_map_remove_node(s->map, id)
                  : dch_ring_remove_node(s->ring, id);
}

int an_scheme_set_weight(an_scheme *s, uint32_t id, uint32_t weight)
{
    return s->map ? dch_map_set_weight(s->map, id, weight)
                  : dch_ring_set_weight(s->ring, id, weight);
}

int an_scheme_apply(an_scheme *s, an_op op, const char *name, uint32_t weight,
                    uint32_t *id)
{
    if (op == AN_OP_ADD || (op == AN_OP_UNDRAIN && s->ring != NULL))
        return an_scheme_add(s, name, weight, id);
    int rc = an_scheme_find(s, name, id);
    if (rc != DCH_OK)
        return rc;
    switch (op) {
    case AN_OP_REMOVE:
        return an_scheme_remove(s, *id);
    case AN_OP_DRAIN:
        return s->map ? dch_map_drain(s->map, *id, DCH_DRAIN_FULL) : an_scheme_remove(s, *id);
    case AN_OP_UNDRAIN:
        return dch_map_undrain(s->map, *id);
    default:
        return an_scheme_set_weight(s, *id, weight);
    }
}

int an_scheme_find(const an_scheme *s, const char *name, uint32_t *id_out)
{
    return s->map ? dch_map_find_node(s->map, name, id_out)
                  : dch_ring_find_node(s->ring, name, id_out);
}

const char *an_scheme_name(const an_scheme *s, uint32_t id)
{
    return s->map ? dch_map_node_name(s->map, id)
                  : dch_ring_node_name(s->ring, id);
}

uint32_t an_scheme_weight(const an_scheme *s, uint32_t id)
{
    return s->map ? dch_map_node_weight(s->map, id)
                  : dch_ring_node_weight(s->ring, id);
}

uint32_t an_scheme_id_limit(const an_scheme *s)
{
    return s->map ? dch_map_id_limit(s->map) : dch_ring_id_limit(s->ring);
}

uint32_t an_scheme_count(const an_scheme *s)
{
    return s->map ? dch_map_node_count(s->map) : dch_ring_node_count(s->ring);
}

void an_scheme_lookup_many(const an_scheme *s, const uint64_t *hash, size_t n,
                           uint32_t *owner)
{
    if (s->map) {
        for (size_t i = 0; i < n; i++)
            owner[i] = dch_map_lookup_hash(s->map, hash[i]);
    } else {
        for (size_t i = 0; i < n; i++)
            owner[i] = dch_ring_lookup_hash(s->ring, hash[i]);
    }
}

int an_scheme_ranges(const an_scheme *s, an_ranges *out)
{
    return s->map ? an_ranges_of_map(out, s->map)
                  : an_ranges_of_ring(out, s->ring);
}

void an_scheme_weights(const an_scheme *s, uint32_t *weight)
{
    uint32_t limit = an_scheme_id_limit(s);
    for (uint32_t id = 0; id < limit; id++)
        weight[id] = an_scheme_weight(s, id);
}

int an_scheme_ranges_named(const an_scheme *s, an_numbering number,
                           const void *ctx, an_ranges *out)
{
    uint32_t limit = an_scheme_id_limit(s);
    uint32_t *to = malloc((limit ? limit : 1) * sizeof *to);
    if (to == NULL)
        return DCH_ENOMEM;
    for (uint32_t id = 0; id < limit; id++) {
        const char *name = an_scheme_name(s, id);
        to[id] = name != NULL ? number(name, ctx) : DCH_NODE_NONE;
    }
    an_ranges rs = {NULL, 0};
    int rc = an_scheme_ranges(s, &rs);
    if (rc == DCH_OK)
        rc = an_ranges_renumber(&rs, to, limit);
    free(to);
    if (rc != DCH_OK) {
        an_ranges_free(&rs);
        return rc;
    }
    *out = rs;
    return DCH_OK;
}

/* A diff in progress: the names' numbering and the list it fills. */
typedef struct diff_walk {
    const an_scheme *from, *to;
    an_numbering number;
    const void *ctx;
    an_changes c;
} diff_walk;

static uint32_t number_of(const diff_walk *w, const char *name)
{
    uint32_t id;
    if (name == NULL)
        return DCH_NODE_NONE;
    if (w->number != NULL)
        return w->number(name, w->ctx);
    if (an_scheme_find(w->to, name, &id) == DCH_OK ||
        an_scheme_find(w->from, name, &id) == DCH_OK)
        return id;
    return DCH_NODE_NONE;
}

static int add_move(const dch_move *mv, void *ctx)
{
    diff_walk *w = ctx;
    const dch_range_change ch = {mv->lo, mv->hi, number_of(w, mv->from),
                                 number_of(w, mv->to)};
    return an_changes_add(&w->c, &ch);
}

int an_scheme_diff(an_changes *out, const an_scheme *from, const an_scheme *to,
                   an_numbering number, const void *ctx)
{
    if ((from->map == NULL) != (to->map == NULL))
        return DCH_EINVAL;
    diff_walk w = {from, to, number, ctx, {NULL, 0, 0}};
    int rc = from->map ? dch_map_diff(from->map, to->map, add_move, &w)
                       : dch_ring_diff(from->ring, to->ring, add_move, &w);
    if (rc != DCH_OK) {
        an_changes_free(&w.c);
        return rc;
    }
    an_changes_free(out);
    *out = w.c;
    return DCH_OK;
}

int an_scheme_change(an_scheme *s, an_op op, const char *name, uint32_t weight,
                     uint32_t *id, an_numbering number, const void *ctx,
                     an_changes *out)
{
    an_scheme next;
    uint32_t got;
    int rc = an_scheme_clone(&next, s);
    if (rc != DCH_OK)
        return rc;
    rc = an_scheme_apply(&next, op, name, weight, &got);
    if (rc == DCH_OK)
        rc = an_scheme_diff(out, s, &next, number, ctx);
    if (rc != DCH_OK) {
        an_scheme_free(&next);
        return rc;
    }
    an_scheme_free(s);
    *s = next;
    if (id != NULL)
        *id = got;
    return DCH_OK;
}
