/*
 * ingest_bench.c - `pstore-ingest-bench`: profiles per second per core of
 * the profile store's ingest with symbolization included, in-process (the
 * profile service's ingest, profsvc_ingest: decode, symbolize through the
 * symbolization service, append durably), against the same profiles
 * already symbolized (decode and append only), interleaved A/B in one
 * run.  bench/profile-store/run-ingest.sh runs it and the HTTP side
 * (ingest_http.py); docs/benchmarks.md has the figures.
 *
 *   pstore-ingest-bench -b BINARY [-n PROFILES] [-r ROUNDS] [-d DIR] [-F]
 *   pstore-ingest-bench -b BINARY -w OUTDIR   (write the profiles, for ingest_http.py)
 *
 * The profiles: 10-second CPU profiles as Go writes them (samples/count
 * and cpu/nanoseconds, period 10 ms), 1,500 samples drawn by a Zipf law
 * (s = 1.1) from 400 distinct stacks (a call tree: each stack extends a
 * prefix of an earlier one by 1-4 frames, up to 24) over the functions of
 * BINARY (its symbol table), each frame a raw address inside its function
 * in one mapping carrying BINARY's build ID, gzip'd: what an eBPF agent
 * sends.  BINARY is put in a fresh debuginfo store first, and
 * one profile is ingested before the clock starts (the symbol index is
 * built once; afterwards it is in the service's LRU, as on a running
 * server).  Each round ingests PROFILES profiles of each kind; the figure
 * is the appending thread's CPU time (CLOCK_THREAD_CPUTIME_ID) per
 * profile, and the process's (the compaction thread included).  -F turns
 * the log's fsync off (the CPU figures do not change; the wall ones do).
 */
#include "inspect.h"
#include "pprof.h"
#include "profsvc_internal.h"
#include "pstore.h"
#include "store.h"
#include "store_fixture.h" /* put_file, shared with the unit tests */
#include "symsvc.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NSTACKS 400
#define NSAMPLES 1500
#define NPROFILES_MADE 16
#define BASE 0x555555554000ull

struct func {
	uint64_t off, size; /* file offset of the function's start, its size */
};

static double now(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
	return *s;
}

/* Functions of bin with their file offsets (nm's vaddr through readelf's
 * PT_LOADs, done by the shell: a benchmark may). */
static size_t functions(const char *bin, struct func *out, size_t max)
{
	char cmd[4200], line[512];
	uint64_t lv[8], lo[8], ls[8];
	size_t nl = 0, n = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "readelf -lW '%s' | awk '$1 == \"LOAD\" { print $2, $3, $5 }'",
		 bin);
	if (!(p = popen(cmd, "r")))
		return 0;
	while (nl < 8 && fgets(line, sizeof(line), p))
		if (sscanf(line, "%lx %lx %lx", &lo[nl], &lv[nl], &ls[nl]) == 3)
			nl++;
	pclose(p);
	snprintf(cmd, sizeof(cmd), "nm -S --defined-only '%s' | awk '$3 ~ /^[tT]$/'", bin);
	if (!(p = popen(cmd, "r")))
		return 0;
	while (n < max && fgets(line, sizeof(line), p)) {
		uint64_t v, sz;

		if (sscanf(line, "%lx %lx", &v, &sz) != 2 || sz < 16)
			continue;
		for (size_t k = 0; k < nl; k++)
			if (v >= lv[k] && v < lv[k] + ls[k]) {
				out[n++] = (struct func){ v - lv[k] + lo[k], sz };
				break;
			}
	}
	pclose(p);
	return n;
}

/* A gzip'd profile of raw addresses (build ID bid) or, when named, the
 * same stacks symbolized by name. */
