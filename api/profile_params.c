/*
 * profile_params.c - the query parameters of the profile routes
 * (docs/http-api.md, "Profiles", Conventions), read from the request by
 * libmicrohttpd (percent-decoded): a selection (selector, profile type,
 * time range) under a prefix with fallbacks.  The times themselves, as
 * Pyroscope and Grafana write them, are wire/'s (pyroscope.h).
 */
#include "api_profiles.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define SEC_NS ((int64_t)1000000000)
#define DEFAULT_RANGE_NS (3600 * SEC_NS)

const char *api_param(struct MHD_Connection *c, const char *name)
{
	return MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, name);
}

/* The parameter name under prefix, else unprefixed, else alt. */
static const char *param3(struct MHD_Connection *c, const char *prefix, const char *name,
			  const char *alt, const char **used)
{
	char full[64];
	const char *v = NULL;

	if (prefix && *prefix) {
		snprintf(full, sizeof(full), "%s%s", prefix, name);
		if ((v = api_param(c, full)))
			*used = prefix;
	}
	if (!v && alt && (v = api_param(c, alt)))
		*used = alt;
	if (!v && (v = api_param(c, name)))
		*used = "";
	return v;
}

static int time_param(struct MHD_Connection *c, const char *prefix, const char *name,
		      const char *name2, const char *alt, int64_t now, int64_t dflt, int64_t *out,
		      char *why, size_t why_size)
{
	const char *used = "", *v = param3(c, prefix, name, alt, &used);

	if (!v && name2)
		v = param3(c, prefix, name2, NULL, &used);
	if (!v) {
		*out = dflt;
		return 0;
	}
	if (pyro_parse_time(v, now, out)) {
		snprintf(why, why_size,
			 "%s%s: '%.64s' is not a time (now, now-1h, RFC 3339 or an epoch count)\n",
			 used == alt ? "" : used, used == alt ? alt : name, v);
		return -EINVAL;
	}
	return 0;
}

int api_selection_from_params(struct MHD_Connection *c, const struct api_request *req,
			      const char *prefix,
			      const struct api_selection_names *alt,
			      struct pstore_selection *sel, char *why, size_t why_size)
{
	int64_t now = profsvc_now_ns();
	const char *used = "";

	*sel = (struct pstore_selection){ .mem = req->acct };
	sel->selector = param3(c, prefix, "query", alt ? alt->query : NULL, &used);
	sel->type = api_param(c, "type");
	if (time_param(c, prefix, "to", "until", alt ? alt->to : NULL, now, now, &sel->to_ns, why,
		       why_size))
		return -EINVAL;
	if (time_param(c, prefix, "from", NULL, alt ? alt->from : NULL, now,
		       sel->to_ns - DEFAULT_RANGE_NS, &sel->from_ns, why, why_size))
		return -EINVAL;
	if (sel->from_ns >= sel->to_ns) {
		snprintf(why, why_size, "%sfrom: the range is empty (from is not before to)\n",
			 prefix ? prefix : "");
		return -EINVAL;
	}
	return 0;
}
