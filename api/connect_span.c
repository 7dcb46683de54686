/*
 * connect_span.c - SelectMergeSpanProfile of Pyroscope's query API over
 * Connect (connect.c routes it; docs/http-api.md, "Pyroscope's query API
 * (Connect)"): the flame graph of the samples linked to span_selector's
 * span IDs, GET /api/v1/query?span_id=ID,... (the store's span links,
 * pstore_link_filter) as SelectMergeStacktraces writes it.
 */
#include "api_profiles.h"
#include "querier.pb-c.h"

#include <errno.h>

enum MHD_Result api_connect_select_span(struct api_server *srv, struct MHD_Connection *c,
					struct api_request *req, const struct api_profile_ctx *x,
					const struct ProtobufCMessage *m)
{
	const Querier__V1__SelectMergeSpanProfileRequest *in = (const void *)m;
	const char *bad = "span_selector: at least one span ID (16 hex digits)";
	struct pstore_selection sel;
	struct api_links links;
	struct api_focus focus; /* none: the request has no stack selector */
	char why[256] = "";
	int err = in->n_span_selector ? api_connect_select_of(in->profile_typeid,
							      in->label_selector, in->start,
							      in->end, &sel, &bad)
				      : -EINVAL;

	if (err)
		return api_profile_text(srv, c, req, 400, bad, NULL);
	if (in->format > QUERIER__V1__PROFILE_FORMAT__PROFILE_FORMAT_FLAMEGRAPH)
		return api_profile_text(srv, c, req, 501,
					"only the flame graph format is answered", NULL);
	err = api_connect_filters(NULL, in->span_selector, in->n_span_selector, NULL, 0, &links,
				  &focus, &sel, why, sizeof(why));
	if (err)
		return api_profile_text(srv, c, req, 400, why, NULL);
	return api_connect_flamegraph(srv, c, req, x, &sel, in->max_nodes, true);
}
