/*
 * grpc_session.c - one OTLP/gRPC connection's HTTP/2 server session
 * (RFC 9113 through libnghttp2) and its calls, as "gRPC over HTTP2"
 * (grpc/grpc doc/PROTOCOL-HTTP2.md) gives them: a request's headers
 * (:method POST, :path, content-type application/grpc[+proto],
 * grpc-encoding, grpc-timeout, authorization, x-scope-orgid), then one message (a
 * compressed flag, a 4-byte big-endian length, the bytes), then the end
 * of the stream; the answer's headers (:status 200, content-type), the
 * response message and trailers grpc-status and grpc-message
 * (percent-encoded), or, for a refusal, the headers and trailers in one
 * HEADERS frame ("Trailers-Only").  The session is fed and drained
 * through memory (otlp_grpc_conn_recv, otlp_grpc_conn_send): sockets are
 * grpc_server.c's, and the fuzz target drives it without any.
 * otlp_grpc_internal.h says who owns a call when.
 */
#include "otlp_grpc_internal.h"

#include <errno.h>
#include <nettle/base64.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- calls -------------------------------------------------------------------- */

void otlp_grpc_call_free(struct otlp_grpc_call *call)
{
	if (!call)
		return;
	ember_buf_release(&call->msg);
	ember_buf_release(&call->reply);
	ember_mem_account_release(&call->acct);
	free(call);
}

static void unlink_call(struct otlp_grpc_conn *c, struct otlp_grpc_call *call)
{
	for (struct otlp_grpc_call **p = &c->calls; *p; p = &(*p)->next)
		if (*p == call) {
			*p = call->next;
			break;
		}
	if (!c->calls)
		c->quiet_since_ms = ember_monotonic_ms();
}

static struct otlp_grpc_call *call_of(struct otlp_grpc_conn *c, int32_t stream_id)
{
	return nghttp2_session_get_stream_user_data(c->session, stream_id);
}

/* ---- answers ------------------------------------------------------------------ */

/* grpc-message: bytes outside printable ASCII, and '%', as %XX. */
static void percent_encode(const char *s, char *out, size_t size)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = 0;

	for (; *s && n + 4 < size; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch >= 0x20 && ch <= 0x7e && ch != '%') {
			out[n++] = (char)ch;
		} else {
			out[n++] = '%';
			out[n++] = hex[ch >> 4];
			out[n++] = hex[ch & 15];
		}
	}
	out[n] = '\0';
}

/*
 * grpc-status-details-bin of a retryable refusal: a google.rpc.Status
 * (code 1, message 2, details 3) whose one detail is an Any (type_url 1,
 * value 2) holding a google.rpc.RetryInfo (retry_delay 1: a Duration,
 * seconds 1), as OTLP/gRPC asks of a throttled server; base64 without
 * padding, as gRPC's binary metadata.  0 or a negative errno.
 */
static int retry_details(int32_t code, const char *msg, char *out, size_t size)
{
	static const char type[] = "type.googleapis.com/google.rpc.RetryInfo";
	static const uint8_t retry_info[] = { 0x0a, 0x02, 0x08, 5 }; /* 5 s */
	struct ember_buf any, st;
	int err;

	ember_buf_init(&any, 256);
	ember_buf_init(&st, 1024);
	err = ember_buf_putc(&any, 0x0a) ?: ember_buf_put_lenbytes(&any, type, sizeof(type) - 1);
	err = err ?: ember_buf_putc(&any, 0x12) ?:
		    ember_buf_put_lenbytes(&any, retry_info, sizeof(retry_info));
	err = err ?: ember_buf_putc(&st, 0x08) ?: ember_buf_put_uleb(&st, (uint64_t)code);
	err = err ?: ember_buf_putc(&st, 0x12) ?: ember_buf_put_lenbytes(&st, msg, strlen(msg));
	err = err ?: ember_buf_putc(&st, 0x1a) ?: ember_buf_put_lenbytes(&st, any.data, any.len);
	if (!err && BASE64_ENCODE_RAW_LENGTH(st.len) + 1 > size)
		err = -E2BIG;
	if (!err) {
		size_t n = BASE64_ENCODE_RAW_LENGTH(st.len);

		base64_encode_raw(out, st.len, (const uint8_t *)st.data);
		while (n && out[n - 1] == '=')
			n--;
		out[n] = '\0';
	}
	ember_buf_release(&any);
	ember_buf_release(&st);
	return err;
}

