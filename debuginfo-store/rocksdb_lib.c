/*
 * rocksdb_lib.c - dlopen RocksDB and resolve its C API (rocksdb_lib.h).
 *
 * The library's name is its SONAME, found by CMake at configure time
 * (EMBER_ROCKSDB_SONAME), so a missing library fails the build, not a
 * server's start.
 */
#include "rocksdb_lib.h"
#include "common.h"

#include <errno.h>
#include <string.h>

#ifndef EMBER_ROCKSDB_SONAME
#error "EMBER_ROCKSDB_SONAME: set by debuginfo-store/CMakeLists.txt"
#endif

int store_rocksdb_load(struct store_rocksdb *r)
{
#define STORE_ROCKSDB_SLOT(name) { "rocksdb_" #name, (void **)&r->name },
	const struct ember_dl_fn fns[] = { STORE_ROCKSDB_FUNCS(STORE_ROCKSDB_SLOT) };
#undef STORE_ROCKSDB_SLOT

	memset(r, 0, sizeof(*r));
	r->handle = ember_dl_load(EMBER_ROCKSDB_SONAME, "store", fns, sizeof(fns) / sizeof(fns[0]));
	if (!r->handle)
		return -ENOSYS;
#ifdef EMBER_STORE_FAULTS
	return store_rocksdb_fault_wrap(r);
#else
	return 0;
#endif
}
