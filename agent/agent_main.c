/*
 * agent_main.c - ember-agent: sample every CPU with BPF, unwind user stacks by
 * Ember's tables (or frame pointers), and every --interval seconds turn
 * the counts into a pprof profile, written to --output DIR and/or pushed
 * to --server (docs/agent.md).  One thread: the loop below waits on the
 * BPF event ring buffer, the metrics socket, signals and the next
 * deadline (drain, push retry, --duration).
 */
#include "agent_internal.h"

#include <errno.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#define MAX_PROFILE_BYTES ((size_t)256 << 20)

static void deliver(struct agent *a, struct agent_profile *prof)
{
	struct ember_buf out;
	char path[1200];
	int err;

	if (a->opts->output_dir) {
		ember_buf_init(&out, MAX_PROFILE_BYTES);
		err = agent_profile_encode(prof, true, &out);
		if (!err)
			err = agent_output_write(a->opts->output_dir, a->opts->host,
						 a->interval_start_ns, &out, path, sizeof(path));
		if (err)
			pr_err("agent: cannot write a profile to '%s': %s", a->opts->output_dir,
			       strerror(-err));
		else
			a->profiles_written++, pr_debug("agent: wrote '%s'", path);
		ember_buf_release(&out);
	}
	if (a->push) {
		ember_buf_init(&out, MAX_PROFILE_BYTES);
		err = agent_profile_encode(prof, false, &out);
		if (!err)
			err = agent_push_enqueue(a->push, &out);
		if (err)
			pr_warn("agent: a profile could not be queued for '%s': %s", a->opts->server,
				strerror(-err));
		ember_buf_release(&out);
	}
}

/* Drain the interval's counts into a profile and send it on. */
static void emit(struct agent *a)
{
	uint64_t flip_ns = ember_monotonic_ns(), end = ember_realtime_ns();
	struct agent_profile_opts po = { .opts = a->opts, .procs = a->procs,
					 .kallsyms = a->kallsyms,
					 .start_ns = a->interval_start_ns,
					 .duration_ns = end - a->interval_start_ns };
	struct agent_profile *prof;
	size_t n = 0;
	int err;

	prof = agent_profile_new(&po, &err);
	if (!prof) {
		pr_err("agent: cannot start a profile: %s", strerror(-err));
		return;
	}
	err = agent_drain(a->bpf, agent_profile_add, prof, &n);
	if (err)
		pr_err("agent: draining the BPF maps failed: %s", strerror(-err));
	a->drains++;
	a->samples_drained += n;
	if (agent_profile_samples(prof)) /* off-CPU stacks alone too: a sleeping service's */
		deliver(a, prof);
	agent_profile_free(prof);
	agent_summary_interval(a, n);
	agent_procs_reap(a->procs, flip_ns);
	agent_tables_gc(a->tables, a->last_drain_mono_ns); /* idle a whole interval */
	a->interval_start_ns = end;
	a->last_drain_mono_ns = flip_ns;
}

/* --cache-dir and --output: refused at start when others could plant
 * files in them (safe_files.c; each write checks again). */
static int check_dirs(const struct agent_opts *o, char *why, size_t why_size)
{
	const char *dirs[] = { o->cache_dir, o->output_dir };

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		int fd = dirs[i] ? agent_dir_open(dirs[i], why, why_size) : 0;

		if (fd < 0)
			return fd;
		if (fd > 0)
			close(fd);
	}
	return 0;
}

