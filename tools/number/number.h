/* SPDX-License-Identifier: MIT */
/*
 * The one number parser of the programs around the library: dchctl (its
 * map and etcd commands), dch-analysis, dch-bench and the examples. Every
 * number typed on a command line goes through dch__number_parse (and every
 * hash key through dch__hex_parse), so that all of them accept the same text
 * and refuse the same text. It is not part of
 * libdch (no header under include/, not installed): a static library that
 * these programs link (tools/number/CMakeLists.txt).
 */
#ifndef DCH_TOOLS_NUMBER_H
#define DCH_TOOLS_NUMBER_H

#include <stddef.h>
#include <stdint.h>

/* Flags of dch__number_parse. */
enum {
    /* Also read "0x" or "0X" and hexadecimal digits (dch-analysis's and
     * dch-bench's seeds and sizes). Without it, decimal digits only. */
    DCH__NUMBER_HEX = 1u << 0
};

/*
 * s as a whole number in min .. max: the whole string, decimal digits only
 * (or 0x and hexadecimal digits under DCH__NUMBER_HEX), not empty, no sign,
 * space, fraction or exponent, no overflow (digits are read only while the
 * value stays within max). s may be NULL.
 * @return 0 with *out set, or -1 with *out unchanged.
 */
int dch__number_parse(const char *s, unsigned flags, uint64_t min, uint64_t max,
                      uint64_t *out);

/*
 * s as exactly n bytes written as 2n hexadecimal digits (either case), the
 * high digit of each byte first: a hash key is 32 digits for its 16 bytes.
 * s may be NULL.
 * @return 0 with out[0 .. n-1] set, or -1 with out unchanged.
 */
int dch__hex_parse(const char *s, uint8_t *out, size_t n);

#endif /* DCH_TOOLS_NUMBER_H */
