/*
 * diff.c - two results compared: each side's tree of frame names, and
 * their union (every path either side has), holding both sides' self and
 * total values per node, so a stack or a function that vanished is
 * present with its base value and a zero, and a new one with a zero
 * base.  Comparisons are of shares (value / the side's total), so two
 * selections of different sizes compare.
 */
#include "pstore_internal.h"

/* Map the nodes of side into the union tree u. */
static int join(struct pstore_ntree *u, const struct pstore_ntree *side, uint32_t **map)
{
	size_t n = pstore_ntree_count(side);

	*map = malloc(n * sizeof(**map));
	if (!*map)
		return -ENOMEM;
	(*map)[0] = 0;
	for (size_t i = 1; i < n; i++) {
		const char *name = pstore_str(&side->names, side->name.v[i]);

		EMBER_FORWARD_IF_ERROR(pstore_ntree_child(u, (*map)[side->parent.v[i]], name, strlen(name),
					  &(*map)[i]));
		EMBER_FORWARD_IF_ERROR(pstore_ntree_note_source(
			u, (*map)[i], pstore_ntree_file(side, side->name.v[i]), side->line.v[i]));
	}
	return 0;
}

static int fill_sides(struct pstore_diff *d, const uint32_t *bmap, const uint32_t *nmap)
{
	size_t n = pstore_ntree_count(&d->ut);

	EMBER_FORWARD_IF_ERROR(EMBER_VEC_RESERVE(&d->ub_self, n));
	EMBER_FORWARD_IF_ERROR(EMBER_VEC_RESERVE(&d->ub_total, n));
	d->ub_self.n = d->ub_total.n = n;
	memset(d->ub_self.v, 0, n * sizeof(int64_t));
	for (size_t i = 0; i < n; i++)
		d->ut.self.v[i] = 0;
	for (size_t i = 0; i < pstore_ntree_count(&d->bt); i++)
		d->ub_self.v[bmap[i]] = d->bt.self.v[i];
	for (size_t i = 0; i < pstore_ntree_count(&d->nt); i++)
		d->ut.self.v[nmap[i]] = d->nt.self.v[i];
	EMBER_FORWARD_IF_ERROR(pstore_ntree_finish(&d->ut)); /* new's totals */
	for (size_t i = 0; i < n; i++)
		d->ub_total.v[i] = d->ub_self.v[i];
	for (size_t i = n; i-- > 1;)
		d->ub_total.v[d->ut.parent.v[i]] =
			pstore_add(d->ub_total.v[d->ut.parent.v[i]], d->ub_total.v[i]);
	return 0;
}

static void resolve_opts(const struct pstore_diff_opts *in, struct pstore_diff_opts *o)
{
	*o = (struct pstore_diff_opts){ .sz = sizeof(*o), .min_abs_pct = 0.5, .min_rel = 0.1,
					.min_z = 3 };
	if (!in)
		return;
#define TAKE(f)                                                              \
	if (in->sz >= offsetof(struct pstore_diff_opts, f) + sizeof(in->f) && in->f > 0) \
		o->f = in->f
	TAKE(min_abs_pct);
	TAKE(min_rel);
	TAKE(min_z);
#undef TAKE
}

static int build(struct pstore_diff *d)
{
	uint32_t *bmap = NULL, *nmap = NULL;
	int err = pstore_ntree_build(d->base, &d->bt);

	if (!err)
		err = pstore_ntree_build(d->new_, &d->nt);
	if (!err)
		err = pstore_ntree_init(&d->ut);
	if (!err)
		err = join(&d->ut, &d->bt, &bmap);
	if (!err)
		err = join(&d->ut, &d->nt, &nmap);
	if (!err)
		err = fill_sides(d, bmap, nmap);
	free(bmap);
	free(nmap);
	d->btotal = pstore_result_total(d->base);
	d->ntotal = pstore_result_total(d->new_);
	d->bquant = pstore_result_quantum(d->base);
	d->nquant = pstore_result_quantum(d->new_);
	return err;
}

static bool same_kind(const struct pstore_result *a, const struct pstore_result *b)
{
	return strcmp(a->sample_type, b->sample_type) == 0 &&
	       strcmp(a->sample_unit, b->sample_unit) == 0;
}

int pstore_diff_new(const struct pstore_result *base, const struct pstore_result *new_,
		    const struct pstore_diff_opts *o, struct pstore_diff **out)
{
	struct pstore_diff *d;
	int err;

	if (!same_kind(base, new_))
		return -PSTORE_ERR_TYPE;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	resolve_opts(o, &d->opts);
	err = pstore_result_copy(base, &d->base);
	if (!err)
		err = pstore_result_copy(new_, &d->new_);
	if (!err)
		err = build(d);
	if (err) {
		pstore_diff_free(d);
		return err;
	}
	*out = d;
	return 0;
}

void pstore_diff_totals(const struct pstore_diff *d, int64_t *base, int64_t *new_)
{
	*base = d->btotal;
	*new_ = d->ntotal;
}

void pstore_diff_free(struct pstore_diff *d)
{
	if (!d)
		return;
	pstore_result_free(d->base);
	pstore_result_free(d->new_);
	pstore_ntree_release(&d->bt);
	pstore_ntree_release(&d->nt);
	pstore_ntree_release(&d->ut);
	EMBER_VEC_FREE(&d->ub_self);
	EMBER_VEC_FREE(&d->ub_total);
	free(d);
}
