/*
 * grpc_export.c - the work of an OTLP/gRPC Export call, on a worker
 * thread (grpc_server.c): its message stored by api_otlp_export, as
 * POST /v1development/profiles stores a body, in the same request context
 * (struct api_profile_ctx: the call's deadline, its memory account, the
 * server's cap on upstream fetches), and the outcome as gRPC answers it:
 * OK with an ExportProfilesServiceResponse (partial_success when some
 * profiles were refused), or the refusal's code (api_otlp_grpc_code: the
 * OTLP specification's pairing of HTTP statuses and gRPC codes), with
 * RetryInfo when asking again may succeed.
 */
#include "api_grpc.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* The length-prefixed response message (uncompressed) into call->reply. */
static int encode_reply(struct api_grpc_call *call, const struct api_otlp_outcome *o)
{
	struct ember_buf m;
	uint8_t prefix[5] = { 0 };
	int err;

	ember_buf_init(&m, 1 << 20);
	err = otlp_response_encode((int64_t)o->rejected, o->rejected ? o->why : "", &m);
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

static void set_refusal(struct api_grpc_call *call, int err, const char *why)
{
	call->code = api_otlp_grpc_code(err);
	call->retry = api_otlp_retryable(err);
	snprintf(call->message, sizeof(call->message), "%s", why);
}

void api_grpc_export(struct api_server *srv, struct api_grpc_call *call)
{
	struct api_request req = { .deadline_ms = call->deadline_ms, .conn_fd = -1,
				   .acct = &call->acct };
	struct api_otlp_outcome o;
	struct api_profile_ctx x;

	if (ember_monotonic_ms() >= call->deadline_ms) { /* waited for a worker too long */
		set_refusal(call, -ETIMEDOUT, "the call's deadline passed before its turn");
		return;
	}
	api_profile_ctx_init(&x, srv, &req); /* the call's account is there: no failure */
	api_otlp_export(srv, API_OTLP_PROTOBUF, call->msg.data, call->msg.len,
			call->prefix[0] ? "gzip" : NULL, &x, &o);
	if (o.refused) {
		set_refusal(call, o.refused, o.why);
		return;
	}
	if (encode_reply(call, &o))
		set_refusal(call, -ENOMEM, "out of memory");
	else
		call->code = API_GRPC_OK;
}
