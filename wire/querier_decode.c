/*
 * querier_decode.c - Connect's two codecs on the query API's messages
 * (querier.h): a request's body as its method's request message (gzip
 * undone when the request says so, then the binary protobuf unpacked, or
 * the JSON read by pb_json_read.c, as the message the method takes), and
 * an answer's message packed or written as JSON (pb_json_write.c).  The
 * Connect route (api/connect.c) and its fuzz target
 * (tests/fuzz/fuzz_connect.c) call it.
 */
#include "querier.h"
#include "wire_internal.h"

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

/* body, JSON, as a message of md (querier_decode's limits). */
static int read_json(const ProtobufCMessageDescriptor *md, const void *body, size_t len,
		     struct ember_mem_account *acct, ProtobufCMessage **msg, char *why,
		     size_t why_size)
{
	struct ember_diag d = ember_diag_make(why, why_size);
	const struct wire_json_read o = {
		.tag = "",
		.max_input_bytes = len,
		.max_memory_bytes = QUERIER_JSON_MEMORY_PER_BYTE * len + 4096,
		.max_nesting = QUERIER_JSON_MAX_NESTING,
		.max_entries = len + 1, /* an entry takes a byte at least */
		.account = acct,
		.d = &d,
	};
	int err = wire_json_read_message(md, body, len, &o, msg);

	if (err == -PPROF_ERR_PROTOBUF || err == -PPROF_ERR_INVALID)
		return -EINVAL;
	return err;
}

int querier_decode(const char *method, enum querier_codec codec, bool gzip, const void *body,
		   size_t len, struct ember_buf *plain, ProtobufCMessage **msg, char *why,
		   size_t why_size)
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
	if (codec == QUERIER_JSON)
		return read_json(in, body, len, plain->acct, msg, why, why_size);
	*msg = protobuf_c_message_unpack(in, NULL, len, body);
	if (!*msg) {
		snprintf(why, why_size, "the body is not a %s", in->short_name);
		return -EINVAL;
	}
	return 0;
}

int querier_encode(const ProtobufCMessage *m, enum querier_codec codec, struct ember_buf *out)
{
	size_t n;

	if (codec == QUERIER_JSON)
		return wire_json_write_message(m, out);
	n = protobuf_c_message_get_packed_size(m);
	EMBER_FORWARD_IF_ERROR(ember_buf_reserve(out, n + 1));
	out->len += protobuf_c_message_pack(m, (uint8_t *)out->data + out->len);
	return 0;
}

int querier_encode_json_packed(const ProtobufCMessageDescriptor *md, const void *packed,
			       size_t len, struct ember_buf *out)
{
	ProtobufCMessage *m = protobuf_c_message_unpack(md, NULL, len, packed);
	int err;

	if (!m)
		return -EINVAL;
	err = wire_json_write_message(m, out);
	protobuf_c_message_free_unpacked(m, NULL);
	return err;
}
