/*
 * store_fixture.h - a file put in a debuginfo store as a candidate of its
 * build ID, with what elf-inspect finds in it: the set-up the unit tests
 * of the symbolization and profile services (symsvc_fixture.h) and the
 * ingest benchmark (bench/profile-store/ingest_bench.c) share.  No test
 * macros here, so a benchmark can include it.
 */
#ifndef EMBER_TEST_STORE_FIXTURE_H
#define EMBER_TEST_STORE_FIXTURE_H

#include "inspect.h"
#include "store.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The file at path stored as a candidate of its build ID (into id, which
 * holds STORE_BUILD_ID_HEX bytes) with what elf-inspect finds in it. */
static inline int put_file(struct store *s, const char *path, unsigned kinds, char *id)
{
	struct store_artifact a = { .kinds = kinds, .mtime = 1 };
	struct inspect_info info;
	struct store_blob *b;
	bool is_new;
	int fd = open(path, O_RDONLY), err;

	if (fd < 0)
		return -errno;
	err = inspect_elf_fd(fd, &info);
	if (!err)
		err = store_blob_begin(s, &b);
	if (!err) {
		err = store_blob_write_fd(b, fd);
		if (!err)
			err = store_blob_seal(b, a.sha256, &a.size);
		if (err)
			store_blob_discard(b);
	}
	close(fd);
	if (err)
		return err;
	ember_build_id_to_hex(info.build_id, info.build_id_len, a.build_id);
	strcpy(id, a.build_id);
	a.flags = info.flags;
	a.dwarf_version = info.dwarf_version;
	snprintf(a.name, sizeof(a.name), "f");
	return store_add_artifact(s, b, &a, NULL, 0, &is_new);
}

#endif
