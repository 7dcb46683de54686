/*
 * bigmem.c - memory of megabytes on transparent huge pages.
 *
 * On the VMs Ember runs on, first touching a 4 KiB page of anonymous
 * memory costs 12-16 us (a 2,000-page probe), against well under 1 us
 * per 4 KiB inside a 2 MiB huge page.  A compile that writes a 1.8 MB
 * unwind table or sorts 95k FDEs touches thousands of such pages, so
 * its large arrays and output buffers are 2 MiB-aligned and advised
 * MADV_HUGEPAGE (transparent_hugepage=madvise is the Debian default).
 * Only the pages touched are backed; free() releases the memory.
 */
#include "common.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>

#define HUGE_PAGE ((size_t)2 << 20)

void *ember_big_alloc(size_t size)
{
	size_t n = (size + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	void *p;

	if (size < EMBER_BIG_MIN || n < size)
		return malloc(size ? size : 1);
	p = aligned_alloc(HUGE_PAGE, n);
	if (p)
		madvise(p, n, MADV_HUGEPAGE); /* advice: failure is harmless */
	return p;
}

int ember_buf_reserve_big(struct ember_buf *b, size_t extra)
{
	size_t need;
	char *p;

	if (extra > b->cap || b->len > b->cap - extra)
		return -E2BIG;
	need = b->len + extra + 1;
	if (need <= b->alloc || need < EMBER_BIG_MIN)
		return ember_buf_reserve(b, extra);
	p = ember_big_alloc(need);
	if (!p)
		return -ENOMEM;
	if (b->len)
		memcpy(p, b->data, b->len);
	p[b->len] = '\0';
	free(b->data);
	b->data = p;
	b->alloc = need;
	return 0;
}
