/*
 * dict_import.c - entries of one dictionary interned into another: what
 * a query does with each block's stacks (into the result), and a merge
 * compaction with each block it rewrites.  Maps from source ids to
 * destination ids are filled on first use, so only what is reached is
 * copied.  A node is imported after its parent: the ancestors of a
 * stack are walked up to the first one already known.
 *
 * Before hashing, each entry tries a guess: the destination entry after
 * the one its predecessor in the source mapped to.  Dictionaries written
 * from the same stacks (a week's rollups, summed from one another's
 * hours) hold them mostly in the same order, so once the result holds
 * them, 80% of a rollup's nodes are found so (docs/performance-notes.md,
 * "Guessed imports").  A guess is taken only when the entry there is
 * equal (for a node, its parent and location; for a location, function
 * or string, every field): a destination is built by interning, its
 * entries unique, so that is the entry the hash lookup finds, and the
 * answer and the destination's order are the same as without the guess.
 */
#include "pmodel_internal.h"

#include <assert.h>

#define UNSET UINT32_MAX

static uint32_t *unset_array(size_t n)
{
	uint32_t *a = malloc((n ? n : 1) * sizeof(*a));

	if (a)
		memset(a, 0xff, (n ? n : 1) * sizeof(*a));
	return a;
}

int pmodel_import_init(struct pmodel_import *im, const struct pmodel_dict *src,
		       struct pmodel_dict *dst)
{
	memset(im, 0, sizeof(*im));
	im->src = src;
	im->dst = dst;
	im->str = unset_array(pmodel_strtab_count(&src->str));
	im->func = unset_array(src->funcs.n);
	im->map = unset_array(src->maps.n);
	im->loc = unset_array(src->locs.n);
	im->node = unset_array(src->node_parent.n);
	if (!im->str || !im->func || !im->map || !im->loc || !im->node) {
		pmodel_import_release(im);
		return -ENOMEM;
	}
	im->node[0] = 0;
	return 0;
}

void pmodel_import_release(struct pmodel_import *im)
{
	free(im->str);
	free(im->func);
	free(im->map);
	free(im->loc);
	free(im->node);
	memset(im, 0, sizeof(*im));
}

/* The guess for entry i of a source table whose map is map: the
 * destination entry after its predecessor's, or UNSET (n: the
 * destination's entries). */
static uint32_t guess(const uint32_t *map, uint32_t i, size_t n)
{
	uint32_t g = i ? map[i - 1] : UNSET;

	return g != UNSET && (size_t)g + 1 < n ? g + 1 : UNSET;
}

int pmodel_import_str(struct pmodel_import *im, uint32_t s, uint32_t *out)
{
	if (im->str[s] == UNSET) {
		const char *p = pmodel_str(&im->src->str, s);
		uint32_t g = guess(im->str, s, pmodel_strtab_count(&im->dst->str));

		if (g != UNSET && !strcmp(pmodel_str(&im->dst->str, g), p))
			im->str[s] = g;
		else
			EMBER_FORWARD_IF_ERROR(
				pmodel_strtab_intern(&im->dst->str, p, strlen(p), &im->str[s]));
	}
	*out = im->str[s];
	return 0;
}

static int import_func(struct pmodel_import *im, uint32_t f, uint32_t *out)
{
	if (im->func[f] == UNSET) {
		const struct pmodel_func *sf = &im->src->funcs.v[f];
		struct pmodel_func df = { .start_line = sf->start_line };
		const struct pmodel_func *gf;
		uint32_t g;

		EMBER_FORWARD_IF_ERROR(pmodel_import_str(im, sf->name, &df.name));
		EMBER_FORWARD_IF_ERROR(pmodel_import_str(im, sf->system_name, &df.system_name));
		EMBER_FORWARD_IF_ERROR(pmodel_import_str(im, sf->filename, &df.filename));
		g = guess(im->func, f, im->dst->funcs.n);
		gf = g != UNSET ? &im->dst->funcs.v[g] : NULL;
		if (gf && gf->name == df.name && gf->system_name == df.system_name &&
		    gf->filename == df.filename && gf->start_line == df.start_line)
			im->func[f] = g;
		else
			EMBER_FORWARD_IF_ERROR(pmodel_dict_func(im->dst, &df, &im->func[f]));
	}
	*out = im->func[f];
	return 0;
}

