/* SPDX-License-Identifier: MIT */
/*
 * Binary heaps over mv->heap, ordered by a strict total order `before`
 * (stage 1's candidates).
 */
#include "engine.h"

_Thread_local int64_t dch__order_work;

void dch__sift_down(const dch__engine *g, dch__before_fn before, uint32_t n, uint32_t i)
{
    uint32_t *h = g->mv->heap;
    const uint32_t id = h[i];
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && before(g, h[c + 1], h[c]))
            c++;
        if (!before(g, h[c], id))
            break;
        h[i] = h[c];
        i = c;
    }
    h[i] = id;
}

void dch__sift_up(const dch__engine *g, dch__before_fn before, uint32_t i)
{
    uint32_t *h = g->mv->heap;
    const uint32_t id = h[i];
    while (i > 0 && before(g, id, h[(i - 1) / 2])) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = id;
}
