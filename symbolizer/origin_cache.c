/*
 * origin_cache.c - names of abstract functions by DIE offset, shared by
 * both DIE walks (die_walk.c, libdw_walk.c): every inlined instance
 * and out-of-line copy of a function refers to the same abstract DIE,
 * whose names and declaration are looked up once.  Open addressing on
 * the offset, hashed with the table's own random key (common.h's
 * ember_hash_words, keyed multiply-add-shift): the offsets come from the
 * file, and a fixed hash would let its writer choose offsets that all
 * probe one run of slots.  The values are interned, so they hold for
 * every unit.
 */
#include "sym_internal.h"

#include <stdlib.h>

void sym_origin_cache_release(struct sym_origin_cache *c)
{
	if (!c)
		return;
	free(c->slots);
	memset(c, 0, sizeof(*c));
}

static struct sym_origin *origin_slot(struct sym_origin_cache *c, uint64_t key)
{
	uint32_t w[2] = { (uint32_t)key, (uint32_t)(key >> 32) };
	size_t mask = c->nslots - 1;
	size_t i = ember_hash_words(&c->key, w, 2, c->bits);

	while (c->slots[i].key && c->slots[i].key != key) {
		i = (i + 1) & mask;
		c->probes++;
	}
	return &c->slots[i];
}

static int origin_grow(struct sym_origin_cache *c)
{
	struct sym_origin_cache n = { .nslots = c->nslots ? 2 * c->nslots : 64,
				      .bits = c->nslots ? c->bits + 1 : 6,
				      .key = c->key, .probes = c->probes };
	int err;

	if (!c->nslots && (err = ember_words_key_init(&n.key)))
		return err;
	n.slots = calloc(n.nslots, sizeof(*n.slots));
	if (!n.slots)
		return -ENOMEM;
	for (size_t i = 0; i < c->nslots; i++)
		if (c->slots[i].key)
			*origin_slot(&n, c->slots[i].key) = c->slots[i];
	n.count = c->count;
	free(c->slots);
	*c = n;
	return 0;
}

int sym_origin_cache_get(struct sym_origin_cache *c, uint64_t key,
			 struct sym_node *n, struct sym_origin **slot)
{
	struct sym_origin *o;
	int err;

	if ((c->count + 1) * 2 > c->nslots && (err = origin_grow(c)))
		return err;
	o = origin_slot(c, key);
	if (!o->key) {
		*slot = o;
		return 0;
	}
	n->name = o->name;
	n->short_name = o->short_name;
	n->decl_file = o->decl_file;
	n->decl_line = o->decl_line;
	return 1;
}

void sym_origin_cache_put(struct sym_origin_cache *c, struct sym_origin *slot,
			  uint64_t key, const struct sym_node *n)
{
	*slot = (struct sym_origin){ key, n->name, n->short_name, n->decl_file,
				     n->decl_line };
	c->count++;
}
