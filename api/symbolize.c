/*
 * symbolize.c - POST /api/v1/symbolize: a batch of build IDs and
 * addresses in, frames out (docs/symbolize-api.md); the HTTP side.
 *
 * The body is parsed as it arrives by wire/'s streamed parser, under the
 * request's memory account (413 past its share, 503 when the server's
 * budget is taken: body_step.c), and answered by the
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
	struct ember_mem_account *acct;	/* the request's, until the answer is sent */
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
	api_account_free(s->acct);
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
		s->acct = req->acct; /* the request's memory lives with its answer */
		req->acct = NULL;
		api_deadline_init(&s->deadline, srv, req);
		api_deadline_request_opts(srv, &s->deadline, &ro);
		ro.account = s->acct;
		err = symsvc_json_answer_new(srv->symbols, rq, &ro, &s->ans);
	} else {
		symjson_request_free(rq);
	}
	if (err) {
		if (s)
			api_account_free(s->acct);
		free(s);
		if (err == -ETIMEDOUT || err == -ECANCELED)
			return api_respond_stopped(srv, c, req, err);
		/* -ENOMEM 500, the first module's store error 503 */
		return api_respond_kind(srv, c, req, symsvc_error_kind(err),
					err == -ENOMEM ? "out of memory\n" : strerror(-err));
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
	struct symjson_request *rq = NULL;
	int err = req->body_err;

	if (!err)
		err = symjson_parser_finish(req->parser, &rq);
	if (err)
		return api_respond_body_error(srv, c, req, err,
					      req->parser ? symjson_parser_why(req->parser)
							  : "out of memory");
	symjson_parser_free(req->parser);
	req->parser = NULL;
	return answer(srv, c, req, rq);
}
