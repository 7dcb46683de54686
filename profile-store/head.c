/*
 * head.c - the head: what the current log segment holds, in memory and
 * queryable at once.  Profiles are added pending, become visible when
 * their log record is durable (or dead when it failed), and a sealed
 * head (its segment closed) is written as blocks by the compactor, then
 * dropped.  The rows of a profile are contiguous in row_node/row_val
 * (and row_link when a row has a link); values are row-major with the
 * series' column count.
 */
#include "pstore_head.h"
#include "pstore_series.h"

struct pstore_head *pstore_head_new(uint64_t seq, int64_t now_ns, const struct ember_hash_key *ident)
{
	struct pstore_head *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	if (pthread_rwlock_init(&h->lock, NULL)) {
		free(h);
		return NULL;
	}
	atomic_init(&h->refs, 1);
	h->seq = seq;
	h->created_ns = now_ns;
	h->min_time = INT64_MAX;
	h->max_time = INT64_MIN;
	if (pmodel_dict_init(&h->dict) || pstore_seriestab_init(&h->series, ident)) {
		pstore_head_unref(h);
		return NULL;
	}
	return h;
}

struct pstore_head *pstore_head_ref(struct pstore_head *h)
{
	atomic_fetch_add(&h->refs, 1);
	return h;
}

void pstore_head_unref(struct pstore_head *h)
{
	if (!h || atomic_fetch_sub(&h->refs, 1) != 1)
		return;
	pmodel_dict_release(&h->dict);
	pstore_seriestab_release(&h->series);
	EMBER_VEC_FREE(&h->profs);
	EMBER_VEC_FREE(&h->state);
	EMBER_VEC_FREE(&h->row_node);
	EMBER_VEC_FREE(&h->row_val);
	EMBER_VEC_FREE(&h->row_link);
	pstore_linktab_release(&h->links);
	EMBER_VEC_FREE(&h->totals);
	EMBER_VEC_FREE(&h->cov);
	pthread_rwlock_destroy(&h->lock);
	free(h);
}

size_t pstore_head_bytes(const struct pstore_head *h)
{
	return pmodel_dict_bytes(&h->dict) + h->series.str.bytes.alloc +
	       h->profs.alloc * sizeof(struct pstore_prof) + h->row_node.alloc * 4 +
	       h->row_val.alloc * 8 + h->totals.alloc * 8 + h->cov.alloc * sizeof(struct pstore_cov) +
	       h->row_link.alloc * 4 + pstore_linktab_bytes(&h->links);
}

static bool unresolved_equal(const void *ctx, size_t i, const void *key)
{
	return strcmp(((const struct pstore_unresolved *)ctx)[i].build_id, key) == 0;
}

/* The caller's reason for each unresolved build ID of in (its first for
 * one given twice), found through a keyed set: linear in the build IDs.
 * *out[b] for in->bids.v[b]; the caller frees *out. */
static int bid_reasons(const struct pstore_ingest *in, const struct pstore_head_add *a,
		       const char ***out)
{
	const struct pstore_unresolved *u = a->unresolved;
	const char **r = malloc((in->bids.n ? in->bids.n : 1) * sizeof(*r));
	struct ember_hset set;
	int err = ember_hset_init(&set) ? -EIO : 0;

	for (size_t i = 0; !err && r && i < a->n_unresolved; i++) {
		uint64_t h = u[i].build_id ? ember_hash(&set.key, u[i].build_id,
							strlen(u[i].build_id)) : 0;

		if (u[i].build_id &&
		    ember_hset_find(&set, h, unresolved_equal, u, u[i].build_id) == SIZE_MAX)
			err = ember_hset_insert(&set, h, i);
	}
	for (size_t b = 0; !err && r && b < in->bids.n; b++) {
		const char *bid = in->bids.v[b];
		size_t i = ember_hset_find(&set, ember_hash(&set.key, bid, strlen(bid)),
					   unresolved_equal, u, bid);

		r[b] = i != SIZE_MAX ? (u[i].reason ? u[i].reason : "unsymbolized")
		       : *bid	     ? "unsymbolized"
				     : "no_build_id";
	}
	ember_hset_release(&set);
	if (!err && !r)
		err = -ENOMEM;
	if (err) {
		free(r);
		return err;
	}
	*out = r;
	return 0;
}

static int add_coverage(struct pstore_head *h, const struct pstore_ingest *in,
			const struct pstore_group *g, const char *const *reasons,
			struct pstore_prof *pr)
{
	pr->cov_off = (uint32_t)h->cov.n;
	pr->ncov = (uint32_t)g->cov.n;
	pr->samples = g->samples;
	pr->resolved = g->resolved;
	EMBER_FORWARD_IF_ERROR(EMBER_VEC_RESERVE(&h->cov, h->cov.n + g->cov.n));
	for (size_t i = 0; i < g->cov.n; i++) {
		uint32_t b = g->cov.v[i].bid;
		struct pstore_cov c = { .samples = g->cov.v[i].samples };

		EMBER_FORWARD_IF_ERROR(pmodel_strtab_intern0(&h->series.str, in->bids.v[b], &c.build_id));
		EMBER_FORWARD_IF_ERROR(pmodel_strtab_intern0(&h->series.str, reasons[b], &c.reason));
		h->cov.v[h->cov.n++] = c;
	}
	return 0;
}

