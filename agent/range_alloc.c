/*
 * range_alloc.c - first-fit allocation of ranges of [0, size), for the
 * unwind_data bytes and the unwind_rules slots that loaded tables occupy
 * (docs/unwind-format.md section 4: "a bump or buddy allocator over the
 * chunks").  Freed ranges are merged with their neighbours, so loading
 * and unloading tables does not fragment the maps for good.  Beside it,
 * the binary search over sorted ranges the agent's tables share.
 */
#include "agent_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int agent_ranges_init(struct agent_ranges *r, uint64_t size)
{
	memset(r, 0, sizeof(*r));
	r->size = size;
	if (!size)
		return 0;
	return agent_ranges_free(r, 0, size) ? -ENOMEM : (r->used = 0, 0);
}

void agent_ranges_release(struct agent_ranges *r)
{
	free(r->free);
	memset(r, 0, sizeof(*r));
}

int agent_ranges_alloc(struct agent_ranges *r, uint64_t len, uint64_t align, uint64_t *off)
{
	for (size_t i = 0; i < r->nfree; i++) {
		struct agent_range *f = &r->free[i];
		uint64_t start = (f->off + align - 1) & ~(align - 1), pad = start - f->off;

		if (pad > f->len || f->len - pad < len)
			continue;
		if (pad == 0) {
			f->off += len;
			f->len -= len;
			if (!f->len) {
				memmove(f, f + 1, (r->nfree - i - 1) * sizeof(*f));
				r->nfree--;
			}
		} else {
			uint64_t tail = f->len - pad - len;

			f->len = pad; /* the padding stays free before the range */
			if (tail && agent_ranges_free(r, start + len, tail))
				return -ENOMEM;
			r->used += tail; /* agent_ranges_free took it off */
		}
		r->used += len;
		*off = start;
		return 0;
	}
	return -ENOSPC;
}

int agent_ranges_free(struct agent_ranges *r, uint64_t off, uint64_t len)
{
	size_t i = 0;

	if (!len)
		return 0;
	while (i < r->nfree && r->free[i].off < off)
		i++;
	/* merge with the range before and/or after */
	if (i > 0 && r->free[i - 1].off + r->free[i - 1].len == off) {
		r->free[i - 1].len += len;
		if (i < r->nfree && off + len == r->free[i].off) {
			r->free[i - 1].len += r->free[i].len;
			memmove(&r->free[i], &r->free[i + 1], (r->nfree - i - 1) * sizeof(r->free[0]));
			r->nfree--;
		}
	} else if (i < r->nfree && off + len == r->free[i].off) {
		r->free[i].off = off;
		r->free[i].len += len;
	} else {
		if (r->nfree >= r->alloc &&
		    ember_vec_grow((void **)&r->free, &r->alloc, r->nfree, sizeof(r->free[0])))
			return -ENOMEM;
		memmove(&r->free[i + 1], &r->free[i], (r->nfree - i) * sizeof(r->free[0]));
		r->free[i] = (struct agent_range){ .off = off, .len = len };
		r->nfree++;
	}
	r->used -= len;
	return 0;
}

size_t agent_last_at_or_below(const void *base, size_t n, size_t stride, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		uint64_t key;

		memcpy(&key, (const char *)base + mid * stride, sizeof(key));
		if (key <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? lo - 1 : SIZE_MAX;
}
