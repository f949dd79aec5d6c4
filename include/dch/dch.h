/* SPDX-License-Identifier: MIT */
/*
 * libdch: partition keys over nodes with distributed consistent hashing.
 *
 * This umbrella header includes every public header:
 *   dch/version.h  DCH_VERSION_MAJOR/MINOR/PATCH, DCH_VERSION_STRING, DCH_VERSION_NUMBER
 *   dch/common.h   DCH_API, DCH_NODE_NONE, DCH_NAME_MAX, dch_allocator
 *   dch/error.h    error codes and dch_strerror
 *   dch/siphash.h  SipHash-2-4, the hash every client shares
 *   dch/range.h    ownership as hash ranges, and the diff of two range lists
 *   dch/map.h      the DCH equal-arc partition map (dch_map)
 *   dch/map_file.h map files (save, load, atomic file replacement) and the
 *                  routing fingerprint
 *   dch/map_diff.h migration plans between two maps, by member name
 *   dch/map_stage.h staged changes: from a map to a target in steps that
 *                  move at most K slots into and out of any member
 *   dch/ring.h     the classic consistent-hash ring (dch_ring), for comparison
 *   dch/ring_diff.h migration plans between two rings, by member name
 *   dch/load.h     per-slot load counters for a server's request path
 *   dch/balance.h  balancing a map by its slots' measured load, with a bound
 *
 * Not included here: dch/etcd.h belongs to the companion library dch-etcd
 * (dch::etcd, needs libcurl and json-c), which shares a map through etcd:
 * publish by compare-and-swap on the epoch, fetch, and watch.
 *
 * How the pieces fit: a key is hashed with SipHash-2-4 under a key that every
 * client shares; the 64-bit hash is routed by a map (or a ring) to a member
 * id. Both schemes can list their ownership as ranges of the hash space, and
 * the diff of two such lists is the exact migration plan between them.
 *
 * Threading contract: libdch has no global state. Functions taking a const
 * object only read it, so any number of threads may use an object that no
 * thread changes. A function taking a non-const object must not run
 * concurrently with any other call on that object. To update under readers,
 * clone, change the clone, and publish it (see map.h). The one exception is
 * the load counter, built to be hit by many threads at once: load.h states
 * its own rules.
 *
 * Errors: functions that can fail return DCH_OK or a negative DCH_E* code and
 * leave their object exactly as it was on failure.
 */
#ifndef DCH_DCH_H
#define DCH_DCH_H

#include "dch/version.h" /* generated into the build tree */
#include "common.h"
#include "error.h"
#include "siphash.h"
#include "range.h"
#include "map.h"
#include "map_file.h"
#include "map_diff.h"
#include "map_stage.h"
#include "ring.h"
#include "ring_diff.h"
#include "load.h"
#include "balance.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The version of the library linked in, as "MAJOR.MINOR.PATCH". */
DCH_API const char *dch_version(void);

/**
 * The version of the library linked in, as MAJOR * 10000 + MINOR * 100 +
 * PATCH: DCH_VERSION_NUMBER of the headers it was built with. A program
 * built against one version and run against another can compare the two.
 */
DCH_API uint32_t dch_version_number(void);

#ifdef __cplusplus
}
#endif

#endif /* DCH_DCH_H */
