/*
 * pstore_bytes.h - the byte helpers the engine's two file formats share
 * (docs/profile-store-format.md): the log (wal_record.c, wal_segment.c,
 * wal_replay.c) and blocks (block_encode.c, block_decode.c).
 *
 * Invariants: the readers never read past end, whatever a length says,
 * and advance *pos only on success (common.h's cursor rule); fixed-width
 * integers are little-endian.
 */
#ifndef EMBER_PSTORE_BYTES_H
#define EMBER_PSTORE_BYTES_H

#include "pstore_internal.h"

/* ---- cursors ------------------------------------------------------------
 *
 * Blocks and log records are read and written with common.h's cursors and
 * LEB128 (ember_cur_*, ember_buf_put_*); these two only narrow their
 * results to the types the decoders keep.
 */

/* An unsigned LEB128 that must be <= max (which fits 32 bits). */
static inline int pstore_get_u32max(const uint8_t **pos, const uint8_t *end, uint32_t max,
				    uint32_t *out)
{
	uint64_t v;
	int err = ember_cur_uleb_max(pos, end, max, &v);

	if (!err)
		*out = (uint32_t)v;
	return err;
}

/* A length-prefixed string of at most max bytes (not NUL-terminated). */
static inline int pstore_get_str(const uint8_t **pos, const uint8_t *end, size_t max,
				 const char **s, size_t *len)
{
	const uint8_t *bytes;
	int err = ember_cur_lenbytes(pos, end, max, &bytes, len);

	if (!err)
		*s = (const char *)bytes;
	return err;
}

static inline void pstore_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline void pstore_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint32_t pstore_rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static inline uint64_t pstore_rd64(const uint8_t *p)
{
	return (uint64_t)pstore_rd32(p) | (uint64_t)pstore_rd32(p + 4) << 32;
}

#endif /* EMBER_PSTORE_BYTES_H */
