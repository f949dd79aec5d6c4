/* SPDX-License-Identifier: MIT */
/*
 * The example's data set: key i is "k:<i>" and its value at generation g is
 * "<i>.<g>.<check>", where <check> is 16 hex digits of SipHash-2-4 of
 * "<i>.<g>" under a fixed key. A value therefore names its own key and
 * generation, and any damage to it (or a value stored under the wrong key)
 * is detected without keeping a copy of the data.
 *
 * load writes generation 0 of every key; each write of the concurrent client
 * raises a key's generation by one, and the generations are kept in the
 * state directory so that verify knows the exact value every key must hold.
 */
#ifndef REDIS_SHARD_KEYS_H
#define REDIS_SHARD_KEYS_H

#include <stddef.h>
#include <stdint.h>

/** Room for any key name, NUL included ("k:" and ten digits). */
#define KEY_CAP 16u
/** Room for any value, NUL included. */
#define VALUE_CAP 48u

/** Write key i's name to buf (KEY_CAP bytes); returns its length. */
size_t key_name(char *buf, uint32_t i);

/**
 * Parse a key name of the form "k:<i>", i in decimal without leading zeros.
 * Returns 1 and sets *i_out when it is one, 0 otherwise.
 */
int key_parse(const char *s, size_t len, uint32_t *i_out);

/** Write key i's value at generation gen to buf (VALUE_CAP bytes); returns its length. */
size_t value_make(char *buf, uint32_t i, uint32_t gen);

/**
 * Whether s[0 .. len-1] is exactly key i's value at generation gen.
 */
int value_is(const char *s, size_t len, uint32_t i, uint32_t gen);

#endif /* REDIS_SHARD_KEYS_H */
