/*
 * vec.c - memory for the compiler's working sets: growable arrays
 * (capacity doubles, so pushes are amortized O(1)) and output buffers
 * faulted in ahead.  The few large arrays sized up front (the FDEs, the
 * sort keys) come from ember_big_alloc() (common/bigmem.c).
 */
#include "unwind_internal.h"

#include <stdlib.h>
#include <sys/mman.h>

int unwind_vec_grow(void **data, size_t *alloc, size_t len, size_t elem)
{
	size_t n;
	void *p;

	if (len < *alloc)
		return 0;
	n = *alloc ? *alloc * 2 : 16;
	if (n > SIZE_MAX / elem)
		return -ENOMEM;
	p = realloc(*data, n * elem);
	if (!p)
		return -ENOMEM;
	*data = p;
	*alloc = n;
	return 0;
}

/*
 * Room for want more bytes in b, faulted in with one call: on huge pages
 * (common/bigmem.c), and written page by page into a doubling buffer a
 * 1.8 MB blob took ~450 page faults, two thirds of the compiler's.
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
