/*
 * seriestab.c - the series of a head or a block: each a sorted label set
 * and the profile types of its columns, with the strings they use, and
 * the types themselves (five strings and the full ID).  Interned through
 * hash sets, keyed at random, which compare the labels and types
 * themselves (never a series key alone: two label sets are one series
 * only when they are equal); a decoded block fills the arrays and builds
 * the sets only when it is merged into something (pstore_seriestab_index).
 */
#include "pstore_series.h"

#include <stdio.h>

static uint64_t type_hash(const void *ctx, size_t i)
{
	const struct pstore_seriestab *t = ctx;

	return ember_hash_u64(&t->type_set.key, t->types.v[i].id);
}

static bool type_equal(const void *ctx, size_t i, const void *key)
{
	return ((const struct pstore_seriestab *)ctx)->types.v[i].id == *(const uint32_t *)key;
}

static uint64_t series_hash(const void *ctx, size_t i)
{
	const struct pstore_seriestab *t = ctx;

	return ember_hash_u64(&t->series_set.key, t->series.v[i].key);
}

/* A series looked for: its labels (strings) and types (ids of this table). */
struct series_key {
	const struct pstore_label *labels;
	size_t n;
	const uint32_t *types;
	size_t ntypes;
};

static bool series_equal(const void *ctx, size_t i, const void *key)
{
	const struct pstore_seriestab *t = ctx;
	const struct pstore_series *s = &t->series.v[i];
	const struct series_key *k = key;

	if (s->nlabels != k->n || s->ntypes != k->ntypes)
		return false;
	for (uint32_t j = 0; j < s->nlabels; j++) {
		const struct pstore_lpair *p = &t->pairs.v[s->label_off + j];

		if (strcmp(pmodel_str(&t->str, p->name), k->labels[j].name) ||
		    strcmp(pmodel_str(&t->str, p->value), k->labels[j].value))
			return false;
	}
	return memcmp(t->type_ids.v + s->type_off, k->types, k->ntypes * sizeof(*k->types)) == 0;
}

static const struct pmodel_hset_ops type_ops = { type_hash, type_equal };
static const struct pmodel_hset_ops series_ops = { series_hash, series_equal };

int pstore_seriestab_init(struct pstore_seriestab *t, const struct ember_hash_key *ident)
{
	memset(t, 0, sizeof(*t));
	t->ident = *ident;
	EMBER_FORWARD_IF_ERROR(ember_hset_init(&t->type_set));
	EMBER_FORWARD_IF_ERROR(ember_hset_init(&t->series_set));
	return pmodel_strtab_init(&t->str);
}

void pstore_seriestab_release(struct pstore_seriestab *t)
{
	pmodel_strtab_release(&t->str);
	EMBER_VEC_FREE(&t->types);
	EMBER_VEC_FREE(&t->series);
	EMBER_VEC_FREE(&t->pairs);
	EMBER_VEC_FREE(&t->type_ids);
	ember_hset_release(&t->type_set);
	ember_hset_release(&t->series_set);
}

int pstore_seriestab_index(struct pstore_seriestab *t)
{
	for (uint32_t i = (uint32_t)t->type_set.used; i < t->types.n; i++)
		EMBER_FORWARD_IF_ERROR(pmodel_hset_insert(&t->type_set, &type_ops, t, i, type_hash(t, i)));
	for (uint32_t i = (uint32_t)t->series_set.used; i < t->series.n; i++)
		EMBER_FORWARD_IF_ERROR(pmodel_hset_insert(&t->series_set, &series_ops, t, i, series_hash(t, i)));
	return 0;
}

int pstore_seriestab_type(struct pstore_seriestab *t, const char *const f[5], uint32_t *id)
{
	struct pstore_type ty;
	char full[5 * 256];
	uint32_t i;

	snprintf(full, sizeof(full), "%.255s:%.255s:%.255s:%.255s:%.255s", f[0], f[1], f[2],
		 f[3], f[4]);
	for (int k = 0; k < 5; k++)
		EMBER_FORWARD_IF_ERROR(pmodel_strtab_intern0(&t->str, f[k], &ty.f[k]));
	EMBER_FORWARD_IF_ERROR(pmodel_strtab_intern0(&t->str, full, &ty.id));
	EMBER_FORWARD_IF_ERROR(pstore_seriestab_index(t));
	i = pmodel_hset_find(&t->type_set, &type_ops, t, ember_hash_u64(&t->type_set.key, ty.id),
			     &ty.id);
	if (i == UINT32_MAX) {
		i = (uint32_t)t->types.n;
		EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&t->types, ty));
		EMBER_FORWARD_IF_ERROR(pmodel_hset_insert(&t->type_set, &type_ops, t, i,
							  type_hash(t, i)));
	}
	*id = i;
	return 0;
}