#define NV(n, v) { (uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, strlen(v), NGHTTP2_NV_FLAG_NONE }

/* One more call answered with code, in the owner's counts. */
static void count_answer(struct otlp_grpc_conn *c, int32_t code)
{
	if (c->answered && code >= 0 && code < OTLP_GRPC_CODES)
		atomic_fetch_add_explicit(&c->answered[code], 1, memory_order_relaxed);
}

/* A refusal: headers and trailers in one HEADERS frame, ending the stream. */
static int answer_status(struct otlp_grpc_call *call)
{
	char code[16], msg[3 * sizeof(call->message) + 1], details[2048] = "";
	bool with_details = call->retry &&
			    !retry_details(call->code, call->message, details, sizeof(details));

	snprintf(code, sizeof(code), "%d", call->code);
	percent_encode(call->message, msg, sizeof(msg));
	count_answer(call->conn, call->code);
	nghttp2_nv nv[] = { NV(":status", "200"), NV("content-type", "application/grpc"),
			    NV("grpc-accept-encoding", "identity,gzip"),
			    NV("grpc-status", code), NV("grpc-message", msg),
			    NV("grpc-status-details-bin", details) };

	call->state = OTLP_GRPC_ANSWERED;
	return nghttp2_submit_response(call->conn->session, call->stream_id, nv,
				       with_details ? 6 : 5, NULL);
}

/* The rest of the response message; its end sends the trailers. */
static ssize_t read_reply(nghttp2_session *s, int32_t stream_id, uint8_t *buf, size_t length,
			  uint32_t *flags, nghttp2_data_source *src, void *user)
{
	struct otlp_grpc_call *call = src->ptr;
	size_t n = call->reply.len - call->reply_off;
	nghttp2_nv trailers[] = { NV("grpc-status", "0"), NV("grpc-message", "") };

	if (n > length)
		n = length;
	memcpy(buf, call->reply.data + call->reply_off, n);
	call->reply_off += n;
	if (call->reply_off == call->reply.len) {
		*flags |= NGHTTP2_DATA_FLAG_EOF | NGHTTP2_DATA_FLAG_NO_END_STREAM;
		if (nghttp2_submit_trailer(s, stream_id, trailers, 2))
			return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
	}
	return (ssize_t)n;
}

static int answer_ok(struct otlp_grpc_call *call)
{
	nghttp2_nv nv[] = { NV(":status", "200"), NV("content-type", "application/grpc"),
			    NV("grpc-accept-encoding", "identity,gzip") };
	nghttp2_data_provider dp = { .source.ptr = call, .read_callback = read_reply };

	count_answer(call->conn, OTLP_GRPC_OK);
	call->state = OTLP_GRPC_ANSWERED;
	return nghttp2_submit_response(call->conn->session, call->stream_id, nv, 3, &dp);
}

/* Answer call with code (not OK) saying msg. */
static int refuse(struct otlp_grpc_call *call, int32_t code, const char *msg)
{
	call->code = code;
	call->retry = false;
	snprintf(call->message, sizeof(call->message), "%s", msg);
	return answer_status(call);
}

