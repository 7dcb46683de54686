/*
 * fuzz_otlp_grpc.c - libFuzzer target for OTLP/gRPC's HTTP/2 server
 * session (otlp-grpc/grpc_session.c): any bytes as what a client sends (the
 * preface, then frames), fed to a session with the server's callbacks in
 * pieces whose size the first byte picks, no sockets; a call whose
 * message is whole is answered at once (OK with an empty response, or a
 * retryable refusal with RetryInfo, by its length's parity) and every
 * byte the session has to send is drained.  Then every call is taken
 * past its deadline, and the session ended.  Seeds:
 * make_otlp_grpc_seeds.py.
 */
#include "otlp_grpc_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void quiet(enum ember_log_level l, const char *m, void *c)
{
}

static bool auth(void *arg, const char *authorization, char *tenant, size_t tenant_size)
{
	(void)tenant;
	(void)tenant_size;
	return authorization && strcmp(authorization, "Bearer t") == 0;
}

static void answer(void *arg, struct otlp_grpc_call *call)
{
	static const uint8_t empty[5] = { 0 };

	if (call->msg.len & 1) {
		call->code = OTLP_GRPC_UNAVAILABLE;
		call->retry = true;
		strcpy(call->message, "busy: \xff 100% \n");
	} else if (ember_buf_append(&call->reply, empty, sizeof(empty))) {
		call->code = OTLP_GRPC_INTERNAL;
	} else {
		call->code = OTLP_GRPC_OK;
	}
	otlp_grpc_call_done(call);
}

static void drain(struct otlp_grpc_conn *c, struct ember_buf *out)
{
	otlp_grpc_conn_send(c, out);
	ember_buf_reset(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct otlp_grpc_limits lim = { .max_message = 1 << 20, .max_streams = 4,
						    .max_header_list = 4096,
						    .request_ms = 60000 };
	struct ember_mem_budget budget;
	struct otlp_grpc_conn c = { .lim = &lim, .budget = &budget, .share = 2 << 20,
				   .auth = auth, .dispatch = answer };
	struct ember_buf out;
	size_t piece = size ? 1 + data[0] % 97 : 1;

	ember_log_set_handler(quiet, NULL);
	ember_mem_budget_init(&budget, 4 << 20);
	ember_buf_init(&out, 64 << 20);
	if (otlp_grpc_conn_init(&c))
		return 0;
	for (size_t off = size ? 1 : 0; off < size; off += piece) {
		size_t n = size - off < piece ? size - off : piece;

		if (otlp_grpc_conn_recv(&c, data + off, n))
			break;
		drain(&c, &out);
	}
	drain(&c, &out);
	otlp_grpc_conn_expire(&c, UINT64_MAX);
	drain(&c, &out);
	otlp_grpc_conn_release(&c);
	ember_buf_release(&out);
	return 0;
}
