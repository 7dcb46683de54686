/*
 * out_flamebearer.c - the flame graph as Grafana Pyroscope encodes it
 * (its "flamebearer", the FlameGraph of querier.v1): a table of names
 * ("total" first) and one array per depth, four numbers per node, in x
 * order: the x offset counted from the end of the previous node of that
 * depth (0 for the first from the left edge), total, self and the index
 * of its name.  With more than max_nodes nodes, the nodes whose total is
 * below the max_nodes-th largest are folded, per parent, into one node
 * "other" after the parent's kept children (as Pyroscope's NewFlameGraph
 * does).  Children in name order (the tree's).  One JSON object, no
 * newline: the document around it is the caller's.  One walk builds the
 * graph (pmodel_flamegraph_new); the JSON writer and querier.v1's
 * SelectMergeStacktraces answer (api/connect_select.c) both read it.
 */
#include "pmodel_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

/* One node of the output: depth, absolute x, values, name index. */
struct fb_node {
	size_t seq;
	int depth;
	int64_t x, total, self;
	uint32_t name;
};

struct fb {
	const struct pmodel_ntree *t;
	int64_t min_total;		/* a node below it is folded */
	int64_t *next_x;		/* per node: where its next child starts */
	int64_t *other;			/* per node: its folded children's total */
	uint32_t *out_name;		/* per tree name id + 1: output index + 1 */
	uint32_t n_names, other_name;	/* other_name: index + 1, 0 none yet */
	EMBER_VEC(struct fb_node) nodes;
	EMBER_VEC(uint32_t) names;	/* output index -> tree name id (0: "total") */
	int64_t max_self;
};

static int cmp_desc(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x < y) - (x > y);
}

