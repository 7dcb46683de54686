/*
 * wire_hset.h - an open-addressing set of element indexes, the
 * deduplication tables of wire/ (string table, functions) and of the
 * profile store (its strings, dictionaries and series): the set keeps
 * only indexes, the caller's ops hash and compare the elements they name,
 * so elements are never copied.  Public so the profile store does not
 * keep a second copy (until common/ holds one hash set for the tree).
 */
#ifndef EMBER_WIRE_HSET_H
#define EMBER_WIRE_HSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A set of element indexes (< 2^32 - 1) keyed by hash and equality the
 * caller supplies through ctx.  Slots hold index + 1; 0 is empty. */
struct wire_hset {
	uint32_t *slots;
	size_t mask;	/* slots - 1, slots a power of two; 0 when unallocated */
	size_t used;
};

struct wire_hset_ops {
	uint64_t (*hash)(const void *ctx, size_t idx);
	bool (*equal)(const void *ctx, size_t idx, const void *key);
};

/* Index of an element equal to key (hash is key's hash), or SIZE_MAX. */
size_t wire_hset_find(const struct wire_hset *s, const struct wire_hset_ops *ops,
		      const void *ctx, uint64_t hash, const void *key);
/* Add element idx (not yet in the set).  0, -ENOMEM or -E2BIG. */
int wire_hset_insert(struct wire_hset *s, const struct wire_hset_ops *ops,
		     const void *ctx, size_t idx);
void wire_hset_release(struct wire_hset *s);

uint64_t wire_hash_bytes(const void *data, size_t len, uint64_t seed);

#endif /* EMBER_WIRE_HSET_H */
