/* SPDX-License-Identifier: MIT */
/*
 * MD5 (RFC 1321), internal to libdch. It is here only because ketama
 * placement (ring.h, DCH_RING_PLACE_KETAMA) is defined in terms of it: MD5
 * is broken as a cryptographic hash and nothing else in libdch uses it.
 */
#ifndef DCH_SRC_MD5_H
#define DCH_SRC_MD5_H

#include <stddef.h>
#include <stdint.h>

/* The 16-byte MD5 digest of len bytes at data (NULL allowed when len is 0). */
void dch__md5(const void *data, size_t len, uint8_t digest[16]);

#endif /* DCH_SRC_MD5_H */
