/*
 * server.c - the libmicrohttpd daemon and the dispatch of each request.
 *
 * One thread per connection, as elfutils' debuginfod: a connection never
 * waits behind another's transfer.  With a thread pool, two keep-alive
 * connections on one thread took turns at 128 KiB sendfile steps (MHD
 * 0.9.75's step in that mode; 2 MiB with a thread per connection), which
 * doubled their latency: 4 MB files had a p99 above debuginfod's
 * (docs/benchmarks.md).  A request that needs an upstream fetch waits on
 * its own thread while a fetch thread works (federation.c).  poll(2), not
 * epoll: in epoll mode MHD 0.9.75 missed a client closing mid-upload
 * under load.  Per-request state lives from the first callback to MHD's
 * completion notice, where an unfinished upload is discarded.
 *
 * So that no client can take the server from the others: at most
 * max_per_client connections from one address (MHD refuses more at
 * accept), a deadline for every request head and every symbolization
 * or profile body, a minimum average rate for an upload's body
 * (conn_guard.c), a deadline for every request's work (the symbolization
 * service polls it, and the client's socket, between steps), and an
 * idle timeout for the rest.
 */
#include "api_internal.h"
#include "symbolize_json.h"
#include "api_profiles.h"
#include "symsvc.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define IDLE_TIMEOUT_S 60
#define UNWIND_FAILED_TTL_S 86400 /* rejected inputs are content-addressed */
#define UNWIND_FAILED_MAX 4096

static bool is_get(const char *method)
{
	return strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
}

/* A miss asked upstream: 404 only when nobody has it, 503 when asking
 * failed (as elfutils' server answers), or the fetch's file once stored. */
static enum MHD_Result serve_fetched(struct api_server *srv, struct MHD_Connection *c,
				     struct api_request *req)
{
	bool missing = true;
	enum MHD_Result ret = MHD_YES;
	int err = api_upstream_wait(srv, c, req);

	if (!err)
		ret = api_serve_buildid(srv, c, req, &missing);
	if (!missing)
		return ret;
	switch (api_upstream_error_kind(err)) {
	case EMBER_ERRK_TIMEOUT:
		return api_respond_stopped(srv, c, req, err);
	case EMBER_ERRK_BUSY:
		return api_respond_kind(srv, c, req, EMBER_ERRK_BUSY,
					err == -ECANCELED ? "server stopping\n"
							  : "upstream unavailable\n");
	case EMBER_ERRK_UNAVAILABLE:
		return api_respond_unavailable(srv, c, req, err);
	default:
		return api_respond_kind(srv, c, req, EMBER_ERRK_NOT_FOUND, "not found");
	}
}

static enum MHD_Result serve_buildid(struct api_server *srv, struct MHD_Connection *c,
				     struct api_request *req)
{
	bool missing;
	enum MHD_Result ret = api_serve_buildid(srv, c, req, &missing);

	if (!missing)
		return ret;
	if (srv->upstream)
		return serve_fetched(srv, c, req);
	return api_respond_kind(srv, c, req, EMBER_ERRK_NOT_FOUND, "not found");
}

static enum MHD_Result dispatch_get(struct api_server *srv, struct MHD_Connection *c,
				    struct api_request *req, const char *url)
{
	const struct api_route *r = &req->route;

	if (r->status)
		return api_respond_text(srv, c, req, (unsigned)r->status, NULL, r->error);
	switch (r->ep) {
	case API_EP_ROOT: /* the web UI's page (docs/web-ui.md) */
	case API_EP_WEB:
		return api_serve_web(srv, c, req, url);
	case API_EP_LIST_ALL:
		return api_serve_list_all(srv, c, req);
	case API_EP_HEALTH: /* ready once the store's records can be read */
		if (!store_is_open(srv->store))
			return api_respond_text(srv, c, req, MHD_HTTP_SERVICE_UNAVAILABLE, NULL,
						"opening the store\n");
		return api_respond_text(srv, c, req, MHD_HTTP_OK, NULL, "ok\n");
	case API_EP_METRICS:
		return api_metrics_serve(srv, c, req);
	case API_EP_LIST:
		return api_serve_list(srv, c, req);
	case API_EP_UNWIND:
		return api_serve_unwind(srv, c, req);
	default:
		return serve_buildid(srv, c, req);
	}
}

/* Whether the route's body must be whole by the request's deadline: the
 * writes held in memory (an upload, written to disk, has a minimum rate
 * instead: artifact_upload.c). */
static bool body_due_at_deadline(enum api_endpoint ep)
{
	return ep == API_EP_SYMBOLIZE || ep == API_EP_SYMBOLIZE_PPROF ||
	       ep == API_EP_PROFILE_INGEST || ep == API_EP_PYROSCOPE_INGEST ||
	       ep == API_EP_OTLP_PROFILES || ep == API_EP_CONNECT;
}

