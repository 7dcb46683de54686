/*
 * agent_metrics.c - the agent's own /metrics (--metrics-listen HOST:PORT), in
 * Prometheus text format: samples, frames by unwinder, why walks
 * stopped, drops, tables by source, processes, profiles written and
 * pushed, the push queue, and the agent's CPU time and RSS.  A tiny
 * HTTP/1.0 responder on the agent's one thread (the agent links no HTTP
 * server library): one short request at a time, then the connection is
 * closed.
 */
#include "agent_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

struct agent_metrics {
	int fd;
};

static int listen_on(const char *spec, char *why, size_t why_size)
{
	char host[256];
	const char *colon = strrchr(spec, ':');
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE }, *ai = NULL;
	int fd = -1, one = 1, rc;

	if (!colon || (size_t)(colon - spec) >= sizeof(host)) {
		snprintf(why, why_size, "agent: --metrics-listen '%s': expected HOST:PORT", spec);
		return -EINVAL;
	}
	memcpy(host, spec, (size_t)(colon - spec));
	host[colon - spec] = '\0';
	rc = getaddrinfo(host[0] ? host : NULL, colon + 1, &hints, &ai);
	if (rc) {
		snprintf(why, why_size, "agent: --metrics-listen '%s': %s", spec, gai_strerror(rc));
		return -EINVAL;
	}
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd >= 0)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (fd < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 16)) {
		int err = -errno;

		snprintf(why, why_size, "agent: cannot listen on '%s': %s", spec, strerror(errno));
		if (fd >= 0)
			close(fd);
		freeaddrinfo(ai);
		return err;
	}
	freeaddrinfo(ai);
	return fd;
}

struct agent_metrics *agent_metrics_new(const char *listen, int *err, char *why,
					size_t why_size)
{
	struct agent_metrics *m = calloc(1, sizeof(*m));

	if (!m) {
		*err = -ENOMEM;
		return NULL;
	}
	m->fd = listen_on(listen, why, why_size);
	if (m->fd < 0) {
		*err = m->fd;
		free(m);
		return NULL;
	}
	return m;
}

void agent_metrics_free(struct agent_metrics *m)
{
	if (!m)
		return;
	close(m->fd);
	free(m);
}

int agent_metrics_fd(const struct agent_metrics *m)
{
	return m->fd;
}

static void put(struct ember_buf *b, const char *name, const char *labels, uint64_t v)
{
	ember_buf_appendf(b, "%s%s%s%s %llu\n", name, labels ? "{" : "", labels ? labels : "",
			  labels ? "}" : "", (unsigned long long)v);
}

