/*
 * route.c - request paths to endpoints.
 *
 * The debuginfod paths and their error answers follow the elfutils 0.188
 * server (debuginfod-protocol reference): a malformed build ID, artifact
 * type or path gets 503, which the client treats as "not here" (and, for
 * /section, as "fall back to the whole file").  Anything after the
 * artifact type of /debuginfo and /executable is ignored, as there.
 * A path that is no route at all gets 404, not the 503 elfutils gives it:
 * load balancers and monitors read a 503 as an outage, and no debuginfod
 * client asks for such a path.
 */
#include "api_internal.h"
#include "api_profiles.h"
#include "inspect.h"

#include <string.h>

static const char *const endpoint_names[API_EP_COUNT] = {
	[API_EP_OTHER] = "other",         [API_EP_ROOT] = "root",
	[API_EP_HEALTH] = "health",       [API_EP_METRICS] = "metrics",
	[API_EP_DEBUGINFO] = "debuginfo", [API_EP_EXECUTABLE] = "executable",
	[API_EP_SOURCE] = "source",       [API_EP_SECTION] = "section",
	[API_EP_LIST] = "list",           [API_EP_UPLOAD] = "upload",
	[API_EP_UNWIND] = "unwind",       [API_EP_SYMBOLIZE] = "symbolize",
	[API_EP_SYMBOLIZE_PPROF] = "symbolize_pprof",
	[API_EP_LIST_ALL] = "artifacts", [API_EP_WEB] = "web",
	[API_EP_PROFILE_INGEST] = "profiles",     [API_EP_PYROSCOPE_INGEST] = "ingest",
	[API_EP_OTLP_PROFILES] = "otlp_profiles",
	[API_EP_PROFILE_QUERY] = "query",         [API_EP_PROFILE_DIFF] = "diff",
	[API_EP_PROFILE_LABELS] = "labels",       [API_EP_PROFILE_TYPES] = "profile_types",
	[API_EP_PYROSCOPE_RENDER] = "pyroscope_render",
	[API_EP_PYROSCOPE_RENDER_DIFF] = "pyroscope_render_diff",
	[API_EP_PYROSCOPE_LABELS] = "pyroscope_labels",
	[API_EP_PYROSCOPE_LABEL_VALUES] = "pyroscope_label_values",
	[API_EP_PROFILE_SERIES] = "series",       [API_EP_PROFILE_COVERAGE] = "coverage",
	[API_EP_TENANT_USAGE] = "tenant_usage",  [API_EP_CONNECT] = "connect",
	[API_EP_PROFILE_SOURCE] = "source_view", [API_EP_PROFILE_DIFF_SOURCE] = "diff_source_view",
};

const char *api_endpoint_name(enum api_endpoint ep)
{
	return ep < API_EP_COUNT ? endpoint_names[ep] : "other";
}

static void fail(struct api_route *r, int status, const char *why)
{
	r->status = status;
	r->error = why;
}

/* Lowercase hex, even length, at least 2.  Longer than we store: 404. */
static int take_build_id(const char **p, struct api_route *r)
{
	const char *s = *p, *end = strchrnul(s, '/');
	size_t n = (size_t)(end - s);

	for (const char *q = s; q < end; q++)
		if (!((*q >= '0' && *q <= '9') || (*q >= 'a' && *q <= 'f')))
			n = 0;
	if (n < 2 || n % 2) {
		fail(r, 503, "invalid buildid");
		return -1;
	}
	if (n >= sizeof(r->build_id)) {
		fail(r, 404, "not found");
		return -1;
	}
	memcpy(r->build_id, s, n);
	r->build_id[n] = '\0';
	*p = end;
	return 0;
}

static bool take_word(const char **p, const char *word)
{
	size_t n = strlen(word);

	if (strncmp(*p, word, n) != 0 || ((*p)[n] != '/' && (*p)[n] != '\0'))
		return false;
	*p += n;
	return true;
}