static enum MHD_Result first_call(struct api_server *srv, struct MHD_Connection *c,
				  const char *url, const char *method, void **con_cls)
{
	struct api_request *req = calloc(1, sizeof(*req));

	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);

	if (!req)
		return MHD_NO;
	*con_cls = req;
	req->deadline_ms = ember_monotonic_ms() + srv->request_timeout_ms;
	req->conn_fd = ci ? ci->connect_fd : -1;
	api_route_parse(url, &req->route);
	if (body_due_at_deadline(req->route.ep))
		api_guard_body_due(&srv->guard, c, req->deadline_ms);
	else
		api_guard_working(&srv->guard, c);
	req->head = strcmp(method, "HEAD") == 0;
	if (req->route.status && !is_get(method))
		return api_respond_text(srv, c, req, (unsigned)req->route.status, NULL,
					req->route.error);
	if (api_profile_endpoint(req->route.ep)) /* profile_routes.c */
		return api_profile_first(srv, c, req, method);
	if (req->route.ep == API_EP_SYMBOLIZE || req->route.ep == API_EP_SYMBOLIZE_PPROF) {
		if (strcmp(method, "POST"))
			return api_respond_text(srv, c, req, MHD_HTTP_METHOD_NOT_ALLOWED,
						NULL, "symbolize with POST\n");
		return api_body_step(srv, c, req, NULL, &(size_t){ 0 }, &(bool){ false });
	}
	if (req->route.ep == API_EP_UPLOAD) {
		if (strcmp(method, "PUT") && strcmp(method, "POST"))
			return api_respond_text(srv, c, req, MHD_HTTP_METHOD_NOT_ALLOWED,
						NULL, "upload with PUT or POST\n");
		return api_upload_step(srv, c, req, NULL, &(size_t){ 0 });
	}
	return MHD_YES; /* answered in the next call, once the request is whole */
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version,
			      const char *upload_data, size_t *upload_data_size,
			      void **con_cls)
{
	struct api_server *srv = cls;
	struct api_request *req = *con_cls;

	if (!req)
		return first_call(srv, c, url, method, con_cls);
	if (api_profile_endpoint(req->route.ep))
		return api_profile_next(srv, c, req, upload_data, upload_data_size);
	if (req->route.ep == API_EP_UPLOAD && !req->route.status)
		return api_upload_step(srv, c, req, upload_data, upload_data_size);
	if (req->route.ep == API_EP_SYMBOLIZE || req->route.ep == API_EP_SYMBOLIZE_PPROF) {
		bool complete = false;
		enum MHD_Result r = api_body_step(srv, c, req, upload_data,
						  upload_data_size, &complete);

		if (!complete)
			return r;
		api_guard_working(&srv->guard, c);
		return req->route.ep == API_EP_SYMBOLIZE ? api_symbolize_json(srv, c, req)
							  : api_symbolize_pprof(srv, c, req);
	}
	if (*upload_data_size) {
		*upload_data_size = 0; /* a body on a GET is ignored */
		return MHD_YES;
	}
	if (!is_get(method))
		return api_respond_text(srv, c, req, MHD_HTTP_BAD_REQUEST, NULL,
					"we support GET and HEAD only");
	return dispatch_get(srv, c, req, url);
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
		      enum MHD_RequestTerminationCode toe)
{
	struct api_server *srv = cls;
	struct api_request *req = *con_cls;

	api_guard_next_head(&srv->guard, c);
	if (!req)
		return;
	api_upload_abort(srv, req);
	profsvc_tenant_put(req->profiles); /* the tenant's store may close once idle */
	ember_buf_release(&req->body);
	symjson_parser_free(req->parser);
	api_account_free(req->acct); /* NULL when a streamed answer took it */
	free(req);
	*con_cls = NULL;
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char msg[512];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	msg[strcspn(msg, "\n")] = '\0';
	pr_warn("api: %s", msg);
}

/*
 * One memory budget for the whole server (docs/security.md): the symbol
 * cache takes its part (half the limit unless set), an eighth is left to
 * what no account counts (threads, connection buffers, RocksDB), and the
 * rest is the budget every request and build draws on, one request at
 * most half of it.
 */
static int size_memory(struct api_server *srv, const struct api_server_opts *o,
		       uint64_t *cache_bytes)
{
	uint64_t limit = o->memory_limit ? o->memory_limit : API_MEMORY_LIMIT;
	uint64_t cache = o->symbol_cache_bytes ? o->symbol_cache_bytes : limit / 2;
	uint64_t rest = limit - limit / 8;

	if (cache >= rest) {
		pr_err("api: the symbol cache (%llu MiB) leaves nothing of the memory limit "
		       "(%llu MiB) to requests", (unsigned long long)(cache >> 20),
		       (unsigned long long)(limit >> 20));
		return -EINVAL;
	}
	ember_mem_budget_init(&srv->mem, rest - cache);
	srv->request_share = (rest - cache) / 2;
	*cache_bytes = cache;
	pr_info("api: memory limit %llu MiB: symbol cache %llu MiB, requests %llu MiB "
		"(%llu MiB at most each)", (unsigned long long)(limit >> 20),
		(unsigned long long)(cache >> 20), (unsigned long long)((rest - cache) >> 20),
		(unsigned long long)(srv->request_share >> 20));
	return 0;
}

