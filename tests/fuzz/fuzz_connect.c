/*
 * fuzz_connect.c - libFuzzer target for the Connect route's request
 * decoding (querier_decode, wire/querier_decode.c): the first byte
 * picks the method (its low 6 bits), the JSON codec (0x40; else binary
 * protobuf) and whether the body is gzip (0x80), the rest is the body.
 * A message read from JSON must be written as JSON again
 * (wire_json_write_message, through querier_encode), read back and
 * written as the same text.  A message that decodes must pack again and
 * unpack as the same size (protobuf-c's own round trip), unless it holds
 * unknown fields: those Ember never reads, and protobuf-c keeps one
 * numbered 0 (no valid protobuf has it, yet its reader takes it) in a
 * form that does not pack back alike (found by libFuzzer; the input is in
 * the corpus).
 */
#include "querier.h"

#include <protobuf-c/protobuf-c.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *const methods[] = { "ProfileTypes", "LabelNames", "LabelValues",
				       "Series", "SelectMergeProfile", "",
				       "SelectMergeStacktraces", "SelectMergeSpanProfile",
				       "SelectSeries", "Diff", "GetProfileStats" };

static void repack(const ProtobufCMessage *m)
{
	size_t n = protobuf_c_message_get_packed_size(m);
	uint8_t *b = malloc(n + 1);
	ProtobufCMessage *back;

	if (!b)
		return;
	if (protobuf_c_message_pack(m, b) != n)
		abort();
	back = protobuf_c_message_unpack(m->descriptor, NULL, n, b);
	if (!back || protobuf_c_message_get_packed_size(back) != n)
		abort(); /* what Ember decoded does not survive its own encoding */
	protobuf_c_message_free_unpacked(back, NULL);
	free(b);
}

/* The JSON mapping's round trip: m written, read back and written again
 * gives the same text (not the same message: strings are written as valid
 * UTF-8, whatever bytes yajl let through). */
static void rejson(const char *method, const ProtobufCMessage *m)
{
	struct ember_buf out, again, plain;
	ProtobufCMessage *back = NULL;
	char why[320];

	ember_buf_init(&out, (size_t)1 << 26);
	ember_buf_init(&again, (size_t)1 << 26);
	ember_buf_init(&plain, 1 << 20);
	if (querier_encode(m, QUERIER_JSON, &out))
		abort();
	if (querier_decode(method, QUERIER_JSON, false, out.data, out.len, &plain, &back, why,
			   sizeof(why)) ||
	    querier_encode(back, QUERIER_JSON, &again) || again.len != out.len ||
	    memcmp(again.data, out.data, out.len))
		abort(); /* what Ember wrote as JSON it does not read back alike */
	protobuf_c_message_free_unpacked(back, NULL);
	ember_buf_release(&plain);
	ember_buf_release(&again);
	ember_buf_release(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const size_t n_methods = sizeof(methods) / sizeof(methods[0]);
	enum querier_codec codec;
	const char *method;
	struct ember_buf plain;
	ProtobufCMessage *m = NULL;
	char why[320];
	int err;

	if (!size)
		return 0;
	method = methods[(data[0] & 0x3f) % n_methods];
	codec = data[0] & 0x40 ? QUERIER_JSON : QUERIER_PROTO;
	ember_buf_init(&plain, 1 << 20);
	err = querier_decode(method, codec, data[0] & 0x80, data + 1, size - 1, &plain, &m, why,
			     sizeof(why));
	if (!err && codec == QUERIER_JSON)
		rejson(method, m);
	else if (!err && !m->n_unknown_fields)
		repack(m);
	else if (err && m)
		abort(); /* a message with an error */
	protobuf_c_message_free_unpacked(m, NULL);
	ember_buf_release(&plain);
	return 0;
}
