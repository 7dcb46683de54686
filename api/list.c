/*
 * list.c - GET /api/v1/artifacts/ID: the candidates stored for a build
 * ID, as JSON.  `ember upload` asks here first and skips files whose
 * sha256 is already stored, so re-running a CI job uploads nothing twice.
 */
#include "api_internal.h"
#include "inspect.h"

#include <jansson.h>
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

static int add_candidate(const struct store_artifact *a, void *arg)
{
	struct inspect_info info = { .flags = a->flags, .dwarf_version = a->dwarf_version };
	char features[160];
	json_t *o = json_pack("{s:s, s:I, s:o, s:s, s:i, s:s, s:I}",
		"sha256", a->sha256, "size", (json_int_t)a->size,
		"kinds", kinds_json(a->kinds),
		"features", inspect_flags_str(&info, features, sizeof(features)),
		"dwarf_version", a->dwarf_version, "name", a->name,
		"uploaded", (json_int_t)a->mtime);

	return o ? json_array_append_new(arg, o) : -1;
}

static json_t *best_json(struct store *s, const char *id, enum store_want want)
{
	struct store_artifact a;

	return store_find_best(s, id, want, &a) ? json_null() : json_string(a.sha256);
}

enum MHD_Result api_serve_list(struct api_server *srv, struct MHD_Connection *c,
			       struct api_request *req)
{
	const char *id = req->route.build_id;
	json_t *list = json_array();
	json_t *o;
	char *text;

	if (!list || store_list(srv->store, id, add_candidate, list)) {
		json_decref(list);
		return MHD_NO;
	}
	o = json_pack("{s:s, s:o, s:{s:o, s:o, s:o}}", "build_id", id, "artifacts", list,
		      "best", "debuginfo", best_json(srv->store, id, STORE_WANT_DEBUGINFO),
		      "executable", best_json(srv->store, id, STORE_WANT_EXECUTABLE),
		      "symbols", best_json(srv->store, id, STORE_WANT_SYMBOLS));
	text = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	if (!text)
		return MHD_NO;
	return api_respond_owned(srv, c, req, MHD_HTTP_OK, "application/json", text,
				 strlen(text));
}
