/*
 * pprof_ingest.c - a decoded pprof profile (wire/pprof.h, profile.proto) turned
 * into what the store keeps: its mappings, functions and locations
 * interned into a dictionary and each sample's location list into a stack
 * node, through the model's walk (profile-model/from_pprof.c), and its
 * values into a row.  Samples are grouped by their string labels (Pyroscope's
 * treatment of pprof labels: each distinct set is its own series), but for
 * span_id and trace_id (Pyroscope's SDKs and OpenTelemetry wrappers; OTLP
 * links become them in wire/): a span per sample is the textbook unbounded
 * label, so those are the sample's link, kept with its row (links.c), and
 * so are the labels named '@' KEY, the sample's attributes (thread name
 * and ID, CPU: what OTLP's sample attributes become in wire/);
 * numeric labels are measurements, not dimensions, and are dropped.
 * Coverage is counted on the way: a sample is resolved when every one of
 * its locations has lines.  Build IDs and each group's build IDs are
 * found through keyed sets, so a profile of many mappings costs linear
 * time (issue 23: a linear search per build ID took 68 s of CPU on one
 * 1.47 MB push).
 */
#include "pstore_head.h"
#include "pstore_series.h"

#include <stdio.h>

/* ---- locations --------------------------------------------------------------- */

/* A group's coverage row of one build ID: g->cov.v[pos]. */
struct cov_key {
	uint32_t group, bid, pos;
};

struct walk {
	struct pmodel_pprof_walk pp; /* the profile's locations into the dictionary */
	int32_t *loc_bid;   /* pprof location index -> index into out->bids when
			     * unresolved, else -1 (set when pp interns it) */
	struct pstore_ingest *out;
	const struct pstore_limits *lim;
	bool split;
	struct ember_hset bid_set;	/* of out->bids, by string */
	struct ember_hset cov_set;	/* of cov_keys, by (group, build ID) */
	EMBER_VEC(struct cov_key) cov_keys;
	uint32_t *bid_seen;		/* per build ID: the last sample (+ 1) it counted in */
	uint32_t sample;		/* the sample being added, + 1 */
};

static bool bid_equal(const void *ctx, size_t i, const void *key)
{
	return strcmp(((const struct pstore_ingest *)ctx)->bids.v[i], key) == 0;
}

static int bid_index(struct walk *w, const char *bid, int32_t *out)
{
	uint64_t h = ember_hash(&w->bid_set.key, bid, strlen(bid));
	size_t i = ember_hset_find(&w->bid_set, h, bid_equal, w->out, bid);

	if (i == SIZE_MAX) {
		i = w->out->bids.n;
		EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&w->out->bids, bid));
		EMBER_FORWARD_IF_ERROR(ember_hset_insert(&w->bid_set, h, i));
	}
	*out = (int32_t)i;
	return 0;
}

/* Location li, interned into the dictionary, and the build ID its frames
 * are counted under when it has no lines. */
static int intern_location(struct walk *w, uint32_t li)
{
	const pprof_location_t *pl = w->pp.m->location[li];
	const pprof_mapping_t *pm = pl->mapping_id ? pprof_mapping_by_id(w->pp.p, pl->mapping_id)
						   : NULL;

	EMBER_FORWARD_IF_ERROR(pmodel_pprof_walk_intern(&w->pp, li));
	w->loc_bid[li] = -1;
	if (!pl->n_line)
		return bid_index(w, pm ? pprof_string(w->pp.p, pm->build_id) : "", &w->loc_bid[li]);
	return 0;
}

/* ---- label groups ------------------------------------------------------------ */

static int cmp_label(const void *a, const void *b)
{
	return strcmp(((const struct pstore_label *)a)->name,
		      ((const struct pstore_label *)b)->name);
}

/* A span_id (16 hex digits) or trace_id (32) label into lk: true when l
 * is one of them (a value of another form is dropped: no link, and no
 * series either). */
