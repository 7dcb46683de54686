/*
 * pstore_bench.c - the profile store's benchmark (issue 15): a realistic
 * stream of CPU profiles, stored, then queried and diffed.
 *
 * The stream: three services (checkout, cart, search), each its own
 * binary and function names (Go-style: github.com/acme/SERVICE/internal/
 * PKG.(*Type).Method, plus the runtime and a libc), over two hours: 20
 * series a hour (8 + 6 + 6 pods; at the hour every service deploys a new
 * version, on new pods), one 10-second profile per series every 10
 * seconds, 14,400 profiles in all.  Each profile draws 1,500 samples from
 * its service's 2,000 distinct stacks (a random call tree, depth 8 to 40)
 * by a Zipf law (s = 1.1), so a profile has a few hundred distinct stacks
 * and the heavy ones recur in every profile, as in production.  Profiles
 * are written as Go writes them (samples/count and cpu/nanoseconds,
 * period 10 ms, symbolized locations, mappings with build IDs) and
 * gzip-compressed (level 1, Go's) to measure what a client sends.
 *
 * Measured (each printed as "name value unit"):
 *  - ingest: profiles per second of the appending thread and its CPU time
 *    per profile, log fsync on (the default) and, in a second pass over
 *    a fresh directory, off (the store's own CPU alone), and the
 *    compaction thread's CPU; then 600 profiles appended by 1 thread and
 *    by 8 threads with fsync on, which share their syncs (group commit);
 *  - size: bytes of blocks on disk per profile, against the gzip'd pprof;
 *  - query: the first hour of the 20 series merged and written as a flame
 *    graph (cold: the first after a reopen; warm: the median of REPS),
 *    wall time and the querying thread's CPU time (which a loaded machine
 *    inflates far less than the wall time);
 *  - diff: the two hours' selections, queried, diffed, written as a
 *    differential flame graph and the regression table (the second hour's
 *    version spends 4 times the samples in one function of each service:
 *    the table's top row must be one of them, flagged);
 *  - the peer: the same hour merged from the 7,200 gzip'd pprof files
 *    decoded one by one (what keeping raw pprof files costs a query).
 *
 * With -w DAYS (issue 27, rollups), instead: the same 20 series, one
 * 60-second profile each a minute for DAYS days (pods and versions new
 * each day: 201,600 profiles in a week), stored with the log's fsync
 * off and compacted (merged, rolled up at 1 minute and 1 hour); then,
 * each with the rollups and with full resolution (pstore_selection's
 * full_resolution), the merged flame graph over the last 1 h, 24 h and
 * the whole range, the same over ranges starting 13 s past and ending
 * 37 s before an hour, the series line of the whole range at a step of
 * an hour and the diff of the last 24 h against the 24 h before:
 * medians of REPS, wall and the querying thread's CPU, and the profiles
 * read; and the bytes of blocks and rollups per profile.
 *
 * The store's compaction also builds a rollup a past 6 UTC hours and a
 * past UTC day (summed from their hours'), so the whole range is mostly
 * days and the last 24 h mostly 6 hours; with 14 days or more
 * the diff of the last week against the one before is measured too (with
 * fewer, the diff of the whole range against itself, the same reads).
 *
 * -W HOURS is -w over HOURS hours (at least 2: the cases that would start
 * before the first are left out), a short store to profile the edges of
 * ranges on.  -i SECONDS sets -w's profile interval (60), -s SECONDS its finer rollup
 * step (60; the coarser is an hour), to choose the step against the
 * interval; -p SERIES the series (20: pods in the ratio 8:6:6).  -k keeps
 * the stored range of an earlier run with the same options (DIR/rollups,
 * its ingest figures in DIR/rollups.gen, when an earlier build wrote it
 * without, the profile count alone) instead of generating it again:
 * the store is opened and compacted (building what this build's
 * compaction adds, e.g. day rollups: timed) and queried; -q queries with
 * the rollups only (no full-resolution way: half the time, for profiling).
 * -t THREADS sums a query's blocks and rollups on up to THREADS threads
 * (pstore_opts.query_threads; default the store's).  -c NAME runs only
 * the cases whose name holds NAME (flame_all, _unaligned, diff_: for perf).
 *
 * Usage: pstore-bench [-d DIR] [-r REPS] [-h HOURS] [-n] [-o OUT]
 *                     [-t THREADS]
 *                     [-w DAYS | -W HOURS [-i S] [-s S] [-p SERIES] [-k] [-q] [-c NAME]]
 *   -n: no fsync pass; -o: write the hour's merged pprof, its flame graph
 *   and the diff's flame graph and table into OUT, to look at.
 */
#include "pmodel.h" /* pmodel_result_add, for the peer's merge */
#include "pprof.h"
#include "pstore.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define SEC ((int64_t)1000000000)
#define MS ((int64_t)1000000)
#define T0 ((int64_t)1699999200 * SEC) /* a round hour */
#define NSTACKS 2000
#define NFUNCS 1200
#define SAMPLES 1500
#define STEP (10 * SEC)
#define HOUR (3600 * SEC)

/* The stream's profile interval, and how often pods and versions change
 * (-w: a minute, or -i's, and a day); the finer rollup step (-s; 0: the
 * store's default, 1 minute), the coarser one always an hour. */
static int64_t step = STEP, epoch_ns = HOUR, fine_step_ns;
static unsigned query_threads; /* -t: pstore_opts.query_threads (0: the store's default) */
static const char *only_case; /* -c: the -w cases whose name holds it (NULL: all) */

/* ---- a deterministic random stream ------------------------------------------- */

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static double unit(void)
{
	return (double)(rnd() >> 11) / (double)(1ull << 53);
}

/* ---- services: functions, stacks ---------------------------------------------- */

struct func {
	char name[160];
	char file[160];
	uint64_t addr;
	int lib; /* 0 the binary, 1 libc */
};

