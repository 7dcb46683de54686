/*
 * view.c - the views of a query applied in one order (pmodel_result_view):
 * the stacks through a frame (view_through.c), frames hidden
 * (view_hide.c), one side of a function's sandwich (view_sandwich.c).
 * The profile service applies them to a merge before any output, and to
 * both sides of a diff.
 */
#include "pmodel_internal.h"

/* r replaced by next (made from it; r freed unless it is the original). */
static void step(const struct pmodel_result *orig, struct pmodel_result **r,
		 struct pmodel_result *next)
{
	if (*r != orig)
		pmodel_result_free(*r);
	*r = next;
}

int pmodel_result_view(const struct pmodel_result *r, const struct pmodel_view *v,
		       struct pmodel_result **out)
{
	struct pmodel_result *cur = (struct pmodel_result *)r, *next = NULL;
	int err = 0;

	if (v && v->through && !(err = pmodel_result_through(cur, v->through, &next)))
		step(r, &cur, next);
	if (!err && v && v->hide && !(err = pmodel_result_hide(cur, v->hide, v->hide_ctx, &next)))
		step(r, &cur, next);
	if (!err && v && v->sandwich &&
	    !(err = pmodel_result_sandwich(cur, v->sandwich, v->side, &next)))
		step(r, &cur, next);
	if (!err && cur == r)
		err = pmodel_result_copy(r, &cur);
	if (err) {
		if (cur != r)
			pmodel_result_free(cur);
		return err;
	}
	*out = cur;
	return 0;
}
