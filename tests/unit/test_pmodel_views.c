/*
 * test_pmodel_views.c - unit tests of the profile model's views
 * (profile-model/view*.c over restack.c): the stacks through a frame
 * anywhere in them, frames hidden into their callers, and a function's
 * sandwich (its callees rooted at it, its callers inverted), each on a
 * result with an inlined chain, an unsymbolized frame and attributed
 * samples, and on one that recurses.
 */
#include "pmodel_internal.h"
#include "pprof.h"
#include "unit.h"
/* after unit.h, whose parameters would shadow its globals */
#include "profile_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Location of function name (one line), or of inner inlined into outer
 * (two lines, innermost first as pprof lists them), in d. */
static int view_loc(struct pmodel_dict *d, const char *outer, const char *inner, uint32_t *out)
{
	struct pmodel_line ln[2] = { { 0 } };
	const char *names[2] = { inner ? inner : outer, outer };
	uint32_t n = inner ? 2 : 1;

	for (uint32_t i = 0; i < n; i++) {
		struct pmodel_func f = { 0 };

		EMBER_FORWARD_IF_ERROR(pmodel_strtab_intern0(&d->str, names[i], &f.name));
		EMBER_FORWARD_IF_ERROR(pmodel_dict_func(d, &f, &ln[i].func));
	}
	return pmodel_dict_loc(d, 0, 0x1000 + d->locs.n, 0, ln, n, out);
}

/* main;work;inner 3 (work and inner one location, inner inlined, with
 * attributes "thread=t"), main;work 2 (work's own location), main;idle 4,
 * main;libx.so+0x10 1 (unsymbolized), other 5. */
static struct pmodel_result *views_result(void)
{
	struct pmodel_result *r = NULL;
	struct pmodel_map m = { .start = 0x7000, .limit = 0x8000 };
	uint32_t lmain, lwi, lwork, lidle, llib, lother, mid, nmain, n[5];
	struct pmodel_attr_part part = { 0, "thread=t", 3 };
	static const int64_t self[] = { 3, 2, 4, 1, 5 };
	struct pmodel_dict *d;

	if (pmodel_result_new("cpu:samples:count:cpu:nanoseconds", &r))
		return NULL;
	d = &r->dict;
	if (view_loc(d, "main", NULL, &lmain) || view_loc(d, "work", "inner", &lwi) ||
	    view_loc(d, "work", NULL, &lwork) || view_loc(d, "idle", NULL, &lidle) ||
	    view_loc(d, "other", NULL, &lother) ||
	    pmodel_strtab_intern0(&d->str, "/usr/lib/libx.so", &m.filename) ||
	    pmodel_dict_map(d, &m, &mid) || pmodel_dict_loc(d, mid + 1, 0x7010, 0, NULL, 0, &llib) ||
	    pmodel_dict_node(d, 0, lmain, &nmain) || pmodel_dict_node(d, nmain, lwi, &n[0]) ||
	    pmodel_dict_node(d, nmain, lwork, &n[1]) || pmodel_dict_node(d, nmain, lidle, &n[2]) ||
	    pmodel_dict_node(d, nmain, llib, &n[3]) || pmodel_dict_node(d, 0, lother, &n[4]) ||
	    EMBER_VEC_RESERVE(&r->self, pmodel_dict_nodes(d)))
		goto fail;
	while (r->self.n < pmodel_dict_nodes(d))
		r->self.v[r->self.n++] = 0;
	for (size_t i = 0; i < 5; i++)
		r->self.v[n[i]] = self[i];
	r->profiles = 2;
	r->period = 10;
	part.node = n[0];
	if (!pmodel_result_add_attrs(r, d, &part, 1))
		return r;
fail:
	pmodel_result_free(r);
	return NULL;
}

/* main;rec;rec;leaf 6, main;rec;leaf 3, main;other 1 (SREC). */
static struct pmodel_result *recursive_result(void)
{
	struct pprof_profile *p = mkprof(SREC, CREC, 3, T0);
	struct pmodel_result *r = NULL;
	char why[256];

	if (p && pmodel_result_from_pprof(p, "samples", &r, why, sizeof(why)))
		fprintf(stderr, "pmodel_result_from_pprof: %s\n", why);
	pprof_profile_free(p);
	return r;
}

/* The folded stacks of v (taken: freed here) into b, NUL-terminated; its
 * total, -1 on failure (-2: v lost the profile count or the period of
 * the results made here); its attributed rows into *attrs. */