static int init_server(struct api_server *srv, struct store *s,
		       const struct api_server_opts *o)
{
	struct symsvc_opts so = { .sz = sizeof(so), .cache_bytes = o->symbol_cache_bytes,
				  .fetch = api_upstream_fetch, .fetch_arg = srv,
				  .budget = &srv->mem };
	int err;

	srv->store = s;
	pthread_mutex_init(&srv->unwind_mu, NULL);
	srv->unwind_failed = ember_errcache_new(UNWIND_FAILED_TTL_S, UNWIND_FAILED_MAX);
	if (!srv->unwind_failed)
		return -ENOMEM;
	srv->max_upload = o->max_upload ? o->max_upload : (uint64_t)4 << 30;
	srv->request_timeout_ms =
		(uint64_t)(o->request_timeout ? o->request_timeout : API_REQUEST_TIMEOUT) * 1000;
	srv->max_fetches = o->max_fetches ? o->max_fetches : API_MAX_FETCHES;
	err = size_memory(srv, o, &so.cache_bytes);
	if (err)
		return err;
	so.build_bytes = srv->request_share; /* a build is a request's work */
	if (!o->token || strlen(o->token) >= sizeof(srv->token))
		return -EINVAL;
	strcpy(srv->token, o->token);
	err = symsvc_new(s, &so, &srv->symbols);
	if (err)
		return err;
	if (o->upstream)
		return api_upstream_new(o->upstream_workers ? o->upstream_workers : 4,
					o->upstream_miss_ttl ? o->upstream_miss_ttl : 600,
					o->upstream_max_size ? o->upstream_max_size
							     : srv->max_upload,
					o->upstream_quota ? o->upstream_quota : API_UPSTREAM_QUOTA,
					&srv->upstream);
	return 0;
}

int api_server_start(struct store *s, const struct api_server_opts *o, int listen_fd,
		     struct api_server **out)
{
	const struct pstore_blockio *blocks = o->profiles ? o->profiles->service.blocks : NULL;
	struct api_server *srv = calloc(1, sizeof(*srv));
	int err;

	if (!srv) {
		close(listen_fd);
		return -ENOMEM;
	}
	err = init_server(srv, s, o);
	if (!err)
		err = api_guard_start(&srv->guard,
				      o->header_timeout ? o->header_timeout : API_HEADER_TIMEOUT,
				      o->min_upload_rate < 0 ? 0
				      : o->min_upload_rate  ? (unsigned)o->min_upload_rate
							    : API_MIN_UPLOAD_RATE,
				      &srv->metrics.connections_timed_out);
	if (!err)
		err = api_profiles_start(srv, o->profiles);
	else if (blocks && blocks->release)
		blocks->release(blocks->ctx); /* it owns them */
	if (err) {
		close(listen_fd);
		goto fail;
	}
	srv->daemon = MHD_start_daemon(
		MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL |
			MHD_USE_ERROR_LOG,
		0, NULL, NULL, handle, srv,
		MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
		MHD_OPTION_LISTEN_SOCKET, listen_fd, /* closed by MHD_stop_daemon */
		MHD_OPTION_CONNECTION_LIMIT,
		o->max_connections ? o->max_connections : API_MAX_CONNECTIONS,
		MHD_OPTION_PER_IP_CONNECTION_LIMIT,
		o->max_per_client ? o->max_per_client : API_MAX_PER_CLIENT,
		MHD_OPTION_NOTIFY_COMPLETED, completed, srv,
		MHD_OPTION_NOTIFY_CONNECTION, api_guard_notify, srv,
		/* idle time in the middle of a body or an answer; heads and
		 * bodies have deadlines of their own (conn_guard.c) */
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)IDLE_TIMEOUT_S,
		MHD_OPTION_END);
	if (!srv->daemon) { /* MHD closed listen_fd; the reason is logged */
		err = -EIO;
		goto fail;
	}
	*out = srv;
	return 0;
fail:
	api_server_stop(srv);
	return err;
}

void api_server_quiesce(struct api_server *srv)
{
	if (!srv)
		return;
	api_upstream_shutdown(srv->upstream); /* resumes suspended requests */
	if (srv->daemon)
		MHD_stop_daemon(srv->daemon);
	srv->daemon = NULL;
	api_guard_stop(&srv->guard); /* after MHD: its closing notices take the lock */
}

void api_server_stop(struct api_server *srv)
{
	if (!srv)
		return;
	api_server_quiesce(srv);
	api_upstream_free(srv->upstream);
	api_profiles_stop(srv); /* before the service its resolver uses */
	symsvc_free(srv->symbols);
	ember_errcache_free(srv->unwind_failed);
	pthread_mutex_destroy(&srv->unwind_mu);
	free(srv);
}
