/*
 * make_pstore_seeds.c - writes the seed corpora of the profile store's
 * fuzz targets from a real store: blocks (one flush, one merge of two,
 * a rollup of the merge, one flush of samples linked to spans, with a
 * thread name),
 * log segments (whole, torn) and selectors.  Built by CMake
 * (make_pstore_seeds); run from the repository root after a format
 * change and commit the files:
 *     build/tests/make_pstore_seeds tests/fuzz/corpus
 */
#include "pprof.h"
#include "pstore.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SEC ((int64_t)1000000000)
#define T0 ((int64_t)1700000000 * SEC)

static int64_t now = T0;
static bool linked; /* the samples of profile() linked to spans */

static int64_t clock_fn(void *ctx)
{
	(void)ctx;
	return now;
}

/* main -> work -> {hot, cold} symbolized, and one unsymbolized frame. */
static struct pprof_profile *profile(int64_t time, int64_t hot)
{
	struct pprof_mapping_desc md = { 0x400000, 0x500000, 0, "/usr/bin/app", "cafe" };
	struct pprof_profile *p = pprof_profile_new();
	const char *names[3] = { "main", "work", "hot" };
	uint64_t mid, loc[4], fn;
	int64_t v1[2] = { hot, hot * 10000000 }, v2[2] = { 3, 30000000 };
	struct pprof_sample_label sl = { .key = "handler", .str = "/cart" };

	if (!p || pprof_add_sample_type(p, "samples", "count") ||
	    pprof_add_sample_type(p, "cpu", "nanoseconds") ||
	    pprof_set_period(p, "cpu", "nanoseconds", 10000000) || pprof_add_mapping(p, &md, &mid))
		exit(1);
	pprof_set_time(p, time, 10 * SEC);
	for (int i = 0; i < 3; i++) {
		struct pprof_function_desc f = { names[i], names[i], "app.c", 1 };
		struct pprof_line ln = { 0, 10 + i, 0 };

		if (pprof_add_function(p, &f, &fn) ||
		    pprof_add_location(p, mid, 0x401000 + 16 * i, &loc[i]))
			exit(1);
		ln.function_id = fn;
		if (pprof_location_set_lines(p, loc[i], &ln, 1))
			exit(1);
	}
	if (pprof_add_location(p, mid, 0x402000, &loc[3]))
		exit(1);
	{
		uint64_t s1[3] = { loc[2], loc[1], loc[0] }, s2[3] = { loc[3], loc[1], loc[0] };

		struct pprof_sample_label ln[3] = {
			{ .key = "span_id", .str = "00f067aa0ba902b7" },
			{ .key = "trace_id", .str = "4bf92f3577b34da6a3ce929d0e0e4736" },
			{ .key = "@thread.name", .str = "worker-1" } };

		if (pprof_add_sample(p, s1, 3, v1, 2) ||
		    pprof_add_sample_labeled(p, s2, 3, v2, 2, &sl, 1) ||
		    (linked && pprof_add_sample_labeled(p, s1, 3, v2, 2, ln, 3)))
			exit(1);
	}
	return p;
}

static void append(struct pstore *s, int64_t time, int64_t hot)
{
	struct pstore_label l[2] = { { "service", "checkout" }, { "version", "2.4" } };
	struct pstore_unresolved un = { "cafe", "no_debuginfo" };
	struct pstore_append_opts o = { .sz = sizeof(o), .labels = l, .n_labels = 2,
					.unresolved = &un, .n_unresolved = 1 };
	struct pprof_profile *p = profile(time, hot);

	if (pstore_append(s, p, &o, NULL, 0))
		exit(2);
	pprof_profile_free(p);
}

static void copy_first(const char *dir, const char *suffix, const char *to, long cut)
{
	char cmd[2048];

	snprintf(cmd, sizeof(cmd), "f=$(ls '%s'/*%s | head -1) && cp \"$f\" '%s'%s", dir, suffix,
		 to, cut ? " && truncate -s -" : "");
	if (cut)
		snprintf(cmd + strlen(cmd), sizeof(cmd) - strlen(cmd), "%ld '%s'", cut, to);
	if (system(cmd))
		exit(3);
}