void otlp_grpc_call_done(struct otlp_grpc_call *call)
{
	struct otlp_grpc_conn *c = call->conn;

	if (!c) { /* the connection went while a worker had it */
		otlp_grpc_call_free(call);
		return;
	}
	c->working--;
	if (call->stream_gone) {
		unlink_call(c, call);
		otlp_grpc_call_free(call);
		return;
	}
	if (call->code == OTLP_GRPC_OK ? answer_ok(call) : answer_status(call))
		nghttp2_submit_rst_stream(c->session, NGHTTP2_FLAG_NONE, call->stream_id,
					  NGHTTP2_INTERNAL_ERROR);
}

/* ---- requests ------------------------------------------------------------------- */

static int on_begin_headers(nghttp2_session *s, const nghttp2_frame *f, void *user)
{
	struct otlp_grpc_conn *c = user;
	struct otlp_grpc_call *call;

	if (f->hd.type != NGHTTP2_HEADERS || f->headers.cat != NGHTTP2_HCAT_REQUEST)
		return 0;
	call = calloc(1, sizeof(*call));
	if (!call)
		return NGHTTP2_ERR_CALLBACK_FAILURE;
	call->conn = c;
	call->stream_id = f->hd.stream_id;
	call->deadline_ms = ember_monotonic_ms() + c->lim->request_ms;
	ember_mem_account_init(&call->acct, c->budget, c->share);
	ember_buf_init_account(&call->msg, c->lim->max_message, &call->acct);
	ember_buf_init(&call->reply, 1 << 20);
	call->next = c->calls;
	c->calls = call;
	c->quiet_since_ms = 0;
	nghttp2_session_set_stream_user_data(s, f->hd.stream_id, call);
	return 0;
}

/* grpc-timeout: up to 8 digits and a unit (H M S m u n); false if not. */
static bool parse_timeout(const uint8_t *v, size_t n, uint64_t *ms)
{
	static const struct {
		char unit;
		uint64_t mul, div;
	} units[] = { { 'H', 3600000, 1 }, { 'M', 60000, 1 }, { 'S', 1000, 1 },
		      { 'm', 1, 1 },	     { 'u', 1, 1000 }, { 'n', 1, 1000000 } };
	uint64_t x = 0;

	if (n < 2 || n > 9)
		return false;
	for (size_t i = 0; i + 1 < n; i++) {
		if (v[i] < '0' || v[i] > '9')
			return false;
		x = x * 10 + (v[i] - '0');
	}
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (v[n - 1] == units[i].unit) {
			*ms = x * units[i].mul / units[i].div;
			return true;
		}
	return false;
}

static bool is(const uint8_t *name, size_t n, const char *want)
{
	return n == strlen(want) && memcmp(name, want, n) == 0;
}

/* The value as a C string (headers are not NUL-terminated for us). */
static void value_str(const uint8_t *v, size_t n, char *out, size_t size)
{
	snprintf(out, size, "%.*s", (int)(n < size ? n : size - 1), (const char *)v);
}

static void take_header(struct otlp_grpc_call *call, const uint8_t *name, size_t nlen,
			const uint8_t *v, size_t vlen)
{
	struct otlp_grpc_conn *c = call->conn;
	char buf[1024];
	uint64_t ms;

	if (is(name, nlen, ":path")) {
		call->path_ok = is(v, vlen, OTLP_GRPC_EXPORT_PATH);
	} else if (is(name, nlen, ":method")) {
		call->post = is(v, vlen, "POST");
	} else if (is(name, nlen, "content-type")) {
		call->type_ok = is(v, vlen, "application/grpc") ||
				is(v, vlen, "application/grpc+proto");
	} else if (is(name, nlen, "grpc-encoding")) {
		value_str(v, vlen, call->encoding, sizeof(call->encoding));
	} else if (is(name, nlen, "x-scope-orgid")) {
		value_str(v, vlen, call->tenant, sizeof(call->tenant));
	} else if (is(name, nlen, "authorization")) {
		value_str(v, vlen, buf, sizeof(buf));
		call->auth_ok = call->auth_ok || c->auth(c->arg, buf, call->token_tenant,
							 sizeof(call->token_tenant));
	} else if (is(name, nlen, "grpc-timeout") && parse_timeout(v, vlen, &ms)) {
		if (ms < c->lim->request_ms)
			call->deadline_ms = ember_monotonic_ms() + ms;
	}
}

