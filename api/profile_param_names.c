/*
 * profile_param_names.c - the query parameters each of Ember's own profile
 * read routes takes (docs/http-api.md, "Profiles", Conventions); any other
 * is refused 400 with its name, so a misspelt one (`base=` for
 * `base_query=`) is never silently ignored into a plausible wrong answer.
 *
 * Pyroscope's routes (/pyroscope/...) are not checked: Grafana and
 * Pyroscope's clients send parameters of their own there (groupBy,
 * aggregation, ...) that Ember has no use for and must accept.
 */
#include "api_profiles.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* A selection's names (api_selection_from_params). */
#define SELECTION "query", "type", "from", "to", "until"
/* The views of a query or a diff (profsvc_output's through, hide, sandwich). */
#define VIEWS "through", "hide", "sandwich", "sandwich_side"

static const char *const query_names[] = {
	SELECTION, "format", "span_id", "trace_id", "focus", "limit", "width", "title",
	"icicle", "max_nodes", "unsymbolized", VIEWS,
	"s", /* the flame graph SVG's search, read by its script in a browser */
	NULL
};
static const char *const diff_names[] = {
	SELECTION, "format", "limit", "title", "normalize", "min_abs_pct", "min_rel", "min_z", "s",
	VIEWS,
	"unsymbolized", "focus", "base_query", "base_from", "base_to", "base_until", "base_focus",
	"new_query", "new_from", "new_to", "new_until", "new_focus",
	"leftQuery", "leftFrom", "leftUntil", "rightQuery", "rightFrom", "rightUntil", NULL
};
static const char *const discovery_names[] = { SELECTION, NULL };
static const char *const series_names[] = {
	SELECTION, "group_by", "step", "aggregation", "limit", NULL
};
static const char *const coverage_names[] = { SELECTION, "limit", NULL };
static const char *const source_names[] = { SELECTION, "function", "file", "format", NULL };
static const char *const diff_source_names[] = {
	SELECTION, "function", "file", "format", "base_query", "base_from", "base_to",
	"base_until", "new_query", "new_from", "new_to", "new_until", NULL
};

/* The names route ep takes, or NULL: not checked. */
static const char *const *names_of(enum api_endpoint ep)
{
	switch (ep) {
	case API_EP_PROFILE_QUERY:
		return query_names;
	case API_EP_PROFILE_DIFF:
		return diff_names;
	case API_EP_PROFILE_LABELS:
	case API_EP_PROFILE_TYPES:
		return discovery_names;
	case API_EP_PROFILE_SERIES:
		return series_names;
	case API_EP_PROFILE_COVERAGE:
		return coverage_names;
	case API_EP_PROFILE_SOURCE:
		return source_names;
	case API_EP_PROFILE_DIFF_SOURCE:
		return diff_source_names;
	default:
		return NULL;
	}
}

struct names_walk {
	const char *const *known;
	const char *unknown; /* the first not known, pointing into the request */
};

static enum MHD_Result check_name(void *cls, enum MHD_ValueKind kind, const char *key,
				  const char *value)
{
	struct names_walk *w = cls;

	(void)kind;
	(void)value;
	for (const char *const *n = w->known; *n; n++)
		if (key && strcmp(key, *n) == 0)
			return MHD_YES;
	w->unknown = key ? key : "";
	return MHD_NO;
}

int api_params_check(struct MHD_Connection *c, enum api_endpoint ep, char *why,
		     size_t why_size)
{
	struct names_walk w = { names_of(ep), NULL };
	size_t n;

	if (!w.known)
		return 0;
	MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, check_name, &w);
	if (!w.unknown)
		return 0;
	n = (size_t)snprintf(why, why_size, "%.64s: unknown parameter; this route takes",
			     w.unknown);
	for (const char *const *p = w.known; *p && n < why_size; p++)
		n += (size_t)snprintf(why + n, why_size - n, "%s %s", p == w.known ? "" : ",",
				      *p);
	return -EINVAL;
}
