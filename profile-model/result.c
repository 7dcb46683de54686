/*
 * result.c - a merged result: its own dictionary and one value per stack
 * node, the sum over every matching profile.  Each source (a head or a
 * block) first sums its rows into a dense array over its own nodes (no
 * hashing per sample), then only the nodes with a value are imported
 * here, with their ancestors.  Samples with attributes add their parts
 * per (node, attribute set) beside self[] (the pprof output labels
 * them).  A result also comes from one decoded pprof (offline diffs).
 */
#include "pmodel_internal.h"

#include <stdio.h>

static int split_type(struct pmodel_result *r)
{
	char *f[5], *copy = strdup(r->type), *p = copy;

	if (!copy)
		return -ENOMEM;
	for (int i = 0; i < 5; i++) {
		f[i] = p;
		p = p ? strchr(p, ':') : NULL;
		if (p)
			*p++ = '\0';
	}
	r->sample_type = strdup(f[1] ? f[1] : "");
	r->sample_unit = strdup(f[2] ? f[2] : "");
	r->period_type = strdup(f[3] ? f[3] : "");
	r->period_unit = strdup(f[4] ? f[4] : "");
	free(copy);
	return r->sample_type && r->sample_unit && r->period_type && r->period_unit ? 0
										   : -ENOMEM;
}

int pmodel_result_new(const char *type_id, struct pmodel_result **out)
{
	struct pmodel_result *r = calloc(1, sizeof(*r));

	if (!r)
		return -ENOMEM;
	r->min_time = INT64_MAX;
	r->max_time = INT64_MIN;
	if (pmodel_dict_init(&r->dict) || EMBER_VEC_APPEND(&r->self, 0) ||
	    !(r->type = strdup(type_id)) || split_type(r)) {
		pmodel_result_free(r);
		return -ENOMEM;
	}
	*out = r;
	return 0;
}

void pmodel_result_free(struct pmodel_result *r)
{
	if (!r)
		return;
	pmodel_dict_release(&r->dict);
	EMBER_VEC_FREE(&r->self);
	EMBER_VEC_FREE(&r->attr_rows);
	if (r->attrs_ready) {
		pmodel_strtab_release(&r->attr_str);
		ember_hset_release(&r->attr_set);
	}
	free(r->type);
	free(r->sample_type);
	free(r->sample_unit);
	free(r->period_type);
	free(r->period_unit);
	free(r);
}

/* One value per node again after nodes were added. */
static int fit(struct pmodel_result *r)
{
	EMBER_FORWARD_IF_ERROR(EMBER_VEC_RESERVE(&r->self, pmodel_dict_nodes(&r->dict)));
	while (r->self.n < pmodel_dict_nodes(&r->dict))
		r->self.v[r->self.n++] = 0;
	return 0;
}

int pmodel_result_add_nodes(struct pmodel_result *r, struct pmodel_import *im,
			    const int64_t *self, size_t first, size_t end)
{
	int err = 0;

	for (size_t n = first ? first : 1; !err && n < end; n++) {
		uint32_t to;

		if (!self[n])
			continue;
		err = pmodel_import_node(im, (uint32_t)n, &to);
		if (!err)
			err = fit(r);
		if (!err)
			r->self.v[to] = pmodel_add(r->self.v[to], self[n]);
	}
	return err;
}

int pmodel_result_add(struct pmodel_result *r, const struct pmodel_dict *src, const int64_t *self)
{
	struct pmodel_import im;
	int err = pmodel_import_init(&im, src, &r->dict);

	if (!err)
		err = pmodel_result_add_nodes(r, &im, self, 1, pmodel_dict_nodes(src));
	pmodel_import_release(&im);
	return err;
}

static bool attr_row_equal(const void *ctx, size_t i, const void *key)
{
	const struct pmodel_attr_row *a = &((const struct pmodel_attr_row *)ctx)[i], *b = key;

	return a->node == b->node && a->attrs == b->attrs;
}

/* Add value to the row (node, attrs), made when new. */
static int add_attr_row(struct pmodel_result *r, uint32_t node, const char *attrs, int64_t value)
{
	struct pmodel_attr_row k = { node, 0, value };
	uint64_t h;
	size_t i;

	EMBER_FORWARD_IF_ERROR(pmodel_strtab_intern0(&r->attr_str, attrs, &k.attrs));
	h = ember_hash(&r->attr_set.key, &k, 2 * sizeof(uint32_t));
	i = ember_hset_find(&r->attr_set, h, attr_row_equal, r->attr_rows.v, &k);
	if (i != SIZE_MAX) {
		r->attr_rows.v[i].value = pmodel_add(r->attr_rows.v[i].value, value);
		return 0;
	}
	EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&r->attr_rows, k));
	return ember_hset_insert(&r->attr_set, h, r->attr_rows.n - 1);
}