static int on_header(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *name,
		     size_t nlen, const uint8_t *v, size_t vlen, uint8_t flags, void *user)
{
	struct otlp_grpc_call *call = call_of(user, f->hd.stream_id);

	if (!call || call->state != OTLP_GRPC_HEAD)
		return 0; /* trailers of a request: nothing we read */
	call->header_bytes += (uint32_t)(nlen + vlen + 32);
	if (call->header_bytes > ((struct otlp_grpc_conn *)user)->lim->max_header_list)
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE; /* the stream reset */
	take_header(call, name, nlen, v, vlen);
	return 0;
}

static bool encoding_ok(const char *e)
{
	return !*e || strcmp(e, "identity") == 0 || strcmp(e, "gzip") == 0;
}

/* The request's head is whole: refused now, or its message awaited. */
static int head_done(struct otlp_grpc_call *call)
{
	char msg[128];

	call->state = OTLP_GRPC_BODY;
	if (!call->post || !call->path_ok)
		return refuse(call, OTLP_GRPC_UNIMPLEMENTED,
			      "unknown method: this server implements " OTLP_GRPC_EXPORT_PATH
			      " only");
	if (!call->type_ok)
		return refuse(call, OTLP_GRPC_INVALID_ARGUMENT,
			      "content-type must be application/grpc");
	if (!encoding_ok(call->encoding)) {
		snprintf(msg, sizeof(msg), "grpc-encoding '%s' is not supported: identity, gzip",
			 call->encoding);
		return refuse(call, OTLP_GRPC_UNIMPLEMENTED, msg);
	}
	if (!call->auth_ok)
		return refuse(call, OTLP_GRPC_UNAUTHENTICATED,
			      "a token that may write profiles is needed (authorization: Bearer "
			      "TOKEN)");
	return 0;
}

static uint32_t message_length(const struct otlp_grpc_call *call)
{
	const uint8_t *p = call->prefix;

	return (uint32_t)p[1] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 8 | p[4];
}

/* The five bytes before the message; a length past the cap refused. */
static int take_prefix(struct otlp_grpc_call *call, const uint8_t **data, size_t *len)
{
	char msg[160];

	while (*len && call->prefix_len < 5) {
		call->prefix[call->prefix_len++] = **data;
		(*data)++;
		(*len)--;
	}
	if (call->prefix_len < 5)
		return 0;
	if (call->prefix[0] > 1)
		return refuse(call, OTLP_GRPC_INTERNAL, "bad compressed flag in a message's prefix");
	if (call->prefix[0] && !strcmp(call->encoding[0] ? call->encoding : "identity",
				       "identity"))
		return refuse(call, OTLP_GRPC_INTERNAL,
			      "a compressed message without grpc-encoding");
	if (message_length(call) > call->conn->lim->max_message) {
		snprintf(msg, sizeof(msg), "request message of %u bytes larger than %llu bytes",
			 message_length(call),
			 (unsigned long long)call->conn->lim->max_message);
		return refuse(call, OTLP_GRPC_RESOURCE_EXHAUSTED, msg);
	}
	return 0;
}

static int take_data(struct otlp_grpc_call *call, const uint8_t *data, size_t len)
{
	size_t want;
	int err;

	if (call->prefix_len < 5) {
		err = take_prefix(call, &data, &len);
		if (err || call->state != OTLP_GRPC_BODY)
			return err;
	}
	want = message_length(call) - call->msg.len;
	if (len > want)
		return refuse(call, OTLP_GRPC_INVALID_ARGUMENT,
			      "more than one request message in a unary call");
	err = ember_buf_append(&call->msg, data, len);
	if (err == -EAGAIN) {
		call->code = OTLP_GRPC_UNAVAILABLE;
		call->retry = true;
		snprintf(call->message, sizeof(call->message),
			 "the server's memory is taken by other requests now: ask again");
		return answer_status(call);
	}
	if (err)
		return refuse(call, OTLP_GRPC_RESOURCE_EXHAUSTED,
			      "the message is larger than a request's share of the server's "
			      "memory");
	return 0;
}

