/*
 * lookup_bench.c - the symbolizer's lookup cost without process start,
 * index build or output: builds the index of one ELF, then times
 * sym_index_lookup() over the addresses of a file (one 0x... per line),
 * in input order (random for the benchmark's address sets) and sorted
 * (a batch API can sort first).  Reports the best of REPS passes as
 * ns/lookup, for comparison with the ~60 ns/lookup limit measured for a
 * random search in ~10^5 ranges on this machine.
 *
 * usage: ember-lookup-bench ELF ADDRS [REPS]
 */
#include "symbolizer.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t *read_addrs(const char *path, size_t *n)
{
	FILE *f = fopen(path, "r");
	size_t cap = 1024;
	uint64_t *v = malloc(cap * sizeof(*v)), a;

	*n = 0;
	while (f && v && fscanf(f, "%" SCNx64, &a) == 1) {
		if (*n == cap) {
			uint64_t *p = realloc(v, 2 * cap * sizeof(*v));

			if (!p)
				break;
			v = p;
			cap *= 2;
		}
		v[(*n)++] = a;
	}
	if (f)
		fclose(f);
	return v;
}

/* Best-of-reps ns per lookup; frames counted so the work is not elided. */
static double time_lookups(const struct sym_index *idx, const uint64_t *a,
			   size_t n, int reps, unsigned long *frames)
{
	struct sym_frame f[64];
	double best = 1e30;

	for (int r = 0; r < reps; r++) {
		double t0 = now();

		*frames = 0;
		for (size_t i = 0; i < n; i++) {
			int k = sym_index_lookup(idx, a[i], SYM_ADDR_VADDR,
						 SYM_LOOKUP_SYMBOL_NAME, f, 64);

			*frames += k > 0 ? (unsigned long)k : 0;
		}
		double t = (now() - t0) / (double)n * 1e9;
		if (t < best)
			best = t;
	}
	return best;
}

int main(int argc, char **argv)
{
	struct sym_index_stats st;
	struct sym_index *idx;
	unsigned long frames;
	size_t n;
	int err = 0, reps = argc > 3 ? atoi(argv[3]) : 5;
	double t0, build, rnd, srt;
	uint64_t *addrs;

	if (argc < 3) {
		fprintf(stderr, "usage: %s ELF ADDRS [REPS]\n", argv[0]);
		return 2;
	}
	t0 = now();
	idx = sym_index_open(argv[1], NULL, &err);
	build = now() - t0;
	if (!idx) {
		fprintf(stderr, "'%s': %s\n", argv[1], sym_strerror(err));
		return 1;
	}
	addrs = read_addrs(argv[2], &n);
	if (!addrs || !n) {
		fprintf(stderr, "'%s': no addresses\n", argv[2]);
		return 1;
	}
	sym_index_get_stats(idx, &st);
	rnd = time_lookups(idx, addrs, n, reps, &frames);
	qsort(addrs, n, sizeof(*addrs), cmp_u64);
	srt = time_lookups(idx, addrs, n, reps, &frames);
	printf("index: %.3f s, %zu segments, %.1f MB; %zu lookups, %.2f frames each\n",
	       build, st.segments, st.bytes / 1e6, n, (double)frames / (double)n);
	printf("lookup: %.1f ns random order, %.1f ns sorted (best of %d)\n",
	       rnd, srt, reps);
	sym_index_free(idx);
	free(addrs);
	return 0;
}
