/*
 * symindex_build.c - how long building a symbol index takes, and how much
 * memory, with the DIE reader (the default) or with libdw's walk alone
 * (SYM_BUILD_LIBDW_ONLY, the flag the tests compare the two with): the
 * figures of docs/symbol-index.md ("Why a DIE reader of its own").
 *
 *   symindex_build [--libdw-only] [-n RUNS] [--save FILE] ELF
 *
 * Builds the index of ELF RUNS times (default 1) in this process and
 * prints, per run, the wall and CPU seconds (user + system, both
 * threads), then the process's peak RSS (ru_maxrss, MB), the units each
 * walk took and the index's size.  Peak RSS is the first run's when
 * RUNS is 1: run one process per figure.  Not a test: a tool of the test
 * build, like tests/unwind/unwind_walk.c.  --save writes the (last)
 * index in the saved format (docs/symbol-index-format.md): how the seeds
 * of tests/fuzz/corpus/symindex/ are made after a format change.
 */
#include "symbolizer.h"
#include "sym_internal.h"
#include "common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static double now(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int file_write(void *arg, const void *data, size_t len)
{
	return fwrite(data, 1, len, arg) == len ? 0 : -EIO;
}

static int save(const struct sym_index *idx, const char *out)
{
	FILE *f = fopen(out, "wb");
	int err = f ? sym_index_save(idx, file_write, f) : -errno;

	if (f && fclose(f) && !err)
		err = -EIO;
	if (err)
		fprintf(stderr, "symindex_build: cannot write '%s': %s\n", out, sym_strerror(err));
	return err;
}

int main(int argc, char **argv)
{
	unsigned flags = 0;
	const char *path = NULL, *out = NULL;
	int runs = 1;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--libdw-only") == 0)
			flags |= SYM_BUILD_LIBDW_ONLY;
		else if (strcmp(argv[i], "-n") == 0 && i + 1 < argc)
			runs = atoi(argv[++i]);
		else if (strcmp(argv[i], "--save") == 0 && i + 1 < argc)
			out = argv[++i];
		else
			path = argv[i];
	}
	if (!path || runs < 1) {
		fprintf(stderr, "usage: symindex_build [--libdw-only] [-n RUNS] [--save FILE] ELF\n");
		return 2;
	}
	for (int r = 0; r < runs; r++) {
		double w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);
		int err = 0;
		struct sym_index *idx = sym_index_open_flags(path, NULL, flags, &err);
		double wall = now(CLOCK_MONOTONIC) - w0;
		double cpu = now(CLOCK_PROCESS_CPUTIME_ID) - c0;
		struct rusage ru;

		if (!idx) {
			fprintf(stderr, "symindex_build: '%s': %s\n", path, sym_strerror(err));
			return 1;
		}
		getrusage(RUSAGE_SELF, &ru);
		printf("%s wall_s %.4f cpu_s %.4f maxrss_mb %.1f units_reader %zu units_libdw %zu"
		       " nodes %zu segments %zu\n",
		       flags ? "libdw" : "reader", wall, cpu, (double)ru.ru_maxrss / 1024,
		       idx->units_read, idx->units_libdw, idx->nnodes, idx->nsegs);
		if (out && r == runs - 1 && save(idx, out)) {
			sym_index_free(idx);
			return 1;
		}
		sym_index_free(idx);
	}
	return 0;
}
