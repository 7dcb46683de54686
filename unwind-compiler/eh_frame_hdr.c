/*
 * eh_frame_hdr.c - read .eh_frame_hdr (LSB 5.0 "Exception Frames"):
 * version 1, the encodings of eh_frame_ptr, fde_count and the search
 * table, then eh_frame_ptr, the address of .eh_frame.
 *
 * The compiler walks .eh_frame itself (every FDE, in one pass), so the
 * header's search table is not needed; the header is how .eh_frame is
 * found in a binary without section headers (through PT_GNU_EH_FRAME,
 * as the runtime unwinders find it), and how a section-header table
 * that disagrees with the program headers is noticed.
 */
#include "unwind_internal.h"

int unwind_hdr_eh_frame_ptr(const uint8_t *hdr, size_t size, uint64_t vaddr,
			    uint64_t *eh_frame_vaddr)
{
	struct unwind_ptr_ctx c = { hdr, vaddr, vaddr, 8 };
	const uint8_t *p = hdr, *end = hdr + size;
	uint8_t version, ptr_enc, count_enc, table_enc;

	if (ember_cur_u8(&p, end, &version) || ember_cur_u8(&p, end, &ptr_enc) ||
	    ember_cur_u8(&p, end, &count_enc) || ember_cur_u8(&p, end, &table_enc))
		return -ENODATA;
	if (version != 1)
		return -ENOTSUP;
	return unwind_read_encoded(&p, end, ptr_enc, &c, eh_frame_vaddr);
}
