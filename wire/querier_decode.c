/*
 * querier_decode.c - a Connect request's body as its method's request
 * message (querier.h): gzip undone when the request says so, then the
 * binary protobuf unpacked as the message the method takes.  The Connect
 * route (api/connect.c) and its fuzz target (tests/fuzz/fuzz_connect.c)
 * call it.
 */
#include "pprof.h"
#include "querier.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* The methods whose request Ember decodes, and its message. */
static const struct {
	const char *method;
	const ProtobufCMessageDescriptor *in;
} methods[] = {
	{ "ProfileTypes", &querier__v1__profile_types_request__descriptor },
	{ "LabelNames", &types__v1__label_names_request__descriptor },
	{ "LabelValues", &types__v1__label_values_request__descriptor },
	{ "Series", &querier__v1__series_request__descriptor },
	{ "SelectMergeStacktraces", &querier__v1__select_merge_stacktraces_request__descriptor },
	{ "SelectMergeProfile", &querier__v1__select_merge_profile_request__descriptor },
	{ "SelectMergeSpanProfile", &querier__v1__select_merge_span_profile_request__descriptor },
	{ "SelectSeries", &querier__v1__select_series_request__descriptor },
	{ "Diff", &querier__v1__diff_request__descriptor },
	{ "GetProfileStats", &types__v1__get_profile_stats_request__descriptor },
};

static const ProtobufCMessageDescriptor *input_of(const char *method)
{
	for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
		if (strcmp(method, methods[i].method) == 0)
			return methods[i].in;
	return NULL;
}

int querier_decode(const char *method, bool gzip, const void *body, size_t len,
		   struct ember_buf *plain, ProtobufCMessage **msg, char *why, size_t why_size)
{
	const ProtobufCMessageDescriptor *in = input_of(method);
	char z[256] = "";

	*msg = NULL;
	if (!in)
		return -ENOENT;
	if (gzip) {
		if (pprof_decompress(body, len, plain, z, sizeof(z))) {
			snprintf(why, why_size, "the gzip body does not decompress: %s", z);
			return -EINVAL;
		}
		body = plain->data ? plain->data : "";
		len = plain->len;
	}
	*msg = protobuf_c_message_unpack(in, NULL, len, body);
	if (!*msg) {
		snprintf(why, why_size, "the body is not a %s", in->short_name);
		return -EINVAL;
	}
	return 0;
}
