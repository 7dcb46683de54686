/*
 * result.c - a merged result: its own dictionary and one value per stack
 * node, the sum over every matching profile.  Each source (a head or a
 * block) first sums its rows into a dense array over its own nodes (no
 * hashing per sample), then only the nodes with a value are imported
 * here, with their ancestors.  A result also comes from one decoded
 * pprof (offline diffs).
 */
#include "pstore_internal.h"

#include <stdio.h>

static int split_type(struct pstore_result *r)
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

int pstore_result_new(const char *type_id, struct pstore_result **out)
{
	struct pstore_result *r = calloc(1, sizeof(*r));

	if (!r)
		return -ENOMEM;
	r->min_time = INT64_MAX;
	r->max_time = INT64_MIN;
	if (pstore_dict_init(&r->dict) || EMBER_VEC_APPEND(&r->self, 0) ||
	    !(r->type = strdup(type_id)) || split_type(r)) {
		pstore_result_free(r);
		return -ENOMEM;
	}
	*out = r;
	return 0;
}

void pstore_result_free(struct pstore_result *r)
{
	if (!r)
		return;
	pstore_dict_release(&r->dict);
	EMBER_VEC_FREE(&r->self);
	free(r->type);
	free(r->sample_type);
	free(r->sample_unit);
	free(r->period_type);
	free(r->period_unit);
	free(r);
}

/* One value per node again after nodes were added. */
static int fit(struct pstore_result *r)
{
	EMBER_FORWARD_IF_ERROR(EMBER_VEC_RESERVE(&r->self, pstore_dict_nodes(&r->dict)));
	while (r->self.n < pstore_dict_nodes(&r->dict))
		r->self.v[r->self.n++] = 0;
	return 0;
}

int pstore_result_add(struct pstore_result *r, const struct pstore_dict *src, const int64_t *self)
{
	struct pstore_import im;
	int err = pstore_import_init(&im, src, &r->dict);

	for (uint32_t n = 1; !err && n < pstore_dict_nodes(src); n++) {
		uint32_t to;

		if (!self[n])
			continue;
		err = pstore_import_node(&im, n, &to);
		if (!err)
			err = fit(r);
		if (!err)
			r->self.v[to] = pstore_add(r->self.v[to], self[n]);
	}
	pstore_import_release(&im);
	return err;
}

int pstore_result_copy(const struct pstore_result *r, struct pstore_result **out)
{
	struct pstore_result *c;
	int err = pstore_result_new(r->type, &c);

	if (err)
		return err;
	err = pstore_result_add(c, &r->dict, r->self.v);
	c->period = r->period;
	c->profiles = r->profiles;
	c->min_time = r->min_time;
	c->max_time = r->max_time;
	if (err) {
		pstore_result_free(c);
		return err;
	}
	*out = c;
	return 0;
}

double pstore_result_quantum(const struct pstore_result *r)
{
	if (r->period > 0 && strcmp(r->period_unit, r->sample_unit) == 0)
		return (double)r->period;
	return 1;
}

int64_t pstore_result_total(const struct pstore_result *r)
{
	int64_t t = 0;

	for (size_t i = 0; i < r->self.n; i++)
		t += r->self.v[i];
	return t;
}

void pstore_result_info(const struct pstore_result *r, struct pstore_result_info *out)
{
	uint64_t stacks = 0;

	for (size_t i = 0; i < r->self.n; i++)
		stacks += r->self.v[i] != 0;
	*out = (struct pstore_result_info){
		.type = r->type, .total = pstore_result_total(r), .period = r->period,
		.profiles = r->profiles, .stacks = stacks,
		.min_time_ns = r->profiles ? r->min_time : 0,
		.max_time_ns = r->profiles ? r->max_time : 0,
	};
}

/* ---- from a pprof file --------------------------------------------------- */

/* The type IDs of p's columns ("name:st:su:pt:pu"), as append names them. */
static int pprof_type_ids(const struct pprof_profile *p, struct pstore_strs *ids)
{
	const pprof_message_t *m = pprof_message(p);
	const char *pt = m->period_type ? pprof_string(p, m->period_type->type) : "";
	const char *pu = m->period_type ? pprof_string(p, m->period_type->unit) : "";

	for (size_t i = 0; i < m->n_sample_type; i++) {
		char *id;

		if (asprintf(&id, "%s:%s:%s:%s:%s", pstore_profile_name(p),
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

	EMBER_FAIL_IF(!n, d, -PSTORE_ERR_TYPE, "profile has no sample types");
	if (!text) {
		const char *def = pprof_string(p, m->default_sample_type);

		*col = n - 1;
		for (size_t i = 0; def && *def && i < n; i++)
			if (strcmp(pprof_string(p, m->sample_type[i]->type), def) == 0)
				*col = i;
		return 0;
	}
	EMBER_FORWARD_IF_ERROR(pstore_type_resolve(text, ids, n, &want, d));
	for (*col = 0; *col < n && strcmp(ids[*col], want); (*col)++)
		;
	free(want);
	EMBER_FAIL_IF(*col == n, d, -PSTORE_ERR_TYPE, "profile has no samples of type '%.128s'",
		      text);
	return 0;
}

static int add_ingest(struct pstore_result *r, const struct pstore_ingest *in, size_t col)
{
	const struct pstore_rows *rows = &in->groups.v[0].rows;

	EMBER_FORWARD_IF_ERROR(fit(r));
	for (size_t i = 0; i < rows->node.n; i++)
		r->self.v[rows->node.v[i]] = pstore_add(r->self.v[rows->node.v[i]],
						    rows->val.v[i * rows->ncols + col]);
	return 0;
}

int pstore_result_from_pprof(const struct pprof_profile *p, const char *type,
			     struct pstore_result **out, char *why, size_t why_size)
{
	struct ember_diag d = ember_diag_make(why, why_size);
	const pprof_message_t *m = pprof_message(p);
	struct pstore_strs ids = { 0 };
	struct pstore_ingest in = { 0 };
	struct pstore_result *r = NULL;
	size_t col = 0;
	int err = pprof_type_ids(p, &ids);

	if (!err)
		err = pick_column(p, type, ids.v, ids.n, &col, &d);
	if (!err)
		err = pstore_result_new(ids.v[col], &r);
	if (!err)
		err = pstore_ingest_profile(&r->dict, p, NULL, false, &in, &d);
	if (!err)
		err = add_ingest(r, &in, col);
	if (!err) {
		r->period = m->period;
		r->profiles = 1;
		r->min_time = r->max_time = m->time_nanos;
	}
	pstore_ingest_release(&in);
	for (size_t i = 0; i < ids.n; i++)
		free(ids.v[i]);
	EMBER_VEC_FREE(&ids);
	if (err) {
		pstore_result_free(r);
		return err == -ENOMEM ? EMBER_FAIL(&d, err, "out of memory") : err;
	}
	*out = r;
	return 0;
}
