/*
 * query.c - pstore_query: the profiles of a selection summed stack by
 * stack.  A snapshot pins the blocks whose time range overlaps the
 * selection and the heads; the type (an alias or a full ID) is resolved
 * against the types they hold; each source selects its series through
 * its label index, sums the matching rows into an array over its own
 * stack nodes, and imports the nodes with a value into the result (with a
 * link filter, only the rows linked to a wanted span or trace: a source
 * none of whose links is wanted is not read).  A resolver, if given, then
 * names the result's unsymbolized frames; a focus then keeps the stacks
 * under its call path alone (pmodel_result_focus: on the resolved names,
 * as the flame graph shows them).
 */
#include "pstore_catalog.h"
#include "pstore_head.h"
#include "pstore_query.h"
#include "pstore_resolve.h"
#include "pstore_series.h"

static int type_index(const struct pstore_seriestab *t, const char *type, uint32_t *out)
{
	for (uint32_t i = 0; i < t->types.n; i++)
		if (strcmp(pstore_type_str(t, i), type) == 0) {
			*out = i;
			return 0;
		}
	return -ENOENT;
}

int pstore_plan(const struct pstore_qctx *q, const struct pstore_seriestab *t,
		const struct pstore_lindex *ix, int32_t *col, bool *any)
{
	uint8_t *bm = malloc(t->series.n ? t->series.n : 1);
	uint32_t type = 0;
	bool has_type = !q->type || type_index(t, q->type, &type) == 0;

	*any = false;
	if (!bm)
		return -ENOMEM;
	if (has_type && pstore_select_series(q->sel, t, ix, bm)) {
		free(bm);
		return -ENOMEM;
	}
	for (uint32_t s = 0; s < t->series.n; s++) {
		const struct pstore_series *se = &t->series.v[s];

		col[s] = -1;
		for (uint32_t c = 0; has_type && bm[s] && c < se->ntypes && col[s] < 0; c++)
			if (!q->type || t->type_ids.v[se->type_off + c] == type)
				col[s] = (int32_t)c;
		*any |= col[s] >= 0;
	}
	free(bm);
	return 0;
}

static void sum_head_rows(const struct pstore_head *h, const struct pstore_prof *p, uint32_t ncols,
			  int32_t col, int64_t *self)
{
	const uint32_t *node;
	const int64_t *val;

	if (!p->nrows)
		return;
	node = h->row_node.v + p->row_off;
	val = h->row_val.v + p->val_off + col;
	for (uint32_t i = 0; i < p->nrows; i++)
		self[node[i]] += val[(size_t)i * ncols];
}

/* The rows of p linked to a wanted link; whether there was one. */
static bool sum_head_linked(const struct pstore_head *h, const struct pstore_prof *p,
			    uint32_t ncols, int32_t col, const uint8_t *want, int64_t *self)
{
	const uint32_t *node = h->row_node.v + p->row_off, *link;
	const int64_t *val = h->row_val.v + p->val_off + col;
	bool any = false;

	if (p->link_off == PS_NO_LINKS)
		return false;
	link = h->row_link.v + p->link_off;
	for (uint32_t i = 0; i < p->nrows; i++)
		if (want[link[i]]) {
			self[node[i]] += val[(size_t)i * ncols];
			any = true;
		}
	return any;
}

/* The parts of p's rows (those wanted) that rows with attributes gave. */
static int head_parts(const struct pstore_head *h, const struct pstore_prof *p, uint32_t ncols,
		      int32_t col, const uint8_t *want, struct pstore_attr_parts *parts)
{
	const uint32_t *node = h->row_node.v + p->row_off, *link;
	const int64_t *val = h->row_val.v + p->val_off + col;

	if (p->link_off == PS_NO_LINKS)
		return 0;
	link = h->row_link.v + p->link_off;
	for (uint32_t i = 0; i < p->nrows; i++)
		if (link[i] && (!want || want[link[i]]))
			EMBER_FORWARD_IF_ERROR(pstore_attr_part(parts, &h->links, node[i], link[i],
								val[(size_t)i * ncols]));
	return 0;
}

