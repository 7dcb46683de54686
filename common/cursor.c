/*
 * cursor.c - bounded readers of outside bytes and LEB128 (common.h,
 * "bounded byte cursors"): fixed-size little-endian values, LEB128 in
 * both signednesses (DWARF 5 section 7.6; protobuf's varints), strings
 * and length-prefixed bytes, and the LEB128 writers.  The profile store's
 * blocks and log records and the ELF/DWARF layer's sections (elfdw.h) are
 * read with these: one set for every parser of outside bytes.  The short
 * cases are inline in common.h; this file holds the long ones.
 *
 * A value must fit 64 bits: the 10th byte may carry only bit 63 (and,
 * signed, copies of it), later bytes only padding (0x00 or 0x80
 * unsigned; the sign, 0x7f/0xff, signed), which producers of DWARF write
 * and which changes no value.  Anything else is -ERANGE: a truncated
 * value is never read as if it were the real one.
 */
#include "common.h"

#include <errno.h>
#include <string.h>

/* Whether byte b at bit shift >= 63 keeps the value within 64 bits; v
 * holds the bits so far (for the sign). */
static bool leb_high_fits(uint8_t b, unsigned shift, bool is_signed, uint64_t v)
{
	uint8_t pad;

	if (shift == 63) { /* bit 0 is bit 63; bits 1..6 must repeat it */
		pad = is_signed && (b & 1) ? 0x7e : 0;
		return (b & 0x7e) == pad;
	}
	pad = is_signed && (v >> 63) ? 0x7f : 0;
	return (b & 0x7f) == pad;
}

int ember_cur_leb(const uint8_t **pos, const uint8_t *end, bool is_signed, uint64_t *out)
{
	const uint8_t *p = *pos;
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b;

	if (p > end)
		return -ENODATA;
	do {
		if (p >= end)
			return -ENODATA;
		b = *p++;
		if (shift >= 63 && !leb_high_fits(b, shift, is_signed, v))
			return -ERANGE;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		if (shift < 70) /* no wrap, however long the padding */
			shift += 7;
	} while (b & 0x80);
	if (is_signed && shift < 64 && (b & 0x40))
		v |= ~UINT64_C(0) << shift;
	*pos = p;
	*out = v;
	return 0;
}

int ember_cur_uleb_max(const uint8_t **pos, const uint8_t *end, uint64_t max, uint64_t *out)
{
	const uint8_t *p = *pos;
	uint64_t v;
	int err = ember_cur_uleb(&p, end, &v);

	if (err)
		return err;
	if (v > max)
		return -ERANGE;
	*pos = p;
	*out = v;
	return 0;
}

int ember_cur_lenbytes(const uint8_t **pos, const uint8_t *end, uint64_t max,
		       const uint8_t **out, size_t *len)
{
	const uint8_t *p = *pos, *bytes;
	uint64_t n;
	int err = ember_cur_uleb_max(&p, end, max < SIZE_MAX ? max : SIZE_MAX, &n);

	if (!err)
		err = ember_cur_bytes(&p, end, n, &bytes);
	if (err)
		return err;
	*pos = p;
	*out = bytes;
	*len = (size_t)n;
	return 0;
}

size_t ember_uleb_encode(uint64_t v, uint8_t out[EMBER_LEB_MAX])
{
	size_t n = 0;

	while (v >= 0x80) {
		out[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	out[n++] = (uint8_t)v;
	return n;
}

size_t ember_sleb_encode(int64_t v, uint8_t out[EMBER_LEB_MAX])
{
	size_t n = 0;
	bool more;

	do {
		uint8_t b = (uint8_t)(v & 0x7f);

		v >>= 7; /* arithmetic: gcc and clang define it so */
		more = !((v == 0 && !(b & 0x40)) || (v == -1 && (b & 0x40)));
		out[n++] = (uint8_t)(b | (more ? 0x80 : 0));
	} while (more);
	return n;
}

int ember_buf_put_uleb(struct ember_buf *b, uint64_t v)
{
	uint8_t tmp[EMBER_LEB_MAX];

	return ember_buf_append(b, tmp, ember_uleb_encode(v, tmp));
}

int ember_buf_put_sleb(struct ember_buf *b, int64_t v)
{
	uint8_t tmp[EMBER_LEB_MAX];

	return ember_buf_append(b, tmp, ember_sleb_encode(v, tmp));
}

int ember_buf_put_lenbytes(struct ember_buf *b, const void *data, size_t len)
{
	size_t was = b->len;
	int err = ember_buf_put_uleb(b, len);

	if (!err && (err = ember_buf_append(b, len ? data : "", len)))
		b->len = was; /* all or nothing, as ember_buf_append */
	if (err && b->data)
		b->data[b->len] = '\0';
	return err;
}