/* The rows' links, as ids of h's table (rows without links: none). */
static int add_links(struct pstore_head *h, const struct pstore_rows *r,
		     const struct pstore_linktab *from, struct pstore_prof *pr)
{
	pr->link_off = PS_NO_LINKS;
	if (!r->link.n)
		return 0;
	pr->link_off = h->row_link.n;
	EMBER_FORWARD_IF_ERROR(EMBER_VEC_RESERVE(&h->row_link, h->row_link.n + r->link.n));
	for (size_t i = 0; i < r->link.n; i++) {
		uint32_t id = 0;

		if (r->link.v[i])
			EMBER_FORWARD_IF_ERROR(pstore_linktab_copy(&h->links, from,
								   r->link.v[i], &id));
		h->row_link.v[h->row_link.n++] = id;
	}
	return 0;
}

static int add_rows(struct pstore_head *h, const struct pstore_rows *r,
		    const struct pstore_linktab *links, struct pstore_prof *pr)
{
	size_t c = r->ncols;

	EMBER_FORWARD_IF_ERROR(add_links(h, r, links, pr));
	pr->row_off = h->row_node.n;
	pr->val_off = h->row_val.n;
	pr->nrows = (uint32_t)r->node.n;
	pr->tot_off = (uint32_t)h->totals.n;
	EMBER_FORWARD_IF_ERROR(EMBER_VEC_RESERVE(&h->row_node, h->row_node.n + r->node.n));
	EMBER_FORWARD_IF_ERROR(EMBER_VEC_RESERVE(&h->row_val, h->row_val.n + r->val.n));
	EMBER_FORWARD_IF_ERROR(EMBER_VEC_RESERVE(&h->totals, h->totals.n + c));
	if (r->node.n) { /* (a NULL vector plus 0 is undefined) */
		memcpy(h->row_node.v + h->row_node.n, r->node.v, r->node.n * sizeof(uint32_t));
		memcpy(h->row_val.v + h->row_val.n, r->val.v, r->val.n * sizeof(int64_t));
	}
	h->row_node.n += r->node.n;
	h->row_val.n += r->val.n;
	for (size_t k = 0; k < c; k++) {
		int64_t t = 0;

		for (size_t i = 0; i < r->node.n; i++)
			t += r->val.v[i * c + k];
		h->totals.v[h->totals.n++] = t;
	}
	return 0;
}

/* The profile types of an add's columns, interned in h once for all its
 * groups; tid[k] their ID strings (valid until h's strings grow). */
struct add_types {
	uint32_t id[64];
	const char *tid[64];
};

static int intern_types(struct pstore_head *h, const struct pstore_head_add *a,
			struct add_types *t, struct ember_diag *d)
{
	EMBER_FAIL_IF(a->ncols > 64 || !a->ncols, d, -PSTORE_ERR_LIMIT,
		      "%zu sample types (1 to 64 allowed)", a->ncols);
	for (size_t k = 0; k < a->ncols; k++)
		EMBER_FORWARD_IF_ERROR(pstore_seriestab_type(&h->series, a->types[k], &t->id[k]));
	for (size_t k = 0; k < a->ncols; k++) /* after interning: the table moves */
		t->tid[k] = pstore_type_str(&h->series, t->id[k]);
	return pstore_seriestab_index(&h->series);
}

/* Group 0 holds the unlabeled samples: empty when every sample had
 * labels, and then not a profile of its own. */
static bool group_skipped(const struct pstore_ingest *in, size_t g)
{
	return g == 0 && !in->groups.v[0].rows.node.n && in->groups.n > 1;
}

/* The keys of the series an add brings that h does not hold yet: sorted,
 * each once (two label sets may be one series once the caller's labels
 * are put over them); held[i] is for give_back. */
struct new_keys {
	EMBER_VEC(uint64_t) key;
	bool *held;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int find_new_keys(const struct pstore_head *h, const struct pstore_ingest *in,
			 const struct pstore_labels *labels, const struct add_types *t,
			 size_t ncols, struct new_keys *nk)
{
	size_t n = 0;

	for (size_t g = 0; g < in->groups.n; g++) {
		const struct pstore_labels *l = &labels[g];

		if (group_skipped(in, g) ||
		    pstore_seriestab_find(&h->series, l->v, l->n, t->id, ncols) != UINT32_MAX)
			continue;
		EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&nk->key, pstore_series_key(
			&h->series.ident, l->v, l->n, t->tid, ncols)));
	}
	ember_qsort(nk->key.v, nk->key.n, sizeof(*nk->key.v), cmp_u64);
	for (size_t i = 0; i < nk->key.n; i++)
		if (!n || nk->key.v[i] != nk->key.v[n - 1])
			nk->key.v[n++] = nk->key.v[i];
	nk->key.n = n;
	nk->held = calloc(n ? n : 1, sizeof(*nk->held));
	return nk->held ? 0 : -ENOMEM;
}