/* want: NULL, every row; else the links wanted (pstore_links_want). */
static int head_sum(struct pstore_head *h, struct pstore_qctx *q, int32_t *col,
		    const uint8_t *want, int64_t *self)
{
	struct pstore_attr_parts parts = { 0 };
	bool attrs = pstore_linktab_has_attrs(&h->links);
	int err = 0;

	for (size_t i = 0; i < h->profs.n; i++) {
		const struct pstore_prof *p = &h->profs.v[i];
		uint32_t ncols = h->series.series.v[p->series].ntypes;

		if ((err = pstore_qctx_poll(q)))
			break;
		if (h->state.v[i] != PS_VISIBLE || col[p->series] < 0 || p->time < q->from ||
		    p->time >= q->to)
			continue;
		if (!want)
			sum_head_rows(h, p, ncols, col[p->series], self);
		else if (!sum_head_linked(h, p, ncols, col[p->series], want, self))
			continue;
		pstore_result_note(q->r, p);
		if (attrs && (err = head_parts(h, p, ncols, col[p->series], want, &parts)))
			break;
	}
	if (!err)
		err = pstore_qctx_add(q, &h->dict, NULL, self);
	if (!err)
		err = pmodel_result_add_attrs(q->r, &h->dict, parts.v, parts.n);
	if (!err)
		err = pstore_qctx_charge(q);
	EMBER_VEC_FREE(&parts);
	return err;
}

static int head_query(struct pstore_head *h, struct pstore_qctx *q)
{
	struct pstore_lindex ix = { 0 };
	int32_t *col = NULL;
	int64_t *self = NULL;
	uint8_t *want = NULL;
	bool any, none;
	int err;

	pthread_rwlock_rdlock(&h->lock);
	err = pstore_links_want(h->links.v.v, h->links.v.n, q->links, &want, &none);
	if (!err && none) {
		pthread_rwlock_unlock(&h->lock);
		free(want);
		return 0;
	}
	if (!err)
		err = pstore_lindex_build(&ix, &h->series);
	if (!err && !(col = malloc((h->series.series.n + 1) * sizeof(*col))))
		err = -ENOMEM;
	if (!err)
		err = pstore_plan(q, &h->series, &ix, col, &any);
	if (!err && any)
		err = pstore_qctx_hold(q, pmodel_dict_nodes(&h->dict) * sizeof(*self));
	if (!err && any && !(self = calloc(pmodel_dict_nodes(&h->dict), sizeof(*self))))
		err = -ENOMEM;
	if (!err && any)
		err = head_sum(h, q, col, want, self);
	pthread_rwlock_unlock(&h->lock);
	pstore_lindex_release(&ix);
	free(want);
	free(col);
	free(self);
	return err;
}

void pstore_strs_free(struct pstore_strs *v)
{
	for (size_t i = 0; i < v->n; i++)
		free(v->v[i]);
	EMBER_VEC_FREE(v);
}

static int add_types(const struct pstore_seriestab *t, struct pstore_strs *out)
{
	for (uint32_t i = 0; i < t->types.n; i++) {
		char *s = strdup(pstore_type_str(t, i));

		if (!s || EMBER_VEC_APPEND(out, s)) {
			free(s);
			return -ENOMEM;
		}
	}
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sort and drop duplicates. */
static void sort_unique(struct pstore_strs *v)
{
	size_t out = 0;

	ember_qsort(v->v, v->n, sizeof(*v->v), cmp_str);
	for (size_t i = 0; i < v->n; i++) {
		if (out && strcmp(v->v[out - 1], v->v[i]) == 0) {
			free(v->v[i]);
			continue;
		}
		v->v[out++] = v->v[i];
	}
	v->n = out;
}

int pstore_snapshot_types(const struct pstore_snapshot *snap, struct pstore_strs *out)
{
	int err = 0;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; !err && i < snap->blocks.n; i++)
		err = add_types(&snap->blocks.v[i]->series, out);
	for (size_t i = 0; !err && i < snap->rollups.n; i++)
		err = add_types(&snap->rollups.v[i]->series, out);
	for (size_t i = 0; !err && i < snap->heads.n; i++) {
		pthread_rwlock_rdlock(&snap->heads.v[i]->lock);
		err = add_types(&snap->heads.v[i]->series, out);
		pthread_rwlock_unlock(&snap->heads.v[i]->lock);
	}
	if (err) {
		pstore_strs_free(out);
		return err;
	}
	sort_unique(out);
	return 0;
}

int pstore_query_type(const struct pstore_selection *sel, const struct pstore_selector *parsed,
		  const struct pstore_snapshot *snap, char **out, struct ember_diag *d)
{
	const char *text = sel && sel->type ? sel->type : parsed->type;
	struct pstore_strs ids;
	int err;

	EMBER_FAIL_IF(!text, d, -PSTORE_ERR_TYPE, "no profile type given (e.g. 'cpu')");
	EMBER_FORWARD_IF_ERROR(pstore_snapshot_types(snap, &ids));
	err = pmodel_type_resolve(text, ids.v, ids.n, out, d);
	pstore_strs_free(&ids);
	return err;
}

/* *r replaced by its stacks under sel's focus (resolved names: after
 * the resolver). */