struct service {
	const char *name;
	int pods;
	char build_id[2][41]; /* per version */
	struct func funcs[NFUNCS];
	int *stack[NSTACKS];  /* function indexes, root first */
	int depth[NSTACKS];
	double cdf[NSTACKS];  /* Zipf */
};

static const char *const pkgs[] = { "api", "pricing", "store", "cache", "auth", "render",
				    "codec", "db", "queue", "metrics", "grpc", "http" };
static const char *const types[] = { "Engine", "Client", "Server", "Handler", "Pool", "Encoder",
				     "Tx", "Conn", "Batch", "Tracker" };
static const char *const verbs[] = { "Compute", "Get", "Put", "Serve", "Encode", "Decode",
				     "Flush", "Lookup", "Marshal", "Validate", "Run", "Close" };
static const char *const runtime[] = { "runtime.mallocgc", "runtime.memmove", "runtime.mapaccess2",
				       "runtime.gcBgMarkWorker", "runtime.scanobject",
				       "runtime.futex", "syscall.Syscall", "runtime.selectgo" };
static const char *const libc[] = { "__memcpy_avx_unaligned_erms", "__GI___libc_write",
				    "epoll_wait", "__pthread_mutex_lock", "malloc", "free" };

static void make_funcs(struct service *s)
{
	size_t nr = sizeof(runtime) / sizeof(*runtime), nl = sizeof(libc) / sizeof(*libc);

	for (int i = 0; i < NFUNCS; i++) {
		struct func *f = &s->funcs[i];
		const char *pkg = pkgs[rnd() % 12];

		f->lib = 0;
		if (i < (int)nr) {
			snprintf(f->name, sizeof(f->name), "%s", runtime[i]);
			snprintf(f->file, sizeof(f->file), "/usr/lib/go-1.19/src/runtime/%s.go",
				 runtime[i] + 8);
		} else if (i < (int)(nr + nl)) {
			snprintf(f->name, sizeof(f->name), "%s", libc[i - nr]);
			snprintf(f->file, sizeof(f->file),
				 "./string/../sysdeps/x86_64/multiarch.S");
			f->lib = 1;
		} else {
			snprintf(f->name, sizeof(f->name),
				 "github.com/acme/%s/internal/%s.(*%s).%s%d", s->name, pkg,
				 types[rnd() % 10], verbs[rnd() % 12], i);
			snprintf(f->file, sizeof(f->file),
				 "/src/github.com/acme/%s/internal/%s/%s.go", s->name, pkg,
				 verbs[i % 12]);
		}
		f->addr = (f->lib ? 0x7f3a00020000ull : 0x401000ull) + 0x100ull * (uint64_t)i;
	}
}

/* Stacks as paths in a random call tree: a stack extends a shorter one
 * (shared callers), with runtime/libc frames at the leaves now and then. */
static void make_stacks(struct service *s)
{
	double sum = 0;

	for (int k = 0; k < NSTACKS; k++) {
		int base = k > 8 ? (int)(rnd() % (uint64_t)k) : -1;
		int bd = base >= 0 ? s->depth[base] : 0;
		int keep = bd ? (int)(bd * (0.5 + 0.5 * unit())) : 0;
		int extra = 2 + (int)(rnd() % 6), depth;

		if (keep + extra < 8)
			extra = 8 - keep;
		if (keep + extra > 40)
			extra = 40 - keep;
		depth = keep + extra;
		s->stack[k] = malloc(sizeof(int) * (size_t)depth);
		for (int i = 0; i < keep; i++)
			s->stack[k][i] = s->stack[base][i];
		for (int i = keep; i < depth; i++)
			s->stack[k][i] = i == 0 ? 20 : 20 + (int)(rnd() % (NFUNCS - 20));
		if (rnd() % 3 == 0)
			s->stack[k][depth - 1] = (int)(rnd() % 14); /* runtime or libc leaf */
		s->depth[k] = depth;
	}
	for (int k = 0; k < NSTACKS; k++)
		sum += 1 / pow(k + 1, 1.1);
	for (int k = 0; k < NSTACKS; k++)
		s->cdf[k] = (k ? s->cdf[k - 1] : 0) + 1 / pow(k + 1, 1.1) / sum;
}

