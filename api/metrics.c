/*
 * metrics.c - counters for GET /metrics, in the Prometheus text format.
 * Counters are relaxed atomics bumped by the connection threads; the
 * rendering reads them without a lock (each value is exact, the set is
 * not a snapshot, as with any Prometheus exporter).  GET /metrics answers
 * them, the profile service's lines after them (profsvc_metrics).
 */
#include "api_profiles.h"
#include "otlp_grpc.h"
#include "symsvc.h"

#include <stdio.h>
#include <stdlib.h>

static const unsigned status_codes[API_STATUS_SLOTS] = {
	200, 201, 206, 304, 400, 401, 404, 406, 409, 413, 416, 422, 500, 503, 507, 0,
};

static const char *const reject_names[API_REJECT_COUNT] = {
	[API_REJECT_AUTH] = "unauthorized",  [API_REJECT_TOO_LARGE] = "too_large",
	[API_REJECT_NOT_ELF] = "not_elf",     [API_REJECT_BUILD_ID] = "build_id_mismatch",
	[API_REJECT_BAD_ELF] = "bad_elf",     [API_REJECT_NO_SPACE] = "no_space",
	[API_REJECT_ABORTED] = "aborted",     [API_REJECT_OTHER] = "other",
	[API_REJECT_STORE] = "store_unavailable",
};

static unsigned status_slot(unsigned status)
{
	for (unsigned i = 0; i < API_STATUS_SLOTS - 1; i++)
		if (status_codes[i] == status)
			return i;
	return API_STATUS_SLOTS - 1; /* "other" */
}

void api_metrics_count(struct api_metrics *m, enum api_endpoint ep,
		       unsigned status, uint64_t bytes)
{
	atomic_fetch_add_explicit(&m->responses[ep][status_slot(status)], 1,
				  memory_order_relaxed);
	atomic_fetch_add_explicit(&m->bytes_served[ep], bytes, memory_order_relaxed);
}

void api_metrics_reject(struct api_metrics *m, enum api_reject why)
{
	atomic_fetch_add_explicit(&m->uploads_rejected[why], 1, memory_order_relaxed);
}

void api_metrics_store_error(struct api_metrics *m, enum api_endpoint ep)
{
	atomic_fetch_add_explicit(&m->store_errors[ep], 1, memory_order_relaxed);
}

static void render_store_errors(FILE *f, struct api_metrics *m)
{
	fputs("# HELP ember_store_errors_total Requests answered 503 (modules of a "
	      "symbolization batch left unresolved) because the store could not be read "
	      "or written.\n"
	      "# TYPE ember_store_errors_total counter\n", f);
	for (int ep = 0; ep < API_EP_COUNT; ep++)
		if (m->store_errors[ep])
			fprintf(f, "ember_store_errors_total{endpoint=\"%s\"} %llu\n",
				api_endpoint_name(ep), (unsigned long long)m->store_errors[ep]);
}

static void render_responses(FILE *f, struct api_metrics *m)
{
	fputs("# HELP ember_http_responses_total HTTP responses by endpoint and status.\n"
	      "# TYPE ember_http_responses_total counter\n", f);
	for (int ep = 0; ep < API_EP_COUNT; ep++)
		for (unsigned i = 0; i < API_STATUS_SLOTS; i++) {
			uint64_t v = m->responses[ep][i];

			if (!v)
				continue;
			fprintf(f, "ember_http_responses_total{endpoint=\"%s\",code=\"",
				api_endpoint_name(ep));
			if (status_codes[i])
				fprintf(f, "%u", status_codes[i]);
			else
				fputs("other", f);
			fprintf(f, "\"} %llu\n", (unsigned long long)v);
		}
	fputs("# HELP ember_http_bytes_served_total Response body bytes by endpoint.\n"
	      "# TYPE ember_http_bytes_served_total counter\n", f);
	for (int ep = 0; ep < API_EP_COUNT; ep++)
		if (m->bytes_served[ep])
			fprintf(f, "ember_http_bytes_served_total{endpoint=\"%s\"} %llu\n",
				api_endpoint_name(ep),
				(unsigned long long)m->bytes_served[ep]);
}

