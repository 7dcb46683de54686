/*
 * dict.c - the dictionary of a block, a head or a result: functions,
 * mappings, locations (with their lines) and stack nodes, each stored
 * once and named by a dense index.  Stacks are a prefix tree: node n is
 * (parent, location), so stacks sharing callers share nodes, a stack is
 * one integer in a sample row, and the cumulative value of a frame is a
 * sum over a subtree.  Interning goes through hash sets of indexes,
 * built on the first call (a decoded block that is only read never pays
 * for them).
 */
#include "pmodel_internal.h"

/* ---- hashing and equality per kind ---------------------------------------
 *
 * Every set hashes with its own random key (ember_hash: SipHash), so no
 * profile can be made to collide its stacks or locations into one probe
 * run.  Tuples are hashed as arrays of 64-bit words (no padding bytes).
 */

static uint64_t func_hash_of(const struct pmodel_dict *d, const struct pmodel_func *f)
{
	uint64_t w[3] = { (uint64_t)f->name << 32 | f->system_name, f->filename,
			  (uint64_t)f->start_line };

	return ember_hash(&d->func_set.key, w, sizeof(w));
}

static uint64_t func_hash(const void *ctx, size_t i)
{
	const struct pmodel_dict *d = ctx;

	return func_hash_of(d, &d->funcs.v[i]);
}

static bool func_equal(const void *ctx, size_t i, const void *key)
{
	const struct pmodel_func *a = &((const struct pmodel_dict *)ctx)->funcs.v[i], *b = key;

	return a->name == b->name && a->system_name == b->system_name &&
	       a->filename == b->filename && a->start_line == b->start_line;
}

static uint64_t map_hash_of(const struct pmodel_dict *d, const struct pmodel_map *m)
{
	uint64_t w[4] = { m->start, m->limit, m->offset, (uint64_t)m->filename << 32 | m->build_id };

	return ember_hash(&d->map_set.key, w, sizeof(w));
}

static uint64_t map_hash(const void *ctx, size_t i)
{
	const struct pmodel_dict *d = ctx;

	return map_hash_of(d, &d->maps.v[i]);
}

static bool map_equal(const void *ctx, size_t i, const void *key)
{
	const struct pmodel_map *a = &((const struct pmodel_dict *)ctx)->maps.v[i], *b = key;

	return a->start == b->start && a->limit == b->limit && a->offset == b->offset &&
	       a->filename == b->filename && a->build_id == b->build_id;
}

struct loc_key {
	uint32_t mapping, type;
	uint64_t address;
	const struct pmodel_line *lines;
	uint32_t n;
};

static uint64_t loc_hash_of(const struct pmodel_dict *d, const struct loc_key *k)
{
	const struct pmodel_line *l = k->lines;
	uint32_t n = k->n;
	uint64_t w[3] = { k->address, (uint64_t)k->mapping << 32 | n, k->type };
	uint64_t h = ember_hash(&d->loc_set.key, w, sizeof(w));

	for (uint32_t i = 0; i < n; i++) { /* chained: each step keyed */
		uint64_t lw[3] = { h, l[i].func, (uint64_t)l[i].line };

		h = ember_hash(&d->loc_set.key, lw, sizeof(lw));
	}
	return h;
}

static uint64_t loc_hash(const void *ctx, size_t i)
{
	const struct pmodel_dict *d = ctx;
	const struct pmodel_loc *l = &d->locs.v[i];
	struct loc_key k = { l->mapping, l->type, l->address,
			     l->nlines ? d->lines.v + l->line_off : NULL, l->nlines };

	return loc_hash_of(d, &k);
}

static bool loc_equal(const void *ctx, size_t i, const void *key)
{
	const struct pmodel_dict *d = ctx;
	const struct pmodel_loc *l = &d->locs.v[i];
	const struct loc_key *k = key;
	const struct pmodel_line *a = l->nlines ? d->lines.v + l->line_off : NULL;

	if (l->mapping != k->mapping || l->address != k->address || l->nlines != k->n ||
	    l->type != k->type)
		return false;
	for (uint32_t j = 0; j < k->n; j++)
		if (a[j].func != k->lines[j].func || a[j].line != k->lines[j].line)
			return false;
	return true;
}