static int zipf(const struct service *s)
{
	double u = unit();
	int lo = 0, hi = NSTACKS - 1;

	while (lo < hi) {
		int mid = (lo + hi) / 2;

		if (s->cdf[mid] < u)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The function the second version made slower: the leaf of the 12th most
 * frequent stack, or of the next one, that is the service's own (not the
 * runtime's or libc's): about 1% of the samples. */
static int slow_func(const struct service *s)
{
	for (int k = 11; k < NSTACKS; k++)
		if (s->stack[k][s->depth[k] - 1] >= 14)
			return s->stack[k][s->depth[k] - 1];
	return 20;
}

static struct service services[3] = { {.name = "checkout", .pods = 8 },
				     {.name = "cart", .pods = 6 },
				     {.name = "search", .pods = 6} };

/* -p: n series, the pods in the ratio 8:6:6 (at least one a service). */
static void set_series(int n)
{
	int a = n * 8 / 20 > 0 ? n * 8 / 20 : 1, b = (n - a) / 2 > 0 ? (n - a) / 2 : 1;

	services[0].pods = a;
	services[1].pods = b;
	services[2].pods = n - a - b > 0 ? n - a - b : 1;
}

static void make_services(void)
{
	for (int i = 0; i < 3; i++) {
		struct service *s = &services[i];

		for (int v = 0; v < 2; v++)
			for (int k = 0; k < 40; k++)
				s->build_id[v][k] = "0123456789abcdef"[rnd() % 16];
		make_funcs(s);
		make_stacks(s);
	}
}

/* ---- one profile ------------------------------------------------------------------ */

static struct pprof_profile *make_profile(const struct service *s, int version, int64_t time)
{
	struct pprof_mapping_desc bin = { 0x400000, 0x1400000, 0, NULL, s->build_id[version] };
	struct pprof_mapping_desc lc = { 0x7f3a00000000ull, 0x7f3a00200000ull, 0,
					 "/usr/lib/x86_64-linux-gnu/libc.so.6",
					 "8a2b6f6f03c3a1a6a5d35d5f1c2b4d5e6f708192" };
	struct pprof_profile *p = pprof_profile_new();
	uint64_t mid[2], loc[NFUNCS] = { 0 };
	int counts[NSTACKS] = { 0 };
	char binary[64];

	snprintf(binary, sizeof(binary), "/app/%s", s->name);
	bin.filename = binary;
	if (!p || pprof_add_sample_type(p, "samples", "count") ||
	    pprof_add_sample_type(p, "cpu", "nanoseconds") ||
	    pprof_set_period(p, "cpu", "nanoseconds", 10 * MS) ||
	    pprof_add_mapping(p, &bin, &mid[0]) || pprof_add_mapping(p, &lc, &mid[1]))
		exit(1);
	pprof_set_time(p, time, step);
	for (int i = 0; i < SAMPLES; i++) {
		int k = zipf(s);

		/* the second version is slower in one function (what a diff must
		 * find): the samples of stacks ending in it count 4 times */
		counts[k] += version && s->stack[k][s->depth[k] - 1] == slow_func(s) ? 4 : 1;
	}
	for (int k = 0; k < NSTACKS; k++) {
		uint64_t ids[40];
		int64_t v[2] = { counts[k], counts[k] * 10 * MS };

		if (!counts[k])
			continue;
		for (int i = 0; i < s->depth[k]; i++) {
			int f = s->stack[k][s->depth[k] - 1 - i]; /* leaf first */

			if (!loc[f]) {
				const struct func *fn = &s->funcs[f];
				struct pprof_function_desc fd = { fn->name, fn->name, fn->file, 10 };
				struct pprof_line ln = { 0, 10 + f % 50, 0 };

				if (pprof_add_function(p, &fd, &ln.function_id) ||
				    pprof_add_location(p, mid[fn->lib], fn->addr, &loc[f]) ||
				    pprof_location_set_lines(p, loc[f], &ln, 1))
					exit(1);
			}
			ids[i] = loc[f];
		}
		if (pprof_add_sample(p, ids, (size_t)s->depth[k], v, 2))
			exit(1);
	}
	return p;
}

/* ---- the stream --------------------------------------------------------------------- */

static _Atomic int64_t stream_now = T0;

static int64_t clock_fn(void *ctx)
{
	(void)ctx;
	return atomic_load(&stream_now);
}

static double now_s(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

struct ingest {
	double wall, cpu;	/* of the appending thread, in pstore_append */
	double bg_cpu;		/* the other threads: compaction */
	uint64_t profiles, gz_bytes, stacks;
};

/* Keep the first hour's gzip'd profiles for the peer. */
struct kept {
	struct ember_buf *v;
	size_t n, cap;
};

static void keep(struct kept *k, const struct ember_buf *b)
{
	if (k->n == k->cap) {
		k->cap = k->cap ? 2 * k->cap : 1024;
		k->v = realloc(k->v, k->cap * sizeof(*k->v));
	}
	ember_buf_init(&k->v[k->n], b->len + 1);
	ember_buf_append(&k->v[k->n++], b->data, b->len);
}

static void append_one(struct pstore *s, int si, int pod, int hour, int64_t t, struct ingest *in,
		       struct kept *kept)
{
	const struct service *sv = &services[si];
	char podname[64], version[16];
	struct pstore_label l[5] = { {"service_name", sv->name },
				    {"pod", podname },
				    {"version", version },
				    {"region", pod % 2 ? "eu-west" : "us-east"},
				    {"env", "prod"} };
	struct pprof_profile *p = make_profile(sv, hour & 1, t);
	struct ember_buf gz;
	struct pstore_append_opts o = { .sz = sizeof(o), .labels = l, .n_labels = 5 };
	char why[256];
	double w, c;

	snprintf(podname, sizeof(podname), "%s-%d-%04x", sv->name, hour,
		 (unsigned)(pod * 7919 + si));
	snprintf(version, sizeof(version), "2.%d", 3 + hour);
	ember_buf_init(&gz, 64 << 20);
	if (pprof_encode(p, true, &gz))
		exit(1);
	in->stacks += pprof_message(p)->n_sample;
	o.input_bytes = gz.len;
	o.body = gz.data; /* logged as received, as the HTTP layer will */
	o.body_len = gz.len;
	in->gz_bytes += gz.len;
	if (kept && hour == 0)
		keep(kept, &gz);
	w = now_s(CLOCK_MONOTONIC);
	c = now_s(CLOCK_THREAD_CPUTIME_ID);
	if (pstore_append(s, p, &o, why, sizeof(why))) {
		fprintf(stderr, "pstore-bench: append: %s\n", why);
		exit(1);
	}
	in->cpu += now_s(CLOCK_THREAD_CPUTIME_ID) - c;
	in->wall += now_s(CLOCK_MONOTONIC) - w;
	in->profiles++;
	ember_buf_release(&gz);
	pprof_profile_free(p);
}

static struct pstore *open_store(const char *dir, bool fsync, bool background)
{
	struct pstore_opts o = { .sz = sizeof(o), .no_fsync = !fsync, .no_background = !background,
				 .clock_ns = clock_fn };
	struct pstore *s = NULL;
	char why[256];

	o.query_threads = query_threads;
	if (fine_step_ns) {
		o.rollup_steps_ns[0] = fine_step_ns;
		o.rollup_steps_ns[1] = HOUR;
	}

	if (pstore_open(dir, &o, &s, why, sizeof(why))) {
		fprintf(stderr, "pstore-bench: open '%s': %s\n", dir, why);
		exit(1);
	}
	return s;
}

static struct ingest run_stream(const char *dir, int hours, bool fsync, struct kept *kept)
{
	struct ingest in = { 0 };
	struct pstore *s;
	double main0 = now_s(CLOCK_THREAD_CPUTIME_ID), proc0 = now_s(CLOCK_PROCESS_CPUTIME_ID);

	rng = 0x9e3779b97f4a7c15ull; /* the same stream every time */
	make_services();
	atomic_store(&stream_now, T0);
	s = open_store(dir, fsync, true);
	for (int64_t t = T0; t < T0 + hours * 3600 * SEC; t += step) {
		int hour = (int)((t - T0) / epoch_ns);

		atomic_store(&stream_now, t + step); /* the profile arrives at its end */
		for (int si = 0; si < 3; si++)
			for (int pod = 0; pod < services[si].pods; pod++)
				append_one(s, si, pod, hour, t, &in, kept);
	}
	/* everything compacted: the hours closed, the last head written */
	atomic_store(&stream_now, T0 + (hours + 1) * 3600 * SEC);
	if (pstore_flush(s) || pstore_compact(s))
		exit(1);
	pstore_free(s);
	in.bg_cpu = (now_s(CLOCK_PROCESS_CPUTIME_ID) - proc0) -
		    (now_s(CLOCK_THREAD_CPUTIME_ID) - main0);
	return in;
}

/* ---- group commit: appending threads sharing syncs ------------------------------ */

struct job {
	struct pstore *s;
	struct pprof_profile **p;
	struct ember_buf *gz;
	char (*labels)[3][64];
	size_t first, end;
};

static void *append_slice(void *arg)
{
	struct job *j = arg;

	for (size_t i = j->first; i < j->end; i++) {
		struct pstore_label l[3] = { {"service_name", j->labels[i][0]},
					    {"pod", j->labels[i][1]},
					    {"seq", j->labels[i][2]} };
		struct pstore_append_opts o = { .sz = sizeof(o), .labels = l, .n_labels = 3,
						.body = j->gz[i].data, .body_len = j->gz[i].len };

		if (pstore_append(j->s, j->p[i], &o, NULL, 0))
			exit(1);
	}
	return NULL;
}

/* n profiles appended by threads threads (fsync on); profiles/s. */
static double concurrent(const char *dir, struct pprof_profile **p, struct ember_buf *gz,
			 char (*labels)[3][64], size_t n, int threads)
{
	pthread_t t[64];
	struct job j[64];
	struct pstore *s = open_store(dir, true, true);
	double w = now_s(CLOCK_MONOTONIC);

	for (int i = 0; i < threads; i++) {
		j[i] = (struct job){ s, p, gz, labels, n * i / threads, n * (i + 1) / threads };
		pthread_create(&t[i], NULL, append_slice, &j[i]);
	}
	for (int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	w = now_s(CLOCK_MONOTONIC) - w;
	pstore_free(s);
	return n / w;
}

static void group_commit(const char *base)
{
	enum { N = 600 };
	static struct pprof_profile *p[N];
	static struct ember_buf gz[N];
	static char labels[N][3][64];
	char dir[600], cmd[700];

	for (size_t i = 0; i < N; i++) {
		const struct service *sv = &services[i % 3];

		p[i] = make_profile(sv, 0, T0 + (int64_t)(i / 20) * STEP);
		ember_buf_init(&gz[i], 64 << 20);
		if (pprof_encode(p[i], true, &gz[i]))
			exit(1);
		snprintf(labels[i][0], 64, "%s", sv->name);
		snprintf(labels[i][1], 64, "%s-%zu", sv->name, i % 20);
		snprintf(labels[i][2], 64, "%zu", i);
	}
	for (int threads = 1; threads <= 8; threads *= 8) {
		snprintf(dir, sizeof(dir), "%s/group%d", base, threads);
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd))
			exit(1);
		printf("ingest_fsync_%dthreads %.0f profiles/s (%d profiles, wall)\n", threads,
		       concurrent(dir, p, gz, labels, N, threads), N);
	}
	for (size_t i = 0; i < N; i++) {
		pprof_profile_free(p[i]);
		ember_buf_release(&gz[i]);
	}
}

/* ---- queries ------------------------------------------------------------------------ */

static struct pmodel_result *query_range(struct pstore *s, const char *sel, int64_t from,
					 int64_t to, bool full)
{
	struct pstore_selection q = { .selector = sel, .type = "cpu", .from_ns = from, .to_ns = to,
				      .full_resolution = full };
	struct pmodel_result *r = NULL;
	char why[256];

	if (pstore_query(s, &q, NULL, &r, why, sizeof(why))) {
		fprintf(stderr, "pstore-bench: query: %s\n", why);
		exit(1);
	}
	return r;
}

static struct pmodel_result *query(struct pstore *s, const char *sel, int hour)
{
	return query_range(s, sel, T0 + hour * HOUR, T0 + (hour + 1) * HOUR, false);
}

/* Hour 0 merged into a flame graph; returns seconds of wall time, *cpu
 * the querying thread's CPU seconds (the figure a loaded machine moves
 * least: the query runs on this thread alone). */
static double flame_query(struct pstore *s, size_t *svg_bytes, uint64_t *profiles, double *cpu)
{
	double c = now_s(CLOCK_THREAD_CPUTIME_ID), t = now_s(CLOCK_MONOTONIC);
	struct pmodel_result *r = query(s, "{env=\"prod\"}", 0);
	struct pmodel_result_info info;
	struct ember_buf svg;

	ember_buf_init(&svg, 256 << 20);
	if (pmodel_write_flamegraph(r, NULL, pmodel_write_buf, &svg))
		exit(1);
	t = now_s(CLOCK_MONOTONIC) - t;
	*cpu = now_s(CLOCK_THREAD_CPUTIME_ID) - c;
	pmodel_result_info(r, &info);
	*svg_bytes = svg.len;
	*profiles = info.profiles;
	ember_buf_release(&svg);
	pmodel_result_free(r);
	return t;
}

static double diff_query(struct pstore *s, char *top, double *cpu)
{
	double c = now_s(CLOCK_THREAD_CPUTIME_ID), t = now_s(CLOCK_MONOTONIC);
	struct pmodel_result *a = query(s, "{env=\"prod\"}", 0), *b = query(s, "{env=\"prod\"}", 1);
	struct pmodel_diff *d = NULL;
	struct ember_buf out;

	ember_buf_init(&out, 256 << 20);
	if (pmodel_diff_new(a, b, NULL, &d) ||
	    pmodel_write_diff_flamegraph(d, NULL, pmodel_write_buf, &out) ||
	    pmodel_write_diff_table(d, 50, false, pmodel_write_buf, &out))
		exit(1);
	t = now_s(CLOCK_MONOTONIC) - t;
	*cpu = now_s(CLOCK_THREAD_CPUTIME_ID) - c;
	if (top) {
		struct pmodel_diff_row *rows;
		size_t n;

		if (pmodel_diff_table(d, &rows, &n))
			exit(1);
		snprintf(top, 512, "%s (%+.2f points, z %.1f, %s)", n ? rows[0].name : "-",
			 n ? rows[0].delta_self_pct : 0, n ? rows[0].z : 0,
			 n && rows[0].flagged ? "flagged" : "not flagged");
		free(rows);
	}
	ember_buf_release(&out);
	pmodel_diff_free(d);
	pmodel_result_free(a);
	pmodel_result_free(b);
	return t;
}

/* The peer: the same hour from the gzip'd pprof files, each decoded and
 * its stacks summed into one result (the merge a query ends with), then
 * the same flame graph. */
static double naive_merge(const struct kept *k)
{
	double t = now_s(CLOCK_MONOTONIC);
	struct pmodel_result *acc = NULL;
	struct ember_buf svg;

	for (size_t i = 0; i < k->n; i++) {
		struct pprof_profile *p = NULL;
		struct pmodel_result *r = NULL;

		if (pprof_decode(k->v[i].data, k->v[i].len, NULL, &p, NULL, 0) ||
		    pmodel_result_from_pprof(p, "cpu", &r, NULL, 0))
			exit(1);
		if (!acc)
			acc = r;
		else if (pmodel_result_add(acc, &r->dict, r->self.v))
			exit(1);
		if (acc != r)
			pmodel_result_free(r);
		pprof_profile_free(p);
	}
	ember_buf_init(&svg, 256 << 20);
	if (pmodel_write_flamegraph(acc, NULL, pmodel_write_buf, &svg))
		exit(1);
	t = now_s(CLOCK_MONOTONIC) - t;
	ember_buf_release(&svg);
	pmodel_result_free(acc);
	return t;
}

static void save_file(const char *dir, const char *name, const struct ember_buf *b)
{
	char path[600];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(b->data, 1, b->len, f) != b->len || fclose(f))
		exit(1);
}