static int focus(struct pmodel_result **r, const struct pstore_selection *sel)
{
	struct pmodel_result *f;

	EMBER_FORWARD_IF_ERROR(pmodel_result_focus(*r, sel->focus, sel->n_focus, &f));
	pmodel_result_free(*r);
	*r = f;
	return 0;
}

/* q->r without the stacks that pieces taking profiles off left at 0 (a
 * full-resolution sum never holds one), charged anew. */
static int drop_zeros(struct pstore_qctx *q)
{
	pstore_qctx_release_stacks(q); /* they name r's nodes */
	EMBER_FORWARD_IF_ERROR(pmodel_result_drop_zeros(&q->r));
	q->charged = 0; /* a new result (the old one's bytes stay taken) */
	return pstore_qctx_charge(q);
}

/* The heads', blocks' and rollups' sums into q->r: each part of the
 * range from the block or rollup the plan gives it (plan.c), summed by
 * the query's threads (query_workers.c) while this one sums the heads. */
static int sum_sources(struct pstore *s, const struct pstore_snapshot *snap, bool rollups,
		       struct pstore_qctx *q)
{
	struct pstore_plan_out plan = { 0 };
	struct pstore_workers *w = NULL;
	int err = pstore_plan_range(snap, q->from, q->to, 0,
				    rollups && !pstore_link_filter_on(q->links), true, &plan);

	if (!err)
		err = pstore_workers_start(s, plan.pieces.v, plan.pieces.n, q, &w);
	for (size_t i = 0; !err && i < snap->heads.n; i++)
		err = pstore_qctx_check(q) ? q->stopped : head_query(snap->heads.v[i], q);
	if (w)
		err = pstore_workers_finish(w, q, err);
	if (!err && q->zeros) {
		atomic_fetch_add(&s->zero_drops, 1);
		err = drop_zeros(q);
	}
	if (!err)
		q->r->rollup_only_step = plan.rollup_only_step;
	pstore_plan_release(&plan);
	return err;
}

/* The resolver's names, then the focus, each charged. */
static int finish_result(const struct pstore_selection *sel, const struct pstore_query_opts *o,
			 struct pstore_qctx *q)
{
	if (EMBER_OPTS_HAS(o, resolver_ctx) && o->resolver) {
		EMBER_FORWARD_IF_ERROR(pstore_resolve_dict(&q->r->dict, o->resolver,
							   o->resolver_ctx, NULL, NULL, q->d));
		EMBER_FORWARD_IF_ERROR(pstore_qctx_charge(q));
	}
	if (!sel || !sel->n_focus)
		return 0;
	EMBER_FORWARD_IF_ERROR(focus(&q->r, sel));
	q->charged = 0; /* a new result (the old one's bytes stay taken) */
	return pstore_qctx_charge(q);
}

static int run(struct pstore *s, const struct pstore_selection *sel,
	       const struct pstore_query_opts *o, struct pmodel_result **out, struct ember_diag *d)
{
	struct pstore_qctx q = { .from = sel ? sel->from_ns : 0, .d = d, .cache = &s->cache,
				 .req = sel ? sel->request : NULL };
	struct pstore_selector *parsed = NULL;
	struct pstore_snapshot snap = { 0 };
	char *type = NULL;
	int err;

	q.to = sel && sel->to_ns ? sel->to_ns : INT64_MAX;
	q.links = sel ? sel->links : NULL;
	EMBER_FORWARD_IF_ERROR(pstore_selection_parse(sel, &parsed, d));
	q.sel = parsed;
	err = pstore_snapshot_take(s, q.from, q.to, &snap);
	if (!err)
		err = pstore_query_type(sel, parsed, &snap, &type, d);
	q.type = type;
	if (!err)
		err = pmodel_result_new(type, &q.r);
	if (!err)
		err = sum_sources(s, &snap, !(sel && sel->full_resolution), &q);
	pstore_qctx_release_stacks(&q); /* r is summed */
	atomic_fetch_add(&s->profiles_read, q.read);
	atomic_fetch_add(&s->rows_bytes_read, q.rows_bytes);
	if (!err)
		err = finish_result(sel, o, &q);
	pstore_snapshot_release(&snap);
	pstore_selector_free(parsed);
	free(type);
	if (err) {
		pmodel_result_free(q.r);
		return err;
	}
	*out = q.r;
	return 0;
}

int pstore_query(struct pstore *s, const struct pstore_selection *sel,
		 const struct pstore_query_opts *o, struct pmodel_result **out,
		 char *why, size_t why_size)
{
	struct ember_diag d = ember_diag_make(why, why_size);
	int err = run(s, sel, o, out, &d);

	if (err == -ENOMEM)
		return EMBER_FAIL(&d, err, "out of memory");
	return err;
}
