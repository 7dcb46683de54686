/*
 * unwind_bench.c - ember-unwind-bench [-n N] FILE...: the unwind
 * compiler's own time, without the `ember` process around it.  Each FILE
 * is compiled N times in one process (unwind_table_compile: open, parse,
 * run every FDE, encode, checksum; the table stays in memory); printed are
 * the first run's wall time (cold: fresh memory, every page faulted in)
 * and the median, with the table's figures.  bench/unwind/run.sh
 * prints it next to the CLI's wall time, which adds the start of the
 * `ember` binary (about 50 shared libraries, most of them the server's).
 */
#include "unwind.h"
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int bench_file(const char *path, int n)
{
	struct unwind_compile_stats st;
	struct unwind_compile_opts o = { .sz = sizeof(o), .stats = &st };
	double *t = calloc((size_t)n, sizeof(*t)), first;
	struct ember_buf table;
	int err = 0;

	for (int i = 0; i < n && !err; i++) {
		double t0 = now();

		ember_buf_init(&table, UINT64_C(1) << 32);
		err = unwind_table_compile(path, NULL, &o, &table);
		t[i] = now() - t0;
		ember_buf_release(&table);
	}
	if (err) {
		fprintf(stderr, "ember-unwind-bench: '%s': %s\n", path, unwind_strerror(err));
		free(t);
		return 1;
	}
	first = t[0];
	qsort(t, (size_t)n, sizeof(*t), cmp_double);
	printf("%s median_s %.6f first_s %.6f rows %zu stored %zu rules %zu bytes %zu"
	       " bytes_per_row %.3f ns_per_row %.1f\n",
	       path, t[n / 2], first, st.rows, st.rows_stored, st.rules, st.table_size,
	       (double)st.table_size / (double)(st.rows ? st.rows : 1),
	       t[n / 2] * 1e9 / (double)(st.rows ? st.rows : 1));
	free(t);
	return 0;
}

int main(int argc, char **argv)
{
	int n = 10, i = 1, rc = 0;

	if (argc > 2 && strcmp(argv[1], "-n") == 0) {
		n = atoi(argv[2]);
		i = 3;
	}
	if (i >= argc || n < 1) {
		fprintf(stderr, "usage: ember-unwind-bench [-n N] FILE...\n");
		return 2;
	}
	for (; i < argc; i++)
		rc |= bench_file(argv[i], n);
	return rc;
}
