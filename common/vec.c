/*
 * vec.c - growable arrays: the one amortized-doubling growth rule every
 * component's arrays use (EMBER_VEC_PUSH in common.h).  Element counts
 * come from outside input (units, rows, FDEs, samples), so the size
 * computation is checked: a count whose bytes would not fit size_t is
 * -E2BIG, never a short allocation.
 */
#include "common.h"

#include <errno.h>
#include <stdlib.h>

int ember_vec_reserve(void **data, size_t *alloc, size_t need, size_t elem)
{
	size_t n;
	void *p;

	if (need <= *alloc)
		return 0;
	if (elem == 0 || need > SIZE_MAX / elem)
		return -E2BIG;
	n = *alloc ? *alloc : 16;
	while (n < need)
		n = n > SIZE_MAX / 2 ? need : n * 2;
	if (n > SIZE_MAX / elem)
		n = need;
	p = realloc(*data, n * elem);
	if (!p)
		return -ENOMEM;
	*data = p;
	*alloc = n;
	return 0;
}

int ember_vec_grow(void **data, size_t *alloc, size_t len, size_t elem)
{
	if (len < *alloc)
		return 0;
	if (len == SIZE_MAX)
		return -E2BIG;
	return ember_vec_reserve(data, alloc, len + 1, elem);
}