/* What the benchmark draws, to look at. */
static void save_outputs(struct pstore *s, const char *dir)
{
	struct pmodel_result *a = query(s, "{env=\"prod\"}", 0), *b = query(s, "{env=\"prod\"}", 1);
	struct pmodel_diff *d = NULL;
	struct ember_buf out;

	ember_buf_init(&out, 256 << 20);
	if (pmodel_write_pprof(a, &out))
		exit(1);
	save_file(dir, "hour0.pb.gz", &out);
	ember_buf_reset(&out);
	if (pmodel_write_flamegraph(a, NULL, pmodel_write_buf, &out))
		exit(1);
	save_file(dir, "hour0.svg", &out);
	ember_buf_reset(&out);
	if (pmodel_diff_new(a, b, NULL, &d) ||
	    pmodel_write_diff_flamegraph(d, NULL, pmodel_write_buf, &out))
		exit(1);
	save_file(dir, "diff.svg", &out);
	ember_buf_reset(&out);
	if (pmodel_write_diff_table(d, 30, false, pmodel_write_buf, &out))
		exit(1);
	save_file(dir, "diff.txt", &out);
	ember_buf_release(&out);
	pmodel_diff_free(d);
	pmodel_result_free(a);
	pmodel_result_free(b);
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void report(const char *name, double *v, int n, const char *unit, double scale)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_d);
	printf("%s %.1f %s (min %.1f, max %.1f, n=%d)\n", name, v[n / 2] * scale, unit,
	       v[0] * scale, v[n - 1] * scale, n);
}

