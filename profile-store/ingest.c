/*
 * ingest.c - a decoded pprof profile (wire/pprof.h, profile.proto) turned
 * into what the store keeps: its mappings, functions and locations
 * interned into a dictionary, each sample's location list (leaf first)
 * into a stack node (root first through the prefix tree), and its values
 * into a row.  Samples are grouped by their string labels (Pyroscope's
 * treatment of pprof labels: each distinct set is its own series);
 * numeric labels are measurements, not dimensions, and are dropped.
 * Coverage is counted on the way: a sample is resolved when every one of
 * its locations has lines.
 */
#include "pstore_internal.h"

#define UNSET UINT32_MAX

/* ---- id -> index of a profile's locations --------------------------------- */

struct idslot {
	uint64_t id;
	uint32_t idx;
};

struct idmap {
	bool dense;
	struct idslot *slots; /* sorted by id when not dense */
	size_t n;
};

static int cmp_slot(const void *a, const void *b)
{
	const struct idslot *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static int idmap_build(struct idmap *m, pprof_location_t *const *locs, size_t n)
{
	m->dense = true;
	m->n = n;
	m->slots = NULL;
	for (size_t i = 0; i < n && m->dense; i++)
		m->dense = locs[i]->id == i + 1;
	if (m->dense)
		return 0;
	m->slots = malloc((n ? n : 1) * sizeof(*m->slots));
	if (!m->slots)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		m->slots[i] = (struct idslot){ locs[i]->id, (uint32_t)i };
	pstore_qsort(m->slots, n, sizeof(*m->slots), cmp_slot);
	return 0;
}

/* The decoder checked every sample's ids exist. */
static uint32_t idmap_find(const struct idmap *m, uint64_t id)
{
	struct idslot key = { id, 0 }, *s;

	if (m->dense)
		return (uint32_t)(id - 1);
	s = bsearch(&key, m->slots, m->n, sizeof(*m->slots), cmp_slot);
	return s ? s->idx : 0;
}

/* ---- locations --------------------------------------------------------------- */

struct walk {
	struct pstore_dict *dict;
	const struct pprof_profile *p;
	const pprof_message_t *m;
	struct idmap ids;
	uint32_t *loc;	    /* pprof location index -> dict location */
	uint32_t *str;	    /* pprof string index -> dict string, UNSET when not yet */
	int32_t *loc_bid;   /* -> index into out->bids when unresolved, else -1 */
	struct pstore_ingest *out;
	const struct pstore_limits *lim;
	bool split;
};

/* Each of the profile's strings is hashed once, however many functions
 * and mappings share it. */
static int intern_str(struct walk *w, int64_t idx, uint32_t *out)
{
	if (w->str[idx] == UNSET)
		EMBER_FORWARD_IF_ERROR(pstore_strtab_intern0(&w->dict->str, pprof_string(w->p, idx), &w->str[idx]));
	*out = w->str[idx];
	return 0;
}

static int intern_mapping(struct walk *w, const pprof_mapping_t *pm, uint32_t *out)
{
	struct pstore_map m = { .start = pm->memory_start, .limit = pm->memory_limit,
			    .offset = pm->file_offset };

	EMBER_FORWARD_IF_ERROR(intern_str(w, pm->filename, &m.filename));
	EMBER_FORWARD_IF_ERROR(intern_str(w, pm->build_id, &m.build_id));
	return pstore_dict_map(w->dict, &m, out);
}

static int intern_line(struct walk *w, const Perftools__Profiles__Line *pl,
		       struct pstore_line *out)
{
	const pprof_function_t *pf = pprof_function_by_id(w->p, pl->function_id);
	struct pstore_func f = { .start_line = pf->start_line };

	EMBER_FORWARD_IF_ERROR(intern_str(w, pf->name, &f.name));
	EMBER_FORWARD_IF_ERROR(intern_str(w, pf->system_name, &f.system_name));
	EMBER_FORWARD_IF_ERROR(intern_str(w, pf->filename, &f.filename));
	out->line = pl->line;
	return pstore_dict_func(w->dict, &f, &out->func);
}

static int bid_index(struct walk *w, const char *bid, int32_t *out)
{
	for (size_t i = 0; i < w->out->bids.n; i++)
		if (strcmp(w->out->bids.v[i], bid) == 0) {
			*out = (int32_t)i;
			return 0;
		}
	EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&w->out->bids, bid));
	*out = (int32_t)(w->out->bids.n - 1);
	return 0;
}

static int intern_location(struct walk *w, uint32_t li)
{
	const pprof_location_t *pl = w->m->location[li];
	const pprof_mapping_t *pm = pl->mapping_id ? pprof_mapping_by_id(w->p, pl->mapping_id)
						   : NULL;
	struct pstore_line small[16], *lines = small;
	uint32_t mapping = 0;
	int err = 0;

	if (pl->n_line > 16 && !(lines = calloc(pl->n_line, sizeof(*lines))))
		return -ENOMEM;
	if (pm && !(err = intern_mapping(w, pm, &mapping)))
		mapping++;
	for (size_t k = 0; !err && k < pl->n_line; k++)
		err = intern_line(w, pl->line[k], &lines[k]);
	if (!err)
		err = pstore_dict_loc(w->dict, mapping, pl->address, lines, (uint32_t)pl->n_line,
				  &w->loc[li]);
	if (lines != small)
		free(lines);
	w->loc_bid[li] = -1;
	if (!err && !pl->n_line)
		err = bid_index(w, pm ? pprof_string(w->p, pm->build_id) : "", &w->loc_bid[li]);
	return err;
}

