/*
 * grpc_export.c - the work of an OTLP/gRPC Export call, on a worker
 * thread (grpc_server.c): its message handed to the listener's sink
 * (otlp_grpc.h: `ember serve`'s stores it as POST /v1development/profiles
 * stores a body, under the call's deadline and memory account), and the
 * sink's answer as gRPC gives it: OK with an ExportProfilesServiceResponse
 * (partial_success when some profiles were refused), or the refusal's
 * code, with RetryInfo when asking again may succeed.
 */
#include "otlp_grpc_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "otlp.h"

/* The length-prefixed response message (uncompressed) into call->reply. */
static int encode_reply(struct otlp_grpc_call *call, const struct otlp_grpc_answer *a)
{
	struct ember_buf m;
	uint8_t prefix[5] = { 0 };
	int err;

	ember_buf_init(&m, 1 << 20);
	err = otlp_response_encode((int64_t)a->rejected, a->rejected ? a->message : "", &m);
	if (!err) {
		prefix[1] = (uint8_t)(m.len >> 24);
		prefix[2] = (uint8_t)(m.len >> 16);
		prefix[3] = (uint8_t)(m.len >> 8);
		prefix[4] = (uint8_t)m.len;
		err = ember_buf_append(&call->reply, prefix, 5) ?:
			      ember_buf_append(&call->reply, m.data ? m.data : "", m.len);
	}
	ember_buf_release(&m);
	return err;
}

static void set_refusal(struct otlp_grpc_call *call, int32_t code, bool retry, const char *why)
{
	call->code = code;
	call->retry = retry;
	snprintf(call->message, sizeof(call->message), "%s", why);
}

void otlp_grpc_export(const struct otlp_grpc_sink *sink, struct otlp_grpc_call *call)
{
	struct otlp_grpc_request rq = { .body = call->msg.data, .len = call->msg.len,
					.encoding = call->prefix[0] ? "gzip" : NULL,
					.deadline_ms = call->deadline_ms, .acct = &call->acct,
					.tenant = call->tenant[0] ? call->tenant : NULL,
					.token_tenant = call->token_tenant[0] ? call->token_tenant
									      : NULL };
	struct otlp_grpc_answer a = { .code = OTLP_GRPC_OK };

	if (ember_monotonic_ms() >= call->deadline_ms) { /* waited for a worker too long */
		set_refusal(call, OTLP_GRPC_DEADLINE_EXCEEDED, true,
			    "the call's deadline passed before its turn");
		return;
	}
	sink->export_request(sink->ctx, &rq, &a);
	if (a.code != OTLP_GRPC_OK)
		set_refusal(call, a.code, a.retry, a.message);
	else if (encode_reply(call, &a))
		set_refusal(call, OTLP_GRPC_INTERNAL, false, "out of memory");
	else
		call->code = OTLP_GRPC_OK;
}
