/* SPDX-License-Identifier: MIT */
/*
 * The report of a balancing call. Internal to libdch.
 */
#ifndef DCH_SRC_BALANCE_REPORT_H
#define DCH_SRC_BALANCE_REPORT_H

#include "balance_run.h"

/** What the call found: every field but the moves and the ends; keeps the
 *  caller's left and left_cap. */
void dch__bal_report_before(const dch__bal *b, dch_balance_report *r);

/** What the call did, and the members left above their bounds (read on b's
 *  working table, which the map now serves); all but in_force. */
void dch__bal_report_after(dch__bal *b, dch_balance_report *r);

#endif /* DCH_SRC_BALANCE_REPORT_H */