static int64_t folded_of(struct pmodel_result *v, struct ember_buf *b, size_t *attrs)
{
	struct pmodel_result_info ri;
	bool mine;

	ember_buf_reset(b);
	if (!v || pmodel_write_folded(v, pmodel_write_buf, b) || ember_buf_putc(b, '\0')) {
		pmodel_result_free(v);
		return -1;
	}
	pmodel_result_info(v, &ri);
	if (attrs)
		*attrs = v->attr_rows.n;
	mine = (ri.profiles == 2 && ri.period == 10) || (ri.profiles == 1 && ri.period == 10 * SEC / 1000);
	pmodel_result_free(v);
	return mine ? ri.total : -2;
}

static struct pmodel_result *through(const struct pmodel_result *r, const char *name)
{
	struct pmodel_result *v = NULL;

	return pmodel_result_through(r, name, &v) ? NULL : v;
}

/* Every stack with the frame anywhere, whole: at the root, inside an
 * inlined chain, unsymbolized, below the root (where a root-first
 * focus= path finds nothing), none. */
static int test_pmodel__through_keeps_stacks_with_the_frame_anywhere(void)
{
	struct pmodel_result *r = views_result(), *rec = recursive_result();
	struct ember_buf b;
	size_t attrs = 0;

	CHECK(r && rec);
	ember_buf_init(&b, 1 << 20);
	CHECK_INT(folded_of(through(r, "work"), &b, &attrs), ==, 5);
	CHECK_STR(b.data, "main;work 2\nmain;work;inner 3\n");
	CHECK_INT(attrs, ==, 1);
	CHECK_INT(folded_of(through(r, "inner"), &b, &attrs), ==, 3);
	CHECK_STR(b.data, "main;work;inner 3\n");
	CHECK_INT(folded_of(through(r, "libx.so+0x10"), &b, &attrs), ==, 1);
	CHECK_STR(b.data, "main;libx.so+0x10 1\n");
	CHECK_INT(attrs, ==, 0);
	CHECK_INT(folded_of(through(r, "main"), &b, NULL), ==, 10);
	CHECK_INT(folded_of(through(r, "nothing"), &b, NULL), ==, 0);
	CHECK_STR(b.data, "");
	CHECK_INT(folded_of(through(rec, "leaf"), &b, NULL), ==, 9);
	CHECK_STR(b.data, "main;rec;leaf 3\nmain;rec;rec;leaf 6\n");
	ember_buf_release(&b);
	pmodel_result_free(r);
	pmodel_result_free(rec);
	return 0;
}

static bool named(void *ctx, const char *name)
{
	for (const char *const *n = ctx; *n; n++)
		if (strcmp(*n, name) == 0)
			return true;
	return false;
}

static struct pmodel_result *hidden(const struct pmodel_result *r, const char *const *names)
{
	struct pmodel_result *v = NULL;

	return pmodel_result_hide(r, named, (void *)names, &v) ? NULL : v;
}

/* A hidden frame's callees hang from its caller and its value is the
 * caller's: an outer frame of an inlined chain, a whole location, a leaf
 * whose stack merges with its caller's (attributes moved with it), the
 * root frame, every frame of a stack (dropped), recursion. */
static int test_pmodel__hide_collapses_frames_into_their_callers(void)
{
	static const char *const work[] = { "work", NULL }, *const inner[] = { "inner", NULL };
	static const char *const mainf[] = { "main", NULL }, *const other[] = { "other", NULL };
	static const char *const rec_[] = { "rec", NULL };
	struct pmodel_result *r = views_result(), *rec = recursive_result();
	struct ember_buf b;
	size_t attrs = 0;

	CHECK(r && rec);
	ember_buf_init(&b, 1 << 20);
	CHECK_INT(folded_of(hidden(r, work), &b, &attrs), ==, 15);
	CHECK_STR(b.data, "main 2\nmain;idle 4\nmain;inner 3\nmain;libx.so+0x10 1\nother 5\n");
	CHECK_INT(attrs, ==, 1);
	CHECK_INT(folded_of(hidden(r, inner), &b, &attrs), ==, 15);
	CHECK_STR(b.data, "main;idle 4\nmain;libx.so+0x10 1\nmain;work 5\nother 5\n");
	CHECK_INT(attrs, ==, 1);
	CHECK_INT(folded_of(hidden(r, mainf), &b, NULL), ==, 15);
	CHECK_STR(b.data, "idle 4\nlibx.so+0x10 1\nother 5\nwork 2\nwork;inner 3\n");
	CHECK_INT(folded_of(hidden(r, other), &b, NULL), ==, 10);
	CHECK_INT(folded_of(hidden(rec, rec_), &b, NULL), ==, 10);
	CHECK_STR(b.data, "main;leaf 9\nmain;other 1\n");
	ember_buf_release(&b);
	pmodel_result_free(r);
	pmodel_result_free(rec);
	return 0;
}