static void bpf_metrics(struct agent *a, struct ember_buf *b)
{
	static const struct {
		enum agent_stat s;
		const char *reason;
	} stops[] = {
		{ AGENT_STAT_STOP_NO_MAPPING, "no_mapping" },
		{ AGENT_STAT_STOP_NO_CFI, "no_cfi" },
		{ AGENT_STAT_STOP_READ, "read_failed" },
		{ AGENT_STAT_STOP_UNSUPPORTED, "unsupported_rule" },
		{ AGENT_STAT_TRUNCATED, "truncated" },
	};
	char l[64];

	put(b, "ember_agent_samples_total", NULL, agent_bpf_stat(a->bpf, AGENT_STAT_SAMPLES));
	put(b, "ember_agent_samples_filtered_total", NULL,
	    agent_bpf_stat(a->bpf, AGENT_STAT_SAMPLES_FILTERED));
	put(b, "ember_agent_frames_total", "unwinder=\"table\"",
	    agent_bpf_stat(a->bpf, AGENT_STAT_FRAMES_TABLE));
	put(b, "ember_agent_frames_total", "unwinder=\"frame_pointer\"",
	    agent_bpf_stat(a->bpf, AGENT_STAT_FRAMES_FP));
	for (size_t i = 0; i < sizeof(stops) / sizeof(stops[0]); i++) {
		snprintf(l, sizeof(l), "reason=\"%s\"", stops[i].reason);
		put(b, "ember_agent_walk_stops_total", l, agent_bpf_stat(a->bpf, stops[i].s));
	}
	put(b, "ember_agent_dropped_total", "what=\"counts_map_full\"",
	    agent_bpf_stat(a->bpf, AGENT_STAT_COUNT_DROPPED));
	put(b, "ember_agent_dropped_total", "what=\"ustacks_map_full\"",
	    agent_bpf_stat(a->bpf, AGENT_STAT_USTACK_DROPPED));
	put(b, "ember_agent_dropped_total", "what=\"events_lost\"",
	    agent_bpf_stat(a->bpf, AGENT_STAT_EVENTS_LOST));
	put(b, "ember_agent_kernel_stack_errors_total", NULL,
	    agent_bpf_stat(a->bpf, AGENT_STAT_KSTACK_FAILED));
	put(b, "ember_agent_dropped_total", "what=\"samples_ring_full\"",
	    agent_bpf_stat(a->bpf, AGENT_STAT_SAMPLES_LOST));
	/* 0 unless EMBER_AGENT_TIME_TRANSPORT is set (bench/agent/ab.py --time-transport) */
	put(b, "ember_agent_transport_nanoseconds_total", NULL,
	    agent_bpf_stat(a->bpf, AGENT_STAT_TRANSPORT_NS));
	/* --off-cpu: blocks ended, kept by the sampling rule, kept and not sent,
	 * kept of tasks without rseq; the T in force (raised past the budget)
	 * and whether the sys_exit program is attached */
	put(b, "ember_agent_offcpu_blocks_total", NULL,
	    agent_bpf_stat(a->bpf, AGENT_STAT_OFFCPU_BLOCKS));
	put(b, "ember_agent_offcpu_kept_total", NULL,
	    agent_bpf_stat(a->bpf, AGENT_STAT_OFFCPU_KEPT));
	put(b, "ember_agent_offcpu_lost_total", NULL,
	    agent_bpf_stat(a->bpf, AGENT_STAT_OFFCPU_LOST));
	put(b, "ember_agent_offcpu_no_rseq_total", NULL,
	    agent_bpf_stat(a->bpf, AGENT_STAT_OFFCPU_NO_RSEQ));
	ember_buf_appendf(b, "ember_agent_offcpu_threshold_seconds %.6f\n",
			  (double)agent_bpf_offcpu_t_ns(a->bpf) / 1e9);
	put(b, "ember_agent_offcpu_sys_exit_attached", NULL,
	    (uint64_t)agent_bpf_offcpu_sys_exit(a->bpf));
}

static void table_metrics(struct agent *a, struct ember_buf *b)
{
	size_t counts[AGENT_TABLE_SOURCE_COUNT], bytes, unloads, share, full;
	uint64_t first = agent_bpf_first_table_ns(a->bpf);
	char l[64];

	agent_tables_counts(a->tables, counts, &bytes, &unloads);
	for (int s = AGENT_TABLE_CACHE; s < AGENT_TABLE_SOURCE_COUNT; s++) {
		snprintf(l, sizeof(l), "source=\"%s\"", agent_table_source_name(s));
		put(b, "ember_agent_files", l, counts[s]);
	}
	put(b, "ember_agent_table_bytes", NULL, bytes);
	put(b, "ember_agent_tables_pending", NULL, agent_tables_pending(a->tables));
	put(b, "ember_agent_uploads_total", NULL, agent_tables_uploads(a->tables));
	put(b, "ember_agent_table_unloads_total", NULL, unloads);
	agent_tables_refused(a->tables, &share, &full);
	put(b, "ember_agent_tables_refused_total", "reason=\"process_share\"", share);
	put(b, "ember_agent_tables_refused_total", "reason=\"maps_full\"", full);
	put(b, "ember_agent_tables_evicted_total", "reason=\"fair_share\"",
	    agent_tables_evicted(a->tables));
	if (first)
		ember_buf_appendf(b, "ember_agent_first_table_sample_seconds %.6f\n",
				  (double)(first - a->start_mono_ns) / 1e9);
}