static int on_data_chunk(nghttp2_session *s, uint8_t flags, int32_t stream_id,
			 const uint8_t *data, size_t len, void *user)
{
	struct otlp_grpc_call *call = call_of(user, stream_id);

	if (!call || call->state != OTLP_GRPC_BODY)
		return 0; /* answered: the rest is read and dropped */
	return take_data(call, data, len) ? NGHTTP2_ERR_CALLBACK_FAILURE : 0;
}

/* The client's side ended: the message goes to work, or is refused. */
static int request_done(struct otlp_grpc_call *call)
{
	struct otlp_grpc_conn *c = call->conn;

	if (call->state != OTLP_GRPC_BODY)
		return 0;
	if (call->prefix_len < 5 || call->msg.len < message_length(call))
		return refuse(call, OTLP_GRPC_INVALID_ARGUMENT,
			      "the stream ended before a whole request message");
	if (c->working >= c->lim->max_streams) {
		call->code = OTLP_GRPC_UNAVAILABLE;
		call->retry = true;
		snprintf(call->message, sizeof(call->message),
			 "too many calls of this connection at work: ask again");
		return answer_status(call);
	}
	call->state = OTLP_GRPC_QUEUED;
	c->working++;
	c->dispatch(c->arg, call);
	return 0;
}

static int on_frame_recv(nghttp2_session *s, const nghttp2_frame *f, void *user)
{
	struct otlp_grpc_call *call = call_of(user, f->hd.stream_id);
	int err = 0;

	if (!call || (f->hd.type != NGHTTP2_HEADERS && f->hd.type != NGHTTP2_DATA))
		return 0;
	if (f->hd.type == NGHTTP2_HEADERS && call->state == OTLP_GRPC_HEAD)
		err = head_done(call);
	if (!err && (f->hd.flags & NGHTTP2_FLAG_END_STREAM))
		err = request_done(call);
	return err ? NGHTTP2_ERR_CALLBACK_FAILURE : 0;
}

/* An answer that ended our side before the client ended its own: the
 * stream reset (NO_ERROR), as gRPC servers do, so its data stops. */
static int on_frame_send(nghttp2_session *s, const nghttp2_frame *f, void *user)
{
	if ((f->hd.type == NGHTTP2_HEADERS || f->hd.type == NGHTTP2_DATA) &&
	    (f->hd.flags & NGHTTP2_FLAG_END_STREAM) &&
	    nghttp2_session_get_stream_remote_close(s, f->hd.stream_id) == 0)
		nghttp2_submit_rst_stream(s, NGHTTP2_FLAG_NONE, f->hd.stream_id,
					  NGHTTP2_NO_ERROR);
	return 0;
}

static int on_stream_close(nghttp2_session *s, int32_t stream_id, uint32_t code, void *user)
{
	struct otlp_grpc_conn *c = user;
	struct otlp_grpc_call *call = call_of(c, stream_id);

	if (!call)
		return 0;
	nghttp2_session_set_stream_user_data(s, stream_id, NULL);
	if (call->state == OTLP_GRPC_QUEUED) {
		call->stream_gone = true; /* freed when the worker gives it back */
		return 0;
	}
	unlink_call(c, call);
	otlp_grpc_call_free(call);
	return 0;
}

/* ---- the session ------------------------------------------------------------------ */