static struct pmodel_result *sandwich(const struct pmodel_result *r, const char *name,
				      enum pmodel_sandwich_side side)
{
	struct pmodel_result *v = NULL;

	return pmodel_result_sandwich(r, name, side, &v) ? NULL : v;
}

/* Callees rooted at the function, callers inverted from it to the root,
 * both of the function's total: an inlined chain (its part below the
 * function for callees, read backwards for callers), recursion counted
 * once from the outermost frame, a function no stack has. */
static int test_pmodel__sandwich_callers_inverted_and_callees(void)
{
	struct pmodel_result *r = views_result(), *rec = recursive_result();
	struct ember_buf b;
	size_t attrs = 0;

	CHECK(r && rec);
	ember_buf_init(&b, 1 << 20);
	CHECK_INT(folded_of(sandwich(r, "work", PMODEL_SANDWICH_CALLEES), &b, &attrs), ==, 5);
	CHECK_STR(b.data, "work 2\nwork;inner 3\n");
	CHECK_INT(attrs, ==, 1);
	CHECK_INT(folded_of(sandwich(r, "work", PMODEL_SANDWICH_CALLERS), &b, &attrs), ==, 5);
	CHECK_STR(b.data, "work;main 5\n");
	CHECK_INT(attrs, ==, 1);
	CHECK_INT(folded_of(sandwich(r, "inner", PMODEL_SANDWICH_CALLERS), &b, NULL), ==, 3);
	CHECK_STR(b.data, "inner;work;main 3\n");
	CHECK_INT(folded_of(sandwich(r, "inner", PMODEL_SANDWICH_CALLEES), &b, NULL), ==, 3);
	CHECK_STR(b.data, "inner 3\n");
	CHECK_INT(folded_of(sandwich(rec, "rec", PMODEL_SANDWICH_CALLEES), &b, NULL), ==, 9);
	CHECK_STR(b.data, "rec;leaf 3\nrec;rec;leaf 6\n");
	CHECK_INT(folded_of(sandwich(rec, "rec", PMODEL_SANDWICH_CALLERS), &b, NULL), ==, 9);
	CHECK_STR(b.data, "rec;main 9\n");
	CHECK_INT(folded_of(sandwich(rec, "leaf", PMODEL_SANDWICH_CALLERS), &b, NULL), ==, 9);
	CHECK_STR(b.data, "leaf;rec;main 3\nleaf;rec;rec;main 6\n");
	CHECK_INT(folded_of(sandwich(rec, "nothing", PMODEL_SANDWICH_CALLERS), &b, NULL), ==, 0);
	CHECK_STR(b.data, "");
	ember_buf_release(&b);
	pmodel_result_free(r);
	pmodel_result_free(rec);
	return 0;
}

/* The three in their order: through, then hide, then the sandwich. */
static int test_pmodel__view_applies_through_hide_sandwich_in_order(void)
{
	static const char *const idle[] = { "idle", NULL };
	struct pmodel_result *r = views_result(), *v = NULL;
	struct pmodel_view view = { .sz = sizeof(view), .through = "main", .hide = named,
				    .hide_ctx = (void *)idle, .sandwich = "main",
				    .side = PMODEL_SANDWICH_CALLEES };
	struct ember_buf b;

	CHECK(r);
	ember_buf_init(&b, 1 << 20);
	CHECK_INT(pmodel_result_view(r, &view, &v), ==, 0);
	CHECK_INT(folded_of(v, &b, NULL), ==, 10);
	CHECK_STR(b.data, "main 4\nmain;libx.so+0x10 1\nmain;work 2\nmain;work;inner 3\n");
	view = (struct pmodel_view){ .sz = sizeof(view) };
	CHECK_INT(pmodel_result_view(r, &view, &v), ==, 0);
	CHECK_INT(folded_of(v, &b, NULL), ==, 15);
	ember_buf_release(&b);
	pmodel_result_free(r);
	return 0;
}

static const struct unit_case cases[] = {
	UNIT_CASE(test_pmodel__through_keeps_stacks_with_the_frame_anywhere),
	UNIT_CASE(test_pmodel__hide_collapses_frames_into_their_callers),
	UNIT_CASE(test_pmodel__sandwich_callers_inverted_and_callees),
	UNIT_CASE(test_pmodel__view_applies_through_hide_sandwich_in_order),
};

UNIT_MAIN_QUIET(cases)
