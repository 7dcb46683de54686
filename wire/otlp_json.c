/*
 * otlp_json.c - an ExportProfilesServiceRequest in OTLP's JSON encoding
 * (the OTLP specification of opentelemetry-proto v1.11.0, "JSON Protobuf
 * Encoding": proto3's JSON mapping, except trace and span IDs as hex)
 * read into the protobuf-c message that otlp_decode.c unpacks from
 * protobuf, so both encodings share every later phase (otlp_decode_json).
 *
 * The reading is pb_json_read.c's (the mapping, driven by the message's
 * descriptors); what is OTLP's is here: the hex IDs, and the request's
 * limits (submessages nest at most lim.max_nesting deep, any JSON value
 * at most twice that, a repeated field holds at most
 * lim.max_table_entries or max_samples, the larger).
 */
#include "wire_internal.h"

#include <string.h>

#define TAG "otlp: "

/* OTLP's exception to the mapping: trace and span IDs are hex (16 and 8
 * bytes; empty: none). */
static size_t hex_id_bytes(const ProtobufCFieldDescriptor *f)
{
	return !strcmp(f->name, "trace_id") ? 16 : !strcmp(f->name, "span_id") ? 8 : 0;
}

int otlp_json_unpack(const uint8_t *data, size_t size, struct otlp_ctx *c,
		     otlp_request_message_t **out)
{
	const struct wire_json_read o = {
		.tag = TAG,
		.max_input_bytes = c->lim.max_input_bytes,
		.max_memory_bytes = c->lim.max_memory_bytes,
		.max_nesting = c->lim.max_nesting,
		.max_entries = c->lim.max_table_entries > c->lim.max_samples
				       ? c->lim.max_table_entries
				       : c->lim.max_samples,
		.account = c->lim.account,
		.hex_bytes = hex_id_bytes,
		.hex_hint = "OTLP's JSON gives trace and span IDs as hex, not base64",
		.d = c->d,
	};
	ProtobufCMessage *m;
	int err = wire_json_read_message(
		&opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__descriptor,
		data, size, &o, &m);

	if (!err)
		*out = (otlp_request_message_t *)m;
	return err;
}
