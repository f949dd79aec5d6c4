/*
 * What reading a map file from a stream needs from the format code. Internal
 * to libdch.
 */
#ifndef DCH_SRC_MAP_FILE_INTERNAL_H
#define DCH_SRC_MAP_FILE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/** Bytes of the fixed header, which holds the file length. */
#define DCH__MAP_FILE_HEADER 56u

/**
 * The file length a header announces, so that a reader knows how much more
 * to read. `head` holds the first `len` bytes of a file.
 *
 * @return DCH_OK with *file_len set (at least DCH__MAP_FILE_HEADER + 9);
 *         DCH_ECORRUPT (fewer than 12 bytes, bad magic, a header cut short,
 *         or a length no version 1 map can have); DCH_EVERSION.
 */
int dch__map_file_length(const uint8_t *head, size_t len, uint64_t *file_len);

#endif /* DCH_SRC_MAP_FILE_INTERNAL_H */
