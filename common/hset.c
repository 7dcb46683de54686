/*
 * hset.c - an open-addressing set of element indexes: the deduplication
 * tables of the pprof string table and functions, the symbolizer's
 * interned strings and names.  It stores only indexes (index + 1 per
 * slot, 0 empty) and 32 bits of each element's hash: the caller keeps
 * the elements and says when two are equal, so nothing is copied, and
 * growing never hashes an element again.  Linear probing, at most half
 * full; keyed (hash.c), so probe runs stay short whatever the input.
 */
#include "common.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int ember_hset_init(struct ember_hset *s)
{
	s->slots = NULL;
	s->mask = 0;
	s->used = 0;
	return ember_hash_key_init(&s->key);
}

void ember_hset_release(struct ember_hset *s)
{
	if (!s)
		return;
	free(s->slots);
	s->slots = NULL;
	s->mask = 0;
	s->used = 0;
}

void ember_hset_clear(struct ember_hset *s)
{
	if (s->mask)
		memset(s->slots, 0, (s->mask + 1) * sizeof(*s->slots));
	s->used = 0;
}

size_t ember_hset_find(const struct ember_hset *s, uint64_t hash,
		       ember_hset_equal_fn equal, const void *ctx, const void *key)
{
	uint32_t tag = (uint32_t)hash;

	if (!s->mask)
		return SIZE_MAX;
	for (size_t i = hash & s->mask;; i = (i + 1) & s->mask) {
		const struct ember_hset_slot *sl = &s->slots[i];

		if (!sl->idx1)
			return SIZE_MAX;
		if (sl->tag == tag && equal(ctx, sl->idx1 - 1, key))
			return sl->idx1 - 1;
	}
}

static void place(struct ember_hset_slot *slots, size_t mask, struct ember_hset_slot v)
{
	size_t i = v.tag & mask;

	while (slots[i].idx1)
		i = (i + 1) & mask;
	slots[i] = v;
}

static int grow(struct ember_hset *s)
{
	size_t nslots = s->mask ? 2 * (s->mask + 1) : 64;
	struct ember_hset_slot *slots;

	/* positions come from the 32 stored hash bits */
	if (nslots > ((size_t)1 << 32))
		return -E2BIG;
	slots = calloc(nslots, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; s->mask && i <= s->mask; i++)
		if (s->slots[i].idx1)
			place(slots, nslots - 1, s->slots[i]);
	free(s->slots);
	s->slots = slots;
	s->mask = nslots - 1;
	return 0;
}

int ember_hset_insert(struct ember_hset *s, uint64_t hash, size_t idx)
{
	if (idx >= UINT32_MAX - 1)
		return -E2BIG;
	if (!s->mask || 2 * (s->used + 1) > s->mask + 1) {
		int err = grow(s);

		if (err)
			return err;
	}
	place(s->slots, s->mask,
	      (struct ember_hset_slot){ (uint32_t)(idx + 1), (uint32_t)hash });
	s->used++;
	return 0;
}