int pmodel_result_add_attrs(struct pmodel_result *r, const struct pmodel_dict *src,
			    const struct pmodel_attr_part *parts, size_t n)
{
	struct pmodel_import im;
	int err;

	if (!n)
		return 0;
	if (!r->attrs_ready) {
		r->attrs_ready = true; /* both released whatever their init did */
		err = pmodel_strtab_init(&r->attr_str);
		if (!err)
			err = ember_hset_init(&r->attr_set);
		if (err)
			return err;
	}
	err = pmodel_import_init(&im, src, &r->dict);
	for (size_t i = 0; !err && i < n; i++) {
		uint32_t to;

		err = pmodel_import_node(&im, parts[i].node, &to);
		if (!err)
			err = fit(r);
		if (!err)
			err = add_attr_row(r, to, parts[i].attrs, parts[i].value);
	}
	pmodel_import_release(&im);
	return err;
}

/* Every node of src in r, in src's order (a node summed to 0 too: the
 * dictionary r would have had from src's sources), and its value. */
static int merge_nodes(struct pmodel_result *r, const struct pmodel_result *src)
{
	struct pmodel_import im;
	int err = pmodel_import_init(&im, &src->dict, &r->dict);

	for (uint32_t n = 1; !err && n < pmodel_dict_nodes(&src->dict); n++) {
		uint32_t to;

		err = pmodel_import_node(&im, n, &to);
		if (!err)
			err = fit(r);
		if (!err)
			r->self.v[to] = pmodel_add(r->self.v[to], src->self.v[n]);
	}
	pmodel_import_release(&im);
	return err;
}

int pmodel_result_add_attrs_of(struct pmodel_result *c, const struct pmodel_dict *dict,
			       const struct pmodel_result *r, const uint32_t *map,
			       const bool *keep)
{
	struct pmodel_attr_part *parts;
	size_t n = 0;
	int err;

	if (!r->attr_rows.n)
		return 0;
	parts = malloc(r->attr_rows.n * sizeof(*parts));
	if (!parts)
		return -ENOMEM;
	for (size_t k = 0; k < r->attr_rows.n; k++) {
		const struct pmodel_attr_row *a = &r->attr_rows.v[k];

		if (a->value && (!keep || keep[a->node]))
			parts[n++] = (struct pmodel_attr_part){ map ? map[a->node] : a->node,
								pmodel_str(&r->attr_str, a->attrs),
								a->value };
	}
	err = pmodel_result_add_attrs(c, dict, parts, n);
	free(parts);
	return err;
}

int pmodel_result_remap(const struct pmodel_result *r, const struct pmodel_dict *d,
			const uint32_t *map, struct pmodel_result **out)
{
	int64_t *self = calloc(pmodel_dict_nodes(d), sizeof(*self));
	struct pmodel_result *c = NULL;
	int err = self ? 0 : -ENOMEM;

	for (size_t i = 1; !err && i < r->self.n; i++)
		self[map[i]] = pmodel_add(self[map[i]], r->self.v[i]);
	err = err ? err : pmodel_result_new_like(r, &c);
	err = err ? err : pmodel_result_add(c, d, self);
	err = err ? err : pmodel_result_add_attrs_of(c, d, r, map, NULL);
	free(self);
	if (err) {
		pmodel_result_free(c);
		return err;
	}
	*out = c;
	return 0;
}

int pmodel_result_merge(struct pmodel_result *r, const struct pmodel_result *src)
{
	EMBER_FORWARD_IF_ERROR(merge_nodes(r, src));
	EMBER_FORWARD_IF_ERROR(pmodel_result_add_attrs_of(r, &src->dict, src, NULL, NULL));
	r->profiles += src->profiles;
	if (!r->period)
		r->period = src->period;
	if (src->min_time < r->min_time)
		r->min_time = src->min_time;
	if (src->max_time > r->max_time)
		r->max_time = src->max_time;
	return 0;
}

size_t pmodel_result_bytes(const struct pmodel_result *r)
{
	size_t b = sizeof(*r) + pmodel_dict_bytes(&r->dict) + r->self.alloc * sizeof(*r->self.v) +
		   r->attr_rows.alloc * sizeof(*r->attr_rows.v);

	if (r->attrs_ready)
		b += r->attr_str.bytes.alloc + r->attr_str.off.alloc * 4 + r->attr_set.mask * 4;
	return b;
}

int pmodel_result_new_like(const struct pmodel_result *r, struct pmodel_result **out)
{
	int err = pmodel_result_new(r->type, out);

	if (err)
		return err;
	(*out)->period = r->period;
	(*out)->profiles = r->profiles;
	(*out)->min_time = r->min_time;
	(*out)->max_time = r->max_time;
	(*out)->rollup_only_step = r->rollup_only_step;
	return 0;
}

int pmodel_result_copy(const struct pmodel_result *r, struct pmodel_result **out)
{
	struct pmodel_result *c;
	int err = pmodel_result_new_like(r, &c);

	if (err)
		return err;
	err = pmodel_result_add(c, &r->dict, r->self.v);
	if (err) {
		pmodel_result_free(c);
		return err;
	}
	*out = c;
	return 0;
}

int pmodel_result_drop_zeros(struct pmodel_result **r)
{
	struct pmodel_result *c;
	int err = pmodel_result_copy(*r, &c); /* its stacks not at 0 */

	if (err)
		return err;
	err = pmodel_result_add_attrs_of(c, &(*r)->dict, *r, NULL, NULL);
	if (err) {
		pmodel_result_free(c);
		return err;
	}
	pmodel_result_free(*r);
	*r = c;
	return 0;
}