static uint64_t node_hash_of(const struct pmodel_dict *d, uint32_t parent, uint32_t loc)
{
	return ember_hash_u64(&d->node_set.key, (uint64_t)parent << 32 | loc);
}

static uint64_t node_hash(const void *ctx, size_t i)
{
	const struct pmodel_dict *d = ctx;

	return node_hash_of(d, d->node_parent.v[i], d->node_loc.v[i]);
}

static bool node_equal(const void *ctx, size_t i, const void *key)
{
	const struct pmodel_dict *d = ctx;
	const uint32_t *k = key;

	return d->node_parent.v[i] == k[0] && d->node_loc.v[i] == k[1];
}

static const struct pmodel_hset_ops func_ops = { func_hash, func_equal };
static const struct pmodel_hset_ops map_ops = { map_hash, map_equal };
static const struct pmodel_hset_ops loc_ops = { loc_hash, loc_equal };
static const struct pmodel_hset_ops node_ops = { node_hash, node_equal };

/* ---- lifecycle ------------------------------------------------------------ */

int pmodel_dict_init(struct pmodel_dict *d)
{
	memset(d, 0, sizeof(*d));
	EMBER_FORWARD_IF_ERROR(pmodel_strtab_init(&d->str));
	EMBER_FORWARD_IF_ERROR(ember_hset_init(&d->func_set));
	EMBER_FORWARD_IF_ERROR(ember_hset_init(&d->map_set));
	EMBER_FORWARD_IF_ERROR(ember_hset_init(&d->loc_set));
	EMBER_FORWARD_IF_ERROR(ember_hset_init(&d->node_set));
	EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&d->node_parent, 0));
	EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&d->node_loc, 0));
	return 0;
}

void pmodel_dict_release(struct pmodel_dict *d)
{
	pmodel_strtab_release(&d->str);
	EMBER_VEC_FREE(&d->funcs);
	EMBER_VEC_FREE(&d->maps);
	EMBER_VEC_FREE(&d->locs);
	EMBER_VEC_FREE(&d->lines);
	EMBER_VEC_FREE(&d->node_parent);
	EMBER_VEC_FREE(&d->node_loc);
	ember_hset_release(&d->func_set);
	ember_hset_release(&d->map_set);
	ember_hset_release(&d->loc_set);
	ember_hset_release(&d->node_set);
	d->indexed = false;
}

int pmodel_dict_index(struct pmodel_dict *d)
{
	if (d->indexed)
		return 0;
	for (uint32_t i = 0; i < d->funcs.n; i++)
		EMBER_FORWARD_IF_ERROR(pmodel_hset_insert(&d->func_set, &func_ops, d, i, func_hash(d, i)));
	for (uint32_t i = 0; i < d->maps.n; i++)
		EMBER_FORWARD_IF_ERROR(pmodel_hset_insert(&d->map_set, &map_ops, d, i, map_hash(d, i)));
	for (uint32_t i = 0; i < d->locs.n; i++)
		EMBER_FORWARD_IF_ERROR(pmodel_hset_insert(&d->loc_set, &loc_ops, d, i, loc_hash(d, i)));
	for (uint32_t i = 1; i < d->node_parent.n; i++)
		EMBER_FORWARD_IF_ERROR(pmodel_hset_insert(&d->node_set, &node_ops, d, i, node_hash(d, i)));
	d->indexed = true;
	return 0;
}

size_t pmodel_dict_bytes(const struct pmodel_dict *d)
{
	return d->str.bytes.alloc + d->str.off.alloc * 4 + d->funcs.alloc * sizeof(struct pmodel_func) +
	       d->maps.alloc * sizeof(struct pmodel_map) + d->locs.alloc * sizeof(struct pmodel_loc) +
	       d->lines.alloc * sizeof(struct pmodel_line) + d->node_parent.alloc * 8 +
	       (d->func_set.mask + d->map_set.mask + d->loc_set.mask + d->node_set.mask +
		d->str.set.mask) * 4;
}

/* ---- interning ------------------------------------------------------------ */