static void procs_metrics(struct agent *a, struct ember_buf *b)
{
	struct agent_procs_stats st;

	agent_procs_stats(a->procs, &st);
	put(b, "ember_agent_processes", NULL, agent_procs_count(a->procs));
	put(b, "ember_agent_mappings", NULL, st.mappings);
	put(b, "ember_agent_scans_total", NULL, st.scans);
	put(b, "ember_agent_dropped_total", "what=\"mappings_process_limit\"",
	    st.truncated_process);
	put(b, "ember_agent_dropped_total", "what=\"mappings_host_limit\"", st.truncated_host);
	put(b, "ember_agent_dropped_total", "what=\"rescans_rate_limited\"",
	    st.rescans_deferred);
	put(b, "ember_agent_perf_map_reads_total", NULL, st.perfmap_reads);
	put(b, "ember_agent_perf_maps_refused_total", NULL, st.perfmaps_refused);
	/* CPython (docs/agent.md, "Python") */
	put(b, "ember_agent_python_processes_total", NULL, st.python_processes);
	put(b, "ember_agent_python_unsupported_total", NULL, st.python_unsupported);
	put(b, "ember_agent_python_code_objects_total", "result=\"read\"", st.python_code_read);
	put(b, "ember_agent_python_code_objects_total", "result=\"unreadable\"",
	    st.python_code_unread);
	put(b, "ember_agent_python_cache_cleared_total", NULL, st.python_cache_cleared);
	put(b, "ember_agent_python_frames_total", NULL,
	    agent_bpf_stat(a->bpf, AGENT_STAT_PY_FRAMES));
	put(b, "ember_agent_python_samples_without_thread_total", NULL,
	    agent_bpf_stat(a->bpf, AGENT_STAT_PY_NO_THREAD));
}

static void push_metrics(struct agent *a, struct ember_buf *b)
{
	struct agent_push_stats s;

	put(b, "ember_agent_profiles_total", "result=\"written\"", a->profiles_written);
	if (!a->push)
		return;
	agent_push_stats(a->push, &s);
	put(b, "ember_agent_profiles_total", "result=\"sent\"", s.sent);
	put(b, "ember_agent_profiles_total", "result=\"dropped\"", s.dropped);
	put(b, "ember_agent_profiles_total", "result=\"refused\"", s.refused);
	put(b, "ember_agent_push_failures_total", NULL, s.failed_attempts);
	put(b, "ember_agent_push_dropped_bytes_total", NULL, s.dropped_bytes);
	put(b, "ember_agent_push_queue_profiles", NULL, s.queued);
	put(b, "ember_agent_push_queue_bytes", NULL, s.queued_bytes);
	ember_buf_appendf(b, "ember_agent_push_backoff_seconds %.3f\n", s.backoff_ms / 1e3);
}

static void self_metrics(struct ember_buf *b)
{
	struct rusage ru;
	long rss_pages = 0, pages;
	FILE *f = fopen("/proc/self/statm", "re");

	if (f && fscanf(f, "%ld %ld", &pages, &rss_pages) != 2)
		rss_pages = 0;
	if (f)
		fclose(f);
	getrusage(RUSAGE_SELF, &ru);
	ember_buf_appendf(b, "process_cpu_seconds_total %.3f\n",
			  ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
				  (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6);
	put(b, "process_resident_memory_bytes", NULL, (uint64_t)rss_pages * 4096);
	put(b, "process_max_resident_memory_bytes", NULL, (uint64_t)ru.ru_maxrss * 1024);
}

int agent_metrics_text(struct agent *a, struct ember_buf *b)
{
	bpf_metrics(a, b);
	table_metrics(a, b);
	procs_metrics(a, b);
	put(b, "ember_agent_drains_total", NULL, a->drains);
	put(b, "ember_agent_samples_drained_total", NULL, a->samples_drained);
	push_metrics(a, b);
	self_metrics(b);
	return 0;
}

static void answer(struct agent *a, int c)
{
	char req[2048];
	struct pollfd pfd = { .fd = c, .events = POLLIN };
	struct ember_buf body, head;
	ssize_t n = 0;
	bool ok;

	if (poll(&pfd, 1, 200) == 1)
		n = read(c, req, sizeof(req) - 1);
	req[n > 0 ? n : 0] = '\0';
	ok = !strncmp(req, "GET /metrics ", 13) || !strncmp(req, "GET /metrics?", 13);
	ember_buf_init(&body, 1 << 20);
	ember_buf_init(&head, 4096);
	if (ok)
		agent_metrics_text(a, &body);
	else
		ember_buf_appendf(&body, "not found\n");
	ember_buf_appendf(&head, "HTTP/1.0 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
			  "Connection: close\r\n\r\n",
			  ok ? "200 OK" : "404 Not Found",
			  ok ? "text/plain; version=0.0.4" : "text/plain", body.len);
	if (ember_write_all(c, head.data, head.len) || ember_write_all(c, body.data, body.len))
		pr_debug("agent: metrics: a client went away");
	ember_buf_release(&body);
	ember_buf_release(&head);
}

void agent_metrics_serve(struct agent_metrics *m, struct agent *a)
{
	int c;

	while ((c = accept4(m->fd, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
		answer(a, c);
		close(c);
	}
}
