/*
 * diff.c - two results compared: each side's tree of frame names, and
 * their union (every path either side has), holding both sides' self and
 * total values per node, so a stack or a function that vanished is
 * present with its base value and a zero, and a new one with a zero
 * base.  Comparisons are of shares (value / the side's total), so two
 * selections of different sizes compare.
 */
#include "pmodel_internal.h"

/* Map the nodes of side into the union tree u. */
static int join(struct pmodel_ntree *u, const struct pmodel_ntree *side, uint32_t **map)
{
	size_t n = pmodel_ntree_count(side);

	*map = malloc(n * sizeof(**map));
	if (!*map)
		return -ENOMEM;
	(*map)[0] = 0;
	for (size_t i = 1; i < n; i++) {
		const char *name = pmodel_str(&side->names, side->name.v[i]);

		EMBER_FORWARD_IF_ERROR(pmodel_ntree_child(u, (*map)[side->parent.v[i]], name, strlen(name),
					  &(*map)[i]));
		EMBER_FORWARD_IF_ERROR(pmodel_ntree_note_source(
			u, (*map)[i], pmodel_ntree_file(side, side->name.v[i]), side->line.v[i]));
	}
	return 0;
}

static int fill_sides(struct pmodel_diff *d, const uint32_t *bmap, const uint32_t *nmap)
{
	size_t n = pmodel_ntree_count(&d->ut);

	EMBER_FORWARD_IF_ERROR(EMBER_VEC_RESERVE(&d->ub_self, n));
	EMBER_FORWARD_IF_ERROR(EMBER_VEC_RESERVE(&d->ub_total, n));
	d->ub_self.n = d->ub_total.n = n;
	memset(d->ub_self.v, 0, n * sizeof(int64_t));
	for (size_t i = 0; i < n; i++)
		d->ut.self.v[i] = 0;
	for (size_t i = 0; i < pmodel_ntree_count(&d->bt); i++)
		d->ub_self.v[bmap[i]] = d->bt.self.v[i];
	for (size_t i = 0; i < pmodel_ntree_count(&d->nt); i++)
		d->ut.self.v[nmap[i]] = d->nt.self.v[i];
	EMBER_FORWARD_IF_ERROR(pmodel_ntree_finish(&d->ut)); /* new's totals */
	for (size_t i = 0; i < n; i++)
		d->ub_total.v[i] = d->ub_self.v[i];
	for (size_t i = n; i-- > 1;)
		d->ub_total.v[d->ut.parent.v[i]] =
			pmodel_add(d->ub_total.v[d->ut.parent.v[i]], d->ub_total.v[i]);
	return 0;
}

static void resolve_opts(const struct pmodel_diff_opts *in, struct pmodel_diff_opts *o)
{
	*o = (struct pmodel_diff_opts){ .sz = sizeof(*o), .min_abs_pct = 0.5, .min_rel = 0.1,
					.min_z = 3 };
	if (!in)
		return;
#define TAKE(f)                                                              \
	if (in->sz >= offsetof(struct pmodel_diff_opts, f) + sizeof(in->f) && in->f > 0) \
		o->f = in->f
	TAKE(min_abs_pct);
	TAKE(min_rel);
	TAKE(min_z);
#undef TAKE
}

static int build(struct pmodel_diff *d)
{
	uint32_t *bmap = NULL, *nmap = NULL;
	int err = pmodel_ntree_build(d->base, &d->bt);

	if (!err)
		err = pmodel_ntree_build(d->new_, &d->nt);
	if (!err)
		err = pmodel_ntree_init(&d->ut);
	if (!err)
		err = join(&d->ut, &d->bt, &bmap);
	if (!err)
		err = join(&d->ut, &d->nt, &nmap);
	if (!err)
		err = fill_sides(d, bmap, nmap);
	free(bmap);
	free(nmap);
	d->btotal = pmodel_result_total(d->base);
	d->ntotal = pmodel_result_total(d->new_);
	d->bquant = pmodel_result_quantum(d->base);
	d->nquant = pmodel_result_quantum(d->new_);
	return err;
}

static bool same_kind(const struct pmodel_result *a, const struct pmodel_result *b)
{
	return strcmp(a->sample_type, b->sample_type) == 0 &&
	       strcmp(a->sample_unit, b->sample_unit) == 0;
}

int pmodel_diff_new(const struct pmodel_result *base, const struct pmodel_result *new_,
		    const struct pmodel_diff_opts *o, struct pmodel_diff **out)
{
	struct pmodel_diff *d;
	int err;

	if (!same_kind(base, new_))
		return -PMODEL_ERR_TYPE;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	resolve_opts(o, &d->opts);
	err = pmodel_result_copy(base, &d->base);
	if (!err)
		err = pmodel_result_copy(new_, &d->new_);
	if (!err)
		err = build(d);
	if (err) {
		pmodel_diff_free(d);
		return err;
	}
	*out = d;
	return 0;
}

void pmodel_diff_totals(const struct pmodel_diff *d, int64_t *base, int64_t *new_)
{
	*base = d->btotal;
	*new_ = d->ntotal;
}

void pmodel_diff_free(struct pmodel_diff *d)
{
	if (!d)
		return;
	pmodel_result_free(d->base);
	pmodel_result_free(d->new_);
	pmodel_ntree_release(&d->bt);
	pmodel_ntree_release(&d->nt);
	pmodel_ntree_release(&d->ut);
	EMBER_VEC_FREE(&d->ub_self);
	EMBER_VEC_FREE(&d->ub_total);
	free(d);
}