/* The smallest total kept: 0 when the tree fits in max_nodes. */
static int min_total(const struct pmodel_ntree *t, size_t max_nodes, int64_t *out)
{
	size_t n = pmodel_ntree_count(t);
	int64_t *v;

	*out = 0;
	if (!max_nodes || n - 1 <= max_nodes)
		return 0;
	v = malloc((n - 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	memcpy(v, t->total.v + 1, (n - 1) * sizeof(*v));
	ember_qsort(v, n - 1, sizeof(*v), cmp_desc);
	*out = v[max_nodes - 1];
	free(v);
	return 0;
}

/* The output index of tree name id name (UINT32_MAX: "other"). */
static int name_index(struct fb *f, uint32_t name, uint32_t *out)
{
	uint32_t *slot = name == UINT32_MAX ? &f->other_name : &f->out_name[name];

	if (!*slot) {
		EMBER_FORWARD_IF_ERROR(EMBER_VEC_APPEND(&f->names, name));
		*slot = ++f->n_names;
	}
	*out = *slot - 1;
	return 0;
}

static int add(struct fb *f, int depth, int64_t x, int64_t total, int64_t self, uint32_t name)
{
	struct fb_node nd = { f->nodes.n, depth, x, total, self, 0 };

	EMBER_FORWARD_IF_ERROR(name_index(f, name, &nd.name));
	if (self > f->max_self)
		f->max_self = self;
	return EMBER_VEC_APPEND(&f->nodes, nd);
}

static int visit(void *ctx, uint32_t n, int depth, bool enter)
{
	struct fb *f = ctx;
	const struct pmodel_ntree *t = f->t;
	uint32_t p = n ? t->parent.v[n] : 0;
	int64_t x;

	if (!enter)
		return f->other[n] ? add(f, depth + 1, f->next_x[n], f->other[n], f->other[n],
					 UINT32_MAX)
				   : 0;
	if (n && t->total.v[n] < f->min_total) {
		f->other[p] += t->total.v[n];
		return 1; /* folded: neither it nor its children */
	}
	x = n ? f->next_x[p] : 0;
	if (n)
		f->next_x[p] += t->total.v[n];
	f->next_x[n] = x + t->self.v[n];
	return add(f, depth, x, t->total.v[n], t->self.v[n], n ? t->name.v[n] : 0);
}

static int cmp_level(const void *a, const void *b)
{
	const struct fb_node *x = a, *y = b;

	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/* The graph and what its strings point into. */
struct fb_graph {
	struct pmodel_flamegraph g;	/* first: what the caller holds */
	struct pmodel_ntree t;
	int64_t *values;		/* every level's numbers */
};

/* f's names into g's table. */
static int graph_names(const struct fb *f, struct pmodel_flamegraph *g)
{
	g->names = calloc(f->names.n + 1, sizeof(*g->names));
	if (!g->names)
		return -ENOMEM;
	for (size_t i = 0; i < f->names.n; i++) {
		uint32_t id = f->names.v[i];

		g->names[i] = i == 0 ? "total"
			      : id == UINT32_MAX ? "other"
						 : pmodel_str(&f->t->names, id);
	}
	g->n_names = f->names.n;
	return 0;
}

/* f's nodes (sorted by depth, then in x order) into g's levels, each
 * node's x delta-coded against the end of the previous one of its level. */
static int graph_levels(const struct fb *f, struct fb_graph *fg)
{
	struct pmodel_flamegraph *g = &fg->g;
	size_t n = f->nodes.n, depths = n ? (size_t)f->nodes.v[n - 1].depth + 1 : 0;
	int64_t end = 0;

	fg->values = malloc((4 * n + 1) * sizeof(*fg->values));
	g->levels = calloc(depths + 1, sizeof(*g->levels));
	g->level_len = calloc(depths + 1, sizeof(*g->level_len));
	if (!fg->values || !g->levels || !g->level_len)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct fb_node *nd = &f->nodes.v[i];
		int64_t *v = fg->values + 4 * i;

		if (!i || nd->depth != nd[-1].depth) {
			end = 0;
			g->levels[g->n_levels++] = v;
		}
		v[0] = nd->x - end;
		v[1] = nd->total;
		v[2] = nd->self;
		v[3] = nd->name;
		g->level_len[g->n_levels - 1] += 4;
		end = nd->x + nd->total;
	}
	return 0;
}

static int build(struct fb *f, size_t max_nodes)
{
	size_t n = pmodel_ntree_count(f->t);

	f->next_x = calloc(n, sizeof(*f->next_x));
	f->other = calloc(n, sizeof(*f->other));
	f->out_name = calloc(pmodel_strtab_count(&f->t->names) + 1, sizeof(*f->out_name));
	if (!f->next_x || !f->other || !f->out_name)
		return -ENOMEM;
	EMBER_FORWARD_IF_ERROR(min_total(f->t, max_nodes, &f->min_total));
	EMBER_FORWARD_IF_ERROR(pmodel_ntree_walk(f->t, visit, f));
	ember_qsort(f->nodes.v, f->nodes.n, sizeof(*f->nodes.v), cmp_level);
	return 0;
}

/* The walk's output f as the graph fg. */
static int graph_of(struct fb *f, size_t max_nodes, struct fb_graph *fg)
{
	EMBER_FORWARD_IF_ERROR(build(f, max_nodes));
	EMBER_FORWARD_IF_ERROR(graph_names(f, &fg->g));
	EMBER_FORWARD_IF_ERROR(graph_levels(f, fg));
	fg->g.total = f->t->total.v[0];
	fg->g.max_self = f->max_self;
	return 0;
}

int pmodel_flamegraph_new(const struct pmodel_result *r, size_t max_nodes,
			  struct pmodel_flamegraph **out)
{
	struct fb_graph *fg = calloc(1, sizeof(*fg));
	struct fb f = { 0 };
	int err = fg ? pmodel_ntree_build(r, &fg->t) : -ENOMEM;

	*out = NULL;
	f.t = fg ? &fg->t : NULL;
	err = err ? err : graph_of(&f, max_nodes, fg);
	free(f.next_x);
	free(f.other);
	free(f.out_name);
	EMBER_VEC_FREE(&f.nodes);
	EMBER_VEC_FREE(&f.names);
	if (err)
		pmodel_flamegraph_free(fg ? &fg->g : NULL);
	else
		*out = &fg->g;
	return err;
}

void pmodel_flamegraph_free(struct pmodel_flamegraph *g)
{
	struct fb_graph *fg = (struct fb_graph *)g;

	if (!fg)
		return;
	free(g->names);
	free(g->levels);
	free(g->level_len);
	free(fg->values);
	pmodel_ntree_release(&fg->t);
	free(fg);
}

static void write_json(const struct pmodel_flamegraph *g, struct pmodel_out *o)
{
	pmodel_out_str(o, "{\"names\":[");
	for (size_t i = 0; i < g->n_names; i++) {
		pmodel_out_str(o, i ? "," : "");
		pmodel_out_json(o, g->names[i]);
	}
	pmodel_out_str(o, "],\"levels\":[");
	for (size_t d = 0; d < g->n_levels; d++) {
		pmodel_out_str(o, d ? ",[" : "[");
		for (size_t i = 0; i < g->level_len[d]; i++)
			pmodel_out_printf(o, "%s%" PRId64, i ? "," : "", g->levels[d][i]);
		pmodel_out_str(o, "]");
	}
	pmodel_out_printf(o, "],\"numTicks\":%" PRId64 ",\"maxSelf\":%" PRId64 "}", g->total,
			  g->max_self);
}

int pmodel_write_flamebearer(const struct pmodel_result *r, size_t max_nodes,
			     pmodel_write_fn fn, void *ctx)
{
	struct pmodel_flamegraph *g;
	struct pmodel_out o;
	int err = pmodel_flamegraph_new(r, max_nodes, &g);

	if (err)
		return err;
	pmodel_out_init(&o, fn, ctx);
	write_json(g, &o);
	pmodel_flamegraph_free(g);
	return pmodel_out_finish(&o);
}
