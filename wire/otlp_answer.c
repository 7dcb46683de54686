/*
 * otlp_answer.c - the bodies of OTLP/HTTP's answers (the OTLP
 * specification, "OTLP/HTTP Response"): an ExportProfilesServiceResponse
 * for a 200 (its partial_success set when profiles were refused) and a
 * google.rpc.Status for a refusal, as protobuf (wire/otlp/) or, for a
 * request that came as JSON, in OTLP's JSON encoding (the response uses
 * the request's encoding): lowerCamel names, int64 as a decimal string,
 * fields at their zero value omitted as proto3's JSON mapping omits them.
 */
#include "wire_internal.h"
#include "otlp_status.pb-c.h"

#include <string.h>

typedef Opentelemetry__Proto__Collector__Profiles__V1development__ExportProfilesServiceResponse
	response_t;
typedef Opentelemetry__Proto__Collector__Profiles__V1development__ExportProfilesPartialSuccess
	partial_t;

/* m packed into out (appended, out's cap bounding it). */
static int pack_into(const ProtobufCMessage *m, struct ember_buf *out)
{
	struct wire_pb_sink s;

	wire_sink_raw_init(&s, out);
	protobuf_c_message_pack_to_buffer(m, &s.base);
	return wire_sink_finish(&s);
}

int otlp_response_encode(int64_t rejected, const char *message, struct ember_buf *out)
{
	response_t r =
		OPENTELEMETRY__PROTO__COLLECTOR__PROFILES__V1DEVELOPMENT__EXPORT_PROFILES_SERVICE_RESPONSE__INIT;
	partial_t p =
		OPENTELEMETRY__PROTO__COLLECTOR__PROFILES__V1DEVELOPMENT__EXPORT_PROFILES_PARTIAL_SUCCESS__INIT;

	if (rejected || (message && *message)) {
		p.rejected_profiles = rejected;
		p.error_message = (char *)(message ? message : "");
		r.partial_success = &p;
	}
	return pack_into(&r.base, out);
}

int otlp_status_encode(int32_t code, const char *message, struct ember_buf *out)
{
	Google__Rpc__Status st = GOOGLE__RPC__STATUS__INIT;

	st.code = code;
	st.message = (char *)(message ? message : "");
	return pack_into(&st.base, out);
}

int otlp_response_json(int64_t rejected, const char *message, struct ember_buf *out)
{
	int err = 0;

	if (!rejected && !(message && *message))
		return WIRE_JSON_LIT(out, "{}");
	err = WIRE_JSON_LIT(out, "{\"partialSuccess\":{");
	if (!err && rejected) {
		err = WIRE_JSON_LIT(out, "\"rejectedProfiles\":\"");
		if (!err && rejected < 0)
			err = WIRE_JSON_LIT(out, "-");
		if (!err)
			err = wire_json_u64(out, rejected < 0 ? (uint64_t)0 - (uint64_t)rejected
							      : (uint64_t)rejected);
		if (!err)
			err = WIRE_JSON_LIT(out, "\"");
	}
	if (!err && message && *message) {
		err = rejected ? WIRE_JSON_LIT(out, ",") : 0;
		if (!err)
			err = WIRE_JSON_LIT(out, "\"errorMessage\":");
		if (!err)
			err = wire_json_str(out, message);
	}
	return err ? err : WIRE_JSON_LIT(out, "}}");
}

int otlp_status_json(int32_t code, const char *message, struct ember_buf *out)
{
	int err = WIRE_JSON_LIT(out, "{\"code\":");

	if (!err && code < 0)
		err = WIRE_JSON_LIT(out, "-");
	if (!err)
		err = wire_json_u64(out, code < 0 ? (uint64_t)0 - (uint64_t)(int64_t)code
						  : (uint64_t)code);
	if (!err)
		err = WIRE_JSON_LIT(out, ",\"message\":");
	if (!err)
		err = wire_json_str(out, message ? message : "");
	return err ? err : WIRE_JSON_LIT(out, "}");
}
