/*
 * big_array.c - arrays of many megabytes (the segment table), mapped
 * directly instead of through malloc: growth is an mremap, which moves
 * page-table entries instead of bytes and touches no page twice.
 * Arrays up to 64 KB stay on the heap.
 */
#include "sym_internal.h"

#include <stdlib.h>
#include <sys/mman.h>

#define FIRST_MAP ((size_t)64 << 10)	/* a multiple of any page size */

static size_t round_up(size_t n, size_t to)
{
	return (n + to - 1) / to * to;
}

static void *map_new(size_t n)
{
	return mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}

/* Up to FIRST_MAP the array is on the heap, like any small one (a fresh
 * mapping would cost page faults the heap's free pages do not). */
static int grow_small(void **data, size_t *bytes, size_t n)
{
	void *p = realloc(*data, n);

	if (!p)
		return -ENOMEM;
	*data = p;
	*bytes = n;
	return 0;
}

/* Mappings start small and double: past FIRST_MAP the array moves from
 * the heap to a mapping once (a copy of at most 64 KB), then grows by
 * mremap, which moves no bytes. */
int sym_big_grow(void **data, size_t *bytes, size_t need)
{
	size_t n = *bytes ? 2 * *bytes : FIRST_MAP / 16;
	void *p;

	if (need <= *bytes)
		return 0;
	if (n < need)
		n = need;
	if (n <= FIRST_MAP)
		return grow_small(data, bytes, n);
	n = round_up(n, FIRST_MAP);
	if (*bytes > FIRST_MAP) {
		p = mremap(*data, *bytes, n, MREMAP_MAYMOVE);
	} else {
		p = map_new(n);
		if (p != MAP_FAILED && *data) {
			memcpy(p, *data, *bytes);
			sym_big_free(*data, *bytes);
		}
	}
	if (p == MAP_FAILED)
		return -ENOMEM;
	*data = p;
	*bytes = n;
	return 0;
}

void sym_big_free(void *data, size_t bytes)
{
	if (!data)
		return;
	if (bytes <= FIRST_MAP)
		free(data);
	else
		munmap(data, bytes);
}
