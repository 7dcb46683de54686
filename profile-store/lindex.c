/*
 * lindex.c - the label index of a block or a head: label names sorted,
 * each with its values sorted, each value with the ascending list of
 * series carrying it (postings), as in Prometheus' TSDB index.  A block
 * stores it (the LABELS section); a head builds it at query time from
 * its series, which are few.
 */
#include "pstore_series.h"

struct entry {
	uint32_t name, value, series;
};

static int cmp_entry(const void *a, const void *b, void *ctx)
{
	const struct pmodel_strtab *s = ctx;
	const struct entry *x = a, *y = b;
	int c = x->name == y->name ? 0 : strcmp(pmodel_str(s, x->name), pmodel_str(s, y->name));

	if (!c && x->value != y->value)
		c = strcmp(pmodel_str(s, x->value), pmodel_str(s, y->value));
	if (!c)
		c = x->series < y->series ? -1 : x->series > y->series;
	return c;
}

static int add_entry(struct pstore_lindex *ix, const struct entry *e, const struct entry *prev)
{
	if (!prev || prev->name != e->name) {
		struct pstore_lname n = { e->name, (uint32_t)ix->vals.n, 0 };

		EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&ix->names, n));
	}
	if (!prev || prev->name != e->name || prev->value != e->value) {
		struct pstore_lval v = { e->value, (uint32_t)ix->post.n, 0 };

		EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&ix->vals, v));
		ix->names.v[ix->names.n - 1].nvals++;
	}
	EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&ix->post, e->series));
	ix->vals.v[ix->vals.n - 1].npost++;
	return 0;
}

int pstore_lindex_build(struct pstore_lindex *ix, const struct pstore_seriestab *t)
{
	struct entry *e = malloc((t->pairs.n ? t->pairs.n : 1) * sizeof(*e));
	size_t n = 0;
	int err = 0;

	memset(ix, 0, sizeof(*ix));
	if (!e)
		return -ENOMEM;
	for (uint32_t s = 0; s < t->series.n; s++)
		for (uint32_t i = 0; i < t->series.v[s].nlabels; i++) {
			const struct pstore_lpair *p = &t->pairs.v[t->series.v[s].label_off + i];

			e[n++] = (struct entry){ p->name, p->value, s };
		}
	ember_qsort_r(e, n, sizeof(*e), cmp_entry, (void *)&t->str);
	for (size_t i = 0; !err && i < n; i++)
		err = add_entry(ix, &e[i], i ? &e[i - 1] : NULL);
	free(e);
	if (err)
		pstore_lindex_release(ix);
	return err;
}

void pstore_lindex_release(struct pstore_lindex *ix)
{
	EMBER_VEC_FREE(&ix->names);
	EMBER_VEC_FREE(&ix->vals);
	EMBER_VEC_FREE(&ix->post);
}

uint32_t pstore_lindex_find(const struct pstore_lindex *ix, const struct pstore_seriestab *t,
			const char *name)
{
	size_t lo = 0, hi = ix->names.n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(pmodel_str(&t->str, ix->names.v[mid].name), name);

		if (!c)
			return (uint32_t)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return UINT32_MAX;
}
