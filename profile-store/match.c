/*
 * match.c - a selector evaluated over a label index: each matcher gives
 * the set of series it accepts, as a byte per series, and the sets are
 * intersected.  A matcher that accepts the empty value (foo!="x",
 * foo=~".*", foo="") also accepts the series without the label, so it
 * starts from every series and removes the postings of the values it
 * rejects; the others start from none and add the postings of the values
 * they accept.  An equality looks its value up by binary search; the
 * others try each value of the name once.
 */
#include "pstore_query.h"
#include "pstore_series.h"

static void set_postings(const struct pstore_lindex *ix, const struct pstore_lval *v, uint8_t *m,
			 uint8_t to)
{
	for (uint32_t i = 0; i < v->npost; i++)
		m[ix->post.v[v->post_off + i]] = to;
}

static const struct pstore_lval *find_value(const struct pstore_lindex *ix,
					    const struct pstore_seriestab *t,
					    const struct pstore_lname *n, const char *value)
{
	size_t lo = 0, hi = n->nvals;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct pstore_lval *v = &ix->vals.v[n->val_off + mid];
		int c = strcmp(pmodel_str(&t->str, v->value), value);

		if (!c)
			return v;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* The series m accepts, into one (nseries bytes). */
static void matcher_set(const struct pstore_matcher *m, const struct pstore_seriestab *t,
			const struct pstore_lindex *ix, uint8_t *one)
{
	bool empty_ok = pstore_matcher_value(m, "");
	uint32_t ni = pstore_lindex_find(ix, t, m->name);
	const struct pstore_lname *n = ni == UINT32_MAX ? NULL : &ix->names.v[ni];

	memset(one, empty_ok, t->series.n);
	if (!n)
		return;
	if (m->op == PS_EQ && !empty_ok) {
		const struct pstore_lval *v = find_value(ix, t, n, m->value);

		if (v)
			set_postings(ix, v, one, 1);
		return;
	}
	for (uint32_t i = 0; i < n->nvals; i++) {
		const struct pstore_lval *v = &ix->vals.v[n->val_off + i];

		if (pstore_matcher_value(m, pmodel_str(&t->str, v->value)) != empty_ok)
			set_postings(ix, v, one, !empty_ok);
	}
}

int pstore_select_series(const struct pstore_selector *sel, const struct pstore_seriestab *t,
		     const struct pstore_lindex *ix, uint8_t *bitmap)
{
	uint8_t *one;

	memset(bitmap, 1, t->series.n);
	if (!sel || !sel->m.n || !t->series.n)
		return 0;
	one = malloc(t->series.n);
	if (!one)
		return -ENOMEM;
	for (size_t i = 0; i < sel->m.n; i++) {
		matcher_set(&sel->m.v[i], t, ix, one);
		for (size_t s = 0; s < t->series.n; s++)
			bitmap[s] &= one[s];
	}
	free(one);
	return 0;
}