static void render_uploads(FILE *f, struct api_metrics *m)
{
	fprintf(f, "# HELP ember_uploads_total Uploads by result.\n"
		   "# TYPE ember_uploads_total counter\n"
		   "ember_uploads_total{result=\"accepted\"} %llu\n"
		   "ember_uploads_total{result=\"duplicate\"} %llu\n",
		(unsigned long long)m->uploads_accepted,
		(unsigned long long)m->uploads_duplicate);
	for (size_t i = 0; i < API_REJECT_COUNT; i++)
		fprintf(f, "ember_uploads_total{result=\"rejected\",reason=\"%s\"} %llu\n",
			reject_names[i], (unsigned long long)m->uploads_rejected[i]);
}

static void render_upstream(FILE *f, struct api_metrics *m)
{
	fprintf(f, "# HELP ember_upstream_requests_total Upstream debuginfod fetches by result.\n"
		   "# TYPE ember_upstream_requests_total counter\n"
		   "ember_upstream_requests_total{result=\"hit\"} %llu\n"
		   "ember_upstream_requests_total{result=\"miss\"} %llu\n"
		   "ember_upstream_requests_total{result=\"error\"} %llu\n"
		   "ember_upstream_requests_total{result=\"negative_cached\"} %llu\n",
		(unsigned long long)m->upstream_hits,
		(unsigned long long)m->upstream_misses,
		(unsigned long long)m->upstream_errors,
		(unsigned long long)m->upstream_negative_cached);
}

static void render_limits(FILE *f, struct api_metrics *m)
{
	fprintf(f, "# HELP ember_connections_timed_out_total Connections shut down because a "
		   "request head or body was not sent in time.\n"
		   "# TYPE ember_connections_timed_out_total counter\n"
		   "ember_connections_timed_out_total %llu\n"
		   "# HELP ember_requests_stopped_total Requests whose work was stopped: past "
		   "--request-timeout, or their client went away.\n"
		   "# TYPE ember_requests_stopped_total counter\n"
		   "ember_requests_stopped_total{reason=\"timeout\"} %llu\n"
		   "ember_requests_stopped_total{reason=\"client_gone\"} %llu\n"
		   "# HELP ember_unwind_failures_cached_total Unwind requests answered with a "
		   "remembered rejection of the same inputs, not compiled again.\n"
		   "# TYPE ember_unwind_failures_cached_total counter\n"
		   "ember_unwind_failures_cached_total %llu\n",
		(unsigned long long)m->connections_timed_out,
		(unsigned long long)m->requests_timed_out,
		(unsigned long long)m->requests_cancelled,
		(unsigned long long)m->unwind_failures_cached);
}

static void render_grpc(FILE *f, struct api_metrics *m)
{
	const struct otlp_grpc_server *g = atomic_load(&m->grpc);

	if (!g)
		return;
	fputs("# HELP ember_otlp_grpc_calls_total OTLP/gRPC Export calls answered, by "
	      "grpc-status.\n"
	      "# TYPE ember_otlp_grpc_calls_total counter\n", f);
	for (unsigned code = 0; code < OTLP_GRPC_CODES; code++) {
		uint64_t n = otlp_grpc_answered(g, code);

		if (n || code == OTLP_GRPC_OK)
			fprintf(f, "ember_otlp_grpc_calls_total{code=\"%s\"} %llu\n",
				otlp_grpc_code_name(code), (unsigned long long)n);
	}
}