/* A failed add: the admitted keys whose series did not reach h go back
 * (those that did count with h's series until it is flushed, as every
 * series of h does). */
static void give_back(const struct pstore_head *h, size_t series_start, struct new_keys *nk,
		      const struct pstore_series_gate *gate)
{
	size_t n = 0;

	for (size_t i = series_start; i < h->series.series.n; i++) {
		const uint64_t *k = bsearch(&h->series.series.v[i].key, nk->key.v, nk->key.n,
					    sizeof(*nk->key.v), cmp_u64);

		if (k)
			nk->held[k - nk->key.v] = true;
	}
	for (size_t i = 0; i < nk->key.n; i++)
		if (!nk->held[i])
			nk->key.v[n++] = nk->key.v[i];
	gate->give_back(gate->ctx, nk->key.v, n);
}

static int add_group(struct pstore_head *h, const struct pstore_ingest *in, size_t g,
		     const struct pstore_labels *l, const struct pstore_head_add *a,
		     const struct add_types *t, const char *const *reasons)
{
	struct pstore_prof pr = { .time = a->time, .duration = a->duration, .period = a->period };
	bool added;

	EMBER_FORWARD_IF_ERROR(pstore_seriestab_series(&h->series, l->v, l->n, t->id, a->ncols,
						       &pr.series, &added));
	EMBER_FORWARD_IF_ERROR(add_rows(h, &in->groups.v[g].rows, &in->links, &pr));
	EMBER_FORWARD_IF_ERROR(add_coverage(h, in, &in->groups.v[g], reasons, &pr));
	EMBER_FORWARD_IF_ERROR(EMBER_VEC_RESERVE(&h->state, h->profs.n + 1));
	EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&h->profs, pr));
	h->state.v[h->state.n++] = PS_PENDING;
	return 0;
}

/* Count the add's new series, then admit them all at once through the
 * gate (*admitted says whether it did), before any is added. */
static int admit_new_series(struct pstore_head *h, const struct pstore_ingest *in,
			    const struct pstore_labels *labels, const struct pstore_head_add *a,
			    const struct pstore_series_gate *gate, struct add_types *t,
			    struct new_keys *nk, bool *admitted, struct ember_diag *d)
{
	EMBER_FORWARD_IF_ERROR(intern_types(h, a, t, d));
	if (!gate)
		return 0;
	EMBER_FORWARD_IF_ERROR(find_new_keys(h, in, labels, t, a->ncols, nk));
	EMBER_FORWARD_IF_ERROR(gate->admit(gate->ctx, nk->key.v, nk->key.n, d));
	*admitted = true;
	return 0;
}

int pstore_head_add(struct pstore_head *h, const struct pstore_ingest *in,
		    const struct pstore_labels *labels, const struct pstore_head_add *a,
		    const struct pstore_series_gate *gate, size_t *first, size_t *count,
		    struct ember_diag *d)
{
	size_t start = h->profs.n, series_start = h->series.series.n;
	struct add_types t;
	struct new_keys nk = { 0 };
	bool admitted = false;
	const char **reasons = NULL;
	int err = admit_new_series(h, in, labels, a, gate, &t, &nk, &admitted, d);

	if (!err)
		err = bid_reasons(in, a, &reasons);
	for (size_t g = 0; !err && g < in->groups.n; g++)
		if (!group_skipped(in, g))
			err = add_group(h, in, g, &labels[g], a, &t, reasons);
	free(reasons);
	if (err) {
		/* Nothing of a failed add stays: drop what was added (rows and
		 * dictionary entries stay unreferenced, which is harmless). */
		for (size_t i = start; i < h->profs.n; i++)
			h->state.v[i] = PS_DEAD;
		if (admitted)
			give_back(h, series_start, &nk, gate);
	}
	EMBER_VEC_FREE(&nk.key);
	free(nk.held);
	if (err)
		return err == -ENOMEM ? EMBER_FAIL(d, err, "out of memory") : err;
	*first = start;
	*count = h->profs.n - start;
	return 0;
}

void pstore_head_settle(struct pstore_head *h, size_t first, size_t count, bool ok)
{
	for (size_t i = first; i < first + count; i++) {
		h->state.v[i] = ok ? PS_VISIBLE : PS_DEAD;
		if (!ok)
			continue;
		h->visible++;
		if (h->profs.v[i].time < h->min_time)
			h->min_time = h->profs.v[i].time;
		if (h->profs.v[i].time > h->max_time)
			h->max_time = h->profs.v[i].time;
	}
}
