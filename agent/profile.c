/*
 * profile.c - the loader of profile.bpf.c through its generated skeleton
 * (profile.skel.h): open, set the tunables (const volatile globals, and
 * the map sizes the options choose) between open and load, load (the
 * verifier runs here), attach the exec/exit tracepoints and one
 * PERF_COUNT_SW_CPU_CLOCK event per online CPU at --frequency Hz, mmap
 * the two unwind arrays, and read the ring buffer of events.  With
 * --off-cpu, the sched_switch and rseq_update tracepoints too, sys_exit on
 * demand, and T kept to its budget (agent_bpf_offcpu_tick).
 */
#include "agent_internal.h"
#include "profile.skel.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <fcntl.h>

struct agent_bpf {
	struct profile_bpf *skel;
	struct bpf_link **links; /* one per CPU */
	int *perf_fds;
	int ncpus;
	struct ring_buffer *rb;
	agent_event_fn fn;
	void *fn_ctx;
	int cgroup_fd;
	struct agent_agg *agg; /* --transport ringbuf */
	struct offcpu_ctl {    /* --off-cpu: agent_bpf_offcpu_tick's state */
		uint64_t t0_ns;	       /* --off-cpu-threshold */
		unsigned budget;       /* --off-cpu-budget */
		uint64_t tick_ns;      /* the last tick, monotonic */
		uint64_t kept, no_rseq; /* the stats then */
		uint64_t no_rseq_ns;   /* when no_rseq last grew */
		bool sys_exit_auto;    /* not --off-cpu-rseq-only, nor failed */
		struct bpf_link *sys_exit; /* attached, or NULL */
	} off;
};

static int on_event(void *ctx, void *data, size_t size)
{
	struct agent_bpf *b = ctx;

	if (size < sizeof(struct agent_event))
		return 0;
	return b->fn(b->fn_ctx, data);
}

static int on_sample_rec(void *ctx, void *data, size_t size)
{
	return agent_agg_add(ctx, data, size);
}

/* The samples ring (--transport ringbuf): a second of samples of every
 * CPU at their largest, a power of two (user space reads it at least
 * every second, and is woken when a quarter is full).  Its pages count
 * twice in the agent's RSS (libbpf maps the data twice, for records that
 * wrap around). */
static uint32_t samples_ring_size(const struct agent_opts *o)
{
	int ncpus = libbpf_num_possible_cpus();
	uint64_t want = (uint64_t)(ncpus > 0 ? ncpus : 1) * o->frequency *
			(sizeof(struct agent_sample_rec) + 8);
	uint32_t size = 256 * 1024;

	while (size < want && size < (256u << 20))
		size <<= 1;
	return size;
}

/* libbpf's messages go to the agent's log: warnings at debug level (the
 * agent says itself what failed), the verifier's log included. */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char msg[1024];

	if (level == LIBBPF_DEBUG && !ember_log_enabled(EMBER_LOG_DEBUG))
		return 0;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	msg[strcspn(msg, "\n")] = '\0';
	pr_debug("libbpf: %s", msg);
	return 0;
}

static int set_tunables(struct agent_bpf *b, const struct agent_opts *o)
{
	struct profile_bpf *s = b->skel;
	int err = 0;

	s->rodata->filter_pids = o->npids > 0;
	s->rodata->filter_cgroup = o->cgroup != NULL;
	s->rodata->transport_ringbuf = o->ringbuf;
	/* developer (bench/agent/ab.py --time-transport): the kernel's time in the
	 * transport's part of each sample, into AGENT_STAT_TRANSPORT_NS */
	s->rodata->time_transport = getenv("EMBER_AGENT_TIME_TRANSPORT") != NULL;
	s->rodata->offcpu_threshold_ns = o->off_cpu_ns;
	s->bss->offcpu_t_ns = o->off_cpu_ns;
	bpf_program__set_autoload(s->progs.on_switch, o->off_cpu_ns > 0);
	/* a kernel without CONFIG_RSEQ has no rseq_update: sys_exit then sends all */
	s->rodata->offcpu_rseq_hook =
		o->off_cpu_ns > 0 && libbpf_find_vmlinux_btf_id("rseq_update", BPF_TRACE_RAW_TP) > 0;
	bpf_program__set_autoload(s->progs.on_rseq_update, s->rodata->offcpu_rseq_hook);
	bpf_program__set_autoload(s->progs.on_sys_exit, o->off_cpu_ns > 0);
	bpf_program__set_autoattach(s->progs.on_sys_exit, false); /* on demand */
	if (o->ringbuf) {
		uint32_t ring = samples_ring_size(o);

		s->rodata->samples_wake_bytes = ring / 4;
		err = bpf_map__set_max_entries(s->maps.samples, ring);
		/* the count maps unused: the stack-trace ones are preallocated */
		err = err ?: bpf_map__set_max_entries(s->maps.kstacks0, 1);
		err = err ?: bpf_map__set_max_entries(s->maps.kstacks1, 1);
	}
	err = err ?: bpf_map__set_max_entries(s->maps.unwind_data, o->data_chunks);
	err = err ?: bpf_map__set_max_entries(s->maps.unwind_rules, o->rule_slots);
	err = err ?: bpf_map__set_max_entries(s->maps.unwind_pages, o->page_entries);
	return err;
}

