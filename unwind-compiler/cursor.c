/*
 * cursor.c - the bounds-checked readers every parser of outside input in
 * unwind-compiler/ goes through: LEB128 (DWARF 5 §7.6), NUL-terminated
 * strings, blocks, and the DW_EH_PE_* pointer encodings of .eh_frame
 * (LSB 5.0 "Exception Frames").  Each takes (pos, end, out), advances
 * *pos only on success and never reads at or past end.  The one-byte
 * LEB128 fast paths are inline in unwind_internal.h.
 */
#include "unwind_internal.h"

#include <dwarf.h>

/*
 * One LEB128 number (DWARF 5 §7.6), the slow path of the inline readers:
 * -ERANGE when the value does not fit 64 bits (for sleb, when the bits
 * past 64 do not repeat the sign).
 */
static int read_leb(const uint8_t **pos, const uint8_t *end, bool is_signed,
		    uint64_t *out)
{
	const uint8_t *p = *pos;
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b, pad;

	do {
		if (p >= end)
			return -ENODATA;
		b = *p++;
		pad = is_signed && (v >> 63) ? 0x7f : 0;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		else if ((b & 0x7f) != pad)
			return -ERANGE;
		pad = is_signed && (b & 1) ? 0x7e : 0;
		if (shift == 63 && (b & 0x7e) != pad)
			return -ERANGE; /* bits past 64 of the 10th byte */
		shift += 7;
	} while (b & 0x80);
	if (is_signed && shift < 64 && (b & 0x40))
		v |= ~UINT64_C(0) << shift;
	*pos = p;
	*out = v;
	return 0;
}

int unwind_read_uleb_slow(const uint8_t **pos, const uint8_t *end,
			  uint64_t *out)
{
	return read_leb(pos, end, false, out);
}

int unwind_read_sleb_slow(const uint8_t **pos, const uint8_t *end,
			  int64_t *out)
{
	uint64_t v;
	int err = read_leb(pos, end, true, &v);

	if (!err)
		*out = (int64_t)v;
	return err;
}

int unwind_read_cstr(const uint8_t **pos, const uint8_t *end, const char **out)
{
	const uint8_t *nul;

	if (*pos >= end)
		return -ENODATA;
	nul = memchr(*pos, 0, (size_t)(end - *pos));
	if (!nul)
		return -ENODATA;
	*out = (const char *)*pos;
	*pos = nul + 1;
	return 0;
}

int unwind_read_block(const uint8_t **pos, const uint8_t *end, uint64_t len,
		      const uint8_t **out)
{
	if (len > (uint64_t)(end - *pos))
		return -ENODATA;
	*out = *pos;
	*pos += len;
	return 0;
}

/* The value of format fmt (low nibble of the encoding), sign-extended. */
static int read_format(const uint8_t **pos, const uint8_t *end, uint8_t fmt,
		       uint8_t addr_size, uint64_t *out)
{
	static const uint8_t size[16] = {
		[DW_EH_PE_udata2] = 2, [DW_EH_PE_udata4] = 4, [DW_EH_PE_udata8] = 8,
		[DW_EH_PE_sdata2] = 2, [DW_EH_PE_sdata4] = 4, [DW_EH_PE_sdata8] = 8,
	};
	unsigned n = fmt == DW_EH_PE_absptr ? addr_size : size[fmt & 0x0f];
	uint64_t v;
	int err;

	if (fmt == DW_EH_PE_uleb128)
		return unwind_read_uleb(pos, end, out);
	if (fmt == DW_EH_PE_sleb128)
		return unwind_read_sleb(pos, end, (int64_t *)out);
	if (n == 0 || n > 8)
		return -ENOTSUP;
	err = unwind_read_un(pos, end, n, &v);
	if (err)
		return err;
	if ((fmt & DW_EH_PE_signed) && n < 8 && (v >> (8 * n - 1)) & 1)
		v |= ~UINT64_C(0) << (8 * n); /* signed formats */
	*out = v;
	return 0;
}

int unwind_read_encoded(const uint8_t **pos, const uint8_t *end, uint8_t enc,
			const struct unwind_ptr_ctx *c, uint64_t *out)
{
	uint64_t base = 0, v;
	const uint8_t *p = *pos;
	int err;

	if (enc == DW_EH_PE_omit || (enc & DW_EH_PE_indirect))
		return -ENOTSUP;
	switch (enc & 0x70) {
	case 0:
		break;
	case DW_EH_PE_pcrel:
		base = c->sec_vaddr + (uint64_t)(p - c->sec_start);
		break;
	case DW_EH_PE_datarel:
		if (!c->data_base)
			return -ENOTSUP;
		base = c->data_base;
		break;
	default:
		return -ENOTSUP; /* textrel, funcrel, aligned: not in ELF CFI */
	}
	err = read_format(&p, end, enc & 0x0f, c->addr_size, &v);
	if (err)
		return err;
	*pos = p;
	*out = base + v; /* wraps modulo 2^64, as addresses do */
	return 0;
}
