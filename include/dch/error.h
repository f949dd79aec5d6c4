/* SPDX-License-Identifier: MIT */
/*
 * libdch error codes.
 *
 * Every call that can fail returns DCH_OK (0) or one of the negative codes
 * below; there is no global "last error". A call that fails leaves its object
 * exactly as it was. Codes and their messages come from the single list
 * DCH_ERROR_LIST so that they cannot drift apart.
 *
 * DCH_EFULL is also the answer to a caller's buffer that is too small for
 * the result (dch_map_save, dch_map_ranges, dch_ring_ranges): the caller's
 * capacity is the limit passed, and the call says how much it needs.
 * DCH_EINVAL is kept for arguments no capacity could make right.
 *
 * DCH_EIO and DCH_EUNKNOWN split the failures of a write to a remote store
 * (dch-etcd): DCH_EIO means the write was not applied (nothing reached the
 * store, or the store refused it), DCH_EUNKNOWN that it was sent and no
 * answer came back, so it may still be applied.
 */
#ifndef DCH_ERROR_H
#define DCH_ERROR_H

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* X(name, value, message) */
#define DCH_ERROR_LIST(X)                                                     \
    X(DCH_OK, 0, "success")                                                   \
    X(DCH_EINVAL, -1, "invalid argument")                                     \
    X(DCH_ENOMEM, -2, "out of memory")                                        \
    X(DCH_EEXIST, -3, "name already in use")                                  \
    X(DCH_ENOENT, -4, "no such member")                                       \
    X(DCH_EFULL, -5, "over a documented limit")                               \
    X(DCH_ECORRUPT, -6, "data is damaged or not a libdch map")                \
    X(DCH_EVERSION, -7, "unsupported format version")                         \
    X(DCH_EIO, -8, "input/output error")                                      \
    X(DCH_ECONFLICT, -9, "the shared state changed since it was read")        \
    X(DCH_EUNKNOWN, -10,                                                      \
      "the outcome is unknown: the request may or may not have been applied")

enum dch_error {
#define DCH__ERROR_ENUM(name, value, message) name = (value),
    DCH_ERROR_LIST(DCH__ERROR_ENUM)
#undef DCH__ERROR_ENUM
};

/**
 * A short English description of an error code.
 *
 * Never returns NULL: an unknown code gives "unknown error". The string is
 * static and must not be freed.
 */
DCH_API const char *dch_strerror(int code);

#ifdef __cplusplus
}
#endif

#endif /* DCH_ERROR_H */
