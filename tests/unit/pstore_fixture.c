/*
 * pstore_fixture.c - the profile store's test stores (pstore_fixture.h).
 */
#include "pstore_fixture.h"
#include "profile_fixture.h"

#include <stdio.h>

int64_t fake_now = T0;

static int64_t clock_fn(void *ctx)
{
	(void)ctx;
	return fake_now;
}

struct pstore_opts test_opts(void)
{
	return (struct pstore_opts){ .sz = sizeof(struct pstore_opts), .no_background = true,
				     .clock_ns = clock_fn, .zstd_level = 3 };
}

struct pstore *open_replica(const struct pstore_opts *o, const char *replica)
{
	struct pstore_opts def = test_opts();
	struct pstore_blockio io;
	struct pstore *s = NULL;
	char path[400], why[256];

	if (!o)
		o = &def;
	if (replica) {
		snprintf(path, sizeof(path), "%s/shared", dir);
		if (pstore_blockio_dir(path, &io))
			return NULL;
		def = *o;
		def.blocks = &io;
		def.shared = true;
		def.refresh_ns = SEC;
		o = &def;
	}
	snprintf(path, sizeof(path), "%s%s%s", dir, replica ? "/" : "", replica ? replica : "");
	if (pstore_open(path, o, &s, why, sizeof(why))) {
		fprintf(stderr, "pstore_open: %s\n", why);
		return NULL;
	}
	return s;
}

struct pstore *open_store(const struct pstore_opts *o)
{
	return open_replica(o, NULL);
}

struct pstore *fresh_store(void)
{
	fake_now = T0;
	return make_dir() ? NULL : open_store(NULL);
}

uint32_t test_rand(uint64_t *state, uint32_t n)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return (uint32_t)(*state % n);
}
