/*
 * view.c - the views of a query applied in one order (pmodel_result_view):
 * the stacks through a frame (view_through.c), frames hidden
 * (view_hide.c), one side of a function's sandwich (view_sandwich.c).
 * The profile service applies them to a merge before any output, and to
 * both sides of a diff.
 */
#include "pmodel_internal.h"

/* Step k (0 through, 1 hide, 2 sandwich) of v on cur into *next; *next
 * NULL when v does not ask for it. */
static int view_step(const struct pmodel_view *v, int k, const struct pmodel_result *cur,
		     struct pmodel_result **next)
{
	*next = NULL;
	if (k == 0 && v->through)
		return pmodel_result_through(cur, v->through, next);
	if (k == 1 && v->hide)
		return pmodel_result_hide(cur, v->hide, v->hide_ctx, next);
	if (k == 2 && v->sandwich)
		return pmodel_result_sandwich(cur, v->sandwich, v->side, next);
	return 0;
}

int pmodel_result_view(const struct pmodel_result *r, const struct pmodel_view *v,
		       struct pmodel_result **out)
{
	struct pmodel_result *owned = NULL, *next;
	int err = 0;

	for (int k = 0; v && !err && k < 3; k++) {
		err = view_step(v, k, owned ? owned : r, &next);
		if (!err && next) {
			pmodel_result_free(owned);
			owned = next;
		}
	}
	if (!err && !owned)
		err = pmodel_result_copy(r, &owned);
	if (err) {
		pmodel_result_free(owned);
		return err;
	}
	*out = owned;
	return 0;
}
