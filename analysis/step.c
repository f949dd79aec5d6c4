/* SPDX-License-Identifier: MIT */
/*
 * One measured change, the skeleton that growth, shrink and weights share:
 * apply the change and take its exact migration plan (an_scheme_change, the
 * library's diff by member name), summarise what moved, keep the ranges
 * after it for shares and balance, and confirm the plan with the sampled
 * keys looked up before and after.
 */
#include "sections.h"

#include <math.h>

/* Look up every sampled key after a change and check the moves against the
 * exact change list; own_before holds the owners before and afterwards holds
 * the owners after (the buffers swap). */
static void sample(an_step *st)
{
    an_run *r = st->r;
    an_scheme_lookup_many(&st->sc, r->keys, r->opt.keys, r->own_after);
    an_key_moves k = an_key_moves_check(r->keys, r->own_before, r->own_after,
                                        r->opt.keys, &st->ch, st->subject);
    st->sampled = (double)k.moved / (double)k.keys;
    st->z = an_binomial_z(st->mv.moved, k.moved, k.keys);
    an_sample_stats *s = &r->stats[st->scheme][st->phase];
    s->steps++;
    if (fabs(st->z) > s->max_abs_z)
        s->max_abs_z = fabs(st->z);
    s->mismatched += k.mismatched;
    s->moved_other += k.moved_other;
    uint32_t *t = r->own_before;
    r->own_before = r->own_after;
    r->own_after = t;
}

int an_step_begin(an_step *st, an_run *r, int scheme, int phase, an_scheme *sc)
{
    *st = (an_step){.r = r, .scheme = scheme, .phase = phase, .sc = *sc};
    *sc = (an_scheme){0};
    int rc = an_scheme_ranges(&st->sc, &st->ranges);
    an_scheme_lookup_many(&st->sc, r->keys, r->opt.keys, r->own_before);
    return rc;
}

int an_step_begin_grown(an_step *st, an_run *r, int scheme, int phase)
{
    an_scheme sc;
    int rc = an_scheme_clone(&sc, &r->grown[scheme]);
    if (rc != DCH_OK) {
        *st = (an_step){.r = r, .scheme = scheme, .phase = phase};
        return rc;
    }
    return an_step_begin(st, r, scheme, phase, &sc);
}

int an_step_apply(an_step *st, an_op op, const char *name, uint32_t weight)
{
    const uint32_t limit_before = an_scheme_id_limit(&st->sc);
    an_ranges after = {NULL, 0};
    /* The plan by name, numbered by the scheme's own ids, which are the
     * owners its lookups and its ranges give. */
    int rc = an_scheme_change(&st->sc, op, name, weight, &st->subject, NULL,
                              NULL, &st->ch);
    if (rc == DCH_OK) {
        st->share_before = op == AN_OP_ADD || op == AN_OP_UNDRAIN ? 0.0
                                           : an_share_of(&st->ranges, st->subject);
        rc = an_scheme_ranges(&st->sc, &after);
    }
    if (rc == DCH_OK) {
        const uint32_t limit = an_scheme_id_limit(&st->sc);
        rc = an_moves_of(&st->ch, limit > limit_before ? limit : limit_before,
                         st->subject, &st->mv);
    }
    if (rc != DCH_OK) {
        an_ranges_free(&after);
        return rc;
    }
    sample(st);
    an_ranges_free(&st->ranges);
    st->ranges = after;
    return DCH_OK;
}

void an_step_end(an_step *st, an_scheme *keep)
{
    an_changes_free(&st->ch);
    an_ranges_free(&st->ranges);
    if (keep != NULL)
        *keep = st->sc;
    else
        an_scheme_free(&st->sc);
    st->sc = (an_scheme){0};
}
