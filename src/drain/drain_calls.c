/* SPDX-License-Identifier: MIT */
/*
 * The calls that change the base (add, remove, set_weight) with drains in
 * force: the call runs first on a clone of the base, the effective table
 * of the drains that remain is built on that clone, and only then does the
 * call run on the map itself and the new drains go in force. So a failure
 * anywhere leaves the map as it was, and the effective table stays a pure
 * function of the base and the ordered list (map.h, "Drains", promise 6).
 * With no layer in force a call is the engine's alone. Removing a drained
 * member, or changing its weight, ends its drain. The load moves are kept
 * by the same rebuild where the call left their slots' copies below them
 * as they were (balance.h; docs/balance.md, "The layer").
 */
#include "dch/error.h"

#include "drain_table.h"

/* One call on the base. */
typedef struct call {
    int kind; /* 'a' add, 'r' remove, 'w' set_weight */
    const char *name, *zone;
    uint32_t id, weight;
} call;

static int run(dch_map *m, const call *c, uint32_t *id_out)
{
    switch (c->kind) {
    case 'a':
        return dch__map_base_add(m, c->name, c->zone, c->weight, id_out);
    case 'r':
        return dch__map_base_remove(m, c->id);
    default:
        return dch__map_base_set_weight(m, c->id, c->weight);
    }
}

/* Run c on m with its drains kept, but for `ends`'s (DCH_NODE_NONE: none),
 * and its load moves kept where the call leaves them valid. */
static int drained_call(dch_map *m, const call *c, uint32_t ends, uint32_t *id_out)
{
    if (!layered(m))
        return run(m, c, id_out);
    dch_map *w;
    int rc = dch__map_clone_base(&w, m);
    if (rc != DCH_OK)
        return rc;
    uint32_t id;
    rc = run(w, c, &id);
    dch__drains d;
    if (rc == DCH_OK)
        rc = dch__map_redrain(m, w, ends, 0, &d);
    dch_map_free(w);
    if (rc != DCH_OK)
        return rc;
    rc = run(m, c, id_out);
    if (rc != DCH_OK) {
        dch__map_drains_free(m, &d);
        return rc;
    }
    dch__map_drains_install(m, &d);
    return DCH_OK;
}

int dch_map_add_node_in_zone(dch_map *m, const char *name, const char *zone,
                             uint32_t weight, uint32_t *id_out)
{
    if (m == NULL)
        return DCH_EINVAL;
    const call c = {'a', name, zone, 0, weight};
    return drained_call(m, &c, DCH_NODE_NONE, id_out);
}

int dch_map_add_node(dch_map *m, const char *name, uint32_t weight, uint32_t *id_out)
{
    return dch_map_add_node_in_zone(m, name, NULL, weight, id_out);
}

int dch_map_remove_node(dch_map *m, uint32_t id)
{
    if (m == NULL)
        return DCH_EINVAL;
    const call c = {'r', NULL, NULL, id, 0};
    return drained_call(m, &c, id, NULL);
}

int dch_map_set_weight(dch_map *m, uint32_t id, uint32_t weight)
{
    if (m == NULL)
        return DCH_EINVAL;
    /* Setting the current weight changes nothing, the drain included. */
    if (member_of(m, id) != NULL && entry(m, id)->weight == weight)
        return DCH_OK;
    const call c = {'w', NULL, NULL, id, weight};
    return drained_call(m, &c, id, NULL);
}
