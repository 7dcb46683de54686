/*
 * unresolved.c - a result's unsymbolized frames grouped per module (issue
 * 28): every run of consecutive locations without lines in one module
 * (caller to callee, as a stack reads root first) becomes one frame named
 * "[MODULE]", the way stackcollapse-perf.pl names a frame perf could not
 * symbolize, so the flame graph and the top table show
 * "[libpython3.11.so.1.0]" once instead of hundreds of
 * "libpython3.11.so.1.0+0x..." frames.  MODULE is what
 * pmodel_loc_unresolved_name names (the base name of the mapping's file,
 * else its build ID; a name in brackets already, "[vdso]", as it is); a
 * location without a mapping is "[unknown]".
 *
 * The outputs drawn from trees (flame graphs, folded, top, the diff's)
 * take the grouped result; the pprof output keeps the exact locations
 * (`go tool pprof` reads them).  A focus's call path may name a group
 * (focus.c matches a run of the module's frames to it).
 */
#include "pmodel_internal.h"

#include <stdio.h>

const char *pmodel_loc_module(const struct pmodel_dict *d, const struct pmodel_loc *l)
{
	const struct pmodel_map *m;
	const char *file, *slash, *bid;

	if (!l->mapping)
		return NULL;
	m = &d->maps.v[l->mapping - 1];
	file = pmodel_str(&d->str, m->filename);
	slash = strrchr(file, '/');
	bid = pmodel_str(&d->str, m->build_id);
	return *file ? (slash ? slash + 1 : file) : *bid ? bid : "?";
}

size_t pmodel_loc_unresolved_group(const struct pmodel_dict *d, const struct pmodel_loc *l,
				   char *buf, size_t size)
{
	const char *module = pmodel_loc_module(d, l);
	size_t len = module ? strlen(module) : 0;
	bool bracketed = len > 1 && module[0] == '[' && module[len - 1] == ']'; /* "[vdso]" */
	int n = snprintf(buf, size, bracketed ? "%s" : "[%s]", module ? module : "unknown");

	return n < 0 ? 0 : (size_t)n < size ? (size_t)n : size - 1;
}

bool pmodel_loc_same_group(const struct pmodel_dict *d, const struct pmodel_loc *a,
			   const struct pmodel_loc *b)
{
	const char *ma, *mb;

	if (a->nlines || b->nlines)
		return false;
	ma = pmodel_loc_module(d, a);
	mb = pmodel_loc_module(d, b);
	return ma && mb ? !strcmp(ma, mb) : !ma && !mb;
}

struct group {
	const struct pmodel_result *r;
	uint32_t *out;		 /* per node of r: its stack in d */
	struct pmodel_dict d;	 /* the grouped stacks */
	struct pmodel_import im; /* r's dictionary into d */
};

/* The location of d standing for unresolved location l of r: one line of
 * a function "[MODULE]", l's frame type kept. */
static int group_loc(struct group *g, const struct pmodel_loc *l, uint32_t *out)
{
	char name[PMODEL_UNRESOLVED_NAME_MAX];
	size_t n = pmodel_loc_unresolved_group(&g->r->dict, l, name, sizeof(name));
	struct pmodel_func f = { 0 };
	struct pmodel_line ln = { 0, 0 };
	uint32_t type = 0;

	EMBER_FORWARD_IF_ERROR(pmodel_strtab_intern(&g->d.str, name, n, &f.name));
	f.system_name = f.name;
	EMBER_FORWARD_IF_ERROR(pmodel_dict_func(&g->d, &f, &ln.func));
	if (l->type)
		EMBER_FORWARD_IF_ERROR(pmodel_import_str(&g->im, l->type, &type));
	return pmodel_dict_loc(&g->d, 0, 0, type, &ln, 1, out);
}

/* The stack of node i of r in d: its parent's when both are unresolved
 * frames of one module, else its parent's and its location (grouped). */
static int group_node(struct group *g, uint32_t i)
{
	const struct pmodel_dict *rd = &g->r->dict;
	uint32_t p = rd->node_parent.v[i], loc;
	const struct pmodel_loc *l = &rd->locs.v[rd->node_loc.v[i]];

	if (p && pmodel_loc_same_group(rd, &rd->locs.v[rd->node_loc.v[p]], l)) {
		g->out[i] = g->out[p];
		return 0;
	}
	if (l->nlines)
		EMBER_FORWARD_IF_ERROR(pmodel_import_loc(&g->im, rd->node_loc.v[i], &loc));
	else
		EMBER_FORWARD_IF_ERROR(group_loc(g, l, &loc));
	return pmodel_dict_node(&g->d, g->out[p], loc, &g->out[i]);
}

/* Every node of r grouped into d. */
static int group_all(struct group *g)
{
	for (uint32_t i = 1; i < pmodel_dict_nodes(&g->r->dict); i++)
		EMBER_FORWARD_IF_ERROR(group_node(g, i));
	return 0;
}

bool pmodel_result_has_unresolved(const struct pmodel_result *r)
{
	for (size_t i = 0; i < r->dict.locs.n; i++)
		if (!r->dict.locs.v[i].nlines)
			return true;
	return false;
}

int pmodel_result_group_unresolved(const struct pmodel_result *r, struct pmodel_result **out)
{
	struct group g = { .r = r, .out = calloc(pmodel_dict_nodes(&r->dict), sizeof(uint32_t)) };
	struct pmodel_result *c = NULL;
	int err = g.out ? pmodel_dict_init(&g.d) : -ENOMEM;

	err = err ? err : pmodel_import_init(&g.im, &r->dict, &g.d);
	err = err ? err : group_all(&g);
	err = err ? err : pmodel_result_remap(r, &g.d, g.out, &c);
	free(g.out);
	pmodel_import_release(&g.im);
	pmodel_dict_release(&g.d);
	if (!err)
		*out = c;
	return err;
}