static bool link_label(const struct pstore_label *l, struct pstore_link *lk, bool *linked)
{
	if (!strcmp(l->name, "span_id")) {
		if (!ember_hex_decode(l->value, lk->span, sizeof(lk->span)))
			*linked = true;
		else
			memset(lk->span, 0, sizeof(lk->span));
		return true;
	}
	if (!strcmp(l->name, "trace_id")) {
		if (!ember_hex_decode(l->value, lk->trace, sizeof(lk->trace)))
			*linked = true;
		else
			memset(lk->trace, 0, sizeof(lk->trace));
		return true;
	}
	return false;
}

static bool attr_value_valid(const char *v)
{
	for (; *v; v++)
		if ((unsigned char)*v < 0x20)
			return false;
	return true;
}

/* The sample attributes of as[0..n) (names without their '@'), sorted,
 * as the stored text (pstore_series.h) interned into the ingest's links:
 * those of another form dropped, a repeated key's first kept; the whole
 * set dropped past PSTORE_MAX_ATTRS_LEN or the profile's count. */
static int sample_attrs(struct walk *w, struct pstore_label *as, size_t n, uint32_t *id)
{
	char text[PSTORE_MAX_ATTRS_LEN + 1];
	size_t len = 0;

	*id = 0;
	ember_qsort(as, n, sizeof(*as), cmp_label);
	for (size_t i = 0; i < n; i++) {
		size_t kl = strlen(as[i].name), vl = strlen(as[i].value);

		if ((i && !strcmp(as[i - 1].name, as[i].name)) ||
		    !pstore_label_name_valid(as[i].name) || !attr_value_valid(as[i].value))
			continue;
		if (len + kl + vl + 2 > PSTORE_MAX_ATTRS_LEN)
			return 0; /* too long: no attributes */
		len += (size_t)snprintf(text + len, sizeof(text) - len, "%s%s=%s", len ? "\n" : "",
					as[i].name, as[i].value);
	}
	return pstore_linktab_attrs(&w->out->links, text, len, PSTORE_MAX_PROFILE_ATTR_SETS, id);
}

/* The string labels of sample s but its link and attributes, sorted,
 * into ls (pointing into p); its link and attributes into lk, *linked
 * saying whether it has either; as: scratch. */
static int sample_labels(struct walk *w, const Perftools__Profiles__Sample *s,
			 struct pstore_labels *ls, struct pstore_labels *as, struct pstore_link *lk,
			 bool *linked, struct ember_diag *d)
{
	ls->n = 0;
	as->n = 0;
	for (size_t i = 0; i < s->n_label; i++) {
		const Perftools__Profiles__Label *lb = s->label[i];
		struct pstore_label l = { pprof_string(w->pp.p, lb->key),
					  pprof_string(w->pp.p, lb->str) };

		if (!lb->str || !*l.value || link_label(&l, lk, linked))
			continue; /* numeric, or empty: no dimension; or the link */
		if (l.name[0] == PSTORE_ATTR_PREFIX) {
			l.name++;
			EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(as, l));
			continue;
		}
		EMBER_FAIL_IF(!pstore_label_name_valid(l.name), d, -PSTORE_ERR_LABEL,
			      "sample label name '%.128s' is not [a-zA-Z_][a-zA-Z0-9_.]*",
			      l.name);
		EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(ls, l));
	}
	ember_qsort(ls->v, ls->n, sizeof(*ls->v), cmp_label);
	if (as->n)
		EMBER_FORWARD_IF_ERROR(sample_attrs(w, as->v, as->n, &lk->attrs));
	*linked |= lk->attrs != 0;
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
	ember_memcpy(g.labels.v, l, n * sizeof(*l));
	g.labels.n = n;
	if (EMBER_VEC_APPEND(&in->groups, g)) {
		EMBER_VEC_FREE(&g.labels);
		return -ENOMEM;
	}
	*out = in->groups.n - 1;
	return ember_hset_insert(&in->group_set, h, *out);
}

/* ---- samples ------------------------------------------------------------------ */