static int make_profile(const struct func *f, size_t nf, const char *bid, uint64_t seed,
			bool named, struct ember_buf *out)
{
	struct pprof_profile *p = pprof_profile_new();
	uint64_t s = seed | 1, locs[NSTACKS][24], mid = 0;
	size_t depth[NSTACKS];
	double w[NSTACKS], sum = 0;
	int64_t counts[NSTACKS] = { 0 };
	struct pprof_mapping_desc m = { BASE, BASE + (1ull << 32), 0, "/usr/bin/app", bid };
	int err = p ? 0 : -ENOMEM;

	err = err ? err : pprof_add_sample_type(p, "samples", "count");
	err = err ? err : pprof_add_sample_type(p, "cpu", "nanoseconds");
	err = err ? err : pprof_set_period(p, "cpu", "nanoseconds", 10000000);
	err = err ? err : pprof_add_mapping(p, &m, &mid);
	for (size_t i = 0; !err && i < NSTACKS; i++) {
		/* a call tree: stack i extends a prefix of an earlier stack by
		 * 1-4 frames, so callers' locations are shared as in a real
		 * program's stacks; the same tree in every profile */
		uint64_t st = 0x9e3779b97f4a7c15ull * (i + 1);
		size_t j = i ? rnd(&st) % i : 0, keep = i ? 1 + rnd(&st) % depth[j] : 0;

		for (size_t d = 0; d < keep; d++)
			locs[i][d] = locs[j][d];
		depth[i] = i ? keep + 1 + rnd(&st) % 4 : 8;
		if (depth[i] > 24)
			depth[i] = 24;
		for (size_t d = keep; !err && d < depth[i]; d++) {
			const struct func *fn = &f[rnd(&st) % nf];
			uint64_t addr = BASE + fn->off + 1 + rnd(&st) % (fn->size - 1);

			if (named) {
				struct pprof_function_desc fd = { .name = "fn" };
				char name[32];
				uint64_t fid;
				struct pprof_line ln = { 0 };

				snprintf(name, sizeof(name), "f_%lx", (unsigned long)fn->off);
				fd.name = fd.system_name = name;
				err = pprof_add_function(p, &fd, &fid);
				err = err ? err : pprof_add_location(p, mid, addr, &locs[i][d]);
				ln.function_id = fid;
				err = err ? err : pprof_location_set_lines(p, locs[i][d], &ln, 1);
			} else {
				err = pprof_add_location(p, mid, addr, &locs[i][d]);
			}
		}
		w[i] = 1.0 / pow((double)(i + 1), 1.1);
		sum += w[i];
	}
	for (int k = 0; k < NSAMPLES; k++) { /* Zipf draws */
		double x = (double)(rnd(&s) % 1000000) / 1e6 * sum, acc = 0;
		size_t i = 0;

		while (i + 1 < NSTACKS && (acc += w[i]) < x)
			i++;
		counts[i]++;
	}
	for (size_t i = 0; !err && i < NSTACKS; i++) {
		int64_t v[2] = { counts[i], counts[i] * 10000000 };

		if (counts[i])
			err = pprof_add_sample(p, locs[i], depth[i], v, 2);
	}
	pprof_set_time(p, 0, 10000000000ll);
	err = err ? err : pprof_encode(p, true, out);
	pprof_profile_free(p);
	return err;
}

/* One profile through the service's ingest (symbolize = true) or appended as
 * it is (already symbolized). */
static int ingest(struct profsvc *pr, const struct ember_buf *body, bool symbolize, int i)
{
	char labels_v[16];
	struct pstore_label l[2] = { { "service_name", "bench" }, { "pod", labels_v } };
	struct profsvc_in in = { .labels = l, .n_labels = 2, .route = PROFSVC_ROUTE_PROFILES,
				 .time_ns = (int64_t)time(NULL) * 1000000000ll,
				 .duration_ns = 10000000000ll, .body = body->data,
				 .body_len = body->len, .input_bytes = body->len };
	struct profsvc_out out;
	char why[256];
	int err;

	snprintf(labels_v, sizeof(labels_v), "p%d", i % 20);
	err = pprof_decode(body->data, body->len, NULL, &in.p, why, sizeof(why));
	if (err)
		return err;
	if (symbolize) {
		profsvc_ingest(pr, &in, &out);
		ember_buf_release(&out.body);
		if (out.err)
			fprintf(stderr, "pstore-ingest-bench: ingest: %s\n", out.why);
		return out.err;
	}
	{
		struct pstore_append_opts o = { .sz = sizeof(o), .labels = l, .n_labels = 2,
						.time_ns = in.time_ns, .body = body->data,
						.body_len = body->len };

		err = pstore_append(pr->store, in.p, &o, why, sizeof(why));
		pprof_profile_free(in.p);
		return err;
	}
}

struct run {
	double thread_cpu, proc_cpu, wall;
};

static int round_of(struct profsvc *pr, struct ember_buf *bodies, int n, bool sym,
		    struct run *r)
{
	double t0 = now(CLOCK_THREAD_CPUTIME_ID), p0 = now(CLOCK_PROCESS_CPUTIME_ID),
	       w0 = now(CLOCK_MONOTONIC);

	for (int i = 0; i < n; i++) {
		int err = ingest(pr, &bodies[i % NPROFILES_MADE], sym, i);

		if (err) {
			fprintf(stderr, "ingest: %s\n", pstore_strerror(err));
			return err;
		}
	}
	r->thread_cpu = now(CLOCK_THREAD_CPUTIME_ID) - t0;
	r->proc_cpu = now(CLOCK_PROCESS_CPUTIME_ID) - p0;
	r->wall = now(CLOCK_MONOTONIC) - w0;
	return 0;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_d);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void report(const char *what, struct run *r, int rounds, int n)
{
	double tc[64], pc[64], w[64];

	for (int i = 0; i < rounds; i++) {
		tc[i] = r[i].thread_cpu / n * 1e6;
		pc[i] = r[i].proc_cpu / n * 1e6;
		w[i] = n / r[i].wall;
	}
	printf("%s_thread_cpu_us %.1f\n%s_process_cpu_us %.1f\n%s_profiles_per_core_s %.0f\n"
	       "%s_wall_profiles_s %.0f\n",
	       what, median(tc, rounds), what, median(pc, rounds), what,
	       1e6 / median(pc, rounds), what, median(w, rounds));
}

