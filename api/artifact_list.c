/*
 * artifact_list.c - GET /api/v1/artifacts/ID: the candidates stored for a build
 * ID, as JSON.  `ember upload` asks here first and skips files whose
 * sha256 is already stored, so re-running a CI job uploads nothing twice.
 */
#include "api_internal.h"
#include "inspect.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_t *kinds_json(unsigned kinds)
{
	json_t *a = json_array();

	if (kinds & STORE_KIND_DEBUGINFO)
		json_array_append_new(a, json_string("debuginfo"));
	if (kinds & STORE_KIND_EXECUTABLE)
		json_array_append_new(a, json_string("executable"));
	return a;
}

int api_list_add_candidate(const struct store_artifact *a, void *arg)
{
	struct inspect_info info = { .flags = a->flags, .dwarf_version = a->dwarf_version };
	char features[160], name[3 * STORE_NAME_MAX];
	json_t *o;

	/* escaped at upload; a record of an older version is escaped here,
	 * or jansson would refuse the whole listing */
	if (ember_name_escape(a->name, name, sizeof(name)) < 0)
		snprintf(name, sizeof(name), "?");
	o = json_pack("{s:s, s:I, s:o, s:s, s:i, s:s, s:I}",
		"sha256", a->sha256, "size", (json_int_t)a->size,
		"kinds", kinds_json(a->kinds),
		"features", inspect_flags_str(&info, features, sizeof(features)),
		"dwarf_version", a->dwarf_version, "name", name,
		"uploaded", (json_int_t)a->mtime);

	return o && json_array_append_new(arg, o) == 0 ? 0 : -ENOMEM;
}

/* The sha256 of the best candidate for want as JSON (null when there is
 * none) into *out: 0, or the store's error. */
static int best_json(struct store *s, const char *id, enum store_want want, json_t **out)
{
	struct store_artifact a;
	int err = store_find_best(s, id, want, &a);

	if (err && err != -ENOENT)
		return err;
	*out = err ? json_null() : json_string(a.sha256);
	return *out ? 0 : -ENOMEM;
}

/* The listing of id: 0 and *out (the caller's), or a negative errno. */
static int listing_json(struct store *s, const char *id, json_t **out)
{
	static const enum store_want wants[3] = { STORE_WANT_DEBUGINFO, STORE_WANT_EXECUTABLE,
						  STORE_WANT_SYMBOLS };
	json_t *list = json_array(), *best[3] = { NULL, NULL, NULL };
	int err = list ? store_list(s, id, api_list_add_candidate, list) : -ENOMEM;

	for (int i = 0; !err && i < 3; i++)
		err = best_json(s, id, wants[i], &best[i]);
	if (!err) {
		*out = json_pack("{s:s, s:o, s:{s:o, s:o, s:o}}", "build_id", id, "artifacts",
				 list, "best", "debuginfo", best[0], "executable", best[1],
				 "symbols", best[2]);
		return *out ? 0 : -ENOMEM; /* json_pack took the references either way */
	}
	json_decref(list);
	for (int i = 0; i < 3; i++)
		json_decref(best[i]);
	return err;
}

enum MHD_Result api_serve_list(struct api_server *srv, struct MHD_Connection *c,
			       struct api_request *req)
{
	json_t *o = NULL;
	int err = listing_json(srv->store, req->route.build_id, &o);

	return api_respond_json_or(srv, c, req, err, o);
}