/* What nghttp2 found wrong with what a client sent, at debug level. */
static int on_error(nghttp2_session *s, int code, const char *msg, size_t len, void *user)
{
	pr_debug("otlp-grpc: session: %.*s", (int)len, msg);
	return 0;
}

static int new_session(struct otlp_grpc_conn *c)
{
	nghttp2_session_callbacks *cb;
	nghttp2_option *opt;
	int err;

	if (nghttp2_session_callbacks_new(&cb))
		return -ENOMEM;
	if (nghttp2_option_new(&opt)) {
		nghttp2_session_callbacks_del(cb);
		return -ENOMEM;
	}
	nghttp2_session_callbacks_set_on_begin_headers_callback(cb, on_begin_headers);
	nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data_chunk);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cb, on_frame_recv);
	nghttp2_session_callbacks_set_on_frame_send_callback(cb, on_frame_send);
	nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_stream_close);
	nghttp2_session_callbacks_set_error_callback2(cb, on_error);
	nghttp2_option_set_max_settings(opt, 32);
	nghttp2_option_set_max_continuations(opt, 8);
	nghttp2_option_set_stream_reset_rate_limit(opt, 100, 10);
	nghttp2_option_set_max_deflate_dynamic_table_size(opt, 4096);
	err = nghttp2_session_server_new2(&c->session, cb, c, opt) ? -ENOMEM : 0;
	nghttp2_option_del(opt);
	nghttp2_session_callbacks_del(cb);
	return err;
}

int otlp_grpc_conn_init(struct otlp_grpc_conn *c)
{
	nghttp2_settings_entry iv[] = {
		{ NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, c->lim->max_streams },
		{ NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, c->lim->max_header_list },
	};
	int err = new_session(c);

	c->calls = NULL;
	c->working = 0;
	c->quiet_since_ms = ember_monotonic_ms();
	if (!err && nghttp2_submit_settings(c->session, NGHTTP2_FLAG_NONE, iv, 2))
		err = -ENOMEM;
	if (err) {
		nghttp2_session_del(c->session);
		c->session = NULL;
	}
	return err;
}

void otlp_grpc_conn_release(struct otlp_grpc_conn *c)
{
	struct otlp_grpc_call *call, *next;

	if (!c)
		return;
	for (call = c->calls; call; call = next) {
		next = call->next;
		if (call->state == OTLP_GRPC_QUEUED)
			call->conn = NULL; /* its owner frees it when it is back */
		else
			otlp_grpc_call_free(call);
	}
	c->calls = NULL;
	nghttp2_session_del(c->session); /* calls no stream-close callback */
	c->session = NULL;
}

int otlp_grpc_conn_recv(struct otlp_grpc_conn *c, const void *data, size_t len)
{
	ssize_t n = nghttp2_session_mem_recv(c->session, data, len);

	return n < 0 ? -EPROTO : 0;
}

int otlp_grpc_conn_send(struct otlp_grpc_conn *c, struct ember_buf *out)
{
	const uint8_t *p;
	ssize_t n;

	while ((n = nghttp2_session_mem_send(c->session, &p)) > 0)
		if (ember_buf_append(out, p, (size_t)n))
			return -E2BIG;
	return n < 0 ? -EPROTO : 0;
}

bool otlp_grpc_conn_over(const struct otlp_grpc_conn *c)
{
	return !nghttp2_session_want_read(c->session) && !nghttp2_session_want_write(c->session);
}

int otlp_grpc_conn_expire(struct otlp_grpc_conn *c, uint64_t now_ms)
{
	for (struct otlp_grpc_call *call = c->calls; call; call = call->next) {
		if (now_ms < call->deadline_ms)
			continue;
		if (call->state == OTLP_GRPC_HEAD)
			return -ETIMEDOUT;
		if (call->state == OTLP_GRPC_BODY &&
		    refuse(call, OTLP_GRPC_DEADLINE_EXCEEDED,
			   "the request message did not arrive within its deadline"))
			return -ENOMEM;
	}
	return 0;
}