static uint64_t dir_bytes(const char *dir, const char *sub)
{
	char cmd[600];
	FILE *f;
	unsigned long long n = 0;

	snprintf(cmd, sizeof(cmd), "du -sb --apparent-size '%s/%s' | cut -f1", dir, sub);
	f = popen(cmd, "r");
	if (!f || fscanf(f, "%llu", &n) != 1)
		n = 0;
	if (f)
		pclose(f);
	return n;
}

/* ---- rollups (-w) ------------------------------------------------------------------ */

/* What a flame graph's query read and answered. */
struct fread {
	uint64_t profiles, rows_bytes, stacks;
};

/* [from, to) merged into a flame graph (full: from blocks alone): wall
 * seconds, *cpu the thread's, *fr what the store read and answered. */
static double range_flame(struct pstore *s, int64_t from, int64_t to, bool full, double *cpu,
			  struct fread *fr)
{
	struct pmodel_result_info info;
	double c = now_s(CLOCK_THREAD_CPUTIME_ID), t = now_s(CLOCK_MONOTONIC);
	struct pstore_stats a, b;
	struct pmodel_result *r;
	struct ember_buf svg;

	pstore_stats(s, &a);
	r = query_range(s, "{env=\"prod\"}", from, to, full);
	pstore_stats(s, &b);
	ember_buf_init(&svg, 256 << 20);
	if (pmodel_write_flamegraph(r, NULL, pmodel_write_buf, &svg))
		exit(1);
	t = now_s(CLOCK_MONOTONIC) - t;
	*cpu = now_s(CLOCK_THREAD_CPUTIME_ID) - c;
	fr->profiles = b.profiles_read - a.profiles_read;
	fr->rows_bytes = b.rows_bytes_read - a.rows_bytes_read;
	pmodel_result_info(r, &info);
	fr->stacks = info.stacks;
	ember_buf_release(&svg);
	pmodel_result_free(r);
	return t;
}

