/*
 * replay.c - runs a libFuzzer target without libFuzzer, so ordinary CI
 * keeps every target alive: each file argument (or each file of a
 * directory argument) is fed to LLVMFuzzerTestOneInput as is, and with
 * --mutate N also N deterministic mutations of it (truncations and
 * random byte overwrites from a fixed seed; for a target with its own
 * LLVMFuzzerCustomMutator, that mutator with seeds 0..N-1), the cheap
 * half of fuzzing.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* A target's own mutator (fuzz_dies.c), when it has one. */
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size,
			       unsigned int seed) __attribute__((weak));

static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void mutate_and_run(const uint8_t *data, size_t size, int n,
			   uint64_t seed)
{
	uint8_t *copy = malloc(size ? size : 1);

	for (int i = 0; i < n && copy; i++) {
		size_t len = size;

		memcpy(copy, data, size);
		if (LLVMFuzzerCustomMutator) { /* the target's, seeded 0, 1, ... */
			len = LLVMFuzzerCustomMutator(copy, size, size, (unsigned)i);
			LLVMFuzzerTestOneInput(copy, len);
			continue;
		}
		if (i % 3 == 0 && size)
			len = (size_t)(rng_next(&seed) % size);
		for (int k = 0; k < 1 + i % 8 && len; k++)
			copy[rng_next(&seed) % len] = (uint8_t)rng_next(&seed);
		LLVMFuzzerTestOneInput(copy, len);
	}
	free(copy);
}

static int run_file(const char *path, int mutations)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long size;

	if (!f)
		return -1;
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	rewind(f);
	buf = malloc(size > 0 ? (size_t)size : 1);
	if (!buf || fread(buf, 1, (size_t)size, f) != (size_t)size) {
		fclose(f);
		free(buf);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)size);
	mutate_and_run(buf, (size_t)size, mutations, 0x9e3779b97f4a7c15ull ^ (uint64_t)size);
	free(buf);
	printf("replayed %s (+%d mutations)\n", path, mutations);
	return 0;
}

static int run_path(const char *path, int mutations)
{
	struct stat st;
	DIR *d;
	struct dirent *e;
	int err = 0;

	if (stat(path, &st) < 0)
		return -1;
	if (!S_ISDIR(st.st_mode))
		return run_file(path, mutations);
	d = opendir(path);
	while (d && (e = readdir(d))) {
		char sub[4096];

		if (e->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
		if (stat(sub, &st) == 0 && S_ISREG(st.st_mode))
			err |= run_file(sub, mutations);
	}
	if (d)
		closedir(d);
	return err;
}

int main(int argc, char **argv)
{
	int mutations = 0, files = 0;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--mutate") == 0 && i + 1 < argc) {
			mutations = atoi(argv[++i]);
			continue;
		}
		if (run_path(argv[i], mutations) != 0) {
			fprintf(stderr, "replay: cannot read '%s'\n", argv[i]);
			return 1;
		}
		files++;
	}
	if (!files) {
		fprintf(stderr, "usage: replay [--mutate N] FILE|DIR...\n");
		return 2;
	}
	return 0;
}
