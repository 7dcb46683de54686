/*
 * rows.c - the sample rows of one profile before they are stored: a
 * stack node and one value per column each.  Normalized rows are sorted
 * by node with equal nodes summed, which is what the block's delta-coded
 * node stream and the head's summing loops expect.
 */
#include "pstore_head.h"

void pstore_rows_release(struct pstore_rows *r)
{
	EMBER_VEC_FREE(&r->node);
	EMBER_VEC_FREE(&r->val);
}

struct order {
	const uint32_t *node;
};

static int cmp_idx(const void *a, const void *b, void *ctx)
{
	const uint32_t *node = ((const struct order *)ctx)->node;
	uint32_t x = node[*(const uint32_t *)a], y = node[*(const uint32_t *)b];

	return x < y ? -1 : x > y;
}

static bool sorted_unique(const struct pstore_rows *r)
{
	for (size_t i = 1; i < r->node.n; i++)
		if (r->node.v[i - 1] >= r->node.v[i])
			return false;
	return true;
}

int pstore_rows_normalize(struct pstore_rows *r)
{
	size_t n = r->node.n, c = r->ncols, out = 0;
	uint32_t *perm, *node;
	int64_t *val;
	struct order o = { r->node.v };

	if (sorted_unique(r))
		return 0;
	perm = malloc(n * sizeof(*perm));
	node = malloc(n * sizeof(*node));
	val = malloc((n && c ? n * c : 1) * sizeof(*val));
	if (!perm || !node || !val) {
		free(perm);
		free(node);
		free(val);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		perm[i] = (uint32_t)i;
	ember_qsort_r(perm, n, sizeof(*perm), cmp_idx, &o);
	for (size_t i = 0; i < n; i++) {
		const int64_t *src = r->val.v + (size_t)perm[i] * c;

		if (out && node[out - 1] == r->node.v[perm[i]]) {
			for (size_t k = 0; k < c; k++)
				val[(out - 1) * c + k] += src[k];
			continue;
		}
		node[out] = r->node.v[perm[i]];
		ember_memcpy(val + out * c, src, c * sizeof(*val));
		out++;
	}
	free(perm);
	free(r->node.v);
	free(r->val.v);
	r->node.v = node;
	r->node.alloc = n;
	r->node.n = out;
	r->val.v = val;
	r->val.alloc = n * c;
	r->val.n = out * c;
	return 0;
}