static int import_map(struct pmodel_import *im, uint32_t m, uint32_t *out)
{
	if (im->map[m] == UNSET) {
		const struct pmodel_map *sm = &im->src->maps.v[m];
		struct pmodel_map dm = *sm;

		EMBER_FORWARD_IF_ERROR(pmodel_import_str(im, sm->filename, &dm.filename));
		EMBER_FORWARD_IF_ERROR(pmodel_import_str(im, sm->build_id, &dm.build_id));
		EMBER_FORWARD_IF_ERROR(pmodel_dict_map(im->dst, &dm, &im->map[m]));
	}
	*out = im->map[m];
	return 0;
}

/* Whether location g of the destination is (mapping, address, type,
 * lines[0..n)). */
static bool loc_is(const struct pmodel_dict *d, uint32_t g, uint32_t mapping, uint64_t address,
		   uint32_t type, const struct pmodel_line *lines, uint32_t n)
{
	const struct pmodel_loc *l = &d->locs.v[g];
	const struct pmodel_line *a = d->lines.v + l->line_off;

	if (l->mapping != mapping || l->address != address || l->type != type || l->nlines != n)
		return false;
	for (uint32_t i = 0; i < n; i++)
		if (a[i].func != lines[i].func || a[i].line != lines[i].line)
			return false;
	return true;
}

/* Location l of src with its lines [first, first + n) only, into *out;
 * g: a guess (UNSET: none). */
static int import_loc(struct pmodel_import *im, uint32_t l, uint32_t first, uint32_t n,
		      uint32_t g, uint32_t *out)
{
	const struct pmodel_loc *sl = &im->src->locs.v[l];
	struct pmodel_line small[16], *lines = small;
	uint32_t mapping = 0, type = 0;
	int err = 0;

	assert(first <= sl->nlines && n <= sl->nlines - first);
	if (n > 16 && !(lines = malloc(n * sizeof(*lines))))
		return -ENOMEM;
	if (sl->mapping) {
		err = import_map(im, sl->mapping - 1, &mapping);
		mapping++;
	}
	if (!err && sl->type)
		err = pmodel_import_str(im, sl->type, &type);
	for (uint32_t i = 0; !err && i < n; i++) {
		const struct pmodel_line *sln = &im->src->lines.v[sl->line_off + first + i];

		lines[i].line = sln->line;
		err = import_func(im, sln->func, &lines[i].func);
	}
	if (!err && g != UNSET && loc_is(im->dst, g, mapping, sl->address, type, lines, n))
		*out = g;
	else if (!err)
		err = pmodel_dict_loc(im->dst, mapping, sl->address, type, lines, n, out);
	if (lines != small)
		free(lines);
	return err;
}

int pmodel_import_loc(struct pmodel_import *im, uint32_t l, uint32_t *out)
{
	if (im->loc[l] == UNSET)
		EMBER_FORWARD_IF_ERROR(import_loc(im, l, 0, im->src->locs.v[l].nlines,
						  guess(im->loc, l, im->dst->locs.n), &im->loc[l]));
	*out = im->loc[l];
	return 0;
}

int pmodel_import_loc_lines(struct pmodel_import *im, uint32_t l, uint32_t first, uint32_t n,
			    uint32_t *out)
{
	return import_loc(im, l, first, n, UNSET, out);
}

int pmodel_import_node(struct pmodel_import *im, uint32_t node, uint32_t *out)
{
	uint32_t chain[64], n = 0, cur = node;

	/* Walk up to a known ancestor, then import downwards; a chain longer
	 * than the buffer is done in pieces from the top. */
	while (im->node[cur] == UNSET) {
		if (n == 64) {
			uint32_t top;

			EMBER_FORWARD_IF_ERROR(pmodel_import_node(im, cur, &top));
			break;
		}
		chain[n++] = cur;
		cur = im->src->node_parent.v[cur];
	}
	while (n--) {
		uint32_t c = chain[n], loc, parent = im->node[im->src->node_parent.v[c]];
		uint32_t g = guess(im->node, c, pmodel_dict_nodes(im->dst));

		EMBER_FORWARD_IF_ERROR(pmodel_import_loc(im, im->src->node_loc.v[c], &loc));
		if (g != UNSET && im->dst->node_parent.v[g] == parent && im->dst->node_loc.v[g] == loc)
			im->node[c] = g;
		else
			EMBER_FORWARD_IF_ERROR(pmodel_dict_node(im->dst, parent, loc, &im->node[c]));
	}
	*out = im->node[node];
	return 0;
}
