/*
 * vec.c - growable arrays for the compiler's working sets (capacity
 * doubles, so pushes are amortized O(1)).
 */
#include "unwind_internal.h"

#include <stdlib.h>

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
