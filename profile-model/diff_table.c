/*
 * diff_table.c - the regression table: per function (frame name), its
 * self and total shares before and after, their change in percentage
 * points, the relative change, and a noise estimate, so that a change a
 * handful of samples explains is not called a regression.
 *
 * The noise: each side's values are turned back into sample counts (the
 * value of one sample is the period when the period is in the values'
 * unit, e.g. 10 ms of cpu, else 1: counts), and the change of the
 * function's self share is compared with the standard error of a
 * difference of two proportions, sqrt(p (1 - p) (1/n1 + 1/n2)) with p the
 * pooled share (k1 + k2) / (n1 + n2): z = delta / se.  2 -> 5 samples of
 * 1,000 is z = 1.1, noise; 20 -> 50 is z = 3.6.  A row is flagged when
 * the change passes min_abs_pct points, min_rel relative and min_z sigmas.
 */
#include "pmodel_internal.h"

#include <inttypes.h>
#include <math.h>

static double share(int64_t v, int64_t total)
{
	return total ? (double)v / (double)total : 0;
}

static void noise(const struct pmodel_diff *d, struct pmodel_diff_row *r)
{
	double k1 = fabs((double)r->base_self) / d->bquant,
	       n1 = fabs((double)d->btotal) / d->bquant;
	double k2 = fabs((double)r->new_self) / d->nquant, n2 = fabs((double)d->ntotal) / d->nquant;
	double p, se;

	if (n1 <= 0 || n2 <= 0) {
		r->noise_self_pct = 0;
		r->z = r->delta_self_pct ? INFINITY : 0;
		return;
	}
	p = (k1 + k2) / (n1 + n2);
	se = sqrt(p * (1 - p) * (1 / n1 + 1 / n2));
	r->noise_self_pct = 100 * se;
	r->z = se > 0 ? r->delta_self_pct / 100 / se : (r->delta_self_pct ? INFINITY : 0);
}

static void fill_row(const struct pmodel_diff *d, struct pmodel_diff_row *r)
{
	const struct pmodel_diff_opts *o = &d->opts;
	double b = share(r->base_self, d->btotal), n = share(r->new_self, d->ntotal);

	r->base_self_pct = 100 * b;
	r->new_self_pct = 100 * n;
	r->base_total_pct = 100 * share(r->base_total, d->btotal);
	r->new_total_pct = 100 * share(r->new_total, d->ntotal);
	r->delta_self_pct = r->new_self_pct - r->base_self_pct;
	r->delta_total_pct = r->new_total_pct - r->base_total_pct;
	r->rel_self = b > 0 ? (n - b) / b : n > 0 ? INFINITY : 0;
	noise(d, r);
	r->flagged = fabs(r->delta_self_pct) >= o->min_abs_pct && fabs(r->rel_self) >= o->min_rel &&
		     fabs(r->z) >= o->min_z;
}

static int cmp_row(const void *a, const void *b)
{
	const struct pmodel_diff_row *x = a, *y = b;

	if (x->delta_self_pct != y->delta_self_pct)
		return x->delta_self_pct > y->delta_self_pct ? -1 : 1;
	if (x->delta_total_pct != y->delta_total_pct)
		return x->delta_total_pct > y->delta_total_pct ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Per union name: both sides' function stats (by name through the union
 * strings). */
static int side_stats(const struct pmodel_ntree *side, const struct pmodel_ntree *u,
		      struct pmodel_fstat *out)
{
	struct pmodel_fstat *f;

	EMBER_FORWARD_IF_ERROR(pmodel_ntree_functions(side, &f));
	for (uint32_t i = 1; i < pmodel_strtab_count(&side->names); i++) {
		const char *name = pmodel_str(&side->names, i);
		uint32_t id = pmodel_strtab_find(&u->names, name, strlen(name));

		if (id != UINT32_MAX) /* every name of a side is a union name */
			out[id] = f[i];
	}
	free(f);
	return 0;
}

static int pack(const struct pmodel_diff *d, const struct pmodel_fstat *bs,
		const struct pmodel_fstat *ns, struct pmodel_diff_row **rows, size_t *nrows)
{
	size_t names = pmodel_strtab_count(&d->ut.names), k = 0, bytes = 0;
	struct pmodel_diff_row *r;
	char *p;

	for (uint32_t i = 1; i < names; i++)
		bytes += strlen(pmodel_str(&d->ut.names, i)) + 1;
	r = malloc(names * sizeof(*r) + bytes + 1);
	if (!r)
		return -ENOMEM;
	p = (char *)(r + names);
	for (uint32_t i = 1; i < names; i++) {
		struct pmodel_diff_row *row = &r[k];

		if (!bs[i].self && !bs[i].total && !ns[i].self && !ns[i].total)
			continue;
		memset(row, 0, sizeof(*row));
		row->name = strcpy(p, pmodel_str(&d->ut.names, i));
		p += strlen(p) + 1;
		row->base_self = bs[i].self;
		row->base_total = bs[i].total;
		row->new_self = ns[i].self;
		row->new_total = ns[i].total;
		fill_row(d, row);
		k++;
	}
	ember_qsort(r, k, sizeof(*r), cmp_row);
	*rows = r;
	*nrows = k;
	return 0;
}