int pmodel_dict_func(struct pmodel_dict *d, const struct pmodel_func *f, uint32_t *id)
{
	uint64_t h = func_hash_of(d, f);
	uint32_t i;

	EMBER_FORWARD_IF_ERROR(pmodel_dict_index(d));
	i = pmodel_hset_find(&d->func_set, &func_ops, d, h, f);
	if (i == UINT32_MAX) {
		i = (uint32_t)d->funcs.n;
		EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&d->funcs, *f));
		EMBER_FORWARD_IF_ERROR(pmodel_hset_insert(&d->func_set, &func_ops, d, i, h));
	}
	*id = i;
	return 0;
}

int pmodel_dict_map(struct pmodel_dict *d, const struct pmodel_map *m, uint32_t *id)
{
	uint64_t h = map_hash_of(d, m);
	uint32_t i;

	EMBER_FORWARD_IF_ERROR(pmodel_dict_index(d));
	i = pmodel_hset_find(&d->map_set, &map_ops, d, h, m);
	if (i == UINT32_MAX) {
		i = (uint32_t)d->maps.n;
		EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&d->maps, *m));
		EMBER_FORWARD_IF_ERROR(pmodel_hset_insert(&d->map_set, &map_ops, d, i, h));
	}
	*id = i;
	return 0;
}

static int add_loc(struct pmodel_dict *d, const struct loc_key *k, uint64_t h, uint32_t *id)
{
	struct pmodel_loc l = { .address = k->address, .mapping = k->mapping,
				.line_off = (uint32_t)d->lines.n, .nlines = k->n, .type = k->type };
	uint32_t i = (uint32_t)d->locs.n;

	if (d->lines.n + k->n >= UINT32_MAX)
		return -E2BIG;
	EMBER_FORWARD_IF_ERROR(EMBER_VEC_RESERVE(&d->lines, d->lines.n + k->n));
	EMBER_FORWARD_IF_ERROR(EMBER_VEC_RESERVE(&d->locs, d->locs.n + 1));
	if (k->n)
		ember_memcpy(d->lines.v + d->lines.n, k->lines, k->n * sizeof(*k->lines));
	d->lines.n += k->n;
	d->locs.v[d->locs.n++] = l;
	EMBER_FORWARD_IF_ERROR(pmodel_hset_insert(&d->loc_set, &loc_ops, d, i, h));
	*id = i;
	return 0;
}

int pmodel_dict_loc(struct pmodel_dict *d, uint32_t mapping, uint64_t address, uint32_t type,
		    const struct pmodel_line *lines, uint32_t n, uint32_t *id)
{
	struct loc_key k = { mapping, type, address, lines, n };
	uint64_t h = loc_hash_of(d, &k);
	uint32_t i;

	EMBER_FORWARD_IF_ERROR(pmodel_dict_index(d));
	i = pmodel_hset_find(&d->loc_set, &loc_ops, d, h, &k);
	if (i != UINT32_MAX) {
		*id = i;
		return 0;
	}
	return add_loc(d, &k, h, id);
}

int pmodel_dict_node(struct pmodel_dict *d, uint32_t parent, uint32_t loc, uint32_t *id)
{
	uint32_t key[2] = { parent, loc };
	uint64_t h = node_hash_of(d, parent, loc);
	uint32_t i;

	if (!d->indexed)
		EMBER_FORWARD_IF_ERROR(pmodel_dict_index(d));
	i = pmodel_hset_find(&d->node_set, &node_ops, d, h, key);
	if (i != UINT32_MAX) {
		*id = i;
		return 0;
	}
	i = (uint32_t)d->node_parent.n;
	EMBER_FORWARD_IF_ERROR(EMBER_VEC_RESERVE(&d->node_parent, i + 1));
	EMBER_FORWARD_IF_ERROR(EMBER_VEC_RESERVE(&d->node_loc, i + 1));
	d->node_parent.v[d->node_parent.n++] = parent;
	d->node_loc.v[d->node_loc.n++] = loc;
	EMBER_FORWARD_IF_ERROR(pmodel_hset_insert(&d->node_set, &node_ops, d, i, h));
	*id = i;
	return 0;
}
