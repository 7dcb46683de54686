/*
 * stack_keys.c - a key per stack node from the stack's content, so that a
 * query summing many blocks finds a stack the result already holds with
 * one probe instead of importing it again: walking its frames up to a
 * known caller, each frame's location, functions and strings hashed and
 * compared in the result's dictionary (docs/performance-notes.md,
 * "Stack keys").
 *
 * A key is two 64-bit lanes, each an iterated mix of the stack's content
 * seeded with its own word of the caller's seed: a node's lane mixes its
 * parent's and its location's; a location's its mapping (start, limit,
 * offset, file and build ID), address, frame type and lines (each line's
 * function: name, system name, file, start line; and line number); a
 * string's is ember_checksum64 of its bytes.  What the dictionaries
 * intern as equal is exactly what keys the same, so equal stacks of any
 * two dictionaries keyed under one seed have equal keys; unequal ones
 * share a key with probability about 2^-128 for content the seed does not
 * know.  The seed is the store's, random at each start: keys are never
 * written anywhere.
 */
#include "pmodel_internal.h"

#define GOLDEN 0x9e3779b97f4a7c15ull

/* One step of a lane: h extended by the word v. */
static inline uint64_t step(uint64_t h, uint64_t v, uint64_t seed)
{
	return ember_mix64((h ^ ember_mix64(v + seed)) * GOLDEN + seed);
}

static inline struct pmodel_stack_key step2(struct pmodel_stack_key h, uint64_t va, uint64_t vb,
					    const struct ember_hash_key *s)
{
	return (struct pmodel_stack_key){ step(h.a, va, s->k0), step(h.b, vb, s->k1) };
}

/* The keys of the dictionary's strings, functions, mappings and
 * locations, by id: what a node's key is made of. */
struct parts {
	struct pmodel_stack_key *str, *func, *map, *loc;
};

static void parts_release(struct parts *p)
{
	free(p->str);
	free(p->func);
	free(p->map);
	free(p->loc);
}

static int parts_alloc(struct parts *p, const struct pmodel_dict *d)
{
	p->str = malloc((pmodel_strtab_count(&d->str) + 1) * sizeof(*p->str));
	p->func = malloc((d->funcs.n + 1) * sizeof(*p->func));
	p->map = malloc((d->maps.n + 1) * sizeof(*p->map));
	p->loc = malloc((d->locs.n + 1) * sizeof(*p->loc));
	return p->str && p->func && p->map && p->loc ? 0 : -ENOMEM;
}

static void key_strings(struct parts *p, const struct pmodel_dict *d,
			const struct ember_hash_key *s)
{
	for (size_t i = 0; i < pmodel_strtab_count(&d->str); i++) {
		const char *t = pmodel_str(&d->str, (uint32_t)i);
		size_t n = strlen(t);

		p->str[i] = (struct pmodel_stack_key){ ember_checksum64(t, n, s->k0),
						       ember_checksum64(t, n, s->k1) };
	}
}

static void key_funcs(struct parts *p, const struct pmodel_dict *d,
		      const struct ember_hash_key *s)
{
	for (size_t i = 0; i < d->funcs.n; i++) {
		const struct pmodel_func *f = &d->funcs.v[i];
		struct pmodel_stack_key k = { GOLDEN, GOLDEN };

		k = step2(k, p->str[f->name].a, p->str[f->name].b, s);
		k = step2(k, p->str[f->system_name].a, p->str[f->system_name].b, s);
		k = step2(k, p->str[f->filename].a, p->str[f->filename].b, s);
		p->func[i] = step2(k, (uint64_t)f->start_line, (uint64_t)f->start_line, s);
	}
}

static void key_maps(struct parts *p, const struct pmodel_dict *d, const struct ember_hash_key *s)
{
	for (size_t i = 0; i < d->maps.n; i++) {
		const struct pmodel_map *m = &d->maps.v[i];
		struct pmodel_stack_key k = { GOLDEN, GOLDEN };

		k = step2(k, m->start, m->start, s);
		k = step2(k, m->limit, m->limit, s);
		k = step2(k, m->offset, m->offset, s);
		k = step2(k, p->str[m->filename].a, p->str[m->filename].b, s);
		p->map[i] = step2(k, p->str[m->build_id].a, p->str[m->build_id].b, s);
	}
}

static void key_locs(struct parts *p, const struct pmodel_dict *d, const struct ember_hash_key *s)
{
	for (size_t i = 0; i < d->locs.n; i++) {
		const struct pmodel_loc *l = &d->locs.v[i];
		const struct pmodel_line *ln = d->lines.v + l->line_off;
		struct pmodel_stack_key k = { GOLDEN, GOLDEN };

		k = step2(k, l->mapping != 0, l->mapping != 0, s);
		if (l->mapping)
			k = step2(k, p->map[l->mapping - 1].a, p->map[l->mapping - 1].b, s);
		k = step2(k, l->address, l->address, s);
		k = step2(k, p->str[l->type].a, p->str[l->type].b, s);
		k = step2(k, l->nlines, l->nlines, s);
		for (uint32_t j = 0; j < l->nlines; j++) {
			k = step2(k, p->func[ln[j].func].a, p->func[ln[j].func].b, s);
			k = step2(k, (uint64_t)ln[j].line, (uint64_t)ln[j].line, s);
		}
		p->loc[i] = k;
	}
}

