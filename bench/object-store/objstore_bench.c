/*
 * objstore_bench.c - the object store client's side of the benchmark
 * (bench/object-store/run.sh, which runs curl as the peer in the same run):
 *
 *   ember-objstore-bench upload FILE KEY [single|multipart|multipart1]
 *       objstore_put_fd of the whole file (multipart1: one part at a time);
 *       prints "seconds bytes attempts"
 *   ember-objstore-bench digest FILE
 *       the client's pass over a file before a single PUT (sha256 and
 *       MD5); prints "seconds bytes"
 *   ember-objstore-bench get KEY N
 *       N whole-object GETs of KEY into memory on one handle (keep-alive);
 *       prints each request's seconds, one a line
 *
 * The endpoint, region and bucket come from OBJSTORE_TEST_ENDPOINT,
 * OBJSTORE_TEST_REGION, OBJSTORE_TEST_BUCKET (ceph_cluster.sh's env file),
 * the credentials from the usual AWS_* variables.
 */
#include "objstore_internal.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static struct objstore *open_store(size_t threshold, unsigned concurrency)
{
	struct objstore_opts o = { .sz = sizeof(o),
				   .endpoint = getenv("OBJSTORE_TEST_ENDPOINT"),
				   .region = getenv("OBJSTORE_TEST_REGION"),
				   .bucket = getenv("OBJSTORE_TEST_BUCKET"),
				   .multipart_threshold = threshold,
				   .part_concurrency = concurrency };
	char msg[256];
	struct objstore *s;
	int err;

	s = objstore_new(&o, &err, msg, sizeof(msg));
	if (!s)
		fprintf(stderr, "objstore-bench: %s\n", msg);
	return s;
}

static int cmd_upload(const char *file, const char *key, const char *mode)
{
	bool single = mode && strcmp(mode, "single") == 0;
	struct objstore_status st;
	struct objstore *s;
	struct stat sb;
	double t0;
	int fd = open(file, O_RDONLY), err;

	if (fd < 0 || fstat(fd, &sb) != 0) {
		perror(file);
		return 1;
	}
	s = open_store(single ? (size_t)sb.st_size + 1 : 0,
		       mode && strcmp(mode, "multipart1") == 0 ? 1 : 0);
	if (!s)
		return 1;
	t0 = now();
	err = objstore_put_fd(s, key, fd, 0, (uint64_t)sb.st_size, NULL, NULL, &st);
	if (err) {
		fprintf(stderr, "objstore-bench: %s\n", st.msg);
		return 1;
	}
	printf("%.6f %lld %u\n", now() - t0, (long long)sb.st_size, st.attempts);
	objstore_free(s);
	close(fd);
	return 0;
}

static int cmd_digest(const char *file)
{
	struct objstore_digest whole;
	struct stat sb;
	double t0;
	int fd = open(file, O_RDONLY);

	if (fd < 0 || fstat(fd, &sb) != 0) {
		perror(file);
		return 1;
	}
	t0 = now();
	if (objstore_digest_fd(fd, 0, (uint64_t)sb.st_size, &whole, true)) {
		fprintf(stderr, "objstore-bench: cannot digest '%s'\n", file);
		return 1;
	}
	printf("%.6f %lld\n", now() - t0, (long long)sb.st_size);
	close(fd);
	return 0;
}

static int cmd_get(const char *key, int n)
{
	struct objstore_status st;
	struct objstore *s = open_store(0, 0);

	if (!s)
		return 1;
	for (int i = 0; i < n; i++) {
		double t0 = now();
		void *data;
		size_t len;

		if (objstore_get_mem(s, key, NULL, 64 << 20, &data, &len, &st) != 0) {
			fprintf(stderr, "objstore-bench: %s\n", st.msg);
			return 1;
		}
		printf("%.6f\n", now() - t0);
		free(data);
	}
	objstore_free(s);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 4 && strcmp(argv[1], "upload") == 0)
		return cmd_upload(argv[2], argv[3], argc > 4 ? argv[4] : NULL);
	if (argc == 3 && strcmp(argv[1], "digest") == 0)
		return cmd_digest(argv[2]);
	if (argc == 4 && strcmp(argv[1], "get") == 0)
		return cmd_get(argv[2], atoi(argv[3]));
	fprintf(stderr, "usage: ember-objstore-bench upload FILE KEY [single|multipart|multipart1]\n"
			"       ember-objstore-bench digest FILE\n"
			"       ember-objstore-bench get KEY N\n");
	return 2;
}