static void render_store(FILE *f, struct store *s)
{
	struct store_stats st;

	store_get_stats(s, &st);
	fprintf(f, "# HELP ember_store_artifacts Stored candidates (executables and debug files).\n"
		   "# TYPE ember_store_artifacts gauge\n"
		   "ember_store_artifacts %llu\n"
		   "# HELP ember_store_sources Stored source files.\n"
		   "# TYPE ember_store_sources gauge\n"
		   "ember_store_sources %llu\n"
		   "# HELP ember_store_bytes Bytes of stored artifacts.\n"
		   "# TYPE ember_store_bytes gauge\n"
		   "ember_store_bytes %llu\n"
		   "# HELP ember_store_upstream_bytes Bytes of what upstream sent (under the quota).\n"
		   "# TYPE ember_store_upstream_bytes gauge\n"
		   "ember_store_upstream_bytes %llu\n"
		   "# HELP ember_store_evictions_total Files fetched from upstream evicted for the "
		   "quota.\n"
		   "# TYPE ember_store_evictions_total counter\n"
		   "ember_store_evictions_total %llu\n",
		(unsigned long long)st.artifacts, (unsigned long long)st.sources,
		(unsigned long long)st.blob_bytes, (unsigned long long)st.upstream_bytes,
		(unsigned long long)st.evictions);
}

static void render_symbols(FILE *f, struct symsvc *svc)
{
	struct symsvc_stats st;

	symsvc_get_stats(svc, &st);
	fprintf(f, "# HELP ember_symbol_cache_bytes Memory of the loaded symbol indexes.\n"
		   "# TYPE ember_symbol_cache_bytes gauge\n"
		   "ember_symbol_cache_bytes %llu\n"
		   "ember_symbol_cache_budget_bytes %llu\n"
		   "ember_symbol_cache_indexes %zu\n"
		   "# TYPE ember_symbol_cache_events_total counter\n"
		   "ember_symbol_cache_events_total{event=\"build\"} %zu\n"
		   "ember_symbol_cache_events_total{event=\"eviction\"} %zu\n"
		   "ember_symbol_cache_events_total{event=\"over_budget\"} %zu\n"
		   "ember_symbol_cache_events_total{event=\"disk_load\"} %zu\n"
		   "ember_symbol_cache_events_total{event=\"pin_load\"} %zu\n"
		   "ember_symbol_cache_events_total{event=\"unsaved\"} %zu\n"
		   "ember_symbol_cache_events_total{event=\"superseded\"} %zu\n"
		   "ember_symbol_cache_events_total{event=\"build_failed\"} %zu\n"
		   "ember_symbol_cache_events_total{event=\"failure_cached\"} %zu\n",
		(unsigned long long)st.bytes, (unsigned long long)st.budget, st.loaded,
		st.builds, st.evictions, st.refused, st.disk_loads, st.pin_loads, st.unsaved,
		st.rebuilds, st.build_failures, st.failures_cached);
}

char *api_metrics_render(struct api_metrics *m, struct store *s, struct symsvc *svc,
			 size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	if (!f)
		return NULL;
	render_responses(f, m);
	render_store_errors(f, m);
	render_uploads(f, m);
	render_upstream(f, m);
	render_limits(f, m);
	render_grpc(f, m);
	render_store(f, s);
	render_symbols(f, svc);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

enum MHD_Result api_metrics_serve(struct api_server *srv, struct MHD_Connection *c,
				  struct api_request *req)
{
	size_t len;
	char *text = api_metrics_render(&srv->metrics, srv->store, srv->symbols, &len);
	struct ember_buf b;

	if (!text)
		return MHD_NO;
	ember_buf_init(&b, SIZE_MAX / 2);
	if (ember_buf_append(&b, text, len) || (srv->profiles && profsvc_metrics(srv->profiles->svc, &b))) {
		free(text);
		ember_buf_release(&b);
		return MHD_NO;
	}
	free(text);
	return api_respond_owned(srv, c, req, MHD_HTTP_OK, "text/plain; version=0.0.4", b.data,
				 b.len);
}
