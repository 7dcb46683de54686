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

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

/* One side's numbers of a node of the output: absolute x, total, self. */
struct fb_val {
	int64_t x, total, self;
};

/* One node of the output: depth, each side's numbers, name index. */
struct fb_node {
	size_t seq;
	int depth;
	uint32_t name;
	struct fb_val v[2];
};

struct fb {
	const struct pmodel_ntree *t;
	const struct pmodel_fg_side *side;
	size_t sides;
	int64_t min_total;		/* a node below it on every side is folded */
	int64_t *next_x[2];		/* per side and node: where its next child starts */
	int64_t *other[2];		/* per side and node: its folded children's total */
	uint32_t *out_name;		/* per tree name id + 1: output index + 1 */
	uint32_t n_names, other_name;	/* other_name: index + 1, 0 none yet */
	EMBER_VEC(struct fb_node) nodes;
	EMBER_VEC(uint32_t) names;	/* output index -> tree name id (0: "total") */
	int64_t max_self;
};

/* Node n's largest total over the sides. */
static int64_t max_total(const struct fb *f, uint32_t n)
{
	int64_t m = f->side[0].total[n];

	for (size_t s = 1; s < f->sides; s++)
		m = f->side[s].total[n] > m ? f->side[s].total[n] : m;
	return m;
}

