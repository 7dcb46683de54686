/*
 * restack.c - a result's stacks rewritten node by node: the engine of
 * the views (view_*.c: stacks through a frame, frames hidden, a
 * function's callers and callees).  A view's step maps each stack node
 * of the result, parent first, to a stack of a new dictionary; the
 * values (and their attributed parts) are summed per new stack, so
 * stacks that come out equal merge.  truncate.c cuts stacks the same
 * way with a rule of its own.
 */
#include "pmodel_internal.h"

#include <stdio.h>

const char *pmodel_frame_name(const struct pmodel_dict *d, const struct pmodel_loc *l,
			      uint32_t k, char *buf, size_t size)
{
	if (!l->nlines) {
		pmodel_loc_unresolved_name(d, l, buf, size);
		return buf;
	}
	return pmodel_line_name(d, &d->lines.v[l->line_off + k]);
}

uint32_t pmodel_loc_find_frame(const struct pmodel_dict *d, const struct pmodel_loc *l,
			       const char *name)
{
	char buf[PMODEL_UNRESOLVED_NAME_MAX];

	for (uint32_t k = pmodel_loc_frames(l); k-- > 0;) /* outermost first */
		if (strcmp(pmodel_frame_name(d, l, k, buf, sizeof(buf)), name) == 0)
			return k;
	return UINT32_MAX;
}

int pmodel_restack_push(struct pmodel_restack *rs, uint32_t parent, uint32_t l, uint32_t first,
			uint32_t n, uint32_t *out)
{
	const struct pmodel_loc *loc = &rs->r->dict.locs.v[l];
	uint32_t dl;

	if (!loc->nlines || (first == 0 && n == loc->nlines))
		EMBER_FORWARD_IF_ERROR(pmodel_import_loc(&rs->im, l, &dl));
	else
		EMBER_FORWARD_IF_ERROR(pmodel_import_loc_lines(&rs->im, l, first, n, &dl));
	return pmodel_dict_node(&rs->d, parent, dl, out);
}

static int restack_init(struct pmodel_restack *rs, const struct pmodel_result *r)
{
	size_t n = pmodel_dict_nodes(&r->dict);

	rs->r = r;
	rs->out = calloc(n, sizeof(*rs->out));
	rs->drop = calloc(n, sizeof(*rs->drop));
	if (!rs->out || !rs->drop)
		return -ENOMEM;
	EMBER_FORWARD_IF_ERROR(pmodel_dict_init(&rs->d));
	return pmodel_import_init(&rs->im, &r->dict, &rs->d);
}

static void restack_release(struct pmodel_restack *rs)
{
	pmodel_import_release(&rs->im);
	pmodel_dict_release(&rs->d);
	free(rs->out);
	free(rs->drop);
}

/* Per node of r, whether its samples are kept (a new array, to free):
 * those of a node given a stack and not dropped. */
static bool *restack_kept(const struct pmodel_restack *rs)
{
	size_t n = pmodel_dict_nodes(&rs->r->dict);
	bool *keep = malloc(n * sizeof(*keep));

	for (size_t i = 0; keep && i < n; i++)
		keep[i] = rs->out[i] && !rs->drop[i];
	return keep;
}

/* Per node of d, the values of r's kept nodes (a new array, to free). */
static int restack_values(const struct pmodel_restack *rs, const bool *keep, int64_t **out)
{
	const struct pmodel_result *r = rs->r;
	int64_t *self = calloc(pmodel_dict_nodes(&rs->d) + 1, sizeof(*self));

	if (!self)
		return -ENOMEM;
	for (size_t i = 1; i < r->self.n && i < pmodel_dict_nodes(&r->dict); i++)
		if (keep[i])
			self[rs->out[i]] = pmodel_add(self[rs->out[i]], r->self.v[i]);
	*out = self;
	return 0;
}

int pmodel_restack(const struct pmodel_result *r, pmodel_restack_fn step, void *ctx,
		   struct pmodel_result **out)
{
	struct pmodel_restack rs = { 0 };
	struct pmodel_result *c = NULL;
	int64_t *self = NULL;
	bool *keep = NULL;
	int err = restack_init(&rs, r);

	for (uint32_t i = 1; !err && i < pmodel_dict_nodes(&r->dict); i++)
		err = step(&rs, i, ctx);
	if (!err && !(keep = restack_kept(&rs)))
		err = -ENOMEM;
	err = err ? err : restack_values(&rs, keep, &self);
	err = err ? err : pmodel_result_new_like(r, &c);
	err = err ? err : pmodel_result_add(c, &rs.d, self);
	/* r's attributed parts of kept nodes, moved to their stacks */
	err = err ? err : pmodel_result_add_attrs_of(c, &rs.d, r, rs.out, keep);
	free(self);
	free(keep);
	restack_release(&rs);
	if (err) {
		pmodel_result_free(c);
		return err;
	}
	*out = c;
	return 0;
}
