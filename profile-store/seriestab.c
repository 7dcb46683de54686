/*
 * seriestab.c - the series of a head or a block: each a sorted label set
 * and the profile types of its columns, with the strings they use, and
 * the types themselves (five strings and the full ID).  Interned through
 * hash sets; a decoded block fills the arrays and builds the sets only
 * when it is merged into something (pstore_seriestab_index).
 */
#include "pstore_internal.h"

#include <stdio.h>

static uint64_t type_hash(const void *ctx, size_t i)
{
	const struct pstore_seriestab *t = ctx;

	return pstore_mix(t->types.v[i].id);
}

static bool type_equal(const void *ctx, size_t i, const void *key)
{
	return ((const struct pstore_seriestab *)ctx)->types.v[i].id == *(const uint32_t *)key;
}

static uint64_t series_hash(const void *ctx, size_t i)
{
	return ((const struct pstore_seriestab *)ctx)->series.v[i].key;
}

static bool series_equal(const void *ctx, size_t i, const void *key)
{
	return ((const struct pstore_seriestab *)ctx)->series.v[i].key == *(const uint64_t *)key;
}

static const struct pstore_hset_ops type_ops = { type_hash, type_equal };
static const struct pstore_hset_ops series_ops = { series_hash, series_equal };

int pstore_seriestab_init(struct pstore_seriestab *t)
{
	memset(t, 0, sizeof(*t));
	return pstore_strtab_init(&t->str);
}

void pstore_seriestab_release(struct pstore_seriestab *t)
{
	pstore_strtab_release(&t->str);
	pstore_vec_free(&t->types);
	pstore_vec_free(&t->series);
	pstore_vec_free(&t->pairs);
	pstore_vec_free(&t->type_ids);
	ember_hset_release(&t->type_set);
	ember_hset_release(&t->series_set);
}

int pstore_seriestab_index(struct pstore_seriestab *t)
{
	for (uint32_t i = (uint32_t)t->type_set.used; i < t->types.n; i++)
		EMBER_FORWARD_IF_ERROR(pstore_hset_insert(&t->type_set, &type_ops, t, i, type_hash(t, i)));
	for (uint32_t i = (uint32_t)t->series_set.used; i < t->series.n; i++)
		EMBER_FORWARD_IF_ERROR(pstore_hset_insert(&t->series_set, &series_ops, t, i, t->series.v[i].key));
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
		EMBER_FORWARD_IF_ERROR(pstore_strtab_intern0(&t->str, f[k], &ty.f[k]));
	EMBER_FORWARD_IF_ERROR(pstore_strtab_intern0(&t->str, full, &ty.id));
	EMBER_FORWARD_IF_ERROR(pstore_seriestab_index(t));
	i = pstore_hset_find(&t->type_set, &type_ops, t, pstore_mix(ty.id), &ty.id);
	if (i == UINT32_MAX) {
		i = (uint32_t)t->types.n;
		EMBER_FORWARD_IF_ERROR(pstore_vec_push(&t->types, ty));
		EMBER_FORWARD_IF_ERROR(pstore_hset_insert(&t->type_set, &type_ops, t, i, pstore_mix(ty.id)));
	}
	*id = i;
	return 0;
}

uint32_t pstore_seriestab_find(const struct pstore_seriestab *t, uint64_t key)
{
	return pstore_hset_find(&t->series_set, &series_ops, t, key, &key);
}

static int add_series(struct pstore_seriestab *t, const struct pstore_label *labels, size_t n,
		      const uint32_t *types, size_t ntypes, uint64_t key)
{
	struct pstore_series s = { .label_off = (uint32_t)t->pairs.n, .nlabels = (uint32_t)n,
			       .type_off = (uint32_t)t->type_ids.n,
			       .ntypes = (uint32_t)ntypes, .key = key };

	EMBER_FORWARD_IF_ERROR(pstore_vec_reserve(&t->pairs, t->pairs.n + n));
	EMBER_FORWARD_IF_ERROR(pstore_vec_reserve(&t->type_ids, t->type_ids.n + ntypes));
	for (size_t i = 0; i < n; i++) {
		struct pstore_lpair *p = &t->pairs.v[t->pairs.n + i];

		EMBER_FORWARD_IF_ERROR(pstore_strtab_intern0(&t->str, labels[i].name, &p->name));
		EMBER_FORWARD_IF_ERROR(pstore_strtab_intern0(&t->str, labels[i].value, &p->value));
	}
	pstore_memcpy(t->type_ids.v + t->type_ids.n, types, ntypes * sizeof(*types));
	t->pairs.n += n;
	t->type_ids.n += ntypes;
	EMBER_FORWARD_IF_ERROR(pstore_vec_push(&t->series, s));
	return pstore_hset_insert(&t->series_set, &series_ops, t, (uint32_t)(t->series.n - 1), key);
}

int pstore_seriestab_series(struct pstore_seriestab *t, const struct pstore_label *labels,
			size_t n, const uint32_t *types, size_t ntypes, uint32_t *id,
			bool *added)
{
	const char *tids[64];
	uint64_t key;
	uint32_t i;

	if (ntypes > 64)
		return -E2BIG;
	for (size_t k = 0; k < ntypes; k++)
		tids[k] = pstore_type_str(t, types[k]);
	key = pstore_series_key(labels, n, tids, ntypes);
	EMBER_FORWARD_IF_ERROR(pstore_seriestab_index(t));
	i = pstore_seriestab_find(t, key);
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

		if (strcmp(pstore_str(&t->str, p->name), name) == 0)
			return pstore_str(&t->str, p->value);
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
		labels[i].name = pstore_str(&src->str, src->pairs.v[se->label_off + i].name);
		labels[i].value = pstore_str(&src->str, src->pairs.v[se->label_off + i].value);
	}
	for (uint32_t i = 0; i < se->ntypes; i++) {
		const struct pstore_type *ty = &src->types.v[src->type_ids.v[se->type_off + i]];
		const char *f[5];

		for (int k = 0; k < 5; k++)
			f[k] = pstore_str(&src->str, ty->f[k]);
		EMBER_FORWARD_IF_ERROR(pstore_seriestab_type(dst, f, &types[i]));
	}
	return pstore_seriestab_series(dst, labels, se->nlabels, types, se->ntypes, id, &added);
}
