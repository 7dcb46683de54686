/*
 * vec.c - growable arrays: PS_VEC(T) in pstore_internal.h is a pointer, a
 * length and a capacity; pstore_grow() doubles the capacity, checking the
 * multiplication, and leaves the array as it was when it fails.
 */
#include "pstore_internal.h"

int pstore_grow(void *arr, size_t *cap, size_t need, size_t elem)
{
	void **a = arr, *na;
	size_t ncap;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap : 8;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return -ENOMEM;
		ncap *= 2;
	}
	if (ncap > SIZE_MAX / elem)
		return -ENOMEM;
	na = realloc(*a, ncap * elem);
	if (!na)
		return -ENOMEM;
	*a = na;
	*cap = ncap;
	return 0;
}
