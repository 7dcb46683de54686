/*
 * profile_source.c - GET /api/v1/source and GET /api/v1/diff/source over
 * HTTP: a function's source view (docs/http-api.md, "Source view").  The
 * selection (a diff's two, under the names /api/v1/diff takes), the
 * function, an optional file and the format read here; the answer made
 * by the profile service (profsvc_source, profsvc_source_diff: merged,
 * per line, the files' text from the debuginfo store) and sent with
 * X-Ember-Profiles (a diff's X-Ember-Base-Profiles and
 * X-Ember-New-Profiles).
 */
#include "api_profiles.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

static int source_diff(const struct api_profile_ctx *x, struct MHD_Connection *c,
		       const struct profsvc_source_opts *o, struct profsvc_answer *a, char *why,
		       size_t size)
{
	struct pstore_selection bs, ns;

	if (api_selection_from_params(c, "base_", NULL, &bs, why, size) ||
	    api_selection_from_params(c, "new_", NULL, &ns, why, size))
		return -EINVAL;
	return profsvc_source_diff(x->svc, &x->ro, &bs, &ns, o, a, why, size);
}

enum MHD_Result api_profile_source(struct api_server *srv, struct MHD_Connection *c,
				   struct api_request *req, const struct api_profile_ctx *x)
{
	struct profsvc_source_opts o = { .sz = sizeof(o), .function = api_param(c, "function"),
					 .file = api_param(c, "file"),
					 .format = api_param(c, "format") };
	bool diff = req->route.ep == API_EP_PROFILE_DIFF_SOURCE;
	struct pstore_selection sel;
	struct profsvc_answer a = { 0 }; /* released by api_profile_answer */
	char why[512] = "", bp[24], np[24];
	const char *headers[] = { diff ? "X-Ember-Base-Profiles" : "X-Ember-Profiles", diff ? bp : np,
				  diff ? "X-Ember-New-Profiles" : NULL, np, NULL };
	int err;

	if (diff) {
		err = source_diff(x, c, &o, &a, why, sizeof(why));
	} else if (api_selection_from_params(c, NULL, NULL, &sel, why, sizeof(why))) {
		err = -EINVAL;
	} else {
		err = profsvc_source(x->svc, &x->ro, &sel, &o, &a, why, sizeof(why));
	}
	snprintf(bp, sizeof(bp), "%" PRIu64, a.base_profiles);
	snprintf(np, sizeof(np), "%" PRIu64, a.profiles);
	return api_profile_answer(srv, c, req, x, err, &a, headers, why);
}
