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
	struct pmodel_result *r = focus_result(), *rec = recursive_result();
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
	struct pmodel_result *r = focus_result(), *rec = recursive_result();
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
	struct pmodel_result *r = focus_result(), *rec = recursive_result();
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
	struct pmodel_result *r = focus_result(), *v = NULL;
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
