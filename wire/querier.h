/*
 * querier.h - Pyroscope's query API in Connect's two codecs: a Connect
 * request's body (POST /querier.v1.QuerierService/METHOD, docs/http-api.md,
 * "Pyroscope's query API (Connect)") read as its method's request
 * message, and an answer's message written, each in binary protobuf or in
 * proto3's JSON mapping; the messages of the .proto files of wire/querier/
 * (Ember's transcription of querier.v1 and types.v1, compiled by protoc-c;
 * docs/formats.md).
 *
 * Pipeline position: a parser of outside input and an answer writer under
 * api/connect.c, on ember_common and wire/'s pprof.h (its gzip) and JSON
 * mapping (pb_json_read.c, pb_json_write.c) only.  Fuzzed by
 * tests/fuzz/fuzz_connect.c.  No global state.
 */
#ifndef EMBER_WIRE_QUERIER_H
#define EMBER_WIRE_QUERIER_H

#include "common.h"
#include "querier.pb-c.h"

#include <stdbool.h>
#include <stddef.h>

/* Connect's codecs: Content-Type application/proto and application/json. */
enum querier_codec {
	QUERIER_PROTO, /* binary protobuf */
	QUERIER_JSON,  /* proto3's JSON mapping */
};

/* JSON requests: submessages inside each other (any JSON value at most
 * twice as deep), and the memory the message may take for each byte of
 * the body. */
#define QUERIER_JSON_MAX_NESTING 32
#define QUERIER_JSON_MEMORY_PER_BYTE 64

/* The request message of method (e.g. "LabelNames":
 * Types__V1__LabelNamesRequest) from body in codec, gunzipped first into
 * plain (under plain's cap, and charged to its account; the caller
 * initializes and releases it) when gzip.  JSON is read by the mapping
 * (lowerCamel or proto names, 64-bit integers as strings or numbers,
 * unknown keys skipped) under QUERIER_JSON_MAX_NESTING and
 * QUERIER_JSON_MEMORY_PER_BYTE times the body's bytes, charged to
 * plain's account too.  0 and *msg (to protobuf_c_message_free_unpacked(..,
 * NULL)), -ENOENT when method is none whose request Ember decodes, or
 * -EINVAL with why for the sender. */
int querier_decode(const char *method, enum querier_codec codec, bool gzip, const void *body,
		   size_t len, struct ember_buf *plain, ProtobufCMessage **msg, char *why,
		   size_t why_size);

/* m appended to out in codec: packed, or in proto3's JSON mapping (fields
 * at their default left out, 64-bit integers as strings, enums by name,
 * bytes base64).  0, -E2BIG past out's cap, or -ENOMEM. */
int querier_encode(const ProtobufCMessage *m, enum querier_codec codec, struct ember_buf *out);

/* packed, a message of md that Ember wrote (SelectMergeProfile's pprof),
 * appended to out in JSON as querier_encode writes it.  0, -EINVAL when
 * it does not unpack, -E2BIG past out's cap, or -ENOMEM. */
int querier_encode_json_packed(const ProtobufCMessageDescriptor *md, const void *packed,
			       size_t len, struct ember_buf *out);

#endif /* EMBER_WIRE_QUERIER_H */
