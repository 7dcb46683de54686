/*
 * querier.h - Pyroscope's query API requests in: a Connect request's body
 * (POST /querier.v1.QuerierService/METHOD, docs/http-api.md, "Pyroscope's
 * query API (Connect)") read as its method's request message, the
 * messages of the .proto files of wire/querier/ (Ember's transcription of querier.v1
 * and types.v1, compiled by protoc-c; docs/formats.md).
 *
 * Pipeline position: a parser of outside input under api/connect.c, on
 * ember_common and pprof.h (its gzip) only.  Fuzzed by
 * tests/fuzz/fuzz_connect.c.  No global state.
 */
#ifndef EMBER_WIRE_QUERIER_H
#define EMBER_WIRE_QUERIER_H

#include "common.h"
#include "querier.pb-c.h"

#include <stdbool.h>
#include <stddef.h>

/* The request message of method (e.g. "LabelNames":
 * Types__V1__LabelNamesRequest) from body, gunzipped first into plain
 * (under plain's cap; the caller initializes and releases it) when gzip.
 * 0 and *msg (to protobuf_c_message_free_unpacked), -ENOENT when method
 * is none whose request Ember decodes, or -EINVAL with why for the
 * sender. */
int querier_decode(const char *method, bool gzip, const void *body, size_t len,
		   struct ember_buf *plain, ProtobufCMessage **msg, char *why,
		   size_t why_size);

#endif /* EMBER_WIRE_QUERIER_H */