/* The series line of [from, to) at a step of an hour. */
static double range_series(struct pstore *s, int64_t from, int64_t to, bool full, double *cpu,
			   uint64_t *read)
{
	static const char *const by[] = { "service_name" };
	struct pstore_selection q = { .selector = "{env=\"prod\"}", .type = "cpu", .from_ns = from,
				      .to_ns = to, .full_resolution = full };
	double c = now_s(CLOCK_THREAD_CPUTIME_ID), t = now_s(CLOCK_MONOTONIC);
	struct pstore_series_set *set = NULL;
	struct pstore_stats a, b;
	char why[256];

	pstore_stats(s, &a);
	if (pstore_series_totals(s, &q, HOUR, by, 1, &set, why, sizeof(why))) {
		fprintf(stderr, "pstore-bench: series: %s\n", why);
		exit(1);
	}
	pstore_stats(s, &b);
	t = now_s(CLOCK_MONOTONIC) - t;
	*cpu = now_s(CLOCK_THREAD_CPUTIME_ID) - c;
	*read = b.profiles_read - a.profiles_read;
	pstore_series_set_free(set);
	return t;
}

/* [end - 2 len, end - len) against [end - len, end) (len 0: [from, end)
 * against itself): queried, diffed, the table written. */
static double range_diff(struct pstore *s, int64_t from, int64_t end, int64_t len, bool full,
			 double *cpu, uint64_t *read)
{
	double c = now_s(CLOCK_THREAD_CPUTIME_ID), t = now_s(CLOCK_MONOTONIC);
	struct pstore_stats st0, st1;
	struct pmodel_result *a, *b;
	struct pmodel_diff *d = NULL;
	struct ember_buf out;

	pstore_stats(s, &st0);
	a = query_range(s, "{env=\"prod\"}", len ? end - 2 * len : from, len ? end - len : end, full);
	b = query_range(s, "{env=\"prod\"}", len ? end - len : from, end, full);
	pstore_stats(s, &st1);
	ember_buf_init(&out, 256 << 20);
	if (pmodel_diff_new(a, b, NULL, &d) ||
	    pmodel_write_diff_table(d, 30, false, pmodel_write_buf, &out))
		exit(1);
	t = now_s(CLOCK_MONOTONIC) - t;
	*cpu = now_s(CLOCK_THREAD_CPUTIME_ID) - c;
	*read = st1.profiles_read - st0.profiles_read;
	ember_buf_release(&out);
	pmodel_diff_free(d);
	pmodel_result_free(a);
	pmodel_result_free(b);
	return t;
}

enum { Q_FLAME, Q_SERIES, Q_DIFF };

struct rcase {
	const char *name;
	int kind;
	int64_t from, to;
	int64_t len; /* Q_DIFF: each side's (0: [from, to) against itself) */
};

/* One case, REPS times each way, the ways alternating: medians. */
static void rollup_case(struct pstore *s, const struct rcase *c, int reps, int ways)
{
	double *w[2], *u[2];
	uint64_t read[2] = { 0, 0 };
	struct fread fr[2] = { { 0 }, { 0 } };

	for (int m = 0; m < ways; m++) {
		w[m] = calloc((size_t)reps, sizeof(double));
		u[m] = calloc((size_t)reps, sizeof(double));
	}
	for (int i = 0; i < reps; i++)
		for (int m = 0; m < ways; m++) /* m 0: rollups, 1: full resolution */
			w[m][i] = c->kind == Q_FLAME ? range_flame(s, c->from, c->to, m, &u[m][i], &fr[m])
				  : c->kind == Q_SERIES
					  ? range_series(s, c->from, c->to, m, &u[m][i], &read[m])
					  : range_diff(s, c->from, c->to, c->len, m, &u[m][i],
						       &read[m]);
	for (int m = 0; m < ways; m++) {
		char name[96];

		snprintf(name, sizeof(name), "%s_%s_cpu", c->name, m ? "full" : "rollups");
		report(name, u[m], reps, "ms", 1e3);
		snprintf(name, sizeof(name), "%s_%s_wall", c->name, m ? "full" : "rollups");
		report(name, w[m], reps, "ms", 1e3);
		printf("%s_%s_profiles_read %llu\n", c->name, m ? "full" : "rollups",
		       (unsigned long long)(c->kind == Q_FLAME ? fr[m].profiles : read[m]));
		if (c->kind == Q_FLAME) { /* what the answer holds: its cost's other side */
			printf("%s_%s_rows_bytes_read %llu\n", c->name, m ? "full" : "rollups",
			       (unsigned long long)fr[m].rows_bytes);
			printf("%s_%s_stacks %llu\n", c->name, m ? "full" : "rollups",
			       (unsigned long long)fr[m].stacks);
		}
		free(w[m]);
		free(u[m]);
	}
}

/* The stored range's ingest figures, kept beside it for -k. */
static void gen_save(const char *dir, const struct ingest *in)
{
	char path[600];
	FILE *f;

	snprintf(path, sizeof(path), "%s/rollups.gen", dir);
	f = fopen(path, "w");
	if (!f || fprintf(f, "%.9f %.9f %.9f %llu %llu %llu\n", in->wall, in->cpu, in->bg_cpu,
			  (unsigned long long)in->profiles, (unsigned long long)in->gz_bytes,
			  (unsigned long long)in->stacks) < 0 || fclose(f))
		exit(1);
}

static bool gen_load(const char *dir, struct ingest *in)
{
	char path[600];
	unsigned long long p, g, k;
	FILE *f;
	bool ok;

	snprintf(path, sizeof(path), "%s/rollups.gen", dir);
	f = fopen(path, "r");
	if (!f)
		return false;
	ok = fscanf(f, "%lf %lf %lf %llu %llu %llu", &in->wall, &in->cpu, &in->bg_cpu, &p, &g,
		    &k) == 6;
	fclose(f);
	in->profiles = p;
	in->gz_bytes = g;
	in->stacks = k;
	return ok;
}

