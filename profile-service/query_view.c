/*
 * query_view.c - the views a query or a diff asks for (through=, hide=,
 * sandwich=, sandwich_side=; docs/http-api.md, "Views"), applied to each
 * merge before it is written: the profile model rewrites the stacks
 * (pmodel_result_view); the hide pattern is an RE2 one compiled here
 * (relabel_regex.cc: anchored at both ends as the selectors' =~ is,
 * within PROFSVC_REGEX_MAX_MEM, so its cost is bounded), asked once per
 * frame of the merge's locations.
 */
#include "profsvc_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static bool hide_match(void *ctx, const char *name)
{
	return profsvc_regex_match(ctx, name, strlen(name), NULL);
}

int profsvc_view_init(struct profsvc_view *v, const struct profsvc_output *o, char *why,
		      size_t why_size)
{
	char reason[256] = "";
	int err = 0;

	*v = (struct profsvc_view){ .v = { .sz = sizeof(v->v) } };
	if (!o)
		return 0;
	v->v.through = o->through && *o->through ? o->through : NULL;
	v->v.sandwich = o->sandwich && *o->sandwich ? o->sandwich : NULL;
	v->v.side = o->callers ? PMODEL_SANDWICH_CALLERS : PMODEL_SANDWICH_CALLEES;
	if (o->hide && *o->hide) {
		err = profsvc_regex_new(o->hide, strlen(o->hide), &v->hide, reason, sizeof(reason));
		if (err && err != -ENOMEM) { /* too costly a pattern too: the request's fault */
			snprintf(why, why_size, "hide: '%.64s' is not a pattern: %s", o->hide,
				 reason);
			err = -EINVAL;
		}
		v->v.hide = hide_match;
		v->v.hide_ctx = v->hide;
	}
	v->any = v->v.through || v->v.sandwich || v->hide;
	return err;
}

void profsvc_view_release(struct profsvc_view *v)
{
	profsvc_regex_free(v->hide);
	v->hide = NULL;
}

int profsvc_result_replace(struct ember_mem_account *acct, struct pmodel_result **r,
			   struct pmodel_result *next, char *why, size_t why_size)
{
	int err = ember_mem_account_charge(acct, pmodel_result_bytes(next));

	if (err) {
		pmodel_result_free(next);
		snprintf(why, why_size, "%s",
			 err == -E2BIG ? "query: its view of the merge is past the request's share "
					 "of the server's memory (a narrower selection or range)"
				       : "query: the server's memory is taken by other requests "
					 "now: ask again");
		return err;
	}
	pmodel_result_free(*r);
	*r = next;
	return 0;
}

int profsvc_view_apply(const struct profsvc_view *v, struct ember_mem_account *acct,
		       struct pmodel_result **r, char *why, size_t why_size)
{
	struct pmodel_result *next;

	if (!v || !v->any)
		return 0;
	EMBER_FORWARD_IF_ERROR(pmodel_result_view(*r, &v->v, &next));
	return profsvc_result_replace(acct, r, next, why, why_size);
}
