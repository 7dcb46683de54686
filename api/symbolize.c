/*
 * symbolize.c - POST /api/v1/symbolize: a batch of build IDs and
 * addresses in, frames out (docs/symbolize-api.md); the HTTP side.
 *
 * The body is read into a buffer capped at the request limit (413 past
 * it, body_step.c), parsed by wire/ (jansson), and answered by the
 * symbolization service (symbol-service/json_answer.c), which writes the
 * answer a chunk at a time as MHD sends it.  The status (200) is sent
 * before the first byte: a store that cannot be read for the first module
 * is answered 503 before that; a failure later (out of memory) ends the
 * chunked answer early, which the client sees as an incomplete body.
 */
#include "api_internal.h"
#include "symbolize_json.h"
#include "symsvc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define STREAM_BLOCK ((size_t)64 << 10) /* MHD's block for the callback */

struct answer_stream {
	struct api_server *srv;
	enum api_endpoint ep;
	struct symsvc_json_answer *ans;
	const char *data;		/* the service's chunk, sent up to sent */
	size_t len, sent, total;
	bool done;			/* the answer is complete */
	struct api_deadline deadline;	/* polled by the service while it works */
};

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct answer_stream *s = cls;
	size_t n;

	(void)pos;
	if (s->sent == s->len) {
		s->sent = 0;
		if (symsvc_json_answer_read(s->ans, &s->data, &s->len))
			return MHD_CONTENT_READER_END_WITH_ERROR;
		if (s->len == 0) {
			s->done = true;
			return MHD_CONTENT_READER_END_OF_STREAM;
		}
	}
	n = s->len - s->sent < max ? s->len - s->sent : max;
	memcpy(buf, s->data + s->sent, n);
	s->sent += n;
	s->total += n;
	return (ssize_t)n;
}

static void stream_free(void *cls)
{
	struct answer_stream *s = cls;
	size_t store_errors = symsvc_json_answer_store_errors(s->ans);

	api_metrics_count(&s->srv->metrics, s->ep,
			  s->done ? MHD_HTTP_OK : MHD_HTTP_INTERNAL_SERVER_ERROR, s->total);
	while (store_errors--)
		api_metrics_store_error(&s->srv->metrics, s->ep);
	symsvc_json_answer_free(s->ans);
	free(s);
}

/* The parsed request answered as a stream: queued, or 503/500 at once. */
static enum MHD_Result answer(struct api_server *srv, struct MHD_Connection *c,
			      struct api_request *req, struct symjson_request *rq)
{
	struct answer_stream *s = calloc(1, sizeof(*s));
	struct symsvc_request_opts ro;
	struct MHD_Response *resp;
	enum MHD_Result ret;
	int err = -ENOMEM;

	if (s) {
		api_deadline_init(&s->deadline, srv, req);
		api_deadline_request_opts(srv, &s->deadline, &ro);
		err = symsvc_json_answer_new(srv->symbols, rq, &ro, &s->ans);
	} else {
		symjson_request_free(rq);
	}
	if (err) {
		free(s);
		if (err == -ENOMEM)
			return api_respond_text(srv, c, req, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL,
						"out of memory\n");
		if (err == -ETIMEDOUT || err == -ECANCELED)
			return api_respond_stopped(srv, c, req, err);
		return api_respond_unavailable(srv, c, req, err); /* the first module's */
	}
	s->srv = srv;
	s->ep = req->route.ep;
	resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, STREAM_BLOCK, stream_read, s,
						 stream_free);
	if (!resp) {
		stream_free(s);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
	ret = MHD_queue_response(c, MHD_HTTP_OK, resp);
	MHD_destroy_response(resp);
	return ret;
}

enum MHD_Result api_symbolize_json(struct api_server *srv, struct MHD_Connection *c,
				   struct api_request *req)
{
	struct symjson_request *rq;
	char why[512];
	int err = symjson_request_parse(req->body.data ? req->body.data : "", req->body.len,
					NULL, &rq, why, sizeof(why));

	if (err)
		return api_respond_text(srv, c, req,
					err == -E2BIG ? MHD_HTTP_CONTENT_TOO_LARGE
						      : MHD_HTTP_BAD_REQUEST,
					NULL, why);
	return answer(srv, c, req, rq);
}
