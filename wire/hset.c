/*
 * hset.c - an open-addressing set of element indexes, the deduplication
 * tables of the string table and the functions.  The set stores only
 * indexes (index + 1 per slot, 0 empty); the caller's ops hash and
 * compare the elements they name, so the strings and functions are never
 * copied.  Linear probing, kept at most half full.
 */
#include "wire_internal.h"

#include <stdlib.h>

uint64_t wire_hash_bytes(const void *data, size_t len, uint64_t seed)
{
	const uint8_t *p = data;
	uint64_t h = 0xcbf29ce484222325ull ^ seed; /* FNV-1a */

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h ^ (h >> 29);
}

size_t wire_hset_find(const struct wire_hset *s, const struct wire_hset_ops *ops,
		      const void *ctx, uint64_t hash, const void *key)
{
	if (!s->mask)
		return SIZE_MAX;
	for (size_t i = hash & s->mask;; i = (i + 1) & s->mask) {
		uint32_t v = s->slots[i];

		if (!v)
			return SIZE_MAX;
		if (ops->equal(ctx, v - 1, key))
			return v - 1;
	}
}

static void place(uint32_t *slots, size_t mask, uint64_t hash, size_t idx)
{
	size_t i = hash & mask;

	while (slots[i])
		i = (i + 1) & mask;
	slots[i] = (uint32_t)(idx + 1);
}

static int grow(struct wire_hset *s, const struct wire_hset_ops *ops, const void *ctx)
{
	size_t nslots = s->mask ? 2 * (s->mask + 1) : 64;
	uint32_t *slots;

	if (nslots > SIZE_MAX / sizeof(*slots))
		return -E2BIG;
	slots = calloc(nslots, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; s->mask && i <= s->mask; i++)
		if (s->slots[i])
			place(slots, nslots - 1, ops->hash(ctx, s->slots[i] - 1),
			      s->slots[i] - 1);
	free(s->slots);
	s->slots = slots;
	s->mask = nslots - 1;
	return 0;
}

int wire_hset_insert(struct wire_hset *s, const struct wire_hset_ops *ops,
		     const void *ctx, size_t idx)
{
	if (idx >= UINT32_MAX - 1)
		return -E2BIG;
	if (!s->mask || 2 * (s->used + 1) > s->mask + 1) {
		int err = grow(s, ops, ctx);

		if (err)
			return err;
	}
	place(s->slots, s->mask, ops->hash(ctx, idx), idx);
	s->used++;
	return 0;
}

void wire_hset_release(struct wire_hset *s)
{
	if (!s)
		return;
	free(s->slots);
	s->slots = NULL;
	s->mask = 0;
	s->used = 0;
}