static int setup(struct agent *a, char *why, size_t why_size)
{
	struct agent_tables_opts to = { .server = a->opts->server,
					.cache_dir = a->opts->cache_dir,
					.local_compile = a->opts->local_compile,
					.upload_missing = a->opts->upload_missing,
					.token = a->opts->token };
	size_t dsize, nrules;
	int data_fd, rules_fd;
	int err = check_dirs(a->opts, why, why_size);

	if (err)
		return err;
	a->bpf = agent_bpf_new(a->opts, agent_on_event, a, &err, why, why_size);
	if (!a->bpf)
		return err;
	/* The kernel's BTF libbpf parsed for the load (several MB) is freed:
	 * given back before kallsyms' table comes, so the two do not add up
	 * in the peak RSS. */
	malloc_trim(0);
	a->kallsyms = agent_kallsyms_new(NULL, &err);
	if (!a->kallsyms)
		pr_warn("agent: cannot read '/proc/kallsyms': %s; kernel frames stay unnamed%s",
			strerror(-err), err == -EPERM ? " (kernel.kptr_restrict hides addresses)" : "");
	err = 0;
	data_fd = agent_bpf_data_fd(a->bpf, &dsize);
	rules_fd = agent_bpf_rules_fd(a->bpf, &nrules);
	err = agent_table_maps_init(&a->maps, agent_bpf_pages_fd(a->bpf), data_fd, dsize,
				    rules_fd, nrules);
	/* libcurl only with a server: its initialization is 2 MB of RSS */
	a->http = err || !a->opts->server ? NULL : agent_http_new(a->opts->token);
	if (!err && a->opts->server && !a->http)
		err = -ENOMEM;
	if (!err)
		a->tables = agent_tables_new(&to, &a->maps, a->http, &err);
	if (a->tables)
		a->procs = agent_procs_new(a->tables, agent_bpf_procs_fd(a->bpf), &err);
	if (a->procs) {
		struct agent_table_users u;

		agent_procs_set_pyprocs(a->procs, agent_bpf_pyprocs_fd(a->bpf));
		if (agent_bpf_agg(a->bpf)) /* --transport ringbuf */
			agent_agg_on_new(agent_bpf_agg(a->bpf), agent_procs_python_warm, a->procs);
		a->maps.npages = a->opts->page_entries;
		agent_procs_table_users(a->procs, &u);
		agent_tables_set_users(a->tables, &u);
	}
	if (a->procs && a->opts->server)
		a->push = agent_push_new(a->http, a->opts->server, a->opts->tenant, a->opts->gzip,
					 a->opts->buffer_bytes, &err);
	if (!err && a->opts->metrics_listen)
		a->metrics = agent_metrics_new(a->opts->metrics_listen, &err, why, why_size);
	else if (err)
		snprintf(why, why_size, "agent: cannot start: %s", strerror(-err));
	return err;
}

static void teardown(struct agent *a)
{
	agent_metrics_free(a->metrics);
	agent_push_free(a->push);
	agent_procs_free(a->procs);
	agent_tables_free(a->tables);
	agent_http_free(a->http);
	agent_table_maps_release(&a->maps);
	agent_bpf_free(a->bpf);
	agent_kallsyms_free(a->kallsyms);
}

static int signal_fd(void)
{
	sigset_t s;

	sigemptyset(&s);
	sigaddset(&s, SIGINT);
	sigaddset(&s, SIGTERM);
	sigprocmask(SIG_BLOCK, &s, NULL);
	signal(SIGPIPE, SIG_IGN);
	return signalfd(-1, &s, SFD_CLOEXEC | SFD_NONBLOCK);
}

/* ms until the earliest deadline: the drain, a push retry, the end. */
static int next_timeout(struct agent *a, uint64_t now, uint64_t end_ns)
{
	uint64_t next = a->last_drain_mono_ns + (uint64_t)a->opts->interval_s * 1000000000ull;
	long push = a->push ? agent_push_run(a->push, now / 1000000) : -1;
	int64_t ms;

	if (end_ns && end_ns < next)
		next = end_ns;
	ms = next > now ? (int64_t)((next - now) / 1000000) + 1 : 0;
	if (push >= 0 && push < ms)
		ms = push;
	return ms > 1000 ? 1000 : (int)ms;
}

static void run(struct agent *a, int sfd)
{
	uint64_t end_ns = a->opts->duration_s > 0
				  ? a->start_mono_ns + (uint64_t)(a->opts->duration_s * 1e9)
				  : 0;
	struct pollfd pfd[4] = {
		{ .fd = sfd, .events = POLLIN },
		{ .fd = agent_bpf_events_fd(a->bpf), .events = POLLIN },
		{ .fd = a->metrics ? agent_metrics_fd(a->metrics) : -1, .events = POLLIN },
		{ .fd = agent_tables_fd(a->tables), .events = POLLIN },
	};

	for (;;) {
		uint64_t now = ember_monotonic_ns();

		if (end_ns && now >= end_ns)
			break;
		if (now - a->last_drain_mono_ns >= (uint64_t)a->opts->interval_s * 1000000000ull)
			emit(a);
		if (poll(pfd, 4, next_timeout(a, ember_monotonic_ns(), end_ns)) < 0 &&
		    errno != EINTR)
			break;
		if (pfd[0].revents || (a->push && agent_push_refusal(a->push)))
			break;
		agent_bpf_poll(a->bpf, 0); /* exec and exit events do not wake us */
		agent_bpf_offcpu_tick(a->bpf, ember_monotonic_ns());
		if (pfd[2].revents)
			agent_metrics_serve(a->metrics, a);
		if (pfd[3].revents)
			agent_tables_collect(a->tables, agent_procs_file_ready, a->procs);
	}
	emit(a); /* the last, partial interval */
	if (a->push)
		agent_push_run(a->push, ember_monotonic_ns() / 1000000);
}

/* The tables of the processes found at start, before sampling starts (at
 * most max_s seconds: then the rest arrive while sampling). */
