/*
 * symbatch.c - batched lookups in address order (symbatch.h).
 */
#include "symbatch.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int symbatch_init(struct symbatch *b)
{
	memset(b, 0, sizeof(*b));
	b->items = malloc(SYMBATCH_MAX * sizeof(*b->items));
	b->spare = malloc(SYMBATCH_MAX * sizeof(*b->spare));
	b->answers = malloc(SYMBATCH_MAX * sizeof(*b->answers));
	b->pool_cap = 4 * SYMBATCH_FRAMES;
	b->pool = malloc(b->pool_cap * sizeof(*b->pool));
	if (!b->items || !b->spare || !b->answers || !b->pool) {
		symbatch_release(b);
		return -ENOMEM;
	}
	return 0;
}

void symbatch_release(struct symbatch *b)
{
	free(b->items);
	free(b->spare);
	free(b->answers);
	free(b->pool);
	memset(b, 0, sizeof(*b));
}

/*
 * Sort items[0, n) by address: a stable LSD radix sort, one pass per
 * byte in which the addresses differ from the smallest (a batch of one
 * binary spans a few MB: three passes, not a comparison sort's
 * n log n calls).
 */
static void sort_by_vaddr(struct symbatch *b, size_t n)
{
	uint64_t lo = UINT64_MAX, hi = 0;

	for (size_t i = 0; i < n; i++) {
		lo = b->items[i].vaddr < lo ? b->items[i].vaddr : lo;
		hi = b->items[i].vaddr > hi ? b->items[i].vaddr : hi;
	}
	for (unsigned shift = 0; n > 1 && shift < 64 && ((hi - lo) >> shift); shift += 8) {
		size_t count[257] = { 0 };
		struct symbatch_item *t;

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

/* Room for one more lookup's frames in the pool. */
static int pool_reserve(struct symbatch *b)
{
	struct sym_frame *p;
	size_t cap;

	if (b->pool_cap - b->pool_len >= SYMBATCH_FRAMES)
		return 0;
	cap = 2 * b->pool_cap;
	p = realloc(b->pool, cap * sizeof(*p));
	if (!p)
		return -ENOMEM;
	b->pool = p;
	b->pool_cap = cap;
	return 0;
}

/* Sort the addresses that map to a virtual address; the others get
 * their error now.  Returns how many were sorted. */
static size_t sort_items(struct symbatch *b, const struct sym_index *idx,
			 const struct symjson_address *addrs, size_t n)
{
	size_t m = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t v = addrs[i].addr;
		int err = addrs[i].kind == SYMJSON_FILE_OFFSET
				  ? sym_index_offset_to_vaddr(idx, v, &v) : 0;

		if (err)
			b->answers[i] = (struct symbatch_answer){ 0, err };
		else
			b->items[m++] = (struct symbatch_item){ v, (uint32_t)i };
	}
	sort_by_vaddr(b, m);
	return m;
}

int symbatch_run(struct symbatch *b, const struct sym_index *idx,
		 const struct symjson_address *addrs, size_t n, unsigned flags)
{
	size_t m = sort_items(b, idx, addrs, n > SYMBATCH_MAX ? SYMBATCH_MAX : n);

	b->pool_len = 0;
	for (size_t k = 0; k < m; k++) {
		struct symbatch_answer *a = &b->answers[b->items[k].pos];
		int got;

		if (k && b->items[k].vaddr == b->items[k - 1].vaddr) {
			*a = b->answers[b->items[k - 1].pos]; /* the same answer */
			continue;
		}
		if (pool_reserve(b))
			return -ENOMEM;
		got = sym_index_lookup(idx, b->items[k].vaddr, SYM_ADDR_VADDR, flags,
				       b->pool + b->pool_len, SYMBATCH_FRAMES);
		if (got > SYMBATCH_FRAMES)
			got = SYMBATCH_FRAMES;
		*a = (struct symbatch_answer){ (uint32_t)b->pool_len, got };
		if (got > 0)
			b->pool_len += (size_t)got;
	}
	return 0;
}
