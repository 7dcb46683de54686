/*
 * varint.c - the integer encodings of blocks and log records: LEB128
 * varints (zigzag for signed values, as protobuf's sint64), fixed
 * little-endian words and length-prefixed strings, written into an
 * ember_buf and read back by cursor readers that advance only on success
 * and never read past end, whatever a length claims (curl's STRPARSE).
 */
#include "pstore_internal.h"

int pstore_put_uvarint(struct ember_buf *b, uint64_t v)
{
	uint8_t tmp[10];
	size_t n = 0;

	while (v >= 0x80) {
		tmp[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	tmp[n++] = (uint8_t)v;
	return ember_buf_append(b, tmp, n);
}

int pstore_put_str(struct ember_buf *b, const char *s, size_t len)
{
	EMBER_FORWARD_IF_ERROR(pstore_put_uvarint(b, len));
	return ember_buf_append(b, s, len);
}

int pstore_get_uvarint(const uint8_t **pos, const uint8_t *end, uint64_t *out)
{
	const uint8_t *p = *pos;
	uint64_t v = 0;

	if (p > end)
		return -PSTORE_ERR_CORRUPT;
	for (unsigned shift = 0; shift < 64; shift += 7) {
		if (p == end)
			return -PSTORE_ERR_CORRUPT;
		if (shift == 63 && *p > 1)
			return -PSTORE_ERR_CORRUPT; /* past 64 bits */
		v |= (uint64_t)(*p & 0x7f) << shift;
		if (!(*p++ & 0x80)) {
			*pos = p;
			*out = v;
			return 0;
		}
	}
	return -PSTORE_ERR_CORRUPT;
}

int pstore_get_svarint(const uint8_t **pos, const uint8_t *end, int64_t *out)
{
	uint64_t v;

	EMBER_FORWARD_IF_ERROR(pstore_get_uvarint(pos, end, &v));
	*out = pstore_unzigzag(v);
	return 0;
}

int pstore_get_u32max(const uint8_t **pos, const uint8_t *end, uint32_t max, uint32_t *out)
{
	const uint8_t *p = *pos;
	uint64_t v;

	EMBER_FORWARD_IF_ERROR(pstore_get_uvarint(&p, end, &v));
	if (v > max)
		return -PSTORE_ERR_CORRUPT;
	*pos = p;
	*out = (uint32_t)v;
	return 0;
}

int pstore_get_bytes(const uint8_t **pos, const uint8_t *end, size_t n, const uint8_t **out)
{
	if (*pos > end || (size_t)(end - *pos) < n)
		return -PSTORE_ERR_CORRUPT;
	*out = *pos;
	*pos += n;
	return 0;
}

int pstore_get_str(const uint8_t **pos, const uint8_t *end, size_t max, const char **s,
	       size_t *len)
{
	const uint8_t *p = *pos, *bytes;
	uint64_t n;

	EMBER_FORWARD_IF_ERROR(pstore_get_uvarint(&p, end, &n));
	if (n > max)
		return -PSTORE_ERR_CORRUPT;
	EMBER_FORWARD_IF_ERROR(pstore_get_bytes(&p, end, (size_t)n, &bytes));
	*pos = p;
	*s = (const char *)bytes;
	*len = (size_t)n;
	return 0;
}