static bool cov_equal(const void *ctx, size_t i, const void *key)
{
	const struct cov_key *a = &((const struct walk *)ctx)->cov_keys.v[i], *b = key;

	return a->group == b->group && a->bid == b->bid;
}

/* Group gi's coverage row of build ID bid, added when new. */
static int cov_row(struct walk *w, uint32_t gi, uint32_t bid, struct pstore_group *g,
		   size_t *pos)
{
	struct cov_key k = { gi, bid, (uint32_t)g->cov.n };
	uint64_t h = ember_hash_u64(&w->cov_set.key, (uint64_t)gi << 32 | bid);
	size_t i = ember_hset_find(&w->cov_set, h, cov_equal, w, &k);

	if (i != SIZE_MAX) {
		*pos = w->cov_keys.v[i].pos;
		return 0;
	}
	EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&g->cov, ((struct pstore_gcov){ bid, 0 })));
	EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&w->cov_keys, k));
	*pos = k.pos;
	return ember_hset_insert(&w->cov_set, h, w->cov_keys.n - 1);
}

/* The sample's weight under each build ID of its unresolved frames, once
 * per sample. */
static int count_unresolved(struct walk *w, uint32_t gi, const int32_t *bids, size_t n,
			    uint64_t weight)
{
	struct pstore_group *g = &w->out->groups.v[gi];

	for (size_t i = 0; i < n; i++) {
		size_t pos;

		if (w->bid_seen[bids[i]] == w->sample)
			continue;
		w->bid_seen[bids[i]] = w->sample;
		EMBER_FORWARD_IF_ERROR(cov_row(w, gi, (uint32_t)bids[i], g, &pos));
		g->cov.v[pos].samples += weight;
	}
	return 0;
}

/* The row's link id (0: none) into the group's rows: the links column is
 * made at the group's first linked row, 0 for the rows before it. */
static int add_link(struct pstore_ingest *in, struct pstore_rows *r,
		    const struct pstore_link *lk)
{
	uint32_t id = 0;

	if (lk)
		EMBER_FORWARD_IF_ERROR(pstore_linktab_intern(&in->links, lk, &id));
	if (!id && !r->link.n)
		return 0;
	EMBER_FORWARD_IF_ERROR(EMBER_VEC_RESERVE(&r->link, r->node.n));
	while (r->link.n + 1 < r->node.n)
		r->link.v[r->link.n++] = 0;
	r->link.v[r->link.n++] = id;
	return 0;
}

static int add_sample(struct walk *w, const Perftools__Profiles__Sample *s, uint32_t gi,
		      const struct pstore_link *lk)
{
	struct pstore_group *g = &w->out->groups.v[gi];
	int32_t bids[64];
	size_t nb = 0;
	uint32_t node = 0;
	uint64_t weight = w->out->count_col >= 0 ? (uint64_t)llabs(s->value[w->out->count_col]) : 1;

	for (size_t k = s->n_location_id; k-- > 0;) {
		uint32_t li = pmodel_pprof_walk_index(&w->pp, s->location_id[k]);

		if (w->pp.loc[li] == PMODEL_UNSET)
			EMBER_FORWARD_IF_ERROR(intern_location(w, li));
		EMBER_FORWARD_IF_ERROR(pmodel_dict_node(w->pp.dict, node, w->pp.loc[li], &node));
		if (w->loc_bid[li] >= 0 && nb < 64)
			bids[nb++] = w->loc_bid[li];
	}
	EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&g->rows.node, node));
	EMBER_FORWARD_IF_ERROR(add_link(w->out, &g->rows, lk));
	EMBER_FORWARD_IF_ERROR(EMBER_VEC_RESERVE(&g->rows.val, g->rows.val.n + w->out->ncols));
	ember_memcpy(g->rows.val.v + g->rows.val.n, s->value, w->out->ncols * sizeof(int64_t));
	g->rows.val.n += w->out->ncols;
	g->samples += weight;
	if (!nb)
		g->resolved += weight;
	return count_unresolved(w, gi, bids, nb, weight);
}

