/* SPDX-License-Identifier: MIT */
/*
 * The raise step (docs/replicas.md, "Raise and lowering"): x takes copies,
 * planned by the single-copy rule on copies and placed slot by slot. Its
 * mirror is rep_lower.h.
 */
#ifndef DCH_SRC_REP_RAISE_H
#define DCH_SRC_REP_RAISE_H

#include "rep_book.h"

/* Raise x's copies to what its new weight asks; only x gains, and only the
 * copies x replaces are dropped. */
void dch__rep_raise(const dch__rep_call *e);

#endif /* DCH_SRC_REP_RAISE_H */
