/*
 * name_coverage.c - how much of a merged result its names explain (issue 28,
 * the debuginfo view's coverage): the share of its value whose leaf frame
 * is named (a location with lines, symbolized at ingest or at query
 * time), the share whose every frame is, and per module (a build ID, or a
 * mapping's file when it has none) the stacks through it and those it
 * leaves unnamed, with the module's path as the profiles name it.  A
 * module without a file or build ID to fetch (perf-map and jitdump code,
 * anonymous mappings, frames of no mapping) is marked jit: no upload can
 * name it.
 *
 * Stacks are counted once per module however often the module recurs in
 * them: a node adds its subtree's total when no ancestor is of its module
 * (the walk up stops at the first that is).
 */
#include "pmodel_internal.h"

struct cov {
	const struct pmodel_result *r;
	struct pmodel_coverage *c;
	uint32_t *mod_of_map;	/* per mapping: its module + 1, 0 not yet */
	uint32_t no_map;	/* the module of frames without a mapping + 1 */
	uint32_t *mod;		/* per node: its location's module */
	int64_t *total;		/* per node: its subtree's value */
};

/* Whether a mapping names code no file holds (JIT, anonymous memory). */
static bool jit_file(const char *file)
{
	const char *base = strrchr(file, '/');
	size_t n = strlen(file);

	base = base ? base + 1 : file;
	return !*file || *file == '[' || strstr(file, "//anon") || !strncmp(file, "/memfd:", 7) ||
	       (!strncmp(base, "perf-", 5) && n > 4 && !strcmp(file + n - 4, ".map")) ||
	       !strncmp(base, "jitted-", 7);
}

static int add_module(struct cov *cv, const char *bid, const char *file, uint32_t *out)
{
	struct pmodel_coverage *c = cv->c;
	struct pmodel_coverage_module *m = c->m.v;

	for (size_t i = 0; i < c->m.n; i++) /* a build ID once, else a file once */
		if (*bid ? !strcmp(m[i].build_id, bid)
			 : !*m[i].build_id && !strcmp(m[i].file, file)) {
			if (!*m[i].file)
				m[i].file = file;
			*out = (uint32_t)i;
			return 0;
		}
	*out = (uint32_t)c->m.n;
	return EMBER_VEC_APPEND(&c->m, ((struct pmodel_coverage_module){
						.build_id = bid, .file = file,
						.jit = !*bid && jit_file(file) }));
}

/* The module of location l. */
static int loc_module(struct cov *cv, const struct pmodel_loc *l, uint32_t *out)
{
	const struct pmodel_dict *d = &cv->r->dict;
	uint32_t *slot = l->mapping ? &cv->mod_of_map[l->mapping - 1] : &cv->no_map;

	if (!*slot) {
		const struct pmodel_map *m = l->mapping ? &d->maps.v[l->mapping - 1] : NULL;

		EMBER_FORWARD_IF_ERROR(add_module(cv, m ? pmodel_str(&d->str, m->build_id) : "",
						  m ? pmodel_str(&d->str, m->filename) : "", slot));
		(*slot)++;
	}
	*out = *slot - 1;
	return 0;
}

/* Per node its module and its subtree's total. */
static int cov_nodes(struct cov *cv)
{
	const struct pmodel_dict *d = &cv->r->dict;
	size_t n = pmodel_dict_nodes(d);

	cv->mod = calloc(n, sizeof(*cv->mod));
	cv->total = calloc(n, sizeof(*cv->total));
	cv->mod_of_map = calloc(d->maps.n + 1, sizeof(*cv->mod_of_map));
	if (!cv->mod || !cv->total || !cv->mod_of_map)
		return -ENOMEM;
	for (size_t i = 1; i < n; i++) {
		EMBER_FORWARD_IF_ERROR(loc_module(cv, &d->locs.v[d->node_loc.v[i]], &cv->mod[i]));
		cv->total[i] = i < cv->r->self.n ? cv->r->self.v[i] : 0;
	}
	for (size_t i = n; i-- > 1;)
		cv->total[d->node_parent.v[i]] =
			pmodel_add(cv->total[d->node_parent.v[i]], cv->total[i]);
	return 0;
}

static bool named(const struct pmodel_dict *d, uint32_t node)
{
	return d->locs.v[d->node_loc.v[node]].nlines > 0;
}

/* Node i's subtree counted for its module: through it when no ancestor
 * is of the module, unnamed when i is not named and no ancestor is an
 * unnamed frame of it. */
static void cov_through(struct cov *cv, uint32_t i)
{
	const struct pmodel_dict *d = &cv->r->dict;
	struct pmodel_coverage_module *m = &cv->c->m.v[cv->mod[i]];
	bool in = false, seen = named(d, i); /* seen: an unnamed frame not to count */

	for (uint32_t a = d->node_parent.v[i]; a && !(in && seen); a = d->node_parent.v[a])
		if (cv->mod[a] == cv->mod[i]) {
			in = true;
			seen = seen || !named(d, a);
		}
	if (!in)
		m->value = pmodel_add(m->value, cv->total[i]);
	if (!seen)
		m->unnamed = pmodel_add(m->unnamed, cv->total[i]);
}

/* Every node's leaf value and subtree counted. */
static void cov_count(struct cov *cv)
{
	const struct pmodel_dict *d = &cv->r->dict;
	size_t n = pmodel_dict_nodes(d);
	bool *all = calloc(n, sizeof(*all));
	struct pmodel_coverage *c = cv->c;

	for (uint32_t i = 1; i < n; i++) {
		int64_t v = i < cv->r->self.n ? cv->r->self.v[i] : 0;
		struct pmodel_coverage_module *m = &c->m.v[cv->mod[i]];
		uint32_t p = d->node_parent.v[i];

		if (all)
			all[i] = named(d, i) && (!p || all[p]);
		c->total = pmodel_add(c->total, v);
		m->leaf = pmodel_add(m->leaf, v);
		if (named(d, i)) {
			m->leaf_named = pmodel_add(m->leaf_named, v);
			c->leaf_named = pmodel_add(c->leaf_named, v);
		}
		if (all && all[i])
			c->all_named = pmodel_add(c->all_named, v);
		cov_through(cv, i);
	}
	if (!all)
		c->all_named = -1;
	free(all);
}

static int cmp_module(const void *a, const void *b)
{
	const struct pmodel_coverage_module *x = a, *y = b;

	if (x->unnamed != y->unnamed)
		return x->unnamed > y->unnamed ? -1 : 1;
	if (x->value != y->value)
		return x->value > y->value ? -1 : 1;
	return strcmp(*x->build_id ? x->build_id : x->file, *y->build_id ? y->build_id : y->file);
}

void pmodel_coverage_free(struct pmodel_coverage *c)
{
	if (c)
		EMBER_VEC_FREE(&c->m);
	free(c);
}

int pmodel_result_coverage(const struct pmodel_result *r, struct pmodel_coverage **out)
{
	struct cov cv = { .r = r, .c = calloc(1, sizeof(*cv.c)) };
	int err = cv.c ? cov_nodes(&cv) : -ENOMEM;

	if (!err) {
		cov_count(&cv);
		err = cv.c->all_named < 0 ? -ENOMEM : 0;
	}
	free(cv.mod);
	free(cv.total);
	free(cv.mod_of_map);
	if (err) {
		pmodel_coverage_free(cv.c);
		return err;
	}
	ember_qsort(cv.c->m.v, cv.c->m.n, sizeof(*cv.c->m.v), cmp_module);
	*out = cv.c;
	return 0;
}