static uint32_t find_keyed(const struct pstore_seriestab *t, const struct series_key *k,
			   uint64_t key)
{
	return pmodel_hset_find(&t->series_set, &series_ops, t,
				ember_hash_u64(&t->series_set.key, key), k);
}

static uint64_t key_of(const struct pstore_seriestab *t, const struct series_key *k)
{
	const char *tids[64];

	for (size_t i = 0; i < k->ntypes && i < 64; i++)
		tids[i] = pstore_type_str(t, k->types[i]);
	return pstore_series_key(&t->ident, k->labels, k->n, tids, k->ntypes);
}

uint32_t pstore_seriestab_find(const struct pstore_seriestab *t, const struct pstore_label *labels,
			       size_t n, const uint32_t *types, size_t ntypes)
{
	struct series_key k = { labels, n, types, ntypes };

	if (ntypes > 64 || t->series_set.used != t->series.n)
		return UINT32_MAX; /* only indexed tables are searched */
	return find_keyed(t, &k, key_of(t, &k));
}

static int add_series(struct pstore_seriestab *t, const struct pstore_label *labels, size_t n,
		      const uint32_t *types, size_t ntypes, uint64_t key)
{
	struct pstore_series s = { .label_off = (uint32_t)t->pairs.n, .nlabels = (uint32_t)n,
			       .type_off = (uint32_t)t->type_ids.n,
			       .ntypes = (uint32_t)ntypes, .key = key };

	EMBER_FORWARD_IF_ERROR(EMBER_VEC_RESERVE(&t->pairs, t->pairs.n + n));
	EMBER_FORWARD_IF_ERROR(EMBER_VEC_RESERVE(&t->type_ids, t->type_ids.n + ntypes));
	for (size_t i = 0; i < n; i++) {
		struct pstore_lpair *p = &t->pairs.v[t->pairs.n + i];

		EMBER_FORWARD_IF_ERROR(pmodel_strtab_intern0(&t->str, labels[i].name, &p->name));
		EMBER_FORWARD_IF_ERROR(pmodel_strtab_intern0(&t->str, labels[i].value, &p->value));
	}
	ember_memcpy(t->type_ids.v + t->type_ids.n, types, ntypes * sizeof(*types));
	t->pairs.n += n;
	t->type_ids.n += ntypes;
	EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&t->series, s));
	return pmodel_hset_insert(&t->series_set, &series_ops, t, (uint32_t)(t->series.n - 1),
				  series_hash(t, t->series.n - 1));
}

int pstore_seriestab_series(struct pstore_seriestab *t, const struct pstore_label *labels,
			size_t n, const uint32_t *types, size_t ntypes, uint32_t *id,
			bool *added)
{
	struct series_key k = { labels, n, types, ntypes };
	uint64_t key;
	uint32_t i;

	if (ntypes > 64)
		return -E2BIG;
	key = key_of(t, &k);
	EMBER_FORWARD_IF_ERROR(pstore_seriestab_index(t));
	i = find_keyed(t, &k, key);
	*added = i == UINT32_MAX;
	if (*added) {
		EMBER_FORWARD_IF_ERROR(add_series(t, labels, n, types, ntypes, key));
		i = (uint32_t)(t->series.n - 1);
	}
	*id = i;
	return 0;
}

const char *pstore_series_label(const struct pstore_seriestab *t, uint32_t sid, const char *name)
{
	const struct pstore_series *s = &t->series.v[sid];

	for (uint32_t i = 0; i < s->nlabels; i++) {
		const struct pstore_lpair *p = &t->pairs.v[s->label_off + i];

		if (strcmp(pmodel_str(&t->str, p->name), name) == 0)
			return pmodel_str(&t->str, p->value);
	}
	return NULL;
}

int pstore_seriestab_copy(struct pstore_seriestab *dst, const struct pstore_seriestab *src,
			  uint32_t s, uint32_t *id)
{
	const struct pstore_series *se = &src->series.v[s];
	struct pstore_label labels[256];
	uint32_t types[64];
	bool added;

	if (se->nlabels > 256 || se->ntypes > 64)
		return -E2BIG;
	for (uint32_t i = 0; i < se->nlabels; i++) {
		labels[i].name = pmodel_str(&src->str, src->pairs.v[se->label_off + i].name);
		labels[i].value = pmodel_str(&src->str, src->pairs.v[se->label_off + i].value);
	}
	for (uint32_t i = 0; i < se->ntypes; i++) {
		const struct pstore_type *ty = &src->types.v[src->type_ids.v[se->type_off + i]];
		const char *f[5];

		for (int k = 0; k < 5; k++)
			f[k] = pmodel_str(&src->str, ty->f[k]);
		EMBER_FORWARD_IF_ERROR(pstore_seriestab_type(dst, f, &types[i]));
	}
	return pstore_seriestab_series(dst, labels, se->nlabels, types, se->ntypes, id, &added);
}
