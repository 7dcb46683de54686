/*
 * eh_pointer.c - the DW_EH_PE_* pointer encodings of .eh_frame (LSB 5.0
 * "Exception Frames"): a value format (absolute, LEB128, 2/4/8 bytes,
 * signed or not) applied relative to a base (the pointer's own address,
 * .eh_frame_hdr).  Like the ELF/DWARF layer's cursors it reads through,
 * it takes (pos, end, out), advances *pos only on success and never
 * reads at or past end.
 */
#include "unwind_internal.h"

#include <dwarf.h>

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
		return ember_cur_uleb(pos, end, out);
	if (fmt == DW_EH_PE_sleb128)
		return ember_cur_sleb(pos, end, (int64_t *)out);
	if (n == 0 || n > 8)
		return -ENOTSUP;
	err = ember_cur_uint(pos, end, n, &v);
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
