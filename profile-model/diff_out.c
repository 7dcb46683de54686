/*
 * diff_out.c - the outputs of a diff:
 *  - folded, "stack base new" per line as difffolded.pl writes it (raw
 *    values, or base scaled to new's total as with difffolded.pl -n),
 *    every stack of either side, so a vanished one shows "stack N 0";
 *  - the differential flame graph: each frame as wide as the mean of its
 *    two shares (so a frame that vanished keeps half its old width and
 *    one that is new gets half its new width: neither is dropped), red
 *    where its share grew and blue where it shrank, saturated by the
 *    change relative to the largest change (red and blue, not red and
 *    green, for readers who do not tell those apart);
 *  - a pprof holding new scaled to base's total plus base negated and
 *    labelled pprof::base=true: what `go tool pprof -normalize
 *    -diff_base base new` builds in memory, so `go tool pprof -top` on
 *    it shows each function's change in base's units and its share of
 *    base's total.
 */
#include "pmodel_internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>

struct dfold {
	const struct pmodel_diff *d;
	struct pmodel_out *o;
	struct ember_buf path;
	double scale;
};

static int fold_visit(void *ctx, uint32_t n, int depth, bool enter)
{
	struct dfold *f = ctx;
	int64_t b = f->d->ub_self.v[n], nw = f->d->ut.self.v[n];

	(void)depth;
	if (!enter || !n || (!b && !nw))
		return 0;
	EMBER_FORWARD_IF_ERROR(pmodel_ntree_path(&f->d->ut, n, &f->path));
	pmodel_out_write(f->o, f->path.data, f->path.len);
	return pmodel_out_printf(f->o, " %" PRId64 " %" PRId64 "\n",
			     (int64_t)llround((double)b * f->scale), nw);
}

int pmodel_write_diff_folded(const struct pmodel_diff *d, bool normalize, pmodel_write_fn fn,
			     void *ctx)
{
	struct pmodel_out o;
	struct dfold f = { d, &o, .scale = 1 };
	int err;

	if (normalize && d->btotal)
		f.scale = (double)d->ntotal / (double)d->btotal;
	pmodel_out_init(&o, fn, ctx);
	ember_buf_init(&f.path, SIZE_MAX / 2);
	err = pmodel_ntree_walk(&d->ut, fold_visit, &f);
	ember_buf_release(&f.path);
	return err ? (pmodel_out_finish(&o), err) : pmodel_out_finish(&o);
}

/* ---- differential flame graph ---------------------------------------------------- */

struct dsvg {
	const struct pmodel_diff *d;
	double *delta; /* per node: new share - base share of its total */
	double max;
};

static double bshare(const struct pmodel_diff *d, uint32_t n)
{
	return d->btotal ? (double)d->ub_total.v[n] / (double)d->btotal : 0;
}

static double nshare(const struct pmodel_diff *d, uint32_t n)
{
	return d->ntotal ? (double)d->ut.total.v[n] / (double)d->ntotal : 0;
}

static void diff_fill(const void *ctx, uint32_t n, char rgb[32])
{
	const struct dsvg *s = ctx;
	double k = s->max > 0 ? fabs(s->delta[n]) / s->max : 0;
	int c = (int)lround(235 - 200 * k);

	if (s->delta[n] > 0)
		snprintf(rgb, 32, "rgb(255,%d,%d)", c, c);
	else if (s->delta[n] < 0)
		snprintf(rgb, 32, "rgb(%d,%d,255)", c, c);
	else
		snprintf(rgb, 32, "rgb(235,235,235)");
}

static void diff_title(const void *ctx, uint32_t n, struct pmodel_out *o)
{
	const struct dsvg *s = ctx;
	const struct pmodel_ntree *t = &s->d->ut;

	pmodel_out_xml(o, n ? pmodel_str(&t->names, t->name.v[n]) : "all");
	pmodel_out_printf(o, " (base %.2f%%, new %.2f%%, %+.2f points)", 100 * bshare(s->d, n),
		      100 * nshare(s->d, n), 100 * s->delta[n]);
}

int pmodel_write_diff_flamegraph(const struct pmodel_diff *d, const struct pmodel_svg_opts *o,
				 pmodel_write_fn fn, void *ctx)
{
	size_t n = pmodel_ntree_count(&d->ut);
	double *width = malloc(n * sizeof(*width));
	struct dsvg s = { d, malloc(n * sizeof(double)), 0 };
	struct pmodel_svg_src src = { .t = &d->ut, .width = width, .fill = diff_fill,
				  .title = diff_title, .ctx = &s,
				  .legend = "red grew, blue shrank (share of each side's total)" };
	struct pmodel_svg_opts so = { .sz = sizeof(so), .title = "Differential Flame Graph" };
	char sub[512];
	int err = width && s.delta ? 0 : -ENOMEM;

	if (o) {
		so.width = o->width;
		so.icicle = o->icicle;
		so.title = o->title ? o->title : so.title;
	}
	for (size_t i = 0; !err && i < n; i++) {
		width[i] = (bshare(d, (uint32_t)i) + nshare(d, (uint32_t)i)) / 2;
		s.delta[i] = nshare(d, (uint32_t)i) - bshare(d, (uint32_t)i);
		if (i && fabs(s.delta[i]) > s.max)
			s.max = fabs(s.delta[i]);
	}
	{
		char bv[64], nv[64];

		pmodel_format_value((double)d->btotal, d->base->sample_unit, bv, sizeof(bv));
		pmodel_format_value((double)d->ntotal, d->new_->sample_unit, nv, sizeof(nv));
		snprintf(sub, sizeof(sub), "%s, base total %s, new total %s", d->new_->type, bv,
			 nv);
	}
	src.subtitle = sub;
	src.empty = d->base->profiles || d->new_->profiles ? "no samples in either range"
							     : "no profiles in either range";
	if (!err)
		err = pmodel_svg_render(&src, &so, fn, ctx);
	free(width);
	free(s.delta);
	return err;
}

/* ---- diff pprof ------------------------------------------------------------------ */

int pmodel_write_diff_pprof(const struct pmodel_diff *d, struct ember_buf *out)
{
	struct pprof_profile *p = NULL;
	struct pmodel_pprof_add nw = { &d->new_->dict, d->new_->self.v, 1.0, false, NULL };
	struct pmodel_pprof_add base = { &d->base->dict, d->base->self.v, -1.0, true, NULL };
	int err = pmodel_pprof_begin(d->base, &p);

	if (d->ntotal)
		nw.scale = (double)d->btotal / (double)d->ntotal;
	if (!err)
		err = pmodel_pprof_add(p, &nw);
	if (!err)
		err = pmodel_pprof_add(p, &base);
	if (!err)
		err = pprof_encode(p, true, out);
	pprof_profile_free(p);
	return err;
}