static int fill_filters(struct agent_bpf *b, const struct agent_opts *o, char *why,
			size_t why_size)
{
	uint8_t one = 1;
	uint32_t zero = 0;

	for (size_t i = 0; i < o->npids; i++) {
		uint32_t pid = (uint32_t)o->pids[i];

		if (bpf_map_update_elem(bpf_map__fd(b->skel->maps.pid_filter), &pid, &one, BPF_ANY))
			return -errno;
	}
	if (!o->cgroup)
		return 0;
	b->cgroup_fd = open(o->cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (b->cgroup_fd < 0) {
		int err = -errno;

		snprintf(why, why_size, "agent: cannot open cgroup '%s': %s", o->cgroup,
			 strerror(errno));
		return err;
	}
	if (bpf_map_update_elem(bpf_map__fd(b->skel->maps.cgroup_filter), &zero, &b->cgroup_fd,
				BPF_ANY)) {
		int err = -errno;

		snprintf(why, why_size, "agent: cgroup '%s' is not a cgroup v2 directory: %s",
			 o->cgroup, strerror(errno));
		return err;
	}
	return 0;
}

static int open_cpu_event(int cpu, unsigned freq)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_freq = freq,
		.freq = 1,
	};
	long fd = syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : (int)fd;
}

static int attach_cpus(struct agent_bpf *b, unsigned freq, char *why, size_t why_size)
{
	b->ncpus = libbpf_num_possible_cpus();
	if (b->ncpus <= 0)
		return b->ncpus ? b->ncpus : -EINVAL;
	b->perf_fds = calloc((size_t)b->ncpus, sizeof(*b->perf_fds));
	b->links = calloc((size_t)b->ncpus, sizeof(*b->links));
	if (!b->perf_fds || !b->links)
		return -ENOMEM;
	for (int cpu = 0; cpu < b->ncpus; cpu++) {
		int fd = open_cpu_event(cpu, freq);

		b->perf_fds[cpu] = -1;
		if (fd == -ENODEV || fd == -ENOENT)
			continue; /* a possible CPU that is not online */
		if (fd < 0) {
			agent_explain_bpf_error("perf_event_open(PERF_COUNT_SW_CPU_CLOCK)", fd, why,
						why_size);
			return fd;
		}
		b->perf_fds[cpu] = fd;
		b->links[cpu] = bpf_program__attach_perf_event(b->skel->progs.on_sample, fd);
		if (!b->links[cpu]) {
			int err = -errno;

			agent_explain_bpf_error("attaching the sampler", err, why, why_size);
			return err;
		}
	}
	return 0;
}

static int load(struct agent_bpf *b, const struct agent_opts *o, char *why, size_t why_size)
{
	int err;

	b->skel = profile_bpf__open();
	if (!b->skel) {
		err = -errno;
		agent_explain_bpf_error("opening the BPF object", err, why, why_size);
		return err;
	}
	err = set_tunables(b, o);
	if (err) {
		snprintf(why, why_size, "agent: cannot size the BPF maps: %s", strerror(-err));
		return err;
	}
	err = profile_bpf__load(b->skel);
	if (err) {
		agent_explain_bpf_error("loading the BPF programs", err, why, why_size);
		return err;
	}
	err = fill_filters(b, o, why, why_size);
	if (err)
		return err;
	return 0;
}

