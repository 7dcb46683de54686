/*
 * batch.c - many addresses of one index looked up in address order
 * (symsvc_batch_* in symsvc.h).
 *
 * A request's addresses come in any order; looked up one after the other,
 * each touches its own pages of a large index (a cache and TLB miss per
 * array level).  Sorted, neighbours share them, and an address repeated in
 * the request (hot code in a profile) is looked up once.  Answers are then
 * read back in request order.  A batch bounds the frames it holds: a few
 * hundred KB usually, SYMSVC_BATCH_MAX * SYMSVC_FRAMES_MAX frames at worst.
 */
#include "symsvc_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int symsvc_batch_new(struct symsvc_batch **out)
{
	struct symsvc_batch *b = calloc(1, sizeof(*b));

	if (!b)
		return -ENOMEM;
	b->items = malloc(SYMSVC_BATCH_MAX * sizeof(*b->items));
	b->spare = malloc(SYMSVC_BATCH_MAX * sizeof(*b->spare));
	b->answers = malloc(SYMSVC_BATCH_MAX * sizeof(*b->answers));
	b->pool_cap = 4 * SYMSVC_FRAMES_MAX;
	b->pool = malloc(b->pool_cap * sizeof(*b->pool));
	if (!b->items || !b->spare || !b->answers || !b->pool) {
		symsvc_batch_free(b);
		return -ENOMEM;
	}
	*out = b;
	return 0;
}

void symsvc_batch_free(struct symsvc_batch *b)
{
	if (!b)
		return;
	free(b->items);
	free(b->spare);
	free(b->answers);
	free(b->pool);
	free(b);
}

/*
 * Sort items[0, n) by address: a stable LSD radix sort, one pass per
 * byte in which the addresses differ from the smallest (a batch of one
 * binary spans a few MB: three passes, not a comparison sort's
 * n log n calls).
 */
static void sort_by_vaddr(struct symsvc_batch *b, size_t n)
{
	uint64_t lo = UINT64_MAX, hi = 0;

	for (size_t i = 0; i < n; i++) {
		lo = b->items[i].vaddr < lo ? b->items[i].vaddr : lo;
		hi = b->items[i].vaddr > hi ? b->items[i].vaddr : hi;
	}
	for (unsigned shift = 0; n > 1 && shift < 64 && ((hi - lo) >> shift); shift += 8) {
		size_t count[257] = { 0 };
		struct batch_item *t;

		for (size_t i = 0; i < n; i++)
			count[((b->items[i].vaddr - lo) >> shift & 0xff) + 1]++;
		for (int k = 0; k < 256; k++)
			count[k + 1] += count[k];
		for (size_t i = 0; i < n; i++)
			b->spare[count[(b->items[i].vaddr - lo) >> shift & 0xff]++] = b->items[i];
		t = b->items;
		b->items = b->spare;
		b->spare = t;
	}
}

/* Sort the addresses that map to a virtual address; the others get
 * their error now.  Returns how many were sorted. */
static size_t sort_items(struct symsvc_batch *b, const struct sym_index *idx,
			 const struct symjson_address *addrs, size_t n)
{
	size_t m = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t v = addrs[i].addr;
		int err = addrs[i].kind == SYMJSON_FILE_OFFSET
				  ? sym_index_offset_to_vaddr(idx, v, &v) : 0;

		if (err)
			b->answers[i] = (struct batch_answer){ 0, err };
		else
			b->items[m++] = (struct batch_item){ v, (uint32_t)i };
	}
	sort_by_vaddr(b, m);
	return m;
}

int symsvc_batch_run(struct symsvc_batch *b, const struct sym_index *idx,
		     const struct symjson_address *addrs, size_t n, unsigned flags)
{
	size_t m = sort_items(b, idx, addrs, n > SYMSVC_BATCH_MAX ? SYMSVC_BATCH_MAX : n);

	b->pool_len = 0;
	for (size_t k = 0; k < m; k++) {
		struct batch_answer *a = &b->answers[b->items[k].pos];
		int got;

		if (k && b->items[k].vaddr == b->items[k - 1].vaddr) {
			*a = b->answers[b->items[k - 1].pos]; /* the same answer */
			continue;
		}
		if (b->pool_cap - b->pool_len < SYMSVC_FRAMES_MAX && /* nearly always room */
		    ember_vec_reserve((void **)&b->pool, &b->pool_cap,
				      b->pool_len + SYMSVC_FRAMES_MAX, sizeof(*b->pool)))
			return -ENOMEM;
		got = sym_index_lookup(idx, b->items[k].vaddr, SYM_ADDR_VADDR, flags,
				       b->pool + b->pool_len, SYMSVC_FRAMES_MAX);
		if (got > SYMSVC_FRAMES_MAX)
			got = SYMSVC_FRAMES_MAX;
		*a = (struct batch_answer){ (uint32_t)b->pool_len, got };
		if (got > 0)
			b->pool_len += (size_t)got;
	}
	return 0;
}

const struct sym_frame *symsvc_batch_frames(const struct symsvc_batch *b, size_t i, int *n)
{
	return symsvc_batch_frames_at(b, i, n);
}