static void wait_for_tables(struct agent *a, unsigned max_s)
{
	uint64_t end = ember_monotonic_ns() + (uint64_t)max_s * 1000000000ull;
	struct pollfd pfd = { .fd = agent_tables_fd(a->tables), .events = POLLIN };

	while (agent_tables_pending(a->tables) && ember_monotonic_ns() < end) {
		if (poll(&pfd, 1, 100) > 0)
			agent_tables_collect(a->tables, agent_procs_file_ready, a->procs);
	}
	if (agent_tables_pending(a->tables))
		pr_info("agent: %zu tables still coming; sampling starts meanwhile",
			agent_tables_pending(a->tables));
}

/* --server: does it take our token and labels?  An empty profile it
 * checks and does not store (X-Ember-Check, docs/http-api.md).  Refused: the agent
 * stops (-EACCES); no answer: it starts, its pushes retried. */
static int check_server(struct agent *a, char *why, size_t why_size)
{
	struct agent_profile_opts po = { .opts = a->opts, .procs = a->procs,
					 .kallsyms = a->kallsyms,
					 .start_ns = ember_realtime_ns() };
	struct ember_buf empty;
	int err = 0;
	struct agent_profile *prof = agent_profile_new(&po, &err);

	ember_buf_init(&empty, MAX_PROFILE_BYTES);
	err = err ? err : agent_profile_encode(prof, false, &empty);
	agent_profile_free(prof);
	err = err ? err
		  : agent_push_check(a->push, &empty, a->opts->labels, a->opts->nlabels, why,
				     why_size);
	ember_buf_release(&empty);
	if (err == -EAGAIN)
		pr_warn("%s; sampling starts, the pushes are retried", why);
	else if (!err && a->opts->tenant)
		pr_info("agent: '%s' takes the token, the labels and the tenant '%s'",
			a->opts->server, a->opts->tenant);
	else if (!err)
		pr_info("agent: '%s' takes the token and the labels", a->opts->server);
	return err == -EAGAIN ? 0 : err;
}

static int log_setup(void)
{
	const char *env = getenv("EMBER_LOG_LEVEL");
	enum ember_log_level l;

	ember_log_set_level(EMBER_LOG_INFO);
	if (env && *env) {
		if (ember_log_level_parse(env, &l)) {
			fprintf(stderr, "ember-agent: bad EMBER_LOG_LEVEL '%s'\n", env);
			return -1;
		}
		ember_log_set_level(l);
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct agent_opts o;
	struct agent a = { .opts = &o };
	char why[1024] = "";
	uint64_t start_ns;
	int rc, err, sfd;

	if (log_setup())
		return 2;
	rc = agent_opts_parse(argc, argv, &o, why, sizeof(why));
	if (rc) {
		if (rc > 0)
			agent_opts_usage(stdout);
		else
			fprintf(stderr, "ember-agent: %s\n", why);
		agent_opts_release(&o);
		return rc > 0 ? 0 : 2;
	}
	err = agent_check_environment(why, sizeof(why));
	start_ns = a.start_mono_ns = ember_monotonic_ns();
	a.last_drain_mono_ns = a.start_mono_ns;
	a.interval_start_ns = ember_realtime_ns();
	sfd = signal_fd();
	if (!err)
		err = setup(&a, why, sizeof(why));
	if (!err && a.push)
		err = check_server(&a, why, sizeof(why));
	if (err) {
		pr_err("%s", why[0] ? why : strerror(-err));
		teardown(&a);
		agent_opts_release(&o);
		return 1;
	}
	/* The running processes first, then the samples: none of them is
	 * taken before the agent knows their mappings. */
	agent_procs_scan_all(a.procs, o.pids, o.npids);
	wait_for_tables(&a, 30);
	err = agent_bpf_start(a.bpf, o.frequency, why, sizeof(why));
	if (err) {
		pr_err("%s", why);
		teardown(&a);
		agent_opts_release(&o);
		return 1;
	}
	a.last_drain_mono_ns = ember_monotonic_ns(); /* the first interval starts now */
	a.interval_start_ns = ember_realtime_ns();
	pr_info("agent: sampling at %u Hz on every CPU, %zu processes (scanned in %.2f s), "
		"a profile every %u s%s%s%s%s",
		o.frequency, agent_procs_count(a.procs),
		(double)(a.last_drain_mono_ns - start_ns) / 1e9, o.interval_s,
		o.output_dir ? " to " : "", o.output_dir ? o.output_dir : "",
		o.server ? " and to " : "", o.server ? o.server : "");
	run(&a, sfd);
	close(sfd);
	agent_summary_exit(&a);
	rc = a.push && agent_push_refusal(a.push) ? 1 : 0;
	if (rc)
		pr_err("%s; stopping", agent_push_refusal(a.push));
	teardown(&a);
	agent_opts_release(&o);
	return rc;
}