struct agent_bpf *agent_bpf_new(const struct agent_opts *o, agent_event_fn fn, void *ctx,
				int *err, char *why, size_t why_size)
{
	struct agent_bpf *b = calloc(1, sizeof(*b));
	int e;

	if (!b) {
		*err = -ENOMEM;
		return NULL;
	}
	b->cgroup_fd = -1;
	b->fn = fn;
	b->fn_ctx = ctx;
	b->off.t0_ns = o->off_cpu_ns;
	b->off.budget = o->off_cpu_budget;
	b->off.sys_exit_auto = !o->off_cpu_rseq_only;
	b->off.tick_ns = ember_monotonic_ns();
	libbpf_set_print(libbpf_print);
	e = load(b, o, why, why_size);
	if (!e) {
		e = profile_bpf__attach(b->skel); /* the tracepoints */
		if (e)
			agent_explain_bpf_error(o->off_cpu_ns ? "attaching the exec/exit and "
						"off-CPU (sched_switch, rseq_update) tracepoints" :
						"attaching the exec/exit tracepoints", e, why, why_size);
	}
	if (!e) {
		b->rb = ring_buffer__new(bpf_map__fd(b->skel->maps.events), on_event, b, NULL);
		if (!b->rb) {
			e = -errno;
			snprintf(why, why_size, "agent: cannot open the event ring buffer: %s",
				 strerror(errno));
		}
	}
	if (!e && o->ringbuf) {
		b->agg = agent_agg_new(&e);
		if (!e && ring_buffer__add(b->rb, bpf_map__fd(b->skel->maps.samples),
					   on_sample_rec, b->agg)) {
			e = -errno;
			snprintf(why, why_size, "agent: cannot open the samples ring buffer: %s",
				 strerror(errno));
		}
	}
	if (e) {
		agent_bpf_free(b);
		*err = e;
		return NULL;
	}
	return b;
}

uint64_t agent_offcpu_next_t(uint64_t t, uint64_t t0, double rate, unsigned budget)
{
	double next = (double)t;

	if (rate > budget)
		next = next * rate / budget;
	else if (rate < budget / 2.0)
		next /= 2;
	if (next > (double)AGENT_OFFCPU_T_MAX_NS)
		return AGENT_OFFCPU_T_MAX_NS;
	return next < (double)t0 ? t0 : (uint64_t)next;
}

/* The sys_exit program attached when a block of a task without rseq ended
 * in the last second, detached a minute after the last such;
 * offcpu_sys_exit_on tells the BPF side (set once attached, cleared
 * before the detach). */
static void offcpu_sys_exit_tick(struct agent_bpf *b, uint64_t now_ns)
{
	struct offcpu_ctl *c = &b->off;
	uint64_t no_rseq = agent_bpf_stat(b, AGENT_STAT_OFFCPU_NO_RSEQ);

	if (no_rseq != c->no_rseq)
		c->no_rseq_ns = now_ns;
	c->no_rseq = no_rseq;
	if (!c->sys_exit && c->no_rseq_ns == now_ns && c->sys_exit_auto) {
		c->sys_exit = bpf_program__attach(b->skel->progs.on_sys_exit);
		if (!c->sys_exit) {
			pr_warn("agent: cannot attach the sys_exit tracepoint (off-CPU blocks of "
				"tasks without rseq are not measured): %s", strerror(errno));
			c->sys_exit_auto = false;
			return;
		}
		__atomic_store_n(&b->skel->bss->offcpu_sys_exit_on, 1, __ATOMIC_SEQ_CST);
		pr_info("agent: off-CPU blocks of tasks without rseq: sys_exit attached");
	} else if (c->sys_exit && now_ns - c->no_rseq_ns >= 60ull * 1000000000ull) {
		__atomic_store_n(&b->skel->bss->offcpu_sys_exit_on, 0, __ATOMIC_SEQ_CST);
		bpf_link__destroy(c->sys_exit);
		c->sys_exit = NULL;
		pr_info("agent: no off-CPU block of a task without rseq for a minute: sys_exit "
			"detached");
	}
}

void agent_bpf_offcpu_tick(struct agent_bpf *b, uint64_t now_ns)
{
	struct offcpu_ctl *c = &b->off;
	uint64_t kept, t;
	double rate;

	if (!c->t0_ns || now_ns - c->tick_ns < 1000000000ull)
		return;
	kept = agent_bpf_stat(b, AGENT_STAT_OFFCPU_KEPT);
	rate = (double)(kept - c->kept) * 1e9 / (double)(now_ns - c->tick_ns);
	t = __atomic_load_n(&b->skel->bss->offcpu_t_ns, __ATOMIC_RELAXED);
	t = agent_offcpu_next_t(t, c->t0_ns, rate, c->budget);
	__atomic_store_n(&b->skel->bss->offcpu_t_ns, t, __ATOMIC_RELAXED);
	c->kept = kept;
	c->tick_ns = now_ns;
	offcpu_sys_exit_tick(b, now_ns);
}

