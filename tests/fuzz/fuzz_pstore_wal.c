/*
 * fuzz_pstore_wal.c - libFuzzer target for the profile store's log
 * recovery (profile-store/wal_replay.c, wal_record.c, recover.c): any
 * bytes as the one segment of a data directory, which pstore_open
 * replays (a torn or corrupt tail dropped, a bad header set aside); the
 * store must open, answer a query, and take a new append.  (Writing
 * blocks is left out: it fsyncs, and the replay of whole records is what
 * this target is for.)  Each record is also decoded on its own.  Seeds in
 * corpus/pstore_wal/ (make_pstore_seeds.c).
 */
#include "pstore_wal.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void quiet(enum ember_log_level l, const char *m, void *c)
{
}

static int on_record(void *ctx, const uint8_t *payload, size_t len)
{
	struct pstore_record r;
	struct ember_diag d = ember_diag_make(NULL, 0);

	(void)ctx;
	if (pstore_record_decode(payload, len, &r, &d) == 0)
		pstore_record_release(&r);
	return 0;
}

static char root[64];

static void setup(void)
{
	if (root[0])
		return;
	snprintf(root, sizeof(root), "/tmp/ember-fuzz-pstore-wal.XXXXXX");
	if (!mkdtemp(root))
		abort();
}

/* Empty wal/ and blocks/ (the writer ID and the lock stay). */
static void clean(void)
{
	static const char *const subs[] = { "wal", "blocks" };

	for (int i = 0; i < 2; i++) {
		char path[128];
		DIR *d;
		struct dirent *e;

		snprintf(path, sizeof(path), "%s/%s", root, subs[i]);
		d = opendir(path);
		while (d && (e = readdir(d)))
			if (e->d_name[0] != '.')
				unlinkat(dirfd(d), e->d_name, 0);
		if (d)
			closedir(d);
	}
}

static void write_segment(const uint8_t *data, size_t size)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/wal", root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/wal/0000000000000001.wal", root);
	f = fopen(path, "wb");
	if (!f || fwrite(data, 1, size, f) != size || fclose(f))
		abort();
}

static void open_and_use(void)
{
	struct pstore_opts o = { .sz = sizeof(o), .no_background = true, .no_fsync = true,
				 .zstd_level = 1 };
	struct pstore_selection sel = { .type = "process_cpu:samples:count:cpu:nanoseconds" };
	struct pstore *s = NULL;
	struct pmodel_result *r = NULL;
	struct pprof_profile *p = pprof_profile_new();
	int err;

	if (pstore_open(root, &o, &s, NULL, 0))
		abort(); /* a bad log is replayed or set aside, never fatal */
	err = pstore_query(s, &sel, NULL, &r, NULL, 0);
	if (err && err != -PSTORE_ERR_TYPE)
		abort();
	pmodel_result_free(r);
	if (!p || pprof_add_sample_type(p, "samples", "count") ||
	    pstore_append(s, p, NULL, NULL, 0))
		abort();
	pprof_profile_free(p);
	pstore_free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t writer[16];
	uint64_t torn;
	struct ember_diag d = ember_diag_make(NULL, 0);
	int err;

	ember_log_set_handler(quiet, NULL);
	err = pstore_wal_scan(data, size, writer, on_record, NULL, &torn, &d);
	if ((err && err != -PSTORE_ERR_CORRUPT) || torn > size)
		abort();
	setup();
	write_segment(data, size);
	open_and_use();
	clean();
	return 0;
}