static int walk_samples(struct walk *w, struct ember_diag *d)
{
	struct pstore_labels ls = { 0 }, as = { 0 };
	struct pstore_link lk = { 0 };
	bool linked;
	size_t gi = 0;
	int err = 0;

	for (size_t i = 0; !err && i < w->pp.m->n_sample; i++) {
		const Perftools__Profiles__Sample *s = w->pp.m->sample[i];

		if (w->lim && s->n_location_id > w->lim->max_stack_depth) {
			err = EMBER_FAIL(
				d, -PSTORE_ERR_LIMIT,
				"sample %zu: stack of %zu frames, deeper than the limit of %zu", i,
				s->n_location_id, w->lim->max_stack_depth);
			break;
		}
		gi = 0;
		linked = false;
		if (s->n_label) {
			memset(&lk, 0, sizeof(lk));
			err = sample_labels(w, s, &ls, &as, &lk, &linked, d);
		}
		if (!err && w->split && s->n_label)
			err = find_group(w, ls.v, ls.n, &gi);
		w->sample = (uint32_t)i + 1;
		if (!err)
			err = add_sample(w, s, (uint32_t)gi, linked ? &lk : NULL);
	}
	EMBER_VEC_FREE(&ls);
	EMBER_VEC_FREE(&as);
	return err;
}

static int first_count_col(const struct pprof_profile *p)
{
	const pprof_message_t *m = pprof_message(p);

	for (size_t i = 0; i < m->n_sample_type; i++)
		if (pmodel_type_is_count(pprof_string(p, m->sample_type[i]->unit)))
			return (int)i;
	return -1;
}

static int setup(struct walk *w, struct pmodel_dict *dict, const struct pprof_profile *p,
		 struct pstore_ingest *out)
{
	const pprof_message_t *m = pprof_message(p);
	struct pstore_group g0 = { 0 };

	memset(out, 0, sizeof(*out));
	w->out = out;
	out->ncols = (uint32_t)m->n_sample_type;
	out->count_col = first_count_col(p);
	g0.rows.ncols = out->ncols;
	if (ember_hset_init(&out->group_set) || ember_hset_init(&w->bid_set) ||
	    ember_hset_init(&w->cov_set))
		return -EIO;
	g0.hash = labels_hash(&out->group_set, NULL, 0);
	w->loc_bid = malloc((m->n_location ? m->n_location : 1) * sizeof(*w->loc_bid));
	/* a build ID is added at most once per location */
	w->bid_seen = calloc(m->n_location ? m->n_location : 1, sizeof(*w->bid_seen));
	if (!w->loc_bid || !w->bid_seen || EMBER_VEC_APPEND(&out->groups, g0) ||
	    ember_hset_insert(&out->group_set, g0.hash, 0))
		return -ENOMEM;
	return pmodel_pprof_walk_init(&w->pp, dict, p);
}

int pstore_ingest_profile(struct pmodel_dict *dict, const struct pprof_profile *p,
		      const struct pstore_limits *lim, bool split_labels,
		      struct pstore_ingest *out, struct ember_diag *d)
{
	struct walk w = { .lim = lim, .split = split_labels };
	int err;

	err = setup(&w, dict, p, out);
	if (!err && lim && w.pp.m->n_sample > lim->max_samples)
		err = EMBER_FAIL(d, -PSTORE_ERR_TOO_LARGE, "%zu samples, more than the limit of %zu",
			      w.pp.m->n_sample, lim->max_samples);
	if (!err)
		err = walk_samples(&w, d);
	for (size_t i = 0; !err && i < out->groups.n; i++)
		err = pstore_rows_normalize(&out->groups.v[i].rows);
	pmodel_pprof_walk_release(&w.pp);
	free(w.loc_bid);
	free(w.bid_seen);
	ember_hset_release(&w.bid_set);
	ember_hset_release(&w.cov_set);
	EMBER_VEC_FREE(&w.cov_keys);
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
	pstore_linktab_release(&in->links);
	ember_hset_release(&in->group_set);
}
