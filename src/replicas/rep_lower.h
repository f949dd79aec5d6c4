/* SPDX-License-Identifier: MIT */
/*
 * The lowering step (docs/replicas.md, "Raise and lowering"): x gives
 * copies, planned by the single-copy rule on copies and placed slot by
 * slot. Its mirror is rep_raise.h.
 */
#ifndef DCH_SRC_REP_LOWER_H
#define DCH_SRC_REP_LOWER_H

#include "rep_book.h"

/* Lower x's copies to what its new weight asks (all of them when it
 * becomes 0); only x loses, and as many copies are created on others.
 * Whether the diversity rows exist (for dch__rep_split_pairs). */
int dch__rep_lower(const dch__rep_call *e);

#endif /* DCH_SRC_REP_LOWER_H */
