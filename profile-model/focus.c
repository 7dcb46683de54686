/*
 * focus.c - a result's samples under one call path: what Pyroscope's
 * stack_trace_selector (types.v1.StackTraceSelector's call_site, a list
 * of function names root first) keeps of a merge, and GET /api/v1/query's
 * focus=.  A stack is kept when its frames, read root first as the trees
 * name them (ntree.c: a location's inlined functions outermost first, an
 * unsymbolized one "MODULE+0xOFFSET"), begin with exactly the path's
 * names, a name "[MODULE]" standing for a run of the module's
 * unsymbolized frames as pmodel_result_group_unresolved groups them
 * (unresolved.c); a kept stack keeps all its frames, so the flame graph
 * shows the path and everything below its last frame.
 *
 * The result's stack nodes come parent first, so one pass gives each
 * node how far its stack matched the path (or that it went astray), from
 * its parent's and its own location's frames.
 */
#include "pmodel_internal.h"

#include <stdio.h>

#define ASTRAY SIZE_MAX /* a frame differs from the path's */

/* Whether unsymbolized location l, after its caller pl (NULL: none),
 * continues a run of its module's frames that path[m - 1] named as the
 * group (pmodel_result_group_unresolved's "[MODULE]"). */
static bool in_group(const struct pmodel_dict *d, const struct pmodel_loc *pl,
		     const struct pmodel_loc *l, const char *const *path, size_t m)
{
	char buf[PMODEL_UNRESOLVED_NAME_MAX];

	if (!pl || !m || !pmodel_loc_same_group(d, pl, l))
		return false;
	pmodel_loc_unresolved_group(d, l, buf, sizeof(buf));
	return !strcmp(buf, path[m - 1]);
}

/* How far a stack matched path[0, n) after location l's frames, having
 * matched m before them (its caller's location pl, NULL: none). */
static size_t match_location(const struct pmodel_dict *d, const struct pmodel_loc *pl,
			     const struct pmodel_loc *l, const char *const *path, size_t n,
			     size_t m)
{
	char buf[PMODEL_UNRESOLVED_NAME_MAX];

	if (!l->nlines) {
		if (in_group(d, pl, l, path, m))
			return m;
		pmodel_loc_unresolved_name(d, l, buf, sizeof(buf));
		if (!strcmp(buf, path[m]))
			return m + 1;
		pmodel_loc_unresolved_group(d, l, buf, sizeof(buf));
		return strcmp(buf, path[m]) ? ASTRAY : m + 1;
	}
	for (uint32_t k = l->nlines; k-- > 0 && m < n;)
		if (strcmp(pmodel_line_name(d, &d->lines.v[l->line_off + k]), path[m++]))
			return ASTRAY;
	return m;
}

/* Per node of r's dictionary: whether its stack begins with path[0, n)
 * (a new array of as many, to free). */
static bool *focus_nodes(const struct pmodel_result *r, const char *const *path, size_t n)
{
	const struct pmodel_dict *d = &r->dict;
	size_t nodes = pmodel_dict_nodes(d);
	size_t *m = malloc(nodes * sizeof(*m));
	bool *keep = calloc(nodes, sizeof(*keep));

	if (!m || !keep) {
		free(m);
		free(keep);
		return NULL;
	}
	m[0] = 0;
	for (size_t i = 1; i < nodes; i++) {
		uint32_t parent = d->node_parent.v[i];
		size_t p = m[parent];
		const struct pmodel_loc *pl = parent ? &d->locs.v[d->node_loc.v[parent]] : NULL;

		m[i] = p == ASTRAY || p == n
			       ? p
			       : match_location(d, pl, &d->locs.v[d->node_loc.v[i]], path, n, p);
		keep[i] = m[i] == n;
	}
	free(m);
	return keep;
}

/* c: the kept nodes' values of r. */
static int focus_fill(const struct pmodel_result *r, const bool *keep, struct pmodel_result *c)
{
	size_t nodes = pmodel_dict_nodes(&r->dict);
	int64_t *self = calloc(nodes + 1, sizeof(*self));
	int err;

	if (!self)
		return -ENOMEM;
	for (size_t i = 0; i < r->self.n && i < nodes; i++)
		self[i] = keep[i] ? r->self.v[i] : 0;
	err = pmodel_result_add(c, &r->dict, self);
	free(self);
	return err ? err : pmodel_result_add_attrs_of(c, &r->dict, r, NULL, keep);
}

int pmodel_result_focus(const struct pmodel_result *r, const char *const *path, size_t n,
			struct pmodel_result **out)
{
	struct pmodel_result *c = NULL;
	bool *keep = focus_nodes(r, path, n);
	int err = keep ? pmodel_result_new_like(r, &c) : -ENOMEM;

	err = err ? err : focus_fill(r, keep, c);
	free(keep);
	if (err) {
		pmodel_result_free(c);
		return err;
	}
	*out = c;
	return 0;
}