double pmodel_result_quantum(const struct pmodel_result *r)
{
	if (r->period > 0 && strcmp(r->period_unit, r->sample_unit) == 0)
		return (double)r->period;
	return 1;
}

int64_t pmodel_result_total(const struct pmodel_result *r)
{
	int64_t t = 0;

	for (size_t i = 0; i < r->self.n; i++)
		t += r->self.v[i];
	return t;
}

void pmodel_result_info(const struct pmodel_result *r, struct pmodel_result_info *out)
{
	uint64_t stacks = 0;

	for (size_t i = 0; i < r->self.n; i++)
		stacks += r->self.v[i] != 0;
	*out = (struct pmodel_result_info){
		.type = r->type, .total = pmodel_result_total(r), .period = r->period,
		.profiles = r->profiles, .stacks = stacks,
		.min_time_ns = r->profiles ? r->min_time : 0,
		.max_time_ns = r->profiles ? r->max_time : 0,
		.rollup_only_step = r->rollup_only_step,
	};
}

/* ---- from a pprof file --------------------------------------------------- */

/* The type IDs of p's columns ("name:st:su:pt:pu"), as append names them. */
EMBER_VEC_DEF(type_ids, char *);

static int pprof_type_ids(const struct pprof_profile *p, struct type_ids *ids)
{
	const pprof_message_t *m = pprof_message(p);
	const char *pt = m->period_type ? pprof_string(p, m->period_type->type) : "";
	const char *pu = m->period_type ? pprof_string(p, m->period_type->unit) : "";

	for (size_t i = 0; i < m->n_sample_type; i++) {
		char *id;

		if (asprintf(&id, "%s:%s:%s:%s:%s", pmodel_profile_name(p),
			     pprof_string(p, m->sample_type[i]->type),
			     pprof_string(p, m->sample_type[i]->unit), pt, pu) < 0)
			return -ENOMEM;
		if (EMBER_VEC_APPEND(ids, id)) {
			free(id);
			return -ENOMEM;
		}
	}
	return 0;
}

/* Column of type text in p (NULL: the default sample type, else the last,
 * as pprof picks it). */
static int pick_column(const struct pprof_profile *p, const char *text, char **ids, size_t n,
		       size_t *col, struct ember_diag *d)
{
	const pprof_message_t *m = pprof_message(p);
	char *want = NULL;

	EMBER_FAIL_IF(!n, d, -PMODEL_ERR_TYPE, "profile has no sample types");
	if (!text) {
		const char *def = pprof_string(p, m->default_sample_type);

		*col = n - 1;
		for (size_t i = 0; def && *def && i < n; i++)
			if (strcmp(pprof_string(p, m->sample_type[i]->type), def) == 0)
				*col = i;
		return 0;
	}
	EMBER_FORWARD_IF_ERROR(pmodel_type_resolve(text, ids, n, &want, d));
	for (*col = 0; *col < n && strcmp(ids[*col], want); (*col)++)
		;
	free(want);
	EMBER_FAIL_IF(*col == n, d, -PMODEL_ERR_TYPE, "profile has no samples of type '%.128s'",
		      text);
	return 0;
}

/* Column col of every sample of p, summed per stack into r. */
static int add_samples(struct pmodel_result *r, const struct pprof_profile *p, size_t col)
{
	const pprof_message_t *m = pprof_message(p);
	struct pmodel_pprof_walk w;
	int err = pmodel_pprof_walk_init(&w, &r->dict, p);

	for (size_t i = 0; !err && i < m->n_sample; i++) {
		uint32_t node;

		err = pmodel_pprof_walk_stack(&w, m->sample[i], &node);
		if (!err)
			err = fit(r);
		if (!err)
			r->self.v[node] = pmodel_add(r->self.v[node], m->sample[i]->value[col]);
	}
	pmodel_pprof_walk_release(&w);
	return err;
}

int pmodel_result_from_pprof(const struct pprof_profile *p, const char *type,
			     struct pmodel_result **out, char *why, size_t why_size)
{
	struct ember_diag d = ember_diag_make(why, why_size);
	const pprof_message_t *m = pprof_message(p);
	struct type_ids ids = { 0 };
	struct pmodel_result *r = NULL;
	size_t col = 0;
	int err = pprof_type_ids(p, &ids);

	if (!err)
		err = pick_column(p, type, ids.v, ids.n, &col, &d);
	if (!err)
		err = pmodel_result_new(ids.v[col], &r);
	if (!err)
		err = add_samples(r, p, col);
	if (!err) {
		r->period = m->period;
		r->profiles = 1;
		r->min_time = r->max_time = m->time_nanos;
	}
	for (size_t i = 0; i < ids.n; i++)
		free(ids.v[i]);
	EMBER_VEC_FREE(&ids);
	if (err) {
		pmodel_result_free(r);
		return err == -ENOMEM ? EMBER_FAIL(&d, err, "out of memory") : err;
	}
	*out = r;
	return 0;
}
