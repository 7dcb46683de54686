/*
 * out_svg.c - flame graphs as one self-contained SVG, the kind
 * flamegraph.pl draws: a frame per node of the name tree, as wide as its
 * share, stacked by depth (root at the bottom, or at the top for an
 * icicle graph), children left to right in name order, frames narrower
 * than 0.1 px left out; each frame a <g> holding its tooltip (<title>),
 * its rectangle and its label, with its name and depth in attributes of
 * Ember's namespace for the script (svg_script.c).  The plain graph
 * colours frames by a hash of their name in flamegraph.pl's warm palette.
 */
#include "pmodel_internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#define FRAME_H 16
#define TOP 36
#define BOTTOM 24
#define PAD 10
#define MAX_DEPTH 2048

struct layout {
	const struct pmodel_svg_src *src;
	struct pmodel_out *o;
	double px;	  /* width of the root in px */
	int height;
	bool icicle;
	double *x;	  /* per depth: where the next frame starts (fraction) */
	int max_depth;
	size_t drawn;	  /* frames emitted */
};

static int frame_y(const struct layout *l, int depth)
{
	return l->icicle ? TOP + depth * FRAME_H : l->height - BOTTOM - (depth + 1) * FRAME_H;
}

/* The label that fits w px (the script's rule: 7 px a character, ".."
 * when cut, nothing under 3 characters), cut on a character boundary; so
 * the graph reads without the script too. */
static void emit_label(struct pmodel_out *o, const char *name, double w)
{
	int fit = (int)((w - 6) / 7);
	size_t n = strlen(name), cut;
	char *copy;

	if (fit < 3)
		return;
	if (n <= (size_t)fit) {
		pmodel_out_xml(o, name);
		return;
	}
	cut = (size_t)fit - 2;
	while (cut && ((unsigned char)name[cut] & 0xc0) == 0x80)
		cut--;
	copy = strndup(name, cut);
	if (!copy)
		return;
	pmodel_out_xml(o, copy);
	pmodel_out_str(o, "..");
	free(copy);
}

static void emit_frame(struct layout *l, uint32_t n, int depth, double x, double w)
{
	const struct pmodel_ntree *t = l->src->t;
	const char *name = n ? pmodel_str(&t->names, t->name.v[n]) : "all";
	char rgb[32];

	l->src->fill(l->src->ctx, n, rgb);
	pmodel_out_printf(l->o, "<g class=\"f\" e:d=\"%d\" e:n=\"", depth);
	pmodel_out_xml(l->o, name);
	pmodel_out_str(l->o, "\"><title>");
	l->src->title(l->src->ctx, n, l->o);
	pmodel_out_printf(l->o, "</title><rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" "
		      "fill=\"%s\" rx=\"2\" ry=\"2\"/><text x=\"%.2f\" y=\"%d\">",
		      PAD + x * l->px, frame_y(l, depth), w * l->px, FRAME_H - 1, rgb,
		      PAD + x * l->px + 3, frame_y(l, depth) + 11);
	emit_label(l->o, name, w * l->px);
	pmodel_out_str(l->o, "</text></g>\n");
	l->drawn++;
}

/* The end of the frames, and src's empty line when none was drawn (no
 * profile in the range, or all of their values zero). */
static void footer(struct layout *l, int width)
{
	pmodel_out_str(l->o, "</g>\n");
	if (!l->drawn && l->src->empty) {
		pmodel_out_printf(l->o, "<text id=\"empty\" x=\"%d\" y=\"%d\" "
				  "text-anchor=\"middle\">", width / 2, TOP + 12);
		pmodel_out_xml(l->o, l->src->empty);
		pmodel_out_str(l->o, "</text>\n");
	}
	pmodel_out_str(l->o, "</svg>\n");
}

static int visit(void *ctx, uint32_t n, int depth, bool enter)
{
	struct layout *l = ctx;
	double w = l->src->width[n], x;

	if (!enter)
		return 0;
	if (depth >= MAX_DEPTH || w * l->px < 0.1)
		return 1;
	x = l->x[depth];
	l->x[depth] = x + w;
	l->x[depth + 1] = x;
	emit_frame(l, n, depth, x, w);
	return l->o->err;
}

/* The depth the graph needs (frames wide enough to draw). */
static int measure(void *ctx, uint32_t n, int depth, bool enter)
{
	struct layout *l = ctx;

	if (!enter)
		return 0;
	if (depth >= MAX_DEPTH || l->src->width[n] * l->px < 0.1)
		return 1;
	if (depth > l->max_depth)
		l->max_depth = depth;
	return 0;
}

