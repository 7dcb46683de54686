/*
 * rgw_env.h - the radosgw of the objstore_ceph fixture (ceph_cluster.sh),
 * for the unit tests that run against it (test_objstore, test_bucket):
 * its env file read, a client on it, a key prefix per case, test bytes.  Include
 * after unit.h and objstore.h.
 */
#ifndef EMBER_RGW_ENV_H
#define EMBER_RGW_ENV_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct rgw_env {
	char endpoint[256], region[64], bucket[64], access[128], secret[128];
	int port;
};

/* The fixture's env file: 0, or UNIT_SKIP with the reason printed. */
static __attribute__((unused)) int rgw_env_load(struct rgw_env *e)
{
	const char *path = getenv("OBJSTORE_TEST_ENV");
	char line[1024];
	FILE *f;

	memset(e, 0, sizeof(*e));
	if (!path || !(f = fopen(path, "r"))) {
		fprintf(stderr, "skip: no Ceph cluster (OBJSTORE_TEST_ENV '%s' missing; the "
			"objstore_ceph_start fixture writes it)\n", path ? path : "");
		return UNIT_SKIP;
	}
	while (fgets(line, sizeof(line), f)) {
		char *eq = strchr(line, '='), *nl = strchr(line, '\n');

		if (nl)
			*nl = '\0';
		if (!eq)
			continue;
		*eq++ = '\0';
		if (strcmp(line, "OBJSTORE_TEST_SKIP") == 0) {
			fprintf(stderr, "skip: %s\n", eq);
			fclose(f);
			return UNIT_SKIP;
		}
		if (strcmp(line, "OBJSTORE_TEST_ENDPOINT") == 0)
			snprintf(e->endpoint, sizeof(e->endpoint), "%s", eq);
		else if (strcmp(line, "OBJSTORE_TEST_REGION") == 0)
			snprintf(e->region, sizeof(e->region), "%s", eq);
		else if (strcmp(line, "OBJSTORE_TEST_BUCKET") == 0)
			snprintf(e->bucket, sizeof(e->bucket), "%s", eq);
		else if (strcmp(line, "AWS_ACCESS_KEY_ID") == 0)
			snprintf(e->access, sizeof(e->access), "%s", eq);
		else if (strcmp(line, "AWS_SECRET_ACCESS_KEY") == 0)
			snprintf(e->secret, sizeof(e->secret), "%s", eq);
	}
	fclose(f);
	{
		const char *colon = strrchr(e->endpoint, ':');

		e->port = colon ? atoi(colon + 1) : 0;
	}
	if (!e->port || !e->bucket[0] || !e->access[0]) {
		fprintf(stderr, "'%s' is incomplete\n", path);
		return 1;
	}
	return 0;
}

/* A handle on the cluster, or through a proxy on proxy_port when not 0;
 * tweak (may be NULL) edits the options first. */
static __attribute__((unused)) struct objstore *rgw_open(const struct rgw_env *e, int proxy_port,
				 void (*tweak)(struct objstore_opts *o, void *ctx), void *ctx)
{
	struct objstore_creds c = { (char *)e->access, (char *)e->secret, NULL };
	char endpoint[256], msg[256];
	struct objstore_opts o = { .sz = sizeof(o), .endpoint = e->endpoint,
				   .region = e->region, .bucket = e->bucket, .creds = &c,
				   .retry_base_ms = 20, .retry_max_ms = 200 };
	struct objstore *s;
	int err;

	if (proxy_port) {
		snprintf(endpoint, sizeof(endpoint), "http://127.0.0.1:%d", proxy_port);
		o.endpoint = endpoint;
	}
	if (tweak)
		tweak(&o, ctx);
	s = objstore_new(&o, &err, msg, sizeof(msg));
	if (!s)
		fprintf(stderr, "objstore_new: %s (%d)\n", msg, err);
	return s;
}

/* A key prefix of this case alone: the cases share one bucket. */
static __attribute__((unused)) const char *case_prefix(const char *name)
{
	static char p[128];

	snprintf(p, sizeof(p), "t/%s-%d-%ld/", name, (int)getpid(), (long)time(NULL));
	return p;
}

/* A pattern of n bytes from seed (xorshift). */
static __attribute__((unused)) void fill_random(uint8_t *b, size_t n, uint64_t seed)
{
	for (size_t i = 0; i < n; i++) {
		seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
		b[i] = (uint8_t)seed;
	}
}

#endif /* EMBER_RGW_ENV_H */