int pmodel_dict_stack_keys(const struct pmodel_dict *d, const struct ember_hash_key *seed,
			   struct pmodel_stack_key **out)
{
	size_t n = pmodel_dict_nodes(d);
	struct pmodel_stack_key *k = malloc((n ? n : 1) * sizeof(*k));
	struct parts p = { 0 };
	int err = k ? parts_alloc(&p, d) : -ENOMEM;

	if (!err) {
		key_strings(&p, d, seed);
		key_funcs(&p, d, seed);
		key_maps(&p, d, seed);
		key_locs(&p, d, seed);
		if (n)
			k[0] = (struct pmodel_stack_key){ seed->k1 ^ GOLDEN, seed->k0 + GOLDEN };
		for (size_t i = 1; i < n; i++) { /* a parent comes before its nodes */
			const struct pmodel_stack_key *pk = &k[d->node_parent.v[i]];
			const struct pmodel_stack_key *lk = &p.loc[d->node_loc.v[i]];

			k[i] = step2(*pk, lk->a, lk->b, seed);
		}
	}
	parts_release(&p);
	if (err) {
		free(k);
		return err;
	}
	*out = k;
	return 0;
}

/* ---- the stacks a result holds, by key ------------------------------------------ */

static bool entry_equal(const void *ctx, size_t i, const void *key)
{
	const struct pmodel_stack_entry *e = &((const struct pmodel_stack_entry *)ctx)[i];
	const struct pmodel_stack_key *k = key;

	return e->key.a == k->a && e->key.b == k->b;
}

void pmodel_stack_index_release(struct pmodel_stack_index *ix)
{
	if (ix->ready)
		ember_hset_release(&ix->set);
	EMBER_VEC_FREE(&ix->v);
	memset(ix, 0, sizeof(*ix));
}

size_t pmodel_stack_index_bytes(const struct pmodel_stack_index *ix)
{
	return ix->v.alloc * sizeof(*ix->v.v) + (ix->ready ? (ix->set.mask + 1) * 8 : 0);
}

/* The result's node of the stack keyed k, or UINT32_MAX.  The key's
 * first lane is the set's hash: it is already a seeded hash of the
 * stack's content. */
static uint32_t index_find(const struct pmodel_stack_index *ix, const struct pmodel_stack_key *k)
{
	size_t i = ix->ready ? ember_hset_find(&ix->set, k->a, entry_equal, ix->v.v, k) : SIZE_MAX;

	return i == SIZE_MAX ? UINT32_MAX : ix->v.v[i].node;
}

static int index_add(struct pmodel_stack_index *ix, const struct pmodel_stack_key *k,
		     uint32_t node)
{
	struct pmodel_stack_entry e = { *k, node };

	if (!ix->ready) {
		EMBER_FORWARD_IF_ERROR(ember_hset_init(&ix->set));
		ix->ready = true;
	}
	EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&ix->v, e));
	return ember_hset_insert(&ix->set, k->a, ix->v.n - 1);
}

int pmodel_self_take_off(const struct pmodel_stack_key *keys_r, int64_t *self_r, size_t nr,
			 const struct pmodel_stack_key *keys_b, const int64_t *self_b, size_t nb,
			 bool *all)
{
	struct pmodel_stack_index ix = { 0 };
	uint32_t *to = malloc((nb + 1) * sizeof(*to));
	int err = to ? 0 : -ENOMEM;

	*all = true;
	for (size_t m = 1; !err && m < nr; m++)
		if (self_r[m])
			err = index_add(&ix, &keys_r[m], (uint32_t)m);
	for (size_t n = 1; !err && *all && n < nb; n++)
		*all = !self_b[n] || (to[n] = index_find(&ix, &keys_b[n])) != UINT32_MAX;
	for (size_t n = 1; !err && *all && n < nb; n++)
		if (self_b[n])
			self_r[to[n]] = pmodel_add(self_r[to[n]], self_b[n]);
	pmodel_stack_index_release(&ix);
	free(to);
	return err;
}

int pmodel_result_add_keyed(struct pmodel_result *r, struct pmodel_stack_index *ix,
			    struct pmodel_import *im, const struct pmodel_dict *src,
			    const struct pmodel_stack_key *keys, const int64_t *self,
			    size_t first, size_t end)
{
	for (size_t n = first ? first : 1; n < end; n++) {
		uint32_t to;

		if (!self[n])
			continue;
		to = index_find(ix, &keys[n]);
		if (to == UINT32_MAX) {
			if (!im->src)
				EMBER_FORWARD_IF_ERROR(pmodel_import_init(im, src, &r->dict));
			EMBER_FORWARD_IF_ERROR(pmodel_result_add_nodes(r, im, self, n, n + 1));
			EMBER_FORWARD_IF_ERROR(pmodel_import_node(im, (uint32_t)n, &to));
			EMBER_FORWARD_IF_ERROR(index_add(ix, &keys[n], to));
			continue;
		}
		r->self.v[to] = pmodel_add(r->self.v[to], self[n]);
	}
	return 0;
}
