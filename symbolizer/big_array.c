/*
 * big_array.c - arrays of many megabytes (the segment table), mapped
 * directly instead of through malloc: growth is an mremap, which moves
 * page-table entries instead of bytes and touches no page twice, and the
 * mapping asks for transparent huge pages, so that filling it costs one
 * page fault per 2 MB instead of one per 4 KB.  Page faults, not
 * instructions, are most of the cost of a big index build on a VM.
 * Arrays up to 64 KB stay on the heap.
 */
#include "sym_internal.h"

#include <stdlib.h>
#include <sys/mman.h>

#define FIRST_MAP ((size_t)64 << 10)	/* a multiple of any page size */
#define HUGE_PAGE ((size_t)2 << 20)

static size_t round_up(size_t n, size_t to)
{
	return (n + to - 1) / to * to;
}

/* A new mapping of n bytes, huge pages asked for when it is that big. */
static void *map_new(size_t n)
{
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p != MAP_FAILED && n >= HUGE_PAGE)
		madvise(p, n, MADV_HUGEPAGE); /* a hint: fine if refused */
	return p;
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

/*
 * Mappings start small and double.  Huge pages are asked for only from
 * 2 MB on, when at least half of the mapping is in use, so that a small
 * input does not pay a 2 MB page for a few kilobytes of index.  At that
 * step the contents move to a fresh mapping (a copy of at most 1 MB):
 * the 4 KB pages already there would keep the first 2 MB from becoming
 * one huge page.  Later steps are mremap, which moves no bytes.
 */
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
	n = round_up(n, n >= HUGE_PAGE ? HUGE_PAGE : FIRST_MAP);
	if (*bytes > FIRST_MAP && (*bytes >= HUGE_PAGE || n < HUGE_PAGE)) {
		p = mremap(*data, *bytes, n, MREMAP_MAYMOVE);
		if (p != MAP_FAILED && n >= HUGE_PAGE)
			madvise(p, n, MADV_HUGEPAGE);
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