/* -w: the raw-address profiles as OUT/pNN.pb.gz. */
static int write_profiles(const struct func *f, size_t nf, const char *bin, const char *out)
{
	char id[STORE_BUILD_ID_HEX] = "", cmd[4400], path[4200];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "readelf -n '%s' | awk '/Build ID/ { print $3 }'", bin);
	if (!(p = popen(cmd, "r")) || !fgets(id, sizeof(id), p))
		return 1;
	pclose(p);
	id[strcspn(id, "\n")] = '\0';
	for (int i = 0; i < NPROFILES_MADE; i++) {
		struct ember_buf b;
		FILE *o;

		ember_buf_init(&b, 64 << 20);
		snprintf(path, sizeof(path), "%s/p%02d.pb.gz", out, i);
		if (make_profile(f, nf, id, 1000 + (uint64_t)i, false, &b) || !(o = fopen(path, "w")) ||
		    fwrite(b.data, 1, b.len, o) != b.len || fclose(o))
			return 1;
		ember_buf_release(&b);
	}
	printf("%d profiles of build ID %s in %s\n", NPROFILES_MADE, id, out);
	return 0;
}

int main(int argc, char **argv)
{
	const char *bin = NULL, *dir = "/tmp/pstore-ingest-bench", *write_dir = NULL;
	int n = 300, rounds = 5, opt;
	bool no_fsync = false;
	static struct func f[1 << 16];
	struct ember_buf raw[NPROFILES_MADE], named[NPROFILES_MADE];
	struct run rs[64], rn[64];
	char path[4200], id[STORE_BUILD_ID_HEX], why[512];
	struct profsvc pr = { .max_body = 16 << 20, .max_age_ns = -1, .max_future_ns = -1 };
	struct store *st;
	size_t nf;
	int err;

	while ((opt = getopt(argc, argv, "b:n:r:d:Fw:")) != -1) {
		if (opt == 'b')
			bin = optarg;
		else if (opt == 'w')
			write_dir = optarg;
		else if (opt == 'n')
			n = atoi(optarg);
		else if (opt == 'r')
			rounds = atoi(optarg) > 0 && atoi(optarg) <= 64 ? atoi(optarg) : 5;
		else if (opt == 'd')
			dir = optarg;
		else if (opt == 'F')
			no_fsync = true;
	}
	if (!bin) {
		fputs("usage: pstore-ingest-bench -b BINARY [-n PROFILES] [-r ROUNDS] [-d DIR] [-F]\n",
		      stderr);
		return 2;
	}
	ember_log_set_level(EMBER_LOG_ERROR);
	snprintf(path, sizeof(path), "rm -rf '%s' && mkdir -p '%s'", dir, dir);
	if (system(path) || (nf = functions(bin, f, sizeof(f) / sizeof(f[0]))) < 50) {
		fprintf(stderr, "no functions in '%s'\n", bin);
		return 1;
	}
	if (write_dir)
		return write_profiles(f, nf, bin, write_dir);
	snprintf(path, sizeof(path), "%s/debuginfo", dir);
	err = store_new(path, &st);
	err = err ? err : store_wait(st);
	err = err ? err : put_file(st, bin, STORE_KIND_EXECUTABLE | STORE_KIND_DEBUGINFO, id);
	err = err ? err : symsvc_new(st, NULL, &pr.symbols);
	if (err) {
		fprintf(stderr, "debuginfo store: %s\n", strerror(-err));
		return 1;
	}
	{
		struct pstore_opts po = { .sz = sizeof(po), .resolver = profsvc_resolve,
					  .resolver_ctx = pr.symbols, .no_fsync = no_fsync };

		snprintf(path, sizeof(path), "%s/profiles", dir);
		if ((err = pstore_open(path, &po, &pr.store, why, sizeof(why)))) {
			fprintf(stderr, "profile store: %s\n", why);
			return 1;
		}
	}
	for (int i = 0; i < NPROFILES_MADE; i++) {
		ember_buf_init(&raw[i], 64 << 20);
		ember_buf_init(&named[i], 64 << 20);
		if (make_profile(f, nf, id, 1000 + (uint64_t)i, false, &raw[i]) ||
		    make_profile(f, nf, id, 1000 + (uint64_t)i, true, &named[i]))
			return 1;
	}
	printf("binary %s: %zu functions, build ID %s; profiles %zu bytes gzip'd\n", bin, nf, id,
	       raw[0].len);
	if (ingest(&pr, &raw[0], true, 0)) /* the index is built once */
		return 1;
	for (int k = 0; k < rounds; k++) /* interleaved A/B */
		if (round_of(&pr, raw, n, true, &rs[k]) || round_of(&pr, named, n, false, &rn[k]))
			return 1;
	printf("resolved samples %llu, unresolved %llu\n",
	       (unsigned long long)pr.samples_resolved, (unsigned long long)pr.samples_unresolved);
	report("symbolized_at_ingest", rs, rounds, n);
	report("already_symbolized", rn, rounds, n);
	pstore_free(pr.store);
	symsvc_free(pr.symbols);
	store_free(st);
	for (int i = 0; i < NPROFILES_MADE; i++) {
		ember_buf_release(&raw[i]);
		ember_buf_release(&named[i]);
	}
	return 0;
}