uint64_t agent_bpf_offcpu_t_ns(const struct agent_bpf *b)
{
	return b->off.t0_ns ? __atomic_load_n(&b->skel->bss->offcpu_t_ns, __ATOMIC_RELAXED) : 0;
}

int agent_bpf_offcpu_sys_exit(const struct agent_bpf *b)
{
	return b->off.sys_exit != NULL;
}

int agent_bpf_start(struct agent_bpf *b, unsigned frequency, char *why, size_t why_size)
{
	return attach_cpus(b, frequency, why, why_size);
}

void agent_bpf_free(struct agent_bpf *b)
{
	if (!b)
		return;
	bpf_link__destroy(b->off.sys_exit);
	for (int cpu = 0; b->links && cpu < b->ncpus; cpu++)
		bpf_link__destroy(b->links[cpu]);
	for (int cpu = 0; b->perf_fds && cpu < b->ncpus; cpu++)
		if (b->perf_fds[cpu] >= 0)
			close(b->perf_fds[cpu]);
	free(b->links);
	free(b->perf_fds);
	ring_buffer__free(b->rb);
	agent_agg_free(b->agg);
	profile_bpf__destroy(b->skel);
	if (b->cgroup_fd >= 0)
		close(b->cgroup_fd);
	free(b);
}

int agent_bpf_procs_fd(const struct agent_bpf *b)
{
	return bpf_map__fd(b->skel->maps.procs);
}

int agent_bpf_pyprocs_fd(const struct agent_bpf *b)
{
	return bpf_map__fd(b->skel->maps.pyprocs);
}

int agent_bpf_pages_fd(const struct agent_bpf *b)
{
	return bpf_map__fd(b->skel->maps.unwind_pages);
}

int agent_bpf_data_fd(const struct agent_bpf *b, size_t *size)
{
	*size = (size_t)bpf_map__max_entries(b->skel->maps.unwind_data) * AGENT_DATA_CHUNK;
	return bpf_map__fd(b->skel->maps.unwind_data);
}

int agent_bpf_rules_fd(const struct agent_bpf *b, size_t *n)
{
	*n = bpf_map__max_entries(b->skel->maps.unwind_rules);
	return bpf_map__fd(b->skel->maps.unwind_rules);
}

int agent_bpf_poll(struct agent_bpf *b, int timeout_ms)
{
	/* consume: also the records that did not wake us (exec, exit) */
	int n = timeout_ms ? ring_buffer__poll(b->rb, timeout_ms) : ring_buffer__consume(b->rb);

	return n == -EINTR ? 0 : n;
}

int agent_bpf_events_fd(const struct agent_bpf *b)
{
	return ring_buffer__epoll_fd(b->rb);
}

uint64_t agent_bpf_stat(const struct agent_bpf *b, enum agent_stat which)
{
	int n = libbpf_num_possible_cpus();
	uint64_t vals[n > 0 ? n : 1], sum = 0;
	uint32_t key = which;

	if (n <= 0 || bpf_map_lookup_elem(bpf_map__fd(b->skel->maps.stats), &key, vals))
		return 0;
	for (int i = 0; i < n; i++)
		sum += vals[i];
	if (which == AGENT_STAT_COUNT_DROPPED)
		sum += agent_agg_dropped(b->agg); /* the same bound, in user space */
	return sum;
}

struct agent_agg *agent_bpf_agg(const struct agent_bpf *b)
{
	return b->agg;
}

uint64_t agent_bpf_first_table_ns(const struct agent_bpf *b)
{
	return __atomic_load_n(&b->skel->bss->first_table_ns, __ATOMIC_RELAXED);
}

unsigned agent_bpf_flip(struct agent_bpf *b)
{
	unsigned old = __atomic_load_n(&b->skel->bss->gen, __ATOMIC_RELAXED) & 1;

	__atomic_store_n(&b->skel->bss->gen, old ^ 1, __ATOMIC_SEQ_CST);
	return old;
}

void agent_bpf_set_fds(const struct agent_bpf *b, unsigned s, int *counts, int *ustacks,
		       int *kstacks)
{
	struct profile_bpf *k = b->skel;

	*counts = bpf_map__fd(s ? k->maps.counts1 : k->maps.counts0);
	*ustacks = bpf_map__fd(s ? k->maps.ustacks1 : k->maps.ustacks0);
	*kstacks = bpf_map__fd(s ? k->maps.kstacks1 : k->maps.kstacks0);
}