static void header(struct layout *l, const struct pmodel_svg_opts *o, int width)
{
	const char *title = o && o->title ? o->title : "Flame Graph";

	pmodel_out_printf(l->o, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		      "<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		      "onload=\"init(evt)\" xmlns=\"http://www.w3.org/2000/svg\" "
		      "xmlns:e=\"urn:ember:flamegraph\">\n", width, l->height, width, l->height);
	pmodel_out_str(l->o, "<style type=\"text/css\">text{font-family:Verdana,sans-serif;"
		   "font-size:12px;fill:#000}.f rect{stroke:#fff;stroke-width:0.3}"
		   ".f:hover rect{stroke:#000;stroke-width:0.8;cursor:pointer}"
		   ".btn{cursor:pointer}#title{font-size:17px}</style>\n"
		   "<script type=\"text/ecmascript\"><![CDATA[\n");
	pmodel_out_str(l->o, pmodel_svg_script);
	pmodel_out_printf(l->o, "]]></script>\n<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" "
		      "fill=\"#f8f8f8\"/>\n<text id=\"title\" x=\"%d\" y=\"20\" "
		      "text-anchor=\"middle\">", width, l->height, width / 2);
	pmodel_out_xml(l->o, title);
	pmodel_out_printf(l->o, "</text>\n<text id=\"subtitle\" x=\"%d\" y=\"33\" "
		      "text-anchor=\"middle\" style=\"font-size:11px;fill:#555\">", width / 2);
	pmodel_out_xml(l->o, l->src->subtitle ? l->src->subtitle : "");
	if (l->src->legend) {
		pmodel_out_str(l->o, " \xe2\x80\x94 ");
		pmodel_out_xml(l->o, l->src->legend);
	}
	pmodel_out_printf(l->o, "</text>\n<text id=\"reset\" class=\"btn\" x=\"%d\" y=\"20\" "
		      "style=\"opacity:0.3\">Reset Zoom</text>\n<text id=\"search\" class=\"btn\" "
		      "x=\"%d\" y=\"20\" text-anchor=\"end\">Search</text>\n<text id=\"details\" "
		      "x=\"%d\" y=\"%d\"> </text>\n<text id=\"matched\" x=\"%d\" y=\"%d\" "
		      "text-anchor=\"end\"> </text>\n<g id=\"frames\">\n", PAD, width - PAD, PAD,
		      l->height - 7, width - PAD, l->height - 7);
}

int pmodel_svg_render(const struct pmodel_svg_src *src, const struct pmodel_svg_opts *o,
		  pmodel_write_fn fn, void *ctx)
{
	int width = o && o->width > 2 * PAD + 10 ? o->width : 1200;
	struct pmodel_out out;
	struct layout l = { .src = src, .o = &out, .px = width - 2 * PAD,
			    .icicle = o && o->icicle };
	int err;

	l.x = calloc(MAX_DEPTH + 2, sizeof(*l.x));
	if (!l.x)
		return -ENOMEM;
	pmodel_out_init(&out, fn, ctx);
	err = pmodel_ntree_walk(src->t, measure, &l);
	l.height = TOP + BOTTOM + (l.max_depth + 1) * FRAME_H + 8;
	if (!err) {
		header(&l, o, width);
		err = pmodel_ntree_walk(src->t, visit, &l);
	}
	if (!err)
		footer(&l, width);
	free(l.x);
	return err ? (pmodel_out_finish(&out), err) : pmodel_out_finish(&out);
}

/* ---- the plain flame graph --------------------------------------------------- */

struct plain {
	const struct pmodel_ntree *t;
	const struct pmodel_result *r;
	double total, quantum;
};

static void plain_fill(const void *ctx, uint32_t n, char rgb[32])
{
	const struct plain *p = ctx;
	const char *name = n ? pmodel_str(&p->t->names, p->t->name.v[n]) : "all";
	uint64_t h = ember_checksum64(name, strlen(name), 3);

	snprintf(rgb, 32, "rgb(%d,%d,%d)", 205 + (int)(h % 51), (int)((h >> 8) % 231),
		 (int)((h >> 16) % 56));
}

static void plain_title(const void *ctx, uint32_t n, struct pmodel_out *o)
{
	const struct plain *p = ctx;
	double v = (double)p->t->total.v[n];
	char val[64];

	pmodel_format_value(v, p->r->sample_unit, val, sizeof(val));
	pmodel_out_xml(o, n ? pmodel_str(&p->t->names, p->t->name.v[n]) : "all");
	pmodel_out_printf(o, " (%s", val);
	if (p->quantum > 1)
		pmodel_out_printf(o, ", %.0f samples", v / p->quantum);
	pmodel_out_printf(o, ", %.2f%%)", p->total ? 100 * v / p->total : 0);
}

int pmodel_write_flamegraph(const struct pmodel_result *r, const struct pmodel_svg_opts *o,
			    pmodel_write_fn fn, void *ctx)
{
	struct pmodel_ntree t;
	struct plain p = { &t, r, 0, pmodel_result_quantum(r) };
	struct pmodel_svg_src src = {
		.t = &t, .fill = plain_fill, .title = plain_title, .ctx = &p
	};
	char sub[512], val[64];
	double *width = NULL;
	int err = pmodel_ntree_build(r, &t);

	if (!err && !(width = malloc(pmodel_ntree_count(&t) * sizeof(*width))))
		err = -ENOMEM;
	if (!err) {
		p.total = (double)t.total.v[0];
		for (size_t i = 0; i < pmodel_ntree_count(&t); i++)
			width[i] = p.total > 0 && t.total.v[i] > 0 ? (double)t.total.v[i] / p.total
								   : 0;
		pmodel_format_value(p.total, r->sample_unit, val, sizeof(val));
		snprintf(sub, sizeof(sub), "%s, %" PRIu64 " profiles, total %s", r->type,
			 r->profiles, val);
		src.width = width;
		src.subtitle = sub;
		src.empty = r->profiles ? "no samples in this range" : "no profiles in this range";
		err = pmodel_svg_render(&src, o, fn, ctx);
	}
	free(width);
	pmodel_ntree_release(&t);
	return err;
}