static void put(const char *out, const char *sub, const char *name, const char *text)
{
	char path[1024];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/%s", out, sub, name);
	f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f))
		exit(4);
}

/* A block of one flush whose rows name links (version 2). */
static int linked_block(const char *out, const struct pstore_opts *o)
{
	char dir[] = "/tmp/ember-pstore-seeds.XXXXXX", sub[1024], to[1024];
	struct pstore *s = NULL;

	if (!mkdtemp(dir) || pstore_open(dir, o, &s, NULL, 0))
		return 1;
	linked = true;
	append(s, T0, 4);
	append(s, T0 + 10 * SEC, 6);
	linked = false;
	if (pstore_flush(s))
		return 5;
	snprintf(sub, sizeof(sub), "%s/blocks", dir);
	snprintf(to, sizeof(to), "%s/pstore_block/linked.pblk", out);
	copy_first(sub, ".pblk", to, 0);
	pstore_free(s);
	snprintf(to, sizeof(to), "rm -rf '%s'", dir);
	return system(to) ? 7 : 0;
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/ember-pstore-seeds.XXXXXX", sub[1024], to[1024];
	struct pstore_opts o = { .sz = sizeof(o), .no_background = true, .clock_ns = clock_fn,
				 .zstd_level = 3 };
	struct pstore *s = NULL;
	const char *out = argc > 1 ? argv[1] : "tests/fuzz/corpus";

	if (!mkdtemp(dir) || pstore_open(dir, &o, &s, NULL, 0))
		return 1;
	for (const char *c = "pstore_block\0pstore_wal\0pstore_selector\0"; *c;
	     c += strlen(c) + 1) {
		snprintf(sub, sizeof(sub), "%s/%s", out, c);
		mkdir(sub, 0755);
	}
	/* segments: three records, and the same torn */
	for (int i = 0; i < 3; i++)
		append(s, T0 + i * 10 * SEC, 5 + i);
	snprintf(sub, sizeof(sub), "%s/wal", dir);
	snprintf(to, sizeof(to), "%s/pstore_wal/three.wal", out);
	copy_first(sub, ".wal", to, 0);
	snprintf(to, sizeof(to), "%s/pstore_wal/torn.wal", out);
	copy_first(sub, ".wal", to, 9);
	/* a block of one flush, then one of a merge */
	if (pstore_flush(s))
		return 5;
	snprintf(sub, sizeof(sub), "%s/blocks", dir);
	snprintf(to, sizeof(to), "%s/pstore_block/flushed.pblk", out);
	copy_first(sub, ".pblk", to, 0);
	append(s, T0 + 100 * SEC, 9);
	if (pstore_flush(s))
		return 5;
	now = T0 + 4 * 3600 * SEC;
	if (pstore_compact(s))
		return 6;
	snprintf(to, sizeof(to), "%s/pstore_block/merged.pblk", out);
	copy_first(sub, ".pblk", to, 0);
	/* a rollup of the merge (an hour's: its rows decoded when loaded) */
	snprintf(sub, sizeof(sub), "%s/rollups", dir);
	snprintf(to, sizeof(to), "%s/pstore_block/rollup.pblk", out);
	copy_first(sub, ".pblk", to, 0);
	pstore_free(s);
	if (linked_block(out, &o))
		return 8;
	put(out, "pstore_selector", "simple", "{service=\"checkout\"}");
	put(out, "pstore_selector", "all_ops",
	    "process_cpu:cpu:nanoseconds:cpu:nanoseconds{service=\"checkout\",version=~\"2\\\\.4.*"
	    "\","
	    " k8s.pod!='a', env!~`prod|stag.*`,}");
	put(out, "pstore_selector", "regex_bounds", "{a=~\"(ab){2,5}[0-9]+x{3}\"}");
	put(out, "pstore_selector", "escapes", "{a=\"q\\\"\\\\\\n\\t\"}");
	snprintf(to, sizeof(to), "rm -rf '%s'", dir);
	return system(to) ? 7 : 0;
}
