/*
 * symbolize_pprof.c - POST /api/v1/symbolize/pprof: a profile with raw
 * addresses in, the same profile with functions and lines out
 * (docs/symbolize-api.md); the HTTP side.
 *
 * The profile is decoded and validated by wire/ (raw, gzip or zstd),
 * symbolized by the symbolization service (symbol-service/pprof_symbolize.c)
 * and encoded back, gzip.  X-Ember-Locations counts the locations that got
 * lines and those that did not, X-Ember-Unresolved gives the reasons of
 * the latter.  A store that could not be read for a mapping makes the
 * answer 503: a profile with mappings left unsymbolized would pass for a
 * complete one.
 */
#include "api_internal.h"
#include "pprof.h"
#include "symsvc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROFILE_OUT_CAP ((size_t)256 << 20)

/* The symbolized profile, encoded, with its headers. */
static enum MHD_Result send_profile(struct api_server *srv, struct MHD_Connection *c,
				    struct api_request *req, struct ember_buf *out,
				    const struct symsvc_pprof_stats *st)
{
	char hdr[64], reasons[512];
	struct MHD_Response *resp;
	enum MHD_Result ret;

	snprintf(hdr, sizeof(hdr), "%zu resolved, %zu unresolved", st->resolved, st->unresolved);
	symsvc_pprof_why_list(st, reasons, sizeof(reasons));
	resp = MHD_create_response_from_buffer(out->len, out->data, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		ember_buf_release(out);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/octet-stream");
	MHD_add_response_header(resp, "X-Ember-Locations", hdr);
	if (reasons[0])
		MHD_add_response_header(resp, "X-Ember-Unresolved", reasons);
	ret = MHD_queue_response(c, MHD_HTTP_OK, resp);
	api_metrics_count(&srv->metrics, req->route.ep, MHD_HTTP_OK, out->len);
	MHD_destroy_response(resp);
	return ret;
}

enum ember_errkind api_symbolize_pprof_error_kind(int err)
{
	enum ember_errkind kind = symsvc_error_kind(err);

	switch (kind) {
	case EMBER_ERRK_TOO_LARGE: /* the request's share of the memory budget */
	case EMBER_ERRK_BUSY:	   /* the budget, taken by others now */
	case EMBER_ERRK_TIMEOUT:
		return kind;
	default: /* editing or encoding the profile failed */
		return EMBER_ERRK_INTERNAL;
	}
}

enum ember_errkind api_symbolize_pprof_store_kind(int store_err)
{
	return symsvc_error_kind(store_err) == EMBER_ERRK_BUSY ? EMBER_ERRK_BUSY
							       : EMBER_ERRK_UNAVAILABLE;
}

/* The body answering err of symbolizing or encoding the profile. */
static const char *symbolize_failure(int err)
{
	switch (api_symbolize_pprof_error_kind(err)) {
	case EMBER_ERRK_TOO_LARGE:
		return "the symbolized profile needs more memory than the server gives one "
		       "request\n";
	case EMBER_ERRK_BUSY:
		return "server busy: no memory free to symbolize the profile now\n";
	default:
		return "cannot symbolize the profile\n";
	}
}

enum MHD_Result api_symbolize_pprof(struct api_server *srv, struct MHD_Connection *c,
				    struct api_request *req)
{
	struct pprof_limits lim = { .sz = sizeof(lim), .account = req->acct };
	struct symsvc_pprof_opts po = { .sz = sizeof(po) };
	struct symsvc_request_opts ro;
	struct symsvc_pprof_stats st;
	struct api_deadline dl;
	struct pprof_profile *p;
	struct ember_buf out;
	char why[512] = "";
	int err = req->body_err;

	if (err == -E2BIG)
		snprintf(why, sizeof(why), "the profile needs more memory than the server gives "
					   "one request");
	else if (err == -EAGAIN)
		snprintf(why, sizeof(why), "no memory free for the profile now");
	if (!err)
		err = pprof_decode(req->body.data, req->body.len, &lim, &p, why, sizeof(why));
	if (err)
		return api_respond_body_error(srv, c, req, err, why);
	api_deadline_init(&dl, srv, req);
	api_deadline_request_opts(srv, &dl, &ro);
	po.request = &ro;
	ro.account = req->acct;
	err = symsvc_symbolize_pprof(srv->symbols, p, &po, &st);
	if (err == -ETIMEDOUT || err == -ECANCELED) {
		pprof_profile_free(p);
		return api_respond_stopped(srv, c, req, err);
	}
	ember_buf_release(&req->body); /* decoded: the body's memory is not needed */
	ember_buf_init_account(&out, PROFILE_OUT_CAP, req->acct);
	if (!err && !st.store_err)
		err = pprof_encode(p, true, &out);
	pprof_profile_free(p);
	if (err || st.store_err)
		ember_buf_release(&out);
	if (!err && st.store_err)
		return api_respond_kind(srv, c, req, api_symbolize_pprof_store_kind(st.store_err),
					st.store_err == -EAGAIN
						? "server busy: no memory free to build a mapping's "
						  "symbol index now\n"
						: strerror(-st.store_err));
	if (err)
		return api_respond_kind(srv, c, req, api_symbolize_pprof_error_kind(err),
					symbolize_failure(err));
	return send_profile(srv, c, req, &out, &st);
}
