/* SPDX-License-Identifier: MIT */
/*
 * The two functions of every versioned config (dch_map_config,
 * dch_ring_config, dch_etcd_config), written once. Internal to libdch and
 * dch-etcd: a header alone, so that dch-etcd needs no hidden symbol of
 * libdch.
 */
#ifndef DCH_SRC_CONFIG_FUNCTIONS_H
#define DCH_SRC_CONFIG_FUNCTIONS_H

#include "dch/error.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/*
 * Defines `void PREFIX_config_default(TYPE *cfg)`, which fills *cfg (when
 * not NULL) with the initialiser INIT, and `int PREFIX_config_init(TYPE
 * *cfg, uint32_t version)`, which does the same after checking that the
 * caller was built with VERSION: DCH_OK, or DCH_EINVAL for a NULL cfg or
 * another version.
 *
 * The default is a static object, so its padding is zero bits too, and
 * memcpy copies them: a caller may compare configs byte for byte. Only the
 * fields of the version a header defines INIT with are written, so a
 * program built against an older header is never written past its struct.
 */
#define DCH__CONFIG_FUNCTIONS(prefix, type, init, version_now)                  \
    void prefix##_config_default(type *cfg)                                   \
    {                                                                         \
        if (cfg == NULL)                                                      \
            return;                                                           \
        static const type def = init;                                         \
        memcpy(cfg, &def, sizeof def);                                        \
    }                                                                         \
                                                                              \
    int prefix##_config_init(type *cfg, uint32_t version)                     \
    {                                                                         \
        if (cfg == NULL || version != (version_now))                          \
            return DCH_EINVAL;                                                \
        prefix##_config_default(cfg);                                         \
        return DCH_OK;                                                        \
    }

#endif /* DCH_SRC_CONFIG_FUNCTIONS_H */