/* ---- label groups ------------------------------------------------------------ */

static int cmp_label(const void *a, const void *b)
{
	return strcmp(((const struct pstore_label *)a)->name,
		      ((const struct pstore_label *)b)->name);
}

/* The string labels of sample s, sorted, into ls (pointing into p). */
static int sample_labels(struct walk *w, const Perftools__Profiles__Sample *s,
			 struct pstore_labels *ls, struct ember_diag *d)
{
	ls->n = 0;
	for (size_t i = 0; i < s->n_label; i++) {
		const Perftools__Profiles__Label *lb = s->label[i];
		struct pstore_label l = { pprof_string(w->p, lb->key),
					  pprof_string(w->p, lb->str) };

		if (!lb->str || !*l.value)
			continue; /* numeric, or empty: no dimension */
		EMBER_FAIL_IF(!pstore_label_name_valid(l.name), d, -PSTORE_ERR_LABEL,
			      "sample label name '%.128s' is not [a-zA-Z_][a-zA-Z0-9_.]*",
			      l.name);
		EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(ls, l));
	}
	pstore_qsort(ls->v, ls->n, sizeof(*ls->v), cmp_label);
	return 0;
}

static uint64_t labels_hash(const struct ember_hset *set, const struct pstore_label *l, size_t n)
{
	uint64_t h = ember_hash_u64(&set->key, n);

	for (size_t i = 0; i < n; i++) { /* chained, keyed at every step */
		h = ember_hash_u64(&set->key, h ^ ember_hash(&set->key, l[i].name, strlen(l[i].name)));
		h = ember_hash_u64(&set->key, h ^ ember_hash(&set->key, l[i].value, strlen(l[i].value)));
	}
	return h;
}

struct group_key {
	const struct pstore_label *l;
	size_t n;
};

static bool group_equal(const void *ctx, size_t i, const void *key)
{
	const struct pstore_group *g = &((const struct pstore_ingest *)ctx)->groups.v[i];
	const struct group_key *k = key;

	if (g->labels.n != k->n)
		return false;
	for (size_t j = 0; j < k->n; j++)
		if (strcmp(g->labels.v[j].name, k->l[j].name) ||
		    strcmp(g->labels.v[j].value, k->l[j].value))
			return false;
	return true;
}

/* The group of label set l[0..n) (sorted), added when new: found through
 * a keyed set, so a profile of many label sets costs linear time. */
static int find_group(struct walk *w, const struct pstore_label *l, size_t n, size_t *out)
{
	struct pstore_ingest *in = w->out;
	struct group_key k = { l, n };
	uint64_t h = labels_hash(&in->group_set, l, n);
	struct pstore_group g = { .rows.ncols = in->ncols, .hash = h };
	size_t i = ember_hset_find(&in->group_set, h, group_equal, in, &k);

	if (i != SIZE_MAX) {
		*out = i;
		return 0;
	}
	if (n && EMBER_VEC_RESERVE(&g.labels, n))
		return -ENOMEM;
	pstore_memcpy(g.labels.v, l, n * sizeof(*l));
	g.labels.n = n;
	if (EMBER_VEC_APPEND(&in->groups, g)) {
		EMBER_VEC_FREE(&g.labels);
		return -ENOMEM;
	}
	*out = in->groups.n - 1;
	return ember_hset_insert(&in->group_set, h, *out);
}

/* ---- samples ------------------------------------------------------------------ */

static int count_unresolved(struct pstore_group *g, const int32_t *bids, size_t n, uint64_t weight)
{
	for (size_t i = 0; i < n; i++) {
		size_t k = 0;

		for (size_t j = 0; j < i; j++)
			if (bids[j] == bids[i])
				goto next; /* once per sample */
		for (; k < g->cov.n && g->cov.v[k].bid != (uint32_t)bids[i]; k++)
			;
		if (k == g->cov.n)
			EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&g->cov,
					       ((struct pstore_gcov){ (uint32_t)bids[i], 0 })));
		g->cov.v[k].samples += weight;
next:;
	}
	return 0;
}

static int add_sample(struct walk *w, const Perftools__Profiles__Sample *s,
		      struct pstore_group *g)
{
	int32_t bids[64];
	size_t nb = 0;
	uint32_t node = 0;
	uint64_t weight = w->out->count_col >= 0 ? (uint64_t)llabs(s->value[w->out->count_col]) : 1;

