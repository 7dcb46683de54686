/*
 * fuzz_connect.c - libFuzzer target for the Connect route's request
 * decoding (querier_decode, wire/querier_decode.c): the first byte
 * picks the method (its low bits) and whether the body is gzip (0x80),
 * the rest is the body.  A message that decodes must pack again and
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ember_buf plain;
	ProtobufCMessage *m = NULL;
	char why[320];
	int err;

	if (!size)
		return 0;
	ember_buf_init(&plain, 1 << 20);
	err = querier_decode(methods[(data[0] & 0x7f) % (sizeof(methods) / sizeof(methods[0]))], data[0] & 0x80, data + 1,
				 size - 1, &plain, &m, why, sizeof(why));
	if (!err) {
		if (!m->n_unknown_fields)
			repack(m);
	} else if (m)
		abort(); /* a message with an error */
	protobuf_c_message_free_unpacked(m, NULL);
	ember_buf_release(&plain);
	return 0;
}