/* The smallest total kept: 0 when the tree fits in max_nodes. */
static int min_total(struct fb *f, size_t max_nodes)
{
	size_t n = pmodel_ntree_count(f->t);
	int64_t *v;

	f->min_total = 0;
	if (!max_nodes || n - 1 <= max_nodes)
		return 0;
	v = malloc((n - 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 1; i < n; i++)
		v[i - 1] = max_total(f, (uint32_t)i);
	f->min_total = pmodel_ntree_cutoff(v, n - 1, max_nodes);
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

/* nd (its name a tree name id) as the next node of the output. */
static int add(struct fb *f, struct fb_node *nd)
{
	nd->seq = f->nodes.n;
	EMBER_FORWARD_IF_ERROR(name_index(f, nd->name, &nd->name));
	for (size_t s = 0; s < f->sides; s++)
		f->max_self = nd->v[s].self > f->max_self ? nd->v[s].self : f->max_self;
	return EMBER_VEC_APPEND(&f->nodes, *nd);
}

/* The "other" child of n, after its kept children, when it folded any. */
static int add_other(struct fb *f, uint32_t n, int depth)
{
	struct fb_node nd = { .depth = depth, .name = UINT32_MAX };
	bool any = false;

	for (size_t s = 0; s < f->sides; s++) {
		nd.v[s] = (struct fb_val){ f->next_x[s][n], f->other[s][n], f->other[s][n] };
		any = any || f->other[s][n];
	}
	return any ? add(f, &nd) : 0;
}

static int visit(void *ctx, uint32_t n, int depth, bool enter)
{
	struct fb *f = ctx;
	const struct pmodel_ntree *t = f->t;
	uint32_t p = n ? t->parent.v[n] : 0;
	struct fb_node nd = { .depth = depth, .name = n ? t->name.v[n] : 0 };

	if (!enter)
		return add_other(f, n, depth + 1);
	if (n && max_total(f, n) < f->min_total) {
		for (size_t s = 0; s < f->sides; s++)
			f->other[s][p] += f->side[s].total[n];
		return 1; /* folded: neither it nor its children */
	}
	for (size_t s = 0; s < f->sides; s++) {
		int64_t x = n ? f->next_x[s][p] : 0;

		if (n)
			f->next_x[s][p] += f->side[s].total[n];
		f->next_x[s][n] = x + f->side[s].self[n];
		nd.v[s] = (struct fb_val){ x, f->side[s].total[n], f->side[s].self[n] };
	}
	return add(f, &nd);
}

static int cmp_level(const void *a, const void *b)
{
	const struct fb_node *x = a, *y = b;

	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/* The graph and what its strings and levels point into. */
struct fb_graph {
	struct pmodel_flamegraph g;	/* first: what the caller holds */
	char *name_bytes;		/* every name, NUL-terminated */
	int64_t *values;		/* every level's numbers */
};

static const char *out_name(const struct fb *f, size_t i)
{
	uint32_t id = f->names.v[i];

	return i == 0 ? "total" : id == UINT32_MAX ? "other" : pmodel_str(&f->t->names, id);
}

/* f's names copied into g's table. */
static int graph_names(const struct fb *f, struct fb_graph *fg)
{
	struct pmodel_flamegraph *g = &fg->g;
	size_t len = 0;
	char *p;

	for (size_t i = 0; i < f->names.n; i++)
		len += strlen(out_name(f, i)) + 1;
	g->names = calloc(f->names.n + 1, sizeof(*g->names));
	fg->name_bytes = p = malloc(len + 1);
	if (!g->names || !p)
		return -ENOMEM;
	for (size_t i = 0; i < f->names.n; i++) {
		size_t l = strlen(out_name(f, i)) + 1;

		g->names[i] = memcpy(p, out_name(f, i), l);
		p += l;
	}
	g->n_names = f->names.n;
	return 0;
}

/* f's nodes (sorted by depth, then in x order) into g's levels, each
 * side's x delta-coded against the end of the previous node of its
 * level on that side. */
static int graph_levels(const struct fb *f, struct fb_graph *fg)
{
	struct pmodel_flamegraph *g = &fg->g;
	size_t n = f->nodes.n, depths = n ? (size_t)f->nodes.v[n - 1].depth + 1 : 0;
	size_t w = 3 * f->sides + 1;
	int64_t end[2] = { 0, 0 };

	fg->values = malloc((w * n + 1) * sizeof(*fg->values));
	g->levels = calloc(depths + 1, sizeof(*g->levels));
	g->level_len = calloc(depths + 1, sizeof(*g->level_len));
	if (!fg->values || !g->levels || !g->level_len)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct fb_node *nd = &f->nodes.v[i];
		int64_t *v = fg->values + w * i;

		if (!i || nd->depth != nd[-1].depth) {
			end[0] = end[1] = 0;
			g->levels[g->n_levels++] = v;
		}
		for (size_t s = 0; s < f->sides; s++) {
			v[3 * s] = nd->v[s].x - end[s];
			v[3 * s + 1] = nd->v[s].total;
			v[3 * s + 2] = nd->v[s].self;
			end[s] = nd->v[s].x + nd->v[s].total;
		}
		v[w - 1] = nd->name;
		g->level_len[g->n_levels - 1] += w;
	}
	return 0;
}

static int build(struct fb *f, size_t max_nodes)
{
	size_t n = pmodel_ntree_count(f->t);

	for (size_t s = 0; s < f->sides; s++) {
		f->next_x[s] = calloc(n, sizeof(*f->next_x[s]));
		f->other[s] = calloc(n, sizeof(*f->other[s]));
		if (!f->next_x[s] || !f->other[s])
			return -ENOMEM;
	}
	f->out_name = calloc(pmodel_strtab_count(&f->t->names) + 1, sizeof(*f->out_name));
	if (!f->out_name)
		return -ENOMEM;
	EMBER_FORWARD_IF_ERROR(min_total(f, max_nodes));
	EMBER_FORWARD_IF_ERROR(pmodel_ntree_walk(f->t, visit, f));
	ember_qsort(f->nodes.v, f->nodes.n, sizeof(*f->nodes.v), cmp_level);
	return 0;
}

/* The walk's output f as the graph fg. */
static int graph_of(struct fb *f, size_t max_nodes, struct fb_graph *fg)
{
	EMBER_FORWARD_IF_ERROR(build(f, max_nodes));
	EMBER_FORWARD_IF_ERROR(graph_names(f, fg));
	EMBER_FORWARD_IF_ERROR(graph_levels(f, fg));
	fg->g.node_width = 3 * f->sides + 1;
	fg->g.left_total = f->side[0].total[0];
	fg->g.right_total = f->sides > 1 ? f->side[1].total[0] : 0;
	fg->g.total = pmodel_add(fg->g.left_total, fg->g.right_total);
	fg->g.max_self = f->max_self;
	return 0;
}

int pmodel_fg_build(const struct pmodel_ntree *t, const struct pmodel_fg_side *side,
		    size_t sides, size_t max_nodes, struct pmodel_flamegraph **out)
{
	struct fb_graph *fg = calloc(1, sizeof(*fg));
	struct fb f = { .t = t, .side = side, .sides = sides };
	int err = fg ? 0 : -ENOMEM;

	assert(sides == 1 || sides == 2);
	*out = NULL;
	err = err ? err : graph_of(&f, max_nodes, fg);
	for (size_t s = 0; s < sides; s++) {
		free(f.next_x[s]);
		free(f.other[s]);
	}
	free(f.out_name);
	EMBER_VEC_FREE(&f.nodes);
	EMBER_VEC_FREE(&f.names);
	if (err)
		pmodel_flamegraph_free(fg ? &fg->g : NULL);
	else
		*out = &fg->g;
	return err;
}

int pmodel_flamegraph_new(const struct pmodel_result *r, size_t max_nodes,
			  struct pmodel_flamegraph **out)
{
	struct pmodel_ntree t = { 0 };
	int err = pmodel_ntree_build(r, &t);
	struct pmodel_fg_side side = { t.self.v, t.total.v };

	*out = NULL;
	err = err ? err : pmodel_fg_build(&t, &side, 1, max_nodes, out);
	pmodel_ntree_release(&t);
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
	free(fg->name_bytes);
	free(fg->values);
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

int pmodel_fg_write(struct pmodel_flamegraph *g, pmodel_write_fn fn, void *ctx)
{
	struct pmodel_out o;

	pmodel_out_init(&o, fn, ctx);
	write_json(g, &o);
	pmodel_flamegraph_free(g);
	return pmodel_out_finish(&o);
}

int pmodel_write_flamebearer(const struct pmodel_result *r, size_t max_nodes,
			     pmodel_write_fn fn, void *ctx)
{
	struct pmodel_flamegraph *g;
	int err = pmodel_flamegraph_new(r, max_nodes, &g);

	return err ? err : pmodel_fg_write(g, fn, ctx);
}