	for (size_t k = s->n_location_id; k-- > 0;) {
		uint32_t li = idmap_find(&w->ids, s->location_id[k]);

		if (w->loc[li] == UNSET)
			EMBER_FORWARD_IF_ERROR(intern_location(w, li));
		EMBER_FORWARD_IF_ERROR(pstore_dict_node(w->dict, node, w->loc[li], &node));
		if (w->loc_bid[li] >= 0 && nb < 64)
			bids[nb++] = w->loc_bid[li];
	}
	EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&g->rows.node, node));
	EMBER_FORWARD_IF_ERROR(EMBER_VEC_RESERVE(&g->rows.val, g->rows.val.n + w->out->ncols));
	pstore_memcpy(g->rows.val.v + g->rows.val.n, s->value, w->out->ncols * sizeof(int64_t));
	g->rows.val.n += w->out->ncols;
	g->samples += weight;
	if (!nb)
		g->resolved += weight;
	return count_unresolved(g, bids, nb, weight);
}

static int walk_samples(struct walk *w, struct ember_diag *d)
{
	struct pstore_labels ls = { 0 };
	size_t gi = 0;
	int err = 0;

	for (size_t i = 0; !err && i < w->m->n_sample; i++) {
		const Perftools__Profiles__Sample *s = w->m->sample[i];

		if (w->lim && s->n_location_id > w->lim->max_stack_depth) {
			err = EMBER_FAIL(
				d, -PSTORE_ERR_LIMIT,
				"sample %zu: stack of %zu frames, deeper than the limit of %zu", i,
				s->n_location_id, w->lim->max_stack_depth);
			break;
		}
		if (w->split && s->n_label) {
			err = sample_labels(w, s, &ls, d);
			if (!err)
				err = find_group(w, ls.v, ls.n, &gi);
		} else {
			gi = 0;
		}
		if (!err)
			err = add_sample(w, s, &w->out->groups.v[gi]);
	}
	EMBER_VEC_FREE(&ls);
	return err;
}

static int first_count_col(const struct pprof_profile *p)
{
	const pprof_message_t *m = pprof_message(p);

	for (size_t i = 0; i < m->n_sample_type; i++)
		if (pstore_type_is_count(pprof_string(p, m->sample_type[i]->unit)))
			return (int)i;
	return -1;
}

static int setup(struct walk *w, struct pstore_dict *dict, const struct pprof_profile *p,
		 struct pstore_ingest *out)
{
	struct pstore_group g0 = { 0 };

	memset(out, 0, sizeof(*out));
	w->dict = dict;
	w->p = p;
	w->m = pprof_message(p);
	w->out = out;
	out->ncols = (uint32_t)w->m->n_sample_type;
	out->count_col = first_count_col(p);
	g0.rows.ncols = out->ncols;
	if (ember_hset_init(&out->group_set))
		return -EIO;
	g0.hash = labels_hash(&out->group_set, NULL, 0);
	w->str = malloc(w->m->n_string_table * sizeof(*w->str));
	w->loc = malloc((w->m->n_location ? w->m->n_location : 1) * sizeof(*w->loc));
	w->loc_bid = malloc((w->m->n_location ? w->m->n_location : 1) * sizeof(*w->loc_bid));
	if (!w->str || !w->loc || !w->loc_bid || EMBER_VEC_APPEND(&out->groups, g0) ||
	    ember_hset_insert(&out->group_set, g0.hash, 0))
		return -ENOMEM;
	memset(w->str, 0xff, w->m->n_string_table * sizeof(*w->str));
	memset(w->loc, 0xff, (w->m->n_location ? w->m->n_location : 1) * sizeof(*w->loc));
	return idmap_build(&w->ids, w->m->location, w->m->n_location);
}

int pstore_ingest_profile(struct pstore_dict *dict, const struct pprof_profile *p,
		      const struct pstore_limits *lim, bool split_labels,
		      struct pstore_ingest *out, struct ember_diag *d)
{
	struct walk w = { .lim = lim, .split = split_labels };
	int err;

	err = setup(&w, dict, p, out);
	if (!err && lim && w.m->n_sample > lim->max_samples)
		err = EMBER_FAIL(d, -PSTORE_ERR_TOO_LARGE, "%zu samples, more than the limit of %zu",
			      w.m->n_sample, lim->max_samples);
	if (!err)
		err = walk_samples(&w, d);
	for (size_t i = 0; !err && i < out->groups.n; i++)
		err = pstore_rows_normalize(&out->groups.v[i].rows);
	free(w.str);
	free(w.loc);
	free(w.loc_bid);
	free(w.ids.slots);
	if (err) {
		pstore_ingest_release(out);
		return err == -ENOMEM ? EMBER_FAIL(d, err, "out of memory") : err;
	}
	return 0;
}

void pstore_ingest_release(struct pstore_ingest *in)
{
	for (size_t i = 0; i < in->groups.n; i++) {
		pstore_rows_release(&in->groups.v[i].rows);
		EMBER_VEC_FREE(&in->groups.v[i].labels);
		EMBER_VEC_FREE(&in->groups.v[i].cov);
	}
	EMBER_VEC_FREE(&in->groups);
	EMBER_VEC_FREE(&in->bids);
	ember_hset_release(&in->group_set);
}
