/*
 * cursor.c - the slow path of the LEB128 readers (DWARF 5 §7.6): numbers
 * of more than two bytes (signed: more than one).  Shorter ones and every
 * other cursor are inline in elfdw.h.
 *
 * A value must fit 64 bits: the 10th byte may carry only bit 63 (and,
 * for a signed number, copies of it), later bytes only padding (0x00 or
 * 0x80 unsigned; the sign, 0x7f/0xff, signed).  libdw drops the extra
 * bits instead; the symbolizer hands a unit whose numbers this rejects
 * to libdw, so nothing is lost, and nothing reads a truncated value as
 * if it were the real one.
 */
#include "elfdw_internal.h"

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

int elfdw_read_leb(const uint8_t **pos, const uint8_t *end, bool is_signed,
		   uint64_t *out)
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
