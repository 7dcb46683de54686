/*
 * unit.h - the smallest test harness that does the job: a test binary
 * holds cases named test_<comp>__<case>; `binary CASE` runs one (CTest
 * registers each case separately), `binary` runs all.  A case fails with
 * the file, line and expression of the first failed check; a case that
 * cannot run here returns UNIT_SKIP (exit 77, reported as skipped).
 */
#ifndef EMBER_UNIT_H
#define EMBER_UNIT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

#define UNIT_SKIP 77

struct unit_case {
	const char *name;
	int (*fn)(void);
};

#define CHECK(expr)                                                          \
	do {                                                                 \
		if (!(expr)) {                                               \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, \
				__LINE__, #expr);                            \
			return 1;                                            \
		}                                                            \
	} while (0)

#define CHECK_INT(a, op, b)                                                  \
	do {                                                                 \
		long long a_ = (long long)(a), b_ = (long long)(b);          \
		if (!(a_ op b_)) {                                           \
			fprintf(stderr, "%s:%d: check failed: %s %s %s (%lld vs %lld)\n", \
				__FILE__, __LINE__, #a, #op, #b, a_, b_);    \
			return 1;                                            \
		}                                                            \
	} while (0)

#define CHECK_STR(a, b)                                                      \
	do {                                                                 \
		const char *a_ = (a), *b_ = (b);                             \
		if (!a_ || !b_ || strcmp(a_, b_) != 0) {                     \
			fprintf(stderr, "%s:%d: check failed: %s == %s ('%s' vs '%s')\n", \
				__FILE__, __LINE__, #a, #b, a_ ? a_ : "(null)", \
				b_ ? b_ : "(null)");                         \
			return 1;                                            \
		}                                                            \
	} while (0)

/* A log handler that drops everything: the libraries log the bad input
 * the tests feed them on purpose. */
static inline void unit_quiet(enum ember_log_level l, const char *m, void *c)
{
	(void)l, (void)m, (void)c;
}

/* $EMBER_FIXTURES_DIR/name (build/fixtures when unset), in a buffer that
 * the next call overwrites. */
static inline const char *unit_fixture(const char *name)
{
	static char path[4096];
	const char *dir = getenv("EMBER_FIXTURES_DIR");

	snprintf(path, sizeof(path), "%s/%s", dir ? dir : "build/fixtures", name);
	return path;
}

/* The whole file at path in a malloc'ed buffer (caller frees), its size
 * in *len; NULL when it cannot be read. */
static inline char *unit_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long size = -1;

	if (f && fseek(f, 0, SEEK_END) == 0)
		size = ftell(f);
	if (size >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (buf = malloc((size_t)size + 1)) &&
	    fread(buf, 1, (size_t)size, f) != (size_t)size) {
		free(buf);
		buf = NULL;
	}
	if (f)
		fclose(f);
	*len = buf ? (size_t)size : 0;
	return buf;
}

/*
 * A small program linked with a build ID of 68 bytes (ld --build-id=0x...),
 * longer than the 64 Ember keys files by: written to path (a buffer of
 * size bytes, filled).  0, or UNIT_SKIP when it cannot be built (no gcc).
 */
static inline int unit_long_build_id_elf(char *path, size_t size)
{
	char src[] = "/tmp/ember-longid-XXXXXX.c", cmd[8400], id[137];
	int fd = mkstemps(src, 2), rc;

	if (fd < 0)
		return UNIT_SKIP;
	rc = write(fd, "int main(void) { return 0; }\n", 29) == 29 ? 0 : -1;
	close(fd);
	for (int i = 0; i < 68; i++)
		snprintf(id + 2 * i, 3, "%02x", 0xa0 + i);
	snprintf(path, size, "%.*s", (int)(strlen(src) - 2), src);
	snprintf(cmd, sizeof(cmd), "gcc -o '%s' '%s' -Wl,--build-id=0x%s 2>/dev/null",
		 path, src, id);
	if (!rc)
		rc = system(cmd);
	unlink(src);
	return rc ? UNIT_SKIP : 0;
}

/* { "name", fn } for a table of cases. */
#define UNIT_CASE(n) { #n, n }

/* A main() that runs the case named in argv[1] (every case without one)
 * with the libraries' logs dropped (unit_quiet). */
#define UNIT_MAIN_QUIET(cases)                                               \
	int main(int argc, char **argv)                                      \
	{                                                                    \
		ember_log_set_handler(unit_quiet, NULL);                     \
		return unit_main(cases, sizeof(cases) / sizeof(cases[0]), argc, argv); \
	}

static inline int unit_main(const struct unit_case *cases, size_t n,
			    int argc, char **argv)
{
	int failed = 0, ran = 0;

	for (size_t i = 0; i < n; i++) {
		int rc;

		if (argc > 1 && strcmp(argv[1], cases[i].name) != 0)
			continue;
		rc = cases[i].fn();
		ran++;
		if (argc > 1)
			return rc;
		printf("%s %s\n", rc == 0 ? "ok  " : rc == UNIT_SKIP ? "skip" : "FAIL",
		       cases[i].name);
		failed += rc != 0 && rc != UNIT_SKIP;
	}
	if (!ran) {
		fprintf(stderr, "no test case named '%s'\n", argc > 1 ? argv[1] : "");
		return 2;
	}
	return failed ? 1 : 0;
}

#endif /* EMBER_UNIT_H */
