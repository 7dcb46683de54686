/*
 * symbatch.h - the frames of many addresses of one index, looked up in
 * address order (private to api/).
 *
 * A request's addresses come in any order; looked up one after the other,
 * each touches its own pages of a large index (a cache and TLB miss per
 * array level).  Sorted, neighbours share them, and an address repeated in
 * the request (hot code in a profile) is looked up once.  Answers are then
 * read back in request order.
 */
#ifndef EMBER_SYMBATCH_H
#define EMBER_SYMBATCH_H

#include "symbolizer.h"
#include "symbolize_json.h"

/* Addresses per batch: bounds the frames held (a few hundred KB usually,
 * SYMBATCH_MAX * SYMBATCH_FRAMES frames at worst). */
#define SYMBATCH_MAX 4096
#define SYMBATCH_FRAMES 64

struct symbatch {
	struct symbatch_item {	/* the batch sorted by address */
		uint64_t vaddr;
		uint32_t pos;
	} *items, *spare;		/* spare: the radix sort's other half */
	struct symbatch_answer { /* per position in the batch */
		uint32_t first;	/* its frames: pool[first, first + n) */
		int32_t n;	/* sym_index_lookup's result, clamped */
	} *answers;
	struct sym_frame *pool;
	size_t pool_len, pool_cap;
};

int symbatch_init(struct symbatch *b);
void symbatch_release(struct symbatch *b);

/*
 * Look up addrs[0, n) (n <= SYMBATCH_MAX) in idx with flags; afterwards
 * symbatch_frames() gives each position's frames.  0 or -ENOMEM.
 */
int symbatch_run(struct symbatch *b, const struct sym_index *idx,
		 const struct symjson_address *addrs, size_t n, unsigned flags);

/* The frames of position i of the last run (NULL when none) and their
 * count: > 0, 0 when nothing covers the address, or a negative error. */
static inline const struct sym_frame *symbatch_frames(const struct symbatch *b, size_t i,
						      int *n)
{
	*n = b->answers[i].n;
	return *n > 0 ? &b->pool[b->answers[i].first] : NULL;
}

#endif /* EMBER_SYMBATCH_H */
