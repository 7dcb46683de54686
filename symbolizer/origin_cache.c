/*
 * origin_cache.c - names of abstract functions by DIE offset, shared by
 * both DIE walks (die_walk.c, libdw_walk.c): every inlined instance
 * and out-of-line copy of a function refers to the same abstract DIE,
 * whose names and declaration are looked up once.  Open addressing on
 * the offset; the values are interned, so they hold for every unit.
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
	size_t mask = c->nslots - 1;
	size_t i = (size_t)(key * 0x9e3779b97f4a7c15ull >> 20) & mask;

	while (c->slots[i].key && c->slots[i].key != key)
		i = (i + 1) & mask;
	return &c->slots[i];
}

static int origin_grow(struct sym_origin_cache *c)
{
	struct sym_origin_cache n = { .nslots = c->nslots ? 2 * c->nslots : 64 };

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

	if ((c->count + 1) * 2 > c->nslots && origin_grow(c))
		return -ENOMEM;
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
