/*
 * prefault.c - the compiler's output buffer, faulted in ahead.  Growable
 * arrays are common.h's EMBER_VEC_PUSH; the few large arrays sized up
 * front (the FDEs, the sort keys) come from ember_big_alloc()
 * (common/bigmem.c).
 */
#include "unwind_internal.h"

#include <sys/mman.h>

/*
 * Room for want more bytes in b, faulted in with one call: on huge pages
 * (common/bigmem.c), and written page by page into a doubling buffer a
 * 1.8 MB table took ~450 page faults, two thirds of the compiler's.
 * Below EMBER_BIG_MIN the faults do not matter.  A hint: on failure the
 * buffer grows as it is written.
 */
void unwind_buf_prefault(struct ember_buf *b, size_t want)
{
	uintptr_t lo, hi, page = 4096;

	if (want < EMBER_BIG_MIN || ember_buf_reserve_big(b, want))
		return;
	lo = ((uintptr_t)b->data + b->len + page - 1) & ~(uintptr_t)(page - 1);
	hi = ((uintptr_t)b->data + b->alloc) & ~(uintptr_t)(page - 1);
	if (hi > lo)
		madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE); /* errors ignored */
}