/* The range stored (or, with keep, the one an earlier run stored): its
 * ingest figures. */
static struct ingest rollup_store(const char *dir, const char *path, int hours, bool keep)
{
	char cmd[1300];
	struct ingest in = { 0 };
	struct pstore *s;
	double c, t;

	if (keep && access(path, F_OK) == 0) {
		if (!gen_load(dir, &in)) { /* an older run's: the profiles alone known */
			memset(&in, 0, sizeof(in));
			in.profiles = (uint64_t)(services[0].pods + services[1].pods + services[2].pods) *
				      (uint64_t)(hours * HOUR / step);
		}
		rng = 0x9e3779b97f4a7c15ull; /* the services, as generated */
		make_services();
		atomic_store(&stream_now, T0 + (hours + 1) * HOUR);
		s = open_store(path, false, false);
		c = now_s(CLOCK_THREAD_CPUTIME_ID);
		t = now_s(CLOCK_MONOTONIC);
		if (pstore_compact(s))
			exit(1);
		printf("reused %s: compaction at reopen %.1f s wall, %.1f s cpu\n", path,
		       now_s(CLOCK_MONOTONIC) - t, now_s(CLOCK_THREAD_CPUTIME_ID) - c);
		pstore_free(s);
		return in;
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir -p '%s'", path, path);
	if (system(cmd))
		exit(1);
	in = run_stream(path, hours, false, NULL);
	gen_save(dir, &in);
	return in;
}

static int rollup_bench(const char *dir, int hours, int reps, int64_t interval, bool keep,
			bool rollups_only)
{
	int64_t end = T0 + hours * HOUR, skew0 = 13 * SEC, skew1 = 37 * SEC;
	const struct rcase cases[] = {
		{ "flame_1h", Q_FLAME, end - HOUR, end, 0 },
		{ "flame_24h", Q_FLAME, end - 24 * HOUR, end, 0 },
		{ "flame_all", Q_FLAME, T0, end, 0 },
		{ "flame_1h_unaligned", Q_FLAME, end - 2 * HOUR + skew0, end - HOUR - skew1, 0 },
		{ "flame_24h_unaligned", Q_FLAME, end - 25 * HOUR + skew0, end - HOUR - skew1, 0 },
		{ "flame_all_unaligned", Q_FLAME, T0 + skew0, end - HOUR - skew1, 0 },
		{ "series_all_1h_step", Q_SERIES, T0, end, 0 },
		{ "diff_24h_24h", Q_DIFF, end - 48 * HOUR, end, 24 * HOUR },
		{ hours >= 14 * 24 ? "diff_7d_7d" : "diff_all_all", Q_DIFF,
		  hours >= 14 * 24 ? end - 14 * 24 * HOUR : T0, end,
		  hours >= 14 * 24 ? 7 * 24 * HOUR : 0 },
	};
	char path[600];
	struct ingest in;
	struct pstore *s;
	struct pstore_stats st;
	double cpu, t;
	struct fread fr;

	step = interval;
	epoch_ns = 24 * HOUR;
	snprintf(path, sizeof(path), "%s/rollups", dir);
	in = rollup_store(dir, path, hours, keep);
	printf("profiles %llu over %d hours, %d series, one a series every %lld s, rollups at "
	       "%lld s, 1 h, 6 h and 1 day (%.0f distinct stacks each)\n",
	       (unsigned long long)in.profiles, hours,
	       services[0].pods + services[1].pods + services[2].pods, (long long)(step / SEC),
	       (long long)((fine_step_ns ? fine_step_ns : 60 * SEC) / SEC),
	       (double)in.stacks / in.profiles);
	if (in.cpu > 0) {
		printf("ingest_per_core %.0f profiles/s (1 / append cpu, no fsync)\n",
		       in.profiles / in.cpu);
		printf("compaction_cpu %.1f us/profile (flushes, merges, rollups: the other "
		       "thread)\n", 1e6 * in.bg_cpu / in.profiles);
		printf("ingest_per_core_with_compaction %.0f profiles/s (1 / (append + compaction "
		       "cpu))\n", in.profiles / (in.cpu + in.bg_cpu));
	}
	s = open_store(path, false, false);
	pstore_stats(s, &st);
	printf("gzip_pprof_bytes_per_profile %.0f (%.1f a sample)\n",
	       (double)in.gz_bytes / in.profiles, (double)in.gz_bytes / in.stacks);
	printf("block_bytes_per_profile %.1f (%.2f a stored sample; %llu blocks)\n",
	       (double)st.block_bytes / in.profiles, (double)st.block_bytes / in.stacks,
	       (unsigned long long)st.blocks);
	printf("rollup_bytes_per_profile %.1f (%.2f a stored sample; %llu rollups)\n",
	       (double)st.rollup_bytes / in.profiles, (double)st.rollup_bytes / in.stacks,
	       (unsigned long long)st.rollups);
	printf("disk_bytes_per_profile %.1f (blocks and rollups; %.2f a stored sample; "
	       "gzip'd pprof / disk %.1f x)\n",
	       (double)(st.block_bytes + st.rollup_bytes) / in.profiles,
	       (double)(st.block_bytes + st.rollup_bytes) / in.stacks,
	       (double)in.gz_bytes / (double)(st.block_bytes + st.rollup_bytes));
	t = range_flame(s, T0, end, false, &cpu, &fr);
	printf("flame_all_rollups_cold %.1f ms wall, %.1f ms cpu (%llu profiles read, "
	       "%llu stacks)\n", 1e3 * t, 1e3 * cpu, (unsigned long long)fr.profiles,
	       (unsigned long long)fr.stacks);
	pstore_free(s);
	s = open_store(path, false, false);
	if (!rollups_only) {
		t = range_flame(s, T0, end, true, &cpu, &fr);
		printf("flame_all_full_cold %.1f ms wall, %.1f ms cpu (%llu profiles read)\n",
		       1e3 * t, 1e3 * cpu, (unsigned long long)fr.profiles);
	}
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (cases[i].from >= T0 && (!only_case || strstr(cases[i].name, only_case)))
			rollup_case(s, &cases[i], reps, rollups_only ? 1 : 2);
	pstore_free(s);
	return 0;
}

int main(int argc, char **argv)
{
	const char *dir = "/tmp/pstore-bench";
	int reps = 7, hours = 2, days = 0, whours = 0, opt;
	int64_t interval = 60 * SEC;
	const char *save = NULL;
	bool fsync_pass = true, keep = false, rollups_only = false;
	struct kept kept = { 0 };
	struct ingest in, nf;
	struct pstore *s;
	struct pstore_stats st;
	double *q, *dq, *qc, *dqc, cold, cold_cpu, naive;
	size_t svg = 0;
	uint64_t profiles = 0;
	char path[600], cmd[700], top[512];

	while ((opt = getopt(argc, argv, "d:r:h:no:w:W:i:s:p:t:c:kq")) != -1) {
		if (opt == 'c')
			only_case = optarg;
		else if (opt == 'k')
			keep = true;
		else if (opt == 'q')
			rollups_only = true;
		else if (opt == 't' && atoi(optarg) > 0)
			query_threads = (unsigned)atoi(optarg);
		else if (opt == 'p' && atoi(optarg) > 0)
			set_series(atoi(optarg));
		else if (opt == 'i' && atoi(optarg) > 0)
			interval = atoi(optarg) * SEC;
		else if (opt == 's' && atoi(optarg) > 0)
			fine_step_ns = atoi(optarg) * SEC;
		else if (opt == 'w')
			days = atoi(optarg) < 1 ? 1 : atoi(optarg);
		else if (opt == 'W')
			whours = atoi(optarg) < 2 ? 2 : atoi(optarg);
		else if (opt == 'o')
			save = optarg;
		else if (opt == 'n')
			fsync_pass = false;
		else if (opt == 'd')
			dir = optarg;
		else if (opt == 'r')
			reps = atoi(optarg);
		else if (opt == 'h')
			hours = atoi(optarg) < 2 ? 2 : atoi(optarg);
		else
			return 2;
	}
	if (days || whours)
		return rollup_bench(dir, whours ? whours : days * 24, reps, interval, keep,
				    rollups_only);
	snprintf(path, sizeof(path), "%s/nofsync", dir);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir -p '%s'", dir, path);
	if (system(cmd))
		return 1;
	nf = run_stream(path, hours, false, NULL);
	snprintf(path, sizeof(path), "%s/store", dir);
	in = run_stream(path, hours, fsync_pass, &kept);
	printf("profiles %llu (%.0f distinct stacks each)\n", (unsigned long long)in.profiles,
	       (double)in.stacks / in.profiles);
	if (fsync_pass)
		printf("ingest_fsync %.0f profiles/s (append thread wall), %.1f us cpu/profile\n",
		       in.profiles / in.wall, 1e6 * in.cpu / in.profiles);
	printf("ingest_nofsync %.0f profiles/s (append thread wall), %.1f us cpu/profile\n",
	       nf.profiles / nf.wall, 1e6 * nf.cpu / nf.profiles);
	printf("ingest_per_core %.0f profiles/s (1 / append cpu, no fsync)\n",
	       nf.profiles / nf.cpu);
	printf("compaction_cpu %.1f us/profile (flushes and merges, the other thread)\n",
	       1e6 * nf.bg_cpu / nf.profiles);
	s = open_store(path, true, false);
	pstore_stats(s, &st);
	printf("gzip_pprof_bytes_per_profile %.0f\n", (double)in.gz_bytes / in.profiles);
	printf("block_bytes_per_profile %.1f (%llu blocks, %llu bytes, %llu series)\n",
	       (double)st.block_bytes / in.profiles, (unsigned long long)st.blocks,
	       (unsigned long long)st.block_bytes, (unsigned long long)st.series);
	printf("disk_bytes_per_profile %.1f (blocks and log: du of the directory)\n",
	       (double)(dir_bytes(path, "blocks") + dir_bytes(path, "wal")) / in.profiles);
	printf("size_ratio %.1f x (gzip'd pprof / block bytes)\n",
	       (double)in.gz_bytes / (double)st.block_bytes);
	cold = flame_query(s, &svg, &profiles, &cold_cpu);
	printf("query_flame_cold %.1f ms (%llu profiles, %zu bytes of SVG)\n", 1e3 * cold,
	       (unsigned long long)profiles, svg);
	printf("query_flame_cold_cpu %.1f ms (the querying thread's CPU)\n", 1e3 * cold_cpu);
	q = calloc((size_t)reps, sizeof(*q));
	dq = calloc((size_t)reps, sizeof(*dq));
	qc = calloc((size_t)reps, sizeof(*qc));
	dqc = calloc((size_t)reps, sizeof(*dqc));
	for (int i = 0; i < reps; i++) {
		q[i] = flame_query(s, &svg, &profiles, &qc[i]);
		dq[i] = diff_query(s, i ? NULL : top, &dqc[i]);
	}
	if (save)
		save_outputs(s, save);
	report("query_flame_warm", q, reps, "ms", 1e3);
	report("diff_flame_table_warm", dq, reps, "ms", 1e3);
	report("query_flame_warm_cpu", qc, reps, "ms", 1e3);
	report("diff_flame_table_warm_cpu", dqc, reps, "ms", 1e3);
	printf("diff_top_row %s; planted: %s, %s, %s\n", top,
	       services[0].funcs[slow_func(&services[0])].name,
	       services[1].funcs[slow_func(&services[1])].name,
	       services[2].funcs[slow_func(&services[2])].name);
	pstore_free(s);
	group_commit(dir);
	naive = naive_merge(&kept);
	printf("peer_decode_merge_pprof_gz %.1f ms (%zu files; ratio to the warm query %.1f x)\n",
	       1e3 * naive, kept.n, naive / q[reps / 2]);
	return 0;
}
