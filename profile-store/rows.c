/*
 * rows.c - the sample rows of one profile before they are stored: a
 * stack node, one value per column and, for linked samples, a link id
 * each.  Normalized rows are sorted by (node, link) with equal pairs
 * summed, which is what the block's delta-coded node stream and the
 * head's summing loops expect.
 */
#include "pstore_head.h"

#include <assert.h>

void pstore_rows_release(struct pstore_rows *r)
{
	EMBER_VEC_FREE(&r->node);
	EMBER_VEC_FREE(&r->val);
	EMBER_VEC_FREE(&r->link);
}

struct order {
	const uint32_t *node, *link; /* link NULL: no links */
};

static int cmp_pair(const struct order *o, uint32_t a, uint32_t b)
{
	uint32_t x = o->node[a], y = o->node[b];

	if (x == y && o->link)
		x = o->link[a], y = o->link[b];
	return x < y ? -1 : x > y;
}

static int cmp_idx(const void *a, const void *b, void *ctx)
{
	return cmp_pair(ctx, *(const uint32_t *)a, *(const uint32_t *)b);
}

/* The same without links (most profiles): by node alone. */
static int cmp_node(const void *a, const void *b, void *ctx)
{
	const uint32_t *node = ((const struct order *)ctx)->node;
	uint32_t x = node[*(const uint32_t *)a], y = node[*(const uint32_t *)b];

	return x < y ? -1 : x > y;
}

static bool sorted_unique(const struct pstore_rows *r, const struct order *o)
{
	for (size_t i = 1; i < r->node.n; i++)
		if (cmp_pair(o, (uint32_t)i - 1, (uint32_t)i) >= 0)
			return false;
	return true;
}

/* Rows in perm's order with equal (node, link) pairs summed, into r. */
static int gather(struct pstore_rows *r, const uint32_t *perm, const struct order *o)
{
	size_t n = r->node.n, c = r->ncols, out = 0;
	uint32_t *node = malloc(n * sizeof(*node)), *link = NULL;
	int64_t *val = malloc((n && c ? n * c : 1) * sizeof(*val));

	if (o->link)
		link = malloc(n * sizeof(*link));
	if (!node || !val || (o->link && !link)) {
		free(node);
		free(val);
		free(link);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		const int64_t *src = r->val.v + (size_t)perm[i] * c;

		if (out && !cmp_pair(o, perm[i], perm[i - 1])) {
			for (size_t k = 0; k < c; k++)
				val[(out - 1) * c + k] += src[k];
			continue;
		}
		node[out] = r->node.v[perm[i]];
		if (link)
			link[out] = r->link.v[perm[i]];
		ember_memcpy(val + out * c, src, c * sizeof(*val));
		out++;
	}
	free(r->node.v);
	free(r->val.v);
	r->node.v = node;
	r->node.n = out;
	r->node.alloc = n;
	r->val.v = val;
	r->val.n = out * c;
	r->val.alloc = n * c;
	if (link) {
		free(r->link.v);
		r->link.v = link;
		r->link.n = out;
		r->link.alloc = n;
	}
	return 0;
}

int pstore_rows_normalize(struct pstore_rows *r)
{
	size_t n = r->node.n;
	struct order o = { r->node.v, r->link.n ? r->link.v : NULL };
	uint32_t *perm;
	int err;

	assert(!r->link.n || r->link.n == n);
	if (sorted_unique(r, &o))
		return 0;
	perm = malloc(n * sizeof(*perm));
	if (!perm)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		perm[i] = (uint32_t)i;
	ember_qsort_r(perm, n, sizeof(*perm), o.link ? cmp_idx : cmp_node, &o);
	err = gather(r, perm, &o);
	free(perm);
	return err;
}