static void parse_source(const char *rest, struct api_route *r)
{
	if (*rest != '/' || rest[1] == '\0') {
		fail(r, 503, "invalid source suffix");
		return;
	}
	if (strlen(rest) >= sizeof(r->path)) {
		fail(r, 404, "not found");
		return;
	}
	strcpy(r->path, rest); /* keeps the leading '/': an absolute path */
	inspect_path_canonical(r->path);
	r->ep = API_EP_SOURCE;
}

static void parse_section(const char *rest, struct api_route *r)
{
	if (*rest != '/' || rest[1] == '\0' || strchr(rest + 1, '/')) {
		fail(r, 503, "invalid section name");
		return;
	}
	if (strlen(rest + 1) >= sizeof(r->path)) {
		fail(r, 404, "not found");
		return;
	}
	strcpy(r->path, rest + 1);
	r->ep = API_EP_SECTION;
}

static void parse_buildid(const char *p, struct api_route *r)
{
	if (take_build_id(&p, r))
		return;
	if (*p != '/' || p[1] == '\0') {
		fail(r, 503, "/buildid/ webapi error, need buildid");
		return;
	}
	p++;
	if (take_word(&p, "debuginfo"))
		r->ep = API_EP_DEBUGINFO;
	else if (take_word(&p, "executable"))
		r->ep = API_EP_EXECUTABLE;
	else if (take_word(&p, "source"))
		parse_source(p, r);
	else if (take_word(&p, "section"))
		parse_section(p, r);
	else
		fail(r, 503, "invalid artifacttype");
}

static void parse_artifacts(const char *p, struct api_route *r)
{
	if (take_build_id(&p, r))
		return;
	if (*p == '\0' || (p[0] == '/' && p[1] == '\0')) {
		r->ep = API_EP_LIST;
		return;
	}
	p++;
	r->ep = API_EP_UPLOAD;
	if (take_word(&p, "debuginfo"))
		r->kind = API_UPLOAD_DEBUGINFO;
	else if (take_word(&p, "executable"))
		r->kind = API_UPLOAD_EXECUTABLE;
	else if (take_word(&p, "sources"))
		r->kind = API_UPLOAD_SOURCES;
	else
		fail(r, 404, "unknown artifact kind: use debuginfo, executable or sources");
}

static void parse_unwind(const char *p, struct api_route *r)
{
	if (take_build_id(&p, r))
		return;
	if (*p && strcmp(p, "/") != 0)
		fail(r, 404, "not found");
	else
		r->ep = API_EP_UNWIND;
}

void api_route_parse(const char *url, struct api_route *r)
{
	memset(r, 0, sizeof(*r));
	if (strcmp(url, "/") == 0)
		r->ep = API_EP_ROOT;
	else if (strcmp(url, "/healthz") == 0)
		r->ep = API_EP_HEALTH;
	else if (strcmp(url, "/metrics") == 0)
		r->ep = API_EP_METRICS;
	else if (strncmp(url, "/buildid/", 9) == 0)
		parse_buildid(url + 9, r);
	else if (strncmp(url, "/api/v1/artifacts/", 18) == 0)
		parse_artifacts(url + 18, r);
	else if (strcmp(url, "/api/v1/symbolize") == 0)
		r->ep = API_EP_SYMBOLIZE;
	else if (strcmp(url, "/api/v1/symbolize/pprof") == 0)
		r->ep = API_EP_SYMBOLIZE_PPROF;
	else if (strncmp(url, "/api/v1/unwind/", 15) == 0)
		parse_unwind(url + 15, r);
	else if (strcmp(url, "/api/v1/artifacts") == 0)
		r->ep = API_EP_LIST_ALL;
	else if (api_web_path(url))
		r->ep = API_EP_WEB;
	else if (api_profile_route_parse(url, r))
		; /* a profile route (profile_routes.c) */
	else
		fail(r, 404, "webapi error, unrecognized path");
}