int pmodel_diff_table(const struct pmodel_diff *d, struct pmodel_diff_row **rows, size_t *nrows)
{
	size_t names = pmodel_strtab_count(&d->ut.names) + 1;
	struct pmodel_fstat *bs = calloc(names, sizeof(*bs)), *ns = calloc(names, sizeof(*ns));
	int err = bs && ns ? 0 : -ENOMEM;

	if (!err)
		err = side_stats(&d->bt, &d->ut, bs);
	if (!err)
		err = side_stats(&d->nt, &d->ut, ns);
	if (!err)
		err = pack(d, bs, ns, rows, nrows);
	free(bs);
	free(ns);
	return err;
}

static void text_row(struct pmodel_out *o, const struct pmodel_diff_row *r)
{
	pmodel_out_printf(o, "%8.2f%% %8.2f%% %+8.2f %7.2f %+8.1f%% %8.2f%% %8.2f%% %+8.2f %s %s\n",
		      r->base_self_pct, r->new_self_pct, r->delta_self_pct, r->noise_self_pct,
		      isinf(r->rel_self) ? 999.9 : 100 * r->rel_self, r->base_total_pct,
		      r->new_total_pct, r->delta_total_pct, r->flagged ? "!" : " ", r->name);
}

static void json_row(struct pmodel_out *o, const struct pmodel_diff_row *r, bool first)
{
	pmodel_out_str(o, first ? "{\"name\":" : ",{\"name\":");
	pmodel_out_json(o, r->name);
	pmodel_out_printf(o,
			  ",\"base_self_pct\":%.4f,\"new_self_pct\":%.4f,\"delta_self_pct\":%.4f,"
			  "\"noise_self_pct\":%.4f,\"z\":%.3f,\"rel_self\":%.4f,"
			  "\"base_total_pct\":%.4f,\"new_total_pct\":%.4f,\"delta_total_pct\":%.4f,"
			  "\"base_self\":%" PRId64 ",\"new_self\":%" PRId64 ",\"flagged\":%s}",
			  r->base_self_pct, r->new_self_pct, r->delta_self_pct, r->noise_self_pct,
			  isinf(r->z) ? (r->z > 0 ? 1e9 : -1e9) : r->z,
			  isinf(r->rel_self) ? 1e9 : r->rel_self, r->base_total_pct,
			  r->new_total_pct, r->delta_total_pct, r->base_self, r->new_self,
			  r->flagged ? "true" : "false");
}

int pmodel_write_diff_table(const struct pmodel_diff *d, size_t n, bool json,
			    pmodel_write_fn fn, void *ctx)
{
	struct pmodel_diff_row *rows;
	size_t k, all;
	struct pmodel_out o;
	int err = pmodel_diff_table(d, &rows, &all);

	if (err)
		return err;
	k = n && n < all ? n : all;
	pmodel_out_init(&o, fn, ctx);
	if (json) {
		pmodel_out_str(&o, "{\"type\":");
		pmodel_out_json(&o, d->new_->type);
		pmodel_out_printf(&o, ",\"base_total\":%" PRId64 ",\"new_total\":%" PRId64
			      ",\"base_profiles\":%" PRIu64 ",\"new_profiles\":%" PRIu64
			      ",\"min_abs_pct\":%g,\"min_rel\":%g,\"min_z\":%g,\"rows\":[",
			      d->btotal, d->ntotal, d->base->profiles, d->new_->profiles,
			      d->opts.min_abs_pct, d->opts.min_rel, d->opts.min_z);
		for (size_t i = 0; i < k; i++)
			json_row(&o, &rows[i], i == 0);
		pmodel_out_str(&o, "]}\n");
	} else {
		pmodel_out_printf(&o, "Type: %s\nbase total %" PRId64 ", new total %" PRId64
			      "; ! = past %.2f points, %.0f%% and %.1f sigma\n", d->new_->type,
			      d->btotal, d->ntotal, d->opts.min_abs_pct, 100 * d->opts.min_rel,
			      d->opts.min_z);
		pmodel_out_printf(&o, "%9s %9s %8s %7s %9s %9s %9s %8s   %s\n", "self was",
				  "self now", "delta", "noise", "rel", "total was", "total now",
				  "delta", "name");
		for (size_t i = 0; i < k; i++)
			text_row(&o, &rows[i]);
	}
	free(rows);
	return pmodel_out_finish(&o);
}
