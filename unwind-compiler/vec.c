/*
 * vec.c - memory for the compiler's working sets: growable arrays
 * (capacity doubles, so pushes are amortized O(1)) and the few large
 * arrays sized up front (the FDEs, the sort keys, the page data).
 */
#include "unwind_internal.h"

#include <stdlib.h>
#include <sys/mman.h>

#define HUGE_PAGE (UINT64_C(2) << 20)

/*
 * A large array: from 512 KiB up, 2 MiB-aligned and advised to use
 * transparent huge pages, so first touching it costs one page fault per
 * 2 MiB instead of 512.  In the VMs Ember runs on a 4 KiB fault costs
 * about 16 us: the faults of libLLVM's 4.5 MB FDE array alone were a
 * third of a one-shot compile.  Only touched pages are backed.  free()
 * releases it.
 */
void *unwind_big_alloc(size_t size)
{
	size_t n = (size + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	void *p;

	if (size < HUGE_PAGE / 4 || n < size)
		return malloc(size ? size : 1);
	p = aligned_alloc(HUGE_PAGE, n);
	if (p)
		madvise(p, n, MADV_HUGEPAGE); /* advice: failure is harmless */
	return p;
}

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
